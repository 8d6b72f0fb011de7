"""Reading benchmarks/results/llm.json for notebook 07: labels, tables, figures, the quiz.

Figures import matplotlib lazily (inside the functions), so ``specdec_core.llm`` itself stays
importable without it.
"""
from __future__ import annotations

import json
import os

from ..questions import Question

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "benchmarks", "results", "llm.json")


def load_results(path: str | None = None) -> dict:
    with open(path or RESULTS) as f:
        res = json.load(f)
    # JSON turns the cost-curve keys into strings
    res["cost_curve"] = {k: {int(T): v for T, v in c.items()} for k, c in res["cost_curve"].items()}
    res["layer_skip_alpha"] = {k: {int(kk): v for kk, v in c.items()} for k, c in res["layer_skip_alpha"].items()}
    return res


def how(res: dict, threads=None) -> str:
    m = res["machine"]
    t = f", {threads} BLAS thread{'s' if threads != 1 else ''}" if threads else ""
    return f"{m['cpu']}, {m['cores']} cores{t}, {m['date_utc']}, benchmarks/bench_llm.py"


def runs(res, *, workload=None, temperature=None, threads=None, draft=None):
    return [r for r in res["runs"]
            if (workload is None or r["workload"] == workload)
            and (temperature is None or r["temperature"] == temperature)
            and (threads is None or r["threads"] == threads)
            and (draft is None or r["draft"] == draft)]


def speedup_table(res, *, threads: int, temperature: float) -> list:
    """Text lines: speedup over plain decoding per workload, draft and γ."""
    sel = runs(res, threads=threads, temperature=temperature)
    drafts = list(dict.fromkeys(r["draft"] for r in sel))
    lines = []
    for w in dict.fromkeys(r["workload"] for r in sel):
        plain = res["plain"][f"{w}/T{temperature:g}/threads{threads}"]["tokens_per_s"]
        lines.append(f"{w:6s} plain {plain:5.1f} tok/s")
        for d in drafts:
            cells = [f"γ={r['gamma']:<2d} ×{r['speedup']:.2f}" for r in sel if r["workload"] == w and r["draft"] == d]
            lines.append(f"   {d:16s} " + "  ".join(cells))
    return lines


def cost_curve_figure(res, live: dict | None = None):
    """Milliseconds to score T positions in one call, in single steps, from the results file
    (and an optional live curve measured in the notebook)."""
    import matplotlib.pyplot as plt

    from ..plots.style import COLORS, tag_kind

    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.4), layout="constrained")
    styles = {"threads2": (COLORS["target"], "-", "2 threads"), "threads1": (COLORS["draft"], "-", "1 thread"),
              "threads2_plain_matmul": (COLORS["discarded"], ":", "2 threads, plain x @ W")}
    for key, (col, ls, lab) in styles.items():
        c = res["cost_curve"].get(key)
        if not c:
            continue
        Ts = sorted(c)
        ms = [c[T][0] for T in Ts]
        axes[0].plot(Ts, ms, ls, marker="o", ms=3, color=col, label=lab)
        axes[1].plot(Ts, [T / (m / ms[0]) for T, m in zip(Ts, ms)], ls, marker="o", ms=3, color=col, label=lab)
    if live:
        Ts = sorted(live)
        axes[0].plot(Ts, [live[T] for T in Ts], "x", color=COLORS["ink"], label="this run (live)")
    axes[1].plot([1, 16], [1, 16], "--", color=COLORS["accepted"], lw=1, label="free batching")
    axes[0].set(xlabel="T positions scored in one call", ylabel="ms (min of repetitions)",
                title="Cost of one target call")
    axes[1].set(xlabel="T = γ + 1", ylabel="T ÷ (cost(T) / cost(1))",
                title="Ceiling on the speedup (all accepted, free draft)")
    for ax in axes:
        ax.legend(fontsize=7)
        tag_kind(ax, "measured", "lower right")
    return fig


def alpha_figure(res):
    import matplotlib.pyplot as plt

    from ..plots.style import COLORS, tag_kind

    fig, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
    a = res["layer_skip_alpha"]
    for key, col, lab in (("T1", COLORS["target"], "temperature 1: Σ min(p, q)"),
                          ("T0", COLORS["draft"], "greedy: argmax agrees")):
        ks = sorted(a[key])
        ax.plot(ks, [a[key][k] for k in ks], "o-", color=col, label=lab)
    best_lookup = max(r["alpha"] for r in runs(res, workload="copy", temperature=0.0, draft="lookup-adaptive"))
    ax.axhline(best_lookup, color=COLORS["accepted"], ls="--", lw=1, label="prompt lookup, copy, greedy")
    ax.set(xlabel="layers kept by the self-draft (of 30)", ylabel="α per proposal", ylim=(0, 1.12),
           title="Layer skipping without training")
    ax.legend(fontsize=7)
    tag_kind(ax, "measured", "upper left")
    return fig


def prediction_figure(res, *, threads: int):
    import matplotlib.pyplot as plt

    from ..plots.style import COLORS, tag_kind

    fig, ax = plt.subplots(figsize=(5.2, 4.0), layout="constrained")
    colors = {"copy": COLORS["accepted"], "code": COLORS["target"], "story": COLORS["draft"]}
    sel = runs(res, threads=threads)
    for w, col in colors.items():
        pts = [(r["tokens_per_s"], r["predicted_k_hist"]) for r in sel if r["workload"] == w]
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, color=col, label=w)
    hi = max(max(r["tokens_per_s"], r["predicted_k_hist"]) for r in sel) * 1.05
    ax.plot([0, hi], [0, hi], "--", color=COLORS["ink"], lw=1, label="prediction = measurement")
    ax.set(xlabel="measured tokens/s", ylabel="predicted tokens/s (notebook 05's model)",
           title=f"Prediction vs measurement ({threads} BLAS thread{'s' if threads > 1 else ''})")
    ax.legend(fontsize=7)
    tag_kind(ax, "measured", "lower right")
    return fig


def prediction_errors(res, *, threads: int, key="prediction_error_k_hist") -> dict:
    """Median and worst |relative error| of the prediction, per workload."""
    import numpy as np

    out = {}
    for w in ("copy", "code", "story"):
        e = [abs(r[key]) for r in runs(res, workload=w, threads=threads)]
        if e:
            out[w] = (float(np.median(e)), float(max(e)))
    return out


MEASURE_QUESTION = Question(
    prompt="On this 2-core CPU, prompt lookup drafts for free and almost every proposal is accepted on the "
           "copy-heavy prompt. Why is the speedup still well below γ + 1?",
    options=("Because strict verification rejects most correct proposals",
             "Because scoring γ + 1 positions in one target call costs several single steps here",
             "Because the draft's proposals change the target's output distribution"),
    answer=1,
    explanation="With a free draft and every proposal accepted, a round emits γ + 1 tokens for one verification "
                "call, so the speedup is at most (γ + 1) ÷ (cost of that call in single steps). On a small CPU the "
                "matrix products are not free for extra rows, so that cost grows with γ and caps the gain.",
)


def round_profile_lines(res, *, threads: int, temperature: float = 0.0) -> list:
    """Per workload, the best run: time per round split into draft / verify / overhead, the
    histogram of tokens per round and the acceptance at each proposal position."""
    lines = []
    for w in ("copy", "code", "story"):
        sel = runs(res, workload=w, threads=threads, temperature=temperature)
        if not sel:
            continue
        r = max(sel, key=lambda x: x["speedup"])
        n = r["rounds"]
        lines.append(f"{w}: {r['draft']} γ={r['gamma']}, ×{r['speedup']:.2f}; per round: draft "
                     f"{1e3 * r['draft_s'] / n:.2f} ms, verify {1e3 * r['target_s'] / n:.1f} ms, "
                     f"overhead {1e3 * r['overhead_s'] / n:.2f} ms")
        hist = ", ".join(f"{k}:{c}" for k, c in enumerate(r["k_hist"]) if c)
        lines.append(f"   rounds by tokens emitted {{{hist}}}")
        acc = " ".join(f"{a / c:.2f}" if c else "—" for a, c in r["accept_by_pos"])
        lines.append(f"   acceptance by position: {acc}")
    return lines


def closing_lines(res) -> list:
    """The numbers the closing note lists, read from the results file."""
    lines = []
    for th in res["settings"]["threads"]:
        lines.append(f"{th} BLAS thread(s):")
        for temp in (0.0, 1.0):
            parts = []
            for w in ("copy", "code", "story"):
                sel = runs(res, workload=w, threads=th, temperature=temp)
                if sel:
                    b = max(sel, key=lambda r: r["speedup"])
                    parts.append(f"{w} ×{b['speedup']:.2f} ({b['draft']}, γ={b['gamma']})")
            lines.append(f"   best speedup, {'greedy' if temp == 0 else 'temperature 1'}: " + "; ".join(parts))
        ls = [r for r in runs(res, threads=th) if r["draft"].startswith("layerskip")]
        if ls:
            lines.append(f"   layer-skip drafts: speedup ×{min(r['speedup'] for r in ls):.2f} … "
                         f"×{max(r['speedup'] for r in ls):.2f}, α {min(r['alpha'] for r in ls):.2f} … "
                         f"{max(r['alpha'] for r in ls):.2f}")
        b = res["best_copy_greedy"][f"threads{th}"]
        lines.append(f"   copy-heavy greedy, best: ×{b['speedup']:.2f} against the 4× goal and a ceiling of "
                     f"×{b['ceiling']:.2f} at γ = {b['gamma']}")
        errs = prediction_errors(res, threads=th)
        lines.append("   notebook 05's prediction, median |error|: "
                     + ", ".join(f"{w} {100 * m:.0f}%" for w, (m, _) in errs.items()))
    g = res["gof"]
    lines.append(f"end-to-end law: p-value {g['p_value']:.3g} over {g['runs']} runs "
                 f"({'rejected' if g['rejected'] else 'not rejected'} at {g['threshold']:g})")
    return lines

"""Reading benchmarks/results/llm.json for notebook 09: labels, tables, figures, the quiz.

The figures drawn from these results live in :mod:`specdec_core.plots.llm` (the pure layer
never imports matplotlib).
"""
from __future__ import annotations

import json
import os

from ..formatting import p_value_phrase
from ..questions import MEASURE_QUESTION  # noqa: F401  (re-export: the question's home is questions.py)

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


def prediction_errors(res, *, threads: int, key="prediction_error_k_hist") -> dict:
    """Median and worst |relative error| of the prediction, per workload."""
    import numpy as np

    out = {}
    for w in ("copy", "code", "story"):
        e = [abs(r[key]) for r in runs(res, workload=w, threads=threads)]
        if e:
            out[w] = (float(np.median(e)), float(max(e)))
    return out


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
    lines.append(f"end-to-end law: {p_value_phrase(g['p_value'])} over {g['runs']} runs "
                 f"({'rejected' if g['rejected'] else 'not rejected'} at {g['threshold']:g})")
    return lines

"""Figures of the real-model measurement (notebook 09), drawn from the results file that
``benchmarks/bench_llm.py`` writes (:mod:`specdec_core.llm.report` reads it)."""
from __future__ import annotations

import matplotlib.pyplot as plt

from ..llm import report
from .style import COLORS, tag_kind


def cost_curve_figure(res, live: dict | None = None):
    """Milliseconds to score T positions in one call, in single steps, from the results file
    (and an optional live curve measured in the notebook)."""
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
    fig, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
    a = res["layer_skip_alpha"]
    for key, col, lab in (("T1", COLORS["target"], "temperature 1: Σ min(p, q)"),
                          ("T0", COLORS["draft"], "greedy: argmax agrees")):
        ks = sorted(a[key])
        ax.plot(ks, [a[key][k] for k in ks], "o-", color=col, label=lab)
    best_lookup = max(r["alpha"] for r in report.runs(res, workload="copy", temperature=0.0, draft="lookup-adaptive"))
    ax.axhline(best_lookup, color=COLORS["accepted"], ls="--", lw=1, label="prompt lookup, copy, greedy")
    ax.set(xlabel="layers kept by the self-draft (of 30)", ylabel="α per proposal", ylim=(0, 1.12),
           title="Layer skipping without training")
    ax.legend(fontsize=7)
    tag_kind(ax, "measured", "upper left")
    return fig


def prediction_figure(res, *, threads: int):
    fig, ax = plt.subplots(figsize=(5.2, 4.0), layout="constrained")
    colors = {"copy": COLORS["accepted"], "code": COLORS["target"], "story": COLORS["draft"]}
    sel = report.runs(res, threads=threads)
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

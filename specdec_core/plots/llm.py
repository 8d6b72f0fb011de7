"""Figures of the real-model measurement (notebook 09), drawn from the capstone's typed results
(:func:`specdec_core.measured.read_capstone`)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..llm import report
from .style import COLORS, tag_kind

DRAFT_STYLE = {
    "lookup": (COLORS["accepted"], "o"),
    "ngram": (COLORS["target"], "s"),
    "exit": (COLORS["draft"], "^"),
    "feature": (COLORS["residual"], "D"),
    "quant": (COLORS["rejected"], "v"),
}
WORKLOAD_COLOR = {"copy": COLORS["accepted"], "code": COLORS["target"], "story": COLORS["draft"]}


def speedup_figure(cap, key: str = "speedup_decode"):
    """Speed-up over plain decoding against γ: rows greedy / temperature 1, columns the three
    workloads, one line per draft; markers at the median, bars from min to max of the repeats."""
    fig, axes = plt.subplots(2, 3, figsize=(7.8, 4.9), sharex=True, layout="constrained")
    top = max(getattr(r, key).max for r in cap.runs if r.config.draft != "plain")
    for i, t in enumerate((0.0, 1.0)):
        for j, w in enumerate(report.WORKLOADS):
            ax = axes[i, j]
            ax.axhline(1.0, color=COLORS["ink"], lw=0.8, ls="--")
            for d, (col, mk) in DRAFT_STYLE.items():
                sel = sorted(cap.select(workload=w, temperature=t, draft=d), key=lambda r: r.config.gamma)
                if not sel:
                    continue
                g = np.array([r.config.gamma for r in sel])
                sp = [getattr(r, key) for r in sel]
                med = np.array([s.median for s in sp])
                err = np.array([[s.median - s.min for s in sp], [s.max - s.median for s in sp]])
                ax.errorbar(
                    g, med, yerr=err, color=col, marker=mk, ms=4, lw=1.2, capsize=2, label=report.DRAFTS[d]
                )
            ax.set_ylim(0, top * 1.08)
            ax.set_title(f"{w}, {'greedy' if t == 0 else 'temperature 1'}", fontsize=9)
            if j == 0:
                ax.set_ylabel("speed-up (×)")
            if i == 1:
                ax.set_xlabel("γ (proposals per round)")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    tag_kind(axes[1, 2], "measured", "upper right")
    what = "decode-only" if key == "speedup_decode" else "end to end"
    fig.suptitle(f"Speed-up over plain decoding ({what}; median and range of repeats)", fontsize=10)
    return fig


def cost_figure(cap):
    """Left: milliseconds of one target call scoring T positions (both temperatures) and one
    draft call proposing γ tokens. Right: the ceiling T ÷ (cost(T)/cost(1)) a free, always
    accepted draft would reach."""
    fig, axes = plt.subplots(1, 2, figsize=(7.8, 3.2), layout="constrained")
    mic = cap.micro
    for t, col, lab in (
        (0.0, COLORS["draft"], "target call, greedy"),
        (1.0, COLORS["target"], "target call, T = 1"),
    ):
        c = mic.verify[t].points
        Ts = sorted(c)
        med = [c[T].median for T in Ts]
        axes[0].errorbar(
            Ts,
            med,
            yerr=[[m - c[T].min for m, T in zip(med, Ts)], [c[T].max - m for m, T in zip(med, Ts)]],
            color=col,
            marker="o",
            ms=3,
            lw=1.2,
            capsize=2,
            label=lab,
        )
        axes[1].plot(Ts, [T / (m / med[0]) for T, m in zip(Ts, med)], "o-", ms=3, color=col, label=lab)
    for d, (col, mk) in DRAFT_STYLE.items():
        if d not in mic.draft:  # a draft this run did not measure
            continue
        c = mic.draft[d].median()
        gs = [g for g in sorted(c) if g > 0]
        axes[0].plot(gs, [c[g] for g in gs], mk + ":", color=col, ms=4, label=f"draft: {report.DRAFTS[d]}")
    axes[1].plot([1, 16], [1, 16], "--", color=COLORS["discarded"], lw=1, label="free batching")
    axes[0].set(
        xlabel="T positions (target) or γ proposals (draft)",
        ylabel="ms per call (median)",
        title="Cost of one call",
    )
    axes[1].set(xlabel="T = γ + 1", ylabel="T ÷ (cost(T)/cost(1))", title="Ceiling: free draft, all accepted")
    for ax in axes:
        ax.legend(fontsize=6.5)
        tag_kind(ax, "measured", "lower right")
    return fig


def exit_figure(cap):
    """α of the early-exit draft against the layers kept, trained map vs plain layer skip, and
    the cost of one draft step against one target step."""
    fig, axes = plt.subplots(1, 2, figsize=(7.8, 3.1), layout="constrained")
    ex = cap.calibration.exit
    ks = sorted(ex)
    for t, ls, lab in ((1.0, "-", "T = 1: Σ min(p, q)"), (0.0, ":", "greedy: argmax agrees")):
        for kind, col in (("trained", COLORS["target"]), ("untrained", COLORS["discarded"])):
            a = [getattr(ex[k], f"alpha_{kind}")[t] for k in ks]
            axes[0].plot(ks, a, ls, marker="o", ms=3, color=col, label=f"{kind}, {lab}")
    axes[0].set(
        xlabel="k: target layers the draft runs (of 30)",
        ylabel="α per proposal",
        ylim=(0, 1),
        title="Acceptance (held-out calibration text)",
    )
    axes[0].legend(fontsize=6.5)
    step = {k: ex[k].step_ms for k in ks}
    one = cap.micro.verify[1.0].points[1].median
    axes[1].plot(
        ks, [step[k] / one for k in ks], "o-", color=COLORS["draft"], ms=3, label="draft step ÷ target step"
    )
    axes[1].plot(
        ks, [k / 30 for k in ks], "--", color=COLORS["discarded"], lw=1, label="k / 30 (layers alone)"
    )
    top = max(max(step[k] / one for k in ks), 1.0) * 1.1
    axes[1].set(
        xlabel="k",
        ylabel="cost relative to one target step",
        ylim=(0, top),
        title="Cost of one draft step (median)",
    )
    axes[1].legend(fontsize=6.5)
    for ax in axes:
        tag_kind(ax, "measured", "upper right" if ax is axes[1] else "center right")
    return fig


def prediction_figure(cap):
    """Predicted (before the run) against measured decode-only tokens/s, and the errors."""
    fig, axes = plt.subplots(1, 2, figsize=(7.8, 3.4), layout="constrained")
    ax = axes[0]
    hi = 0
    for r in cap.runs:
        c = r.config
        if r.predicted_tokens_per_s is None:
            continue
        m = r.decode_tokens_per_s
        ax.errorbar(
            [m.median],
            [r.predicted_tokens_per_s],
            xerr=[[m.median - m.min], [m.max - m.median]],
            fmt="o" if c.temperature == 0 else "^",
            ms=4,
            color=WORKLOAD_COLOR[c.workload],
            elinewidth=0.8,
            mfc="none" if c.temperature else None,
        )
        hi = max(hi, m.max, r.predicted_tokens_per_s)
    ax.plot([0, hi * 1.05], [0, hi * 1.05], "--", color=COLORS["ink"], lw=1)
    for w, col in WORKLOAD_COLOR.items():
        ax.plot([], [], "o", color=col, label=w)
    ax.plot([], [], "o", color=COLORS["discarded"], label="greedy")
    ax.plot([], [], "^", color=COLORS["discarded"], mfc="none", label="T = 1")
    ax.set(
        xlabel="measured tokens/s (decode-only, median, range)",
        ylabel="predicted tokens/s",
        title="Prediction vs measurement",
    )
    ax.legend(fontsize=6.5)
    errs = [100 * e for _, e in report.prediction_errors(cap)]
    axes[1].hist(
        errs,
        bins=np.arange(np.floor(min(errs) / 5) * 5, max(errs) + 5, 5),
        color=COLORS["target"],
        edgecolor="white",
    )
    axes[1].axvline(0, color=COLORS["ink"], lw=0.8)
    axes[1].set(xlabel="prediction error (%)", ylabel="configurations", title="Error distribution")
    for a in axes:
        tag_kind(a, "measured", "lower right" if a is axes[0] else "upper right")
    return fig


def pay_figure(cap):
    """Which drafts pay: tokens per round (measured, median of repeats) against what a round
    costs in plain decoding steps (from the micro-benchmarks), greedy and temperature 1, one
    marker per draft, γ and workload. Above the diagonal a round emits more tokens than the plain
    steps it costs: speculation pays."""
    fig, axes = plt.subplots(1, 2, figsize=(7.8, 3.4), layout="constrained")
    for ax, t in zip(axes, (0.0, 1.0)):
        pts = report.pay_points(cap, temperature=t)
        top = max([c for *_, c, _k in pts] + [k for *_, k in pts] + [2.0]) * 1.08
        ax.plot([0, top], [0, top], color=COLORS["ink"], lw=0.8, ls="--")
        ax.text(top * 0.97, top * 0.9, "pays above", ha="right", va="top", fontsize=7)
        for d, (col, mk) in DRAFT_STYLE.items():
            sel = [(c, k) for dd, _g, _w, c, k in pts if dd == d]
            if sel:
                ax.scatter(*zip(*sel), color=col, marker=mk, s=18, label=report.DRAFTS[d], zorder=3)
        ax.set_xlim(0.9, top)
        ax.set_ylim(0.9, top)
        ax.set_xlabel("cost of a round (plain decoding steps)")
        ax.set_ylabel("tokens per round, E[K] (measured)")
        ax.set_title("greedy" if t == 0 else "temperature 1", fontsize=9)
    axes[0].legend(fontsize=7, loc="upper left")
    tag_kind(axes[1], "measured", "lower right")
    return fig


def ladder_figure(cap):
    """The draft ladder: every draft on one plane, α at temperature 1 (teacher forcing along the
    target's own trajectories; marker at the mean over the three workloads, bar from the lowest to
    the highest) against what one draft step costs in target steps (micro-benchmarks), with the α
    needed to break even and to gain ×1.5 at the best γ — dashed as notebook 05 counts a
    verification (one target step whatever γ), solid with this CPU's measured verification cost."""
    pts = report.ladder_points(cap)
    top_c = max([c for _d, c, *_ in pts] + [0.5]) * 1.15
    cs = np.linspace(0.0, top_c, 60)
    v = report.verify_steps(cap)
    fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
    for factor, col in ((1.0, COLORS["ink"]), (1.5, COLORS["target"])):
        for verify, ls in ((None, "--"), (v, "-")):
            a = [report.alpha_needed_or_nan(c, factor, verify) for c in cs]
            label = f"{'break-even' if factor == 1 else '×1.5'}" + (
                ", 05's count" if verify is None else ", measured verify"
            )
            ax.plot(cs, a, color=col, lw=1.0, ls=ls, label=label)
    for d, c, mean, lo, hi in pts:
        col, mk = DRAFT_STYLE[d]
        ax.errorbar([c], [mean], yerr=[[mean - lo], [hi - mean]], color=col, marker=mk, ms=6, capsize=3, lw=1,
                    label=report.DRAFTS[d], zorder=3)  # fmt: skip
    ax.set_xlim(0, top_c)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("cost of one draft step (target steps, measured)")
    ax.set_ylabel("α at temperature 1 (teacher forcing)")
    fig.legend(*ax.get_legend_handles_labels(), fontsize=7, loc="outside lower center", ncol=3)
    tag_kind(ax, "measured", "upper left")
    return fig

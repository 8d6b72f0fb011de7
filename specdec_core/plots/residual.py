"""Figures for notebook 02: how accepted mass plus the correction rebuilds p, and the
"wrong corrections" lab (each rule's output law against p).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..verify import (
    CORRECTION_RULES,
    acceptance_probability,
    accepted_mass,
    output_distribution,
    output_distribution_with,
    total_variation,
)
from .acceptance import SYMBOLS, symbol_labels
from .frames import LabPlot
from .style import COLORS, HATCHES, new_axes, tag_kind

#: How each correction rule is named on figures and in the lab.
RULE_LABELS = {
    "residual": "residual (correct)",
    "draft": "resample from q",
    "target": "resample from p",
    "uniform": "uniform",
    "unnormalized": "max(p−q, 0), not normalized",
}


def draw_decomposition(ax, p, q, symbols=None, title=None):
    """Stacked bars: accepted mass min(p, q) plus the correction's share (1 − α)·r, next to p.

    The correction's share is taken as output − accepted, so p = q (no rejection, residual
    undefined) draws fine: the share is simply 0.
    """
    acc = np.asarray(accepted_mass(p, q), dtype=np.float64)
    out = np.asarray(output_distribution(p, q), dtype=np.float64)
    pf = np.asarray(p, dtype=np.float64)
    labels = symbol_labels(len(pf), symbols)
    x = np.arange(len(pf))
    ax.bar(x - 0.2, pf, 0.4, color=COLORS["target"], label="p (target)")
    ax.bar(
        x + 0.2,
        acc,
        0.4,
        color=COLORS["accepted"],
        hatch=HATCHES["accepted"],
        edgecolor="white",
        label="accepted min(p, q)",
    )
    ax.bar(
        x + 0.2,
        out - acc,
        0.4,
        bottom=acc,
        color=COLORS["residual"],
        hatch=HATCHES["residual"],
        edgecolor="white",
        label="(1 − α)·residual",
    )
    ax.set_xticks(x, labels)
    ax.set_ylim(0, max(float(pf.max()), float(out.max())) * 1.35)
    if title:
        ax.set_title(title, fontsize=9)
    return ax


#: The widest figure of this module, in inches (at 100 dpi: 760 px, within an 800 px output area).
FIGURE_WIDTH_IN = 7.6


def decomposition_figure(cases, symbols=None):
    """One :func:`draw_decomposition` panel per ``(title, p, q)`` case, tagged *derived*."""
    cases = list(cases)
    if not cases:
        raise ValueError("cases is empty: give at least one (title, p, q)")
    # at most FIGURE_WIDTH_IN wide: a wider figure is shown scaled down in Lab's output area
    fig, axes = new_axes(len(cases), width=min(3.3 * len(cases), FIGURE_WIDTH_IN), height=3.3, sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (title, p, q) in zip(axes, cases):
        draw_decomposition(ax, p, q, symbols, title)
        tag_kind(ax, "derived")
    axes[0].set_ylabel("probability")
    fig.legend(
        *axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize=8, frameon=False
    )
    return fig


def _rule_output(p, q, rule):
    out = np.asarray(output_distribution_with(p, q, rule), dtype=np.float64)
    tv = float(total_variation(out, np.asarray(p, dtype=np.float64)))
    return out, tv, tv < 5e-5


def draw_rule_output(ax, p, q, rule, symbols=None, *, legend=True):
    """p against the output law under ``rule``; the rule, α and the total variation distance in
    the title (α moves with q, so the figure answers a q slider even when the output is p).

    Returns an updater ``update(p, q, rule) -> bool``: it moves the same artists to new inputs
    with the same number of symbols and returns False (doing nothing) when the verdict "= p" /
    "≠ p" would change, which needs a fresh drawing (colours and legend differ).
    """
    out, _tv, good = _rule_output(p, q, rule)
    pf = np.asarray(p, dtype=np.float64)
    n = len(pf)
    labels = symbol_labels(n, symbols)
    x = np.arange(n)
    bars_p = ax.bar(x - 0.2, pf, 0.4, color=COLORS["target"], label="p (target)")
    bars_o = ax.bar(
        x + 0.2,
        out,
        0.4,
        color=COLORS["accepted"] if good else COLORS["rejected"],
        hatch=HATCHES["accepted"] if good else HATCHES["rejected"],
        edgecolor="white",
        label="output law = p" if good else "output law ≠ p",
    )
    ax.set_xticks(x, labels)
    ax.set_ylim(0, 1.0)
    title = ax.set_title("", fontsize=8)
    if legend:
        ax.legend(fontsize=7, loc="upper right", frameon=False)

    def update(p, q, rule):
        out, tv, now_good = _rule_output(p, q, rule)
        pf = np.asarray(p, dtype=np.float64)
        if now_good != good or len(pf) != n:
            return False
        for bars, heights in ((bars_p, pf), (bars_o, out)):
            for rect, h in zip(bars, heights):
                rect.set_height(h)
        alpha = float(acceptance_probability(pf, np.asarray(q, dtype=np.float64)))
        title.set_text(
            f"{RULE_LABELS[rule]} · α = {alpha:.2f}\nTV(output, p) = {tv:.4f}  (sum {out.sum():.2f})"
        )
        return True

    update(p, q, rule)
    return update


def null_distribution_figure(statistics, dof: int, threshold: float = 0.001, *, title=""):
    """Histogram of chi-square statistics from correct seeded experiments (*simulated*) next to
    the chi-square density with ``dof`` degrees of freedom (*derived*), with the critical value
    of the test at ``threshold`` marked."""
    from scipy.stats import chi2

    stats = np.asarray(statistics, dtype=np.float64)
    critical = float(chi2.isf(threshold, dof))
    fig, ax = new_axes(width=6.4, height=3.0)
    top = max(critical * 1.1, float(np.quantile(stats, 0.999)))
    ax.hist(
        stats[stats <= top],
        bins=40,
        range=(0, top),
        density=True,
        color=COLORS["discarded"],
        label=f"{len(stats)} correct experiments (simulated)",
    )
    x = np.linspace(1e-3, top, 400)
    ax.plot(x, chi2.pdf(x, dof), color=COLORS["target"], lw=2, label=f"chi-square, {dof} dof (derived)")
    ax.axvline(critical, color=COLORS["rejected"], ls="--", lw=1.5)
    ax.text(
        critical,
        ax.get_ylim()[1] * 0.55,
        f"the test rejects beyond {critical:.1f} \n(p-value < {threshold:g}) ",
        color=COLORS["rejected"],
        fontsize=8,
        ha="right",
    )
    ax.set_xlabel("statistic X²")
    ax.set_ylabel("density")
    ax.legend(fontsize=8, loc="upper center", frameon=False)
    if title:
        ax.set_title(title, fontsize=10)
    tag_kind(ax, "simulated")
    return fig


def rules_figure(p, q, symbols=None, rules=CORRECTION_RULES):
    """All correction rules side by side at (p, q), tagged *derived*."""
    import matplotlib.pyplot as plt

    rules = tuple(rules)
    ncols = min(3, len(rules))  # rows of three: five panels in one row were 1150 px wide
    nrows = -(-len(rules) // ncols)
    fig, grid = plt.subplots(
        nrows, ncols, figsize=(FIGURE_WIDTH_IN, 2.7 * nrows), layout="constrained", sharey=True, squeeze=False
    )
    axes = grid.ravel()[: len(rules)]
    for ax in grid.ravel()[len(rules) :]:
        ax.axis("off")
    for ax, rule in zip(axes, rules):
        draw_rule_output(ax, p, q, rule, symbols, legend=False)
        tag_kind(ax, "derived")
    for row in grid:
        row[0].set_ylabel("probability")
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    fig.legend(
        list(seen.values()),
        list(seen),
        loc="outside lower center",
        ncols=len(seen),
        fontsize=8,
        frameon=False,
    )
    return fig


class RulePlot(LabPlot):
    """The corrections lab's figure at state ``rule`` (and the weights ``read(state) -> (p, q)``
    reads): :func:`draw_rule_output` on a fixed-size figure; bars and title are blitted. The
    verdict (= p / ≠ p) changes colours and legend, so one figure per verdict is kept (``.fig``
    is the one last updated)."""

    size = (520, 300)

    def __init__(self, read: Callable[[Mapping], tuple], *, blit: bool = True):
        self._blit, self.read = blit, read
        self.fig, self.frames, self.panels = None, None, []

    def update(self, state: Mapping) -> None:
        p, q = self.read(state)
        for fig, frames, move in self.panels:
            if move(p, q, state["rule"]):
                self.fig, self.frames = fig, frames
                return
        super().__init__(blit=self._blit)
        ax = self.fig.add_axes((0.11, 0.09, 0.86, 0.77))
        move = draw_rule_output(ax, p, q, state["rule"], SYMBOLS[: len(p)])
        ax.set_ylabel("probability")
        tag_kind(ax, "derived", where="upper left")
        self.blit(list(ax.patches) + [ax.title])
        self.panels.append((self.fig, self.frames, move))

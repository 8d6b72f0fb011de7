"""Figures for notebook 04: the K distribution, E[K] against γ, and simulated vs iid K.

Builders draw into a given Axes and return the artists a lab updates in place; the ``*_figure``
functions make the notebook's figures at given values (show them with
:func:`specdec_core.plots.show`); :class:`CountsPlot` is the lab's.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.ticker import MaxNLocator

from ..counts import (
    expected_count_curve,
    expected_output_count,
    output_count_distribution,
)
from .frames import LabPlot
from .style import COLORS, new_axes, tag_kind

#: α values for the diminishing-returns curves.
DEFAULT_ALPHAS = (0.5, 0.6, 0.8, 0.9, 0.95)


def _bar_colors(gamma, n):
    return [COLORS["bonus"] if k == gamma + 1 else COLORS["residual"] for k in range(1, n + 1)]


class CountBars:
    """P(K = k) bars for γ up to ``max_gamma``, updated in place (no new artists per update)."""

    def __init__(self, ax, max_gamma: int = 16):
        self.ax, self.max_gamma = ax, max_gamma
        ks = np.arange(1, max_gamma + 2)
        self.bars = ax.bar(ks, np.zeros(len(ks)), color=COLORS["accepted"], edgecolor="black", linewidth=0.6)
        self.mean_line = ax.axvline(1, color=COLORS["ink"], linestyle="--", linewidth=1.2)
        self.mean_text = ax.text(1, 1.02, "", ha="left", va="bottom", fontsize=9)  # y set in update
        ax.set_xlabel("K = tokens emitted by one round")
        ax.set_ylabel("P(K = k)")
        ax.set_ylim(0, 1.42)  # room above the bars for the E[K] label and the legend
        ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        from matplotlib.patches import Patch

        ax.legend(
            handles=[
                Patch(color=COLORS["residual"], label="ends with a correction"),
                Patch(color=COLORS["bonus"], label="all accepted + bonus"),
            ],
            fontsize=8,
            loc="upper left",
        )
        tag_kind(ax, "derived")

    def update(self, alpha, gamma):
        pmf = np.asarray(output_count_distribution(float(alpha), int(gamma)), dtype=float)
        ek = float(expected_output_count(float(alpha), int(gamma)))
        colors = _bar_colors(gamma, len(self.bars))
        for k, bar in enumerate(self.bars):
            h = pmf[k] if k < len(pmf) else 0.0
            bar.set_height(h)
            bar.set_visible(k < len(pmf))
            bar.set_facecolor(colors[k])
        self.mean_line.set_xdata([ek, ek])
        span = self.x_span(gamma)
        right = ek > (span + 1) / 2  # keep the label inside the axes
        self.mean_text.set_horizontalalignment("right" if right else "left")
        self.mean_text.set_position((ek - 0.08 if right else ek + 0.08, 1.02))
        self.mean_text.set_text(f"E[K] = {ek:.2f}")
        self.ax.set_xlim(0.4, span + 0.6)
        step = max(1, span // 8)
        self.ax.set_xticks(range(1, span + 1, step))
        self.ax.set_title(f"γ = {gamma}: K is 1 … {gamma + 1}", fontsize=10)

    def x_span(self, gamma) -> int:
        """How many K values the x axis shows: γ + 1 rounded up to 3, 5, 9 or max γ + 1, so the
        axis (its static, costly part) changes only at those steps."""
        return next(
            s for s in (3, 5, 9, self.max_gamma + 1) if s >= int(gamma) + 1 or s == self.max_gamma + 1
        )


def plot_expected_count_vs_gamma(ax, alphas=DEFAULT_ALPHAS, max_gamma: int = 12):
    """E[K] against γ for several α, with each curve's ceiling 1/(1 − α) dotted."""
    gs = np.arange(max_gamma + 1)
    cmap = [COLORS[k] for k in ("rejected", "draft", "accepted", "target", "residual", "bonus")]
    lines, top = [], 1.0
    curves = [[float(v) for v in expected_count_curve(float(a), max_gamma)] for a in alphas]
    top = max(max(ys) for ys in curves) * 1.1
    for i, (a, ys) in enumerate(zip(alphas, curves)):
        (ln,) = ax.plot(gs, ys, marker="o", markersize=3, color=cmap[i % len(cmap)], label=f"α = {a:g}")
        lines.append(ln)
        if a < 1 and 1 / (1 - a) <= top:
            ax.axhline(1 / (1 - a), color=cmap[i % len(cmap)], linestyle=":", linewidth=0.9)
    ax.set_ylim(0.8, top)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # γ is a count: no 2.5, 7.5 ticks
    ax.set_xlabel("γ (proposals per round)")
    ax.set_ylabel("E[K] tokens per round")
    ax.legend(fontsize=8, loc="upper left")
    tag_kind(ax, "derived", where="lower right")
    return lines


def expected_count_figure(alphas=DEFAULT_ALPHAS, max_gamma: int = 12):
    fig, ax = new_axes(1, width=6.4, height=3.4)
    plot_expected_count_vs_gamma(ax, alphas, max_gamma)
    ax.set_title("Diminishing returns: each extra proposal adds only α^γ", fontsize=10)
    return fig


def simulated_vs_iid_figure(k_counts, iid_pmf, *, title=""):
    """K frequencies of seeded simulated rounds next to the iid prediction."""
    counts = np.asarray(k_counts, dtype=float)
    freq = counts / counts.sum()
    pmf = np.asarray(iid_pmf, dtype=float)
    ks = np.arange(1, len(freq) + 1)
    fig, ax = new_axes(1, width=6.4, height=3.2)
    ax.bar(ks - 0.2, freq, width=0.4, color=COLORS["target"], label="seeded rounds, toy language (simulated)")
    ax.bar(
        ks + 0.2,
        pmf,
        width=0.4,
        color=COLORS["draft"],
        hatch="//",
        edgecolor="black",
        linewidth=0.5,
        label="iid prediction at the rounds' average α (derived)",
    )
    ax.set_xticks(ks)
    ax.set_xlabel("K = tokens emitted by one round")
    ax.set_ylabel("share of rounds")
    ax.set_ylim(0, max(float(freq.max()), float(pmf.max())) * 1.35)  # room for the legend
    ax.legend(fontsize=8, loc="upper left")
    if title:
        ax.set_title(title, fontsize=10)
    tag_kind(ax, "simulated")
    return fig


class CountsPlot(LabPlot):
    """The counts lab's figure at state ``alpha``, ``gamma``: the K distribution (left) and E[K]
    against γ for several α with the chosen α's curve and (γ, E[K]) starred (right). Bars, curve
    and star are blitted; an Axes' static parts are redrawn only when its limits change."""

    size = (740, 300)

    def __init__(self, max_gamma: int = 16, *, blit: bool = True):
        super().__init__(blit=blit)
        self.max_gamma = max_gamma
        ax1 = self.fig.add_axes((0.075, 0.15, 0.38, 0.72))
        ax2 = self.fig.add_axes((0.575, 0.15, 0.405, 0.72))
        self.ax1, self.ax2 = ax1, ax2
        self.bars = CountBars(ax1, max_gamma=max_gamma)
        plot_expected_count_vs_gamma(ax2, DEFAULT_ALPHAS, max_gamma)
        self.base_top = ax2.get_ylim()[1]
        (self.curve,) = ax2.plot([], [], color=COLORS["ink"], linewidth=1.5, label="chosen α")
        (self.star,) = ax2.plot(
            [], [], marker="*", markersize=14, color=COLORS["highlight"], markeredgecolor="black"
        )
        dynamic = list(self.bars.bars) + [
            self.bars.mean_line,
            self.bars.mean_text,
            ax1.title,
            self.curve,
            self.star,
        ]
        self.blit(dynamic, regions={ax1: (0.0, 0.0, 0.5, 1.0), ax2: (0.5, 0.0, 1.0, 1.0)})
        self._gamma, self._top = None, None

    def update(self, state: Mapping) -> None:
        a, g = float(state["alpha"]), int(state["gamma"])
        self.bars.update(a, g)
        ys = [float(v) for v in expected_count_curve(a, self.max_gamma)]
        self.curve.set_data(range(self.max_gamma + 1), ys)
        self.star.set_data([g], [ys[g]])
        # the y range is a function of the state (never of history), in a few steps
        top = next(t for t in (self.base_top, 13.0, 15.5, 18.0) if t >= ys[-1] * 1.05)
        self.ax2.set_ylim(0.8, top)
        span = self.bars.x_span(g)
        if span != self._gamma:
            self.invalidate(self.ax1, span)  # the x range and ticks follow γ in steps
        if top != self._top:
            self.invalidate(self.ax2, top)
        self._gamma, self._top = span, top

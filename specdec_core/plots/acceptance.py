"""Figures for notebook 01: p, q and the accepted mass min(p, q) per symbol, and simulations.

``draw_*`` functions draw onto a given axes; ``*_figure`` functions build a figure for the
notebook (show it with :func:`specdec_core.plots.show`); :class:`AcceptancePlot` is the lab's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..verify import acceptance_probabilities, acceptance_probability, accepted_mass
from .frames import LabPlot
from .style import COLORS, HATCHES, new_axes, tag_kind

SYMBOLS = ("A", "B", "C", "D", "E", "F")


def symbol_labels(n, symbols):
    if symbols is None:
        symbols = SYMBOLS[:n] if n <= len(SYMBOLS) else tuple(str(i) for i in range(n))
    if len(symbols) != n:
        raise ValueError(f"symbols must name the {n} symbols, got {len(symbols)} names")
    return tuple(symbols)


def draw_acceptance(ax, p, q, symbols=None, *, fixed_ylim: bool = False):
    """Grouped bars p, q, min(p, q) with a(x) written above each symbol; α in the title.
    ``fixed_ylim``: the y range stays 0 to 1.3 (the lab: only bars and texts move).

    Returns an *updater*: ``update(p, q)`` moves the same artists to a new pair with the same
    number of symbols (the widget uses it instead of redrawing the axes from scratch).
    """
    n = len(np.asarray(p, dtype=np.float64))
    labels = symbol_labels(n, symbols)
    x = np.arange(n)
    w = 0.27
    zeros = np.zeros(n)
    bars_p = ax.bar(x - w, zeros, w, label="p (target)", color=COLORS["target"], hatch=HATCHES["target"])
    bars_q = ax.bar(
        x, zeros, w, label="q (draft)", color=COLORS["draft"], hatch=HATCHES["draft"], edgecolor="white"
    )
    bars_m = ax.bar(
        x + w,
        zeros,
        w,
        label="min(p, q) accepted",
        color=COLORS["accepted"],
        hatch=HATCHES["accepted"],
        edgecolor="white",
    )
    notes = [ax.text(xi, 0, "", ha="center", va="bottom", fontsize=8) for xi in x]
    ax.set_xticks(x, labels)
    ax.set_ylabel("probability")
    if fixed_ylim:
        ax.set_yticks(np.linspace(0, 1, 6))
    ax.legend(fontsize=7, loc="upper left", ncols=3, frameon=False)
    title = ax.set_title("", fontsize=10)

    def update(p, q):
        acc = np.asarray(accepted_mass(p, q), dtype=np.float64)
        a = np.asarray(acceptance_probabilities(p, q), dtype=np.float64)
        alpha = float(acceptance_probability(p, q))
        pf, qf = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
        if len(pf) != n:
            raise ValueError(f"this figure shows {n} symbols, got {len(pf)}")
        for bars, heights in ((bars_p, pf), (bars_q, qf), (bars_m, acc)):
            for rect, h in zip(bars, heights):
                rect.set_height(h)
        top = 1.0 if fixed_ylim else max(float(pf.max()), float(qf.max()), 0.05)
        for note, ai, qi in zip(notes, a, qf):
            note.set_text("never\nproposed" if qi == 0 else f"a={ai:.2f}")
            note.set_y(top * 1.04)
        ax.set_ylim(0, top * 1.32)
        title.set_text(f"α = Σ min(p, q) = {alpha:.4f}")

    update(p, q)
    return update


def acceptance_figure(p, q, symbols=None):
    """Static figure of :func:`draw_acceptance` (tagged *derived*)."""
    fig, ax = new_axes(width=6.4, height=3.2)
    draw_acceptance(ax, p, q, symbols)
    tag_kind(ax, "derived")
    return fig


def comparison_figure(
    exact, empirical, *, title, exact_label, empirical_label, symbols=None, kind="simulated"
):
    """Two bars per symbol: an exact law and a simulated frequency (tagged ``kind``)."""
    ex = np.asarray(exact, dtype=np.float64)
    em = np.asarray(empirical, dtype=np.float64)
    labels = symbol_labels(len(ex), symbols)
    fig, ax = new_axes(width=5.6, height=2.8)
    x = np.arange(len(ex))
    ax.bar(
        x - 0.2,
        ex,
        0.4,
        label=exact_label,
        color=COLORS["accepted"],
        hatch=HATCHES["accepted"],
        edgecolor="white",
    )
    ax.bar(x + 0.2, em, 0.4, label=empirical_label, color=COLORS["discarded"])
    ax.set_xticks(x, labels)
    ax.set_ylabel("probability")
    ax.set_ylim(0, max(float(ex.max()), float(em.max())) * 1.3)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper right", frameon=False, bbox_to_anchor=(1.0, 0.9))
    tag_kind(ax, kind)
    return fig


def draw_thinning(ax, p, q, symbols=None):
    """Each draft bar q(x) cut at the target's level: the kept part min(p, q) and the rejected
    part max(q − p, 0) stacked, with p(x) marked by a black line."""
    acc = np.asarray(accepted_mass(p, q), dtype=np.float64)
    pf, qf = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    labels = symbol_labels(len(pf), symbols)
    x = np.arange(len(pf))
    ax.bar(
        x,
        acc,
        0.5,
        color=COLORS["accepted"],
        hatch=HATCHES["accepted"],
        edgecolor="white",
        label="proposed and kept: min(p, q)",
    )
    ax.bar(
        x,
        qf - acc,
        0.5,
        bottom=acc,
        color=COLORS["rejected"],
        hatch=HATCHES["rejected"],
        edgecolor="white",
        label="proposed and rejected: max(q − p, 0)",
    )
    ax.hlines(pf, x - 0.38, x + 0.38, colors=COLORS["ink"], lw=2.0, label="target level p(x)")
    ax.set_xticks(x, labels)
    ax.set_ylabel("probability")
    ax.set_ylim(0, max(float(pf.max()), float(qf.max())) * 1.45)
    rejected = float(qf.sum() - acc.sum())
    ax.set_title(f"the draft's proposals, thinned: rejected mass 1 − α = {rejected:.4f}", fontsize=10)
    ax.legend(fontsize=7, loc="upper left", frameon=False)
    return ax


def thinning_figure(p, q, symbols=None):
    """Static figure of :func:`draw_thinning` (tagged *derived*)."""
    fig, ax = new_axes(width=6.0, height=3.2)
    draw_thinning(ax, p, q, symbols)
    tag_kind(ax, "derived")
    return fig


class AcceptancePlot(LabPlot):
    """The acceptance lab's figure: :func:`draw_acceptance` on a fixed-size figure with a fixed
    y range (0 to 1.3), so only bars, notes and the title change and :meth:`png` blits them.
    ``read(state) -> (p, q)`` is the lab's. One figure per number of symbols, kept (``.fig`` is
    the one last updated); with ``blit`` those of ``counts`` are built and drawn up front, so
    moving the symbols slider never waits for a figure."""

    size = (600, 290)

    def __init__(self, read: Callable[[Mapping], tuple], counts=(), *, blit: bool = True):
        self._blit, self.read = blit, read
        self.fig, self.frames, self.panels = None, None, {}
        for n in counts if blit else ():
            self._panel(np.full(n, 1 / n), np.full(n, 1 / n)).frames.png()  # caches the static parts

    def _panel(self, p, q):
        n = len(p)
        super().__init__(blit=self._blit)
        ax = self.fig.add_axes((0.09, 0.1, 0.89, 0.8))
        self.move = draw_acceptance(ax, p, q, SYMBOLS[:n], fixed_ylim=True)
        tag_kind(ax, "derived")
        self.blit(list(ax.patches) + list(ax.texts[:n]) + [ax.title])
        self.panels[n] = (self.fig, self.frames, self.move)
        return self

    def update(self, state: Mapping) -> None:
        p, q = self.read(state)
        if len(p) not in self.panels:
            self._panel(p, q)
        self.fig, self.frames, self.move = self.panels[len(p)]
        self.move(p, q)

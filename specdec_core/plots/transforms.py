"""Figures for notebook 07: the law a setup really emits against the law that was intended."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..transforms import SETUPS, setup_output
from ..verify import total_variation
from .frames import LabPlot
from .style import COLORS, new_axes, tag_kind

SETUP_TITLES = {
    "correct": "correct: same transform both sides",
    "greedy_draft": "draft greedy, softmax as q",
    "draft_only": "transform on the draft only",
    "target_only": "transform on the target only",
    "unreported": "q reported before the transform",
}


class ComparisonView:
    """Side-by-side bars: the intended law (target colour) and the emitted law (residual
    colour, hatched). Built once for V symbols; :meth:`update` only changes bar heights."""

    def __init__(self, ax, symbols):
        self.ax = ax
        x = np.arange(len(symbols))
        w = 0.38
        zeros = np.zeros(len(symbols))
        self.intended = ax.bar(x - w / 2, zeros, w, color=COLORS["target"], label="intended")
        self.emitted = ax.bar(
            x + w / 2, zeros, w, color=COLORS["residual"], hatch="\\\\", edgecolor="white", label="emitted"
        )
        ax.set_xticks(x, symbols)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("probability")
        self.title = ax.set_title("", fontsize=9)
        ax.legend(fontsize=7, loc="upper right", bbox_to_anchor=(1.0, 0.88))
        tag_kind(ax, "derived")

    def update(self, intended, output, title: str = "") -> None:
        for bar, v in zip(self.intended, np.asarray(intended, dtype=float)):
            bar.set_height(v)
        for bar, v in zip(self.emitted, np.asarray(output, dtype=float)):
            bar.set_height(v)
        self.title.set_text(title)


def draw_comparison(ax, intended, output, symbols, title: str = "") -> ComparisonView:
    """Draw on a fresh ``ax`` and return the view (keep it to update later)."""
    view = ComparisonView(ax, symbols)
    view.update(intended, output, title)
    return view


def setups_figure(p_raw, q_raw, transform, symbols, transform_label: str = ""):
    """One panel per setup of :data:`SETUPS`: intended vs emitted law and their TV distance, in
    rows of three, 760 px wide (a notebook's output area shows it unscaled; one row of five was
    shown at 67 %)."""
    rows = -(-len(SETUPS) // 3)
    fig, grid = new_axes(3, nrows=rows, width=7.6, height=2.75 * rows, sharey=True)
    axes = list(grid.flat)
    for i, (ax, setup) in enumerate(zip(axes, SETUPS)):
        out, intended = setup_output(setup, p_raw, q_raw, transform)
        tv = float(total_variation(out, intended))
        draw_comparison(ax, intended, out, symbols, f"{SETUP_TITLES[setup]}\nTV = {tv:.4f}")
        if i % 3:
            ax.set_ylabel("")
        if i:
            ax.get_legend().remove()
    for ax in axes[len(SETUPS) :]:
        ax.axis("off")
    if transform_label:
        fig.suptitle(transform_label, fontsize=10)
    return fig


class TransformPlot(LabPlot):
    """The transforms lab's figure: a :class:`ComparisonView` on a fixed-size figure; bars and
    title are blitted. ``read(state) -> (intended, emitted, title)`` is the lab's."""

    size = (520, 290)

    def __init__(self, read: Callable[[Mapping], tuple], symbols, *, blit: bool = True):
        super().__init__(blit=blit)
        self.read = read
        self.view = ComparisonView(self.fig.add_axes((0.11, 0.1, 0.86, 0.74)), symbols)
        self.blit([*self.view.intended, *self.view.emitted, self.view.title])

    def update(self, state: Mapping) -> None:
        self.view.update(*self.read(state))

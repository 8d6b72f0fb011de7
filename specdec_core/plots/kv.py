"""Figures for notebook 06: the peak working set of speculative decoding against a budget."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..kv import GIB, WorkingSet, working_set
from .frames import LabPlot
from .style import COLORS, new_axes, tag_kind

#: Colour and label of each part of the working set (stacked in this order).
PART_STYLE = {
    "target_weights": ("target weights", COLORS["target"], "..."),
    "draft_weights": ("draft weights", COLORS["draft"], "..."),
    "target_cache": ("target KV, context", COLORS["accepted"], ""),
    "target_provisional": ("target KV, γ provisional", COLORS["rejected"], "xx"),
    "draft_cache": ("draft KV, context", COLORS["residual"], "//"),
    "draft_provisional": ("draft KV, γ provisional", COLORS["discarded"], "xx"),
}


def nice_ceiling(x: float) -> float:
    """The smallest of 1, 1.5, 2, 3, 4, 5, 6, 8 × 10^k at or above ``x`` (> 0): axis limits that
    change only now and then, so a live figure rarely has to redraw its ticks."""
    import math

    k = math.floor(math.log10(x))
    for m in (1, 1.5, 2, 3, 4, 5, 6, 8, 10):
        if m * 10**k >= x:
            return m * 10**k
    return 10 ** (k + 1)


class BreakdownView:
    """One stacked horizontal bar (GiB) per part of a :class:`WorkingSet`, and the budget as a
    dashed vertical line. Built once; :meth:`update` only moves artists (fast widget redraws)."""

    def __init__(self, ax, legend: bool = True):
        self.ax = ax
        self.bars = {}
        for part, (label, color, hatch) in PART_STYLE.items():
            self.bars[part] = ax.barh(
                [0], [0.0], left=0.0, color=color, hatch=hatch, edgecolor="white", label=label, height=0.6
            )[0]
        self.budget = ax.axvline(0.0, color=COLORS["ink"], lw=2, ls="--", label="memory budget")
        ax.set_ylim(-0.6, 0.9)
        ax.set_yticks([])
        ax.set_xlabel("GiB at the peak of a round")
        if legend:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.5), ncol=3, fontsize=7, frameon=False)
        # y given: the title is not re-placed from the tick labels at every draw (no top ticks)
        self.title = ax.set_title("", fontsize=9, y=1.0)
        tag_kind(ax, "derived")

    def update(self, ws: WorkingSet, title: str = "") -> None:
        left = 0.0
        for part, bar in self.bars.items():
            v = getattr(ws, part) / GIB
            bar.set_x(left)
            bar.set_width(v)
            left += v
        right = left
        if ws.budget is not None:
            b = ws.budget / GIB
            self.budget.set_xdata([b, b])
            self.budget.set_visible(True)
            right = max(right, b)
        else:
            self.budget.set_visible(False)
        self.ax.set_xlim(0, nice_ceiling(right * 1.05) if right > 0 else 1.0)
        self.title.set_text(title)


def concurrency_figure(
    target, draft, *, dtype, context, gammas, budget_bytes, max_sequences=64, include_weights=True
):
    """Working set (GiB) against concurrent sequences, one line per γ, and the budget line."""
    fig, ax = new_axes(width=6.4, height=3.4)
    s = np.arange(1, max_sequences + 1)
    for i, g in enumerate(gammas):
        one = working_set(
            target, draft, dtype=dtype, context=context, sequences=1, gamma=g, include_weights=include_weights
        )
        fixed = one.target_weights + one.draft_weights
        y = (fixed + s * one.kv_total) / GIB
        _ = ax.plot(s, y, lw=1.8, ls=["-", "--", "-.", ":"][i % 4], label=f"γ = {g}")
    ax.axhline(
        budget_bytes / GIB,
        color=COLORS["ink"],
        lw=2,
        ls="--",
        alpha=0.7,
        label=f"budget {budget_bytes / GIB:.0f} GiB",
    )
    ax.set_xlabel("concurrent sequences")
    ax.set_ylabel("peak working set (GiB)")
    ax.set_title(f"{_name(target)} + draft {_name(draft)}, {dtype}, context {context:,}", fontsize=9)
    ax.legend(fontsize=8)
    tag_kind(ax, "derived", "lower right")
    return fig


class KvPlot(LabPlot):
    """The KV calculator lab's figure: one :class:`BreakdownView` of ``read(state)`` (a
    :class:`WorkingSet`) under a fixed ``title``, legend below. The axes' static parts (ticks,
    label, title, kind tag) live in a fixed panel above the legend; its pixels are cached per
    x-limit, so a scale seen before is restored, not redrawn."""

    size = (740, 190)

    def __init__(self, read: Callable[[Mapping], WorkingSet], title: str = "", *, blit: bool = True):
        super().__init__(blit=blit)
        self.read, self.title, self.xlim = read, title, None
        self.bars = BreakdownView(self.fig.add_axes((0.02, 0.5, 0.96, 0.36)), legend=False)
        # the legend belongs to the figure, not the axes, so a redraw of the axes skips it
        self.fig.legend(
            [*self.bars.bars.values(), self.bars.budget],
            [PART_STYLE[p][0] for p in self.bars.bars] + ["memory budget"],
            loc="lower center",
            ncol=4,
            fontsize=7,
            frameon=False,
        )
        self.blit([*self.bars.bars.values(), self.bars.budget], regions={self.bars.ax: (0.0, 0.2, 1.0, 1.0)})

    def update(self, state: Mapping) -> None:
        self.bars.update(self.read(state), self.title)
        xlim = self.bars.ax.get_xlim()
        if xlim != self.xlim:  # new scale: repaint (or restore) this axes' ticks only
            self.invalidate(self.bars.ax, key=xlim)
            self.xlim = xlim


def _name(m):
    return m if isinstance(m, str) else m.name

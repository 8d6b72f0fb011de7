"""Figure for notebook 09b: the strict rule against the match rule engines run.

Left: per symbol, the target p, the strict rule's accepted mass min(p, r) and the match rule's
r·p (r the proposal law: q, or one-hot at argmax q for a greedy draft). Right: E[K] against γ
under iid acceptance for the two acceptances, the chosen γ starred. No math here: the numbers
come from :mod:`specdec_core.engines`, :mod:`specdec_core.verify` and :mod:`specdec_core.counts`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..counts import expected_count_curve
from ..engines import match_acceptance, match_accepted_mass, proposal_law
from ..verify import acceptance_probability, accepted_mass
from .acceptance import SYMBOLS
from .frames import LabPlot
from .style import COLORS, HATCHES, tag_kind

if TYPE_CHECKING:
    from ..types import Probs

#: Largest γ on the right panel (the lab's γ slider goes this far).
MAX_GAMMA = 8


def rule_numbers(p: Probs, q: Probs, draft: str, max_gamma: int = MAX_GAMMA) -> dict:
    """Float numbers the figure shows at (p, q, draft): per-symbol accepted masses of both rules,
    both acceptances and their E[K] curves for γ = 0 … ``max_gamma``."""
    r = proposal_law(q, draft)
    alpha = float(acceptance_probability(p, r))
    match = float(match_acceptance(p, q, draft))
    return {
        "p": np.asarray(p, dtype=np.float64),
        "strict_mass": np.asarray(accepted_mass(p, r), dtype=np.float64),
        "match_mass": np.asarray(match_accepted_mass(p, q, draft), dtype=np.float64),
        "alpha": alpha,
        "match": match,
        "strict_curve": [float(v) for v in expected_count_curve(alpha, max_gamma)],
        "match_curve": [float(v) for v in expected_count_curve(match, max_gamma)],
    }


class MatchingPlot(LabPlot):
    """The matching lab's figure; ``read(state) -> (p, q)`` gives the normalized pair. Bars,
    curves, star and titles are blitted; the axes' limits are fixed (never redrawn)."""

    size = (740, 300)

    def __init__(self, read: Callable[[Mapping], tuple], n_symbols: int = 3, *, blit: bool = True):
        super().__init__(blit=blit)
        self.read, self.n = read, n_symbols
        ax1 = self.fig.add_axes((0.075, 0.15, 0.4, 0.68))
        ax2 = self.fig.add_axes((0.58, 0.15, 0.4, 0.68))
        self.ax1, self.ax2 = ax1, ax2
        x = np.arange(n_symbols)
        w = 0.27
        zeros = np.zeros(n_symbols)
        self.bars_p = ax1.bar(x - w, zeros, w, color=COLORS["target"], label="p (target)")
        self.bars_s = ax1.bar(
            x,
            zeros,
            w,
            color=COLORS["accepted"],
            hatch=HATCHES["accepted"],
            ec="white",
            label="strict: min(p, r)",
        )
        self.bars_m = ax1.bar(
            x + w, zeros, w, color=COLORS["draft"], hatch=HATCHES["draft"], ec="white", label="match: r·p"
        )
        ax1.set_xticks(x, list(SYMBOLS[:n_symbols]))
        ax1.set_ylim(0, 1.3)
        ax1.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
        ax1.set_xlabel("symbol x")
        ax1.set_ylabel("probability")
        ax1.legend(fontsize=7, loc="upper left", ncols=3, frameon=False)
        tag_kind(ax1, "derived", where="upper right")
        self.title1 = ax1.set_title("", fontsize=9)
        gs = np.arange(MAX_GAMMA + 1)
        (self.curve_s,) = ax2.plot(
            gs, np.ones(len(gs)), marker="o", ms=3, color=COLORS["accepted"], label="strict"
        )
        (self.curve_m,) = ax2.plot(
            gs, np.ones(len(gs)), marker="s", ms=3, color=COLORS["draft"], ls="--", label="match"
        )
        (self.star_s,) = ax2.plot([], [], marker="*", ms=13, color=COLORS["highlight"], mec="black", ls="")
        (self.star_m,) = ax2.plot([], [], marker="*", ms=13, color=COLORS["highlight"], mec="black", ls="")
        ax2.set_xlim(-0.3, MAX_GAMMA + 0.3)
        ax2.set_ylim(0.8, MAX_GAMMA + 3.0)  # room above γ + 1 for the legend and the tag
        ax2.set_yticks(range(1, MAX_GAMMA + 2))
        ax2.set_xlabel("γ (proposals per round)")
        ax2.set_ylabel("E[K] tokens per round (iid)")
        ax2.legend(fontsize=7, loc="upper left", frameon=False)
        tag_kind(ax2, "derived", where="upper right")
        self.title2 = ax2.set_title("", fontsize=9)
        dynamic = [*self.bars_p, *self.bars_s, *self.bars_m, self.title1, self.title2]
        dynamic += [self.curve_s, self.curve_m, self.star_s, self.star_m]
        self.blit(dynamic)

    def update(self, state: Mapping) -> None:
        p, q = self.read(state)
        draft, g = state["draft"], int(state["gamma"])
        nums = rule_numbers(p, q, draft)
        for bars, heights in (
            (self.bars_p, nums["p"]),
            (self.bars_s, nums["strict_mass"]),
            (self.bars_m, nums["match_mass"]),
        ):
            for rect, h in zip(bars, heights):
                rect.set_height(float(h))
        self.title1.set_text(f"accepted mass per symbol ({draft} draft)")
        gs = np.arange(MAX_GAMMA + 1)
        self.curve_s.set_data(gs, nums["strict_curve"])
        self.curve_m.set_data(gs, nums["match_curve"])
        self.star_s.set_data([g], [nums["strict_curve"][g]])
        self.star_m.set_data([g], [nums["match_curve"][g]])
        self.title2.set_text(
            f"γ = {g}: E[K] strict {nums['strict_curve'][g]:.2f}, match {nums['match_curve'][g]:.2f}"
        )

"""Figures for notebook 05: rates under an assumed budget, the rate against verification time,
the (α, γ) map of where speculation pays, and the cost-ratio improvement factor.

Every figure here plots values computed from assumed budgets or an assumed cost ratio c, so
each is tagged "derived from assumed inputs" (the label rule of specdec_core.formatting).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import Normalize

from ..timing import improvement_factor, optimal_gamma, scenario_rates, speedup_map
from .frames import LabPlot
from .style import COLORS, new_axes, tag_kind

MAP_ALPHAS = np.linspace(0.0, 1.0, 101)
#: log2 of the speedup ratio is clipped to ±LOG2_RANGE for the colour scale.
LOG2_RANGE = 2.0


def plot_rate_vs_verify(
    ax, alpha, gamma, *, draft_ms, overhead_ms, baseline_ms, max_verify_ms=20.0, marks=()
):
    """Speculative rate as a function of T_verify, the baseline as a flat line, and the
    break-even crossing. ``marks``: verification times to dot on the curve."""
    from ..counts import expected_output_count
    from ..timing import baseline_tokens_per_second, break_even_verify_ms

    ek = float(expected_output_count(float(alpha), gamma))
    v = np.linspace(0.0, max_verify_ms, 201)
    total = float(draft_ms) + v + float(overhead_ms)
    rate = np.where(total > 0, ek * 1000.0 / np.where(total > 0, total, 1.0), np.nan)
    base = float(baseline_tokens_per_second(baseline_ms))
    ax.plot(v[total > 0], rate[total > 0], color=COLORS["target"], label="speculative")
    ax.axhline(base, color=COLORS["discarded"], linestyle="--", label=f"baseline ({base:.2f} tokens/s)")
    be = float(break_even_verify_ms(ek, draft_ms=draft_ms, overhead_ms=overhead_ms, baseline_ms=baseline_ms))
    if 0 <= be <= max_verify_ms:
        ax.axvline(be, color=COLORS["rejected"], linestyle=":", label=f"break-even {be:.2f} ms")
    for m in marks:
        r = ek * 1000.0 / (float(draft_ms) + m + float(overhead_ms))
        ax.plot([m], [r], "o", color=COLORS["ink"])
        ax.annotate(f"{r:.2f}", (m, r), textcoords="offset points", xytext=(6, 6), fontsize=8)
    ax.set_xlabel("T_verify (ms per round, assumed)")
    ax.set_ylabel("tokens per second")
    ax.set_ylim(0, max(base * 2.2, 1.0))
    ax.legend(fontsize=8, loc="upper right")
    tag_kind(ax, "derived-from-assumed", where="lower left")


def pays_boundary(ratio, gammas):
    """A step line along the left edge of the cells where the ratio exceeds 1, one step per γ
    row (γ is discrete, so the boundary is drawn as steps, not interpolated). Rows where
    nothing pays are left out (NaN breaks the line)."""
    half = 0.5 * (MAP_ALPHAS[1] - MAP_ALPHAS[0])
    xs, ys = [], []
    for row, g in zip(ratio, gammas):
        idx = np.flatnonzero(row > 1)
        if idx.size == 0:
            xs += [np.nan]
            ys += [np.nan]
            continue
        x = MAP_ALPHAS[idx[0]] - half
        xs += [x, x]
        ys += [g - 0.5, g + 0.5]
    return np.array(xs), np.array(ys)


SPECULATIVE_COSTS = ("draft_per_token_ms", "verify_base_ms", "verify_per_position_ms", "overhead_ms")
#: The budget of a timing-lab state: the keyword arguments of :func:`~specdec_core.timing.scenario_rates`.
BUDGET_KEYS = (*SPECULATIVE_COSTS, "baseline_ms")


def no_speculative_budget(budget) -> bool:
    """True when every cost of a speculative round is 0 (missing ones default to 0): then a round
    at γ ≥ 1 takes no time and only γ = 0 (plain decoding, which uses none of them) has a rate."""
    return all(float(budget.get(k, 0)) == 0 for k in SPECULATIVE_COSTS)


def map_ratio(gammas, **budget) -> np.ndarray:
    """:func:`specdec_core.timing.speedup_map` over MAP_ALPHAS, except that a budget with no
    speculative cost at all gives NaN rows (drawn grey) for γ ≥ 1 instead of an error: γ = 0
    is still plain decoding at ratio 1."""
    if no_speculative_budget(budget):
        ratio = np.full((len(gammas), MAP_ALPHAS.size), np.nan)
        plain = [i for i, g in enumerate(gammas) if g == 0]
        if plain:  # also validates the budget
            ratio[plain] = speedup_map(MAP_ALPHAS, [0] * len(plain), **budget)
        else:
            speedup_map(MAP_ALPHAS, [0], **budget)
        return ratio
    return speedup_map(MAP_ALPHAS, gammas, **budget)


class SpeedupMap:
    """Map over (α, γ) of log2(speculative rate / baseline rate), updated in place."""

    def __init__(self, ax, max_gamma: int = 16, colorbar=True):
        self.ax, self.gammas = ax, np.arange(max_gamma + 1)
        data = np.zeros((len(self.gammas), MAP_ALPHAS.size))
        self.image = ax.imshow(
            data,
            origin="lower",
            aspect="auto",
            cmap=colormaps["RdBu"].with_extremes(bad=COLORS["discarded"]),
            norm=Normalize(-LOG2_RANGE, LOG2_RANGE),
            extent=(-0.005, 1.005, -0.5, max_gamma + 0.5),
            interpolation="nearest",
        )
        (self.boundary,) = ax.plot([], [], color="black", linewidth=1.4)
        (self.marker,) = ax.plot(
            [0.6], [2], marker="*", markersize=14, color=COLORS["highlight"], markeredgecolor="black"
        )
        ax.set_xlabel("α (acceptance per proposal, iid)")
        ax.set_ylabel("γ")
        if colorbar:
            cb = ax.figure.colorbar(self.image, ax=ax, ticks=[-2, -1, 0, 1, 2])
            cb.ax.set_yticklabels(["¼×", "½×", "1× (break-even)", "2×", "4×"], fontsize=8)
        tag_kind(ax, "derived-from-assumed", where="upper left")

    def update(self, alpha, gamma, **budget):
        ratio = map_ratio(self.gammas, **budget)
        log2 = np.log2(np.clip(ratio, 2.0**-LOG2_RANGE, 2.0**LOG2_RANGE))
        self.image.set_data(log2)
        self.boundary.set_data(*pays_boundary(ratio, self.gammas))
        self.marker.set_data([float(alpha)], [min(int(gamma), int(self.gammas[-1]))])
        self.ax.set_title("blue: speculation pays · red: it loses (black line: break-even)", fontsize=9)
        return ratio


class RateBars:
    """Two bars: speculative and baseline tokens/s, updated in place.

    The y axis has no ticks (each bar carries its value), so rescaling it changes only the
    bars and their labels: a widget can redraw just those artists.
    """

    def __init__(self, ax):
        self.ax = ax
        self.bars = ax.bar(
            ["speculative", "baseline"],
            [0, 0],
            color=[COLORS["target"], COLORS["discarded"]],
            edgecolor="black",
            linewidth=0.6,
        )
        self.texts = [ax.text(i, 0, "", ha="center", va="bottom", fontsize=9) for i in range(2)]
        ax.set_ylabel("tokens per second")
        ax.set_yticks([])
        tag_kind(ax, "derived-from-assumed", where="upper right")

    def update(self, rate, baseline_rate):
        vals = [float(rate), float(baseline_rate)]
        top = max(vals) * 1.3 if max(vals) > 0 else 1.0
        self.ax.set_ylim(0, top)
        for bar, txt, v in zip(self.bars, self.texts, vals):
            bar.set_height(v)
            txt.set_position((txt.get_position()[0], v + 0.01 * top))
            txt.set_text(f"{v:.2f}")


def improvement_figure(alphas=(0.6, 0.8, 0.9), c=0.1, max_gamma=12):
    """Leviathan et al.'s improvement factor against γ for several α at cost ratio c, with the
    best γ of each curve starred."""
    fig, ax = new_axes(1, width=6.4, height=3.4)
    gs = np.arange(max_gamma + 1)
    palette = [COLORS["rejected"], COLORS["accepted"], COLORS["target"], COLORS["residual"]]
    for i, a in enumerate(alphas):
        ys = [float(improvement_factor(float(a), int(g), float(c))) for g in gs]
        best = optimal_gamma(float(a), float(c), max_gamma)
        col = palette[i % len(palette)]
        ax.plot(gs, ys, marker="o", markersize=3, color=col, label=f"α = {a:g} (best γ = {best})")
        ax.plot([best], [ys[best]], marker="*", markersize=13, color=col, markeredgecolor="black")
    ax.axhline(1, color=COLORS["discarded"], linestyle="--", linewidth=1)
    ax.set_xlabel("γ")
    ax.set_ylabel("improvement factor")
    ax.set_title(f"Cost-ratio model, c = {c:g} (draft step / target step)", fontsize=10)
    ax.legend(fontsize=8)
    tag_kind(ax, "derived-from-assumed", where="lower right")
    return fig


class TimingPlot(LabPlot):
    """The timing lab's figure at state ``alpha``, ``gamma`` and the :data:`BUDGET_KEYS`: rate
    bars (left) and the (α, γ) map with the chosen point (right). Bars, their labels, the map,
    its boundary and the star are blitted; nothing static changes with the state."""

    size = (740, 300)

    def __init__(self, max_gamma: int = 16, *, blit: bool = True):
        super().__init__(blit=blit)
        ax1 = self.fig.add_axes((0.055, 0.15, 0.25, 0.72))
        ax2 = self.fig.add_axes((0.39, 0.15, 0.47, 0.72))
        self.bars, self.smap = RateBars(ax1), SpeedupMap(ax2, max_gamma)
        self.smap.ax.set_title("blue: speculation pays · red: it loses (black line: break-even)", fontsize=9)
        dynamic = [
            self.smap.image,
            *self.smap.ax.texts,
            self.smap.boundary,
            self.smap.marker,
            *self.bars.bars,
            *self.bars.texts,
        ]  # the map's kind tag stays on top of it
        self.blit(dynamic)

    def update(self, state: Mapping) -> None:
        """Raises ``ValueError`` (from the library) for an impossible budget."""
        alpha, gamma, budget = state["alpha"], state["gamma"], {k: state[k] for k in BUDGET_KEYS}
        s = scenario_rates(alpha, gamma, **budget)
        self.smap.update(alpha, gamma, **budget)
        self.bars.update(s["rate"], s["baseline_rate"])

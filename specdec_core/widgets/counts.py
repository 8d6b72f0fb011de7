"""Notebook 04 widget: the distribution of K (tokens per round) and E[K] over α and γ.

The widget holds no math: it calls :mod:`specdec_core.counts` and redraws the artists of one
figure built by :mod:`specdec_core.plots.counts`.
"""
from __future__ import annotations

import html

import ipywidgets as w
import matplotlib.pyplot as plt

from ..counts import expected_output_count, output_count_distribution
from ..formatting import labelled
from ..plots.counts import DEFAULT_ALPHAS, CountBars
from ..plots.style import new_axes
from ..questions import ACCEPTANCE_LENGTH_QUESTION  # noqa: F401  (re-export: the question's home is questions.py)


from .frames import BlitPNG, figure_png  # noqa: F401  (shared frame helpers)


def count_text(alpha, gamma, max_listed: int = 8) -> str:
    """The widget's result line: P(K = k) and E[K] at (α, γ), fixed rounding, never NaN."""
    a = min(max(float(alpha), 0.0), 1.0)
    pmf = [float(v) for v in output_count_distribution(a, int(gamma))]
    ek = float(expected_output_count(a, int(gamma)))
    items = [f"P(K={k})={v:.4f}" for k, v in enumerate(pmf, start=1)]
    if len(items) > max_listed:
        items = items[: max_listed - 2] + ["…", items[-1]]
    return labelled("derived", f"α = {a:.2f}, γ = {int(gamma)} (iid): " + ", ".join(items)
                    + f" · E[K] = {ek:.4f} tokens per round (at most {int(gamma) + 1})")


def count_widget(alpha=0.6, gamma=2, max_gamma: int = 16):
    """Sliders for α and γ; the K distribution, E[K], and E[K] against γ for several α with the
    current (γ, E[K]) starred. Attributes for tests: ``.alpha``, ``.gamma``, ``.result``,
    ``.update()``, ``.fig``."""
    a_s = w.FloatSlider(value=float(alpha), min=0.0, max=1.0, step=0.01, description="α",
                        continuous_update=True, readout_format=".2f")
    g_s = w.IntSlider(value=int(gamma), min=0, max=max_gamma, description="γ")
    a_s.add_class("specdec-count-alpha")
    g_s.add_class("specdec-count-gamma")
    result = w.HTML()
    result.add_class("specdec-count-result")
    image = w.Image(format="png", layout=w.Layout(max_width="100%"))
    image.add_class("specdec-count-figure")
    fig, (ax1, ax2) = new_axes(2, width=9.5, height=3.4)
    plt.close(fig)  # shown only through the Output widget
    bars = CountBars(ax1, max_gamma=max_gamma)
    from ..plots.counts import plot_expected_count_vs_gamma
    plot_expected_count_vs_gamma(ax2, DEFAULT_ALPHAS, max_gamma)
    (cur_line,) = ax2.plot([], [], color="black", linewidth=1.5, linestyle="-", label="chosen α")
    (star,) = ax2.plot([], [], marker="*", markersize=14, color="#F0E442", markeredgecolor="black")

    dynamic = list(bars.bars) + [bars.mean_line, bars.mean_text, cur_line, star]
    frames = BlitPNG(fig, dynamic)
    state = {"gamma": None, "ylim": None}

    def update(change=None):
        try:
            a, g = round(float(a_s.value), 4), int(g_s.value)
            result.value = html.escape(count_text(a, g))
            bars.update(a, g)
            curve = [1.0]
            for _ in range(max_gamma):
                curve.append(curve[-1] * a + 1.0)  # E[K](γ+1) = 1 + α·E[K](γ)
            cur_line.set_data(range(max_gamma + 1), curve)
            star.set_data([g], [curve[g]])
            ax2.set_ylim(0.8, max(ax2.get_ylim()[1], curve[-1] * 1.05))
            if g != state["gamma"]:
                frames.invalidate(ax1)  # x range, ticks and title follow γ
            if ax2.get_ylim() != state["ylim"]:
                frames.invalidate(ax2)  # the y range grew
            state["gamma"], state["ylim"] = g, ax2.get_ylim()
        except ValueError as exc:  # defensive: the sliders keep values valid
            result.value = f"<span style='color:#D55E00'>{html.escape(str(exc))}</span>"
            return
        image.value = frames.png()

    a_s.observe(update, names="value")
    g_s.observe(update, names="value")
    update()
    box = w.VBox([w.HBox([a_s, g_s]), result, image])
    box.add_class("specdec-count-widget")
    box.alpha, box.gamma, box.result, box.image, box.update, box.fig = a_s, g_s, result, image, update, fig
    return box

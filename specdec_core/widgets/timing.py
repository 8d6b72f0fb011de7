"""Notebook 05 widget: tokens per second under an *assumed* budget, against the baseline.

Controls: α, γ, draft cost per proposal, verification cost (base + per scored position),
overhead, baseline ms per token. Shows both rates, their ratio, the break-even verification
time, the work account, and the (α, γ) map of where speculation pays. No math here: it calls
:func:`specdec_core.timing.scenario_rates` / :func:`~specdec_core.timing.work_account` and
updates the artists of one figure from :mod:`specdec_core.plots.timing`.
"""
from __future__ import annotations

import html

import ipywidgets as w
import matplotlib.pyplot as plt

from ..formatting import labelled
from .counts import BlitPNG
from ..plots.style import new_axes
from ..plots.timing import RateBars, SpeedupMap
from ..questions import TIMING_QUESTION  # noqa: F401  (re-export: the question's home is questions.py)
from ..timing import scenario_rates, work_account

BUDGET_KEYS = ("draft_per_token_ms", "verify_base_ms", "verify_per_position_ms", "overhead_ms",
               "baseline_ms")


def timing_text(alpha, gamma, **budget) -> str:
    """The widget's result text (HTML-safe plain text lines), fixed rounding, never NaN.

    Raises ``ValueError`` (from the library) for an impossible budget, e.g. a round that
    takes no time; the widget turns that into a message.
    """
    s = scenario_rates(alpha, gamma, **budget)
    acc = work_account(alpha, gamma)
    be = float(s["break_even_verify_ms"])
    if be >= 0:
        be_text = (f"break-even verification time {be:.2f} ms (now {float(s['verify_ms']):.2f} ms: "
                   + ("pays)" if s["pays"] else "loses)"))
    else:
        be_text = "no verification time can make this pay: draft + overhead already cost more than E[K] baseline tokens"
    verdict = "speculation pays" if s["pays"] else "speculation loses"
    lines = [
        labelled("assumed", f"round: draft {float(s['draft_ms']):.2f} + verify {float(s['verify_ms']):.2f} "
                            f"+ overhead {float(s['overhead_ms']):.2f} = {float(s['round_ms']):.2f} ms, "
                            f"E[K] = {float(s['expected_tokens']):.4f} tokens"),
        labelled("derived-from-assumed", f"speculative {float(s['rate']):.2f} tokens/s vs baseline "
                                         f"{float(s['baseline_rate']):.2f} tokens/s: ratio {float(s['ratio']):.3f}× ({verdict})"),
        labelled("derived-from-assumed", be_text),
        labelled("derived", f"work per output token: {float(acc['proposals_per_token']):.3f} draft proposals, "
                            f"{float(acc['target_positions_per_token']):.3f} target positions; thrown away: "
                            f"{100 * float(acc['proposals_thrown_away']):.1f}% of proposals, "
                            f"{100 * float(acc['target_positions_thrown_away']):.1f}% of scored positions"),
    ]
    return "\n".join(lines)


def _slider(value, lo, hi, step, desc, fmt=".1f"):
    return w.FloatSlider(value=float(value), min=lo, max=hi, step=step, description=desc,
                         readout_format=fmt, style={"description_width": "initial"},
                         layout=w.Layout(width="330px"))


def timing_widget(alpha=0.6, gamma=2, *, draft_per_token_ms=1.0, verify_base_ms=6.0,
                  verify_per_position_ms=0.0, overhead_ms=1.0, baseline_ms=6.0, max_gamma: int = 16):
    """The defaults reproduce the worked example (2 ms draft for γ = 2, 6 ms verification,
    1 ms overhead, 6 ms baseline). Attributes for tests: ``.controls`` (dict of sliders),
    ``.result``, ``.map_note``, ``.update()``, ``.fig``."""
    c = {
        "alpha": _slider(alpha, 0.0, 1.0, 0.01, "α", ".2f"),
        "gamma": w.IntSlider(value=int(gamma), min=0, max=max_gamma, description="γ",
                             layout=w.Layout(width="330px")),
        "draft_per_token_ms": _slider(draft_per_token_ms, 0.0, 10.0, 0.1, "draft ms / proposal"),
        "verify_base_ms": _slider(verify_base_ms, 0.0, 30.0, 0.5, "verify ms (base)"),
        "verify_per_position_ms": _slider(verify_per_position_ms, 0.0, 5.0, 0.1, "verify ms / position"),
        "overhead_ms": _slider(overhead_ms, 0.0, 10.0, 0.5, "overhead ms"),
        "baseline_ms": _slider(baseline_ms, 0.5, 30.0, 0.5, "baseline ms / token"),
    }
    for name, ctrl in c.items():
        ctrl.add_class(f"specdec-timing-{name.replace('_', '-')}")
    result = w.HTML()
    result.add_class("specdec-timing-result")
    map_note = w.HTML()
    image = w.Image(format="png", layout=w.Layout(max_width="100%"))
    image.add_class("specdec-timing-figure")
    fig, (ax1, ax2) = new_axes(2, width=10.0, height=3.6, width_ratios=[1, 2.2])
    plt.close(fig)
    bars, smap = RateBars(ax1), SpeedupMap(ax2, max_gamma)
    frames = BlitPNG(fig, [smap.image, smap.boundary, smap.marker, *bars.bars, *bars.texts])

    def update(change=None):
        a, g = round(float(c["alpha"].value), 4), int(c["gamma"].value)
        budget = {k: round(float(c[k].value), 4) for k in BUDGET_KEYS}
        try:
            text = timing_text(a, g, **budget)
            s = scenario_rates(a, g, **budget)
        except ValueError as exc:
            result.value = ("<span style='color:#D55E00'>This budget is impossible: "
                            f"{html.escape(str(exc))}. Give some step a positive time.</span>")
            return
        result.value = "<br>".join(html.escape(line) for line in text.split("\n"))
        bars.update(s["rate"], s["baseline_rate"])
        try:
            smap.update(a, g, **budget)
            map_note.value = ""
        except ValueError as exc:
            map_note.value = f"<i>Map not drawn: {html.escape(str(exc))}.</i>"
        image.value = frames.png()

    for s_ in c.values():
        s_.observe(update, names="value")
    update()
    grid = w.GridBox(list(c.values()), layout=w.Layout(grid_template_columns="repeat(2, 340px)"))
    box = w.VBox([grid, result, map_note, image])
    box.add_class("specdec-timing-widget")
    box.controls, box.result, box.map_note, box.image, box.update, box.fig = c, result, map_note, image, update, fig
    return box

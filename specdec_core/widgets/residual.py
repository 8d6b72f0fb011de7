"""Notebook 02's "wrong corrections" lab: pick the rule a rejected proposal is replaced from,
see that rule's output law against p and its total variation distance.

Like the explorer of notebook 01, the sliders hold non-negative weights that the view
normalizes; all-zero weights on one side show a message instead of numbers.
"""
from __future__ import annotations

import ipywidgets as w
import numpy as np
from matplotlib.figure import Figure

from ..plots.acceptance import SYMBOLS, draw_message
from ..plots.residual import RULE_LABELS, draw_rule_output
from ..plots.style import tag_kind
from ..verify import CORRECTION_RULES, acceptance_rate, output_distribution_with, total_variation
from .acceptance import (DEFAULT_P_WEIGHTS, DEFAULT_Q_WEIGHTS, _pair, make_weight_slider,
                         render_png)

DEFAULT_RULE = "draft"
#: Below this total variation distance the output counts as equal to p (float round-off).
TV_TOLERANCE = 5e-5


def lab_texts(p_weights, q_weights, rule) -> dict:
    """The strings the lab shows (pure; never NaN).

    Keys: ``"output"`` (the rule's output law and its sum), ``"tv"`` (TV distance to p),
    ``"verdict"`` (whether that is p, and why). With all-zero weights every key carries the same
    message.
    """
    if rule not in CORRECTION_RULES:
        raise ValueError(f"rule must be one of {CORRECTION_RULES}, got {rule!r}")
    try:
        p, q = _pair(p_weights, q_weights)
    except ValueError as exc:
        msg = f"No distribution: {exc}."
        return {"output": msg, "tv": msg, "verdict": msg}
    out = np.asarray(output_distribution_with(p, q, rule), dtype=np.float64)
    tv = float(total_variation(out, p))
    alpha = float(acceptance_rate(p, q))
    vec = "[" + ", ".join(f"{v:.4f}" for v in out) + "]"
    if alpha >= 1 - 1e-12:
        verdict = ("p = q: no proposal is ever rejected, so the correction is never used and "
                   "every rule gives p.")
    elif tv < TV_TOLERANCE:
        verdict = "The output law is exactly p: this rule preserves the target."
    elif abs(out.sum() - 1) > 1e-9:
        verdict = (f"Not even a distribution: the output sums to {out.sum():.4f}. The rejected "
                   f"mass 1 − α = {1 - alpha:.4f} is spread by a vector that itself sums to "
                   f"1 − α, so only (1 − α)² = {(1 - alpha) ** 2:.4f} comes back.")
    else:
        verdict = "Not p: this rule biases the output, so it does not sample the target."
    return {"output": f"output with rule “{RULE_LABELS[rule]}” = {vec} (sums to {out.sum():.4f})",
            "tv": f"TV(output, p) = {tv:.4f}",
            "verdict": verdict}


class LabView:
    """One figure updated in place and rendered to PNG bytes per update (see ``AcceptanceView``)."""

    def __init__(self, width=5.0, height=3.1, dpi=90):
        self.fig = Figure(figsize=(width, height), dpi=dpi)
        self.pixel_width = round(width * dpi)
        self.fig.subplots_adjust(left=0.12, right=0.98, top=0.84, bottom=0.1)
        self.ax = self.fig.add_subplot()
        self._update = None

    def png(self, p_weights, q_weights, rule) -> bytes:
        try:
            p, q = _pair(p_weights, q_weights)
        except ValueError as exc:
            self.ax.clear()
            self._update = None
            draw_message(self.ax, f"No distribution:\n{exc}.")
        else:
            if self._update is None or not self._update(p, q, rule):
                self.ax.clear()
                self._update = draw_rule_output(self.ax, p, q, rule, SYMBOLS[:len(p)])
                tag_kind(self.ax, "derived", where="upper left")
        return render_png(self.fig)


def corrections_lab(p_weights=DEFAULT_P_WEIGHTS, q_weights=DEFAULT_Q_WEIGHTS,
                    rule=DEFAULT_RULE) -> w.VBox:
    """The lab widget. Attributes for tests: ``rule`` (ToggleButtons), ``p_sliders``,
    ``q_sliders``, ``output_html``, ``tv_html``, ``verdict_html``, ``image``, ``update()``."""
    if rule not in CORRECTION_RULES:
        raise ValueError(f"rule must be one of {CORRECTION_RULES}, got {rule!r}")
    if len(p_weights) != len(q_weights) or not 1 <= len(p_weights) <= len(SYMBOLS):
        raise ValueError("p_weights and q_weights must have the same length, 1 to 6")
    view = LabView()
    rule_w = w.ToggleButtons(options=[(RULE_LABELS[r], r) for r in CORRECTION_RULES], value=rule,
                             description="correction", style={"button_width": "auto"})
    rule_w.add_class("specdec-lab-rule")
    p_sliders = [make_weight_slider(v, s, "specdec-lab-p-slider") for v, s in zip(p_weights, SYMBOLS)]
    q_sliders = [make_weight_slider(v, s, "specdec-lab-q-slider") for v, s in zip(q_weights, SYMBOLS)]
    output_html, tv_html, verdict_html = w.HTML(), w.HTML(), w.HTML()
    output_html.add_class("specdec-lab-output")
    tv_html.add_class("specdec-lab-tv")
    verdict_html.add_class("specdec-lab-verdict")
    image = w.Image(format="png", layout=w.Layout(width=f"{view.pixel_width}px"))  # 1:1, crisp
    image.add_class("specdec-lab-figure")

    def weights():
        return [s.value for s in p_sliders], [s.value for s in q_sliders]

    def update(_=None):
        pw, qw = weights()
        texts = lab_texts(pw, qw, rule_w.value)
        output_html.value, tv_html.value = texts["output"], texts["tv"]
        verdict_html.value = texts["verdict"]
        image.value = view.png(pw, qw, rule_w.value)

    for s in [rule_w, *p_sliders, *q_sliders]:
        s.observe(update, names="value")
    cols = w.HBox([w.VBox([w.HTML("<b>target p</b> (weights)"), *p_sliders]),
                   w.VBox([w.HTML("<b>draft q</b> (weights)"), *q_sliders])])
    box = w.VBox([rule_w, cols, output_html, tv_html, verdict_html, image])
    box.add_class("specdec-corrections-lab")
    box.rule, box.p_sliders, box.q_sliders, box.image = rule_w, p_sliders, q_sliders, image
    box.output_html, box.tv_html, box.verdict_html = output_html, tv_html, verdict_html
    box.update, box.weights, box.view = update, weights, view
    update()
    return box

"""Notebook 02's "wrong corrections" lab, driven from Python, plus its figures."""
import matplotlib.pyplot as plt
import pytest

from specdec_core import WORKED
from specdec_core.plots.overview import overview_figure
from specdec_core.plots.residual import decomposition_figure, rule_figure, rules_figure
from specdec_core.verify import CORRECTION_RULES
from specdec_core.widgets.residual import corrections_lab, lab_texts

PNG = b"\x89PNG"
W_P, W_Q = (0.6, 0.3, 0.1), (0.2, 0.3, 0.5)

EXPECTED_TV = {"residual": "0.0000", "draft": "0.3200", "target": "0.1600", "uniform": "0.2667",
               "unnormalized": "0.1200"}


def shown(box):
    return {"output": box.output_html.value, "tv": box.tv_html.value, "verdict": box.verdict_html.value}


def assert_clean(box):
    for text in shown(box).values():
        assert "nan" not in text.lower() and "inf" not in text.lower()
    assert bytes(box.image.value).startswith(PNG)


@pytest.mark.parametrize("rule", CORRECTION_RULES)
def test_every_rule_at_the_worked_example(rule):
    box = corrections_lab()
    box.rule.value = rule
    assert shown(box) == lab_texts(W_P, W_Q, rule)
    assert box.tv_html.value == f"TV(output, p) = {EXPECTED_TV[rule]}"
    assert ("exactly p" in box.verdict_html.value) == (rule == "residual")
    assert_clean(box)


def test_specific_outputs():
    assert "[0.6000, 0.3000, 0.1000] (sums to 1.0000)" in lab_texts(W_P, W_Q, "residual")["output"]
    assert "[0.2800, 0.4200, 0.3000]" in lab_texts(W_P, W_Q, "draft")["output"]
    un = lab_texts(W_P, W_Q, "unnormalized")
    assert "(sums to 0.7600)" in un["output"] and "Not even a distribution" in un["verdict"]


@pytest.mark.parametrize("rule", CORRECTION_RULES)
def test_p_equals_q_every_rule_gives_p(rule):
    box = corrections_lab()
    for s, v in zip(box.q_sliders, W_P):
        s.value = v
    box.rule.value = rule
    assert box.tv_html.value == "TV(output, p) = 0.0000"
    assert "never used" in box.verdict_html.value
    assert_clean(box)


@pytest.mark.parametrize("pw, qw", [
    ((0.6, 0.3, 0.1), (0.0, 0.3, 0.5)),
    ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
    ((0.0, 0.0, 1.0), (1.0, 1.0, 1.0)),
    ((0.0, 0.0, 0.0), (0.2, 0.3, 0.5)),
    ((0.6, 0.3, 0.1), (0.0, 0.0, 0.0)),
])
def test_extremes_never_nan_at_every_rule(pw, qw):
    box = corrections_lab()
    for s, v in zip(box.p_sliders + box.q_sliders, pw + qw):
        s.value = v
    for rule in CORRECTION_RULES:
        box.rule.value = rule
        assert shown(box) == lab_texts(pw, qw, rule)
        assert_clean(box)


def test_all_zero_shows_a_message():
    t = lab_texts((0, 0, 0), W_Q, "residual")
    assert t["tv"].startswith("No distribution") and "p" in t["tv"]


def test_bad_rule():
    with pytest.raises(ValueError, match="rule must be one of"):
        lab_texts(W_P, W_Q, "magic")
    with pytest.raises(ValueError, match="rule must be one of"):
        corrections_lab(rule="magic")


def test_css_classes():
    box = corrections_lab()
    assert "specdec-lab-tv" in box.tv_html._dom_classes
    assert "specdec-lab-output" in box.output_html._dom_classes
    assert "specdec-lab-rule" in box.rule._dom_classes


def test_static_figures_build():
    cases = [("worked", WORKED.p, WORKED.q), ("p = q", WORKED.p, WORKED.p),
             ("q(C) = 0", [0.2, 0.3, 0.5], [0.5, 0.5, 0.0])]
    for fig in (rules_figure(WORKED.p, WORKED.q), decomposition_figure(cases), overview_figure(),
                rule_figure(WORKED.p, WORKED.q, "uniform")):
        assert fig.axes
        plt.close(fig)
    with pytest.raises(ValueError, match="cases is empty"):
        decomposition_figure([])


def test_lab_figure_updater_asks_for_a_redraw_when_the_verdict_flips():
    from matplotlib.figure import Figure
    from specdec_core.plots.residual import draw_rule_output

    ax = Figure().add_subplot()
    update = draw_rule_output(ax, W_P, W_Q, "draft")
    assert update(W_P, (0.25, 0.25, 0.5), "draft") is True     # still wrong: moved in place
    assert "TV(output, p)" in ax.get_title()
    assert update(W_P, W_Q, "residual") is False                # now right: needs a redraw
    assert update((0.5, 0.5), (0.5, 0.5), "draft") is False      # other symbol count

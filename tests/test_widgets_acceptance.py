"""Notebook 01's explorer, driven from Python: slider values in, displayed text out."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from specdec_core import acceptance_probabilities, acceptance_rate

from specdec_core.widgets.acceptance import (DEFAULT_P_WEIGHTS, DEFAULT_Q_WEIGHTS, MAX_SYMBOLS,
                                             NEW_SYMBOL_WEIGHT, SLIDER_STEP, acceptance_explorer,
                                             acceptance_texts, normalize_weights, normalized_text)

PNG = b"\x89PNG"


def shown(box):
    return {"alpha": box.alpha_html.value, "acceptance": box.acceptance_html.value}


def set_weights(box, pw, qw):
    for s, v in zip(box.p_sliders, pw):
        s.value = v
    for s, v in zip(box.q_sliders, qw):
        s.value = v


def assert_clean(box):
    for text in (box.alpha_html.value, box.acceptance_html.value, box.normalized_html.value):
        assert "nan" not in text.lower() and "inf" not in text.lower()
    assert bytes(box.image.value).startswith(PNG)


def test_contract_constants():
    assert DEFAULT_P_WEIGHTS == (0.6, 0.3, 0.1) and DEFAULT_Q_WEIGHTS == (0.2, 0.3, 0.5)
    assert 0 < SLIDER_STEP <= 0.1


def test_defaults_show_the_worked_example():
    box = acceptance_explorer()
    assert shown(box) == acceptance_texts(DEFAULT_P_WEIGHTS, DEFAULT_Q_WEIGHTS)
    assert box.alpha_html.value == "α = Σ min(p, q) = 0.6000"
    assert box.acceptance_html.value == "a(x) = min(1, p(x)/q(x)): A 1.0000 · B 1.0000 · C 0.2000"
    assert [s.value for s in box.p_sliders] == list(DEFAULT_P_WEIGHTS)
    assert [s.value for s in box.q_sliders] == list(DEFAULT_Q_WEIGHTS)
    assert_clean(box)


def test_css_classes_for_the_browser_tests():
    box = acceptance_explorer()
    assert box.alpha_html._dom_classes == ("specdec-alpha",)
    assert box.acceptance_html._dom_classes == ("specdec-acceptance",)
    assert all("specdec-p-slider" in s._dom_classes for s in box.p_sliders)
    assert all("specdec-q-slider" in s._dom_classes for s in box.q_sliders)
    assert all(s.step == SLIDER_STEP for s in box.p_sliders + box.q_sliders)


@pytest.mark.parametrize("i", [0, 1, 2])
def test_one_step_on_any_q_slider_changes_both_texts(i):
    box = acceptance_explorer()
    before = shown(box)
    box.q_sliders[i].value = round(box.q_sliders[i].value + SLIDER_STEP, 10)
    after = shown(box)
    assert after["alpha"] != before["alpha"] and after["acceptance"] != before["acceptance"]
    assert after == acceptance_texts(*box.weights())


def test_texts_are_plain_text():
    for text in acceptance_texts(DEFAULT_P_WEIGHTS, DEFAULT_Q_WEIGHTS).values():
        assert "<" not in text and "&" not in text and "  " not in text


EXTREMES = [
    ((0.6, 0.3, 0.1), (0.0, 0.3, 0.5), "A never proposed"),     # q -> 0 on a symbol
    ((0.2, 0.3, 0.5), (0.2, 0.3, 0.5), "α = Σ min(p, q) = 1.0000"),  # p = q
    ((0.4, 0.6, 0.0), (0.2, 0.3, 0.0), "α = Σ min(p, q) = 1.0000"),  # p = q after normalizing
    ((1.0, 0.0, 0.0), (0.2, 0.3, 0.5), "α = Σ min(p, q) = 0.2000"),  # one-hot p
    ((0.6, 0.3, 0.1), (0.0, 0.0, 1.0), "A never proposed · B never proposed · C 0.1000"),
    ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0), "α = Σ min(p, q) = 0.0000"),  # disjoint supports
    ((0.0, 0.0, 0.0), (0.2, 0.3, 0.5), "all weights of p are 0"),
    ((0.6, 0.3, 0.1), (0.0, 0.0, 0.0), "all weights of q are 0"),
    ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), "all weights of p are 0"),
    ((1.0, 1.0, 1.0), (0.05, 0.0, 0.0), "α = Σ min(p, q) = 0.3333"),
]


@pytest.mark.parametrize("pw, qw, expected", EXTREMES)
def test_extreme_positions(pw, qw, expected):
    box = acceptance_explorer()
    set_weights(box, pw, qw)
    assert shown(box) == acceptance_texts(pw, qw)
    assert expected in box.alpha_html.value + " " + box.acceptance_html.value
    assert_clean(box)


def test_sweep_every_slider_to_both_ends_never_nan():
    box = acceptance_explorer()
    for sliders, v in itertools.product((box.p_sliders, box.q_sliders), (0.0, 1.0)):
        for s in sliders:
            s.value = v
            assert_clean(box)
            assert shown(box) == acceptance_texts(*box.weights())


def test_symbol_count_adds_and_removes_sliders():
    box = acceptance_explorer()
    box.count.value = MAX_SYMBOLS
    assert len(box.p_sliders) == len(box.q_sliders) == MAX_SYMBOLS
    assert box.p_sliders[-1].value == NEW_SYMBOL_WEIGHT and box.q_sliders[3].description == "D"
    assert "F " in box.acceptance_html.value
    assert "specdec-q-slider" in box.q_sliders[-1]._dom_classes
    box.q_sliders[5].value = 0.0          # new sliders are live
    assert "F never proposed" in box.acceptance_html.value
    box.count.value = 3
    assert len(box.p_sliders) == 3 and shown(box) == acceptance_texts(DEFAULT_P_WEIGHTS, DEFAULT_Q_WEIGHTS)
    assert_clean(box)


def test_normalization_makes_any_weights_valid():
    p = normalize_weights([2, 2, 4], "p")
    assert np.allclose(p, [0.25, 0.25, 0.5])
    assert acceptance_texts([2, 1, 1], [1, 1, 2]) == acceptance_texts([0.5, 0.25, 0.25], [0.25, 0.25, 0.5])
    assert "p = [0.600, 0.300, 0.100]" in normalized_text(DEFAULT_P_WEIGHTS, DEFAULT_Q_WEIGHTS)


@pytest.mark.parametrize("weights, match", [
    ([0, 0, 0], "all weights of p are 0"),
    ([0.5, -0.1, 0.6], "non-negative"),
    ([np.nan, 1, 1], "finite"),
    ([], "non-empty"),
    ("abc", "vector of numbers"),
])
def test_normalize_weights_bad_inputs(weights, match):
    with pytest.raises(ValueError, match=match):
        normalize_weights(weights, "p")


def test_builder_rejects_bad_defaults():
    with pytest.raises(ValueError, match="entries"):
        acceptance_explorer((0.5, 0.5, 0.0), (1.0, 0.0))
    with pytest.raises(ValueError, match="3 to 6 symbols"):
        acceptance_explorer((0.5, 0.5), (0.5, 0.5))


@settings(max_examples=150, deadline=None)
@given(st.integers(3, 6).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.35, 0.5, 1.0]), min_size=n, max_size=n),
    st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.35, 0.5, 1.0]), min_size=n, max_size=n))))
def test_texts_property_any_slider_position(pq):
    """At any slider position: no NaN, and the numbers are the library's, rounded to 4 places."""
    pw, qw = pq
    t = acceptance_texts(pw, qw)
    assert set(t) == {"alpha", "acceptance"}
    assert all("nan" not in v.lower() for v in t.values())
    if sum(pw) == 0 or sum(qw) == 0:
        assert t["alpha"] == t["acceptance"] and t["alpha"].startswith("No distribution")
        return
    p, q = normalize_weights(pw, "p"), normalize_weights(qw, "q")
    assert t["alpha"] == f"α = Σ min(p, q) = {float(acceptance_rate(p, q)):.4f}"
    parts = t["acceptance"].split(": ", 1)[1].split(" · ")
    assert len(parts) == len(pw)
    for part, ai, qi in zip(parts, acceptance_probabilities(p, q), q):
        assert part.endswith("never proposed") if qi == 0 else part.endswith(f"{ai:.4f}")


def test_figure_updater_keeps_its_symbol_count():
    from matplotlib.figure import Figure
    from specdec_core.plots.acceptance import draw_acceptance

    ax = Figure().add_subplot()
    update = draw_acceptance(ax, [0.6, 0.3, 0.1], [0.2, 0.3, 0.5])
    update([0.2, 0.3, 0.5], [0.2, 0.3, 0.5])
    assert ax.get_title() == "α = Σ min(p, q) = 1.0000"
    assert [r.get_height() for r in ax.containers[2]] == pytest.approx([0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="3 symbols"):
        update([0.25] * 4, [0.25] * 4)


def test_static_figures_build():
    import matplotlib.pyplot as plt
    from specdec_core import WORKED
    from specdec_core.plots.acceptance import acceptance_figure, comparison_figure, thinning_figure

    for fig in (acceptance_figure(WORKED.p, WORKED.q), thinning_figure(WORKED.p, WORKED.q, "ABC"),
                comparison_figure([0.2, 0.3, 0.1], [0.21, 0.29, 0.1], title="t", exact_label="e",
                                  empirical_label="s")):
        assert fig.axes
        plt.close(fig)
    with pytest.raises(ValueError, match="must name the 3 symbols"):
        acceptance_figure(WORKED.p, WORKED.q, ("A", "B"))

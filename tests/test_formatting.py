"""Number formatting and the one label rule (specdec_core.formatting)."""

import math
from fractions import Fraction as F

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specdec_core.formatting import (
    KINDS,
    P_VALUE_FLOOR,
    fmt,
    fmt_p_value,
    kind_text,
    labelled,
    p_value_phrase,
)
from specdec_core.lawcheck import chi_square_gof


@pytest.mark.parametrize("value", [0.0, 5e-324, 1e-310, 9.99e-301])
def test_p_value_below_floor_is_never_zero(value):
    assert fmt_p_value(value) == "< 1e-300"


@pytest.mark.parametrize(
    "value, text",
    [(0.844, "0.844"), (0.0207, "0.0207"), (4.57e-115, "4.57e-115"), (1.0, "1"), (P_VALUE_FLOOR, "1e-300")],
)
def test_p_value_shown_with_three_significant_digits(value, text):
    assert fmt_p_value(value) == text


@given(st.floats(min_value=0.0, max_value=1.0))
def test_p_value_text_never_reads_as_zero(v):
    text = fmt_p_value(v)
    assert text.startswith("< ") or float(text) > 0 or v == 0
    assert text != "0" and not text.startswith("0e")


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan, math.inf, "0.5", None, True])
def test_p_value_refuses_non_probabilities(bad):
    with pytest.raises(ValueError, match="p_value"):
        fmt_p_value(bad)


def test_underflowing_gof_prints_floor_not_zero():
    # a sampler that always writes outcome 0 against a uniform law: the p-value underflows to 0
    res = chi_square_gof([0] * 20_000, {0: 0.5, 1: 0.5})
    assert res.p_value == 0.0
    assert "p-value < 1e-300" in str(res)
    assert "reject if p-value < 0.001" in str(res)
    assert "p-value = 0 " not in str(res)


def test_label_rule_has_one_set_of_kinds():
    assert labelled("derived", "α = 3/5") == "[derived] α = 3/5"
    assert labelled("assumed", "T = 6 ms") == "[assumed] T = 6 ms"
    assert labelled("simulated", "share 0.6") == "[simulated] share 0.6"
    assert labelled("measured", "x") == "[measured] x"
    assert labelled("reported", "x") == "[reported] x"
    assert (
        labelled("derived-from-assumed", "R = 217.78 tokens/s")
        == "[derived from assumed inputs] R = 217.78 tokens/s"
    )
    assert labelled("derived-from-measured", "x") == "[derived from measured inputs] x"
    assert set(KINDS) == {
        "derived",
        "assumed",
        "simulated",
        "measured",
        "reported",
        "derived-from-assumed",
        "derived-from-measured",
        "derived-from-simulated",
    }
    assert kind_text("derived-from-assumed") == "derived from assumed inputs"
    assert labelled("derived-from-simulated", "x") == "[derived from simulated inputs] x"


def test_existing_labels_print_as_before():
    """Notebooks written before the kinds were extended print the same words."""
    for kind in ("derived", "assumed", "measured"):
        assert kind_text(kind) == kind
    assert kind_text("derived-from-assumed") == "derived from assumed inputs"


def test_every_kind_has_one_figure_colour():
    from specdec_core.plots.style import KIND_COLORS

    assert set(KIND_COLORS) == set(KINDS)


@pytest.mark.parametrize("bad", ["exact", "Derived", "", None, "derived from assumed inputs", "timed"])
def test_unknown_kind_is_refused(bad):
    with pytest.raises(ValueError, match="kind"):
        labelled(bad, "x")


def test_fmt_exact_and_float():
    assert fmt(F(3, 5)) == "3/5"
    assert fmt([F(1), F(1, 5)]) == "[1, 1/5]"
    assert fmt(0.123456) == "0.1235"


def test_p_value_phrase():
    assert p_value_phrase(0.649) == "p-value = 0.649"
    assert p_value_phrase(0.0) == "p-value < 1e-300"

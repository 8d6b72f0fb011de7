"""Paired ratios, repeats needed, selection bias (specdec_core.repeats); the pass-cost
prediction (specdec_core.llm.passcost) and the rounding comparison (specdec_core.llm.rounding)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.llm import passcost as PC
from specdec_core.llm import rounding as R
from specdec_core.repeats import max_of_noisy_ratios, paired_ratio, repeats_needed


def test_paired_ratio_constant_ratio_has_zero_width():
    r = paired_ratio([2, 4, 6], [1, 2, 3])
    assert r.ratio == pytest.approx(2) and r.low == pytest.approx(2) and r.high == pytest.approx(2)


def test_paired_ratio_covers_the_truth_at_its_level():
    """Coverage of interval (1) over 2000 simulated experiments with true ratio 1.1 and
    lognormal noise: 95% ± 1.5% (about 3 standard errors of a binomial proportion)."""
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(2000):
        plain = np.exp(rng.normal(0, 0.2, 5))
        spec = 1.1 * plain * np.exp(rng.normal(0, 0.05, 5))
        r = paired_ratio(spec, plain)
        hits += r.low <= 1.1 <= r.high
    assert abs(hits / 2000 - 0.95) < 0.015


@given(st.lists(st.floats(0.1, 10), min_size=2, max_size=8), st.floats(0.5, 2))
@settings(max_examples=50, deadline=None)
def test_paired_ratio_scales(xs, c):
    r = paired_ratio([c * x for x in xs], xs)
    assert r.ratio == pytest.approx(c) and r.low <= r.ratio <= r.high


@pytest.mark.parametrize(
    "args,name",
    [
        (([1, 2], [1]), "paired"),
        (([1, -2], [1, 1]), "numer"),
        (([1, "2"], [1, 1]), "numer"),
        (([1, 2], [1, float("nan")]), "denom"),
        (([1], [1], 1.5), "level"),
        (("12", [1, 2]), "numer"),
    ],
)
def test_paired_ratio_bad_input(args, name):
    with pytest.raises(ValueError, match=name):
        paired_ratio(*args)


def test_repeats_needed_grows_with_spread_and_precision():
    assert repeats_needed(0.0, 0.05) == 2
    assert repeats_needed(0.1, 0.05) < repeats_needed(0.2, 0.05)
    assert repeats_needed(0.1, 0.10) < repeats_needed(0.1, 0.05)
    with pytest.raises(ValueError, match="precision"):
        repeats_needed(0.1, 0)


def test_max_of_noisy_ratios_is_biased_upwards_only_with_noise():
    rng = np.random.default_rng(1)
    assert max_of_noisy_ratios(4, 3, 0.0, sims=10, rng=rng) == 1.0
    assert max_of_noisy_ratios(4, 3, 0.1, sims=4000, rng=rng) > 1.03
    assert max_of_noisy_ratios(1, 3, 0.1, sims=4000, rng=rng) == pytest.approx(math.exp(0.1**2 / 6), abs=0.01)
    with pytest.raises(ValueError, match="rng"):
        max_of_noisy_ratios(2, 2, 0.1, sims=2, rng=0)


def test_pass_prediction_roofline_and_serial():
    pred = PC.predict_pass_ms([1, 8], weight_bytes=4e8, params=1e8, bandwidth=2e10, rate={1: 5e10, 8: 1e11})
    assert pred[1].memory_ms == pytest.approx(20)
    assert pred[8].compute_ms == pytest.approx(16)
    assert pred[8].roofline_ms == pytest.approx(20) and pred[8].serial_ms == pytest.approx(36)
    assert PC.relative(pred, "serial_ms")[8] == pytest.approx(36 / 24)
    with pytest.raises(ValueError, match="rate"):
        PC.predict_pass_ms([1, 2], weight_bytes=1, params=1, bandwidth=1, rate={1: 1})
    with pytest.raises(ValueError, match="Ts"):
        PC.predict_pass_ms([0], weight_bytes=1, params=1, bandwidth=1, rate=1)
    with pytest.raises(ValueError, match="bandwidth"):
        PC.predict_pass_ms([1], weight_bytes=1, params=1, bandwidth=float("inf"), rate=1)


def test_prediction_takes_no_measured_curve():
    """The prediction's inputs are a bandwidth and rates: it has no parameter through which the
    run it predicts (a timed curve) could enter."""
    import inspect

    params = set(inspect.signature(PC.predict_pass_ms).parameters)
    assert params == {"Ts", "weight_bytes", "params", "bandwidth", "rate"}


def test_time_products_shape():
    rng = np.random.default_rng(0)
    mats = [rng.standard_normal((32, 16), dtype=np.float32), rng.standard_normal((48, 16), dtype=np.float32)]
    res = PC.time_products(mats, [1, 2], old=PC.stored_layout(mats), reps=2)
    assert set(res) == {"product", "x@w"} and set(res["product"].points) == {1, 2}
    assert res["x@w"].points[2].n == 2 and res["product"].median()[1] > 0 and res["x@w"].reps == 2


def test_rounding_helpers():
    a = np.array([[1.0, 0.99999, 0.0], [0.0, 2.0, 1.0]])
    b = np.array([[0.99999, 1.0, 0.0], [0.0, 2.0, 1.0]])
    c = R.compare_paths(a, b)
    assert c.argmax_flips == 1 and c.gaps_at_flips == (pytest.approx(1e-5),)
    assert R.first_divergence([1, 2, 3], [1, 2, 4]) == 2 and R.first_divergence([1, 2], [1, 2, 3]) is None
    with pytest.raises(ValueError, match="a and b"):
        R.compare_paths(a, b[:1])

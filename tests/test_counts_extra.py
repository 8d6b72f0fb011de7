"""counts.py additions for notebook 04 (curve, accepted, iid acceptance rate, mixture) and the
K law's properties (pmf sums to 1, E[K] = Σ k·P(K=k), exact for Fraction α)."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.counts import (
    expected_accepted,
    expected_count_curve,
    expected_output_count,
    iid_accepted_share,
    mixture_expected_count,
    output_count_distribution,
)
from specdec_core.symbolic import derive_expected_count

fractions01 = st.fractions(min_value=0, max_value=1, max_denominator=60)
gammas = st.integers(min_value=0, max_value=15)


def test_worked_count_law():
    pmf = list(output_count_distribution(F(3, 5), 2))
    assert pmf == [F(2, 5), F(6, 25), F(9, 25)]
    assert expected_output_count(F(3, 5), 2) == F(49, 25)


@settings(max_examples=80, deadline=None)
@given(fractions01, gammas)
def test_pmf_sums_to_one_and_mean_matches_exactly(alpha, gamma):
    pmf = list(output_count_distribution(alpha, gamma))
    assert all(isinstance(v, F) for v in pmf)
    assert sum(pmf) == 1
    assert sum(k * p for k, p in enumerate(pmf, start=1)) == expected_output_count(alpha, gamma)


@settings(max_examples=50, deadline=None)
@given(st.floats(0, 1), gammas)
def test_pmf_float(alpha, gamma):
    pmf = output_count_distribution(alpha, gamma)
    assert np.isfinite(pmf).all() and abs(pmf.sum() - 1) < 1e-12


def test_curve_is_diminishing():
    curve = expected_count_curve(F(3, 5), 4)
    assert curve == [1, F(8, 5), F(49, 25), F(272, 125), F(1441, 625)]
    steps = [b - a for a, b in zip(curve, curve[1:])]
    assert steps == [F(3, 5) ** g for g in range(1, 5)]  # each γ adds α^γ
    assert expected_count_curve(1, 3) == [1, 2, 3, 4]
    assert expected_count_curve(0.5, 2) == [1.0, 1.5, 1.75]


@settings(max_examples=50, deadline=None)
@given(fractions01, st.integers(0, 12))
def test_curve_matches_expected_count(alpha, m):
    assert expected_count_curve(alpha, m) == [expected_output_count(alpha, g) for g in range(m + 1)]


def test_iid_accepted_share_is_not_alpha():
    assert expected_accepted(F(3, 5), 2) == F(24, 25)
    assert iid_accepted_share(F(3, 5), 1) == F(3, 5)  # only at γ = 1 is it α
    assert iid_accepted_share(F(3, 5), 2) == F(12, 25)
    assert iid_accepted_share(F(3, 5), 5) < iid_accepted_share(F(3, 5), 2)
    assert iid_accepted_share(1, 7) == 1


@settings(max_examples=50, deadline=None)
@given(st.lists(fractions01, min_size=1, max_size=5), st.integers(0, 8), st.data())
def test_mixture_jensen(alphas, gamma, data):
    raw = data.draw(st.lists(st.integers(1, 9), min_size=len(alphas), max_size=len(alphas)))
    weights = [F(r, sum(raw)) for r in raw]
    mix = mixture_expected_count(alphas, weights, gamma)
    mean_alpha = sum(w * a for w, a in zip(weights, alphas))
    assert isinstance(mix, F)
    assert mix >= expected_output_count(mean_alpha, gamma)  # E[K] is convex in α


def test_mixture_example():
    mix = mixture_expected_count([F(19, 20), F(9, 20)], [F(1, 2), F(1, 2)], 4)
    assert mix == F(504721, 160000)
    assert expected_output_count(F(7, 10), 4) == F(27731, 10000)
    assert isinstance(mixture_expected_count([0.95, 0.45], [0.5, 0.5], 4), float)


def test_symbolic_derivation_closes():
    d = derive_expected_count()
    assert d["closed_form_holds"] and d["limit_holds"] and d["pmf_sums_to_1"]


BAD = [
    (lambda: expected_count_curve(1.2, 3), "alpha must be in [0, 1]"),
    (lambda: expected_count_curve([0.1, 0.2], 3), "alpha must be a single probability"),
    (lambda: expected_count_curve(0.5, -1), "max_gamma must be a non-negative integer"),
    (lambda: iid_accepted_share(0.5, 0), "gamma must be at least 1"),
    (lambda: iid_accepted_share(0.5, 1.0), "gamma must be a non-negative integer"),
    (lambda: expected_accepted("a", 2), "alpha must be a number in"),
    (lambda: mixture_expected_count([0.5], [0.5, 0.5], 2), "alphas and weights must have the same length"),
    (lambda: mixture_expected_count([0.5, 0.6], [0.7, 0.7], 2), "weights must sum to 1"),
    (lambda: mixture_expected_count([0.5, 1.6], [0.5, 0.5], 2), "alphas must be in"),
    (lambda: mixture_expected_count(0.5, [1], 2), "alphas must be a sequence"),
    (lambda: mixture_expected_count([0.5], [1], -2), "gamma must be a non-negative integer"),
]


@pytest.mark.parametrize("call, message", BAD, ids=[m for _, m in BAD])
def test_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        call()

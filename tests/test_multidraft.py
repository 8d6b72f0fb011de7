"""Several candidates at one position: exact laws, property tests, validation."""

import itertools
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import exact_pair

from specdec_core import acceptance_probability
from specdec_core.multidraft import (
    MULTI_DRAFT_RULES,
    multi_draft_acceptance_probability,
    multi_draft_law,
    multi_draft_outcomes,
    multi_draft_output_distribution,
    sample_candidates,
    typical_threshold,
    verify_candidates,
    verify_multi_draft,
)

P = [F(3, 5), F(3, 10), F(1, 10)]
Q = [F(1, 5), F(3, 10), F(1, 2)]


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("replacement", [True, False])
def test_worked_example_output_is_p(k, replacement):
    out = multi_draft_output_distribution(P, Q, k, replacement=replacement)
    assert all(isinstance(v, F) for v in out)
    assert list(out) == P


def test_worked_example_acceptance_values():
    # with replacement: α₁ = 3/5, the residual is [1, 0, 0], α₂ = α₃ = min(1, q(A)) = 1/5
    assert multi_draft_acceptance_probability(P, Q, 1) == F(3, 5)
    assert multi_draft_acceptance_probability(P, Q, 2) == F(3, 5) + F(2, 5) * F(1, 5) == F(17, 25)
    assert multi_draft_acceptance_probability(P, Q, 3) == F(93, 125)
    # without replacement: after rejecting C (mass 2/5) the second candidate is A w.p. 2/5 ...
    assert multi_draft_acceptance_probability(P, Q, 2, replacement=False) == F(19, 25)
    assert multi_draft_acceptance_probability(P, Q, 3, replacement=False) == 1  # every token offered
    law = multi_draft_law(P, Q, 3)
    assert law.by_index == (F(3, 5), F(2, 25), F(8, 125))
    assert sum(law.by_index) == law.acceptance


def test_lossy_rules_exact_values():
    nu = multi_draft_law(P, Q, 2, rule="no_update").output
    assert list(nu) == [F(11, 25), F(21, 50), F(7, 50)]  # too little A, too much B and C
    assert list(multi_draft_law(P, Q, 1, rule="no_update").output) == P  # k = 1: plain speculative
    # every token has p(x) > min(0.09, 0.3·e^{−H}) = 0.09: typical acceptance emits the draft
    assert typical_threshold(P) == pytest.approx(0.09)
    assert list(multi_draft_law(P, Q, 2, rule="typical").output) == Q
    # a stricter threshold: only A passes (p(A) = 0.6 > 0.5)
    strict = multi_draft_law(P, Q, 2, rule="typical", epsilon=0.5, delta=1.0).output
    pf = np.array(P, dtype=float)
    h = -(pf * np.log(pf)).sum()
    assert min(0.5, np.exp(-h)) < 0.6 and min(0.5, np.exp(-h)) > 0.3
    # A accepted w.p. 1 − (4/5)² = 9/25, else a fresh draw from p
    assert list(strict) == [F(9, 25) + F(16, 25) * x if i == 0 else F(16, 25) * x for i, x in enumerate(P)]


def _support(q):
    return sum(1 for v in q if v > 0)


@settings(max_examples=60, deadline=None)
@given(exact_pair(max_n=4), st.integers(1, 3), st.booleans())
def test_recursive_rejection_is_lossless(pair, k, replacement):
    p, q = pair
    if not replacement:
        k = min(k, _support(q))
    assert list(multi_draft_output_distribution(p, q, k, replacement=replacement)) == list(p)


@settings(max_examples=60, deadline=None)
@given(exact_pair(max_n=4), st.booleans())
def test_acceptance_monotone_in_k_and_alpha_at_one(pair, replacement):
    p, q = pair
    kmax = 4 if replacement else _support(q)
    rates = [multi_draft_acceptance_probability(p, q, k, replacement=replacement) for k in range(1, kmax + 1)]
    assert rates[0] == acceptance_probability(p, q)
    assert all(a <= b for a, b in itertools.pairwise(rates))
    assert all(0 <= r <= 1 for r in rates)


@settings(max_examples=40, deadline=None)
@given(exact_pair(max_n=4), st.integers(1, 3))
def test_without_replacement_accepts_at_least_as_often(pair, k):
    p, q = pair
    k = min(k, _support(q))
    assert multi_draft_acceptance_probability(
        p, q, k, replacement=False
    ) >= multi_draft_acceptance_probability(p, q, k, replacement=True)


@settings(max_examples=40, deadline=None)
@given(exact_pair(max_n=4), st.integers(2, 3), st.sampled_from(MULTI_DRAFT_RULES))
def test_every_rule_emits_a_distribution(pair, k, rule):
    p, q = pair
    out = multi_draft_law(p, q, k, rule=rule).output
    assert sum(out) == 1 and all(v >= 0 for v in out)


def test_float_inputs_give_floats_close_to_exact():
    out = multi_draft_output_distribution([0.6, 0.3, 0.1], [0.2, 0.3, 0.5], 3, replacement=False)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, [0.6, 0.3, 0.1], atol=1e-12)


def test_outcomes_add_up():
    acc, fb = multi_draft_outcomes(P, Q, 2, replacement=False)
    assert sum(acc.values()) + sum(m for m, _ in fb) == 1


def test_sampler_returns_index_and_token():
    rng = np.random.default_rng(0)
    # C first (kept w.p. 1/5); after its rejection the target is the residual [1, 0, 0]:
    # A as second candidate is then always kept, B never, and the fallback gives A
    first = {verify_multi_draft(P, Q, (2, 0), rng, replacement=False) for _ in range(200)}
    assert first == {(0, 2), (1, 0)}
    second = {verify_multi_draft(P, Q, (2, 1), rng, replacement=False) for _ in range(200)}
    assert second == {(0, 2), (None, 0)}
    # p = q: the first candidate is always kept
    assert verify_multi_draft(Q, Q, (1, 2), rng) == (0, 1)


def test_sample_candidates():
    rng = np.random.default_rng(1)
    for _ in range(50):
        c = sample_candidates(Q, 3, rng, replacement=False)
        assert sorted(c) == [0, 1, 2]
    assert len(sample_candidates(Q, 5, rng)) == 5


@pytest.mark.parametrize(
    "cands, replacement, match",
    [
        ((3,), True, r"candidates\[0\] = 3 is out of range"),
        ((-1,), True, "out of range"),
        ((0, 1.0), True, r"candidates\[1\] must be a token index"),
        ((True,), True, "token index"),
        ((), True, "empty"),
        ((0, 0), False, "repeats a token"),
        ("ab", True, "sequence of token indices"),
    ],
)
def test_bad_candidates(cands, replacement, match):
    with pytest.raises(ValueError, match=match):
        verify_multi_draft(P, Q, cands, np.random.default_rng(0), replacement=replacement)


def test_candidate_the_draft_cannot_propose():
    with pytest.raises(ValueError, match=r"candidates\[0\] = 2 has q\(x\) = 0"):
        verify_multi_draft(
            [F(1, 2), F(1, 4), F(1, 4)], [F(1, 2), F(1, 2), F(0)], (2,), np.random.default_rng(0)
        )


def test_too_many_without_replacement():
    q = [F(1, 2), F(1, 2), F(0)]
    with pytest.raises(ValueError, match="k = 3 candidates without replacement.*only 2 tokens"):
        multi_draft_output_distribution(P, q, 3, replacement=False)
    with pytest.raises(ValueError, match="k = 3"):
        sample_candidates(q, 3, np.random.default_rng(0), replacement=False)
    with pytest.raises(ValueError, match="k must be at least 1"):
        multi_draft_acceptance_probability(P, Q, 0)
    with pytest.raises(ValueError, match="k must be a non-negative integer"):
        multi_draft_acceptance_probability(P, Q, 2.0)


@pytest.mark.parametrize(
    "eps, delta, match",
    [
        (0, 0.3, "epsilon must be in"),
        (1.5, 0.3, "epsilon must be in"),
        (float("nan"), 0.3, "epsilon must be finite"),
        (0.1, -1, "delta must be non-negative"),
        (0.1, float("inf"), "delta must be finite"),
        ("0.1", 0.3, "epsilon must be a number"),
        (0.1, None, "delta must be a number"),
    ],
)
def test_bad_typical_parameters(eps, delta, match):
    with pytest.raises(ValueError, match=match):
        multi_draft_law(P, Q, 2, rule="typical", epsilon=eps, delta=delta)
    with pytest.raises(ValueError, match=match):
        typical_threshold(P, eps, delta)


def test_bad_rule_rng_and_shapes():
    with pytest.raises(ValueError, match="rule must be one of"):
        multi_draft_law(P, Q, 2, rule="greedy")
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        verify_multi_draft(P, Q, (0,), 0)
    with pytest.raises(ValueError, match="same shape"):
        multi_draft_law(P, [F(1, 2), F(1, 2)], 1)
    with pytest.raises(ValueError, match="single distributions"):
        multi_draft_law([P, P], [Q, Q], 1)
    with pytest.raises(ValueError, match="sum to exactly 1"):
        verify_candidates([F(1, 2), F(1, 3), F(0)], Q, (0,), np.random.default_rng(0))


def test_float_rounding_is_not_a_rejection():
    """q equal to p up to float rounding: no residual is ever needed (it would be undefined)."""
    p = np.array([0.1, 0.6, 0.2, 0.1])  # the toy target after A ...
    q = 0.9 * p + 0.1 * p  # ... mixed with itself: q − p ≈ 1e-16
    assert (q - np.minimum(p, q)).sum() > 0 and np.maximum(p - q, 0).sum() == 0
    for rule in MULTI_DRAFT_RULES:
        for rep in (True, False):
            out = multi_draft_law(p, q, 3, rule=rule, replacement=rep).output
            np.testing.assert_allclose(out, p, atol=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(100):
        assert verify_multi_draft(p, q, (2, 1), rng, replacement=False)[0] == 0
        assert verify_multi_draft(p, q, (1, 1), rng)[0] == 0


@pytest.mark.parametrize("bad", ["yes", None, 1])
def test_replacement_must_be_a_bool(bad):
    with pytest.raises(ValueError, match="replacement must be True or False"):
        multi_draft_law(P, Q, 2, replacement=bad)
    with pytest.raises(ValueError, match="replacement must be True or False"):
        verify_multi_draft(P, Q, (0,), np.random.default_rng(0), replacement=bad)

"""The single-position simulator: reproducible, consistent with verify.py, and lawful."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import float_pair

from specdec_core import WORKED, acceptance_probability, accepted_mass, output_distribution_with
from specdec_core.distributions import inverse_cdf
from specdec_core.lawcheck import chi_square_gof
from specdec_core.simulate import (
    binomial_standard_errors,
    max_abs_gap,
    simulate_position,
    z_scores,
)
from specdec_core.verify import SAMPLEABLE_RULES

P, Q = list(WORKED.p), list(WORKED.q)


def test_same_seed_same_draws():
    a = simulate_position(P, Q, 1000, np.random.default_rng(7))
    b = simulate_position(P, Q, 1000, np.random.default_rng(7))
    for field in ("proposals", "u", "accepted", "emitted"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    c = simulate_position(P, Q, 1000, np.random.default_rng(8))
    assert not np.array_equal(a.proposals, c.proposals)


def test_draws_are_consistent_with_the_rule():
    sim = simulate_position(P, Q, 5000, np.random.default_rng(1))
    a = np.array([1.0, 1.0, 0.2])
    assert np.array_equal(sim.accepted, sim.u < a[sim.proposals])
    assert np.array_equal(sim.emitted[sim.accepted], sim.proposals[sim.accepted])
    # the residual of the worked example is [1, 0, 0]: every correction is A
    assert (sim.emitted[~sim.accepted] == 0).all()
    # A and B are always accepted (a = 1); only C can be rejected
    assert (sim.proposals[~sim.accepted] == 2).all()
    assert sim.n == 5000 and sim.rule == "residual"


def test_worked_example_frequencies_match_min_p_q_and_p():
    n = 200_000
    sim = simulate_position(P, Q, n, np.random.default_rng(2026))
    acc = np.array([0.2, 0.3, 0.1])
    se = binomial_standard_errors(acc, n)
    assert (np.abs(sim.accepted_frequencies() - acc) < 4 * se).all()
    assert abs(sim.acceptance_fraction() - 0.6) < 4 * np.sqrt(0.24 / n)
    assert (np.abs(sim.proposal_frequencies() - [0.2, 0.3, 0.5]) < 4 * binomial_standard_errors(Q, n)).all()
    gof = chi_square_gof(sim.emitted.tolist(), {0: F(3, 5), 1: F(3, 10), 2: F(1, 10)})
    assert not gof.rejected, str(gof)


@pytest.mark.parametrize("rule", [r for r in SAMPLEABLE_RULES if r != "residual"])
def test_wrong_rules_are_detected(rule):
    sim = simulate_position(P, Q, 50_000, np.random.default_rng(3), rule=rule)
    law = {i: float(v) for i, v in enumerate(output_distribution_with(P, Q, rule))}
    assert not chi_square_gof(sim.emitted.tolist(), law).rejected  # it samples its own law...
    target = {0: 0.6, 1: 0.3, 2: 0.1}
    assert chi_square_gof(sim.emitted.tolist(), target).rejected  # ...which is not p


def test_edge_cases_p_equals_q_and_zero_mass():
    rng = np.random.default_rng(4)
    same = simulate_position([0.5, 0.5, 0.0], [0.5, 0.5, 0.0], 2000, rng)
    assert same.accepted.all() and (same.emitted != 2).all()
    # q(C) = 0 < p(C): C is never proposed but arrives as a correction
    s = simulate_position([0.2, 0.3, 0.5], [0.5, 0.5, 0.0], 20_000, rng)
    assert (s.proposals != 2).all() and (s.emitted == 2).any()
    # p(C) = 0 < q(C): C is always rejected, never emitted
    s = simulate_position([0.5, 0.5, 0.0], [0.3, 0.3, 0.4], 20_000, rng)
    assert not s.accepted[s.proposals == 2].any() and (s.emitted != 2).all()


def test_one_hot_draft_and_exact_inputs():
    s = simulate_position([F(1, 4), F(3, 4)], [F(0), F(1)], 1000, np.random.default_rng(5))
    assert (s.proposals == 1).all()
    assert set(np.unique(s.emitted)) <= {0, 1}


@settings(max_examples=40, deadline=None)
@given(float_pair(max_n=6), st.integers(0, 2**32 - 1))
def test_property_support_and_accounting(pq, seed):
    p, q = pq
    sim = simulate_position(p, q, 500, np.random.default_rng(seed))
    qa, pa = np.asarray(q), np.asarray(p)
    assert (qa[sim.proposals] > 0).all()  # never proposes a q = 0 symbol
    assert (pa[sim.emitted] > 0).all()  # never emits a p = 0 symbol
    assert np.isclose(sim.accepted_frequencies().sum(), sim.acceptance_fraction())
    assert np.isclose(sim.output_frequencies().sum(), 1.0)


def test_inverse_cdf_never_picks_zero_mass():
    u = np.array([0.0, 0.25, 0.5, 0.999999999, np.nextafter(1.0, 0)])
    idx = inverse_cdf([0.0, 0.5, 0.0, 0.5, 0.0], u)
    assert set(idx.tolist()) <= {1, 3}
    assert inverse_cdf([1.0], u).tolist() == [0] * len(u)


def test_helpers():
    assert max_abs_gap([0.1, 0.2], [0.1, 0.25]) == pytest.approx(0.05)
    assert binomial_standard_errors([0.0, 0.5, 1.0], 100).tolist() == [0.0, 0.05, 0.0]
    assert acceptance_probability(P, Q) == F(3, 5) and list(accepted_mass(P, Q)) == [
        F(1, 5),
        F(3, 10),
        F(1, 10),
    ]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n=0), "n must be a positive integer"),
        (dict(n=2.5), "n must be a positive integer"),
        (dict(n=True), "n must be a positive integer"),
        (dict(rng=42), "rng must be a numpy.random.Generator"),
        (dict(rng=np.random.RandomState(0)), "rng must be a numpy.random.Generator"),
        (dict(rule="unnormalized"), "rule must be one of"),
        (dict(rule="nope"), "rule must be one of"),
        (dict(p=[0.5, 0.6]), "p must sum to 1"),
        (dict(q=[1.0, -0.0, 0.1]), "q"),
        (dict(q=[0.5, 0.5, 0.0, 0.0]), "same shape"),
        (dict(p=[[0.5, 0.5]], q=[[0.5, 0.5]]), "single distributions"),
    ],
)
def test_bad_inputs(kwargs, match):
    args = dict(p=[0.5, 0.5, 0.0], q=[0.2, 0.3, 0.5], n=10, rng=np.random.default_rng(0), rule="residual")
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        simulate_position(**args)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: max_abs_gap([0.1], [0.1, 0.2]), "same shape"),
        (lambda: binomial_standard_errors([0.5, 1.5], 10), "probabilities"),
        (lambda: binomial_standard_errors([0.5], 0), "positive integer"),
    ],
)
def test_helper_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_z_scores():
    z = z_scores([0.2, 0.5, 0.0, 1.0], [0.2, 0.4, 0.0, 0.9], 100)
    assert z.tolist() == [0.0, 2.0, 0.0, 3.3]
    assert str(f"{z_scores([0.19999], [0.2], 100)[0]:+.1f}") == "+0.0"
    assert z_scores([0.1], [0.0], 10)[0] == np.inf
    with pytest.raises(ValueError, match="same shape"):
        z_scores([0.1], [0.1, 0.2], 10)

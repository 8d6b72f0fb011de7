"""Properties of one position: exact laws that must hold for every pair of distributions."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import exact_pair, float_pair

from specdec_core import (
    acceptance_probabilities,
    acceptance_probability,
    accepted_mass,
    output_distribution,
    output_distribution_with,
    rejection_probability,
    residual_distribution,
    total_variation,
)


@settings(max_examples=300, deadline=None)
@given(exact_pair())
def test_output_equals_target_exactly(pq):
    p, q = pq
    assert list(output_distribution(p, q)) == p


@settings(max_examples=200, deadline=None)
@given(exact_pair())
def test_mass_accounting_exact(pq):
    p, q = pq
    alpha = acceptance_probability(p, q)
    assert 0 <= alpha <= 1
    assert rejection_probability(p, q) == 1 - alpha
    assert alpha == 1 - total_variation(p, q)
    a = acceptance_probabilities(p, q)
    # q(x)·a(x) = min(p(x), q(x)) everywhere, including where q(x) = 0
    assert [qi * ai for qi, ai in zip(q, a)] == list(accepted_mass(p, q))
    if alpha < 1:
        r = residual_distribution(p, q)
        assert sum(r) == 1 and all(v >= 0 for v in r)
        # the residual lives only where p > q
        assert all(ri == 0 for ri, pi, qi in zip(r, p, q) if pi <= qi)
    else:
        with pytest.raises(ValueError, match="p equals q"):
            residual_distribution(p, q)


@settings(max_examples=200, deadline=None)
@given(float_pair())
def test_float_output_close_to_target(pq):
    p, q = pq
    out = output_distribution(p, q)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, p, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(exact_pair())
def test_wrong_rules_differ_unless_no_rejection(pq):
    """Every rule but the residual is wrong whenever a rejection can happen and the rule's
    correction differs from the residual."""
    p, q = pq
    assert list(output_distribution_with(p, q, "residual")) == p
    if acceptance_probability(p, q) == 1:
        for rule in ("draft", "target", "uniform"):
            assert list(output_distribution_with(p, q, rule)) == p
        return
    r = list(residual_distribution(p, q))
    for rule, corr in (("draft", q), ("target", p), ("uniform", [F(1, len(p))] * len(p))):
        out = list(output_distribution_with(p, q, rule))
        assert (out == p) == (corr == r)


def test_stacked_rows_work_along_last_axis():
    p = np.array([[0.6, 0.3, 0.1], [0.5, 0.5, 0.0]])
    q = np.array([[0.2, 0.3, 0.5], [0.5, 0.5, 0.0]])
    np.testing.assert_allclose(acceptance_probability(p, q), [0.6, 1.0])
    np.testing.assert_allclose(output_distribution(p, q), p, atol=1e-15)
    with pytest.raises(ValueError, match="p equals q"):
        residual_distribution(p, q)  # row 2 has p = q
    np.testing.assert_allclose(residual_distribution(p[:1], q[:1]), [[1, 0, 0]])


def test_q_zero_convention():
    # C cannot be proposed (q = 0): acceptance reported as 1, accepted mass 0
    a = acceptance_probabilities([F(1, 2), F(1, 4), F(1, 4)], [F(1, 2), F(1, 2), F(0)])
    assert list(a) == [1, F(1, 2), 1]
    assert list(accepted_mass([F(1, 2), F(1, 4), F(1, 4)], [F(1, 2), F(1, 2), F(0)])) == [F(1, 2), F(1, 4), 0]


def test_p_zero_always_rejected():
    a = acceptance_probabilities([F(1), F(0)], [F(1, 2), F(1, 2)])
    assert list(a) == [1, 0]


def test_one_name_for_alpha():
    """α is ``acceptance_probability``; the old name ``acceptance_rate`` (readers took it for the
    accepted share as well) is gone from the library (issue 25: one word per concept)."""
    import specdec_core as sc
    from specdec_core import verify

    assert not hasattr(verify, "acceptance_rate") and not hasattr(sc, "acceptance_rate")
    assert "acceptance_probability" in sc.__all__

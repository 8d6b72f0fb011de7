"""Output count K under iid acceptance, and the symbolic derivations."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core import expected_output_count, output_count_distribution
from specdec_core.symbolic import (
    derive_expected_count,
    derive_output_equals_target,
    derive_per_symbol_identity,
    expected_count_polynomial,
)

alphas = st.fractions(min_value=0, max_value=1, max_denominator=1000)
gammas = st.integers(0, 12)


@settings(max_examples=200, deadline=None)
@given(alphas, gammas)
def test_pmf_sums_to_one_and_mean_matches(alpha, gamma):
    pmf = list(output_count_distribution(alpha, gamma))
    assert len(pmf) == gamma + 1
    assert sum(pmf) == 1
    assert all(isinstance(v, F) and v >= 0 for v in pmf)
    ek = expected_output_count(alpha, gamma)
    assert ek == sum(k * pk for k, pk in enumerate(pmf, start=1))
    if alpha != 1:
        assert ek == (1 - alpha ** (gamma + 1)) / (1 - alpha)


@settings(max_examples=100, deadline=None)
@given(st.floats(0, 1), gammas)
def test_float_path(alpha, gamma):
    pmf = output_count_distribution(alpha, gamma)
    assert pmf.dtype == np.float64
    assert pmf.sum() == pytest.approx(1, abs=1e-12)
    assert expected_output_count(alpha, gamma) == pytest.approx(
        (np.arange(1, gamma + 2) * pmf).sum(), rel=1e-12
    )


def test_edges():
    assert expected_output_count(F(1), 4) == 5
    assert list(output_count_distribution(F(1), 3)) == [0, 0, 0, 1]
    assert list(output_count_distribution(0, 3)) == [1, 0, 0, 0]
    assert expected_output_count(F(3, 5), 0) == 1
    grid = output_count_distribution(np.array([0.0, 0.5, 1.0]), 2)
    assert grid.shape == (3, 3)
    np.testing.assert_allclose(grid[1], [0.5, 0.25, 0.25])


def test_symbolic_derivations_close():
    assert derive_per_symbol_identity()["holds"]
    for n in range(1, 6):
        d = derive_output_equals_target(n)
        assert d["rejected_mass_equals_1_minus_alpha"]
        assert all(d["holds"])
    e = derive_expected_count()
    assert e["closed_form_holds"] and e["limit_holds"] and e["pmf_sums_to_1"]
    assert str(expected_count_polynomial(2)) == "alpha**2 + alpha + 1"

"""The draft ladder's curves (specdec_core.timing.alpha_needed): the α a draft of step cost c
needs for a speed-up at the best γ, checked against notebook 05's improvement factor."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.counts import expected_output_count
from specdec_core.timing import alpha_needed, improvement_factor


@settings(max_examples=60, deadline=None)
@given(c=st.floats(0.0, 2.0), factor=st.sampled_from([1.0, 1.2, 1.5, 2.0]))
def test_alpha_needed_is_the_least_alpha_reaching_the_factor(c, factor):
    a = alpha_needed(c, factor, max_gamma=12)
    best = lambda al: max(float(improvement_factor(al, g, c)) for g in range(1, 13))
    if a is None:  # not even α = 1 reaches it at any γ ≤ 12
        assert best(1.0) < factor
        return
    assert best(a) >= factor * (1 - 1e-6)
    if a > 1e-6:
        assert best(max(0.0, a - 1e-5)) < factor


def test_break_even_with_one_step_verification_is_alpha_equals_c_at_gamma_1():
    for c in (0.1, 0.3, 0.6):
        assert alpha_needed(c, 1.0) == pytest.approx(c, abs=1e-6)  # (1 + α)/(c + 1) = 1


def test_a_costlier_verification_raises_every_threshold():
    v = [1.0 + 0.1 * T for T in range(13)]  # 1.0, 1.1, … target steps for T = 1, 2, …
    v[0] = 1.0
    for c in (0.05, 0.3, 0.6):
        one, measured = alpha_needed(c, 1.5), alpha_needed(c, 1.5, v)
        assert measured is None or (one is not None and measured > one)
    assert alpha_needed(0.3, 1.0, v) > alpha_needed(0.3, 1.0)


def test_alpha_needed_at_a_measured_point_matches_e_k_over_cost():
    v = [1.0, 1.14, 1.2, 1.25, 1.3, 1.36, 1.41, 1.47]
    a = alpha_needed(0.65, 1.1, v, max_gamma=7)
    g_best = max(range(1, 8), key=lambda g: float(expected_output_count(a, g)) / (g * 0.65 + v[g]))
    assert float(expected_output_count(a, g_best)) / (g_best * 0.65 + v[g_best]) == pytest.approx(
        1.1, rel=1e-6
    )


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(c=-0.1), "c"),
        (dict(c=np.nan), "c"),
        (dict(c=0.3, factor=0), "factor"),
        (dict(c=0.3, max_gamma=0), "max_gamma"),
        (dict(c=0.3, verify=[1.0, 2.0]), "verify"),
        (dict(c=0.3, verify=[1.0] * 12 + [-1.0]), "verify"),
    ],
)
def test_bad_arguments_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        alpha_needed(**kw)

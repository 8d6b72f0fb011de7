"""Acceptance as a coupling (notebook 01 §6): strict speculative sampling is a maximal coupling.

* ``speculative_coupling`` has margins q (rows) and p (columns) and Σ min(p, q) on its diagonal;
* the exact linear program ``best_agreement`` finds no coupling with a larger diagonal (eq. 8);
* a non-maximal coupling (independent draws) is strictly worse whenever α < 1 and p ≠ q one-hot,
  and ``check_coupling`` catches a joint law with a wrong margin (the checks can fail).
"""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core import WORKED
from specdec_core.coupling import agreement, best_agreement, check_coupling, speculative_coupling
from specdec_core.toy import DRAFT_TABLE, TARGET_TABLE
from specdec_core.verify import acceptance_probability


def exact_dist(n):
    return (
        st.lists(st.integers(0, 6), min_size=n, max_size=n)
        .filter(sum)
        .map(lambda w: [F(v, sum(w)) for v in w])
    )


@st.composite
def pairs(draw):
    n = draw(st.integers(2, 4))
    return draw(exact_dist(n)), draw(exact_dist(n))


def test_worked_example_optimum_is_three_fifths():
    p, q = list(WORKED.p), list(WORKED.q)
    best, pi = best_agreement(p, q)
    assert best == F(3, 5) == acceptance_probability(p, q)
    check_coupling(pi, p, q)
    assert agreement(pi) == best


@pytest.mark.parametrize("key", list(TARGET_TABLE))
def test_toy_contexts_optimum_is_alpha(key):
    p, q = TARGET_TABLE[key], DRAFT_TABLE[key]
    assert best_agreement(p, q)[0] == acceptance_probability(p, q)


@settings(max_examples=150, deadline=None)
@given(pairs())
def test_speculative_coupling_is_maximal(pq):
    p, q = pq
    pi = speculative_coupling(p, q)
    check_coupling(pi, p, q)
    alpha = acceptance_probability(p, q)
    assert agreement(pi) == alpha
    assert best_agreement(p, q)[0] == alpha


def test_independent_coupling_is_worse_and_a_wrong_margin_is_caught():
    p, q = list(WORKED.p), list(WORKED.q)
    indep = np.outer(np.array(q, dtype=object), np.array(p, dtype=object))
    check_coupling(indep, p, q)
    assert agreement(indep) < F(3, 5)
    bad = speculative_coupling(p, q)
    bad[2, 0], bad[2, 2] = bad[2, 2], bad[2, 0]  # same rows, wrong columns
    with pytest.raises(ValueError, match="column"):
        check_coupling(bad, p, q)


def test_float_inputs_give_floats_and_best_agreement_wants_exact():
    pi = speculative_coupling([0.6, 0.3, 0.1], [0.2, 0.3, 0.5])
    assert pi.dtype == np.float64 and abs(agreement(pi) - 0.6) < 1e-12
    with pytest.raises(ValueError, match="Fractions"):
        best_agreement([0.6, 0.3, 0.1], [0.2, 0.3, 0.5])


def test_simplex_max_on_a_known_program_and_its_refusals():
    from specdec_core.coupling import simplex_max

    # max x + 2y  s.t. x + y + s = 4, x + 3y + t = 6  → x = 3, y = 1, value 5
    value, x = simplex_max([1, 2, 0, 0], [[1, 1, 1, 0], [1, 3, 0, 1]], [4, 6])
    assert value == 5 and x[:2] == [3, 1]
    with pytest.raises(ValueError, match="infeasible"):
        simplex_max([1, 0], [[1, 1], [1, 1]], [1, 2])
    with pytest.raises(ValueError, match="unbounded"):
        simplex_max([1, 0], [[1, -1]], [0])


def test_best_multi_agreement_sits_between_recursive_rejection_and_the_bound():
    from specdec_core import multi_draft_acceptance_probability
    from specdec_core.coupling import best_multi_agreement

    cases = [
        ([F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)], F(19, 25)),
        ([F(1, 2), F(1, 4), F(1, 4)], [F(1, 10), F(4, 5), F(1, 10)], F(61, 100)),
    ]
    for p, q, want in cases:
        assert best_multi_agreement(p, q, 1) == acceptance_probability(p, q)
        best = best_multi_agreement(p, q, 2)
        bound = sum(min(a, 1 - (1 - b) ** 2) for a, b in zip(p, q))
        assert best == want
        assert multi_draft_acceptance_probability(p, q, 2) < best <= bound
    with pytest.raises(ValueError, match="unknowns"):
        best_multi_agreement([F(1, 6)] * 6, [F(1, 6)] * 6, 3)

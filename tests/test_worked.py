"""The lesson card's worked trace, reproduced exactly by the library (specdec_core.worked)."""

from fractions import Fraction as F

import pytest

from specdec_core import fmt_decimal, worked_trace
from specdec_core.worked import WORKED

TRACE = worked_trace()

# The card's numbers, as exact values where the card's decimals are exact.
CARD = {
    "acceptance": [F(1), F(1), F(1, 5)],
    "accepted_mass": [F(1, 5), F(3, 10), F(1, 10)],
    "alpha": F(3, 5),
    "rejection": F(2, 5),
    "residual": [F(1), F(0), F(0)],
    "output": [F(3, 5), F(3, 10), F(1, 10)],
    "count_distribution": [F(2, 5), F(6, 25), F(9, 25)],
    "expected_count": F(49, 25),
}


@pytest.mark.parametrize("key", sorted(CARD))
def test_exact_values(key):
    got = TRACE[key]
    assert got == CARD[key]
    # exact types, not floats that happen to compare equal
    for v in got if isinstance(got, list) else [got]:
        assert isinstance(v, F)


def test_output_is_target_exactly():
    assert TRACE["output"] == list(WORKED.p)


def test_rates_exact_and_rounded_as_the_card():
    assert TRACE["tokens_per_second"] == F(1960, 9)
    assert TRACE["baseline_tokens_per_second"] == F(500, 3)
    assert TRACE["slower_tokens_per_second"] == F(392, 3)
    assert fmt_decimal(TRACE["tokens_per_second"]) == "217.78"
    assert fmt_decimal(TRACE["baseline_tokens_per_second"]) == "166.67"
    assert fmt_decimal(TRACE["slower_tokens_per_second"]) == "130.67"
    # the card's float values
    assert float(TRACE["tokens_per_second"]) == pytest.approx(217.77777777777777, rel=1e-15)
    assert float(TRACE["slower_tokens_per_second"]) == pytest.approx(130.66666666666666, rel=1e-15)


def test_float_inputs_give_float64():
    import numpy as np

    from specdec_core import acceptance_probabilities, acceptance_probability, output_distribution

    a = acceptance_probabilities([0.6, 0.3, 0.1], [0.2, 0.3, 0.5])
    assert a.dtype == np.float64
    np.testing.assert_allclose(a, [1, 1, 0.2], rtol=1e-12)
    assert acceptance_probability([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]) == pytest.approx(0.6, abs=1e-15)
    np.testing.assert_allclose(
        output_distribution([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]), [0.6, 0.3, 0.1], atol=1e-15
    )


def test_sympy_rationals_are_exact():
    import sympy as sp

    from specdec_core import acceptance_probability, residual_distribution

    p = [sp.Rational(3, 5), sp.Rational(3, 10), sp.Rational(1, 10)]
    q = [sp.Rational(1, 5), sp.Rational(3, 10), sp.Rational(1, 2)]
    assert acceptance_probability(p, q) == sp.Rational(3, 5)
    assert list(residual_distribution(p, q)) == [1, 0, 0]


def test_truth_counterexample_exact_and_simulated():
    from specdec_core.worked import TRUTH_EXAMPLE, truth_counterexample

    t = truth_counterexample(100_000, 2023)
    assert t["target_false"] == F(3, 10) == t["output_false"]
    assert t["output_law"] == list(TRUTH_EXAMPLE.p)
    assert t["accepted_false_exact"] == F(3, 10)  # every false answer here passed verification
    # binomial standard error sqrt(0.3·0.7/1e5) ≈ 0.00145: allow 4 of them
    assert abs(t["simulated_false"] - 0.3) < 4 * 0.00145
    with pytest.raises(ValueError, match="seed"):
        truth_counterexample(10, -1)


def test_draft_a_scenario_has_the_same_round_time_as_before():
    w = WORKED
    assert w.draft_a_draft_ms + w.verify_ms + w.overhead_ms == w.draft_ms + w.slower_verify_ms + w.overhead_ms

"""timing.py (rates under assumed budgets, break-even, cost-ratio model, optimal γ, work account)
and symbolic_timing.py (the sympy derivation checked against the direct formula)."""

from fractions import Fraction as F

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.counts import expected_output_count
from specdec_core.formatting import fmt_decimal
from specdec_core.symbolic_timing import (
    check_against_direct,
    derive_break_even,
    derive_improvement_factor,
    improvement_factor_expr,
)
from specdec_core.timing import (
    baseline_tokens_per_second,
    break_even_verify_ms,
    draft_cost_ms,
    improvement_factor,
    optimal_gamma,
    round_time_ms,
    scenario_rates,
    speedup_map,
    speedup_ratio,
    tokens_per_second,
    verify_cost_ms,
    work_account,
)
from specdec_core.worked import WORKED, worked_trace

EK = F(49, 25)
WORKED_BUDGET = dict(
    draft_per_token_ms=1, verify_base_ms=6, verify_per_position_ms=0, overhead_ms=1, baseline_ms=6
)

fractions01 = st.fractions(min_value=0, max_value=1, max_denominator=50)
costs = st.fractions(min_value=0, max_value=20, max_denominator=20)
positive_costs = st.fractions(min_value=F(1, 20), max_value=20, max_denominator=20)
gammas = st.integers(min_value=0, max_value=12)


# ---------------------------------------------------------------- worked example, exact


def test_worked_rates_exact():
    assert tokens_per_second(EK, draft_ms=2, verify_ms=6, overhead_ms=1) == F(1960, 9)
    assert baseline_tokens_per_second(6) == F(500, 3)
    assert tokens_per_second(EK, draft_ms=2, verify_ms=12, overhead_ms=1) == F(392, 3)
    t = worked_trace()
    assert (t["tokens_per_second"], t["baseline_tokens_per_second"], t["slower_tokens_per_second"]) == (
        F(1960, 9),
        F(500, 3),
        F(392, 3),
    )


def test_worked_rates_printed_with_fixed_rounding():
    assert fmt_decimal(F(1960, 9)) == "217.78"
    assert fmt_decimal(F(500, 3)) == "166.67"
    assert fmt_decimal(F(392, 3)) == "130.67"


def test_worked_ratio_and_break_even():
    r = speedup_ratio(EK, draft_ms=2, verify_ms=6, overhead_ms=1, baseline_ms=6)
    assert r == F(98, 75) and isinstance(r, F)
    slow = speedup_ratio(EK, draft_ms=2, verify_ms=12, overhead_ms=1, baseline_ms=6)
    assert slow == F(392, 3) / F(500, 3) < 1
    be = break_even_verify_ms(EK, draft_ms=2, overhead_ms=1, baseline_ms=6)
    assert be == F(219, 25)  # 8.76 ms: 6 ms pays, 12 ms loses
    assert tokens_per_second(EK, draft_ms=2, verify_ms=be, overhead_ms=1) == F(500, 3)


def test_scenario_rates_worked():
    s = scenario_rates(F(3, 5), WORKED.gamma, **WORKED_BUDGET)
    assert s["rate"] == F(1960, 9) and s["baseline_rate"] == F(500, 3)
    assert s["ratio"] == F(98, 75) and s["pays"] is True
    assert s["round_ms"] == 9 and s["draft_ms"] == 2 and s["verify_ms"] == 6
    assert s["break_even_verify_ms"] == F(219, 25)
    slow = scenario_rates(F(3, 5), 2, **{**WORKED_BUDGET, "verify_base_ms": 12})
    assert slow["rate"] == F(392, 3) and slow["pays"] is False


def test_float_inputs_give_floats():
    r = tokens_per_second(1.96, draft_ms=2.0, verify_ms=6.0, overhead_ms=1.0)
    assert isinstance(r, float) and abs(r - 1960 / 9) < 1e-9
    assert isinstance(speedup_ratio(1.96, draft_ms=2, verify_ms=6.0, overhead_ms=1, baseline_ms=6), float)
    assert isinstance(improvement_factor(0.6, 2, 0.1), float)


def test_costs_grow_with_gamma():
    assert draft_cost_ms(2, per_token_ms=1) == 2
    assert draft_cost_ms(0, per_token_ms=5) == 0
    assert verify_cost_ms(2, base_ms=6) == 6
    assert verify_cost_ms(3, base_ms=4, per_position_ms=F(1, 2)) == 6
    assert verify_cost_ms(3, base_ms=4.0, per_position_ms=0.5) == 6.0


# ---------------------------------------------------------------- cost-ratio model


def test_improvement_factor_values():
    assert improvement_factor(F(3, 5), 2, 0) == F(49, 25)
    assert improvement_factor(F(3, 5), 2, F(1, 10)) == F(49, 25) / F(6, 5)
    assert improvement_factor(1, 3, 0) == 4  # α = 1 limit (γ+1)/(γc+1)
    assert improvement_factor(1, 4, F(1, 4)) == F(5, 2)
    assert improvement_factor(0, 5, F(1, 2)) == F(2, 7)  # nothing accepted: pure loss
    assert improvement_factor(0.6, 0, 0.3) == 1.0  # γ = 0 is plain decoding
    arr = improvement_factor(np.array([0.0, 0.5, 1.0]), 2, 0.5)
    assert arr.shape == (3,) and np.allclose(arr, [0.5, 0.875, 1.5])


@settings(max_examples=60, deadline=None)
@given(fractions01, gammas, costs, positive_costs)
def test_improvement_factor_is_the_rate_ratio(alpha, gamma, c, T):
    """Draft steps cost c·T each, verification one target step T, no overhead."""
    ek = expected_output_count(alpha, gamma)
    spec = tokens_per_second(ek, draft_ms=gamma * c * T, verify_ms=T)
    assert improvement_factor(alpha, gamma, c) == spec / baseline_tokens_per_second(T)


@settings(max_examples=60, deadline=None)
@given(fractions01, gammas, costs, costs, positive_costs)
def test_break_even_equalizes_rates(alpha, gamma, draft, overhead, baseline):
    ek = expected_output_count(alpha, gamma)
    v = break_even_verify_ms(ek, draft_ms=draft, overhead_ms=overhead, baseline_ms=baseline)
    assert v == ek * baseline - draft - overhead
    if v >= 0 and draft + v + overhead > 0:
        assert tokens_per_second(
            ek, draft_ms=draft, verify_ms=v, overhead_ms=overhead
        ) == baseline_tokens_per_second(baseline)
        assert speedup_ratio(ek, draft_ms=draft, verify_ms=v, overhead_ms=overhead, baseline_ms=baseline) == 1
        slower = speedup_ratio(
            ek, draft_ms=draft, verify_ms=v + 1, overhead_ms=overhead, baseline_ms=baseline
        )
        assert slower < 1


@settings(max_examples=60, deadline=None)
@given(fractions01, st.fractions(min_value=0, max_value=2, max_denominator=20), st.integers(0, 15))
def test_optimal_gamma_is_the_argmax(alpha, c, max_gamma):
    g = optimal_gamma(alpha, c, max_gamma)
    vals = [improvement_factor(alpha, k, c) for k in range(max_gamma + 1)]
    assert 0 <= g <= max_gamma
    assert vals[g] == max(vals)
    assert all(v < vals[g] for v in vals[:g])  # ties go to the smallest γ


def test_optimal_gamma_examples():
    assert optimal_gamma(0, F(1, 10), 10) == 0  # nothing accepted: do not speculate
    assert optimal_gamma(1, 0, 7) == 7  # free, perfect draft: as deep as allowed
    assert optimal_gamma(F(4, 5), F(1, 20), 20) == 8
    assert optimal_gamma(0.8, 0.05, 20) == 8


# ---------------------------------------------------------------- work account


def test_work_account_worked():
    w = work_account(F(3, 5), 2)
    assert w["expected_tokens"] == F(49, 25) and w["expected_accepted"] == F(24, 25)
    assert w["proposals_per_token"] == F(50, 49)
    assert w["target_positions_per_token"] == F(75, 49)
    assert w["proposals_thrown_away"] == F(13, 25)
    assert w["target_positions_thrown_away"] == F(26, 75)


@settings(max_examples=50, deadline=None)
@given(fractions01, st.integers(1, 12))
def test_work_account_consistent(alpha, gamma):
    w = work_account(alpha, gamma)
    assert w["proposals_per_token"] * w["expected_tokens"] == gamma
    assert w["target_positions_per_token"] * w["expected_tokens"] == gamma + 1
    assert 0 <= w["proposals_thrown_away"] <= 1 and 0 <= w["target_positions_thrown_away"] < 1
    # a scored position is wasted exactly when its proposal was thrown away (the last position
    # is the bonus, used only when everything was accepted)
    kept = (1 - w["proposals_thrown_away"]) * gamma + 1
    assert kept == w["expected_tokens"]


def test_work_account_gamma_zero():
    w = work_account(F(1, 2), 0)
    assert w["proposals_thrown_away"] == 0 and w["target_positions_thrown_away"] == 0
    assert w["target_positions_per_token"] == 1


# ---------------------------------------------------------------- the (α, γ) map


def test_speedup_map_matches_scenarios():
    alphas, gs = [0.0, 0.3, 0.6, 1.0], [0, 1, 2, 5]
    budget = {**WORKED_BUDGET, "verify_per_position_ms": 0.5}
    m = speedup_map(alphas, gs, **budget)
    assert m.shape == (4, 4) and np.isfinite(m).all()
    for i, g in enumerate(gs):
        for j, a in enumerate(alphas):
            assert m[i, j] == pytest.approx(float(scenario_rates(a, g, **budget)["ratio"]))


def test_gamma_zero_is_plain_decoding_everywhere():
    """One definition: γ = 0 is plain decoding, factor exactly 1, whatever the speculative
    budget (notebook 05's map once showed 0.86 there by charging the overhead to γ = 0)."""
    budget = dict(
        draft_per_token_ms=1, verify_base_ms=5, verify_per_position_ms=F(1), overhead_ms=1, baseline_ms=6
    )
    s = scenario_rates(F(3, 5), 0, **budget)
    assert s["ratio"] == 1 and s["plain"] and s["round_ms"] == 6 and s["rate"] == s["baseline_rate"]
    assert not scenario_rates(F(3, 5), 1, **budget)["plain"]
    m = speedup_map([0.0, 0.6, 1.0], [0, 1, 2], **{k: float(v) for k, v in budget.items()})
    assert (m[0] == 1.0).all() and (m[1:] != 1.0).any()
    assert improvement_factor(F(3, 5), 0, F(1, 2)) == 1
    assert optimal_gamma(0.6, 5.0, 10) == 0  # speculation never pays: plain decoding


# ---------------------------------------------------------------- sympy derivation


def test_derivation_closes():
    d = derive_improvement_factor()
    assert d["closed_form_holds"] and d["limit_holds"]
    assert sp.simplify(d["limit_alpha_to_1"] - (d["gamma"] + 1) / (d["gamma"] * d["c"] + 1)) == 0
    b = derive_break_even()
    assert b["holds"]


def test_sympy_matches_direct_formula_exactly():
    samples = [(F(a, 10), g, F(c, 20)) for a in range(11) for g in range(9) for c in (0, 1, 2, 5, 10)]
    rows = check_against_direct(samples)
    assert len(rows) == len(samples)
    assert all(row[-1] for row in rows)


def test_sympy_matches_direct_formula_numerically():
    d = derive_improvement_factor()
    f = sp.lambdify((d["alpha"], d["gamma"], d["c"]), d["closed_form"], "math")
    for a in (0.1, 0.5, 0.77, 0.99):
        for g in (1, 3, 8):
            for c in (0.0, 0.05, 0.4):
                assert f(a, g, c) == pytest.approx(improvement_factor(a, g, c), rel=1e-12)


def test_improvement_factor_expr():
    alpha, c = sp.Symbol("alpha", nonnegative=True), sp.Symbol("c", nonnegative=True)
    assert sp.simplify(improvement_factor_expr(2) - (alpha**2 + alpha + 1) / (2 * c + 1)) == 0


# ---------------------------------------------------------------- bad inputs

BAD = [
    (lambda: speedup_ratio(2, draft_ms=1, verify_ms=1, baseline_ms=0), "baseline_ms is 0"),
    (lambda: speedup_ratio(2, draft_ms=-1, verify_ms=1, baseline_ms=6), "draft_ms must be non-negative"),
    (
        lambda: speedup_ratio(-2, draft_ms=1, verify_ms=1, baseline_ms=6),
        "expected_tokens must be non-negative",
    ),
    (lambda: speedup_ratio(2, draft_ms=0, verify_ms=0, baseline_ms=6), "a round that takes no time"),
    (lambda: speedup_ratio("2", draft_ms=1, verify_ms=1, baseline_ms=6), "expected_tokens must be a number"),
    (lambda: break_even_verify_ms(2, draft_ms=1, baseline_ms=-6), "baseline_ms must be non-negative"),
    (lambda: break_even_verify_ms(2, draft_ms=float("nan"), baseline_ms=6), "draft_ms must be finite"),
    (
        lambda: break_even_verify_ms(2, draft_ms=1, overhead_ms=float("inf"), baseline_ms=6),
        "overhead_ms must be finite",
    ),
    (lambda: draft_cost_ms(-1, per_token_ms=1), "gamma must be a non-negative integer"),
    (lambda: draft_cost_ms(2.0, per_token_ms=1), "gamma must be a non-negative integer"),
    (lambda: draft_cost_ms(2, per_token_ms=-1), "per_token_ms must be non-negative"),
    (lambda: verify_cost_ms(2, base_ms=None), "base_ms must be a number of milliseconds"),
    (lambda: verify_cost_ms(2, base_ms=1, per_position_ms=-0.5), "per_position_ms must be non-negative"),
    (lambda: improvement_factor(1.5, 2, 0.1), "alpha must be in [0, 1]"),
    (lambda: improvement_factor(0.5, -1, 0.1), "gamma must be a non-negative integer"),
    (lambda: improvement_factor(0.5, 2, -0.1), "c must be non-negative"),
    (lambda: improvement_factor(0.5, 2, "0.1"), "c must be a non-negative cost ratio"),
    (lambda: improvement_factor(0.5, 2, float("nan")), "c must be finite"),
    (lambda: optimal_gamma(0.5, 0.1, -1), "max_gamma must be a non-negative integer"),
    (lambda: optimal_gamma([0.5, 0.6], 0.1, 5), "alpha must be a single probability"),
    (lambda: optimal_gamma(float("nan"), 0.1, 5), "alpha is NaN"),
    (lambda: work_account(-0.1, 2), "alpha must be in [0, 1]"),
    (lambda: work_account(0.5, True), "gamma must be a non-negative integer"),
    (
        lambda: scenario_rates(0.5, 2, draft_per_token_ms=0, verify_base_ms=0, overhead_ms=0, baseline_ms=6),
        "a round that takes no time",
    ),
    (
        lambda: scenario_rates(0.5, 2, draft_per_token_ms=1, verify_base_ms=6, baseline_ms=0),
        "baseline_ms is 0",
    ),
    (lambda: speedup_map([], [1], **WORKED_BUDGET), "alphas must be a non-empty"),
    (lambda: speedup_map([0.5, 1.2], [1], **WORKED_BUDGET), "alphas must be in [0, 1]"),
    (lambda: speedup_map([0.5], [], **WORKED_BUDGET), "gammas must be a non-empty"),
    (lambda: speedup_map([0.5], [-1], **WORKED_BUDGET), "gammas must be a non-negative integer"),
    (
        lambda: speedup_map([0.5], [0, 1], draft_per_token_ms=0, verify_base_ms=0, baseline_ms=6),
        "at gamma=1 the round takes no time",
    ),
    (lambda: round_time_ms(draft_ms=0, verify_ms=0), "a round that takes no time"),
    (lambda: check_against_direct([(F(3, 2), 1, 0)]), "alpha must be in [0, 1]"),
    (lambda: check_against_direct([(0.5, 1, 0)]), "alpha: 0.5 is not an exact number"),
    (lambda: improvement_factor_expr(-2), "gamma must be a non-negative integer"),
]


@pytest.mark.parametrize("call, message", BAD, ids=[m for _, m in BAD])
def test_bad_inputs_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        call()

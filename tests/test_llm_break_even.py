"""Break-even acceptance (llm.predict.break_even_alpha) and α by proposal depth in the
predictor's simulated rounds (llm.predict.sampled_traces)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.counts import expected_output_count
from specdec_core.llm import predict as P


def costs(v1, v2, d, s=0.5):
    """Measured to γ = 4 (T = 5): a CostModel refuses points outside its curves' range."""
    return P.CostModel(
        {1: v1, 2: v2, 3: v2 + 2, 4: v2 + 4, 5: v2 + 6},
        {g: g * d for g in range(5)},
        {g: s for g in range(5)},
    )


@given(st.floats(20, 60), st.floats(1.0, 1.8), st.floats(0, 5), st.integers(1, 3))
@settings(max_examples=60, deadline=None)
def test_at_break_even_tokens_per_round_equal_the_round_cost(v1, ratio, d, g):
    c = costs(v1, v1 * ratio, d)
    a = P.break_even_alpha(c, g)
    need = c.round_ms(g) / c.round_ms(0)
    if a is None:
        assert need > g + 1
    else:
        assert float(expected_output_count(a, g)) == pytest.approx(max(need, 1.0), rel=1e-6, abs=1e-6)


def test_break_even_grows_with_the_draft_cost():
    a = [P.break_even_alpha(costs(40, 50, d), 1) for d in (0, 2, 5, 10)]
    assert a == sorted(a) and a[0] == pytest.approx((50 + 0.5) / 40.5 - 1)
    assert P.break_even_alpha(costs(40, 50, 40), 1) is None  # a round costs more than 2 steps
    with pytest.raises(ValueError, match="gamma"):
        P.break_even_alpha(costs(40, 50, 1), 0)
    with pytest.raises(ValueError, match="costs"):
        P.break_even_alpha({1: 40}, 1)


def test_sampled_traces_use_alpha_by_depth():
    """With α = 1 at depth 1 and 0 deeper, every round accepts exactly its first proposal."""
    a = np.zeros((40, 3))
    a[:, 0] = 1.0
    for t in P.sampled_traces(a, 3, sims=5, seed=1):
        assert all(acc == min(1, g) for g, acc in zip(t.gammas, t.accepted))
    flat = P.sampled_traces(np.ones(40), 3, sims=2)
    assert all(acc == g for t in flat for g, acc in zip(t.gammas, t.accepted))
    with pytest.raises(ValueError, match="alpha"):
        P.sampled_traces(np.ones((2, 2, 2)), 1)


def test_alpha_for_a_speedup_gives_that_speedup():
    from specdec_core.counts import expected_output_count

    c = costs(40, 50, 2)
    for s, g in ((1.0, 1), (1.1, 1), (1.5, 3), (2.0, 4)):
        a = P.break_even_alpha(c, g, speedup=s)
        assert a is not None and 0 <= a <= 1
        # E[K] tokens per round at that α, against the round's cost in plain steps: the speed-up asked for
        assert float(expected_output_count(a, g)) * c.round_ms(0) / c.round_ms(g) == pytest.approx(
            s, rel=1e-6
        )
    assert P.break_even_alpha(c, 1, speedup=1.0) == P.break_even_alpha(c, 1)
    assert P.break_even_alpha(c, 1, speedup=1.5) > P.break_even_alpha(c, 1, speedup=1.1)
    assert P.break_even_alpha(c, 1, speedup=3.0) is None  # two tokens a round cannot be 3 steps' worth
    for bad in (0, -1.0, float("nan"), "1.1"):
        with pytest.raises(ValueError, match="speedup"):
            P.break_even_alpha(c, 1, speedup=bad)

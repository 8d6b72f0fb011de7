"""latency.py: burst arrivals and gaps, TTFT, padding waste by hand, and the ragged-batch
simulation against the exact law of K (chi-square, p < 0.001 rejects; a broken variant is caught)."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core import speculative_generate
from specdec_core.counts import output_count_distribution
from specdec_core.latency import (
    arrival_times_ms,
    gap_summary,
    inter_token_gaps_ms,
    padding_waste,
    round_times_ms,
    simulate_ragged_batch,
    time_to_first_token_ms,
)
from specdec_core.lawcheck import chi_square_gof
from specdec_core.toy import toy_draft, toy_target

P, Q = [0.6, 0.3, 0.1], [0.2, 0.3, 0.5]  # the card's pair: α = 0.6


def test_bursts_by_hand():
    a = arrival_times_ms([3, 1, 2], 10)
    assert a.tolist() == [10, 10, 10, 20, 30, 30]
    assert inter_token_gaps_ms(a).tolist() == [0, 0, 10, 10, 0]
    assert arrival_times_ms([2, 1], [5, 7], start_ms=100).tolist() == [105, 105, 112]


@settings(max_examples=50, deadline=None)
@given(ks=st.lists(st.integers(1, 6), min_size=2, max_size=40), t=st.integers(1, 50))
def test_mean_gap_is_one_over_rate_but_bursty(ks, t):
    """Equation (1): the gaps sum to the elapsed time after the first token, zero gaps number
    Σ(K − 1), and the largest gap is a whole round whenever there are two rounds."""
    g = inter_token_gaps_ms(arrival_times_ms(ks, t))
    assert g.sum() == t * (len(ks) - 1)
    assert (g == 0).sum() == sum(k - 1 for k in ks)
    assert g.max() == t


def test_round_times_follow_the_budget():
    res = speculative_generate(
        toy_target(), toy_draft(), (), gamma=3, max_new_tokens=40, rng=np.random.default_rng(1)
    )
    rt = round_times_ms(
        res.records, draft_per_token_ms=1, verify_base_ms=5, verify_per_position_ms=F(1, 2), overhead_ms=1
    )
    want = [r.gamma * 1 + 5 + 0.5 * (r.gamma + 1) + 1 for r in res.records]
    assert rt.tolist() == want
    a = arrival_times_ms(res.records, rt)
    assert a.size == 40 and a[-1] == sum(want)


def test_gap_summary():
    s = gap_summary([0, 0, 0, 10])
    assert s["mean"] == 2.5 and s["median"] == 0 and s["zero_share"] == 0.75 and s["max"] == 10


def test_ttft_exact():
    assert time_to_first_token_ms(
        target_prefill_ms=F(120), draft_prefill_ms=F(15), gamma=4, draft_per_token_ms=F(3, 2), overhead_ms=1
    ) == F(142)
    assert time_to_first_token_ms(target_prefill_ms=50) == 50


def test_padding_by_hand():
    w = padding_waste(np.array([[1, 3, 2], [4, 4, 4]]))
    assert w["wasted"].tolist() == [3, 0]
    assert w["share"].tolist() == [3 / 9, 0.0]
    assert w["longest"].tolist() == [3, 4]


def test_ragged_batch_follows_the_law_of_k():
    """Each sequence's K in the simulated batch ~ output_count_distribution(α = 0.6, γ = 4)."""
    K = simulate_ragged_batch(P, Q, gamma=4, batch=8, rounds=500, rng=np.random.default_rng(3))
    assert K.shape == (500, 8)
    law = {k + 1: float(pr) for k, pr in enumerate(output_count_distribution(F(3, 5), 4))}
    res = chi_square_gof(K.ravel().tolist(), law)
    assert not res.rejected, res.summary


def test_lockstep_batch_is_caught():
    """A broken batch that stops every sequence at the first rejection anywhere in the batch
    (K = the batch's minimum) does not follow the law of K: the same test rejects it."""
    K = simulate_ragged_batch(P, Q, gamma=4, batch=4, rounds=1000, rng=np.random.default_rng(4))
    broken = np.repeat(K.min(axis=1, keepdims=True), 4, axis=1)
    law = {k + 1: float(pr) for k, pr in enumerate(output_count_distribution(F(3, 5), 4))}
    assert chi_square_gof(broken.ravel().tolist(), law).rejected


def test_seeded():
    a = simulate_ragged_batch(P, Q, gamma=2, batch=3, rounds=5, rng=np.random.default_rng(9))
    b = simulate_ragged_batch(P, Q, gamma=2, batch=3, rounds=5, rng=np.random.default_rng(9))
    assert (a == b).all()


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: arrival_times_ms([], 1), "empty"),
        (lambda: arrival_times_ms([0, 1], 1), "records"),
        (lambda: arrival_times_ms([1, 2], [1, 2, 3]), "round_ms"),
        (lambda: arrival_times_ms([1, 2], -1), "round_ms"),
        (lambda: inter_token_gaps_ms([1]), "arrivals"),
        (lambda: inter_token_gaps_ms([2, 1]), "non-decreasing"),
        (lambda: time_to_first_token_ms(target_prefill_ms=-1), "target_prefill_ms"),
        (lambda: padding_waste(np.array([[0, 1]])), "K"),
        (
            lambda: simulate_ragged_batch(P, Q, gamma=0, batch=1, rounds=1, rng=np.random.default_rng(0)),
            "gamma",
        ),
        (lambda: simulate_ragged_batch(P, Q, gamma=1, batch=1, rounds=1, rng=0), "rng"),
        (lambda: round_times_ms("abc", draft_per_token_ms=1, verify_base_ms=1), "records"),
    ],
)
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_stream_times_by_hand():
    from specdec_core.latency import stream_times_ms

    # first round (K = 2) at TTFT 100 ms, then rounds of 10 ms
    assert stream_times_ms([2, 1, 3], 10, first_token_ms=100).tolist() == [100, 100, 110, 120, 120, 120]
    assert stream_times_ms([1, 1], [99, 5], first_token_ms=F(7)).tolist() == [7, 12]
    with pytest.raises(ValueError, match="first_token_ms"):
        stream_times_ms([1], 1, first_token_ms=-1)

"""acceptance_stats.py: measured acceptance rate vs acceptance length, K histogram, per-position
acceptance, visited α, exact round laws and long-run statistics of the toy language."""

from fractions import Fraction as F

import numpy as np
import pytest

from specdec_core.acceptance_stats import (
    acceptance_by_position,
    acceptance_length,
    acceptance_report,
    accepted_share,
    exact_round_law,
    full_rounds,
    k_histogram,
    long_run_stats,
    measured_work,
    per_check_acceptance,
    visited_alpha,
)
from specdec_core.counts import expected_output_count, output_count_distribution
from specdec_core.sampling import GenerationResult, RoundRecord, speculative_generate
from specdec_core.toy import ToyModel, toy_draft, toy_target


def rec(prefix, proposals, stop, last):
    """A hand-made round: ``stop`` = index of the first rejection (None: all accepted)."""
    checked = len(proposals) if stop is None else stop + 1
    emitted = tuple(proposals) + (last,) if stop is None else tuple(proposals[:stop]) + (last,)
    return RoundRecord(
        prefix=tuple(prefix),
        proposals=tuple(proposals),
        q_x=(0.5,) * len(proposals),
        p_x=(0.5,) * len(proposals),
        ratios=(1.0,) * len(proposals),
        draws=(0.1,) * checked,
        stop=stop,
        emitted=emitted,
        kind="bonus" if stop is None else "correction",
    )


@pytest.fixture
def hand_result():
    records = [
        rec((), (0, 0, 0), None, 1),  # K = 4
        rec((0,), (1, 1, 1), 0, 2),  # K = 1
        rec((0, 2), (0, 1, 2), 1, 3),  # K = 2
        rec((0, 2, 0, 3), (0,), None, 0),
    ]  # short last round, ignored
    toks = sum((r.emitted for r in records), ())
    return GenerationResult(tokens=toks, records=records)


def test_counts_from_hand_records(hand_result):
    assert len(full_rounds(hand_result)) == 3
    assert accepted_share(hand_result) == F(4, 9)  # 3 + 0 + 1 accepted of 9
    assert per_check_acceptance(hand_result) == F(4, 6)  # of 3 + 1 + 2 checked
    assert acceptance_length(hand_result) == F(7, 3)
    assert list(k_histogram(hand_result)) == [1, 1, 0, 1]
    pos = acceptance_by_position(hand_result)
    assert [(p["checked"], p["accepted"]) for p in pos] == [(3, 2), (2, 1), (1, 1)]
    assert pos[0]["rate"] == F(2, 3) and pos[2]["share_of_rounds"] == F(1, 3)
    w = measured_work(hand_result)
    assert w["tokens"] == 7 and w["proposals_per_token"] == F(9, 7)
    assert w["target_positions_per_token"] == F(12, 7)
    assert w["proposals_thrown_away"] == F(5, 9) and w["target_positions_thrown_away"] == F(5, 12)
    # γ = 1 rounds are there too
    assert acceptance_length(hand_result, gamma=1) == 2


def constant_models(p, q):
    """Prefix-independent models: then acceptance really is iid with α = Σ min(p, q)."""
    V = len(p)
    tp = ToyModel({None: tuple(p), **{i: tuple(p) for i in range(V)}}, "target")
    tq = ToyModel({None: tuple(q), **{i: tuple(q) for i in range(V)}}, "draft")
    return tp, tq


@pytest.mark.parametrize("gamma", [0, 1, 2, 4])
def test_exact_round_law_is_iid_for_constant_models(gamma):
    tp, tq = constant_models((F(3, 5), F(3, 10), F(1, 10)), (F(1, 5), F(3, 10), F(1, 2)))
    law = exact_round_law(tp, tq, (), gamma)
    assert list(law.k_distribution) == list(output_count_distribution(F(3, 5), gamma))
    assert law.expected_count == expected_output_count(F(3, 5), gamma)
    assert sum(law.end_token.values()) == 1
    # with constant models the output law is the target's (the method's guarantee)
    if gamma == 0:
        assert law.end_token == {0: F(3, 5), 1: F(3, 10), 2: F(1, 10)}


@pytest.mark.parametrize("gamma", [1, 2, 3])
def test_exact_round_law_toy_is_a_law(gamma):
    T, D = toy_target(), toy_draft()
    for s in range(4):
        law = exact_round_law(T, D, (s,), gamma)
        assert sum(law.k_distribution) == 1 and sum(law.end_token.values()) == 1
        assert law.checks_by_position[0] == 1
        assert all(a <= c for a, c in zip(law.accepts_by_position, law.checks_by_position))


def test_long_run_stationary_and_gap():
    T, D = toy_target(), toy_draft()
    L = long_run_stats(T, D, 3)
    pi = L.stationary
    assert sum(pi.values()) == 1 and all(v > 0 for v in pi.values())
    for y in range(4):  # π P = π exactly
        assert sum(pi[s] * L.laws[s].end_token.get(y, 0) for s in range(4)) == pi[y]
    assert isinstance(L.mean_count, F) and isinstance(L.gap, F)
    assert float(L.mean_count) == pytest.approx(2.5493857884, abs=1e-9)
    assert float(L.iid_count) == pytest.approx(2.5374636560, abs=1e-9)
    assert L.gap > 0
    # γ = 1: K = 1 + one acceptance, so the iid formula is exact at the average α
    assert long_run_stats(T, D, 1).gap == 0


def test_simulation_agrees_with_exact_long_run():
    T, D = toy_target(), toy_draft()
    res = speculative_generate(T, D, (), gamma=3, max_new_tokens=6000, rng=np.random.default_rng(7))
    L = long_run_stats(T, D, 3)
    assert float(acceptance_length(res)) == pytest.approx(float(L.mean_count), abs=0.06)
    assert float(visited_alpha(res, T, D)) == pytest.approx(float(L.average_alpha), abs=0.03)


def test_report_fields():
    T, D = toy_target(), toy_draft()
    res = speculative_generate(T, D, (), gamma=2, max_new_tokens=400, rng=np.random.default_rng(1))
    r = acceptance_report(res, T, D)
    assert r.gamma == 2 and r.proposed == 2 * r.rounds and r.checked >= r.rounds
    assert r.accepted_share == F(r.accepted, r.proposed)
    assert r.per_check_acceptance == F(r.accepted, r.checked)
    assert sum(r.k_histogram) == r.rounds
    assert r.iid_length == expected_output_count(r.average_alpha, 2)
    assert isinstance(r.average_alpha, F)
    assert np.isfinite(r.gap)


def test_visited_alpha_float_models():
    T, D = toy_target(), toy_draft()
    res = speculative_generate(T, D, (), gamma=2, max_new_tokens=200, rng=np.random.default_rng(2))
    exact = visited_alpha(res, T, D)
    approx = visited_alpha(res, lambda pre: T(pre), lambda pre: D(pre))
    assert isinstance(approx, float) and approx == pytest.approx(float(exact))


def test_bad_inputs():
    T, D = toy_target(), toy_draft()
    res = speculative_generate(T, D, (), gamma=2, max_new_tokens=20, rng=np.random.default_rng(0))
    zero = speculative_generate(T, D, (), gamma=0, max_new_tokens=5, rng=np.random.default_rng(0))
    cases = [
        (lambda: acceptance_length([1, 2]), "result must be a GenerationResult"),
        (lambda: acceptance_length(GenerationResult(tokens=())), "result has no rounds"),
        (lambda: acceptance_length(res, gamma=7), "no round with gamma=7"),
        (lambda: acceptance_length(res, gamma=-1), "gamma must be a non-negative integer"),
        (lambda: accepted_share(zero), "no proposals were made"),
        (lambda: per_check_acceptance(zero), "no proposal was checked"),
        (lambda: acceptance_report(zero, T, D), "gamma = 0 rounds propose nothing"),
        (lambda: exact_round_law(lambda p: T(p), D, (), 2), "target must offer exact rows"),
        (lambda: exact_round_law(T, D, (), 1.5), "gamma must be a non-negative integer"),
        (lambda: long_run_stats(T, D, 0), "gamma must be at least 1"),
    ]
    for call, msg in cases:
        with pytest.raises(ValueError, match=msg):
            call()

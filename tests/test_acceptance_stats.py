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
from specdec_core.counts import expected_output_count, iid_accepted_share, output_count_distribution
from specdec_core.policies import ConfidenceStop, GrowShrink
from specdec_core.sampling import GenerationResult, RoundRecord, speculative_generate
from specdec_core.toy import ToyModel, toy_draft, toy_target


def rec(prefix, proposals, stop, last, planned=None):
    """A hand-made round: ``stop`` = index of the first rejection (None: all accepted);
    ``planned``: the γ its policy chose (``gamma_chosen``)."""
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
        gamma_chosen=planned,
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


# ---------------------------------------------------------------- rounds of different γ (γ policies)


def test_policy_rounds_count_each_with_its_own_gamma():
    """Planned γ 2, 4, 3, 3 (a confidence stop after one proposal in the third round), and a last
    round cut by max_new_tokens = 12 (planned 4, drafted 1 = remaining − 1): left out."""
    records = [
        rec((), (0, 0), None, 1, planned=2),  # K = 3, 2 accepted of 2
        rec((0,), (1, 1, 1, 1), 1, 2, planned=4),  # K = 2, 1 accepted of 4, 2 checked
        rec((0, 2), (0,), 0, 3, planned=3),  # K = 1, 0 of 1 (drafting stopped early)
        rec((0, 2, 3), (2, 2, 2), None, 0, planned=3),  # K = 4, 3 of 3
        rec((0, 2, 3, 0), (0,), None, 1, planned=4),  # cut: 10 tokens before, 1 + 1 reach 12
    ]
    res = GenerationResult(tokens=sum((r.emitted for r in records), ()), records=records)
    assert len(res.tokens) == 12 and full_rounds(res) == records[:4]
    assert accepted_share(res) == F(2 + 1 + 0 + 3, 2 + 4 + 1 + 3)
    assert per_check_acceptance(res) == F(6, 2 + 2 + 1 + 3)
    assert acceptance_length(res) == F(3 + 2 + 1 + 4, 4)
    assert list(k_histogram(res)) == [1, 1, 1, 1, 0]  # K = 1 … 5 (γ up to 4)
    pos = acceptance_by_position(res)
    assert [(p["checked"], p["accepted"]) for p in pos] == [(4, 3), (3, 2), (1, 1), (0, 0)]
    assert pos[3]["rate"] is None and pos[1]["share_of_rounds"] == F(2, 4)
    w = measured_work(res)
    assert (w["rounds"], w["tokens"], w["proposed"], w["target_positions"]) == (4, 10, 10, 14)
    assert acceptance_length(res, gamma=4) == 2  # gamma=g still selects the rounds that drafted g


def _hand_count(res, n):
    """The rounds not cut by max_new_tokens = n, found from the sampler's rule γ = min(planned,
    remaining − 1): a cut round drafted remaining − 1 < planned."""
    kept, before = [], 0
    for r in res.records:
        cap = n - before - 1
        if not (cap < r.gamma_chosen and r.gamma == cap):
            kept.append(r)
        before += len(r.emitted)
    return kept


@pytest.mark.parametrize(
    "policy",
    [GrowShrink(start=2, grow=2, shrink=1, low=1, high=6), ConfidenceStop(max_gamma=5, threshold=F(1, 3))],
    ids=repr,
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_policy_runs_use_every_round(policy, seed):
    T, D = toy_target(), toy_draft()
    n = 300
    res = speculative_generate(T, D, (), gamma=policy, max_new_tokens=n, rng=np.random.default_rng(seed))
    recs = _hand_count(res, n)
    assert len(res.records) - len(recs) <= 2 and recs == res.records[: len(recs)]  # only the end is cut
    gammas = [r.gamma for r in recs]
    assert len(set(gammas)) >= 3  # the rounds really differ
    proposed, kept = sum(gammas), sum(r.accepted for r in recs)
    assert full_rounds(res) == recs
    assert accepted_share(res) == F(kept, proposed)
    assert acceptance_length(res) == F(sum(len(r.emitted) for r in recs), len(recs))
    assert per_check_acceptance(res) == F(kept, sum(len(r.draws) for r in recs))
    hist = k_histogram(res)
    assert len(hist) == max(gammas) + 1 and hist.sum() == len(recs)
    rep = acceptance_report(res, T, D)
    assert (rep.rounds, rep.proposed, rep.gamma) == (len(recs), proposed, max(gammas))
    assert rep.gamma_counts == tuple(gammas.count(g) for g in range(max(gammas) + 1))
    assert rep.accepted_share == F(kept, proposed) and rep.acceptance_length == acceptance_length(res)
    a = rep.average_alpha
    assert rep.iid_length == sum(expected_output_count(a, g) for g in gammas) / len(recs)
    assert rep.iid_share == sum(g * iid_accepted_share(a, g) for g in gammas if g) / proposed


@pytest.mark.parametrize(
    "gamma,n,stop", [(3, 100, None), (4, 50, {1}), (2, 7, None), (5, 40, {3}), (1, 9, {2})]
)
def test_fixed_gamma_counts_the_rounds_that_drafted_gamma(gamma, n, stop):
    """With a fixed γ the counted rounds are those that drafted γ, as before policies existed."""
    T, D = toy_target(), toy_draft()
    for seed in range(20):
        res = speculative_generate(
            T, D, (), gamma=gamma, max_new_tokens=n, rng=np.random.default_rng(seed), stop=stop
        )
        assert full_rounds(res) == [r for r in res.records if r.gamma == gamma]
        rep = acceptance_report(res, T, D)
        assert rep.iid_length == expected_output_count(rep.average_alpha, gamma)
        assert rep.iid_share == iid_accepted_share(rep.average_alpha, gamma)

"""Timed runs, the adaptive-γ loop, the prediction, and the report helpers (tiny model and the
stored results file; no timing is asserted, only the accounting)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core import autoregressive_generate
from specdec_core.llm import CachedTarget, PromptLookupDraft
from specdec_core.llm.runs import (
    expected_tokens_iid,
    one_step_gap,
    run_plain,
    run_speculative,
    speculative_generate_adaptive,
)


def _copy_prompt(lm):
    return tuple(lm.codec.encode("the cat sat on the mat. the cat sat on the mat. the cat"))


def test_adaptive_greedy_equals_plain_and_falls_back_to_single_steps(lm):
    m, prompt = lm.model, _copy_prompt(lm)
    plain = autoregressive_generate(
        CachedTarget(m, 0.0), prompt, max_new_tokens=24, rng=np.random.default_rng(0)
    ).tokens
    res = speculative_generate_adaptive(
        CachedTarget(m, 0.0),
        PromptLookupDraft(m.cfg.vocab_size),
        prompt,
        gamma=6,
        max_new_tokens=24,
        rng=np.random.default_rng(0),
    )
    assert res.tokens == plain
    assert all(0 <= r.gamma <= 6 for r in res.records)
    no_match = speculative_generate_adaptive(
        CachedTarget(m, 0.0),
        PromptLookupDraft(m.cfg.vocab_size),
        (5, 6),
        gamma=4,
        max_new_tokens=1,
        rng=np.random.default_rng(0),
    )
    assert [r.gamma for r in no_match.records] == [0]


@pytest.mark.parametrize("adaptive", [False, True])
def test_run_stats_accounting(lm, adaptive):
    m, prompt = lm.model, _copy_prompt(lm)
    tgt = CachedTarget(m, 1.0)
    s = run_speculative(
        tgt, PromptLookupDraft(m.cfg.vocab_size), prompt, 4, 30, np.random.default_rng(3), adaptive=adaptive
    )
    assert s.n_tokens == 30 == sum(k * c for k, c in enumerate(s.k_hist))
    assert s.rounds == sum(s.k_hist) == len(s.round_gammas)
    assert s.accepted + s.rejected <= s.proposed == sum(s.round_gammas)
    assert sum(a for a, _ in s.accept_by_pos) == s.accepted
    assert s.target_s + s.draft_s <= s.wall_s and s.overhead_s >= 0
    assert s.n_tokens == 30 and s.tokens_per_s > 0
    p = run_plain(tgt, prompt, 10, np.random.default_rng(3))
    assert p.rounds == 10 and p.k_hist == [0, 10] and p.proposed == 0


def test_expected_tokens_iid():
    assert expected_tokens_iid(0.5, 2) == pytest.approx(1.75)
    assert expected_tokens_iid(1.0, 4) == 5.0
    assert expected_tokens_iid(0.0, 4) == 1.0


def test_cost_curves_and_one_step_gap(lm):
    from specdec_core.llm import predict as P

    c = P.verify_cost_curve(lm.model, _copy_prompt(lm), [1, 3, 8], temperature=1.0, reps=2)
    assert sorted(c) == [1, 3, 8] and all(0 < v.min <= v.median <= v.max for v in c.values())
    d = P.draft_cost_curve(PromptLookupDraft(lm.cfg.vocab_size), _copy_prompt(lm), [0, 2], reps=2)
    assert sorted(d) == [0, 2]
    o = P.overhead_curve(lm.cfg.vocab_size, [0, 1, 3], temperature=1.0, reps=2)
    assert sorted(o) == [0, 1, 3]
    # `before` runs untimed before every timed call (the untimed first sweep included)
    calls = []
    P.draft_cost_curve(
        PromptLookupDraft(lm.cfg.vocab_size), _copy_prompt(lm), [1, 2], reps=2, before=lambda: calls.append(1)
    )
    assert len(calls) == 2 * 3
    calls.clear()
    P.overhead_curve(lm.cfg.vocab_size, [0, 1], temperature=1.0, reps=2, before=lambda: calls.append(1))
    assert len(calls) == 2 * 3
    # target_pass steps a target of its own: a draft reading another target's cache is untouched
    tgt = CachedTarget(lm.model, 1.0)
    tgt.prefill(_copy_prompt(lm)[:-1])
    n = tgt.cache.n
    step = P.target_pass(lm.model, _copy_prompt(lm))
    step(), step()
    assert tgt.cache.n == n
    p = np.array([0.5, 0.3, 0.2])
    assert one_step_gap(p, np.array([0.0, 1.0, 0.0])) < 1e-15
    assert one_step_gap(p, np.array([0.2, 0.2, 0.6])) < 1e-15


def test_report_reads_the_stored_results():
    import matplotlib.pyplot as plt

    from specdec_core.llm import report
    from specdec_core.measured import read_capstone
    from specdec_core.plots import llm as llm_figures

    cap = read_capstone()
    assert cap.machine.threads == 1 and cap.sweep.reps >= 3
    assert "cores" in cap.how() and "load average" in cap.how()
    assert len(report.summary_table(cap)) == 1 + 6
    assert report.time_breakdown_lines(cap) and report.margin_lines(cap) and report.law_lines(cap)
    for fig in (
        llm_figures.speedup_figure(cap),
        llm_figures.cost_figure(cap),
        llm_figures.exit_figure(cap),
        llm_figures.prediction_figure(cap),
        llm_figures.pay_figure(cap),
    ):
        assert fig.axes
        plt.close(fig)
    # every configuration was repeated, and predicted before it ran
    assert all(r.decode_tokens_per_s.n == cap.sweep.reps for r in cap.runs)
    assert all(r.prediction_error is not None for r in cap.runs)
    assert {p.config for p in cap.predictions.values} == {r.config for r in cap.runs}
    law = cap.law
    assert law.power >= 0.9 and law.alpha >= 0.3
    assert law.broken_corrects_from_p.rejected and not law.correct.rejected
    assert all(v.vm_hwm_mib < 1024 for v in cap.memory)
    # the library's break-even α and ceiling agree with what the benchmark stored
    assert report.break_even(cap, "feature", 1) == cap.break_even_alpha(1.0, "feature", 1)
    assert 1 < report.ceiling(cap, 7) < 8


def test_spread_formatting():
    from specdec_core.llm import report

    assert report.decimals_for(1.7, 2.1) == 1 and report.decimals_for(1.71, 1.74) == 2
    assert report.decimals_for(10, 14) == 0 and report.decimals_for(2.0, 2.0) == 2
    from specdec_core.measured import Spread

    assert report.fmt_spread(Spread(1.93, 1.71, 2.08), "×") == "×1.9 (1.7–2.1)"


def test_score_logs_the_softmax_as_target_time(lm, monkeypatch):
    """A run's target time is all the work of scoring: the probabilities too (the breakdown
    once put the softmax under "sampler and bookkeeping")."""
    import time as _time

    from specdec_core.llm import adapters

    real = adapters.probs_from_logits

    def slow(z, t):
        _time.sleep(0.03)
        return real(z, t)

    monkeypatch.setattr(adapters, "probs_from_logits", slow)
    tgt = CachedTarget(lm.model, 1.0)
    prompt = _copy_prompt(lm)
    tgt.score(prompt, ())
    assert tgt.log.seconds("target") >= 0.03 and tgt.log.count("target") == 1


def test_median_range_of_the_repeats():
    """The range of the repeats' median: one point when every trajectory predicts the same,
    around the pooled prediction, narrower by √repeats and wider at a higher level; bad
    arguments named."""
    from specdec_core.llm import predict as P

    costs = P.CostModel({1: 40.0, 2: 48.0, 3: 52.0}, {0: 0.0, 1: 1.0, 2: 2.0}, {0: 0.3, 1: 0.4, 2: 0.5})

    def traces(a, seed):
        return P.sampled_traces(np.full(40, a), 2, sims=50, seed=seed)

    same = [traces(0.5, 0), traces(0.5, 0)]
    lo, hi = P.median_range(costs, same, 5)
    assert lo == pytest.approx(hi) == pytest.approx(P.predict_decode(costs, same[0])["tokens_per_s"])
    mixed = [traces(a, i) for i, a in enumerate((0.1, 0.3, 0.5, 0.7, 0.9, 0.2))]
    pooled = P.predict_decode(costs, [t for g in mixed for t in g])["tokens_per_s"]
    lo1, hi1 = P.median_range(costs, mixed, 1)
    lo4, hi4 = P.median_range(costs, mixed, 4)
    # centred on the pooled prediction on the log scale, half as wide (in log) at 4 repeats
    assert np.sqrt(lo1 * hi1) == pytest.approx(pooled) and np.sqrt(lo4 * hi4) == pytest.approx(pooled)
    assert np.log(hi4 / lo4) == pytest.approx(np.log(hi1 / lo1) / 2)
    lo9, hi9 = P.median_range(costs, mixed, 4, level=0.99)
    assert hi9 - lo9 > hi4 - lo4
    with pytest.raises(ValueError, match="by_trajectory"):
        P.median_range(costs, [mixed[0]], 5)
    with pytest.raises(ValueError, match="repeats"):
        P.median_range(costs, mixed, 0)
    with pytest.raises(ValueError, match="level"):
        P.median_range(costs, mixed, 5, level=1.0)


def test_median_range_never_goes_below_zero():
    """Trajectories whose predictions differ widely (acceptance 0 on some, 1 on others) and
    one repeat: the linear ± range of the old code went below 0 tokens/s (low ≈ −52); the
    log-scale range stays positive and holds the pooled prediction."""
    from specdec_core.llm import predict as P

    costs = P.CostModel({1: 10.0, 8: 11.0}, {0: 0.0, 7: 30.0}, {0: 0.0, 7: 0.0})
    groups = [P.sampled_traces(np.full(64, a), 7, sims=5, seed=i) for i, a in enumerate((0.0, 1.0, 0.0, 1.0))]
    lo, hi = P.median_range(costs, groups, 1)
    pooled = P.predict_decode(costs, [t for g in groups for t in g])["tokens_per_s"]
    assert 0 < lo < pooled < hi


@settings(max_examples=60, deadline=None)
@given(
    alphas=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=5),
    lengths=st.lists(st.integers(1, 40), min_size=5, max_size=5),
    repeats=st.integers(1, 9),
    level=st.floats(0.5, 0.999),
)
def test_median_range_is_positive_and_holds_the_pooled_prediction(alphas, lengths, repeats, level):
    """Any trajectories (of different lengths too), repeats and level: 0 < low ≤ pooled ≤ high."""
    from specdec_core.llm import predict as P

    costs = P.CostModel({1: 20.0, 5: 26.0}, {0: 0.0, 4: 9.0}, {0: 0.1, 4: 0.3})
    groups = [
        P.sampled_traces(np.full(n, a), 4, sims=4, seed=i) for i, (a, n) in enumerate(zip(alphas, lengths))
    ]
    lo, hi = P.median_range(costs, groups, repeats, level=level)
    pooled = P.predict_decode(costs, [t for g in groups for t in g])["tokens_per_s"]
    assert 0 < lo <= pooled * (1 + 1e-12) and pooled <= hi * (1 + 1e-12)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 60), st.integers(1, 4), st.integers(0, 2**16)), min_size=1, max_size=6)
)
def test_predict_decode_combines_traces_of_different_lengths(specs):
    """Traces of different lengths (trajectories cut by a stop token): tokens/s is all tokens
    over all time, so it lies between the slowest and the fastest trace's own speed. The old
    code divided the *first* trace's tokens by the mean time: two plain traces of 10 and 30
    tokens at 100 tokens/s each were predicted at 50 tokens/s."""
    from specdec_core.llm import predict as P

    costs = P.CostModel({1: 10.0, 5: 14.0}, {0: 0.0, 4: 6.0}, {0: 0.2, 4: 0.5})
    traces = [
        P.sampled_traces(np.random.default_rng(seed).random(n), g, sims=1, seed=seed)[0]
        for n, g, seed in specs
    ]
    own = [P.predict_decode(costs, t)["tokens_per_s"] for t in traces]
    ms = [P.predict_decode(costs, t)["decode_ms"] for t in traces]
    pr = P.predict_decode(costs, traces)
    assert pr["decode_ms"] == pytest.approx(np.mean(ms))
    assert pr["tokens_per_s"] == pytest.approx(1e3 * sum(t.tokens for t in traces) / sum(ms))
    assert min(own) * (1 - 1e-12) <= pr["tokens_per_s"] <= max(own) * (1 + 1e-12)
    assert P.predict_decode(costs, traces + traces)["tokens_per_s"] == pytest.approx(pr["tokens_per_s"])
    plain = P.CostModel({1: 10.0})
    assert P.predict_decode(plain, [P.plain_trace(10), P.plain_trace(30)])["tokens_per_s"] == pytest.approx(
        100.0
    )


def test_range_summary_of_the_stored_results():
    """Every stored temperature-1 speculative prediction has a range; the counts are consistent
    and a prediction moved far from the measurement leaves its range."""
    from specdec_core.llm import report
    from specdec_core.measured import read_capstone

    cap = read_capstone()
    inside, ranged, big = report.range_summary(cap)
    t1 = [r.config for r in cap.runs if r.config.temperature == 1.0 and r.config.draft != "plain"]
    assert ranged == len(t1) and 0 <= big <= ranged - inside and inside <= ranged
    c = t1[0]
    m = cap.find(c).decode_tokens_per_s.median
    pr = cap.prediction(c)
    values = tuple(p.replace(low=2 * m, high=3 * m) if p.config == c else p for p in cap.predictions.values)
    moved = cap.replace(predictions=cap.predictions.replace(values=values))
    assert report.range_summary(moved)[0] == inside - int(pr.low <= m <= pr.high)


def test_goal_gap_reads_the_best_predicted_genuine_q_configuration():
    """report.goal_gap: per workload, the genuine-q configuration the prediction ranked best (not the
    best measured), its measured interval against the goal, and the α that goal needs at the
    measured costs."""
    from specdec_core.llm import predict as P
    from specdec_core.llm import report
    from specdec_core.measured import read_capstone

    cap = read_capstone()
    lines = report.goal_gap(cap, goal=1.1)
    assert [ln.split(":")[0] for ln in lines] == list(report.WORKLOADS)
    for w, line in zip(report.WORKLOADS, lines):
        cands = [
            p
            for p in cap.predictions.values
            if p.config.workload == w and p.config.temperature == 1.0 and p.config.draft in report.GENUINE_Q
        ]
        best = max(cands, key=lambda p: p.tokens_per_s).config
        assert f"{report.DRAFTS[best.draft]} γ = {best.gamma} " in line
        need = P.break_even_alpha(P.CostModel.from_micro(cap.micro, 1.0, best.draft), best.gamma, speedup=1.1)
        assert f"×1.1 needs α ≥ {need:.2f}" in line
        pr = cap.find(best).speedup_paired
        want = (
            "above ×1.1" if pr.low > 1.1 else ("below ×1.1" if pr.high < 1.1 else "×1.1 inside its interval")
        )
        assert want in line
    # a goal no round of these γ can reach, and one every run clears
    assert all("no α reaches it" in ln and "below ×50" in ln for ln in report.goal_gap(cap, goal=50))
    assert all("above ×0.1" in ln for ln in report.goal_gap(cap, goal=0.1))

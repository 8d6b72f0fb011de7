"""Timed runs, the adaptive-γ loop, the prediction, and the report helpers (tiny model and the
stored results file; no timing is asserted, only the accounting)."""
from __future__ import annotations

import numpy as np
import pytest

from specdec_core import autoregressive_generate
from specdec_core.llm import CachedTarget, PromptLookupDraft, load_model
from specdec_core.llm.runs import (RunStats, expected_tokens_iid, one_step_gap, position_cost_curve,
                                   predict_tokens_per_second, run_plain, run_speculative,
                                   speculative_generate_adaptive)
from specdec_core.llm.testing import write_tiny_gguf


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    write_tiny_gguf(path)
    return load_model(str(path), cache=False)


def _copy_prompt(lm):
    return tuple(lm.codec.encode("the cat sat on the mat. the cat sat on the mat. the cat"))


def test_adaptive_greedy_equals_plain_and_falls_back_to_single_steps(lm):
    m, prompt = lm.model, _copy_prompt(lm)
    plain = autoregressive_generate(CachedTarget(m, 0.0), prompt, max_new_tokens=24,
                                    rng=np.random.default_rng(0)).tokens
    res = speculative_generate_adaptive(CachedTarget(m, 0.0), PromptLookupDraft(m.cfg.vocab_size), prompt,
                                        gamma=6, max_new_tokens=24, rng=np.random.default_rng(0))
    assert res.tokens == plain
    assert all(0 <= r.gamma <= 6 for r in res.records)
    no_match = speculative_generate_adaptive(CachedTarget(m, 0.0), PromptLookupDraft(m.cfg.vocab_size),
                                             (5, 6), gamma=4, max_new_tokens=1, rng=np.random.default_rng(0))
    assert [r.gamma for r in no_match.records] == [0]


@pytest.mark.parametrize("adaptive", [False, True])
def test_run_stats_accounting(lm, adaptive):
    m, prompt = lm.model, _copy_prompt(lm)
    tgt = CachedTarget(m, 1.0)
    s = run_speculative(tgt, PromptLookupDraft(m.cfg.vocab_size), prompt, 4, 30, np.random.default_rng(3),
                        adaptive=adaptive)
    assert s.n_tokens == 30 == sum(k * c for k, c in enumerate(s.k_hist))
    assert s.rounds == sum(s.k_hist) == len(s.round_gammas)
    assert s.accepted + s.rejected <= s.proposed == sum(s.round_gammas)
    assert sum(a for a, _ in s.accept_by_pos) == s.accepted
    assert s.target_s + s.draft_s <= s.wall_s and s.overhead_s >= 0
    d = s.to_dict()
    assert d["n_tokens"] == 30 and d["tokens_per_s"] > 0
    p = run_plain(tgt, prompt, 10, np.random.default_rng(3))
    assert p.rounds == 10 and p.k_hist == [0, 10] and p.proposed == 0


def test_expected_tokens_iid():
    assert expected_tokens_iid(0.5, 2) == pytest.approx(1.75)
    assert expected_tokens_iid(1.0, 4) == 5.0
    assert expected_tokens_iid(0.0, 4) == 1.0


def test_prediction_uses_notebook05_model():
    s = RunStats("x", 3, 0.0, tuple(range(12)), wall_s=0.1, target_s=0.08, draft_s=0.004, rounds=4,
                 proposed=12, accepted=8, rejected=4, k_hist=[0, 0, 2, 0, 2], round_gammas=[3, 3, 3, 3],
                 accept_by_pos=[[4, 4], [2, 4], [2, 2]])
    cost = {1: 10.0, 4: 20.0}
    per = s.per_round_ms()
    want = 3.0 * 1000 / (per["draft"] + 20.0 + per["overhead"])
    assert predict_tokens_per_second(s, cost, use="k_hist") == pytest.approx(want)
    ek = expected_tokens_iid(8 / 12, 3)
    assert predict_tokens_per_second(s, cost, use="alpha") == pytest.approx(ek * 1000 / (per["draft"] + 20.0 + per["overhead"]))


def test_cost_curve_and_one_step_gap(lm):
    c = position_cost_curve(lm.model, _copy_prompt(lm), [1, 3, 8], reps=2)
    assert sorted(c) == [1, 3, 8] and all(lo > 0 and lo <= med for lo, med in c.values())
    p = np.array([0.5, 0.3, 0.2])
    assert one_step_gap(p, np.array([0.0, 1.0, 0.0])) < 1e-15
    assert one_step_gap(p, np.array([0.2, 0.2, 0.6])) < 1e-15


def test_report_reads_the_stored_results():
    import matplotlib.pyplot as plt

    from specdec_core.llm import report

    res = report.load_results()
    assert {"machine", "cost_curve", "runs", "plain", "layer_skip_alpha", "gof", "best_copy_greedy"} <= set(res)
    th = res["settings"]["threads"][0]
    assert report.speedup_table(res, threads=th, temperature=0.0)
    assert report.round_profile_lines(res, threads=th)
    assert "cores" in report.how(res, th)
    from specdec_core.plots import llm as llm_figures

    for fig in (llm_figures.cost_curve_figure(res, {1: 10.0}), llm_figures.alpha_figure(res),
                llm_figures.prediction_figure(res, threads=th)):
        assert fig.axes
        plt.close(fig)
    assert all(r["greedy_equal"] for r in res["runs"] if r["temperature"] == 0)
    assert not res["gof"]["rejected"]
    q = report.MEASURE_QUESTION
    assert 0 <= q.answer < len(q.options)

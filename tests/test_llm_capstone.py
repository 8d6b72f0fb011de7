"""Notebook 09's measurement method on the tiny GGUF fixture (no real model, no timing asserted):
fresh state for every timed run, decode-only vs end-to-end, a predictor that cannot see the run
it predicts, the n-gram and trained early-exit drafts (with law tests), and the power of the
real-model law test."""

from __future__ import annotations

import inspect
from collections import Counter

import numpy as np
import pytest

from specdec_core import chi_square_gof, speculative_generate
from specdec_core.llm import CachedTarget, PromptLookupDraft, lawtest
from specdec_core.llm import predict as P
from specdec_core.llm.drafts import ExitDraft, NgramDraft, collect_residuals, fit_exit_map
from specdec_core.llm.runs import StaleStateError, run_speculative, sweep, timed_run
from specdec_core.llm.testing import sequence_law, write_tiny_gguf


def _prompt(lm):
    return tuple(lm.codec.encode("the cat sat on the mat. the cat sat on the mat. the cat"))


# ---------------------------------------------------------------- clean state


class SpyTarget(CachedTarget):
    """Records how many cached positions it held when a timed run started using it."""

    started_with: list = []  # (the target itself, cached positions): holding the object keeps
    # its id from being reused by a later target once the sweep drops it (ids of freed objects are)

    def prefill(self, prompt):
        SpyTarget.started_with.append((self, self.cache.n))
        super().prefill(prompt)


def test_sweep_gives_every_timed_run_a_fresh_target_and_draft(lm):
    m, V = lm.model, lm.cfg.vocab_size
    SpyTarget.started_with = []
    drafts = []

    def make_draft(name, temp):
        d = NgramDraft(V, temperature=temp) if name == "ngram" else PromptLookupDraft(V)
        drafts.append(d)
        return d

    runs = sweep(
        lambda temp: SpyTarget(m, temp),
        make_draft,
        {"a": _prompt(lm)},
        [("lookup", 3, True), ("ngram", 2, False)],
        temperatures=(0.0, 1.0),
        reps=2,
        max_new_tokens=6,
    )
    assert len(runs) == 2 * 2 * 3
    # every timed run: a target never used before, with an empty cache when the run began
    assert [n for _, n in SpyTarget.started_with] == [0] * len(runs)
    assert len({id(t) for t, _ in SpyTarget.started_with}) == len(runs)
    assert len(set(map(id, drafts))) == len(drafts)
    # interleaved: every block (repetition × temperature) runs plain and each configuration once,
    # in a shuffled order, so plain does not always run first
    blocks = [runs[i : i + 3] for i in range(0, len(runs), 3)]
    assert all(sorted(r.draft for r in b) == ["lookup", "ngram", "plain"] for b in blocks)
    assert len({tuple(r.draft for r in b) for b in blocks}) > 1


def test_a_surviving_cache_is_refused(lm):
    m = lm.model
    tgt = CachedTarget(m, 0.0)
    timed_run(tgt, None, _prompt(lm), max_new_tokens=4, rng=np.random.default_rng(0))
    with pytest.raises(StaleStateError):
        timed_run(tgt, None, _prompt(lm), max_new_tokens=4, rng=np.random.default_rng(0))
    d = NgramDraft(lm.cfg.vocab_size)
    d.sync(_prompt(lm))
    with pytest.raises(StaleStateError):
        timed_run(
            CachedTarget(m, 0.0), d, _prompt(lm), gamma=2, max_new_tokens=4, rng=np.random.default_rng(0)
        )


def test_decode_only_excludes_the_prefill(lm):
    m = lm.model
    tgt = CachedTarget(m, 0.0)
    s = timed_run(
        tgt,
        ExitDraft(m, 1, temperature=0.0),
        _prompt(lm),
        gamma=3,
        max_new_tokens=10,
        rng=np.random.default_rng(0),
    )
    assert s.prefill_s > 0 and s.e2e_s == pytest.approx(s.prefill_s + s.wall_s)
    assert s.tokens_per_s > s.e2e_tokens_per_s
    # no decoding call recomputed the prompt: at most γ + 1 new positions per target call
    assert max(c[1] for c in tgt.log.calls) <= 4
    again = run_speculative(
        tgt, PromptLookupDraft(m.cfg.vocab_size), _prompt(lm), 3, 10, np.random.default_rng(0)
    )  # resets first
    assert again.n_tokens == 10


# ---------------------------------------------------------------- the prediction


def test_predictor_cannot_take_run_records(lm):
    assert list(inspect.signature(P.predict_decode).parameters) == ["costs", "traces"]
    s = timed_run(
        CachedTarget(lm.model, 0.0), None, _prompt(lm), max_new_tokens=3, rng=np.random.default_rng(0)
    )
    cost = P.CostModel({1: 10.0, 2: 12.0})
    for bad in (s, vars(s), [s]):
        with pytest.raises(ValueError, match="traces"):
            P.predict_decode(cost, bad)
    with pytest.raises(ValueError, match="costs"):
        P.predict_decode({"verify_ms": {1: 10.0}}, P.plain_trace(3))


def test_cost_model_arithmetic():
    cost = P.CostModel({1: 10.0, 3: 20.0}, {0: 0.0, 2: 4.0}, {0: 1.0, 2: 2.0})
    tr = P.RoundTrace((2, 2), (2, 0))  # 3 tokens, then 1 token
    pr = P.predict_decode(cost, tr)
    first = 20.0 * 0.5 + 10.0 * 0.5 + 4.0 + 2.0  # T = max(γ, 1) = 2 → interpolated 15 ms
    assert pr["decode_ms"] == pytest.approx(first + 20.0 + 4.0 + 2.0)
    assert pr["tokens_per_s"] == pytest.approx(1e3 * 4 / pr["decode_ms"])
    with pytest.raises(ValueError):
        P.CostModel({1: -1.0})


def test_greedy_teacher_forcing_reproduces_the_rounds_exactly(lm):
    """At temperature 0 the rounds follow from the draft along the target's greedy trajectory."""
    m, V = lm.model, lm.cfg.vocab_size
    prompt = _prompt(lm)
    traj = timed_run(
        CachedTarget(m, 0.0), None, prompt, max_new_tokens=16, rng=np.random.default_rng(0)
    ).tokens
    for draft_fn, adaptive in (
        (lambda: PromptLookupDraft(V), True),
        (lambda: PromptLookupDraft(V), False),
        (lambda: NgramDraft(V, temperature=0.0), False),
    ):
        for g in (1, 3, 5):
            res = run_speculative(
                CachedTarget(m, 0.0), draft_fn(), prompt, g, 16, np.random.default_rng(0), adaptive=adaptive
            )
            tr = P.greedy_trace(draft_fn(), prompt, traj, g, adaptive=adaptive)
            assert res.tokens == tuple(traj)
            assert list(tr.gammas) == res.round_gammas
            assert sum(tr.accepted) == res.accepted


def test_sampled_traces_limits():
    (t1,) = P.sampled_traces(np.ones(10), 3, sims=1)
    assert t1.gammas == (3, 3, 1) and t1.accepted == (3, 3, 1)
    (t0,) = P.sampled_traces(np.zeros(5), 3, sims=1)
    assert t0.accepted == (0,) * 5 and t0.tokens == 5
    (ta,) = P.sampled_traces(np.ones(6), 4, avail=np.zeros(6, int), sims=1)
    assert ta.gammas == (0,) * 6
    p = np.array([[0.5, 0.5], [1.0, 0.0]])
    assert P.alpha_along(p, np.array([[1.0, 0.0], [0.5, 0.5]])).tolist() == [0.5, 0.5]


# ---------------------------------------------------------------- the drafts


def test_ngram_draft_is_a_full_distribution_and_counts_incrementally(lm):
    V = lm.cfg.vocab_size
    prompt = list(_prompt(lm))
    d = NgramDraft(V)
    q = d(prompt)
    assert q.shape == (V,) and (q > 0).all() and abs(q.sum() - 1) < 1e-12
    # the token that followed the last two tokens earlier gets most of the mass
    follow = [prompt[i + 2] for i in range(len(prompt) - 2) if prompt[i : i + 2] == prompt[-2:]]
    assert int(np.argmax(q)) in follow and q.max() > 0.3
    d.sync(prompt + [5, 6])
    fresh = NgramDraft(V)
    np.testing.assert_allclose(d(prompt + [5, 6]), fresh(prompt + [5, 6]), rtol=0, atol=1e-15)
    g = NgramDraft(V, temperature=0.0)(prompt)
    assert g.max() == 1.0 and int(np.argmax(g)) == int(np.argmax(q))
    for bad in (dict(discount=0.0), dict(discount=1.0), dict(floor=0.0), dict(n=0), dict(temperature=-1)):
        with pytest.raises(ValueError):
            NgramDraft(V, **bad)


def test_fit_exit_map_recovers_an_affine_map():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 8)).astype(np.float32)
    A = rng.standard_normal((8, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    A2, b2 = fit_exit_map(X, X @ A + b, shrink=0.0)
    np.testing.assert_allclose(A2, A, atol=1e-4)
    np.testing.assert_allclose(b2, b, atol=1e-4)
    with pytest.raises(ValueError):
        fit_exit_map(X, X[:, :4])
    # infinite shrinkage is layer skipping: A → I, b → mean difference
    A3, b3 = fit_exit_map(X, X @ A + b, shrink=1e9)
    np.testing.assert_allclose(A3, np.eye(8), atol=1e-5)


def test_exit_draft_identity_and_full_depth(lm):
    m = lm.model
    prompt = list(_prompt(lm))
    L = m.cfg.n_layers
    full = ExitDraft(m, L)  # all layers, no map: the target itself
    np.testing.assert_allclose(full.logits_along(prompt), m.logits_for(prompt), rtol=1e-5, atol=1e-5)
    res = collect_residuals(m, [prompt], [1, L])
    A, b = fit_exit_map(res[1], res[L])
    d = ExitDraft(m, 1, A, b, temperature=1.0)
    q = d(prompt)
    assert abs(q.sum() - 1) < 1e-9 and d.cache.n == len(prompt)
    # the trained map fits the last layer better than skipping (on its own fitting data)
    err_t = np.mean((res[1] @ A + b - res[L]) ** 2)
    err_u = np.mean((res[1] - res[L]) ** 2)
    assert err_t < err_u
    with pytest.raises(ValueError):
        ExitDraft(m, 0)
    with pytest.raises(ValueError):
        ExitDraft(m, 1, A, None)


def _law_test(m, prefix, draft_fn, runs=400, seed=5):
    law = sequence_law(m, prefix)
    tgt = CachedTarget(m, 1.0)
    rng = np.random.default_rng(seed)
    samples, acc, prop, bonus, corr = Counter(), 0, 0, 0, 0
    for _ in range(runs):
        r = speculative_generate(tgt, draft_fn(), prefix, gamma=2, max_new_tokens=3, rng=rng)
        samples[r.tokens if r.tokens in law else "other"] += 1
        acc += r.accepted
        prop += r.proposed
        bonus += r.bonus
        corr += r.corrections
    return chi_square_gof(samples, law, threshold=1e-3), acc, prop, bonus, corr


@pytest.mark.parametrize("which", ["ngram", "exit"])
def test_end_to_end_law_with_the_new_drafts(lm, which):
    """400 speculative runs of 3 tokens (γ = 2, temperature 1) against the exact 3-token law
    (chi-square, reject if p < 0.001); acceptance, correction and bonus all happen."""
    m, V = lm.model, lm.cfg.vocab_size
    prefix = _prompt(lm)[:6]
    if which == "ngram":

        def draft_fn():
            return NgramDraft(V, discount=0.3, floor=0.3)
    else:
        res = collect_residuals(m, [list(_prompt(lm))], [1, m.cfg.n_layers])
        A, b = fit_exit_map(res[1], res[m.cfg.n_layers])

        def draft_fn():
            return ExitDraft(m, 1, A, b, temperature=1.0)

    g, acc, prop, bonus, corr = _law_test(m, prefix, draft_fn)
    assert not g.rejected, str(g)
    assert 0 < acc < prop and bonus > 0 and corr > 0


def test_law_test_catches_corrections_from_p(lm):
    """The same check rejects the broken variant that corrects from p."""
    m, V = lm.model, lm.cfg.vocab_size
    prefix = _prompt(lm)[:6]
    p = CachedTarget(m, 1.0)(prefix)
    q = NgramDraft(V, discount=0.3, floor=0.3)(prefix)
    b = lawtest.broken_first_token_law(p, q)
    n, pw = lawtest.sample_size(p, b)
    assert pw >= 0.9
    law = lawtest.law_dict(p, n)
    for rule, reject in (("residual", False), ("target", True)):
        counts, _ = lawtest.first_token_samples(
            lawtest.MemoTarget(CachedTarget(m, 1.0)), q, prefix, n, correction=rule, seed=1
        )
        g = chi_square_gof(lawtest.relabel(counts, law), law, threshold=1e-3)
        assert g.rejected == reject, (rule, str(g))


@pytest.mark.parametrize("conc", [1.0, 0.2])
def test_power_calculation_matches_simulation(conc):
    """The computed power agrees with chi_square_gof run on simulated samples (±0.06), with
    and without pooled small cells (conc = 0.2 gives many tokens below 5 expected counts)."""
    rng = np.random.default_rng(0)
    V = 40
    p = rng.dirichlet(np.full(V, conc))
    q = rng.dirichlet(np.full(V, conc))
    b = lawtest.broken_first_token_law(p, q)
    assert abs(b.sum() - 1) < 1e-12 and np.all(b >= 0)
    n = 150
    pw = lawtest.power(p, b, n, threshold=1e-2)
    assert 0.2 < pw < 0.98
    law = lawtest.law_dict(p, n)
    hits = 0
    sims = 400
    for _ in range(sims):
        c = rng.multinomial(n, b)
        g = chi_square_gof(
            lawtest.relabel(Counter({i: int(c[i]) for i in range(V) if c[i]}), law), law, threshold=1e-2
        )
        hits += g.rejected
    assert abs(hits / sims - pw) < 0.06
    assert abs(lawtest.power_approx(p, b, n, threshold=1e-2) - pw) < 0.15
    assert lawtest.power(p, p, n) < 0.01  # the correct law: rejected at the level only
    assert lawtest.power(p, b, 4 * n) > pw


def test_cache_is_built_tensor_by_tensor_and_memory_mapped(tmp_path):
    """Both loads return memory-mapped weights equal to the in-memory ones (no second copy)."""
    from specdec_core.llm.loader import load_gguf

    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path)
    _, mem, _, _ = load_gguf(str(path), cache=False)
    for attempt in range(2):
        _, w, _, info = load_gguf(str(path), cache=str(tmp_path / "cache"))
        assert info.from_cache == (attempt == 1)
        assert sorted(w) == sorted(mem)
        for k in mem:
            np.testing.assert_array_equal(w[k], mem[k])
        assert isinstance(w["head"], np.memmap) and isinstance(w["0.wqkv"], np.memmap)

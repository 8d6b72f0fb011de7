"""The feature draft (specdec_core.llm.features) on the tiny random GGUF fixture: the closed-form
fit, argument validation, the draft protocol with and without a shortlist, where the draft's
starting state comes from, and law tests that can fail (a broken variant is caught)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from specdec_core import chi_square_gof, speculative_generate
from specdec_core.llm import CachedTarget, lawtest, probs_from_logits
from specdec_core.llm.features import (
    FeatureDraft,
    FeatureMap,
    alpha_by_depth,
    collect_features,
    fit_feature_map,
    shortlist_from_counts,
)
from specdec_core.llm.testing import sequence_law
from specdec_core.sampling import speculative_round
from specdec_core.verify import correction_weights

TEXT = "the cat sat on the mat. the cat sat on the mat. then the cat sat on the hat, 2024."


@pytest.fixture(scope="module")
def feats(lm):
    rng = np.random.default_rng(0)
    V = lm.cfg.vocab_size
    seqs = [lm.codec.encode(TEXT)] + [list(rng.integers(3, V, 40)) for _ in range(20)]
    return collect_features(lm.model, seqs)


@pytest.fixture(scope="module")
def fmap(feats):
    """The defaults: [h_t, h_{t−1}, e(x_{t+1})] + 1024 random features, ridge 1e-2."""
    return fit_feature_map(feats.h, feats.e, feats.h_next, h_prev=feats.h_prev)


def _prefix(lm):
    return tuple(lm.codec.encode(TEXT))[:6]


# ---------------------------------------------------------------- fit


@pytest.mark.parametrize("inputs", ["h,e", "h,hprev,e"])
def test_fit_recovers_a_known_linear_map(inputs):
    rng = np.random.default_rng(1)
    N, D = 600, 8
    h, e, hp = (rng.standard_normal((N, D)).astype(np.float32) for _ in range(3))
    A, B, C = (rng.standard_normal((D, D)) for _ in range(3))
    b = rng.standard_normal(D)
    y = h @ A + e @ B + b + (hp @ C if inputs == "h,hprev,e" else 0)
    fm = fit_feature_map(h, e, y.astype(np.float32), h_prev=hp, ridge=0.0, inputs=inputs, n_random=0)
    want = np.concatenate([A, C, B] if inputs == "h,hprev,e" else [A, B]).T
    np.testing.assert_allclose(fm.W, want, atol=1e-4)
    np.testing.assert_allclose(fm.b, b, atol=1e-4)
    assert fm.W.dtype == fm.b.dtype == np.float32 and fm.n == N and fm.ridge == 0.0
    np.testing.assert_allclose(fm.apply(h, e, hp), y, atol=1e-3)
    with pytest.raises(dataclasses_error()):
        fm.ridge = 1.0  # frozen
    # a strong ridge shrinks toward the mean prediction
    shrunk = fit_feature_map(h, e, y.astype(np.float32), h_prev=hp, ridge=1e6, inputs=inputs, n_random=0)
    assert np.abs(shrunk.W).max() < 1e-3
    np.testing.assert_allclose(shrunk.b, y.mean(0), atol=1e-2)


def dataclasses_error():
    import dataclasses

    return dataclasses.FrozenInstanceError


def test_random_features_and_renorm(feats, lm):
    g = lm.model.w["output_norm"]
    kw = dict(ridge=1e-2, n_random=64, renorm=True, norm_weight=g, seed=3, inputs="h,e")
    fm = fit_feature_map(feats.h, feats.e, feats.h_next, **kw)
    assert fm.n_random == 64 and fm.W.shape == (lm.cfg.dim, 2 * lm.cfg.dim + 64)
    out = fm.apply(feats.h[:5], feats.e[:5])
    np.testing.assert_allclose(np.sqrt(np.mean((out / g) ** 2, axis=1)), 1.0, rtol=1e-4)
    # the same seed gives the same random features
    fm2 = fit_feature_map(feats.h, feats.e, feats.h_next, **kw)
    np.testing.assert_array_equal(fm.R, fm2.R)


def _bad(name):
    rng = np.random.default_rng(0)
    h, e, y = (rng.standard_normal((30, 4)).astype(np.float32) for _ in range(3))
    nan = y.copy()
    nan[3, 1] = np.nan
    cases = {
        "h": ((h[:, 0], e, y), {}),
        "e": ((h, e[:10], y), {}),
        "h_next": ((h, e, nan), {}),
        "rows": ((h[:1], e[:1], y[:1]), {}),
        "ridge": ((h, e, y), {"ridge": -1.0}),
        "ridge_nan": ((h, e, y), {"ridge": float("nan")}),
        "inputs": ((h, e, y), {"inputs": "h"}),
        "h_prev": ((h, e, y), {"inputs": "h,hprev,e"}),
        "h_prev_shape": ((h, e, y), {"inputs": "h,hprev,e", "h_prev": h[:, :2]}),
        "n_random": ((h, e, y), {"n_random": -2}),
        "norm_weight": ((h, e, y), {"renorm": True}),
    }
    args, kw = cases[name]
    if "inputs" not in kw:
        kw = {"inputs": "h,e", **kw}
    return args, kw


@pytest.mark.parametrize(
    "case,word",
    [
        ("h", "h"),
        ("e", "e"),
        ("h_next", "h_next"),
        ("rows", "at least 2 rows"),
        ("ridge", "ridge"),
        ("ridge_nan", "ridge"),
        ("inputs", "inputs"),
        ("h_prev", "h_prev"),
        ("h_prev_shape", "h_prev"),
        ("n_random", "n_random"),
        ("norm_weight", "norm_weight"),
    ],
)
def test_fit_validates_its_arguments(case, word):
    args, kw = _bad(case)
    with pytest.raises(ValueError, match=word):
        fit_feature_map(*args, **kw)


def test_collect_features_are_aligned(lm):
    m = lm.model
    seqs = [lm.codec.encode(TEXT)[:10], [5, 6, 7], [9]]  # a 1-token sequence gives no rows
    F = collect_features(m, seqs)
    assert len(F.h) == 9 + 2 and F.h.dtype == np.float32
    h0 = m.forward(seqs[0], m.new_cache())
    np.testing.assert_allclose(F.h[:9], h0[:9], atol=1e-6)
    np.testing.assert_allclose(F.h_next[:9], h0[1:], atol=1e-6)
    np.testing.assert_array_equal(F.e[:9], m.embed(seqs[0][1:]))
    np.testing.assert_array_equal(F.h_prev[1:9], F.h[:8])
    np.testing.assert_array_equal(F.h_prev[0], F.h[0])
    assert list(F.seq) == [0] * 9 + [1, 1] and list(F.pos[9:]) == [0, 1]
    with pytest.raises(ValueError):
        collect_features(m, [[1]])


def test_alpha_by_depth_is_one_for_a_perfect_map(lm, feats):
    """A 'map' that returns the true next state gives α = 1 at depth 1 (checks the alignment)."""
    m = lm.model
    D = lm.cfg.dim
    # fit on h_next itself as input 'h': W picks h_next exactly when the target is h_next
    fm = fit_feature_map(feats.h_next, feats.e, feats.h_next, ridge=0.0, inputs="h,e", n_random=0)
    F2 = feats._replace(h=feats.h_next)
    a = alpha_by_depth(m, fm, F2, depth=1, temperatures=(1.0, 0.0))
    assert a["full"][1.0][0] > 0.999 and a["full"][0.0][0] == 1.0
    assert isinstance(fm, FeatureMap) and fm.dim == D


def test_shortlist_from_counts():
    ids = shortlist_from_counts([[5, 5, 5, 2, 2, 9], [9, 9, 9, 1]], 2)
    np.testing.assert_array_equal(ids, [5, 9])
    np.testing.assert_array_equal(shortlist_from_counts([[3, 1]], 10), [1, 3])
    with pytest.raises(ValueError, match="size"):
        shortlist_from_counts([[1]], 0)


# ---------------------------------------------------------------- the draft


@pytest.mark.parametrize("short", [False, True])
def test_feature_draft_follows_the_protocol(lm, fmap, short):
    m, V = lm.model, lm.cfg.vocab_size
    ids = np.arange(3, V, 2) if short else None
    tgt = CachedTarget(m, 1.0)
    d = FeatureDraft(tgt, fmap, 1.0, shortlist=ids)
    prefix = _prefix(lm)
    tgt.prefill(prefix[:-1])  # the usual state inside a run: L − 1 positions cached
    rng = np.random.default_rng(0)
    for _ in range(5):
        toks, q = d.propose(prefix, 4, rng)
        assert len(toks) == 4 and q.shape == (4, V)
        np.testing.assert_allclose(q.sum(1), 1.0, atol=1e-12)
        assert all(q[i, t] > 0 for i, t in enumerate(toks))
        if short:
            outside = np.setdiff1d(np.arange(V), ids)
            assert (q[:, outside] == 0).all() and set(toks) <= set(ids.tolist())
    # the rows are the chained map along the proposals
    L = len(prefix)
    h, hp = tgt.cache.hidden[L - 2 : L - 1], tgt.cache.hidden[L - 3 : L - 2]
    W = m.w["head"] if ids is None else m.head_rows(ids)
    for i, t in enumerate((prefix[-1],) + tuple(toks[:-1])):
        h, hp = fmap.apply(h, m.embed([t]), hp), h
        want = probs_from_logits(h @ W.T, 1.0)[0]
        got = q[i] if ids is None else q[i, ids]
        np.testing.assert_allclose(got, want, atol=1e-6)
    assert d.log.count("draft") == 5 and d.log.count("draft-prefill") == 0
    np.testing.assert_allclose(d(prefix), q[0], atol=1e-12)
    assert d.fresh is False and tgt.cache.n == len(prefix) - 1  # proposing never scores positions
    # temperature 0: one-hot rows
    toks0, q0 = FeatureDraft(tgt, fmap, 0.0, shortlist=ids).propose(prefix, 3, rng)
    assert ((q0 == 1).sum(1) == 1).all() and (q0[np.arange(3), toks0] == 1).all()


def test_feature_draft_start_states(lm, fmap):
    """Cache holding L positions: the first row is the target's own p (no map). Fresh target:
    the fallback fills the cache up to L − 1 (logged as draft time) and gives the rows of the
    usual state. Rejected positions beyond the common prefix are not used."""
    m = lm.model
    prefix = _prefix(lm)
    tgt = CachedTarget(m, 1.0)
    d = FeatureDraft(tgt, fmap)
    tgt.prefill(prefix)
    np.testing.assert_allclose(d(prefix), tgt(prefix), atol=1e-6)
    usual = CachedTarget(m, 1.0)
    usual.prefill(prefix[:-1])
    want = FeatureDraft(usual, fmap)(prefix)
    fresh = CachedTarget(m, 1.0)
    fd = FeatureDraft(fresh, fmap)
    assert fd.fresh
    np.testing.assert_allclose(fd(prefix), want, atol=1e-6)
    assert fd.fallbacks == 1 and fd.log.count("draft-prefill") == 1 and fresh.cache.n == len(prefix) - 1
    # a cache holding a rejected branch: [prefix[:-2], x, y] with x ≠ prefix[-2]
    other = CachedTarget(m, 1.0)
    other.prefill(prefix[:-2] + ((prefix[-2] + 1) % lm.cfg.vocab_size, 7))
    od = FeatureDraft(other, fmap)
    np.testing.assert_allclose(od(prefix), want, atol=1e-6)
    assert other.cache.tokens == list(prefix[:-1])
    with pytest.raises(ValueError):
        od.propose((), 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="shortlist|rows"):
        FeatureDraft(tgt, fmap, shortlist=[lm.cfg.vocab_size])
    with pytest.raises(ValueError, match="temperature"):
        FeatureDraft(tgt, fmap, temperature=-1)


# ---------------------------------------------------------------- law tests


@pytest.mark.parametrize("short", [False, True])
def test_end_to_end_law_with_the_feature_draft(lm, fmap, short):
    """400 speculative runs of 3 tokens (γ = 2, temperature 1, one cached target reused, reset
    every third run so the fallback start is exercised too) against the exact 3-token law
    (chi-square, cells with expected count < 5 pooled, reject if p < 0.001)."""
    m, V = lm.model, lm.cfg.vocab_size
    ids = np.arange(3, V, 2) if short else None
    prefix = _prefix(lm)
    law = sequence_law(m, prefix)
    tgt = CachedTarget(m, 1.0)
    d = FeatureDraft(tgt, fmap, 1.0, shortlist=ids)
    rng = np.random.default_rng(5)
    samples, acc, prop, corr, outside = Counter(), 0, 0, 0, 0
    for i in range(400):
        if i % 3 == 0:
            tgt.reset()
        r = speculative_generate(tgt, d, prefix, gamma=2, max_new_tokens=3, rng=rng)
        samples[r.tokens if r.tokens in law else "other"] += 1
        acc += r.accepted
        prop += r.proposed
        corr += r.corrections
        if short:
            outside += sum(t not in set(ids.tolist()) for t in r.tokens)
    g = chi_square_gof(samples, law, threshold=1e-3)
    assert not g.rejected, str(g)
    assert 0 < acc < prop and corr > 0 and d.fallbacks > 0
    if short:
        assert outside > 0  # tokens the draft can never propose still come out, via corrections


class LyingDraft(FeatureDraft):
    """BROKEN on purpose: samples from q but reports a flattened row r ∝ √q to the verifier."""

    def propose(self, prefix, gamma, rng):
        toks, q = super().propose(prefix, gamma, rng)
        r = np.sqrt(q)
        return toks, r / r.sum(axis=1, keepdims=True)


class InRound:
    """Put the target's cache in the state it has inside a run (L − 1 positions) before each
    proposal, so every round drafts through the map (not from the cached exact state)."""

    def __init__(self, draft):
        self.draft = draft

    def propose(self, prefix, gamma, rng):
        c = self.draft.target.cache
        c.rollback(min(c.common_prefix(prefix), len(prefix) - 1))
        return self.draft.propose(prefix, gamma, rng)


def _first_token_counts(draft, tgt, prefix, n, correction, seed):
    rng = np.random.default_rng(seed)
    counts = Counter()
    for _ in range(n):
        r = speculative_round(tgt, InRound(draft), prefix, gamma=1, rng=rng, correction=correction)
        counts[int(r.emitted[0])] += 1
    return counts


def test_law_test_catches_broken_variants(lm, fmap):
    """First token of a γ = 1 round: correct → the target's p; corrections drawn from p, or a
    draft reporting a row other than the one it sampled from → another law, computed exactly,
    with a sample size whose simulated power is ≥ 0.9 at threshold 1e-3."""
    m = lm.model
    prefix = _prefix(lm)
    tgt = CachedTarget(m, 1.0)
    d = FeatureDraft(tgt, fmap, 1.0, shortlist=np.arange(3, lm.cfg.vocab_size, 2))
    tgt.prefill(prefix[:-1])
    q = d(prefix)
    p = tgt(prefix)
    # the lying draft: proposal x ~ q, accepted with min(1, p/r), corrections from max(p − r, 0)
    r = np.sqrt(q) / np.sqrt(q).sum()
    acc = q * np.minimum(1.0, np.divide(p, r, out=np.zeros_like(p), where=r > 0))
    b_lie = (
        acc
        + (1 - acc.sum()) * correction_weights(p, r, "residual") / correction_weights(p, r, "residual").sum()
    )
    cases = [
        ("correct", d, "residual", p),
        ("corrections from p", d, "target", lawtest.broken_first_token_law(p, q)),
        ("lying q", LyingDraft(tgt, fmap, 1.0, shortlist=d.rows), "residual", b_lie),
    ]
    n = max(lawtest.sample_size(p, b)[0] for _, _, _, b in cases[1:])
    assert min(lawtest.power(p, b, n) for _, _, _, b in cases[1:]) >= 0.9
    law = lawtest.law_dict(p, n)
    for name, draft, rule, _ in cases:
        counts = _first_token_counts(draft, tgt, prefix, n, rule, seed=11)
        g = chi_square_gof(lawtest.relabel(counts, law), law, threshold=1e-3)
        assert g.rejected == (name != "correct"), (name, n, str(g))


def test_alpha_along_matches_the_draft_at_depth_one(lm, fmap):
    """The predictor's per-token α (teacher forced) equals Σ min(p, q) of the draft's own first
    proposal row at the same prefix, for the full head and for a shortlist."""
    from specdec_core.llm.features import alpha_along

    m = lm.model
    toks = list(_prefix(lm)) + [5, 9, 3, 7, 11, 2]
    short = np.arange(0, m.cfg.vocab_size, 2)
    for sl in (None, short):
        a = alpha_along(m, fmap, toks, 4, depth=3, temperature=1.0, shortlist=sl)
        assert a.shape == (len(toks) - 4, 3) and np.isfinite(a).all()
        for j in (6, 8):
            tgt = CachedTarget(m, 1.0)
            tgt.prefill(toks[: j - 1])  # the cache a round finds: all but the last prefix token
            q = FeatureDraft(tgt, fmap, 1.0, shortlist=sl)(toks[:j])
            p = CachedTarget(m, 1.0)(toks[:j])
            assert abs(float(np.minimum(p, q).sum()) - a[j - 4, 0]) < 1e-5
    with pytest.raises(ValueError, match="depth"):
        alpha_along(m, fmap, toks, 4, depth=0, temperature=1.0)

"""The samplers keep the target's law over whole sequences, and a broken one is caught.

Statistic: Pearson chi-square of N generated continuations of length L on the toy language
(specdec_core.toy: prefix-dependent target and draft, zeros on both sides) against the exact
law toy.sequence_law(target, prefix, L); cells with expected count < 5 pooled.
Threshold: reject when the p-value < 0.001 (lawcheck.DEFAULT_THRESHOLD). Seeds are fixed, so
each outcome is deterministic; the broken samplers give p-values many orders below the threshold.
"""

from collections import Counter

import numpy as np
import pytest

from specdec_core import autoregressive_generate, chi_square_gof, speculative_generate, verify_batch
from specdec_core.toy import sequence_law, toy_draft, toy_target

T, D = toy_target(), toy_draft()
L = 3
N = 6000


def _spec_counts(prefix, gamma, seed, correction="residual", n=N):
    rng = np.random.default_rng(seed)
    return Counter(
        speculative_generate(
            T, D, prefix, gamma=gamma, max_new_tokens=L, rng=rng, correction=correction
        ).tokens
        for _ in range(n)
    )


@pytest.mark.parametrize("prefix,gamma,seed", [((), 2, 1), ((), 4, 2), ((1,), 1, 3), ((3,), 3, 4)])
def test_speculative_keeps_target_law(prefix, gamma, seed):
    res = chi_square_gof(_spec_counts(prefix, gamma, seed), sequence_law(T, prefix, L))
    assert not res.rejected, str(res)


@pytest.mark.parametrize("wrong", ["draft", "target", "uniform"])
def test_broken_corrections_are_caught(wrong):
    res = chi_square_gof(_spec_counts((), 2, 5, correction=wrong), sequence_law(T, (), L))
    assert res.rejected, str(res)
    assert res.p_value < 1e-12


def test_autoregressive_keeps_target_law():
    rng = np.random.default_rng(6)
    counts = Counter(autoregressive_generate(T, (), max_new_tokens=L, rng=rng).tokens for _ in range(N))
    res = chi_square_gof(counts, sequence_law(T, (), L))
    assert not res.rejected, str(res)


def test_impossible_outcome_is_rejected():
    law = sequence_law(T, (), L)
    impossible = (3, 2, 2)  # target can never start with D
    assert impossible not in law
    res = chi_square_gof(Counter({impossible: 1, next(iter(law)): 99}), law)
    assert res.rejected and res.p_value == 0.0


# ---------------------------------------------------------------- verify_batch


def batch_generate(B, gamma, length, rng, correction="residual"):
    """B toy sequences grown round by round with verify_batch (truncation at `length` keeps
    the law of the first `length` tokens: the stop rule does not look at the tokens)."""
    seqs = [()] * B
    V = T.vocab_size
    while min(len(s) for s in seqs) < length:
        Q = np.zeros((B, gamma, V))
        P = np.zeros((B, gamma + 1, V))
        X = np.zeros((B, gamma), dtype=np.int64)
        for b, s in enumerate(seqs):
            ctx = s
            for i in range(gamma):
                Q[b, i] = D(ctx)
                X[b, i] = rng.choice(V, p=Q[b, i])
                P[b, i] = T(ctx)
                ctx = ctx + (int(X[b, i]),)
            P[b, gamma] = T(ctx)
        n, nxt = verify_batch(P, Q, X, rng, correction=correction)
        seqs = [s + tuple(int(t) for t in X[b, : n[b]]) + (int(nxt[b]),) for b, s in enumerate(seqs)]
    return Counter(s[:length] for s in seqs)


@pytest.mark.parametrize("gamma,seed", [(1, 7), (3, 8)])
def test_verify_batch_keeps_target_law(gamma, seed):
    res = chi_square_gof(batch_generate(N, gamma, L, np.random.default_rng(seed)), sequence_law(T, (), L))
    assert not res.rejected, str(res)


def test_verify_batch_broken_correction_is_caught():
    res = chi_square_gof(
        batch_generate(N, 2, L, np.random.default_rng(9), correction="draft"), sequence_law(T, (), L)
    )
    assert res.rejected, str(res)


def test_verify_batch_single_position_law_exact_rows():
    """One position, many rows: the first emitted token follows p (worked example)."""
    rng = np.random.default_rng(10)
    B = 20000
    p = np.array([0.6, 0.3, 0.1])
    q = np.array([0.2, 0.3, 0.5])
    X = rng.choice(3, size=(B, 1), p=q)
    P = np.broadcast_to(np.stack([p, p]), (B, 2, 3))
    Q = np.broadcast_to(q, (B, 1, 3))
    n, nxt = verify_batch(P, Q, X, rng)
    first = np.where(n >= 1, X[:, 0], nxt)
    res = chi_square_gof(Counter(first.tolist()), {0: 0.6, 1: 0.3, 2: 0.1})
    assert not res.rejected, str(res)
    # every correction is A (residual [1, 0, 0])
    assert set(nxt[n == 0].tolist()) == {0}
    assert (n == 1).mean() == pytest.approx(0.6, abs=0.015)


def test_accounting_invariants():
    rng = np.random.default_rng(11)
    for gamma in range(0, 5):
        r = speculative_generate(T, D, (), gamma=gamma, max_new_tokens=17, rng=rng)
        assert len(r.tokens) == 17
        assert r.accepted + r.corrections + r.bonus == 17
        assert r.corrections + r.bonus == r.rounds
        assert r.rejected == r.corrections
        assert r.proposed == r.accepted + r.rejected + r.discarded
        for rec in r.records:
            assert len(rec.emitted) == rec.accepted + 1
            assert rec.gamma <= gamma


def test_same_seed_different_text():
    a = speculative_generate(T, D, (), gamma=3, max_new_tokens=12, rng=np.random.default_rng(0)).tokens
    b = autoregressive_generate(T, (), max_new_tokens=12, rng=np.random.default_rng(0)).tokens
    assert a != b
    # and each is reproducible
    assert (
        a == speculative_generate(T, D, (), gamma=3, max_new_tokens=12, rng=np.random.default_rng(0)).tokens
    )


class ShortDraft:
    """The toy draft, offering fewer proposals after some prefixes (after C: one; after D: none)."""

    def __init__(self):
        self.vocab_size = D.vocab_size

    def __call__(self, prefix):
        return D(prefix)

    def propose(self, prefix, gamma, rng):
        last = prefix[-1] if prefix else None
        g = {2: min(gamma, 1), 3: 0}.get(last, gamma)
        toks, rows, ctx = [], [], tuple(prefix)
        for _ in range(g):
            q = D(ctx)
            x = int(rng.choice(len(q), p=q))
            toks.append(x), rows.append(q)
            ctx += (x,)
        return toks, (np.stack(rows) if rows else np.zeros((0, self.vocab_size)))


def test_draft_offering_fewer_proposals_keeps_the_law():
    rng = np.random.default_rng(12)
    draft = ShortDraft()
    runs = [speculative_generate(T, draft, (), gamma=3, max_new_tokens=L, rng=rng) for _ in range(N)]
    # some rounds really are short: after D, with tokens still to go, nothing is proposed
    long = speculative_generate(T, draft, (), gamma=3, max_new_tokens=40, rng=np.random.default_rng(13))
    assert any(rec.gamma == 0 and len(rec.prefix) < 39 for rec in long.records if rec.prefix[-1:] == (3,))
    assert len(long.tokens) == 40
    res = chi_square_gof(Counter(r.tokens for r in runs), sequence_law(T, (), L))
    assert not res.rejected, str(res)


def test_draft_offering_more_than_gamma_is_refused():
    class Greedy:
        def __call__(self, prefix):
            return D(prefix)

        def propose(self, prefix, gamma, rng):
            return [0] * (gamma + 1), np.tile(D(prefix), (gamma + 1, 1))

    with pytest.raises(ValueError, match="more than gamma"):
        speculative_generate(T, Greedy(), (), gamma=2, max_new_tokens=3, rng=np.random.default_rng(0))

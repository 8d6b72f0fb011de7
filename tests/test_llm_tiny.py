"""The numpy Llama on a tiny random-weight GGUF written in the test (fast, no real model).

Covers: the loader (tied head, fused layout, float32), agreement with an independent
Hugging Face-convention reference, the two traps (RoPE pairing, float64 promotion),
cache vs no cache, chunked vs incremental, rollback, the stateful target adapter, the
tokenizer round trip, the drafts, and the end-to-end law of speculative sampling.
"""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest

from specdec_core import autoregressive_generate, chi_square_gof, speculative_generate  # noqa: E402
from specdec_core.llm import (
    CachedTarget,
    ExitDraft,
    PromptLookupDraft,  # noqa: E402
    load_model,
    probs_from_logits,
)
from specdec_core.llm import layout as L  # noqa: E402
from specdec_core.llm import model as M  # noqa: E402
from specdec_core.llm.loader import load_gguf  # noqa: E402
from specdec_core.llm.testing import CFG, reference_logits, sequence_law  # noqa: E402

TEXT = "the cat sat on the mat, then the cat sat on the hat 2024"


@pytest.fixture(scope="module")
def tiny(tiny_gguf):
    path, hf = tiny_gguf
    return path, hf, load_model(str(path), cache=False)


@pytest.fixture(scope="module")
def ids(tiny):
    return tiny[2].codec.encode(TEXT)


# ---------------------------------------------------------------- loader


def test_loader_reads_config_and_ties_head(tiny):
    path, hf, lm = tiny
    c = lm.cfg
    assert (c.n_layers, c.dim, c.ffn_dim, c.n_heads, c.n_kv_heads, c.head_dim) == (
        CFG["n_layers"],
        CFG["dim"],
        CFG["ffn_dim"],
        CFG["n_heads"],
        CFG["n_kv_heads"],
        CFG["head_dim"],
    )
    assert c.vocab_size == hf["embed"].shape[0]
    w = lm.model.w
    assert bool(w["tied"]) and "embed" not in w  # no output.weight: the head is the embedding
    np.testing.assert_array_equal(w["head"], hf["embed"])  # (vocab, dim): stored (out, in)
    assert w["0.wqkv"].shape == (c.q_dim + 2 * c.kv_dim, c.dim)
    assert w["0.wgu"].shape == (2 * c.ffn_dim, c.dim)
    assert all(a.dtype == np.float32 for a in w.values() if a.dtype.kind == "f")


def test_loader_cache_round_trip_without_pickle(tiny, tmp_path):
    path = str(tiny[0])
    cfg1, w1, tok1, info1 = load_gguf(path, cache=str(tmp_path))
    cfg2, w2, tok2, info2 = load_gguf(path, cache=str(tmp_path))
    assert not info1.from_cache and info2.from_cache
    assert cfg1 == cfg2 and tok1 == tok2 and sorted(w1) == sorted(w2)
    for k in w1:
        np.testing.assert_array_equal(w1[k], w2[k])
    for name in os.listdir(info2.cache_dir):  # plain .npy / .json files only
        assert name.endswith((".npy", ".json"))


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_gguf(str(tmp_path / "nope.gguf"), cache=False)


# ---------------------------------------------------------------- forward


def test_forward_matches_hf_reference(tiny, ids):
    _, hf, lm = tiny
    ours = lm.model.logits_for(ids)
    ref = reference_logits(hf, ids)
    assert ours.dtype == np.float32
    assert np.abs(ours - ref).max() < 1e-4 * max(1.0, np.abs(ref).max())
    assert (ours.argmax(1) == ref.argmax(1)).all()


def test_trap_rotate_half_rope_is_wrong_on_gguf_weights(tiny, ids):
    """GGUF permutes Q/K for adjacent-pair RoPE: the rotate-half form gives other logits."""
    _, hf, lm = tiny
    ref = reference_logits(hf, ids)
    cache = lm.model.new_cache()
    wrong = lm.model.logits(lm.model.forward(ids, cache, rope_fn=M.rope_rotate_half))
    assert np.abs(wrong - ref).max() > 100 * np.abs(lm.model.logits_for(ids) - ref).max()


def test_trap_float64_promotion_is_caught(tiny, ids):
    """A float64 numpy scalar would silently promote the residual stream: the forward pass
    asserts float32 at every layer."""
    _, _, lm = tiny
    bad = M.Llama(lm.cfg, lm.model.w)
    bad.scale = np.float64(bad.scale)  # the classic: 1.0 / np.sqrt(head_dim)
    with pytest.raises(TypeError, match="float64"):
        bad.forward(ids[:3], bad.new_cache())
    good = lm.model.forward(ids[:3], lm.model.new_cache())
    assert good.dtype == np.float32
    assert lm.model.scale.dtype == np.float32


def test_float64_weights_are_refused(tiny):
    _, _, lm = tiny
    w = dict(lm.model.w)
    w["0.wo"] = L.as_rows(w["0.wo"]).astype(np.float64)  # the model holds Weights
    with pytest.raises(ValueError, match="float32"):
        M.Llama(lm.cfg, w)


def test_cache_vs_no_cache_and_chunked_vs_incremental(tiny, ids):
    m = tiny[2].model
    full = m.logits_for(ids)
    cache = m.new_cache(capacity=4)  # forces the cache to grow
    inc = np.concatenate([m.logits(m.forward([t], cache)) for t in ids])
    cache = m.new_cache()
    chunks, i = [], 0
    for size in (3, 1, 5, 2, 7, 100):
        chunks.append(m.logits(m.forward(ids[i : i + size], cache)))
        i += size
    chunked = np.concatenate(chunks)
    assert inc.shape == full.shape == chunked.shape
    assert np.abs(inc - full).max() < 1e-4
    assert np.abs(chunked - full).max() < 1e-4


@pytest.mark.parametrize(
    "plan",
    [
        {1: "gemv", 2: "blas"},  # BLAS for every T > 1
        {1: "gemv", 2: "rows16"},  # the plain rows' plan (layout.PLAIN_PLAN)
        {1: "gemv", 2: "rows8"},
        {1: "rows32", 2: "rows32"},  # row blocks taller than some matrices' outputs: BLAS there
        {1: "nb1", 2: "nb2", 4: "nb4"},  # the compiled loops
    ],
)
def test_product_paths_agree_in_the_forward_pass(tiny, ids, plan):
    m = tiny[2].model
    ref = m.logits_for(ids)
    w = {k: L.Weight(L.as_rows(v), "rows", plan) if L.is_matrix(v) else v for k, v in m.w.items()}
    other = M.Llama(m.cfg, w, check_dtype=m.check_dtype)
    assert all(other.w[k].plan == plan for k in w if L.is_matrix(w[k]))
    assert np.abs(other.logits_for(ids) - ref).max() < 1e-4


def test_rollback_then_new_tokens(tiny, ids):
    m = tiny[2].model
    a, b, c = ids[:6], ids[6:10], ids[10:14]
    cache = m.new_cache()
    m.forward(a + b, cache)
    cache.rollback(len(a))
    assert cache.n == len(a) and cache.tokens == a
    got = m.logits(m.forward(c, cache))
    want = m.logits_for(a + c)[len(a) :]
    assert np.abs(got - want).max() < 1e-4
    with pytest.raises(ValueError):
        cache.rollback(cache.n + 1)


def test_layer_skip_model_is_a_prefix_of_layers(tiny, ids):
    m = tiny[2].model
    k0 = M.Llama(m.cfg, m.w, n_layers=0)  # embedding → norm → tied head
    h = k0.forward(ids, k0.new_cache())
    x = m.embed(ids)
    want = M.rms_norm(x, m.w["output_norm"], m.cfg.rms_eps)
    assert np.abs(h - want).max() < 1e-5
    with pytest.raises(ValueError):
        M.Llama(m.cfg, m.w, n_layers=m.cfg.n_layers + 1)


def test_token_ids_are_checked(tiny):
    m = tiny[2].model
    with pytest.raises(ValueError):
        m.forward([m.cfg.vocab_size], m.new_cache())


# ---------------------------------------------------------------- tokenizer


@pytest.mark.parametrize(
    "text",
    [
        TEXT,
        "",
        "x",
        "  two  spaces\n\tand tabs",
        "naïve café – ünïcode ✓",
        "<|im_start|>user\nhi<|im_end|>",
        "3.14159 and 1,000,000",
    ],
)
def test_tokenizer_round_trip(tiny, text):
    codec = tiny[2].codec
    ids = codec.encode(text)
    assert codec.decode(ids) == text
    assert all(0 <= i < tiny[2].cfg.vocab_size for i in ids)


def test_tokenizer_digits_split_and_specials(tiny):
    codec = tiny[2].codec
    assert [codec.decode([i]) for i in codec.encode("2024")] == ["2", "0", "2", "4"]
    assert codec.encode("<|im_start|>") == [1]  # control token, not bytes
    assert codec.encode(" the") == [codec.tk.token_to_id("Ġthe")]  # merges applied
    chat = codec.chat("hi")
    assert chat[0] == 1 and codec.decode(chat).endswith("<|im_start|>assistant\n")


# ---------------------------------------------------------------- adapters


def test_cached_target_rows_match_fresh_computation(tiny, ids):
    m = tiny[2].model
    tgt = CachedTarget(m, temperature=1.0)
    # a sequence of calls like speculative rounds: extend, reject (shorter), diverge
    calls = [
        (ids[:5], ids[5:8]),
        (ids[:7], ids[7:10]),
        (ids[:6], (3, 4)),
        (ids[:12], ()),
        (ids[:3], ids[3:4]),
    ]
    for prefix, cont in calls:
        rows = tgt.score(tuple(prefix), tuple(cont))
        full = list(prefix) + list(cont)
        want = probs_from_logits(m.logits_for(full)[len(prefix) - 1 :], 1.0)
        assert rows.shape == (len(cont) + 1, m.cfg.vocab_size)
        assert np.abs(rows - want).max() < 1e-5
        np.testing.assert_allclose(rows.sum(1), 1.0, atol=1e-12)
    # one round after an accepted prefix costs exactly the new positions
    tgt.score(tuple(ids[:10]), tuple(ids[10:13]))
    tgt.log.clear()
    # next round: 1 proposal accepted + a correction token, then γ = 3 new proposals
    tgt.score(tuple(ids[:11]) + (7,), (8, 9, 10))
    assert tgt.log.calls[-1][1:3] == (4, 4)  # γ + 1 new positions, γ + 1 rows
    with pytest.raises(ValueError):
        tgt.score((), (1,))


def test_probs_from_logits():
    z = np.array([[1.0, 3.0, 2.0]], dtype=np.float32)
    np.testing.assert_array_equal(probs_from_logits(z, 0), [[0, 1, 0]])
    p = probs_from_logits(z, 1.0)
    assert p.dtype == np.float64 and abs(p.sum() - 1) < 1e-15
    np.testing.assert_allclose(p[0], np.exp([1, 3, 2]) / np.exp([1, 3, 2]).sum())
    with pytest.raises(ValueError):
        probs_from_logits(z, -1.0)


def test_prompt_lookup_draft():
    d = PromptLookupDraft(vocab_size=10, n_max=3)
    ctx = (1, 2, 3, 4, 5, 9, 1, 2, 3)
    assert d.propose_tokens(ctx, 2) == [4, 5]
    assert d.available(ctx, 4) == 4  # 4, 5, 9, 1 follow the earlier 1 2 3
    assert d.available(ctx, 9) == 6  # … up to the end of the context
    toks, q = d.propose(ctx, 5, np.random.default_rng(0))
    assert toks[:3] == [4, 5, 9] and len(toks) == 5
    assert q.shape == (5, 10) and (q.sum(1) == 1).all() and (q[np.arange(5), toks] == 1).all()
    assert d.available((7, 8), 3) == 0  # no earlier match
    assert d.propose_tokens((7, 8), 2) == [8, 8]  # fallback: repeat the last token
    # the latest earlier match wins
    assert PromptLookupDraft(10, n_max=1, n_min=1).propose_tokens((5, 1, 5, 2, 5), 1) == [2]


def test_layer_skip_draft_propose_matches_its_rows(tiny, ids):
    m = tiny[2].model
    d = ExitDraft(m, k=1, temperature=1.0)  # A = None: the layer-skip draft
    toks, q = d.propose(tuple(ids[:8]), 3, np.random.default_rng(1))
    assert len(toks) == 3 and q.shape == (3, m.cfg.vocab_size)
    k1 = M.Llama(m.cfg, m.w, n_layers=1)
    seq = list(ids[:8]) + list(toks)
    want = probs_from_logits(k1.logits_for(seq)[7:10], 1.0)
    assert np.abs(q - want).max() < 1e-5
    assert all(q[i, t] > 0 for i, t in enumerate(toks))


# ---------------------------------------------------------------- generation and the law


def test_greedy_speculative_equals_greedy_plain(tiny, ids):
    m = tiny[2].model
    prefix = tuple(ids[:10])
    plain = autoregressive_generate(
        CachedTarget(m, 0.0), prefix, max_new_tokens=20, rng=np.random.default_rng(0)
    ).tokens
    for draft in (PromptLookupDraft(m.cfg.vocab_size), ExitDraft(m, 1, temperature=0.0)):
        for gamma in (1, 3, 6):
            spec = speculative_generate(
                CachedTarget(m, 0.0),
                draft,
                prefix,
                gamma=gamma,
                max_new_tokens=20,
                rng=np.random.default_rng(1),
            )
            assert spec.tokens == plain


def test_end_to_end_law_on_tiny_model(tiny, ids):
    """300 speculative runs of 3 tokens (γ = 2, layer-skip draft k = 1 at temperature 1, one
    stateful cached target reused across runs) against the exact 3-token law: chi-square
    goodness of fit, reject if p < 0.001 (specdec_core.lawcheck's threshold)."""
    m = tiny[2].model
    prefix = tuple(ids[:4])
    law = sequence_law(m, prefix)
    tgt = CachedTarget(m, 1.0)
    draft = ExitDraft(m, 1, temperature=1.0)
    rng = np.random.default_rng(2024)
    samples = Counter()
    accepted = proposed = 0
    for _ in range(300):
        r = speculative_generate(tgt, draft, prefix, gamma=2, max_new_tokens=3, rng=rng)
        samples[r.tokens if r.tokens in law else "other"] += 1
        accepted += r.accepted
        proposed += r.proposed
    res = chi_square_gof(samples, law, threshold=1e-3)
    assert not res.rejected, str(res)
    assert 0 < accepted < proposed  # both branches (accept and correct) were exercised


def test_unwritable_cache_falls_back(tiny, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.warns(UserWarning, match="cache"):
        cfg, w, tok, info = load_gguf(str(tiny[0]), cache=str(blocker))
    assert not info.from_cache and info.cache_dir is None and "head" in w


def test_context_length_is_enforced(tiny):
    m = tiny[2].model
    with pytest.raises(ValueError, match="context length"):
        m.forward([5] * (m.cfg.context_length + 1), m.new_cache())


def test_logits_two_ways_agree_to_rounding(tiny, ids):
    from specdec_core.llm import rounding as R

    m = tiny[2].model
    one, blk = R.logits_two_ways(m, ids, 4, 5)
    assert one.shape == blk.shape == (len(ids) - 4, m.cfg.vocab_size)
    assert np.abs(one - m.logits_for(ids)[3:-1]).max() < 1e-4
    c = R.compare_paths(one, blk)
    assert c.max_abs_diff < 1e-4 and c.positions == len(ids) - 4
    with pytest.raises(ValueError, match="block"):
        R.logits_two_ways(m, ids, 4, 0)

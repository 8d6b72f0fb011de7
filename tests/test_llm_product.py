"""The forward pass's weight product (:func:`specdec_core.llm.model.product`) equals ``x @ w.T``
within float32 rounding on every path (one row, blocked rows, one BLAS call) and for every
matrix shape SmolLM2-135M uses, the head included. Random weights: no model file needed."""

import numpy as np
import pytest

from specdec_core.llm import layout as L
from specdec_core.llm import model as M

# (out, in) of every weight matrix of SmolLM2-135M: fused q/k/v, attention output, fused
# gate/up, down projection, and the tied head (vocab × width).
SHAPES = {
    "wqkv": (960, 576),
    "wo": (576, 576),
    "wgu": (3072, 576),
    "wdown": (576, 1536),
    "head": (49152, 576),
}
ROWS = [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 32, 33, 64, 129]


@pytest.fixture(scope="module")
def weights():
    rng = np.random.default_rng(0)
    return {k: rng.standard_normal(s, dtype=np.float32) * 0.05 for k, s in SHAPES.items()}


@pytest.mark.parametrize("name", list(SHAPES))
@pytest.mark.parametrize("T", ROWS)
def test_product_equals_x_at_w_transposed(weights, name, T):
    w = weights[name]
    x = np.random.default_rng(T).standard_normal((T, w.shape[1]), dtype=np.float32)
    got = M.product(x, w)
    want = x.astype(np.float64) @ w.T.astype(np.float64)  # reference in float64
    assert got.shape == (T, w.shape[0]) and got.dtype == np.float32
    # rows in contiguous memory: the blocked path's strided view made every step along a row
    # after it (norms, the softmax over the vocabulary) ≈ 10× slower
    assert got.flags["C_CONTIGUOUS"]
    # float32 rounding of a sum of `in` products: relative to the sum of |terms|
    scale = np.abs(x).astype(np.float64) @ np.abs(w.T).astype(np.float64)
    assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-6)


def test_each_path_is_taken(weights, monkeypatch):
    """The three paths really differ (a product that always called x @ w.T would pass the
    equality test): count which branch runs by wrapping np.matmul's blocked call."""
    w = weights["wo"]
    seen = []
    real = np.matmul

    def spy(a, b, *args, **kw):
        seen.append(np.ndim(a))
        return real(a, b, *args, **kw)

    monkeypatch.setattr(M.np, "matmul", spy)
    M.product(np.ones((4, 576), np.float32), w)
    assert seen == [3]  # row blocks (out/16, 16, in)
    seen.clear()
    M.product(np.ones((L.SMALL_MAX_ROWS + 1, 576), np.float32), w)
    assert seen == []  # one BLAS call through the @ operator


def test_odd_output_sizes_fall_back(weights):
    w = weights["wo"][:575]  # not a multiple of the block height 16
    x = np.random.default_rng(1).standard_normal((4, 576), dtype=np.float32)
    np.testing.assert_allclose(M.product(x, w), x @ w.T, rtol=1e-4, atol=1e-4)

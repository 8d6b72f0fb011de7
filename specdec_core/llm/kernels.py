"""Compiled weight products (numba): what numpy cannot write, a loop that reads each weight once.

Scoring T positions multiplies T rows by every weight matrix. While T is small the pass is
memory-bound (notebook 06), so the ideal call streams each weight from memory once and does the T
multiply-adds while the weight is in a register. numpy has no such call: ``w @ x`` (BLAS gemv) is
that loop for one row only, and for a few rows BLAS's matrix–matrix path repacks whole weight
panels first (about 3× the read floor here). So the loop is written once here and compiled:

* :func:`product_f32` — ``x @ w.T`` for float32 ``w`` (out, in) stored as loaded, one output row
  at a time, one float32 accumulator per input row;
* :func:`product_q8` — the same over **int8** weights with one float32 scale per output row
  (:func:`quantize_rows`): each weight is converted to float32 as it is read, the sum is scaled
  once. A quarter of the bytes, but the conversion, not the memory, bounds it (field notes:
  about 0.6 of the float32 loop on this Xeon, 0.46 on a Zen 4).

Both are single-threaded (the rest of the model runs with one BLAS thread for steady timings) and
take up to :data:`KERNEL_MAX_ROWS` rows: past that the loop turns compute-bound and BLAS is
faster. Whether they beat numpy's methods on *this* CPU is not assumed: they are candidates that
:func:`specdec_core.llm.layout.choose_layout` times beside the others.

**Compilation.** The first call in a fresh environment compiles each kernel (a few seconds;
:func:`warm_up` does it and returns how long it took). numba caches the machine code (``cache=True``)
in ``__pycache__`` beside this file, or, where the package folder is read-only, in numba's user-wide
cache folder (``~/.cache/numba``, or ``$NUMBA_CACHE_DIR`` if set): a second start compiles nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..measured.timer import Stopwatch

#: The largest number of rows the compiled loops take (a round verifies γ+1 ≤ 8 positions here).
KERNEL_MAX_ROWS = 8
#: Largest |w| maps to this int8 code (symmetric quantization per output row).
Q8_MAX = 127


# Each kernel takes the input rows in groups of ``g`` (1, 2 or 4; x padded with zero rows to a
# multiple of g): one weight read feeds g multiply-adds, with g float32 accumulators. g = 1 is the
# plain loop (the other rows re-read the weight row from L1 cache); which g is fastest at which T
# differs between CPUs, so the layout choice times them.
_JIT = dict(fastmath=True, boundscheck=False, cache=True, nogil=True)


@njit(**_JIT)
def _f32_g1(x, w, y):  # pragma: no cover - compiled
    T, n = x.shape
    for o in range(w.shape[0]):
        for t in range(T):
            a0 = np.float32(0.0)
            for j in range(n):
                a0 += w[o, j] * x[t, j]
            y[t, o] = a0


@njit(**_JIT)
def _f32_g2(x, w, y):  # pragma: no cover - compiled
    T, n = x.shape
    for o in range(w.shape[0]):
        for t in range(0, T, 2):
            a0 = np.float32(0.0)
            a1 = np.float32(0.0)
            for j in range(n):
                wj = w[o, j]
                a0 += wj * x[t, j]
                a1 += wj * x[t + 1, j]
            y[t, o] = a0
            y[t + 1, o] = a1


@njit(**_JIT)
def _f32_g4(x, w, y):  # pragma: no cover - compiled
    T, n = x.shape
    for o in range(w.shape[0]):
        for t in range(0, T, 4):
            a0 = np.float32(0.0)
            a1 = np.float32(0.0)
            a2 = np.float32(0.0)
            a3 = np.float32(0.0)
            for j in range(n):
                wj = w[o, j]
                a0 += wj * x[t, j]
                a1 += wj * x[t + 1, j]
                a2 += wj * x[t + 2, j]
                a3 += wj * x[t + 3, j]
            y[t, o] = a0
            y[t + 1, o] = a1
            y[t + 2, o] = a2
            y[t + 3, o] = a3


@njit(**_JIT)
def _q8_g1(x, w, s, y):  # pragma: no cover - compiled
    T, n = x.shape
    for o in range(w.shape[0]):
        for t in range(T):
            a0 = np.float32(0.0)
            for j in range(n):
                a0 += np.float32(w[o, j]) * x[t, j]
            y[t, o] = a0 * s[o]


@njit(**_JIT)
def _q8_g4(x, w, s, y):  # pragma: no cover - compiled
    T, n = x.shape
    for o in range(w.shape[0]):
        so = s[o]
        for t in range(0, T, 4):
            a0 = np.float32(0.0)
            a1 = np.float32(0.0)
            a2 = np.float32(0.0)
            a3 = np.float32(0.0)
            for j in range(n):
                wj = np.float32(w[o, j])
                a0 += wj * x[t, j]
                a1 += wj * x[t + 1, j]
                a2 += wj * x[t + 2, j]
                a3 += wj * x[t + 3, j]
            y[t, o] = a0 * so
            y[t + 1, o] = a1 * so
            y[t + 2, o] = a2 * so
            y[t + 3, o] = a3 * so


F32_KERNELS = {1: _f32_g1, 2: _f32_g2, 4: _f32_g4}
Q8_KERNELS = {1: _q8_g1, 4: _q8_g4}


def _rows(x: np.ndarray, inner: int, group: int, kernels: dict) -> np.ndarray:
    """x as contiguous float32 rows, padded with zero rows to a multiple of ``group``."""
    if group not in kernels:
        raise ValueError(f"group must be one of {sorted(kernels)}, got {group!r}")
    if not isinstance(x, np.ndarray) or x.ndim != 2 or x.shape[1] != inner:
        raise ValueError(f"x must be a (T, {inner}) array, got {getattr(x, 'shape', type(x).__name__)}")
    T = x.shape[0]
    if not 1 <= T <= KERNEL_MAX_ROWS:
        raise ValueError(f"x must hold 1 to {KERNEL_MAX_ROWS} rows for a compiled product, got {T}")
    if T % group:
        padded = np.zeros((T + group - T % group, inner), np.float32)
        padded[:T] = x
        return padded
    return np.ascontiguousarray(x, dtype=np.float32)


def product_f32(x: np.ndarray, w: np.ndarray, group: int = 1) -> np.ndarray:
    """``x @ w.T`` (T, out) float32, for T ≤ :data:`KERNEL_MAX_ROWS` rows and a C-contiguous float32
    ``w`` (out, in), reading each weight once; ``group``: input rows per weight read (1, 2, 4)."""
    if not isinstance(w, np.ndarray) or w.dtype != np.float32 or w.ndim != 2 or not w.flags.c_contiguous:
        raise ValueError("w must be a C-contiguous float32 (out, in) matrix")
    T = getattr(x, "shape", (0,))[0]
    xp = _rows(x, w.shape[1], group, F32_KERNELS)
    y = np.empty((xp.shape[0], w.shape[0]), np.float32)
    F32_KERNELS[group](xp, w, y)
    return y if xp.shape[0] == T else y[:T]


def quantize_rows(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes int8 (out, in), scales float32 (out,)): symmetric int8 per output row, scale =
    max|w| / 127 (1 for an all-zero row), codes = round(w / scale). Dequantized, every weight is
    within half a scale of the original: |codes·scale − w| ≤ scale / 2 (``tests/test_llm_kernels.py``)."""
    w = np.asarray(w)
    if w.ndim != 2 or w.dtype.kind != "f" or w.size == 0:
        raise ValueError(f"w must be a non-empty 2-D float matrix, got {w.dtype} {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("w must be finite (no NaN or infinite weight)")
    top = np.abs(w).max(axis=1).astype(np.float32)
    scale = np.where(top > 0, top / np.float32(Q8_MAX), np.float32(1.0)).astype(np.float32)
    codes = np.clip(np.rint(w / scale[:, None]), -Q8_MAX, Q8_MAX).astype(np.int8)
    return codes, scale


def dequantize_rows(codes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The float32 (out, in) matrix that int8 ``codes`` with per-row ``scale`` stand for."""
    return codes.astype(np.float32) * scale[:, None]


def product_q8(x: np.ndarray, codes: np.ndarray, scale: np.ndarray, group: int = 1) -> np.ndarray:
    """``x @ (codes · scale).T`` (T, out) float32 for int8 ``codes`` (out, in) and float32 ``scale``
    (out,), T ≤ :data:`KERNEL_MAX_ROWS`, converting each weight as it is read; ``group`` 1 or 4."""
    if not isinstance(codes, np.ndarray) or codes.dtype != np.int8 or codes.ndim != 2:
        raise ValueError("codes must be a C-contiguous int8 (out, in) matrix")
    if not codes.flags.c_contiguous:
        raise ValueError("codes must be a C-contiguous int8 (out, in) matrix")
    if not isinstance(scale, np.ndarray) or scale.dtype != np.float32 or scale.shape != (codes.shape[0],):
        raise ValueError(f"scale must be float32 of shape ({codes.shape[0]},)")
    T = getattr(x, "shape", (0,))[0]
    xp = _rows(x, codes.shape[1], group, Q8_KERNELS)
    y = np.empty((xp.shape[0], codes.shape[0]), np.float32)
    Q8_KERNELS[group](xp, codes, scale, y)
    return y if xp.shape[0] == T else y[:T]


def warm_up() -> tuple[float, int]:
    """Compile (or load from numba's cache) every kernel: (seconds, kernels compiled now). A first
    start in a fresh environment compiles all of them; a second start loads them (0 compiled)."""
    watch = Stopwatch()
    w = np.ones((4, 8), np.float32)
    c, s = quantize_rows(w)
    x = np.ones((4, 8), np.float32)
    for g in F32_KERNELS:
        product_f32(x, w, g)
    for g in Q8_KERNELS:
        product_q8(x, c, s, g)
    compiled = sum(sum(k.stats.cache_misses.values()) for k in (*F32_KERNELS.values(), *Q8_KERNELS.values()))
    return watch.seconds(), compiled


def cache_folder() -> str:
    """Where numba keeps the compiled kernels (``__pycache__`` beside this file, or numba's
    user-wide cache folder where the package folder is read-only)."""
    warm_up()
    return str(_f32_g1.stats.cache_path)

"""A numpy Llama forward pass (RMSNorm, RoPE, grouped-query attention, SwiGLU, tied head)
with a KV cache that scores several new positions in one call and rolls back.

Two traps are handled here, each covered by a test:

* **RoPE pairing.** GGUF files store the Q and K projections permuted so that rotary
  embedding rotates *adjacent* pairs (x₀,x₁), (x₂,x₃), … (llama.cpp's convention). The
  Hugging Face "rotate-half" form, pairing xᵢ with x_{i+d/2}, gives wrong text on these
  weights. :func:`rope` rotates adjacent pairs.
* **float32 everywhere.** Under NumPy 2 a float64 *numpy scalar* (e.g. ``1/np.sqrt(64)``)
  promotes the whole residual stream, and every weight product with it, to float64 — several
  times slower. Every constant here is a Python float (weak) or ``np.float32``, and
  :meth:`Llama.forward` asserts float32 at the end of every layer.
"""

from __future__ import annotations

import numpy as np

from .layout import as_weight, is_matrix
from .loader import LlamaConfig

F32 = np.float32


def rms_norm(x, w, eps):
    ms = np.mean(x * x, axis=-1, keepdims=True)
    return x * (1.0 / np.sqrt(ms + eps)) * w


def rope_tables(positions, head_dim, base):
    """cos, sin of shape (T, 1, head_dim/2), float32, for the given absolute positions."""
    inv = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    ang = np.asarray(positions, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(ang).astype(F32)[:, None, :], np.sin(ang).astype(F32)[:, None, :]


def rope(x, cos, sin):
    """Rotate adjacent pairs (x[2i], x[2i+1]) by the position's angles. x: (T, H, D)."""
    T, H, D = x.shape
    xp = x.reshape(T, H, D // 2, 2)
    x0, x1 = xp[..., 0], xp[..., 1]
    out = np.empty_like(xp)
    out[..., 0] = x0 * cos - x1 * sin
    out[..., 1] = x0 * sin + x1 * cos
    return out.reshape(T, H, D)


def rope_rotate_half(x, cos, sin):
    """The Hugging Face convention (pairs xᵢ, x_{i+D/2}). WRONG for GGUF weights; kept only so
    a test can show the trap."""
    D = x.shape[-1]
    x0, x1 = x[..., : D // 2], x[..., D // 2 :]
    return np.concatenate([x0 * cos - x1 * sin, x0 * sin + x1 * cos], axis=-1)


def product(x, w):
    """``x @ w.T`` for a weight matrix (out, in), reading the weights once per call: ``w`` a
    :class:`~specdec_core.llm.layout.Weight` (laid out and planned by timing on this machine,
    ``layout.py``) or a 2-D ndarray, taken as a plain-rows Weight (:data:`~specdec_core.llm.layout.PLAIN_PLAN`).

    Scoring T positions multiplies T rows by every weight matrix. While T is small the pass
    is memory-bound (notebook 06's roofline): its cost is reading the weights, so T rows
    should cost about what one row costs. How the product is called decides whether they do.
    The plain rows' plan:

    * **T = 1**: ``w @ x`` is a matrix-vector product (BLAS gemv), which streams each
      weight row once — at the memory's speed.
    * **2 ≤ T ≤ SMALL_MAX_ROWS** (32): the rows of ``w`` are taken as contiguous blocks of 16
      outputs (a reshape, no copy), and each block (16, in) is multiplied by the T inputs while
      it is still in cache: the weights are read from memory once and the extra rows cost only
      arithmetic. One ``np.matmul`` call loops over the blocks in C. (A single BLAS
      matrix-matrix call for a handful of rows is about 3× slower here: OpenBLAS copies
      ("packs") whole weight panels on every call, reading the weights more than once.)
    * **more rows** (a long prompt's prefill): one BLAS call, ``x @ w.T``, which is
      compute-bound anyway and where packing pays for itself.

    The paths sum in different orders, so results agree with ``x @ w.T`` to float32
    rounding, not bit for bit (``tests/test_llm_product.py``; notebook 09 §4 measures what that
    does to greedy output).
    """
    return as_weight(w).product(x)


def silu(x):
    return x / (1.0 + np.exp(-x))


class KVCache:
    """Keys and values of the first ``n`` positions, for ``n_layers`` layers.

    ``k[l]``/``v[l]`` have shape (n_kv_heads, capacity, head_dim); positions ≥ n are garbage.
    Rolling back is setting ``n``: nothing is copied. ``tokens`` are the ids cached so far and
    ``hidden`` the final-normed hidden state at each position (to re-read logits without
    recomputing).
    """

    def __init__(self, cfg: LlamaConfig, n_layers: int, capacity: int = 256):
        self.cfg = cfg
        self.n_layers = n_layers
        self.capacity = 0
        self.n = 0
        self.tokens: list = []
        self.k = self.v = None
        self.hidden = None
        self._grow(capacity)

    def _grow(self, need):
        cap = max(need, 2 * self.capacity, 64)
        c = self.cfg
        k = np.zeros((self.n_layers, c.n_kv_heads, cap, c.head_dim), F32)
        v = np.zeros_like(k)
        h = np.zeros((cap, c.dim), F32)
        if self.k is not None:
            k[:, :, : self.n] = self.k[:, :, : self.n]
            v[:, :, : self.n] = self.v[:, :, : self.n]
            h[: self.n] = self.hidden[: self.n]
        self.k, self.v, self.hidden, self.capacity = k, v, h, cap

    def ensure(self, total):
        if total > self.capacity:
            self._grow(total)

    def rollback(self, n: int):
        """Forget every position from ``n`` on (rejected proposals)."""
        if not 0 <= n <= self.n:
            raise ValueError(f"cannot roll back to {n}: the cache holds {self.n} positions")
        self.n = n
        del self.tokens[n:]

    def common_prefix(self, tokens) -> int:
        m = min(len(tokens), self.n)
        a = self.tokens
        i = 0
        while i < m and a[i] == tokens[i]:
            i += 1
        return i


def causal_mask(n0: int, T: int) -> np.ndarray | None:
    """Additive (T, n0 + T) float32 mask: query t (absolute position n0 + t) sees keys 0 … n0 + t
    (0 where allowed, −inf elsewhere); ``None`` for one query, which sees every key."""
    if T <= 1:
        return None
    allowed = np.arange(n0 + T)[None, :] <= (n0 + np.arange(T))[:, None]
    return np.where(allowed, F32(0), F32(-np.inf))


class Llama:
    """The forward pass over packed weights (see :func:`loader.iter_packed`).

    ``n_layers`` < cfg.n_layers gives the layer-skip self-draft: the first k layers, then the
    final norm and the (tied) head, sharing the same weight arrays.
    """

    def __init__(
        self, cfg: LlamaConfig, weights: dict, n_layers: int | None = None, check_dtype: bool = True
    ):
        self.cfg = cfg
        self.n_layers = cfg.n_layers if n_layers is None else int(n_layers)
        if not 0 <= self.n_layers <= cfg.n_layers:
            raise ValueError(f"n_layers must be in [0, {cfg.n_layers}], got {n_layers}")
        self.check_dtype = check_dtype
        self.scale = F32(1.0 / np.sqrt(cfg.head_dim))  # float32: a float64 scalar would promote
        for name, arr in weights.items():
            if arr.dtype.kind == "f" and arr.dtype != F32:  # a Weight has a dtype too
                raise ValueError(f"weight {name} is {arr.dtype}, expected float32")
        # every matrix a Weight (as loaded: plain rows), so the pass has one product path
        self.w = {k: as_weight(v) if is_matrix(v) else v for k, v in weights.items()}

    def new_cache(self, capacity: int = 256) -> KVCache:
        return KVCache(self.cfg, self.n_layers, capacity)

    def embed(self, tokens):
        ids = np.asarray(tokens, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.cfg.vocab_size):
            raise ValueError(f"token ids must be in [0, {self.cfg.vocab_size})")
        return self.w["embed" if "embed" in self.w else "head"].rows(ids)

    def forward(
        self, tokens, cache: KVCache, rope_fn=rope, collect: dict | None = None, final_norm: bool = True
    ):
        """Append ``tokens`` at positions cache.n … cache.n+T−1 in one pass; return their
        final-normed hidden states (T, dim). The cache grows by T.

        ``collect``: a dict that receives the residual stream after each layer,
        ``collect[l]`` (T, dim) for l = 1 … n_layers (l = 0: the embeddings) — the inputs of
        the trained early-exit draft. ``final_norm=False`` returns the last residual stream
        un-normed (and stores it un-normed in ``cache.hidden``)."""
        c = self.cfg
        T = len(tokens)
        if T == 0:
            return np.zeros((0, c.dim), F32)
        n0 = cache.n
        n = n0 + T
        if n > c.context_length:
            raise ValueError(f"{n} positions exceed the model's context length {c.context_length}")
        cache.ensure(n)
        x = self.embed(tokens)
        if collect is not None:
            collect[0] = x.copy()
        cos, sin = rope_tables(np.arange(n0, n), c.head_dim, c.rope_base)
        mask = causal_mask(n0, T)
        for l in range(self.n_layers):
            x = x + self._attention(l, x, cache, n0, cos, sin, mask, rope_fn)
            x = x + self._ffn(l, x)
            if self.check_dtype and x.dtype != F32:
                raise TypeError(f"layer {l}: residual stream became {x.dtype} (float64 promotion)")
            if collect is not None:
                collect[l + 1] = x.copy()
        h = rms_norm(x, self.w["output_norm"], c.rms_eps) if final_norm else x
        if self.check_dtype and h.dtype != F32:
            raise TypeError(f"final norm produced {h.dtype}")
        cache.hidden[n0:n] = h
        cache.tokens.extend(int(t) for t in tokens)
        cache.n = n
        return h

    def _attention(self, l, x, cache, n0, cos, sin, mask, rope_fn):
        """Layer l's attention block on the residual stream x (T, dim): its new keys and values
        go into the cache at n0 …; every query attends to the cache up to itself. Returns the
        block's output (T, dim), to add to x."""
        c, w = self.cfg, self.w
        T, n = len(x), n0 + len(x)
        H, KVH, D = c.n_heads, c.n_kv_heads, c.head_dim
        rep = H // KVH
        qd, kvd = c.q_dim, c.kv_dim
        h = rms_norm(x, w[f"{l}.attn_norm"], c.rms_eps)
        qkv = product(h, w[f"{l}.wqkv"])
        q = rope_fn(qkv[:, :qd].reshape(T, H, D), cos, sin)
        k = rope_fn(qkv[:, qd : qd + kvd].reshape(T, KVH, D), cos, sin)
        v = qkv[:, qd + kvd :].reshape(T, KVH, D)
        cache.k[l, :, n0:n] = k.transpose(1, 0, 2)
        cache.v[l, :, n0:n] = v.transpose(1, 0, 2)
        K = cache.k[l, :, :n]  # (KVH, n, D)
        V = cache.v[l, :, :n]
        # query heads h·rep … h·rep+rep−1 share kv head h: group them as rows
        qg = q.transpose(1, 0, 2).reshape(KVH, rep * T, D)
        s = (qg @ K.transpose(0, 2, 1)) * self.scale  # (KVH, rep·T, n)
        if mask is not None:
            s = s.reshape(KVH, rep, T, n) + mask
            s = s.reshape(KVH, rep * T, n)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        s /= s.sum(axis=-1, keepdims=True)
        o = (s @ V).reshape(H, T, D).transpose(1, 0, 2).reshape(T, qd)
        return product(o, w[f"{l}.wo"])

    def _ffn(self, l, x):
        """Layer l's SwiGLU feed-forward block on x (T, dim); returns its output, to add to x."""
        c, w = self.cfg, self.w
        h = rms_norm(x, w[f"{l}.ffn_norm"], c.rms_eps)
        gu = product(h, w[f"{l}.wgu"])
        g, u = gu[:, : c.ffn_dim], gu[:, c.ffn_dim :]
        return product(silu(g) * u, w[f"{l}.wdown"])

    def logits(self, hidden, rows=None):
        """(T, vocab) float32 logits from final-normed hidden states, through the tied head.
        ``rows``: an index array of token ids; only their logits are computed, (T, len(rows))
        (a restricted head, e.g. a draft's shortlist; ``head_rows`` precomputes its weights)."""
        w = self.w["head"] if rows is None else self.head_rows(rows)
        out = product(hidden, w)
        if self.check_dtype and out.dtype != F32:
            raise TypeError(f"logits are {out.dtype}")
        return out

    def head_rows(self, rows):
        """The head's weight rows for the given token ids, (len(rows), dim), contiguous."""
        ids = np.asarray(rows, dtype=np.int64)
        if ids.ndim != 1 or ids.size == 0 or ids.min() < 0 or ids.max() >= self.cfg.vocab_size:
            raise ValueError(f"rows must be a non-empty 1-D array of token ids in [0, {self.cfg.vocab_size})")
        return self.w["head"].rows(ids)

    def logits_for(self, tokens):
        """Logits at every position of ``tokens``, from scratch (no cache reuse): a reference."""
        cache = self.new_cache(len(tokens))
        return self.logits(self.forward(list(tokens), cache))

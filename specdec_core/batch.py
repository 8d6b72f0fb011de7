"""Batched verification: one strict speculative round for B sequences at once, from arrays.

A serving loop (or a simulation) holds the model outputs of a whole batch as arrays::

    target_probs (B, γ+1, V) ─┐
    draft_probs  (B, γ,   V) ─┼─► verify_batch ─► n_accepted (B,), next_token (B,)
    draft_tokens (B, γ)      ─┘

Per sequence, the same rule as :func:`specdec_core.sampling.speculative_round`: accept xᵢ while
uᵢ < pᵢ(xᵢ)/qᵢ(xᵢ); at the first rejection draw a correction from the residual, otherwise a bonus
from row γ. The teaching sampler keeps a record of every step; this module keeps only what a
batch needs and is tuned for speed: it reads the drafted entries, the rows the round uses and
the row it samples from, never the rows after a rejection (with γ = 4 and a poor draft, most of
the input is never read).

Validation (``check``): by default every row the round uses is checked — finite, non-negative,
summing to 1 within ``SUM_TOL`` — in the same pass that uses it (see :func:`verify_batch`).
``check="all"`` validates every row first; ``check="none"`` is for a caller that has validated
upstream (it still refuses a drafted token with q = 0 and a row with no mass to sample from).

:func:`sample_rows` is the batched (B, V) form of the package's one inverse-CDF draw,
:func:`specdec_core.distributions.inverse_cdf`. Every random draw comes from the
``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .distributions import SUM_TOL, as_rectangular, check_distribution, check_rng
from .verify import check_rule, correction_weights

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: What :func:`verify_batch` validates: the rows the round uses, every row, or nothing.
CHECKS = ("used", "all", "none")

#: Columns per block of the two-level inverse-CDF search (capped at V for small vocabularies).
BLOCK = 512

#: Rows at least this long are verified one sequence at a time (each used row read once, its
#: correction formed and summed while it is in cache); shorter rows position by position.
LONG_ROW = 1024


def verify_batch(
    target_probs: ArrayLike,
    draft_probs: ArrayLike,
    draft_tokens: ArrayLike,
    rng: np.random.Generator,
    *,
    check: str = "used",
    correction: str = "residual",
) -> tuple[np.ndarray, np.ndarray]:
    """One verification round for B sequences at once, vectorized.

    target_probs (B, γ+1, V), draft_probs (B, γ, V), draft_tokens (B, γ) →
    (n_accepted (B,) int64, next_token (B,) int64): the next token is the correction drawn from
    the rule ``correction`` at the first rejection, or the bonus drawn from target row γ.

    ``check`` says which rows are validated (finite, non-negative, summing to 1 within
    ``SUM_TOL``; a bad one raises ``ValueError`` naming it):

    * ``"used"`` (default): the rows the round reads — p and q rows 0 … n of each sequence (n its
      accepted count; q only up to γ − 1) and the bonus row γ when all were accepted. A bad row
      after the first rejection is never read, so it is not an error. Each used row is read from
      memory once: its sum and minimum are taken back to back while it is in cache, and for long
      rows (V ≥ ``LONG_ROW``) the correction is formed and block-summed right after.
    * ``"all"``: every row, before anything else (reads both arrays in full).
    * ``"none"``: no row checks, for a caller that validated upstream. The drafted entries must
      still be finite with q > 0, and a row with no positive, finite mass is still refused.
    """
    rng = check_rng(rng)
    check_rule(correction, "correction")
    if not isinstance(check, str) or check not in CHECKS:
        raise ValueError(f"check must be one of {CHECKS}, got {check!r}")
    P, Q, X = _check_arrays(target_probs, draft_probs, draft_tokens)
    B, g1, V = P.shape
    gamma = g1 - 1
    if check == "all":
        check_distribution(P, "target_probs", exact=False)
        if gamma:
            check_distribution(Q, "draft_probs", exact=False)
    if gamma:
        n, all_ok = _accepted_counts(P, Q, X, rng)
    else:
        n, all_ok = np.zeros(B, dtype=np.int64), np.ones(B, dtype=bool)
    used = check == "used"
    if V >= LONG_ROW:
        return n, _long_rows_next(P, Q, n, correction, used, rng.random(B))
    if used:
        _check_used_rows(P, n, gamma, "target_probs")
        if gamma:
            _check_used_rows(Q, n, gamma - 1, "draft_probs")
    # One row per sequence: the bonus row γ, or the correction weights at the rejected position.
    dtype = P.dtype if P.dtype.kind == "f" else np.float64
    W = np.take(P.reshape(B * g1, V), np.arange(B) * g1 + n, axis=0).astype(dtype, copy=False)
    rej = np.flatnonzero(~all_ok)
    if rej.size:  # all corrections at once
        W[rej] = correction_weights(W[rej], Q[rej, n[rej]].astype(dtype, copy=False), correction)
    return n, sample_rows(W, rng.random(B))


def _check_arrays(target_probs, draft_probs, draft_tokens):
    """The three arrays as numpy arrays of the right kinds and matching shapes (B, γ+1, V),
    (B, γ, V), (B, γ), token ids in range; rows are not read here."""
    P = as_rectangular(target_probs, "target_probs")
    Q = as_rectangular(draft_probs, "draft_probs")
    X = as_rectangular(draft_tokens, "draft_tokens")
    for name, arr in (("target_probs", P), ("draft_probs", Q)):
        if arr.dtype.kind not in "fiu":
            raise ValueError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if P.ndim != 3:
        raise ValueError(f"target_probs must have shape (B, gamma+1, V), got {P.shape}")
    B, g1, V = P.shape
    if B == 0 or V == 0:
        raise ValueError(f"target_probs is empty (shape {P.shape})")
    gamma = g1 - 1
    if gamma < 0:
        raise ValueError("target_probs needs gamma+1 >= 1 positions")
    if Q.shape != (B, gamma, V):
        raise ValueError(
            f"draft_probs must have shape {(B, gamma, V)} to match target_probs {P.shape}, got {Q.shape}"
        )
    if X.shape != (B, gamma):
        raise ValueError(f"draft_tokens must have shape {(B, gamma)}, got {X.shape}")
    if X.size and X.dtype.kind not in "iu":
        raise ValueError(f"draft_tokens must be integers, got dtype {X.dtype}")
    if X.size and ((X < 0) | (X >= V)).any():
        raise ValueError(f"draft_tokens must be in [0, {V}), got {X.min()}..{X.max()}")
    return P, Q, X


def _accepted_counts(P, Q, X, rng):
    """n (B,): the accepted count of each sequence (γ uniforms each, drawn (B, γ) at once), and
    whether all γ were accepted. Only the drafted entries p(xᵢ), q(xᵢ) are read."""
    gamma = X.shape[1]
    px = _drafted_entries(P, X)
    qx = _drafted_entries(Q, X)
    if not (np.isfinite(px).all() and np.isfinite(qx).all()) or (px < 0).any():
        raise ValueError("target_probs/draft_probs: a drafted entry is NaN, infinite or negative")
    if (qx <= 0).any():
        raise ValueError("draft_probs: a drafted token has q = 0 (it could not have been proposed)")
    accept = rng.random((X.shape[0], gamma)) * qx < px  # u < p/q without dividing
    all_ok = accept.all(axis=1)
    return np.where(all_ok, gamma, np.argmin(accept, axis=1)).astype(np.int64), all_ok


def _drafted_entries(A, X):
    """A[b, i, X[b, i]] for i < γ as float64 (B, γ): a flat gather on contiguous input."""
    B, g = X.shape
    if A.flags.c_contiguous:
        L, V = A.shape[1], A.shape[2]
        idx = (np.arange(B)[:, None] * L + np.arange(g)[None, :]) * V + X
        return np.take(A.reshape(-1), idx).astype(np.float64, copy=False)
    return np.take_along_axis(A[:, :g, :], X[:, :, None], axis=2)[:, :, 0].astype(np.float64)


# ---------------------------------------------------------------- validation of the used rows


def _raise_bad_row(name, b, i, s, m):
    fault = (
        "contains NaN or an infinite entry"
        if not np.isfinite(s)
        else f"has a negative entry (min {m:.3g})"
        if m < 0
        else f"does not sum to 1 (sum {s:.9g})"
    )
    raise ValueError(f"{name}[{b}, {i}] (a row this round uses) {fault}")


def _row_tolerance(dtype, V):
    """SUM_TOL, plus the rounding bound of a pairwise sum of V entries in ``dtype`` (rows are
    summed in their own dtype: casting float32 to float64 on the fly costs ~6x)."""
    if dtype == np.float64:
        return SUM_TOL
    return SUM_TOL + 2 * np.log2(V) * float(np.finfo(dtype if dtype.kind == "f" else np.float64).eps)


def _raise_first_bad(sums, mins, tol, name):
    """Sums and minima (B, L) of the used rows (unused entries hold 1 and 0, which pass): raise
    naming the first bad row, if any. NaN and infinities make a sum non-finite, so sums and minima
    cover every fault."""
    bad = ~(np.abs(sums - 1.0) <= tol) | ~(mins >= 0)
    if bad.any():
        b, i = (int(v) for v in np.argwhere(bad)[0])
        _raise_bad_row(name, b, i, float(sums[b, i]), float(mins[b, i]))


def _check_used_rows(A, n, last, name):
    """Rows A[b, i] for i = 0 … min(n[b], last), for rows shorter than LONG_ROW (long rows are
    checked by :func:`_long_rows_next` as it uses them).

    Short rows (V ≤ 64): one matrix product gives every row sum at once (numpy's reduction
    along a short axis is slow per row) and one global minimum looks for negatives; only the
    used rows' verdicts count. Longer rows: position by position, only the used rows are read
    (a view, no copy, where every sequence uses that position)."""
    B, L, V = A.shape
    last = min(last, L - 1)
    if last < 0:
        return
    if V <= 64:
        used = np.arange(L)[None, :] <= np.minimum(n, last)[:, None]
        flat = A.reshape(B * L, V).astype(np.float64, copy=False)
        ones = np.ones(V)
        sums = (flat @ ones).reshape(B, L)
        bad = ~(np.abs(sums - 1.0) <= SUM_TOL) & used  # NaN / inf fail the comparison
        if not bool(flat.min() >= 0) or bad.any():  # NaN anywhere also lands here
            neg = (np.minimum(flat, 0.0) @ ones).reshape(B, L) < 0
            bad |= neg & used
            if bad.any():
                b, i = (int(v) for v in np.argwhere(bad)[0])
                _raise_bad_row(name, b, i, float(sums[b, i]), float(A[b, i].min()))
        return
    tol = _row_tolerance(A.dtype, V)
    for i in range(last + 1):
        b_idx = None if i == 0 else np.flatnonzero(n >= i)
        if b_idx is not None and b_idx.size == 0:
            break
        rows = A[:, i] if b_idx is None or b_idx.size == B else A[b_idx, i]
        sums = np.add.reduce(rows, axis=-1)
        if bool((np.abs(sums - 1.0) <= tol).all()) and bool(rows.min() >= 0):
            continue
        bad = ~(np.abs(sums - 1.0) <= tol) | (rows.min(axis=-1) < 0)
        k = int(np.flatnonzero(bad)[0])
        b = k if b_idx is None or b_idx.size == B else int(b_idx[k])
        _raise_bad_row(name, b, i, float(sums[k]), float(rows[k].min()))


def _long_rows_next(P, Q, n, correction, check, u):
    """The next token of each sequence for long rows, one sequence at a time: the sums and minima
    of its used rows (``check``; its rows 0 … n are one contiguous slab, in cache for the second
    reduction), the row it samples from (the correction at the rejected position, formed in one
    scratch row, or the bonus row), that row's block sums and the block its uniform picks while
    the row is in cache, keeping only that block. Then the verdicts on every used row, and one
    batched search inside the picked blocks. Scratch: one row, and one block per sequence.

    The residual is formed as max(p − q, 0) (rule "unnormalized"); a row where that has no mass
    is formed again by the "residual" rule itself (which falls back to p): the block sums stand in
    for the rule's own check of the mass."""
    B, g1, V = P.shape
    gamma = g1 - 1
    block = min(BLOCK, V)
    sums = np.empty(-(-V // block))
    buf = np.empty(V, dtype=P.dtype if P.dtype.kind == "f" else np.float64)
    first, rest, wb = np.zeros(B, dtype=np.int64), np.zeros(B), np.zeros((B, block))
    no_mass = False
    sp, mp, sq, mq = np.ones((B, g1)), np.zeros((B, g1)), np.ones((B, gamma)), np.zeros((B, gamma))
    rule = "unnormalized" if correction == "residual" else correction
    add, low = _row_sums(P.dtype), np.minimum.reduce
    with np.errstate(invalid="ignore", over="ignore"):  # bad rows are refused below, before any result
        for b, k in enumerate(n.tolist()):
            if check:
                slab = P[b, : k + 1]
                sp[b, : k + 1], mp[b, : k + 1] = add(slab, axis=1), low(slab, axis=1)
                if gamma:
                    slab = Q[b, : k + 1]  # rows 0 … min(k, γ − 1)
                    sq[b, : slab.shape[0]], mq[b, : slab.shape[0]] = add(slab, axis=1), low(slab, axis=1)
            row = P[b, k] if k == gamma else correction_weights(P[b, k], Q[b, k], rule, out=buf)
            _row_block_sums(row, block, sums)
            if k < gamma and rule != correction and not sums.sum() > 0:
                row = correction_weights(P[b, k], Q[b, k], correction, out=buf)
                _row_block_sums(row, block, sums)
            picked = _pick_block(sums, u[b])
            if picked is None:
                no_mass = True
                continue
            first[b], rest[b] = picked
            part = row[first[b] * block : (first[b] + 1) * block]
            wb[b, : part.size] = part
    if check:
        _raise_first_bad(sp, mp, _row_tolerance(P.dtype, V), "target_probs")
        _raise_first_bad(sq, mq, _row_tolerance(Q.dtype, V), "draft_probs")
    if no_mass:
        raise ValueError("weights: a row has no positive, finite mass to sample from")
    return first * block + _pick_in_blocks(wb, rest)


def _pick_block(sums, u):
    """:func:`_pick_blocks` for one row: (block k, target left inside it), or None when the row
    has no positive, finite mass. The same arithmetic, so the same block, bit for bit."""
    csum = np.cumsum(sums)
    total = csum[-1]
    if not (total > 0 and np.isfinite(total)):
        return None
    t = float(u) * total
    if sums.size == 1:
        return 0, t
    k = int(np.searchsorted(csum, t, side="right"))  # = (csum <= t).sum(): csum is non-decreasing
    last_pos = sums.size - 1 - int(np.argmax(sums[::-1] > 0))
    k = min(k, last_pos)
    if not sums[k] > 0:
        k = last_pos
    return k, t - (csum[k - 1] if k > 0 else 0.0)


def _row_sums(dtype):
    """How a used slab (m, V) is summed row by row: float64 by ``einsum`` (SIMD accumulators:
    rounding ≤ V·2⁻⁵³ relative, 3.6e-12 at V = 32,000, far inside SUM_TOL, and ~1.6x faster than
    the pairwise sum); other dtypes by numpy's pairwise sum in their own dtype (a float32 sum with
    a few SIMD accumulators could be off by more than the tolerance allows)."""
    if dtype == np.float64:
        return lambda slab, axis: np.einsum("ij->i", slab)
    return np.add.reduce


def _row_block_sums(row, block, out):
    """:func:`block_sums` of one row into ``out`` (float64), the same sums bit for bit."""
    nb = row.size // block
    if nb:
        np.add.reduce(row[: nb * block].reshape(nb, block), axis=1, dtype=row.dtype, out=out[:nb])
    if nb * block < row.size:
        out[nb] = np.add.reduce(row[nb * block :])


# ---------------------------------------------------------------- batched inverse CDF


def block_sums(W: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """Sums of consecutive blocks of ``block`` columns of a (B, V) array, returned in float64
    (the last block may be shorter). Each block is summed in W's own dtype (pairwise, so a
    float32 block of 512 is off by ~1e-7 relative at most; casting on the fly costs ~6x)."""
    B, V = W.shape
    nb = V // block
    parts = []
    if nb:
        parts.append(W[:, : nb * block].reshape(B, nb, block).sum(axis=2).astype(np.float64))
    if nb * block < V:
        parts.append(W[:, nb * block :].sum(axis=1, keepdims=True).astype(np.float64))
    return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]


def _sample_short_rows(W, u):
    """sample_rows for short rows (V ≤ 64): column by column over all B rows at once (numpy's
    per-row work along a short axis is slow); scratch is a few length-B vectors."""
    B, V = W.shape
    total = np.zeros(B)
    last = np.full(B, -1, dtype=np.int64)
    for c in range(V):
        col = W[:, c]
        total += col
        last = np.where(col > 0, c, last)
    if (total <= 0).any() or not np.isfinite(total).all():
        raise ValueError("weights: a row has no positive, finite mass to sample from")
    t = u * total
    acc = np.zeros(B)
    j = np.zeros(B, dtype=np.int64)
    for c in range(V):
        acc += W[:, c]
        j += acc <= t
    return np.minimum(j, last)


def _pick_blocks(sums, u):
    """First level of the two-level search: from block sums (B, nb) and uniforms (B,), the block
    k of each draw (never a zero-mass block) and the target left inside it, t − (mass before k)."""
    B, nblocks = sums.shape
    rows = np.arange(B)
    csum = np.cumsum(sums, axis=1)
    total = csum[:, -1]
    if (total <= 0).any() or not np.isfinite(total).all():
        raise ValueError("weights: a row has no positive, finite mass to sample from")
    t = np.asarray(u, dtype=np.float64) * total
    if nblocks == 1:
        return np.zeros(B, dtype=np.int64), t
    k = (csum <= t[:, None]).sum(axis=1)
    last_pos_block = nblocks - 1 - np.argmax(sums[:, ::-1] > 0, axis=1)
    k = np.minimum(k, last_pos_block)
    k = np.where(sums[rows, k] > 0, k, last_pos_block)
    before = np.where(k > 0, csum[rows, np.maximum(k - 1, 0)], 0.0)
    return k, t - before


def _pick_in_blocks(wb, rest):
    """Second level: the column inside each picked block (B, block) (zero-padded past V), never
    a zero-weight one."""
    cb = np.cumsum(wb, axis=1)
    j = (cb <= rest[:, None]).sum(axis=1)
    last_pos = wb.shape[1] - 1 - np.argmax(wb[:, ::-1] > 0, axis=1)
    return np.minimum(j, last_pos)


def sample_rows(
    weights: ArrayLike, u: ArrayLike, block: int = BLOCK, blocks: np.ndarray | None = None
) -> np.ndarray:
    """One draw per row of a (B, V) array of non-negative weights (rows need not be normalized),
    by inverse CDF with the uniforms ``u`` (B,): the batched form of
    :func:`specdec_core.distributions.inverse_cdf`. Two-level search: cumulative sums of blocks
    of ``block`` columns (at most V) pick the block, then a cumulative sum inside that block
    alone picks the column; neither a full (B, V) cumsum nor scratch wider than V is formed.
    ``blocks``: the block sums when the caller has them (:func:`block_sums`). Zero-weight
    columns are never returned. No validation of the weights: callers pass checked rows."""
    W = np.asarray(weights)
    if W.dtype.kind != "f":
        W = W.astype(np.float64)
    B, V = W.shape
    if V <= 64 and blocks is None:
        return _sample_short_rows(W, np.asarray(u, dtype=np.float64))
    block = max(1, min(int(block), V))
    sums = block_sums(W, block) if blocks is None else blocks
    k, rest = _pick_blocks(sums, u)
    if sums.shape[1] == 1:
        wb = W.astype(np.float64, copy=False)
    else:
        rows = np.arange(B)
        cols = k[:, None] * block + np.arange(block)[None, :]
        wb = np.where(cols < V, W[rows[:, None], np.minimum(cols, V - 1)].astype(np.float64), 0.0)
    return (k * block + _pick_in_blocks(wb, rest)).astype(np.int64)

"""Strict speculative sampling, the autoregressive baseline, and batched verification.

Data flow of one round (γ proposals)::

    prefix ─► draft: x₁…x_γ with q₁…q_γ          (γ draft steps)
           ─► target: p₁…p_{γ+1}                  (γ+1 positions, one call where the model can)
           ─► for i = 1…γ: accept xᵢ if uᵢ < pᵢ(xᵢ)/qᵢ(xᵢ)
                 first rejection at i: emit a correction ~ residual(pᵢ, qᵢ); discard xᵢ₊₁…x_γ
              no rejection: emit a bonus ~ p_{γ+1}
           ─► RoundRecord ─► accounting

**Models.** A model is any callable ``model(prefix) -> probs`` where ``prefix`` is a tuple of
token ids and ``probs`` a 1-D probability vector. Two optional faster paths are used when a
model offers them:

* target ``model.score(prefix, continuation) -> array (len(continuation)+1, V)``: the
  distributions after ``prefix``, ``prefix + continuation[:1]``, …, ``prefix + continuation``
  in one call (a transformer scores them in one forward pass);
* draft ``model.propose(prefix, gamma, rng) -> (tokens, q_rows)``: up to γ proposals and the
  distributions they were drawn from, one row each (e.g. prompt lookup, whose q rows are one-hot
  and which may offer fewer than γ when its match runs out).

Every random draw comes from the ``numpy.random.Generator`` passed in.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .distributions import SUM_TOL, check_gamma

CORRECT_RULES = ("residual", "draft", "target", "uniform")


# ---------------------------------------------------------------- checks

def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy.random.Generator (e.g. np.random.default_rng(0)), got {type(rng).__name__}"
        )
    return rng


def _check_prefix(prefix):
    if isinstance(prefix, (str, bytes)):
        raise ValueError("prefix must be a sequence of token ids, not a string")
    try:
        out = tuple(int(t) for t in prefix)
    except (TypeError, ValueError):
        raise ValueError(f"prefix must be a sequence of integer token ids, got {prefix!r}") from None
    if any(t < 0 for t in out):
        raise ValueError("prefix has a negative token id")
    return out


def _check_max_new(n):
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"max_new_tokens must be a non-negative integer, got {n!r}")
    return int(n)


def _row(probs, name):
    """A model's output as a float64 probability row, checked cheaply."""
    arr = np.asarray(probs, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must return a non-empty 1-D probability vector, got shape {arr.shape}")
    s = arr.sum()
    if not np.isfinite(s) or abs(s - 1.0) > SUM_TOL or (arr < 0).any():
        raise ValueError(f"{name} returned an invalid distribution (sum {s!r}, min {arr.min()!r})")
    return arr


def _sample(row, u):
    """Inverse-CDF draw from an (unnormalized, non-negative) row with a uniform u in [0, 1)."""
    c = np.cumsum(row)
    i = int(np.searchsorted(c, u * c[-1], side="right"))
    if i >= len(row):  # u·total rounded onto the last edge
        i = int(np.flatnonzero(row)[-1])
    return i


# ---------------------------------------------------------------- records

@dataclass(frozen=True)
class RoundRecord:
    """Everything one round did, enough for a stepper widget to replay it.

    ``proposals``: the γ drafted tokens; ``q_x``/``p_x``: their draft and target probabilities;
    ``ratios``: min(1, p/q) per proposal; ``draws``: the uniforms compared with those ratios
    (only for positions actually checked); ``stop``: index of the first rejection, or ``None``
    when all were accepted; ``emitted``: the tokens this round adds to the output (accepted
    prefix + correction or bonus); ``kind``: "correction" or "bonus". ``p_rows``/``q_rows``: the
    full distributions (γ+1 target rows, γ draft rows) when recording was asked for.
    """

    prefix: tuple
    proposals: tuple
    q_x: tuple
    p_x: tuple
    ratios: tuple
    draws: tuple
    stop: int | None
    emitted: tuple
    kind: str
    p_rows: np.ndarray | None = field(default=None, compare=False, repr=False)
    q_rows: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def gamma(self) -> int:
        return len(self.proposals)

    @property
    def accepted(self) -> int:
        return self.gamma if self.stop is None else self.stop

    @property
    def rejected(self) -> int:
        return 0 if self.stop is None else 1

    @property
    def discarded(self) -> int:
        """Proposals after the first rejection: drafted, never checked, thrown away."""
        return self.gamma - self.accepted - self.rejected

    @property
    def target_positions(self) -> int:
        """Target positions scored in this round (γ + 1)."""
        return self.gamma + 1

    @property
    def wasted_target_positions(self) -> int:
        """Scored target positions whose result did not reach the output."""
        return self.target_positions - len(self.emitted)


@dataclass
class GenerationResult:
    """Output tokens plus the round accounting. Output = accepted + corrections + bonus."""

    tokens: tuple
    records: list = field(default_factory=list)

    @property
    def rounds(self) -> int:
        return len(self.records)

    @property
    def proposed(self) -> int:
        return sum(r.gamma for r in self.records)

    @property
    def accepted(self) -> int:
        return sum(r.accepted for r in self.records)

    @property
    def rejected(self) -> int:
        return sum(r.rejected for r in self.records)

    @property
    def discarded(self) -> int:
        return sum(r.discarded for r in self.records)

    @property
    def corrections(self) -> int:
        return sum(r.kind == "correction" for r in self.records)

    @property
    def bonus(self) -> int:
        return sum(r.kind == "bonus" for r in self.records)

    @property
    def target_positions(self) -> int:
        return sum(r.target_positions for r in self.records)

    @property
    def emitted_per_round(self) -> list:
        return [len(r.emitted) for r in self.records]

    def summary(self) -> dict:
        return {
            "tokens": len(self.tokens), "rounds": self.rounds, "proposed": self.proposed,
            "accepted": self.accepted, "rejected": self.rejected, "discarded": self.discarded,
            "corrections": self.corrections, "bonus": self.bonus,
            "target_positions": self.target_positions,
        }


# ---------------------------------------------------------------- model adapters

def target_rows(target, prefix: tuple, continuation: tuple) -> np.ndarray:
    """p rows after prefix, prefix+c₁, …, prefix+c (len(c)+1 rows), one call when possible."""
    if hasattr(target, "score"):
        rows = np.asarray(target.score(prefix, continuation), dtype=np.float64)
        if rows.ndim != 2 or rows.shape[0] != len(continuation) + 1:
            raise ValueError(f"target.score returned shape {rows.shape}, expected ({len(continuation) + 1}, V)")
        return rows
    return np.stack([_row(target(prefix + tuple(continuation[:i])), "target")
                     for i in range(len(continuation) + 1)])


def draft_proposals(draft, prefix: tuple, gamma: int, rng) -> tuple[tuple, np.ndarray]:
    """γ proposals drawn from the draft, and the (γ, V) rows they were drawn from."""
    if gamma == 0:
        return (), np.zeros((0, 0))
    if hasattr(draft, "propose"):
        toks, rows = draft.propose(prefix, gamma, rng)
        rows = np.asarray(rows, dtype=np.float64)
        return tuple(int(t) for t in toks), rows
    toks, rows = [], []
    ctx = prefix
    for _ in range(gamma):
        q = _row(draft(ctx), "draft")
        x = _sample(q, rng.random())
        toks.append(x)
        rows.append(q)
        ctx = ctx + (x,)
    return tuple(toks), np.stack(rows)


# ---------------------------------------------------------------- one round

def _correction_row(p, q, rule):
    if rule == "residual":
        r = np.maximum(p - q, 0.0)
        return r if r.sum() > 0 else p  # float rounding only: p == q cannot reject
    if rule == "draft":
        return q
    if rule == "target":
        return p
    return np.ones_like(p)  # uniform


def speculative_round(target, draft, prefix, *, gamma, rng, correction="residual",
                      record_distributions=False) -> RoundRecord:
    """One draft–verify–correct round from ``prefix``. See the module docstring."""
    prefix = _check_prefix(prefix)
    gamma = check_gamma(gamma)
    rng = _check_rng(rng)
    if correction not in CORRECT_RULES:
        raise ValueError(f"correction must be one of {CORRECT_RULES}, got {correction!r}")
    xs, q_rows = draft_proposals(draft, prefix, gamma, rng)
    if len(xs) > gamma:
        raise ValueError(f"draft proposed {len(xs)} tokens, more than gamma = {gamma}")
    if len(xs) < gamma:
        # A draft may offer fewer proposals (prompt lookup without a full match). The law is
        # kept because how many it offers depends only on the prefix, never on the target.
        gamma = len(xs)
        q_rows = q_rows[:gamma] if gamma else np.zeros((0, 0))
    p_rows = target_rows(target, prefix, xs)
    if gamma and q_rows.shape != (gamma, p_rows.shape[1]):
        raise ValueError(f"draft rows have shape {q_rows.shape}, target rows {p_rows.shape}: vocabularies differ")
    q_x, p_x, ratios, draws = [], [], [], []
    stop = None
    for i, x in enumerate(xs):
        qx, px = float(q_rows[i, x]), float(p_rows[i, x])
        if qx <= 0:
            raise ValueError(f"draft proposed token {x} at position {i} with q = 0")
        ratio = min(1.0, px / qx)
        u = float(rng.random())
        q_x.append(qx), p_x.append(px), ratios.append(ratio), draws.append(u)
        if not u < ratio:
            stop = i
            break
    if stop is None:
        last = _sample(p_rows[gamma], rng.random())
        emitted, kind = xs + (last,), "bonus"
    else:
        row = _correction_row(p_rows[stop], q_rows[stop], correction)
        last = _sample(row, rng.random())
        emitted, kind = xs[:stop] + (last,), "correction"
    # Probabilities of the unchecked proposals are recorded too, for display.
    for i in range(len(q_x), gamma):
        q_x.append(float(q_rows[i, xs[i]])), p_x.append(float(p_rows[i, xs[i]]))
        ratios.append(min(1.0, p_x[-1] / q_x[-1]) if q_x[-1] > 0 else 1.0)
    return RoundRecord(
        prefix=prefix, proposals=xs, q_x=tuple(q_x), p_x=tuple(p_x), ratios=tuple(ratios),
        draws=tuple(draws), stop=stop, emitted=emitted, kind=kind,
        p_rows=p_rows if record_distributions else None,
        q_rows=q_rows if record_distributions else None,
    )


# ---------------------------------------------------------------- generation

def speculative_generate(target, draft, prefix, *, gamma, max_new_tokens, rng,
                         correction="residual", record_distributions=False) -> GenerationResult:
    """Strict speculative sampling, round after round, until exactly ``max_new_tokens`` tokens.

    The last round drafts only as many proposals as still fit (γ_eff = min(γ, remaining − 1)),
    so nothing is truncated and every emitted token keeps the target's law.
    ``correction`` other than "residual" is a deliberately *wrong* variant for teaching and tests.
    """
    prefix = _check_prefix(prefix)
    gamma = check_gamma(gamma)
    n = _check_max_new(max_new_tokens)
    rng = _check_rng(rng)
    out: list[int] = []
    records = []
    while len(out) < n:
        g = min(gamma, n - len(out) - 1)
        rec = speculative_round(target, draft, prefix + tuple(out), gamma=g, rng=rng,
                                correction=correction, record_distributions=record_distributions)
        records.append(rec)
        out.extend(rec.emitted)
    return GenerationResult(tokens=tuple(out), records=records)


def autoregressive_generate(target, prefix, *, max_new_tokens, rng,
                            record_distributions=False) -> GenerationResult:
    """The baseline: one target sample per token. Each step is recorded as a γ = 0 round
    (nothing proposed, one token drawn from p), so the accounting reads the same way."""
    prefix = _check_prefix(prefix)
    n = _check_max_new(max_new_tokens)
    rng = _check_rng(rng)
    out: list[int] = []
    records = []
    for _ in range(n):
        ctx = prefix + tuple(out)
        p = _row(target(ctx), "target")
        x = _sample(p, rng.random())
        out.append(x)
        records.append(RoundRecord(prefix=ctx, proposals=(), q_x=(), p_x=(), ratios=(), draws=(),
                                   stop=None, emitted=(x,), kind="bonus",
                                   p_rows=p[None, :] if record_distributions else None))
    return GenerationResult(tokens=tuple(out), records=records)


# ---------------------------------------------------------------- batched verification

def verify_batch(target_probs, draft_probs, draft_tokens, rng, *, check_all=False,
                 correction="residual"):
    """One verification round for B sequences at once, vectorized.

    target_probs (B, γ+1, V), draft_probs (B, γ, V), draft_tokens (B, γ) →
    (n_accepted (B,), next_token (B,)): the next token is the correction drawn from the
    residual at the first rejection, or the bonus drawn from target row γ.

    Only what the round needs is read: the drafted entries p(xᵢ), q(xᵢ) and one target row and
    one draft row per sequence. By default only those entries are validated (finite,
    non-negative, rows summing to 1); ``check_all=True`` validates every row first (reading
    everything, as slow as the memory-traffic floor).
    """
    rng = _check_rng(rng)
    if correction not in CORRECT_RULES:
        raise ValueError(f"correction must be one of {CORRECT_RULES}, got {correction!r}")
    P = np.asarray(target_probs)
    Q = np.asarray(draft_probs)
    X = np.asarray(draft_tokens)
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
        raise ValueError(f"draft_probs must have shape {(B, gamma, V)} to match target_probs {P.shape}, got {Q.shape}")
    if X.shape != (B, gamma):
        raise ValueError(f"draft_tokens must have shape {(B, gamma)}, got {X.shape}")
    if X.size and X.dtype.kind not in "iu":
        raise ValueError(f"draft_tokens must be integers, got dtype {X.dtype}")
    if X.size and ((X < 0) | (X >= V)).any():
        raise ValueError(f"draft_tokens must be in [0, {V}), got {X.min()}..{X.max()}")
    if check_all:
        from .distributions import check_distribution
        check_distribution(P, "target_probs", exact=False)
        if gamma:
            check_distribution(Q, "draft_probs", exact=False)
    rows = np.arange(B)
    if gamma:
        px = np.take_along_axis(P[:, :gamma, :], X[:, :, None], axis=2)[:, :, 0].astype(np.float64)
        qx = np.take_along_axis(Q, X[:, :, None], axis=2)[:, :, 0].astype(np.float64)
        if not (np.isfinite(px).all() and np.isfinite(qx).all()) or (px < 0).any():
            raise ValueError("target_probs/draft_probs: a drafted entry is NaN, infinite or negative")
        if (qx <= 0).any():
            raise ValueError("draft_probs: a drafted token has q = 0 (it could not have been proposed)")
        u = rng.random((B, gamma))
        accept = u * qx < px  # u < p/q without dividing
        all_ok = accept.all(axis=1)
        n = np.where(all_ok, gamma, np.argmin(accept, axis=1))
    else:
        all_ok = np.ones(B, dtype=bool)
        n = np.zeros(B, dtype=np.int64)
    # One target row per sequence (row n: the rejected position, or the bonus row γ), gathered
    # once in the input's float dtype; the residual is formed in place, row by row.
    dtype = P.dtype if P.dtype.kind == "f" else np.float64
    W = np.take(P.reshape(B * g1, V), rows * g1 + n, axis=0).astype(dtype, copy=False)
    if not (W.min() >= 0):  # also False for NaN
        raise ValueError("target_probs: a row used for the correction or bonus has NaN or negative entries")
    for b in np.flatnonzero(~all_ok):
        wb = W[b]
        if correction == "residual":
            np.subtract(wb, Q[b, n[b]], out=wb, casting="unsafe")
            np.maximum(wb, 0, out=wb)
        elif correction == "draft":
            wb[:] = Q[b, n[b]]
        elif correction == "uniform":
            wb[:] = 1
        # "target": keep p
    blocks = block_sums(W)
    sums = blocks.sum(axis=1)
    if not np.isfinite(sums).all():
        raise ValueError("target_probs/draft_probs: a row used for the correction or bonus has NaN or inf entries")
    if (np.abs(sums[all_ok] - 1.0) > SUM_TOL).any():
        raise ValueError("target_probs: a bonus row does not sum to 1")
    empty = np.flatnonzero(sums <= 0)
    if empty.size:  # float rounding only: a residual with no mass means p == q, which cannot reject
        W[empty] = P[empty, n[empty]]
        blocks[empty] = block_sums(W[empty])
    nxt = sample_rows(W, rng.random(B), blocks=blocks)
    return n.astype(np.int64), nxt


BLOCK = 512


def block_sums(W, block=BLOCK):
    """Sums of consecutive blocks of ``block`` columns of a (B, V) array, in float64 (the last
    block may be shorter)."""
    B, V = W.shape
    nb = V // block
    parts = []
    if nb:
        parts.append(W[:, : nb * block].reshape(B, nb, block).sum(axis=2, dtype=np.float64))
    if nb * block < V:
        parts.append(W[:, nb * block:].sum(axis=1, keepdims=True, dtype=np.float64))
    return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]


def sample_rows(weights, u, block=BLOCK, blocks=None):
    """One draw per row of a (B, V) array of non-negative weights (rows need not be normalized),
    by inverse CDF with the uniforms ``u`` (B,). Two-level search: cumulative sums of blocks of
    ``block`` columns pick the block, then a cumulative sum inside that block alone picks the
    column; a full (B, V) cumsum is never formed. Zero-weight columns are never returned."""
    W = np.asarray(weights)
    if W.dtype.kind != "f":
        W = W.astype(np.float64)
    B, V = W.shape
    rows = np.arange(B)
    sums = block_sums(W, block) if blocks is None else blocks
    csum = np.cumsum(sums, axis=1)
    total = csum[:, -1]
    if (total <= 0).any() or not np.isfinite(total).all():
        raise ValueError("weights: a row has no positive, finite mass to sample from")
    t = np.asarray(u, dtype=np.float64) * total
    k = (csum <= t[:, None]).sum(axis=1)
    nblocks = sums.shape[1]
    last_pos_block = nblocks - 1 - np.argmax(sums[:, ::-1] > 0, axis=1)
    k = np.minimum(k, last_pos_block)
    k = np.where(sums[rows, k] > 0, k, last_pos_block)
    before = np.where(k > 0, csum[rows, np.maximum(k - 1, 0)], 0.0)
    cols = k[:, None] * block + np.arange(block)[None, :]
    valid = cols < V
    wb = np.where(valid, W[rows[:, None], np.minimum(cols, V - 1)].astype(np.float64), 0.0)
    cb = np.cumsum(wb, axis=1)
    j = (cb <= (t - before)[:, None]).sum(axis=1)
    last_pos = block - 1 - np.argmax(wb[:, ::-1] > 0, axis=1)
    j = np.minimum(j, last_pos)
    return (k * block + j).astype(np.int64)

"""Strict speculative sampling, the autoregressive baseline, and batched verification.

Data flow of one round (γ proposals)::

    prefix ─► draft: x₁…x_γ with q₁…q_γ          (γ draft steps)
           ─► target: p₁…p_{γ+1}                  (γ+1 positions, one call where the model can)
           ─► for i = 1…γ: accept xᵢ if uᵢ < pᵢ(xᵢ)/qᵢ(xᵢ)
                 first rejection at i: emit a correction ~ residual(pᵢ, qᵢ); discard xᵢ₊₁…x_γ
              no rejection: emit a bonus ~ p_{γ+1}
           ─► stop tokens: the output ends with the first one emitted; what the round made
              after it is discarded (RoundRecord.after_stop) and generation ends
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

Everything a model returns is validated like a direct argument (shape, vocabulary size,
finite, non-negative, rows summing to 1, integer token ids in range): a faulty model raises
``ValueError`` naming the call, never a silently wrong output.

Every random draw comes from the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .distributions import (
    SUM_TOL,
    as_rectangular,
    check_bool,
    check_gamma,
    check_int,
    check_model_rows,
    check_rng,
    check_token_ids,
    inverse_cdf,
)
from .verify import SAMPLEABLE_RULES, check_rule, correction_weights  # noqa: F401  (re-export)

# ---------------------------------------------------------------- checks


def check_prefix(prefix, vocab: int | None = None) -> tuple:
    """A prefix: a sequence of integer token ids (not a string; no floats, bools or negatives;
    below ``vocab`` when given)."""
    if isinstance(prefix, (str, bytes)):
        raise ValueError("prefix must be a sequence of token ids, not a string")
    return check_token_ids(prefix, "prefix", vocab)


def check_stop(stop) -> frozenset:
    """``stop``: ``None`` (no stop tokens) or a collection of integer token ids, e.g. ``{3}``."""
    if stop is None:
        return frozenset()
    if isinstance(stop, (int, np.integer, bool, np.bool_)):
        raise ValueError(
            f"stop must be a collection of token ids such as {{{stop!r}}}, not a single {type(stop).__name__}"
        )
    if isinstance(stop, (str, bytes, dict)) or not hasattr(stop, "__iter__"):
        raise ValueError(f"stop must be a collection of integer token ids (e.g. {{3}}), got {stop!r}")
    return frozenset(check_token_ids(list(stop), "stop"))


def _check_stop_in_vocab(stop: frozenset, vocab: int) -> None:
    bad = sorted(t for t in stop if t >= vocab)
    if bad:
        raise ValueError(f"stop holds the token id {bad[0]}, outside the vocabulary [0, {vocab})")


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class RoundRecord:
    """Everything one round did, enough for a stepper widget to replay it.

    ``proposals``: the γ drafted tokens; ``q_x``/``p_x``: their draft and target probabilities;
    ``ratios``: min(1, p/q) per proposal; ``draws``: the uniforms compared with those ratios
    (only for positions actually checked); ``stop``: index of the first rejection, or ``None``
    when all were accepted; ``emitted``: the tokens this round adds to the output (accepted
    prefix + correction or bonus, cut after a stop token); ``kind``: "correction" or "bonus".
    ``p_rows``/``q_rows``: the full distributions (γ+1 target rows, γ draft rows) when
    recording was asked for. ``gamma_chosen``: the γ planned for this round (the fixed γ or
    what the γ policy chose, before the last round's cap and any confidence stop); ``gamma`` is
    how many proposals were actually drafted.

    **Stop tokens.** ``produced`` is what verification made (accepted prefix + correction or
    bonus, K = accepted + 1 tokens); ``stop_at`` is the index in ``produced`` of the first stop
    token (``None``: no stop token this round). The output keeps ``produced[:stop_at + 1]`` —
    the stop token included — and :attr:`after_stop` tokens after it are discarded; generation
    ends there. Without a stop token ``emitted == produced``.
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
    stop_at: int | None = None
    produced: tuple | None = None
    vocab_size: int | None = field(default=None, compare=False, repr=False)
    gamma_chosen: int | None = field(default=None, compare=False)

    def __post_init__(self):
        if self.produced is None:
            object.__setattr__(self, "produced", tuple(self.emitted))

    @property
    def gamma(self) -> int:
        return len(self.proposals)

    @property
    def accepted(self) -> int:
        return self.gamma if self.stop is None else self.stop

    @property
    def kept(self) -> int:
        """Accepted proposals that reached the output (a stop token can cut accepted ones)."""
        return min(self.accepted, len(self.emitted))

    @property
    def rejected(self) -> int:
        return 0 if self.stop is None else 1

    @property
    def discarded(self) -> int:
        """Proposals after the first rejection: drafted, never checked, thrown away."""
        return self.gamma - self.accepted - self.rejected

    @property
    def count(self) -> int:
        """K: tokens verification produced this round (accepted + 1), before any stop cut."""
        return self.accepted + 1

    @property
    def ended(self) -> bool:
        """True when this round emitted a stop token (generation ends after it)."""
        return self.stop_at is not None

    @property
    def after_stop(self) -> int:
        """Tokens produced after the stop token and discarded (0 without a stop token)."""
        return len(self.produced) - len(self.emitted)

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
    """Output tokens plus the round accounting.

    Output = accepted + corrections + bonus − after_stop: every round produces its accepted
    proposals and one correction or bonus; a round that emits a stop token discards what it
    produced after it (``after_stop``) and ends the generation (``stopped``).
    """

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
    def after_stop(self) -> int:
        """Tokens produced after a stop token and discarded."""
        return sum(r.after_stop for r in self.records)

    @property
    def stopped(self) -> bool:
        """True when generation ended on a stop token (rather than at max_new_tokens)."""
        return bool(self.records) and self.records[-1].ended

    @property
    def target_positions(self) -> int:
        return sum(r.target_positions for r in self.records)

    @property
    def emitted_per_round(self) -> list:
        return [len(r.emitted) for r in self.records]

    def summary(self) -> dict:
        return {
            "tokens": len(self.tokens),
            "rounds": self.rounds,
            "proposed": self.proposed,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "discarded": self.discarded,
            "corrections": self.corrections,
            "bonus": self.bonus,
            "target_positions": self.target_positions,
            "after_stop": self.after_stop,
            "stopped": self.stopped,
        }


# ---------------------------------------------------------------- model adapters

_NO_DRAFT = object()


def check_models(target, draft=_NO_DRAFT) -> int | None:
    """The target (callable, or offering ``.score``) and draft (callable, or offering
    ``.propose``); returns the vocabulary size they declare (``vocab_size``), if any."""
    if not (callable(target) or hasattr(target, "score")):
        raise ValueError(
            f"target must be a model: prefix -> probabilities (or offer .score), got {type(target).__name__}"
        )
    if draft is not _NO_DRAFT and not (callable(draft) or hasattr(draft, "propose")):
        raise ValueError(
            f"draft must be a model: prefix -> probabilities (or offer .propose), got {type(draft).__name__}"
        )
    v = getattr(target, "vocab_size", None)
    return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 else None


def target_rows(target, prefix: tuple, continuation: tuple, vocab: int | None = None) -> np.ndarray:
    """p rows after prefix, prefix+c₁, …, prefix+c (len(c)+1 rows), one call when possible.

    Whatever the target returns is validated like a direct argument (shape, vocabulary size,
    finite, non-negative, rows summing to 1)."""
    n = len(continuation) + 1
    if hasattr(target, "score"):
        rows = target.score(prefix, continuation)
        return check_model_rows(rows, "target.score", n_rows=n, vocab=vocab)
    out = []
    for i in range(n):
        row = check_model_rows(target(prefix + tuple(continuation[:i])), "target", vocab=vocab)
        vocab = row.shape[0]
        out.append(row)
    return np.stack(out)


def draft_proposals(
    draft, prefix: tuple, gamma: int, rng, vocab: int | None = None, keep=None
) -> tuple[tuple, np.ndarray]:
    """Up to γ proposals drawn from the draft, and the (len, V) rows they were drawn from.

    ``.propose`` output is validated: integer token ids in [0, V), one distribution row per
    token, at most γ of them. ``keep(q_row, token) -> bool`` (a γ policy's stop rule on the
    draft's confidence): drafting stops after the first token for which it is False (that token
    stays a proposal); it sees only the draft's rows and draws."""
    if gamma == 0:
        return (), np.zeros((0, vocab or 0))
    if hasattr(draft, "propose"):
        out = draft.propose(prefix, gamma, rng)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise ValueError("draft.propose must return (tokens, q_rows)")
        toks, rows = out
        if isinstance(toks, np.ndarray) and toks.dtype.kind in "fb":
            raise ValueError(f"draft.propose tokens must be integer token ids, got dtype {toks.dtype}")
        toks = check_token_ids(toks, "draft.propose tokens", vocab)
        if len(toks) > gamma:
            raise ValueError(f"draft proposed {len(toks)} tokens, more than gamma = {gamma}")
        if not toks:
            return (), np.zeros((0, vocab or 0))
        rows = check_model_rows(rows, "draft.propose rows", n_rows=len(toks), vocab=vocab)
        # token ids are checked against the rows' own vocabulary too
        check_token_ids(toks, "draft.propose tokens", rows.shape[1])
        if keep is not None:
            cut = next((i + 1 for i, x in enumerate(toks) if not keep(rows[i], x)), len(toks))
            toks, rows = toks[:cut], rows[:cut]
        return toks, rows
    toks, rows = [], []
    ctx = prefix
    for _ in range(gamma):
        q = check_model_rows(draft(ctx), "draft", vocab=vocab)
        vocab = q.shape[0]
        x = inverse_cdf(q, rng.random())
        toks.append(x)
        rows.append(q)
        ctx = ctx + (x,)
        if keep is not None and not keep(q, x):
            break
    return tuple(toks), np.stack(rows)


# ---------------------------------------------------------------- one round


def speculative_round(
    target,
    draft,
    prefix,
    *,
    gamma,
    rng,
    correction="residual",
    record_distributions=False,
    stop=None,
    vocab=None,
) -> RoundRecord:
    """One draft–verify–correct round from ``prefix``. See the module docstring.

    ``stop``: a collection of token ids; the round's output is cut right after the first one
    it emits (accepted proposal, correction or bonus) — see :class:`RoundRecord`.
    ``vocab``: the vocabulary size every row must have (default: the target's ``vocab_size``
    if it declares one; :func:`speculative_generate` passes the size seen in its first round).
    """
    declared = check_models(target, draft)
    vocab = declared if vocab is None else check_int(vocab, "vocab", 1)
    prefix = check_prefix(prefix, vocab)
    gamma = check_gamma(gamma)
    rng = check_rng(rng)
    check_rule(correction, "correction")
    stops = check_stop(stop)
    record_distributions = check_bool(record_distributions, "record_distributions")
    return _round(
        target,
        draft,
        prefix,
        gamma,
        rng,
        correction,
        record_distributions,
        stops,
        vocab,
        prefix_checked=vocab is not None,
    )


def _round(
    target,
    draft,
    prefix,
    gamma,
    rng,
    correction,
    record_distributions,
    stops,
    vocab,
    prefix_checked,
    keep=None,
    gamma_chosen=None,
):
    """speculative_round on validated arguments (speculative_generate calls it directly, so a
    long prefix is not re-validated every round). ``keep``: a γ policy's stop rule on the draft's
    confidence; ``gamma_chosen``: the γ the policy planned (recorded)."""
    planned = gamma if gamma_chosen is None else gamma_chosen
    xs, q_rows = draft_proposals(draft, prefix, gamma, rng, vocab, keep)
    # A draft may offer fewer proposals (prompt lookup without a full match). The law is
    # kept because how many it offers depends only on the prefix, never on the target.
    gamma = len(xs)
    p_rows = target_rows(target, prefix, xs, vocab=q_rows.shape[1] if gamma else vocab)
    V = p_rows.shape[1]
    if not prefix_checked:
        check_prefix(prefix, V)
        _check_stop_in_vocab(stops, V)
    q_x, p_x, ratios, draws = [], [], [], []
    rej = None
    for i, x in enumerate(xs):
        qx, px = float(q_rows[i, x]), float(p_rows[i, x])
        if qx <= 0:
            raise ValueError(f"draft proposed token {x} at position {i} with q = 0")
        ratio = min(1.0, px / qx)
        u = float(rng.random())
        q_x.append(qx), p_x.append(px), ratios.append(ratio), draws.append(u)
        if not u < ratio:
            rej = i
            break
    if rej is None:
        last = inverse_cdf(p_rows[gamma], rng.random())
        produced, kind = xs + (last,), "bonus"
    else:
        row = correction_weights(p_rows[rej], q_rows[rej], correction)
        last = inverse_cdf(row, rng.random())
        produced, kind = xs[:rej] + (last,), "correction"
    stop_at = next((j for j, t in enumerate(produced) if t in stops), None)
    emitted = produced if stop_at is None else produced[: stop_at + 1]
    # Probabilities of the unchecked proposals are recorded too, for display.
    for i in range(len(q_x), gamma):
        q_x.append(float(q_rows[i, xs[i]])), p_x.append(float(p_rows[i, xs[i]]))
        ratios.append(min(1.0, p_x[-1] / q_x[-1]) if q_x[-1] > 0 else 1.0)
    return RoundRecord(
        prefix=prefix,
        proposals=xs,
        q_x=tuple(q_x),
        p_x=tuple(p_x),
        ratios=tuple(ratios),
        draws=tuple(draws),
        stop=rej,
        emitted=emitted,
        kind=kind,
        p_rows=p_rows if record_distributions else None,
        q_rows=q_rows if record_distributions else None,
        stop_at=stop_at,
        produced=produced,
        vocab_size=V,
        gamma_chosen=planned,
    )


# ---------------------------------------------------------------- generation


def speculative_generate(
    target,
    draft,
    prefix,
    *,
    gamma,
    max_new_tokens,
    rng,
    correction="residual",
    record_distributions=False,
    stop=None,
) -> GenerationResult:
    """Strict speculative sampling, round after round, until ``max_new_tokens`` tokens or a
    stop token.

    The last round drafts only as many proposals as still fit (γ_eff = min(γ, remaining − 1)),
    so nothing is truncated and every emitted token keeps the target's law.
    ``gamma``: a fixed γ (int) or a γ policy (:mod:`specdec_core.policies`: ``next_gamma(records,
    prefix)`` asked before each round with this generation's records so far and the verified
    prefix, optional
    ``keep_drafting(q_row, token)`` stop rule on the draft's confidence); each record keeps the
    planned γ in ``gamma_chosen``.
    ``stop``: a collection of token ids (e.g. ``{eos}``). When a round emits one — as an
    accepted proposal, a correction or a bonus — the output ends with it: later tokens of that
    round are discarded (``RoundRecord.after_stop``) and no further round runs. The output then
    has the target's law of sequences stopped at the first stop token.
    ``correction`` other than "residual" is a deliberately *wrong* variant for teaching and tests.
    """
    from .policies import as_policy

    vocab = check_models(target, draft)
    prefix = check_prefix(prefix, vocab)
    policy = as_policy(gamma)
    keep = getattr(policy, "keep_drafting", None)
    n = check_int(max_new_tokens, "max_new_tokens", 0)
    rng = check_rng(rng)
    check_rule(correction, "correction")
    stops = check_stop(stop)
    record_distributions = check_bool(record_distributions, "record_distributions")
    if vocab is not None:
        _check_stop_in_vocab(stops, vocab)
    out: list[int] = []
    records = []
    while len(out) < n:
        ctx = prefix + tuple(out)
        planned = check_gamma(policy.next_gamma(records, ctx), "the γ policy's next_gamma")
        g = min(planned, n - len(out) - 1)
        rec = _round(
            target,
            draft,
            ctx,
            g,
            rng,
            correction,
            record_distributions,
            stops,
            vocab,
            prefix_checked=vocab is not None,
            keep=keep,
            gamma_chosen=planned,
        )
        if vocab is None:  # every later row must have the size this round's rows had
            vocab = rec.vocab_size
        records.append(rec)
        out.extend(rec.emitted)
        if rec.ended:
            break
    return GenerationResult(tokens=tuple(out), records=records)


def autoregressive_generate(
    target, prefix, *, max_new_tokens, rng, record_distributions=False, stop=None
) -> GenerationResult:
    """The baseline: one target sample per token. Each step is recorded as a γ = 0 round
    (nothing proposed, one token drawn from p), so the accounting reads the same way.
    ``stop``: as in :func:`speculative_generate` — generation ends with the first stop token."""
    vocab = check_models(target)
    prefix = check_prefix(prefix, vocab)
    n = check_int(max_new_tokens, "max_new_tokens", 0)
    rng = check_rng(rng)
    stops = check_stop(stop)
    record_distributions = check_bool(record_distributions, "record_distributions")
    out: list[int] = []
    records = []
    for _ in range(n):
        ctx = prefix + tuple(out)
        p = target_rows(target, ctx, (), vocab)[0]
        if not records:
            vocab = p.shape[0]
            check_prefix(prefix, vocab)
            _check_stop_in_vocab(stops, vocab)
        x = inverse_cdf(p, rng.random())
        out.append(x)
        records.append(
            RoundRecord(
                prefix=ctx,
                proposals=(),
                q_x=(),
                p_x=(),
                ratios=(),
                draws=(),
                stop=None,
                emitted=(x,),
                kind="bonus",
                p_rows=p[None, :] if record_distributions else None,
                stop_at=0 if x in stops else None,
            )
        )
        if x in stops:
            break
    return GenerationResult(tokens=tuple(out), records=records)


# ---------------------------------------------------------------- batched verification


def _raise_bad_row(name, b, i, s, m):
    fault = (
        "contains NaN or an infinite entry"
        if not np.isfinite(s)
        else f"has a negative entry (min {m:.3g})"
        if m < 0
        else f"does not sum to 1 (sum {s:.9g})"
    )
    raise ValueError(f"{name}[{b}, {i}] (a row this round uses) {fault}")


def _check_used_rows(A, n, last, name):
    """Rows A[b, i] for i = 0 … min(n[b], last): the rows a round read or samples from. Each
    must be finite, non-negative and sum to 1 within SUM_TOL.

    Short rows (V ≤ 64): one matrix product gives every row sum at once (numpy's reduction
    along a short axis is slow per row) and one global minimum looks for negatives; only the
    used rows' verdicts count. Long rows: position by position, only the used rows are read
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
    # Long rows are summed in their own dtype (numpy's pairwise summation; casting float32 to
    # float64 on the fly costs ~6x), so the tolerance adds that sum's rounding bound.
    tol = SUM_TOL + (
        0.0
        if A.dtype == np.float64
        else 2 * np.log2(V) * float(np.finfo(A.dtype if A.dtype.kind == "f" else np.float64).eps)
    )
    if V >= 1024:  # long rows: one contiguous row at a time, no gathered copies
        for b in range(B):
            for i in range(min(int(n[b]), last) + 1):
                row = A[b, i]
                s = float(np.add.reduce(row))
                m = row.min()
                if not (abs(s - 1.0) <= tol and m >= 0):
                    _raise_bad_row(name, b, i, s, float(m))
        return
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


def _drafted_entries(A, X):
    """A[b, i, X[b, i]] for i < γ as float64 (B, γ): a flat gather on contiguous input."""
    B, g = X.shape
    if A.flags.c_contiguous:
        L, V = A.shape[1], A.shape[2]
        idx = (np.arange(B)[:, None] * L + np.arange(g)[None, :]) * V + X
        return np.take(A.reshape(-1), idx).astype(np.float64, copy=False)
    return np.take_along_axis(A[:, :g, :], X[:, :, None], axis=2)[:, :, 0].astype(np.float64)


def verify_batch(target_probs, draft_probs, draft_tokens, rng, *, check_all=False, correction="residual"):
    """One verification round for B sequences at once, vectorized.

    target_probs (B, γ+1, V), draft_probs (B, γ, V), draft_tokens (B, γ) →
    (n_accepted (B,), next_token (B,)): the next token is the correction drawn from the
    residual at the first rejection, or the bonus drawn from target row γ.

    Only what the round needs is read, and all of it is validated: the rows of the positions
    actually checked (p and q rows 0 … n of each sequence, the drafted entries' rows) and the
    row sampled from (the rejected position's p and q rows, or the bonus row γ) must be
    finite, non-negative and sum to 1 within SUM_TOL. Rows after the first rejection are never
    read. ``check_all=True`` validates every row first (reading everything).
    """
    rng = check_rng(rng)
    check_rule(correction, "correction")
    check_all = check_bool(check_all, "check_all")
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
    if check_all:
        from .distributions import check_distribution

        check_distribution(P, "target_probs", exact=False)
        if gamma:
            check_distribution(Q, "draft_probs", exact=False)
    rows = np.arange(B)
    if gamma:
        px = _drafted_entries(P, X)
        qx = _drafted_entries(Q, X)
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
    if not check_all:
        # the rows read: positions 0 … n of each sequence (p), 0 … min(n, γ−1) (q)
        _check_used_rows(P, n, gamma, "target_probs")
        if gamma:
            _check_used_rows(Q, n, gamma - 1, "draft_probs")
    # One row per sequence: the bonus row γ, or the correction weights at the rejected position.
    dtype = P.dtype if P.dtype.kind == "f" else np.float64
    W = np.take(P.reshape(B * g1, V), rows * g1 + n, axis=0).astype(dtype, copy=False)
    rej = np.flatnonzero(~all_ok)
    if rej.size and V >= 1024:  # long rows: each correction formed in place in W
        for b in rej:
            correction_weights(P[b, n[b]], Q[b, n[b]], correction, out=W[b])
    elif rej.size:  # many short rows: all corrections at once
        W[rej] = correction_weights(W[rej], Q[rej, n[rej]].astype(dtype, copy=False), correction)
    nxt = sample_rows(W, rng.random(B))
    return n.astype(np.int64), nxt


#: Columns per block of the two-level inverse-CDF search (capped at V for small vocabularies).
BLOCK = 512


def block_sums(W, block=BLOCK):
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


def sample_rows(weights, u, block=BLOCK, blocks=None):
    """One draw per row of a (B, V) array of non-negative weights (rows need not be normalized),
    by inverse CDF with the uniforms ``u`` (B,): the batched form of
    :func:`specdec_core.distributions.inverse_cdf`. Two-level search: cumulative sums of blocks
    of ``block`` columns (at most V) pick the block, then a cumulative sum inside that block
    alone picks the column; neither a full (B, V) cumsum nor scratch wider than V is formed.
    Zero-weight columns are never returned."""
    W = np.asarray(weights)
    if W.dtype.kind != "f":
        W = W.astype(np.float64)
    B, V = W.shape
    if V <= 64 and blocks is None:
        return _sample_short_rows(W, np.asarray(u, dtype=np.float64))
    block = max(1, min(int(block), V))
    rows = np.arange(B)
    sums = block_sums(W, block) if blocks is None else blocks
    csum = np.cumsum(sums, axis=1)
    total = csum[:, -1]
    if (total <= 0).any() or not np.isfinite(total).all():
        raise ValueError("weights: a row has no positive, finite mass to sample from")
    t = np.asarray(u, dtype=np.float64) * total
    nblocks = sums.shape[1]
    if nblocks == 1:
        k = np.zeros(B, dtype=np.int64)
        before = np.zeros(B)
    else:
        k = (csum <= t[:, None]).sum(axis=1)
        last_pos_block = nblocks - 1 - np.argmax(sums[:, ::-1] > 0, axis=1)
        k = np.minimum(k, last_pos_block)
        k = np.where(sums[rows, k] > 0, k, last_pos_block)
        before = np.where(k > 0, csum[rows, np.maximum(k - 1, 0)], 0.0)
    if nblocks == 1:
        wb = W.astype(np.float64, copy=False)
    else:
        cols = k[:, None] * block + np.arange(block)[None, :]
        valid = cols < V
        wb = np.where(valid, W[rows[:, None], np.minimum(cols, V - 1)].astype(np.float64), 0.0)
    cb = np.cumsum(wb, axis=1)
    j = (cb <= (t - before)[:, None]).sum(axis=1)
    last_pos = wb.shape[1] - 1 - np.argmax(wb[:, ::-1] > 0, axis=1)
    j = np.minimum(j, last_pos)
    return (k * block + j).astype(np.int64)

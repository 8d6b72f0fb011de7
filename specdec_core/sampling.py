"""Strict speculative sampling and the autoregressive baseline, step by step with a record of each
round (the batched, array-in form of a round is :mod:`specdec_core.batch`).

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

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .distributions import (  # MAX_GAMMA: re-exported (sampling.MAX_GAMMA)
    MAX_GAMMA,
    check_bool,
    check_gamma,
    check_int,
    check_model_rows,
    check_rng,
    check_token_ids,
    inverse_cdf,
)
from .policies import as_policy
from .verify import check_rule, correction_weights

if TYPE_CHECKING:
    from .types import Draft, GammaPolicy, Target, Tokens

# ---------------------------------------------------------------- checks


def check_prefix(prefix: Tokens, vocab: int | None = None) -> tuple:
    """A prefix: a sequence of integer token ids (not a string; no floats, bools or negatives;
    below ``vocab`` when given)."""
    if isinstance(prefix, (str, bytes)):
        raise ValueError("prefix must be a sequence of token ids, not a string")
    return check_token_ids(prefix, "prefix", vocab)


def check_stop(stop: Iterable[int] | None) -> frozenset:
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
    #: The length limit the run was given (``None``: not known, e.g. records put together by
    #: hand). The statistics use it to tell which rounds the limit cut short
    #: (:func:`specdec_core.acceptance_stats.full_rounds`).
    max_new_tokens: int | None = None

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


def check_models(target: Target, draft: Draft | object = _NO_DRAFT) -> int | None:
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


def target_rows(target: Target, prefix: tuple, continuation: tuple, vocab: int | None = None) -> np.ndarray:
    """p rows after prefix, prefix+c₁, …, prefix+c (len(c)+1 rows), one call when possible.

    Whatever the target returns is validated like a direct argument (shape, vocabulary size,
    finite, non-negative, rows summing to 1). A callable target is asked position by position;
    after a continuation token it gives probability 0 (that proposal is surely rejected, so the
    rows after it are never used) a target that refuses the prefix (ValueError) is not an
    error: those rows are zeros ("not scored")."""
    n = len(continuation) + 1
    if hasattr(target, "score"):
        rows = target.score(prefix, continuation)
        return check_model_rows(rows, "target.score", n_rows=n, vocab=vocab)
    out, impossible = [], False
    for i in range(n):
        # after a proposal p gives probability 0 (surely rejected), the rows condition on a
        # prefix p never produces and are never used: a target may have no row there (a
        # grammar-processed target's processor raises), and those rows are then zeros
        impossible = impossible or (i > 0 and out[-1][continuation[i - 1]] == 0)
        try:
            raw = target(prefix + tuple(continuation[:i]))
        except ValueError:  # a target may refuse a prefix it never produces
            if not impossible:
                raise
            out.extend([np.zeros(vocab)] * (n - i))
            break
        row = check_model_rows(raw, "target", vocab=vocab)  # what it returns is always checked
        vocab = row.shape[0]
        out.append(row)
    return np.stack(out)


def draft_proposals(
    draft: Draft,
    prefix: tuple,
    gamma: int,
    rng: np.random.Generator,
    vocab: int | None = None,
    keep: Callable[[np.ndarray, int], bool] | None = None,
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
            cut = next((i + 1 for i, x in enumerate(toks) if not _keep(keep, rows[i], x)), len(toks))
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
        if keep is not None and not _keep(keep, q, x):
            break
    return tuple(toks), np.stack(rows)


def _keep(keep: Callable[[np.ndarray, int], bool], q_row: np.ndarray, token: int) -> bool:
    """A γ policy's ``keep_drafting(q_row, token)`` answer, which must be True or False."""
    return check_bool(keep(q_row, token), "the γ policy's keep_drafting(q_row, token)")


# ---------------------------------------------------------------- one round


def speculative_round(
    target: Target,
    draft: Draft,
    prefix: Tokens,
    *,
    gamma: int,
    rng: np.random.Generator,
    correction: str = "residual",
    record_distributions: bool = False,
    stop: Iterable[int] | None = None,
    vocab: int | None = None,
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
    gamma = check_gamma(gamma, high=MAX_GAMMA)
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
    q_x, p_x, ratios, draws, rej = _verify_in_order(xs, p_rows, q_rows, rng)
    if rej is None:  # every proposal accepted: a bonus token from p_{γ+1}
        last = inverse_cdf(p_rows[gamma], rng.random())
        produced, kind = xs + (last,), "bonus"
    else:  # the first rejection: a correction from the residual at that position
        row = correction_weights(p_rows[rej], q_rows[rej], correction)
        last = inverse_cdf(row, rng.random())
        produced, kind = xs[:rej] + (last,), "correction"
    stop_at = next((j for j, t in enumerate(produced) if t in stops), None)
    emitted = produced if stop_at is None else produced[: stop_at + 1]
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


def _verify_in_order(xs: tuple, p_rows: np.ndarray, q_rows: np.ndarray, rng: np.random.Generator) -> tuple:
    """Accept xᵢ while uᵢ < min(1, pᵢ(xᵢ)/qᵢ(xᵢ)), for i = 1…γ in order, up to the first rejection.

    Returns ``(q_x, p_x, ratios, draws, rejected)``: one uniform per checked proposal, the index of
    the first rejection (``None``: all accepted); q, p and the ratio for every proposal, the
    unchecked ones too (recorded for display)."""
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
    for i in range(len(q_x), len(xs)):
        q_x.append(float(q_rows[i, xs[i]])), p_x.append(float(p_rows[i, xs[i]]))
        ratios.append(min(1.0, p_x[-1] / q_x[-1]) if q_x[-1] > 0 else 1.0)
    return q_x, p_x, ratios, draws, rej


# ---------------------------------------------------------------- generation


def speculative_generate(
    target: Target,
    draft: Draft,
    prefix: Tokens,
    *,
    gamma: int | GammaPolicy,
    max_new_tokens: int,
    rng: np.random.Generator,
    correction: str = "residual",
    record_distributions: bool = False,
    stop: Iterable[int] | None = None,
) -> GenerationResult:
    """Strict speculative sampling, round after round, until ``max_new_tokens`` tokens or a
    stop token.

    The last round drafts only as many proposals as still fit (γ_eff = min(γ, remaining − 1)),
    so nothing is truncated and every emitted token keeps the target's law.
    ``gamma``: a fixed γ (int) or a γ policy (:mod:`specdec_core.policies`: ``next_gamma(records,
    prefix)`` asked before each round with this generation's records so far and the verified
    prefix; optional ``keep_drafting(q_row, token)`` asked after xᵢ is drawn and proposed, to
    decide whether position i + 1 is drafted: a stopping rule may use x₁ … xᵢ₋₁ and q₁ … qᵢ₋₁
    when deciding on position i, never xᵢ itself nor this round's verdicts); each record keeps
    the planned γ in ``gamma_chosen``.
    ``stop``: a collection of token ids (e.g. ``{eos}``). When a round emits one — as an
    accepted proposal, a correction or a bonus — the output ends with it: later tokens of that
    round are discarded (``RoundRecord.after_stop``) and no further round runs. The output then
    has the target's law of sequences stopped at the first stop token.
    ``correction`` other than "residual" is a deliberately *wrong* variant for teaching and tests.
    """
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
    opts = (correction, record_distributions, stops)
    while len(out) < n:
        ctx = prefix + tuple(out)
        planned = check_gamma(policy.next_gamma(records, ctx), "the γ policy's next_gamma", high=MAX_GAMMA)
        g = min(planned, n - len(out) - 1)  # the last round drafts only what still fits
        checked = vocab is not None
        rec = _round(target, draft, ctx, g, rng, *opts, vocab, checked, keep=keep, gamma_chosen=planned)
        if vocab is None:  # every later row must have the size this round's rows had
            vocab = rec.vocab_size
        records.append(rec)
        out.extend(rec.emitted)
        if rec.ended:
            break
    return GenerationResult(tokens=tuple(out), records=records, max_new_tokens=n)


def autoregressive_generate(
    target: Target,
    prefix: Tokens,
    *,
    max_new_tokens: int,
    rng: np.random.Generator,
    record_distributions: bool = False,
    stop: Iterable[int] | None = None,
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
    return GenerationResult(tokens=tuple(out), records=records, max_new_tokens=n)

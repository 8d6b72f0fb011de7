"""Processors that depend on the prefix: repetition penalty and a grammar, applied the right way
(per speculative position, with *that* position's prefix) and the classic wrong way (with the
verified prefix only) — notebook 07.

A *processor* maps (prefix, row) to a new row over the same vocabulary: unlike temperature or
top-k (``transforms``), its output depends on the text so far. Inside a round, position i of the
draft and of the target must be processed with the speculative prefix ``verified + x₁ … x_{i−1}``:
that is what plain sampling from the processed target would see. Wrapping both models with
:func:`processed` does exactly that, because the samplers call ``model(prefix + x₁ … x_{i−1})``.

The classic bug processes every position of a round with the *verified* prefix only (the
penalty or grammar state frozen at the round's start): :class:`StaleProcessed` reproduces it
through the ``score``/``propose`` fast paths, which receive the verified prefix. The draft stays
honest (it reports the rows it sampled from), so the only fault is the stale prefix.

:func:`speculative_sequence_law` gives the exact law of what ``speculative_generate`` outputs for
such models, so the bias is an exact total variation, not only a failed test.

Pure layer: numpy and fractions.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from .distributions import (
    MAX_GAMMA,
    check_distribution,
    check_gamma,
    check_int,
    check_model_rows,
    check_positive,
    check_rng,
    check_token_ids,
    inverse_cdf,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Iterable, Sequence

    from .types import ExactModel

    #: A row of probabilities: a float array, or a list/array of exact values.
    Row = Sequence[Fraction] | np.ndarray
    #: A logits processor in probability space: (prefix, row) -> processed row.
    Processor = Callable[[tuple[int, ...], Row], Row]
    #: A model the exact laws can enumerate: exact rows (``.exact``) or a round's rows (``.round_row``).
    LawModel: TypeAlias = "ExactModel | StaleProcessed"
    #: An exact law of emitted token sequences.
    Law = dict[tuple[int, ...], Fraction]


def _normalized(w, exact):
    total = sum(w, Fraction(0)) if exact else float(np.sum(w))
    if total <= 0:
        raise ValueError("the processed row has no probability mass left")
    return np.array([v / total for v in w], dtype=object) if exact else np.asarray(w) / total


class RepetitionPenalty:
    """Divide the probability of every token already in the prefix by ``penalty`` (> 0; above 1
    discourages repeats), then renormalize: the probability-space form of the usual penalty."""

    def __init__(self, penalty):
        self.penalty = check_positive(penalty, "penalty")

    def __call__(self, prefix, row):
        exact = np.asarray(row).dtype == object
        seen = set(prefix)
        w = [v / self.penalty if t in seen else v for t, v in enumerate(row)]
        return _normalized(w, exact)

    def __repr__(self):
        return f"RepetitionPenalty({self.penalty})"


class Grammar:
    """A tiny grammar as a finite automaton: ``transitions[(state, token)] -> state``; a token
    without a transition from the current state is forbidden there. Processing zeroes the
    forbidden tokens and renormalizes (a row left without mass raises ``ValueError``)."""

    def __init__(self, start, transitions: dict, name: str = "grammar"):
        if not isinstance(transitions, dict) or not transitions:
            raise ValueError("transitions must be a non-empty dict {(state, token): state}")
        self.start, self.transitions, self.name = start, dict(transitions), name

    def state(self, prefix: Sequence[int]) -> Hashable:
        s = self.start
        for t in check_token_ids(prefix, "prefix"):
            if (s, t) not in self.transitions:
                return None  # the prefix already left the grammar
            s = self.transitions[(s, t)]
        return s

    def allowed(self, prefix: Sequence[int], vocab: int) -> tuple[int, ...]:
        vocab = check_int(vocab, "vocab", 1)
        s = self.state(check_token_ids(prefix, "prefix", vocab))
        return tuple(t for t in range(vocab) if (s, t) in self.transitions)

    def __call__(self, prefix, row):
        exact = np.asarray(row).dtype == object
        ok = set(self.allowed(prefix, len(row)))
        zero = Fraction(0) if exact else 0.0
        return _normalized([v if t in ok else zero for t, v in enumerate(row)], exact)

    def __repr__(self):
        return f"Grammar({self.name!r})"


def at_most_once(token: int, vocab: int) -> Grammar:
    """The grammar "``token`` appears at most once" (state 0: not yet, state 1: seen)."""
    vocab = check_int(vocab, "vocab", 1)
    token = check_int(token, "token", 0, vocab - 1)
    tr = {}
    for t in range(vocab):
        tr[(0, t)] = 1 if t == token else 0
        if t != token:
            tr[(1, t)] = 1
    return Grammar(0, tr, f"token {token} at most once")


def process(row: Row, prefix: Sequence[int], processors: Iterable[Processor]) -> Row:
    """``row`` after each processor in turn, every one evaluated at ``prefix``."""
    prefix = check_token_ids(prefix, "prefix", len(row))
    for f in processors:
        row = f(prefix, row)
    return row


def _check_processors(processors):
    if not processors or not all(callable(f) for f in processors):
        raise ValueError("give at least one processor: a callable (prefix, row) -> row")
    return tuple(processors)


class ProcessedModel:
    """``model`` with ``processors`` applied at every prefix it is asked about — the right way:
    inside a round, position i is processed with its own speculative prefix."""

    def __init__(self, model, processors, name=None):
        self.model, self.processors = model, _check_processors(processors)
        self.name = name or f"processed {getattr(model, 'name', 'model')}"
        self.vocab_size = _declared_vocab(model)

    def __call__(self, prefix):
        prefix = check_token_ids(prefix, "prefix", self.vocab_size)
        row = check_model_rows(self.model(prefix), self.name)
        return np.asarray(process(row, prefix, self.processors), dtype=np.float64)

    def exact(self, prefix: Sequence[int]) -> Row:
        prefix = check_token_ids(prefix, "prefix", self.vocab_size)
        return process(self.model.exact(prefix), prefix, self.processors)

    def round_row(self, start: Sequence[int], continuation: Sequence[int]) -> Row:
        """The exact row used at position ``continuation`` of a round that started at ``start``."""
        return self.exact(tuple(start) + tuple(continuation))


def processed(model: ExactModel, *processors: Processor) -> ProcessedModel:
    """Wrap ``model`` so every row is processed with the prefix it was asked for (the right way)."""
    return ProcessedModel(model, processors)


class StaleProcessed:
    """The classic bug: every position of a round processed with the round's *verified* prefix
    only. Use it as the target (``score``) and/or the draft (``propose``; it samples from the
    stale rows it reports, so it is honest about q — only the prefix given to the processors is
    wrong)."""

    def __init__(self, model, processors, name=None):
        self.model, self.processors = model, _check_processors(processors)
        self.name = name or f"stale-processed {getattr(model, 'name', 'model')}"
        self.vocab_size = getattr(model, "vocab_size", None)

    def round_row(self, start: Sequence[int], continuation: Sequence[int]) -> Row:
        raw = self.model.exact(tuple(start) + tuple(continuation))
        return process(raw, start, self.processors)

    def _row(self, start, continuation):
        raw = check_model_rows(self.model(tuple(start) + tuple(continuation)), self.name)
        return np.asarray(process(raw, start, self.processors), dtype=np.float64)

    def score(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        prefix = check_token_ids(prefix, "prefix", _declared_vocab(self))
        c = check_token_ids(continuation, "continuation", _declared_vocab(self))
        return np.stack([self._row(prefix, c[:i]) for i in range(len(c) + 1)])

    def propose(
        self, prefix: Sequence[int], gamma: int, rng: np.random.Generator
    ) -> tuple[tuple[int, ...], np.ndarray]:
        prefix = check_token_ids(prefix, "prefix", _declared_vocab(self))
        gamma = check_gamma(gamma, high=MAX_GAMMA)
        rng = check_rng(rng)
        toks, rows = [], []
        for _ in range(gamma):
            row = self._row(prefix, toks)
            toks.append(inverse_cdf(row, rng.random()))
            rows.append(row)
        return tuple(toks), np.stack(rows) if rows else np.zeros((0, self.vocab_size or 0))


#: round_output_law enumerates up to V + V² + … + V^(γ+1) outputs of one round: at most this many.
MAX_ENUMERATED = 10**6

#: A chained law (:func:`chain_round_laws`) holds up to V^length sequences: at most this many
#: (each is built from a round law of its own, so the work is larger still).
MAX_SEQUENCES = 10**5


def _declared_vocab(model) -> int | None:
    v = getattr(model, "vocab_size", None)
    return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 else None


def check_law_models(target: LawModel, draft: LawModel, start: Sequence[int]) -> tuple[tuple, int]:
    """The exact laws' arguments: two models offering exact rows, and a start (prefix) of token
    ids inside the vocabulary (an unknown token is a ValueError naming the prefix, never the
    model's KeyError). Returns (start as a tuple, V)."""
    for model, name in ((target, "target"), (draft, "draft")):
        if not (hasattr(model, "round_row") or hasattr(model, "exact")):
            raise ValueError(
                f"{name} must offer exact rows (exact or round_row), e.g. toy_target(); got {type(model).__name__}"
            )
    start = check_token_ids(start, "prefix", _declared_vocab(target) or _declared_vocab(draft))
    V = len(_round_row(target, start, (), "target"))
    check_token_ids(start, "prefix", V)
    W = len(_round_row(draft, start, (), "draft"))
    if W != V:
        raise ValueError(f"the models' vocabularies differ: target rows have {V} symbols, draft rows {W}")
    return start, V


def check_round_enumeration(V: int, g: int) -> int:
    """Refuse to enumerate one round of γ = ``g`` over V symbols when it may have more than
    :data:`MAX_ENUMERATED` outputs, V + V² + … + V^(γ+1) (every length, not only the full
    ones); returns that count. The one guard of the exact round laws."""
    n = (
        None
        if (g + 1) * np.log10(max(V, 1)) > np.log10(MAX_ENUMERATED) + 1
        else sum(V**j for j in range(1, g + 2))
    )
    if n is None or n > MAX_ENUMERATED:
        many = f"{n:,}" if n is not None else f"more than {V}^{g + 1}"
        raise ValueError(
            f"gamma = {g} would enumerate up to {many} round outputs (V + V² + … + V^(γ+1), "
            f"V = {V}); at most {MAX_ENUMERATED:,} are enumerated"
        )
    return n


def _round_row(model, start, continuation, name):
    if hasattr(model, "round_row"):
        row = model.round_row(start, continuation)
    elif hasattr(model, "exact"):
        row = model.exact(tuple(start) + tuple(continuation))
    else:
        raise ValueError(f"{name} must offer exact rows (exact or round_row), e.g. toy_target()")
    return list(check_distribution(row, f"{name} row", exact=True))


def round_output_law(target: LawModel, draft: LawModel, start: Sequence[int], gamma: int) -> Law:
    """Exact law of what one round from ``start`` produces ({tokens: probability}), with rows
    that may depend on the round's start (``round_row``) — the strict rule, unnormalized
    residual mass 1 − α at a rejection."""
    g = check_gamma(gamma)
    start, V = check_law_models(target, draft, start)
    check_round_enumeration(V, g)
    law: dict = {}

    def add(seq, prob):
        law[seq] = law.get(seq, Fraction(0)) + prob

    def rec(acc, prob):
        p = _round_row(target, start, acc, "target")
        if len(acc) == g:
            for y, py in enumerate(p):
                if py:
                    add(acc + (y,), prob * py)
            return
        q = _round_row(draft, start, acc, "draft")
        if len(q) != len(p):
            raise ValueError(
                f"the models' vocabularies differ: target rows have {len(p)} symbols, draft rows {len(q)}"
            )
        for y, (py, qy) in enumerate(zip(p, q)):
            if py > qy:  # correction mass max(p − q, 0), already unnormalized by 1 − α
                add(acc + (y,), prob * (py - qy))
        for x, (px, qx) in enumerate(zip(p, q)):
            if min(px, qx):
                rec(acc + (x,), prob * min(px, qx))

    rec((), Fraction(1))
    return law


def chain_round_laws(
    round_law: Callable[[LawModel, LawModel, tuple[int, ...], int], Law],
    target: LawModel,
    draft: LawModel,
    prefix: Sequence[int] = (),
    length: int = 3,
    gamma: int = 2,
) -> Law:
    """Exact law ({tokens: Fraction}) of ``length`` tokens emitted by rounds whose own exact law
    is ``round_law(target, draft, prefix, γ_eff)`` ({emitted tokens: Fraction}), with
    γ_eff = min(γ, remaining − 1) as ``speculative_generate`` runs them (the one composition of a
    round law into a sequence law; the processors' and the peeking policy's use it)."""
    if not callable(round_law):
        raise ValueError(f"round_law must be a function (target, draft, prefix, γ) -> law, got {round_law!r}")
    length = check_int(length, "length", 0, 8)
    g = check_gamma(gamma)
    prefix, V = check_law_models(target, draft, prefix)
    if length * np.log10(V) > np.log10(MAX_SEQUENCES) + 1e-9:
        raise ValueError(
            f"length = {length} with V = {V} would chain up to {V}^{length} sequences; at most "
            f"{MAX_SEQUENCES:,} are enumerated"
        )
    law: dict = {}

    def rec(out, prob):
        if len(out) >= length:
            law[out] = law.get(out, Fraction(0)) + prob
            return
        step = round_law(target, draft, prefix + out, min(g, length - len(out) - 1))
        if not isinstance(step, dict):
            raise ValueError(
                f"round_law must return a dict {{tokens: probability}}, got {type(step).__name__}"
            )
        for seq, pr in step.items():
            if not isinstance(seq, tuple) or not seq:
                raise ValueError(
                    f"round_law returned the outcome {seq!r}: every round emits a non-empty tuple of tokens"
                )
            rec(out + seq, prob * pr)

    rec((), Fraction(1))
    return law


def speculative_sequence_law(
    target: LawModel, draft: LawModel, prefix: Sequence[int] = (), length: int = 3, gamma: int = 2
) -> Law:
    """Exact law of ``speculative_generate(target, draft, prefix, gamma=γ, max_new_tokens=length)``
    ({tokens: Fraction}): rounds with γ_eff = min(γ, remaining − 1), as the sampler runs them,
    for exact models whose rows may depend on the round's start (:class:`StaleProcessed`)."""
    return chain_round_laws(round_output_law, target, draft, prefix, length, gamma)

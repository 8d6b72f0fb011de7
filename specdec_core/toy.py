"""A small prefix-dependent toy language: four tokens, target and draft tables keyed on the
previous token, exact (Fractions), with zeros on both sides and disagreement in places.

* after "start" the draft can never propose C (q = 0 < p) and always proposes D in vain
  (p = 0 < q), so C only ever arrives as a correction and D is always rejected;
* after A the two models agree exactly (α = 1 there);
* after B and D they disagree a lot.

``toy_target()`` and ``toy_draft()`` return callables usable by the samplers; ``.exact(prefix)``
gives the Fraction row, and :func:`sequence_law` the exact law of whole continuations.
"""

from __future__ import annotations

import itertools
from fractions import Fraction as F
from typing import TYPE_CHECKING

import numpy as np

from .distributions import check_sequence, check_token_ids

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from .types import ExactModel, ModelFn, Scalar

SYMBOLS = ("A", "B", "C", "D")
START = None  # key for the empty prefix

TARGET_TABLE = {
    START: (F(1, 2), F(1, 4), F(1, 4), F(0)),
    0: (F(1, 10), F(3, 5), F(1, 5), F(1, 10)),
    1: (F(0), F(1, 5), F(1, 2), F(3, 10)),
    2: (F(2, 5), F(0), F(1, 5), F(2, 5)),
    3: (F(1, 2), F(1, 2), F(0), F(0)),
}

DRAFT_TABLE = {
    START: (F(1, 4), F(1, 2), F(0), F(1, 4)),
    0: (F(1, 10), F(3, 5), F(1, 5), F(1, 10)),
    1: (F(1, 4), F(1, 4), F(1, 4), F(1, 4)),
    2: (F(1, 2), F(1, 4), F(1, 4), F(0)),
    3: (F(0), F(1), F(0), F(0)),
}


class ToyModel:
    """Next-token table keyed on the previous token (``None`` for the empty prefix)."""

    def __init__(self, table: dict, name: str):
        self.table = table
        self.name = name
        self.vocab_size = len(next(iter(table.values())))
        self._float = {k: np.array(v, dtype=np.float64) for k, v in table.items()}

    def _key(self, prefix):
        """The previous token (a token id inside the vocabulary, else a ValueError naming the
        prefix, never a KeyError), or START for the empty prefix."""
        items = check_sequence(prefix, "prefix", "a sequence of token ids")
        if not items:
            return START
        return check_token_ids(items[-1:], "prefix", self.vocab_size)[0]

    def __call__(self, prefix) -> np.ndarray:
        return self._float[self._key(prefix)].copy()

    def exact(self, prefix: Sequence[int]) -> np.ndarray:
        return np.array(self.table[self._key(prefix)], dtype=object)

    def __repr__(self):
        return f"ToyModel({self.name!r}, V={self.vocab_size})"


def toy_target() -> ToyModel:
    return ToyModel(TARGET_TABLE, "target")


def toy_draft() -> ToyModel:
    return ToyModel(DRAFT_TABLE, "draft")


def decode(tokens: Iterable[int]) -> str:
    return " ".join(SYMBOLS[t] for t in tokens)


#: sequence_law enumerates V^length continuations: at most this many.
MAX_ENUMERATED = 10**6


def _law_args(model, prefix, length):
    from .distributions import check_int
    from .sampling import check_models, check_prefix

    if not (callable(model) or hasattr(model, "exact")):
        raise ValueError(f"model must be a model: prefix -> probabilities, got {type(model).__name__}")
    prefix = check_prefix(prefix, check_models(model))
    length = check_int(length, "length", 0)
    row = getattr(model, "exact", model)
    V = len(row(prefix))
    if length * np.log10(max(V, 1)) > np.log10(MAX_ENUMERATED) + 1e-9:
        raise ValueError(
            f"length = {length} would enumerate {V}^{length} continuations; at most "
            f"{MAX_ENUMERATED:,} are enumerated"
        )
    return row, prefix, V, length


def sequence_law(
    model: ModelFn | ExactModel, prefix: Sequence[int] = (), length: int = 3
) -> dict[tuple[int, ...], Scalar]:
    """Exact probability of every continuation of ``length`` tokens: {tuple: Fraction}.

    Uses ``model.exact`` when available (exact law), else the float rows.
    """
    row, prefix, V, length = _law_args(model, prefix, length)
    law = {}
    for seq in itertools.product(range(V), repeat=length):
        prob = F(1) if hasattr(model, "exact") else 1.0
        ctx = prefix
        for t in seq:
            prob = prob * row(ctx)[t]
            if prob == 0:
                break
            ctx = ctx + (t,)
        if prob != 0:
            law[seq] = prob
    return law


def stopped_sequence_law(
    model: ModelFn | ExactModel, prefix: Sequence[int] = (), length: int = 3, stop: Iterable[int] | None = ()
) -> dict[tuple[int, ...], Scalar]:
    """Exact law of what plain sampling from ``model`` outputs with at most ``length`` new
    tokens and the stop tokens ``stop``: a continuation ends with its first stop token
    (kept), or after ``length`` tokens. {tuple: probability}, exact with ``model.exact``.

    The law every sampler with ``stop=`` must reproduce (notebook 03, tests)."""
    from .sampling import check_stop

    row, prefix, _, length = _law_args(model, prefix, length)
    stops = check_stop(stop)
    law: dict = {}

    def walk(seq, prob):
        if len(seq) == length or (seq and seq[-1] in stops):
            law[seq] = law.get(seq, 0) + prob
            return
        r = row(prefix + seq)
        for t, pt in enumerate(r):
            if pt:
                walk(seq + (t,), prob * pt)

    walk((), F(1) if hasattr(model, "exact") else 1.0)
    return law

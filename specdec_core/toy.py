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

import numpy as np

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
        return prefix[-1] if len(prefix) else START

    def __call__(self, prefix) -> np.ndarray:
        return self._float[self._key(tuple(prefix))].copy()

    def exact(self, prefix) -> np.ndarray:
        return np.array(self.table[self._key(tuple(prefix))], dtype=object)

    def __repr__(self):
        return f"ToyModel({self.name!r}, V={self.vocab_size})"


def toy_target() -> ToyModel:
    return ToyModel(TARGET_TABLE, "target")


def toy_draft() -> ToyModel:
    return ToyModel(DRAFT_TABLE, "draft")


def decode(tokens) -> str:
    return " ".join(SYMBOLS[t] for t in tokens)


def sequence_law(model, prefix=(), length=3) -> dict:
    """Exact probability of every continuation of ``length`` tokens: {tuple: Fraction}.

    Uses ``model.exact`` when available (exact law), else the float rows.
    """
    if not isinstance(length, int) or isinstance(length, bool) or length < 0:
        raise ValueError(f"length must be a non-negative integer, got {length!r}")
    prefix = tuple(prefix)
    row = getattr(model, "exact", model)
    V = len(row(prefix))
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

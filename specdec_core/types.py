"""The type aliases the library's hints share (one home; import them, do not redefine them).

Hints only: nothing here is checked at run time, and the modules that use these names import them
under ``if TYPE_CHECKING:`` (with ``from __future__ import annotations``), so a hint costs no
import. The library's one convention, *exact in, exact out*, reads in the hints as:

* ``Scalar``: a number given as a float (or int), or exactly (``Fraction``, sympy ``Rational``);
  a function hinted ``-> Scalar`` returns an exact value for exact input and a float otherwise.
* ``Probs``: a probability vector (or rows of them) as given: a list, tuple or array of floats,
  or of exact numbers. Results are ``np.ndarray``: float64 for float input, dtype ``object``
  holding the exact values for exact input.

A *model* is a callable ``model(prefix) -> probs``, or a target offering ``.score`` / a draft
offering ``.propose`` (see :mod:`specdec_core.sampling`); ``Target`` and ``Draft`` say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol, Union

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import sympy

__all__ = [
    "Draft",
    "ExactModel",
    "GammaPolicy",
    "ModelFn",
    "Probs",
    "ProposingDraft",
    "Scalar",
    "ScoringTarget",
    "Target",
    "Tokens",
]

#: A number, float or exact; results follow it (exact in, exact out).
Scalar = Union[float, Fraction, "sympy.Rational"]

#: A probability vector, or rows of them: floats or exact numbers, in any sequence or array.
Probs = Union[ArrayLike, Sequence[Scalar], Sequence[Sequence[Scalar]]]

#: Token ids: a tuple, list or 1-D integer array.
Tokens = Union[Sequence[int], np.ndarray]


class ModelFn(Protocol):
    """``model(prefix) -> probs``: the next-token distribution after a prefix of token ids."""

    def __call__(self, prefix: tuple[int, ...], /) -> ArrayLike: ...


class ScoringTarget(Protocol):
    """A target that scores a continuation in one call: ``len(continuation) + 1`` rows."""

    def score(self, prefix: tuple[int, ...], continuation: tuple[int, ...]) -> ArrayLike: ...


class ProposingDraft(Protocol):
    """A draft that proposes up to γ tokens and the rows they were drawn from."""

    def propose(
        self, prefix: tuple[int, ...], gamma: int, rng: np.random.Generator
    ) -> tuple[Sequence[int], ArrayLike]: ...


class ExactModel(Protocol):
    """A model that also gives its rows exactly (``Fraction``), as the toy models do: what the
    exact laws (``toy.sequence_law``, ``acceptance_stats.exact_round_law``, …) enumerate."""

    def __call__(self, prefix: tuple[int, ...], /) -> ArrayLike: ...

    def exact(self, prefix: tuple[int, ...]) -> ArrayLike: ...


class GammaPolicy(Protocol):
    """How many proposals the next round drafts, from past rounds' records and the verified
    prefix (see :mod:`specdec_core.policies`; an optional ``keep_drafting(q_row, token)`` may
    stop drafting early)."""

    def next_gamma(self, records: Sequence[Any], prefix: tuple[int, ...] = ()) -> int: ...


#: A target model: callable, or offering ``.score``.
Target = Union[ModelFn, ScoringTarget]

#: A draft model: callable, or offering ``.propose``.
Draft = Union[ModelFn, ProposingDraft]

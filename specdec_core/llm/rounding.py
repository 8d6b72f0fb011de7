"""Floating-point losslessness: what "speculative output equals plain output" means on a real
machine.

Three statements, three kinds of guarantee:

* **the law** — strict verification emits tokens with exactly the target's distribution p.
  A theorem about exact arithmetic (notebooks 02–04), tested here by law tests.
* **greedy equality** — at temperature 0, speculative and plain decoding emit the same tokens.
  True in exact arithmetic; in float32 only *up to rounding*: a verification call scores
  γ + 1 positions in one pass, whose products sum in another order than a one-position pass
  (:func:`model.product`), so logits differ in the last bits and a near-tie between the two
  largest logits can flip the argmax.
* **the same sample** at temperature 1 with the same seed — never promised: the two methods
  consume random numbers differently, so they draw different (equally distributed) texts.

:func:`logits_two_ways` computes the logits along a token sequence as plain decoding does (one
new position per call) and as verification does (``block`` positions per call), and
:func:`compare_paths` summarizes where they differ. :func:`first_divergence` finds where two
generations part.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..distributions import check_int
from ..measured.studies import TeacherForcing

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from numpy.typing import ArrayLike

    from .model import Llama


def logits_two_ways(
    model: Llama, tokens: Sequence[int], start: int, block: int
) -> tuple[np.ndarray, np.ndarray]:
    """(one_at_a_time, in_blocks): float32 logits at positions start−1 … len(tokens)−2 (each
    predicting the next token), computed with the prompt ``tokens[:start]`` scored first and
    then (a) one position per forward call, (b) ``block`` positions per call."""
    tokens = [int(t) for t in tokens]
    start = check_int(start, "start", 1, len(tokens) - 1)
    block = check_int(block, "block", 1)
    out = []
    for size in (1, int(block)):
        cache = model.new_cache(len(tokens))
        model.forward(tokens[: start - 1], cache)
        rows = []
        i = start - 1
        while i < len(tokens) - 1:
            j = min(i + size, len(tokens) - 1)
            rows.append(model.logits(model.forward(tokens[i:j], cache)))
            i = j
        out.append(np.concatenate(rows))
    return out[0], out[1]


def top2_gap(logits: ArrayLike) -> np.ndarray:
    """Per row, the largest logit minus the second largest (float64)."""
    z = np.asarray(logits, np.float64)
    part = np.partition(z, -2, axis=-1)
    return part[..., -1] - part[..., -2]


def compare_paths(a: ArrayLike, b: ArrayLike, prompt: str = "") -> TeacherForcing:
    """How two computations of the same logits differ (along ``prompt``'s tokens): max
    |difference| (absolute, and per row relative to the row's largest |logit|), the number of
    rows whose argmax differs, and the top-2 gaps (of ``a``) at those rows and the smallest overall."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"a and b must be 2-D arrays of one shape, got {a.shape} and {b.shape}")
    d = np.abs(a - b)
    flips = np.flatnonzero(a.argmax(axis=1) != b.argmax(axis=1))
    gap = top2_gap(a)
    return TeacherForcing(
        prompt=prompt,
        positions=int(a.shape[0]),
        max_abs_diff=float(d.max()),
        median_row_max_abs_diff=float(np.median(d.max(axis=1))),
        max_rel_diff=float((d.max(axis=1) / np.abs(a).max(axis=1)).max()),
        argmax_flips=int(flips.size),
        gaps_at_flips=tuple(float(gap[i]) for i in flips),
        smallest_gaps=tuple(sorted(float(g) for g in gap)[:5]),
        gaps_below_1e_4=int((gap < 1e-4).sum()),
        gaps_below_1e_3=int((gap < 1e-3).sum()),
    )


def first_divergence(a: Iterable[int], b: Iterable[int]) -> int | None:
    """The first index where token sequences ``a`` and ``b`` differ (None if one is a prefix of
    the other)."""
    a, b = list(a), list(b)
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None

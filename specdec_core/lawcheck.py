"""Does a sampler keep the target's law? Chi-square goodness of fit against an exact law.

Outcomes are sorted by decreasing probability. Each outcome expected at least ``min_expected``
times is its own cell; the others (the *tail*) are pooled so the chi-square approximation holds,
but into several groups, not one: consecutive tail outcomes are gathered until a group is
expected at least ``min_expected`` times, and a short last group joins the one before it
(:func:`pooled_groups`). A single pooled cell would hide a concentration inside the tail (300
draws of one outcome the law expects 3 times, among 100 such outcomes, would vanish into a tail
cell that is exactly on target); groups keep it visible while every group is still expected
``min_expected`` times or more. Only when the whole tail is expected fewer than
2 × ``min_expected`` times is it one cell (then possibly expected fewer than ``min_expected``
times, as before). Outcomes of probability 0 are no cell: observing one is impossible under the
law (infinite statistic). The test *rejects* when the p-value is below the stated threshold
(default 0.001). With fixed seeds the outcome is deterministic.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .distributions import (
    check_int,
    check_int_sequence,
    check_level,
    check_positive,
    check_reals,
    check_sequence,
    check_weights,
)

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable, Mapping, Sequence

    from numpy.typing import ArrayLike

    from .types import Scalar

#: The p-value below which the notebooks and tests reject "the samples follow the law".
DEFAULT_THRESHOLD = 1e-3


def check_law(law: Mapping[Hashable, Scalar], name: str = "law") -> dict[Hashable, Scalar]:
    """A law {outcome: probability}: non-empty, every probability a finite number ≥ 0 (not a
    bool or string), summing to 1 (exactly for exact values, within SUM_TOL for floats)."""
    from fractions import Fraction

    from .distributions import check_distribution

    if not isinstance(law, dict):
        raise ValueError(f"{name} must be a dict {{outcome: probability}}, got {type(law).__name__}")
    if not law:
        raise ValueError(f"{name} is empty")
    vals = check_distribution(list(law.values()), f"{name} probabilities")
    return {k: (Fraction(v) if vals.dtype == object else float(v)) for k, v in zip(law, vals)}


@dataclass(frozen=True)
class GofResult:
    statistic: float
    dof: int
    p_value: float
    n: int
    cells: int
    threshold: float

    @property
    def rejected(self) -> bool:
        return self.p_value < self.threshold

    def __str__(self):
        verdict = "REJECT: not the target law" if self.rejected else "consistent with the target law"
        from .formatting import p_value_phrase

        return (
            f"chi-square = {self.statistic:.1f} on {self.dof} dof, {p_value_phrase(self.p_value)} "
            f"(n = {self.n}, reject if p-value < {self.threshold:g}) -> {verdict}"
        )


def check_test_options(threshold: float, min_expected: float) -> None:
    """The chi-square test's size ``threshold`` in (0, 1) and its pooling bound ``min_expected``
    > 0 (shared by the test and its power calculation)."""
    check_level(threshold, "threshold")
    check_positive(min_expected, "min_expected", "a positive, finite number")


def pooled_groups(expected: ArrayLike, min_expected: float = 5.0) -> list[list[int]]:
    """The test's cells: a list of index lists into ``expected`` (expected counts, sorted in
    decreasing order, all > 0). Each index whose expected count is at least ``min_expected`` is
    a cell of its own; the rest (the tail, in order) are gathered into consecutive groups, each
    closed as soon as its expected count reaches ``min_expected``; a last group that falls short
    joins the group before it (or, when the whole tail is short, stays one cell). Shared by
    :func:`chi_square_gof` and the power calculations so that they use the same cells."""
    expected = np.asarray(check_weights(expected, "expected"), dtype=np.float64)
    if expected.ndim != 1 or not (expected > 0).all():
        raise ValueError(
            f"expected must be a 1-D sequence of positive expected counts, got shape {expected.shape}"
        )
    check_test_options(0.5, min_expected)
    # rounding must not decide a cell: a sum within 1e-9 (relative) of min_expected reaches it
    min_expected = float(min_expected) * (1 - 1e-9)
    big = expected >= min_expected
    cells = [[int(i)] for i in np.flatnonzero(big)]
    groups, current, mass = [], [], 0.0
    for i in np.flatnonzero(~big):
        current.append(int(i))
        mass += float(expected[i])
        if mass >= min_expected:
            groups.append(current)
            current, mass = [], 0.0
    if current:
        if groups:
            groups[-1].extend(current)
        else:
            groups.append(current)
    return cells + groups


def pool(values: ArrayLike, groups: Sequence[Sequence[int]]) -> np.ndarray:
    """Sum of ``values`` (an array) over each group of :func:`pooled_groups`."""
    values = check_reals(values, "values")
    if values.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {values.shape}")
    gs = [check_int_sequence(g, "groups", 0, len(values) - 1) for g in check_sequence(groups, "groups")]
    return np.array([values[list(g)].sum() for g in gs])


def chi_square_gof(
    samples: Iterable[Hashable],
    law: Mapping[Hashable, Scalar],
    *,
    min_expected: float = 5.0,
    threshold: float = DEFAULT_THRESHOLD,
) -> GofResult:
    """Chi-square test of observed outcomes (an iterable of hashable outcomes, or a Counter)
    against ``law`` ({outcome: probability}). Outcomes outside the law's support make the
    statistic infinite (p-value 0): the sampler produced something impossible, and so do
    outcomes of probability 0. The cells are those of :func:`pooled_groups` (see the module
    docstring: the tail of rare outcomes is pooled into several groups, each expected at least
    ``min_expected`` times). Raises ValueError ("no test") when fewer than two cells remain."""
    from scipy.stats import chi2

    law = check_law(law)
    if isinstance(samples, (str, bytes)) or not hasattr(samples, "__iter__"):
        raise ValueError(f"samples must be an iterable of outcomes or a Counter, got {samples!r}")
    try:
        counts = samples if isinstance(samples, Counter) else Counter(samples)
    except TypeError as exc:
        raise ValueError(f"samples must hold hashable outcomes ({exc})") from None
    for k, c in counts.items():
        check_int(c, f"samples: the count of {k!r}", 0)
    n = sum(counts.values())
    if n == 0:
        raise ValueError("samples is empty")
    check_test_options(threshold, min_expected)
    outside = sum(c for k, c in counts.items() if k not in law or law[k] == 0)
    if outside:
        return GofResult(float("inf"), max(len(law) - 1, 1), 0.0, n, len(law), threshold)
    keys = sorted((k for k in law if law[k] > 0), key=lambda k: float(law[k]), reverse=True)
    probs = np.array([float(law[k]) for k in keys])
    obs = np.array([counts.get(k, 0) for k in keys], dtype=np.float64)
    exp = probs * n
    groups = pooled_groups(exp, min_expected)
    if len(groups) < 2:
        # one cell (every outcome pooled, or a one-outcome law) has 0 degrees of freedom: its
        # statistic is 0 whatever the samples are, so there is nothing to test
        big = int((exp >= min_expected).sum())
        raise ValueError(
            f"no test: with n = {n} samples {'only one cell has' if big else 'no cell has'} an "
            f"expected count of at least min_expected = {min_expected:g}, so every outcome pools into "
            "one cell (0 degrees of freedom); draw more samples or lower min_expected"
        )
    o, e = pool(obs, groups), pool(exp, groups)
    stat = float(((o - e) ** 2 / e).sum())
    dof = len(o) - 1
    return GofResult(stat, dof, float(chi2.sf(stat, dof)), n, len(o), threshold)

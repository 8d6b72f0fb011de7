"""Does a sampler keep the target's law? Chi-square goodness of fit against an exact law.

Cells whose expected count is below ``min_expected`` are pooled into one cell, so the
chi-square approximation holds. The test *rejects* when the p-value is below the stated
threshold (default 0.001). With fixed seeds the outcome is deterministic.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .distributions import check_int

#: The p-value below which the notebooks and tests reject "the samples follow the law".
DEFAULT_THRESHOLD = 1e-3


def check_law(law, name: str = "law") -> dict:
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


def check_test_options(threshold, min_expected) -> None:
    """The chi-square test's size ``threshold`` in (0, 1) and its pooling bound ``min_expected``
    > 0 (shared by the test and its power calculation)."""
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.floating))
        or not 0 < threshold < 1
    ):
        raise ValueError(f"threshold must be a number in (0, 1), got {threshold!r}")
    if (
        isinstance(min_expected, bool)
        or not isinstance(min_expected, (int, float, np.floating))
        or not 0 < min_expected < float("inf")
    ):
        raise ValueError(f"min_expected must be a positive, finite number, got {min_expected!r}")


def chi_square_gof(
    samples, law: dict, *, min_expected: float = 5.0, threshold: float = DEFAULT_THRESHOLD
) -> GofResult:
    """Chi-square test of observed outcomes (an iterable of hashable outcomes, or a Counter)
    against ``law`` ({outcome: probability}). Outcomes outside the law's support make the
    statistic infinite (p-value 0): the sampler produced something impossible."""
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
    outside = sum(c for k, c in counts.items() if k not in law)
    if outside:
        return GofResult(float("inf"), max(len(law) - 1, 1), 0.0, n, len(law), threshold)
    keys = sorted(law, key=lambda k: float(law[k]), reverse=True)
    probs = np.array([float(law[k]) for k in keys])
    obs = np.array([counts.get(k, 0) for k in keys], dtype=np.float64)
    exp = probs * n
    big = exp >= min_expected
    o = list(obs[big])
    e = list(exp[big])
    if (~big).any():
        o.append(obs[~big].sum())
        e.append(exp[~big].sum())
    if len(o) < 2:
        # one cell (every outcome pooled, or a one-outcome law) has 0 degrees of freedom: its
        # statistic is 0 whatever the samples are, so there is nothing to test
        raise ValueError(
            f"no test: with n = {n} samples {'only one cell has' if big.sum() else 'no cell has'} an "
            f"expected count of at least min_expected = {min_expected:g}, so every outcome pools into "
            "one cell (0 degrees of freedom); draw more samples or lower min_expected"
        )
    o, e = np.array(o), np.array(e)
    stat = float(((o - e) ** 2 / e).sum())
    dof = len(o) - 1
    return GofResult(stat, dof, float(chi2.sf(stat, dof)), n, len(o), threshold)

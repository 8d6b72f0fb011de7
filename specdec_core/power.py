"""Does a goodness-of-fit test have the power to catch a known bug? (notebook 02)

A chi-square test that does not reject proves little if it could not have rejected: with too
few samples even a clearly wrong correction rule passes. This module measures the *power* of the
test (the share of independent seeded experiments in which it rejects a sampler known to be
wrong) and gives the usual large-sample approximation of it, so a notebook can show a sample
size too small to catch a broken rule next to one large enough.

:func:`chi_square_power` is the one home of that approximation for any law and alternative
(notebooks 07 and 08 use it for processors, multi-candidate and tree samplers);
:func:`approximate_power` applies it to a single-position correction rule.

Pure layer: numpy, scipy.stats and the library's own simulator and test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .distributions import check_int, check_pair
from .lawcheck import DEFAULT_THRESHOLD, check_law, check_test_options, chi_square_gof, pool, pooled_groups
from .simulate import simulate_position
from .verify import SAMPLEABLE_RULES, output_distribution_with

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable, Mapping

    from .types import Probs, Scalar


@dataclass(frozen=True)
class PowerEstimate:
    """Out of ``repeats`` seeded experiments of ``n`` samples each, ``rejections`` rejected the
    target law at ``threshold``; ``approximate`` is the large-sample (noncentral chi-square)
    power for the same n, rule and threshold."""

    n: int
    repeats: int
    rejections: int
    approximate: float
    threshold: float

    @property
    def power(self) -> float:
        """The simulated power: the share of the seeded experiments that rejected."""
        return self.rejections / self.repeats


def chi_square_power(
    law: Mapping[Hashable, Scalar],
    alternative: Mapping[Hashable, Scalar],
    n: int,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    min_expected: float = 5.0,
) -> float:
    """Large-sample probability that :func:`specdec_core.lawcheck.chi_square_gof` with ``n``
    samples rejects ``law`` ({outcome: probability}) when the samples really follow
    ``alternative``: P(noncentral χ²(cells − 1, λ) > critical value), λ = n Σ (a − l)²/l over
    the same cells as the test (outcomes sorted by probability, those expected fewer than
    ``min_expected`` times pooled into consecutive groups by
    :func:`specdec_core.lawcheck.pooled_groups`). 1.0 when the alternative puts mass outside the
    law's support (the statistic is then infinite as soon as such an outcome appears); 0.0 when
    the test has a single cell (it can never reject); the test's size ``threshold`` when the
    alternative equals the law on every cell."""
    from scipy.stats import chi2, ncx2

    n = check_int(n, "n", 1)
    check_test_options(threshold, min_expected)
    law = {x: v for x, v in check_law(law, "law").items() if v > 0}
    alternative = check_law(alternative, "alternative")
    if any(float(v) > 0 for x, v in alternative.items() if x not in law):
        return 1.0
    keys = sorted(law, key=lambda x: float(law[x]), reverse=True)
    p0 = np.array([float(law[x]) for x in keys])
    p1 = np.array([float(alternative.get(x, 0)) for x in keys])
    groups = pooled_groups(p0 * n, min_expected)
    if len(groups) < 2:
        return 0.0
    c0, c1 = pool(p0, groups), pool(p1, groups)
    lam = float(n * ((c1 - c0) ** 2 / c0).sum())
    critical = chi2.isf(threshold, len(c0) - 1)
    return float(ncx2.sf(critical, len(c0) - 1, lam)) if lam > 0 else float(threshold)


def approximate_power(
    p: Probs, q: Probs, rule: str, n: int, *, threshold: float = DEFAULT_THRESHOLD
) -> float:
    """Large-sample power of the chi-square test of the output law against p, when the sampler
    corrects with ``rule`` (o is the rule's exact output law): :func:`chi_square_power` of the
    law p against the alternative o, with the test's cells."""
    if rule not in SAMPLEABLE_RULES:
        raise ValueError(f"rule must be one of {SAMPLEABLE_RULES}, got {rule!r}")
    n = check_int(n, "n", 1)
    pa, qa, _ = check_pair(p, q)
    if pa.ndim != 1:
        raise ValueError(f"p and q must be single distributions of shape (V,), got shape {pa.shape}")
    out = np.asarray(output_distribution_with(pa, qa, rule), dtype=np.float64)
    target = np.asarray(pa, dtype=np.float64)
    law = {i: float(v) for i, v in enumerate(target) if v > 0}
    alternative = {i: float(v) for i, v in enumerate(out) if v > 0}
    return chi_square_power(law, alternative, n, threshold=threshold)


def null_statistics(p: Probs, q: Probs, n: int, *, repeats: int, seed: int) -> np.ndarray:
    """The test's statistic when the sampler is *right*: ``repeats`` independent experiments (one
    seeded generator, drawn in a fixed order), each simulating ``n`` positions of strict
    speculative sampling (residual correction) and computing the chi-square statistic of the
    emitted symbols against p. Notebook 02 compares their histogram with the chi-square law the
    test assumes. Returns a float array of length ``repeats``."""
    n = check_int(n, "n", 1)
    repeats = check_int(repeats, "repeats", 1)
    seed = check_int(seed, "seed", 0)
    pa, qa, _ = check_pair(p, q)
    if pa.ndim != 1:
        raise ValueError(f"p and q must be single distributions of shape (V,), got shape {pa.shape}")
    law = {i: float(v) for i, v in enumerate(np.asarray(pa, dtype=np.float64)) if v > 0}
    rng = np.random.default_rng(seed)
    out = np.empty(repeats)
    for i in range(repeats):
        sim = simulate_position(pa, qa, n, rng, rule="residual")
        out[i] = chi_square_gof(sim.emitted.tolist(), law).statistic
    return out


def power_table(
    p: Probs,
    q: Probs,
    rule: str,
    sizes: Iterable[int],
    *,
    repeats: int,
    seed: int,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[PowerEstimate]:
    """For each sample size in ``sizes``: ``repeats`` independent experiments (one seeded
    generator, drawn in a fixed order), each simulating ``n`` positions with correction ``rule``
    and testing the emitted symbols against p. Returns one :class:`PowerEstimate` per size."""
    sizes = list(sizes) if not isinstance(sizes, (str, bytes)) else None
    if not sizes:
        raise ValueError(f"sizes must be a non-empty sequence of positive integers, got {sizes!r}")
    sizes = [check_int(n, "sizes", 1) for n in sizes]
    repeats = check_int(repeats, "repeats", 1)
    seed = check_int(seed, "seed", 0)
    pa, qa, _ = check_pair(p, q)
    law = {i: float(v) for i, v in enumerate(np.asarray(pa, dtype=np.float64)) if v > 0}
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        approx = approximate_power(pa, qa, rule, n, threshold=threshold)
        hits = 0
        for _ in range(repeats):
            sim = simulate_position(pa, qa, n, rng, rule=rule)
            hits += chi_square_gof(sim.emitted.tolist(), law, threshold=threshold).rejected
        rows.append(PowerEstimate(n, repeats, hits, approx, threshold))
    return rows

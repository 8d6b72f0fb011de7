"""Does a goodness-of-fit test have the power to catch a known bug? (notebook 02)

A chi-square test that does not reject proves little if it could not have rejected: with too
few samples even a clearly wrong correction rule passes. This module measures the *power* of the
test (the share of independent seeded experiments in which it rejects a sampler known to be
wrong) and gives the usual large-sample approximation of it, so a notebook can show a sample
size too small to catch a broken rule next to one large enough.

Pure layer: numpy, scipy.stats and the library's own simulator and test.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .distributions import check_pair
from .lawcheck import DEFAULT_THRESHOLD, chi_square_gof
from .simulate import SAMPLEABLE_RULES, simulate_position
from .verify import output_distribution_with


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
        """The measured power: the share of experiments that rejected."""
        return self.rejections / self.repeats


def _check_positive_int(x, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
        raise ValueError(f"{name} must be a positive integer, got {x!r}")
    return int(x)


def approximate_power(p, q, rule: str, n, *, threshold: float = DEFAULT_THRESHOLD) -> float:
    """Large-sample power of the chi-square test of the output law against p, when the sampler
    corrects with ``rule``: P(noncentral χ²(V' − 1, λ) > critical value), λ = n Σ (o − p)²/p over
    the symbols with p > 0 (o is the rule's exact output law). 1.0 when the rule writes a symbol
    the target never writes (the statistic is then infinite as soon as it appears)."""
    from scipy.stats import chi2, ncx2

    if rule not in SAMPLEABLE_RULES:
        raise ValueError(f"rule must be one of {SAMPLEABLE_RULES}, got {rule!r}")
    n = _check_positive_int(n, "n")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold < 1:
        raise ValueError(f"threshold must be in (0, 1), got {threshold!r}")
    pa, qa, _ = check_pair(p, q)
    if pa.ndim != 1:
        raise ValueError(f"p and q must be single distributions of shape (V,), got shape {pa.shape}")
    out = np.asarray(output_distribution_with(pa, qa, rule), dtype=np.float64)
    target = np.asarray(pa, dtype=np.float64)
    support = target > 0
    if (out[~support] > 0).any():
        return 1.0
    dof = int(support.sum()) - 1
    if dof < 1:
        return 0.0
    lam = n * float((((out - target) ** 2)[support] / target[support]).sum())
    critical = chi2.isf(threshold, dof)
    return float(ncx2.sf(critical, dof, lam)) if lam > 0 else float(threshold)


def power_table(p, q, rule: str, sizes, *, repeats: int, seed: int,
                threshold: float = DEFAULT_THRESHOLD) -> list:
    """For each sample size in ``sizes``: ``repeats`` independent experiments (one seeded
    generator, drawn in a fixed order), each simulating ``n`` positions with correction ``rule``
    and testing the emitted symbols against p. Returns one :class:`PowerEstimate` per size."""
    sizes = list(sizes) if not isinstance(sizes, (str, bytes)) else None
    if not sizes:
        raise ValueError(f"sizes must be a non-empty sequence of positive integers, got {sizes!r}")
    sizes = [_check_positive_int(n, "sizes") for n in sizes]
    repeats = _check_positive_int(repeats, "repeats")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
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

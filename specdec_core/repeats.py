"""Claims that survive statistics: paired speed-up ratios, how many repeats a stated precision
needs, and the upward bias of picking the best of several noisy configurations.

A timed speed-up is a ratio of two noisy times. On a shared machine the noise is mostly *common*
to runs close in time (a slow spell slows both), so the benchmark runs speculative and plain
decoding in the same block and takes the **paired** ratio r_i = speed_spec,i ÷ speed_plain,i of
each repeat i. Ratios multiply, so the interval is built on log r_i with Student's t:

    exp( mean(log r) ± t_{n−1} · sd(log r) / √n ).                                    (1)

**Selection bias**: the largest of k measured ratios is an upward-biased estimate of the best
configuration's true ratio — with no real difference between configurations, the maximum of k
noisy ratios still lies above 1 (:func:`max_of_noisy_ratios`). The cure: choose the
configuration before the run (from a prediction or on calibration runs) and report the chosen
one's repeats with interval (1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .distributions import (
    check_int,
    check_level,
    check_nonnegative,
    check_positive,
    check_rng,
    check_sequence,
)

if TYPE_CHECKING:
    from collections.abc import Sequence


def _positive_list(xs, name) -> np.ndarray:
    items = check_sequence(xs, name, "a list of positive numbers")
    return np.array([float(check_positive(x, name, "a list of positive numbers")) for x in items])


def _level(level) -> float:
    return float(check_level(level, "level"))


@dataclass(frozen=True)
class PairedRatio:
    """Geometric mean of paired ratios and its interval (1) at ``level``; ``n`` pairs. Fewer than
    2 pairs have no interval: ``low``, ``high`` and ``sd_log`` are None then (and only then)."""

    ratio: float
    low: float | None
    high: float | None
    n: int
    sd_log: float | None
    level: float

    def __post_init__(self):
        check_int(self.n, "n", 1)
        check_positive(self.ratio, "ratio", "a positive finite number")
        check_level(self.level)
        rest = (self.low, self.high, self.sd_log)
        if self.n < 2:
            if rest != (None, None, None):
                raise ValueError(
                    f"with n = {self.n} pair there is no interval: low, high, sd_log must be None"
                )
            return
        if None in rest:
            raise ValueError(f"an interval needs low, high and sd_log (n = {self.n}), got {rest}")
        low = check_positive(self.low, "low", "a positive finite number")
        high = check_positive(self.high, "high", "a positive finite number")
        check_nonnegative(self.sd_log, "sd_log", "a finite number >= 0")
        if not low <= self.ratio <= high:
            raise ValueError(f"an interval needs low ≤ ratio ≤ high, got {low!r}, {self.ratio!r}, {high!r}")

    def __str__(self):
        if self.n < 2:
            return f"×{self.ratio:.2f} (one pair: no interval)"
        return f"×{self.ratio:.2f} ({100 * self.level:.0f}% interval ×{self.low:.2f}–×{self.high:.2f}, n = {self.n})"


def paired_ratio(numer: Sequence[float], denom: Sequence[float], level: float = 0.95) -> PairedRatio:
    """Interval (1) for the ratio numer/denom from paired repeats (same length, same order)."""
    a, b = _positive_list(numer, "numer"), _positive_list(denom, "denom")
    if len(a) != len(b) or len(a) == 0:
        raise ValueError(
            f"numer and denom must be non-empty and paired (same length), got {len(a)} and {len(b)}"
        )
    lv = _level(level)
    logs = np.log(a) - np.log(b)  # no overflow: a and b are positive and finite
    if np.abs(logs).max() > 700:
        raise ValueError(
            "numer / denom overflows (or underflows to 0) for some pair: the inputs are too far apart"
        )
    m = float(logs.mean())
    n = len(logs)
    if n < 2:
        return PairedRatio(math.exp(m), None, None, n, None, lv)
    from scipy.stats import t

    sd = float(logs.std(ddof=1))
    h = float(t.ppf(0.5 + lv / 2, n - 1)) * sd / math.sqrt(n)
    return PairedRatio(math.exp(m), math.exp(m - h), math.exp(m + h), n, sd, lv)


#: repeats_needed searches n up to ``max_n``: at most this many repeats.
MAX_REPEATS = 10**6


def repeats_needed(sd_log: float, precision: float, level: float = 0.95, max_n: int = 10_000) -> int:
    """The smallest n whose interval (1) has half-width ≤ log(1 + precision) on the log scale
    (e.g. precision 0.05: ±5 %), for a spread ``sd_log`` of the paired log-ratios; ValueError
    when more than ``max_n`` (an int in [2, MAX_REPEATS]) would be needed. The search starts at
    the normal bound (z·sd_log / log(1 + precision))², below which no n can do (t_{n−1} > z)."""
    sd_log = float(check_nonnegative(sd_log, "sd_log", "a finite number >= 0"))
    precision = float(check_positive(precision, "precision", "a number in (0, 10)"))
    if precision >= 10:
        raise ValueError(f"precision must be a number in (0, 10), got {precision!r}")
    lv = _level(level)
    max_n = check_int(max_n, "max_n", 2, MAX_REPEATS, f"an integer in [2, {MAX_REPEATS:,}]")
    from scipy.stats import norm, t

    target = math.log1p(precision)
    bound = float(norm.ppf(0.5 + lv / 2)) * sd_log / target  # √n must exceed this
    if bound > math.sqrt(max_n):
        raise ValueError(f"more than max_n = {max_n} repeats needed")
    for n in range(max(2, math.floor(bound * bound)), max_n + 1):
        if float(t.ppf(0.5 + lv / 2, n - 1)) * sd_log / math.sqrt(n) <= target:
            return n
    raise ValueError(f"more than max_n = {max_n} repeats needed")


def max_of_noisy_ratios(k: int, reps: int, sd_log: float, *, sims: int, rng: np.random.Generator) -> float:
    """Simulated: the mean, over ``sims`` experiments, of the largest of ``k`` measured ratios,
    each the geometric mean of ``reps`` paired repeats with log-spread ``sd_log``, when every
    configuration's true ratio is exactly 1. Above 1 is pure selection bias."""
    k, reps, sims = (check_int(v, name, 1) for v, name in ((k, "k"), (reps, "reps"), (sims, "sims")))
    sd_log = float(check_nonnegative(sd_log, "sd_log", "a finite number >= 0"))
    if k * reps * sims > 10**8:
        raise ValueError(f"k · reps · sims must be at most 1e8, got {k * reps * sims}")
    rng = check_rng(rng)
    logs = rng.normal(0.0, sd_log, size=(sims, k, reps)).mean(axis=2)
    return float(np.exp(logs.max(axis=1)).mean())

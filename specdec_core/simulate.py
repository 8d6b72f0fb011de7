"""Simulating one position of strict speculative sampling, many times at once (notebook 01 and 02).

Each trial is one proposal x ~ q, one acceptance draw u ~ Uniform[0, 1) (x is kept when
u < a(x) = min(1, p(x)/q(x))), and — only if x was rejected — one correction drawn from the
rule's correction distribution. Everything is vectorized over the trials and driven by one
seeded ``numpy.random.Generator``, so a fixed seed gives the same numbers every time.

The probabilities come from :mod:`specdec_core.verify` (acceptance, correction); this module only
draws from them. Pure layer: numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .distributions import check_int, check_pair, check_rng, check_weights, inverse_cdf
from .verify import acceptance_probabilities, check_rule, correction_distribution

if TYPE_CHECKING:
    from .types import Probs


def _trials(n) -> int:
    return check_int(n, "n", 1, what="a positive integer number of trials")


@dataclass(frozen=True)
class PositionSimulation:
    """The draws of ``n`` independent single-position trials (arrays of length n).

    ``proposals``: symbol index proposed by the draft; ``u``: the acceptance draw;
    ``accepted``: u < a(proposal); ``emitted``: the symbol that finally comes out (the proposal if
    accepted, otherwise the correction); ``n_symbols``: V.
    """

    proposals: np.ndarray
    u: np.ndarray
    accepted: np.ndarray
    emitted: np.ndarray
    n_symbols: int
    rule: str

    @property
    def n(self) -> int:
        return int(self.proposals.shape[0])

    def acceptance_fraction(self) -> float:
        """Share of trials whose proposal was accepted (estimates α)."""
        return float(self.accepted.mean())

    def accepted_frequencies(self) -> np.ndarray:
        """Per symbol: share of trials in which that symbol was proposed *and* accepted
        (estimates min(p, q))."""
        return np.bincount(self.proposals[self.accepted], minlength=self.n_symbols) / self.n

    def proposal_frequencies(self) -> np.ndarray:
        """Per symbol: share of trials in which it was proposed (estimates q)."""
        return np.bincount(self.proposals, minlength=self.n_symbols) / self.n

    def output_frequencies(self) -> np.ndarray:
        """Per symbol: share of trials in which it was emitted (estimates the output law)."""
        return np.bincount(self.emitted, minlength=self.n_symbols) / self.n


def simulate_position(
    p: Probs, q: Probs, n: int, rng: np.random.Generator, rule: str = "residual"
) -> PositionSimulation:
    """Run ``n`` single-position trials of propose → accept/reject → correct.

    Draw order (fixed, so seeds are reproducible): n proposals, then n acceptance uniforms, then
    one uniform per rejected trial for its correction. ``rule`` picks the correction (see
    :data:`~specdec_core.verify.SAMPLEABLE_RULES`); when nothing is rejected no correction is needed, so p = q works
    with any rule.
    """
    pa, qa, _ = check_pair(p, q)
    if pa.ndim != 1:
        raise ValueError(f"p and q must be single distributions of shape (V,), got shape {pa.shape}")
    check_rule(rule, "rule")
    n = _trials(n)
    rng = check_rng(rng)
    with np.errstate(over="ignore"):  # p/q overflows for subnormal q: min(1, inf) = 1 is right
        accept = np.asarray(acceptance_probabilities(pa, qa), dtype=np.float64)
    proposals = inverse_cdf(qa, rng.random(n))
    u = rng.random(n)
    accepted = u < accept[proposals]
    emitted = proposals.copy()
    rejected = ~accepted
    n_rej = int(rejected.sum())
    if n_rej:
        corr = np.asarray(correction_distribution(pa, qa, rule), dtype=np.float64)
        emitted[rejected] = inverse_cdf(corr, rng.random(n_rej))
    return PositionSimulation(proposals, u, accepted, emitted, int(pa.shape[0]), rule)


def max_abs_gap(empirical: Probs, exact: Probs) -> float:
    """max |empirical − exact| over the symbols, as a float."""
    e = np.asarray(check_weights(empirical, "empirical"), dtype=np.float64)
    x = np.asarray(check_weights(exact, "exact"), dtype=np.float64)
    if e.shape != x.shape:
        raise ValueError(f"empirical and exact must have the same shape, got {e.shape} and {x.shape}")
    return float(np.max(np.abs(e - x)))


def binomial_standard_errors(probs: Probs, n: int) -> np.ndarray:
    """sqrt(π(1 − π)/n) per symbol: the sampling noise of a frequency estimating π from n trials."""
    n = _trials(n)
    pr = np.asarray(check_weights(probs, "probs"), dtype=np.float64)
    if (pr > 1).any():
        raise ValueError("probs must hold probabilities in [0, 1]")
    return np.sqrt(pr * (1 - pr) / n)


def z_scores(empirical: Probs, exact: Probs, n: int) -> np.ndarray:
    """(empirical − exact) / standard error per symbol, rounded to 1 decimal for printing.

    Where the standard error is 0 (exact probability 0 or 1) the frequency cannot vary: the
    score is 0 if it matches and ±inf if it does not. ``-0.0`` is returned as ``0.0``.
    """
    e = np.asarray(check_weights(empirical, "empirical"), dtype=np.float64)
    x = np.asarray(check_weights(exact, "exact"), dtype=np.float64)
    if e.shape != x.shape:
        raise ValueError(f"empirical and exact must have the same shape, got {e.shape} and {x.shape}")
    se = binomial_standard_errors(x, n)
    gap = e - x
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, gap / np.where(se > 0, se, 1.0), np.where(gap == 0, 0.0, np.sign(gap) * np.inf))
    return np.round(z, 1) + 0.0

"""How many tokens one verification round emits: K = accepted proposals + 1.

A round with γ proposals stops at the first rejection (emitting the accepted prefix plus one
correction) or accepts all γ (emitting them plus one bonus token), so 1 ≤ K ≤ γ + 1.
Under the *synthetic* assumption that every proposal is accepted independently with the same
probability α:

    P(K = k) = α^(k−1) (1 − α)   for k = 1 … γ
    P(K = γ+1) = α^γ
    E[K] = Σ_{j=0..γ} α^j = (1 − α^(γ+1)) / (1 − α)   (γ + 1 when α = 1)

Real acceptance depends on the prefix; notebook 04 measures the gap.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .distributions import check_gamma, check_probability


def output_count_distribution(alpha, gamma):
    """[P(K=1), …, P(K=γ+1)] under iid acceptance with probability ``alpha``.

    Exact ``alpha`` gives a list-like object array of Fractions; float ``alpha`` (scalar or
    array of any shape) gives float64 with a trailing axis of length γ + 1.
    """
    a = check_probability(alpha, "alpha")
    g = check_gamma(gamma, "gamma")
    if isinstance(a, Fraction):
        out = [a ** (k - 1) * (1 - a) for k in range(1, g + 1)] + [a**g]
        return np.array(out, dtype=object)
    a = np.asarray(a, dtype=np.float64)[..., None]
    k = np.arange(1, g + 2)
    probs = a ** (k - 1) * (1 - a)
    probs[..., -1] = a[..., 0] ** g
    return probs


def expected_output_count(alpha, gamma):
    """E[K] = Σ_{j=0..γ} α^j: expected tokens emitted per round under iid acceptance."""
    a = check_probability(alpha, "alpha")
    g = check_gamma(gamma, "gamma")
    if isinstance(a, Fraction):
        return sum((a**j for j in range(g + 1)), Fraction(0))
    a = np.asarray(a, dtype=np.float64)
    out = np.zeros_like(a)
    for j in range(g + 1):
        out = out + a**j
    return float(out) if out.ndim == 0 else out


def mean_output_count(emitted_per_round) -> float:
    """Measured acceptance length: mean K over recorded rounds."""
    k = np.asarray(list(emitted_per_round), dtype=np.float64)
    if k.size == 0:
        raise ValueError("emitted_per_round is empty: no rounds to average")
    if (k < 1).any() or np.isnan(k).any():
        raise ValueError("emitted_per_round: every round emits at least one token")
    return float(k.mean())

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


# ---------------------------------------------------------------- notebook 04 additions

def expected_count_curve(alpha, max_gamma):
    """[E[K] at γ = 0, 1, …, max_gamma] for one α: the diminishing-returns curve.

    Each extra proposal adds α^γ: less and less when α < 1.
    """
    a = check_probability(alpha, "alpha")
    if isinstance(a, np.ndarray):
        raise ValueError("alpha must be a single probability here, not an array")
    m = check_gamma(max_gamma, "max_gamma")
    out, term = [], (Fraction(1) if isinstance(a, Fraction) else 1.0)
    total = 0 * term
    for _ in range(m + 1):
        total = total + term
        out.append(total)
        term = term * a
    return out


def expected_accepted(alpha, gamma):
    """E[accepted proposals per round] = α + α² + … + α^γ = E[K] − 1 (iid)."""
    return expected_output_count(alpha, gamma) - 1


def iid_acceptance_rate(alpha, gamma):
    """What "accepted / proposed" converges to under iid α: (α + … + α^γ)/γ.

    It is *not* α: proposals after the first rejection are discarded unchecked yet still
    counted as proposed, so the rate falls as γ grows even though the draft did not change.
    """
    g = check_gamma(gamma)
    if g == 0:
        raise ValueError("gamma must be at least 1: with gamma = 0 nothing is proposed")
    return expected_accepted(alpha, g) / g


def mixture_expected_count(alphas, weights, gamma):
    """Σ wᵢ·E[K](αᵢ): mean K when a round's acceptance is αᵢ with probability wᵢ
    (constant within a round). ``weights`` must sum to 1 (exact or within float tolerance).

    Since E[K] is convex in α, this is ≥ E[K](Σ wᵢ αᵢ) (Jensen's inequality): iid at the
    average α *under*-predicts a workload whose acceptance varies from round to round.
    """
    from .distributions import check_distribution

    w = check_distribution(weights, "weights")
    if w.ndim != 1:
        raise ValueError(f"weights must be a 1-D vector, got shape {w.shape}")
    if isinstance(alphas, (str, bytes)) or not hasattr(alphas, "__len__"):
        raise ValueError(f"alphas must be a sequence of probabilities, got {alphas!r}")
    if len(alphas) != len(w):
        raise ValueError(f"alphas and weights must have the same length, got {len(alphas)} and {len(w)}")
    vals = [expected_output_count(check_probability(a, "alphas"), gamma) for a in alphas]
    if w.dtype == object and all(isinstance(v, Fraction) for v in vals):
        return sum((wi * v for wi, v in zip(w, vals)), Fraction(0))
    return float(sum(float(wi) * float(v) for wi, v in zip(w, vals)))

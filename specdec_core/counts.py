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
from typing import TYPE_CHECKING

import numpy as np

from .distributions import check_gamma, check_probability

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from numpy.typing import ArrayLike

    from .types import Probs, Scalar

#: Largest γ for *exact* (Fraction) α strictly between 0 and 1: α^γ has about γ·log₂(denominator)
#: bits, so beyond this the exact answer is too big to be useful. Float α has no limit for E[K].
MAX_EXACT_GAMMA = 10_000
#: Largest number of entries a K law (or a curve over γ) may have: it has γ + 1 entries per α.
MAX_LAW_ENTRIES = 10**7
#: Below this γ, E[K] for float α is the plain sum Σ α^j (bit-identical to earlier releases);
#: from it on, the closed form (γ = 10⁹ costs the same as γ = 10).
_SUM_BELOW = 64


def _check_exact_size(a: Fraction, g: int, name: str = "gamma") -> None:
    if 0 < a < 1 and g > MAX_EXACT_GAMMA:
        raise ValueError(
            f"{name} = {g} is too large for exact arithmetic with alpha = {a} (the exact answer "
            f"has about {int(g * np.log10(float(a.denominator))) + 1} digits); use a float alpha "
            f"or {name} <= {MAX_EXACT_GAMMA}"
        )


def _check_law_size(n_alpha: int, g: int, name: str = "gamma") -> None:
    if n_alpha * (g + 1) > MAX_LAW_ENTRIES:
        raise ValueError(
            f"{name} = {g} would make a K law with {n_alpha * (g + 1):,} entries; "
            f"at most {MAX_LAW_ENTRIES:,} are computed (use expected_output_count "
            f"for E[K] at any gamma)"
        )


def output_count_distribution(alpha: Scalar | ArrayLike, gamma: int) -> np.ndarray:
    """[P(K=1), …, P(K=γ+1)] under iid acceptance with probability ``alpha``.

    Exact ``alpha`` gives a list-like object array of Fractions; float ``alpha`` (scalar or
    array of any shape) gives float64 with a trailing axis of length γ + 1. The law has γ + 1
    entries, so γ is limited (:data:`MAX_LAW_ENTRIES` entries in all; exact α also
    :data:`MAX_EXACT_GAMMA`).
    """
    a = check_probability(alpha, "alpha")
    g = check_gamma(gamma, "gamma")
    if isinstance(a, Fraction):
        _check_law_size(1, g)
        _check_exact_size(a, g)
        out, power = [], Fraction(1)
        for _ in range(g):
            out.append(power * (1 - a))
            power *= a
        out.append(power)
        return np.array(out, dtype=object)
    a = np.asarray(a, dtype=np.float64)
    _check_law_size(max(a.size, 1), g)
    a = a[..., None]
    k = np.arange(1, g + 2)
    probs = a ** (k - 1) * (1 - a)
    probs[..., -1] = a[..., 0] ** g
    return probs


def _expected_float(a: np.ndarray, g: int) -> np.ndarray:
    """E[K] for float α of any shape: Σ α^j for small γ, the closed form
    (1 − α^(γ+1))/(1 − α) computed as −expm1((γ+1)·log1p(−d))/d with d = 1 − α (accurate when
    α is close to 1, and exactly γ + 1 at α = 1) for large γ."""
    if g < _SUM_BELOW:
        out = np.zeros_like(a)
        for j in range(g + 1):
            out = out + a**j
        return out
    d = 1.0 - a
    with np.errstate(divide="ignore", invalid="ignore"):
        closed = -np.expm1((g + 1.0) * np.log1p(-d)) / d
    return np.where(d > 0, closed, g + 1.0)


def expected_output_count(alpha: Scalar | ArrayLike, gamma: int) -> Scalar | np.ndarray:
    """E[K] = Σ_{j=0..γ} α^j = (1 − α^(γ+1))/(1 − α): expected tokens emitted per round under
    iid acceptance (γ + 1 at α = 1). A closed form: any γ answers at once for float α; exact α
    strictly between 0 and 1 allows γ up to :data:`MAX_EXACT_GAMMA`."""
    a = check_probability(alpha, "alpha")
    g = check_gamma(gamma, "gamma")
    if isinstance(a, Fraction):
        if a == 1:
            return Fraction(g + 1)
        _check_exact_size(a, g)
        return (1 - a ** (g + 1)) / (1 - a)
    out = _expected_float(np.asarray(a, dtype=np.float64), g)
    return float(out) if out.ndim == 0 else out


def expected_gain(alpha: Scalar | ArrayLike, gamma_from: int, gamma_to: int) -> Scalar | np.ndarray:
    """E[K](γ_to) − E[K](γ_from): the change in expected tokens per round when γ goes from
    ``gamma_from`` to ``gamma_to``, computed from the unrounded values (a difference of two
    *shown*, rounded numbers can be off in the last digit). Exact for exact α; equal to
    α^(γ_from+1) + … + α^(γ_to) when γ_to > γ_from.

    Example: at α = 0.6, E[K] is 2.3056 at γ = 4 and 2.47480576 at γ = 8, so the gain is
    0.16920576 — 0.17 to two decimals; subtracting the numbers as shown to two decimals
    (2.47 − 2.31 = 0.16) is off in the last digit.
    """
    a = check_probability(alpha, "alpha")
    g0 = check_gamma(gamma_from, "gamma_from")
    g1 = check_gamma(gamma_to, "gamma_to")
    if isinstance(a, Fraction):
        return expected_output_count(a, g1) - expected_output_count(a, g0)
    if g0 == g1:
        return 0.0 if np.ndim(a) == 0 else np.zeros_like(np.asarray(a, dtype=np.float64))
    lo, hi, sign = (g0, g1, 1.0) if g0 < g1 else (g1, g0, -1.0)
    # α^(lo+1)·E[K](hi − lo − 1): the added terms directly, no cancellation between two sums
    af = np.asarray(a, dtype=np.float64)
    out = sign * af ** (lo + 1) * _expected_float(af, hi - lo - 1)
    return float(out) if out.ndim == 0 else out


def mean_output_count(emitted_per_round: Iterable[int]) -> float:
    """Measured acceptance length: mean K over recorded rounds."""
    from .distributions import check_weights

    if isinstance(emitted_per_round, (str, bytes)) or not hasattr(emitted_per_round, "__iter__"):
        raise ValueError(f"emitted_per_round must be a sequence of counts, got {emitted_per_round!r}")
    vals = list(emitted_per_round)
    if not vals:
        raise ValueError("emitted_per_round is empty: no rounds to average")
    k = np.asarray(check_weights(vals, "emitted_per_round"), dtype=np.float64)
    if k.size == 0:
        raise ValueError("emitted_per_round is empty: no rounds to average")
    if (k < 1).any() or np.isnan(k).any():
        raise ValueError("emitted_per_round: every round emits at least one token")
    return float(k.mean())


# ---------------------------------------------------------------- notebook 04 additions


def expected_count_curve(alpha: Scalar, max_gamma: int) -> list[Scalar]:
    """[E[K] at γ = 0, 1, …, max_gamma] for one α: the diminishing-returns curve.

    Each extra proposal adds α^γ: less and less when α < 1. The list has max_gamma + 1
    entries, so max_gamma is limited like a K law (:data:`MAX_LAW_ENTRIES`).
    """
    a = check_probability(alpha, "alpha")
    if isinstance(a, np.ndarray):
        raise ValueError("alpha must be a single probability here, not an array")
    m = check_gamma(max_gamma, "max_gamma")
    _check_law_size(1, m, "max_gamma")
    if isinstance(a, Fraction):
        _check_exact_size(a, m, "max_gamma")
    out, term = [], (Fraction(1) if isinstance(a, Fraction) else 1.0)
    total = 0 * term
    for _ in range(m + 1):
        total = total + term
        out.append(total)
        term = term * a
    return out


def expected_accepted(alpha: Scalar | ArrayLike, gamma: int) -> Scalar | np.ndarray:
    """E[accepted proposals per round] = α + α² + … + α^γ = E[K] − 1 (iid)."""
    return expected_output_count(alpha, gamma) - 1


def iid_accepted_share(alpha: Scalar | ArrayLike, gamma: int) -> Scalar | np.ndarray:
    """The share of proposals accepted (accepted / proposed) that a long run converges to under
    iid α: (α + … + α^γ)/γ.

    It is *not* the acceptance probability α: proposals after the first rejection are discarded
    unchecked yet still counted as proposed, so the share falls as γ grows even though the
    draft did not change.
    """
    g = check_gamma(gamma)
    if g == 0:
        raise ValueError("gamma must be at least 1: with gamma = 0 nothing is proposed")
    return expected_accepted(alpha, g) / g


def mixture_expected_count(alphas: Sequence[Scalar], weights: Probs, gamma: int) -> Scalar:
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

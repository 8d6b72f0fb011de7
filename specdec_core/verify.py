"""One position of strict speculative sampling: acceptance, accepted mass, α, residual, output.

Notation (Leviathan et al., 2023): **p is the target**, **q is the draft**. Some sources swap the
letters; the roles are what matter: proposals come from the draft, the target decides.

Every function takes p and q of shape (V,) or (..., V) and works along the last axis. Exact
inputs (Fraction / sympy Rational / int) give exact ``Fraction`` arrays; floats give float64.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .distributions import check_pair

#: The correction rules the "wrong corrections" lab compares. Only "residual" is correct.
CORRECTION_RULES = ("residual", "draft", "target", "uniform", "unnormalized")


def _minimum(pa, qa):
    return np.minimum(pa, qa) if pa.dtype != object else np.vectorize(min, otypes=[object])(pa, qa)


def _positive_part(d):
    if d.dtype != object:
        return np.maximum(d, 0.0)
    return np.vectorize(lambda v: v if v > 0 else Fraction(0), otypes=[object])(d)


def acceptance_probabilities(p, q):
    """a(x) = min(1, p(x)/q(x)): the chance the target keeps a proposed symbol x.

    Where q(x) = 0 the draft can never propose x, so a(x) is never used; we return **1**
    there (the limit of min(1, p/q) as q → 0⁺ for p > 0), which keeps
    q(x)·a(x) = min(p(x), q(x)) = 0 true for every symbol.
    """
    pa, qa, exact = check_pair(p, q)
    if exact:
        return np.vectorize(lambda pv, qv: Fraction(1) if qv == 0 else min(Fraction(1), pv / qv),
                            otypes=[object])(pa, qa)
    out = np.ones_like(pa)
    with np.errstate(over="ignore"):  # p/q overflows to inf for subnormal q; min(1, inf) = 1
        np.divide(pa, qa, out=out, where=qa > 0)
    return np.minimum(out, 1.0)


def accepted_mass(p, q):
    """min(p(x), q(x)) per symbol: the probability that x is proposed *and* accepted."""
    pa, qa, _ = check_pair(p, q)
    return _minimum(pa, qa)


def acceptance_rate(p, q):
    """α = Σₓ min(p(x), q(x)): the chance one proposal is accepted (1 − total variation)."""
    pa, qa, _ = check_pair(p, q)
    return _minimum(pa, qa).sum(axis=-1)


def rejection_probability(p, q):
    """1 − α = Σₓ max(p(x) − q(x), 0): the mass the correction has to supply."""
    pa, qa, _ = check_pair(p, q)
    return _positive_part(pa - qa).sum(axis=-1)


def residual_distribution(p, q):
    """r(x) = max(p(x) − q(x), 0) / Σ_y max(p(y) − q(y), 0): where corrections come from.

    Raises ``ValueError`` when the denominator is 0, i.e. p = q: then no proposal is ever
    rejected and the residual is never needed.
    """
    pa, qa, _ = check_pair(p, q)
    pos = _positive_part(pa - qa)
    total = pos.sum(axis=-1, keepdims=True)
    if (np.asarray(total == 0)).any():
        raise ValueError(
            "residual_distribution: p equals q (Σ max(p − q, 0) = 0), so no proposal can be "
            "rejected and the residual is undefined and never needed"
        )
    return pos / total


def output_distribution(p, q):
    """The law of the emitted symbol: accepted mass + (1 − α) · residual. Equals p.

    When α = 1 (p = q) there is no rejection and the output is just the accepted mass.
    """
    pa, qa, exact = check_pair(p, q)
    acc = _minimum(pa, qa)
    pos = _positive_part(pa - qa)
    total = pos.sum(axis=-1, keepdims=True)
    rejected = 1 - acc.sum(axis=-1, keepdims=True)
    if exact:
        res = np.empty_like(pos)
        for idx in np.ndindex(pos.shape[:-1]):
            t = total[idx][0]
            res[idx] = pos[idx] / t if t != 0 else pos[idx]
        return acc + rejected * res
    safe = np.where(total > 0, total, 1.0)
    return acc + rejected * (pos / safe)


def correction_distribution(p, q, rule: str = "residual"):
    """The distribution a rejected proposal is replaced from, under a named rule.

    "residual" is strict speculative sampling (the only correct rule). The others are the
    classic mistakes shown in notebook 02: "draft" (resample from q), "target" (resample from
    p), "uniform", and "unnormalized" (use max(p − q, 0) without dividing by its sum — not a
    distribution at all, its total is 1 − α).
    """
    if rule not in CORRECTION_RULES:
        raise ValueError(f"rule must be one of {CORRECTION_RULES}, got {rule!r}")
    pa, qa, exact = check_pair(p, q)
    if rule == "residual":
        return residual_distribution(pa, qa)
    if rule == "draft":
        return qa.copy()
    if rule == "target":
        return pa.copy()
    if rule == "uniform":
        v = pa.shape[-1]
        fill = Fraction(1, v) if exact else 1.0 / v
        return np.full(pa.shape, fill, dtype=object if exact else np.float64)
    return _positive_part(pa - qa)


def output_distribution_with(p, q, rule: str = "residual"):
    """Output law when rejections are corrected by ``rule``: min(p, q) + (1 − α) · correction.

    With "residual" this is p; every other rule gives something else (for "unnormalized" the
    result does not even sum to 1). Where p = q no rejection happens and every rule gives p.
    """
    pa, qa, exact = check_pair(p, q)
    acc = _minimum(pa, qa)
    rejected = 1 - acc.sum(axis=-1, keepdims=True)
    if rule == "residual":
        return output_distribution(pa, qa)
    corr = correction_distribution(pa, qa, rule)
    return acc + rejected * corr


def total_variation(p, q):
    """TV distance ½ Σ |p − q| (= 1 − α for two distributions). Either argument may be any
    non-negative vector of the same shape (so an unnormalized 'output' can be compared)."""
    pa = np.asarray(p, dtype=object if _exact_like(p) else np.float64)
    qa = np.asarray(q, dtype=object if _exact_like(q) else np.float64)
    if pa.shape != qa.shape:
        raise ValueError(f"p and q must have the same shape, got {pa.shape} and {qa.shape}")
    if pa.dtype == object and qa.dtype == object:
        return sum((abs(a - b) for a, b in zip(pa.flat, qa.flat)), Fraction(0)) / 2
    pf, qf = pa.astype(np.float64), qa.astype(np.float64)
    if np.isnan(pf).any() or np.isnan(qf).any():
        raise ValueError("total_variation: an argument contains NaN")
    return 0.5 * np.abs(pf - qf).sum(axis=-1)


def _exact_like(x) -> bool:
    from .distributions import is_exact

    return is_exact(x) or (isinstance(x, np.ndarray) and x.dtype == object
                           and all(isinstance(v, Fraction) for v in x.flat))

"""One position of strict speculative sampling: acceptance, accepted mass, α, residual, output.

Words (one per concept, across the collection): ``acceptance_probabilities`` gives a(x), the
chance a *proposed* x is accepted; ``acceptance_probability`` gives the **acceptance
probability α** = Σₓ q(x)·a(x) = Σₓ min(p(x), q(x)), the chance one checked proposal is accepted.
The share of proposals accepted over a run of rounds (accepted / proposed, which falls as γ
grows) is a different number: :func:`specdec_core.acceptance_stats.accepted_share`.

Notation (Leviathan et al., 2023): **p is the target**, **q is the draft**. Some sources swap the
letters; the roles are what matter: proposals come from the draft, the target decides.

Every function takes p and q of shape (V,) or (..., V) and works along the last axis. Exact
inputs (Fraction / sympy Rational / int) give exact ``Fraction`` arrays; floats give float64.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .distributions import check_pair, check_weights, is_exact

if TYPE_CHECKING:
    from .types import Probs, Scalar

#: The correction rules, the one tuple of names: the samplers, the simulator, the replay and
#: the "wrong corrections" lab all use it. Only "residual" is correct; the others are the classic
#: mistakes of notebook 02.
CORRECTION_RULES = ("residual", "draft", "target", "uniform", "unnormalized")

#: The rules whose correction is a distribution one can draw from ("unnormalized" is not one:
#: its total is 1 − α). The samplers accept these.
SAMPLEABLE_RULES = tuple(r for r in CORRECTION_RULES if r != "unnormalized")


def check_rule(rule: object, name: str = "correction", *, sampleable: bool = True) -> str:
    """A correction rule's name, from :data:`SAMPLEABLE_RULES` (or :data:`CORRECTION_RULES`)."""
    allowed = SAMPLEABLE_RULES if sampleable else CORRECTION_RULES
    if not isinstance(rule, str) or rule not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {rule!r}")
    return rule


def correction_weights(
    p: np.ndarray, q: np.ndarray, rule: str = "residual", *, out: np.ndarray | None = None
) -> np.ndarray:
    """The one implementation of the correction rules: the (unnormalized) weights a rejected
    proposal is replaced from, along the last axis of already validated arrays (float64, or
    object arrays of Fractions) of the same shape.

    "residual" max(p − q, 0) — where that has no mass (p = q, which cannot reject; with floats
    only reachable through rounding) the row falls back to p; "draft" q; "target" p; "uniform"
    all ones; "unnormalized" max(p − q, 0) as is. No validation here: the samplers call it on
    rows they have checked; :func:`correction_distribution` is the validated, normalized form.
    ``out`` (float arrays only, not aliasing p or q): write the weights there, without
    temporaries (the batched sampler forms each correction row in place this way).
    """
    if out is not None:
        if rule == "draft":
            np.copyto(out, q, casting="unsafe")
        elif rule == "target":
            np.copyto(out, p, casting="unsafe")
        elif rule == "uniform":
            out[...] = 1
        else:
            np.subtract(p, q, out=out, casting="unsafe")
            np.maximum(out, 0, out=out)
            if rule == "residual":
                empty = out.sum(axis=-1, keepdims=True) <= 0
                if empty.any():
                    np.copyto(out, p, where=empty, casting="unsafe")
        return out
    if rule == "draft":
        return q.copy()
    if rule == "target":
        return p.copy()
    if rule == "uniform":
        one = Fraction(1) if p.dtype == object else 1.0
        return np.full(p.shape, one, dtype=p.dtype)
    pos = _positive_part(p - q)
    if rule == "residual":
        empty = np.asarray(pos.sum(axis=-1, keepdims=True) <= 0)
        if empty.any():
            pos = np.where(empty, p, pos)
    return pos


def _minimum(pa, qa):
    return np.minimum(pa, qa) if pa.dtype != object else np.vectorize(min, otypes=[object])(pa, qa)


def _positive_part(d):
    if d.dtype != object:
        return np.maximum(d, 0.0)
    return np.vectorize(lambda v: v if v > 0 else Fraction(0), otypes=[object])(d)


def acceptance_probabilities(p: Probs, q: Probs) -> np.ndarray:
    """a(x) = min(1, p(x)/q(x)): the chance the target keeps a proposed symbol x.

    Where q(x) = 0 the draft can never propose x, so a(x) is never used; we return **1**
    there (the limit of min(1, p/q) as q → 0⁺ for p > 0), which keeps
    q(x)·a(x) = min(p(x), q(x)) = 0 true for every symbol.
    """
    pa, qa, exact = check_pair(p, q)
    if exact:
        return np.vectorize(
            lambda pv, qv: Fraction(1) if qv == 0 else min(Fraction(1), pv / qv), otypes=[object]
        )(pa, qa)
    out = np.ones_like(pa)
    with np.errstate(over="ignore"):  # p/q overflows to inf for subnormal q; min(1, inf) = 1
        np.divide(pa, qa, out=out, where=qa > 0)
    return np.minimum(out, 1.0)


def accepted_mass(p: Probs, q: Probs) -> np.ndarray:
    """min(p(x), q(x)) per symbol: the probability that x is proposed *and* accepted."""
    pa, qa, _ = check_pair(p, q)
    return _minimum(pa, qa)


def acceptance_probability(p: Probs, q: Probs) -> Scalar | np.ndarray:
    """The acceptance probability α = Σₓ min(p(x), q(x)): the chance one proposal is accepted
    (1 − total variation). Not the share of proposals accepted over a run (that falls with γ)."""
    pa, qa, _ = check_pair(p, q)
    return _minimum(pa, qa).sum(axis=-1)


def rejection_probability(p: Probs, q: Probs) -> Scalar | np.ndarray:
    """1 − α = Σₓ max(p(x) − q(x), 0): the mass the correction has to supply."""
    pa, qa, _ = check_pair(p, q)
    return _positive_part(pa - qa).sum(axis=-1)


def residual_distribution(p: Probs, q: Probs) -> np.ndarray:
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


def output_distribution(p: Probs, q: Probs) -> np.ndarray:
    """The law of the emitted symbol: accepted mass + (1 − α) · residual. Equals p.

    When α = 1 (p = q) there is no rejection and the output is just the accepted mass.
    """
    return output_distribution_with(p, q, "residual")


def correction_distribution(p: Probs, q: Probs, rule: str = "residual") -> np.ndarray:
    """The distribution a rejected proposal is replaced from, under a named rule.

    "residual" is strict speculative sampling (the only correct rule). The others are the
    classic mistakes shown in notebook 02: "draft" (resample from q), "target" (resample from
    p), "uniform", and "unnormalized" (use max(p − q, 0) without dividing by its sum — not a
    distribution at all, its total is 1 − α).
    """
    check_rule(rule, "rule", sampleable=False)
    pa, qa, _ = check_pair(p, q)
    if rule == "residual":
        return residual_distribution(pa, qa)  # raises when p = q (never needed)
    w = correction_weights(pa, qa, rule)
    if rule == "unnormalized":
        return w
    return w / w.sum(axis=-1, keepdims=True)


def output_distribution_with(p: Probs, q: Probs, rule: str = "residual") -> np.ndarray:
    """Output law when rejections are corrected by ``rule``: min(p, q) + (1 − α) · correction.

    With "residual" this is p; every other rule gives something else (for "unnormalized" the
    result does not even sum to 1). Where p = q no rejection happens and every rule gives p.
    """
    check_rule(rule, "rule", sampleable=False)
    pa, qa, _ = check_pair(p, q)
    acc = _minimum(pa, qa)
    rejected = 1 - acc.sum(axis=-1, keepdims=True)
    w = correction_weights(pa, qa, rule)
    if rule != "unnormalized":
        w = w / w.sum(axis=-1, keepdims=True)
    return acc + rejected * w


def total_variation(p: Probs, q: Probs) -> Scalar | np.ndarray:
    """TV distance ½ Σ |p − q| along the last axis (= 1 − α for two distributions), one value
    per row. Either argument may be any non-negative, finite vector of the same shape (so an
    unnormalized 'output' can be compared); both are validated. Exact inputs (of any shape)
    give exact Fractions with the per-row shape."""
    exact = is_exact(p) and is_exact(q)
    pa = check_weights(p, "p")
    qa = check_weights(q, "q")
    if pa.shape != qa.shape:
        raise ValueError(f"p and q must have the same shape, got {pa.shape} and {qa.shape}")
    if exact:
        d = np.vectorize(lambda a, b: abs(a - b), otypes=[object])(pa, qa)
        out = np.empty(pa.shape[:-1], dtype=object)
        for idx in np.ndindex(pa.shape[:-1]):
            out[idx] = sum(d[idx], Fraction(0)) / 2
        return out[()] if out.ndim == 0 else out
    pf, qf = pa.astype(np.float64), qa.astype(np.float64)
    return 0.5 * np.abs(pf - qf).sum(axis=-1)

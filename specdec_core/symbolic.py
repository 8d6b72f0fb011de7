"""Sympy derivations for the notebooks to display (``sympy.latex`` of the returned objects).

Two facts carry the whole method:

1. per symbol, min(p, q) + max(p − q, 0) = p, and Σ max(p − q, 0) = 1 − α, hence the output
   law accepted + (1 − α)·residual equals p for any finite distributions;
2. E[K] = Σ_{j=0..γ} α^j = (1 − α^(γ+1))/(1 − α), with limit γ + 1 as α → 1, and the K
   distribution sums to 1.

Every ``derive_*`` function returns a small dict of sympy expressions (steps for display) and
the boolean results of sympy's checks, so tests can assert the derivation really closes.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from .distributions import check_int
from .symbolic_timing import MAX_EXPANDED_GAMMA


def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer number of symbols, got {n!r}")
    return n


def distribution_symbols(n: int) -> tuple[tuple[sp.Symbol, ...], tuple[sp.Symbol, ...]]:
    """Non-negative symbols p₁…pₙ and q₁…qₙ."""
    n = _check_n(n)
    p = sp.symbols(f"p1:{n + 1}", nonnegative=True)
    q = sp.symbols(f"q1:{n + 1}", nonnegative=True)
    return p, q


def _via_abs(expr):
    """Rewrite Min/Max as |·| forms: min(a,b) = (a+b−|a−b|)/2, max(a−b,0) = (a−b+|a−b|)/2."""
    return sp.expand(expr.rewrite(sp.Abs))


def derive_per_symbol_identity() -> dict[str, Any]:
    """min(p, q) + max(p − q, 0) = p for one symbol."""
    p, q = sp.symbols("p q", nonnegative=True)
    lhs = sp.Min(p, q) + sp.Max(p - q, 0)
    rewritten = _via_abs(lhs)
    return {"lhs": lhs, "rewritten": rewritten, "rhs": p, "holds": sp.simplify(rewritten - p) == 0}


def derive_output_equals_target(n: int) -> dict[str, Any]:
    """For n symbols with Σp = Σq = 1: Σ max(p−q,0) = 1 − α, and the output law is p.

    Returns the expressions and ``holds`` (a list of per-symbol checks, all True) plus
    ``rejected_mass_equals_1_minus_alpha``.
    """
    p, q = distribution_symbols(n)
    acc = [sp.Min(pi, qi) for pi, qi in zip(p, q)]
    pos = [sp.Max(pi - qi, 0) for pi, qi in zip(p, q)]
    alpha = sp.Add(*acc)
    pos_sum = sp.Add(*pos)
    # impose the normalizations by eliminating p_n and q_n
    norm = {p[-1]: 1 - sp.Add(*p[:-1]), q[-1]: 1 - sp.Add(*q[:-1])}
    gap = _via_abs(pos_sum - (1 - alpha)).subs(norm)
    rejected_ok = sp.simplify(gap) == 0
    residual = [x / pos_sum for x in pos]
    output = [a + (1 - alpha) * r for a, r in zip(acc, residual)]
    # with Σ max(p−q,0) = 1 − α (just shown) the factor (1−α)/Σmax cancels to 1:
    output_simplified = [a + x for a, x in zip(acc, pos)]
    per_symbol = [sp.simplify(_via_abs(o) - pi) == 0 for o, pi in zip(output_simplified, p)]
    return {
        "p": p,
        "q": q,
        "alpha": alpha,
        "rejected_mass": pos_sum,
        "residual": residual,
        "output": output,
        "output_simplified": output_simplified,
        "rejected_mass_equals_1_minus_alpha": rejected_ok,
        "holds": per_symbol,
    }


def derive_expected_count() -> dict[str, Any]:
    """E[K] = Σ_{j=0..γ} α^j in closed form, its α → 1 limit, and ΣP(K=k) = 1."""
    alpha = sp.Symbol("alpha", nonnegative=True)
    gamma = sp.Symbol("gamma", integer=True, nonnegative=True)
    j, k = sp.symbols("j k", integer=True, positive=True)
    series = sp.Sum(alpha**j, (j, 0, gamma))
    evaluated = series.doit()
    closed = (1 - alpha ** (gamma + 1)) / (1 - alpha)
    limit = sp.limit(closed, alpha, 1)
    pk = alpha ** (k - 1) * (1 - alpha)
    total = sp.Sum(pk, (k, 1, gamma)).doit() + alpha**gamma
    return {
        "alpha": alpha,
        "gamma": gamma,
        "series": series,
        "evaluated": evaluated,
        "closed_form": closed,
        "limit_alpha_to_1": limit,
        "pmf": pk,
        "pmf_total": sp.simplify(total),
        "closed_form_holds": sp.simplify(evaluated.args[1][0] - closed) == 0,
        "limit_holds": sp.simplify(limit - (gamma + 1)) == 0,
        "pmf_sums_to_1": sp.simplify(total - 1) == 0,
    }


def expected_count_polynomial(gamma: int) -> sp.Expr:
    """E[K] for a concrete γ as a polynomial in α (e.g. γ=2 → α² + α + 1). The sum is written
    out term by term, so γ is limited to ``MAX_EXPANDED_GAMMA`` (1000), as in
    :func:`specdec_core.symbolic_timing.improvement_factor_expr`."""
    g = check_int(gamma, "gamma", 0, MAX_EXPANDED_GAMMA, what="a non-negative integer")
    alpha = sp.Symbol("alpha", nonnegative=True)
    return sp.Add(*[alpha**j for j in range(g + 1)])

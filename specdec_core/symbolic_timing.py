"""Sympy derivations behind notebook 05: the cost-ratio model and the break-even time.

Model (Leviathan et al., 2023): one target step costs T, one draft step costs c·T, verifying
γ + 1 positions costs one target step, overhead is ignored. A round then takes (γc + 1)·T and
emits E[K] = (1 − α^(γ+1))/(1 − α) tokens, while the baseline emits 1 token per T.

Every ``derive_*`` returns a dict of sympy expressions (for ``sympy.latex``) and booleans that
say whether sympy's checks closed, so the tests can assert them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sympy as sp

from .distributions import check_gamma, check_int, to_fraction

if TYPE_CHECKING:
    from collections.abc import Iterable
    from fractions import Fraction

    from .types import Scalar

#: improvement_factor_expr writes the geometric sum out term by term: at most this many terms.
MAX_EXPANDED_GAMMA = 1000


def _symbols():
    alpha = sp.Symbol("alpha", nonnegative=True)
    gamma = sp.Symbol("gamma", integer=True, nonnegative=True)
    c = sp.Symbol("c", nonnegative=True)
    T = sp.Symbol("T", positive=True)
    return alpha, gamma, c, T


def derive_improvement_factor() -> dict[str, Any]:
    """Speculative rate / baseline rate in the cost-ratio model, simplified to
    (1 − α^(γ+1)) / ((1 − α)(γc + 1)), and its α → 1 limit (γ + 1)/(γc + 1)."""
    alpha, gamma, c, T = _symbols()
    expected = (1 - alpha ** (gamma + 1)) / (1 - alpha)
    round_time = gamma * c * T + T
    rate = expected / round_time
    baseline = 1 / T
    ratio = sp.simplify(rate / baseline)
    closed = (1 - alpha ** (gamma + 1)) / ((1 - alpha) * (gamma * c + 1))
    limit = sp.factor(sp.limit(closed, alpha, 1))
    return {
        "alpha": alpha,
        "gamma": gamma,
        "c": c,
        "T": T,
        "expected_tokens": expected,
        "round_time": round_time,
        "rate": rate,
        "baseline_rate": baseline,
        "ratio": ratio,
        "closed_form": closed,
        "limit_alpha_to_1": limit,
        "closed_form_holds": sp.simplify(ratio - closed) == 0,
        "limit_holds": sp.simplify(limit - (gamma + 1) / (gamma * c + 1)) == 0,
    }


def derive_break_even() -> dict[str, Any]:
    """Solve E[K] / (T_d + T_v + T_o) = 1 / T_b for T_v: T_v = E[K]·T_b − T_d − T_o."""
    K, Td, Tv, To, Tb = sp.symbols("E_K T_d T_v T_o T_b", positive=True)
    equation = sp.Eq(K / (Td + Tv + To), 1 / Tb)
    (solution,) = sp.solve(equation, Tv)
    expected = K * Tb - Td - To
    return {
        "equation": equation,
        "solution": solution,
        "T_v": Tv,
        "holds": sp.simplify(solution - expected) == 0,
    }


def improvement_factor_expr(gamma: int) -> sp.Expr:
    """The cost-ratio factor for a concrete γ as a rational function of α and c (no limit
    needed: the geometric sum is a polynomial), e.g. γ = 2 → (α² + α + 1)/(2c + 1)."""
    g = check_int(gamma, "gamma", 0, MAX_EXPANDED_GAMMA, what="a non-negative integer")
    alpha, _, c, _ = _symbols()
    return sp.Add(*[alpha**j for j in range(g + 1)]) / (g * c + 1)


def check_against_direct(
    samples: Iterable[tuple[Scalar, int, Scalar]],
) -> list[tuple[Fraction, int, Fraction, Fraction, Fraction, bool]]:
    """Compare the sympy closed form with :func:`specdec_core.timing.improvement_factor`.

    ``samples``: iterable of (alpha, gamma, c) with exact alpha and c (Fraction / int).
    Returns a list of (alpha, gamma, c, sympy value, library value, equal?) rows; values are
    Fractions, compared exactly. α = 1 uses the limit.
    """
    from .timing import improvement_factor

    d = derive_improvement_factor()
    rows = []
    for a, g, cv in samples:
        a, cv = to_fraction(a, "alpha"), to_fraction(cv, "c")
        if not 0 <= a <= 1:
            raise ValueError(f"alpha must be in [0, 1], got {a}")
        if cv < 0:
            raise ValueError(f"c must be non-negative, got {cv}")
        g = check_gamma(g)
        lib = improvement_factor(a, g, cv)  # first: refuses a γ too large for exact powers
        if a == 1:
            val = d["limit_alpha_to_1"].subs(
                {d["gamma"]: g, d["c"]: sp.Rational(cv.numerator, cv.denominator)}
            )
        else:
            val = d["closed_form"].subs(
                {
                    d["alpha"]: sp.Rational(a.numerator, a.denominator),
                    d["gamma"]: g,
                    d["c"]: sp.Rational(cv.numerator, cv.denominator),
                }
            )
        val = sp.cancel(val)  # rational inputs: sympy evaluates to a Rational
        sym = to_fraction(val, "value")
        rows.append((a, g, cv, sym, lib, sym == lib))
    return rows

"""From tokens per round to tokens per second, under *assumed* (declared) time budgets.

Nothing here measures anything: every time is an input in milliseconds. A rate computed from
assumed times is an assumption too, and the notebooks label it so.

**γ = 0 is plain decoding (one definition everywhere).** With no proposals there is nothing to
draft or verify, so none of the speculative budget (draft steps, verification base cost,
per-position cost, overhead) applies: a γ = 0 "round" is one ordinary target step, and every
ratio here — :func:`improvement_factor`, :func:`speedup_ratio` via :func:`scenario_rates`,
:func:`speedup_map`, :func:`optimal_gamma` — is exactly 1 at γ = 0. Speculation's overhead is
charged only when it speculates (γ ≥ 1).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .distributions import (
    check_finite_result,
    check_gamma,
    check_int,
    check_int_sequence,
    check_nonnegative,
    check_positive,
    check_probability,
    check_reals,
    check_time,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from .types import Scalar


def _check_tokens(x, name="expected_tokens"):
    return check_nonnegative(x, name, "a number of tokens")


def round_time_ms(*, draft_ms: Scalar, verify_ms: Scalar, overhead_ms: Scalar = 0) -> Scalar:
    """T_draft + T_verify + T_overhead, validated; a round that takes no time is an error."""
    d = check_time(draft_ms, "draft_ms")
    v = check_time(verify_ms, "verify_ms")
    o = check_time(overhead_ms, "overhead_ms")
    total = check_finite_result(d + v + o, "draft_ms + verify_ms + overhead_ms", "these times")
    if total == 0:
        raise ValueError("draft_ms + verify_ms + overhead_ms is 0: a round that takes no time")
    return total


def tokens_per_second(
    expected_tokens: Scalar, *, draft_ms: Scalar, verify_ms: Scalar, overhead_ms: Scalar = 0
) -> Scalar:
    """R = E[K] / (T_draft + T_verify + T_overhead), times in ms, result in tokens/s.

    Exact inputs (int / Fraction / sympy Rational) give an exact Fraction.
    """
    k = _check_tokens(expected_tokens)
    total = round_time_ms(draft_ms=draft_ms, verify_ms=verify_ms, overhead_ms=overhead_ms)
    if isinstance(k, Fraction) and isinstance(total, Fraction):
        return k * 1000 / total
    return check_finite_result(
        float(k) * 1000.0 / float(total), "the rate", "expected_tokens and these times"
    )


def baseline_tokens_per_second(ms_per_token: Scalar) -> Scalar:
    """Plain autoregressive decoding: one target step per token."""
    t = check_time(ms_per_token, "ms_per_token")
    if t == 0:
        raise ValueError("ms_per_token is 0: a token that takes no time")
    if isinstance(t, Fraction):
        return Fraction(1000) / t
    return check_finite_result(1000.0 / t, "the rate", "ms_per_token")


# ---------------------------------------------------------------- notebook 05 additions
#
# Everything below is still *scenario arithmetic*: the inputs are declared budgets, and a
# result is only as good as the budget it came from. Exact inputs give exact Fractions.


def _both_exact(*xs) -> bool:
    return all(isinstance(x, Fraction) for x in xs)


def _check_nonneg(x, name: str, what: str = "a non-negative number"):
    """A non-negative finite scalar (exact stays exact), for cost ratios and per-unit costs."""
    return check_nonnegative(x, name, what)


def _check_baseline(baseline_ms):
    b = check_time(baseline_ms, "baseline_ms")
    if b == 0:
        raise ValueError("baseline_ms is 0: a baseline token that takes no time")
    return b


def speedup_ratio(
    expected_tokens: Scalar,
    *,
    draft_ms: Scalar,
    verify_ms: Scalar,
    overhead_ms: Scalar = 0,
    baseline_ms: Scalar,
) -> Scalar:
    """Speculative rate / baseline rate = E[K] · T_baseline / (T_draft + T_verify + T_overhead).

    Above 1 speculation pays under the assumed budget, below 1 it loses.
    """
    k = _check_tokens(expected_tokens)
    total = round_time_ms(draft_ms=draft_ms, verify_ms=verify_ms, overhead_ms=overhead_ms)
    b = _check_baseline(baseline_ms)
    if _both_exact(k, total, b):
        return k * b / total
    return check_finite_result(
        float(k) * float(b) / float(total),
        "the speedup ratio",
        "expected_tokens, baseline_ms and these times",
    )


def break_even_verify_ms(
    expected_tokens: Scalar, *, draft_ms: Scalar, overhead_ms: Scalar = 0, baseline_ms: Scalar
) -> Scalar:
    """The verification time at which speculation exactly matches the baseline rate.

    Solving E[K] / (T_d + T_v + T_o) = 1 / T_b for T_v gives T_v = E[K]·T_b − T_d − T_o.
    Verification faster than this pays; slower loses. A **negative** result means no
    verification time, however short, can make this scenario pay (the draft and overhead alone
    already cost more than E[K] baseline tokens).
    """
    k = _check_tokens(expected_tokens)
    d = check_time(draft_ms, "draft_ms")
    o = check_time(overhead_ms, "overhead_ms")
    b = _check_baseline(baseline_ms)
    if _both_exact(k, d, o, b):
        return k * b - d - o
    return float(k) * float(b) - float(d) - float(o)


def draft_cost_ms(gamma: int, *, per_token_ms: Scalar) -> Scalar:
    """T_draft = γ · (cost of one draft step): the draft runs once per proposal."""
    g = check_gamma(gamma)
    c = check_time(per_token_ms, "per_token_ms")
    return g * c


def verify_cost_ms(gamma: int, *, base_ms: Scalar, per_position_ms: Scalar = 0) -> Scalar:
    """T_verify = base + per_position · (γ + 1): one target call over γ + 1 positions.

    ``per_position_ms = 0`` is the optimistic "verifying γ+1 positions costs one step" model;
    a positive value lets verification grow with γ, as it does on small hardware.
    """
    g = check_gamma(gamma)
    b = check_time(base_ms, "base_ms")
    pp = check_time(per_position_ms, "per_position_ms")
    return b + pp * (g + 1)


def improvement_factor(alpha: Scalar | ArrayLike, gamma: int, c: Scalar) -> Scalar | np.ndarray:
    """Leviathan et al.'s expected walltime improvement (1 − α^(γ+1)) / ((1 − α)(γc + 1)).

    ``c`` is the cost of one draft step relative to one target step; verification is taken to
    cost one target step whatever γ is, and overhead is ignored. At α = 1 the value is the
    limit (γ + 1)/(γc + 1). ``alpha`` may be a float array (the result has its shape).
    """
    from .counts import expected_output_count

    ek = expected_output_count(alpha, gamma)
    g = check_gamma(gamma)
    cc = _check_nonneg(c, "c", "a non-negative cost ratio (draft step / target step)")
    if isinstance(ek, Fraction) and isinstance(cc, Fraction):
        return ek / (g * cc + 1)
    return ek / (g * float(cc) + 1.0)


def _gain_sign(a, cc, g):
    """Sign-deciding quantity h(g) = α^(g+1)·((1 − α)(gc + 1) + c) − c: the factor grows from g
    to g + 1 exactly when h(g) > 0. h(g)/α^(g+1) is non-increasing in g (its slope
    (1 − α)c − c·α^−(g+1)·ln(1/α) ≤ 0 since ln(1/α) ≥ 1 − α), so the factor rises, then
    falls: it is unimodal in γ."""
    return a ** (g + 1) * ((1 - a) * (g * cc + 1) + cc) - cc


def optimal_gamma(alpha: Scalar, c: Scalar, max_gamma: int = 20) -> int:
    """The γ in 0…max_gamma with the largest :func:`improvement_factor`; ties go to the smallest.

    γ = 0 (plain decoding, factor 1) is a candidate, so the answer is 0 when speculating does
    not pay at all. The factor is unimodal in γ (see :func:`_gain_sign`), so the answer is the
    first γ whose successor is no better — found by bisection in O(log max_gamma) steps, so
    max_gamma = 10⁹ answers at once. Exact α and c are compared exactly (α strictly between
    0 and 1 then limits the search to γ ≤ counts.MAX_EXACT_GAMMA: pass floats beyond it).
    """
    from .counts import MAX_EXACT_GAMMA
    from .distributions import check_probability

    a = check_probability(alpha, "alpha")
    if isinstance(a, np.ndarray):
        raise ValueError("alpha must be a single probability here, not an array")
    cc = _check_nonneg(c, "c", "a non-negative cost ratio (draft step / target step)")
    m = check_gamma(max_gamma, "max_gamma")
    exact = isinstance(a, Fraction) and isinstance(cc, Fraction)
    if not exact:
        a, cc = float(a), float(cc)
    if a == 1:  # factor (γ + 1)/(γc + 1): grows with γ when c < 1, else never beats γ = 0
        return m if cc < 1 else 0
    if a == 0:  # nothing is ever accepted: factor 1/(γc + 1) ≤ 1
        return 0
    if cc == 0:  # free drafting: every extra proposal adds α^γ > 0
        return m
    # the factor is below 1/((1 − α)(γc + 1)), hence below γ = 0's factor 1, once
    # γ > α/((1 − α)c): the best γ is at most that
    hi = min(m, int(a / ((1 - a) * cc)) + 1)
    if exact and hi > MAX_EXACT_GAMMA:
        raise ValueError(
            f"max_gamma = {m} with exact alpha = {a} and c = {cc} needs exact powers "
            f"beyond gamma = {MAX_EXACT_GAMMA}; pass float alpha and c"
        )
    lo = 0  # bisection: the first g with h(g) <= 0 (or hi, the cap)
    while lo < hi:
        mid = (lo + hi) // 2
        if _gain_sign(a, cc, mid) > 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


def work_account(alpha: Scalar, gamma: int) -> dict[str, Scalar]:
    """Expected work per round and per output token under iid acceptance α.

    Per round the draft makes γ proposals and the target scores γ + 1 positions; E[K] tokens
    come out. Returns a dict (exact for exact α):

    * ``expected_tokens`` E[K], ``expected_accepted`` E[K] − 1
    * ``proposals_per_token`` γ / E[K], ``target_positions_per_token`` (γ + 1) / E[K]
    * ``proposals_thrown_away`` fraction of proposals that never reach the output (rejected or
      discarded): 1 − (E[K] − 1)/γ (0 when γ = 0)
    * ``target_positions_thrown_away`` fraction of scored positions whose result is not output:
      1 − E[K]/(γ + 1)
    """
    from .counts import expected_output_count

    g = check_gamma(gamma)
    ek = expected_output_count(alpha, g)
    if isinstance(ek, np.ndarray):
        raise ValueError("alpha must be a single probability here, not an array")
    one = Fraction(1) if isinstance(ek, Fraction) else 1.0
    return {
        "gamma": g,
        "expected_tokens": ek,
        "expected_accepted": ek - 1,
        "proposals_per_round": g,
        "target_positions_per_round": g + 1,
        "proposals_per_token": g * one / ek,
        "target_positions_per_token": (g + 1) * one / ek,
        "proposals_thrown_away": (one - (ek - 1) / g) if g else 0 * one,
        "target_positions_thrown_away": one - ek / (g + 1),
    }


def scenario_rates(
    alpha: Scalar,
    gamma: int,
    *,
    draft_per_token_ms: Scalar,
    verify_base_ms: Scalar,
    verify_per_position_ms: Scalar = 0,
    overhead_ms: Scalar = 0,
    baseline_ms: Scalar,
) -> dict[str, Scalar | bool]:
    """Everything the notebook-05 widget shows, for one (α, γ) and one assumed budget.

    T_draft = γ·draft_per_token_ms, T_verify = verify_base_ms + verify_per_position_ms·(γ+1).
    Returns a dict: expected_tokens, draft_ms, verify_ms, overhead_ms, round_ms, rate,
    baseline_rate, ratio, break_even_verify_ms, pays (ratio > 1), plain (γ = 0).
    γ = 0 is plain decoding (see the module docstring): round_ms = baseline_ms, ratio exactly 1.
    """
    from .counts import expected_output_count

    g = check_gamma(gamma)
    ek = expected_output_count(alpha, g)
    if isinstance(ek, np.ndarray):
        raise ValueError("alpha must be a single probability here, not an array")
    d = draft_cost_ms(g, per_token_ms=draft_per_token_ms)
    v = verify_cost_ms(g, base_ms=verify_base_ms, per_position_ms=verify_per_position_ms)
    o = check_time(overhead_ms, "overhead_ms")
    b = _check_baseline(baseline_ms)
    if g == 0:  # plain decoding: one ordinary target step, no speculative budget
        d, v, o = 0 * d, b, 0 * o
    rate = tokens_per_second(ek, draft_ms=d, verify_ms=v, overhead_ms=o)
    base = baseline_tokens_per_second(b)
    ratio = speedup_ratio(ek, draft_ms=d, verify_ms=v, overhead_ms=o, baseline_ms=b)
    return {
        "expected_tokens": ek,
        "draft_ms": d,
        "verify_ms": v,
        "overhead_ms": o,
        "round_ms": d + v + o,
        "rate": rate,
        "baseline_rate": base,
        "ratio": ratio,
        "break_even_verify_ms": break_even_verify_ms(ek, draft_ms=d, overhead_ms=o, baseline_ms=b),
        "pays": ratio > 1,
        "plain": g == 0,
    }


def speedup_map(
    alphas: ArrayLike,
    gammas: Sequence[int],
    *,
    draft_per_token_ms: float,
    verify_base_ms: float,
    verify_per_position_ms: float = 0,
    overhead_ms: float = 0,
    baseline_ms: float,
) -> np.ndarray:
    """Speedup ratio on a grid: array of shape (len(gammas), len(alphas)), float64.

    Same budget model as :func:`scenario_rates` (γ = 0 rows are plain decoding: exactly 1).
    Cells whose round takes no time are NaN-free: that budget is refused with ``ValueError``.
    """
    from .counts import expected_output_count

    if isinstance(alphas, (str, bytes)) or np.ndim(alphas) > 1:
        raise ValueError(f"alphas must be a non-empty 1-D sequence of probabilities, got {alphas!r}")
    a = np.atleast_1d(np.asarray(check_probability(alphas, "alphas"), dtype=np.float64))
    gs = list(check_int_sequence(gammas, "gammas", 0))
    dpt = float(check_time(draft_per_token_ms, "draft_per_token_ms"))
    vb = float(check_time(verify_base_ms, "verify_base_ms"))
    vpp = float(check_time(verify_per_position_ms, "verify_per_position_ms"))
    o = float(check_time(overhead_ms, "overhead_ms"))
    b = float(_check_baseline(baseline_ms))
    out = np.empty((len(gs), a.size))
    for i, g in enumerate(gs):
        if g == 0:  # plain decoding: exactly 1 (see the module docstring)
            out[i] = 1.0
            continue
        total = dpt * g + vb + vpp * (g + 1) + o
        if total <= 0:
            raise ValueError(f"at gamma={g} the round takes no time (all costs are 0)")
        out[i] = expected_output_count(a, g) * b / total
    return out


def alpha_needed(
    c: float, factor: float = 1.0, verify: Sequence[float] | None = None, max_gamma: int = 12
) -> float | None:
    """The smallest α at which some γ in 1…max_gamma reaches a speed-up of ``factor``: rounds of
    γ draft steps of cost ``c`` (target steps) and one verification call, E[K] / (γc + v(γ+1)).
    ``verify``: the verification call's cost in target steps for T = 1, 2, … positions (index
    T − 1; None: one step whatever T, the model of :func:`improvement_factor`). None when even
    α = 1 does not reach it. Float64; bisection to 1e-9 (E[K] grows with α). The curves of the
    draft ladder (notebook 09): α needed to break even (``factor`` 1) or to gain ×1.5."""
    from .counts import expected_output_count

    cc = float(_check_nonneg(c, "c", "a non-negative cost ratio (draft step / target step)"))
    f = float(check_positive(factor, "factor"))
    m = check_int(max_gamma, "max_gamma", 1, 64)
    v = [1.0] * (m + 1) if verify is None else [float(x) for x in check_reals(verify, "verify")]
    if len(v) < m + 1 or min(v) <= 0 or not np.isfinite(v).all():
        raise ValueError(f"verify must hold {m + 1} positive finite costs (T = 1 … {m + 1}), got {len(v)}")
    best = None
    for g in range(1, m + 1):
        cost = g * cc + v[g]
        if float(expected_output_count(1.0, g)) < f * cost:
            continue  # even α = 1 is not enough at this γ
        lo, hi = 0.0, 1.0
        while hi - lo > 1e-9:
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if float(expected_output_count(mid, g)) >= f * cost else (mid, hi)
        best = hi if best is None else min(best, hi)
    return best

"""From tokens per round to tokens per second, under *assumed* (declared) time budgets.

Nothing here measures anything: every time is an input in milliseconds. A rate computed from
assumed times is an assumption too, and the notebooks label it so.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .distributions import check_time, _is_exact_scalar


def _check_tokens(x, name="expected_tokens"):
    if _is_exact_scalar(x):
        return check_time(x, name)  # same rules: exact, non-negative
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.floating, np.integer)):
        raise ValueError(f"{name} must be a number of tokens, got {x!r}")
    x = float(x)
    if np.isnan(x) or np.isinf(x):
        raise ValueError(f"{name} must be finite, got {x}")
    if x < 0:
        raise ValueError(f"{name} must be non-negative, got {x}")
    return x


def round_time_ms(*, draft_ms, verify_ms, overhead_ms=0):
    """T_draft + T_verify + T_overhead, validated; a round that takes no time is an error."""
    d = check_time(draft_ms, "draft_ms")
    v = check_time(verify_ms, "verify_ms")
    o = check_time(overhead_ms, "overhead_ms")
    total = d + v + o
    if total == 0:
        raise ValueError("draft_ms + verify_ms + overhead_ms is 0: a round that takes no time")
    return total


def tokens_per_second(expected_tokens, *, draft_ms, verify_ms, overhead_ms=0):
    """R = E[K] / (T_draft + T_verify + T_overhead), times in ms, result in tokens/s.

    Exact inputs (int / Fraction / sympy Rational) give an exact Fraction.
    """
    k = _check_tokens(expected_tokens)
    total = round_time_ms(draft_ms=draft_ms, verify_ms=verify_ms, overhead_ms=overhead_ms)
    if isinstance(k, Fraction) and isinstance(total, Fraction):
        return k * 1000 / total
    return float(k) * 1000.0 / float(total)


def baseline_tokens_per_second(ms_per_token):
    """Plain autoregressive decoding: one target step per token."""
    t = check_time(ms_per_token, "ms_per_token")
    if t == 0:
        raise ValueError("ms_per_token is 0: a token that takes no time")
    return Fraction(1000) / t if isinstance(t, Fraction) else 1000.0 / t

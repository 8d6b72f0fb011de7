"""Printing numbers for learners: exact values as fractions, floats with a fixed rounding.

Fixed formats keep notebook outputs stable, so nbval compares the *values*.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np


def fmt(x, digits: int = 4) -> str:
    """A scalar or vector as text: Fractions as ``3/5``, floats rounded to ``digits`` places."""
    if isinstance(x, (list, tuple, np.ndarray)):
        return "[" + ", ".join(fmt(v, digits) for v in (x.flat if isinstance(x, np.ndarray) else x)) + "]"
    if isinstance(x, Fraction):
        return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
    if getattr(x, "is_Rational", False) is True:
        return str(x)
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return str(int(x))
    v = float(x)
    if np.isnan(v):
        return "—"
    return f"{v:.{digits}f}"


def fmt_decimal(x, digits: int = 2) -> str:
    """An exact or float value shown as a rounded decimal, e.g. 1960/9 → ``217.78``."""
    if isinstance(x, (list, tuple, np.ndarray)):
        return "[" + ", ".join(fmt_decimal(v, digits) for v in x) + "]"
    return f"{float(x):.{digits}f}"


def labelled(kind: str, text: str) -> str:
    """Prefix a result with how it was obtained: derived, assumed or measured."""
    if kind not in ("derived", "assumed", "measured"):
        raise ValueError(f"kind must be 'derived', 'assumed' or 'measured', got {kind!r}")
    return f"[{kind}] {text}"

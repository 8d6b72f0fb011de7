"""Printing numbers for learners: exact values as fractions, floats with a fixed rounding.

Fixed formats keep notebook outputs stable, so nbval compares the *values*.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .types import Scalar

#: The most decimal places :func:`fmt` and :func:`fmt_decimal` print.
MAX_DIGITS = 50


def check_digits(digits: int) -> int:
    """The number of decimal places: an integer in 0..MAX_DIGITS (not a bool, a float or a
    string, which Python's format spec would refuse with an error that names no argument)."""
    from .distributions import check_int

    return check_int(digits, "digits", 0, MAX_DIGITS, f"an integer in 0..{MAX_DIGITS}")


def fmt(x: Scalar | Sequence[Scalar] | np.ndarray, digits: int = 4) -> str:
    """A scalar or vector as text: Fractions as ``3/5``, floats rounded to ``digits`` places
    (an integer in 0..MAX_DIGITS)."""
    digits = check_digits(digits)
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


def fmt_decimal(x: Scalar | Sequence[Scalar] | np.ndarray, digits: int = 2) -> str:
    """An exact or float value shown as a rounded decimal, e.g. 1960/9 → ``217.78`` (``digits``:
    an integer in 0..MAX_DIGITS)."""
    digits = check_digits(digits)
    if isinstance(x, (list, tuple, np.ndarray)):
        return "[" + ", ".join(fmt_decimal(v, digits) for v in x) + "]"
    return f"{float(x):.{digits}f}"


#: How a shown value was obtained — the one set of kinds of the collection, and how each is
#: written (in a printed label ``[…]`` and in a figure's corner tag). Every label comes from here.
#:
#: * ``derived`` — exact mathematics from stated inputs;
#: * ``assumed`` — an input we chose: a declared budget, a cost ratio, a hardware spec;
#: * ``simulated`` — counted from seeded random draws; the same seed gives the same number on
#:   every machine (it estimates a derived value, it is not a timing);
#: * ``measured`` — timed on this machine: shown by code from stored results, with the machine,
#:   threads, load and date;
#: * ``reported`` — a number taken from a paper or model card (cited next to it);
#: * ``derived-from-assumed`` / ``derived-from-measured`` / ``derived-from-simulated`` — exact
#:   arithmetic on assumed, measured or simulated inputs: only as true as those inputs (a formula
#:   evaluated at a seeded run's average α is derived from simulated inputs).
KINDS = {
    "derived": "derived",
    "assumed": "assumed",
    "simulated": "simulated",
    "measured": "measured",
    "reported": "reported",
    "derived-from-assumed": "derived from assumed inputs",
    "derived-from-measured": "derived from measured inputs",
    "derived-from-simulated": "derived from simulated inputs",
}


def kind_text(kind: str) -> str:
    """The words shown for ``kind`` (one of :data:`KINDS`), e.g. in a figure's corner tag."""
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be one of {tuple(KINDS)}, got {kind!r}")
    return KINDS[kind]


def labelled(kind: str, text: str) -> str:
    """Prefix a result with how it was obtained, e.g. ``[simulated] share 0.6012``.

    ``kind`` is a key of :data:`KINDS`: ``"derived"``, ``"assumed"``, ``"simulated"`` (seeded
    draws), ``"measured"`` (timed on this machine), ``"reported"`` (from a paper),
    ``"derived-from-assumed"`` or ``"derived-from-measured"``; the label printed is its
    :data:`KINDS` value, e.g. ``labelled("derived-from-measured", t)`` →
    ``"[derived from measured inputs] " + t``.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    return f"[{kind_text(kind)}] {text}"


#: The widest printed line that JupyterLab shows unbroken at 1280 px with the file browser open.
#: Lab's output CSS (``.jp-OutputArea-output pre``: ``word-break: break-all``) breaks a longer line
#: anywhere, mid-word ("rejecte / d"); :func:`wrapped` breaks it at spaces instead.
PRINT_WIDTH = 88


def wrapped(text: str, width: int = PRINT_WIDTH, indent: str = "    ") -> str:
    """``text`` with every line longer than ``width`` characters broken at spaces (continuation
    lines start with ``indent``), so a printed result never wraps inside a word. Runs of spaces
    that align columns are kept; a single word longer than ``width`` is left whole."""
    import textwrap

    from .distributions import check_int

    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    width = check_int(width, "width", 20, None, "an integer of at least 20")
    if not isinstance(indent, str) or len(indent) >= width // 2:
        raise ValueError(f"indent must be a str shorter than width // 2, got {indent!r}")
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        out += textwrap.wrap(
            line,
            width,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
            replace_whitespace=False,
            drop_whitespace=True,
        )
    return "\n".join(out)


#: Below this a p-value is not shown as a number: double precision cannot resolve it.
P_VALUE_FLOOR = 1e-300


def fmt_p_value(p_value: float, digits: int = 3) -> str:
    """A p-value as text: ``digits`` significant digits, and ``< 1e-300`` for anything smaller
    (including an underflow to 0), so a vanishing p-value never prints as a bare 0."""
    if isinstance(p_value, (bool, str, bytes)):
        raise ValueError(f"p_value must be a number in [0, 1], got {p_value!r}")
    try:
        v = float(p_value)
    except (TypeError, ValueError):
        raise ValueError(f"p_value must be a number in [0, 1], got {p_value!r}") from None
    if not 0.0 <= v <= 1.0:  # also refuses NaN
        raise ValueError(f"p_value must be a number in [0, 1], got {p_value!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be a positive integer, got {digits!r}")
    if v < P_VALUE_FLOOR:
        return f"< {P_VALUE_FLOOR:g}"
    return f"{v:.{digits}g}"


def p_value_phrase(p_value: float, digits: int = 3) -> str:
    """``p-value = 0.649``, or ``p-value < 1e-300`` when it is below the floor (always hyphenated,
    so it cannot be read as the target distribution p)."""
    text = fmt_p_value(p_value, digits)
    return f"p-value {text}" if text.startswith("<") else f"p-value = {text}"

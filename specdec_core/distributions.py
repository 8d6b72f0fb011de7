"""Checking and normalizing probability vectors: the one validator every function calls.

A distribution is a vector over a vocabulary of V symbols, or an array of such vectors with
shape (..., V) (the last axis is the vocabulary). Two kinds of input are accepted:

* **exact**: every entry is an ``int``, a :class:`fractions.Fraction` or a sympy ``Rational``
  (or a numpy integer array). The result is a numpy ``object`` array of ``Fraction``; sums must
  equal 1 exactly, and everything computed from it stays exact.
* **float**: anything else numeric. The result is a ``float64`` array; sums must be within
  :data:`SUM_TOL` of 1.

Anything wrong raises ``ValueError`` naming the argument and the fault.
"""

from __future__ import annotations

import numbers
from fractions import Fraction

import numpy as np

#: How far a float distribution's sum may be from 1 (float32 softmaxes land within ~1e-7).
SUM_TOL = 1e-6


def _is_exact_scalar(x) -> bool:
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (int, np.integer, Fraction)):
        return True
    # sympy Rational / Integer without importing sympy at module import time
    return getattr(x, "is_Rational", False) is True


def to_fraction(x, name: str = "value") -> Fraction:
    """One exact scalar as a Fraction (sympy Rational, int, Fraction)."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return Fraction(int(x))
    if getattr(x, "is_Rational", False) is True:
        return Fraction(int(x.p), int(x.q))
    raise ValueError(f"{name}: {x!r} is not an exact number")


def is_exact(x) -> bool:
    """True when ``x`` (scalar, sequence or array) holds only exact numbers."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "iu":
            return True
        if x.dtype == object:
            return x.size > 0 and all(_is_exact_scalar(v) for v in x.flat)
        return False
    if isinstance(x, (list, tuple)):
        flat = list(_flatten(x))
        return len(flat) > 0 and all(_is_exact_scalar(v) for v in flat)
    return _is_exact_scalar(x)


def _flatten(x):
    for v in x:
        if isinstance(v, (list, tuple, np.ndarray)):
            yield from _flatten(v)
        else:
            yield v


def _refuse_non_numbers(items, name: str) -> None:
    """Bools, strings (even numeric ones like "0.5"), None and other non-numbers are refused,
    at any depth of nested lists, tuples and arrays."""
    for v in items:
        if isinstance(v, (list, tuple)):
            _refuse_non_numbers(v, name)
            continue
        if isinstance(v, np.ndarray):
            if v.dtype.kind in "fiu":
                continue
            if v.dtype.kind == "b":
                raise ValueError(f"{name} must hold numbers, not booleans")
            if v.dtype.kind in "USV":
                raise ValueError(f"{name} must hold numbers only, not strings")
            _refuse_non_numbers(v.flat, name)
            continue
        if isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{name} must hold numbers, not booleans (found {v!r})")
        if isinstance(v, (str, bytes, np.str_, np.bytes_)):
            raise ValueError(f"{name} must hold numbers only, not strings (found {v!r})")
        if v is None:
            raise ValueError(f"{name} must hold numbers only, not None")
        if isinstance(v, (complex, np.complexfloating)):
            raise ValueError(f"{name} must hold real numbers, not complex ones (found {v!r})")
        if not isinstance(v, (numbers.Number, np.number)) and not hasattr(v, "__float__"):
            raise ValueError(f"{name} must hold numbers only, found {type(v).__name__}")


def _as_array(x, name: str) -> tuple[np.ndarray, bool]:
    """Array of Fractions (exact) or float64, unvalidated apart from type."""
    if isinstance(x, (str, bytes)) or x is None:
        raise ValueError(f"{name} must be a sequence of numbers, got {type(x).__name__}")
    if isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, np.ndarray):
        raise ValueError(f"{name} must be a vector of probabilities, got the scalar {x!r}")
    if isinstance(x, (dict, set, frozenset)):
        raise ValueError(f"{name} must be a sequence of numbers, got a {type(x).__name__}")
    if getattr(x, "is_Matrix", False):
        x = list(x)
    if isinstance(x, (list, tuple)):
        _refuse_non_numbers(x, name)
    elif isinstance(x, np.ndarray) and x.dtype == object:
        _refuse_non_numbers(x.flat, name)
    if is_exact(x):
        arr = np.asarray(x, dtype=object)
        if arr.dtype != object or arr.ndim == 0:
            arr = np.asarray(x, dtype=object)
        frac = np.empty(arr.shape, dtype=object)
        for idx, v in np.ndenumerate(arr):
            frac[idx] = to_fraction(v, name)
        return frac, True
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:  # ragged
        raise ValueError(f"{name} must be a rectangular array of numbers ({exc})") from None
    if arr.dtype.kind == "b":
        raise ValueError(f"{name} must hold numbers, not booleans")
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} must hold real numbers, not complex ones")
    if arr.dtype.kind in "USV":
        raise ValueError(f"{name} must hold numbers only, got dtype {arr.dtype}")
    if arr.dtype.kind not in "fiu":
        try:
            arr = arr.astype(np.float64)
        except (ValueError, TypeError):
            raise ValueError(f"{name} must hold numbers only, got dtype {arr.dtype}") from None
    return arr.astype(np.float64, copy=False), False


def check_distribution(x, name: str = "p", *, exact: bool | None = None) -> np.ndarray:
    """Validate one distribution (or a stack along the last axis) and return it as an array.

    ``exact=True`` forces the exact path (error if impossible), ``False`` forces float64,
    ``None`` (default) decides from the input.
    """
    if type(x) is np.ndarray and x.dtype == np.float64 and exact is not True and x.ndim and x.size:
        # fast path for the common case (a float64 array that is fine): two reductions; NaN
        # fails ``>=``, ±inf fails the sum test, and anything that fails gets the full checks
        # below for a precise message
        if x.ndim == 1:
            if x.min() >= 0 and abs(float(x.sum()) - 1.0) <= SUM_TOL:
                return x
        elif x.min() >= 0 and float(np.abs(x.sum(axis=-1) - 1.0).max()) <= SUM_TOL:
            return x
    arr, is_ex = _as_array(x, name)
    if exact is True and not is_ex:
        raise ValueError(f"{name} must hold exact numbers (int, Fraction or sympy Rational)")
    if exact is False and is_ex:
        arr = arr.astype(np.float64)
        is_ex = False
    if arr.ndim == 0:
        raise ValueError(f"{name} must be a vector of probabilities, got a scalar")
    if arr.shape[-1] == 0 or arr.size == 0:
        raise ValueError(f"{name} is empty: a distribution needs at least one symbol")
    if is_ex:
        if any(v < 0 for v in arr.flat):
            raise ValueError(f"{name} has a negative entry")
        sums = arr.sum(axis=-1)
        if np.ndim(sums) == 0:
            sums = np.asarray([sums], dtype=object)
        bad = [s for s in np.asarray(sums, dtype=object).flat if s != 1]
        if bad:
            raise ValueError(f"{name} must sum to exactly 1, got {bad[0]}")
        return arr
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains an infinite entry")
    if (arr < 0).any():
        raise ValueError(f"{name} has a negative entry (min {arr.min():.3g})")
    sums = arr.sum(axis=-1)
    off = np.abs(sums - 1.0)
    if (off > SUM_TOL).any():
        worst = float(np.asarray(sums).flat[int(np.argmax(off))])
        raise ValueError(f"{name} must sum to 1 (within {SUM_TOL:g}), got {worst:.9g}")
    return arr


def check_pair(p, q, names: tuple[str, str] = ("p", "q")) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validate target ``p`` and draft ``q`` together: same shape, same kind (exact or float).

    Exact only when both are exact; otherwise both become float64.
    """
    exact = is_exact(p) and is_exact(q)
    pa = check_distribution(p, names[0], exact=exact)
    qa = check_distribution(q, names[1], exact=exact)
    if pa.shape != qa.shape:
        raise ValueError(f"{names[0]} and {names[1]} must have the same shape, got {pa.shape} and {qa.shape}")
    return pa, qa, exact


def check_probability(x, name: str = "alpha"):
    """A scalar probability in [0, 1] (or a float array of them). Exact stays exact."""
    if _is_exact_scalar(x):
        f = to_fraction(x, name)
        if not 0 <= f <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {f}")
        return f
    if isinstance(x, (bool, np.bool_)) or isinstance(x, (str, bytes)) or x is None:
        raise ValueError(f"{name} must be a number in [0, 1], got {x!r}")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in [0, 1], got {x!r}") from None
    if np.isnan(arr).any():
        raise ValueError(f"{name} is NaN")
    if ((arr < 0) | (arr > 1)).any():
        raise ValueError(f"{name} must be in [0, 1], got {x!r}")
    return float(arr) if arr.ndim == 0 else arr


def check_int(x, name: str, low: int | None = 0, high: int | None = None, what: str | None = None) -> int:
    """An integer in [low, high] (``None``: unbounded). Bools and floats are refused, even 2.0:
    the one integer validator (γ, counts, seeds, token ids, trial numbers)."""
    if what is None:
        what = (
            "a non-negative integer"
            if low == 0
            else "a positive integer"
            if low == 1
            else "an integer"
            if low is None
            else f"an integer >= {low}"
        )
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{name} must be {what}, got {x!r}")
    x = int(x)
    if low is not None and x < low:
        raise ValueError(f"{name} must be {what}, got {x}")
    if high is not None and x > high:
        raise ValueError(f"{name} must be at most {high}, got {x}")
    return x


def check_gamma(gamma, name: str = "gamma") -> int:
    """γ: a non-negative integer (bools and floats are refused, even 2.0)."""
    return check_int(gamma, name, 0)


def check_rng(rng, name: str = "rng") -> np.random.Generator:
    """An explicit, seeded ``numpy.random.Generator`` (never the global ``np.random``)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"{name} must be a numpy.random.Generator (e.g. np.random.default_rng(0)), "
            f"got {type(rng).__name__}"
        )
    return rng


def inverse_cdf(weights, u):
    """Inverse-CDF draw(s): the index i with C(i−1) ≤ u·C(V−1) < C(i), C the running sum of
    ``weights`` (1-D, non-negative, need not be normalized), for a uniform ``u`` in [0, 1)
    (a scalar gives an ``int``, an array gives an int64 array of its shape).

    A zero-weight symbol is never returned, even when u·total rounds onto the last edge. The
    one inverse-CDF draw of the package; ``sampling.sample_rows`` is its batched (B, V) form.
    No validation: callers pass rows they have checked.
    """
    w = np.asarray(weights, dtype=np.float64)
    c = np.cumsum(w)
    idx = np.searchsorted(c, np.asarray(u, dtype=np.float64) * c[-1], side="right")
    last = int(np.flatnonzero(w)[-1])
    idx = np.minimum(idx, last)
    # u·total landing exactly on a plateau edge cannot pick a zero-weight symbol: searchsorted
    # with side="right" returns the first index whose running sum exceeds the target, and a
    # zero-weight symbol never raises the running sum.
    return int(idx) if np.ndim(idx) == 0 else idx.astype(np.int64)


def check_weights(x, name: str = "weights") -> np.ndarray:
    """Non-negative, finite numbers of shape (..., V) that need *not* sum to 1 (e.g. an
    'unnormalized' output compared by total variation). Exact stays exact."""
    arr, exact = _as_array(x, name)
    if arr.ndim == 0 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty vector of non-negative numbers")
    if exact:
        if any(v < 0 for v in arr.flat):
            raise ValueError(f"{name} has a negative entry")
        return arr
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains an infinite entry")
    if (arr < 0).any():
        raise ValueError(f"{name} has a negative entry (min {arr.min():.3g})")
    return arr


# ---------------------------------------------------------------- what models return


def check_model_rows(rows, who: str, *, n_rows: int | None = None, vocab: int | None = None) -> np.ndarray:
    """What a model returned during a run, validated like a direct argument: a float64 array
    of shape (n_rows, V) (or (V,) when ``n_rows`` is None) whose rows are distributions
    (no NaN, no infinity, no negative entry, each summing to 1 within :data:`SUM_TOL`), with
    V = ``vocab`` when given. ``who`` names the model call in the message."""
    if isinstance(rows, np.ndarray) and rows.dtype.kind == "f":
        arr = rows.astype(np.float64, copy=False)  # fast path: a float array
    else:
        arr, _ = _as_array(rows, who)
        arr = arr.astype(np.float64, copy=False)
    want = 1 if n_rows is None else 2
    if arr.ndim != want:
        shape = "(V,)" if n_rows is None else f"({n_rows}, V)"
        raise ValueError(f"{who} must return an array of shape {shape}, got shape {arr.shape}")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise ValueError(f"{who} returned {arr.shape[0]} rows, expected {n_rows}")
    if arr.shape[-1] == 0:
        raise ValueError(f"{who} returned an empty distribution (V = 0)")
    if vocab is not None and arr.shape[-1] != vocab:
        raise ValueError(
            f"{who} returned rows of length {arr.shape[-1]}, but the vocabulary has "
            f"{vocab} symbols: the models' vocabularies differ"
        )
    if arr.size:
        # one sum and one minimum decide the common (valid) case; NaN and ±inf make the sum
        # non-finite. Anything else gets check_distribution's precise message.
        sums = arr.sum(axis=-1)
        if not (bool((np.abs(sums - 1.0) <= SUM_TOL).all()) and bool(arr.min() >= 0)):
            check_distribution(arr, f"{who} output", exact=False)
    return arr


def check_token_ids(tokens, who: str, vocab: int | None = None) -> tuple:
    """Token ids as a tuple of ints: integers only (no floats, bools or strings), 0 ≤ id < V
    when ``vocab`` is given (negative ids are refused: numpy indexing would silently wrap)."""
    if isinstance(tokens, (str, bytes)) or tokens is None or not hasattr(tokens, "__iter__"):
        raise ValueError(f"{who} must be a sequence of integer token ids, got {tokens!r}")
    if isinstance(tokens, np.ndarray) and tokens.ndim != 1:
        raise ValueError(f"{who} must be a 1-D sequence of token ids, got shape {tokens.shape}")
    out = []
    for t in tokens:
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer)):
            raise ValueError(f"{who} must hold integer token ids, found {t!r}")
        t = int(t)
        if t < 0:
            raise ValueError(f"{who} holds the negative token id {t}")
        if vocab is not None and t >= vocab:
            raise ValueError(f"{who} holds the token id {t}, outside the vocabulary [0, {vocab})")
        out.append(t)
    return tuple(out)


def check_nonnegative(x, name: str, what: str = "a non-negative number"):
    """A non-negative, finite scalar. Exact (int / Fraction / sympy Rational) stays exact as a
    Fraction; any other real becomes a float. ``what`` names the expected kind in the message."""
    if _is_exact_scalar(x):
        f = to_fraction(x, name)
        if f < 0:
            raise ValueError(f"{name} must be non-negative, got {f}")
        return f
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Real, np.floating)):
        raise ValueError(f"{name} must be {what}, got {x!r}")
    x = float(x)
    if np.isnan(x) or np.isinf(x):
        raise ValueError(f"{name} must be finite, got {x}")
    if x < 0:
        raise ValueError(f"{name} must be non-negative, got {x}")
    return x


def check_time(x, name: str):
    """A non-negative, finite duration in milliseconds. Exact stays exact."""
    return check_nonnegative(x, name, "a number of milliseconds")


def as_float(x) -> np.ndarray:
    """float64 view of an exact or float array (no validation)."""
    return np.asarray(x, dtype=np.float64)

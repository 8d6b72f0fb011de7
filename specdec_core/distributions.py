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
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .types import Probs

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


def exact_ratio(a: int | Fraction | float, b: int | Fraction | float) -> Fraction | float:
    """a / b: a Fraction when both are ints or Fractions (exact in, exact out), else a float."""
    if all(isinstance(x, (int, Fraction)) and not isinstance(x, bool) for x in (a, b)):
        return Fraction(a) / Fraction(b)
    return float(a) / float(b)


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
        if isinstance(x, (list, tuple)):
            try:
                np.asarray(x)  # ragged nesting raises here
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{name} must be a rectangular array of numbers ({exc})") from None
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


def check_distribution(x: Probs, name: str = "p", *, exact: bool | None = None) -> np.ndarray:
    """Validate one distribution (or a stack along the last axis) and return it as an array.

    ``exact=True`` forces the exact path (error if impossible), ``False`` forces float64,
    ``None`` (default) decides from the input.
    """
    if exact is not None:
        exact = check_bool(exact, "exact")
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
    _check_finite_nonnegative(arr, name)
    sums = arr.sum(axis=-1)
    off = np.abs(sums - 1.0)
    if (off > SUM_TOL).any():
        worst = float(np.asarray(sums).flat[int(np.argmax(off))])
        raise ValueError(f"{name} must sum to 1 (within {SUM_TOL:g}), got {worst:.9g}")
    return arr


def _check_finite_nonnegative(arr: np.ndarray, name: str) -> None:
    """A float array: no NaN, no infinity, no negative entry (messages name ``name``)."""
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains an infinite entry")
    if (arr < 0).any():
        raise ValueError(f"{name} has a negative entry (min {arr.min():.3g})")


def check_pair(
    p: Probs, q: Probs, names: tuple[str, str] = ("p", "q")
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validate target ``p`` and draft ``q`` together: same shape, same kind (exact or float).

    Exact only when both are exact; otherwise both become float64.
    """
    exact = is_exact(p) and is_exact(q)
    pa = check_distribution(p, names[0], exact=exact)
    qa = check_distribution(q, names[1], exact=exact)
    if pa.shape != qa.shape:
        raise ValueError(f"{names[0]} and {names[1]} must have the same shape, got {pa.shape} and {qa.shape}")
    return pa, qa, exact


def check_probability(x, name: str = "alpha", *, scalar: bool = False):
    """A scalar probability in [0, 1] (or, unless ``scalar``, a non-empty float array of them).
    Exact stays exact. Strings (even "0.5"), bools, None and complex numbers are refused at any
    depth; ``scalar=True`` refuses arrays and lists (one α, e.g. to price one round)."""
    if _is_exact_scalar(x):
        f = to_fraction(x, name)
        if not 0 <= f <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {f}")
        return f
    if isinstance(x, (bool, np.bool_)) or isinstance(x, (str, bytes)) or x is None:
        raise ValueError(f"{name} must be a number in [0, 1], got {x!r}")
    if isinstance(x, (dict, set, frozenset)):
        raise ValueError(f"{name} must be a number in [0, 1] or a sequence of them, got a {type(x).__name__}")
    if isinstance(x, (list, tuple, np.ndarray)):
        if scalar:
            raise ValueError(f"{name} must be one number in [0, 1], not a sequence or array")
        if isinstance(x, np.ndarray) and x.dtype.kind not in "fiuO":
            raise ValueError(f"{name} must hold numbers in [0, 1], got dtype {x.dtype}")
        _refuse_non_numbers(x if not isinstance(x, np.ndarray) else x.ravel(), name)
    elif isinstance(x, (complex, np.complexfloating)):
        raise ValueError(f"{name} must be a real number in [0, 1], got {x!r}")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in [0, 1], got {x!r}") from None
    if arr.ndim and arr.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence of probabilities, got an empty one")
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


#: The most proposals one speculative round drafts: a round keeps γ draft rows and γ + 1
#: target rows of V probabilities, so an absurd γ (10**9) is refused, not a MemoryError or a
#: draft loop that never ends. Papers use γ ≲ 16; speculative_generate caps γ by the tokens left.
#: (Here, beside check_gamma, so the samplers and the γ policies share it without importing
#: each other; ``sampling.MAX_GAMMA`` is the same number.)
MAX_GAMMA = 4096


def check_gamma(gamma, name: str = "gamma", *, high: int | None = None) -> int:
    """γ: a non-negative integer (bools and floats are refused, even 2.0). ``high``: the most
    proposals one round may draft (:data:`MAX_GAMMA` wherever γ enters a sampler or a γ
    policy: a round keeps a draft row and a target row of V probabilities per proposal)."""
    g = check_int(gamma, name, 0)
    if high is not None and g > high:
        raise ValueError(
            f"{name} = {g:,} proposals in one round: at most {high:,} are drafted "
            "(each keeps a draft row and a target row of V probabilities)"
        )
    return g


def check_level(x, name: str = "level"):
    """A number strictly between 0 and 1 (a confidence level, a test's size, a tolerance on
    [0, 1]): int, float, Fraction or a numpy scalar; strings, bools, NaN, 0 and 1 are refused.
    Exact stays exact."""
    v = check_probability(x, name, scalar=True)
    if not 0 < v < 1:
        raise ValueError(f"{name} must be a number in (0, 1), got {x!r}")
    return v


def check_cost_curve(curve, name: str, *, low: int = 0, positive: bool = False) -> dict:
    """A measured cost curve {point: milliseconds}: a non-empty dict whose points are integers
    ≥ ``low`` (γ or T; 1.5, "2" and True are refused) and whose times are finite and
    non-negative (positive with ``positive``; exact stays exact), in increasing point order."""
    if not isinstance(curve, dict) or not curve:
        raise ValueError(f"{name} must be a non-empty dict {{point: ms}}, got {curve!r}")
    out = {}
    for k in curve:
        point = check_int(k, f"{name}: a point", low)
        check = check_positive if positive else check_nonnegative
        what = "a positive, finite time (ms)" if positive else "a finite, non-negative time (ms)"
        out[point] = check(curve[k], f"{name}[{point}]", what)
    return dict(sorted(out.items()))


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
    one inverse-CDF draw of the package; ``batch.sample_rows`` is its batched (B, V) form.
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
    _check_finite_nonnegative(arr, name)
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
    if isinstance(tokens, (dict, set, frozenset)):
        raise ValueError(
            f"{who} must be an ordered sequence of integer token ids (a tuple or list), "
            f"got a {type(tokens).__name__}"
        )
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


# ---------------------------------------------------------------- one validator per kind of argument
#
# Every public function takes its arguments through these, so a kind of argument (a flag, a
# count, a model, a sequence, a time, a hardware number, an array of distribution rows) is
# refused the same way everywhere, with a ValueError naming it.


def check_bool(x, name: str) -> bool:
    """A flag: ``True`` or ``False`` (numpy bools too). Truthy stand-ins such as "no", 1, None
    or an array are refused: ``exact="no"`` must not mean exact."""
    if not isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {x!r}")
    return bool(x)


def check_sequence(x, name: str, what: str = "a sequence") -> list:
    """An ordered, finite sequence (list, tuple, 1-D array, range): strings, dicts (iterated by
    key), sets (no order) and non-iterables are refused. Returns a list."""
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{name} must be {what} (1-D), got an array of shape {x.shape}")
        return list(x)
    if isinstance(x, (str, bytes)) or x is None or isinstance(x, (dict, set, frozenset)):
        kind = "a string" if isinstance(x, (str, bytes)) else f"a {type(x).__name__}"
        raise ValueError(f"{name} must be {what} (a list or tuple), got {kind}")
    if not isinstance(x, (list, tuple, range)) and not (hasattr(x, "__len__") and hasattr(x, "__getitem__")):
        raise ValueError(f"{name} must be {what} (a list or tuple), got {type(x).__name__}")
    return list(x)


def check_int_sequence(x, name: str, low: int | None = 0, high: int | None = None) -> tuple:
    """A non-empty ordered sequence of integers in [low, high] (each through :func:`check_int`:
    1.7, "3" and True are refused)."""
    items = check_sequence(x, name, "a non-empty sequence of integers")
    if not items:
        raise ValueError(f"{name} must be a non-empty sequence of integers, got an empty one")
    out = []
    for i, v in enumerate(items):
        try:
            out.append(check_int(v, name, low, high))
        except ValueError as exc:
            raise ValueError(f"{exc} (entry {i})") from None
    return tuple(out)


def check_model(model, name: str, method: str | None = None):
    """A model: a callable ``model(prefix) -> probabilities`` (or an object offering
    ``method``, e.g. ``.score``)."""
    if callable(model) or (method is not None and hasattr(model, method)):
        return model
    offer = f" (or offer .{method})" if method else ""
    raise ValueError(f"{name} must be a model: prefix -> probabilities{offer}, got {type(model).__name__}")


def check_choice(x, name: str, options) -> str:
    """One of a few named options (a string in ``options``): anything else, an array or a
    number included, is a ValueError listing them (never numpy's ambiguous truth value)."""
    if not isinstance(x, str) or x not in options:
        raise ValueError(f"{name} must be one of {tuple(options)}, got {x!r}")
    return x


def check_optional_callable(f, name: str):
    """``None`` or a callable."""
    if f is not None and not callable(f):
        raise ValueError(f"{name} must be a function or None, got {type(f).__name__}")
    return f


def check_rows(rows, name: str, *, n_rows: int | None = None) -> np.ndarray:
    """A (n, V) array of distribution rows of any real dtype the library accepts (float16/32/64,
    ints, exact numbers): as float64, every row finite, non-negative and summing to 1 within
    :data:`SUM_TOL`. Ragged, complex, string and boolean input is refused; ``n_rows`` fixes n."""
    arr = check_distribution(rows, name, exact=False)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of distribution rows (n, V), got shape {arr.shape}")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise ValueError(f"{name} must have {n_rows} rows, got {arr.shape[0]}")
    return arr.astype(np.float64, copy=False)


def draw(weights, rng, size=None):
    """The library's one sampler: index draw(s) from non-negative ``weights`` (1-D, need not be
    normalized) by :func:`inverse_cdf` with ``rng.random(size)``. It takes one uniform per draw,
    like ``rng.choice(V, size, p=w)`` did, and gives the same index except when a uniform lands
    within rounding of a CDF edge; unlike ``rng.choice`` it accepts any row the library's
    validators accept (float32 softmaxes summing to 1 within SUM_TOL). Callers validate."""
    return inverse_cdf(weights, rng.random() if size is None else rng.random(size))


def check_size(n, name: str, limit: int, what: str = "items") -> int:
    """Refuse work or memory that grows with an argument beyond ``limit`` (a ValueError naming
    the argument and the limit, never a hang or numpy's MemoryError)."""
    if n > limit:
        raise ValueError(f"{name} asks for {n:,} {what}; at most {limit:,} are computed")
    return n


def check_positive(x, name: str, what: str = "a positive number"):
    """A positive, finite scalar (exact stays exact)."""
    v = check_nonnegative(x, name, what)
    if v == 0:
        raise ValueError(f"{name} must be positive, got {x!r}")
    return v


def check_temperature(t, name: str = "temperature", *, smallest=None):
    """A sampling temperature: 0 (greedy) or a positive, finite number. Exact (int / Fraction /
    sympy Rational) stays exact as a Fraction, any other real becomes a float; "0.5", True and
    None are refused. ``smallest``: a positive temperature below it is refused too (a model's
    logits / T would overflow)."""
    v = check_nonnegative(t, name)
    if smallest is not None and 0 < v < smallest:
        raise ValueError(f"{name} must be 0 (greedy) or at least {smallest:g}, got {t!r}")
    return v


def check_finite_result(value, what: str, names: str):
    """A derived total (a time, a rate) must be finite: inputs so extreme that their sum or
    quotient overflows are refused, naming them."""
    v = np.asarray(value, dtype=np.float64) if not isinstance(value, Fraction) else None
    if v is not None and not np.isfinite(v).all():
        raise ValueError(f"{what} overflows (is infinite) for {names}: the inputs are too large")
    return value


def check_times(x, name: str, *, min_size: int = 1) -> np.ndarray:
    """A 1-D sequence of finite, non-negative times (ms) as float64: numbers only (no strings,
    bools, complex numbers, dicts, None; not ragged)."""
    if isinstance(x, (dict, set, frozenset)):
        raise ValueError(f"{name} must be a sequence of times, got a {type(x).__name__}")
    arr, _ = _as_array(x, name)
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim != 1 or arr.size < min_size:
        raise ValueError(
            f"{name} must be a 1-D sequence of at least {min_size} time(s), got shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite")
    if (arr < 0).any():
        raise ValueError(f"{name} must be non-negative")
    return arr


def check_reals(x, name: str) -> np.ndarray:
    """A rectangular array of real numbers (any shape, ±inf allowed: the caller decides) as
    float64: strings (even "0.5"), bools, None, complex numbers, dicts and ragged input are
    refused."""
    if isinstance(x, (dict, set, frozenset)):
        raise ValueError(f"{name} must be an array of numbers, got a {type(x).__name__}")
    if isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, (bool, np.bool_, complex)):
        return np.asarray(float(x))
    arr, _ = _as_array(x, name)
    return np.asarray(arr, dtype=np.float64)


def as_rectangular(x, name: str) -> np.ndarray:
    """``np.asarray(x)``, with ragged input refused by name (not numpy's "setting an array
    element with a sequence")."""
    try:
        return np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} must be a rectangular array ({exc})") from None


def check_name(x, name: str) -> str:
    """A non-empty string (a model's or a device's name, a source)."""
    if not isinstance(x, str) or not x.strip():
        raise ValueError(f"{name} must be a non-empty string, got {x!r}")
    return x

"""Why α = Σ min(p, q) is the best one proposal can do: acceptance as a coupling (notebook 01 §6).

Any scheme that draws one proposal X ~ q and outputs a token Y whose law is exactly p (lossless)
defines a joint law π(x, y) = P(X = x, Y = y) with row sums q and column sums p: a *coupling* of
q and p. Accepting means outputting the proposal, so P(accept) ≤ P(X = Y) = Σₓ π(x, x), and each
diagonal cell is at most its row sum q(x) and its column sum p(x)::

    P(accept) ≤ Σₓ π(x, x) ≤ Σₓ min(p(x), q(x)) = α = 1 − TV(p, q).

Strict speculative sampling reaches the bound (:func:`speculative_coupling` has min(p, q) on its
diagonal), so it is a *maximal coupling*. :func:`best_agreement` checks the bound independently by
solving the coupling linear program exactly (:func:`simplex_max`, Fractions in and out).

Pure layer: numpy and fractions.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .distributions import (
    check_distribution,
    check_pair,
    check_reals,
    check_size,
    check_weights,
    is_exact,
    to_fraction,
)
from .verify import accepted_mass, residual_distribution

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from .types import Probs, Scalar

#: best_agreement solves an LP with V² unknowns: at most this many symbols.
MAX_LP_SYMBOLS = 12


def speculative_coupling(p: Probs, q: Probs) -> np.ndarray:
    """The joint law π[x, y] = P(proposal x, output y) of strict speculative sampling with one
    proposal: min(p, q) on the diagonal (accepted) plus max(q − p, 0)(x) · residual(y) (rejected,
    corrected). Rows sum to q, columns to p. Exact in (Fractions), exact out (object array)."""
    pa, qa, exact = check_pair(p, q)
    acc = np.asarray(accepted_mass(pa, qa), dtype=object if exact else np.float64)
    rejected = qa - acc  # q(x)(1 − a(x)) = max(q − p, 0)(x)
    if any(r != 0 for r in rejected):
        res = np.asarray(residual_distribution(pa, qa), dtype=object if exact else np.float64)
    else:
        res = np.zeros_like(pa)
    pi = np.outer(rejected, res)
    for x in range(len(pa)):
        pi[x, x] = pi[x, x] + acc[x]
    return pi


def check_coupling(pi: ArrayLike, p: Probs, q: Probs, name: str = "pi") -> np.ndarray:
    """``pi`` (V, V): a coupling of q (row sums) and p (column sums), non-negative; exact
    inputs are compared exactly, floats within 1e-9. Returns it as an array."""
    pa, qa, exact = check_pair(p, q)
    arr = np.asarray(check_weights(pi, name), dtype=object if exact else np.float64)
    V = len(pa)
    if arr.shape != (V, V):
        raise ValueError(f"{name} must have shape {(V, V)}, got {arr.shape}")
    check_distribution(arr.reshape(-1), name, exact=exact)
    tol = 0 if exact else 1e-9
    rows, cols = arr.sum(axis=1), arr.sum(axis=0)
    for x in range(V):
        if abs(rows[x] - qa[x]) > tol:
            raise ValueError(f"{name}: row {x} sums to {rows[x]}, not q[{x}] = {qa[x]}")
        if abs(cols[x] - pa[x]) > tol:
            raise ValueError(f"{name}: column {x} sums to {cols[x]}, not p[{x}] = {pa[x]}")
    return arr


def agreement(pi: ArrayLike) -> Scalar:
    """P(X = Y) under the coupling ``pi``: the sum of its diagonal (exact stays exact)."""
    arr = check_weights(pi, "pi")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.size == 0:
        raise ValueError(f"pi must be a square (V, V) array, got shape {arr.shape}")
    return sum((arr[x, x] for x in range(arr.shape[0])), Fraction(0) if arr.dtype == object else 0.0)


def simplex_max(
    c: Sequence[Scalar], A: Sequence[Sequence[Scalar]], b: Sequence[Scalar]
) -> tuple[Fraction, list[Fraction]]:
    """Maximize c·x subject to A x = b, x ≥ 0, exactly (Fractions): the two-phase simplex method
    with Bland's rule (smallest improving column enters; ties in the ratio test leave by the
    smallest basic index), so it cannot cycle. ``b`` must be ≥ 0. Returns (optimum, x)."""
    c, A, b = (_exact_reals(v, name) for v, name in ((c, "c"), (A, "A"), (b, "b")))
    if c.ndim != 1 or b.ndim != 1 or A.shape != (len(b), len(c)):
        raise ValueError(
            f"simplex_max needs c of length n, A of shape (m, n) and b of length m; got c {c.shape}, "
            f"A {A.shape}, b {b.shape}"
        )
    m, n = len(A), len(c)
    c = [Fraction(v) for v in c]
    T = [
        [Fraction(v) for v in A[i]] + [Fraction(int(i == k)) for k in range(m)] + [Fraction(b[i])]
        for i in range(m)
    ]
    if any(row[-1] < 0 for row in T):
        raise ValueError("simplex_max needs b >= 0")
    basis = [n + i for i in range(m)]  # start from the artificial variables

    def pivot(r, col):
        piv = T[r][col]
        T[r] = [v / piv for v in T[r]]
        for i in range(m):
            if i != r and T[i][col] != 0:
                f = T[i][col]
                T[i] = [a - f * e for a, e in zip(T[i], T[r])]
        basis[r] = col

    def run(cost, allowed):
        while True:
            reduced = [cost[j] - sum(cost[basis[i]] * T[i][j] for i in range(m)) for j in allowed]
            enter = next((j for j, rc in zip(allowed, reduced) if rc > 0), None)
            if enter is None:
                return
            ratios = [(T[i][-1] / T[i][enter], basis[i], i) for i in range(m) if T[i][enter] > 0]
            if not ratios:
                raise ValueError("the linear program is unbounded")
            pivot(min(ratios)[2], enter)

    run([Fraction(0)] * n + [Fraction(-1)] * m, list(range(n + m)))  # phase 1: no artificial left
    if any(T[i][-1] != 0 for i in range(m) if basis[i] >= n):
        raise ValueError("the linear program is infeasible")
    for i in range(m):  # an artificial still basic (at 0): swap in any original column
        if basis[i] >= n:
            col = next((j for j in range(n) if T[i][j] != 0), None)
            if col is not None:
                pivot(i, col)
    run(c + [Fraction(0)] * m, list(range(n)))  # phase 2 over the original columns only
    x = [Fraction(0)] * n
    for i in range(m):
        if basis[i] < n:
            x[basis[i]] = T[i][-1]
    return sum((ci * xi for ci, xi in zip(c, x)), Fraction(0)), x


def _exact_reals(x, name: str) -> np.ndarray:
    """Finite real numbers as an object array of Fractions (floats converted exactly)."""
    arr = np.asarray(x, dtype=object) if is_exact(x) else check_reals(x, name)
    if arr.dtype != object and not np.isfinite(arr).all():
        raise ValueError(f"{name} must hold finite numbers")
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = to_fraction(v, name) if arr.dtype == object else Fraction(float(v))
    return out


def best_agreement(p: Probs, q: Probs) -> tuple[Fraction, np.ndarray]:
    """The largest P(X = Y) over *all* couplings of q and p, and a coupling that attains it, by
    solving the linear program exactly: maximize Σ π(x, x) subject to row sums q, column sums
    p, π ≥ 0 (V² unknowns; :func:`simplex_max` in Fractions). It does not use the formula: that
    its value equals Σ min(p, q) is what notebook 01 (eq. 8) and the tests check."""
    pa, qa, exact = check_pair(p, q)
    if not exact:
        raise ValueError("best_agreement solves the program exactly: give p and q as Fractions")
    V = check_size(len(pa), "the number of symbols", MAX_LP_SYMBOLS, "symbols")
    # unknowns π(i, j) in row-major order; V row sums, then V − 1 column sums (the last column's
    # sum follows from the others, and dropping it keeps the constraints independent)
    A = [[int(k // V == i) for k in range(V * V)] for i in range(V)]
    A += [[int(k % V == j) for k in range(V * V)] for j in range(V - 1)]
    b = list(qa) + list(pa[: V - 1])
    value, x = simplex_max([int(k // V == k % V) for k in range(V * V)], A, b)
    return value, np.array(x, dtype=object).reshape(V, V)


#: best_multi_agreement solves an LP with V^k · V unknowns: at most this many.
MAX_MULTI_UNKNOWNS = 400


def best_multi_agreement(p: Probs, q: Probs, k: int) -> Fraction:
    """The largest P(Y ∈ {X₁, …, X_k}) over all couplings of k independent candidates
    X₁ … X_k ~ q (their joint law q^⊗k) and an output Y ~ p: the optimal acceptance of any
    lossless rule offered k i.i.d. candidates (the optimal-transport view of SpecTr, Sun et al.
    2023), by solving the linear program exactly (:func:`simplex_max`). k = 1 gives Σ min(p, q).
    Its size grows like V^(k+1): at most ``MAX_MULTI_UNKNOWNS`` unknowns."""
    import itertools

    from .distributions import check_int

    pa, qa, exact = check_pair(p, q)
    if not exact:
        raise ValueError("best_multi_agreement solves the program exactly: give p and q as Fractions")
    k = check_int(k, "k", 1)
    V = len(pa)
    check_size(V ** (k + 1), "V^(k+1) unknowns", MAX_MULTI_UNKNOWNS, "unknowns")
    tuples = list(itertools.product(range(V), repeat=k))
    n = len(tuples) * V  # unknowns π(t, y), row-major
    A = [[int(j // V == i) for j in range(n)] for i in range(len(tuples))]  # Σ_y π(t, y) = q^⊗k(t)
    A += [[int(j % V == y) for j in range(n)] for y in range(V - 1)]  # Σ_t π(t, y) = p(y)
    b = [np.prod([qa[x] for x in t], dtype=object) for t in tuples] + list(pa[: V - 1])
    c = [int(j % V in tuples[j // V]) for j in range(n)]
    return simplex_max(c, A, b)[0]

"""A law test on the real model that can fail: its sample size comes from a power calculation.

The outcome is the first token a speculative round (γ = 1) emits after a fixed prefix: the
accepted proposal, or the correction drawn after a rejection. Correct strict verification
gives it the target's law p exactly. The named broken variant *corrects from p* (draws the
replacement from p instead of the residual max(p − q, 0)); its first-token law is

    b = min(p, q) + (1 − α)·p,   α = Σ_x min(p(x), q(x)),                      (1)

which differs from p unless the draft is useless (α = 0) or perfect (q = p).

Pooling: tokens whose expected count n·p(x) is below 5 are pooled (the chi-square
approximation needs expected counts of about 5 or more) into consecutive groups, in decreasing
order of p, each expected at least 5 times; the same rule as
:func:`specdec_core.lawcheck.chi_square_gof` (:func:`specdec_core.lawcheck.pooled_groups`).
Power: the probability that the test rejects when the samples follow b — simulated
(multinomial samples from b, the same statistic and pooling); approximately a non-central
chi-square with dof = cells − 1 and non-centrality λ = n Σ_c (b_c − p_c)² / p_c.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping, Sequence

    from numpy.typing import ArrayLike

    from ..types import ScoringTarget, Target


def broken_first_token_law(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """Equation (1): the first-token law when corrections are drawn from p."""
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    m = np.minimum(p, q)
    return m + (1.0 - m.sum()) * p


def pooled_cells(p: ArrayLike, n: int, min_expected: float = 5.0) -> np.ndarray:
    """Indices of tokens kept as their own cell (n·p ≥ min_expected); the rest are pooled into
    groups by :func:`specdec_core.lawcheck.pooled_groups`."""
    return np.flatnonzero(np.asarray(p) * n >= min_expected)


def power(
    p: ArrayLike,
    b: ArrayLike,
    n: int,
    *,
    threshold: float = 1e-3,
    min_expected: float = 5.0,
    sims: int = 4000,
    seed: int = 0,
) -> float:
    """Probability that the chi-square test at ``threshold`` rejects p when the n samples follow
    b: Monte Carlo over ``sims`` multinomial samples, pooled as
    :func:`specdec_core.lawcheck.chi_square_gof` pools (cells with n·p < min_expected merged
    into consecutive groups, :func:`specdec_core.lawcheck.pooled_groups`). (The non-central
    chi-square formula of the module docstring is close but drifts when many small cells are
    pooled; :func:`power_approx` gives it for comparison.)"""
    from scipy.stats import chi2

    from ..lawcheck import pool, pooled_groups

    p, b = np.asarray(p, np.float64), np.asarray(b, np.float64)
    order = np.argsort(-p, kind="stable")
    order = order[p[order] > 0]
    groups = pooled_groups(p[order] * n, min_expected)
    pc, bc = pool(p[order], groups), pool(b[order], groups)
    # b's mass where p is 0: any such sample makes the statistic infinite (a rejection)
    bc = np.maximum(np.append(bc, b[p <= 0].sum()), 0)
    bc = bc / bc.sum()
    dof = len(pc) - 1
    if dof < 1:
        return 0.0
    rng = np.random.default_rng(seed)
    obs = rng.multinomial(n, bc, size=sims)
    impossible, obs = obs[:, -1] > 0, obs[:, :-1]
    e = n * pc
    stat = ((obs - e) ** 2 / e).sum(axis=1)
    return float(((chi2.sf(stat, dof) < threshold) | impossible).mean())


def power_approx(
    p: ArrayLike, b: ArrayLike, n: int, *, threshold: float = 1e-3, min_expected: float = 5.0
) -> float:
    """The large-sample approximation of :func:`power`: the package's one formula,
    :func:`specdec_core.power.chi_square_power`, on the outcome laws p and b (arrays)."""
    from ..power import chi_square_power

    p, b = np.asarray(p, np.float64), np.asarray(b, np.float64)
    return chi_square_power(
        dict(enumerate(p / p.sum())),
        dict(enumerate(b / b.sum())),
        n,
        threshold=threshold,
        min_expected=min_expected,
    )


def sample_size(
    p: ArrayLike,
    b: ArrayLike,
    *,
    target_power: float = 0.9,
    threshold: float = 1e-3,
    grid: Sequence[int] = (100, 150, 200, 300, 400, 600, 800, 1200, 1600, 2400, 3200, 4800, 6400),
) -> tuple[int, float]:
    """The smallest n in ``grid`` whose power is at least ``target_power`` (and the power)."""
    for n in grid:
        pw = power(p, b, n, threshold=threshold)
        if pw >= target_power:
            return n, pw
    return grid[-1], power(p, b, grid[-1], threshold=threshold)


class MemoTarget:
    """A target whose rows for (prefix, continuation) are computed once and reused: the law
    test repeats the same round thousands of times, and the model is deterministic."""

    def __init__(self, target: ScoringTarget):
        self.target = target
        self.memo = {}

    def score(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        key = (tuple(prefix), tuple(continuation))
        if key not in self.memo:
            self.memo[key] = np.asarray(self.target.score(prefix, continuation))
        return self.memo[key]

    def __call__(self, prefix):
        return self.score(prefix, ())[0]


class FixedRowDraft:
    """The draft at one fixed prefix: proposes one token sampled from its stored row q."""

    def __init__(self, q: ArrayLike):
        self.q = np.asarray(q, np.float64)

    def propose(
        self, prefix: Sequence[int], gamma: int, rng: np.random.Generator
    ) -> tuple[list[int], np.ndarray]:
        from ..batch import sample_rows

        toks = []
        for _ in range(gamma):
            toks.append(int(sample_rows(self.q[None, :], np.array([rng.random()]))[0]))
        return toks, np.tile(self.q, (gamma, 1))

    def __call__(self, prefix):
        return self.q


def first_token_samples(
    target: Target,
    q: ArrayLike,
    prefix: Sequence[int],
    n: int,
    *,
    correction: str = "residual",
    seed: int = 0,
) -> tuple[Counter[int], int]:
    """n speculative rounds (γ = 1) from ``prefix`` through specdec_core.sampling's
    speculative_round: Counter of first emitted tokens, and how many proposals were accepted."""
    from ..sampling import speculative_round

    draft = FixedRowDraft(q)
    rng = np.random.default_rng(seed)
    counts, acc = Counter(), 0
    for _ in range(n):
        r = speculative_round(target, draft, tuple(prefix), gamma=1, rng=rng, correction=correction)
        counts[int(r.emitted[0])] += 1
        acc += r.accepted
    return counts, acc


def sample_row(q: ArrayLike, n: int, rng: np.random.Generator) -> np.ndarray:
    """n tokens drawn independently from the row ``q`` (the inverse CDF, :func:`~specdec_core.batch.sample_rows`):
    what a model decoding by itself emits at one fixed prefix."""
    from ..batch import sample_rows

    q = np.asarray(q, np.float64)
    u = rng.random(n)
    rows = np.broadcast_to(q, (256, q.size))  # 256 rows at a time: never an (n, V) array
    return np.concatenate(
        [sample_rows(rows[: len(part)], part) for part in np.array_split(u, max(1, -(-n // 256)))]
    )


def law_dict(p: np.ndarray, n: int, min_expected: float = 5.0) -> dict[int | str, float]:
    """{token: p} for the tokens kept as cells; chi_square_gof pools the rest itself."""
    keep = set(pooled_cells(p, n, min_expected / 10).tolist())
    law = {int(x): float(p[x]) for x in keep}
    law["other"] = max(0.0, 1.0 - sum(law.values()))
    return law


def relabel(counts: Counter, law: Mapping[Hashable, float]) -> Counter:
    out = Counter()
    for k, c in counts.items():
        out[k if k in law else "other"] += c
    return out

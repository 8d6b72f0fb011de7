"""Latency as a user feels it, and raggedness across a batch — from the sampler's records.

A speculative round emits K tokens at once, at the end of the round. A reader watching the
stream therefore sees *bursts*: a gap of one round's time, then K − 1 tokens with no gap at
all. The mean gap is still 1 ÷ rate, but the gaps themselves are far from all equal:

    gaps of one round = (T_round, 0, 0, …, 0)        (K entries)                   (1)

Time to first token (TTFT) adds what must happen before the first round can emit anything:
the target's prefill of the prompt *and* the draft's prefill of the same prompt, plus the
first round's drafting:

    TTFT = T_prefill,target + T_prefill,draft + γ·T_draft step + T_overhead        (2)

(the target's prefill pass also scores the γ proposals, so the first round's verification is
folded into it). Plain decoding has TTFT = T_prefill,target.

In a batch every sequence accepts its own K per round. An engine that keeps the batch in
lock-step pads each sequence to the longest run of the round, wasting

    Σ_b (max_b K_b − K_b)  positions per round                                      (3)

:func:`simulate_ragged_batch` draws those K with the library's batched verifier
(:func:`specdec_core.batch.verify_batch`) and a seeded Generator.

Times are declared budgets (ms): a result is *derived from assumed inputs*.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .distributions import (
    as_rectangular,
    check_finite_result,
    check_gamma,
    check_int,
    check_pair,
    check_rng,
    check_size,
    check_time,
    check_times,
    draw,
)
from .timing import draft_cost_ms, verify_cost_ms

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import ArrayLike

    from .sampling import RoundRecord
    from .types import Probs, Scalar

__all__ = [
    "arrival_times_ms",
    "gap_summary",
    "inter_token_gaps_ms",
    "padding_waste",
    "round_times_ms",
    "simulate_ragged_batch",
    "stream_times_ms",
    "time_to_first_token_ms",
]

#: simulate_ragged_batch draws batch × rounds × gamma proposals at once: at most this many.
MAX_SIMULATED = 10**7


def _emitted_counts(records) -> np.ndarray:
    """K per round from RoundRecords (anything with ``.emitted``) or a sequence of counts."""
    if isinstance(records, (str, bytes, dict, set, frozenset)):
        raise ValueError(
            f"records must be RoundRecords or a sequence of token counts, got a {type(records).__name__}"
        )
    try:
        items = list(records)
    except TypeError:
        raise ValueError(
            f"records must be RoundRecords or a sequence of token counts, got {records!r}"
        ) from None
    if not items:
        raise ValueError("records is empty")
    ks = [len(r.emitted) if hasattr(r, "emitted") else check_int(r, "records", 1) for r in items]
    if min(ks) < 1:
        raise ValueError("records: every round emits at least one token")
    return np.asarray(ks, dtype=np.int64)


def round_times_ms(
    records: Iterable[RoundRecord],
    *,
    draft_per_token_ms: Scalar,
    verify_base_ms: Scalar,
    verify_per_position_ms: Scalar = 0,
    overhead_ms: Scalar = 0,
) -> np.ndarray:
    """Each round's time under notebook 05's budget (3): γ_r·draft + base + per_position·(γ_r + 1)
    + overhead, with γ_r the round's own γ (the last round may draft fewer). float64, ms."""
    if isinstance(records, (str, bytes)) or not hasattr(records, "__iter__"):
        raise ValueError(f"records must be a sequence of RoundRecords, got {records!r}")
    recs = list(records)
    if not recs or not all(hasattr(r, "gamma") for r in recs):
        raise ValueError("records must be a non-empty sequence of RoundRecords")
    o = check_time(overhead_ms, "overhead_ms")
    out = np.array(
        [
            float(
                draft_cost_ms(r.gamma, per_token_ms=draft_per_token_ms)
                + verify_cost_ms(r.gamma, base_ms=verify_base_ms, per_position_ms=verify_per_position_ms)
                + o
            )
            for r in recs
        ],
        dtype=np.float64,
    )
    if (out <= 0).any():
        raise ValueError("a round takes no time under this budget")
    return out


def arrival_times_ms(
    records: Iterable[RoundRecord | int], round_ms: float | ArrayLike, *, start_ms: float = 0
) -> np.ndarray:
    """When each token reaches the reader: all K tokens of round r at the end of round r.
    ``round_ms`` is one time for every round or one per round. float64 array, one per token."""
    ks = _emitted_counts(records)
    s = float(check_time(start_ms, "start_ms"))
    rt = _round_ms(round_ms, ks.size)
    with np.errstate(over="ignore"):  # an overflow is refused just below, by name
        ends = s + np.cumsum(np.broadcast_to(rt, ks.shape))
    check_finite_result(ends, "the arrival time", "round_ms")
    return np.repeat(ends, ks)


def _round_ms(round_ms, rounds: int) -> np.ndarray:
    """One positive, finite time (ms) for every round, or one per round: numbers only."""
    if np.ndim(round_ms) == 0 and not isinstance(round_ms, (str, bytes)):
        rt = np.asarray([check_time(round_ms, "round_ms")], dtype=np.float64)
        scalar = True
    else:
        try:
            rt = check_times(round_ms, "round_ms")
        except ValueError as exc:
            raise ValueError(f"round_ms must be one time or one per round ({rounds}): {exc}") from None
        scalar = False
    if not scalar and rt.size != rounds:
        raise ValueError(f"round_ms must be one time or one per round ({rounds}), got {rt.size} times")
    if (rt <= 0).any():
        raise ValueError("round_ms must be positive and finite")
    return rt[0] if scalar else rt


def inter_token_gaps_ms(arrivals: ArrayLike) -> np.ndarray:
    """Gaps between consecutive tokens (the first token's wait is TTFT, not a gap)."""
    a = check_times(arrivals, "arrivals", min_size=2)
    if (np.diff(a) < 0).any():
        raise ValueError("arrivals must be finite and non-decreasing")
    return np.diff(a)


def gap_summary(gaps: ArrayLike) -> dict[str, float | int]:
    """Mean, median, 90th and 99th percentile, largest gap and the share of zero gaps."""
    g = check_times(gaps, "gaps")
    return {
        "mean": float(g.mean()),
        "median": float(np.median(g)),
        "p90": float(np.percentile(g, 90)),
        "p99": float(np.percentile(g, 99)),
        "max": float(g.max()),
        "zero_share": float((g == 0).mean()),
        "n": int(g.size),
    }


def time_to_first_token_ms(
    *,
    target_prefill_ms: Scalar,
    draft_prefill_ms: Scalar = 0,
    gamma: int = 0,
    draft_per_token_ms: Scalar = 0,
    overhead_ms: Scalar = 0,
) -> Scalar:
    """Equation (2): target prefill + draft prefill + γ draft steps + overhead (exact stays
    exact). With ``gamma=0`` and no draft it is plain decoding's TTFT."""
    t = check_time(target_prefill_ms, "target_prefill_ms")
    d = check_time(draft_prefill_ms, "draft_prefill_ms")
    o = check_time(overhead_ms, "overhead_ms")
    total = t + d + draft_cost_ms(check_gamma(gamma), per_token_ms=draft_per_token_ms) + o
    return check_finite_result(total, "time_to_first_token_ms", "these prefill and overhead times")


# ---------------------------------------------------------------- ragged batches


def padding_waste(K: ArrayLike) -> dict[str, np.ndarray]:
    """Equation (3) for K of shape (rounds, batch): per round the positions wasted by padding
    every sequence to the round's longest run (int array), and the wasted share of the padded
    slots batch × max K (float array)."""
    k = as_rectangular(K, "K")
    if k.ndim != 2 or k.size == 0 or k.dtype.kind not in "iu" or (k < 1).any():
        raise ValueError("K must be a non-empty (rounds, batch) array of integers >= 1")
    # int64 arithmetic whatever K's dtype (batch × max K overflows an int16 or uint8 silently)
    if int(k.max()) > np.iinfo(np.int64).max // max(k.shape[1], 1):
        raise ValueError("K holds a count too large for int64 arithmetic")
    k = k.astype(np.int64)
    mx = k.max(axis=1)
    wasted = k.shape[1] * mx - k.sum(axis=1)
    return {
        "wasted": wasted.astype(np.int64),
        "share": wasted / (k.shape[1] * mx),
        "longest": mx.astype(np.int64),
    }


def simulate_ragged_batch(
    p: Probs, q: Probs, *, gamma: int, batch: int, rounds: int, rng: np.random.Generator
) -> np.ndarray:
    """K for ``rounds`` rounds of ``batch`` sequences (shape (rounds, batch)), each position's
    target/draft distributions ``p``/``q``: proposals drawn from q with ``rng``, then verified by
    :func:`~specdec_core.batch.verify_batch` (each sequence its own accepted run)."""
    from .batch import verify_batch

    pp, qq, _ = check_pair(p, q)
    pp, qq = np.asarray(pp, dtype=np.float64), np.asarray(qq, dtype=np.float64)
    g = check_int(check_gamma(gamma), "gamma", 1)
    b = check_int(batch, "batch", 1)
    r = check_int(rounds, "rounds", 1)
    rng = check_rng(rng)
    check_size(r * b * g, "batch × rounds × gamma", MAX_SIMULATED, "proposals")
    if pp.ndim != 1:
        raise ValueError(f"p and q must be single distributions (shape (V,)), got shape {pp.shape}")
    n, V = r * b, pp.size
    X = draw(qq, rng, size=(n, g))
    P = np.broadcast_to(pp, (n, g + 1, V))
    Q = np.broadcast_to(qq, (n, g, V))
    accepted, _ = verify_batch(P, Q, X, rng)
    return (accepted + 1).reshape(r, b)


def stream_times_ms(
    records: Iterable[RoundRecord | int], round_ms: float | ArrayLike, *, first_token_ms: float
) -> np.ndarray:
    """When each token reaches the reader when the first round's tokens arrive at
    ``first_token_ms`` (TTFT, equation (2)) and every later round r adds its time ``round_ms[r]``.
    ``round_ms`` is one time for every round or one per round (the first one is not used)."""
    ks = _emitted_counts(records)
    t0 = float(check_time(first_token_ms, "first_token_ms"))
    rt = np.broadcast_to(_round_ms(round_ms, ks.size), ks.shape).copy()
    rt[0] = 0.0
    with np.errstate(over="ignore"):
        ends = t0 + np.cumsum(rt)
    return np.repeat(check_finite_result(ends, "the arrival time", "round_ms"), ks)

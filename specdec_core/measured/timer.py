"""The one timer of every measuring function and benchmark.

:func:`time_repeats` times several calls side by side: one untimed sweep first (compilation,
first-touch page faults, lazy imports), then ``reps`` rounds in which every call is timed once,
in turn, each after an untimed ``flush`` (so a slow spell on a shared machine falls on all of
them, and each starts from the caches a real pass would leave); :func:`time_calls` gives the
median, fastest and slowest of the repeats as a :class:`~.records.Spread` per call. :func:`read_floor_ms` is the
floor every weight product is held against: the time to stream the same bytes once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..distributions import check_int
from .records import Spread

__all__ = ["REDUCTIONS", "Stopwatch", "read_floor_ms", "spread", "time_calls", "time_repeats"]


def _check_callable(f, name: str) -> None:
    if f is not None and not callable(f):
        raise ValueError(f"{name} must be a function or None, got {f!r}")


def time_repeats(
    calls: Mapping[Hashable, Callable[[], object]],
    reps: int = 5,
    *,
    flush: Callable[[], object] | None = None,
    sweep: bool = True,
    scale: float = 1e3,
) -> dict[Hashable, list[float]]:
    """{name: the ``reps`` timings, in order} of each call in ``calls`` ({name: no-argument
    function}), interleaved: repeat r times every call once, starting from the r-th (so no call
    always runs first). ``flush`` runs untimed before each timed call; ``sweep`` runs every call
    once, untimed, first; ``scale`` converts seconds (1e3: milliseconds, the default). Repeat r of
    every call ran in the same spell: ratios of repeat r are paired."""
    if not isinstance(calls, Mapping) or not calls or not all(callable(f) for f in calls.values()):
        raise ValueError("calls must be a non-empty {name: function} mapping")
    reps = check_int(reps, "reps", 1, 100_000)
    _check_callable(flush, "flush")
    if not (isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale > 0):
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    if sweep:
        for f in calls.values():
            f()
    names = list(calls)
    times: dict[Hashable, list[float]] = {k: [] for k in names}
    for r in range(reps):
        for k in names[r % len(names) :] + names[: r % len(names)]:
            if flush is not None:
                flush()
            t = time.perf_counter()
            calls[k]()
            times[k].append((time.perf_counter() - t) * scale)
    return times


def spread(times: list[float]) -> Spread:
    """Median, fastest and slowest of some repeats."""
    return Spread(float(np.median(times)), float(min(times)), float(max(times)), len(times))


def time_calls(
    calls: Mapping[Hashable, Callable[[], object]], reps: int = 5, **options
) -> dict[Hashable, Spread]:
    """{name: :class:`~.records.Spread`} of :func:`time_repeats` (``options``: its flush, sweep, scale)."""
    return {k: spread(v) for k, v in time_repeats(calls, reps, **options).items()}


class Stopwatch:
    """Seconds since it was made (or last :meth:`restart`): the wall time of a stage, not a repeat."""

    def __init__(self):
        self.start = time.perf_counter()

    def restart(self) -> float:
        """Seconds since the start; the clock starts again."""
        now = time.perf_counter()
        elapsed, self.start = now - self.start, now
        return elapsed

    def seconds(self) -> float:
        return time.perf_counter() - self.start


#: Streaming reductions that read every byte once (the fastest median is the read floor).
REDUCTIONS: dict[str, Callable] = {"dot": lambda v: np.dot(v, v), "sum": np.sum, "max": np.max, "min": np.min}


def read_floor_ms(arrays, reps: int = 5, threads: int = 1, before=None) -> tuple[float, dict[str, float]]:
    """(fastest, {reduction: median ms}) to stream every array once with each of
    :data:`REDUCTIONS`, timed by :func:`time_calls`. With ``threads`` > 1 each array is split
    into that many contiguous parts read by as many Python threads at once (numpy releases the
    GIL inside a reduction): the floor of several cores. ``before``: the untimed flush."""
    reps, threads = check_int(reps, "reps", 1), check_int(threads, "threads", 1, 64)
    _check_callable(before, "before")
    if isinstance(arrays, np.ndarray) or not all(isinstance(a, np.ndarray) for a in arrays):
        raise ValueError("arrays must be a list of numpy arrays (the weights to stream)")
    flat = [a.reshape(-1) for a in arrays]
    if not flat or min(v.size for v in flat) < threads:
        raise ValueError(
            f"arrays must be a non-empty list of arrays, each with at least threads = {threads} entries"
        )
    parts = [[v[i * v.size // threads : (i + 1) * v.size // threads] for v in flat] for i in range(threads)]
    pool = ThreadPoolExecutor(threads)

    def reader(f):
        def read(vs):
            for v in vs:
                f(v)

        def read_all():  # a reader thread's error is raised here, never passes unseen
            try:
                list(pool.map(read, parts)) if threads > 1 else read(flat)
            except Exception as e:
                raise RuntimeError(f"a reader thread failed: {e!r}") from e

        return read_all

    with pool:
        spreads = time_calls({k: reader(f) for k, f in REDUCTIONS.items()}, reps, flush=before, sweep=False)
    med = {k: s.median for k, s in spreads.items()}
    return min(med.values()), med

"""The one timer (issue 36): interleaved repeats, one untimed sweep, an untimed flush before each
timed call, median/fastest/slowest, the read floor."""

from __future__ import annotations

import time

import numpy as np
import pytest

from specdec_core.measured import timer


def test_calls_are_interleaved_rotated_swept_and_flushed():
    log = []
    calls = {k: (lambda k=k: log.append(k)) for k in "abc"}
    times = timer.time_repeats(calls, 3, flush=lambda: log.append("flush"))
    # the sweep (untimed, unflushed), then each repeat starting one call later
    assert log[:3] == ["a", "b", "c"]
    timed = [x for x in log[3:] if x != "flush"]
    assert timed == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert log[3:] == [y for x in timed for y in ("flush", x)]  # a flush before every timed call
    assert {k: len(v) for k, v in times.items()} == {"a": 3, "b": 3, "c": 3}


def test_no_sweep_and_the_flush_is_not_timed():
    n = []
    slow_flush = lambda: time.sleep(0.02)
    s = timer.time_calls({"x": lambda: n.append(1)}, 3, flush=slow_flush, sweep=False)["x"]
    assert len(n) == 3 and s.n == 3
    assert s.max < 10  # ms: 20 ms of flush never counted


def test_spread_is_median_min_max_in_the_scale():
    s = timer.time_calls({"sleep": lambda: time.sleep(0.005)}, 5, scale=1.0)["sleep"]
    assert 0.004 < s.min <= s.median <= s.max < 0.5 and s.n == 5
    assert timer.spread([3.0, 1.0, 2.0]) == timer.Spread(2.0, 1.0, 3.0, 3)


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"calls": {}}, "calls"),
        ({"calls": {"a": 1}}, "calls"),
        ({"calls": {"a": int}, "reps": 0}, "reps"),
        ({"calls": {"a": int}, "reps": 2.0}, "reps"),
        ({"calls": {"a": int}, "flush": 3}, "flush"),
        ({"calls": {"a": int}, "scale": -1}, "scale"),
    ],
)
def test_bad_arguments_are_named(kw, name):
    with pytest.raises(ValueError, match=name):
        timer.time_calls(**kw)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_read_floor_streams_every_array(threads):
    arrays = [np.ones(100_000, np.float32), np.ones((300, 300), np.float32)]
    floor, by = timer.read_floor_ms(arrays, reps=3, threads=threads)
    assert set(by) == set(timer.REDUCTIONS) and floor == min(by.values()) > 0


def test_a_failing_reader_thread_fails_the_call():
    with pytest.raises(RuntimeError, match="reader thread"):
        timer.read_floor_ms([np.array(["a", "b"], dtype=object)], reps=1, threads=2)


def test_the_stopwatch_restarts():
    w = timer.Stopwatch()
    time.sleep(0.1)
    assert w.seconds() >= 0.1 and w.restart() >= 0.1 and w.seconds() < 0.1

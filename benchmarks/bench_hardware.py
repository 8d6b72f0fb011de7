"""This machine on a roofline (notebook 06): memory bandwidth and float32 matmul throughput.

    .venv/bin/python benchmarks/bench_hardware.py          # ≈ 20–50 s on 2 cores (longer under load)
    .venv/bin/python benchmarks/bench_hardware.py --quick --results-dir /tmp  # a smoke run (seconds)

Writes specdec_core/results/hardware.json (or ``--results-dir``). Everything in it is *measured*
here with the one timer (:func:`~specdec_core.measured.timer.time_calls`: an untimed warm-up,
then repeats; best and median, as stated), with the machine, the BLAS
threads (threadpoolctl), the load average before and after, and the date.

* **Bandwidth** (STREAM-like): ``np.copyto`` and a triad ``a = b + s·c`` on float64 arrays of
  ``--mib`` MiB each, far larger than any cache. numpy's element-wise loops are single-
  threaded, so the 2-thread figure splits the arrays in halves run on two Python threads
  (numpy releases the GIL inside the loop). Bytes counted as STREAM counts them: copy 2 arrays,
  triad 3 arrays; numpy's triad runs as two passes (s·c into a, then a + b), so its true traffic
  is 5 arrays and the figure reported for it uses 5.
* **Matmul** (the capstone's BLAS): ``x (M × 576) @ W`` in float32 for W of 576 × 1536 (an MLP
  matrix of SmolLM2-135M, 3.5 MB, cache-resident) and 576 × 49152 (its output head, 113 MB,
  streamed from memory), M = 1…64, 1 and 2 BLAS threads. Rate = 2·M·576·N ÷ time.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from specdec_core.measured import HardwareRun, Machine, Stopwatch, time_calls, write_stored  # noqa: E402
from specdec_core.measured.studies import Bandwidth, MatmulCurve  # noqa: E402

M_VALUES = list(range(1, 17)) + [20, 24, 32, 48, 64]
SHAPES = {"576x1536": (576, 1536), "576x49152": (576, 49152)}
INNER = {"576x1536": 10, "576x49152": 1}  # products per timing


def _on_threads(fn, n):
    """A call running fn(i) for i in range(n) on n threads (n = 1: directly)."""
    if n == 1:
        return lambda: fn(0)

    def run():
        ths = [threading.Thread(target=fn, args=(i,)) for i in range(n)]
        for th in ths:
            th.start()
        for th in ths:
            th.join()

    return run


def bandwidth(mib, reps, threads) -> Bandwidth:
    """Copy, then triad: ``reps`` timings each after one untimed warm-up (the one timer, one call
    at a time), best and median GB/s."""
    n = mib * 2**20 // 8
    a, b, c = (np.full(n, v, dtype=np.float64) for v in (1.0, 2.0, 0.5))
    parts = [slice(i * n // threads, (i + 1) * n // threads) for i in range(threads)]

    def copy(i):
        np.copyto(a[parts[i]], b[parts[i]])

    def triad(i):
        s = parts[i]
        np.multiply(c[s], 3.0, out=a[s])
        np.add(a[s], b[s], out=a[s])

    copy_s = time_calls({"copy": _on_threads(copy, threads)}, reps, scale=1)["copy"]
    triad_s = time_calls({"triad": _on_threads(triad, threads)}, reps, scale=1)["triad"]
    GB = n * 8 / 1e9  # one array
    return Bandwidth(
        copy_GBps=2 * GB / copy_s.min,
        copy_GBps_median=2 * GB / copy_s.median,
        copy_arrays_counted=2,
        triad_GBps=5 * GB / triad_s.min,
        triad_GBps_median=5 * GB / triad_s.median,
        triad_arrays_counted=5,
        triad_GBps_stream_convention=3 * GB / triad_s.min,
        array_MiB=mib,
        reps=reps,
    )


def matmul_curve(shape, Ms, reps, rng, inner) -> MatmulCurve:
    """Per M: ``inner`` products back to back per timing (so a timing lasts milliseconds),
    ``reps`` timings after one untimed sweep; all M are swept in each repetition (the one timer,
    interleaved), so a burst of load elsewhere spoils one point of several curves rather than a
    whole curve."""
    k, n = shape
    w = rng.standard_normal((k, n)).astype(np.float32)
    xs = {M: rng.standard_normal((M, k)).astype(np.float32) for M in Ms}

    def products(x):
        def run():
            for _ in range(inner):
                _ = x @ w

        return run

    spreads = time_calls({M: products(xs[M]) for M in Ms}, reps, scale=1e3 / inner)  # ms per product
    return MatmulCurve(
        ms_min_median={M: (s.min, s.median) for M, s in spreads.items()},
        gflops={M: 2 * M * k * n / (s.min / 1e3) / 1e9 for M, s in spreads.items()},
        weight_MB=k * n * 4 / 1e6,
        inner=inner,
        reps=reps,
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--mib", type=int, default=256, help="MiB per bandwidth array (default 256)")
    ap.add_argument(
        "--results-dir", default=None, help="where to write hardware.json (default: the stored results)"
    )
    args = ap.parse_args(argv)
    quick = args.quick
    mib, reps = (64, 2) if quick else (args.mib, 5)
    clock, machine = Stopwatch(), Machine.now()  # BLAS threads: 1 and 2, set per part
    bw = {}
    for threads in (1, 2):
        bw[threads] = bandwidth(mib, reps, threads)
        print(f"bandwidth, {threads} thread(s): copy {bw[threads].copy_GBps:.1f} GB/s", flush=True)
    rng = np.random.default_rng(0)
    Ms = [1, 2, 4, 8, 16, 64] if quick else M_VALUES
    mm = {}
    for threads in (2, 1):
        with threadpool_limits(threads):
            mm[threads] = {
                name: matmul_curve(shape, Ms, reps, rng, INNER[name]) for name, shape in SHAPES.items()
            }
        head = mm[threads]["576x49152"].gflops
        print(
            f"matmul 576x49152, {threads} thread(s): M=1 {head[1]:.1f}, M=64 {head[64]:.1f} GFLOP/s",
            flush=True,
        )
    seconds = clock.seconds()
    machine = machine.finished(seconds / 60)
    rec = HardwareRun(machine, quick, bw, mm, tuple(M_VALUES), tuple(SHAPES), seconds)
    path = write_stored(rec, args.results_dir)
    print(f"wrote {path} in {rec.seconds:.1f} s", flush=True)


if __name__ == "__main__":
    main()

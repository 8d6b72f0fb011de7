"""This machine on a roofline (notebook 06): memory bandwidth and float32 matmul throughput.

    .venv/bin/python benchmarks/bench_hardware.py          # ≈ 20–50 s on 2 cores (longer under load)
    .venv/bin/python benchmarks/bench_hardware.py --quick  # a smoke run (a few seconds)

Writes specdec_core/results/hardware.json. Everything in it is *measured* here with
time.perf_counter (best and median over repetitions, as stated), with the machine, the BLAS
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
import json
import os
import sys
import threading
import time

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from specdec_core.measured import HardwareRun, Machine  # noqa: E402
from specdec_core.measured.store import write_json  # noqa: E402

OUT = os.path.join(ROOT, "specdec_core", "results", "hardware.json")

M_VALUES = list(range(1, 17)) + [20, 24, 32, 48, 64]
SHAPES = {"576x1536": (576, 1536), "576x49152": (576, 49152)}
INNER = {"576x1536": 10, "576x49152": 1}  # products per timing


def machine() -> dict:
    """The machine record (BLAS threads: 1 and 2, set per part)."""
    return Machine.now().to_dict()


def _run_threads(fn, n):
    """fn(i) for i in range(n) on n threads (n = 1: directly); wall time in seconds."""
    if n == 1:
        t = time.perf_counter()
        fn(0)
        return time.perf_counter() - t
    ths = [threading.Thread(target=fn, args=(i,)) for i in range(n)]
    t = time.perf_counter()
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    return time.perf_counter() - t


def bandwidth(mib, reps, threads):
    n = mib * 2**20 // 8
    a, b, c = (np.full(n, v, dtype=np.float64) for v in (1.0, 2.0, 0.5))
    parts = [slice(i * n // threads, (i + 1) * n // threads) for i in range(threads)]

    def copy(i):
        np.copyto(a[parts[i]], b[parts[i]])

    def triad(i):
        s = parts[i]
        np.multiply(c[s], 3.0, out=a[s])
        np.add(a[s], b[s], out=a[s])

    out = {}
    for name, fn, arrays_stream, arrays_true in (("copy", copy, 2, 2), ("triad", triad, 3, 5)):
        ts = [_run_threads(fn, threads) for _ in range(reps + 1)][1:]  # first: warm-up
        best, med = min(ts), float(np.median(ts))
        out[f"{name}_GBps"] = arrays_true * n * 8 / best / 1e9
        out[f"{name}_GBps_median"] = arrays_true * n * 8 / med / 1e9
        out[f"{name}_arrays_counted"] = arrays_true
        if arrays_true != arrays_stream:
            out[f"{name}_GBps_stream_convention"] = arrays_stream * n * 8 / best / 1e9
    out["array_MiB"] = mib
    out["reps"] = reps
    return out


def matmul_curve(shape, Ms, reps, rng, inner):
    """Per M: ``inner`` products back to back per timing (so a timing lasts milliseconds),
    ``reps`` timings after one warm-up sweep; all M are swept in each repetition, so a burst of
    load elsewhere spoils one point of several curves rather than a whole curve."""
    k, n = shape
    w = rng.standard_normal((k, n)).astype(np.float32)
    xs = {M: rng.standard_normal((M, k)).astype(np.float32) for M in Ms}
    ts = {M: [] for M in Ms}
    for rep in range(reps + 1):
        for M in Ms:
            t = time.perf_counter()
            for _ in range(inner):
                _ = xs[M] @ w
            dt = (time.perf_counter() - t) / inner
            if rep:
                ts[M].append(dt)
    ms = {M: (1e3 * min(v), 1e3 * float(np.median(v))) for M, v in ts.items()}
    gflops = {M: 2 * M * k * n / (ms[M][0] / 1e3) / 1e9 for M in Ms}
    return {
        "ms_min_median": {str(M): list(v) for M, v in ms.items()},
        "gflops": {str(M): g for M, g in gflops.items()},
        "weight_MB": k * n * 4 / 1e6,
        "inner": inner,
        "reps": reps,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--mib", type=int, default=256, help="MiB per bandwidth array (default 256)")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    quick = args.quick
    mib = 64 if quick else args.mib
    t0 = time.perf_counter()
    res = {
        "machine": machine(),
        "quick": quick,
        "bandwidth": {},
        "matmul": {},
        "settings": {"M": M_VALUES, "shapes": list(SHAPES)},
    }
    for threads in (1, 2):
        res["bandwidth"][f"threads{threads}"] = bandwidth(mib, 2 if quick else 5, threads)
        print(
            f"bandwidth, {threads} thread(s): "
            f"copy {res['bandwidth'][f'threads{threads}']['copy_GBps']:.1f} GB/s",
            flush=True,
        )
    rng = np.random.default_rng(0)
    Ms = [1, 2, 4, 8, 16, 64] if quick else M_VALUES
    for threads in (2, 1):
        with threadpool_limits(threads):
            res["matmul"][f"threads{threads}"] = {
                name: matmul_curve(shape, Ms, 2 if quick else 5, rng, INNER[name])
                for name, shape in SHAPES.items()
            }
        head = res["matmul"][f"threads{threads}"]["576x49152"]["gflops"]
        print(
            f"matmul 576x49152, {threads} thread(s): M=1 {head['1']:.1f}, M=64 {head['64']:.1f} GFLOP/s",
            flush=True,
        )
    res["seconds"] = time.perf_counter() - t0
    res["machine"] = Machine.from_dict(res["machine"]).finished(res["seconds"] / 60).to_dict()
    rec = HardwareRun.from_json(json.loads(json.dumps(res)))  # typed: what read_stored reads back
    write_json(args.out, rec.to_json())
    print(f"wrote {args.out} in {rec.seconds:.1f} s", flush=True)


if __name__ == "__main__":
    main()

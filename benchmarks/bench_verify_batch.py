"""Measure verify_batch against the memory-traffic floor and a per-row loop; sampler rounds/s.

    .venv/bin/python benchmarks/bench_verify_batch.py

Prints *measured* times on this machine (median of repeats, time.perf_counter), and ratios:
  verify_batch / read-everything floor   (goal: well under 1 — it reads only what it needs)
  verify_batch / per-row Python loop
"""

from __future__ import annotations

import platform
import statistics
import time

import numpy as np

from specdec_core import speculative_generate, verify_batch
from specdec_core.toy import toy_draft, toy_target


def median_ms(fn, repeats=15, warmup=2):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def make_batch(B, gamma, V, rng, dtype=np.float32):
    P = rng.random((B, gamma + 1, V), dtype=np.float32).astype(dtype)
    P /= P.sum(-1, keepdims=True)
    Q = rng.random((B, gamma, V), dtype=np.float32).astype(dtype) ** 3
    Q /= Q.sum(-1, keepdims=True)
    X = np.stack(
        [
            [
                rng.choice(V, p=Q[b, i].astype(np.float64) / Q[b, i].astype(np.float64).sum())
                for i in range(gamma)
            ]
            for b in range(B)
        ]
    )
    return P, Q, X


def per_row_loop(P, Q, X, rng):
    """The obvious implementation: one row at a time, whole distributions in Python/numpy."""
    B, g1, V = P.shape
    out_n, out_t = np.empty(B, np.int64), np.empty(B, np.int64)
    for b in range(B):
        p, q = P[b].astype(np.float64), Q[b].astype(np.float64)
        n = g1 - 1
        for i in range(g1 - 1):
            x = X[b, i]
            if rng.random() >= min(1.0, p[i, x] / q[i, x]):
                n = i
                break
        row = np.maximum(p[n] - q[n], 0) if n < g1 - 1 else p[n]
        out_n[b], out_t[b] = n, rng.choice(V, p=row / row.sum())
    return out_n, out_t


def main(B=64, gamma=4, V=32000):
    rng = np.random.default_rng(0)
    print(
        f"machine: {platform.machine()}, {platform.processor() or '?'}, python {platform.python_version()}, numpy {np.__version__}"
    )
    for dtype in (np.float32, np.float64):
        P, Q, X = make_batch(B, gamma, V, rng, dtype)
        mb = (P.nbytes + Q.nbytes) / 1e6
        floor = median_ms(lambda: (P.sum(), Q.sum()))
        vb = median_ms(lambda: verify_batch(P, Q, X, rng))
        vb_all = median_ms(lambda: verify_batch(P, Q, X, rng, check_all=True), repeats=5)
        loop = median_ms(lambda: per_row_loop(P, Q, X, rng), repeats=5)
        print(f"\n[measured] B={B}, gamma={gamma}, V={V}, {np.dtype(dtype).name}: inputs {mb:.1f} MB")
        print(f"  read-everything floor (sum of both arrays): {floor:8.2f} ms")
        print(f"  verify_batch:                              {vb:8.2f} ms   ratio to floor {vb / floor:.2f}")
        print(
            f"  verify_batch(check_all=True):              {vb_all:8.2f} ms   ratio to floor {vb_all / floor:.2f}"
        )
        print(
            f"  per-row Python loop:                       {loop:8.2f} ms   verify_batch is {loop / vb:.1f}x faster"
        )
    T, D = toy_target(), toy_draft()
    r = np.random.default_rng(1)
    t0 = time.perf_counter()
    res = speculative_generate(T, D, (), gamma=4, max_new_tokens=20000, rng=r)
    dt = time.perf_counter() - t0
    print(
        f"\n[measured] speculative_generate on the toy language, gamma=4: {res.rounds / dt:,.0f} rounds/s "
        f"({len(res.tokens) / dt:,.0f} tokens/s, {res.rounds} rounds)"
    )
    P, Q, X = make_batch(B, gamma, 8, rng)
    per = median_ms(lambda: verify_batch(P, Q, X, rng), repeats=200)
    print(f"[measured] verify_batch, B={B}, gamma={gamma}, V=8: {B * 1e3 / per:,.0f} rounds/s")


if __name__ == "__main__":
    main()

"""Does scoring T positions cost about one step? The capstone's forward pass against its own
roofline, predicted first, then timed (notebooks 06 and 09).

    .venv/bin/python benchmarks/bench_passcost.py           # ≈ 3 minutes on a quiet 2-core machine
    .venv/bin/python benchmarks/bench_passcost.py --quick   # a smoke run

Writes specdec_core/results/passcost.json. For 1 and then 2 BLAS threads (threadpoolctl), in
this order, in one process:

1. **Inputs of the prediction**, measured apart from the pass they predict: the weight-read
   floor (every weight matrix read once, :func:`passcost.read_floor_s`) gives the bandwidth;
   :func:`passcost.compute_rate` gives the product's FLOP rate per T on a small cache-resident
   matrix.
2. **The prediction** (:func:`passcost.predict_pass_ms`), roofline (max) and serial (sum),
   stored before step 3 runs.
3. **The measurement**: the weight products of one pass over T positions, all 121 matrices,
   in two layouts (weights (out, in) through :func:`model.product`, and the layout used before,
   (in, out) with one ``x @ w`` call), interleaved, medians of ``--reps`` repeats; then the
   whole forward pass (attention, norms and head included) scoring T new positions after a
   100-token context, fresh cache state for each call (rolled back to the context).

The goals of issue 23 are checked and printed (not asserted): cost(8)/cost(1) ≤ 1.3,
cost(4)/cost(1) ≤ 1.2, cost(1) ≤ 1.25 × the floor, prefill (T = 128) no slower than before.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from dataclasses import replace

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from specdec_core.llm import load_model  # noqa: E402
from specdec_core.llm import passcost as PC  # noqa: E402
from specdec_core.measured import Machine, PassCost  # noqa: E402
from specdec_core.measured.store import write_json  # noqa: E402
from specdec_core.measured.studies import PassGoals  # noqa: E402

OUT = os.path.join(ROOT, "specdec_core", "results", "passcost.json")
TS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64, 128]
FORWARD_TS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 32, 128]
CONTEXT = 100


def forward_curve(model, Ts, reps, seed=0):
    """Median ms of forward + logits for T new positions after CONTEXT tokens, interleaved."""
    rng = np.random.default_rng(seed)
    ctx = [int(t) for t in rng.integers(3, model.cfg.vocab_size, CONTEXT)]
    cache = model.new_cache(CONTEXT + max(Ts) + 1)
    model.forward(ctx, cache)
    new = {T: [int(t) for t in rng.integers(3, model.cfg.vocab_size, T)] for T in Ts}
    times = {T: [] for T in Ts}
    for _ in range(reps):
        for T in Ts:
            cache.rollback(CONTEXT)
            t = time.perf_counter()
            model.logits(model.forward(new[T], cache))
            times[T].append((time.perf_counter() - t) * 1e3)
    cache.rollback(CONTEXT)
    return {
        T: {"median": float(np.median(v)), "min": min(v), "max": max(v), "reps": reps}
        for T, v in times.items()
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    reps = 2 if a.quick else a.reps
    Ts = [1, 2, 4, 8] if a.quick else TS
    fTs = [1, 2, 4, 8] if a.quick else FORWARD_TS
    t_start = time.time()
    machine = Machine.now()  # BLAS threads: 1 and then 2, set per part
    lm = load_model()
    mats = PC.matrices(lm.model.w)
    weight_bytes = sum(w.nbytes for w in mats)
    params = sum(w.size for w in mats)
    old = PC.stored_layout(mats)  # the earlier layout, for comparison (a second copy: benchmark only)
    out = {
        "machine": machine.to_dict(),
        "quick": a.quick,
        "how": (
            f"weight products of all {len(mats)} matrices ({weight_bytes / 1e6:.0f} MB float32) and the whole "
            f"forward pass after a {CONTEXT}-token context; medians of {reps} interleaved repeats; "
            "time.perf_counter in one process"
        ),
        "weight_bytes": weight_bytes,
        "params": params,
        "context": CONTEXT,
        "threads": {},
    }
    for threads in (1, 2):
        with threadpool_limits(threads):
            PC.read_floor_s(mats, reps=1)  # page the weights in
            floor = PC.read_floor_s(mats, reps=reps, threads=threads)
            rates = PC.compute_rate(Ts, reps=3 if a.quick else 5)
            pred = PC.predict_pass_ms(
                Ts, weight_bytes=weight_bytes, params=params, bandwidth=weight_bytes / floor, rate=rates
            )
            rec = {
                "floor_ms": floor * 1e3,
                "bandwidth_GBps": weight_bytes / floor / 1e9,
                "rate_GFLOPs": {T: r / 1e9 for T, r in rates.items()},
                "predicted": pred,
                "predicted_at_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S"),
            }
            print(
                f"threads {threads}: floor {floor * 1e3:.1f} ms ({weight_bytes / floor / 1e9:.1f} GB/s); "
                f"rate T=1 {rates[1] / 1e9:.0f}, T=8 {rates.get(8, 0) / 1e9:.0f} GFLOP/s",
                flush=True,
            )
            rec["products"] = PC.time_products(mats, Ts, old=old, reps=reps)
            rec["forward"] = forward_curve(lm.model, fTs, reps)
            rec["measured_at_utc"] = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S")
            out["threads"][threads] = rec
            p, o, f = rec["products"]["product"], rec["products"]["x@w"], rec["forward"]
            for T in Ts:
                print(
                    f"  T={T:3d}  product {p[T]['median']:6.1f} ms ({p[T]['median'] / p[1]['median']:.2f})  "
                    f"x@w {o[T]['median']:6.1f} ({o[T]['median'] / p[1]['median']:.2f})  predicted roofline "
                    f"{pred[T]['roofline_ms']:6.1f} serial {pred[T]['serial_ms']:6.1f}"
                    + (
                        f"  forward {f[T]['median']:6.1f} ({f[T]['median'] / f[1]['median']:.2f})"
                        if T in f
                        else ""
                    ),
                    flush=True,
                )
    out["seconds"] = time.time() - t_start
    out["machine"] = machine.finished(out["seconds"] / 60).to_dict()
    rec = PassCost.from_json(json.loads(json.dumps(out)))
    rec = replace(rec, goals=goals(rec))
    for line in rec.goals.lines:
        print(line)
    write_json(a.out, rec.to_json())
    print(f"wrote {a.out} in {rec.seconds:.0f} s")


def goals(rec: PassCost) -> PassGoals:
    """Cost ratios at one BLAS thread, and the predictions' errors."""
    r = rec.at(1)
    p, o, f = r.products["product"].median(), r.products["x@w"].median(), r.forward.median()
    m = lambda d, T: d[T]  # noqa: E731
    res = {}
    if 8 in p:
        res["products_8_over_1"] = m(p, 8) / m(p, 1)
        res["forward_8_over_1"] = m(f, 8) / m(f, 1) if 8 in f else None
    if 4 in p:
        res["products_4_over_1"] = m(p, 4) / m(p, 1)
        res["forward_4_over_1"] = m(f, 4) / m(f, 1) if 4 in f else None
    res["one_row_over_floor"] = m(p, 1) / r.floor_ms
    if 128 in p:
        res["prefill128_new_over_old"] = m(p, 128) / m(o, 128)
    errs = PC.prediction_errors(rec, 1)
    lines = [f"goal check (1 BLAS thread): {k} = {v:.2f}" for k, v in res.items() if isinstance(v, float)]
    for kind, e in errs.items():
        lines.append(f"prediction {kind}: " + ", ".join(f"T={T} {100 * v:+.0f}%" for T, v in e.items()))
    return PassGoals(**res, prediction_error=errs, lines=tuple(lines))


if __name__ == "__main__":
    main()

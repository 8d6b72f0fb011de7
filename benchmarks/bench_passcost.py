"""Does scoring T positions cost about one step? The capstone's forward pass against its own
roofline, predicted first, then timed (notebooks 06 and 09).

    .venv/bin/python benchmarks/bench_passcost.py           # ≈ 3 minutes on a quiet 2-core machine
    .venv/bin/python benchmarks/bench_passcost.py --quick --results-dir /tmp  # a smoke run

Writes specdec_core/results/passcost.json (or ``--results-dir``); every timing by the one timer
(:func:`specdec_core.measured.time_calls`). For 1 and then 2 BLAS threads (threadpoolctl), in
this order, in one process:

1. **Inputs of the prediction**, measured apart from the pass they predict: the weight-read
   floor (every weight matrix read once, :func:`specdec_core.measured.timer.read_floor_ms`) gives the bandwidth;
   :func:`passcost.compute_rate` gives the product's FLOP rate per T on a small cache-resident
   matrix.
2. **The prediction** (:func:`passcost.predict_pass_ms`), roofline (max) and serial (sum),
   stored before step 3 runs.
3. **The measurement**: the weight products of one pass over T positions, all 121 matrices,
   in two layouts (weights (out, in) through :func:`model.product`, and the layout used before,
   (in, out) with one ``x @ w`` call), interleaved, medians of ``--reps`` repeats; then the
   whole forward pass (attention, norms and head included) scoring T new positions after a
   100-token context, fresh cache state for each call (rolled back to the context).

First, the weight layout is chosen by timing the candidates on a sample of the model's own
matrices (:func:`layout.choose_layout`, one BLAS thread); every later step uses it, and the
choice with its table is stored with the results. The goals of issue 32 are checked and printed
(not asserted), as issue 35 sets them: whole pass cost(4)/cost(1) ≤ 1.15 and cost(8)/cost(1) ≤ 1.3,
the whole pass at T = 1 ≤ 1.15 × the read floor and its weight products ≤ 1.1 × (the floor is the
fastest of several streaming reductions, same run), and one step of the int8 quantized-copy draft
≤ 0.35 of a target step (both timed interleaved, :func:`step_pair`).
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from specdec_core.llm import Llama, load_model, quantized_model  # noqa: E402
from specdec_core.llm import passcost as PC  # noqa: E402
from specdec_core.measured import CostCurve, Machine, PassCost, Stopwatch, time_calls, write_stored  # noqa: E402
from specdec_core.measured.layout import LayoutChoice  # noqa: E402
from specdec_core.measured.studies import PassGoals, PassThreads  # noqa: E402
from specdec_core.measured.timer import read_floor_ms  # noqa: E402

TS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64, 128]
FORWARD_TS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 32, 128]
CONTEXT = 100
#: Issue 32's goals (one BLAS thread, same run): the whole pass in decode steps, and one row
#: against the weight-read floor. Printed, never asserted.
GOALS = {
    "forward_4_over_1": 1.15,
    "forward_8_over_1": 1.3,
    "one_row_over_floor": 1.1,
    "forward_1_over_floor": 1.15,
    "draft_step_over_target_step": 0.35,
}


def forward_curve(model: Llama, Ts: Sequence[int], reps: int, seed: int = 0) -> CostCurve:
    """ms of forward + logits for T new positions after CONTEXT tokens, interleaved (the cache
    rolled back to the context, untimed, before each call)."""
    rng = np.random.default_rng(seed)
    ctx = [int(t) for t in rng.integers(3, model.cfg.vocab_size, CONTEXT)]
    cache = model.new_cache(CONTEXT + max(Ts) + 1)
    model.forward(ctx, cache)
    new = {T: [int(t) for t in rng.integers(3, model.cfg.vocab_size, T)] for T in Ts}
    calls = {T: (lambda toks=new[T]: model.logits(model.forward(toks, cache))) for T in Ts}
    spreads = time_calls(calls, reps, flush=lambda: cache.rollback(CONTEXT), sweep=False)
    cache.rollback(CONTEXT)
    return CostCurve(spreads, "forward", reps=reps, context=CONTEXT)


def step_pair(model: Llama, qmodel: Llama, reps: int, seed: int = 1) -> dict:
    """Median ms of one new position (forward + head) of the float32 target and of its int8 copy,
    each after the same CONTEXT tokens in its own cache, timed alternately (a slow spell falls on
    both)."""
    rng = np.random.default_rng(seed)
    ctx = [int(t) for t in rng.integers(3, model.cfg.vocab_size, CONTEXT)]
    tok = [int(rng.integers(3, model.cfg.vocab_size))]
    caches = {}
    for name, m in (("target", model), ("draft", qmodel)):
        caches[name] = (m, m.new_cache(CONTEXT + 2))
        m.forward(ctx, caches[name][1])
    calls = {name: (lambda m=m, c=c: m.logits(m.forward(tok, c))) for name, (m, c) in caches.items()}
    spreads = time_calls(
        calls, reps, flush=lambda: [c.rollback(CONTEXT) for _, c in caches.values()], sweep=False
    )
    return {name: s.median for name, s in spreads.items()}


@dataclass(frozen=True)
class Settings:
    """Sizes timed and repeats: :data:`FULL` or :data:`QUICK` (``--reps`` replaces ``reps``)."""

    quick: bool
    Ts: tuple[int, ...]
    forward_Ts: tuple[int, ...]
    reps: int
    rate_reps: int


FULL = Settings(False, tuple(TS), tuple(FORWARD_TS), 7, 5)
QUICK = Settings(True, (1, 2, 4, 8), (1, 2, 4, 8), 2, 3)


def _utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S")


def predict_stage(mats: list[np.ndarray], s: Settings, threads: int) -> dict:
    """Steps 1–2 with ``threads`` BLAS threads: the floor, the rate per T, the prediction, its time."""
    weight_bytes, params = sum(w.nbytes for w in mats), sum(w.size for w in mats)
    arrays = [w.data for w in mats]
    read_floor_ms(arrays, reps=1)  # page the weights in
    floor_ms, by = read_floor_ms(arrays, reps=s.reps, threads=threads)
    floor = floor_ms / 1e3
    rates = PC.compute_rate(s.Ts, reps=s.rate_reps)
    pred = PC.predict_pass_ms(
        s.Ts, weight_bytes=weight_bytes, params=params, bandwidth=weight_bytes / floor, rate=rates
    )
    print(
        f"threads {threads}: floor {floor * 1e3:.1f} ms ({weight_bytes / floor / 1e9:.1f} GB/s; "
        + ", ".join(f"{k} {v:.1f}" for k, v in by.items())
        + f"); "
        f"rate T=1 {rates[1] / 1e9:.0f}, T=8 {rates.get(8, 0) / 1e9:.0f} GFLOP/s",
        flush=True,
    )
    return {
        "floor_ms": floor * 1e3,
        "bandwidth_GBps": weight_bytes / floor / 1e9,
        "rate_GFLOPs": {T: r / 1e9 for T, r in rates.items()},
        "predicted": pred,
        "predicted_at_utc": _utc(),
    }


def measure_stage(
    model: Llama, mats: list[np.ndarray], old: list[np.ndarray], s: Settings, threads: int
) -> dict:
    """Step 3: the weight products in both layouts, then the whole forward pass, and when."""
    products = PC.time_products(mats, s.Ts, old=old, reps=s.reps)
    products = {k: c.replace(threads=threads, context=CONTEXT) for k, c in products.items()}
    forward = forward_curve(model, s.forward_Ts, s.reps).replace(threads=threads)
    return {"products": products, "forward": forward, "measured_at_utc": _utc()}


#: One step of each model, interleaved (filled by :func:`measure` at one BLAS thread).
STEPS: dict[str, float] = {}


def print_threads(rec: PassThreads, Ts: Sequence[int]) -> None:
    p, o, f = rec.products["product"].median(), rec.products["x@w"].median(), rec.forward.median()
    for T in Ts:
        fwd = f"  forward {f[T]:6.1f} ({f[T] / f[1]:.2f})" if T in f else ""
        print(
            f"  T={T:3d}  product {p[T]:6.1f} ms ({p[T] / p[1]:.2f})  x@w {o[T]:6.1f} ({o[T] / p[1]:.2f})  "
            f"predicted roofline {rec.predicted[T].roofline_ms:6.1f} serial {rec.predicted[T].serial_ms:6.1f}{fwd}",
            flush=True,
        )


def measure(
    model: Llama,
    s: Settings,
    machine: Machine,
    clock: Stopwatch | None = None,
    layout: LayoutChoice | None = None,
) -> PassCost:
    """Steps 1–3 for 1 and then 2 BLAS threads, into the typed record with its goals (the
    machine finished at the end; the total counts from ``clock``, default now)."""
    if not isinstance(s, Settings):
        raise ValueError(f"s must be a Settings, got {type(s).__name__}")
    clock = Stopwatch() if clock is None else clock
    mats = PC.matrices(model.w)
    weight_bytes = sum(w.nbytes for w in mats)
    old = PC.stored_layout(mats)  # the earlier layout, for comparison (a second copy: benchmark only)
    threads = {}
    for t in (1, 2):
        with threadpool_limits(t):
            rec = predict_stage(mats, s, t)  # stored before the pass it predicts is timed
            rec.update(measure_stage(model, mats, old, s, t))
            if t == 1:
                STEPS.update(step_pair(model, quantized_model(model, layout), max(s.reps, 15)))
                print(
                    f"  one step: target {STEPS['target']:.1f} ms, int8 copy {STEPS['draft']:.1f} ms",
                    flush=True,
                )
        threads[t] = PassThreads(**rec)
        print_threads(threads[t], s.Ts)
    how = (
        f"weight products of all {len(mats)} matrices ({weight_bytes / 1e6:.0f} MB float32) and the whole "
        f"forward pass after a {CONTEXT}-token context; medians of {s.reps} interleaved repeats; "
        "time.perf_counter in one process"
    )
    seconds = clock.seconds()
    params = sum(w.size for w in mats)
    rec = PassCost(
        machine.finished(seconds / 60),
        s.quick,
        how,
        weight_bytes,
        params,
        CONTEXT,
        threads,
        seconds,
        None,
        layout,
    )
    return rec.replace(goals=goals(rec))


def main(argv: list[str] | None = None) -> PassCost:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run (small sizes, 2 repeats)")
    ap.add_argument("--reps", type=int, default=None, help=f"repeats of every timing (full: {FULL.reps})")
    ap.add_argument(
        "--results-dir", default=None, help="where to write passcost.json (default: the stored results)"
    )
    args = ap.parse_args(argv)
    s = QUICK if args.quick else FULL
    s = replace(s, reps=args.reps) if args.reps is not None else s
    clock, machine = Stopwatch(), Machine.now()  # BLAS threads: 1 and then 2, set per part
    with threadpool_limits(1):  # the layout is chosen at one thread, as the capstone runs
        lm = load_model(layout="auto")
    print("weight layout, timed on a sample of the model's matrices (ms, one BLAS thread):")
    print("\n".join(lm.layout.table()), flush=True)
    print(f"chosen: {lm.layout.storage}, {lm.layout.plan}", flush=True)
    rec = measure(lm.model, s, machine, clock=clock, layout=lm.layout)
    for line in rec.goals.lines:
        print(line)
    path = write_stored(rec, args.results_dir)
    print(f"wrote {path} in {rec.seconds:.0f} s")
    return rec


def goals(rec: PassCost) -> PassGoals:
    """Cost ratios at one BLAS thread, and the predictions' errors."""
    r = rec.at(1)
    p, o, f = r.products["product"].median(), r.products["x@w"].median(), r.forward.median()
    res = {}
    for T in (8, 4):
        if T in p:
            res[f"products_{T}_over_1"] = p[T] / p[1]
            res[f"forward_{T}_over_1"] = f[T] / f[1] if T in f else None
    res["one_row_over_floor"] = p[1] / r.floor_ms
    res["forward_1_over_floor"] = f[1] / r.floor_ms
    if STEPS:
        res["draft_step_over_target_step"] = STEPS["draft"] / STEPS["target"]
    if 128 in p:
        res["prefill128_new_over_old"] = p[128] / o[128]
    errs = PC.prediction_errors(rec, 1)
    lines = []
    if rec.layout is not None:
        lines.append(f"layout chosen by timing: {rec.layout.storage}, plan {rec.layout.plan}")
    lines += [
        f"goal check (1 BLAS thread): {k} = {v:.2f} (goal ≤ {GOALS[k]})" if k in GOALS else f"{k} = {v:.2f}"
        for k, v in res.items()
        if isinstance(v, float)
    ]
    for kind, e in errs.items():
        lines.append(f"prediction {kind}: " + ", ".join(f"T={T} {100 * v:+.0f}%" for T, v in e.items()))
    return PassGoals(**res, prediction_error=errs, lines=tuple(lines))


if __name__ == "__main__":
    main()

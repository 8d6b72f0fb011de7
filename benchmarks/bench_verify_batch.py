"""Measure verify_batch against the memory-traffic floor, per check; a per-row loop; rounds/s.

    .venv/bin/python benchmarks/bench_verify_batch.py [--repeats N] [--against REV] [--no-store]

The floor is reading both input arrays once (``P.sum(), Q.sum()``). Each repeat times the floor
and every variant back to back, in a rotating order (interleaved), so load that comes and goes
hits them alike; a variant's ratio is the median over repeats of (its time / the floor's time in
the same repeat). Variants: ``check="used"`` (the default), ``"none"`` (validated upstream);
with ``--against REV``, also the ``verify_batch`` of git revision REV (its
``specdec_core/sampling.py`` or ``batch.py``, loaded into a temporary module) — the before of a
change, in the same run. ``check="all"`` (it allocates float64 copies of both arrays) is timed
apart, 5 repeats interleaved with its own floor, so that it does not disturb the others' caches.

Goals (issue 24 item 9), in one run, B = 64, γ = 4, V = 32,000, float32 and float64:
  check="used" (default) ≤ 1.0 × the floor,   check="none" ≤ 0.5 × the floor.

Writes benchmarks/results/verify_batch.json (machine record, date, load, repeats, medians, ratios)
unless --no-store.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from specdec_core import speculative_generate, verify_batch
from specdec_core.distributions import draw
from specdec_core.measured import Machine
from specdec_core.measured.codec import write
from specdec_core.measured.timer import Stopwatch, time_calls, time_repeats
from specdec_core.toy import toy_draft, toy_target
from specdec_core.verify import correction_weights

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "verify_batch.json"
GOALS = {"used": 1.0, "none": 0.5}


def make_batch(B, gamma, V, rng, dtype=np.float32):
    """Target rows uniform-ish, draft rows peaked (a poor draft: most rounds reject early), the
    drafted tokens drawn from the draft rows by the library's one sampler."""
    P = rng.random((B, gamma + 1, V), dtype=np.float32).astype(dtype)
    P /= P.sum(-1, keepdims=True)
    Q = rng.random((B, gamma, V), dtype=np.float32).astype(dtype) ** 3
    Q /= Q.sum(-1, keepdims=True)
    X = np.array([[draw(Q[b, i], rng) for i in range(gamma)] for b in range(B)], dtype=np.int64)
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
        row = correction_weights(p[n], q[n]) if n < g1 - 1 else p[n]
        out_n[b], out_t[b] = n, draw(row, rng)
    return out_n, out_t


def verify_batch_at(rev: str):
    """``verify_batch`` as it was at git revision ``rev``, loaded into a temporary module."""
    for path in ("specdec_core/batch.py", "specdec_core/sampling.py"):
        shown = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode == 0 and "def verify_batch(" in shown.stdout:
            break
    else:
        raise SystemExit(f"--against {rev}: no verify_batch in specdec_core/batch.py or sampling.py")
    src = re.sub(r"from \.(\w)", r"from specdec_core.\1", shown.stdout)  # relative → absolute
    tmp = pathlib.Path(tempfile.mkdtemp()) / "verify_batch_before.py"
    tmp.write_text(src)
    spec = importlib.util.spec_from_file_location(tmp.stem, tmp)
    module = importlib.util.module_from_spec(spec)
    sys.modules[tmp.stem] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.verify_batch


def measure_dtype(dtype, B, gamma, V, repeats, old, rng) -> dict:
    P, Q, X = make_batch(B, gamma, V, rng, dtype)
    fns = {
        "floor": lambda: (P.sum(), Q.sum()),
        "used": lambda: verify_batch(P, Q, X, rng),
        "none": lambda: verify_batch(P, Q, X, rng, check="none"),
    }
    if old is not None:
        fns["before"] = lambda: old(P, Q, X, rng)
    times = time_repeats(fns, repeats)
    # check="all" allocates float64 copies of everything: timed apart (it would disturb the caches
    # of whatever runs after it), against its own interleaved floor, fewer repeats
    apart = time_repeats({"floor": fns["floor"], "all": lambda: verify_batch(P, Q, X, rng, check="all")}, 5)
    times["all"], floor_all = apart["all"], apart["floor"]
    floor = times["floor"]
    out = {"inputs_mb": round((P.nbytes + Q.nbytes) / 1e6, 1), "floor_ms": round(statistics.median(floor), 3)}
    for k in times:
        if k != "floor":
            ratio = statistics.median(t / f for t, f in zip(times[k], floor_all if k == "all" else floor))
            out[k] = {"median_ms": round(statistics.median(times[k]), 3), "ratio_to_floor": round(ratio, 3)}
    once = time_repeats({"loop": lambda: per_row_loop(P, Q, X, rng)}, 1, sweep=False)["loop"][0]
    out["per_row_loop_ms"] = round(once, 2)
    return out


def toy_rates(B, gamma) -> dict:
    T, D = toy_target(), toy_draft()
    clock = Stopwatch()
    res = speculative_generate(T, D, (), gamma=gamma, max_new_tokens=20000, rng=np.random.default_rng(1))
    dt = clock.seconds()
    P, Q, X = make_batch(B, gamma, 8, np.random.default_rng(2))
    rng = np.random.default_rng(3)
    per = time_calls({"v8": lambda: verify_batch(P, Q, X, rng)}, 200)["v8"].median
    return {
        "speculative_generate_rounds_per_s": round(res.rounds / dt),
        "verify_batch_V8_rounds_per_s": round(B * 1e3 / per),
    }


def report(res: dict) -> bool:
    ok = True
    for dt, r in res["results"].items():
        print(
            f"\n[measured] B={res['B']}, gamma={res['gamma']}, V={res['V']}, {dt}: inputs {r['inputs_mb']} MB"
        )
        print(f"  read-both-arrays floor:   {r['floor_ms']:8.2f} ms")
        for k in ("used", "none", "all", "before"):
            if k in r:
                goal = GOALS.get(k)
                verdict = (
                    ""
                    if goal is None
                    else f"  goal ≤ {goal}: {'met' if r[k]['ratio_to_floor'] <= goal else 'MISSED'}"
                )
                ok &= goal is None or r[k]["ratio_to_floor"] <= goal
                label = f'check="{k}"' if k != "before" else f"at {res['against']}"
                print(
                    f"  {label:24s}  {r[k]['median_ms']:8.2f} ms   {r[k]['ratio_to_floor']:.2f} × floor{verdict}"
                )
        print(f"  per-row Python loop:      {r['per_row_loop_ms']:8.2f} ms (one run)")
    t = res["toy"]
    print(f"\n[measured] toy speculative_generate γ=4: {t['speculative_generate_rounds_per_s']:,} rounds/s;")
    print(f"[measured] verify_batch V=8, B={res['B']}: {t['verify_batch_V8_rounds_per_s']:,} rounds/s")
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=41)
    ap.add_argument("--against", default=None, help="git revision whose verify_batch is timed too")
    ap.add_argument("--no-store", action="store_true")
    args = ap.parse_args(argv)
    if args.repeats < 3:
        ap.error("--repeats must be at least 3")
    B, gamma, V = 64, 4, 32000
    machine = Machine.now()
    clock = Stopwatch()
    old = verify_batch_at(args.against) if args.against else None
    rng = np.random.default_rng(0)
    results = {
        np.dtype(d).name: measure_dtype(d, B, gamma, V, args.repeats, old, rng)
        for d in (np.float32, np.float64)
    }
    res = {
        "B": B,
        "gamma": gamma,
        "V": V,
        "repeats": args.repeats,
        "how": "interleaved rounds (rotating order); ratio = median over rounds of variant / floor in that round",
        "floor": "P.sum() and Q.sum(): reading both input arrays once",
        "goals": {f'check="{k}"': f"≤ {v} × floor" for k, v in GOALS.items()},
        "against": args.against,
        "results": results,
        "toy": toy_rates(B, gamma),
    }
    ok = report(res)
    res["goals_met"] = ok
    res["machine"] = machine.finished(wall_minutes=round(clock.seconds() / 60, 2))
    print("\n" + res["machine"].how("benchmarks/bench_verify_batch.py"))
    if not args.no_store:
        write(res, RESULTS)
        print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Python-side update time of every lab (``specdec_core.labs``): median and p95 over varied updates.

Run: .venv/bin/python benchmarks/bench_labs.py [--updates N]   (writes benchmarks/results/labs.json)

One update = ``lab.set(key=value)`` for one control, which runs what a slider move runs in the
kernel: the pure ``texts(state)``, the figure update (blitted PNG frame) and the widget values
sent to the browser. Moves are seeded (``numpy.random.default_rng(2026)``): a control is picked at
random; a slider moves 1 to 3 steps from where it is (as a drag does), a dropdown/toggle jumps to
another option, a button is pressed. Five warm-up updates are not counted. Wall and CPU time are
reported with the load average before and after, because on a shared machine wall time follows
the load. Goal (issue 11): p95 ≤ 30 ms per lab. Not a test: timings vary with machine load.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np

from specdec_core import labs
from specdec_core.labs.base import Lab, LabSpec
from specdec_core.measured import Machine, time_calls
from specdec_core.measured.codec import write
from specdec_core.questions import TRUTH_QUESTION

RESULTS = os.path.join(os.path.dirname(__file__), "results", "labs.json")
GOAL_P95_MS = 30.0


def all_labs() -> dict:
    """name -> factory for every lab the package exports (specs, the stepper, one quiz)."""
    out = {}
    for name in sorted(labs.__all__):
        obj = getattr(labs, name)
        if isinstance(obj, LabSpec):
            out[obj.name] = lambda spec=obj: Lab(spec)
    out["stepper"] = labs.stepper_lab
    out["quiz"] = lambda: labs.quiz_lab(TRUTH_QUESTION)
    return out


def next_move(lab: Lab, rng) -> tuple:
    keys = list(lab.controls) + list(lab.actions)
    key = keys[rng.integers(len(keys))]
    if key in lab.actions:
        return ("press", key)
    ctl = lab.spec.controls[key]
    now = lab.state[key]
    if ctl.kind in ("int", "float"):
        n = round((ctl.hi - ctl.lo) / ctl.step)
        i = round((now - ctl.lo) / ctl.step) + rng.choice([-3, -2, -1, 1, 2, 3]).item()
        i = min(max(i, 0), n)
        v = ctl.lo + i * ctl.step
        return ("set", key, round(v) if ctl.kind == "int" else round(v, 10))
    if ctl.kind == "checkbox":
        return ("set", key, not now)
    opts = [v for _, v in ctl.options if v != now] or [now]
    return ("set", key, opts[rng.integers(len(opts))])


def bench(factory, n_updates: int, rng) -> dict:
    lab = factory()
    wall, cpu = [], []
    for i in range(n_updates + 5):
        move = next_move(lab, rng)
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            if move[0] == "press":
                lab.press(move[1])
            else:
                lab.set(**{move[1]: move[2]})
        except Exception as exc:  # noqa: BLE001  (a lab bug: report it, keep benchmarking the others)
            return {"error": f"{type(exc).__name__}: {exc}", "move": list(move), "state": repr(lab.state)}
        if i >= 5:
            wall.append((time.perf_counter() - t0) * 1e3)
            cpu.append((time.process_time() - c0) * 1e3)

    def p95(xs):
        return float(np.percentile(xs, 95))

    return {
        "updates": len(wall),
        "wall_median_ms": statistics.median(wall),
        "wall_p95_ms": p95(wall),
        "cpu_median_ms": statistics.median(cpu),
        "cpu_p95_ms": p95(cpu),
    }


def reference_frame_ms(n: int = 15) -> float:
    """Median time of one fixed reference task: a 740 × 240 px figure with a bar chart, a line,
    ticks and a title, fully drawn and encoded (``figure_png``). Timed before and after the labs,
    it tells how fast this machine ran *now* (on a shared VM the same code was measured 1.8×
    apart within an hour), so runs at different times can be compared."""
    from specdec_core.plots.frames import figure_png, lab_figure

    def figure():  # drawn untimed (the flush); only its encoding is timed
        fig = lab_figure(740, 240)
        ax = fig.add_axes((0.08, 0.2, 0.9, 0.7))
        ax.bar(range(12), np.arange(12) % 5 + 1, hatch="//")
        ax.plot(range(12), np.linspace(1, 5, 12))
        ax.set_title("reference frame")
        ax.set_xlabel("x")
        made.append(fig)

    made = []
    encode = {"frame": lambda: figure_png(made.pop())}
    figure()  # for the untimed sweep
    return time_calls(encode, n, flush=figure)["frame"].median


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--updates", type=int, default=60)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args()
    if args.updates < 50:
        ap.error("--updates must be at least 50")
    rng = np.random.default_rng(2026)
    load_before = os.getloadavg()
    machine = Machine.now(threads=1)
    ref_before = reference_frame_ms()
    rows = {}
    for name, factory in all_labs().items():
        rows[name] = bench(factory, args.updates, rng)
        r = rows[name]
        if "error" in r:
            print(f"[error]    {name:<11} {r['error']} after {r['move']} at {r['state']}", flush=True)
            continue
        print(
            f"[measured] {name:<11} wall median {r['wall_median_ms']:6.1f} ms  p95 {r['wall_p95_ms']:6.1f} ms"
            f" · CPU median {r['cpu_median_ms']:5.1f} ms  p95 {r['cpu_p95_ms']:5.1f} ms"
            f"  ({r['updates']} updates)",
            flush=True,
        )
    load_after = os.getloadavg()
    ref_after = reference_frame_ms()
    meta = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine.finished(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "goal_p95_ms": GOAL_P95_MS,
        "reference_frame_ms_before_after": [round(ref_before, 2), round(ref_after, 2)],
        "how": "lab.set(one control) per update, seeded moves; perf_counter and process_time",
    }
    print(
        f"[measured] load average (1, 5, 15 min) before {meta['load_average_before']}, after "
        f"{meta['load_average_after']}; {machine.how('benchmarks/bench_labs.py')}"
    )
    print(
        f"[measured] machine speed now: reference frame {ref_before:.1f} ms before, {ref_after:.1f} ms after "
        "(see reference_frame_ms)"
    )
    slow = [n for n, r in rows.items() if "error" in r or r["cpu_p95_ms"] > GOAL_P95_MS]
    print(f"CPU p95 above the {GOAL_P95_MS:.0f} ms goal (or failed): {', '.join(slow) or 'none'}")
    if not args.no_save:
        write({"meta": meta, "labs": rows}, RESULTS)


if __name__ == "__main__":
    main()

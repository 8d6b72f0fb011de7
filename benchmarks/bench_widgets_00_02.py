"""Time one widget update (callback + redraw to PNG) for notebook 01's explorer and 02's lab.

    .venv/bin/python benchmarks/bench_widgets_00_02.py

Prints *measured* milliseconds per update on this machine: wall-clock median and 90th percentile
over a sweep of slider moves, and the median CPU time of this process (goal: well under 100 ms). Also splits one explorer update into its text
part (pure library calls) and its redraw part, and times the static figure builders.
"""
from __future__ import annotations

import os
import platform
import statistics
import time

import matplotlib

matplotlib.use("Agg")  # a script: no display (the library itself never selects a backend)

import matplotlib.pyplot as plt  # noqa: E402

from specdec_core import WORKED  # noqa: E402
from specdec_core.plots.overview import overview_figure  # noqa: E402
from specdec_core.plots.residual import rules_figure  # noqa: E402
from specdec_core.verify import CORRECTION_RULES  # noqa: E402
from specdec_core.widgets.acceptance import (SLIDER_STEP, acceptance_explorer,  # noqa: E402
                                             acceptance_texts)
from specdec_core.widgets.residual import corrections_lab  # noqa: E402


def timed(actions, warmup=3):
    """Median and p90 wall time, and median CPU time of this process, in ms per action.

    On a shared machine the wall time includes waiting for a core; the CPU time does not, so
    it shows what an update costs on an idle machine.
    """
    for act in actions[:warmup]:
        act()
    wall, cpu = [], []
    for act in actions:
        t0, c0 = time.perf_counter(), time.process_time()
        act()
        wall.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    wall.sort()
    return statistics.median(wall), wall[int(0.9 * (len(wall) - 1))], statistics.median(cpu), len(wall)


def slider_moves(sliders, steps=8):
    """Move each slider up and down by one step at a time (each move = one update)."""
    acts = []
    for s in sliders:
        for k in range(steps):
            v = round(0.05 + SLIDER_STEP * (k % 4), 10)
            acts.append(lambda s=s, v=v: setattr(s, "value", v))
    return acts


def report(name, result):
    med, p90, cpu, n = result
    print(f"[measured] {name:<42} wall median {med:6.1f} ms  p90 {p90:6.1f} ms   "
          f"CPU median {cpu:6.1f} ms   ({n} runs)")


def main():
    print(f"python {platform.python_version()}, matplotlib {matplotlib.__version__}, "
          f"{platform.machine()}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    box = acceptance_explorer()
    report("01 explorer: slider move (3 symbols)", timed(slider_moves(box.p_sliders + box.q_sliders)))
    box.count.value = 6
    report("01 explorer: slider move (6 symbols)", timed(slider_moves(box.p_sliders + box.q_sliders)))
    counts = [lambda n=n: setattr(box.count, "value", n) for n in (3, 6) * 6]
    report("01 explorer: symbol count change", timed(counts))
    pw, qw = box.weights()
    report("01 explorer: texts only (acceptance_texts)", timed([lambda: acceptance_texts(pw, qw)] * 50))
    report("01 explorer: redraw only (PNG)", timed([lambda: box.view.png(pw, qw)] * 20))

    lab = corrections_lab()
    report("02 lab: slider move", timed(slider_moves(lab.p_sliders + lab.q_sliders)))
    rules = [lambda r=r: setattr(lab.rule, "value", r) for r in CORRECTION_RULES * 4]
    report("02 lab: rule change", timed(rules))

    def static(builder):
        def run():
            plt.close(builder())
        return run
    report("static: overview_figure (build only)", timed([static(overview_figure)] * 5, warmup=1))
    report("static: rules_figure (build only)",
           timed([static(lambda: rules_figure(WORKED.p, WORKED.q))] * 5, warmup=1))


if __name__ == "__main__":
    main()

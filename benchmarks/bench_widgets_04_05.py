"""Milliseconds per widget update for notebooks 04 and 05.

Run: .venv/bin/python benchmarks/bench_widgets_04_05.py
Each update sets one slider, which runs the whole callback: the library call, the artist
updates and the PNG render into the widget's ``Image`` (what the browser receives).
A trivial one-line figure's draw is timed too, as a yardstick for the machine's load.
Not a test: timings vary with machine load.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from matplotlib.figure import Figure  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from specdec_core.widgets.counts import count_widget  # noqa: E402
from specdec_core.widgets.timing import timing_widget  # noqa: E402


def bench(name, box, moves, repeat=3):
    times, cpu = [], []
    for _ in range(repeat):
        for slider, value in moves:
            t0, c0 = time.perf_counter(), time.process_time()
            slider.value = value
            times.append((time.perf_counter() - t0) * 1e3)
            cpu.append((time.process_time() - c0) * 1e3)
    print(f"[measured] {name:<24} update (callback + PNG render) median {statistics.median(times):6.1f} ms "
          f"(CPU {statistics.median(cpu):5.1f} ms), max {max(times):6.1f} ms ({len(times)} updates)")


def yardstick():
    fig = Figure(figsize=(6, 3))
    FigureCanvasAgg(fig)
    fig.add_subplot().plot([1, 2, 3])
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        fig.canvas.draw()
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"[measured] {'yardstick (1-line fig)':<24} draw median {statistics.median(times):6.1f} ms; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


def drag(slider, start, stop, step):
    """Slider positions a learner passes through when dragging from start to stop."""
    n = int(round(abs(stop - start) / step))
    sign = 1 if stop >= start else -1
    vals = [start + sign * k * step for k in range(n + 1)]
    return [(slider, round(v, 4) if isinstance(v, float) else v) for v in vals]


def main():
    yardstick()
    cw = count_widget()
    bench("04 drag α", cw, drag(cw.alpha, 0.30, 0.95, 0.01), repeat=1)
    bench("04 jumps α/γ", cw, [(cw.alpha, 0.3), (cw.alpha, 0.95), (cw.gamma, 16), (cw.gamma, 0),
                               (cw.alpha, 0.6), (cw.gamma, 2)])
    tw = timing_widget()
    c = tw.controls
    bench("05 drag α", tw, drag(c["alpha"], 0.30, 0.95, 0.01), repeat=1)
    bench("05 drag verify base", tw, drag(c["verify_base_ms"], 2.0, 20.0, 0.5), repeat=1)
    bench("05 jumps, all sliders", tw, [(c["alpha"], 0.9), (c["gamma"], 8), (c["verify_base_ms"], 12.0),
                                        (c["verify_per_position_ms"], 1.0), (c["draft_per_token_ms"], 3.0),
                                        (c["baseline_ms"], 10.0), (c["alpha"], 0.6), (c["gamma"], 2),
                                        (c["verify_base_ms"], 6.0), (c["verify_per_position_ms"], 0.0),
                                        (c["draft_per_token_ms"], 1.0), (c["baseline_ms"], 6.0)])


if __name__ == "__main__":
    main()

"""Click latency of notebook 03's round stepper: ms per click (button callback + redraw of the
round view and counters), measured on this machine. Also the cost of the static round figure.

Run:  .venv/bin/python benchmarks/bench_widgets_03.py
Target: a click well under 100 ms. Timings are [measured] and vary with machine load.
"""
import statistics
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from specdec_core.plots.rounds import round_figure  # noqa: E402
from specdec_core.widgets.stepper import demo_records, round_stepper  # noqa: E402


def per_click_ms(repeats: int = 20) -> list[float]:
    box = round_stepper(demo_records())
    n = len(box.steps)
    times = []
    for _ in range(repeats):
        for button, clicks in ((box.next_button, n - 1), (box.back_button, n - 1)):
            for _ in range(clicks):  # every click moves one step, so every click redraws
                t = time.perf_counter()
                button.click()
                times.append((time.perf_counter() - t) * 1e3)
    return times


def main():
    times = per_click_ms()
    times.sort()
    print(f"[measured] stepper click (callback + redraw): median {statistics.median(times):.3f} ms, "
          f"p95 {times[int(0.95 * len(times))]:.3f} ms, max {times[-1]:.3f} ms over {len(times)} clicks")
    recs = demo_records()
    t = time.perf_counter()
    for _ in range(3):
        fig = round_figure(recs, 0)
        fig.canvas.draw()
        plt.close(fig)
    print(f"[measured] static round figure (build + draw): {(time.perf_counter() - t) / 3 * 1e3:.1f} ms")


if __name__ == "__main__":
    main()

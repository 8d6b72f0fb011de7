"""Milliseconds per widget update (callback + redraw) for notebooks 06 and 08. Plain script:
    .venv/bin/python benchmarks/bench_widgets_06_07.py
Timings depend on the machine and on whatever else runs; nothing here is asserted."""
import statistics
import time

from specdec_core.widgets.kv import kv_calculator
from specdec_core.widgets.transforms import transform_lab


def bench(name, box, key, values, repeat=3):
    times = []
    for _ in range(repeat):
        for val in values:
            t0 = time.perf_counter()
            box.controls[key].value = val
            times.append((time.perf_counter() - t0) * 1000)
    print(f"{name:<40} median {statistics.median(times):6.1f} ms   max {max(times):6.1f} ms   (n = {len(times)})")


if __name__ == "__main__":
    kv = kv_calculator()
    bench("06 calculator: sequences slider", kv, "sequences", [1, 8, 32, 64, 128, 256])
    bench("06 calculator: γ slider", kv, "gamma", [0, 2, 4, 8, 16])
    bench("06 calculator: budget slider", kv, "budget_gib", [0.0, 10.0, 40.0, 80.0, 320.0])
    lab = transform_lab()
    bench("08 lab: temperature slider", lab, "temperature", [0.01, 0.1, 0.5, 2.0, 100.0])
    bench("08 lab: setup dropdown", lab, "setup", ["correct", "greedy_draft", "draft_only", "target_only", "unreported"])
    lab.controls["transform"].value = "top_p"
    bench("08 lab: top-p slider", lab, "top_p", [0.0, 0.3, 0.7, 1.0])

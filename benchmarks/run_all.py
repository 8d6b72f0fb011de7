"""Run every benchmark script in benchmarks/ (``make bench``). The real-model measurement runs as
``bench_llm.py --quick`` (a smoke run under 2 minutes of CPU, writing
benchmarks/results/llm-quick.json); pass --full-llm for the full measurement (about 20 minutes on a
quiet 2-core machine, 55 under load; it rewrites specdec_core/results/llm.json, which notebooks 06,
08 and 09 display) or --skip-llm to leave it out. bench_binder.py builds a fresh Binder
environment (3-10 minutes, network to PyPI); --skip-binder leaves it out."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    skip_llm = "--skip-llm" in sys.argv
    full_llm = "--full-llm" in sys.argv
    skip_binder = "--skip-binder" in sys.argv
    failed = []
    for script in sorted(glob.glob(os.path.join(HERE, "bench_*.py"))):
        name = os.path.basename(script)
        if (skip_llm and name.startswith("bench_llm")) or (skip_binder and name == "bench_binder.py"):
            continue
        print(f"\n===== {name} =====", flush=True)
        extra = ["--quick"] if name == "bench_llm.py" and not full_llm else []
        if subprocess.run([sys.executable, script] + extra, cwd=os.path.dirname(HERE)).returncode:
            failed.append(name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")

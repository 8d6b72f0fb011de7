"""Run every benchmark script in benchmarks/ (``make bench``). Pass --skip-llm to leave out the
real-model measurement (benchmarks/bench_llm.py: about 25 minutes on 2 cores; it rewrites
benchmarks/results/llm.json, which notebook 09 displays)."""
from __future__ import annotations

import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    skip_llm = "--skip-llm" in sys.argv
    failed = []
    for script in sorted(glob.glob(os.path.join(HERE, "bench_*.py"))):
        name = os.path.basename(script)
        if skip_llm and name.startswith("bench_llm"):
            continue
        print(f"\n===== {name} =====", flush=True)
        if subprocess.run([sys.executable, script], cwd=os.path.dirname(HERE)).returncode:
            failed.append(name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")

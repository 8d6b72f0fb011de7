"""Measure how long nbval takes per notebook and for the whole collection, on this machine.

    .venv/bin/python benchmarks/bench_nbval.py [notebooks/NN-*.ipynb ...]

Each notebook is run in its own pytest --nbval process (wall time, the one timer's Stopwatch), then all
together in one process, as the test command does. Prints *measured* seconds.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys

from specdec_core.measured.timer import Stopwatch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(paths):
    clock = Stopwatch()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return clock.seconds(), proc.returncode, proc.stdout.strip().splitlines()[-1:]


def main(argv):
    paths = argv or sorted(glob.glob("notebooks/*.ipynb", root_dir=ROOT))
    sys.path.insert(0, ROOT)
    from specdec_core.measured import Machine

    print(f"[measured] nbval wall times; {Machine.now().how('benchmarks/bench_nbval.py')}")
    for p in paths:
        dt, rc, last = run([p])
        print(f"  {p:45s} {dt:6.1f} s  {'ok' if rc == 0 else 'FAILED'}  {last[0] if last else ''}")
    dt, rc, last = run(paths)
    print(f"  {'all together':45s} {dt:6.1f} s  {'ok' if rc == 0 else 'FAILED'}  {last[0] if last else ''}")


if __name__ == "__main__":
    main(sys.argv[1:])

"""What a learner waits for on a cold Binder launch, rehearsed here (tools/binder_rehearsal.py):
a fresh Python 3.11 venv from binder/requirements.txt only, ./binder/postBuild, JupyterLab
listening. Measured: seconds per step, the environment's size on disk, the number of
distributions. Results: benchmarks/results/binder.json (with date, machine and load average).

    python benchmarks/bench_binder.py [--repeats N]

pip's download cache is used as on any machine that installed these pins before (Binder's own
build downloads them, so its wall time is longer by the download); nothing else is kept between
repeats. Binder also builds and pushes a container image, which this machine cannot do.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import binder_rehearsal  # noqa: E402

sys.path.insert(0, str(ROOT))
from specdec_core.measured import Machine  # noqa: E402
from specdec_core.measured.codec import write  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "binder.json"


def one_run() -> dict:
    scratch = Path(tempfile.mkdtemp(prefix="specdec-bench-binder-"))
    try:
        load_before = os.getloadavg()
        r = binder_rehearsal.Rehearsal(scratch).prepare()
        lab = binder_rehearsal.start_lab(r)
        lab.stop()
        sizes = r.sizes()
        return {
            "seconds": {k: round(v, 1) for k, v in r.seconds.items()},
            "seconds_env_total": round(sum(v for k, v in r.seconds.items() if k != "lab_listening"), 1),
            **sizes,
            "load_avg_before": [round(x, 2) for x in load_before],
            "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args(argv)
    machine = Machine.now()
    runs = [one_run() for _ in range(args.repeats)]
    totals = [r["seconds_env_total"] for r in runs]
    result = {
        "what": "fresh venv from binder/requirements.txt + ./binder/postBuild + JupyterLab listening",
        "machine": machine.finished(),
        "pip_download_cache": "warm (pip's own cache only)",
        "runs": runs,
        "env_install_seconds_median": statistics.median(totals),
        "env_MB": round(runs[-1]["env_bytes"] / 1e6),
    }
    write(result, OUT)
    for r in runs:
        print(
            f"[measured] Binder rehearsal on {result['machine'].cores} cores "
            f"(load {r['load_avg_before'][0]:.1f} → {r['load_avg_after'][0]:.1f}): "
            f"venv {r['seconds']['venv']} s, pip install {r['seconds']['pip_install']} s, "
            f"postBuild {r['seconds']['postBuild']} s, Lab listening {r['seconds']['lab_listening']} s; "
            f"env {r['env_bytes'] / 1e6:.0f} MB, {r['distributions']} distributions"
        )
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

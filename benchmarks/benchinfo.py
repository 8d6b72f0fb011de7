"""What every benchmark records about where and when it ran (the one home of that record).

Benchmarks are scripts (``python benchmarks/bench_x.py``), so this folder is on ``sys.path`` and
they import it as ``benchinfo``.
"""

from __future__ import annotations

import datetime
import os
import platform


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo (``platform`` as a fallback)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine(blas: bool = False) -> dict:
    """CPU, cores, Python, platform, the UTC date and the load average now; with ``blas``, numpy's
    version and its BLAS pools (library, threads) from threadpoolctl."""
    info = {
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load_avg_start": list(os.getloadavg()),
    }
    if blas:
        import numpy as np
        from threadpoolctl import threadpool_info

        info["numpy"] = np.__version__
        info["blas"] = [(i.get("internal_api"), i.get("num_threads")) for i in threadpool_info()]
    return info

"""What every benchmark records about where and when it ran (the one home of that record).

Benchmarks are scripts (``python benchmarks/bench_x.py``), so this folder is on ``sys.path`` and
they import it as ``benchinfo``.
"""

from __future__ import annotations

import datetime
import os
import platform


def cpu_name() -> str:
    """The CPU's model name (the one reader: :func:`specdec_core.llm.report.cpu_name`)."""
    from specdec_core.llm.report import cpu_name as read

    return read()


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

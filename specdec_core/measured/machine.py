"""Where and when a measurement ran: the one machine record, its one writer and its one line.

Every benchmark starts with :meth:`Machine.now` and ends with :meth:`Machine.finished`; every
notebook prints :meth:`Machine.how`. :func:`vm_hwm_mib` is the one reader of a process's peak
resident memory.
"""

from __future__ import annotations

import datetime
import os
import platform

from .codec import Count, NonNegative, Positive, Record, Utc

__all__ = ["Machine", "cpu_name", "vm_hwm_mib"]


def _proc_line(path: str, prefix: str) -> str | None:
    """The first line of a /proc file that starts with ``prefix`` (None: no such line or file)."""
    try:
        with open(path) as f:
            return next((line for line in f if line.startswith(prefix)), None)
    except OSError:
        return None


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo (the machine architecture as a fallback)."""
    line = _proc_line("/proc/cpuinfo", "model name")
    return line.split(":", 1)[1].strip() if line else platform.machine() or "unknown CPU"


def vm_hwm_mib(pid: int | str = "self") -> float:
    """Peak resident memory (VmHWM) of process ``pid`` in MiB, from /proc/<pid>/status; NaN where
    the kernel does not report it."""
    if not (pid == "self" or (isinstance(pid, int) and not isinstance(pid, bool) and pid > 0)):
        raise ValueError(f"pid must be 'self' or a positive process id, got {pid!r}")
    line = _proc_line(f"/proc/{pid}/status", "VmHWM")
    return int(line.split()[1]) / 1024 if line else float("nan")


def _now_utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


#: a load average: 1, 5 and 15 minutes
Load = tuple[NonNegative, NonNegative, NonNegative]


class Machine(Record):
    """CPU, cores, Python, platform, numpy, BLAS pools (library, threads), the BLAS threads the
    timed parts used (``threads``; None when a benchmark varies them itself), the UTC date, and the
    load average (1, 5, 15 min) at the start and at the end (None while running)."""

    cpu: str
    cores: Positive
    python: str
    platform: str
    date_utc: Utc
    load_avg_start: Load
    numpy: str | None = None
    blas: tuple[tuple[str, Count], ...] = ()
    threads: Positive | None = None
    load_avg_end: Load | None = None
    wall_minutes: NonNegative | None = None
    #: the cores the process was allowed to run on (``os.sched_getaffinity``); () when unknown
    affinity: tuple[Count, ...] = ()

    @classmethod
    def now(cls, threads: int | None = None) -> Machine:
        """The record of this machine at this moment (the one writer). ``threads``: the BLAS
        threads the measurement uses (a positive int, or None when it varies them itself)."""
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be a positive int or None, got {threads!r}")
        import numpy as np
        from threadpoolctl import threadpool_info

        return cls(
            cpu=cpu_name(),
            cores=os.cpu_count() or 0,
            python=platform.python_version(),
            platform=platform.platform(),
            date_utc=_now_utc(),
            load_avg_start=tuple(os.getloadavg()),
            numpy=np.__version__,
            blas=tuple((str(i.get("internal_api")), int(i.get("num_threads"))) for i in threadpool_info()),
            threads=threads,
            affinity=tuple(sorted(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else (),
        )

    def finished(self, wall_minutes: float | None = None) -> Machine:
        """This record with the load average now (the end of the run) and the wall time."""
        if wall_minutes is not None and not (isinstance(wall_minutes, (int, float)) and wall_minutes >= 0):
            raise ValueError(f"wall_minutes must be a non-negative number or None, got {wall_minutes!r}")
        return self.replace(load_avg_end=tuple(os.getloadavg()), wall_minutes=wall_minutes)

    def how(self, script: str | None = None, *, during: tuple[float, float] | None = None) -> str:
        """The one line a notebook prints about where and when numbers were measured: CPU,
        cores, BLAS threads, date, load average at the start → end (or ``during`` = (lowest,
        highest) over the timed runs), and the ``script`` that measured them."""
        if self.threads is not None:
            blas = f"{self.threads} BLAS thread{'s' if self.threads != 1 else ''}"
        else:
            blas = "BLAS " + (", ".join(f"{api} × {n} threads" for api, n in self.blas) or "?")
        if during is not None:
            load = f"load average {min(during):.1f}–{max(during):.1f} during the timed runs"
        elif self.load_avg_end is not None:
            load = f"load average {self.load_avg_start[0]:.1f} → {self.load_avg_end[0]:.1f}"
        else:
            load = f"load average {self.load_avg_start[0]:.1f}"
        pinned = []
        if self.affinity and len(self.affinity) < self.cores:
            pinned = [f"pinned to core {', '.join(map(str, self.affinity))} (other work on the other cores)"]
        parts = [self.cpu, f"{self.cores} cores", blas, *pinned, self.date_utc, load] + (
            [script] if script else []
        )
        return ", ".join(parts)

"""The measurement layer: the one timer (:mod:`.timer`), records of what was measured (typed, with
ranges), where and when (:class:`Machine`), and the one codec that reads and writes each stored
results file in ``specdec_core/results`` (:mod:`.codec`, :mod:`.store`; package data, so
``pip install .`` carries it).

This is the I/O layer: the pure modules (``specdec_core/*.py``) never open files; what they need
from a measurement reaches them as a record from here. It imports only the pure layer.
"""

from .capstone import Capstone, Config, Run, measured_pass_costs, read_capstone
from .machine import Machine, cpu_name, vm_hwm_mib
from .records import CostCurve, Spread
from .store import RESULTS_DIR, read_stored, results_path, write_stored
from .studies import FeatureStudy, HardwareRun, PassCost, RoundingStudy
from .timer import Stopwatch, time_calls, time_repeats

__all__ = [
    "RESULTS_DIR",
    "Capstone",
    "Config",
    "CostCurve",
    "FeatureStudy",
    "HardwareRun",
    "Machine",
    "PassCost",
    "RoundingStudy",
    "Run",
    "Spread",
    "Stopwatch",
    "cpu_name",
    "measured_pass_costs",
    "read_capstone",
    "read_stored",
    "results_path",
    "time_calls",
    "time_repeats",
    "vm_hwm_mib",
    "write_stored",
]

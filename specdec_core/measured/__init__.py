"""The measurement layer: records of what was measured (typed, real ints and floats), where and
when (:class:`Machine`), and the one reader and writer of each stored results file in
``specdec_core/results`` (package data, so ``pip install .`` carries it).

This is the I/O layer: the pure modules (``specdec_core/*.py``) never open files; what they need
from a measurement reaches them as a record from here.
"""

from .capstone import (
    Capstone,
    Config,
    Run,
    capstone_cost_curve,
    measured_pass_costs,
    read_capstone,
    write_capstone,
)
from .machine import Machine, cpu_name, vm_hwm_mib
from .records import CostCurve, Spread
from .store import RESULTS_DIR, read_stored, results_path, write_stored
from .studies import FeatureStudy, HardwareRun, PassCost, RoundingStudy

__all__ = [
    "RESULTS_DIR",
    "Capstone",
    "Config",
    "CostCurve",
    "Machine",
    "Run",
    "Spread",
    "FeatureStudy",
    "HardwareRun",
    "PassCost",
    "RoundingStudy",
    "capstone_cost_curve",
    "cpu_name",
    "measured_pass_costs",
    "read_capstone",
    "read_stored",
    "results_path",
    "vm_hwm_mib",
    "write_capstone",
    "write_stored",
]

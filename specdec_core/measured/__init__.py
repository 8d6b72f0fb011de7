"""The measurement layer: records of what was measured (typed, with ranges), where and when
(:class:`Machine`), the one timer (:mod:`.timer`), and the one codec that reads and writes each
stored results file in ``specdec_core/results`` (:mod:`.codec`; package data, so
``pip install .`` carries it).

This is the I/O layer: the pure modules (``specdec_core/*.py``) never open files; what they need
from a measurement reaches them as a record from here. It imports only the pure layer. Its names
load on first use (``from specdec_core.measured import Capstone`` imports the capstone's records
only), so a module that needs one record does not import them all.
"""

import importlib

#: {public name: the module that defines it}
_HOMES = {
    "RESULTS_DIR": "store",
    "read_stored": "store",
    "results_path": "store",
    "write_stored": "store",
    "Capstone": "capstone",
    "Config": "capstone",
    "Run": "capstone",
    "measured_pass_costs": "capstone",
    "read_capstone": "capstone",
    "Machine": "machine",
    "cpu_name": "machine",
    "vm_hwm_mib": "machine",
    "CostCurve": "records",
    "Spread": "records",
    "FeatureStudy": "studies",
    "HardwareRun": "studies",
    "PassCost": "studies",
    "RoundingStudy": "studies",
    "Stopwatch": "timer",
    "time_calls": "timer",
    "time_repeats": "timer",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)


def __dir__():
    return __all__

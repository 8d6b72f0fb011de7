"""The measurement layer: records of what was measured (typed, real ints and floats), where and
when (:class:`Machine`), and the one reader and writer of each stored results file in
``specdec_core/results`` (package data, so ``pip install .`` carries it).

This is the I/O layer: the pure modules (``specdec_core/*.py``) never open files; what they need
from a measurement reaches them as a record from here.
"""

from .machine import Machine, cpu_name, vm_hwm_mib

__all__ = ["Machine", "cpu_name", "vm_hwm_mib"]

"""Kept for the benchmarks not yet moved to :class:`specdec_core.measured.Machine`, the one
machine record (its writer is ``Machine.now``, its line ``Machine.how``)."""

from __future__ import annotations

from specdec_core.measured import Machine, cpu_name

__all__ = ["cpu_name", "machine"]


def machine(blas: bool = True) -> dict:
    """:meth:`Machine.now` in its JSON form (``blas`` is ignored: the record always has it)."""
    return Machine.now().to_dict()

"""Where the stored results live (``specdec_core/results``: package data, so an installed copy reads
the same numbers; found from the package, never from the working directory), and their one reader
and writer, by the codec (:mod:`.codec`): each file holds one record, named in :data:`_RECORDS`."""

import importlib
import os
from pathlib import Path

from . import codec

__all__ = ["RESULTS_DIR", "read_stored", "results_path", "write_stored"]

#: The stored results the notebooks read: inside the package (package data).
RESULTS_DIR = Path(__file__).resolve().parent.parent / "results"


def results_path(name: str, results_dir: str | Path | None = None) -> Path:
    """The path of results file ``name`` (e.g. "llm.json") in ``results_dir`` or :data:`RESULTS_DIR`."""
    if not isinstance(name, str) or not name.endswith(".json") or "/" in name or os.sep in name:
        raise ValueError(f"name must be a file name ending in .json, got {name!r}")
    return (Path(results_dir) if results_dir is not None else RESULTS_DIR) / name


_RECORDS = {  # {file name: (module, record type)}: the module is imported on first use
    "hardware.json": ("studies", "HardwareRun"),
    "passcost.json": ("studies", "PassCost"),
    "features.json": ("studies", "FeatureStudy"),
    "rounding.json": ("studies", "RoundingStudy"),
    "llm.json": ("capstone", "Capstone"),
}


def _record_type(name: str) -> type:
    if name not in _RECORDS:
        raise ValueError(f"name must be one of {sorted(_RECORDS)}, got {name!r}")
    module, cls = _RECORDS[name]
    return getattr(importlib.import_module(f".{module}", __package__), cls)


def read_stored(name: str, results_dir: str | Path | None = None) -> codec.Record:
    """The record stored in results file ``name`` (one of the five) in :data:`RESULTS_DIR` or
    ``results_dir``; ValueError naming the file and the field when it is missing or unreadable."""
    return codec.read(_record_type(name), results_path(name, results_dir))


def write_stored(record: codec.Record, results_dir: str | Path | None = None) -> Path:
    """Write a record to its file (the name from its type), checked first; returns the path."""
    name = next((n for n, (_, cls) in _RECORDS.items() if type(record).__name__ == cls), None)
    if name is None or type(record) is not _record_type(name):
        kinds = ", ".join(cls for _, cls in _RECORDS.values())
        raise ValueError(f"record must be one of {kinds}, got {type(record).__name__}")
    return codec.write(record, results_path(name, results_dir))

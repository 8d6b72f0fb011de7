"""Where the stored results live and the one JSON reader and writer of them.

The benchmarks write into ``specdec_core/results`` (package data: ``pip install .`` carries it,
so an installed copy reads the same numbers); a notebook finds them from the package, never from
the working directory.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

__all__ = ["RESULTS_DIR", "Stored", "read_json", "read_stored", "results_path", "write_json"]

#: The stored results the notebooks read: inside the package (package data).
RESULTS_DIR = Path(__file__).resolve().parent.parent / "results"


def results_path(name: str, results_dir: str | Path | None = None) -> Path:
    """The path of results file ``name`` (e.g. "llm.json") in ``results_dir`` or :data:`RESULTS_DIR`."""
    if not isinstance(name, str) or not name.endswith(".json") or "/" in name or os.sep in name:
        raise ValueError(f"name must be a file name ending in .json, got {name!r}")
    return (Path(results_dir) if results_dir is not None else RESULTS_DIR) / name


def read_json(path: str | Path) -> dict:
    """The parsed JSON object at ``path``; ValueError naming the file when it is missing."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"no stored results {p}: run benchmarks/bench_{p.stem}.py (or its study) first")
    d = json.loads(p.read_text())
    if not isinstance(d, dict):
        raise ValueError(f"{p} does not hold a JSON object")
    return d


def _compact(text: str) -> str:
    """Lists of plain numbers on one line in the indented JSON."""
    return re.sub(
        r"\[\s+([-+\d.eE,\s]+?)\s+\]",
        lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]",
        text,
    )


def write_json(path: str | Path, obj: dict) -> None:
    """Write ``obj`` as indented JSON (number lists compact), numpy scalars as Python numbers."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(obj, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o))
    p.write_text(_compact(text) + "\n")


# ---------------------------------------------------------------- the smaller results files

_SCRIPTS = {
    "hardware.json": "benchmarks/bench_hardware.py",
    "passcost.json": "benchmarks/bench_passcost.py",
    "features.json": "benchmarks/feature_study.py",
    "rounding.json": "benchmarks/bench_rounding.py",
}


class Stored:
    """A results file with its machine record typed (:class:`Machine`) and its body as parsed
    (``data``; the capstone's ``llm.json`` has its own records, :mod:`.capstone`)."""

    def __init__(self, name: str, machine, data: dict):
        self.name, self.machine, self.data = name, machine, data

    @property
    def script(self) -> str:
        return _SCRIPTS.get(self.name, "benchmarks/")

    def how(self) -> str:
        """The one machine line, naming the benchmark that wrote the file."""
        return self.machine.how(self.script)

    def __getitem__(self, key):
        return self.data[key]


def read_stored(name: str, results_dir: str | Path | None = None) -> Stored:
    """The one reader of ``hardware.json``, ``passcost.json``, ``features.json`` and
    ``rounding.json`` (from :data:`RESULTS_DIR`, or ``results_dir``)."""
    from .machine import Machine

    if name not in _SCRIPTS:
        raise ValueError(f"name must be one of {sorted(_SCRIPTS)} (llm.json: read_capstone), got {name!r}")
    data = read_json(results_path(name, results_dir))
    return Stored(name, Machine.from_dict(data.get("machine")), data)

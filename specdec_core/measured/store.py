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
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from .studies import FeatureStudy, HardwareRun, PassCost, RoundingStudy

    #: A record of one of the smaller results files.
    StoredRecord = Union[HardwareRun, PassCost, FeatureStudy, RoundingStudy]

__all__ = ["RESULTS_DIR", "read_json", "read_stored", "results_path", "write_json", "write_stored"]

#: The stored results the notebooks read: inside the package (package data).
RESULTS_DIR = Path(__file__).resolve().parent.parent / "results"


def results_path(name: str, results_dir: str | Path | None = None) -> Path:
    """The path of results file ``name`` (e.g. "llm.json") in ``results_dir`` or :data:`RESULTS_DIR`."""
    if not isinstance(name, str) or not name.endswith(".json") or "/" in name or os.sep in name:
        raise ValueError(f"name must be a file name ending in .json, got {name!r}")
    return (Path(results_dir) if results_dir is not None else RESULTS_DIR) / name


class _NotANumber:
    """What ``NaN``, ``Infinity`` or ``-Infinity`` parsed into, until its place is found."""

    def __init__(self, text: str):
        self.text = text


def _find(obj, path: str = ""):
    """(path, constant) of the first :class:`_NotANumber` in a parsed object, e.g. ("sweep.reps", …)."""
    if isinstance(obj, _NotANumber):
        return path or "the top level", obj
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        found = _find(v, f"{path}[{k}]" if isinstance(k, int) else f"{path}.{k}" if path else str(k))
        if found:
            return found
    return None


def read_json(path: str | Path) -> dict:
    """The parsed JSON object at ``path``; ValueError naming the file when it is missing, is not
    valid JSON or holds ``NaN``/``Infinity`` (which Python's json module would otherwise accept,
    but JSON has no such numbers and no measurement stored here is one): "llm.json: sweep.seconds
    is NaN"."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"no stored results {p}: run benchmarks/bench_{p.stem}.py (or its study) first")
    try:
        d = json.loads(p.read_text(), parse_constant=_NotANumber)
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: not valid JSON ({e})") from None
    found = _find(d)
    if found:
        raise ValueError(f"{p}: {found[0]} is {found[1].text}, not a finite number")
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


def _records() -> dict[str, type]:
    from .studies import FeatureStudy, HardwareRun, PassCost, RoundingStudy

    return {
        "hardware.json": HardwareRun,
        "passcost.json": PassCost,
        "features.json": FeatureStudy,
        "rounding.json": RoundingStudy,
    }


def read_stored(name: str, results_dir: str | Path | None = None) -> StoredRecord:
    """The one reader of ``hardware.json`` (:class:`~.studies.HardwareRun`), ``passcost.json``
    (:class:`~.studies.PassCost`), ``features.json`` (:class:`~.studies.FeatureStudy`) and
    ``rounding.json`` (:class:`~.studies.RoundingStudy`), from :data:`RESULTS_DIR` or
    ``results_dir``: the typed record, its machine line by ``.how()``. Raises ValueError naming
    the file when it is missing or a field is unreadable."""
    records = _records()
    if name not in records:
        raise ValueError(f"name must be one of {sorted(records)} (llm.json: read_capstone), got {name!r}")
    path = results_path(name, results_dir)
    data = read_json(path)
    try:
        return records[name].from_json(data)
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path}: unreadable ({type(e).__name__}: {e})") from None
    except ValueError as e:
        raise ValueError(in_file(path, e)) from None


def in_file(path: str | Path, error: Exception) -> str:
    """An error's message, led by the file it came from (once)."""
    msg = str(error)
    return msg if msg.startswith(str(path)) else f"{path}: {msg}"


def write_stored(record: StoredRecord, results_dir: str | Path | None = None) -> Path:
    """Write a study's record to its file (the name from its type); returns the path."""
    names = {cls: n for n, cls in _records().items()}
    if type(record) not in names:
        raise ValueError(
            f"record must be one of {sorted(c.__name__ for c in names)}, got {type(record).__name__}"
        )
    path = results_path(names[type(record)], results_dir)
    write_json(path, record.to_json())
    return path

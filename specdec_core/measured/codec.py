"""The one codec of the stored results: every record is a :class:`Record` (a msgspec ``Struct``)
whose field types say what the file may hold, ranges included; :func:`read` and :func:`write`
are the only places a results file is parsed or written.

msgspec checks types and ranges while it parses (a negative time, ``"x"`` for a bool, a missing
section, an unknown field, ``1e400``: all refused); a refusal names the file and the field, keys
included. A record built in memory is checked when written: :func:`write` reads the bytes back
before it touches the file, so a file that could not be read is never written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import UnionType
from typing import Annotated, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import msgspec

__all__ = ["Count", "Positive", "Ms", "NonNegative", "Probability", "Record", "Schema", "Temperature", "Utc"]
__all__ += ["decode", "encode", "read", "write"]

R = TypeVar("R")

# ---------------------------------------------------------------- the kinds of stored numbers

#: a count or a size (tokens, bytes, repeats, γ): an int ≥ 0 (2.0 is refused)
Count = Annotated[int, msgspec.Meta(ge=0)]
#: a count that cannot be 0 (threads, positions scored, repeats of a timing)
Positive = Annotated[int, msgspec.Meta(ge=1)]
#: a time or a rate: a float > 0, finite
Ms = Annotated[float, msgspec.Meta(gt=0, le=1e15)]
#: a float ≥ 0, finite (seconds of a stage, a ratio, a TV distance, a gap)
NonNegative = Annotated[float, msgspec.Meta(ge=0, le=1e15)]
#: a probability, an acceptance rate α or a share: a float in [0, 1]
Probability = Annotated[float, msgspec.Meta(ge=0, le=1)]
#: a sampling temperature: 0 (greedy) to 100, finite (also as a JSON object's key)
Temperature = Annotated[float, msgspec.Meta(ge=0, le=100)]
#: when a part of a run happened, as :meth:`Machine.now` writes it: "2026-12-06 05:49 UTC"
Utc = Annotated[str, msgspec.Meta(pattern=r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$")]
#: the file format these records write; a file of another schema is refused, naming the field
Schema = Literal[3]


class Record(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A stored record: immutable, typed, and refusing fields it does not declare."""

    def replace(self: R, **changes) -> R:
        """A copy with ``changes`` (the record's fields by name)."""
        return msgspec.structs.replace(self, **changes)


def encode(record: Record | dict) -> bytes:
    """The JSON bytes of ``record`` (indented; lists of plain numbers on one line)."""
    text = msgspec.json.format(msgspec.json.encode(record), indent=1).decode()
    return re.sub(
        r"\[\s+([-+\d.eE,\s]+?)\s+\]",
        lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]",
        text,
    ).encode()


def decode(cls: type[R], data: bytes | str, where: str) -> R:
    """``data`` (JSON) as a ``cls``; ValueError "``where``: field: what is wrong" otherwise."""
    try:
        return msgspec.json.decode(data, type=cls)
    except msgspec.ValidationError as e:
        what, _, path = str(e).partition(" - at `")
        if path.startswith("key` in `"):  # a bad key of a JSON object
            what, path = f"{what} (a key)", path.removeprefix("key` in `")
        field = _keys(cls, data, path.rstrip("`").removeprefix("$").removeprefix("."))  # "runs[3].alpha"
        raise ValueError(f"{where}: {field or 'the top level'}: {what}") from None
    except msgspec.DecodeError as e:
        raise ValueError(f"{where}: not valid JSON ({_constant(data) or e})") from None


def _keys(cls: type, data: bytes | str, path: str) -> str:
    """msgspec's path with each ``[...]`` (a value of a JSON object) replaced by the first key whose
    value is refused on its own ("points[...].median" → "points[4].median"); else as it was."""
    tp, out = cls, ""
    try:
        obj = json.loads(data)
        for name, index in re.findall(r"\.?([^.\[]+)|(\[[^\]]*\])", path if "[...]" in path else ""):
            while get_origin(tp) in (Annotated, Union, UnionType):  # to the type inside
                tp = next(a for a in get_args(tp) if a is not type(None))
            if name:  # a record's field
                obj, tp, out = obj[name], get_type_hints(tp, include_extras=True)[name], f"{out}.{name}"
            elif index == "[...]":
                tp = get_args(tp)[-1]
                key = next(k for k, v in obj.items() if not _fits(tp, v))
                obj, out = obj[key], f"{out}[{key}]"
            else:
                obj, tp, out = obj[int(index[1:-1])], get_args(tp)[0], f"{out}{index}"
        return out.lstrip(".") or path
    except (LookupError, StopIteration, TypeError, ValueError):  # a shape it does not know
        return path


def _fits(tp, value) -> bool:
    try:
        msgspec.json.decode(json.dumps(value), type=tp)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return False
    return True


def _constant(data: bytes | str) -> str | None:
    """Where a NaN or ±Infinity sits (Python writes them; JSON has no such numbers): "runs[2].alpha
    is NaN, not a finite number", or None when that is not what broke the file."""
    try:
        obj = json.loads(data, parse_constant=_Mark)
    except (ValueError, RecursionError):
        return None
    stack = [("", obj)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, _Mark):
            return f"{path or 'the top level'} is {v.text}, not a finite number"
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        stack += [(f"{path}[{k}]" if isinstance(k, int) else f"{path}.{k}".lstrip("."), x) for k, x in items]
    return None


class _Mark:
    def __init__(self, text: str):
        self.text = text


def read(cls: type[R], path: str | Path) -> R:
    """The record of type ``cls`` stored at ``path``; ValueError naming the file (and the field)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"no stored results {p}: run the benchmark that writes it first (benchmarks/)")
    return decode(cls, p.read_bytes(), str(p))


def write(record: Record | dict, path: str | Path) -> Path:
    """Write ``record`` to ``path`` and return the path. A :class:`Record` is first read back as
    its type, so every range is checked before the file changes; a dict (a benchmark's loose
    report, which no notebook reads) is written as it is, records inside it as their JSON."""
    if not isinstance(record, (Record, dict)):
        raise ValueError(f"record must be a stored Record or a dict, got {type(record).__name__}")
    data = encode(record)
    if isinstance(record, Record):
        decode(type(record), data, f"{type(record).__name__} (not written to {path})")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data + b"\n")
    return p

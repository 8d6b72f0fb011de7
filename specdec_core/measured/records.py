"""Small typed records shared by every results file: a spread of repeats, a cost curve, and the
generic JSON form of a flat record (real ints and floats, never string keys). A paired ratio is
stored as :class:`specdec_core.repeats.PairedRatio`, the record its computation returns."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass

__all__ = ["CostCurve", "Spread", "from_json", "to_json"]


@dataclass(frozen=True)
class Spread:
    """Median, fastest and slowest of ``n`` repeats (``n`` 0 when the file did not say)."""

    median: float
    min: float
    max: float
    n: int = 0


@dataclass(frozen=True)
class CostCurve:
    """Milliseconds of one call against its size ``at`` (T positions scored, or γ proposals):
    ``points`` {at: Spread}, with where it came from (``source``), the repeats per size
    (``reps``), BLAS ``threads`` and the ``context`` tokens before the scored positions, when
    known."""

    points: dict[int, Spread]
    source: str = ""
    reps: int | None = None
    threads: int | None = None
    context: int | None = None

    def __post_init__(self):
        if not self.points:
            raise ValueError(f"cost curve {self.source!r} has no points")
        for at, s in self.points.items():
            if isinstance(at, bool) or not isinstance(at, int) or at < 0:
                raise ValueError(f"cost curve {self.source!r}: size {at!r} is not a non-negative int")
            if not all(isinstance(x, float) and x > 0 and x < float("inf") for x in (s.min, s.median, s.max)):
                raise ValueError(
                    f"cost curve {self.source!r}: at {at} a time is not a positive finite float: {s}"
                )

    def median(self) -> dict[int, float]:
        """{at: median ms}."""
        return {at: s.median for at, s in sorted(self.points.items())}

    def fastest(self) -> dict[int, float]:
        """{at: fastest ms} (least disturbed by load elsewhere)."""
        return {at: s.min for at, s in sorted(self.points.items())}

    def spread(self) -> dict[int, tuple[float, float, float]]:
        """{at: (fastest, median, slowest) ms}."""
        return {at: (s.min, s.median, s.max) for at, s in sorted(self.points.items())}

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "reps": self.reps,
            "threads": self.threads,
            "context": self.context,
            "points": [{"at": at, **dataclasses.asdict(s)} for at, s in sorted(self.points.items())],
        }

    @classmethod
    def from_json(cls, d: dict) -> CostCurve:
        pts = {}
        for p in d["points"]:
            at = p["at"]
            if isinstance(at, bool) or not isinstance(at, int):
                raise ValueError(f"cost curve {d.get('source')!r}: size {at!r} is not an int")
            if at in pts:
                raise ValueError(f"cost curve {d.get('source')!r}: size {at} repeats")
            for k in ("median", "min", "max"):
                if isinstance(p.get(k), bool) or not isinstance(p.get(k), (int, float)):
                    raise ValueError(
                        f"cost curve {d.get('source')!r}: at {at} {k} {p.get(k)!r} is not a number"
                    )
            pts[at] = Spread(float(p["median"]), float(p["min"]), float(p["max"]), int(p.get("n", 0)))
        return cls(pts, d.get("source", ""), d.get("reps"), d.get("threads"), d.get("context"))


def to_json(obj):
    """The JSON form of a record: dataclasses as objects, tuples as lists."""
    if hasattr(obj, "to_json") and not isinstance(obj, type):
        return obj.to_json()
    if dataclasses.is_dataclass(obj):
        return {f.name: to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_json(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    return obj


def _convert(tp, v, where):
    if v is None:
        return None
    origin = typing.get_origin(tp)
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return _convert(args[0], v, where) if len(args) == 1 else v
    if dataclasses.is_dataclass(tp):
        return from_json(tp, v, where)
    if origin is tuple:
        inner = args[0] if len(args) == 2 and args[1] is Ellipsis else None
        return tuple(_convert(inner, x, where) if inner else x for x in v)
    if tp is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{where}: {v!r} is not a number")
        return float(v)
    if tp is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{where}: {v!r} is not an int")
        return v
    return v


def from_json(cls, d: dict, where: str = "", *, given: dict | None = None, ignore: tuple[str, ...] = ()):
    """A record of type ``cls`` from its JSON form: nested records, tuples, real floats and
    ints; raises ValueError naming a missing or mistyped field (extra fields are refused too).
    ``given`` holds fields the caller has built already (their keys in ``d`` are not read);
    ``ignore`` names keys of ``d`` that are not fields (the caller reads them)."""
    where = where or cls.__name__
    if not isinstance(d, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(d).__name__}")
    given = dict(given or {})
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    extra = set(d) - names - set(ignore)
    if extra or set(given) - names:
        raise ValueError(f"{where}: unknown fields {sorted(extra | (set(given) - names))}")
    kw = dict(given)
    for f in dataclasses.fields(cls):
        if f.name in given:
            continue
        if f.name not in d:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{where} lacks {f.name!r}")
            continue
        kw[f.name] = _convert(hints[f.name], d[f.name], f"{where}.{f.name}")
    return cls(**kw)

"""Small typed records shared by every results file: a spread of repeats, a cost curve, and the
generic JSON form of a flat record (real ints and floats, never string keys). A paired ratio is
stored as :class:`specdec_core.repeats.PairedRatio`, the record its computation returns."""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass

from ..distributions import check_int, check_reals

__all__ = ["CostCurve", "Spread", "from_json", "json_int", "json_number", "to_json"]


def json_number(v, where: str) -> float:
    """A number read from a results file, as a float: strings (even "1.5"), bools, null, lists
    (``distributions.check_reals``), NaN and ±Infinity are refused with a ValueError naming the
    field ``where`` ("sweep.seconds is NaN"): a stored measurement is a finite number or the file
    is unreadable."""
    try:
        arr = check_reals([v], where)
    except OverflowError:
        raise ValueError(f"{where} is too large for a float") from None
    if arr.shape != (1,):
        raise ValueError(f"{where} must be a number, got {v!r}")
    f = float(arr[0])
    if not math.isfinite(f):
        raise ValueError(
            f"{where} is {'NaN' if math.isnan(f) else 'Infinity' if f > 0 else '-Infinity'}, not a finite number"
        )
    return f


def json_int(v, where: str) -> int:
    """An integer read from a results file (a count, a size, a γ): floats (even 2.0), strings,
    bools and null refused with a ValueError naming the field ``where`` (``distributions.check_int``)."""
    return check_int(v, where, None)


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
    def from_json(cls, d: dict, where: str = "") -> CostCurve:
        """The curve from its JSON form; ``where`` names it in errors ("micro.verify[0]";
        default: its source), every number checked (:func:`json_number`, :func:`json_int`)."""
        where = where or f"cost curve {d.get('source')!r}"
        pts = {}
        for i, p in enumerate(d["points"]):
            w = f"{where}.points[{i}]"
            at = json_int(p["at"], f"{w}.at")
            if at in pts:
                raise ValueError(f"{w}.at: size {at} repeats")
            pts[at] = Spread(
                *(json_number(p.get(k), f"{w}.{k}") for k in ("median", "min", "max")),
                json_int(p.get("n", 0), f"{w}.n"),
            )
        opt = {
            k: None if d.get(k) is None else json_int(d[k], f"{where}.{k}")
            for k in ("reps", "threads", "context")
        }
        return cls(pts, d.get("source", ""), opt["reps"], opt["threads"], opt["context"])


def to_json(obj):
    """The JSON form of a record: dataclasses as objects, tuples as lists, a float that is not
    finite as null (JSON has no NaN: a paired ratio of one pair has no interval)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
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
    origin = typing.get_origin(tp)
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if v is None:
        if tp in (float, int):  # not Optional: null is no number
            raise ValueError(f"{where} is null, not a number")
        return None
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return _convert(args[0], v, where) if len(args) == 1 else v
    if dataclasses.is_dataclass(tp):
        return from_json(tp, v, where)
    if origin is tuple:
        inner = args[0] if len(args) == 2 and args[1] is Ellipsis else None
        return tuple(_convert(inner, x, f"{where}[{i}]") if inner else x for i, x in enumerate(v))
    if tp is float:
        return json_number(v, where)
    if tp is int:
        return json_int(v, where)
    return v


def _undefined(cls, d: dict) -> frozenset:
    """Float fields that are NaN by definition in this record, stored as null and read back as
    NaN: what the record's own ``undefined_fields(d)`` names (e.g. a paired ratio of fewer than
    2 pairs has no interval, :class:`~specdec_core.repeats.PairedRatio`); none otherwise."""
    rule = getattr(cls, "undefined_fields", None)
    return frozenset(rule(d)) if rule is not None else frozenset()


def from_json(cls, d: dict, where: str = "", *, given: dict | None = None, ignore: tuple[str, ...] = ()):
    """A record of type ``cls`` from its JSON form: nested records, tuples, finite floats and
    ints (:func:`json_number`, :func:`json_int`); raises ValueError naming a missing or mistyped
    field (extra fields are refused too).
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
    undefined = _undefined(cls, d)
    for f in dataclasses.fields(cls):
        if f.name in given:
            continue
        if f.name not in d:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{where} lacks {f.name!r}")
            continue
        v = d[f.name]
        if f.name in undefined and (v is None or (isinstance(v, float) and math.isnan(v))):
            kw[f.name] = math.nan  # null in the file, NaN when built in memory
            continue
        kw[f.name] = _convert(hints[f.name], d[f.name], f"{where}.{f.name}")
    return cls(**kw)

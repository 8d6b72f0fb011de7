"""The weight layout a run chose by timing the candidates on its machine (see
:mod:`specdec_core.llm.layout`): the typed record stored in ``passcost.json`` and ``llm.json``."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..distributions import check_positive
from .records import json_int

__all__ = ["LayoutChoice", "check_storage", "STORAGES"]

#: Every storage a layout may name (:mod:`specdec_core.llm.layout`): the loaded rows, column
#: blocks of these widths, and the int8 rows of the quantized-copy draft. Nothing else is read.
STORAGES = ("rows", "cols16", "cols32", "cols64", "q8")
#: Every method a layout may name, by storage.
METHODS = {
    "rows": ("gemv", "rows8", "rows16", "rows32", "blas", "nb1", "nb2", "nb4"),
    "cols": ("blocks", "pad2"),
    "q8": ("nb1", "nb4", "deq"),
}


def check_storage(storage) -> str:
    """``storage`` if it is one of :data:`STORAGES`, else a ValueError (before any allocation)."""
    if not isinstance(storage, str) or storage not in STORAGES:
        raise ValueError(f"storage must be one of {', '.join(STORAGES)}, got {storage!r}")
    return storage


def _ms(v: float) -> str:
    """A time in ms with one decimal, or three significant digits below 1 ms (a tiny model's
    timings never print as 0.0)."""
    return f"{v:.1f}" if v >= 1 else f"{v:.3g}"


def _methods_of(storage: str) -> tuple[str, ...]:
    return METHODS["cols" if storage.startswith("cols") else storage]


@dataclass(frozen=True)
class LayoutChoice:
    """What :func:`choose_layout` timed and chose. ``timings`` {"storage/method": {T: median
    ms}} over the sampled matrices; ``storage`` and ``plan`` {T: method} the choice (the
    storage with the smallest sum over T of its fastest method, so one copy serves every T);
    ``floor_ms`` the read floor of the same sample (fastest streaming reduction, same run),
    ``sample_bytes`` the bytes timed, ``reps`` repeats per cell."""

    storage: str
    plan: dict[int, str]
    timings: dict[str, dict[int, float]]
    floor_ms: float
    sample_bytes: int
    reps: int
    sample: tuple[str, ...] = field(default_factory=tuple)
    floor_by_reduction: dict[str, float] = field(default_factory=dict)

    def __post_init__(self):
        check_storage(self.storage)
        if not isinstance(self.plan, dict) or not self.plan:
            raise ValueError(f"plan must be a non-empty {{T: method}} dict, got {self.plan!r}")
        for T, m in self.plan.items():
            if isinstance(T, bool) or not isinstance(T, int) or T < 1:
                raise ValueError(f"plan: T must be a positive int, got {T!r}")
            if m not in _methods_of(self.storage):
                raise ValueError(f"plan: storage {self.storage!r} has no method {m!r} (T = {T})")
        if not isinstance(self.timings, dict):
            raise ValueError(f"timings must be a dict, got {type(self.timings).__name__}")
        for key in self.timings:
            s, _, m = str(key).partition("/")
            if m not in _methods_of(check_storage(s)):
                raise ValueError(f"timings: {key!r} is not a known 'storage/method'")

    def plan_of(self, storage: str) -> dict[int, str]:
        """{T: fastest method} of ``storage`` in the timings (the chosen storage's is ``plan``;
        ``"q8"``: the quantized-copy draft's)."""
        best: dict[int, tuple[float, str]] = {}
        for key, v in self.timings.items():
            s, m = key.split("/")
            if s == storage:
                for T, ms in v.items():
                    if T not in best or ms < best[T][0]:
                        best[T] = (ms, m)
        return {T: best[T][1] for T in sorted(best)}

    def ratios(self) -> dict[int, float]:
        """{T: chosen ms at T ÷ chosen ms at T = 1} on the sample (the cost in decode steps)."""
        b = self.best(self.storage)
        return {T: ms / b[1] for T, ms in b.items()}

    def best(self, storage: str) -> dict[int, float]:
        """{T: ms} of the fastest method of ``storage`` at each T."""
        cells = [v for k, v in self.timings.items() if k.split("/")[0] == storage]
        if not cells:
            raise ValueError(f"storage {storage!r} was not timed (timed: {sorted(self.storages())})")
        Ts = sorted({T for v in cells for T in v})
        return {T: min(v[T] for v in cells if T in v) for T in Ts}

    def storages(self) -> list[str]:
        """The storages timed, in the table's order."""
        return list(dict.fromkeys(k.split("/")[0] for k in self.timings))

    def table(self) -> list[str]:
        """The learner's own table: ms of each candidate at each T, the chosen ones marked ✓."""
        Ts = sorted({T for v in self.timings.values() for T in v})
        lines = [f"{'storage / method':<18}" + "".join(f"{'T = ' + str(T):>12}" for T in Ts)]
        for key, v in self.timings.items():
            s, m = key.split("/")
            cells = []
            for T in Ts:
                if T not in v:
                    cells.append(f"{'—':>12}")
                    continue
                chosen = self.plan if s == self.storage else self.plan_of(s) if s == "q8" else {}
                mark = "✓" if chosen.get(T) == m else " "
                cells.append(f"{_ms(v[T]):>10} {mark}")
            lines.append(f"{key:<18}" + "".join(cells))
        by = ", ".join(f"{k} {_ms(v)}" for k, v in self.floor_by_reduction.items())
        lines.append(f"{'read floor':<18}{_ms(self.floor_ms):>10}   (fastest streaming reduction: {by})")
        return lines

    def to_json(self) -> dict:
        return {
            "storage": self.storage,
            "plan": {str(T): m for T, m in self.plan.items()},
            "timings": {k: {str(T): ms for T, ms in v.items()} for k, v in self.timings.items()},
            "floor_ms": self.floor_ms,
            "sample_bytes": self.sample_bytes,
            "reps": self.reps,
            "sample": list(self.sample),
            "floor_by_reduction": dict(self.floor_by_reduction),
        }

    @classmethod
    def from_json(cls, d: dict, where: str = "layout") -> LayoutChoice:
        def ms(v, name):  # a time: a real positive finite number, never a string or bool
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"{where}.{name} must be a number of ms, got {v!r}")
            return float(check_positive(v, f"{where}.{name}", "a positive, finite time"))

        if not isinstance(d, dict):
            raise ValueError(f"{where} must be a JSON object, got {type(d).__name__}")
        for key in ("storage", "plan", "timings", "floor_ms", "sample_bytes", "reps"):
            if key not in d:
                raise ValueError(f"{where} lacks {key!r}")
        for key in ("plan", "timings"):
            if not isinstance(d[key], dict):
                raise ValueError(f"{where}.{key} must be a JSON object, got {d[key]!r}")

        def T_of(T, name):  # a T key: the digits of a positive int
            if not (isinstance(T, str) and T.isdigit() and int(T) >= 1):
                raise ValueError(f"{where}.{name}: {T!r} is not a positive number of positions")
            return int(T)

        storage = d.get("storage")
        if not isinstance(storage, str):
            raise ValueError(f"{where}.storage must be a string, got {storage!r}")
        for k, v in d["timings"].items():
            if not isinstance(v, dict):
                raise ValueError(f"{where}.timings.{k} must be a JSON object, got {v!r}")
        timings = {
            k: {T_of(T, f"timings.{k}"): ms(x, f"timings.{k}.{T}") for T, x in v.items()}
            for k, v in d["timings"].items()
        }
        plan = {T_of(T, "plan"): str(m) for T, m in d["plan"].items()}
        try:
            return cls._build(d, storage, plan, timings, ms, where)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None

    @classmethod
    def _build(cls, d, storage, plan, timings, ms, where):
        return cls(
            storage=storage,
            plan=plan,
            timings=timings,
            floor_ms=ms(d["floor_ms"], "floor_ms"),
            sample_bytes=json_int(d["sample_bytes"], f"{where}.sample_bytes"),
            reps=json_int(d["reps"], f"{where}.reps"),
            sample=tuple(str(x) for x in d.get("sample", ())),
            floor_by_reduction={
                str(k): ms(v, f"floor_by_reduction.{k}") for k, v in d.get("floor_by_reduction", {}).items()
            },
        )

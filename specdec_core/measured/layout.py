"""The weight layout a run chose by timing the candidates on its machine (see
:mod:`specdec_core.llm.layout`): the typed record stored in ``passcost.json`` and ``llm.json``."""

from __future__ import annotations

from typing import Literal

from .codec import Count, Ms, Positive, Record

__all__ = ["LayoutChoice", "check_storage", "STORAGES"]

#: Every storage a layout may name (:mod:`specdec_core.llm.layout`): the loaded rows, column
#: blocks of these widths, and the int8 rows of the quantized-copy draft. Nothing else is read.
STORAGES = ("rows", "cols16", "cols32", "cols64", "q8")
#: the type of a stored storage name (the codec refuses any other before a record is built)
Storage = Literal["rows", "cols16", "cols32", "cols64", "q8"]
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


class LayoutChoice(Record):
    """What :func:`choose_layout` timed and chose. ``timings`` {"storage/method": {T: median
    ms}} over the sampled matrices; ``storage`` and ``plan`` {T: method} the choice (the
    storage with the smallest sum over T of its fastest method, so one copy serves every T);
    ``floor_ms`` the read floor of the same sample (fastest streaming reduction, same run),
    ``sample_bytes`` the bytes timed, ``reps`` repeats per cell."""

    storage: Storage
    plan: dict[Positive, str]
    timings: dict[str, dict[Positive, Ms]]
    floor_ms: Ms
    sample_bytes: Count
    reps: Positive
    sample: tuple[str, ...] = ()
    floor_by_reduction: dict[str, Ms] = {}

    def __post_init__(self):  # a record built in memory is checked as one read from a file
        check_storage(self.storage)
        if not isinstance(self.plan, dict) or not self.plan or not isinstance(self.timings, dict):
            raise ValueError(
                f"plan must be a non-empty {{T: method}} dict and timings a dict, got {self.plan!r}"
            )
        for T, m in self.plan.items():
            if isinstance(T, bool) or not isinstance(T, int) or T < 1 or m not in _methods_of(self.storage):
                raise ValueError(f"plan: storage {self.storage!r} has no method {m!r} for T = {T!r}")
        for key in self.timings:
            s, _, m = str(key).partition("/")
            if s not in STORAGES or m not in _methods_of(s):
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

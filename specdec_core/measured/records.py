"""Small typed records shared by every results file: a spread of repeats and a cost curve (a paired
ratio is stored as :class:`.capstone.PairedSpeedup`). Their JSON form is the codec's (:mod:`.codec`):
the field types below are what a file may hold."""

from __future__ import annotations

from .codec import Count, NonNegative, Positive, Record

__all__ = ["CostCurve", "Spread"]


class Spread(Record):
    """Median, fastest and slowest of ``n`` repeats (``n`` 0 when the file did not say)."""

    median: NonNegative
    min: NonNegative
    max: NonNegative
    n: Count = 0

    def __post_init__(self):
        if not self.min <= self.median <= self.max:
            raise ValueError(f"a spread needs min ≤ median ≤ max, got {self.min}, {self.median}, {self.max}")


class CostCurve(Record):
    """Milliseconds of one call against its size ``at`` (T positions scored, or γ proposals):
    ``points`` {at: Spread}, with where it came from (``source``), the repeats per size
    (``reps``), BLAS ``threads`` and the ``context`` tokens before the scored positions, when
    known."""

    points: dict[Count, Spread]
    source: str = ""
    reps: Positive | None = None
    threads: Positive | None = None
    context: Count | None = None

    def __post_init__(self):  # a curve built in memory is checked as one read from a file
        bad = [
            at
            for at, s in self.points.items()
            if isinstance(at, bool)
            or not isinstance(at, int)
            or at < 0
            or not (isinstance(s, Spread) and s.min > 0)
        ]
        if not self.points or bad:
            raise ValueError(
                f"cost curve {self.source!r} needs {{size ≥ 0: Spread of positive times}}, got {bad or 'no points'}"
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

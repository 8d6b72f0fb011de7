"""The smaller results files as typed records: ``hardware.json`` (:class:`HardwareRun`),
``passcost.json`` (:class:`PassCost`), ``features.json`` (:class:`FeatureStudy`) and
``rounding.json`` (:class:`RoundingStudy`). Sizes and thread counts are ints, times and rates
floats; each record reads the file's JSON form (:meth:`from_json`) and writes it back
(:meth:`to_json`), and names the benchmark that wrote it in its machine line (:meth:`how`).
:func:`specdec_core.measured.read_stored` is the one reader of each file."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from .layout import LayoutChoice
from .machine import Machine
from .records import CostCurve, Spread, from_json, json_int, json_number, to_json

__all__ = [
    "Bandwidth",
    "FeatureCost",
    "FeatureStudy",
    "HardwareRun",
    "MatmulCurve",
    "PassCost",
    "PassGoals",
    "PassPrediction",
    "PassThreads",
    "RoundingStudy",
]


def _ints(d: dict, value=json_number, where: str = "") -> dict:
    """{int(k): value(v, where.k)} of a JSON object keyed by sizes; ValueError naming a bad key
    (``value`` names a bad value: :func:`~.records.json_number` by default)."""
    if not isinstance(d, dict):
        raise ValueError(f"{where} is {type(d).__name__}, not a JSON object")
    out = {}
    for k, v in d.items():
        try:
            key = int(k)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: key {k!r} is not an integer") from None
        out[key] = value(v, f"{where}.{k}")
    return out


def _temperature(text: str, where: str) -> float:
    """A temperature spelled in a key ("T=0.5"), finite."""
    try:
        return json_number(float(text), where)
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not a finite number") from None


def _suffix(key: str, prefix: str, value, where: str):
    """value(the rest) of a key spelled prefix + number ("threads2", "T=1"); ValueError naming it."""
    if not key.startswith(prefix):
        raise ValueError(f"{where}: {key!r} is not '{prefix}<number>'")
    return value(key[len(prefix) :])


def _strs(d: dict) -> dict:
    return {str(k): to_json(v) for k, v in sorted(d.items())}


class _Study:
    """The machine line of a results file: ``machine.how(script)``."""

    script = "benchmarks/"

    def how(self) -> str:
        return self.machine.how(self.script)


# ---------------------------------------------------------------- hardware.json


@dataclass(frozen=True)
class Bandwidth:
    """STREAM-like copy and triad with one thread count: best and median GB/s, arrays counted."""

    copy_GBps: float
    copy_GBps_median: float
    copy_arrays_counted: int
    triad_GBps: float
    triad_GBps_median: float
    triad_arrays_counted: int
    triad_GBps_stream_convention: float
    array_MiB: int
    reps: int


@dataclass(frozen=True)
class MatmulCurve:
    """float32 (M × k) @ W against rows M: (fastest, median) ms and GFLOP/s per M."""

    ms_min_median: dict[int, tuple[float, float]]
    gflops: dict[int, float]
    weight_MB: float
    inner: int
    reps: int

    def to_json(self) -> dict:
        return {
            "ms_min_median": {str(m): list(v) for m, v in sorted(self.ms_min_median.items())},
            "gflops": _strs(self.gflops),
            "weight_MB": self.weight_MB,
            "inner": self.inner,
            "reps": self.reps,
        }

    @classmethod
    def from_json(cls, d: dict, where: str = "matmul") -> MatmulCurve:
        mm = _ints(
            d["ms_min_median"],
            lambda v, w: (json_number(v[0], f"{w}[0]"), json_number(v[1], f"{w}[1]")),
            f"{where}.ms_min_median",
        )
        return cls(
            mm,
            _ints(d["gflops"], json_number, f"{where}.gflops"),
            json_number(d["weight_MB"], f"{where}.weight_MB"),
            json_int(d["inner"], f"{where}.inner"),
            json_int(d["reps"], f"{where}.reps"),
        )


@dataclass(frozen=True)
class HardwareRun(_Study):
    """``hardware.json``: bandwidth {threads: Bandwidth} and matmul {threads: {shape: curve}}."""

    machine: Machine
    quick: bool
    bandwidth: dict[int, Bandwidth]
    matmul: dict[int, dict[str, MatmulCurve]]
    rows: tuple[int, ...]
    shapes: tuple[str, ...]
    seconds: float
    script = "benchmarks/bench_hardware.py"

    def to_json(self) -> dict:
        return {
            "schema": 2,
            "machine": self.machine.to_dict(),
            "quick": self.quick,
            "bandwidth": {f"threads{t}": to_json(b) for t, b in self.bandwidth.items()},
            "matmul": {f"threads{t}": {s: c.to_json() for s, c in m.items()} for t, m in self.matmul.items()},
            "settings": {"M": list(self.rows), "shapes": list(self.shapes)},
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, d: dict) -> HardwareRun:
        def threads(key: str) -> int:
            return _suffix(key, "threads", int, "hardware.json")

        return cls(
            Machine.from_dict(d["machine"]),
            bool(d.get("quick", False)),
            {threads(k): from_json(Bandwidth, b, f"bandwidth.{k}") for k, b in d["bandwidth"].items()},
            {
                threads(k): {s: MatmulCurve.from_json(c, f"matmul.{k}.{s}") for s, c in m.items()}
                for k, m in d["matmul"].items()
            },
            tuple(json_int(m, f"settings.M[{i}]") for i, m in enumerate(d["settings"]["M"])),
            tuple(str(s) for s in d["settings"]["shapes"]),
            json_number(d["seconds"], "seconds"),
        )


# ---------------------------------------------------------------- passcost.json


@dataclass(frozen=True)
class PassPrediction:
    """The pass cost predicted before it was timed: memory, compute, roofline (max) and serial (sum), ms."""

    memory_ms: float
    compute_ms: float
    roofline_ms: float
    serial_ms: float


@dataclass(frozen=True)
class PassThreads:
    """One BLAS thread count: the weight-read floor and bandwidth, the product rate per T, the
    prediction per T, then the measured weight products per layout and the whole pass."""

    floor_ms: float
    bandwidth_GBps: float
    rate_GFLOPs: dict[int, float]
    predicted: dict[int, PassPrediction]
    predicted_at_utc: str
    products: dict[str, CostCurve]
    forward: CostCurve
    measured_at_utc: str

    def to_json(self) -> dict:
        def curve(c: CostCurve) -> dict:
            return {
                str(T): {"median": s.median, "min": s.min, "max": s.max, "reps": s.n}
                for T, s in c.points.items()
            }

        return {
            "floor_ms": self.floor_ms,
            "bandwidth_GBps": self.bandwidth_GBps,
            "rate_GFLOPs": _strs(self.rate_GFLOPs),
            "predicted": _strs(self.predicted),
            "predicted_at_utc": self.predicted_at_utc,
            "products": {name: curve(c) for name, c in self.products.items()},
            "forward": curve(self.forward),
            "measured_at_utc": self.measured_at_utc,
        }

    @classmethod
    def from_json(cls, d: dict, where: str = "threads") -> PassThreads:
        def spread(v: dict, w: str) -> Spread:
            return Spread(
                *(json_number(v[k], f"{w}.{k}") for k in ("median", "min", "max")),
                json_int(v["reps"], f"{w}.reps"),
            )

        def curve(c: dict, source: str) -> CostCurve:
            return CostCurve(_ints(c, spread, source), source)

        return cls(
            json_number(d["floor_ms"], f"{where}.floor_ms"),
            json_number(d["bandwidth_GBps"], f"{where}.bandwidth_GBps"),
            _ints(d["rate_GFLOPs"], json_number, f"{where}.rate_GFLOPs"),
            _ints(d["predicted"], lambda v, w: from_json(PassPrediction, v, w), f"{where}.predicted"),
            str(d["predicted_at_utc"]),
            {name: curve(c, f"{where}.products.{name}") for name, c in d["products"].items()},
            curve(d["forward"], f"{where}.forward"),
            str(d["measured_at_utc"]),
        )


@dataclass(frozen=True)
class PassGoals:
    """Cost ratios of the stored run (1 BLAS thread) and the predictions' errors {kind: {T: error}}."""

    products_8_over_1: float | None = None
    forward_8_over_1: float | None = None
    products_4_over_1: float | None = None
    forward_4_over_1: float | None = None
    one_row_over_floor: float | None = None
    prefill128_new_over_old: float | None = None
    #: the whole pass at T = 1 (cache, attention, head included) over the weight-read floor
    forward_1_over_floor: float | None = None
    #: one step of the int8 quantized-copy draft over one float32 target step, timed interleaved
    draft_step_over_target_step: float | None = None
    prediction_error: dict[str, dict[int, float]] = field(default_factory=dict)
    lines: tuple[str, ...] = ()

    def to_json(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["prediction_error"] = {k: _strs(v) for k, v in self.prediction_error.items()}
        d["lines"] = list(self.lines)
        return d

    @classmethod
    def from_json(cls, d: dict) -> PassGoals:
        errs = {
            k: _ints(v, json_number, f"goals.prediction_error.{k}") for k, v in d["prediction_error"].items()
        }
        given = {"prediction_error": errs, "lines": tuple(d["lines"])}
        return from_json(cls, d, "goals", given=given)


@dataclass(frozen=True)
class PassCost(_Study):
    """``passcost.json``: the capstone's cost of scoring T positions, predicted then measured,
    per BLAS thread count (``threads`` {1: …, 2: …}); ``method`` says what was timed."""

    machine: Machine
    quick: bool
    method: str
    weight_bytes: int
    params: int
    context: int
    threads: dict[int, PassThreads]
    seconds: float
    goals: PassGoals | None
    #: the weight layout chosen by timing the candidates before the run (None: runs before issue 32)
    layout: LayoutChoice | None = None
    script = "benchmarks/bench_passcost.py"

    def at(self, threads: int) -> PassThreads:
        """The record of one BLAS thread count; ValueError naming it when absent."""
        if threads not in self.threads:
            raise ValueError(f"threads must be one of {sorted(self.threads)}, got {threads!r}")
        return self.threads[threads]

    def to_json(self) -> dict:
        return {
            "schema": 2,
            "machine": self.machine.to_dict(),
            "quick": self.quick,
            "how": self.method,
            "weight_bytes": self.weight_bytes,
            "params": self.params,
            "context": self.context,
            "threads": {str(t): r.to_json() for t, r in self.threads.items()},
            "seconds": self.seconds,
            "goals": self.goals.to_json() if self.goals else None,
            **({"layout": self.layout.to_json()} if self.layout is not None else {}),
        }

    @classmethod
    def from_json(cls, d: dict) -> PassCost:
        return cls(
            Machine.from_dict(d["machine"]),
            bool(d.get("quick", False)),
            str(d["how"]),
            json_int(d["weight_bytes"], "weight_bytes"),
            json_int(d["params"], "params"),
            json_int(d["context"], "context"),
            _ints(d["threads"], PassThreads.from_json, "threads"),
            json_number(d["seconds"], "seconds"),
            PassGoals.from_json(d["goals"]) if d.get("goals") else None,
            LayoutChoice.from_json(d["layout"], "layout") if d.get("layout") else None,
        )


# ---------------------------------------------------------------- features.json


@dataclass(frozen=True)
class FeatureCost:
    """Median ms of the feature draft's parts (full head and shortlists) and of a target step."""

    map_ms: float
    head_full_ms: float
    draft_gamma4_full_ms: float
    draft_step_full_ms: float
    head_top2048_ms: float
    draft_gamma4_top2048_ms: float
    draft_step_top2048_ms: float
    head_top4096_ms: float
    draft_gamma4_top4096_ms: float
    draft_step_top4096_ms: float
    head_top8192_ms: float
    draft_gamma4_top8192_ms: float
    draft_step_top8192_ms: float
    target_step_ms: float
    target_verify_5_positions_ms: float
    reps: int


@dataclass(frozen=True)
class FeatureChoice:
    """The variant chosen on held-out text: its name, inputs, random features, ridge, fit positions."""

    variant: str
    ridge: float
    inputs: str
    n_random: int
    n: int


@dataclass(frozen=True)
class FeatureStudy(_Study):
    """``features.json``: the feature draft's design study. ``alpha`` {variant: {evaluation set:
    {head: {temperature: α by depth}}}} (heads "full", "top2048", …), ``alpha_n`` {variant: {set:
    positions by depth}}, ``shortlist_mass`` {set: {head: p's mass inside}}; ``data`` and
    ``selection`` describe the fit texts and the variants compared, as the study wrote them."""

    machine: Machine
    quick: bool
    data: dict
    selection: dict
    chosen: FeatureChoice
    alpha: dict[str, dict[str, dict[str, dict[float, tuple[float, ...]]]]]
    alpha_n: dict[str, dict[str, tuple[int, ...]]]
    alpha_seconds: float
    shortlist_mass: dict[str, dict[str, float]]
    cost: FeatureCost
    total_s: float
    script = "benchmarks/feature_study.py"

    def to_json(self) -> dict:
        alpha = {
            v: {
                s: {
                    **{h: {f"T={t:g}": list(a) for t, a in by_t.items()} for h, by_t in heads.items()},
                    "_n": list(self.alpha_n[v][s]),
                }
                for s, heads in sets.items()
            }
            for v, sets in self.alpha.items()
        }
        return {
            "schema": 2,
            "machine": self.machine.to_dict(),
            "quick": self.quick,
            "data": self.data,
            "selection": self.selection,
            "chosen": to_json(self.chosen),
            "alpha": alpha,
            "alpha_seconds": self.alpha_seconds,
            "shortlist_mass_of_p": self.shortlist_mass,
            "cost": to_json(self.cost),
            "total_s": self.total_s,
        }

    @classmethod
    def from_json(cls, d: dict) -> FeatureStudy:
        def temp(key: str, where: str) -> float:
            return _suffix(key, "T=", lambda t: _temperature(t, where), where)

        def numbers(a: list, where: str, value=json_number) -> tuple:
            return tuple(value(x, f"{where}[{i}]") for i, x in enumerate(a))

        alpha = {
            v: {
                s: {
                    h: {
                        temp(t, f"alpha.{v}.{s}.{h}"): numbers(a, f"alpha.{v}.{s}.{h}.{t}")
                        for t, a in by_t.items()
                    }
                    for h, by_t in heads.items()
                    if h != "_n"
                }
                for s, heads in sets.items()
            }
            for v, sets in d["alpha"].items()
        }
        alpha_n = {
            v: {s: numbers(heads["_n"], f"alpha.{v}.{s}._n", json_int) for s, heads in sets.items()}
            for v, sets in d["alpha"].items()
        }
        mass = {
            s: {h: json_number(x, f"shortlist_mass_of_p.{s}.{h}") for h, x in by.items()}
            for s, by in d["shortlist_mass_of_p"].items()
        }
        return cls(
            Machine.from_dict(d["machine"]),
            bool(d.get("quick", False)),
            dict(d["data"]),
            dict(d["selection"]),
            from_json(FeatureChoice, d["chosen"], "chosen"),
            alpha,
            alpha_n,
            json_number(d["alpha_seconds"], "alpha_seconds"),
            mass,
            from_json(FeatureCost, d["cost"], "cost"),
            json_number(d["total_s"], "total_s"),
        )


# ---------------------------------------------------------------- rounding.json


@dataclass(frozen=True)
class Generation:
    """One prompt's greedy generation, speculative against plain: identical, or where it diverged
    and the top-2 logit gap there, computed one position at a time and in blocks."""

    prompt: str
    tokens: int
    identical: bool
    first_divergence: int | None = None
    gap_one_at_a_time: float | None = None
    gap_in_blocks: float | None = None

    def to_json(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        return {k: v for k, v in d.items() if v is not None or not k.startswith("gap_")}


@dataclass(frozen=True)
class TeacherForcing:
    """Logits one position per call against blocks, along one prompt's greedy tokens."""

    prompt: str
    positions: int
    max_abs_diff: float
    median_row_max_abs_diff: float
    max_rel_diff: float
    argmax_flips: int
    gaps_at_flips: tuple[float, ...]
    smallest_gaps: tuple[float, ...]
    gaps_below_1e_4: int
    gaps_below_1e_3: int


@dataclass(frozen=True)
class RoundingSummary:
    generations: int
    identical: int
    greedy_tokens: int
    positions_compared: int
    argmax_flips: int
    max_abs_diff: float
    max_rel_diff: float
    smallest_gap: float


def _dashed(d: dict, back: bool = False) -> dict:
    """JSON's "gaps_below_1e-4" ↔ the field gaps_below_1e_4."""
    a, b = ("1e_", "1e-") if back else ("1e-", "1e_")
    return {k.replace(a, b): v for k, v in d.items()}


@dataclass(frozen=True)
class RoundingStudy(_Study):
    """``rounding.json``: speculative against plain greedy generation, and the logits of one
    position per call against blocks of ``block`` positions (same BLAS ``threads``)."""

    machine: Machine
    quick: bool
    tokens_per_prompt: int
    gamma: int
    block: int
    threads: int
    generations: tuple[Generation, ...]
    teacher_forcing: tuple[TeacherForcing, ...]
    summary: RoundingSummary
    seconds: float
    script = "benchmarks/bench_rounding.py"

    def to_json(self) -> dict:
        d = {f.name: to_json(getattr(self, f.name)) for f in fields(self)}
        d["machine"] = self.machine.to_dict()
        d["teacher_forcing"] = [_dashed(x, back=True) for x in d["teacher_forcing"]]
        return {"schema": 2, **d}

    @classmethod
    def from_json(cls, d: dict) -> RoundingStudy:
        body = {**d, "teacher_forcing": [_dashed(x) for x in d["teacher_forcing"]]}
        given = {"machine": Machine.from_dict(d["machine"])}
        return from_json(cls, body, "", given=given, ignore=("schema",))

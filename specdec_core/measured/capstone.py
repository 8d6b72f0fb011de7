"""The capstone's results (``benchmarks/bench_llm.py`` → ``specdec_core/results/llm.json``) as
typed records keyed by (workload, temperature, draft, γ): every float a float, every γ an int,
no label strings to parse back. :func:`read_capstone` is the file's one reader,
:func:`write_capstone` its one writer."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..repeats import PairedRatio
from .layout import LayoutChoice
from .machine import Machine
from .records import CostCurve, Spread, from_json, json_int, json_number, to_json
from .store import in_file, read_json, results_path, write_json

__all__ = [
    "Calibration",
    "Capstone",
    "Chosen",
    "Config",
    "LawTest",
    "MemoryProbe",
    "Micro",
    "Prediction",
    "Run",
    "Sweep",
    "capstone_cost_curve",
    "measured_pass_costs",
    "read_capstone",
    "write_capstone",
]

PLAIN = "plain"
#: Other models decoding by themselves (γ = 0), timed beside plain: the int8 copy of the target
#: (faster, but it samples its own law, not the target's).
ALONE = ("int8-alone",)


@dataclass(frozen=True, order=True)
class Config:
    """One configuration: workload, temperature, draft ("plain" for plain decoding; a name of
    :data:`ALONE` for another model decoding by itself) and γ (0 for those)."""

    workload: str
    temperature: float
    draft: str
    gamma: int

    def __post_init__(self):
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)):
            raise ValueError(f"temperature must be a number, got {self.temperature!r}")
        object.__setattr__(self, "temperature", float(self.temperature))
        if isinstance(self.gamma, bool) or not isinstance(self.gamma, int) or self.gamma < 0:
            raise ValueError(f"gamma must be a non-negative int, got {self.gamma!r}")
        if (self.draft == PLAIN or self.draft in ALONE) != (self.gamma == 0):
            raise ValueError(
                f"gamma is 0 exactly for plain decoding (and {', '.join(ALONE)}), got {self.draft!r} with γ = {self.gamma}"
            )

    @property
    def label(self) -> str:
        g = "" if self.gamma == 0 else f" γ={self.gamma}"
        return f"{self.workload} T={self.temperature:g} {self.draft}{g}"


#: The keys of a configuration in a JSON object that also holds a record's fields.
_CONFIG_KEYS = ("workload", "temperature", "draft", "gamma")


def _key(d: dict) -> Config:
    return Config(*(d[k] for k in _CONFIG_KEYS))


@dataclass(frozen=True)
class Prediction:
    """Predicted before any timed run: decode-only ms and tokens/s, rounds, mean tokens per round, α.

    ``low``–``high`` (temperature 1 only): the tokens/s range, 95 %, in which the *median of the
    timed repeats* is expected, from how much the prediction varies between the teacher-forced
    trajectories (:func:`specdec_core.llm.predict.median_range`); None where there is one
    trajectory (greedy, plain decoding) or the record predates it."""

    decode_ms: float
    tokens_per_s: float
    rounds: float
    mean_k: float
    alpha: float
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Chosen:
    """Per (workload, temperature): the configuration with the best predicted speed-up, fixed before the runs."""

    workload: str
    temperature: float
    draft: str
    gamma: int
    predicted_speedup: float


@dataclass(frozen=True)
class RoundMs:
    draft: float
    verify: float
    overhead: float


@dataclass(frozen=True)
class Run:
    """One configuration's timed repeats: tokens/s and speed-ups over the plain run of the same
    repeat (decode-only and end to end), α, tokens per round, and the prediction made before."""

    config: Config
    decode_tokens_per_s: Spread
    e2e_tokens_per_s: Spread
    speedup_decode: Spread
    speedup_e2e: Spread
    speedup_paired: PairedRatio
    prefill_ms: Spread
    alpha: Spread
    mean_k: Spread
    n_tokens: int
    per_round_ms: RoundMs
    k_hist: tuple[int, ...]
    accept_by_pos: tuple[tuple[int, ...], ...]
    greedy_equal: tuple[bool, ...] | None = None
    predicted_tokens_per_s: float | None = None
    prediction_error: float | None = None

    def to_json(self) -> dict:
        d = {f: to_json(getattr(self, f)) for f in self.__dataclass_fields__ if f != "config"}
        return {**to_json(self.config), **d}

    @classmethod
    def from_json(cls, d: dict) -> Run:
        key = _key(d)
        return from_json(cls, d, f"run {key.label}", given={"config": key}, ignore=_CONFIG_KEYS)


@dataclass(frozen=True)
class MemoryProbe:
    """Peak resident memory (VmHWM) of a fresh process loading the model and decoding 4 tokens."""

    name: str
    from_cache: bool
    seconds: float
    vm_hwm_mib: float
    text: str


@dataclass(frozen=True)
class Micro:
    """Micro-benchmarks: the target call scoring T positions ({temperature: curve}), each draft
    proposing γ tokens ({draft: curve}) and the sampler per round ({temperature: curve})."""

    context_tokens: int
    reps: int
    how: str
    verify: dict[float, CostCurve]
    draft: dict[str, CostCurve]
    overhead: dict[float, CostCurve]

    def cost_model(self, temperature: float, draft: str | None = None):
        """The medians as a :class:`specdec_core.llm.predict.CostModel` (``draft`` None: plain)."""
        from ..llm.predict import CostModel

        d = self.draft[draft].median() if draft is not None else {0: 0.0}
        return CostModel(
            self.verify[float(temperature)].median(), d, self.overhead[float(temperature)].median()
        )

    def to_json(self) -> dict:
        return {
            "context_tokens": self.context_tokens,
            "reps": self.reps,
            "how": self.how,
            "verify": [{"temperature": t, **c.to_json()} for t, c in self.verify.items()],
            "draft": [{"draft": n, **c.to_json()} for n, c in self.draft.items()],
            "overhead": [{"temperature": t, **c.to_json()} for t, c in self.overhead.items()],
        }

    @classmethod
    def from_json(cls, d: dict) -> Micro:
        def by_t(part: str) -> dict:
            return {
                json_number(c["temperature"], f"micro.{part}[{i}].temperature"): CostCurve.from_json(
                    c, f"micro.{part}[{i}]"
                )
                for i, c in enumerate(d[part])
            }

        return cls(
            json_int(d["context_tokens"], "micro.context_tokens"),
            json_int(d["reps"], "micro.reps"),
            str(d["how"]),
            by_t("verify"),
            {str(c["draft"]): CostCurve.from_json(c, f"micro.draft[{i}]") for i, c in enumerate(d["draft"])},
            by_t("overhead"),
        )


@dataclass(frozen=True)
class ExitLayer:
    """The early-exit draft at k layers: its shrinkage, step cost, predicted T = 1 speed-up, and
    α on held-out calibration text by (temperature, trained)."""

    k: int
    shrink: float
    step_ms: float
    predicted_speedup: float
    alpha_trained: dict[float, float] = field(default_factory=dict)
    alpha_untrained: dict[float, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        d = {f: getattr(self, f) for f in ("k", "shrink", "step_ms", "predicted_speedup")}
        d["alpha"] = [
            {"temperature": t, "trained": self.alpha_trained[t], "untrained": self.alpha_untrained[t]}
            for t in sorted(self.alpha_trained)
        ]
        return d

    @classmethod
    def from_json(cls, d: dict, where: str = "exit") -> ExitLayer:
        a = d["alpha"]

        def alpha(kind: str) -> dict:
            w = f"{where}.alpha"
            return {
                json_number(x["temperature"], f"{w}[{i}].temperature"): json_number(
                    x[kind], f"{w}[{i}].{kind}"
                )
                for i, x in enumerate(a)
            }

        return cls(
            json_int(d["k"], f"{where}.k"),
            json_number(d["shrink"], f"{where}.shrink"),
            json_number(d["step_ms"], f"{where}.step_ms"),
            json_number(d["predicted_speedup"], f"{where}.predicted_speedup"),
            alpha("trained"),
            alpha("untrained"),
        )


@dataclass(frozen=True)
class Calibration:
    """Stage 2: prompts never evaluated; the early-exit layers, the n-gram discount, the feature draft."""

    prompts: tuple[str, ...]
    fit_prompts: tuple[str, ...]
    validation_prompts: tuple[str, ...]
    alpha_prompts: tuple[str, ...]
    fit_positions: int
    exit: dict[int, ExitLayer]
    exit_k: int
    ngram_alpha: dict[float, float]
    ngram_discount: float
    feature: dict
    seconds: float | None = None

    def to_json(self) -> dict:
        d = {f: to_json(getattr(self, f)) for f in self.__dataclass_fields__}
        d["exit"] = [e.to_json() for _, e in sorted(self.exit.items())]
        d["ngram_alpha"] = [{"discount": k, "alpha": v} for k, v in self.ngram_alpha.items()]
        return d

    @classmethod
    def from_json(cls, d: dict) -> Calibration:
        return cls(
            tuple(d["prompts"]),
            tuple(d["fit_prompts"]),
            tuple(d["validation_prompts"]),
            tuple(d["alpha_prompts"]),
            json_int(d["fit_positions"], "calibration.fit_positions"),
            {
                json_int(e["k"], f"calibration.exit[{i}].k"): ExitLayer.from_json(e, f"calibration.exit[{i}]")
                for i, e in enumerate(d["exit"])
            },
            json_int(d["exit_k"], "calibration.exit_k"),
            {
                json_number(x["discount"], f"calibration.ngram_alpha[{i}].discount"): json_number(
                    x["alpha"], f"calibration.ngram_alpha[{i}].alpha"
                )
                for i, x in enumerate(d["ngram_alpha"])
            },
            json_number(d["ngram_discount"], "calibration.ngram_discount"),
            dict(d["feature"]),
            _optional(d.get("seconds"), "calibration.seconds"),
        )


@dataclass(frozen=True)
class Gof:
    chi2: float
    dof: int
    cells: int
    p_value: float
    rejected: bool
    accepted: int
    summary: str


@dataclass(frozen=True)
class LawTest:
    """Stage 5: the first token of a γ = 1 round, correct and broken variants, n from a power calculation."""

    prefix: str
    draft: str
    alpha: float
    n: int
    power: float
    tv_broken: float
    threshold: float
    correct: Gof
    broken_corrects_from_p: Gof
    seconds: float | None = None
    top: tuple | None = None
    rerun: dict | None = None


@dataclass(frozen=True)
class Margins:
    """Greedy top-2 logit gaps along a workload's plain greedy output."""

    workload: str
    min: float
    smallest: tuple[float, ...]
    below_1e_4: int
    below_1e_3: int
    below_1e_2: int
    positions: int


@dataclass(frozen=True)
class Sweep:
    """Stage 4's settings: repeats, tokens per workload, configurations, load at the plain runs."""

    seconds: float
    load_avg_1min_at_plain_runs: tuple[float, ...]
    reps: int
    max_new_tokens: dict
    configs: tuple[tuple, ...]
    seeds: str
    order: str
    definition: str


@dataclass(frozen=True)
class Parting:
    """Greedy decoding from one workload's prompt by the target and by its int8 copy: the first
    position where their outputs differ (None: identical over ``tokens``), the text they share
    just before it and each one's next few tokens from there."""

    workload: str
    tokens: int
    position: int | None
    shared_text: str
    target_text: str
    copy_text: str


@dataclass(frozen=True)
class CopyGap:
    """How far the int8 copy's next-token law q is from the target's p along the target's own
    temperature-1 trajectories of one workload (teacher forcing): TV(p, q) = 1 − α per position."""

    workload: str
    positions: int
    tv_mean: float
    tv_p90: float
    tv_max: float


@dataclass(frozen=True)
class CopyLawTest:
    """The first token of a γ = 1 round with the int8 copy as the draft, against p (it must not be
    rejected), and tokens drawn from the copy alone (the lossy path; the test has the stated power
    to reject it): chi-square goodness of fit, n from a power calculation for q against p."""

    prefix: str
    alpha: float
    tv_copy: float
    n: int
    power: float
    threshold: float
    speculative: Gof
    copy_alone: Gof
    seconds: float | None = None


@dataclass(frozen=True)
class QuantizedStudy:
    """The quantized-copy draft (issue 35): how much quantizing moved the weights (per output row,
    RMS of the change over RMS of the row: median and 99th percentile over every row of every
    matrix), its bytes against the float32 weights', the gap between q and p per workload, and
    where greedy decoding by the copy parts from the target's."""

    row_error_median: float
    row_error_p99: float
    int8_bytes: int
    float32_bytes: int
    gaps: tuple[CopyGap, ...]
    partings: tuple[Parting, ...]
    law: CopyLawTest | None = None


@dataclass(frozen=True)
class Capstone:
    """Everything ``llm.json`` holds, typed. Runs, predictions and break-even α are keyed by
    :class:`Config` (break-even by (temperature, draft, γ); chosen by (workload, temperature))."""

    machine: Machine
    quick: bool
    memory: dict[str, MemoryProbe]
    load: dict
    calibration: Calibration
    micro: Micro
    break_even_alpha: dict[tuple[float, str, int], float | None]
    predictions: dict[Config, Prediction]
    chosen: dict[tuple[str, float], Chosen]
    teacher_forcing_alpha: dict[tuple[str, float, str], float]
    predictions_info: dict
    greedy_margins: dict[str, Margins]
    sweep: Sweep | None
    runs: dict[Config, Run]
    law: LawTest | None
    law_history: tuple[LawTest, ...] = ()
    process_vm_hwm_mib: float | None = None
    #: the weight layout the run chose by timing the candidates at load (None: runs before issue 32)
    layout: LayoutChoice | None = None
    #: the quantized-copy draft's weights, q-to-p gap and greedy parting (None: runs before issue 35)
    quantized: QuantizedStudy | None = None
    #: runs of other models decoding by themselves (:data:`ALONE`), against the same plain runs;
    #: kept apart from ``runs``, which hold the target's own output law
    alone: dict[Config, Run] = field(default_factory=dict)

    def how(self) -> str:
        """The machine line for this run, with the load over the timed runs."""
        la = self.sweep.load_avg_1min_at_plain_runs if self.sweep else ()
        return self.machine.how("benchmarks/bench_llm.py", during=(min(la), max(la)) if la else None)

    def select(self, *, workload=None, temperature=None, draft=None, gamma=None) -> list[Run]:
        """The runs matching every given field, in file order."""
        return [
            r
            for c, r in self.runs.items()
            if (workload is None or c.workload == workload)
            and (temperature is None or c.temperature == float(temperature))
            and (draft is None or c.draft == draft)
            and (gamma is None or c.gamma == gamma)
        ]

    def run(self, workload: str, temperature: float, draft: str, gamma: int = 0) -> Run:
        """The one run of a configuration; raises ValueError naming it when absent."""
        c = Config(workload, temperature, draft, gamma)
        if c not in self.runs:
            raise ValueError(f"no run {c.label} in the results")
        return self.runs[c]

    def with_law(self, law: LawTest) -> Capstone:
        """This record with a new law test; the earlier one kept in the history (a miss is part of the record)."""
        hist = self.law_history + ((replace(law_strip(self.law)),) if self.law is not None else ())
        return replace(self, law=law, law_history=hist)


def law_strip(law: LawTest) -> LawTest:
    return replace(law, top=None)


def _dump(c: Capstone) -> dict:
    return {
        "schema": 2,
        "machine": c.machine.to_dict(),
        "quick": c.quick,
        "process_vm_hwm_mib": c.process_vm_hwm_mib,
        "memory": [to_json(m) for m in c.memory.values()],
        "load": c.load,
        "calibration": c.calibration.to_json(),
        "micro": c.micro.to_json(),
        "break_even_alpha": [
            {"temperature": t, "draft": d, "gamma": g, "alpha": a}
            for (t, d, g), a in c.break_even_alpha.items()
        ],
        "predictions": {
            **c.predictions_info,
            "values": [{**to_json(k), **to_json(v)} for k, v in c.predictions.items()],
            "chosen": [to_json(v) for v in c.chosen.values()],
            "teacher_forcing_alpha": [
                {"workload": w, "temperature": t, "draft": d, "alpha": a}
                for (w, t, d), a in c.teacher_forcing_alpha.items()
            ],
        },
        "greedy_margins": [to_json(m) for m in c.greedy_margins.values()],
        "sweep": to_json(c.sweep),
        "runs": [r.to_json() for r in c.runs.values()],
        "law": to_json(c.law),
        "law_history": [to_json(x) for x in c.law_history],
        **({"layout": c.layout.to_json()} if c.layout is not None else {}),
        **({"quantized": to_json(c.quantized)} if c.quantized is not None else {}),
        **({"alone": [r.to_json() for r in c.alone.values()]} if c.alone else {}),
    }


def _optional(v, where: str) -> float | None:
    """A number that may be absent (null), else finite (:func:`~.records.json_number`)."""
    return None if v is None else json_number(v, where)


def _pred(d: dict) -> tuple[Config, Prediction]:
    key = _key(d)
    return key, from_json(Prediction, d, f"prediction {key.label}", ignore=_CONFIG_KEYS)


def _load(d: dict) -> Capstone:
    if d.get("schema") != 2:
        raise ValueError(
            f"llm.json schema {d.get('schema')!r}: expected 2 (tools/convert_results.py migrates)"
        )
    pr = d["predictions"]
    return Capstone(
        machine=Machine.from_dict(d["machine"]),
        quick=bool(d["quick"]),
        memory={
            m["name"]: from_json(MemoryProbe, m, f"memory[{i}]") for i, m in enumerate(d.get("memory", []))
        },
        load=dict(d.get("load") or {}),
        calibration=Calibration.from_json(d["calibration"]),
        micro=Micro.from_json(d["micro"]),
        break_even_alpha={
            (
                json_number(x["temperature"], f"break_even_alpha[{i}].temperature"),
                x["draft"],
                json_int(x["gamma"], f"break_even_alpha[{i}].gamma"),
            ): _optional(x["alpha"], f"break_even_alpha[{i}].alpha")
            for i, x in enumerate(d["break_even_alpha"])
        },
        predictions=dict(_pred(x) for x in pr["values"]),
        chosen={
            (x["workload"], json_number(x["temperature"], f"predictions.chosen[{i}].temperature")): from_json(
                Chosen, x, f"predictions.chosen[{i}]"
            )
            for i, x in enumerate(pr["chosen"])
        },
        teacher_forcing_alpha={
            (
                x["workload"],
                json_number(x["temperature"], f"predictions.teacher_forcing_alpha[{i}].temperature"),
                x["draft"],
            ): json_number(x["alpha"], f"predictions.teacher_forcing_alpha[{i}].alpha")
            for i, x in enumerate(pr["teacher_forcing_alpha"])
        },
        predictions_info={
            k: v for k, v in pr.items() if k not in ("values", "chosen", "teacher_forcing_alpha")
        },
        greedy_margins={
            m["workload"]: from_json(Margins, m, f"greedy_margins[{i}]")
            for i, m in enumerate(d.get("greedy_margins", []))
        },
        sweep=from_json(Sweep, d["sweep"], "sweep") if d.get("sweep") else None,
        runs={r.config: r for r in (Run.from_json(x) for x in d.get("runs", []))},
        law=from_json(LawTest, d["law"], "law") if d.get("law") else None,
        law_history=tuple(
            from_json(LawTest, x, f"law_history[{i}]") for i, x in enumerate(d.get("law_history", []))
        ),
        process_vm_hwm_mib=_optional(d.get("process_vm_hwm_mib"), "process_vm_hwm_mib"),
        layout=LayoutChoice.from_json(d["layout"], "layout") if d.get("layout") else None,
        quantized=from_json(QuantizedStudy, d["quantized"], "quantized") if d.get("quantized") else None,
        alone={r.config: r for r in (Run.from_json(x) for x in d.get("alone", []))},
    )


def read_capstone(path: str | Path | None = None) -> Capstone:
    """The capstone's results: ``path``, else ``$SPECDEC_LLM_RESULTS``, else the stored
    ``specdec_core/results/llm.json``. Raises ValueError naming what is missing or unreadable."""
    import os

    p = path or os.environ.get("SPECDEC_LLM_RESULTS") or results_path("llm.json")
    data = read_json(p)
    try:
        return _load(data)
    except (KeyError, TypeError) as e:
        raise ValueError(f"{p}: unreadable ({type(e).__name__}: {e})") from None
    except ValueError as e:
        raise ValueError(in_file(p, e)) from None


def write_capstone(capstone: Capstone, path: str | Path) -> None:
    """The file's one writer (what :func:`read_capstone` reads back)."""
    if not isinstance(capstone, Capstone):
        raise ValueError(f"capstone must be a Capstone record, got {type(capstone).__name__}")
    write_json(path, _dump(capstone))


def capstone_cost_curve(capstone: Capstone | None = None, temperature: float = 0.0) -> CostCurve:
    """The capstone's measured cost of one target call scoring T positions (``temperature`` 0:
    greedy verification), from ``capstone`` or the stored results. Notebooks 06 and 08 read it."""
    cap = capstone if capstone is not None else read_capstone()
    if not isinstance(cap, Capstone):
        raise ValueError(f"capstone must be a Capstone record, got {type(cap).__name__}")
    t = float(temperature)
    if t not in cap.micro.verify:
        raise ValueError(f"no cost curve at temperature {t:g} (found {sorted(cap.micro.verify)})")
    return cap.micro.verify[t]


def measured_pass_costs(path: str | Path | None = None) -> tuple[dict | None, str]:
    """For notebook 08, never raising: ``({positions: (fastest, median, slowest) ms}, how it was
    measured)`` from the capstone's results (``path`` or the stored file), or ``(None, reason)``
    when they are missing or unreadable (another notebook's benchmark, which may change)."""
    try:
        cap = read_capstone(path) if path is not None else read_capstone()
        curve = capstone_cost_curve(cap)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
        return None, f"no measured cost curve ({type(exc).__name__}: {exc})"
    return curve.spread(), (
        f"{cap.machine.how('benchmarks/bench_llm.py')}, {curve.reps or '?'} repeats per size "
        f"(fastest, median, slowest; {curve.source})"
    )

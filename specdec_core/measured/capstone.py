"""The capstone's results (``benchmarks/bench_llm.py`` → ``specdec_core/results/llm.json``) as
typed records: every configuration a :class:`Config` (workload, temperature, draft, γ) carried by
the record it keys, every range declared in the field types (:mod:`.codec`). :func:`read_capstone`
is the file's reader; :func:`.codec.write` (or ``store.write_stored``) its writer."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import msgspec

from ..repeats import PairedRatio
from . import codec
from .codec import Count, Ms, NonNegative, Positive, Probability, Record, Schema, Temperature, Utc
from .layout import LayoutChoice
from .machine import Machine
from .records import CostCurve, Spread
from .store import results_path

__all__ = [
    "ALONE",
    "BreakEven",
    "Calibration",
    "Capstone",
    "Chosen",
    "Config",
    "CopyGap",
    "CopyLawTest",
    "ExitLayer",
    "FeatureFit",
    "Gof",
    "LawTest",
    "Load",
    "Margins",
    "MemoryProbe",
    "Micro",
    "Parting",
    "Prediction",
    "Predictions",
    "QuantizedStudy",
    "Rerun",
    "RoundMs",
    "Run",
    "Sweep",
    "TeacherAlpha",
    "TopToken",
    "capstone_cost_curve",
    "measured_pass_costs",
    "read_capstone",
]

PLAIN = "plain"
#: Other models decoding by themselves (γ = 0), timed beside plain: the int8 copy of the target
#: (faster, but it samples its own law, not the target's).
ALONE = ("int8-alone",)
#: the evaluated workloads (:data:`specdec_core.llm.workloads.WORKLOADS`)
Workload = Literal["copy", "code", "story"]
#: plain decoding, the drafts of the sweep, and the models decoding alone (:data:`ALONE`)
Draft = Literal["plain", "lookup", "ngram", "exit", "feature", "quant", "int8-alone"]
#: a draft that proposes (a key of the micro-benchmarks' draft curves)
Proposer = Literal["lookup", "ngram", "exit", "feature", "quant"]


class Config(Record, order=True):
    """One configuration: workload, temperature, draft ("plain" for plain decoding; a name of
    :data:`ALONE` for another model decoding by itself) and γ (0 for those)."""

    workload: Workload
    temperature: Temperature
    draft: Draft
    gamma: Count

    def __post_init__(self):
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, (int, float)):
            raise ValueError(f"temperature must be a number, got {self.temperature!r}")
        msgspec.structs.force_setattr(self, "temperature", float(self.temperature))
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


class Prediction(Record):
    """Predicted for ``config`` before any timed run: decode-only ms and tokens/s, rounds, mean
    tokens per round, α. ``low``–``high`` (temperature 1 only): the tokens/s range, 95 %, in which
    the *median of the timed repeats* is expected (:func:`specdec_core.llm.predict.median_range`);
    None where there is one trajectory (greedy, plain decoding)."""

    config: Config
    decode_ms: Ms
    tokens_per_s: Ms
    rounds: NonNegative
    mean_k: NonNegative
    alpha: Probability
    low: NonNegative | None = None
    high: NonNegative | None = None


class Chosen(Record):
    """Per (workload, temperature): the configuration with the best predicted speed-up, fixed before the runs."""

    workload: Workload
    temperature: Temperature
    draft: Draft
    gamma: Count
    predicted_speedup: Ms


class TeacherAlpha(Record):
    """Mean α of ``draft`` along the target's own trajectories of a workload (teacher forcing)."""

    workload: Workload
    temperature: Temperature
    draft: Proposer
    alpha: Probability


class Predictions(Record):
    """Stage 3: every configuration's prediction, the chosen ones, α by teacher forcing, and when
    (``made_utc``, a time of day), by which rule and in how many seconds."""

    values: tuple[Prediction, ...]
    chosen: tuple[Chosen, ...]
    teacher_forcing_alpha: tuple[TeacherAlpha, ...]
    made_utc: str = ""
    chosen_rule: str = ""
    seconds: NonNegative | None = None


class BreakEven(Record):
    """The α at which ``draft`` at γ breaks even at ``temperature`` (None: no α does)."""

    temperature: Temperature
    draft: Proposer
    gamma: Positive
    alpha: Probability | None


class RoundMs(Record):
    """Median ms per round: drafting, the target's verification, the sampler."""

    draft: NonNegative
    verify: NonNegative
    overhead: NonNegative


class Run(Record):
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
    n_tokens: Count
    per_round_ms: RoundMs
    k_hist: tuple[Count, ...]
    accept_by_pos: tuple[tuple[Count, ...], ...]
    greedy_equal: tuple[bool, ...] | None = None
    predicted_tokens_per_s: Ms | None = None
    #: predicted ÷ measured − 1: signed
    prediction_error: float | None = None


class MemoryProbe(Record):
    """Peak resident memory (VmHWM) of a fresh process loading the model and decoding 4 tokens."""

    name: str
    from_cache: bool
    seconds: NonNegative
    vm_hwm_mib: NonNegative
    text: str


class Load(Record):
    """The timed run's model load: wall seconds and whether the weight cache was used."""

    seconds: NonNegative
    from_cache: bool


class Micro(Record):
    """Micro-benchmarks: the target call scoring T positions ({temperature: curve}), each draft
    proposing γ tokens ({draft: curve}) and the sampler per round ({temperature: curve})."""

    context_tokens: Count
    reps: Positive
    how: str
    verify: dict[Temperature, CostCurve]
    draft: dict[Proposer, CostCurve]
    overhead: dict[Temperature, CostCurve]


class ExitLayer(Record):
    """The early-exit draft at k layers: its shrinkage, step cost, predicted T = 1 speed-up, and
    α on held-out calibration text {temperature: α}, trained and untrained."""

    k: Positive
    shrink: NonNegative
    step_ms: Ms
    predicted_speedup: NonNegative
    alpha_trained: dict[Temperature, Probability] = {}
    alpha_untrained: dict[Temperature, Probability] = {}


class FeatureFit(Record):
    """The feature draft as fitted in calibration: positions and texts, inputs, ridge, random
    features, shortlist size, α by proposal depth on held-out text {temperature: (α per depth)}."""

    fit_positions: Count
    fit_texts: str
    inputs: str
    ridge: NonNegative
    n_random: Count
    shortlist: Count
    alpha_by_depth_heldout: dict[Temperature, tuple[Probability, ...]]
    seconds: NonNegative | None = None


class Calibration(Record):
    """Stage 2: prompts never evaluated; the early-exit layers {k: layer}, the n-gram α {discount:
    α} and the discount chosen, the feature draft."""

    prompts: tuple[str, ...]
    fit_prompts: tuple[str, ...]
    validation_prompts: tuple[str, ...]
    alpha_prompts: tuple[str, ...]
    fit_positions: Count
    exit: dict[Positive, ExitLayer]
    exit_k: Positive
    ngram_alpha: dict[Probability, Probability]
    ngram_discount: Probability
    feature: FeatureFit
    seconds: NonNegative | None = None

    def __post_init__(self):
        if any(k != e.k for k, e in self.exit.items()):
            raise ValueError("calibration.exit: every key must be its layer's k")
        if self.exit and self.exit_k not in self.exit:
            raise ValueError(f"calibration.exit_k {self.exit_k} is not one of the layers {sorted(self.exit)}")


class Gof(Record):
    """A chi-square goodness-of-fit outcome (:func:`specdec_core.chi_square_gof`)."""

    chi2: NonNegative
    dof: Count
    cells: Positive
    p_value: Probability
    rejected: bool
    accepted: Count
    summary: str


class TopToken(Record):
    """One of the most likely first tokens: its text and probability under p, q and the broken law."""

    text: str
    p: Probability
    q: Probability
    broken: Probability


class Rerun(Record):
    """When and why a law test was re-run alone."""

    date_utc: Utc
    why: str


class LawTest(Record):
    """Stage 5: the first token of a γ = 1 round, correct and broken variants, n from a power calculation."""

    prefix: str
    draft: str
    alpha: Probability
    n: Positive
    power: Probability
    tv_broken: Probability
    threshold: Probability
    correct: Gof
    broken_corrects_from_p: Gof
    seconds: NonNegative | None = None
    top: tuple[TopToken, ...] | None = None
    rerun: Rerun | None = None


class Margins(Record):
    """Greedy top-2 logit gaps along a workload's plain greedy output."""

    workload: Workload
    min: NonNegative
    smallest: tuple[NonNegative, ...]
    below_1e_4: Count
    below_1e_3: Count
    below_1e_2: Count
    positions: Count


class Sweep(Record):
    """Stage 4's settings: repeats, tokens per workload, configurations (draft, γ, adaptive),
    load at the plain runs."""

    seconds: NonNegative
    load_avg_1min_at_plain_runs: tuple[NonNegative, ...]
    reps: Positive
    max_new_tokens: dict[Workload, Positive]
    configs: tuple[tuple[Proposer, Positive, bool], ...]
    seeds: str
    order: str
    definition: str


class Parting(Record):
    """Greedy decoding from one workload's prompt by the target and by its int8 copy: the first
    position where their outputs differ (None: identical over ``tokens``), the text they share
    just before it and each one's next few tokens from there."""

    workload: Workload
    tokens: Positive
    position: Count | None
    shared_text: str
    target_text: str
    copy_text: str


class CopyGap(Record):
    """How far the int8 copy's next-token law q is from the target's p along the target's own
    temperature-1 trajectories of one workload (teacher forcing): TV(p, q) = 1 − α per position."""

    workload: Workload
    positions: Count
    tv_mean: Probability
    tv_p90: Probability
    tv_max: Probability


class CopyLawTest(Record):
    """The first token of a γ = 1 round with the int8 copy as the draft, against p (it must not be
    rejected), and tokens drawn from the copy alone (the lossy path; the test has the stated power
    to reject it): chi-square goodness of fit, n from a power calculation for q against p."""

    prefix: str
    alpha: Probability
    tv_copy: Probability
    n: Positive
    power: Probability
    threshold: Probability
    speculative: Gof
    copy_alone: Gof
    seconds: NonNegative | None = None


class QuantizedStudy(Record):
    """The quantized-copy draft (issue 35): how much quantizing moved the weights (per output row,
    RMS of the change over RMS of the row: median and 99th percentile over every row of every
    matrix), its bytes against the float32 weights', the gap between q and p per workload, and
    where greedy decoding by the copy parts from the target's."""

    row_error_median: NonNegative
    row_error_p99: NonNegative
    int8_bytes: Count
    float32_bytes: Count
    gaps: tuple[CopyGap, ...]
    partings: tuple[Parting, ...]
    law: CopyLawTest | None = None


class Capstone(Record):
    """Everything ``llm.json`` holds, typed. Runs and predictions carry their :class:`Config`;
    look them up with :meth:`run`, :meth:`select`, :meth:`prediction`, :meth:`chosen`,
    :meth:`break_even_alpha` and :meth:`teacher_alpha`."""

    machine: Machine
    quick: bool
    memory: tuple[MemoryProbe, ...]
    load: Load | None
    calibration: Calibration
    micro: Micro
    break_even: tuple[BreakEven, ...]
    predictions: Predictions
    greedy_margins: tuple[Margins, ...]
    sweep: Sweep | None
    runs: tuple[Run, ...]
    law: LawTest | None
    law_history: tuple[LawTest, ...] = ()
    process_vm_hwm_mib: NonNegative | None = None
    #: the weight layout the run chose by timing the candidates at load
    layout: LayoutChoice | None = None
    #: the quantized-copy draft's weights, q-to-p gap and greedy parting
    quantized: QuantizedStudy | None = None
    #: runs of other models decoding by themselves (:data:`ALONE`), against the same plain runs;
    #: kept apart from ``runs``, which hold the target's own output law
    alone: tuple[Run, ...] = ()
    schema: Schema = 3

    def how(self) -> str:
        """The machine line for this run, with the load over the timed runs."""
        la = self.sweep.load_avg_1min_at_plain_runs if self.sweep else ()
        return self.machine.how("benchmarks/bench_llm.py", during=(min(la), max(la)) if la else None)

    def select(self, *, workload=None, temperature=None, draft=None, gamma=None) -> list[Run]:
        """The runs matching every given field, in file order."""
        return [
            r
            for r in self.runs
            if (workload is None or r.config.workload == workload)
            and (temperature is None or r.config.temperature == float(temperature))
            and (draft is None or r.config.draft == draft)
            and (gamma is None or r.config.gamma == gamma)
        ]

    def find(self, config: Config) -> Run | None:
        """The run of ``config`` (in :attr:`alone` for a draft of :data:`ALONE`), or None."""
        return next(
            (r for r in (self.alone if config.draft in ALONE else self.runs) if r.config == config), None
        )

    def run(self, workload: str, temperature: float, draft: str, gamma: int = 0) -> Run:
        """The one run of a configuration; raises ValueError naming it when absent."""
        c = Config(workload, temperature, draft, gamma)
        r = self.find(c)
        if r is None:
            raise ValueError(f"no run {c.label} in the results")
        return r

    def prediction(self, config: Config) -> Prediction | None:
        """The prediction made for ``config`` before the runs, or None."""
        return next((p for p in self.predictions.values if p.config == config), None)

    def chosen(self) -> dict[tuple[str, float], Chosen]:
        """{(workload, temperature): the configuration chosen before the runs}."""
        return {(c.workload, c.temperature): c for c in self.predictions.chosen}

    def break_even_alpha(self, temperature: float, draft: str, gamma: int) -> float | None:
        """The stored break-even α of ``draft`` at γ and ``temperature`` (None: none; ValueError: not stored)."""
        for b in self.break_even:
            if (b.temperature, b.draft, b.gamma) == (float(temperature), draft, gamma):
                return b.alpha
        raise ValueError(f"no break-even α stored for {draft} γ={gamma} at T = {temperature:g}")

    def teacher_alpha(self, workload: str, temperature: float, draft: str) -> float | None:
        """α by teacher forcing of ``draft`` on ``workload`` at ``temperature``, or None."""
        key = (workload, float(temperature), draft)
        return next(
            (
                a.alpha
                for a in self.predictions.teacher_forcing_alpha
                if (a.workload, a.temperature, a.draft) == key
            ),
            None,
        )

    def with_law(self, law: LawTest) -> Capstone:
        """This record with a new law test; the earlier one kept in the history (a miss is part of the record)."""
        hist = self.law_history + ((self.law.replace(top=None),) if self.law is not None else ())
        return self.replace(law=law, law_history=hist)


def read_capstone(path: str | Path | None = None) -> Capstone:
    """The capstone's results: ``path``, else ``$SPECDEC_LLM_RESULTS``, else the stored
    ``specdec_core/results/llm.json``. Raises ValueError naming the file and the field."""
    return codec.read(Capstone, path or os.environ.get("SPECDEC_LLM_RESULTS") or results_path("llm.json"))


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
    except (OSError, ValueError) as exc:
        return None, f"no measured cost curve ({type(exc).__name__}: {exc})"
    return curve.spread(), (
        f"{cap.machine.how('benchmarks/bench_llm.py')}, {curve.reps or '?'} repeats per size "
        f"(fastest, median, slowest; {curve.source})"
    )

"""The capstone's results (``bench_llm.py`` → ``results/llm.json``) as codec records (:mod:`.codec`):
ranges in the field types, each :class:`Config` carried by the record it keys."""

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

PLAIN = "plain"
#: Other models decoding alone (γ = 0) beside plain: the int8 copy (faster, but it samples its own law).
ALONE = ("int8-alone",)
Workload = Literal["copy", "code", "story"]  # specdec_core.llm.workloads.WORKLOADS
Proposer = Literal["lookup", "ngram", "exit", "feature", "quant"]  # the drafts that propose
Draft = Literal["plain", "lookup", "ngram", "exit", "feature", "quant", "int8-alone"]


class Config(Record, order=True):
    """Workload, temperature, draft ("plain", a proposer, or one of :data:`ALONE`) and γ (0: no proposer)."""

    workload: Workload
    temperature: Temperature
    draft: Draft
    gamma: Count

    def __post_init__(self):
        if isinstance(self.temperature, int) and not isinstance(self.temperature, bool):
            msgspec.structs.force_setattr(self, "temperature", float(self.temperature))  # 1 and 1.0: one key
        if (self.draft == PLAIN or self.draft in ALONE) != (self.gamma == 0):
            raise ValueError(
                f"gamma is 0 exactly for plain decoding and {ALONE}, got {self.draft} γ = {self.gamma}"
            )

    @property
    def label(self) -> str:
        g = "" if self.gamma == 0 else f" γ={self.gamma}"
        return f"{self.workload} T={self.temperature:g} {self.draft}{g}"


class Prediction(Record):
    """Predicted before any timed run; ``low``–``high``: 95 % range of the repeats' median tokens/s
    (several trajectories, T = 1: :func:`specdec_core.llm.predict.median_range`; else None)."""

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
    """Stage 3: the predictions, the choices, α by teacher forcing; when (time of day), rule, seconds."""

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


class PairedSpeedup(Record):
    """A paired ratio as stored: the fields of :class:`~specdec_core.repeats.PairedRatio`, which checks
    them (below 2 pairs there is no interval: low, high and sd_log are null)."""

    ratio: Ms
    low: Ms | None
    high: Ms | None
    n: Positive
    sd_log: NonNegative | None
    level: Probability

    def __post_init__(self):
        PairedRatio(*msgspec.structs.astuple(self))

    @classmethod
    def of(cls, r: PairedRatio) -> PairedSpeedup:
        return cls(r.ratio, r.low, r.high, r.n, r.sd_log, r.level)

    def __str__(self):
        return str(PairedRatio(*msgspec.structs.astuple(self)))


class Run(Record):
    """One configuration's timed repeats: tokens/s, speed-ups over plain in the same repeat, α, K, prediction."""

    config: Config
    decode_tokens_per_s: Spread
    e2e_tokens_per_s: Spread
    speedup_decode: Spread
    speedup_e2e: Spread
    speedup_paired: PairedSpeedup
    prefill_ms: Spread
    alpha: Spread
    mean_k: Spread
    n_tokens: Count
    per_round_ms: RoundMs
    k_hist: tuple[Count, ...]
    accept_by_pos: tuple[tuple[Count, ...], ...]
    greedy_equal: tuple[bool, ...] | None = None
    predicted_tokens_per_s: Ms | None = None
    prediction_error: float | None = None  # predicted ÷ measured − 1: signed


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
    """Cost curves: target scoring T positions and sampler by temperature; each draft proposing γ tokens."""

    context_tokens: Count
    reps: Positive
    how: str
    verify: dict[Temperature, CostCurve]
    draft: dict[Proposer, CostCurve]
    overhead: dict[Temperature, CostCurve]


class ExitLayer(Record):
    """The exit draft at k layers: shrinkage, step, T = 1 speed-up predicted, held-out α trained/untrained."""

    k: Positive
    shrink: NonNegative
    step_ms: Ms
    predicted_speedup: NonNegative
    alpha_trained: dict[Temperature, Probability] = {}
    alpha_untrained: dict[Temperature, Probability] = {}


class FeatureFit(Record):
    """The feature draft's fit; held-out α by depth {temperature: (α, …)}."""

    fit_positions: Count
    fit_texts: str
    inputs: str
    ridge: NonNegative
    n_random: Count
    shortlist: Count
    alpha_by_depth_heldout: dict[Temperature, tuple[Probability, ...]]
    seconds: NonNegative | None = None


class Calibration(Record):
    """Stage 2 (prompts never evaluated): exit layers {k: layer}, n-gram α {discount: α}, the feature draft."""

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
        if any(k != e.k for k, e in self.exit.items()) or (self.exit and self.exit_k not in self.exit):
            raise ValueError(
                f"exit must be {{k: layer k}} and exit_k one of them, got {sorted(self.exit)}, {self.exit_k}"
            )


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


class _Law(Record):
    """A law test of a γ = 1 round's first token after ``prefix``: α, n and power, p-value threshold."""

    prefix: str
    alpha: Probability
    n: Positive
    power: Probability
    threshold: Probability


class LawTest(_Law):
    """Stage 5: the correct and a broken variant (corrections from p), the draft and the top tokens."""

    draft: str
    tv_broken: Probability
    correct: Gof
    broken_corrects_from_p: Gof
    seconds: NonNegative | None = None
    top: tuple[TopToken, ...] | None = None
    rerun_utc: Utc | None = None  # when it was re-run alone (bench_llm.py --law-only)


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
    """Stage 4: repeats, tokens per workload, configurations (draft, γ, adaptive), load at plain runs."""

    seconds: NonNegative
    load_avg_1min_at_plain_runs: tuple[NonNegative, ...]
    reps: Positive
    max_new_tokens: dict[Workload, Positive]
    configs: tuple[tuple[Proposer, Positive, bool], ...]
    seeds: str
    order: str
    definition: str


class Parting(Record):
    """Greedy target vs int8 copy: where they part (None: not in ``tokens``), shared text, each one's next."""

    workload: Workload
    tokens: Positive
    position: Count | None
    shared_text: str
    target_text: str
    copy_text: str


class CopyGap(Record):
    """TV(p, q) = 1 − α per position of the int8 copy along the target's T = 1 trajectories."""

    workload: Workload
    positions: Count
    tv_mean: Probability
    tv_p90: Probability
    tv_max: Probability


class CopyLawTest(_Law):
    """The law test of the int8 copy as a draft (p's law: kept) and alone (q's: rejected at the power stated)."""

    tv_copy: Probability
    speculative: Gof
    copy_alone: Gof
    seconds: NonNegative | None = None


class QuantizedStudy(Record):
    """The int8 copy: row error (RMS change ÷ RMS of the row), bytes, q's gap to p, greedy partings."""

    row_error_median: NonNegative
    row_error_p99: NonNegative
    int8_bytes: Count
    float32_bytes: Count
    gaps: tuple[CopyGap, ...]
    partings: tuple[Parting, ...]
    law: CopyLawTest | None = None


class Capstone(Record):
    """Everything ``llm.json`` holds. Records carry their keys: look them up with :meth:`run`,
    :meth:`select`, :meth:`prediction`, :meth:`break_even_alpha`, :meth:`teacher_alpha`."""

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
    law_history: tuple[LawTest, ...]
    process_vm_hwm_mib: NonNegative | None
    layout: LayoutChoice | None  # chosen by timing the candidates at load
    quantized: QuantizedStudy | None
    alone: tuple[Run, ...]  # models decoding alone (:data:`ALONE`), kept apart from the target's runs
    schema: Schema = 3

    def how(self) -> str:
        """The machine line for this run, with the load over the timed runs."""
        la = self.sweep.load_avg_1min_at_plain_runs if self.sweep else ()
        return self.machine.how("benchmarks/bench_llm.py", during=(min(la), max(la)) if la else None)

    def select(self, **fields) -> list[Run]:
        """The runs whose :class:`Config` matches every given field (e.g. ``draft="plain"``), in file order."""
        if bad := set(fields) - set(Config.__struct_fields__):
            raise ValueError(f"select takes fields of a Config {Config.__struct_fields__}, got {sorted(bad)}")
        return [r for r in self.runs if all(getattr(r.config, k) == v for k, v in fields.items())]

    def find(self, config: Config) -> Run | None:
        """The run of ``config`` (in :attr:`alone` for a draft of :data:`ALONE`), or None."""
        return _first(r for r in (self.alone if config.draft in ALONE else self.runs) if r.config == config)

    def run(self, workload: str, temperature: float, draft: str, gamma: int = 0) -> Run:
        """The one run of a configuration; raises ValueError naming it when absent."""
        c = Config(workload, temperature, draft, gamma)
        if (r := self.find(c)) is None:
            raise ValueError(f"no run {c.label} in the results")
        return r

    def prediction(self, config: Config) -> Prediction | None:
        """The prediction made for ``config`` before the runs, or None."""
        return _first(p for p in self.predictions.values if p.config == config)

    def break_even_alpha(self, temperature: float, draft: str, gamma: int) -> float | None:
        """The stored break-even α of ``draft`` at γ and ``temperature`` (None: none; ValueError: not stored)."""
        for b in self.break_even:
            if (b.temperature, b.draft, b.gamma) == (float(temperature), draft, gamma):
                return b.alpha
        raise ValueError(f"no break-even α stored for {draft} γ={gamma} at T = {temperature:g}")

    def teacher_alpha(self, workload: str, temperature: float, draft: str) -> float | None:
        """α by teacher forcing of ``draft`` on ``workload`` at ``temperature``, or None."""
        tf = self.predictions.teacher_forcing_alpha
        return _first(
            a.alpha for a in tf if (a.workload, a.temperature, a.draft) == (workload, temperature, draft)
        )


def _first(xs):
    return next(iter(xs), None)


def read_capstone(path: str | Path | None = None) -> Capstone:
    """The capstone's results at ``path``, ``$SPECDEC_LLM_RESULTS`` or the stored llm.json (ValueError: file, field)."""
    return codec.read(Capstone, path or os.environ.get("SPECDEC_LLM_RESULTS") or results_path("llm.json"))


def measured_pass_costs(path: str | Path | None = None) -> tuple[dict | None, str]:
    """For notebook 08, never raising: ``({T: (fastest, median, slowest) ms}, how)`` from the capstone's
    results (``path`` or the stored file), or ``(None, reason)`` when they are missing or unreadable."""
    try:
        cap = read_capstone(path)
        curve = cap.micro.verify[0.0]  # greedy verification
    except (OSError, ValueError, KeyError) as exc:
        return None, f"no measured cost curve ({type(exc).__name__}: {exc})"
    return curve.spread(), (
        f"{cap.machine.how('benchmarks/bench_llm.py')}, {curve.reps or '?'} repeats per size "
        f"(fastest, median, slowest; {curve.source})"
    )

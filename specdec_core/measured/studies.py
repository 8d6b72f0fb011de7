"""The records of ``hardware.json``, ``passcost.json``, ``features.json`` and ``rounding.json`` (:mod:`.codec`:
field types, ranges included, are what a file may hold); :meth:`how` names the benchmark that wrote one."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec

from .codec import Count, Ms, NonNegative, Positive, Probability, Record, Schema, Temperature
from .layout import LayoutChoice
from .machine import Machine
from .records import CostCurve

__all__ = """
Bandwidth FeatureChoice FeatureCost FeatureData FeatureSelection FeatureStudy Generation HardwareRun
MatmulCurve OwnSamples PassCost PassGoals PassPrediction PassThreads RoundingStudy RoundingSummary
TeacherForcing VariantScore
""".split()

Shape = Annotated[str, msgspec.Meta(pattern=r"^\d+x\d+$")]  # a matrix shape, "576x1536"
Clock = Annotated[str, msgspec.Meta(pattern=r"^\d\d:\d\d:\d\d$")]  # a UTC time of day, "06:33:24"
Error = Annotated[float, msgspec.Meta(ge=-1, le=1e15)]  # predicted ÷ measured − 1: signed, ≥ −1
Head = Annotated[str, msgspec.Meta(pattern=r"^(full|top\d+)$")]  # a shortlist head, "full", "top4096"


class _Study(Record):
    """The machine line of a results file: ``machine.how(script)`` (``script``: set by each file's record)."""

    def how(self) -> str:
        return self.machine.how(self.script)


class Bandwidth(Record):
    """STREAM-like copy and triad with one thread count: best and median GB/s, arrays counted."""

    copy_GBps: Ms
    copy_GBps_median: Ms
    copy_arrays_counted: Positive
    triad_GBps: Ms
    triad_GBps_median: Ms
    triad_arrays_counted: Positive
    triad_GBps_stream_convention: Ms
    array_MiB: Positive
    reps: Positive


class MatmulCurve(Record):
    """float32 (M × k) @ W against rows M: (fastest, median) ms and GFLOP/s per M."""

    ms_min_median: dict[Positive, tuple[Ms, Ms]]
    gflops: dict[Positive, Ms]
    weight_MB: Ms
    inner: Positive
    reps: Positive

    def __post_init__(self):
        for M, (fastest, median) in self.ms_min_median.items():
            if fastest > median:
                raise ValueError(
                    f"ms_min_median: at M = {M} the fastest {fastest} exceeds the median {median}"
                )


class HardwareRun(_Study):
    """``hardware.json``: bandwidth {threads: Bandwidth} and matmul {threads: {shape: curve}}."""

    machine: Machine
    quick: bool
    bandwidth: dict[Positive, Bandwidth]
    matmul: dict[Positive, dict[Shape, MatmulCurve]]
    rows: tuple[Positive, ...]
    shapes: tuple[Shape, ...]
    seconds: NonNegative
    schema: Schema = 3
    script: ClassVar[str] = "benchmarks/bench_hardware.py"


class PassPrediction(Record):
    """The pass cost predicted before it was timed: memory, compute, roofline (max) and serial (sum), ms."""

    memory_ms: Ms
    compute_ms: Ms
    roofline_ms: Ms
    serial_ms: Ms


class PassThreads(Record):
    """One BLAS thread count: read floor, bandwidth, rate and prediction per T, then the products and pass."""

    floor_ms: Ms
    bandwidth_GBps: Ms
    rate_GFLOPs: dict[Positive, Ms]
    predicted: dict[Positive, PassPrediction]
    predicted_at_utc: Clock
    products: dict[Literal["product", "x@w"], CostCurve]
    forward: CostCurve
    measured_at_utc: Clock


class PassGoals(Record):
    """Cost ratios of the stored run (1 BLAS thread; ``forward_1_over_floor``: the whole pass at T = 1
    over the read floor; ``draft_step_over_target_step``: an int8 copy's step over a float32 step) and
    the predictions' errors {kind: {T: error}}."""

    products_8_over_1: NonNegative | None = None
    forward_8_over_1: NonNegative | None = None
    products_4_over_1: NonNegative | None = None
    forward_4_over_1: NonNegative | None = None
    one_row_over_floor: NonNegative | None = None
    prefill128_new_over_old: NonNegative | None = None
    forward_1_over_floor: NonNegative | None = None
    draft_step_over_target_step: NonNegative | None = None
    prediction_error: dict[Literal["roofline", "serial"], dict[Positive, Error]] = {}
    lines: tuple[str, ...] = ()


class PassCost(_Study):
    """``passcost.json``: the cost of scoring T positions, predicted then measured, per BLAS threads."""

    machine: Machine
    quick: bool
    method: str
    weight_bytes: Positive
    params: Positive
    context: Count
    threads: dict[Positive, PassThreads]
    seconds: NonNegative
    goals: PassGoals | None  # None: a run that did not compute them
    #: the weight layout chosen by timing the candidates before the run (None: runs before issue 32)
    layout: LayoutChoice | None
    schema: Schema = 3
    script: ClassVar[str] = "benchmarks/bench_passcost.py"

    def at(self, threads: int) -> PassThreads:
        """The record of one BLAS thread count; ValueError naming it when absent."""
        if threads not in self.threads:
            raise ValueError(f"threads must be one of {sorted(self.threads)}, got {threads!r}")
        return self.threads[threads]


class FeatureCost(Record):
    """Median ms of the feature draft's parts (full head and shortlists) and of a target step."""

    map_ms: Ms
    head_full_ms: Ms
    draft_gamma4_full_ms: Ms
    draft_step_full_ms: Ms
    head_top2048_ms: Ms
    draft_gamma4_top2048_ms: Ms
    draft_step_top2048_ms: Ms
    head_top4096_ms: Ms
    draft_gamma4_top4096_ms: Ms
    draft_step_top4096_ms: Ms
    head_top8192_ms: Ms
    draft_gamma4_top8192_ms: Ms
    draft_step_top8192_ms: Ms
    target_step_ms: Ms
    target_verify_5_positions_ms: Ms
    reps: Positive


class FeatureChoice(Record):
    """The variant chosen on held-out text: its name, inputs, random features, ridge, fit positions."""

    variant: str
    ridge: NonNegative
    inputs: str
    n_random: Count
    n: Positive


class OwnSamples(Record):
    """The model's own T = 1 samples added to the fit: prompts, samples per prompt, new tokens."""

    prompts: tuple[str, ...]
    per_prompt: Positive
    new_tokens: Positive


class FeatureData(Record):
    """What the feature map was fitted and evaluated on: positions, texts, seeds, seconds per part."""

    fit_positions: dict[str, Count]
    eval_positions: dict[str, Count]
    docstring_sequences_fit: Count
    docstring_sequences_held: Count
    calibration_fit: tuple[str, ...]
    calibration_held: tuple[str, ...]
    calibration_new_tokens: Count
    own_samples: OwnSamples
    workload_new_tokens: dict[str, Count]
    workload_texts: dict[str, str]
    seeds: dict[str, Count]
    generate_s: NonNegative
    features_s: NonNegative


class VariantScore(Record):
    """One variant of the selection: fit seconds, depth-1 α at T = 1 and T = 0 per held-out set, score."""

    fit_s: NonNegative
    alpha_T1_depth1: dict[str, Probability]
    alpha_T0_depth1: dict[str, Probability]
    score: Probability


class FeatureSelection(Record):
    """The variants compared on held-out text, the rule that chose one, and its seconds."""

    variants: dict[str, VariantScore]
    rule: str
    seconds: NonNegative


class FeatureStudy(_Study):
    """``features.json``: the feature draft's study. ``alpha`` {variant: {set: {head: {T: α by depth}}}},
    ``alpha_n`` {variant: {set: positions by depth}}, ``shortlist_mass`` {set: {head: p's mass inside}}."""

    machine: Machine
    quick: bool
    data: FeatureData
    selection: FeatureSelection
    chosen: FeatureChoice
    alpha: dict[str, dict[str, dict[Head, dict[Temperature, tuple[Probability, ...]]]]]
    alpha_n: dict[str, dict[str, tuple[Count, ...]]]
    alpha_seconds: NonNegative
    shortlist_mass: dict[str, dict[Head, Probability]]
    cost: FeatureCost
    total_s: NonNegative
    schema: Schema = 3
    script: ClassVar[str] = "benchmarks/feature_study.py"

    def __post_init__(self):
        for v, sets in self.alpha.items():
            if set(sets) != set(self.alpha_n.get(v, {})):
                raise ValueError(f"alpha_n: variant {v!r} must count the sets of alpha ({sorted(sets)})")


class Generation(Record):
    """One prompt's greedy generation, speculative against plain: identical, or where it diverged
    (and the top-2 logit gap there, one position at a time and in blocks)."""

    prompt: str
    tokens: Count
    identical: bool
    first_divergence: Count | None = None
    gap_one_at_a_time: NonNegative | None = None
    gap_in_blocks: NonNegative | None = None

    def __post_init__(self):
        if self.identical and self.first_divergence is not None:
            raise ValueError(f"generation {self.prompt!r}: identical, yet first_divergence is set")


class TeacherForcing(Record):
    """Logits one position per call against blocks, along one prompt's greedy tokens."""

    prompt: str
    positions: Count
    max_abs_diff: NonNegative
    median_row_max_abs_diff: NonNegative
    max_rel_diff: NonNegative
    argmax_flips: Count
    gaps_at_flips: tuple[NonNegative, ...]
    smallest_gaps: tuple[NonNegative, ...]
    gaps_below_1e_4: Count
    gaps_below_1e_3: Count


class RoundingSummary(Record):
    """The whole study in a line: prompts, identical ones, tokens, positions, flips, largest differences."""

    generations: Count
    identical: Count
    greedy_tokens: Count
    positions_compared: Count
    argmax_flips: Count
    max_abs_diff: NonNegative
    max_rel_diff: NonNegative
    smallest_gap: NonNegative


class RoundingStudy(_Study):
    """``rounding.json``: speculative against plain greedy tokens; one position per call against blocks."""

    machine: Machine
    quick: bool
    tokens_per_prompt: Positive
    gamma: Count
    block: Positive
    threads: Positive
    generations: tuple[Generation, ...]
    teacher_forcing: tuple[TeacherForcing, ...]
    summary: RoundingSummary
    seconds: NonNegative
    schema: Schema = 3
    script: ClassVar[str] = "benchmarks/bench_rounding.py"

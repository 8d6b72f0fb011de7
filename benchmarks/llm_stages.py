"""The capstone's stages (``bench_llm.py`` is the command line over them). Each stage takes the
loaded model and what earlier stages returned, and returns a record:

1. :func:`calibrate` → :class:`Calibrated` (prompts never evaluated: early-exit maps and α per
   layer, the n-gram discount, the feature draft);
2. :func:`micro_benchmarks` → :class:`Benched` (cost curves of the target call, each draft and
   the sampler; the exit layer chosen from them; break-even α; the drafts of the timed runs);
3. :func:`predict` → :class:`Predicted` (teacher forcing, then predicted tokens/s for every
   configuration — its inputs are the micro-benchmarks and the drafts, never a timed run);
4. :func:`timed_sweep` → :class:`Swept` (the interleaved timed runs, summarized per configuration);
5. :func:`law_test` → :class:`~specdec_core.measured.capstone.LawTest`.

:func:`assemble` puts them into the :class:`~specdec_core.measured.capstone.Capstone` record that
``bench_llm.py`` writes through the codec. Quick and full runs differ only in their :class:`Settings`.
"""

from __future__ import annotations

import datetime
import os
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np

from specdec_core import chi_square_gof
from specdec_core.counts import expected_output_count
from specdec_core.llm import CachedTarget, PromptLookupDraft, lawtest, probs_from_logits
from specdec_core.llm import predict as P
from specdec_core.llm.drafts import (
    ExitDraft,
    NgramDraft,
    QuantizedDraft,
    collect_residuals,
    fit_exit_map,
    quantization_report,
    quantized_model,
)
from specdec_core.llm.features import (
    FeatureDraft,
    alpha_along,
    collect_features,
    fit_feature_map,
    shortlist_from_counts,
)
from specdec_core.llm.runs import RunStats, SweptRun, sweep, timed_run
from specdec_core.llm.workloads import (
    CALIBRATION,
    WORKLOADS,
    calibration_prompt,
    docstring_sequences,
    split_by_module,
    workload_prompt,
)
from specdec_core.measured import Capstone, Config, CostCurve, Machine, Run, Spread
from specdec_core.measured.capstone import (
    ALONE,
    BreakEven,
    Calibration,
    Chosen,
    CopyGap,
    CopyLawTest,
    ExitLayer,
    FeatureFit,
    Gof,
    LawTest,
    Load,
    Margins,
    MemoryProbe,
    Micro,
    PairedSpeedup,
    Parting,
    Prediction,
    Predictions,
    QuantizedStudy,
    RoundMs,
    Sweep,
    TeacherAlpha,
    TopToken,
)
from specdec_core.measured.layout import LayoutChoice
from specdec_core.measured.timer import Stopwatch
from specdec_core.repeats import paired_ratio

DRAFT_NAMES = ("lookup", "ngram", "exit", "feature", "quant")
#: The int8 copy decoding by itself (γ = 0): faster than the target, but it samples its own law.
LOSSY = ALONE[0]
TEMPERATURES = (0.0, 1.0)


def log(*a) -> None:
    print(*a, flush=True)


# ---------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings:
    """Everything a quick run sets differently from a full one (:data:`FULL`, :data:`QUICK`)."""

    quick: bool
    calibration_prompts: tuple[str, ...]
    calibration_tokens: int
    exit_layers: tuple[int, ...]
    shrinks: tuple[float, ...]
    discounts: tuple[float, ...]
    docstrings: int | None  # docstring sequences in the feature fit (None: all)
    micro_reps: int
    verify_positions: tuple[int, ...]
    overhead_gammas: tuple[int, ...]
    overhead_reps: int
    gammas: dict[str, tuple[int, ...]]
    max_new: dict[str, int]
    reps: int
    trajectories_t1: int  # sampled target trajectories per workload at T = 1
    law_max_n: int | None  # a cap on the law test's sample size (None: the power calculation's)
    threads: int = 1
    ngram_prompts: tuple[str, ...] = ("cal-copy", "cal-code")
    context_prompt: str = "cal-copy"

    def __post_init__(self):
        for name in (*self.ngram_prompts, self.context_prompt):
            if name not in self.calibration_prompts:
                raise ValueError(f"calibration_prompts must include {name!r}")
        if len(self.calibration_prompts) < 4:
            raise ValueError("calibration_prompts needs at least 4 prompts (fit, validation, 2 held out)")
        if set(self.gammas) != set(DRAFT_NAMES):
            raise ValueError(f"gammas must give γ values for each of {DRAFT_NAMES}")

    def configs(self) -> list[tuple[str, int, bool]]:
        """(draft, γ, adaptive) of every speculative configuration timed."""
        return [(name, g, name == "lookup") for name in DRAFT_NAMES for g in self.gammas[name]]


FULL = Settings(
    quick=False,
    calibration_prompts=tuple(CALIBRATION),
    calibration_tokens=80,
    exit_layers=(4, 8, 12, 16, 20, 24),
    shrinks=(0.003, 0.03, 0.3),
    discounts=(0.1, 0.3, 0.5, 0.7, 0.9),
    docstrings=None,
    micro_reps=5,
    verify_positions=(*range(1, 13), 16),
    overhead_gammas=tuple(range(12)),
    overhead_reps=20,
    gammas={
        "lookup": (2, 4, 7, 10),
        "ngram": (2, 4),
        "exit": (1, 2),
        "feature": (1, 2, 3),
        "quant": (2, 4, 6),
    },
    max_new={"copy": 96, "code": 64, "story": 64},
    reps=5,
    trajectories_t1=6,
    law_max_n=None,
)

QUICK = replace(
    FULL,
    quick=True,
    calibration_prompts=("cal-copy", "cal-code", "cal-letter", "cal-story"),
    calibration_tokens=12,
    exit_layers=(10,),
    shrinks=(0.03,),
    discounts=(0.3,),
    docstrings=6,
    micro_reps=2,
    verify_positions=(1, 2, 3, 4),
    overhead_gammas=(0, 1, 2, 3),
    overhead_reps=3,
    gammas={"lookup": (3,), "ngram": (2,), "exit": (1,), "feature": (2,), "quant": (3,)},
    max_new={"copy": 16, "code": 16, "story": 16},
    reps=1,
    trajectories_t1=2,
    law_max_n=150,
)


# ---------------------------------------------------------------- stage 2: calibration


@dataclass
class Calibrated:
    """Stage 2's record, in memory: the calibration sequences {name: (prompt, continuation)},
    the early-exit maps {k: (A, b)} with their α {(temperature, trained): {k: α}}, the chosen
    shrinkage per k, the n-gram α per discount, the feature map and shortlist, and the feature
    draft's summary as stored."""

    seqs: dict[str, tuple[list, list]]
    split: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]  # fit, validation, held out
    maps: dict[int, tuple]
    exit_alpha: dict[tuple[float, bool], dict[int, float]]
    shrink: dict[int, float]
    fit_positions: int
    ngram_alpha: dict[float, float]
    fmap: object
    shortlist: np.ndarray
    feature: FeatureFit
    seconds: float = 0.0

    @property
    def ngram_discount(self) -> float:
        return max(self.ngram_alpha, key=self.ngram_alpha.get)

    def context(self, name: str) -> list:
        prompt, gen = self.seqs[name]
        return list(prompt) + list(gen)


def calibration_sequences(lm, names, n_new: int, seed: int = 7) -> dict:
    """prompt + n_new tokens sampled at temperature 1, for the named calibration prompts."""
    seqs = {}
    for i, name in enumerate(names):
        prompt = calibration_prompt(lm.codec, name)
        s = timed_run(
            CachedTarget(lm.model, 1.0),
            None,
            prompt,
            max_new_tokens=n_new,
            rng=np.random.default_rng(seed + i),
        )
        seqs[name] = (list(prompt), list(s.tokens))
    return seqs


def _split(names):
    names = tuple(names)
    return names[:-3], names[-3:-2], names[-2:]


def _prepared(m, seqs, names):
    evs = []
    for n in names:
        prompt, gen = seqs[n]
        seq, P0 = prompt + gen, len(prompt)
        lg = m.logits_for(seq)[P0 - 1 : -1]
        evs.append((seq, P0, probs_from_logits(lg, 1.0), np.argmax(lg, axis=1)))
    return evs


def _exit_alphas(d, evs) -> tuple[float, float]:
    """α at temperature 1 (Σ min(p, q)) and greedy (argmax agreement) of exit draft ``d``."""
    a1, a0 = [], []
    for seq, P0, p, am in evs:
        ql = d.logits_along(seq)[P0 - 1 : -1]
        a1.append(P.alpha_along(p, probs_from_logits(ql, 1.0)))
        a0.append(np.argmax(ql, axis=1) == am)
    return float(np.mean(np.concatenate(a1))), float(np.mean(np.concatenate(a0)))


def exit_study(lm, seqs, s: Settings):
    """Fit the early-exit maps on some calibration sequences, pick the shrinkage on others
    (validation), report α on the rest (held out), trained and untrained, at temperature 1 and
    greedy. Returns (maps {k: (A, b)}, α {(temperature, trained): {k: α}}, fit positions,
    shrinkage {k: s})."""
    m, L = lm.model, lm.model.cfg.n_layers
    fit_names, val_names, eval_names = _split(s.calibration_prompts)
    fit = collect_residuals(m, [seqs[n][0] + seqs[n][1] for n in fit_names], [*s.exit_layers, L])
    val, ev = _prepared(m, seqs, val_names), _prepared(m, seqs, eval_names)
    maps, chosen = {}, {}
    rows = {(t, tr): {} for t in TEMPERATURES for tr in (True, False)}
    for k in s.exit_layers:
        cands = {sh: fit_exit_map(fit[k], fit[L], shrink=sh) for sh in s.shrinks}
        score = {sh: _exit_alphas(ExitDraft(m, k, *cands[sh]), val)[0] for sh in s.shrinks}
        chosen[k] = max(score, key=score.get)
        maps[k] = cands[chosen[k]]
        for trained, (A, b) in ((True, maps[k]), (False, (None, None))):
            rows[(1.0, trained)][k], rows[(0.0, trained)][k] = _exit_alphas(ExitDraft(m, k, A, b), ev)
    return maps, rows, int(fit[L].shape[0]), chosen


def ngram_alpha(lm, seqs, names, discounts) -> dict[float, float]:
    """Mean Σ min(p, q) of the n-gram draft along calibration sequences, per discount."""
    m, V = lm.model, lm.cfg.vocab_size
    pre = []
    for n in names:
        prompt, gen = seqs[n]
        seq = prompt + gen
        pre.append((seq, len(prompt), probs_from_logits(m.logits_for(seq)[len(prompt) - 1 : -1], 1.0)))
    out = {}
    for d in discounts:
        al = []
        for seq, P0, p in pre:
            dr = NgramDraft(V, discount=d)
            al.append(P.alpha_along(p, np.stack([dr(seq[:j]) for j in range(P0, len(seq))])))
        out[float(d)] = float(np.mean(np.concatenate(al)))
    return out


def feature_fit(lm, seqs, s: Settings):
    """The feature draft (EAGLE-style), settings fixed in advance by ``feature_study.py``: inputs
    h_t, h_{t-1}, e(x_{t+1}) + 1024 random features, ridge 1e-2, a 4k shortlist, fitted on the
    package's docstrings and the calibration continuations only. Returns (map, shortlist, summary)."""
    clock = Stopwatch()
    m = lm.model
    fit_names, _, eval_names = _split(s.calibration_prompts)
    doc_fit, _ = split_by_module(docstring_sequences(lm.codec))
    docs = doc_fit if s.docstrings is None else doc_fit[: s.docstrings]
    fit_seqs = docs + [seqs[n][0] + seqs[n][1] for n in fit_names]
    F = collect_features(m, fit_seqs)
    fmap = fit_feature_map(F.h, F.e, F.h_next, h_prev=F.h_prev, ridge=1e-2, inputs="h,hprev,e", n_random=1024)
    shortlist = shortlist_from_counts(fit_seqs, 4096)
    del F
    by_t = {}
    for temp in (1.0, 0.0):
        per = [
            alpha_along(
                m,
                fmap,
                seqs[n][0] + seqs[n][1],
                len(seqs[n][0]),
                depth=3,
                temperature=temp,
                shortlist=shortlist,
            ).mean(axis=0)
            for n in eval_names
        ]
        by_t[temp] = tuple(float(x) for x in np.mean(per, axis=0))
    summary = FeatureFit(
        int(fmap.n),
        f"{len(doc_fit)} docstring sequences of specdec_core + calibration prompts {list(fit_names)}",
        str(fmap.inputs), float(fmap.ridge), int(fmap.n_random), int(len(shortlist)), by_t, clock.seconds(),
    )  # fmt: skip
    return fmap, shortlist, summary


def calibrate(lm, s: Settings) -> Calibrated:
    """Stage 2, on the calibration prompts only (never the evaluated workloads)."""
    if not isinstance(s, Settings):
        raise ValueError(f"s must be a Settings, got {type(s).__name__}")
    clock = Stopwatch()
    seqs = calibration_sequences(lm, s.calibration_prompts, s.calibration_tokens)
    maps, rows, n_fit, shrink = exit_study(lm, seqs, s)
    ng = ngram_alpha(lm, seqs, s.ngram_prompts, s.discounts)
    fmap, shortlist, feature = feature_fit(lm, seqs, s)
    log("exit α (T = 1, trained):", rows[(1.0, True)], "n-gram α by discount:", ng)
    log("feature draft:", feature)
    return Calibrated(
        seqs, _split(s.calibration_prompts), maps, rows, shrink, n_fit, ng, fmap, shortlist, feature,
        clock.seconds(),
    )  # fmt: skip


# ---------------------------------------------------------------- stage 2b: micro-benchmarks


@dataclass
class DraftKit:
    """The drafts of the timed runs, as fitted in calibration: ``make(name, temperature,
    target)`` builds a fresh one (the feature draft reads ``target``'s cache)."""

    model: object
    discount: float
    exit_k: int
    exit_map: tuple
    fmap: object
    shortlist: np.ndarray
    qmodel: object = None  # the int8 copy of the target (quantized_model), made once

    def make(self, name: str, temp: float, target=None):
        V = self.model.cfg.vocab_size
        if name == "quant":
            return QuantizedDraft(self.qmodel, temperature=temp)
        if name == "lookup":
            return PromptLookupDraft(V)
        if name == "ngram":
            return NgramDraft(V, discount=self.discount, temperature=temp)
        if name == "feature":
            tgt = target or CachedTarget(self.model, temp)
            return FeatureDraft(tgt, self.fmap, temperature=temp, shortlist=self.shortlist)
        if name == "exit":
            return ExitDraft(self.model, self.exit_k, *self.exit_map, temperature=temp)
        raise ValueError(f"name must be one of {DRAFT_NAMES}, got {name!r}")


@dataclass
class Benched:
    """Stage 2b's record: the calibration completed by the exit layer's choice, the cost
    curves, break-even α per (temperature, draft, γ) and the drafts of the timed runs."""

    calibration: Calibration
    micro: Micro
    break_even: tuple[BreakEven, ...]
    drafts: DraftKit


def _curve(d: dict[int, Spread], source: str, reps: int, threads: int, context: int | None) -> CostCurve:
    return CostCurve({int(x): v for x, v in d.items()}, source, reps, threads, context)


def _cost_curves(lm, ctx, s: Settings, before) -> tuple[dict, dict]:
    """{temperature: CostCurve} of the target call scoring T positions and of the sampler per
    round (each round timed after ``before``, an untimed target step)."""
    m, n = lm.model, len(ctx)
    verify = {
        t: _curve(
            P.verify_cost_curve(m, ctx, s.verify_positions, temperature=t, reps=s.micro_reps),
            f"verify at T = {t:g}", s.micro_reps, s.threads, n,
        )
        for t in TEMPERATURES
    }  # fmt: skip
    overhead = {
        t: _curve(
            P.overhead_curve(
                lm.cfg.vocab_size, s.overhead_gammas, temperature=t, reps=s.overhead_reps, before=before
            ),
            f"sampler at T = {t:g}", s.overhead_reps, s.threads, None,
        )
        for t in TEMPERATURES
    }  # fmt: skip
    return verify, overhead


def _iid_speedup(alpha: float, step_ms: float, v1: dict) -> float:
    """Best predicted speed-up over γ = 1…3 of an exit draft with iid acceptance ``alpha``."""
    return max(expected_output_count(alpha, g) / (g * step_ms + v1[g + 1]) * v1[1] for g in (1, 2, 3))


def _choose_exit(lm, cal: Calibrated, ctx, verify1: CostCurve, s: Settings, before):
    """Each exit layer's step cost; the layer with the best predicted T = 1 speed-up on the
    held-out calibration α (each step timed after ``before``). Returns ({k: ExitLayer}, chosen k)."""
    step = {
        k: P.draft_cost_curve(
            ExitDraft(lm.model, k, *cal.maps[k], temperature=1.0),
            ctx,
            [1],
            reps=s.micro_reps,
            before=before,
        )[1].median
        for k in s.exit_layers
    }
    v1 = verify1.median()
    speed = {k: _iid_speedup(cal.exit_alpha[(1.0, True)][k], step[k], v1) for k in s.exit_layers}
    layers = {
        k: ExitLayer(
            k, float(cal.shrink[k]), float(step[k]), float(speed[k]),
            {t: cal.exit_alpha[(t, True)][k] for t in TEMPERATURES},
            {t: cal.exit_alpha[(t, False)][k] for t in TEMPERATURES},
        )
        for k in s.exit_layers
    }  # fmt: skip
    return layers, max(s.exit_layers, key=speed.get)


def _calibration_record(cal: Calibrated, layers: dict, k: int, s: Settings) -> Calibration:
    fit, val, held = cal.split
    return Calibration(
        tuple(s.calibration_prompts), fit, val, held, cal.fit_positions, layers, k,
        dict(cal.ngram_alpha), cal.ngram_discount, cal.feature, cal.seconds,
    )  # fmt: skip


def micro_benchmarks(lm, cal: Calibrated, s: Settings) -> Benched:
    """Stage 2b: the target call scoring T positions and the sampler per round at both
    temperatures, one step of each exit layer (which fixes the layer used), each draft
    proposing γ tokens from the state a round finds it in, and break-even α from them."""
    if not isinstance(cal, Calibrated):
        raise ValueError(f"cal must be the Calibrated record of calibrate(), got {type(cal).__name__}")
    clock = Stopwatch()
    ctx = cal.context(s.context_prompt)
    after_verify = P.target_pass(lm.model, ctx)  # each draft call and sampler round timed as a round finds it
    verify, overhead = _cost_curves(lm, ctx, s, after_verify)
    layers, k = _choose_exit(lm, cal, ctx, verify[1.0], s, after_verify)
    qmodel = quantized_model(lm.model, lm.layout)  # int8 weights, their plan timed at load
    drafts = DraftKit(lm.model, cal.ngram_discount, k, cal.maps[k], cal.fmap, cal.shortlist, qmodel)
    draft_cost = {}
    for name in DRAFT_NAMES:
        tgt = CachedTarget(lm.model, 1.0)
        tgt.prefill(ctx[:-1])  # what a round finds: the target holds all but the last token
        d = P.draft_cost_curve(
            drafts.make(name, 1.0, tgt), ctx, sorted({0, 1, *s.gammas[name]}), reps=s.micro_reps,
            before=after_verify,
        )  # fmt: skip
        draft_cost[name] = _curve(d, f"draft {name}", s.micro_reps, s.threads, len(ctx))
    how = (
        "median of interleaved repetitions after one untimed sweep, perf_counter; each draft call "
        "and sampler round timed right after an untimed target step, as a round finds it"
    )
    micro = Micro(len(ctx), s.micro_reps, how, verify, draft_cost, overhead)
    even = tuple(
        BreakEven(t, name, g, P.break_even_alpha(P.CostModel.from_micro(micro, t, name), g))
        for t in TEMPERATURES
        for name in DRAFT_NAMES
        for g in s.gammas[name]
    )
    calibration = _calibration_record(cal, layers, k, s).replace(seconds=cal.seconds + clock.seconds())
    log("exit layer:", k, "verify ms T = 1:", {T: round(v, 1) for T, v in verify[1.0].median().items()})
    return Benched(calibration, micro, even, drafts)


# ---------------------------------------------------------------- stage 3: predictions


@dataclass
class Predicted:
    """Stage 3's record, made before any timed run: predictions per configuration, the
    configuration chosen per (workload, temperature), teacher-forcing α at T = 1, greedy margins."""

    predictions: dict[Config, Prediction]
    chosen: dict[tuple[str, float], Chosen]
    teacher_forcing_alpha: list[TeacherAlpha]
    greedy_margins: dict[str, Margins]
    record: Predictions | None = None  # the stored form, made when stage 3 ends
    copy_alpha: dict[str, np.ndarray] = field(default_factory=dict)  # per position, the int8 copy


def trajectory(lm, prompt, n: int, temp: float, seed: int) -> list:
    """n tokens of the target alone at ``temp`` (apart from the timed runs)."""
    tgt = CachedTarget(lm.model, temp)
    return list(timed_run(tgt, None, prompt, max_new_tokens=n, rng=np.random.default_rng(seed)).tokens)


def greedy_margins(lm, workload: str, prompt, traj) -> Margins:
    """Top-2 logit gaps along a greedy trajectory (how close a rounding difference is to a flip)."""
    lg = lm.model.logits_for(list(prompt) + list(traj))[len(prompt) - 1 : -1]
    part = np.partition(lg, -2, axis=1)[:, -2:]
    mg = np.abs(part[:, 1] - part[:, 0])
    return Margins(
        workload, float(mg.min()), tuple(sorted(float(x) for x in mg)[:5]),
        int((mg < 1e-4).sum()), int((mg < 1e-3).sum()), int((mg < 1e-2).sum()), int(len(mg)),
    )  # fmt: skip


def teacher_alpha(lm, name: str, drafts: DraftKit, prompt, traj):
    """α_j = Σ min(p_j, q_j) at temperature 1 along a sampled trajectory (by depth for the
    feature draft); for the adaptive lookup also how many proposals its match offers."""
    m = lm.model
    seq, P0 = list(prompt) + list(traj), len(prompt)
    p = probs_from_logits(m.logits_for(seq)[P0 - 1 : -1], 1.0)
    dr = drafts.make(name, 1.0)
    if name == "feature":
        return alpha_along(m, dr.fmap, seq, P0, depth=3, temperature=1.0, shortlist=dr.rows), None
    if name in ("exit", "quant"):
        return P.alpha_along(p, probs_from_logits(dr.logits_along(seq)[P0 - 1 : -1], 1.0)), None
    if name == "ngram":
        return P.alpha_along(p, np.stack([dr(seq[:j]) for j in range(P0, len(seq))])), None
    alpha, avail = np.zeros(len(traj)), np.zeros(len(traj), int)
    for j in range(P0, len(seq)):
        toks = dr.match(seq[:j], 16)
        avail[j - P0] = len(toks)
        if toks:
            alpha[j - P0] = p[j - P0, toks[0]]
    return alpha, avail


def _traces(lm, name, g, drafts, prompt, trajs, temp, alphas) -> list[list]:
    """Round traces of draft ``name`` at γ = g, one list per trajectory: replayed greedily, or
    simulated from teacher-forced α."""
    adaptive = name == "lookup"
    if temp == 0:
        return [[P.greedy_trace(drafts.make(name, 0.0), prompt, trajs[0], g, adaptive=adaptive)]]
    out = []
    for i, traj in enumerate(trajs):
        if (name, i) not in alphas:
            alphas[(name, i)] = teacher_alpha(lm, name, drafts, prompt, traj)
        a, avail = alphas[(name, i)]
        out.append(P.sampled_traces(a, g, avail=avail if adaptive else None, sims=200, seed=i))
    return out


def _prediction(config: Config, costs, by_traj: list[list], s: Settings) -> Prediction:
    """The prediction from all trajectories' traces, with the range of the repeats' median
    where there are several trajectories (temperature 1)."""
    pr = P.predict_decode(costs, [t for g in by_traj for t in g])
    low, high = P.median_range(costs, by_traj, s.reps) if len(by_traj) > 1 else (None, None)
    return Prediction(config, **pr, low=low, high=high)


def _predict_one(lm, micro: Micro, drafts: DraftKit, w: str, temp: float, s: Settings, out: Predicted):
    prompt, n = workload_prompt(lm.codec, w), s.max_new[w]
    plain = Config(w, temp, "plain", 0)
    out.predictions[plain] = _prediction(plain, P.CostModel.from_micro(micro, temp), [[P.plain_trace(n)]], s)
    trajs = [trajectory(lm, prompt, n, temp, 900 + i) for i in range(1 if temp == 0 else s.trajectories_t1)]
    if temp == 0:
        out.greedy_margins[w] = greedy_margins(lm, w, prompt, trajs[0])
    alphas = {}
    for name, g, _ in s.configs():
        tr = _traces(lm, name, g, drafts, prompt, trajs, temp, alphas)
        c = Config(w, temp, name, g)
        out.predictions[c] = _prediction(c, P.CostModel.from_micro(micro, temp, name), tr, s)
    for name in DRAFT_NAMES:
        if (name, 0) in alphas:
            per = [np.atleast_2d(alphas[(name, i)][0].T)[0] for i in range(len(trajs))]
            out.teacher_forcing_alpha.append(TeacherAlpha(w, temp, name, float(np.mean(np.concatenate(per)))))
            if name == "quant" and temp == 1.0:
                out.copy_alpha[w] = np.concatenate(per)


def choose_configs(preds: dict, configs, workloads, temperatures=TEMPERATURES) -> dict:
    """Per workload and temperature, the speculative configuration with the best *predicted*
    speed-up — chosen before any timed run, so its measured repeats are not a maximum over
    noisy measurements (no selection bias)."""
    out = {}
    for w in workloads:
        for t in temperatures:
            plain = preds[Config(w, t, "plain", 0)].tokens_per_s
            best = max(configs, key=lambda c: preds[Config(w, t, c[0], c[1])].tokens_per_s)
            sp = preds[Config(w, t, best[0], best[1])].tokens_per_s / plain
            out[(w, t)] = Chosen(w, t, best[0], best[1], sp)
    return out


def predict(lm, micro: Micro, drafts: DraftKit, s: Settings) -> Predicted:
    """Stage 3: teacher forcing along target trajectories generated apart from the timed runs,
    then predicted tokens/s for every configuration. Its inputs are the micro-benchmarks and
    the drafts — no timed run exists yet, and none can be passed in."""
    if not isinstance(micro, Micro):
        raise ValueError(f"micro must be the Micro record of micro_benchmarks(), got {type(micro).__name__}")
    if not isinstance(drafts, DraftKit):
        raise ValueError(f"drafts must be a DraftKit, got {type(drafts).__name__}")
    clock = Stopwatch()
    out = Predicted({}, {}, [], {})
    for w in WORKLOADS:
        for t in TEMPERATURES:
            _predict_one(lm, micro, drafts, w, t, s, out)
            log(
                f"predicted {w} T={t:g}: plain {out.predictions[Config(w, t, 'plain', 0)].tokens_per_s:.1f} tok/s"
            )
    out.chosen.update(choose_configs(out.predictions, s.configs(), WORKLOADS))
    out.record = Predictions(
        tuple(out.predictions.values()), tuple(out.chosen.values()), tuple(out.teacher_forcing_alpha),
        datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S UTC"),
        "per workload and temperature, the configuration with the best predicted speed-up, "
        "fixed before any timed run",
        clock.seconds(),
    )  # fmt: skip
    return out


# ---------------------------------------------------------------- stage 4: the timed sweep


@dataclass
class Swept:
    """Stage 4's record: the sweep's settings and every configuration's summarized runs."""

    sweep: Sweep
    runs: dict[Config, Run]


def _spread(xs) -> Spread:
    return Spread(float(np.median(xs)), float(min(xs)), float(max(xs)), len(xs))


def _summary(c: Config, rs: list[RunStats], ps: list[RunStats], pred: Prediction | None) -> Run:
    """One configuration's repeats ``rs`` against the plain runs ``ps`` of the same repeats."""
    decode = _spread([r.tokens_per_s for r in rs])
    per_round = [float(np.median([r.per_round_ms()[f] for r in rs])) for f in ("draft", "verify", "overhead")]
    return Run(
        c, decode, _spread([r.e2e_tokens_per_s for r in rs]),
        _spread([r.tokens_per_s / p.tokens_per_s for r, p in zip(rs, ps)]),
        _spread([r.e2e_tokens_per_s / p.e2e_tokens_per_s for r, p in zip(rs, ps)]),
        PairedSpeedup.of(paired_ratio([x.tokens_per_s for x in rs], [p.tokens_per_s for p in ps])),
        _spread([1e3 * r.prefill_s for r in rs]),
        _spread([r.alpha if r.alpha == r.alpha else 0.0 for r in rs]),
        _spread([r.mean_k for r in rs]),
        int(rs[0].n_tokens),
        RoundMs(*per_round),
        tuple(int(x) for x in rs[0].k_hist),
        tuple(tuple(int(x) for x in pos) for pos in rs[0].accept_by_pos),
        tuple(r.tokens == p.tokens for r, p in zip(rs, ps)) if c.temperature == 0 and c.draft != "plain" else None,
        None if pred is None else pred.tokens_per_s,
        None if pred is None else pred.tokens_per_s / decode.median - 1,
    )  # fmt: skip


def summarize_runs(runs: list[SweptRun], preds: dict[Config, Prediction]) -> dict[Config, Run]:
    """Per configuration: decode-only and end-to-end tokens/s and speed-up over the plain run of
    the same repetition (median, min, max), the prediction and its error, greedy equality."""
    plain = {(r.workload, r.stats.temperature, r.rep): r.stats for r in runs if r.draft == "plain"}
    groups: dict[Config, list[SweptRun]] = {}
    for r in runs:
        groups.setdefault(Config(r.workload, r.stats.temperature, r.draft, r.stats.gamma), []).append(r)
    return {
        c: _summary(
            c, [r.stats for r in rs], [plain[(c.workload, c.temperature, r.rep)] for r in rs], preds.get(c)
        )
        for c, rs in groups.items()
    }


def timed_sweep(lm, drafts: DraftKit, s: Settings, preds: dict[Config, Prediction]) -> Swept:
    """Stage 4: a fresh target and draft for every run, plain and speculative interleaved in an
    order shuffled per block, ``s.reps`` repetitions; ``preds`` (stage 3's) only labels the runs."""
    clock, loads = Stopwatch(), []

    def on_run(r: SweptRun):
        if r.draft == "plain":
            loads.append(os.getloadavg()[0])
        d = r.stats
        log(
            f"  rep {r.rep} {r.workload:5s} T={d.temperature:g} {r.draft:6s} γ={d.gamma:2d} "
            f"{d.tokens_per_s:6.1f} tok/s decode, {d.e2e_tokens_per_s:6.1f} e2e, α={d.alpha:.2f}"
        )

    prompts = {w: workload_prompt(lm.codec, w) for w in WORKLOADS}
    runs = sweep(
        lambda temp: CachedTarget(lm.model, temp), drafts.make, prompts, s.configs(),
        temperatures=TEMPERATURES, reps=s.reps, max_new_tokens=dict(s.max_new), on_run=on_run,
        alone={LOSSY: lambda temp: CachedTarget(drafts.qmodel, temp)},
    )  # fmt: skip
    info = Sweep(
        clock.seconds(), tuple(loads), s.reps, dict(s.max_new), tuple(tuple(c) for c in s.configs()),
        "100 + rep",
        "plain and every configuration once per block (repetition, workload, temperature), "
        "in an order shuffled per block (numpy default_rng([100, rep]))",
        "decode-only: from the first decoding call to the last token, prompt already scored into fresh "
        "target and draft caches (prefill excluded for plain and speculative alike); end-to-end: prefill included",
    )  # fmt: skip
    return Swept(info, summarize_runs(runs, preds))


# ---------------------------------------------------------------- stage 5: the law test


def _law_draft(lm, maps, tgt_p, prefix, ks):
    """The trained early-exit draft of the smallest k whose α at ``prefix`` is at least 0.3 (else the largest k)."""
    for k in sorted(ks):
        q = ExitDraft(lm.model, k, *maps[k], temperature=1.0)(prefix)
        a = float(np.minimum(tgt_p, q).sum())
        if a >= 0.3 or k == max(ks):
            return k, q, a


def law_test(lm, maps: dict, s: Settings) -> LawTest:
    """Stage 5: the first token of a γ = 1 round after a fixed prefix, correct and broken
    variants, the sample size from a power calculation (power 0.99: at 0.9 one run in ten misses
    the bug, one did, 2026-12-03: law_history)."""
    clock = Stopwatch()
    prefix = tuple(lm.codec.chat("Name a colour."))
    tgt = CachedTarget(lm.model, 1.0)
    p = tgt(prefix)
    k, q, a = _law_draft(lm, maps, p, prefix, s.exit_layers)
    b = lawtest.broken_first_token_law(p, q)
    n, pw = lawtest.sample_size(p, b, target_power=0.99)
    n = n if s.law_max_n is None else min(n, s.law_max_n)
    memo = lawtest.MemoTarget(tgt)
    law = lawtest.law_dict(p, n)
    gofs = [
        _gof(*lawtest.first_token_samples(memo, q, prefix, n, correction=rule, seed=2026), law)
        for rule in ("residual", "target")
    ]
    top = tuple(
        TopToken(lm.codec.decode([int(x)]), float(p[x]), float(q[x]), float(b[x]))
        for x in np.argsort(p)[::-1][:5]
    )
    return LawTest(
        prefix=lm.codec.decode(prefix), alpha=float(a), n=int(n), power=float(pw), threshold=1e-3,
        draft=f"trained exit k={k}", tv_broken=float(0.5 * np.abs(b - p).sum()), correct=gofs[0],
        broken_corrects_from_p=gofs[1], seconds=clock.seconds(), top=top,
    )  # fmt: skip


# ---------------------------------------------------------------- the whole record


def assemble(
    machine: Machine,
    s: Settings,
    bench: Benched,
    pred: Predicted,
    swept: Swept | None = None,
    law: LawTest | None = None,
    *,
    memory: dict[str, MemoryProbe] | None = None,
    load: Load | None = None,
    vm_hwm: float | None = None,
    layout: LayoutChoice | None = None,
    quantized: QuantizedStudy | None = None,
) -> Capstone:
    """The stages' records as the one :class:`Capstone` that ``bench_llm.py`` stores."""
    runs = tuple(swept.runs.values()) if swept else ()
    return Capstone(
        machine=machine,
        quick=s.quick,
        memory=tuple((memory or {}).values()),
        load=load,
        calibration=bench.calibration,
        micro=bench.micro,
        break_even=bench.break_even,
        predictions=cast(Predictions, pred.record),
        greedy_margins=tuple(pred.greedy_margins.values()),
        sweep=swept.sweep if swept else None,
        runs=tuple(r for r in runs if r.config.draft not in ALONE),
        alone=tuple(r for r in runs if r.config.draft in ALONE),
        law=law,
        law_history=(),
        process_vm_hwm_mib=vm_hwm,
        layout=layout,
        quantized=quantized,
    )


# ---------------------------------------------------------------- the quantized copy (issue 35)


def _parting(lm, qmodel, workload: str, n: int) -> Parting:
    prompt = workload_prompt(lm.codec, workload)
    a = trajectory(lm, prompt, n, 0.0, 0)
    b = list(
        timed_run(
            CachedTarget(qmodel, 0.0), None, prompt, max_new_tokens=n, rng=np.random.default_rng(0)
        ).tokens
    )
    pos = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    cut = len(a) if pos is None else pos
    text = lm.codec.decode
    return Parting(
        workload, n, pos, text(a[max(0, cut - 12) : cut]), text(a[cut : cut + 8]), text(b[cut : cut + 8])
    )


def quantized_study(lm, qmodel, pred: Predicted, s: Settings) -> QuantizedStudy:
    """How far the int8 copy is from the target: weights per row, q against p per position along
    the temperature-1 trajectories of stage 3 (TV = 1 − α), and where greedy decoding parts."""
    rep = quantization_report(lm.model, qmodel)
    gaps = tuple(
        CopyGap(w, len(a), float(np.mean(1 - a)), float(np.quantile(1 - a, 0.9)), float(np.max(1 - a)))
        for w, a in pred.copy_alpha.items()
    )
    parts = tuple(_parting(lm, qmodel, w, PARTING_TOKENS[s.quick]) for w in WORKLOADS)
    law = copy_law_test(lm, qmodel, s)
    for p in parts:
        log(
            f"greedy parting {p.workload}: at {p.position} after {p.shared_text!r}: {p.target_text!r} / {p.copy_text!r}"
        )
    return QuantizedStudy(**rep, gaps=gaps, partings=parts, law=law)


#: Greedy tokens decoded by the target and by its int8 copy to find where they part (quick, full).
PARTING_TOKENS = {True: 48, False: 200}

#: The law test's sizes tried for power against the int8 copy (its q is close to p: large n).
COPY_LAW_GRID = (1000, 2000, 4000, 8000, 16000, 32000, 64000)


def _gof(counts, acc, law) -> Gof:
    """The chi-square goodness of fit of ``counts`` against ``law`` (``acc`` proposals accepted)."""
    g = chi_square_gof(lawtest.relabel(counts, law), law, threshold=1e-3)
    return Gof(
        float(g.statistic), int(g.dof), int(g.cells), float(g.p_value), bool(g.rejected), int(acc), str(g)
    )


def copy_law_test(lm, qmodel, s: Settings) -> CopyLawTest:
    """The int8 copy as the draft keeps p's law; the copy alone does not: the first token of a
    γ = 1 round (the prefix of stage 5), n for power 0.99 to reject q's law (capped in a quick run)."""
    clock = Stopwatch()
    prefix = tuple(lm.codec.chat("Name a colour."))
    memo = lawtest.MemoTarget(CachedTarget(lm.model, 1.0))
    p, q = memo(prefix), QuantizedDraft(qmodel, 1.0)(prefix)
    n, pw = lawtest.sample_size(p, q, target_power=0.99, grid=COPY_LAW_GRID)
    if s.law_max_n is not None and n > s.law_max_n:  # a quick run: fewer samples, less power
        n = s.law_max_n
        pw = lawtest.power(p, q, n, threshold=1e-3)
    law = lawtest.law_dict(p, n)
    counts, acc = lawtest.first_token_samples(memo, q, prefix, n, seed=2035)
    alone = Counter(int(x) for x in lawtest.sample_row(q, n, np.random.default_rng(2036)))
    res = CopyLawTest(
        prefix=lm.codec.decode(prefix), alpha=float(np.minimum(p, q).sum()), n=int(n), power=float(pw),
        threshold=1e-3, tv_copy=float(0.5 * np.abs(p - q).sum()), speculative=_gof(counts, acc, law),
        copy_alone=_gof(alone, 0, law), seconds=clock.seconds(),
    )  # fmt: skip
    log(f"copy law test: n {n} (power {pw:.2f}), speculative {res.speculative.summary}; "
        f"copy alone {res.copy_alone.summary}")  # fmt: skip
    return res

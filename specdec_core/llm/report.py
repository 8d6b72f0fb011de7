"""Lines notebook 09 prints from the capstone's typed results (:mod:`specdec_core.measured`):
tables, spreads, the law test, the feature and rounding studies.

Every line starts from a record; nothing is typed in. Precision follows the spread of the
repetitions (:func:`fmt_spread`). The figures drawn from the same records live in
:mod:`specdec_core.plots.llm`.
"""

from __future__ import annotations

import math

import numpy as np

from ..counts import expected_output_count
from ..distributions import check_int, check_positive, check_temperature
from ..measured.capstone import PLAIN, Capstone, Config, PairedSpeedup, Run
from ..measured.records import Spread
from ..measured.studies import FeatureStudy, PassCost, RoundingStudy
from ..repeats import PairedRatio
from ..timing import alpha_needed
from .predict import CostModel, break_even_alpha

DRAFTS = {
    "lookup": "prompt lookup (adaptive γ)",
    "ngram": "n-gram",
    "exit": "trained early exit",
    "feature": "feature draft",
    "quant": "quantized copy (int8)",
}
SHORT = {"lookup": "lookup", "ngram": "n-gram", "exit": "exit", "feature": "feature", "quant": "int8 copy"}
WORKLOADS = ("copy", "code", "story")


def _cap(cap) -> Capstone:
    if not isinstance(cap, Capstone):
        raise ValueError(f"cap must be a Capstone record (measured.read_capstone), got {type(cap).__name__}")
    return cap


def _temperature(cap: Capstone, temperature) -> float:
    """A temperature the capstone measured (its micro-benchmarks'), as a float: "1", True, NaN
    and a temperature never measured are refused by name, not read as 1.0 or an empty answer."""
    t = float(check_temperature(temperature, "temperature"))
    have = sorted(_cap(cap).micro.verify)
    if t not in have:
        raise ValueError(f"temperature = {temperature!r} was not measured: the capstone has {have}")
    return t


def _draft(cap: Capstone, draft) -> str:
    """A draft the capstone measured."""
    have = sorted(_cap(cap).micro.draft)
    if not isinstance(draft, str) or draft not in have:
        raise ValueError(f"draft = {draft!r} was not measured: the capstone has {have}")
    return draft


def decimals_for(lo: float, hi: float, cap: int = 2) -> int:
    """Digits after the point that the spread justifies: the last digit printed is of the
    order of the range hi − lo (at most ``cap``; 2 when all repeats agree)."""
    width = abs(hi - lo)
    if width == 0 or not math.isfinite(width):
        return cap
    return int(min(cap, max(0, -math.floor(math.log10(width)))))


def fmt_spread(s: Spread, prefix: str = "", unit: str = "") -> str:
    """'median (min–max)' at the precision the spread justifies, e.g. ×1.9 (1.7–2.1)."""
    if not isinstance(s, Spread):
        raise ValueError(f"s must be a Spread, got {type(s).__name__}")
    d = decimals_for(s.min, s.max)
    return f"{prefix}{s.median:.{d}f}{unit} ({s.min:.{d}f}–{s.max:.{d}f})"


def fmt_interval(p: PairedRatio | PairedSpeedup) -> str:
    """×ratio (low–high) of a stored paired ratio, digits from the interval's width."""
    if p.low is None or p.high is None:
        return f"×{p.ratio:.2f} (n = 1)"
    d = max(decimals_for(p.low, p.high), 1)
    return f"×{p.ratio:.{d}f} ({p.low:.{d}f}–{p.high:.{d}f})"


def _tlabel(t: float) -> str:
    return " T=0" if t == 0 else " T=1"


def best(cap: Capstone, workload: str, temperature: float, key: str = "speedup_decode") -> Run | None:
    """The speculative configuration with the highest median speed-up."""
    sel = [r for r in _cap(cap).select(workload=workload, temperature=temperature) if r.config.draft != PLAIN]
    return max(sel, key=lambda r: getattr(r, key).median) if sel else None


def summary_table(cap: Capstone) -> list[str]:
    """Per workload and temperature: plain decoding (decode-only tokens/s) and the best
    configuration — decode-only and end-to-end speed-ups and the speed-up predicted before."""
    lines = [f"{'':10s}{'plain tok/s':19s}{'best':13s}{'decode-only':18s}{'end to end':18s}predicted"]
    for w in WORKLOADS:
        for t in (0.0, 1.0):
            p, b = cap.select(workload=w, temperature=t, draft=PLAIN), best(cap, w, t)
            if not p or b is None:
                continue
            pred, ppl = b.predicted_tokens_per_s, p[0].predicted_tokens_per_s
            ptxt = f"×{pred / ppl:.2f}" if pred and ppl else "—"
            lab = f"{SHORT[b.config.draft]} γ={b.config.gamma}"
            lines.append(
                f"{w + _tlabel(t):10s}{fmt_spread(p[0].decode_tokens_per_s):19s}{lab:13s}"
                f"{fmt_spread(b.speedup_decode, '×'):18s}{fmt_spread(b.speedup_e2e, '×'):18s}{ptxt}"
            )
    return lines


def prediction_errors(cap: Capstone) -> list[tuple[Config, float]]:
    """(configuration, predicted − measured median over measured median) of decode-only tokens/s."""
    return [(r.config, r.prediction_error) for r in _cap(cap).runs if r.prediction_error is not None]


def speedup_errors(cap: Capstone) -> list[tuple[Config, float]]:
    """(configuration, relative error) of the predicted *speed-up* (predicted speculative ÷
    predicted plain tokens/s, against the measured median speed-up): a slowdown common to plain
    and speculative runs (load on the machine) cancels in the ratio."""
    out = []
    for r in _cap(cap).runs:
        c = r.config
        if c.draft == PLAIN or r.predicted_tokens_per_s is None:
            continue
        p = cap.run(c.workload, c.temperature, PLAIN)
        pred = r.predicted_tokens_per_s / p.predicted_tokens_per_s
        out.append((c, pred / r.speedup_decode.median - 1))
    return out


def error_summary(cap: Capstone, kind: str = "tokens_per_s") -> dict:
    """Median and worst |error| of the predictions: of tokens/s (``kind="tokens_per_s"``) or of
    the speed-up over plain decoding (``kind="speedup"``)."""
    if kind not in ("tokens_per_s", "speedup"):
        raise ValueError(f"kind must be 'tokens_per_s' or 'speedup', got {kind!r}")
    errs = prediction_errors(cap) if kind == "tokens_per_s" else speedup_errors(cap)
    e = np.array([abs(x) for _, x in errs])
    return {
        "n": int(e.size),
        "median": float(np.median(e)),
        "worst": float(e.max()),
        "within_10": int((e <= 0.10).sum()),
        "within_20": int((e <= 0.20).sum()),
    }


def range_summary(cap: Capstone, big: float = 0.10) -> tuple[int, int, int]:
    """(measured medians inside their predicted range, configurations with a range, misses of
    more than ``big`` relative error outside their range): the range (temperature 1) is where
    the median of the repeats was expected from the spread between teacher-forced trajectories
    (:attr:`specdec_core.measured.capstone.Prediction.low`); it leaves out the costs' noise, so
    the last count is where acceptance itself was mispredicted."""
    inside = ranged = outside_big = 0
    for r in _cap(cap).runs:
        pr = cap.prediction(r.config)
        if pr is None or pr.low is None or pr.high is None:
            continue
        ranged += 1
        ok = pr.low <= r.decode_tokens_per_s.median <= pr.high
        inside += int(ok)
        outside_big += int(not ok and r.prediction_error is not None and abs(r.prediction_error) > big)
    return inside, ranged, outside_big


def worst_predictions(cap: Capstone, k: int = 4) -> list[str]:
    """The ``k`` configurations whose tokens/s prediction missed most, with what was predicted."""
    lines = []
    for c, e in sorted(prediction_errors(cap), key=lambda t: -abs(t[1]))[:k]:
        r, pr = cap.find(c), cap.prediction(c)
        rng = "" if pr.low is None else f" (median of the repeats expected in {pr.low:.1f}–{pr.high:.1f})"
        lines.append(
            f"{c.label}: error {100 * e:+.0f}%; predicted {pr.tokens_per_s:.1f} tok/s{rng} with "
            f"{pr.mean_k:.2f} tokens per round, measured {fmt_spread(r.decode_tokens_per_s)} tok/s "
            f"with {r.mean_k.median:.2f} tokens per round"
        )
    return lines


def time_breakdown_lines(cap: Capstone, temperature: float = 0.0) -> list[str]:
    """Where the time of a round went in the best configuration of each workload, from the timed
    runs' own logs (not a prediction)."""
    lines = []
    for w in WORKLOADS:
        r = best(cap, w, temperature)
        if r is None:
            continue
        pr = r.per_round_ms
        hist = ", ".join(f"{k}:{c}" for k, c in enumerate(r.k_hist) if c)
        lines.append(
            f"{w}: {DRAFTS[r.config.draft]}, γ={r.config.gamma}: per round draft {pr.draft:.2f} ms, "
            f"verify {pr.verify:.1f} ms, sampler and bookkeeping {pr.overhead:.2f} ms; "
            f"rounds by tokens emitted {{{hist}}}"
        )
    return lines


def greedy_equality(cap: Capstone) -> tuple[int, int]:
    """(greedy speculative runs identical to plain greedy decoding, all greedy speculative runs)."""
    eq = [x for r in _cap(cap).runs for x in (r.greedy_equal or ())]
    return sum(eq), len(eq)


def margin_lines(cap: Capstone) -> list[str]:
    return [
        f"{m.workload}: smallest top-2 logit gap {m.min:.2g} over {m.positions} positions; "
        f"gaps below 1e-3: {m.below_1e_3}, below 1e-2: {m.below_1e_2}"
        for m in _cap(cap).greedy_margins
    ]


def law_lines(cap: Capstone) -> list[str]:
    L = _cap(cap).law
    lines = [
        f"draft: {L.draft}, α = {L.alpha:.2f} at the prefix; broken variant (corrections from p) "
        f"differs from p by total variation {L.tv_broken:.3f}",
        f"sample size n = {L.n}: power {L.power:.3f} to reject the broken variant at p-value < {L.threshold:g}",
    ]
    if L.rerun_utc:
        lines.insert(
            0,
            f"law test re-run alone on {L.rerun_utc} (bench_llm.py --law-only), same draft and prefix",
        )
    for g, lab in (
        (L.correct, "correct (residual)"),
        (L.broken_corrects_from_p, "broken (corrections from p)"),
    ):
        lines.append(
            f"{lab:28s}: chi-square {g.chi2:.1f} on {g.dof} dof, p-value {g.p_value:.2g} → "
            f"{'REJECTED' if g.rejected else 'not rejected'}"
        )
    return lines


def law_history_lines(cap: Capstone) -> list[str]:
    """Earlier outcomes of the law test kept in the results (a miss is part of the record)."""
    lines = []
    for L in _cap(cap).law_history:
        when = L.rerun_utc if L.rerun_utc else cap.machine.date_utc + " (the full run)"
        b, c = L.broken_corrects_from_p, L.correct
        lines.append(
            f"earlier, {when}: n = {L.n} (power {L.power:.2f}), {b.dof} dof; correct p-value "
            f"{c.p_value:.2g}; broken p-value {b.p_value:.2g} → {'REJECTED' if b.rejected else 'not rejected'}"
        )
    return lines


def memory_lines(cap: Capstone) -> list[str]:
    return [
        f"{v.name.replace('_', ' ')}: peak resident memory (VmHWM) {v.vm_hwm_mib / 1024:.2f} GiB, "
        f"{v.seconds:.{1 if v.seconds < 10 else 0}f} s"
        for v in _cap(cap).memory
    ]


def chosen_rows(cap: Capstone) -> list[dict]:
    """Per workload and temperature: the configuration chosen *before* the timed runs (best
    predicted speed-up), its measured run and the plain run."""
    return [
        {
            "workload": w,
            "temperature": t,
            "chosen": c,
            "run": cap.run(w, t, c.draft, c.gamma),
            "plain": cap.run(w, t, PLAIN),
        }
        for c in _cap(cap).predictions.chosen
        for w, t in [(c.workload, c.temperature)]
    ]


def chosen_table(cap: Capstone) -> list[str]:
    """The table of :func:`chosen_rows`: plain tok/s, the chosen configuration, the predicted
    speed-up and the measured one (geometric mean of paired repeats, 95% interval)."""
    lines = [f"{'':10s}{'plain tok/s':19s}{'chosen':15s}{'predicted':11s}measured (95% interval)"]
    for row in chosen_rows(cap):
        c, r, p = row["chosen"], row["run"], row["plain"]
        lab = f"{SHORT[c.draft]} γ={c.gamma}"
        lines.append(
            f"{row['workload'] + _tlabel(row['temperature']):10s}{fmt_spread(p.decode_tokens_per_s):19s}"
            f"{lab:15s}×{c.predicted_speedup:<10.2f}{fmt_interval(r.speedup_paired)}"
        )
    return lines


def best_real_q(
    cap: Capstone,
    workload: str,
    temperature: float = 1.0,
    drafts: tuple[str, ...] = ("ngram", "exit", "feature", "quant"),
) -> Run | None:
    """Among the drafts with a genuine q, the configuration with the best *predicted* speed-up
    (chosen before the run, like :func:`chosen_rows`), with its measured run."""
    cands = [
        r for r in _cap(cap).select(workload=workload, temperature=temperature) if r.config.draft in drafts
    ]
    return max(cands, key=lambda r: cap.prediction(r.config).tokens_per_s) if cands else None


def sign_bias(cap: Capstone) -> tuple[int, int]:
    """(predictions below the measurement, all predictions) for tokens/s."""
    errs = [e for _, e in prediction_errors(cap)]
    return sum(e < 0 for e in errs), len(errs)


def noise_lines(cap: Capstone) -> tuple[list[str], float]:
    """Run-to-run noise: the single-step cost's range in the micro-benchmark, and the median
    spread (sd of log) of the paired speed-ups across repeats. Returns (lines, that spread)."""
    v = _cap(cap).micro.verify[1.0].points[1]
    pairs = [
        r.speedup_paired.sd_log
        for r in cap.runs
        if r.config.draft != PLAIN and r.speedup_paired.sd_log is not None
    ]
    med_sd = float(np.median(pairs)) if pairs else float("nan")
    return [
        f"one target step (T = 1) in the micro-benchmark: median {v.median:.1f} ms, range "
        f"{v.min:.1f}–{v.max:.1f} ms over {cap.micro.reps} repeats",
        f"paired speed-ups: median spread of log(ratio) across repeats {med_sd:.3f} "
        f"(≈ ±{100 * med_sd:.0f}% per repeat)",
    ], med_sd


def break_even_lines(cap: Capstone, temperature: float = 1.0) -> list[str]:
    """Per draft: the smallest break-even α over its γ (derived from the measured costs) against
    the acceptance the timed runs reached (per-run α, over workloads and γ)."""
    temperature = _temperature(cap, temperature)
    lines = []
    for name in DRAFTS:
        ok = {
            b.gamma: b.alpha
            for b in _cap(cap).break_even
            if b.temperature == temperature and b.draft == name and b.alpha is not None
        }
        need = f"α ≥ {min(ok.values()):.2f} (γ = {min(ok, key=ok.get)})" if ok else "no α ≤ 1 pays"
        got = [r.alpha.median for r in cap.select(temperature=temperature, draft=name)]
        lines.append(
            f"{DRAFTS[name]}: pays when {need}; measured α in the timed runs "
            f"{min(got):.2f}–{max(got):.2f} over workloads and γ"
        )
    return lines


def break_even(cap: Capstone, draft: str, gamma: int, temperature: float = 1.0) -> float | None:
    """The α at which a round of ``draft`` with γ proposals costs what its iid E[K] tokens
    save (:func:`specdec_core.llm.predict.break_even_alpha` on the measured medians)."""
    temperature, draft = _temperature(cap, temperature), _draft(cap, draft)
    return break_even_alpha(CostModel.from_micro(_cap(cap).micro, temperature, draft), gamma)


def break_even_by_workload(cap: Capstone, draft: str, gamma: int, temperature: float = 1.0) -> list[str]:
    """Per workload: the acceptance the timed runs of ``draft`` at γ reached against its
    break-even α (:func:`break_even`), and the measured decode-only speed-up of the same runs."""
    even = break_even(cap, draft, gamma, temperature)
    lines = []
    for w in WORKLOADS:
        r = cap.run(w, temperature, draft, gamma)
        a = r.alpha.median
        side = "—" if even is None else ("above" if a >= even else "below")
        lines.append(
            f"{w}: α {a:.2f}, {side} the break-even {'—' if even is None else f'{even:.2f}'}; "
            f"decode-only {fmt_interval(r.speedup_paired)}"
        )
    return lines


#: Drafts whose q is a real distribution over the vocabulary (prompt lookup's is one-hot).
GENUINE_Q = ("ngram", "exit", "feature", "quant")


def goal_gap(cap: Capstone, goal: float = 1.1, temperature: float = 1.0) -> list[str]:
    """Per workload, how far the drafts with a genuine q are from a decode-only speed-up of
    ``goal``: the configuration with the best *predicted* speed-up among them (chosen from the
    predictions, not from the measurements, so it is not the maximum of noisy repeats), its
    measured speed-up, the α its runs reached and the α a round of that γ needs for ``goal``
    at the measured costs (:func:`break_even_alpha` with ``speedup=goal``). Whether the goal is
    reached is read from the paired interval (above, below, or inside it), not the point; a
    configuration with one repeat has no interval, and the line says so (no verdict)."""
    c = _cap(cap)
    goal = float(check_positive(goal, "goal", "a positive speed-up, e.g. 1.1"))
    temperature = _temperature(c, temperature)
    lines = []
    for w in WORKLOADS:
        plain = c.prediction(Config(w, float(temperature), PLAIN, 0))
        cands = [
            p
            for p in c.predictions.values
            if (p.config.workload, p.config.temperature) == (w, float(temperature))
            and p.config.draft in GENUINE_Q
            and c.find(p.config) is not None
        ]
        if plain is None or not cands:
            continue
        best_p = max(cands, key=lambda p: p.tokens_per_s)
        k, r = best_p.config, c.find(best_p.config)
        need = break_even_alpha(CostModel.from_micro(c.micro, temperature, k.draft), k.gamma, speedup=goal)
        gap = "no α reaches it" if need is None else f"×{goal:g} needs α ≥ {need:.2f}"
        pr = r.speedup_paired
        if pr.low is None or pr.high is None:
            verdict = f"no interval (n = {pr.n}): whether it reaches ×{goal:g} is not known"
        else:
            verdict = (
                f"above ×{goal:g}"
                if pr.low > goal
                else (f"below ×{goal:g}" if pr.high < goal else f"×{goal:g} inside its interval")
            )
        lines.append(
            f"{w}: {DRAFTS.get(k.draft, k.draft)} γ = {k.gamma} (best predicted, ×"
            f"{best_p.tokens_per_s / plain.tokens_per_s:.2f}); measured "
            f"{fmt_interval(r.speedup_paired)}, {verdict}; α {r.alpha.median:.2f}, {gap}"
        )
    return lines


def ceiling(cap: Capstone, gamma: int, temperature: float = 0.0) -> float:
    """The speed-up a free, always-accepted draft would reach at γ: E[K] at α = 1 (γ + 1 tokens)
    over the cost of scoring γ + 1 positions in decode steps."""
    gamma = check_int(gamma, "gamma", 0)
    v = _cap(cap).micro.verify[_temperature(cap, temperature)].median()
    if gamma + 1 not in v:
        raise ValueError(f"gamma + 1 = {gamma + 1} positions were not measured (have {sorted(v)})")
    return expected_output_count(1.0, gamma) / (v[gamma + 1] / v[1])


def pay_points(cap: Capstone, temperature: float = 1.0) -> list[tuple]:
    """(draft, γ, workload, cost of a round in decode steps, measured tokens per round): a round
    pays when its tokens exceed its cost (costs from the micro-benchmarks, notebook 05's model)."""
    temperature = _temperature(cap, temperature)
    out = []
    for r in _cap(cap).runs:
        c = r.config
        if c.temperature != temperature or c.draft == PLAIN:
            continue
        cm = CostModel.from_micro(cap.micro, temperature, c.draft)
        out.append((c.draft, c.gamma, c.workload, cm.round_ms(c.gamma) / cm.round_ms(0), r.mean_k.median))
    return out


def _study(rec, cls, name: str):
    if not isinstance(rec, cls):
        raise ValueError(
            f"the record must be the {cls.__name__} of read_stored({name!r}), got {type(rec).__name__}"
        )
    return rec


def feature_lines(ft: FeatureStudy) -> list[str]:
    """The feature draft's study: what it was fitted on, α per depth on the workloads' own
    continuations (full head and the 4k shortlist), the shortlist's share of p, and the cost of a
    draft step against a target step."""
    c, a, cost = _study(ft, FeatureStudy, "features.json").chosen, ft.alpha["chosen"], ft.cost
    lines = [
        f"fitted on {c.n} positions (docstrings, calibration continuations, the model's own samples); "
        f"inputs {c.inputs} + {c.n_random} random features, ridge {c.ridge:g}"
    ]
    for w in WORKLOADS:
        k = f"workload {w}"
        full, sl = a[k]["full"][1.0], a[k]["top4096"][1.0]
        mass = ft.shortlist_mass[k]["top4096"]
        lines.append(
            f"{w}: α at T = 1 by depth 1–{len(full)}: full head "
            + ", ".join(f"{x:.2f}" for x in full)
            + "; 4k shortlist "
            + ", ".join(f"{x:.2f}" for x in sl)
            + f" (p's mass inside the shortlist {mass:.2f})"
        )
    lines.append(
        f"one draft step: {cost.draft_step_top4096_ms:.2f} ms with the 4k shortlist, "
        f"{cost.draft_step_full_ms:.1f} ms with the full head; one target step {cost.target_step_ms:.1f} ms "
        f"(medians of {cost.reps})"
    )
    return lines


def rounding_lines(rd: RoundingStudy) -> list[str]:
    """Speculative against plain greedy tokens, and one position per call against blocks."""
    s = _study(rd, RoundingStudy, "rounding.json").summary
    return [
        f"{s.generations} prompts × {rd.tokens_per_prompt} greedy tokens: speculative (γ = {rd.gamma}) identical "
        f"to plain in {s.identical} of {s.generations}",
        f"logits one position per call vs blocks of {rd.block}, over {s.positions_compared} positions: largest "
        f"difference {s.max_abs_diff:.1g} ({s.max_rel_diff:.1g} of the row's largest |logit|), argmax flips "
        f"{s.argmax_flips}; closest call: a top-2 gap of {s.smallest_gap:.1g}",
    ]


def goal_lines(pc: PassCost) -> list[str]:
    """The pass-cost goals of the stored run (one BLAS thread): cost(8)/cost(1), cost(4)/cost(1)
    of the weight products and of the whole pass, one row against the read floor."""
    g = _study(pc, PassCost, "passcost.json").goals
    if g is None:
        raise ValueError("the stored passcost.json has no goals (a quick run?)")
    return [
        f"verification cost, weight products: 4 positions {g.products_4_over_1:.2f} steps, 8 positions "
        f"{g.products_8_over_1:.2f} (whole pass: {g.forward_4_over_1:.2f}, {g.forward_8_over_1:.2f}); "
        f"one row {g.one_row_over_floor:.2f}× the weight-read floor",
    ]


# ---------------------------------------------------------------- the draft ladder (issue 35)


def verify_steps(cap: Capstone, temperature: float = 1.0, max_T: int = 12) -> list[float]:
    """The measured verification call's cost in target steps for T = 1 … max_T positions (the
    micro-benchmark's medians over its median at T = 1; fewer where the curve stops earlier)."""
    v = _cap(cap).micro.verify[float(temperature)].median()
    if 1 not in v or 2 not in v:
        raise ValueError(f"the stored verify curve must cover T = 1 and 2 (it has {sorted(v)})")
    top = 1
    while top < max_T and top + 1 in v:  # the consecutive sizes measured, up to max_T
        top += 1
    return [v[T] / v[1] for T in range(1, top + 1)]


def alpha_needed_or_nan(c: float, factor: float, verify: list[float] | None) -> float:
    """:func:`specdec_core.timing.alpha_needed` at the largest γ the verify curve allows (NaN where
    no γ reaches ``factor``: a gap in a plotted curve, never a printed number)."""
    m = 11 if verify is None else len(verify) - 1
    a = alpha_needed(c, factor, verify, max_gamma=m)
    return float("nan") if a is None else a


def ladder_points(cap: Capstone) -> list[tuple[str, float, float, float, float]]:
    """(draft, draft step in target steps, mean α at T = 1 over the workloads, lowest, highest)
    for every draft with a teacher-forced α and a measured step."""
    cap = _cap(cap)
    v1 = cap.micro.verify[1.0].median()[1]
    out = []
    for d in DRAFTS:
        al = [a.alpha for a in cap.predictions.teacher_forcing_alpha if a.draft == d and a.temperature == 1.0]
        curve = cap.micro.draft.get(d)
        if not al or curve is None or 1 not in curve.median():
            continue
        out.append((d, curve.median()[1] / v1, float(np.mean(al)), min(al), max(al)))
    return out


def ladder_lines(cap: Capstone) -> list[str]:
    """The ladder as text: per draft, its step cost, α at T = 1 and the α it needs (both counts)."""
    v = verify_steps(cap)
    lines = []
    for d, c, a, lo, hi in ladder_points(cap):
        need = alpha_needed(c, 1.0, v, max_gamma=len(v) - 1)
        need15 = alpha_needed(c, 1.5, v, max_gamma=len(v) - 1)
        fmt_n = lambda x: "out of reach" if x is None else f"{x:.2f}"
        lines.append(
            f"{SHORT[d]:>9}: step {c:.2f} target steps, α {a:.2f} ({lo:.2f}–{hi:.2f}); "
            f"needs {fmt_n(need)} to break even, {fmt_n(need15)} for ×1.5"
        )
    return lines


def _quantized(cap: Capstone):
    qs = _cap(cap).quantized
    if qs is None:
        raise ValueError("the stored results predate the quantized-copy draft (no 'quantized' record)")
    return qs


def quantized_lines(cap: Capstone) -> list[str]:
    """The int8 copy (issue 35): how far quantizing moved each weight row, its bytes, q against p
    per workload (TV = 1 − α per position), and the powered law test of both paths."""
    qs = _quantized(cap)
    lines = [
        f"weights: int8 per output row, {qs.int8_bytes / 1e6:.0f} MB against {qs.float32_bytes / 1e6:.0f} MB "
        f"float32; each row moves by {100 * qs.row_error_median:.2f} % of its size (median; 99th percentile "
        f"{100 * qs.row_error_p99:.2f} %)"
    ]
    for g in qs.gaps:
        lines.append(
            f"{g.workload}: TV(p, q) per position mean {g.tv_mean:.3f}, 90th percentile {g.tv_p90:.3f}, "
            f"largest {g.tv_max:.3f} ({g.positions} positions)"
        )
    return lines


def lossy_lines(cap: Capstone, temperature: float = 1.0) -> list[str]:
    """Lossless beside lossy, per workload: the int8 copy decoding alone (faster, another law)
    against speculative decoding with the int8 copy as the draft at the γ predicted best before
    the run (p's law exactly); decode-only paired speed-ups over plain decoding of the same repeats."""
    cap = _cap(cap)
    t = float(temperature)
    lines = []
    for w in WORKLOADS:
        alone = cap.find(Config(w, t, "int8-alone", 0))
        spec = best_real_q(cap, w, t, drafts=("quant",))
        if alone is None or spec is None:
            continue
        same = ""
        if alone.greedy_equal is not None:
            same = (
                f"; same text as the target in {sum(alone.greedy_equal)} of {len(alone.greedy_equal)} repeats"
            )
        lines.append(
            f"{w}, {'greedy' if t == 0 else f'T = {t:g}'}: int8 copy alone {fmt_interval(alone.speedup_paired)} "
            f"(samples q){same} | "
            f"int8 draft, γ = {spec.config.gamma}: {fmt_interval(spec.speedup_paired)} (samples p exactly)"
        )
    return lines


def parting_lines(cap: Capstone) -> list[str]:
    """Where greedy decoding by the int8 copy parts from the target's, per workload."""
    qs = _quantized(cap)
    out = []
    for p in qs.partings:
        if p.position is None:
            out.append(f"{p.workload}: identical over all {p.tokens} greedy tokens")
            continue
        out.append(
            f"{p.workload}: same for {p.position} tokens, then …{p.shared_text!r} continues "
            f"{p.target_text!r} (target) / {p.copy_text!r} (int8 copy)"
        )
    return out


def copy_law_lines(cap: Capstone) -> list[str]:
    """The powered law test of both paths: the int8 copy as a draft (p's law) and alone (q's)."""
    law = _quantized(cap).law
    if law is None:
        raise ValueError("the stored results hold no law test of the int8 copy")
    verdict = lambda g: (
        f"chi-square {g.chi2:.1f} on {g.dof} dof, p-value {g.p_value:.2g} → "
        + ("REJECTED" if g.rejected else "not rejected")
    )
    asked = law.prefix.split("<|im_start|>user\n")[-1].split("<|im_end|>")[0]
    return [
        f"after the chat prompt {asked!r}: α = {law.alpha:.3f}, TV(p, q) = {law.tv_copy:.3f}; n = {law.n} draws "
        f"(power {law.power:.2f} to reject q's law at p-value < {law.threshold:g})",
        f"speculative, int8 copy as the draft : {verdict(law.speculative)}",
        f"the int8 copy alone                 : {verdict(law.copy_alone)}",
    ]


def draft_goal_lines(cap: Capstone) -> list[str]:
    """The quantized-copy draft's goals (issue 35) against the stored run, printed by
    ``bench_llm.py`` (never asserted): α ≥ 0.9 at T = 1 per workload; decode-only ×1.5 at T = 1 with
    the configuration chosen before the run, its paired interval's low end above ×1.3; greedy copy
    ≥ ×5; the prediction's median |error| ≤ 10 %."""
    cap = _cap(cap)
    lines = []
    for w in WORKLOADS:
        a = cap.teacher_alpha(w, 1.0, "quant")
        run = next(
            (r["run"] for r in chosen_rows(cap) if r["workload"] == w and r["temperature"] == 1.0), None
        )
        if a is None or run is None:
            continue
        p = run.speedup_paired
        lines.append(
            f"goal check {w}, T = 1: int8 copy α {a:.3f} (goal ≥ 0.9); chosen {SHORT[run.config.draft]} "
            f"γ = {run.config.gamma}: {fmt_interval(p)} (goal ×1.5, low end above ×1.3)"
        )
    greedy = next(
        (r["run"] for r in chosen_rows(cap) if r["workload"] == "copy" and r["temperature"] == 0.0), None
    )
    if greedy is not None:
        lines.append(f"goal check copy, greedy: {fmt_interval(greedy.speedup_paired)} (goal ≥ ×5)")
    e = error_summary(cap)
    lines.append(f"goal check prediction: median |error| {100 * e['median']:.0f} % (goal ≤ 10 %)")
    return lines

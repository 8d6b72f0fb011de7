"""Reading specdec_core/results/llm.json for notebook 09: provenance, spreads, tables, the quiz.

Every line these helpers return starts from the results file; nothing is typed in. Precision
follows the spread of the repetitions (:func:`fmt_spread`). The figures drawn from the same
results live in :mod:`specdec_core.plots.llm` (the pure layer never imports matplotlib).
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from ..questions import MEASURE_QUESTION  # noqa: F401  (re-exported: the old import path)

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results", "llm.json")
DRAFTS = {
    "lookup": "prompt lookup (adaptive γ)",
    "ngram": "n-gram",
    "exit": "trained early exit",
    "feature": "feature draft",
}
WORKLOADS = ("copy", "code", "story")


def _intkeys(d):
    return {int(k): v for k, v in d.items()}


def load_results(path: str | None = None) -> dict:
    """The results file (``path``, else ``$SPECDEC_LLM_RESULTS``, else the stored
    specdec_core/results/llm.json), with the numeric keys JSON turned into strings turned back."""
    with open(path or os.environ.get("SPECDEC_LLM_RESULTS") or RESULTS) as f:
        res = json.load(f)
    mic = res["micro"]
    for name in ("verify_ms", "overhead_ms"):
        mic[name] = {t: _intkeys(c) for t, c in mic[name].items()}
    mic["draft_ms"] = {d: _intkeys(c) for d, c in mic["draft_ms"].items()}
    cal = res["calibration"]
    cal["exit_alpha"] = {
        t: {kind: _intkeys(v) for kind, v in kinds.items()} for t, kinds in cal["exit_alpha"].items()
    }
    for key in ("exit_step_ms", "exit_predicted_speedup_T1", "exit_shrink"):
        if key in cal:
            cal[key] = _intkeys(cal[key])
    cal["ngram_alpha_by_discount"] = {float(k): v for k, v in cal["ngram_alpha_by_discount"].items()}
    return res


def how(res: dict) -> str:
    """Where, when and how the stored numbers were measured."""
    m = res["machine"]
    la = res["sweep"].get("load_avg_1min_at_plain_runs") or [m["load_avg_start"][0]]
    th = m.get("blas_threads_used", 1)
    return (
        f"{m['cpu']}, {m['cores']} cores, {th} BLAS thread{'s' if th != 1 else ''}, load average "
        f"{min(la):.1f}–{max(la):.1f} during the timed runs, {m['date_utc']}, benchmarks/bench_llm.py"
    )


def decimals_for(lo: float, hi: float, cap: int = 2) -> int:
    """Digits after the point that the spread justifies: the last digit printed is of the
    order of the range hi − lo (at most ``cap``; 2 when all repeats agree)."""
    width = abs(hi - lo)
    if width == 0 or not math.isfinite(width):
        return cap
    return int(min(cap, max(0, -math.floor(math.log10(width)))))


def fmt_spread(s: dict, prefix: str = "", unit: str = "") -> str:
    """'median (min–max)' at the precision the spread justifies, e.g. ×1.9 (1.7–2.1)."""
    d = decimals_for(s["min"], s["max"])
    return f"{prefix}{s['median']:.{d}f}{unit} ({s['min']:.{d}f}–{s['max']:.{d}f})"


def runs(res, *, workload=None, temperature=None, draft=None, gamma=None):
    return [
        r
        for r in res["runs"]
        if (workload is None or r["workload"] == workload)
        and (temperature is None or r["temperature"] == temperature)
        and (draft is None or r["draft"] == draft)
        and (gamma is None or r["gamma"] == gamma)
    ]


def best(res, workload, temperature, key="speedup_decode"):
    """The speculative configuration with the highest median speed-up."""
    sel = [r for r in runs(res, workload=workload, temperature=temperature) if r["draft"] != "plain"]
    return max(sel, key=lambda r: r[key]["median"]) if sel else None


SHORT = {"lookup": "lookup", "ngram": "n-gram", "exit": "exit", "feature": "feature"}


def summary_table(res) -> list:
    """One small table: per workload and temperature, plain decoding (decode-only tokens/s) and
    the best configuration — decode-only and end-to-end speed-ups (median and range over
    repeats) and the speed-up predicted before the run."""
    lines = [f"{'':10s}{'plain tok/s':15s}{'best':13s}{'decode-only':18s}{'end to end':18s}predicted"]
    for w in WORKLOADS:
        for t in (0.0, 1.0):
            p = runs(res, workload=w, temperature=t, draft="plain")
            b = best(res, w, t)
            if not p or b is None:
                continue
            pred = b.get("predicted_tokens_per_s")
            ppl = p[0].get("predicted_tokens_per_s")
            ptxt = f"×{pred / ppl:.2f}" if pred and ppl else "—"
            lab = f"{SHORT[b['draft']]} γ={b['gamma']}"
            lines.append(
                f"{w + (' T=0' if t == 0 else ' T=1'):10s}{fmt_spread(p[0]['decode_tokens_per_s']):15s}"
                f"{lab:13s}{fmt_spread(b['speedup_decode'], '×'):18s}{fmt_spread(b['speedup_e2e'], '×'):18s}{ptxt}"
            )
    return lines


def prediction_errors(res) -> list:
    """(label, relative error) of every configuration's prediction (decode-only tokens/s),
    predicted − measured median, over measured median."""
    out = []
    for r in res["runs"]:
        if "prediction_error" in r:
            lab = f"{r['workload']} T={r['temperature']:g} {r['draft']}" + (
                f" γ={r['gamma']}" if r["draft"] != "plain" else ""
            )
            out.append((lab, float(r["prediction_error"])))
    return out


def speedup_errors(res) -> list:
    """(label, relative error) of the predicted *speed-up* (predicted speculative ÷ predicted
    plain tokens/s, against the measured median speed-up): a slowdown common to plain and
    speculative runs (load on the machine) cancels in the ratio."""
    pl = {(r["workload"], r["temperature"]): r for r in res["runs"] if r["draft"] == "plain"}
    out = []
    for r in res["runs"]:
        if r["draft"] == "plain" or "predicted_tokens_per_s" not in r:
            continue
        p = pl[(r["workload"], r["temperature"])]
        pred = r["predicted_tokens_per_s"] / p["predicted_tokens_per_s"]
        out.append(
            (
                f"{r['workload']} T={r['temperature']:g} {r['draft']} γ={r['gamma']}",
                pred / r["speedup_decode"]["median"] - 1,
            )
        )
    return out


def error_summary(res, kind="tokens_per_s") -> dict:
    """Median and worst |error| of the predictions: of tokens/s (``kind="tokens_per_s"``) or of
    the speed-up over plain decoding (``kind="speedup"``)."""
    errs = prediction_errors(res) if kind == "tokens_per_s" else speedup_errors(res)
    e = np.array([abs(x) for _, x in errs])
    return {
        "n": int(e.size),
        "median": float(np.median(e)),
        "worst": float(e.max()),
        "within_10": int((e <= 0.10).sum()),
        "within_20": int((e <= 0.20).sum()),
    }


def worst_predictions(res, k=4) -> list:
    errs = sorted(prediction_errors(res), key=lambda t: -abs(t[1]))[:k]
    lines = []
    for lab, e in errs:
        w, t, d = lab.split()[0], float(lab.split()[1][2:]), lab.split()[2]
        g = int(lab.split()[3][2:]) if d != "plain" else 0
        r = runs(res, workload=w, temperature=t, draft=d, gamma=g)[0]
        key = f"{w}/T{t:g}/plain" if d == "plain" else f"{w}/T{t:g}/{d}/{g}"
        pr = res["predictions"]["values"][key]
        lines.append(
            f"{lab}: error {100 * e:+.0f}%; predicted {pr['tokens_per_s']:.1f} tok/s with "
            f"{pr['mean_k']:.2f} tokens per round, measured {fmt_spread(r['decode_tokens_per_s'])} tok/s "
            f"with {r['mean_k']['median']:.2f} tokens per round"
        )
    return lines


def time_breakdown_lines(res, temperature=0.0) -> list:
    """Where the time of a round went in the best configuration of each workload: a breakdown
    read from the timed runs' own logs (not a prediction)."""
    lines = []
    for w in WORKLOADS:
        r = best(res, w, temperature)
        if r is None:
            continue
        pr = r["per_round_ms"]
        hist = ", ".join(f"{k}:{c}" for k, c in enumerate(r["k_hist"]) if c)
        lines.append(
            f"{w}: {DRAFTS[r['draft']]}, γ={r['gamma']}: per round draft {pr['draft']:.2f} ms, "
            f"verify {pr['verify']:.1f} ms, sampler and bookkeeping {pr['overhead']:.2f} ms; "
            f"rounds by tokens emitted {{{hist}}}"
        )
    return lines


def greedy_equality(res) -> tuple:
    eq = [x for r in res["runs"] for x in r.get("greedy_equal", [])]
    return sum(eq), len(eq)


def margin_lines(res) -> list:
    out = []
    for w, m in res["greedy_margins"].items():
        out.append(
            f"{w}: smallest top-2 logit gap {m['min']:.2g} over {m['positions']} positions; "
            f"gaps below 1e-3: {m['below_1e-3']}, below 1e-2: {m['below_1e-2']}"
        )
    return out


def law_lines(res) -> list:
    L = res["law"]
    lines = [
        f"draft: {L['draft']}, α = {L['alpha']:.2f} at the prefix; broken variant (corrections from p) "
        f"differs from p by total variation {L['tv_broken']:.3f}",
        f"sample size n = {L['n']}: power {L['power']:.3f} to reject the broken variant at p-value < {L['threshold']:g}",
    ]
    if "rerun" in L:
        lines.insert(
            0,
            f"law test re-run alone on {L['rerun']['date_utc']} (bench_llm.py --law-only), same draft and prefix",
        )
    for name, lab in (
        ("correct", "correct (residual)"),
        ("broken_corrects_from_p", "broken (corrections from p)"),
    ):
        g = L[name]
        lines.append(
            f"{lab:28s}: chi-square {g['chi2']:.1f} on {g['dof']} dof, p-value {g['p_value']:.2g} → "
            f"{'REJECTED' if g['rejected'] else 'not rejected'}"
        )
    return lines


def law_history_lines(res) -> list:
    """Earlier outcomes of the law test kept in the results file (a miss is part of the record)."""
    lines = []
    for L in res.get("law_history", []):
        when = L["rerun"]["date_utc"] if "rerun" in L else res["machine"]["date_utc"] + " (the full run)"
        b, c = L["broken_corrects_from_p"], L["correct"]
        lines.append(
            f"earlier, {when}: n = {L['n']} (power {L['power']:.2f}), {b['dof']} dof; correct p-value "
            f"{c['p_value']:.2g}; broken p-value {b['p_value']:.2g} → {'REJECTED' if b['rejected'] else 'not rejected'}"
        )
    return lines


def memory_lines(res) -> list:
    out = []
    for k, v in res.get("memory", {}).items():
        if "vm_hwm_mib" in v:
            out.append(
                f"{k.replace('_', ' ')}: peak resident memory (VmHWM) {v['vm_hwm_mib'] / 1024:.2f} GiB, "
                f"{v['seconds']:.{1 if v['seconds'] < 10 else 0}f} s"
            )
    return out


# ---------------------------------------------------------------- issue 23: choices, statistics, drafts


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo (the machine architecture as a fallback)."""
    import platform

    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine() or "unknown CPU"


def live_how(threads: int = 1) -> str:
    """Where and when a live measurement in the notebook runs: CPU, cores, BLAS threads, load
    average now, date (UTC)."""
    import datetime

    return (
        f"{cpu_name()}, {os.cpu_count()} cores, {threads} BLAS thread{'s' if threads != 1 else ''}, "
        f"load average {os.getloadavg()[0]:.1f}, "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
    )


def fmt_interval(p: dict) -> str:
    """×ratio (low–high) of a stored paired ratio, digits from the interval's width."""
    if p["n"] < 2 or not math.isfinite(p["low"]):
        return f"×{p['ratio']:.2f} (n = 1)"
    d = decimals_for(p["low"], p["high"])
    d = max(d, 1)
    return f"×{p['ratio']:.{d}f} ({p['low']:.{d}f}–{p['high']:.{d}f})"


def chosen_rows(res) -> list:
    """Per workload and temperature: the configuration chosen *before* the timed runs (best
    predicted speed-up) and its measured paired speed-up with 95% interval."""
    out = []
    for key, c in res["predictions"]["chosen"].items():
        w, t = key.split("/")
        temp = float(t[1:])
        r = runs(res, workload=w, temperature=temp, draft=c["draft"], gamma=c["gamma"])[0]
        p = runs(res, workload=w, temperature=temp, draft="plain")[0]
        out.append({"workload": w, "temperature": temp, "chosen": c, "run": r, "plain": p})
    return out


def chosen_table(res) -> list:
    """The table of :func:`chosen_rows`: plain tok/s, the chosen configuration, the predicted
    speed-up and the measured one (geometric mean of paired repeats, 95% interval)."""
    lines = [f"{'':10s}{'plain tok/s':15s}{'chosen':15s}{'predicted':11s}measured (95% interval)"]
    for row in chosen_rows(res):
        c, r, p = row["chosen"], row["run"], row["plain"]
        lab = f"{SHORT[c['draft']]} γ={c['gamma']}"
        lines.append(
            f"{row['workload'] + (' T=0' if row['temperature'] == 0 else ' T=1'):10s}"
            f"{fmt_spread(p['decode_tokens_per_s']):15s}{lab:15s}×{c['predicted_speedup']:<10.2f}"
            f"{fmt_interval(r['speedup_paired'])}"
        )
    return lines


def best_real_q(res, workload, temperature=1.0, drafts=("ngram", "exit", "feature")):
    """Among the drafts with a genuine q, the configuration with the best *predicted* speed-up
    (chosen before the run, like :func:`chosen_rows`), with its measured row."""
    pred = res["predictions"]["values"]
    key = f"{workload}/T{temperature:g}"
    cands = [r for r in runs(res, workload=workload, temperature=temperature) if r["draft"] in drafts]
    if not cands:
        return None
    return max(cands, key=lambda r: pred[f"{key}/{r['draft']}/{r['gamma']}"]["tokens_per_s"])


def sign_bias(res) -> tuple:
    """(predictions below the measurement, all predictions) for tokens/s."""
    errs = [e for _, e in prediction_errors(res)]
    return sum(e < 0 for e in errs), len(errs)


def noise_lines(res) -> list:
    """Run-to-run noise from the stored spread: the single-step cost's range in the
    micro-benchmark, and the median spread (sd of log) of the paired speed-ups across repeats.
    Returns (lines, that spread)."""
    v = res["micro"]["verify_ms"]["T1"][1]
    pairs = [
        r["speedup_paired"]["sd_log"]
        for r in res["runs"]
        if r["draft"] != "plain" and r["speedup_paired"]["n"] > 1
    ]
    med_sd = float(np.median(pairs)) if pairs else float("nan")
    return [
        f"one target step (T = 1) in the micro-benchmark: median {v['median']:.1f} ms, range "
        f"{v['min']:.1f}–{v['max']:.1f} ms over {res['micro']['reps']} repeats",
        f"paired speed-ups: median spread of log(ratio) across repeats {med_sd:.3f} "
        f"(≈ ±{100 * med_sd:.0f}% per repeat)",
    ], med_sd


def break_even_lines(res, temperature=1.0) -> list:
    """Per draft: the smallest break-even α over its γ (derived from the measured costs) against
    the acceptance the timed runs reached (median over workloads of the per-run α)."""
    be = res["break_even_alpha"][f"T{temperature:g}"]
    lines = []
    for name, by_g in be.items():
        vals = {int(g): a for g, a in by_g.items()}
        ok = {g: a for g, a in vals.items() if a is not None}
        need = f"α ≥ {min(ok.values()):.2f} (γ = {min(ok, key=ok.get)})" if ok else "no α ≤ 1 pays"
        got = [r["alpha"]["median"] for r in runs(res, temperature=temperature, draft=name)]
        lines.append(
            f"{DRAFTS[name]}: pays when {need}; measured α in the timed runs "
            f"{min(got):.2f}–{max(got):.2f} over workloads and γ"
        )
    return lines


def pay_points(res, temperature=1.0) -> list:
    """(draft, γ, workload, cost of a round in decode steps, measured tokens per round): a
    round pays when its tokens exceed its cost. Costs from the micro-benchmarks (notebook 05's
    model), tokens per round from the timed runs."""
    from .predict import CostModel

    m = res["micro"]
    t = f"T{temperature:g}"
    vm = {T: c["median"] for T, c in m["verify_ms"][t].items()}
    om = {g: c["median"] for g, c in m["overhead_ms"][t].items()}
    out = []
    for r in runs(res, temperature=temperature):
        if r["draft"] == "plain":
            continue
        cm = CostModel(vm, {g: c["median"] for g, c in m["draft_ms"][r["draft"]].items()}, om)
        out.append(
            (
                r["draft"],
                r["gamma"],
                r["workload"],
                cm.round_ms(r["gamma"]) / cm.round_ms(0),
                r["mean_k"]["median"],
            )
        )
    return out


def _stored_how(res, script) -> str:
    m = res["machine"]
    la = m.get("load_avg_start", [float("nan")])[0], (m.get("load_avg_end") or [float("nan")])[0]
    return f"{m['cpu']}, {m['cores']} cores, 1 BLAS thread, {m['date_utc']}, load average {la[0]:.1f} → {la[1]:.1f}, {script}"


def features_how(ft) -> str:
    return _stored_how(ft, "benchmarks/feature_study.py")


def feature_lines(ft) -> list:
    """The feature draft's study: what it was fitted on, α per depth on the workloads' own
    continuations (full head and the 4k shortlist), the shortlist's share of p, and the cost of a
    draft step against a target step."""
    c, a, cost = ft["chosen"], ft["alpha"]["chosen"], ft["cost"]
    lines = [
        f"fitted on {c['n']} positions (docstrings, calibration continuations, the model's own samples); "
        f"inputs {c['inputs']} + {c['n_random']} random features, ridge {c['ridge']:g}"
    ]
    for w in WORKLOADS:
        k = f"workload {w}"
        full, sl = a[k]["full"]["T=1"], a[k]["top4096"]["T=1"]
        mass = ft["shortlist_mass_of_p"][k]["top4096"]
        lines.append(
            f"{w}: α at T = 1 by depth 1–{len(full)}: full head "
            + ", ".join(f"{x:.2f}" for x in full)
            + "; 4k shortlist "
            + ", ".join(f"{x:.2f}" for x in sl)
            + f" (p's mass inside the shortlist {mass:.2f})"
        )
    lines.append(
        f"one draft step: {cost['draft_step_top4096_ms']:.2f} ms with the 4k shortlist, "
        f"{cost['draft_step_full_ms']:.1f} ms with the full head; one target step {cost['target_step_ms']:.1f} ms "
        f"(medians of {cost['reps']})"
    )
    return lines


def rounding_how(rd) -> str:
    return _stored_how(rd, "benchmarks/bench_rounding.py")


def rounding_lines(rd) -> list:
    s = rd["summary"]
    return [
        f"{s['generations']} prompts × {rd['tokens_per_prompt']} greedy tokens: speculative (γ = {rd['gamma']}) identical "
        f"to plain in {s['identical']} of {s['generations']}",
        f"logits one position per call vs blocks of {rd['block']}, over {s['positions_compared']} positions: largest "
        f"difference {s['max_abs_diff']:.1g} ({s['max_rel_diff']:.1g} of the row's largest |logit|), argmax flips "
        f"{s['argmax_flips']}; closest call: a top-2 gap of {s['smallest_gap']:.1g}",
    ]


def goal_lines(pc) -> list:
    """The pass-cost goals of the stored run (one BLAS thread): cost(8)/cost(1), cost(4)/cost(1)
    of the weight products and of the whole pass, one row against the read floor, prefill."""
    g = pc["goals"]
    return [
        f"verification cost, weight products: 4 positions {g['products_4_over_1']:.2f} steps, 8 positions "
        f"{g['products_8_over_1']:.2f} (whole pass: {g['forward_4_over_1']:.2f}, {g['forward_8_over_1']:.2f}); "
        f"one row {g['one_row_over_floor']:.2f}× the weight-read floor",
    ]

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
DRAFTS = {"lookup": "prompt lookup (adaptive γ)", "ngram": "n-gram", "exit": "trained early exit"}
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


SHORT = {"lookup": "lookup", "ngram": "n-gram", "exit": "exit"}


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
        f"sample size n = {L['n']}: power {L['power']:.2f} to reject the broken variant at p-value < {L['threshold']:g}",
    ]
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


def memory_lines(res) -> list:
    out = []
    for k, v in res.get("memory", {}).items():
        if "vm_hwm_mib" in v:
            out.append(
                f"{k.replace('_', ' ')}: peak resident memory (VmHWM) {v['vm_hwm_mib'] / 1024:.2f} GiB, "
                f"{v['seconds']:.0f} s"
            )
    return out

"""Notebook 07's full measurement: real speculative decoding with SmolLM2-135M-Instruct in
numpy on this CPU. Writes benchmarks/results/llm.json (labelled with machine and date).

    .venv/bin/python benchmarks/bench_llm.py            # full run (several minutes)
    .venv/bin/python benchmarks/bench_llm.py --quick    # a smoke run (≈1 min)

Everything printed is *measured* here (time.perf_counter, min/median over repetitions as
stated), except the predictions, which are *derived* from measured inputs through notebook
05's model (specdec_core.timing.tokens_per_second).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import sys
import time
from collections import Counter

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from specdec_core import chi_square_gof, speculative_generate  # noqa: E402
from specdec_core.llm import CachedTarget, LayerSkipDraft, Llama, PromptLookupDraft, load_model  # noqa: E402
from specdec_core.llm import model as M  # noqa: E402
from specdec_core.llm.adapters import probs_from_logits  # noqa: E402
from specdec_core.llm.runs import (one_step_gap, position_cost_curve, predict_tokens_per_second,  # noqa: E402
                                   run_plain, run_speculative)
from specdec_core.llm.workloads import WORKLOADS, workload_prompt  # noqa: E402

MAX_NEW = {"copy": 120, "code": 90, "story": 120}


def compact_number_lists(text):
    """Put lists of plain numbers (token ids, histograms) on one line in the indented JSON."""
    return re.sub(r"\[\s+([-+\d.eE,\s]+?)\s+\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)


def machine():
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    blas = [(i.get("internal_api"), i.get("num_threads")) for i in threadpool_info()]
    return {"cpu": cpu, "cores": os.cpu_count(), "blas": blas, "numpy": np.__version__,
            "python": platform.python_version(), "platform": platform.platform(),
            "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_avg_start": os.getloadavg()}


def log(*a):
    print(*a, flush=True)


def cost_curves(m, ctx, Ts, reps):
    out = {}
    for threads in (2, 1):
        with threadpool_limits(threads):
            out[f"threads{threads}"] = position_cost_curve(m, ctx, Ts, reps=reps)
    saved = (M.GEMV_MAX_ROWS, M.PAD_ROWS)
    M.GEMV_MAX_ROWS, M.PAD_ROWS = 1, 1                      # plain x @ W for every T
    with threadpool_limits(2):
        out["threads2_plain_matmul"] = position_cost_curve(m, ctx, Ts, reps=reps)
    M.GEMV_MAX_ROWS, M.PAD_ROWS = saved
    return out


def layer_skip_alpha(lm, ks, n_tokens):
    """Exact per-position acceptance α = Σ_x min(p, q) of the k-layer draft along the target's
    own temperature-1 and greedy trajectories on the story workload (no sampling noise)."""
    m = lm.model
    prompt = workload_prompt(lm.codec, "story")
    res = {}
    for temp in (1.0, 0.0):
        tgt = CachedTarget(m, temp)
        traj = run_plain(tgt, prompt, n_tokens, np.random.default_rng(7)).tokens
        seq = list(prompt) + list(traj)
        P = len(prompt)
        p = probs_from_logits(m.logits_for(seq)[P - 1:-1], temp)
        for k in ks:
            d = Llama(m.cfg, m.w, n_layers=k)
            q = probs_from_logits(d.logits_for(seq)[P - 1:-1], temp)
            res.setdefault(f"T{temp:g}", {})[k] = float(np.minimum(p, q).sum(1).mean())
    return res


def law_check(lm, runs, k_draft, gamma, seed=11):
    """End-to-end goodness of fit on the real model: 3-token continuations of a fixed prompt
    sampled by speculative decoding (layer-skip draft, temperature 1) against the exact law.
    Sequences whose first two tokens have probability < 1e-3 (and third-token tails below
    1e-4 overall) are pooled into one outcome 'other'."""
    m = lm.model
    prefix = tuple(lm.codec.encode("The capital of France is"))

    def p_after(seq):
        return probs_from_logits(m.logits_for(list(seq))[-1:], 1.0)[0]

    law, p1 = {}, p_after(prefix)
    for x1 in np.flatnonzero(p1 >= 1e-3):
        p2 = p_after(prefix + (int(x1),))
        for x2 in np.flatnonzero(p1[x1] * p2 >= 1e-3):
            w = p1[x1] * p2[x2]
            p3 = p_after(prefix + (int(x1), int(x2)))
            for x3 in np.flatnonzero(w * p3 >= 1e-4):
                law[(int(x1), int(x2), int(x3))] = float(w * p3[x3])
    law["other"] = 1.0 - sum(law.values())
    tgt, draft = CachedTarget(m, 1.0), LayerSkipDraft(m, k_draft, temperature=1.0)
    rng = np.random.default_rng(seed)
    counts, acc, prop = Counter(), 0, 0
    t = time.perf_counter()
    for _ in range(runs):
        r = speculative_generate(tgt, draft, prefix, gamma=gamma, max_new_tokens=3, rng=rng)
        counts[r.tokens if r.tokens in law else "other"] += 1
        acc += r.accepted
        prop += r.proposed
    g = chi_square_gof(counts, law)
    top = sorted(((v, k) for k, v in law.items() if k != "other"), reverse=True)[:5]
    return {"runs": runs, "gamma": gamma, "draft": f"layer-skip k={k_draft}", "outcomes": len(law),
            "other_mass": law["other"], "chi2": g.statistic, "dof": g.dof, "p_value": g.p_value,
            "threshold": g.threshold, "rejected": g.rejected, "summary": str(g),
            "accepted": acc, "proposed": prop, "seconds": time.perf_counter() - t,
            "top": [[lm.codec.decode(k), v, counts.get(k, 0) / runs] for v, k in top]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=lambda v: [int(x) for x in v.split(",")], default=[2, 1],
                    help="BLAS thread counts for the sweep, e.g. 2,1")
    ap.add_argument("--reps", type=int, default=2, help="repetitions per configuration (best kept)")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "llm.json"))
    args = ap.parse_args()
    quick = args.quick
    info = machine()
    log("machine:", info)
    t = time.perf_counter()
    lm = load_model()
    m, V = lm.model, lm.cfg.vocab_size
    out = {"machine": info, "load": {"seconds": time.perf_counter() - t, "from_cache": lm.info.from_cache,
                                     "stages": lm.info.stages}, "quick": quick}
    log("load:", out["load"])

    # warm up (page faults, BLAS threads)
    warm = CachedTarget(m, 0.0)
    run_plain(warm, workload_prompt(lm.codec, "copy"), 8, np.random.default_rng(0))

    # 1. the cost of scoring T new positions at once
    Ts = list(range(1, 17))
    ctx = workload_prompt(lm.codec, "copy")
    out["cost_curve"] = cost_curves(m, ctx, Ts, reps=3 if quick else 7)
    for name, c in out["cost_curve"].items():
        log(f"cost {name}: " + " ".join(f"{T}:{c[T][0]:.1f}" for T in Ts))

    # 2. workloads × temperature × draft × γ, for each BLAS thread count
    gammas = [2, 4, 7, 10, 15] if not quick else [4, 10]
    reps = 1 if quick else args.reps
    runs, plain, stats = [], {}, []
    for threads in args.threads:
        with threadpool_limits(threads):
            for wname in WORKLOADS:
                prompt = workload_prompt(lm.codec, wname)
                n = MAX_NEW[wname] if not quick else 40
                for temp in (0.0, 1.0):
                    tgt = CachedTarget(m, temp)
                    # best of `reps + 1` runs (same seed, same tokens): the least disturbed one
                    base = max((run_plain(tgt, prompt, n, np.random.default_rng(1)) for _ in range(reps + 1)),
                               key=lambda s: s.tokens_per_s)
                    plain[f"{wname}/T{temp:g}/threads{threads}"] = base.to_dict()
                    log(f"[{threads} thr] {wname} T={temp:g} plain {base.tokens_per_s:.1f} tok/s "
                        f"({1e3 * base.target_s / base.n_tokens:.1f} ms/token in the target)")
                    configs = [("lookup-adaptive", g) for g in gammas] + [("lookup-fixed", g) for g in gammas]
                    configs += [(f"layerskip-k{k}", g) for k in ((4, 10) if not quick else (4,)) for g in (2, 4)]
                    for name, g in configs:
                        best = None
                        for _ in range(reps):
                            if name.startswith("lookup"):
                                draft = PromptLookupDraft(V)
                            else:
                                draft = LayerSkipDraft(m, int(name.split("k")[-1]), temperature=temp)
                            s = run_speculative(tgt, draft, prompt, g, n, np.random.default_rng(2),
                                                adaptive=name == "lookup-adaptive", label=name)
                            if best is None or s.tokens_per_s > best.tokens_per_s:
                                best = s
                        s = best
                        d = s.to_dict()
                        d.update(workload=wname, draft=name, threads=threads,
                                 speedup=s.tokens_per_s / base.tokens_per_s,
                                 greedy_equal=(s.tokens == base.tokens) if temp == 0 else None,
                                 plain_tokens_per_s=base.tokens_per_s,
                                 plain_ms_per_token=1e3 * base.target_s / base.n_tokens)
                        runs.append(d)
                        stats.append(s)
                        per = {k: round(v, 1) for k, v in s.per_round_ms().items()}
                        log(f"  {name:16s} γ={g:2d} {s.tokens_per_s:6.1f} tok/s ×{d['speedup']:.2f} "
                            f"α={s.alpha:.2f} K̄={s.mean_k:.2f} per round ms {per}"
                            + (f" equal={d['greedy_equal']}" if temp == 0 else ""))
    # the cost curves again, after the sweep: a point keeps the least disturbed measurement of the two
    again = cost_curves(m, ctx, Ts, reps=3 if quick else 7)
    for name, c in again.items():
        old = out["cost_curve"][name]
        out["cost_curve"][name] = {T: (min(old[T][0], c[T][0]), min(old[T][1], c[T][1])) for T in Ts}
        log(f"cost {name} (min of both passes): " + " ".join(f"{T}:{out['cost_curve'][name][T][0]:.1f}" for T in Ts))
    # plain decoding measures T = 1 too (target time per token, greedy and temperature 1)
    for threads in args.threads:
        key = f"threads{threads}"
        pm = min(1e3 * v["target_s"] / v["n_tokens"] for k, v in plain.items() if k.endswith("/" + key))
        c1 = out["cost_curve"][key][1]
        out["cost_curve"][key][1] = (min(c1[0], pm), c1[1])
    for d, s in zip(runs, stats):
        curve = {T: out["cost_curve"][f"threads{d['threads']}"][T][0] for T in Ts}
        g = d["gamma"]
        d["predicted_k_hist"] = predict_tokens_per_second(s, curve, use="k_hist")
        d["predicted_alpha"] = predict_tokens_per_second(s, curve, use="alpha")
        d["prediction_error_k_hist"] = d["predicted_k_hist"] / s.tokens_per_s - 1
        d["prediction_error_alpha"] = d["predicted_alpha"] / s.tokens_per_s - 1
        d["ceiling"] = (g + 1) / (curve[g + 1] / curve[1])
        log(f"  [{d['threads']} thr] {d['workload']:5s} T={d['temperature']:g} {d['draft']:16s} γ={g:2d} "
            f"measured {s.tokens_per_s:6.1f} predicted {d['predicted_k_hist']:6.1f} / {d['predicted_alpha']:6.1f} tok/s "
            f"(error {100 * d['prediction_error_k_hist']:+.0f}% / {100 * d['prediction_error_alpha']:+.0f}%)")
    out["plain"] = plain
    out["runs"] = runs
    out["settings"] = {"threads": args.threads, "reps": reps, "max_new_tokens": MAX_NEW if not quick else 40,
                       "gammas": gammas, "gemv_max_rows": M.GEMV_MAX_ROWS, "pad_rows": M.PAD_ROWS}
    out["best_copy_greedy"] = {}
    for threads in args.threads:
        cand = [r for r in runs if r["workload"] == "copy" and r["temperature"] == 0 and r["threads"] == threads]
        b = max(cand, key=lambda r: r["speedup"])
        out["best_copy_greedy"][f"threads{threads}"] = {
            k: b[k] for k in ("draft", "gamma", "plain_tokens_per_s", "tokens_per_s", "speedup", "ceiling",
                              "greedy_equal", "alpha", "mean_k")}
    log("best copy greedy:", out["best_copy_greedy"])

    # 4. layer-skip acceptance, exact along target trajectories
    ks = [2, 4, 6, 8, 10, 12, 15, 20, 25] if not quick else [4, 10]
    out["layer_skip_alpha"] = layer_skip_alpha(lm, ks, 64 if not quick else 16)
    log("layer-skip α:", out["layer_skip_alpha"])

    # 5. the law: one step exactly, and end to end empirically
    prompt = tuple(workload_prompt(lm.codec, "story"))
    p = CachedTarget(m, 1.0)(prompt)
    q = LayerSkipDraft(m, 8, temperature=1.0)(prompt)
    onehot = np.zeros_like(p)
    onehot[int(np.argmax(q))] = 1.0
    out["one_step"] = {"layer_skip_k8": one_step_gap(p, q), "one_hot": one_step_gap(p, onehot), "vocab": V}
    log("one step max |out − p|:", out["one_step"])
    out["gof"] = law_check(lm, 60 if quick else 300, k_draft=8, gamma=2)
    log("end-to-end law:", out["gof"]["summary"])

    info["load_avg_end"] = os.getloadavg()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    text = json.dumps(out, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o))
    with open(args.out, "w") as f:
        f.write(compact_number_lists(text) + "\n")
    log("wrote", args.out)


if __name__ == "__main__":
    main()

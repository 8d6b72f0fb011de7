"""The feature draft (specdec_core.llm.features) on the real model: fit on calibration text only,
then α per draft depth on held-out calibration text and on the target's own continuations of the
three evaluated workloads, full head and shortlists, and the draft step's cost next to a target
step. Writes specdec_core/results/features.json.

Data (nothing evaluated is ever fitted on):

* calibration text = the docstrings of specdec_core (packed into sequences of ≤ 256 tokens,
  split by module: most modules fit, the rest held out) + the target's own temperature-1
  continuations of the CALIBRATION prompts of workloads.py (four fit, two held out);
* evaluation = held-out calibration text, and the target's temperature-1 continuations of the
  three WORKLOADS prompts (seeded), counted on the continuation tokens only.

α at depth k is teacher forced: the chain starts from the target's real state h_t and applies
the map k times with the real next tokens (as if the earlier proposals had been accepted); at
temperature 1 α = Σ min(p, q), at temperature 0 the argmax agreement. The logit scale and the
ridge are chosen on the held-out *calibration* text; the workload numbers are reported only.

    .venv/bin/python benchmarks/feature_study.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


from specdec_core import autoregressive_generate  # noqa: E402
from specdec_core.llm import CachedTarget, load_model  # noqa: E402
from specdec_core.llm.features import (  # noqa: E402
    FeatureDraft,
    Features,
    alpha_by_depth,
    collect_features,
    fit_feature_map,
    shortlist_from_counts,
)
from specdec_core.llm.model import product  # noqa: E402
from specdec_core.llm.workloads import (  # noqa: E402
    CALIBRATION,
    WORKLOADS,
    calibration_prompt,
    docstring_sequences,
    split_by_module,
    workload_prompt,
)
from specdec_core.measured import FeatureStudy, Machine  # noqa: E402
from specdec_core.measured.store import write_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "specdec_core", "results", "features.json")
CAL_FIT = ("cal-copy", "cal-code", "cal-explain", "cal-list")
CAL_HELD = ("cal-letter", "cal-story")


def continuations(model, prompts: dict, n_new, seed):
    """{name: (prompt, continuation)}: plain temperature-1 sampling from a CachedTarget."""
    out = {}
    for i, (name, prompt) in enumerate(prompts.items()):
        tgt = CachedTarget(model, 1.0)
        r = autoregressive_generate(
            tgt, tuple(prompt), max_new_tokens=n_new, rng=np.random.default_rng(seed + i)
        )
        out[name] = (list(prompt), list(r.tokens))
    return out


def median_ms(fn, reps):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return 1e3 * float(np.median(ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run, not stored)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    quick = args.quick
    t_start = time.time()
    seeds = {"calibration": 7, "own_samples": 50, "workloads": 1000, "random_features": 0, "timing": 3}
    with threadpool_limits(args.threads):
        lm = load_model()
        m, codec = lm.model, lm.codec
        res = {"machine": Machine.now(threads=args.threads).to_dict(), "quick": quick}
        # ---- data
        t = time.time()
        docs = docstring_sequences(codec)
        doc_fit, doc_held = split_by_module(docs)
        doc_held = doc_held[:8]  # ≈ 1.5k positions: enough for α, cheap to score
        if quick:
            doc_fit, doc_held = doc_fit[:6], doc_held[:2]
        n_new = 24 if quick else 96
        n_own, own_reps = (24, 1) if quick else (128, 2)
        cal = continuations(
            m, {n: calibration_prompt(codec, n) for n in CALIBRATION}, n_new, seeds["calibration"]
        )
        own_prompts = {f"{n}#{k}": calibration_prompt(codec, n) for n in CAL_FIT for k in range(own_reps)}
        own = continuations(m, own_prompts, n_own, seeds["own_samples"])
        wl = continuations(
            m, {n: workload_prompt(codec, n) for n in WORKLOADS}, 32 if quick else 128, seeds["workloads"]
        )
        t_gen = time.time() - t
        fit_seqs = doc_fit + [cal[n][0] + cal[n][1] for n in CAL_FIT]
        own_seqs = [own[k][0] + own[k][1] for k in own]
        t = time.time()
        F_base = collect_features(m, fit_seqs)
        F_own = collect_features(m, own_seqs)
        F_all = Features(*(np.concatenate([getattr(F_base, k), getattr(F_own, k)]) for k in Features._fields))
        held = {
            "held-out docstrings": (collect_features(m, doc_held), None),
            "held-out calibration continuations": (
                collect_features(m, [cal[n][0] + cal[n][1] for n in CAL_HELD]),
                [len(cal[n][0]) - 1 for n in CAL_HELD],
            ),
        }
        evals = dict(held)
        for n in WORKLOADS:
            evals[f"workload {n}"] = (collect_features(m, [wl[n][0] + wl[n][1]]), [len(wl[n][0]) - 1])
        t_feat = time.time() - t
        res["data"] = {
            "fit_positions": {
                "docstrings+calibration": int(len(F_base.h)),
                "own T=1 samples": int(len(F_own.h)),
            },
            "eval_positions": {k: int(len(f.h)) for k, (f, _) in evals.items()},
            "docstring_sequences_fit": len(doc_fit),
            "docstring_sequences_held": len(doc_held),
            "calibration_fit": list(CAL_FIT),
            "calibration_held": list(CAL_HELD),
            "calibration_new_tokens": n_new,
            "own_samples": {"prompts": list(CAL_FIT), "per_prompt": own_reps, "new_tokens": n_own},
            "workload_new_tokens": {n: len(wl[n][1]) for n in WORKLOADS},
            "workload_texts": {n: codec.decode(wl[n][1]) for n in WORKLOADS},
            "seeds": seeds,
            "generate_s": t_gen,
            "features_s": t_feat,
        }
        print(f"data: fit {len(F_all.h)} ({t_gen:.0f} s gen, {t_feat:.0f} s features)", flush=True)
        # shortlists from the fitting text only (docstrings, calibration prompts and samples)
        sizes = (2048, 4096, 8192)
        sl = {f"top{s}": shortlist_from_counts(fit_seqs + own_seqs, s) for s in sizes}
        short = {"full": None, **sl}

        # ---- variants, chosen by depth-1 α at T = 1 (full head) on the held-out calibration sets
        g = m.w["output_norm"]
        variants = {
            "h,e | docs+cal (baseline)": (F_base, dict(inputs="h,e")),
            "h,e | docs+cal+own": (F_all, dict(inputs="h,e")),
            "h,hprev,e | docs+cal+own": (F_all, dict(inputs="h,hprev,e")),
            "h,e renorm | docs+cal+own": (F_all, dict(inputs="h,e", renorm=True, norm_weight=g)),
            "h,hprev,e +1024 random | docs+cal+own": (
                F_all,
                dict(inputs="h,hprev,e", n_random=1024, seed=seeds["random_features"]),
            ),
        }
        ridges = (1e-3,) if quick else (1e-3, 1e-2)
        t = time.time()
        study, fitted = {}, {}
        best = None
        for vname, (D, kw) in variants.items():
            for r in ridges:
                t_fit = time.time()
                fm = fit_feature_map(D.h, D.e, D.h_next, h_prev=D.h_prev, ridge=r, **kw)
                t_fit = time.time() - t_fit
                a = {
                    k: alpha_by_depth(m, fm, f, depth=1, temperatures=(1.0, 0.0), first_state=fs)["full"]
                    for k, (f, fs) in held.items()
                }
                a1 = {k: v[1.0][0] for k, v in a.items()}
                a0 = {k: v[0.0][0] for k, v in a.items()}
                score = float(np.mean(list(a1.values())))
                key = f"{vname} | ridge {r:g}"
                fitted[key] = fm
                study[key] = {"fit_s": t_fit, "alpha_T1_depth1": a1, "alpha_T0_depth1": a0, "score": score}
                print(f"{key:50s} fit {t_fit:5.1f} s  α(T=1,d=1) {a1}  T=0 {a0}", flush=True)
                if best is None or score > best[0]:
                    best = (score, key)
        res["selection"] = {
            "variants": study,
            "rule": "max mean depth-1 α at T=1 over the held-out sets",
            "seconds": time.time() - t,
        }
        fmap = fitted[best[1]]
        res["chosen"] = {
            "variant": best[1],
            "ridge": fmap.ridge,
            "inputs": fmap.inputs,
            "n_random": fmap.n_random,
            "n": fmap.n,
        }
        print("chosen:", res["chosen"], flush=True)

        # ---- α per depth, T = 1 and 0, every shortlist, on held-out text and on the workloads
        t = time.time()
        depth = 4
        alphas = {"chosen": {}, "baseline": {}}
        base = fitted[f"h,e | docs+cal (baseline) | ridge {ridges[0]:g}"]
        for k, (f, fs) in evals.items():
            alphas["chosen"][k] = _clean(
                alpha_by_depth(m, fmap, f, depth=depth, shortlists=short, first_state=fs)
            )
            alphas["baseline"][k] = _clean(
                alpha_by_depth(m, base, f, depth=depth, shortlists={"full": None}, first_state=fs)
            )
            print(k, alphas["chosen"][k]["full"], flush=True)
        res["alpha"] = alphas
        res["alpha_seconds"] = time.time() - t
        # shortlist coverage: mean mass of p (T = 1) inside each shortlist, the ceiling on α
        cov = {}
        head = m.w["head"]
        for k, (f, fs) in evals.items():
            rows = np.arange(len(f.h)) if fs is None else np.flatnonzero(f.pos + 1 >= np.asarray(fs)[f.seq])
            z = (f.h_next[rows] @ head.T).astype(np.float64)
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            cov[k] = {name: float(p[:, ids].sum(axis=1).mean()) for name, ids in sl.items()}
        res["shortlist_mass_of_p"] = cov

        # ---- cost: one draft step (map + head + softmax + draw) vs one target step
        reps = 5 if quick else 30
        rng = np.random.default_rng(seeds["timing"])
        prompt = workload_prompt(codec, "story")
        tgt = CachedTarget(m, 1.0)
        tgt.prefill(prompt)
        h = tgt.cache.hidden[len(prompt) - 1 : len(prompt)].copy()
        e = m.embed([prompt[-1]])
        cost = {}
        cost["map_ms"] = median_ms(lambda: fmap.apply(h, e, h), reps)
        for k, ids in short.items():
            W = m.w["head"] if ids is None else m.head_rows(ids)
            cost[f"head_{k}_ms"] = median_ms(lambda: product(h, W), reps)
            d = FeatureDraft(tgt, fmap, 1.0, shortlist=ids)
            pre = list(prompt) + [int(prompt[-1])]  # the cache holds L−1 positions: one map per step

            def four():
                d.propose(pre, 4, rng)

            cost[f"draft_gamma4_{k}_ms"] = median_ms(four, reps)
            cost[f"draft_step_{k}_ms"] = cost[f"draft_gamma4_{k}_ms"] / 4
        assert tgt.cache.n == len(prompt)

        def one_target_step():
            tgt.cache.rollback(len(prompt))
            tgt.logits(list(prompt) + [5], ())

        cost["target_step_ms"] = median_ms(one_target_step, reps)
        n5 = list(prompt) + [5, 6, 7, 8]

        def five():
            tgt.cache.rollback(len(prompt) - 1)
            tgt.logits(list(prompt), n5[len(prompt) :])

        cost["target_verify_5_positions_ms"] = median_ms(five, reps)
        cost["reps"] = reps
        res["cost"] = cost
        print("cost:", {k: round(v, 2) for k, v in cost.items()})
    res["total_s"] = time.time() - t_start
    res["machine"] = Machine.from_dict(res["machine"]).finished(res["total_s"] / 60).to_dict()
    rec = FeatureStudy.from_json(json.loads(json.dumps(res)))  # typed: what read_stored reads back
    if not quick:
        write_json(args.out, rec.to_json())
        print("wrote", args.out)
    print(f"total {res['total_s']:.0f} s")
    return res


def _clean(a):
    """JSON-friendly: temperatures as strings."""
    return {
        k: (v if k == "_n" else {f"T={T:g}": [round(x, 4) for x in xs] for T, xs in v.items()})
        for k, v in a.items()
    }


if __name__ == "__main__":
    main()

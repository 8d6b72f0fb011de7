"""Greedy equality on the real model, measured: how often speculative and plain greedy decoding
part, and why (notebook 09 §4).

    .venv/bin/python benchmarks/bench_rounding.py           # ≈ 6 minutes on a quiet 2-core machine
    .venv/bin/python benchmarks/bench_rounding.py --quick   # a smoke run

Writes specdec_core/results/rounding.json:

1. **generations**: for each prompt (the calibration prompts and the three workloads), plain
   greedy decoding (one position per target call) and speculative greedy decoding with prompt
   lookup (γ = 4, verification scores up to 5 positions per call), ``--tokens`` new tokens
   each, fresh target and draft per run; where they first differ, and the top-2 logit gap there
   under both computations.
2. **teacher forcing**: along every plain greedy trajectory, the logits computed one position
   per call and in blocks of 5 (:func:`rounding.logits_two_ways`); how far they differ and how
   many argmaxes flip.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from specdec_core import autoregressive_generate, speculative_generate  # noqa: E402
from specdec_core.llm import CachedTarget, PromptLookupDraft, load_model  # noqa: E402
from specdec_core.llm import rounding as R  # noqa: E402
from specdec_core.llm.workloads import CALIBRATION, WORKLOADS, calibration_prompt, workload_prompt  # noqa: E402
from specdec_core.measured import Machine, RoundingStudy  # noqa: E402
from specdec_core.measured.store import write_json  # noqa: E402

OUT = os.path.join(ROOT, "specdec_core", "results", "rounding.json")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    n = 16 if a.quick else a.tokens
    t0 = time.time()
    out = {
        "machine": Machine.now(threads=1).to_dict(),
        "quick": a.quick,
        "tokens_per_prompt": n,
        "gamma": 4,
        "block": 5,
        "threads": 1,
    }
    with threadpool_limits(1):
        lm = load_model()
        m, V = lm.model, lm.cfg.vocab_size
        prompts = {f"calibration/{k}": calibration_prompt(lm.codec, k) for k in CALIBRATION}
        prompts.update({f"workload/{w}": workload_prompt(lm.codec, w) for w in WORKLOADS})
        if a.quick:
            prompts = dict(list(prompts.items())[:2])
        gens, tf = [], []
        for name, prompt in prompts.items():
            prompt = tuple(int(t) for t in prompt)
            rng = np.random.default_rng(0)
            plain = autoregressive_generate(CachedTarget(m, 0.0), prompt, max_new_tokens=n, rng=rng).tokens
            spec = speculative_generate(
                CachedTarget(m, 0.0),
                PromptLookupDraft(V),
                prompt,
                gamma=4,
                max_new_tokens=n,
                rng=np.random.default_rng(0),
            ).tokens
            i = R.first_divergence(plain, spec)
            row = {"prompt": name, "tokens": n, "identical": list(plain) == list(spec), "first_divergence": i}
            if i is not None:
                seq = list(prompt) + list(plain[: i + 1])
                one, blk = R.logits_two_ways(m, seq, len(seq) - 1, 5)
                row["gap_one_at_a_time"] = float(R.top2_gap(one)[-1])
                row["gap_in_blocks"] = float(R.top2_gap(blk)[-1])
            gens.append(row)
            one, blk = R.logits_two_ways(m, list(prompt) + list(plain), len(prompt), 5)
            c = R.compare_paths(one, blk)
            c["prompt"] = name
            tf.append(c)
            print(name, row, {k: c[k] for k in ("max_abs_diff", "argmax_flips", "smallest_gaps")}, flush=True)
    out["generations"] = gens
    out["teacher_forcing"] = tf
    out["summary"] = {
        "generations": len(gens),
        "identical": sum(g["identical"] for g in gens),
        "greedy_tokens": n * len(gens),
        "positions_compared": sum(c["positions"] for c in tf),
        "argmax_flips": sum(c["argmax_flips"] for c in tf),
        "max_abs_diff": max(c["max_abs_diff"] for c in tf),
        "max_rel_diff": max(c["max_rel_diff"] for c in tf),
        "smallest_gap": min(min(c["smallest_gaps"]) for c in tf),
    }
    out["seconds"] = time.time() - t0
    out["machine"] = Machine.from_dict(out["machine"]).finished(out["seconds"] / 60).to_dict()
    print(out["summary"])
    rec = RoundingStudy.from_json(json.loads(json.dumps(out)))  # typed: what read_stored reads back
    write_json(a.out, rec.to_json())
    print(f"wrote {a.out} in {rec.seconds:.0f} s")


if __name__ == "__main__":
    main()

"""Greedy equality on the real model, measured: how often speculative and plain greedy decoding
part, and why (notebook 09 §4).

    .venv/bin/python benchmarks/bench_rounding.py           # ≈ 6 minutes on a quiet 2-core machine
    .venv/bin/python benchmarks/bench_rounding.py --quick --results-dir /tmp  # a smoke run

Writes specdec_core/results/rounding.json (or ``--results-dir``):

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
import os
import sys

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from specdec_core import autoregressive_generate, speculative_generate  # noqa: E402
from specdec_core.llm import CachedTarget, LoadedModel, PromptLookupDraft, load_model  # noqa: E402
from specdec_core.llm import rounding as R  # noqa: E402
from specdec_core.llm.workloads import CALIBRATION, WORKLOADS, calibration_prompt, workload_prompt  # noqa: E402
from specdec_core.measured import Machine, RoundingStudy, Stopwatch, write_stored  # noqa: E402
from specdec_core.measured.studies import Generation, RoundingSummary, TeacherForcing  # noqa: E402

GAMMA, BLOCK = 4, 5


def prompts(lm: LoadedModel, quick: bool) -> dict:
    """{name: prompt tokens}: the calibration prompts and the workloads (the first two if quick)."""
    out = {f"calibration/{k}": calibration_prompt(lm.codec, k) for k in CALIBRATION}
    out.update({f"workload/{w}": workload_prompt(lm.codec, w) for w in WORKLOADS})
    out = {k: tuple(int(t) for t in p) for k, p in out.items()}
    return dict(list(out.items())[:2]) if quick else out


def generation(lm: LoadedModel, name: str, prompt: tuple, n: int) -> tuple[Generation, list]:
    """Part 1 for one prompt: plain and speculative greedy, where they part and the top-2 gap
    there both ways. Returns (the stored row, the plain tokens)."""
    m = lm.model
    rng = np.random.default_rng(0)
    plain = autoregressive_generate(CachedTarget(m, 0.0), prompt, max_new_tokens=n, rng=rng).tokens
    spec = speculative_generate(
        CachedTarget(m, 0.0),
        PromptLookupDraft(lm.cfg.vocab_size),
        prompt,
        gamma=GAMMA,
        max_new_tokens=n,
        rng=np.random.default_rng(0),
    ).tokens
    i = R.first_divergence(plain, spec)
    row = Generation(name, n, list(plain) == list(spec), i)
    if i is not None:
        seq = list(prompt) + list(plain[: i + 1])
        one, blk = R.logits_two_ways(m, seq, len(seq) - 1, BLOCK)
        row = row.replace(
            gap_one_at_a_time=float(R.top2_gap(one)[-1]), gap_in_blocks=float(R.top2_gap(blk)[-1])
        )
    return row, list(plain)


def teacher_forcing(lm: LoadedModel, name: str, prompt: tuple, plain: list) -> TeacherForcing:
    """Part 2 for one prompt: the logits along its plain greedy tokens, one position per call
    against blocks."""
    one, blk = R.logits_two_ways(lm.model, list(prompt) + plain, len(prompt), BLOCK)
    return R.compare_paths(one, blk, name)


def summary(gens: list[Generation], tf: list[TeacherForcing], n: int) -> RoundingSummary:
    return RoundingSummary(
        generations=len(gens),
        identical=sum(g.identical for g in gens),
        greedy_tokens=n * len(gens),
        positions_compared=sum(c.positions for c in tf),
        argmax_flips=sum(c.argmax_flips for c in tf),
        max_abs_diff=max(c.max_abs_diff for c in tf),
        max_rel_diff=max(c.max_rel_diff for c in tf),
        smallest_gap=min(min(c.smallest_gaps) for c in tf),
    )


def study(
    lm: LoadedModel, n: int, quick: bool, machine: Machine, clock: Stopwatch | None = None
) -> RoundingStudy:
    """Both parts over every prompt with ``n`` new tokens each (one BLAS thread), into the typed
    record (the machine finished at the end; the total counts from ``clock``, default now)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    clock = Stopwatch() if clock is None else clock
    gens, tf = [], []
    with threadpool_limits(1):
        for name, prompt in prompts(lm, quick).items():
            row, plain = generation(lm, name, prompt, n)
            c = teacher_forcing(lm, name, prompt, plain)
            gens.append(row)
            tf.append(c)
            print(name, row, (c.max_abs_diff, c.argmax_flips, c.smallest_gaps), flush=True)
    s, seconds = summary(gens, tf, n), clock.seconds()
    print(s)
    return RoundingStudy(
        machine.finished(seconds / 60), quick, n, GAMMA, BLOCK, 1, tuple(gens), tuple(tf), s, seconds
    )


def main(argv: list[str] | None = None) -> RoundingStudy:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run (two prompts, 16 tokens each)")
    ap.add_argument("--tokens", type=int, default=200, help="new tokens per prompt (default 200)")
    ap.add_argument(
        "--results-dir", default=None, help="where to write rounding.json (default: the stored results)"
    )
    args = ap.parse_args(argv)
    clock, machine = Stopwatch(), Machine.now(threads=1)
    with threadpool_limits(1):
        lm = load_model()
    rec = study(lm, 16 if args.quick else args.tokens, args.quick, machine, clock=clock)
    path = write_stored(rec, args.results_dir)
    print(f"wrote {path} in {rec.seconds:.0f} s")
    return rec


if __name__ == "__main__":
    main()

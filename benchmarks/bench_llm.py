"""Notebook 09's measurement: speculative decoding with SmolLM2-135M-Instruct in numpy on this
CPU, predicted first, then timed. Writes specdec_core/results/llm.json (``--quick``:
benchmarks/results/llm-quick.json), labelled with machine, BLAS threads, load average and date.

    .venv/bin/python benchmarks/bench_llm.py            # full run (about 30 minutes on a quiet 2-core machine)
    .venv/bin/python benchmarks/bench_llm.py --quick    # a smoke run (under 2 minutes)
    .venv/bin/python benchmarks/bench_llm.py --law-only # stage 5 alone, into the stored results

A short command line over the stages in ``llm_stages.py``, each returning a record (all timed
parts with single-threaded BLAS by default, via threadpoolctl: steadier on a shared 2-core
machine):
1. memory: peak resident memory (VmHWM) of a fresh process loading the model as notebook 09
   does (weight layout chosen by timing), first load (cache built) and second load (cache reused);
   then the run's own load, with the weight layout chosen by timing the candidates on this
   machine (:func:`specdec_core.llm.layout.choose_layout`), stored with the results;
2. calibration on prompts that are never evaluated, then micro-benchmarks of the target call
   (T positions), each draft call (γ proposals) and the sampler per round;
3. teacher forcing along target trajectories generated apart from the timed runs, then
   *predictions* of tokens/s for every configuration — made before any timed run;
4. the timed sweep: fresh target and draft for every run, plain and speculative interleaved in
   an order shuffled per block; decode-only (prompt prefill excluded, for both) and end-to-end;
5. a law test whose sample size comes from a power calculation, correct and broken variants.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import replace

from threadpoolctl import threadpool_limits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import llm_stages as S  # noqa: E402

from specdec_core.llm import load_model, report  # noqa: E402
from specdec_core.measured import Machine, codec, read_capstone, vm_hwm_mib  # noqa: E402
from specdec_core.measured.capstone import Load, MemoryProbe  # noqa: E402
from specdec_core.measured.timer import Stopwatch  # noqa: E402

PROBE = r"""
import sys, numpy as np
sys.path.insert(0, {root!r})
from specdec_core.llm import load_model, CachedTarget
from specdec_core import autoregressive_generate
from specdec_core.measured.timer import Stopwatch
clock = Stopwatch()
from threadpoolctl import threadpool_limits
with threadpool_limits(1):
    lm = load_model(cache={cache!r}, layout="auto")  # as notebook 09 loads it
s = clock.seconds()
g = CachedTarget(lm.model, 0.0)
out = autoregressive_generate(g, tuple(lm.codec.encode("The capital of France is")), max_new_tokens=4,
                              rng=np.random.default_rng(0))
from specdec_core.measured import vm_hwm_mib
print("PROBE", lm.info.from_cache, round(s, 2), vm_hwm_mib(), repr(lm.codec.decode(out.tokens)))
"""


def memory_probe() -> dict[str, MemoryProbe]:
    """Peak resident memory of a fresh Python process that loads the model and decodes 4 tokens:
    first load (the cache is built in a new temporary folder) and second load (cache reused)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("first_load", "second_load"):
            cmd = [sys.executable, "-c", PROBE.format(root=ROOT, cache=tmp)]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            line = [x for x in r.stdout.splitlines() if x.startswith("PROBE")]
            if not line:
                S.log(f"memory probe {name} failed:", r.stderr[-500:])
                continue
            _, from_cache, secs, hwm, text = line[0].split(" ", 4)
            out[name] = MemoryProbe(name, from_cache == "True", float(secs), float(hwm), text)
    return out


def _partial(path: str, **records) -> None:
    """What the stages so far returned, for the log of an interrupted run: {stage: record} (the
    predictions as the tuple of their records, each carrying its configuration)."""
    codec.write(
        {k: tuple(v.values()) if isinstance(v, dict) else v for k, v in records.items()}, path + ".partial"
    )


def run(s: S.Settings, out_path: str, lm=None) -> None:
    """Every stage in order; the record written after the last. ``lm``: a loaded model (tests
    pass the tiny one); by default the capstone's."""
    clock = Stopwatch()
    machine = Machine.now(threads=s.threads)
    S.log("machine:", machine.how())
    memory = {} if s.quick else memory_probe()
    with threadpool_limits(s.threads):
        loading = Stopwatch()
        lm = load_model(layout="auto") if lm is None else lm  # the weight layout timed here, at load
        load = Load(loading.seconds(), bool(lm.info.from_cache))
        if lm.layout is not None:
            S.log("weight layout (ms on a sample of the model's matrices):\n" + "\n".join(lm.layout.table()))
        S.trajectory(lm, S.workload_prompt(lm.codec, "copy"), 4, 0.0, 0)  # page in the mapped weights
        cal = S.calibrate(lm, s)
        bench = S.micro_benchmarks(lm, cal, s)
        _partial(out_path, calibration=bench.calibration, micro=bench.micro)
        pred = S.predict(lm, bench.micro, bench.drafts, s)
        _partial(out_path, calibration=bench.calibration, micro=bench.micro, predictions=pred.predictions)
        quant = S.quantized_study(lm, bench.drafts.qmodel, pred, s)
        swept = S.timed_sweep(lm, bench.drafts, s, pred.predictions)
        law = S.law_test(lm, cal.maps, s)
    machine = machine.finished(clock.seconds() / 60)
    cap = S.assemble(
        machine, s, bench, pred, swept, law, memory=memory, load=load, vm_hwm=vm_hwm_mib(), layout=lm.layout,
        quantized=quant,
    )  # fmt: skip
    codec.write(cap, out_path)
    for line in report.draft_goal_lines(cap):
        S.log(line)
    if os.path.exists(out_path + ".partial"):
        os.remove(out_path + ".partial")  # the run finished: the record holds it all
    S.log(f"wrote {out_path} in {machine.wall_minutes:.1f} min")


def law_only(s: S.Settings, path: str) -> None:
    """Stage 5 alone, written into the stored results with its own date (the rest untouched, the
    earlier outcome kept in ``law_history``): calibration sequences and exit maps exactly as in a
    full run (same seeds, same prompts), then :func:`llm_stages.law_test`."""
    cap = read_capstone(path)
    with threadpool_limits(s.threads):
        lm = load_model(layout=cap.layout)  # the layout the stored run chose (None: as loaded)
        seqs = S.calibration_sequences(lm, s.calibration_prompts, s.calibration_tokens)
        maps, *_ = S.exit_study(lm, seqs, s)
        law = S.law_test(lm, maps, s)
    law = law.replace(rerun_utc=Machine.now().date_utc)
    # the earlier outcome kept in the history: a miss is part of the record
    hist = cap.law_history + ((cap.law.replace(top=None),) if cap.law is not None else ())
    codec.write(cap.replace(law=law, law_history=hist), path)
    S.log("law:", law.replace(top=None))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run (QUICK settings, llm-quick.json)")
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads for every timed part (default 1)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions of every configuration (full: 5)")
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--law-only",
        action="store_true",
        help="re-run only the law test (stage 5) on the stored results file, e.g. after a change to the "
        "chi-square test; the exit maps are refitted on the same seeded calibration sequences",
    )
    args = ap.parse_args(argv)
    s = replace(S.QUICK if args.quick else S.FULL, threads=args.threads)
    if args.reps is not None:
        s = replace(s, reps=args.reps)
    default = (
        ("benchmarks", "results", "llm-quick.json") if args.quick else ("specdec_core", "results", "llm.json")
    )
    out_path = args.out or os.path.join(ROOT, *default)
    if args.law_only:
        return law_only(replace(S.FULL, threads=args.threads), out_path)
    run(s, out_path)


if __name__ == "__main__":
    main()

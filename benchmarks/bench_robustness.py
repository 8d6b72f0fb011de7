"""Robustness goals: γ = 10⁹ answered at once, and verify_batch on a large batch of tiny
vocabularies without wide scratch (issue 9 §4); every stored results file, mutated at every place
with every mutation of ``tests/test_results_fuzz.py``, read right or refused right (issue 36).

    .venv/bin/python benchmarks/bench_robustness.py            # speed goals
    .venv/bin/python benchmarks/bench_robustness.py --results  # the full mutation sweep

Prints *measured* times on this machine (the one timer, :func:`specdec_core.measured.time_calls`:
median and slowest of repeats) with the load average, and the peak traced allocation
(tracemalloc) of the 200,000 × 8 verify_batch call.
Goals: each γ = 10⁹ call well under 1 s; the 200,000 × 8 case well under 1 s with scratch
much smaller than its inputs.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np

from specdec_core import verify_batch
from specdec_core.counts import expected_gain, expected_output_count
from specdec_core.measured import Machine, time_calls
from specdec_core.timing import improvement_factor, optimal_gamma, speedup_map, work_account


def results_sweep() -> None:
    """Every place of every stored results file with every mutation, checked as the fuzz test
    checks one: prints how many were tried, refused and read (faithfully)."""
    path = Path(__file__).resolve().parents[1] / "tests" / "test_results_fuzz.py"
    spec = importlib.util.spec_from_file_location("results_fuzz", path)
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    from specdec_core.measured.store import RESULTS_DIR

    for name in fuzz.FILES:
        doc = fuzz.json.loads((RESULTS_DIR / name).read_text())
        tried, wrong = 0, []
        with tempfile.TemporaryDirectory() as tmp:
            for place, value in fuzz.places(doc):
                for change in fuzz.mutations(place, value):
                    try:
                        fuzz.check(name, doc, place, change, Path(tmp))
                    except AssertionError as e:  # read wrong, or refused without file and field
                        wrong.append(str(e).splitlines()[0])
                    tried += 1
        print(f"  {name:15s} {tried:6d} mutations, {len(wrong)} read wrong or refused unnamed")
        for w in wrong[:5]:
            print(f"      {w}")


def tiny_vocabularies(rng: np.random.Generator, B: int, gamma: int, V: int):
    """(P, Q, X) of a large batch of small float64 vocabularies: target rows (B, γ + 1, V),
    draft rows (B, γ, V) kept away from 0, drafted tokens uniform (the inputs the scratch goal
    is about; tests/test_robustness.py checks the same batch's scratch)."""
    for name, v in (("B", B), ("gamma", gamma), ("V", V)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    P = rng.random((B, gamma + 1, V))
    P /= P.sum(-1, keepdims=True)
    Q = rng.random((B, gamma, V)) + 0.1
    Q /= Q.sum(-1, keepdims=True)
    return P, Q, rng.integers(0, V, size=(B, gamma))


def main():
    if "--results" in sys.argv[1:]:
        print("[results files] every place, every mutation (tests/test_results_fuzz.py's check)")
        return results_sweep()
    print(f"machine: {Machine.now().how('benchmarks/bench_robustness.py')}")
    g = 10**9
    alphas = np.linspace(0, 1, 101)
    calls = {
        "expected_output_count(0.6, 1e9)": lambda: expected_output_count(0.6, g),
        "expected_output_count(101 alphas, 1e9)": lambda: expected_output_count(alphas, g),
        "expected_gain(0.6, 4, 1e9)": lambda: expected_gain(0.6, 4, g),
        "improvement_factor(0.6, 1e9, 0.05)": lambda: improvement_factor(0.6, g, 0.05),
        "work_account(0.6, 1e9)": lambda: work_account(0.6, g),
        "optimal_gamma(0.999999, 1e-9, max_gamma=1e9)": lambda: optimal_gamma(0.999999, 1e-9, g),
        "speedup_map(101 alphas, [0, 1e9])": lambda: speedup_map(
            alphas, [0, g], draft_per_token_ms=0.5, verify_base_ms=6, baseline_ms=6
        ),
    }
    print("\n[measured] gamma = 10**9 (median / max of 7, ms)")
    for name, s in time_calls(calls, 7).items():
        print(f"  {name:48s} {s.median:9.3f} / {s.max:9.3f}")

    rng = np.random.default_rng(0)
    B, gamma, V = 200_000, 4, 8
    P, Q, X = tiny_vocabularies(rng, B, gamma, V)
    s = time_calls({"verify_batch": lambda: verify_batch(P, Q, X, rng)}, 5)["verify_batch"]
    med, worst = s.median, s.max
    tracemalloc.start()
    verify_batch(P, Q, X, rng)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        f"\n[measured] verify_batch B={B:,}, gamma={gamma}, V={V} (float64 inputs "
        f"{(P.nbytes + Q.nbytes) / 1e6:.0f} MB): median {med:.0f} ms, max {worst:.0f} ms of 5; "
        f"peak traced scratch {peak / 1e6:.0f} MB"
    )


if __name__ == "__main__":
    main()

"""The capstone's stages (benchmarks/llm_stages.py, driven by bench_llm.py) on the tiny random
GGUF fixture: each stage returns its record, the records assemble into the Capstone that
write_capstone/read_capstone round-trip, and the prediction stage cannot see the timed runs."""

from __future__ import annotations

import ast
import inspect
import sys
import typing
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import llm_stages as S  # noqa: E402

from specdec_core.measured import Capstone, Config, Machine, Run, read_capstone, write_capstone  # noqa: E402
from specdec_core.measured.capstone import Calibration, LawTest, Micro, Prediction  # noqa: E402

TINY = replace(
    S.QUICK,
    calibration_tokens=6,
    exit_layers=(1,),
    docstrings=2,
    micro_reps=1,
    overhead_reps=1,
    max_new={"copy": 5, "code": 5, "story": 5},
    law_max_n=30,
)


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    from specdec_core.llm import load_model
    from specdec_core.llm.testing import CFG, write_tiny_gguf

    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    old = CFG["context_length"]
    CFG["context_length"] = 2048  # the calibration prompts are longer than the fixture's 256
    try:
        write_tiny_gguf(path)
    finally:
        CFG["context_length"] = old
    return load_model(str(path), cache=False)


@pytest.fixture(scope="module")
def stages(lm):
    cal = S.calibrate(lm, TINY)
    bench = S.micro_benchmarks(lm, cal, TINY)
    pred = S.predict(lm, bench.micro, bench.drafts, TINY)
    swept = S.timed_sweep(lm, bench.drafts, TINY, pred.predictions)
    law = S.law_test(lm, cal.maps, TINY)
    return cal, bench, pred, swept, law


def test_each_stage_returns_its_record(stages):
    cal, bench, pred, swept, law = stages
    assert isinstance(cal, S.Calibrated) and set(cal.maps) == {1}
    assert isinstance(bench.calibration, Calibration) and isinstance(bench.micro, Micro)
    assert bench.calibration.exit_k == 1 and bench.calibration.exit[1].step_ms > 0
    assert set(bench.micro.verify) == {0.0, 1.0} and set(bench.micro.draft) == set(S.DRAFT_NAMES)
    assert set(bench.break_even_alpha) == {(t, n, g) for t in (0.0, 1.0) for n, g, _ in TINY.configs()}
    n_configs = 3 * 2 * (1 + len(TINY.configs()))  # workloads × temperatures × (plain + speculative)
    assert len(pred.predictions) == n_configs
    assert all(isinstance(k, Config) and isinstance(v, Prediction) for k, v in pred.predictions.items())
    assert set(pred.chosen) == {(w, t) for w in ("copy", "code", "story") for t in (0.0, 1.0)}
    assert set(swept.runs) == set(pred.predictions)
    assert all(isinstance(r, Run) and r.predicted_tokens_per_s is not None for r in swept.runs.values())
    assert isinstance(law, LawTest) and law.n == 30 and law.draft == "trained exit k=1"


def test_the_stages_round_trip_through_the_one_writer_and_reader(stages, tmp_path):
    cal, bench, pred, swept, law = stages
    cap = S.assemble(Machine.now(threads=1).finished(0.1), TINY, bench, pred, swept, law, vm_hwm=1.0)
    assert isinstance(cap, Capstone)
    write_capstone(cap, tmp_path / "a.json")
    back = read_capstone(tmp_path / "a.json")
    write_capstone(back, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    assert back.runs.keys() == cap.runs.keys() and back.micro.verify[1.0] == cap.micro.verify[1.0]
    r = back.run("copy", 0.0, "lookup", 3)
    assert isinstance(r.decode_tokens_per_s.median, float) and r.greedy_equal is not None
    assert back.calibration.exit[1] == cap.calibration.exit[1]
    assert back.law.correct == law.correct


def test_prediction_stage_cannot_see_the_timed_runs(stages, lm):
    _, bench, pred, swept, _ = stages
    sig = inspect.signature(S.predict)
    assert list(sig.parameters) == ["lm", "micro", "drafts", "s"]
    hints = typing.get_type_hints(S.predict)
    assert hints["micro"] is Micro and hints["drafts"] is S.DraftKit
    for bad in (swept, swept.runs, list(swept.runs.values())):
        with pytest.raises(ValueError, match="micro"):
            S.predict(lm, bad, bench.drafts, TINY)
    with pytest.raises(ValueError, match="drafts"):
        S.predict(lm, bench.micro, swept, TINY)
    # the predictions were made, and the configurations chosen, before the sweep existed
    assert all(c.predicted_speedup > 0 for c in pred.chosen.values())


def test_settings_are_checked_and_quick_differs_only_by_settings():
    assert S.QUICK.quick and not S.FULL.quick
    assert [c[0] for c in S.FULL.configs()].count("lookup") == 4
    with pytest.raises(ValueError, match="calibration_prompts"):
        replace(S.QUICK, calibration_prompts=("cal-copy", "cal-code", "cal-story"))
    with pytest.raises(ValueError, match="gammas"):
        replace(S.QUICK, gammas={"lookup": (2,)})
    with pytest.raises(ValueError, match="s must be a Settings"):
        S.calibrate(None, {"quick": True})


def test_no_capstone_function_is_over_60_lines():
    for name in ("bench_llm.py", "llm_stages.py"):
        tree = ast.parse((ROOT / "benchmarks" / name).read_text())
        long = [
            f"{name}:{f.name} ({f.end_lineno - f.lineno + 1} lines)"
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.end_lineno - f.lineno + 1 > 60
        ]
        assert not long, long

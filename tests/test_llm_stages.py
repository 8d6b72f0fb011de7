"""The capstone's stages (benchmarks/llm_stages.py, driven by bench_llm.py) on the tiny random
GGUF fixture: each stage returns its record, the records assemble into the Capstone that
codec.write/read_capstone round-trip, and the prediction stage cannot see the timed runs."""

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

from specdec_core.measured import Capstone, Config, Machine, Run, codec, read_capstone  # noqa: E402
from specdec_core.measured.capstone import ALONE, Calibration, LawTest, Micro, Prediction  # noqa: E402

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
    assert {(b.temperature, b.draft, b.gamma) for b in bench.break_even} == {
        (t, n, g) for t in (0.0, 1.0) for n, g, _ in TINY.configs()
    }
    n_configs = 3 * 2 * (1 + len(TINY.configs()))  # workloads × temperatures × (plain + speculative)
    assert len(pred.predictions) == n_configs
    assert all(isinstance(k, Config) and isinstance(v, Prediction) for k, v in pred.predictions.items())
    assert set(pred.chosen) == {(w, t) for w in ("copy", "code", "story") for t in (0.0, 1.0)}
    alone = {c for c in swept.runs if c.draft in ALONE}  # the int8 copy decoding by itself (issue 35)
    assert set(swept.runs) - alone == set(pred.predictions)
    assert alone == {Config(w, t, "int8-alone", 0) for w in ("copy", "code", "story") for t in (0.0, 1.0)}
    assert all(
        isinstance(r, Run) and r.predicted_tokens_per_s is not None
        for c, r in swept.runs.items()
        if c not in alone
    )
    assert isinstance(law, LawTest) and law.n == 30 and law.draft == "trained exit k=1"
    # the repeats' median range: for speculative configurations at T = 1 (several trajectories)
    for c, v in pred.predictions.items():
        ranged = c.temperature == 1.0 and c.draft != "plain"
        assert (v.low is not None) == ranged and (v.high is not None) == ranged, c
        if ranged:
            assert 0 < v.low <= v.high


def test_the_stages_round_trip_through_the_one_writer_and_reader(stages, tmp_path):
    cal, bench, pred, swept, law = stages
    cap = S.assemble(Machine.now(threads=1).finished(0.1), TINY, bench, pred, swept, law, vm_hwm=1.0)
    assert isinstance(cap, Capstone)
    codec.write(cap, tmp_path / "a.json")
    back = read_capstone(tmp_path / "a.json")
    codec.write(back, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    assert back == cap  # every record, float and key exactly as built
    assert [r.config for r in back.runs] == [r.config for r in cap.runs]
    assert back.run("copy", 1.0, "lookup", 3).speedup_paired.low is None  # one repeat: no interval
    r = back.run("copy", 0.0, "lookup", 3)
    assert isinstance(r.decode_tokens_per_s.median, float) and r.greedy_equal is not None
    assert back.calibration.exit[1] == cap.calibration.exit[1]
    assert back.law.correct == law.correct


def test_the_command_runs_every_stage_and_writes_the_record(stages, lm, tmp_path):
    """bench_llm.run end to end on the tiny model (the path `bench_llm.py --quick` takes): the
    record is written and read back, the partial record an interrupted run leaves is readable
    JSON (predictions keyed by configuration included) and goes once the run has finished."""
    import json

    import bench_llm

    _, bench, pred, _, _ = stages
    bench_llm._partial(str(tmp_path / "x"), micro=bench.micro, predictions=pred.predictions)
    partial = json.loads((tmp_path / "x.partial").read_text())
    assert {"workload", "temperature", "draft", "gamma"} == set(partial["predictions"][0]["config"])
    assert len(partial["predictions"]) == len(pred.predictions)
    out = tmp_path / "llm.json"
    bench_llm.run(replace(TINY, quick=True), str(out), lm=lm)
    back = read_capstone(out)
    assert back.quick and len(back.predictions.values) == len(back.runs) == len(pred.predictions)
    assert not (tmp_path / "llm.json.partial").exists()
    qs = back.quantized  # issue 35: the int8 copy's study, and its runs alone kept apart
    assert {g.workload for g in qs.gaps} == {p.workload for p in qs.partings} == {"copy", "code", "story"}
    assert (
        0 < qs.row_error_median <= qs.row_error_p99 < 0.05 and 3 < qs.float32_bytes / qs.int8_bytes <= 4
    )  # + a scale per row
    assert all(0 <= g.tv_mean <= g.tv_max <= 1 for g in qs.gaps) and qs.law.n > 0
    assert {r.config for r in back.alone} == {
        Config(w, t, "int8-alone", 0) for w in ("copy", "code", "story") for t in (0.0, 1.0)
    }
    from specdec_core.llm import report  # the notebook's lines from this record, none raising

    ladder = report.ladder_lines(back)
    assert len(ladder) == len(S.DRAFT_NAMES) and any("int8 copy" in x for x in ladder)
    assert len(report.quantized_lines(back)) == 4 and len(report.parting_lines(back)) == 3
    assert len(report.copy_law_lines(back)) == 3
    lossy = report.lossy_lines(back, 1.0) + report.lossy_lines(back, 0.0)
    assert len(lossy) == 6 and all("int8 copy alone" in x and "samples p exactly" in x for x in lossy)


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


def test_no_benchmark_or_measurement_function_is_over_60_lines():
    files = sorted((ROOT / "benchmarks").glob("*.py")) + sorted(
        (ROOT / "specdec_core" / "measured").glob("*.py")
    )
    assert len(files) > 10
    long = []
    for path in files:
        for f in ast.walk(ast.parse(path.read_text())):
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.end_lineno - f.lineno + 1 > 60:
                long.append(f"{path.name}:{f.name} ({f.end_lineno - f.lineno + 1} lines)")
    assert not long, long


# ---------------------------------------------------------------- the feature study's stages


def test_feature_study_stages_give_the_stored_record(lm, tmp_path):
    """feature_study.study on the tiny model: the typed FeatureStudy, written and read back
    unchanged, the choice made among the compared variants, α at every depth and head."""
    import feature_study as FS

    from specdec_core.measured import FeatureStudy, read_stored, write_stored

    tiny = replace(
        FS.QUICK,
        docstrings_fit=2,
        docstrings_held=1,
        calibration_tokens=6,
        own_tokens=6,
        workload_tokens=6,
        reps=1,
    )
    rec = FS.study(lm, tiny, Machine.now(threads=1))
    assert isinstance(rec, FeatureStudy) and rec.quick and rec.cost.reps == 1
    assert rec.chosen.variant in rec.selection.variants and len(rec.selection.variants) == 5
    sets = {"held-out docstrings", "held-out calibration continuations"} | {
        f"workload {w}" for w in ("copy", "code", "story")
    }
    assert set(rec.alpha["chosen"]) == sets and set(rec.alpha["baseline"]) == sets
    assert set(rec.alpha["chosen"]["workload copy"]) == {"full", "top2048", "top4096", "top8192"}
    assert all(len(a) == FS.DEPTH for a in rec.alpha["chosen"]["workload copy"]["full"].values())
    assert set(rec.shortlist_mass["workload code"]) == {"top2048", "top4096", "top8192"}
    assert rec.data.docstring_sequences_fit == 2 and rec.data.workload_new_tokens["copy"] == 6
    assert read_stored(write_stored(rec, tmp_path).name, tmp_path) == rec
    with pytest.raises(ValueError, match="s must be a Settings"):
        FS.study(lm, {"quick": True}, Machine.now())


# ---------------------------------------------------------------- the pass-cost and rounding benchmarks


def test_passcost_stages_give_the_stored_record(lm, tmp_path):
    """bench_passcost.measure on the tiny model: predicted before timed, both thread counts,
    the goals from the record, written and read back unchanged."""
    import bench_passcost as BP

    from specdec_core.measured import PassCost, read_stored, write_stored

    tiny = replace(BP.QUICK, Ts=(1, 2, 8), forward_Ts=(1, 8), reps=1, rate_reps=1)
    rec = BP.measure(lm.model, tiny, Machine.now())
    assert isinstance(rec, PassCost) and set(rec.threads) == {1, 2} and rec.quick
    for r in rec.threads.values():
        assert set(r.predicted) == {1, 2, 8} and set(r.products) == {"product", "x@w"}
        assert set(r.forward.points) == {1, 8} and len(r.predicted_at_utc) == len(r.measured_at_utc) == 8
    g = rec.goals
    assert (
        g.products_8_over_1
        == rec.at(1).products["product"].median()[8] / rec.at(1).products["product"].median()[1]
    )
    assert g.products_4_over_1 is None and g.prefill128_new_over_old is None and g.lines
    assert read_stored(write_stored(rec, tmp_path).name, tmp_path) == rec
    with pytest.raises(ValueError, match="s must be a Settings"):
        BP.measure(lm.model, None, Machine.now())


def test_rounding_stages_give_the_stored_record(lm, tmp_path):
    """bench_rounding.study on the tiny model: one generation and one teacher-forcing row per
    prompt, the summary from them; a divergence's gaps are kept through the writer and reader."""
    import bench_rounding as BR

    from specdec_core.measured import RoundingStudy, read_stored, write_stored
    from specdec_core.measured.studies import Generation

    rec = BR.study(lm, 4, True, Machine.now(threads=1))
    assert isinstance(rec, RoundingStudy) and rec.quick and (rec.gamma, rec.block) == (BR.GAMMA, BR.BLOCK)
    assert [g.prompt for g in rec.generations] == [t.prompt for t in rec.teacher_forcing]
    assert len(rec.generations) == rec.summary.generations == 2 and rec.summary.greedy_tokens == 8
    assert rec.summary.positions_compared == sum(t.positions for t in rec.teacher_forcing) > 0
    assert read_stored(write_stored(rec, tmp_path).name, tmp_path) == rec
    parted = Generation("p", 4, False, 2, gap_one_at_a_time=0.5, gap_in_blocks=0.25)
    rec2 = rec.replace(generations=(parted, *rec.generations[1:]))
    assert read_stored(write_stored(rec2, tmp_path).name, tmp_path).generations[0] == parted
    with pytest.raises(ValueError, match="n must be"):
        BR.study(lm, 0, True, Machine.now())

"""The measurement layer (issue 24): one machine record, typed results, one reader per file."""

import json

import pytest

from specdec_core.measured import Machine, codec, vm_hwm_mib


def test_machine_writer_round_trips_and_formats():
    m = Machine.now(threads=1)
    assert m.cores >= 1 and m.threads == 1 and m.load_avg_end is None and m.blas
    done = m.finished(2.5)
    assert done.load_avg_end is not None and done.wall_minutes == 2.5
    assert codec.decode(Machine, codec.encode(done), "machine") == done
    line = done.how("benchmarks/x.py")
    assert line.startswith(m.cpu) and "1 BLAS thread," in line and "→" in line and line.endswith("x.py")
    assert "during the timed runs" in done.how(during=(1.0, 1.3))
    assert "BLAS " in Machine.now().how() and "×" in Machine.now().how()


def test_machine_refuses_bad_input():
    with pytest.raises(ValueError, match="threads"):
        Machine.now(threads=0)
    with pytest.raises(ValueError, match="m: the top level: Object missing required field `cpu`"):
        codec.decode(Machine, json.dumps({"cores": 2}), "m")
    good = {"cpu": "x", "cores": 2, "python": "3", "platform": "p", "date_utc": "2026-01-01 00:00 UTC"}
    with pytest.raises(ValueError, match=r"m: load_avg_start: Expected `array` of length 3"):
        codec.decode(Machine, json.dumps(good | {"load_avg_start": [1]}), "m")
    with pytest.raises(ValueError, match="pid"):
        vm_hwm_mib(-1)


def test_vm_hwm_reads_this_process():
    assert vm_hwm_mib() > 1


# ---------------------------------------------------------------- where the results live, readers


def test_results_are_found_from_the_package(tmp_path):
    from specdec_core.measured import RESULTS_DIR, read_stored, results_path

    assert results_path("llm.json") == RESULTS_DIR / "llm.json" and RESULTS_DIR.name == "results"
    with pytest.raises(ValueError, match="name"):
        results_path("../x.json")
    with pytest.raises(ValueError, match="no stored results"):
        read_stored("hardware.json", tmp_path)
    with pytest.raises(ValueError, match="name must be one of"):
        read_stored("other.json")
    for name in ("hardware.json", "passcost.json", "features.json", "rounding.json"):
        st = read_stored(name)
        assert st.machine.cores >= 1 and st.script.startswith("benchmarks/") and st.how().endswith(st.script)


def test_study_records_are_typed_and_round_trip(tmp_path):
    """Each smaller results file reads into its record (ints and floats, int-keyed sizes) and
    writes back to the same bytes; a mistyped field is refused, naming the file and the field."""
    from specdec_core.measured import read_stored, results_path, write_stored

    hw, pc = read_stored("hardware.json"), read_stored("passcost.json")
    assert set(hw.bandwidth) == {1, 2} and isinstance(hw.bandwidth[2].copy_GBps, float)
    assert all(isinstance(m, int) for m in hw.matmul[2]["576x49152"].gflops)
    assert set(pc.threads) == {1, 2} and pc.at(1).predicted[8].roofline_ms > 0
    assert pc.at(1).products["product"].median()[1] > 0 and isinstance(pc.goals.products_8_over_1, float)
    ft, rd = read_stored("features.json"), read_stored("rounding.json")
    assert len(ft.alpha["chosen"]["workload copy"]["top4096"][1.0]) == 4 and ft.cost.reps >= 1
    assert ft.data.own_samples.per_prompt >= 1 and ft.selection.variants
    assert rd.summary.generations == len(rd.generations) and rd.teacher_forcing[0].gaps_below_1e_3 >= 0
    for rec in (hw, pc, ft, rd):
        path = write_stored(rec, tmp_path)
        assert read_stored(path.name, tmp_path) == rec
        assert path.read_bytes() == results_path(path.name).read_bytes()
    bad = json.loads(results_path("rounding.json").read_text())
    bad["summary"]["argmax_flips"] = "none"
    (tmp_path / "rounding.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"rounding.json: summary.argmax_flips: Expected `int`"):
        read_stored("rounding.json", tmp_path)
    with pytest.raises(ValueError, match="record"):
        write_stored({"machine": {}}, tmp_path)
    write_stored(rd, tmp_path)
    with pytest.raises(ValueError, match="quick: Expected `bool`"):  # not written: the file is unchanged
        write_stored(rd.replace(quick="x"), tmp_path)
    assert read_stored("rounding.json", tmp_path) == rd


def test_capstone_is_typed_and_round_trips(tmp_path):
    from specdec_core.measured import Config, read_capstone

    cap = read_capstone()
    assert all(isinstance(r.config.temperature, float) and isinstance(r.config.gamma, int) for r in cap.runs)
    assert set(cap.micro.verify) == {0.0, 1.0} and all(isinstance(t, float) for t in cap.micro.verify)
    assert cap.run("copy", 0, "lookup", 7).config == Config("copy", 0.0, "lookup", 7)
    with pytest.raises(ValueError, match="no run"):
        cap.run("copy", 0.5, "lookup", 7)
    codec.write(cap, tmp_path / "llm.json")
    assert read_capstone(tmp_path / "llm.json") == cap
    with pytest.raises(ValueError, match="gamma is 0 exactly"):
        Config("copy", 0.0, "plain", 3)
    # the lookups: every key a record carries, absent keys named or None
    assert cap.break_even_alpha(1.0, "feature", 1) == next(
        b.alpha for b in cap.break_even if (b.temperature, b.draft, b.gamma) == (1.0, "feature", 1)
    )
    with pytest.raises(ValueError, match="no break-even"):
        cap.break_even_alpha(1.0, "feature", 9)
    assert cap.prediction(Config("copy", 1.0, "lookup", 7)).config == Config("copy", 1.0, "lookup", 7)
    assert cap.prediction(Config("copy", 0.5, "lookup", 7)) is None
    assert cap.teacher_alpha("copy", 0.0, "x") is None
    chosen = {(c.workload, c.temperature) for c in cap.predictions.chosen}
    assert chosen == {(w, t) for w in ("copy", "code", "story") for t in (0.0, 1.0)}
    assert cap.find(Config("copy", 1.0, "int8-alone", 0)) in cap.alone


def test_old_format_is_refused_naming_file_and_field(tmp_path):
    from specdec_core.measured import read_capstone

    old = json.loads(results_path_of("llm.json").read_text()) | {"schema": 2}
    (tmp_path / "llm.json").write_text(json.dumps(old))
    with pytest.raises(ValueError, match=r"llm\.json: schema: Invalid enum value 2"):
        read_capstone(tmp_path / "llm.json")


def results_path_of(name):
    from specdec_core.measured import results_path

    return results_path(name)


def test_measured_pass_costs_never_raises(tmp_path):
    from specdec_core.measured import measured_pass_costs, read_capstone

    cost, how = measured_pass_costs(tmp_path / "missing.json")
    assert cost is None and how.startswith("no measured cost curve")
    for i, bad in enumerate(("{not json", json.dumps([1, 2]), json.dumps({"schema": 2}))):
        f = tmp_path / f"bad{i}.json"
        f.write_text(bad)
        cost, how = measured_pass_costs(f)
        assert cost is None and how.startswith("no measured cost curve"), bad
    cost, how = measured_pass_costs()
    curve = read_capstone().micro.verify[0.0]
    assert cost == curve.spread() and cost[1][0] <= cost[1][1] <= cost[1][2]
    assert "1 BLAS thread," in how and f"{curve.reps} repeats per size" in how


def test_cost_curve_refuses_bad_points():
    from specdec_core.measured import CostCurve, Spread

    with pytest.raises(ValueError, match="no points"):
        CostCurve({})
    with pytest.raises(ValueError, match="positive times"):
        CostCurve({1: Spread(-1.0, -1.0, -1.0)})
    with pytest.raises(ValueError, match=r"got \[-2\]"):
        CostCurve({-2: Spread(1.0, 1.0, 1.0)})
    c = CostCurve({1: Spread(2.0, 1.0, 3.0, 5), 2: Spread(4.0, 3.0, 5.0, 5)}, "x", reps=5)
    assert (
        codec.decode(CostCurve, codec.encode(c), "c") == c
        and c.median() == {1: 2.0, 2: 4.0}
        and c.fastest()[1] == 1.0
    )


def test_the_migration_reproduces_the_stored_capstone(tmp_path):
    """The one-off re-store (issue 36): the schema-2 llm.json of the commit before it, migrated by
    ``tools/convert_results.py``, is the stored record, byte for byte."""
    import subprocess
    import sys
    from pathlib import Path

    from specdec_core.measured import results_path

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "tools"))
    import convert_results

    old = subprocess.run(
        ["git", "show", "2b8beca:specdec_core/results/llm.json"], cwd=root, capture_output=True, text=True
    )
    if old.returncode:
        pytest.skip("no git history here")
    (tmp_path / "llm.json").write_text(old.stdout)
    assert "re-stored at schema 3" in convert_results.convert(tmp_path / "llm.json")
    assert (tmp_path / "llm.json").read_bytes() == results_path("llm.json").read_bytes()
    assert "already" in convert_results.convert(tmp_path / "llm.json")


# ---------------------------------------------------------------- numbers that are not numbers (issue 32)

import copy  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FILES = ("hardware.json", "passcost.json", "features.json", "rounding.json", "llm.json")
#: Free-form descriptions a record keeps as written (typed ``dict``), not read as numbers.
FREE_FORM: dict[str, tuple[str, ...]] = {}


def _numeric_leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _numeric_leaves(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _numeric_leaves(v, (*path, i))
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield path


def _dotted(path) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else (f".{k}" if i else k) for i, k in enumerate(path))


LEAVES = {}


def _stored(name):
    from specdec_core.measured import results_path

    d = json.loads(results_path(name).read_text())
    if name not in LEAVES:
        LEAVES[name] = [p for p in _numeric_leaves(d) if p != ("schema",)]
    return d


def _read(name, folder):
    from specdec_core.measured import read_capstone, read_stored

    return read_capstone(folder / name) if name == "llm.json" else read_stored(name, folder)


def _with(d, path, value):
    d = copy.deepcopy(d)
    at = d
    for k in path[:-1]:
        at = at[k]
    at[path[-1]] = value
    return d


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(FILES),
    pick=st.integers(0, 10**6),
    const=st.sampled_from(("NaN", "Infinity", "-Infinity")),
)
def test_nan_and_infinity_are_refused_at_parse_time_naming_file_and_field(tmp_path, name, pick, const):
    """Python's json accepts NaN and ±Infinity; the reader refuses them wherever they stand,
    naming the file and the field (the old reader stored them in the record)."""
    d = _stored(name)
    path = LEAVES[name][pick % len(LEAVES[name])]
    text = json.dumps(_with(d, path, "@@"), indent=1).replace('"@@"', const)
    (tmp_path / name).write_text(text)
    with pytest.raises(ValueError) as e:
        _read(name, tmp_path)
    assert str(e.value).startswith(f"{tmp_path / name}: ")
    assert f"{_dotted(path)} is {const}, not a finite number" in str(e.value)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(FILES),
    pick=st.integers(0, 10**6),
    bad=st.sampled_from((lambda v: str(v), lambda v: True, lambda v: [v])),
)
def test_strings_and_bools_where_numbers_are_expected_are_refused(tmp_path, name, pick, bad):
    """Every typed number of every stored file: a string ("12.5"), a bool or a list in its place
    is refused with a ValueError naming the file and the field (the old readers turned
    "12.5" into 12.5 and True into 1)."""
    d = _stored(name)
    typed = [p for p in LEAVES[name] if not _dotted(p).startswith(FREE_FORM.get(name, ()))]
    path = typed[pick % len(typed)]
    old = d
    for k in path:
        old = old[k]
    write_json_plain(tmp_path / name, _with(d, path, bad(old)))
    with pytest.raises(ValueError) as e:
        _read(name, tmp_path)
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / name}: {path[0]}") and all(str(k) in msg for k in path), (path, msg)


def write_json_plain(path, obj):
    path.write_text(json.dumps(obj))


def test_the_stored_files_still_read_and_round_trip_byte_for_byte(tmp_path):
    from specdec_core.measured import read_capstone, results_path

    codec.write(read_capstone(), tmp_path / "llm.json")
    assert (tmp_path / "llm.json").read_text() == results_path("llm.json").read_text()


def test_a_paired_ratio_of_one_pair_round_trips_as_null(tmp_path):
    """A quick run (1 repeat) has no interval: low/high/sd_log are None, written as null and read
    back as None; null where an interval exists, and an interval of one pair, are refused."""
    from specdec_core.measured import read_capstone
    from specdec_core.measured.capstone import PairedSpeedup
    from specdec_core.repeats import PairedRatio, paired_ratio

    cap = read_capstone()
    c = cap.runs[0].config
    one = paired_ratio([2.0], [1.0])
    assert (one.low, one.high, one.sd_log) == (None, None, None)
    codec.write(replace_run(cap, c, speedup_paired=PairedSpeedup.of(one)), tmp_path / "llm.json")
    assert "NaN" not in (tmp_path / "llm.json").read_text()
    back = read_capstone(tmp_path / "llm.json").find(c).speedup_paired
    assert back == PairedSpeedup.of(one) and str(back).endswith("(one pair: no interval)")
    two = replace_run(cap, c, speedup_paired=PairedSpeedup.of(paired_ratio([2.0, 2.2], [1.0, 1.0])))
    d = json.loads(codec.encode(two))
    d["runs"][0]["speedup_paired"]["low"] = None
    (tmp_path / "llm.json").write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"llm\.json: runs\[0\]\.speedup_paired: an interval needs"):
        read_capstone(tmp_path / "llm.json")
    with pytest.raises(ValueError, match="no interval"):
        PairedRatio(2.0, 1.0, 3.0, 1, 0.1, 0.95)
    with pytest.raises(ValueError, match="ratio"):
        PairedRatio(float("nan"), None, None, 1, None, 0.95)


def replace_run(cap, c, **kw):
    return cap.replace(runs=tuple(r.replace(**kw) if r.config == c else r for r in cap.runs))


def test_the_machine_record_refuses_bad_fields_naming_them():
    from specdec_core.measured import Machine, codec

    good = json.loads(codec.encode(Machine.now(threads=1).finished(1.0)))
    for key, bad in (("cores", "2"), ("cores", 0), ("wall_minutes", "1.5"), ("load_avg_start", [1.0, "x", 2.0]),
                     ("load_avg_start", [1.0, 2.0]), ("wall_minutes", -1), ("threads", True),
                     ("date_utc", "yesterday")):  # fmt: skip
        with pytest.raises(ValueError, match=f"^hardware.json: {key}"):
            codec.decode(Machine, json.dumps({**good, key: bad}), "hardware.json")

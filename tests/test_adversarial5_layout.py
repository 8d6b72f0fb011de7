"""The fifth adversarial pass's weight-layout findings (issue 38; ``llm/layout.py``,
``measured/layout.py``, ``load_model``), each as the pass reproduced it. The lead's layout
rewrite (a5055fd) answers W5-5…K5-6, and a later commit A5-6 and A5-7 (ids that are not integers,
repeated Ts, weights that are not float32). The lead's own tests of the same findings are in ``test_llm_layout.py``;
these are the pass's reproducers, kept apart.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from specdec_core.llm import layout as LY
from specdec_core.measured import codec
from specdec_core.measured import timer as TM
from specdec_core.measured.layout import LayoutChoice

INFO = {"floor_ms": 1.0, "sample_bytes": 1, "reps": 1}


def _ch(storage, plan):
    return LayoutChoice(storage=storage, plan=plan, timings={}, floor_ms=1.0, sample_bytes=1, reps=1)


def _weights(rng=0, dim=64, V=96):
    """A two-layer stand-in: layer matrices and a head, float32."""
    r = np.random.default_rng(rng)
    w = {f"{i}.attn_q": r.normal(size=(dim, dim)).astype(np.float32) for i in range(2)}
    w["head"] = r.normal(size=(V, dim)).astype(np.float32)
    return w


# ---------------------------------------------------------------- wrong, silent


@pytest.mark.parametrize(
    "timings,margin",
    [
        ({"rows/gemv": {1: math.nan}, "cols16/blocks": {1: 1.0}}, 0.05),
        ({"cols16/blocks": {1: 1.0}, "rows/gemv": {1: math.nan}}, 0.05),
        ({"rows/gemv": {1: -5.0}, "cols16/blocks": {1: 1.0}}, 0.05),
        ({"rows/gemv": {1: 100.0}, "cols16/blocks": {1: 99.0}}, math.nan),
        ({"rows/gemv": {1: 100.0}, "cols16/blocks": {1: 99.0}}, -1),
    ],
    ids=["NaN first", "NaN second", "negative time", "margin NaN", "margin -1"],
)
def test_W5_5_pick_refuses_nan_negative_times_and_margins(timings, margin):
    with pytest.raises(ValueError):
        LY.pick(timings, margin=margin, **INFO)


def test_W5_6_read_floor_fails_when_a_reader_thread_fails():
    with pytest.raises((ValueError, RuntimeError)):
        TM.read_floor_ms([np.ones(3, np.float32)], reps=1, threads=8)


def test_W5_7_a_padded_weight_reports_its_logical_shape():
    w = np.arange(34, dtype=np.float32).reshape(17, 2)
    with pytest.raises(ValueError, match="out"):
        LY.Weight(LY.store(w, "cols16"), "cols16", {1: "blocks"})  # the padded width is refused
    W = LY.Weight(LY.store(w, "cols16"), "cols16", {1: "blocks"}, out=17)
    assert W.shape == (17, 2) and W.dense().shape == (17, 2)
    assert W.product(np.ones((1, 2), np.float32)).shape == (1, 17)


# ---------------------------------------------------------------- hangs and blow-ups


def test_H5_4_choose_layout_bounds_Ts():
    with pytest.raises(ValueError, match="Ts"):
        LY.choose_layout(_weights(), Ts=[1, 10**7], reps=1)
    with pytest.raises(ValueError, match="Ts"):
        LY.choose_layout(_weights(), Ts=[1, 64], reps=1)


@pytest.mark.parametrize(
    "storage", ["cols1000000000", "cols0", "cols-16", "colsx", "cols", "rows0", "banana", 3]
)
def test_H5_5_C5_3_unknown_storages_are_refused_before_any_allocation(storage):
    with pytest.raises(ValueError, match="storage"):
        LY.store(np.ones((64, 8), np.float32), storage)


def test_H5_5_C5_3_a_results_file_storage_is_refused_when_read():
    good = json.loads(codec.encode(_ch("rows", {1: "gemv"})))
    for bad in ("cols100000", "cols0", "banana"):
        with pytest.raises(ValueError, match="passcost.json: storage: Invalid enum value"):
            codec.decode(LayoutChoice, json.dumps({**good, "storage": bad}), "passcost.json")


def test_H5_6_choose_layout_on_laid_out_weights_makes_no_dense_copy(monkeypatch):
    w = _weights()
    LY.apply_layout(w, _ch("cols16", {1: "blocks"}))
    calls = []
    real = LY.Weight.dense
    monkeypatch.setattr(LY.Weight, "dense", lambda self: calls.append(self.shape) or real(self))
    LY.choose_layout(w, Ts=[1], reps=1, quantized=False, sample={"m": np.ones((32, 64), np.float32)})
    assert calls == []


# ---------------------------------------------------------------- foreign errors, unclear messages


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.pop("timings"),
        lambda d: d.pop("plan"),
        lambda d: d.pop("floor_ms"),
        lambda d: d.__setitem__("plan", []),
        lambda d: d.__setitem__("plan", {"1.5": "gemv"}),
    ],
    ids=["no timings", "no plan", "no floor_ms", "plan []", "plan key 1.5"],
)
def test_C5_4_layout_records_name_the_field(change):
    d = json.loads(codec.encode(_ch("rows", {1: "gemv"})))
    change(d)
    with pytest.raises(ValueError, match=r"layout: (plan|timings|floor_ms|the top level)"):
        codec.decode(LayoutChoice, json.dumps(d), "layout")
    with pytest.raises(ValueError, match="layout: the top level: Expected `object`"):
        codec.decode(LayoutChoice, "[]", "layout")


@pytest.mark.parametrize(
    "call",
    [
        lambda: LY.choose_layout(_weights(), sample={}),
        lambda: LY.choose_layout(_weights(), seed="x"),
        lambda: LY.choose_layout(_weights(), seed=-1),
        lambda: LY.choose_layout(_weights(), flush="x"),
        lambda: LY.choose_layout(_weights(), sample={"m": np.ones(64, np.float32)}),
        lambda: LY.choose_layout(_weights(), sample={"m": np.ones((0, 64), np.float32)}),
        lambda: LY.pick({"rowsgemv": {1: 1.0}}, **INFO),
        lambda: LY.pick({"rows/gemv": {}}, **INFO),
        lambda: LY.pick({"rows/gemv": {1: 1.0}}),
        lambda: LY.pick({"rows/gemv": {1: 1.0}}, margin="x", **INFO),
        lambda: TM.read_floor_ms([np.ones(0, np.float32)], reps=1),
        lambda: TM.read_floor_ms([[1.0, 2.0]], reps=1),
    ],
    ids=[
        "sample {}",
        "seed 'x'",
        "seed -1",
        "flush 'x'",
        "1-D sample",
        "empty sample",
        "key without /",
        "empty timings",
        "pick without info",
        "margin 'x'",
        "floor of an empty array",
        "floor of a list",
    ],
)
def test_C5_5_choose_layout_pick_and_the_floor_refuse_by_name(call):
    with pytest.raises(ValueError):
        call()


def test_C5_6_load_model_refuses_an_array_layout(tiny_gguf):
    from specdec_core.llm import load_model

    with pytest.raises(ValueError, match="layout"):
        load_model(str(tiny_gguf[0]), cache=False, layout=np.array([1, 2]))


def test_C5_7_an_empty_batch_on_a_laid_out_matrix():
    from specdec_core.llm.model import product

    w = _weights()
    LY.apply_layout(w, _ch("rows", {1: "gemv"}))
    assert product(np.zeros((0, 64), np.float32), w["head"]).shape == (0, 96)


def test_C5_8_a_laid_out_head_reads_as_its_array():
    w = _weights()
    dense = w["head"].copy()
    LY.apply_layout(w, _ch("cols16", {1: "blocks"}))
    W = w["head"]
    np.testing.assert_array_equal(np.asarray(W), dense)
    assert W.T.shape == (64, 96)


def test_K5_4_choose_layout_of_a_string_names_the_weights():
    with pytest.raises(ValueError, match="weights"):
        LY.choose_layout("x")


def test_K5_6_exactly_the_margin_faster_makes_no_copy():
    assert LY.pick({"rows/gemv": {1: 100.0}, "cols16/blocks": {1: 95.0}}, **INFO).storage == "rows"


def test_K5_5_a_small_models_table_prints_no_zero_times():
    choice = LY.choose_layout(_weights(), Ts=[1, 2], reps=1, quantized=False)
    cells = [c for line in choice.table()[1:] for c in line.split()]
    assert "0.0" not in cells and "0.00" not in cells


# ---------------------------------------------------------------- A5-6, A5-7 (fixed after a5055fd)


@pytest.mark.parametrize("ids", [[1.7, 2.2], ["3"], [True]], ids=["floats", "strings", "bools"])
def test_A5_7_weight_rows_refuses_ids_that_are_not_integers(ids):
    """NA6's class: np.asarray(ids, dtype=np.int64) turned 1.7 into row 1 and True into row 1."""
    W = LY.Weight(np.arange(128, dtype=np.float32).reshape(64, 2), "rows", {1: "gemv"})
    with pytest.raises(ValueError, match="ids"):
        W.rows(ids)


def test_A5_6_choose_layout_refuses_duplicate_Ts():
    with pytest.raises(ValueError, match="Ts"):
        LY.choose_layout(_weights(), Ts=[1, 1, 1], reps=1, quantized=False)


def test_A5_6_apply_layout_refuses_weights_that_are_not_float32():
    w = {k: v.astype(np.float64) for k, v in _weights().items()}
    with pytest.raises(ValueError, match="float32"):
        LY.apply_layout(w, _ch("rows", {1: "gemv"}))

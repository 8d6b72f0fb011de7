"""The weight layout chosen by timing (specdec_core/llm/layout.py): every storage and method
multiplies right, a stored matrix gives back its rows, the choice is the fastest by its stated
rule, the record round-trips and refuses bad numbers, and a model laid out any way gives the same
logits. Random weights and the tiny GGUF: no real model, no timing asserted."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.llm import layout as L
from specdec_core.llm import load_model
from specdec_core.llm import model as M
from specdec_core.measured import codec
from specdec_core.measured import timer as TM
from specdec_core.measured.layout import LayoutChoice

SHAPES = [(960, 576), (576, 1536), (192, 64), (269, 24)]  # 269: a last block padded


def _ref(x, w):
    want = x.astype(np.float64) @ w.T.astype(np.float64)
    scale = np.abs(x).astype(np.float64) @ np.abs(w.T).astype(np.float64)
    return want, scale


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("T", [1, 2, 3, 8, 9, 33])
def test_every_storage_and_method_is_x_at_w_transposed(shape, T):
    rng = np.random.default_rng(T)
    w = rng.standard_normal(shape, dtype=np.float32) * 0.05
    x = rng.standard_normal((T, shape[1]), dtype=np.float32)
    want, scale = _ref(x, w)
    for s in L.storages([shape]):
        data = L.store(w, s)
        for m in L.methods(s, T):
            got = L.multiply(x, data, s, m, shape[0])
            assert got.shape == (T, shape[0]) and got.dtype == np.float32, (s, m)
            assert got.flags["C_CONTIGUOUS"], (s, m)
            assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-6), (s, m)
        got = M.product(x, L.Weight(data, s, {1: L.methods(s, 1)[0], 2: L.methods(s, 2)[0]}, out=shape[0]))
        assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-6), s


def test_candidates_cover_rows_and_columns():
    assert L.storages([(960, 576), (49152, 576)]) == ["rows", "cols16", "cols32", "cols64"]
    assert L.storages([(960, 576), (40, 8)]) == ["rows", "cols16", "cols32"]  # no block wider than 40
    assert "gemv" in L.methods("rows", 1) and "gemv" not in L.methods("rows", 2)
    assert L.methods("cols64", 1) == ["blocks", "pad2"] and L.methods("cols64", 4) == ["blocks"]
    with pytest.raises(ValueError, match="storage"):
        L.methods("diagonal", 1)
    padded = L.store(np.ones((100, 8), np.float32), "cols64")  # 100 outputs: one full block, one padded
    assert padded.shape == (2, 8, 64) and padded[1, :, 36:].sum() == 0 and padded.sum() == 800


@settings(max_examples=40, deadline=None)
@given(
    out=st.integers(1, 300),
    b=st.sampled_from([16, 32, 64]),
    inn=st.integers(1, 40),
    ids=st.lists(st.integers(0, 10**6), min_size=1, max_size=20),
)
def test_a_stored_matrix_gives_back_its_rows(out, b, inn, ids):
    w = np.arange(out * inn, dtype=np.float32).reshape(out, inn)
    ids = [i % out for i in ids]
    for s in ("rows", f"cols{b}"):
        W = L.Weight(L.store(w, s), s, {1: L.methods(s, 1)[0]}, out=out)
        assert W.shape == w.shape and W.ndim == 2 and W.size == w.size
        np.testing.assert_array_equal(W.rows(ids), w[ids])  # exact: a gather, no arithmetic
        np.testing.assert_array_equal(W.dense(), w)
        with pytest.raises(ValueError, match="ids"):
            W.rows([out])


def test_the_plan_covers_every_T():
    W = L.Weight(np.ones((64, 8), np.float32), "rows", {1: "gemv", 2: "rows32", 8: "rows8"})
    assert [W.method(T) for T in (1, 2, 5, 8, 20, 33)] == [
        "gemv",
        "rows32",
        "rows32",
        "rows8",
        "rows8",
        "blas",
    ]
    C = L.Weight(L.store(np.ones((64, 8), np.float32), "cols32"), "cols32", {1: "pad2", 4: "blocks"}, out=64)
    assert [C.method(T) for T in (1, 2, 4, 100)] == ["pad2", "blocks", "blocks", "blocks"]


def test_pick_takes_the_storage_with_the_least_total_then_the_fastest_method_per_T():
    timings = {
        "rows/gemv": {1: 10.0},
        "rows/rows16": {1: 12.0, 2: 14.0, 4: 18.0},
        "rows/blas": {1: 11.0, 2: 30.0, 4: 31.0},
        "cols64/blocks": {1: 13.0, 2: 11.0, 4: 12.0},
        "cols64/pad2": {1: 11.5},
    }
    c = L.pick(timings, floor_ms=9.0, sample_bytes=1, reps=1)
    assert c.storage == "cols64"  # 11.5 + 11 + 12 = 34.5 < 10 + 14 + 18 = 42
    assert c.plan == {1: "pad2", 2: "blocks", 4: "blocks"}
    assert c.best("rows") == {1: 10.0, 2: 14.0, 4: 18.0}
    assert c.ratios() == {1: 1.0, 2: 11.0 / 11.5, 4: 12.0 / 11.5}
    # within the margin the weights stay as loaded (no copy); beyond it, the copy wins
    for cols, want in ((5.0, "rows"), (4.8, "rows"), (4.7, "cols16")):
        c2 = L.pick({"rows/gemv": {1: 5.0}, "cols16/blocks": {1: cols}}, floor_ms=1.0, sample_bytes=1, reps=1)
        assert c2.storage == want, (cols, c2.storage)
    table = "\n".join(c.table())
    assert "cols64/pad2" in table and "✓" in table and "read floor" in table
    with pytest.raises(ValueError, match="timings"):
        L.pick({}, floor_ms=1.0, sample_bytes=1, reps=1)


def _weights(rng, layers=3):
    w = {}
    for l in range(layers):
        w[f"{l}.wqkv"] = rng.standard_normal((96, 32), dtype=np.float32)
        w[f"{l}.wo"] = rng.standard_normal((32, 32), dtype=np.float32)
        w[f"{l}.attn_norm"] = np.ones(32, np.float32)
    w["head"] = rng.standard_normal((256, 32), dtype=np.float32)
    return w


def test_choose_layout_times_every_cell_after_a_flush_and_applies_in_place():
    w = _weights(np.random.default_rng(0))
    calls = []
    c = L.choose_layout(w, Ts=(1, 2, 4), reps=2, flush=lambda: calls.append(1))
    timed = [*L.storages([(96, 32), (32, 32), (256, 32)]), "q8"]  # q8: the quantized draft's storage
    cells = sum(len(L.methods(s, T)) for s in timed for T in (1, 2, 4))
    assert len(calls) == 2 * (cells + len(L.REDUCTIONS))  # one untimed flush before every timing
    assert set(c.plan) == {1, 2, 4} and c.storage in L.storages([(32, 32)])
    assert set(c.floor_by_reduction) == set(L.REDUCTIONS) and c.floor_ms == min(c.floor_by_reduction.values())
    assert c.sample == ("0.wqkv", "0.wo", "1.wqkv", "1.wo", "2.wqkv", "2.wo", "head")
    x = np.random.default_rng(1).standard_normal((3, 32), dtype=np.float32)
    want = {k: x @ v.T for k, v in w.items() if v.ndim == 2}
    forced = L.pick({"cols32/blocks": {1: 1.0}}, floor_ms=1.0, sample_bytes=1, reps=1)
    same = L.apply_layout(w, forced)
    assert same is w and isinstance(w["head"], L.Weight) and w["head"].storage == "cols32"
    assert isinstance(w["0.attn_norm"], np.ndarray)  # vectors stay as they are
    for k, v in want.items():
        np.testing.assert_allclose(M.product(x, w[k]), v, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="Ts must include 1"):
        L.choose_layout(w, Ts=(2, 4))
    with pytest.raises(ValueError, match="choice"):
        L.apply_layout(w, {"storage": "rows"})


def test_read_floor_is_the_fastest_reduction():
    arrays = [np.ones(10_000, np.float32)] * 3
    fastest, by = TM.read_floor_ms(arrays, reps=3)
    assert set(by) == set(L.REDUCTIONS) and fastest == min(by.values()) > 0
    two, _ = TM.read_floor_ms(arrays, reps=1, threads=2)
    assert two > 0
    with pytest.raises(ValueError, match="threads"):
        TM.read_floor_ms(arrays, threads=0)


def _choice():
    return L.pick(
        {"rows/gemv": {1: 4.0}, "rows/rows16": {1: 4.5, 2: 4.6}, "cols64/blocks": {1: 4.4, 2: 5.0}},
        floor_ms=3.9,
        floor_by_reduction={"dot": 4.2, "max": 3.9},
        sample_bytes=123,
        reps=5,
        sample=("0.wo", "head"),
    )


def as_json(c: LayoutChoice) -> dict:
    """The record's stored form, parsed (what a results file holds)."""
    return json.loads(codec.encode(c))


def from_json(d, where: str = "layout") -> LayoutChoice:
    """The record read from ``d`` by the one codec, as a results file is read."""
    return codec.decode(LayoutChoice, json.dumps(d), where)


def test_the_record_round_trips_and_refuses_bad_numbers():
    c = _choice()
    assert from_json(as_json(c)) == c
    for bad in (math.nan, math.inf, "4.0", True, -1.0):
        d = as_json(c)
        d["timings"]["rows/gemv"]["1"] = bad
        with pytest.raises(ValueError, match=r"^layout: .*timings"):
            from_json(d)
    d = as_json(c)
    d["floor_ms"] = "fast"
    with pytest.raises(ValueError, match="^passcost.json layout: floor_ms"):
        from_json(d, "passcost.json layout")


@pytest.mark.parametrize("storage", ["rows", "cols16"])
def test_a_laid_out_model_scores_as_the_loaded_one(tiny_gguf, storage):
    path, _ = tiny_gguf
    plain = load_model(str(path), cache=False)
    choice = L.pick({f"{storage}/{L.methods(storage, 1)[0]}": {1: 1.0}}, floor_ms=1.0, sample_bytes=1, reps=1)
    laid = load_model(str(path), cache=False, layout=choice)
    assert laid.layout is choice and isinstance(laid.model.w["head"], L.Weight)
    toks = [1, 5, 9, 3, 7, 2]
    np.testing.assert_allclose(
        laid.model.logits_for(toks), plain.model.logits_for(toks), rtol=1e-4, atol=1e-4
    )
    np.testing.assert_array_equal(laid.model.embed(toks), plain.model.embed(toks))
    np.testing.assert_array_equal(laid.model.head_rows([4, 0, 9]), plain.model.head_rows([4, 0, 9]))
    auto = load_model(str(path), cache=False, layout="auto")
    assert auto.layout is not None and set(auto.layout.plan) == set(L.CHOICE_TS)
    with pytest.raises(ValueError, match="layout"):
        load_model(str(path), cache=False, layout="fastest")


# ---------------------------------------------------------------- the adversarial pass's layout findings (issue 38)

INFO = dict(floor_ms=1.0, sample_bytes=1, reps=1)


@pytest.mark.parametrize(
    "timings, margin, match",
    [
        ({"rows/gemv": {1: math.nan}, "cols16/blocks": {1: 1.0}}, 0.05, "positive finite"),  # W5-5
        ({"rows/gemv": {1: -1.0}, "cols16/blocks": {1: 1.0}}, 0.05, "positive finite"),
        ({"rows/gemv": {1: 1.0}}, math.nan, "margin"),
        ({"rows/gemv": {1: 1.0}}, -1, "margin"),
        ({"rows/gemv": {1: 1.0}}, "x", "margin"),
        ({"rowsgemv": {1: 1.0}}, 0.05, "storage/method"),  # C5-5
        ({"rows/gemv": {}}, 0.05, "non-empty"),
        ({"rows/gemv": {1.5: 1.0}}, 0.05, "T"),
    ],
)
def test_pick_refuses_bad_timings_and_margins(timings, margin, match):
    with pytest.raises(ValueError, match=match):
        L.pick(timings, margin=margin, **INFO)


def test_pick_names_what_it_lacks_and_copies_only_when_more_than_the_margin_faster():
    with pytest.raises(ValueError, match="floor_ms"):
        L.pick({"rows/gemv": {1: 1.0}})  # C5-5: the signature's **info
    exactly = L.pick({"rows/gemv": {1: 100.0}, "cols16/blocks": {1: 95.0}}, **INFO)  # K5-6: exactly 5 %
    assert exactly.storage == "rows"
    assert L.pick({"rows/gemv": {1: 100.0}, "cols16/blocks": {1: 94.0}}, **INFO).storage == "cols16"
    with_q8 = L.pick({"rows/gemv": {1: 100.0}, "q8/nb1": {1: 10.0}}, **INFO)  # lossy: timed, never chosen
    assert with_q8.storage == "rows" and with_q8.plan_of("q8") == {1: "nb1"}


def test_read_floor_fails_when_a_reader_thread_fails():  # W5-6
    with pytest.raises(ValueError, match="at least threads"):
        TM.read_floor_ms([np.ones(3, np.float32)], reps=1, threads=8)
    with pytest.raises(ValueError, match="arrays"):
        TM.read_floor_ms([[1.0, 2.0]], reps=1)

    def boom():
        raise RuntimeError("x")

    with pytest.raises(RuntimeError):
        TM.read_floor_ms([np.ones(64, np.float32)], reps=1, threads=2, before=boom)
    bad = np.ones(64, np.float32)
    saved = L.REDUCTIONS["dot"]
    try:
        L.REDUCTIONS["dot"] = lambda v: (_ for _ in ()).throw(ZeroDivisionError("in a thread"))
        with pytest.raises(RuntimeError, match="reader thread failed"):
            TM.read_floor_ms([bad], reps=1, threads=2)
    finally:
        L.REDUCTIONS["dot"] = saved


def test_a_padded_weight_reports_its_logical_shape():  # W5-7
    data = L.store(np.ones((17, 2), np.float32), "cols16")
    with pytest.raises(ValueError, match="out must be"):
        L.Weight(data, "cols16", {1: "blocks"})
    W = L.Weight(data, "cols16", {1: "blocks"}, out=17)
    assert W.shape == (17, 2) and W.product(np.ones((1, 2), np.float32)).shape == (1, 17)
    assert np.asarray(W).shape == (17, 2) and W.T.shape == (2, 17)  # C5-8: usable as the array it stands for


@pytest.mark.parametrize("storage", ["cols1000000000", "cols0", "cols-16", "colsx", "cols", "rows0", 3, "q4"])
def test_unknown_storages_are_refused_before_any_allocation(storage):  # H5-5, C5-3
    with pytest.raises(ValueError, match="storage"):
        L.store(np.ones((64, 8), np.float32), storage)
    d = as_json(_choice())
    d["storage"] = storage
    with pytest.raises(ValueError, match="storage"):
        from_json(d)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda d: d.pop("timings"), "missing required field `timings`"),  # C5-4
        (lambda d: d.pop("plan"), "missing required field `plan`"),
        (lambda d: d.update(plan=[]), "plan: Expected `object`"),
        (lambda d: d.update(plan={"1": "ks"}), "no method"),
        (lambda d: d.update(plan={"1.5": "gemv"}), "plan"),
        (lambda d: d.update(plan={}), "non-empty"),
        (lambda d: d["timings"].update({"rowsgemv": {"1": 1.0}}), "timings: 'rowsgemv' is not a known"),
        (lambda d: d.update(sample_bytes="x"), "sample_bytes"),
    ],
)
def test_a_stored_choice_is_refused_naming_the_field(change, match):
    d = as_json(_choice())
    change(d)
    with pytest.raises(ValueError, match=match):
        from_json(d)
    with pytest.raises(ValueError, match="Expected `object`"):
        from_json([])


def test_choose_layout_validates_and_bounds_its_arguments():  # H5-4, C5-5, K5-4
    w = _weights(np.random.default_rng(0))
    for kw, match in [
        (dict(Ts=[1, 10**7]), "Ts"),
        (dict(Ts=[1, 64]), "Ts"),
        (dict(sample={}), "sample"),
        (dict(sample={"a": np.ones(4, np.float32)}), "sample"),
        (dict(seed="x"), "seed"),
        (dict(seed=-1), "seed"),
        (dict(flush="x"), "flush"),
    ]:
        with pytest.raises(ValueError, match=match):
            L.choose_layout(w, reps=1, **kw)
    with pytest.raises(ValueError, match="dict"):
        L.choose_layout("x")


def test_choose_layout_on_laid_out_weights_copies_no_whole_matrix(monkeypatch):  # H5-6
    w = _weights(np.random.default_rng(0), layers=5)
    L.apply_layout(w, L.pick({"cols32/blocks": {1: 1.0}}, **INFO))
    dense_calls = []
    real = L.Weight.dense
    monkeypatch.setattr(L.Weight, "dense", lambda self: dense_calls.append(self.shape) or real(self))
    c = L.choose_layout(w, Ts=(1, 2), reps=1)
    assert c.storage in ("rows", "cols16", "cols32")
    # only the sampled layers (0, 2, 4) are made dense, never the head or the unsampled layers
    assert (256, 32) not in dense_calls and len(dense_calls) == 6


def test_a_tiny_models_table_never_prints_zero_times():  # K5-5
    c = L.pick(
        {"rows/gemv": {1: 0.0042}, "rows/rows16": {1: 0.0051}}, floor_ms=0.0031, sample_bytes=1, reps=1
    )
    table = "\n".join(c.table())
    assert "0.0042" in table and "0.0031" in table and " 0.0 " not in table


def test_load_model_refuses_a_layout_it_cannot_read(tiny_gguf):  # C5-6
    with pytest.raises(ValueError, match="layout"):
        load_model(str(tiny_gguf[0]), cache=False, layout=np.array([1, 2]))


def test_a_laid_out_model_scores_an_empty_batch():  # C5-7
    W = L.Weight(np.ones((64, 8), np.float32), "rows", {1: "gemv"})
    assert M.product(np.zeros((0, 8), np.float32), W).shape == (0, 64)

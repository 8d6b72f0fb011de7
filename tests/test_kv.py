"""KV-cache calculator (specdec_core.kv): hand-computed values, presets, speculation, bad inputs."""

from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.kv import (
    DTYPE_BYTES,
    GIB,
    PRESETS,
    check_dtype,
    fmt_bytes,
    fmt_gib,
    gib_to_bytes,
    kv_cache_bytes,
    max_concurrent_sequences,
    model_kv_bytes,
    per_sequence_bytes,
    rollback_positions,
    weight_bytes,
    working_set,
)

# ---------------------------------------------------------------- the formula by hand


def test_formula_small_by_hand():
    # 2 × 2 layers × 3 heads × 4 dims × 2 bytes × 5 tokens × 6 sequences
    assert (
        kv_cache_bytes(layers=2, kv_heads=3, head_dim=4, bytes_per_element=2, tokens=5, sequences=6)
        == 2 * 2 * 3 * 4 * 2 * 5 * 6
        == 2880
    )


@pytest.mark.parametrize(
    "name,per_token_bf16",
    [
        ("SmolLM2-135M", 2 * 30 * 3 * 64 * 2),  # 23,040 B
        ("Llama-3.2-1B", 2 * 16 * 8 * 64 * 2),  # 32,768 B
        ("Llama-3.1-8B", 2 * 32 * 8 * 128 * 2),  # 131,072 B = 128 KiB
        ("Llama-3.1-70B", 2 * 80 * 8 * 128 * 2),  # 327,680 B = 320 KiB
    ],
)
def test_presets_per_token(name, per_token_bf16):
    assert model_kv_bytes(name, "bf16", 1) == per_token_bf16
    assert model_kv_bytes(name, "fp32", 1) == 2 * per_token_bf16
    assert model_kv_bytes(name, "fp8", 1) == per_token_bf16 // 2


def test_hand_values():
    assert model_kv_bytes("SmolLM2-135M", "bf16", 1) == 23040
    assert model_kv_bytes("Llama-3.1-8B", "bf16", 8192) == 2**30  # 1 GiB per sequence
    assert model_kv_bytes("Llama-3.1-70B", "fp16", 8192, 16) == 40 * 2**30  # 320 KiB × 8192 × 16
    assert model_kv_bytes("Llama-3.2-1B", "bf16", 8192) == 2**28  # 256 MiB


@pytest.mark.parametrize(
    "name,params",
    [
        ("SmolLM2-135M", 134_515_008),  # published ≈ 135M
        ("Llama-3.2-1B", 1_235_814_400),  # published 1.24B (tied head)
        ("Llama-3.1-8B", 8_030_261_248),  # published 8.03B
        ("Llama-3.1-70B", 70_553_706_496),  # published 70.6B
    ],
)
def test_preset_parameter_counts(name, params):
    assert PRESETS[name].parameters == params
    assert weight_bytes(name, "bf16") == 2 * params


def test_presets_have_sources():
    for m in PRESETS.values():
        assert len(m.source) > 20
        assert m.heads % m.kv_heads == 0


def test_smollm2_matches_field_notes():
    m = PRESETS["SmolLM2-135M"]
    assert (m.layers, m.kv_heads, m.head_dim, m.hidden, m.heads, m.vocab) == (30, 3, 64, 576, 9, 49152)


def test_dtypes():
    assert DTYPE_BYTES == {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}
    assert check_dtype(3) == 3


# ---------------------------------------------------------------- speculation


def test_working_set_defaults_exact():
    ws = working_set(
        "Llama-3.1-8B",
        "Llama-3.2-1B",
        dtype="bf16",
        context=8192,
        sequences=16,
        gamma=4,
        budget_bytes=40 * GIB,
    )
    assert ws.target_cache == 16 * 2**30
    assert ws.target_provisional == 16 * 4 * 131072 == 8_388_608
    assert ws.draft_cache == 16 * 2**28
    assert ws.draft_provisional == 16 * 4 * 32768
    assert ws.target_weights == 16_060_522_496
    assert ws.draft_weights == 2_471_628_800
    assert ws.total == sum(ws.parts().values())
    assert ws.fits and ws.headroom == 40 * GIB - ws.total
    assert ws.speculation_extra == ws.total - ws.target_cache - ws.target_weights


def test_gamma_zero_is_plain_decoding():
    ws = working_set("Llama-3.1-8B", "Llama-3.2-1B", dtype="bf16", context=100, sequences=2, gamma=0)
    assert ws.draft_cache == ws.draft_provisional == ws.draft_weights == ws.target_provisional == 0
    assert ws.fits is None and ws.headroom is None


def test_max_concurrent_by_hand():
    # weights excluded: per sequence = (8192 + 4) × (131072 + 32768) bytes
    per = (8192 + 4) * (131072 + 32768)
    assert per_sequence_bytes("Llama-3.1-8B", "Llama-3.2-1B", dtype="bf16", context=8192, gamma=4) == per
    n = max_concurrent_sequences(
        "Llama-3.1-8B",
        "Llama-3.2-1B",
        dtype="bf16",
        context=8192,
        gamma=4,
        budget_bytes=40 * GIB,
        include_weights=False,
    )
    assert n == (40 * GIB) // per == 31
    assert (
        max_concurrent_sequences(
            "Llama-3.1-8B", "Llama-3.2-1B", dtype="bf16", context=8192, gamma=4, budget_bytes=0
        )
        == 0
    )


@settings(max_examples=60, deadline=None)
@given(ctx=st.integers(0, 200_000), g=st.integers(0, 16), budget=st.integers(0, 400 * GIB))
def test_max_concurrent_is_tight(ctx, g, budget):
    if ctx == 0 and g == 0:
        return
    kw = dict(dtype="fp16", context=ctx, gamma=g)
    n = max_concurrent_sequences("Llama-3.1-70B", "Llama-3.2-1B", budget_bytes=budget, **kw)
    if n > 0:
        assert working_set("Llama-3.1-70B", "Llama-3.2-1B", sequences=n, budget_bytes=budget, **kw).fits
    assert not working_set("Llama-3.1-70B", "Llama-3.2-1B", sequences=n + 1, budget_bytes=budget, **kw).fits


@settings(max_examples=40, deadline=None)
@given(s=st.integers(1, 64), ctx=st.integers(0, 50_000), g=st.integers(0, 8))
def test_working_set_grows_with_everything(s, ctx, g):
    base = working_set("SmolLM2-135M", "SmolLM2-135M", dtype="bf16", context=ctx, sequences=s, gamma=g)
    more = [dict(context=ctx + 1, sequences=s, gamma=g), dict(context=ctx, sequences=s, gamma=g + 1)]
    if ctx + g > 0:  # an empty cache stays empty however many sequences share the weights
        more.append(dict(context=ctx, sequences=s + 1, gamma=g))
    for kw in more:
        assert working_set("SmolLM2-135M", "SmolLM2-135M", dtype="bf16", **kw).total > base.total


def test_rollback_exact():
    # γ = 2, α = 3/5: E[accepted] = 3/5 + 9/25 = 24/25, rolled back 2 − 24/25 = 26/25
    assert rollback_positions(Fraction(3, 5), 2) == Fraction(26, 25)
    assert rollback_positions(1, 5) == 0
    assert rollback_positions(0, 5) == 5
    assert rollback_positions(0.6, 2) == pytest.approx(1.04)


def test_units():
    assert gib_to_bytes(1) == GIB
    assert gib_to_bytes(0.5) == GIB // 2
    assert gib_to_bytes(Fraction(1, 4)) == GIB // 4
    assert fmt_gib(3 * GIB // 2) == "1.50 GiB"
    assert fmt_bytes(1234567) == "1,234,567 B"


# ---------------------------------------------------------------- bad inputs

FORMULA = dict(layers=2, kv_heads=2, head_dim=2, bytes_per_element=2, tokens=2, sequences=2)


@pytest.mark.parametrize(
    "arg,bad",
    [
        ("layers", 0),
        ("layers", -1),
        ("layers", 2.0),
        ("layers", float("nan")),
        ("layers", True),
        ("kv_heads", 0),
        ("kv_heads", "8"),
        ("head_dim", 1.5),
        ("head_dim", None),
        ("bytes_per_element", 0),
        ("tokens", -1),
        ("tokens", 3.0),
        ("sequences", 0),
        ("sequences", float("inf")),
    ],
)
def test_formula_bad_inputs(arg, bad):
    with pytest.raises(ValueError, match=arg):
        kv_cache_bytes(**{**FORMULA, arg: bad})


WS = dict(dtype="bf16", context=10, sequences=1, gamma=1)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(dtype="fp12"), "dtype"),
        (dict(dtype=0), "dtype"),
        (dict(context=-1), "context"),
        (dict(context=1.0), "context"),
        (dict(sequences=0), "sequences"),
        (dict(gamma=-1), "gamma"),
        (dict(gamma=2.0), "gamma"),
        (dict(budget_bytes=-5), "budget"),
        (dict(budget_bytes=1.5), "budget"),
        (dict(include_weights="yes"), "include_weights"),
    ],
)
def test_working_set_bad_inputs(kw, match):
    with pytest.raises(ValueError, match=match):
        working_set("Llama-3.1-8B", "Llama-3.2-1B", **{**WS, **kw})


def test_bad_models_and_units():
    with pytest.raises(ValueError, match="model"):
        working_set("GPT-5", "Llama-3.2-1B", **WS)
    small = PRESETS["SmolLM2-135M"]  # 9 query heads, 3 KV heads; replace() re-runs the checks
    with pytest.raises(ValueError, match="kv_heads"):
        replace(small, kv_heads=0)
    with pytest.raises(ValueError, match="multiple"):
        replace(small, kv_heads=2)  # 9 query heads are no multiple of 2 KV heads
    for bad in (-1, float("nan"), float("inf"), "1", None):
        with pytest.raises(ValueError, match="gib"):
            gib_to_bytes(bad)
    with pytest.raises(ValueError, match="context and gamma"):
        max_concurrent_sequences(
            "Llama-3.1-8B", "Llama-3.2-1B", dtype="bf16", context=0, gamma=0, budget_bytes=100 * GIB
        )


def test_pure_layer_imports_no_widgets():
    import subprocess
    import sys

    code = (
        "import sys, specdec_core.kv, specdec_core.transforms, specdec_core.roofline, specdec_core.latency; "
        "assert 'matplotlib' not in sys.modules and 'ipywidgets' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- the calculator lab (labs/kv.py)


def test_kv_lab_texts_at_defaults():
    from specdec_core.labs.kv import DEFAULTS, kv_texts

    t = kv_texts(DEFAULTS)
    assert list(t) == ["parts", "fits", "rollback", "note"]
    assert "target KV, context: 16.00 GiB" in t["parts"]
    assert "draft KV, context: 4.00 GiB" in t["parts"]
    assert "fits" in t["fits"] and "At most 18 sequences fit with γ = 4" in t["fits"]
    assert t["parts"].startswith("[derived]") and t["rollback"].startswith("[derived from assumed inputs]")
    assert t["note"] == ""  # nothing to note: the lab hides the empty readout (no lone "—")


@pytest.mark.parametrize(
    "changes",
    [
        dict(budget_gib=0.0),
        dict(budget_gib=320.0),
        dict(context=131072, sequences=256),
        dict(gamma=0),
        dict(gamma=16, alpha=1.0),
        dict(alpha=0.0),
        dict(dtype="fp8"),
        dict(include_weights=False),
        dict(draft="SmolLM2-135M"),
        dict(draft="Llama-3.1-70B"),
    ],
)
def test_kv_lab_extremes(changes):
    """Every corner gives readable text (no nan, no traceback) and a figure."""
    from specdec_core.labs.kv import kv_lab

    lab = kv_lab().set(**changes)
    text = " ".join(lab.last_texts.values())
    assert "nan" not in text.lower() and "Traceback" not in text
    assert lab.png[:4] == b"\x89PNG"
    if changes.get("budget_gib") == 0.0:
        assert "does not fit" in lab.last_texts["fits"] and "At most 0 sequences" in lab.last_texts["fits"]
    if changes.get("draft") == "SmolLM2-135M":
        assert "vocabularies" in lab.last_texts["note"]


def test_kv_lab_dom_contract():
    from specdec_core.labs.kv import SPEC, kv_lab

    lab = kv_lab()
    assert "specdec-lab" in lab._dom_classes and "lab-kv" in lab._dom_classes
    for key, c in lab.controls.items():
        assert f"lab-control-{key}" in c._dom_classes
        assert c.value == SPEC.defaults[key]
    assert int(lab.figure.width) <= 760

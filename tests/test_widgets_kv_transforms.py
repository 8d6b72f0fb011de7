"""Widgets of notebooks 06 and 08 driven from Python, including extreme slider positions."""
import pytest

from specdec_core.kv import PRESETS
from specdec_core.widgets.kv import kv_calculator, kv_text
from specdec_core.widgets.transforms import CONTEXTS, transform_lab, transform_text
from specdec_core.transforms import SETUPS


def clean(text):
    low = text.lower()
    assert "nan" not in low.replace("nanos", "")
    assert "traceback" not in low and "inf " not in low


def test_kv_defaults_text():
    box = kv_calculator()
    t = box.result.value
    clean(t)
    assert "fits" in t and "17,179,869,184 B" in t and "16.00 GiB" in t
    assert "At most <b>18</b> sequences" in t
    assert "best γ ≤ 8 is γ = 4 with 18 sequences → 35.65 tokens per step" in t   # as in the notebook
    assert box.out.value[:4] == b"\x89PNG"


@pytest.mark.parametrize("key,values", [
    ("budget_gib", [0.0, 0.5, 320.0]),
    ("context", [256, 131072]),
    ("sequences", [1, 256]),
    ("gamma", [0, 16]),
    ("dtype", ["fp32", "fp8", "int8"]),
    ("target", list(PRESETS)),
    ("draft", list(PRESETS)),
    ("include_weights", [False, True]),
    ("alpha", [0.0, 1.0]),
    ("draft_cost", [0.0, 1.0]),
])
def test_kv_extremes(key, values):
    box = kv_calculator()
    for v in values:
        box.controls[key].value = v
        clean(box.result.value)
        assert "specdec-error" not in box.result.value


def test_kv_zero_budget_and_huge_context():
    box = kv_calculator()
    box.controls["budget_gib"].value = 0.0
    assert "does not fit" in box.result.value and "At most <b>0</b>" in box.result.value
    assert "Nothing fits this budget" in box.result.value
    box.controls["context"].value = 131072
    box.controls["sequences"].value = 256
    box.controls["target"].value = "Llama-3.1-70B"
    clean(box.result.value)
    assert "does not fit" in box.result.value


def test_kv_notes_vocabulary_mismatch():
    box = kv_calculator(draft="SmolLM2-135M")
    assert "different vocabularies" in box.result.value
    box.controls["gamma"].value = 0
    assert "different vocabularies" not in box.result.value


def test_kv_empty_cache_message_not_exception():
    # context 0 and γ 0: "any number fits" — shown as a message, never raised
    text, ws = kv_text("Llama-3.1-8B", "Llama-3.2-1B", dtype="bf16", context=0, sequences=1,
                       gamma=0, budget_gib=40.0)
    assert ws is None and "specdec-error" in text and "context and gamma" in text


def test_transform_defaults_text():
    box = transform_lab()
    t = box.result.value
    clean(t)
    assert "biased: TV = 0.1042" in t          # 5/48 for greedy draft at T = 1/2
    box.controls["setup"].value = "correct"
    assert "emitted law = intended law" in box.result.value
    assert box.out.value[:4] == b"\x89PNG"


EXTREMES = [
    ("temperature", "temperature", [1e-6, 0.01, 0.011, 1.0, 100.0, 1e6]),
    ("top_k", "k", [1, 4]),
    ("top_p", "top_p", [0.0, 0.01, 0.5, 1.0]),
    ("none", "temperature", [0.01]),
    ("greedy", "temperature", [0.01]),
]
DEFAULT_VALUES = dict(temperature=0.5, k=2, top_p=0.7)


@pytest.mark.parametrize("transform,key,values", EXTREMES)
def test_transform_text_extremes_everywhere(transform, key, values):
    """The callback's text for every setup × context × extreme value (no figure rendering)."""
    for setup in SETUPS:
        for ctx in CONTEXTS:
            for v in values:
                text, res = transform_text(setup, transform, **{**DEFAULT_VALUES, key: v}, context=ctx)
                clean(text)
                assert res is not None, text
                if setup in ("correct", "target_only"):
                    assert "emitted law = intended law" in text


@pytest.mark.parametrize("transform,key,values", EXTREMES)
def test_transform_widget_extremes(transform, key, values):
    """The widget itself, driven through its controls."""
    box = transform_lab()
    box.controls["transform"].value = transform
    for setup in ("correct", "unreported"):
        box.controls["setup"].value = setup
        box.controls["context"].value = "after D"
        for v in values:
            box.controls[key].value = v
            clean(box.result.value)
            assert "specdec-error" not in box.result.value, box.result.value
            assert box.out.value[:4] == b"\x89PNG"


def test_transform_text_reports_errors():
    text, res = transform_text("correct", "top_k", 0.5, 0, 0.5, "start")
    assert res is None and "specdec-error" in text

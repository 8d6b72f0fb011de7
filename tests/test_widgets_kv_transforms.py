"""Widgets of notebook 08 driven from Python, including extreme slider positions."""
import pytest

from specdec_core.widgets.transforms import CONTEXTS, transform_lab, transform_text
from specdec_core.transforms import SETUPS


def clean(text):
    low = text.lower()
    assert "nan" not in low.replace("nanos", "")
    assert "traceback" not in low and "inf " not in low


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

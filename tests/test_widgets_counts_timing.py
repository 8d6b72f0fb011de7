"""Notebook 04/05 widgets driven from Python: worked values at the defaults, extreme slider
positions (α = 0 and 1, γ = 0 and max, zero costs) with no NaN/inf shown and no exception."""
import itertools

import pytest

from specdec_core.questions import grade
from specdec_core.widgets.counts import (ACCEPTANCE_LENGTH_QUESTION, count_text, count_widget,
                                         figure_png)
from specdec_core.widgets.timing import TIMING_QUESTION, timing_text, timing_widget

PNG = b"\x89PNG"


def clean(text: str):
    low = text.lower()
    assert "nan" not in low.replace("nanoseconds", "")
    assert "inf" not in low.replace("info", "")
    assert "traceback" not in low


def test_count_widget_defaults_show_worked_values():
    box = count_widget()
    v = box.result.value
    assert "P(K=1)=0.4000" in v and "P(K=2)=0.2400" in v and "P(K=3)=0.3600" in v
    assert "E[K] = 1.9600" in v and v.startswith("[derived]")
    assert bytes(box.image.value[:4]) == PNG
    assert "specdec-count-result" in box.result._dom_classes


@pytest.mark.parametrize("alpha, gamma", list(itertools.product([0.0, 0.01, 0.5, 0.99, 1.0], [0, 1, 16])))
def test_count_widget_extremes(alpha, gamma):
    box = count_widget()
    box.gamma.value = gamma
    box.alpha.value = alpha
    clean(box.result.value)
    assert f"γ = {gamma}" in box.result.value
    assert bytes(box.image.value[:4]) == PNG


def test_count_widget_alpha_one_and_zero():
    box = count_widget()
    box.alpha.value = 1.0
    box.gamma.value = 16
    assert "E[K] = 17.0000" in box.result.value and "P(K=17)=1.0000" in box.result.value
    box.alpha.value = 0.0
    assert "E[K] = 1.0000" in box.result.value and "P(K=1)=1.0000" in box.result.value


def test_count_text_huge_gamma():
    for a in (0.0, 0.5, 1.0):
        t = count_text(a, 10_000)
        clean(t)
        assert "…" in t
    assert "E[K] = 10001.0000" in count_text(1.0, 10_000)


def test_timing_widget_defaults_show_worked_values():
    box = timing_widget()
    v = box.result.value
    assert "217.78 tokens/s" in v and "166.67 tokens/s" in v
    assert "ratio 1.307×" in v and "break-even verification time 8.76 ms" in v
    assert "[assumed]" in v and "52.0% of proposals" in v
    assert bytes(box.image.value[:4]) == PNG
    assert "specdec-timing-result" in box.result._dom_classes


def test_timing_widget_slower_verification_loses():
    box = timing_widget()
    box.controls["verify_base_ms"].value = 12.0
    v = box.result.value
    assert "130.67 tokens/s" in v and "speculation loses" in v


EXTREMES = {
    "alpha": [0.0, 1.0],
    "gamma": [0, 16],
    "draft_per_token_ms": [0.0, 10.0],
    "verify_base_ms": [0.0, 30.0],
    "verify_per_position_ms": [0.0, 5.0],
    "overhead_ms": [0.0, 10.0],
    "baseline_ms": [0.5, 30.0],
}


@pytest.mark.parametrize("name", list(EXTREMES))
def test_timing_widget_each_slider_at_its_ends(name):
    box = timing_widget()
    for value in EXTREMES[name]:
        box.controls[name].value = value
        clean(box.result.value)
        clean(box.map_note.value)
        assert box.result.value


def test_timing_widget_corner_combinations():
    box = timing_widget()
    keys = ["alpha", "gamma", "draft_per_token_ms", "verify_base_ms", "overhead_ms"]
    for combo in itertools.product(*(EXTREMES[k] for k in keys)):
        for k, v in zip(keys, combo):
            box.controls[k].value = v
        clean(box.result.value)
        clean(box.map_note.value)


def test_timing_widget_all_costs_zero_shows_a_message():
    box = timing_widget()
    for k in ("draft_per_token_ms", "verify_base_ms", "verify_per_position_ms", "overhead_ms"):
        box.controls[k].value = 0.0
    assert "impossible" in box.result.value and "takes no time" in box.result.value
    clean(box.result.value)
    box.controls["overhead_ms"].value = 1.0  # recovers
    assert "tokens/s" in box.result.value


def test_timing_widget_map_note_when_gamma0_row_is_free():
    box = timing_widget()
    for k in ("verify_base_ms", "verify_per_position_ms", "overhead_ms"):
        box.controls[k].value = 0.0
    # γ = 2 still costs draft time, but the γ = 0 row of the map would take no time
    assert "tokens/s" in box.result.value
    assert "Map not drawn" in box.map_note.value
    clean(box.map_note.value)


def test_timing_text_huge_gamma_and_negative_break_even():
    t = timing_text(0.9, 10_000, draft_per_token_ms=1, verify_base_ms=6, verify_per_position_ms=0.1,
                    overhead_ms=1, baseline_ms=6)
    clean(t)
    t = timing_text(0.0, 4, draft_per_token_ms=5, verify_base_ms=6, overhead_ms=1, baseline_ms=6)
    assert "no verification time can make this pay" in t
    clean(t)


def test_figure_png_standalone():
    from specdec_core.plots.counts import count_distribution_figure

    assert figure_png(count_distribution_figure()).startswith(PNG)


def test_questions_grade():
    for q in (TIMING_QUESTION, ACCEPTANCE_LENGTH_QUESTION):
        ok, _ = grade(q, q.answer)
        assert ok
        wrong = (q.answer + 1) % len(q.options)
        assert not grade(q, wrong)[0]


def _pixels(png_bytes):
    import io

    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(bytes(png_bytes))).convert("RGB"), dtype=float)


def test_partial_repaint_matches_a_fresh_drawing():
    """After γ changes (partial repaints of the bar panel) the frame looks like a fresh widget's."""
    moved = count_widget()
    for g, a in ((16, 0.6), (0, 0.3), (7, 0.9), (3, 0.3)):
        moved.gamma.value = g
        moved.alpha.value = a
    fresh = count_widget(alpha=0.3, gamma=3)
    x, y = _pixels(moved.image.value), _pixels(fresh.image.value)
    assert x.shape == y.shape
    assert abs(x - y).mean() < 0.5  # same picture (up to a few antialiased edge pixels)


def test_timing_frames_match_a_fresh_drawing():
    moved = timing_widget()
    c = moved.controls
    for name, v in (("alpha", 0.9), ("gamma", 9), ("baseline_ms", 3.0), ("alpha", 0.75), ("gamma", 4),
                    ("baseline_ms", 6.0)):
        c[name].value = v
    fresh = timing_widget(alpha=0.75, gamma=4)
    assert abs(_pixels(moved.image.value) - _pixels(fresh.image.value)).mean() < 0.5

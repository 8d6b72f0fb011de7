"""The round stepper widget of notebook 03, driven from Python, and its static figures.

No statistics here: every assertion is exact (displayed text equals the pure
``counters_text``; clamping at both ends; no "nan" anywhere; CSS classes of the browser-test
contract present).
"""
import matplotlib

matplotlib.use("Agg")  # noqa: E402  (tests only: no display)

import matplotlib.pyplot as plt
import pytest

from specdec_core.replay import replay_steps
from specdec_core.sampling import RoundRecord
from specdec_core.widgets.stepper import (DEMO_GAMMA, DEMO_ROUNDS, counters_text, demo_records,
                                          round_stepper, step_html)


@pytest.fixture(scope="module")
def recs():
    return demo_records()


def test_demo_records_deterministic_and_rich(recs):
    again = demo_records()
    assert [(r.proposals, r.draws, r.emitted) for r in recs] == [(r.proposals, r.draws, r.emitted) for r in again]
    assert len(recs) == DEMO_ROUNDS and all(r.gamma == DEMO_GAMMA for r in recs)
    assert recs[0].stop is not None and recs[0].discarded > 0      # first round: reject + discard
    assert any(r.kind == "bonus" for r in recs)                    # a bonus round too
    assert all(r.p_rows is not None and r.q_rows is not None for r in recs)
    # consecutive rounds continue the same text
    assert all(recs[k + 1].prefix == recs[k].prefix + recs[k].emitted for k in range(len(recs) - 1))


def test_first_clicks_change_counters(recs):
    texts = [counters_text(recs, n) for n in range(7)]
    assert len(set(texts[:4])) == 4
    assert "rejected target work 1" in texts[4]
    assert texts[6].endswith("emitted output 2")


def test_contract_classes_and_descriptions(recs):
    box = round_stepper(recs)
    assert "specdec-step-next" in box.next_button._dom_classes
    assert "next" in box.next_button.description
    assert "specdec-counters" in box.counters._dom_classes
    assert box.counters.value == counters_text(recs, 0)
    assert "<" not in box.counters.value  # plain text: what the browser shows is the value


def test_click_next_and_back_past_both_ends(recs):
    box = round_stepper(recs)
    n_steps = len(replay_steps(recs))
    for k in range(1, n_steps + 4):
        box.next_button.click()
        assert box.counters.value == counters_text(recs, k)
        assert "nan" not in box.view.value.lower()
    assert box.slider.value == n_steps - 1
    for _ in range(n_steps + 4):
        box.back_button.click()
        assert "nan" not in box.view.value.lower()
    assert box.slider.value == 0 and box.counters.value == counters_text(recs, 0)
    box.back_button.click()
    assert box.slider.value == 0


def test_round_and_reset_buttons(recs):
    box = round_stepper(recs)
    starts = [s.index for s in box.steps if s.kind == "propose"]
    for k in starts:
        box.round_button.click()
        assert box.slider.value == k
        assert f"Round {box.steps[k].round + 1} of {len(recs)}" in box.view.value
    box.round_button.click()
    assert box.slider.value == len(box.steps) - 1
    box.round_button.click()  # past the end: stays
    assert box.slider.value == len(box.steps) - 1
    box.reset_button.click()
    assert box.slider.value == 0 and box.counters.value == counters_text(recs, 0)


def test_slider_drives_view(recs):
    box = round_stepper(recs)
    for i, s in enumerate(box.steps):
        box.slider.value = i
        assert box.counters.value == counters_text(recs, i)
        assert box.view.value == step_html(s, len(recs))
    reject = next(s for s in box.steps if s.kind == "reject")
    box.slider.value = reject.index
    assert "rejected ✗" in box.view.value and "u ≥ ratio" in box.view.value
    correct = next(s for s in box.steps if s.kind == "correct")
    box.slider.value = correct.index
    assert "residual (normalized)" in box.view.value and "correction" in box.view.value
    bonus = next(s for s in box.steps if s.kind == "bonus")
    box.slider.value = bonus.index
    assert "bonus row" in box.view.value


def test_stepper_without_recorded_distributions():
    rec = RoundRecord(prefix=(), proposals=(1,), q_x=(0.5,), p_x=(0.25,), ratios=(0.5,), draws=(0.9,),
                      stop=0, emitted=(2,), kind="correction")
    box = round_stepper([rec])
    for _ in range(6):
        box.next_button.click()
    assert "emitted output 1" in box.counters.value and "nan" not in box.view.value.lower()
    assert box.counters.value == counters_text(rec, 6)


def test_empty_records_widget():
    box = round_stepper([])
    box.next_button.click()
    assert box.counters.value.startswith("no rounds")


@pytest.mark.parametrize("kw,match", [
    (dict(seed=-1), "seed"), (dict(gamma=0), "gamma"), (dict(rounds=0), "rounds"),
    (dict(gamma=1.5), "gamma"), (dict(rounds=True), "rounds"),
])
def test_demo_records_bad_args(kw, match):
    with pytest.raises(ValueError, match=match):
        demo_records(**kw)


def test_static_figures_build(recs):
    from specdec_core.experiments import sample_first_tokens
    from specdec_core.plots.rounds import law_comparison_figure, round_figure, toy_tables_figure
    from specdec_core.toy import sequence_law, toy_draft, toy_target

    for k in range(len(recs)):
        plt.close(round_figure(recs, k))
    with pytest.raises(ValueError, match="round_index"):
        round_figure(recs, 99)
    plt.close(toy_tables_figure(toy_target(), toy_draft()))
    law = sequence_law(toy_target(), (), 3)
    broken = sample_first_tokens(n=200, correction="draft", seed=0)
    plt.close(law_comparison_figure(law, {"broken": broken}))

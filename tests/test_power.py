"""The power demo (specdec_core.power): a broken rule escapes a small test and not a large one."""
import pytest

from specdec_core.power import approximate_power, power_table
from specdec_core.worked import WORKED


def test_small_sample_misses_the_broken_rule_large_sample_catches_it():
    small, large = power_table(WORKED.p, WORKED.q, "target", (30, 1000), repeats=100, seed=1)
    assert small.power < 0.3          # with 30 samples "resample from p" usually passes
    assert large.power == 1.0         # with 1000 it never does (100 of 100 seeded experiments)


def test_correct_rule_rejects_about_as_often_as_the_threshold():
    (row,) = power_table(WORKED.p, WORKED.q, "residual", (500,), repeats=300, seed=2)
    assert row.rejections <= 3        # expected 0.3 false alarms at threshold 0.001


def test_approximation_grows_with_n_and_matches_the_measured_power_for_large_n():
    values = [approximate_power(WORKED.p, WORKED.q, "target", n) for n in (30, 100, 300, 1000)]
    assert values == sorted(values) and values[-1] > 0.999
    (row,) = power_table(WORKED.p, WORKED.q, "target", (100,), repeats=200, seed=3)
    assert abs(row.power - row.approximate) < 0.15
    assert approximate_power(WORKED.p, WORKED.q, "residual", 1000) == pytest.approx(1e-3)


def test_a_rule_that_writes_impossible_symbols_has_power_one():
    p, q = [0.5, 0.5, 0.0], [0.3, 0.3, 0.4]
    assert approximate_power(p, q, "draft", 10) == 1.0


@pytest.mark.parametrize("kw, match", [({"sizes": []}, "sizes"), ({"sizes": [0]}, "sizes"),
                                       ({"repeats": 0}, "repeats"), ({"seed": -1}, "seed"),
                                       ({"rule": "unnormalized"}, "rule")])
def test_bad_arguments_are_refused(kw, match):
    args = dict(rule="target", sizes=[10], repeats=2, seed=0) | kw
    with pytest.raises(ValueError, match=match):
        power_table(WORKED.p, WORKED.q, args.pop("rule"), args.pop("sizes"), **args)

"""The power demo (specdec_core.power): a broken rule escapes a small test and not a large one."""

import numpy as np
import pytest

from specdec_core.power import approximate_power, chi_square_power, power_table
from specdec_core.worked import WORKED


def test_small_sample_misses_the_broken_rule_large_sample_catches_it():
    small, large = power_table(WORKED.p, WORKED.q, "target", (30, 1000), repeats=100, seed=1)
    assert small.power < 0.3  # with 30 samples "resample from p" usually passes
    assert large.power == 1.0  # with 1000 it never does (100 of 100 seeded experiments)


def test_correct_rule_rejects_about_as_often_as_the_threshold():
    (row,) = power_table(WORKED.p, WORKED.q, "residual", (500,), repeats=300, seed=2)
    assert row.rejections <= 3  # expected 0.3 false alarms at threshold 0.001


def test_approximation_grows_with_n_and_matches_the_measured_power_for_large_n():
    values = [approximate_power(WORKED.p, WORKED.q, "target", n) for n in (30, 100, 300, 1000)]
    assert values == sorted(values) and values[-1] > 0.999
    (row,) = power_table(WORKED.p, WORKED.q, "target", (100,), repeats=200, seed=3)
    assert abs(row.power - row.approximate) < 0.15
    assert approximate_power(WORKED.p, WORKED.q, "residual", 1000) == pytest.approx(1e-3)


def test_a_rule_that_writes_impossible_symbols_has_power_one():
    p, q = [0.5, 0.5, 0.0], [0.3, 0.3, 0.4]
    assert approximate_power(p, q, "draft", 10) == 1.0


def test_chi_square_power():
    law = {0: 0.5, 1: 0.5}
    assert chi_square_power(law, law, 100) == pytest.approx(1e-3)
    assert chi_square_power(law, {0: 0.7, 1: 0.3}, 2000) > 0.999
    assert chi_square_power(law, {0: 0.5, 1: 0.4, 2: 0.1}, 10) == 1.0
    assert chi_square_power({0: 1.0}, {0: 1.0}, 50) == 0.0  # one cell: it cannot reject


def test_chi_square_power_uses_the_tests_cells():
    """Cells expected fewer than 5 times are pooled, as chi_square_gof pools them: moving mass
    between two small cells is invisible to the test at n = 20 and visible at n = 2000."""
    law = {0: 0.9, 1: 0.05, 2: 0.05}
    alt = {0: 0.9, 1: 0.09, 2: 0.01}
    assert chi_square_power(law, alt, 20) == pytest.approx(1e-3)  # one pooled cell {1, 2}
    assert chi_square_power(law, alt, 2000) > 0.999


def test_approximate_power_is_chi_square_power_of_the_rules_law():
    from specdec_core.verify import output_distribution_with

    out = output_distribution_with(WORKED.p, WORKED.q, "target")
    law = {i: float(v) for i, v in enumerate(WORKED.p)}
    alt = {i: float(v) for i, v in enumerate(out)}
    assert approximate_power(WORKED.p, WORKED.q, "target", 300) == chi_square_power(law, alt, 300)


@pytest.mark.parametrize(
    "args, match",
    [
        ((0,), "n must be a positive integer"),
        ((True,), "n must be"),
        ((10, {"threshold": 1.5}), "threshold"),
        ((10, {"min_expected": 0}), "min_expected"),
    ],
)
def test_chi_square_power_refuses_bad_arguments(args, match):
    law = {0: 0.5, 1: 0.5}
    kw = args[1] if len(args) > 1 else {}
    with pytest.raises(ValueError, match=match):
        chi_square_power(law, law, args[0], **kw)
    with pytest.raises(ValueError, match="alternative"):
        chi_square_power(law, {0: 0.5}, 10)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"sizes": []}, "sizes"),
        ({"sizes": [0]}, "sizes"),
        ({"repeats": 0}, "repeats"),
        ({"seed": -1}, "seed"),
        ({"rule": "unnormalized"}, "rule"),
    ],
)
def test_bad_arguments_are_refused(kw, match):
    args = dict(rule="target", sizes=[10], repeats=2, seed=0) | kw
    with pytest.raises(ValueError, match=match):
        power_table(WORKED.p, WORKED.q, args.pop("rule"), args.pop("sizes"), **args)


def test_null_statistics_follow_the_chi_square_law_roughly():
    """A correct sampler's statistics: reproducible, about as often beyond a quantile as the
    chi-square law says (2 dof for the worked example at n = 300: no pooling)."""
    from scipy.stats import chi2

    from specdec_core import WORKED
    from specdec_core.power import null_statistics

    a = null_statistics(WORKED.p, WORKED.q, 300, repeats=400, seed=3)
    assert a.shape == (400,) and (a >= 0).all()
    assert np.array_equal(a, null_statistics(WORKED.p, WORKED.q, 300, repeats=400, seed=3))
    share = float(np.mean(a >= chi2.isf(0.1, 2)))
    assert abs(share - 0.1) < 4 * (0.1 * 0.9 / 400) ** 0.5
    with pytest.raises(ValueError, match="repeats"):
        null_statistics(WORKED.p, WORKED.q, 300, repeats=0, seed=3)


def test_null_distribution_figure_draws():
    import matplotlib

    matplotlib.use("Agg")
    from specdec_core.plots.residual import null_distribution_figure

    fig = null_distribution_figure(np.random.default_rng(0).chisquare(2, 500), 2)
    assert fig.axes[0].get_xlabel() == "statistic X²"

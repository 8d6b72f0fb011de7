"""Many seeded sequences of the toy language against the exact target law (notebook 03).

Statistic: Pearson chi-square of the first L = 3 generated tokens of N seeded generations
against toy.sequence_law(target, (), 3) (cells with expected count < 5 pooled), through
lawcheck.chi_square_gof. Threshold: reject "same law" when the p-value < 0.001. Seeds are
fixed, so each verdict is deterministic: the correct samplers pass at these seeds, and the
broken ones (correction from q, from p) give p-values many orders of magnitude below 0.001.
"""

from collections import Counter

import pytest

from specdec_core.experiments import LawExperiment, law_experiment, same_seed_texts, sample_first_tokens
from specdec_core.lawcheck import DEFAULT_THRESHOLD
from specdec_core.toy import decode

N = 3000


@pytest.mark.parametrize("method,seed", [("speculative", 0), ("speculative", 1), ("autoregressive", 0)])
def test_correct_samplers_pass(method, seed):
    e = law_experiment(method, n=N, seed=seed)
    assert e.gof.threshold == DEFAULT_THRESHOLD == 1e-3
    assert not e.gof.rejected, str(e.gof)
    assert e.impossible == 0 and sum(e.counts.values()) == N


def test_broken_draft_correction_rejected():
    e = law_experiment(n=N, seed=0, correction="draft")
    assert e.gof.rejected and e.gof.p_value < 1e-6, str(e.gof)
    assert e.impossible > 0  # it even emits sequences the target can never produce (D first)
    assert "REJECT" in str(e.gof)


def test_broken_target_correction_rejected_with_finite_statistic():
    e = law_experiment(n=N, seed=0, correction="target")
    assert e.impossible == 0 and e.gof.statistic < float("inf")
    assert e.gof.p_value < 1e-6, str(e.gof)


def test_progress_callback_called():
    calls = []
    counts = sample_first_tokens(n=237, seed=1, progress=lambda d, t: calls.append((d, t)), updates=10)
    assert calls[-1] == (237, 237)
    assert [d for d, _ in calls] == sorted({d for d, _ in calls})  # increasing, no repeats
    assert all(t == 237 for _, t in calls) and 10 <= len(calls) <= 12
    assert sum(counts.values()) == 237


def test_deterministic_and_seed_sensitive():
    a = sample_first_tokens(n=300, seed=4)
    assert a == sample_first_tokens(n=300, seed=4)
    assert a != sample_first_tokens(n=300, seed=5)
    assert isinstance(a, Counter) and all(len(k) == 3 for k in a)


def test_experiment_record_fields():
    e = law_experiment("autoregressive", n=50, seed=0, length=2)
    assert isinstance(e, LawExperiment) and e.label == "autoregressive" and e.gamma == 0
    assert sum(e.empirical().values()) == 1
    assert law_experiment(n=50, correction="uniform").label == "speculative, correction='uniform'"


def test_same_seed_different_text():
    spec, ar = same_seed_texts(0, n_tokens=12)
    assert len(spec) == len(ar) == 12 and spec != ar
    assert (spec, ar) == same_seed_texts(0, n_tokens=12)
    assert decode(spec) == "B D A A C D B B C D A B" and decode(ar) == "B C A A C D B D B D B B"


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(method="beam", n=10), "method"),
        (dict(n=0), "n must be"),
        (dict(n=10, length=0), "length"),
        (dict(n=10, gamma=-1), "gamma"),
        (dict(n=10, seed=1.5), "seed"),
        (dict(n=10, correction="nope"), "correction"),
        (dict(n=10, length=4, max_new_tokens=3), "max_new_tokens"),
        (dict(n=10, progress="bar"), "progress"),
        (dict(n=10, updates=0), "updates"),
    ],
)
def test_bad_inputs(kw, match):
    with pytest.raises(ValueError, match=match):
        sample_first_tokens(**kw)


def test_same_seed_texts_bad_inputs():
    with pytest.raises(ValueError, match="n_tokens"):
        same_seed_texts(0, n_tokens=0)


def test_total_variation_exact():
    e = law_experiment("autoregressive", n=40, seed=0, length=1)
    from fractions import Fraction

    expected = (
        sum(
            abs(Fraction(e.counts.get(k, 0), 40) - Fraction(e.law.get(k, 0)))
            for k in set(e.law) | set(e.counts)
        )
        / 2
    )
    assert e.total_variation() == expected and 0 <= e.total_variation() <= 1

"""Prefix-dependent processors (notebook 07): per speculative position with that position's
prefix the sampler keeps the processed target's law; with the verified prefix only it does not.

Exact part: ``speculative_sequence_law`` (the sampler's exact output law) equals the processed
target's ``sequence_law`` for the right wiring, and differs by a stated total variation for the
stale one. Law test — statistic: Pearson chi-square of N = 2000 generated 3-token texts against
the processed target's exact law (cells expected < 5 pooled); threshold: reject when the p-value is
below 0.001; power against the stale-target bug (TV 0.141): ``chi_square_power`` ≥ 0.999 at this N.
Seeds fixed, so each outcome is deterministic.
"""

from collections import Counter
from fractions import Fraction as F

import numpy as np
import pytest

from specdec_core import chi_square_gof, speculative_generate
from specdec_core.power import chi_square_power
from specdec_core.processors import (
    Grammar,
    RepetitionPenalty,
    StaleProcessed,
    at_most_once,
    processed,
    speculative_sequence_law,
)
from specdec_core.toy import sequence_law, toy_draft, toy_target

T, D = toy_target(), toy_draft()
PENALTY, GRAMMAR = RepetitionPenalty(F(3)), at_most_once(3, 4)
PROCS = (PENALTY, GRAMMAR)
N, L, GAMMA = 2000, 3, 2


def tv(a, b):
    return sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b)) / 2


@pytest.mark.parametrize("gamma", [1, 2, 3])
@pytest.mark.parametrize("procs", [(PENALTY,), (GRAMMAR,), PROCS], ids=["penalty", "grammar", "both"])
def test_right_wiring_has_the_processed_target_law_exactly(procs, gamma):
    pt, pd = processed(T, *procs), processed(D, *procs)
    assert speculative_sequence_law(pt, pd, (), 4, gamma) == sequence_law(pt, (), 4)


def test_stale_target_breaks_the_law_exactly_and_a_stale_honest_draft_does_not():
    pt, pd = processed(T, *PROCS), processed(D, *PROCS)
    want = sequence_law(pt, (), 4)
    stale = speculative_sequence_law(StaleProcessed(T, PROCS), pd, (), 4, GAMMA)
    assert tv(stale, want) == pytest.approx(0.19273091518403473, abs=1e-12)
    # the grammar frozen at the round's start lets D appear twice: mass outside the support
    assert sum(v for k, v in stale.items() if k not in want) == F(27, 4480)
    # a draft processed with the stale prefix but reporting what it sampled is only slower
    assert speculative_sequence_law(pt, StaleProcessed(D, PROCS), (), 4, GAMMA) == want
    # the grammar alone: stale only from γ = 2 on (one proposal never sees a speculative D)
    g_t, g_d = processed(T, GRAMMAR), processed(D, GRAMMAR)
    assert speculative_sequence_law(StaleProcessed(T, (GRAMMAR,)), g_d, (), 4, 2) != sequence_law(g_t, (), 4)


def _counts(target, draft, seed):
    rng = np.random.default_rng(seed)
    return Counter(
        speculative_generate(target, draft, (), gamma=GAMMA, max_new_tokens=L, rng=rng).tokens
        for _ in range(N)
    )


def test_law_test_keeps_the_right_wiring_and_catches_the_stale_one():
    pt, pd = processed(T, *PROCS), processed(D, *PROCS)
    law = sequence_law(pt, (), L)
    stale_t = StaleProcessed(T, PROCS)
    alternative = speculative_sequence_law(stale_t, pd, (), L, GAMMA)
    assert tv(alternative, law) > F(14, 100)
    assert chi_square_power(law, alternative, N) > 0.999
    right = chi_square_gof(_counts(pt, pd, 11), law)
    assert not right.rejected, str(right)
    wrong = chi_square_gof(_counts(stale_t, pd, 12), law)
    assert wrong.rejected and wrong.p_value < 1e-9, str(wrong)


def test_processors_refuse_bad_input():
    with pytest.raises(ValueError, match="penalty"):
        RepetitionPenalty(0)
    with pytest.raises(ValueError, match="processor"):
        processed(T)
    with pytest.raises(ValueError, match="transitions"):
        Grammar(0, {})
    with pytest.raises(ValueError, match="token"):
        at_most_once(4, 4)
    only_d = Grammar(0, {(0, 3): 0})  # only D allowed: the target's start row has no D
    with pytest.raises(ValueError, match="no probability mass"):
        processed(T, only_d).exact(())


# ---- a grammar-processed target with an ordinary draft (issue 38, C5-1): the draft proposes tokens
# the grammar forbids; those proposals are rejected and the rows after them are never scored, so
# the sampler neither crashes nor leaves the processed target's law.
ONCE0 = at_most_once(0, 4)


@pytest.mark.parametrize("gamma", [1, 2, 3])
def test_grammar_target_with_an_ordinary_draft_has_the_processed_law_exactly(gamma):
    pt = processed(T, ONCE0)
    assert speculative_sequence_law(pt, D, (), 4, gamma) == sequence_law(pt, (), 4)


@pytest.mark.parametrize(
    "sampler",
    ["speculative", "tree chain 2", "tree wide 2"],
)
def test_law_test_grammar_target_with_an_ordinary_draft(sampler):
    """Statistic: Pearson chi-square of N = 2000 three-token texts against the processed target's
    exact law; threshold p < 0.001; power against the stale-target bug (TV 0.0675): ≥ 0.99."""
    from specdec_core import tree_sampling as ts
    from specdec_core import trees as tr

    pt = processed(T, ONCE0)
    law = sequence_law(pt, (), L)
    alternative = speculative_sequence_law(StaleProcessed(T, (ONCE0,)), D, (), L, GAMMA)
    assert tv(alternative, law) > F(6, 100) and chi_square_power(law, alternative, N) > 0.99
    rng = np.random.default_rng(21)
    if sampler == "speculative":
        texts = (
            speculative_generate(pt, D, (), gamma=GAMMA, max_new_tokens=L, rng=rng).tokens for _ in range(N)
        )
    else:
        tree = tr.chain_tree(2) if sampler == "tree chain 2" else tr.family_tree("wide", 2)
        texts = (ts.tree_generate(pt, D, (), tree, L, rng) for _ in range(N))
    result = chi_square_gof(Counter(texts), law)
    assert not result.rejected, str(result)

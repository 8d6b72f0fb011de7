"""γ policies (specdec_core.policies): a schedule reacting to past rounds and a stop rule on the
draft's confidence keep the target's law; a rule that peeks at the target's verdict does not.

Law test — statistic: Pearson chi-square of N = 3000 generated 4-token texts on the toy language
against the target's exact law ``toy.sequence_law`` (cells expected < 5 pooled); threshold: reject
when the p-value < 0.001; power: against the peeking rule's exact law (TV 1/8 from the target),
``chi_square_power`` > 0.9999 at this N, and the peeking sampler itself is rejected by the same test.
Seeds fixed: each outcome is deterministic.
"""

from collections import Counter
from fractions import Fraction as F

import numpy as np
import pytest

from specdec_core import chi_square_gof, speculative_generate
from specdec_core.policies import (
    ConfidenceStop,
    FixedGamma,
    GrowShrink,
    PrefixGamma,
    as_policy,
    peeking_generate,
    peeking_round_law,
    peeking_sequence_law,
)
from specdec_core.power import chi_square_power
from specdec_core.replay import replay_steps
from specdec_core.toy import sequence_law, toy_draft, toy_target
from specdec_core.verify import acceptance_probability

T, D = toy_target(), toy_draft()
N, L = 3000, 4
POLICIES = {
    "grow-shrink": GrowShrink(start=2, grow=2, shrink=1, low=1, high=6),
    "confidence-stop": ConfidenceStop(max_gamma=5, threshold=F(1, 3)),
}


def tv(a, b):
    return sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b)) / 2


def test_grow_shrink_follows_past_rounds_and_records_its_gamma():
    pol = POLICIES["grow-shrink"]
    res = speculative_generate(T, D, (), gamma=pol, max_new_tokens=60, rng=np.random.default_rng(3))
    recs = res.records
    assert recs[0].gamma_chosen == 2
    for prev, rec in zip(recs, recs[1:]):
        full = prev.stop is None and prev.gamma == prev.gamma_chosen
        want = prev.gamma_chosen + 2 if full else prev.gamma_chosen - 1
        assert rec.gamma_chosen == max(1, min(6, want))
        assert rec.gamma <= rec.gamma_chosen
    assert len({r.gamma_chosen for r in recs}) > 2  # it really moves
    steps = replay_steps(recs)  # the stepper replays rounds of different γ
    assert steps[-1].counters.proposed == res.proposed
    assert steps[-1].counters.emitted == len(res.tokens)


def test_confidence_stop_cuts_after_the_first_unconfident_proposal():
    pol = POLICIES["confidence-stop"]
    res = speculative_generate(
        T, D, (), gamma=pol, max_new_tokens=60, rng=np.random.default_rng(4), record_distributions=True
    )
    cut = 0
    for r in res.records:
        low = [q < F(1, 3) for q in r.q_x]
        assert not any(low[:-1])  # only the last proposal may be unconfident
        cut += bool(low) and r.gamma < min(r.gamma_chosen, 5) and low[-1]
    assert cut > 0


def test_fixed_int_and_fixed_policy_are_the_same_sampler():
    a = speculative_generate(T, D, (), gamma=3, max_new_tokens=20, rng=np.random.default_rng(5))
    b = speculative_generate(T, D, (), gamma=FixedGamma(3), max_new_tokens=20, rng=np.random.default_rng(5))
    assert a.tokens == b.tokens and a.records == b.records
    assert all(r.gamma_chosen == 3 for r in a.records)


def _counts(gamma, seed):
    rng = np.random.default_rng(seed)
    return Counter(
        speculative_generate(T, D, (), gamma=gamma, max_new_tokens=L, rng=rng).tokens for _ in range(N)
    )


@pytest.mark.parametrize("name,seed", [("grow-shrink", 21), ("confidence-stop", 22)])
def test_policies_keep_the_target_law(name, seed):
    res = chi_square_gof(_counts(POLICIES[name], seed), sequence_law(T, (), L))
    assert not res.rejected, str(res)


def test_peeking_rule_breaks_the_law_exactly_and_is_caught():
    p, q = list(T.exact(())), list(D.exact(()))
    alpha = acceptance_probability(p, q)
    first = Counter()
    for seq, v in peeking_round_law(T, D, (), 2).items():
        first[seq[0]] += v
    want_first = [min(a, b) + (1 - alpha) * a for a, b in zip(p, q)]
    assert [first[x] for x in range(4)] == want_first != p
    law = sequence_law(T, (), L)
    peek = peeking_sequence_law(T, D, (), L, 2)
    assert tv(peek, law) == F(1, 8)
    assert chi_square_power(law, peek, N) > 0.9999
    rng = np.random.default_rng(23)
    texts = Counter(peeking_generate(T, D, (), gamma=2, max_new_tokens=L, rng=rng) for _ in range(N))
    res = chi_square_gof(texts, law)
    assert res.rejected and res.p_value < 1e-9, str(res)


def test_policy_arguments_are_validated():
    for bad in (-1, 2.0, True, "3", object()):
        with pytest.raises(ValueError, match="gamma"):
            as_policy(bad)
    with pytest.raises(ValueError, match="start"):
        GrowShrink(start=0, low=1)
    with pytest.raises(ValueError, match="threshold"):
        ConfidenceStop(threshold=1.5)

    class Bad:
        def next_gamma(self, records, prefix):
            return -2

    with pytest.raises(ValueError, match="next_gamma"):
        speculative_generate(T, D, (), gamma=Bad(), max_new_tokens=3, rng=np.random.default_rng(0))


def test_prefix_gamma_sees_the_verified_prefix_and_keeps_the_law():
    seen = []

    def rule(ctx):
        seen.append(ctx)
        return 3 if ctx and ctx[-1] == 0 else 1  # long drafts after A, where the models agree

    res = speculative_generate(
        T, D, (2,), gamma=PrefixGamma(rule, "after A"), max_new_tokens=20, rng=np.random.default_rng(8)
    )
    assert seen[0] == (2,) and all(s == (2,) + res.tokens[: len(s) - 1] for s in seen)
    assert [r.gamma_chosen for r in res.records] == [rule(r.prefix) for r in res.records]
    law = chi_square_gof(_counts(PrefixGamma(rule), 24), sequence_law(T, (), L))
    assert not law.rejected, str(law)
    with pytest.raises(ValueError, match="prefix"):
        speculative_generate(
            T, D, (), gamma=PrefixGamma(lambda c: -1), max_new_tokens=3, rng=np.random.default_rng(0)
        )

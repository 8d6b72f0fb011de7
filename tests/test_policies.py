"""γ policies (specdec_core.policies): a schedule reacting to past rounds and a stop rule on the
draft's confidence keep the target's law; a rule that peeks at the target's verdict does not.

Law test — statistic: Pearson chi-square of N = 3000 generated 4-token texts on the toy language
against the target's exact law ``toy.sequence_law`` (cells expected < 5 pooled); threshold: reject
when the p-value < 0.001; power: against the peeking rule's exact law (TV 1/8 from the target),
``chi_square_power`` > 0.9999 at this N, and the peeking sampler itself is rejected by the same test.
Seeds fixed: each outcome is deterministic.

Exact test: ``ConfidenceStop``'s law of L-token texts, enumerated in fractions round by round as the
sampler runs them, equals the target's; a broken variant (an unconfident token withheld instead of
proposed: the decision reads x_i itself) is caught by the same comparison. Notebook 04's condition (5)
is checked in its markdown.
"""

import json
import pathlib
from collections import Counter
from fractions import Fraction as F

import numpy as np
import pytest

from specdec_core import chi_square_gof, speculative_generate
from specdec_core.peeking import peeking_generate, peeking_round_law, peeking_sequence_law
from specdec_core.policies import (
    ConfidenceStop,
    FixedGamma,
    GrowShrink,
    PrefixGamma,
    as_policy,
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


# ---------------------------------------------------------------- ConfidenceStop, exactly


def stop_rule_round_law(keep, withhold=False):
    """The exact law ({emitted tokens: Fraction}) of one round of ``speculative_generate`` whose
    drafting stops after the first token x with ``keep(q_row, x)`` False (x stays a proposal: the
    decision on position i + 1 reads only x_1 … x_i, condition (5) of notebook 04). ``withhold=True``
    is the broken variant that decides on x_i itself: an unconfident x is drawn but not proposed."""

    def round_law(target, draft, start, g):
        law = {}

        def add(seq, pr):
            law[seq] = law.get(seq, F(0)) + pr

        def rec(acc, prob, go_on):
            p = list(target.exact(tuple(start) + acc))
            if len(acc) == g or not go_on:  # nothing more proposed: bonus from p
                for y, py in enumerate(p):
                    if py:
                        add(acc + (y,), prob * py)
                return
            q = list(draft.exact(tuple(start) + acc))
            sure = [not withhold or keep(q, x) for x in range(len(q))]
            if not all(sure):  # withheld: the round ends here with a bonus
                rec(acc, prob * sum(qx for qx, s in zip(q, sure) if not s), False)
            miss = sum(max(qx - px, 0) for px, qx, s in zip(p, q, sure) if s)  # rejected proposals
            alpha = sum(min(px, qx) for px, qx in zip(p, q))
            for y, (py, qy) in enumerate(zip(p, q)):
                if py > qy:  # correction from the residual (p − q)⁺ / (1 − α)
                    add(acc + (y,), prob * miss * (py - qy) / (1 - alpha))
            for x, (px, qx) in enumerate(zip(p, q)):
                if min(px, qx) and sure[x]:
                    rec(acc + (x,), prob * min(px, qx), withhold or keep(q, x))

        rec((), F(1), True)
        return law

    return round_law


def test_stop_rule_law_without_a_stop_is_the_library_round_law():
    from specdec_core.processors import round_output_law

    never = stop_rule_round_law(lambda q, x: True)
    for start, g in (((), 3), ((0,), 2), ((3,), 4)):
        assert never(T, D, start, g) == round_output_law(T, D, start, g)


@pytest.mark.parametrize("max_gamma", [1, 2, 5])
@pytest.mark.parametrize("threshold", [F(1, 5), F(1, 3), F(1, 2), F(9, 10)])
def test_confidence_stop_keeps_the_target_law_exactly(max_gamma, threshold):
    """The stop decision is a function of q's probabilities of tokens already drafted, so the
    exact law of L-token texts is p's, in fractions; the rounds do stop (their law differs from
    the fixed-γ round's), and deciding on the token itself (withholding it) breaks the law."""
    from specdec_core.processors import chain_round_laws, round_output_law

    pol = ConfidenceStop(max_gamma=max_gamma, threshold=threshold)
    law = sequence_law(T, (), L)
    stopping = stop_rule_round_law(pol.keep_drafting)
    assert chain_round_laws(stopping, T, D, (), L, pol.max_gamma) == law
    if max_gamma > 1 and threshold > F(1, 5):  # some drafted token is below the threshold
        assert any(
            stopping(T, D, (s,), max_gamma) != round_output_law(T, D, (s,), max_gamma) for s in range(4)
        )
    if F(1, 5) < threshold < F(9, 10):  # at 9/10 every token is withheld: plain sampling, exact
        broken = chain_round_laws(
            stop_rule_round_law(pol.keep_drafting, withhold=True), T, D, (), L, max_gamma
        )
        assert sum(broken.values()) == 1 and tv(broken, law) > 0


def test_notebook_04_states_condition_5_on_earlier_draft_tokens_only():
    nb = next((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("04-*.ipynb"))
    md = [
        "".join(c["source"])
        for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "markdown"
    ]
    (cell,) = [s for s in md if r"\tag{5}" in s]
    eq = cell[cell.index("$$") : cell.index(r"\tag{5}")]
    assert r"x_1, \dots, x_{i-1}" in eq and r"q_1, \dots, q_{i-1}" in eq  # earlier draft tokens and rows
    assert "draws in round" not in eq and "x_i," not in eq and "accepted" not in eq  # not x_i, no verdicts
    for phrase in (
        "the target's p in round t",
        "were accepted in round t",
        "$x_i$ itself",
        "`ConfidenceStop` satisfies (5)",
    ):
        assert phrase in cell, phrase
    assert "stopping rule on q's sequence" in cell and "peeking rule" in cell

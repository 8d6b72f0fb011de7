"""Confidence-shaped candidates and trees (issue 37, item 2; notebook 08): which ways of letting
the draft's confidence choose the candidates keep the target's law, by exact enumeration.

* top-k candidates taken deterministically (with or without a confidence threshold) and verified
  as one-hot proposals, the residual updated as siblings fail: the law is p (TV 0);
* candidates sampled without replacement under recursive rejection: the law is p (TV 0), computed
  here a second way (every tuple of candidates, then the verifier on it);
* candidates sampled and then pruned by their own q, the rest verified as draws from q: not p
  (TV > 0) — notebook 04's withholding bias at one position and in a tree.

Each exactness test has a deliberately broken variant (monkeypatched into the same code) that it
catches.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import exact_distribution

from specdec_core import multidraft, total_variation
from specdec_core.multidraft import (
    candidate_outcomes,
    check_children,
    multi_draft_law,
    multi_draft_outcomes,
    top_k_tokens,
)
from specdec_core.toy import sequence_law, toy_draft, toy_target
from specdec_core.tree_laws import compare_with_target, last_token_key, tree_round_stats
from specdec_core.trees import branching_tree, broom_tree, chain_tree, family_tree

P, Q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)]  # notebook 08's worked example
SHAPES = [chain_tree(3), family_tree("wide", 3), branching_tree((2, 2)), broom_tree(2, 4)]


def law_of(outcomes, V):
    """The emitted token's law from (accepted, fallbacks)."""
    accepted, fallbacks = outcomes
    out = [F(0)] * V
    for (_, x), m in accepted.items():
        out[x] += m
    for m, dist in fallbacks:
        out = [o + m * d for o, d in zip(out, dist)]
    return out


def tv(a, b):
    return sum(abs(x - y) for x, y in zip(a, b)) / 2


@st.composite
def pq_k(draw):
    n = draw(st.integers(2, 5))
    p, q = draw(exact_distribution(n)), draw(exact_distribution(n))
    support = sum(1 for v in q if v > 0)
    return p, q, draw(st.integers(1, min(3, support)))


# ---------------------------------------------------------------- one position


def test_worked_example_values():
    """The numbers notebook 08 prints."""
    assert top_k_tokens(Q, 2) == (2, 1)
    top = multi_draft_law(P, Q, 2, children="top_k")
    assert list(top.output) == P and top.acceptance == F(2, 5)  # = p(C) + p(B)
    pruned = multi_draft_law(P, Q, 1, children="pruned", threshold=F(1, 4))
    assert list(pruned.output) == [F(13, 25), F(9, 25), F(3, 25)]
    assert total_variation(pruned.output, P) == F(2, 25)
    wo = multi_draft_law(P, Q, 2, replacement=False)
    assert list(wo.output) == P and wo.acceptance == F(19, 25)


@settings(max_examples=150, deadline=None)
@given(pq_k(), st.sampled_from([None, F(1, 10), F(1, 4), F(1, 2)]))
def test_top_k_one_hot_with_residual_update_keeps_p(case, threshold):
    p, q, k = case
    res = multi_draft_law(p, q, k, children="top_k", threshold=threshold)
    assert list(res.output) == list(p)
    kept = [x for x in top_k_tokens(q, k) if threshold is None or q[x] >= threshold]
    assert res.acceptance == sum((p[x] for x in kept), F(0))  # accepted iff the output is a candidate


@settings(max_examples=150, deadline=None)
@given(pq_k(), st.booleans(), st.sampled_from(["recursive", "no_update", "typical"]))
def test_tuple_enumeration_agrees_with_the_integrated_one(case, replacement, rule):
    """Two independent enumerations of sampled candidates give the same outcomes; so recursive
    rejection without replacement keeps p by a second computation."""
    p, q, k = case
    a = law_of(multi_draft_outcomes(p, q, k, rule=rule, replacement=replacement), len(p))
    b = law_of(candidate_outcomes(p, q, k, rule=rule, replacement=replacement), len(p))
    assert a == b
    if rule == "recursive":
        assert b == list(p)


def test_pruning_sampled_candidates_by_their_own_q_is_biased():
    for k, replacement in ((1, True), (2, True), (2, False)):
        out = multi_draft_law(P, Q, k, children="pruned", threshold=F(1, 4), replacement=replacement).output
        assert tv(out, P) > 0, (k, replacement)
    # a threshold no token falls below prunes nothing: then it is recursive rejection again
    assert list(multi_draft_law(P, Q, 2, children="pruned", threshold=F(0)).output) == P


# ---------------------------------------------------------------- broken variants are caught


def test_broken_top_k_verified_as_if_sampled_from_q_is_caught(monkeypatch):
    """Divide a top-k candidate by q(x) instead of 1 (it was not drawn from q): biased."""
    monkeypatch.setattr(multidraft, "_one_hot", lambda x, like: like)
    assert tv(multi_draft_law(P, Q, 2, children="top_k").output, P) > 0


def test_broken_top_k_without_residual_update_is_caught():
    out = multi_draft_law(P, Q, 2, children="top_k", rule="no_update").output
    assert tv(out, P) > 0


def test_broken_without_replacement_keeping_siblings_in_q_is_caught(monkeypatch):
    """Verify draws without replacement against q itself (siblings not removed): biased."""
    p2, q2 = [F(1, 2), F(1, 4), F(1, 4)], [F(1, 10), F(4, 5), F(1, 10)]  # 08's peaked draft
    assert law_of(candidate_outcomes(p2, q2, 2, replacement=False), 3) == p2
    monkeypatch.setattr(multidraft, "_next_proposal", lambda s, x: s)
    assert law_of(candidate_outcomes(p2, q2, 2, replacement=False), 3) == [F(3, 8), F(1, 4), F(3, 8)]


# ---------------------------------------------------------------- trees on the toy language


@pytest.mark.parametrize("tree", SHAPES, ids=lambda t: str(t.parents))
@pytest.mark.parametrize(
    "kw",
    [
        {"children": "top_k"},
        {"children": "top_k", "threshold": F(1, 4)},
        {"children": "sampled", "replacement": False},
    ],
    ids=["top_k", "top_k, q >= 1/4", "sampled without replacement"],
)
def test_lossless_confidence_shaped_trees_keep_the_target_law(tree, kw):
    c = compare_with_target(toy_target(), toy_draft(), (), tree, 3, key=last_token_key, **kw)
    assert c.tv == 0 and c.law == sequence_law(toy_target(), (), 3)


@pytest.mark.parametrize("tree", [branching_tree((2, 2)), chain_tree(3)], ids=lambda t: str(t.parents))
def test_trees_pruning_sampled_children_by_their_own_q_are_biased(tree):
    c = compare_with_target(
        toy_target(), toy_draft(), (), tree, 3, key=last_token_key, children="pruned", threshold=F(1, 4)
    )
    assert c.tv > 0


def test_tree_values_notebook_08_prints():
    T, D, tree = toy_target(), toy_draft(), branching_tree((2, 2))
    pruned = compare_with_target(T, D, (), tree, 3, key=last_token_key, children="pruned", threshold=F(1, 4))
    assert pruned.tv == F(126, 625)
    top = tree_round_stats(T, D, (), tree, key=last_token_key, children="top_k", threshold=F(1, 4))
    assert top.expected_emitted == F(21, 10) and top.positions == 6  # a slot below 1/4 stays empty


def test_float_inputs_agree_with_exact():
    pf, qf = np.array(P, float), np.array(Q, float)
    for kw in ({"children": "top_k"}, {"children": "pruned", "threshold": 0.25}):
        exact = multi_draft_law(P, Q, 2, **{**kw, **({"threshold": F(1, 4)} if "threshold" in kw else {})})
        np.testing.assert_allclose(multi_draft_law(pf, qf, 2, **kw).output, np.array(exact.output, float))


@pytest.mark.parametrize(
    "children, threshold, match",
    [
        ("greedy", None, "children must be one of"),
        ("pruned", None, "threshold is required"),
        ("sampled", F(1, 4), "threshold is not used"),
        ("top_k", F(3, 2), "threshold must be in"),
        ("pruned", "0.2", "threshold must be"),
    ],
)
def test_bad_children_arguments(children, threshold, match):
    with pytest.raises(ValueError, match=match):
        check_children(children, threshold)
    with pytest.raises(ValueError, match=match):
        multi_draft_law(P, Q, 2, children=children, threshold=threshold)


def test_top_k_refuses_more_candidates_than_the_draft_supports():
    with pytest.raises(ValueError, match="k = 3 candidates without replacement"):
        top_k_tokens([F(1, 2), F(1, 2), F(0)], 3)


# ---------------------------------------------------------------- the samplers against the exact laws

#: Law test of the samplers: Pearson chi-square of N three-token texts from the 2 × 2 tree against
#: an exact law (cells expected below 5 pooled), rejected when the p-value is below THRESHOLD; the
#: power against the biased law at this N is computed and required to be at least 0.99.
N, THRESHOLD = 800, 0.001


def tree_texts(n, seed, verify_children=None, **kw):
    """n texts of 3 tokens from 2 × 2 tree rounds; ``verify_children`` verifies as another rule
    than the one drafted (the broken variant)."""
    from specdec_core.tree_sampling import draft_tree, tree_generate, verify_tree

    T, D, tree, rng = toy_target(), toy_draft(), branching_tree((2, 2)), np.random.default_rng(seed)
    if verify_children is None:
        return [tree_generate(T, D, (), tree, 3, rng, **kw) for _ in range(n)]
    out = []
    for _ in range(n):
        ctx = ()
        while len(ctx) < 3:
            drafted, q_rows = draft_tree(tree, D, ctx, rng, **kw)
            p_rows = np.array([T(drafted.context(u, ctx)) for u in range(-1, drafted.n_nodes)])
            ctx += verify_tree(drafted, p_rows, q_rows, rng, children=verify_children).tokens
        out.append(ctx[:3])
    return out


def test_tree_samplers_follow_their_exact_laws():
    from specdec_core import chi_square_gof
    from specdec_core.power import chi_square_power
    from specdec_core.tree_laws import tree_sequence_law

    T, D, tree = toy_target(), toy_draft(), branching_tree((2, 2))
    want = sequence_law(T, (), 3)
    pruned_kw = {"children": "pruned", "threshold": F(1, 4)}
    biased = tree_sequence_law(T, D, (), tree, 3, key=last_token_key, **pruned_kw)
    assert chi_square_power(want, biased, N) >= 0.99
    for seed, kw in enumerate(({"children": "top_k"}, {"children": "top_k", "threshold": F(1, 4)})):
        res = chi_square_gof(tree_texts(N, seed, **kw), want, threshold=THRESHOLD)
        assert not res.rejected, (kw, res)
    pruned = tree_texts(N, 7, **pruned_kw)
    assert chi_square_gof(pruned, want, threshold=THRESHOLD).rejected  # biased, and caught
    assert not chi_square_gof(pruned, biased, threshold=THRESHOLD).rejected  # the sampler = its law


def test_broken_tree_sampler_top_k_divided_by_q_is_caught(monkeypatch):
    """Top-k children verified as if drawn from q: the law test rejects it (power stated)."""
    from specdec_core import chi_square_gof
    from specdec_core.power import chi_square_power
    from specdec_core.tree_laws import tree_sequence_law

    T, D, tree = toy_target(), toy_draft(), branching_tree((2, 2))
    want = sequence_law(T, (), 3)
    texts = tree_texts(N, 11, verify_children="sampled", children="top_k")
    with monkeypatch.context() as m:  # the same bug in the exact law, for the power
        m.setattr(multidraft, "_one_hot", lambda x, like: like)
        broken = tree_sequence_law(T, D, (), tree, 3, key=last_token_key, children="top_k")
    assert chi_square_power(want, broken, N) >= 0.99
    assert chi_square_gof(texts, want, threshold=THRESHOLD).rejected


def test_choose_candidates_slots_and_bad_input():
    from specdec_core.multidraft import choose_candidates, verify_candidates

    rng = np.random.default_rng(0)
    qf = np.array(Q, float)
    assert choose_candidates(qf, 2, rng, children="top_k") == ((0, 2), (1, 1))
    assert choose_candidates(qf, 2, rng, children="top_k", threshold=F(2, 5)) == ((0, 2),)
    for _ in range(50):  # pruned: a kept slot's token has q >= 1/4, slots keep their index
        got = choose_candidates(qf, 3, rng, children="pruned", threshold=F(1, 4))
        assert all(qf[x] >= 0.25 and 0 <= i < 3 for i, x in got)
    with pytest.raises(ValueError, match="children must be one of"):
        verify_candidates(np.array(P, float), qf, [2], rng, children="greedy")

"""Token trees: structure, attention mask, exact law of a round on the toy language, validation."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.toy import sequence_law, toy_draft, toy_target
from specdec_core.tree_laws import (
    MixedDraft,
    last_token_key,
    tree_round_law,
    tree_round_stats,
    tree_sequence_law,
)
from specdec_core.tree_sampling import draft_tree, tree_generate, verify_tree
from specdec_core.trees import (
    TREE_FAMILIES,
    TokenTree,
    branching_tree,
    broom_tree,
    chain_tree,
    family_tree,
    tree_attention_mask,
    tree_positions,
)
from specdec_core.verify import total_variation

T, D = toy_target(), toy_draft()


def test_structure():
    t = branching_tree((2, 3))
    assert t.n_nodes == 2 + 6
    assert t.children() == (0, 1) and t.children(0) == (2, 3, 4) and t.children(1) == (5, 6, 7)
    assert t.path(6) == (1, 6) and t.depth(6) == 2 and t.max_depth == 2
    assert chain_tree(3).parents == (-1, 0, 1)
    assert broom_tree(2, 5).parents == (-1, 0, 1, -1, 3)
    assert family_tree("wide", 3).parents == (-1, -1, -1)
    assert family_tree("deep", 4) == broom_tree(2, 4)
    assert chain_tree(0).n_nodes == 0 and chain_tree(0).max_depth == 0
    for fam in TREE_FAMILIES:
        assert family_tree(fam, 6).n_nodes == 6


def test_attention_mask_sees_ancestors_only():
    t = branching_tree((2, 2))  # 0,1 at depth 1; 2,3 under 0; 4,5 under 1
    m = tree_attention_mask(t, prefix_len=2)
    assert m.shape == (6, 8) and m[:, :2].all()
    nodes = m[:, 2:]
    for i in range(6):
        assert set(np.flatnonzero(nodes[i])) == set(t.path(i))
    assert not nodes[2, 1] and not nodes[4, 0]  # never a sibling's branch
    np.testing.assert_array_equal(tree_attention_mask(chain_tree(4)), np.tril(np.ones((4, 4), bool)))
    assert list(tree_positions(t, 2)) == [2, 2, 3, 3, 3, 3]


SHAPES = [
    chain_tree(0),
    chain_tree(1),
    chain_tree(3),
    family_tree("wide", 3),
    branching_tree((2, 2)),
    broom_tree(2, 4),
    TokenTree((-1, 0, 0, -1, 3)),
]


@pytest.mark.parametrize("tree", SHAPES, ids=lambda t: str(t.parents))
@pytest.mark.parametrize("replacement", [True, False])
def test_tree_law_is_the_target_law_exactly(tree, replacement):
    want = sequence_law(T, (), 3)
    got = tree_sequence_law(T, D, (), tree, 3, replacement=replacement)
    assert all(isinstance(v, F) for v in got.values())
    assert got == want
    # the Markov cache key gives the same law
    assert tree_sequence_law(T, D, (), tree, 3, replacement=replacement, key=last_token_key) == want


def test_round_law_and_stats():
    law = tree_round_law(T, D, (), chain_tree(0))
    assert law == {(0,): F(1, 2), (1,): F(1, 4), (2,): F(1, 4)}  # a bonus from p
    st = tree_round_stats(T, D, (), chain_tree(1))
    assert st.expected_accepted == F(1, 2) and st.expected_emitted == F(3, 2)  # α at the start
    assert st.positions == 2 and st.nodes == 1
    # all nodes at depth 1 with replacement: 1 − (1/2)(3/4)(3/4)(8/9) = 3/4; then the residual is C
    # only, which q never proposes, so more candidates add nothing
    assert tree_round_stats(T, D, (), family_tree("wide", 4)).expected_accepted == F(3, 4)
    assert tree_round_stats(T, D, (), family_tree("wide", 3)).expected_accepted == F(23, 32)
    assert tree_round_stats(T, D, (), family_tree("wide", 6)).expected_accepted == F(3, 4)
    assert sum(law.values()) == 1


def test_a_perfect_draft_accepts_every_node_of_a_chain():
    perfect = MixedDraft(D, T, F(1))
    st = tree_round_stats(T, perfect, (), chain_tree(3))
    assert st.expected_accepted == 3


@pytest.mark.parametrize("rule", ["no_update", "typical"])
def test_lossy_rules_are_not_the_target(rule):
    want = sequence_law(T, (), 2)
    got = tree_sequence_law(T, D, (), family_tree("wide", 3), 2, rule=rule, key=last_token_key)
    keys = sorted(set(want) | set(got))
    tv = total_variation([got.get(k, F(0)) for k in keys], [want.get(k, F(0)) for k in keys])
    assert tv > F(1, 20)
    assert sum(got.values()) == 1


def test_float_law_matches_exact():
    ex = tree_sequence_law(T, D, (), branching_tree((2, 1)), 2, replacement=False)
    fl = tree_sequence_law(T, D, (), branching_tree((2, 1)), 2, replacement=False, exact=False)
    assert set(ex) == set(fl)
    for k in ex:
        assert fl[k] == pytest.approx(float(ex[k]), abs=1e-12)


def test_draft_tree_without_replacement_drops_what_the_draft_cannot_offer():
    rng = np.random.default_rng(0)
    t, q_rows = draft_tree(family_tree("wide", 4), D, (), rng, replacement=False)
    assert t.n_nodes == 3 and sorted(t.tokens) == [0, 1, 3]  # q at the start: A, B, D only
    assert q_rows.shape == (4, 4)
    t2, _ = draft_tree(branching_tree((2, 2)), D, (), rng, replacement=True)
    assert t2.n_nodes == 6 and all(x != 2 for x in t2.tokens[:2])


def test_verify_tree_walks_down():
    t = TokenTree((-1, 0), tokens=(0, 1))
    p_rows = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 0, 1.0]])
    v = verify_tree(t, p_rows, p_rows, np.random.default_rng(0))
    assert v.path == (0, 1) and v.tokens == (0, 1, 3) and v.bonus
    out = tree_generate(T, D, (), branching_tree((2,)), 5, np.random.default_rng(1))
    assert len(out) == 5 and all(0 <= x < 4 for x in out)


@pytest.mark.parametrize(
    "parents, match",
    [
        ((0,), r"parents\[0\] = 0 must be -1"),
        ((-1, 2, 0), r"parents\[1\] = 2"),
        ((-1, -2), r"parents\[1\] = -2"),
        ((-1, 0.0), r"parents\[1\] must be an int"),
        ("ab", "parents must be a sequence"),
        ((-1, True), "must be an int"),
    ],
)
def test_malformed_trees(parents, match):
    with pytest.raises(ValueError, match=match):
        TokenTree(parents)


def test_bad_tokens_and_rows():
    with pytest.raises(ValueError, match="one token per node"):
        TokenTree((-1, 0), tokens=(1,))
    with pytest.raises(ValueError, match="one token per node"):
        TokenTree((-1,), tokens=5)
    with pytest.raises(ValueError, match=r"tokens\[0\] must be a non-negative"):
        TokenTree((-1,), tokens=(-1,))
    t = TokenTree((-1,), tokens=(0,))
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"p_rows must have shape \(2, V\)"):
        verify_tree(t, np.ones((3, 4)) / 4, np.ones((3, 4)) / 4, rng)
    with pytest.raises(ValueError, match="q_rows must have the same shape"):
        verify_tree(t, np.ones((2, 4)) / 4, np.ones((2, 3)) / 3, rng)
    with pytest.raises(ValueError, match="no tokens"):
        verify_tree(TokenTree((-1,)), np.ones((2, 4)) / 4, np.ones((2, 4)) / 4, rng)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        verify_tree(TokenTree((-1,), (7,)), np.ones((2, 4)) / 4, np.ones((2, 4)) / 4, rng)
    with pytest.raises(ValueError, match="tree must be a TokenTree"):
        tree_round_law(T, D, (), (-1, 0))
    with pytest.raises(ValueError, match="rule must be one of"):
        tree_round_law(T, D, (), chain_tree(1), rule="medusa")
    with pytest.raises(ValueError, match="epsilon must be in"):
        tree_round_law(T, D, (), chain_tree(1), rule="typical", epsilon=2)
    with pytest.raises(ValueError, match="family must be one of"):
        family_tree("bushy", 3)
    with pytest.raises(ValueError, match=r"branching\[1\] must be at least 1"):
        branching_tree((2, 0))
    with pytest.raises(ValueError, match=r"weight must be in \[0, 1\]"):
        MixedDraft(D, T, 1.5)


# ------------------------------------------------------------------ the lab (pure texts, driven widget)
def test_lab_numbers_and_texts():
    from specdec_core.labs.trees import DEFAULTS, texts, tree_lab_numbers

    d = tree_lab_numbers(**DEFAULTS)
    assert d["tv"] < 1e-12 and d["positions"] == DEFAULTS["nodes"] + 1
    assert d["expected_accepted"] == pytest.approx(47 / 40)  # deep tree of 4, the toy draft
    t = texts(DEFAULTS)
    assert set(t) == {"law", "length", "rule"} and "target's law" in t["law"]
    lossy = texts({**DEFAULTS, "rule": "no_update", "family": "wide"})
    assert "NOT the target's law" in lossy["law"]
    perfect = tree_lab_numbers("chain", 3, 1.0, "recursive", True)
    assert perfect["expected_accepted"] == pytest.approx(3)
    with pytest.raises(ValueError, match="nodes must be in"):
        tree_lab_numbers("chain", 9, 0.0, "recursive", True)
    with pytest.raises(ValueError, match="quality must be"):
        tree_lab_numbers("chain", 2, 1.5, "recursive", True)


@pytest.mark.parametrize("family", ["chain", "wide", "deep"])
@pytest.mark.parametrize("rule, replacement", [("recursive", True), ("no_update", False), ("typical", True)])
def test_lab_curve_equals_tree_round_stats_per_size(family, rule, replacement):
    """The lab's curve shares verification outcomes between its eight trees (a speed-up); every
    point must still be exactly what tree_round_stats gives for that tree alone."""
    from specdec_core.labs import trees as lab

    for quality in (0.0, 0.35):
        lab._CACHE.clear()
        curve = lab.tree_lab_numbers(family, 1, quality, rule, replacement)["curve"]
        target, draft = lab.lab_models(quality)
        for n, got in enumerate(curve, start=1):
            alone = tree_round_stats(
                target,
                draft,
                (),
                family_tree(family, n),
                rule=rule,
                replacement=replacement,
                exact=False,
                key=last_token_key,
            )
            assert got == float(alone.expected_accepted), (family, quality, n)


def test_lab_every_corner_reads_without_nan():
    from specdec_core.labs.trees import trees_lab

    lab = trees_lab()
    assert "specdec-lab" in lab._dom_classes and "lab-trees" in lab._dom_classes
    for fam in TREE_FAMILIES:
        for rule in ("recursive", "no_update", "typical"):
            for nodes, quality, rep in ((1, 0.0, False), (8, 1.0, True), (8, 0.0, False)):
                lab.set(family=fam, rule=rule, nodes=nodes, quality=quality, replacement=rep)
                txt = " ".join(lab.last_texts.values()).lower()
                assert "nan" not in txt and "inf" not in txt
                assert lab.png[:4] == b"\x89PNG"


def test_figures_build():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from specdec_core.plots.trees import (
        lossy_law_figure,
        mask_figure,
        multi_k_figure,
        tree_budget_figure,
    )

    figs = [
        multi_k_figure([("a", [1, 2], [F(1, 2), F(3, 4)], "#000000", "-")]),
        lossy_law_figure("ABC", [F(1, 2), F(1, 4), F(1, 4)], {"x": [0.5, 0.5, 0.0]}, "t"),
        mask_figure(branching_tree((2, 2)), prefix_len=2),
        tree_budget_figure([1, 2], {"chain": [0.5, 0.9]}),
        tree_budget_figure(
            [1, 2],
            {"chain": [0.5, 0.9], "wide": [0.5, 0.6]},
            {1: (10.0, 10.5, 11.0), 2: (12.0, 12.2, 12.5), 3: 14.0},
        ),
    ]
    assert len(figs[-1].axes) == 2
    for f in figs:
        plt.close(f)


@st.composite
def random_tree(draw, max_nodes=5):
    n = draw(st.integers(0, max_nodes))
    return TokenTree(tuple(draw(st.integers(-1, i - 1)) for i in range(n)))


@settings(max_examples=25, deadline=None)
@given(random_tree(), st.booleans(), st.sampled_from([F(0), F(1, 2)]))
def test_any_tree_any_draft_quality_keeps_the_target_law(tree, replacement, quality):
    draft = MixedDraft(D, T, quality)
    got = tree_sequence_law(T, draft, (), tree, 2, replacement=replacement, key=last_token_key)
    assert got == sequence_law(T, (), 2)


def test_family_curve_is_tree_round_stats_per_size_exactly():
    """tree_laws.family_curve (the lab's curve, every size at once, sharing verification outcomes)
    equals tree_round_stats for each size alone, in exact arithmetic; bad sizes are refused."""
    from specdec_core.toy import toy_draft, toy_target
    from specdec_core.tree_laws import family_curve

    T, D = toy_target(), toy_draft()
    for family, rule in (("wide", "recursive"), ("deep", "no_update")):
        curve = family_curve(T, D, (), family, 4, rule=rule)
        for n, got in enumerate(curve, start=1):
            alone = tree_round_stats(T, D, (), family_tree(family, n), rule=rule)
            assert got == alone.expected_accepted, (family, n)
    with pytest.raises(ValueError, match="max_nodes"):
        family_curve(T, D, (), "chain", 0)
    with pytest.raises(ValueError):
        family_curve(T, D, (), "bushy", 2)

"""Sampling with a token tree: draft a tree's tokens, verify them against the target's rows from
one pass, and generate round after round (SpecInfer, Miao et al. 2023).

Verification walks down from the root: at a node, its children are tried by the multi-candidate
rule of :mod:`specdec_core.multidraft`; an accepted child becomes the current node; if every child
is rejected the round ends with a token from the fallback (the residual, for the lossless rule);
a node without children (an accepted leaf, or the root of an empty tree) earns a bonus token
from the target. The exact law of what this emits is :mod:`specdec_core.tree_laws`; the tree's
shape and mask are :mod:`specdec_core.trees`.

Every random draw comes from the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .distributions import check_distribution, check_gamma, check_model, check_rng, check_rows, draw
from .multidraft import (
    TYPICAL_DELTA,
    TYPICAL_EPSILON,
    check_children,
    check_replacement,
    choose_candidates,
    verify_candidates,
)
from .sampling import check_prefix
from .trees import TokenTree, check_tree, check_tree_models, check_tree_options, model_row, offered_children
from .types import Scalar


@dataclass(frozen=True)
class TreeVerdict:
    """What one verified tree round produced: accepted node indices (root to deepest), emitted
    tokens (accepted ones, then the correction or bonus), and whether the last one is a bonus."""

    path: tuple
    tokens: tuple
    bonus: bool


def draft_tree(
    tree: TokenTree,
    draft: Callable,
    prefix: Sequence[int],
    rng: np.random.Generator,
    *,
    replacement: bool = True,
    children: str = "sampled",
    threshold: Scalar | None = None,
) -> tuple[TokenTree, np.ndarray]:
    """Fill ``tree``'s shape with tokens from ``draft``: each node's children are drawn together
    from the draft's row at the node's context. Returns ``(drafted tree, q_rows)`` with
    ``q_rows[u + 1]`` the row node u's children were drawn from (row 0: the root). Without
    replacement (and for top-k children), children beyond the draft's support are dropped (with
    their subtrees), and so are the slots ``children``/``threshold`` leave empty (see
    :func:`~specdec_core.multidraft.choose_candidates`)."""
    check_tree(tree)
    check_model(draft, "draft")
    prefix = check_tree_models(draft, draft, prefix)
    check_rng(rng)
    replacement = check_replacement(replacement)
    children, threshold = check_children(children, threshold)
    tokens, keep = [None] * tree.n_nodes, [False] * tree.n_nodes
    q_rows = [None] * (tree.n_nodes + 1)
    for u in (-1,) + tuple(range(tree.n_nodes)):
        if u >= 0 and not keep[u]:
            continue
        kids = tree.children(u)
        if not kids:
            continue
        ctx = tuple(prefix) + tuple(tokens[i] for i in tree.path(u))
        q = model_row(draft, ctx, False, "draft")
        q_rows[u + 1] = q
        kids = offered_children(kids, q, replacement and children != "top_k")
        offered = choose_candidates(
            q, len(kids), rng, children=children, threshold=threshold, replacement=replacement
        )
        for slot, x in offered:
            tokens[kids[slot]], keep[kids[slot]] = x, True
    index = {old: new for new, old in enumerate(i for i in range(tree.n_nodes) if keep[i])}
    parents = tuple(-1 if tree.parents[i] == -1 else index[tree.parents[i]] for i in index)
    # an empty tree drafts nothing, but its placeholder rows still need the vocabulary's size
    V = len(q_rows[0]) if q_rows[0] is not None else len(model_row(draft, prefix, False, "draft"))
    rows = [q_rows[0]] + [q_rows[i + 1] for i in index]
    rows = np.array([r if r is not None else np.full(V, 1.0 / V) for r in rows])
    return TokenTree(parents, tuple(tokens[i] for i in index)), rows


def verify_tree(
    tree: TokenTree,
    p_rows: np.ndarray,
    q_rows: np.ndarray,
    rng: np.random.Generator,
    *,
    rule: str = "recursive",
    replacement: bool = True,
    epsilon: float = TYPICAL_EPSILON,
    delta: float = TYPICAL_DELTA,
    children: str = "sampled",
) -> TreeVerdict:
    """Verify a drafted tree against the target's rows from one pass: ``p_rows[0]`` at the root,
    ``p_rows[i + 1]`` after node i (same layout for ``q_rows``, the rows the children were drafted
    from). Walk down through accepted children; a full rejection ends with the fallback token, a
    node without children with a bonus token from the target. ``children="top_k"``: the children
    are the draft's top tokens, verified as one-hot proposals."""
    check_tree_options(rule, replacement, epsilon, delta, tree)
    if tree.tokens is None:
        raise ValueError("tree has no tokens: draft it first (draft_tree)")
    check_rng(rng)
    n = tree.n_nodes
    P = check_distribution(p_rows, "p_rows", exact=False)
    if P.ndim != 2 or P.shape[0] != n + 1:
        raise ValueError(
            f"p_rows must have shape ({n + 1}, V): one row for the root and one per node, got {P.shape}"
        )
    Q = check_rows(q_rows, "q_rows")
    if Q.shape != P.shape:
        raise ValueError(f"q_rows must have the same shape as p_rows {P.shape}, got {Q.shape}")
    if max(tree.tokens, default=-1) >= P.shape[1]:
        raise ValueError(f"tree.tokens has a token outside the vocabulary of {P.shape[1]}")
    u, path, out = -1, [], []
    while True:
        kids = tree.children(u)
        if not kids:
            out.append(int(draw(P[u + 1], rng)))
            return TreeVerdict(tuple(path), tuple(out), True)
        idx, tok = verify_candidates(
            P[u + 1],
            Q[u + 1],
            [tree.tokens[i] for i in kids],
            rng,
            rule=rule,
            replacement=replacement,
            epsilon=epsilon,
            delta=delta,
            children=children,
        )
        out.append(tok)
        if idx is None:
            return TreeVerdict(tuple(path), tuple(out), False)
        u = kids[idx]
        path.append(u)


def tree_round(
    target: Callable,
    draft: Callable,
    prefix: Sequence[int],
    tree: TokenTree,
    rng: np.random.Generator,
    **kw: object,
) -> TreeVerdict:
    """Draft ``tree``, score every node (here one target call per node; a real model does it in one
    pass with :func:`tree_attention_mask`), verify."""
    check_tree_options(
        kw.get("rule", "recursive"),
        kw.get("replacement", True),
        kw.get("epsilon", TYPICAL_EPSILON),
        kw.get("delta", TYPICAL_DELTA),
        tree,
    )
    prefix = check_tree_models(target, draft, prefix)
    children, threshold = kw.pop("children", "sampled"), kw.pop("threshold", None)
    drafted, q_rows = draft_tree(
        tree,
        draft,
        prefix,
        rng,
        replacement=kw.get("replacement", True),
        children=children,
        threshold=threshold,
    )
    kw["children"] = children
    return verify_tree(drafted, _target_tree_rows(target, drafted, prefix), q_rows, rng, **kw)


def _target_tree_rows(target: Callable, drafted: TokenTree, prefix: Sequence[int]) -> np.ndarray:
    """The target's rows for a drafted tree: row 0 at the root, row u + 1 after node u. A node
    whose token p gives probability 0 at its parent is surely rejected, so neither its row nor
    its descendants' are ever used — and they condition on a prefix p never produces (a
    grammar-processed target has no row there). They are not asked for: they hold the uniform
    placeholder :func:`draft_tree` uses for rows never drawn from."""
    root = model_row(target, prefix, False, "target")
    check_prefix(prefix, root.shape[0])
    V = root.shape[0]
    rows = [root] + [None] * drafted.n_nodes
    for u in range(drafted.n_nodes):  # parents come before their children
        parent = rows[drafted.parents[u] + 1]
        if parent is not None and drafted.tokens[u] < V and parent[drafted.tokens[u]] > 0:
            rows[u + 1] = model_row(target, drafted.context(u, prefix), False, "target")
    return np.array([r if r is not None else np.full(V, 1.0 / V) for r in rows])


def tree_generate(
    target: Callable,
    draft: Callable,
    prefix: Sequence[int],
    tree: TokenTree,
    max_new_tokens: int,
    rng: np.random.Generator,
    **kw: object,
) -> tuple:
    """Tree rounds until ``max_new_tokens`` tokens exist; returns exactly that many."""
    n = check_gamma(max_new_tokens, "max_new_tokens")
    ctx, out = check_tree_models(target, draft, prefix), []
    while len(out) < n:
        v = tree_round(target, draft, ctx, tree, rng, **kw)
        out.extend(v.tokens)
        ctx = ctx + v.tokens
    return tuple(out[:n])

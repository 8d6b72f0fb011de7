"""Token trees: the shape of many continuations drafted at once, and the mask that lets one target
pass score them all.

A :class:`TokenTree` lists nodes in order, each with the index of its parent (``-1`` is the
root: the prefix already emitted). A node's children are *candidates for the same position*,
drafted from the draft's distribution at the node's context, independently or without
replacement. The target scores every node in one pass (:func:`tree_attention_mask` says which
position may look at which, :func:`tree_positions` where each node sits), giving its
distribution at the root and after every node.

What a tree round does with those rows lives next door: :mod:`specdec_core.tree_sampling` drafts,
verifies and generates (SpecInfer, Miao et al. 2023); :mod:`specdec_core.tree_laws` computes the
exact law of what a round emits. Both take the same arguments, checked here
(:func:`check_tree_options`, :func:`check_tree_models`): models are callables
``model(prefix) -> float row``, optionally with ``model.exact(prefix)`` giving an exact row (the
toy language's models have both).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .distributions import (
    check_bool,
    check_choice,
    check_distribution,
    check_gamma,
    check_int,
    check_model,
    check_optional_callable,
    check_sequence,
    check_size,
)
from .multidraft import check_replacement, check_rule, check_typical

#: Tree families compared under a node budget.
TREE_FAMILIES = ("chain", "wide", "deep")
FAMILY_LABELS = {
    "chain": "chain",
    "wide": "wide-shallow (all at depth 1)",
    "deep": "narrow-deep (two chains)",
}

#: tree_attention_mask allocates (nodes, prefix_len + nodes) booleans; at most this many.
MAX_MASK_CELLS = 10**8


# ------------------------------------------------------------------ the structure
@dataclass(frozen=True)
class TokenTree:
    """``parents[i]`` is node i's parent (-1 = the root, else an earlier node); ``tokens[i]`` its
    token, or ``tokens=None`` for a shape not yet drafted. Children of a node are ordered by index:
    that is the order in which verification tries them."""

    parents: tuple
    tokens: tuple | None = None

    def __post_init__(self):
        items = check_sequence(self.parents, "parents", "a sequence of node indices")
        par = []
        for i, a in enumerate(items):
            a = check_int(a, f"parents[{i}]", None, what="an int")
            if not -1 <= a < i:
                raise ValueError(f"parents[{i}] = {a} must be -1 (the root) or an earlier node (0..{i - 1})")
            par.append(int(a))
        object.__setattr__(self, "parents", tuple(par))
        kids: dict = {}
        for i, a in enumerate(par):  # children by parent, built once: children() is O(1)
            kids.setdefault(a, []).append(i)
        object.__setattr__(self, "_kids", {a: tuple(v) for a, v in kids.items()})
        if self.tokens is not None:
            toks = check_sequence(self.tokens, "tokens", "a sequence giving one token per node")
            if len(toks) != len(par):
                raise ValueError(f"tokens must give one token per node ({len(par)}), got {self.tokens!r}")
            toks = tuple(
                check_int(t, f"tokens[{i}]", 0, what="a non-negative token index") for i, t in enumerate(toks)
            )
            object.__setattr__(self, "tokens", toks)

    @property
    def n_nodes(self) -> int:
        return len(self.parents)

    def children(self, node: int = -1) -> tuple:
        return self._kids.get(node, ())

    def path(self, node: int) -> tuple:
        """Node indices from the root's child down to ``node`` (empty for the root, -1)."""
        out = []
        while node != -1:
            out.append(node)
            node = self.parents[node]
        return tuple(reversed(out))

    def depth(self, node: int) -> int:
        return len(self.path(node))

    @property
    def max_depth(self) -> int:
        return max((self.depth(i) for i in range(self.n_nodes)), default=0)

    def context(self, node: int, prefix: Sequence[int] = ()) -> tuple:
        """The prefix followed by the tokens on the path to ``node``."""
        if self.tokens is None:
            raise ValueError("tree has no tokens yet (draft it first)")
        return tuple(prefix) + tuple(self.tokens[i] for i in self.path(node))

    def with_tokens(self, tokens: Sequence[int]) -> TokenTree:
        return TokenTree(self.parents, tuple(tokens))


def chain_tree(n: int) -> TokenTree:
    """n nodes in a line: ordinary speculative decoding with γ = n."""
    n = check_gamma(n, "n")
    return TokenTree(tuple(range(-1, n - 1)))


def branching_tree(branching: Sequence[int]) -> TokenTree:
    """Every node at depth d has ``branching[d]`` children (d = 0 is the root)."""
    if isinstance(branching, (str, bytes)) or not hasattr(branching, "__iter__"):
        raise ValueError(f"branching must be a sequence of positive ints, got {branching!r}")
    parents, level = [], [-1]
    for d, b in enumerate(branching):
        b = check_gamma(b, f"branching[{d}]")
        if b < 1:
            raise ValueError(f"branching[{d}] must be at least 1, got {b}")
        nxt = []
        for u in level:
            for _ in range(b):
                parents.append(u)
                nxt.append(len(parents) - 1)
        level = nxt
    return TokenTree(tuple(parents))


def broom_tree(width: int, nodes: int) -> TokenTree:
    """``width`` chains hanging from the root sharing ``nodes`` nodes (the first chains one longer
    when it does not divide): narrow and deep."""
    width, nodes = check_gamma(width, "width"), check_gamma(nodes, "nodes")
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    lengths = [nodes // width + (1 if j < nodes % width else 0) for j in range(width)]
    parents = []
    for L in lengths:
        prev = -1
        for _ in range(L):
            parents.append(prev)
            prev = len(parents) - 1
    return TokenTree(tuple(parents))


def family_tree(family: str, nodes: int) -> TokenTree:
    """One tree of a family under a node budget: "chain", "wide" (every node a child of the
    root) or "deep" (two chains)."""
    family = check_choice(family, "family", TREE_FAMILIES)
    nodes = check_gamma(nodes, "nodes")
    if family == "chain":
        return chain_tree(nodes)
    if family == "wide":
        return TokenTree((-1,) * nodes)
    return broom_tree(2, nodes)


# ------------------------------------------------------------------ one pass scores every node
def tree_attention_mask(tree: TokenTree, prefix_len: int = 0) -> np.ndarray:
    """Boolean (n, prefix_len + n): row i may attend to column j. Every node sees the whole
    prefix, itself and its ancestors, never a sibling's branch."""
    check_tree(tree)
    prefix_len = check_gamma(prefix_len, "prefix_len")
    n = tree.n_nodes
    check_size(
        n * (prefix_len + n), f"prefix_len = {prefix_len} with {n} nodes", MAX_MASK_CELLS, "mask cells"
    )
    mask = np.zeros((n, prefix_len + n), dtype=bool)
    mask[:, :prefix_len] = True
    for i in range(n):
        for j in tree.path(i):
            mask[i, prefix_len + j] = True
    return mask


def tree_positions(tree: TokenTree, prefix_len: int = 0) -> np.ndarray:
    """Position index of each node (its depth): siblings share a position, as in a real pass."""
    check_tree(tree)
    prefix_len = check_gamma(prefix_len, "prefix_len")
    return np.array([prefix_len + tree.depth(i) - 1 for i in range(tree.n_nodes)], dtype=int)


# ------------------------------------------------------------------ a tree round's arguments
def check_tree(tree: object) -> TokenTree:
    """``tree`` itself, if it is a :class:`TokenTree`."""
    if not isinstance(tree, TokenTree):
        raise ValueError(f"tree must be a TokenTree, got {type(tree).__name__}")
    return tree


def check_tree_options(
    rule: str, replacement: bool, epsilon: float, delta: float, tree: object, exact: bool = False
) -> None:
    """The options every tree round takes: the multi-candidate rule, drawing children with or
    without replacement, the typical rule's ε and δ, exact arithmetic, and the tree."""
    check_rule(rule)
    check_replacement(replacement)
    check_typical(epsilon, delta)
    check_bool(exact, "exact")
    check_tree(tree)


def check_tree_models(
    target: Callable, draft: Callable, prefix: Sequence[int], key: Callable | None = None
) -> tuple:
    """Two models, an optional cache-key function, and a prefix of integer token ids (below the
    target's declared vocabulary, if any); returns the prefix as a tuple."""
    from .sampling import check_prefix

    check_model(target, "target")
    check_model(draft, "draft")
    check_optional_callable(key, "key")
    v = getattr(target, "vocab_size", None)
    vocab = int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 else None
    return check_prefix(prefix, vocab)


def model_row(model: Callable, prefix: Sequence[int], exact: bool, who: str = "model") -> np.ndarray:
    """``who``'s row after ``prefix``, checked (``who`` is "target" or "draft": messages name it):
    the exact row when ``exact`` and the model offers ``.exact``, else float64."""
    if exact and hasattr(model, "exact"):
        return check_distribution(model.exact(tuple(prefix)), f"{who} row", exact=True)
    return check_distribution(model(tuple(prefix)), f"{who} row", exact=False).astype(np.float64, copy=False)


def offered_children(children: tuple, q: np.ndarray, replacement: bool) -> tuple:
    """The children a node can fill: all of them with replacement; without, at most as many as
    q has tokens (the rest of its slots stay empty, with their subtrees)."""
    if replacement:
        return children
    support = sum(1 for v in np.asarray(q).flat if v > 0)
    return children[:support]

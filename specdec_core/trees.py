"""Token trees: many continuations drafted at once, scored in one target pass, verified exactly.

A :class:`TokenTree` lists nodes in order, each with the index of its parent (``-1`` is the
root: the prefix already emitted). A node's children are *candidates for the same position*,
drafted from the draft's distribution at the node's context, independently or without
replacement. The target scores every node in one pass (:func:`tree_attention_mask` says which
position may look at which), giving its distribution at the root and after every node.

Verification (SpecInfer, Miao et al. 2023) walks down from the root: at a node, its children are
tried by the multi-candidate rule of :mod:`specdec_core.multidraft`; an accepted child becomes the
current node; if every child is rejected the round ends with a token from the fallback (the
residual, for the lossless rule); a node without children (an accepted leaf, or the root of an
empty tree) earns a bonus token from the target. :func:`tree_round_law` computes the exact law of
what a round emits by enumeration, and :func:`tree_sequence_law` the law of the first n tokens
over as many rounds as needed, to compare with :func:`specdec_core.toy.sequence_law`.

Models are callables ``model(prefix) -> float row``, optionally with ``model.exact(prefix)`` giving
an exact row (the toy language's models have both).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from math import comb

import numpy as np

from .distributions import (
    check_bool,
    check_distribution,
    check_gamma,
    check_int,
    check_model,
    check_optional_callable,
    check_probability,
    check_rng,
    check_rows,
    check_sequence,
    check_size,
    draw,
)
from .multidraft import (
    MAX_ENUMERATION,
    TYPICAL_DELTA,
    TYPICAL_EPSILON,
    check_replacement,
    check_rule,
    check_typical,
    multi_draft_outcomes,
    sample_candidates,
    verify_candidates,
)

#: Tree families compared under a node budget.
TREE_FAMILIES = ("chain", "wide", "deep")
FAMILY_LABELS = {
    "chain": "chain",
    "wide": "wide-shallow (all at depth 1)",
    "deep": "narrow-deep (two chains)",
}

#: The exact laws enumerate outcomes; beyond this many (summed over the memoized subtrees) they
#: refuse with a ValueError naming the tree and ``max_len`` rather than fill the memory.
MAX_OUTCOMES = 10**6

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

    def context(self, node: int, prefix=()) -> tuple:
        """The prefix followed by the tokens on the path to ``node``."""
        if self.tokens is None:
            raise ValueError("tree has no tokens yet (draft it first)")
        return tuple(prefix) + tuple(self.tokens[i] for i in self.path(node))

    def with_tokens(self, tokens) -> TokenTree:
        return TokenTree(self.parents, tuple(tokens))


def chain_tree(n: int) -> TokenTree:
    """n nodes in a line: ordinary speculative decoding with γ = n."""
    n = check_gamma(n, "n")
    return TokenTree(tuple(range(-1, n - 1)))


def branching_tree(branching) -> TokenTree:
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
    if family not in TREE_FAMILIES:
        raise ValueError(f"family must be one of {TREE_FAMILIES}, got {family!r}")
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
    if not isinstance(tree, TokenTree):
        raise ValueError(f"tree must be a TokenTree, got {type(tree).__name__}")
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
    prefix_len = check_gamma(prefix_len, "prefix_len")
    return np.array([prefix_len + tree.depth(i) - 1 for i in range(tree.n_nodes)], dtype=int)


# ------------------------------------------------------------------ models
def _row(model, prefix, exact: bool, who: str = "model"):
    """``who``'s row after ``prefix`` (``who`` is "target" or "draft": messages name it)."""
    if exact and hasattr(model, "exact"):
        return check_distribution(model.exact(tuple(prefix)), f"{who} row", exact=True)
    return check_distribution(model(tuple(prefix)), f"{who} row", exact=False).astype(np.float64, copy=False)


def _check_models_prefix(target, draft, prefix, key=None):
    """The tree functions' shared argument checks: two models, an optional cache-key function,
    and a prefix of integer token ids (below the target's declared vocabulary, if any)."""
    from .sampling import check_prefix

    check_model(target, "target")
    check_model(draft, "draft")
    check_optional_callable(key, "key")
    v = getattr(target, "vocab_size", None)
    vocab = int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 else None
    return check_prefix(prefix, vocab)


def _check_prefix_in_rows(prefix, V):
    bad = [t for t in prefix if t >= V]
    if bad:
        raise ValueError(f"prefix holds the token id {bad[0]}, outside the vocabulary [0, {V})")


class MixedDraft:
    """A draft of tunable quality: (1 − w)·draft + w·target, exact when both are (w a Fraction).
    w = 0 is the draft itself, w = 1 a perfect draft."""

    def __init__(self, draft, target, weight):
        check_model(draft, "draft")
        check_model(target, "target")
        w = check_probability(weight, "weight", scalar=True)  # exact -> Fraction, else float
        self.draft, self.target, self.weight = draft, target, w
        self.vocab_size = getattr(draft, "vocab_size", None)

    def __call__(self, prefix):
        w = float(self.weight)
        return (1 - w) * np.asarray(self.draft(prefix), float) + w * np.asarray(self.target(prefix), float)

    def exact(self, prefix):
        if not isinstance(self.weight, Fraction):
            raise ValueError("weight is a float: no exact row")
        return (1 - self.weight) * self.draft.exact(prefix) + self.weight * self.target.exact(prefix)

    def __repr__(self):
        return f"MixedDraft(weight={self.weight})"


def last_token_key(prefix) -> tuple:
    """Cache key for models that look only at the last token (the toy language)."""
    return tuple(prefix)[-1:]


# ------------------------------------------------------------------ exact laws
def _opts(rule, replacement, epsilon, delta, tree, exact=False):
    check_rule(rule)
    check_replacement(replacement)
    check_typical(epsilon, delta)
    check_bool(exact, "exact")
    if not isinstance(tree, TokenTree):
        raise ValueError(f"tree must be a TokenTree, got {type(tree).__name__}")


def _offered(children, q, replacement):
    """Without replacement a node can offer at most as many children as q has tokens."""
    if replacement:
        return children
    support = sum(1 for v in np.asarray(q).flat if v > 0)
    return children[:support]


def tree_round_law(
    target,
    draft,
    prefix,
    tree: TokenTree,
    *,
    rule="recursive",
    replacement=True,
    epsilon=TYPICAL_EPSILON,
    delta=TYPICAL_DELTA,
    exact=True,
    key=None,
    max_len=None,
) -> dict:
    """{emitted tokens (tuple): probability} for one tree round from ``prefix``, by enumeration.

    Without replacement a node offers only as many children as the draft has tokens there (the
    rest of its slots stay empty). ``key(prefix)`` may name a cache key for contexts whose rows are
    equal (e.g. :func:`last_token_key` for the toy language); ``None`` caches by full prefix.
    ``max_len``: keep only the first ``max_len`` emitted tokens (their law is still exact)."""
    _opts(rule, replacement, epsilon, delta, tree, exact)
    prefix = _check_models_prefix(target, draft, prefix, key)
    if max_len is not None:
        max_len = check_gamma(max_len, "max_len")
    key = key or tuple
    node = _node_outcomes(target, draft, tree, rule, replacement, epsilon, delta, exact, key)
    return _round_law(node, key, exact, tree.n_nodes)(-1, prefix, -1 if max_len is None else max_len)


def _round_law(node, key, exact, n_nodes=0):
    """law(u, ctx, budget): the law of the tokens a round emits from node u on (first ``budget``).

    Evaluated with an explicit stack (no recursion: a deep tree is no RecursionError), and
    refused past :data:`MAX_OUTCOMES` enumerated outcomes."""
    memo = {}
    one = Fraction(1) if exact else 1.0
    base = {(): one}
    size = [0]

    def sub(u, ctx, budget):
        return base if budget == 0 else memo[(u, key(ctx), budget)]

    def law(u0, ctx0, budget0):
        if budget0 == 0:
            return base
        stack = [(u0, ctx0, budget0)]
        while stack:
            u, ctx, budget = stack[-1]
            mk = (u, key(ctx), budget)
            if mk in memo:
                stack.pop()
                continue
            kids, _, accepted, fallbacks = node(u, ctx)
            todo = [
                (kids[i], ctx + (x,), budget - 1)
                for (i, x) in accepted
                if budget - 1 != 0 and (kids[i], key(ctx + (x,)), budget - 1) not in memo
            ]
            if todo:
                stack.extend(todo)
                continue
            out = defaultdict(lambda: 0 * one)
            for (i, x), m in accepted.items():
                for seq, pr in sub(kids[i], ctx + (x,), budget - 1).items():
                    out[(x,) + seq] += m * pr
            for m, dist in fallbacks:
                for y, d in enumerate(dist):
                    if d != 0:
                        out[(y,)] += m * d
            size[0] += len(out)
            if size[0] > MAX_OUTCOMES:
                raise ValueError(
                    f"tree: the law of one round of a {n_nodes}-node tree has more than "
                    f"{MAX_OUTCOMES:,} outcomes to enumerate; at most {MAX_OUTCOMES:,} are "
                    "computed (pass max_len=... to keep only the first tokens, or use a smaller tree)"
                )
            memo[mk] = dict(out)
            stack.pop()
        return memo[(u0, key(ctx0), budget0)]

    return law


def _node_outcomes(target, draft, tree, rule, replacement, epsilon, delta, exact, key, shared=None):
    """node, context -> (offered children, p, {(i, x): prob accepted}, [(prob, law)] for the
    round's last token from this node: the fallback after all rejections, or the bonus at a leaf).

    ``shared``: optional dict of verification outcomes by (context key, number of children), valid
    across trees for the same models and options (the trees lab's curve over tree sizes uses it)."""
    cache = {}
    shared = {} if shared is None else shared

    def node(u, ctx):
        ck = (u, key(ctx))
        if ck not in cache:
            p = _row(target, ctx, exact, "target")
            kids = tree.children(u)
            if kids:
                q = _row(draft, ctx, exact, "draft")
                if len(q) != len(p):
                    raise ValueError(f"target and draft rows differ in size at {ctx}: {len(p)} vs {len(q)}")
                kids = _offered(kids, q, replacement)
                sk = (key(ctx), len(kids))
                if sk not in shared:
                    shared[sk] = multi_draft_outcomes(
                        p, q, len(kids), rule=rule, replacement=replacement, epsilon=epsilon, delta=delta
                    )
                accepted, fallbacks = shared[sk]
            else:
                accepted, fallbacks = {}, [(1 if exact else 1.0, p)]
            cache[ck] = (kids, p, accepted, fallbacks)
        return cache[ck]

    return node


def tree_sequence_law(
    target,
    draft,
    prefix,
    tree: TokenTree,
    length: int,
    *,
    rule="recursive",
    replacement=True,
    epsilon=TYPICAL_EPSILON,
    delta=TYPICAL_DELTA,
    exact=True,
    key=None,
) -> dict:
    """{first ``length`` tokens: probability} when tree rounds run until ``length`` tokens exist
    (the last round's extra tokens cut off). For the lossless rule it must equal the target's own
    law of ``length`` tokens."""
    length = check_gamma(length, "length")
    _opts(rule, replacement, epsilon, delta, tree, exact)
    prefix = _check_models_prefix(target, draft, prefix, key)
    _check_length(target, prefix, length, exact)
    key = key or tuple
    memo = {}
    round_law = _round_law(
        _node_outcomes(target, draft, tree, rule, replacement, epsilon, delta, exact, key),
        key,
        exact,
        tree.n_nodes,
    )

    def law(ctx, n):
        if n == 0:
            return {(): 1 if exact else 1.0}
        mk = (key(ctx), n)
        if mk in memo:
            return memo[mk]
        out = defaultdict(int)
        for seq, pr in round_law(-1, ctx, n).items():
            if len(seq) >= n:
                out[seq] += pr
            else:
                for rest, pr2 in law(ctx + seq, n - len(seq)).items():
                    out[seq + rest] += pr * pr2
        memo[mk] = {s: v for s, v in out.items() if v != 0}
        return memo[mk]

    return law(prefix, length)


def _check_length(target, prefix, length, exact):
    """The law of ``length`` tokens has up to V^length outcomes: refused beyond MAX_OUTCOMES
    (the same rule as :func:`specdec_core.toy.sequence_law`); also checks the prefix against V."""
    V = len(_row(target, prefix, exact, "target"))
    _check_prefix_in_rows(prefix, V)
    if length * np.log10(max(V, 1)) > np.log10(MAX_OUTCOMES) + 1e-9:
        raise ValueError(
            f"length = {length} over a vocabulary of {V} gives up to {V}^{length} sequences; "
            f"at most {MAX_OUTCOMES:,} are enumerated"
        )


@dataclass(frozen=True)
class TreeRoundStats:
    """E[accepted tree tokens], E[emitted tokens] = that + 1, and the positions one pass scores.

    ``positions`` counts what the pass really scores: 1 + the expected number of nodes the draft
    fills (:func:`expected_drafted_nodes`). With replacement that is every node (``nodes`` + 1,
    an int); without replacement a node offers at most as many children as the draft's row has
    tokens, so :func:`draft_tree` drops the rest with their subtrees and ``positions`` can be
    smaller (exact or float, like the other expectations). ``nodes`` is the tree's shape."""

    expected_accepted: object
    expected_emitted: object
    positions: object
    nodes: int


def _slot_laws(q, m, exact):
    """The law of each of the first ``m`` draws without replacement from q (draw i from q with
    the earlier draws removed, renormalized): a list of m dicts {token: probability}. The states
    are the sets already drawn (their probability summed over orders)."""
    zero, one = (Fraction(0), Fraction(1)) if exact else (0.0, 1.0)
    support = [x for x, v in enumerate(q) if v > 0]
    states, laws = {frozenset(): one}, []
    for _ in range(m):
        law, nxt = defaultdict(lambda: zero), defaultdict(lambda: zero)
        for drawn, pr in states.items():
            left = one - sum((q[y] for y in drawn), zero)
            for x in support:
                if x not in drawn:
                    w = pr * q[x] / left
                    law[x] += w
                    nxt[drawn | {x}] += w
        laws.append(dict(law))
        states = nxt
    return laws


def expected_drafted_nodes(draft, prefix, tree: TokenTree, *, replacement=True, exact=True, key=None):
    """Expected number of nodes :func:`draft_tree` fills in ``tree``: all of them with
    replacement; without replacement a node at context c offers only its first
    min(children, support of the draft's row at c) children, so the count depends on the tokens
    drawn above (exact Fractions by default, float64 with ``exact=False``)."""
    if not isinstance(tree, TokenTree):
        raise ValueError(f"tree must be a TokenTree, got {type(tree).__name__}")
    check_model(draft, "draft")
    replacement = check_replacement(replacement)
    prefix = _check_models_prefix(draft, draft, prefix, key)
    return _expected_drafted(draft, prefix, tree, replacement, check_bool(exact, "exact"), key or tuple)


def _expected_drafted(draft, prefix, tree, replacement, exact, key):
    if replacement:
        return tree.n_nodes
    zero = Fraction(0) if exact else 0.0
    memo, slots = {}, {}

    def slot_laws(u, ctx):  # [(child, {token: probability}), ...] for the children u offers
        sk = (u, key(ctx))
        if sk not in slots:
            q = _row(draft, ctx, exact, "draft")
            kids = _offered(tree.children(u), q, False)
            s = sum(1 for v in q if v > 0)  # states: the sets drawn before each child
            check_size(
                sum(comb(s, j) for j in range(len(kids))) * len(q),
                f"{len(kids)} children drawn without replacement over {len(q)} tokens",
                MAX_ENUMERATION,
                "table entries to enumerate",
            )
            slots[sk] = list(zip(kids, _slot_laws(q, len(kids), exact)))
        return slots[sk]

    stack = [(-1, tuple(prefix))]  # an explicit stack: a deep tree is no RecursionError
    while stack:
        u, ctx = stack[-1]
        mk = (u, key(ctx))
        if mk in memo:
            stack.pop()
            continue
        todo = [
            (kid, ctx + (x,))
            for kid, law in slot_laws(u, ctx)
            for x in law
            if tree.children(kid) and (kid, key(ctx + (x,))) not in memo
        ]
        if todo:
            stack.extend(todo)
            continue
        memo[mk] = sum(
            (
                pr * (1 + (memo[(kid, key(ctx + (x,)))] if tree.children(kid) else 0))
                for kid, law in slot_laws(u, ctx)
                for x, pr in law.items()
            ),
            zero,
        )
        stack.pop()
    out = memo[(-1, key(tuple(prefix)))]
    return tree.n_nodes if out == tree.n_nodes else out


def tree_round_stats(
    target,
    draft,
    prefix,
    tree: TokenTree,
    *,
    rule="recursive",
    replacement=True,
    epsilon=TYPICAL_EPSILON,
    delta=TYPICAL_DELTA,
    exact=True,
    key=None,
) -> TreeRoundStats:
    """Expected accepted length of one round (exact by default) and its pass size: every node the
    draft fills plus the last emitted token's position (n + 1 positions with replacement; fewer
    on average without, when the draft's support is smaller than a node's children; see
    :class:`TreeRoundStats`)."""
    _opts(rule, replacement, epsilon, delta, tree, exact)
    prefix = _check_models_prefix(target, draft, prefix, key)
    return _round_stats(target, draft, prefix, tree, rule, replacement, epsilon, delta, exact, key or tuple)


def _round_stats(target, draft, prefix, tree, rule, replacement, epsilon, delta, exact, key, shared=None):
    node = _node_outcomes(target, draft, tree, rule, replacement, epsilon, delta, exact, key, shared)
    memo = {}
    zero = Fraction(0) if exact else 0.0

    def accepted_length(u0, ctx0):
        # E[accepted below u] = Σ m·(1 + E[accepted below child]); an explicit stack, so a deep
        # tree (the depth is the caller's argument) is no RecursionError
        stack = [(u0, ctx0)]
        while stack:
            u, ctx = stack[-1]
            mk = (u, key(ctx))
            if mk in memo:
                stack.pop()
                continue
            kids, _, accepted, _ = node(u, ctx)
            todo = [(kids[i], ctx + (x,)) for (i, x) in accepted if (kids[i], key(ctx + (x,))) not in memo]
            if todo:
                stack.extend(todo)
                continue
            memo[mk] = sum(
                (m * (1 + memo[(kids[i], key(ctx + (x,)))]) for (i, x), m in accepted.items()), zero
            )
            stack.pop()
        return memo[(u0, key(ctx0))]

    ea = accepted_length(-1, tuple(prefix))
    drafted = _expected_drafted(draft, prefix, tree, replacement, exact, key)
    return TreeRoundStats(ea, ea + 1, drafted + 1, tree.n_nodes)


# ------------------------------------------------------------------ the sampler
@dataclass(frozen=True)
class TreeVerdict:
    """What one verified tree round produced: accepted node indices (root to deepest), emitted
    tokens (accepted ones, then the correction or bonus), and whether the last one is a bonus."""

    path: tuple
    tokens: tuple
    bonus: bool


def draft_tree(tree: TokenTree, draft, prefix, rng, *, replacement=True):
    """Fill ``tree``'s shape with tokens from ``draft``: each node's children are drawn together
    from the draft's row at the node's context. Returns ``(drafted tree, q_rows)`` with
    ``q_rows[u + 1]`` the row node u's children were drawn from (row 0: the root). Without
    replacement, children beyond the draft's support are dropped (with their subtrees)."""
    if not isinstance(tree, TokenTree):
        raise ValueError(f"tree must be a TokenTree, got {type(tree).__name__}")
    check_model(draft, "draft")
    prefix = _check_models_prefix(draft, draft, prefix)
    check_rng(rng)
    replacement = check_replacement(replacement)
    tokens, keep = [None] * tree.n_nodes, [False] * tree.n_nodes
    q_rows = [None] * (tree.n_nodes + 1)
    for u in (-1,) + tuple(range(tree.n_nodes)):
        if u >= 0 and not keep[u]:
            continue
        kids = tree.children(u)
        if not kids:
            continue
        ctx = tuple(prefix) + tuple(tokens[i] for i in tree.path(u))
        q = _row(draft, ctx, False, "draft")
        q_rows[u + 1] = q
        kids = _offered(kids, q, replacement)
        for i, x in zip(kids, sample_candidates(q, len(kids), rng, replacement=replacement)):
            tokens[i], keep[i] = x, True
    index = {old: new for new, old in enumerate(i for i in range(tree.n_nodes) if keep[i])}
    parents = tuple(-1 if tree.parents[i] == -1 else index[tree.parents[i]] for i in index)
    # an empty tree drafts nothing, but its placeholder rows still need the vocabulary's size
    V = len(q_rows[0]) if q_rows[0] is not None else len(_row(draft, prefix, False, "draft"))
    rows = [q_rows[0]] + [q_rows[i + 1] for i in index]
    rows = np.array([r if r is not None else np.full(V, 1.0 / V) for r in rows])
    return TokenTree(parents, tuple(tokens[i] for i in index)), rows


def verify_tree(
    tree: TokenTree,
    p_rows,
    q_rows,
    rng,
    *,
    rule="recursive",
    replacement=True,
    epsilon=TYPICAL_EPSILON,
    delta=TYPICAL_DELTA,
) -> TreeVerdict:
    """Verify a drafted tree against the target's rows from one pass: ``p_rows[0]`` at the root,
    ``p_rows[i + 1]`` after node i (same layout for ``q_rows``, the rows the children were drafted
    from). Walk down through accepted children; a full rejection ends with the fallback token, a
    node without children with a bonus token from the target."""
    _opts(rule, replacement, epsilon, delta, tree)
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
        )
        out.append(tok)
        if idx is None:
            return TreeVerdict(tuple(path), tuple(out), False)
        u = kids[idx]
        path.append(u)


def tree_round(target, draft, prefix, tree: TokenTree, rng, **kw) -> TreeVerdict:
    """Draft ``tree``, score every node (here one target call per node; a real model does it in one
    pass with :func:`tree_attention_mask`), verify."""
    _opts(
        kw.get("rule", "recursive"),
        kw.get("replacement", True),
        kw.get("epsilon", TYPICAL_EPSILON),
        kw.get("delta", TYPICAL_DELTA),
        tree,
    )
    prefix = _check_models_prefix(target, draft, prefix)
    drafted, q_rows = draft_tree(tree, draft, prefix, rng, replacement=kw.get("replacement", True))
    p_rows = np.array(
        [_row(target, drafted.context(u, prefix), False, "target") for u in range(-1, drafted.n_nodes)]
    )
    _check_prefix_in_rows(prefix, p_rows.shape[1])
    return verify_tree(drafted, p_rows, q_rows, rng, **kw)


def tree_generate(target, draft, prefix, tree: TokenTree, max_new_tokens: int, rng, **kw) -> tuple:
    """Tree rounds until ``max_new_tokens`` tokens exist; returns exactly that many."""
    n = check_gamma(max_new_tokens, "max_new_tokens")
    ctx, out = _check_models_prefix(target, draft, prefix), []
    while len(out) < n:
        v = tree_round(target, draft, ctx, tree, rng, **kw)
        out.extend(v.tokens)
        ctx = ctx + v.tokens
    return tuple(out[:n])


# ------------------------------------------------------------------ a rule against the target
@dataclass(frozen=True)
class TreeComparison:
    """One tree and rule against the target: the law of the first ``length`` tokens under the
    rule, the target's own law, their total variation, and the round's statistics."""

    law: dict
    target_law: dict
    tv: object
    stats: TreeRoundStats


def compare_with_target(
    target,
    draft,
    prefix,
    tree: TokenTree,
    length: int = 2,
    *,
    rule="recursive",
    replacement=True,
    epsilon=TYPICAL_EPSILON,
    delta=TYPICAL_DELTA,
    exact=True,
    key=None,
) -> TreeComparison:
    """The exact (or float64) law a tree rule emits next to the target's, and TV between them."""
    kw = {
        "rule": rule,
        "replacement": replacement,
        "epsilon": epsilon,
        "delta": delta,
        "exact": exact,
        "key": key,
    }
    law = tree_sequence_law(target, draft, prefix, tree, length, **kw)
    want = _target_sequence_law(target, tuple(prefix), length, exact)
    zero = Fraction(0) if exact else 0.0
    keys = sorted(set(law) | set(want))
    tv = sum((abs(law.get(s, zero) - want.get(s, zero)) for s in keys), zero) / 2
    return TreeComparison(law, want, tv, tree_round_stats(target, draft, prefix, tree, **kw))


def _target_sequence_law(target, prefix, length, exact):
    """The target's own law of ``length`` tokens (the same as toy.sequence_law, for any model)."""
    out = {(): Fraction(1) if exact else 1.0}
    for _ in range(length):
        nxt = {}
        for seq, pr in out.items():
            row = _row(target, tuple(prefix) + seq, exact, "target")
            for y, v in enumerate(row):
                if v != 0:
                    nxt[seq + (y,)] = pr * v
        out = nxt
    return out


# ------------------------------------------------------------------ one family, every size
def family_curve(
    target,
    draft,
    prefix,
    family: str,
    max_nodes: int,
    *,
    rule="recursive",
    replacement=True,
    epsilon=TYPICAL_EPSILON,
    delta=TYPICAL_DELTA,
    exact=True,
    key=None,
) -> tuple:
    """E[accepted tree tokens] of ``family_tree(family, n)`` for n = 1 … ``max_nodes``: point n
    is exactly ``tree_round_stats(…, family_tree(family, n), …).expected_accepted``, computed for
    all sizes together (the trees share their verification outcomes: much faster than a call per
    size)."""
    max_nodes = check_int(max_nodes, "max_nodes", 1)
    _opts(rule, replacement, epsilon, delta, family_tree(family, max_nodes), exact)
    prefix = _check_models_prefix(target, draft, prefix, key)
    shared: dict = {}  # same models and options for every size: verification outcomes are shared
    return tuple(
        _round_stats(
            target,
            draft,
            prefix,
            family_tree(family, n),
            rule,
            replacement,
            epsilon,
            delta,
            exact,
            key or tuple,
            shared,
        ).expected_accepted
        for n in range(1, max_nodes + 1)
    )

"""The exact law of a tree round: what one round emits, what rounds emit until n tokens exist,
and how long a round is on average — by enumeration, exact Fractions by default.

A round walks down a drafted :class:`~specdec_core.trees.TokenTree` from the root: at a node, its
children are tried by the multi-candidate rule of :mod:`specdec_core.multidraft`; an accepted
child becomes the current node; if every child is rejected the round ends with a token from the
fallback (the residual, for the lossless rule); a node without children (an accepted leaf, or the
root of an empty tree) earns a bonus token from the target (the sampler that does this is
:mod:`specdec_core.tree_sampling`).

:func:`tree_round_law` is the law of what a round emits, :func:`tree_sequence_law` the law of the
first n tokens over as many rounds as needed (to compare with
:func:`specdec_core.toy.sequence_law`; :func:`compare_with_target` does), :func:`tree_round_stats`
the expected accepted length and pass size, :func:`family_curve` that length for every size of
a tree family.

Every law here is a bottom-up sum over the tree's nodes and the tokens drawn at them, memoized by
(node, context key) and evaluated with an explicit stack (:func:`_bottom_up`), so a deep tree is
no RecursionError.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import comb

import numpy as np

from .distributions import check_bool, check_gamma, check_int, check_model, check_probability, check_size
from .multidraft import (
    MAX_ENUMERATION,
    TYPICAL_DELTA,
    TYPICAL_EPSILON,
    check_children,
    check_replacement,
    multi_draft_outcomes,
    top_k_tokens,
)
from .sampling import check_prefix
from .trees import (
    TokenTree,
    check_tree,
    check_tree_models,
    check_tree_options,
    family_tree,
    model_row,
    offered_children,
)
from .types import Scalar

#: The exact laws enumerate outcomes; beyond this many (summed over the memoized subtrees) they
#: refuse with a ValueError naming the tree and ``max_len`` rather than fill the memory.
MAX_OUTCOMES = 10**6


# ------------------------------------------------------------------ models for the laws
class MixedDraft:
    """A draft of tunable quality: (1 − w)·draft + w·target, exact when both are (w a Fraction).
    w = 0 is the draft itself, w = 1 a perfect draft."""

    def __init__(self, draft: Callable, target: Callable, weight: float | Fraction) -> None:
        check_model(draft, "draft")
        check_model(target, "target")
        w = check_probability(weight, "weight", scalar=True)  # exact -> Fraction, else float
        self.draft, self.target, self.weight = draft, target, w
        self.vocab_size = getattr(draft, "vocab_size", None)

    def __call__(self, prefix: Sequence[int]) -> np.ndarray:
        w = float(self.weight)
        return (1 - w) * np.asarray(self.draft(prefix), float) + w * np.asarray(self.target(prefix), float)

    def exact(self, prefix: Sequence[int]) -> np.ndarray:
        if not isinstance(self.weight, Fraction):
            raise ValueError("weight is a float: no exact row")
        return (1 - self.weight) * self.draft.exact(prefix) + self.weight * self.target.exact(prefix)

    def __repr__(self) -> str:
        return f"MixedDraft(weight={self.weight})"


def last_token_key(prefix: Sequence[int]) -> tuple:
    """Cache key for models that look only at the last token (the toy language)."""
    return tuple(prefix)[-1:]


# ------------------------------------------------------------------ the walk every law shares
def _bottom_up(root: tuple, memo_key: Callable, needs: Callable, value: Callable, memo: dict) -> object:
    """``memo[memo_key(root)]``, computing ``value(state)`` for a state once every state in
    ``needs(state)`` is in ``memo``: a post-order walk with an explicit stack (no recursion)."""
    stack = [root]
    while stack:
        state = stack[-1]
        mk = memo_key(state)
        if mk in memo:
            stack.pop()
            continue
        todo = [s for s in needs(state) if memo_key(s) not in memo]
        if todo:
            stack.extend(todo)
            continue
        memo[mk] = value(state)
        stack.pop()
    return memo[memo_key(root)]


def _node_outcomes(
    target,
    draft,
    tree,
    rule,
    replacement,
    epsilon,
    delta,
    exact,
    key,
    shared=None,
    children=("sampled", None),
):
    """node, context -> (offered children, p, {(i, x): prob accepted}, [(prob, law)] for the
    round's last token from this node: the fallback after all rejections, or the bonus at a leaf).

    ``shared``: optional dict of verification outcomes by (context key, number of children), valid
    across trees for the same models and options (:func:`family_curve` uses it). ``children``:
    (how the children are chosen, the pruning threshold), see :data:`~specdec_core.multidraft.CHILD_CHOICES`."""
    cache = {}
    shared = {} if shared is None else shared

    def node(u, ctx):
        ck = (u, key(ctx))
        if ck not in cache:
            p = model_row(target, ctx, exact, "target")
            kids = tree.children(u)
            if kids:
                q = model_row(draft, ctx, exact, "draft")
                if len(q) != len(p):
                    raise ValueError(f"target and draft rows differ in size at {ctx}: {len(p)} vs {len(q)}")
                kids = offered_children(kids, q, replacement and children[0] != "top_k")
                sk = (key(ctx), len(kids))
                if sk not in shared:
                    shared[sk] = multi_draft_outcomes(
                        p,
                        q,
                        len(kids),
                        rule=rule,
                        replacement=replacement,
                        epsilon=epsilon,
                        delta=delta,
                        children=children[0],
                        threshold=children[1],
                    )
                accepted, fallbacks = shared[sk]
            else:
                accepted, fallbacks = {}, [(1 if exact else 1.0, p)]
            cache[ck] = (kids, p, accepted, fallbacks)
        return cache[ck]

    return node


# ------------------------------------------------------------------ what one round emits
def tree_round_law(
    target: Callable,
    draft: Callable,
    prefix: Sequence[int],
    tree: TokenTree,
    *,
    rule: str = "recursive",
    replacement: bool = True,
    epsilon: float = TYPICAL_EPSILON,
    delta: float = TYPICAL_DELTA,
    exact: bool = True,
    key: Callable[[tuple], Hashable] | None = None,
    max_len: int | None = None,
    children: str = "sampled",
    threshold: Scalar | None = None,
) -> dict:
    """{emitted tokens (tuple): probability} for one tree round from ``prefix``, by enumeration.

    Without replacement a node offers only as many children as the draft has tokens there (the
    rest of its slots stay empty). ``key(prefix)`` may name a cache key for contexts whose rows are
    equal (e.g. :func:`last_token_key` for the toy language); ``None`` caches by full prefix.
    ``max_len``: keep only the first ``max_len`` emitted tokens (their law is still exact).
    ``children``, ``threshold``: how a node's children are chosen (sampled from the draft's row,
    its top k verified as one-hot proposals, or sampled and pruned by their own q: see
    :data:`~specdec_core.multidraft.CHILD_CHOICES`)."""
    check_tree_options(rule, replacement, epsilon, delta, tree, exact)
    ch = check_children(children, threshold)
    prefix = check_tree_models(target, draft, prefix, key)
    if max_len is not None:
        max_len = check_gamma(max_len, "max_len")
    key = key or tuple
    node = _node_outcomes(target, draft, tree, rule, replacement, epsilon, delta, exact, key, children=ch)
    return _round_law(node, key, exact, tree.n_nodes)(-1, prefix, -1 if max_len is None else max_len)


def _round_law(node, key, exact, n_nodes=0):
    """law(u, ctx, budget): the law of the tokens a round emits from node u on (first ``budget``;
    -1 for all), refused past :data:`MAX_OUTCOMES` enumerated outcomes."""
    memo = {}
    one = Fraction(1) if exact else 1.0
    base = {(): one}
    size = [0]

    def memo_key(state):
        u, ctx, budget = state
        return (u, key(ctx), budget)

    def needs(state):  # the accepted children with budget left
        u, ctx, budget = state
        kids, _, accepted, _ = node(u, ctx)
        return [(kids[i], ctx + (x,), budget - 1) for (i, x) in accepted if budget - 1 != 0]

    def sub(u, ctx, budget):
        return base if budget == 0 else memo[memo_key((u, ctx, budget))]

    def value(state):  # accepted child x, then what follows it; or the round's last token here
        u, ctx, budget = state
        kids, _, accepted, fallbacks = node(u, ctx)
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
        return dict(out)

    def law(u0, ctx0, budget0):
        return base if budget0 == 0 else _bottom_up((u0, ctx0, budget0), memo_key, needs, value, memo)

    return law


# ------------------------------------------------------------------ rounds until n tokens exist
def tree_sequence_law(
    target: Callable,
    draft: Callable,
    prefix: Sequence[int],
    tree: TokenTree,
    length: int,
    *,
    rule: str = "recursive",
    replacement: bool = True,
    epsilon: float = TYPICAL_EPSILON,
    delta: float = TYPICAL_DELTA,
    exact: bool = True,
    key: Callable[[tuple], Hashable] | None = None,
    children: str = "sampled",
    threshold: Scalar | None = None,
) -> dict:
    """{first ``length`` tokens: probability} when tree rounds run until ``length`` tokens exist
    (the last round's extra tokens cut off). For the lossless rule, with children sampled or the
    top k, it must equal the target's own law of ``length`` tokens; pruned children do not."""
    length = check_gamma(length, "length")
    check_tree_options(rule, replacement, epsilon, delta, tree, exact)
    ch = check_children(children, threshold)
    prefix = check_tree_models(target, draft, prefix, key)
    _check_length(target, prefix, length, exact)
    key = key or tuple
    memo = {}
    round_law = _round_law(
        _node_outcomes(target, draft, tree, rule, replacement, epsilon, delta, exact, key, children=ch),
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
    V = len(model_row(target, prefix, exact, "target"))
    check_prefix(prefix, V)
    if length * np.log10(max(V, 1)) > np.log10(MAX_OUTCOMES) + 1e-9:
        raise ValueError(
            f"length = {length} over a vocabulary of {V} gives up to {V}^{length} sequences; "
            f"at most {MAX_OUTCOMES:,} are enumerated"
        )


# ------------------------------------------------------------------ how long a round is
@dataclass(frozen=True)
class TreeRoundStats:
    """E[accepted tree tokens], E[emitted tokens] = that + 1, and the positions one pass scores.

    ``positions`` counts what the pass really scores: 1 + the expected number of nodes the draft
    fills (:func:`expected_drafted_nodes`). With replacement that is every node (``nodes`` + 1,
    an int); without replacement a node offers at most as many children as the draft's row has
    tokens, so :func:`~specdec_core.tree_sampling.draft_tree` drops the rest with their subtrees
    and ``positions`` can be smaller (exact or float, like the other expectations). ``nodes`` is
    the tree's shape."""

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


def _filled_slot_laws(q, m, exact, replacement, children):
    """For each of a node's ``m`` slots, {token: probability the slot is filled with it}: the top
    k are certain; sampled slots follow q (or its draws without replacement); a pruned slot is
    empty when its token's q is below the threshold."""
    if children[0] == "top_k":
        one = Fraction(1) if exact else 1.0
        return [{x: one} if children[1] is None or q[x] >= children[1] else {} for x in top_k_tokens(q, m)]
    if replacement:
        laws = [{x: v for x, v in enumerate(q) if v > 0}] * m
    else:
        s = sum(1 for v in q if v > 0)  # states: the sets drawn before each child
        check_size(
            sum(comb(s, j) for j in range(m)) * len(q),
            f"{m} children drawn without replacement over {len(q)} tokens",
            MAX_ENUMERATION,
            "table entries to enumerate",
        )
        laws = _slot_laws(q, m, exact)
    if children[0] == "pruned":  # the same test on a sampled token
        laws = [{x: v for x, v in law.items() if q[x] >= children[1]} for law in laws]
    return laws


def expected_drafted_nodes(
    draft: Callable,
    prefix: Sequence[int],
    tree: TokenTree,
    *,
    replacement: bool = True,
    exact: bool = True,
    key: Callable[[tuple], Hashable] | None = None,
) -> object:
    """Expected number of nodes :func:`~specdec_core.tree_sampling.draft_tree` fills in ``tree``:
    all of them with replacement; without replacement a node at context c offers only its first
    min(children, support of the draft's row at c) children, so the count depends on the tokens
    drawn above (exact Fractions by default, float64 with ``exact=False``)."""
    check_tree(tree)
    check_model(draft, "draft")
    replacement = check_replacement(replacement)
    prefix = check_tree_models(draft, draft, prefix, key)
    return _expected_drafted(draft, prefix, tree, replacement, check_bool(exact, "exact"), key or tuple)


def _expected_drafted(draft, prefix, tree, replacement, exact, key, children=("sampled", None)):
    if replacement and children[0] == "sampled":
        return tree.n_nodes
    zero = Fraction(0) if exact else 0.0
    slots = {}

    def slot_laws(u, ctx):  # [(child, {token: probability}), ...] for the children u offers
        sk = (u, key(ctx))
        if sk not in slots:
            q = model_row(draft, ctx, exact, "draft")
            kids = offered_children(tree.children(u), q, replacement and children[0] != "top_k")
            slots[sk] = list(zip(kids, _filled_slot_laws(q, len(kids), exact, replacement, children)))
        return slots[sk]

    def memo_key(state):
        return (state[0], key(state[1]))

    def needs(state):  # the filled children that have children of their own
        return [(kid, state[1] + (x,)) for kid, law in slot_laws(*state) for x in law if tree.children(kid)]

    memo = {}

    def below(kid, ctx):  # what a filled child fills under it
        return memo[memo_key((kid, ctx))] if tree.children(kid) else 0

    def value(state):  # Σ over the filled children: 1 + what each fills below
        u, ctx = state
        return sum(
            (pr * (1 + below(kid, ctx + (x,))) for kid, law in slot_laws(u, ctx) for x, pr in law.items()),
            zero,
        )

    out = _bottom_up((-1, tuple(prefix)), memo_key, needs, value, memo)
    return tree.n_nodes if out == tree.n_nodes else out


def tree_round_stats(
    target: Callable,
    draft: Callable,
    prefix: Sequence[int],
    tree: TokenTree,
    *,
    rule: str = "recursive",
    replacement: bool = True,
    epsilon: float = TYPICAL_EPSILON,
    delta: float = TYPICAL_DELTA,
    exact: bool = True,
    key: Callable[[tuple], Hashable] | None = None,
    children: str = "sampled",
    threshold: Scalar | None = None,
) -> TreeRoundStats:
    """Expected accepted length of one round (exact by default) and its pass size: every node the
    draft fills plus the last emitted token's position (n + 1 positions with replacement; fewer
    on average without, when the draft's support is smaller than a node's children; see
    :class:`TreeRoundStats`)."""
    check_tree_options(rule, replacement, epsilon, delta, tree, exact)
    ch = check_children(children, threshold)
    prefix = check_tree_models(target, draft, prefix, key)
    opts = (rule, replacement, epsilon, delta, exact, key or tuple)
    return _round_stats(target, draft, prefix, tree, *opts, children=ch)


def _round_stats(
    target,
    draft,
    prefix,
    tree,
    rule,
    replacement,
    epsilon,
    delta,
    exact,
    key,
    shared=None,
    children=("sampled", None),
):
    node = _node_outcomes(
        target, draft, tree, rule, replacement, epsilon, delta, exact, key, shared, children
    )
    zero = Fraction(0) if exact else 0.0
    memo = {}

    def memo_key(state):
        return (state[0], key(state[1]))

    def needs(state):  # the accepted children
        kids, _, accepted, _ = node(*state)
        return [(kids[i], state[1] + (x,)) for (i, x) in accepted]

    def value(state):  # E[accepted below u] = Σ m·(1 + E[accepted below child])
        u, ctx = state
        kids, _, accepted, _ = node(u, ctx)
        return sum((m * (1 + memo[memo_key((kids[i], ctx + (x,)))]) for (i, x), m in accepted.items()), zero)

    ea = _bottom_up((-1, tuple(prefix)), memo_key, needs, value, memo)
    drafted = _expected_drafted(draft, prefix, tree, replacement, exact, key, children)
    return TreeRoundStats(ea, ea + 1, drafted + 1, tree.n_nodes)


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
    target: Callable,
    draft: Callable,
    prefix: Sequence[int],
    tree: TokenTree,
    length: int = 2,
    *,
    rule: str = "recursive",
    replacement: bool = True,
    epsilon: float = TYPICAL_EPSILON,
    delta: float = TYPICAL_DELTA,
    exact: bool = True,
    key: Callable[[tuple], Hashable] | None = None,
    children: str = "sampled",
    threshold: Scalar | None = None,
) -> TreeComparison:
    """The exact (or float64) law a tree rule emits next to the target's, and TV between them."""
    kw = {
        "rule": rule,
        "replacement": replacement,
        "epsilon": epsilon,
        "delta": delta,
        "exact": exact,
        "key": key,
        "children": children,
        "threshold": threshold,
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
            row = model_row(target, tuple(prefix) + seq, exact, "target")
            for y, v in enumerate(row):
                if v != 0:
                    nxt[seq + (y,)] = pr * v
        out = nxt
    return out


# ------------------------------------------------------------------ one family, every size
def family_curve(
    target: Callable,
    draft: Callable,
    prefix: Sequence[int],
    family: str,
    max_nodes: int,
    *,
    rule: str = "recursive",
    replacement: bool = True,
    epsilon: float = TYPICAL_EPSILON,
    delta: float = TYPICAL_DELTA,
    exact: bool = True,
    key: Callable[[tuple], Hashable] | None = None,
) -> tuple:
    """E[accepted tree tokens] of ``family_tree(family, n)`` for n = 1 … ``max_nodes``: point n
    is exactly ``tree_round_stats(…, family_tree(family, n), …).expected_accepted``, computed for
    all sizes together (the trees share their verification outcomes: much faster than a call per
    size)."""
    max_nodes = check_int(max_nodes, "max_nodes", 1)
    check_tree_options(rule, replacement, epsilon, delta, family_tree(family, max_nodes), exact)
    prefix = check_tree_models(target, draft, prefix, key)
    shared: dict = {}  # same models and options for every size: verification outcomes are shared
    opts = (rule, replacement, epsilon, delta, exact, key or tuple, shared)
    return tuple(
        _round_stats(target, draft, prefix, family_tree(family, n), *opts).expected_accepted
        for n in range(1, max_nodes + 1)
    )

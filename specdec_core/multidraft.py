"""Several candidates at one position: recursive rejection (lossless) and two lossy rules.

The draft offers k candidate tokens x₁ … x_k for the same position, drawn from q either
independently (``replacement=True``) or without replacement (each next candidate from q with
the earlier ones removed and renormalized). The target p decides.

**Recursive rejection** (SpecInfer, Miao et al. 2023; SpecTr's k-sequential rule, Sun et al.
2023; recursive speculative decoding, Jeon et al. 2024 for the without-replacement form):
candidate i is tried against a *current* target tᵢ and its own proposal law sᵢ,

* accept xᵢ with probability min(1, tᵢ(xᵢ)/sᵢ(xᵢ));
* after a rejection the target becomes the residual t_{i+1} = normalize(max(tᵢ − sᵢ, 0)) and,
  without replacement, s_{i+1} is sᵢ with xᵢ removed and renormalized (with replacement s = q);
* if all k are rejected, the token is drawn from the last residual.

Each step is one ordinary speculative step from t to the residual, so by induction (last step
first) the emitted token has law t₁ = p. :func:`multi_draft_output_distribution` computes that law
exactly by enumeration instead of assuming it.

Two **lossy** rules are kept for comparison (:data:`MULTI_DRAFT_RULES`):

* ``"no_update"`` — accept any candidate the target would accept on its own,
  min(1, p(xᵢ)/sᵢ(xᵢ)), never updating the target to the residual; if all are rejected, draw from
  normalize(max(p − s_k, 0)). With k = 1 this *is* speculative sampling; with k ≥ 2 it favours
  the tokens the draft likes.
* ``"typical"`` — Medusa-style typical acceptance (Cai et al. 2024): accept the first candidate
  with p(x) > min(ε, δ·exp(−H(p))) (H in nats); if none passes, draw from p. (Medusa itself takes
  the target's greedy choice for the first token; here the fallback is a sample from p.)

**How the candidates are chosen** (``children``, :data:`CHILD_CHOICES`) matters as much as the
rule. Verification divides by the law a candidate *really* came from:

* ``"sampled"`` — drawn from q as above (the default);
* ``"top_k"`` — the draft's k most likely tokens, taken deterministically (EAGLE-2's tree), and
  with a ``threshold`` only those whose q(x) reaches it: each is a *one-hot* proposal (it was
  certain, given the draft's row), so it is kept with probability tᵢ(xᵢ) and a rejection zeroes
  xᵢ in the current target and renormalizes (the residual of a one-hot proposal). Lossless, the
  confidence pruning included: it depends on the row only, not on a random draw;
* ``"pruned"`` — drawn from q, then every candidate whose own q(x) is below ``threshold`` dropped,
  and the rest verified as if drawn from q. Not lossless: the survivors come from q restricted
  to the confident tokens, not from the q the verifier divides by. It is notebook 04's
  withholding rule (eq. (5): a proposal may not depend on the token itself) at one position.

:func:`candidate_outcomes` computes the law of the last two by enumerating every tuple of
candidates and, for each, the verifier's exact outcome.

Exact inputs (Fractions) give exact outputs, except that the typical rule's threshold involves
exp(−H), so its *pass set* is decided in float64; the law given that set stays exact.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .distributions import (
    check_bool,
    check_distribution,
    check_gamma,
    check_int,
    check_nonnegative,
    check_pair,
    check_probability,
    check_rng,
    check_sequence,
    check_size,
    draw,
)
from .verify import rejection_probability, residual_distribution

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .types import Probs, Scalar

#: Acceptance rules for several candidates. Only "recursive" keeps the target's law.
MULTI_DRAFT_RULES = ("recursive", "no_update", "typical")

#: How a node's candidates are chosen (module docstring): sampled from q, the draft's top k
#: (verified as one-hot proposals), or sampled and then pruned by their own q (biased).
CHILD_CHOICES = ("sampled", "top_k", "pruned")

#: Float inputs only: a rejection mass below this is float rounding (t = s up to it), not a
#: chance of rejection; the exact path never uses it.
FLOAT_REJECT_TOL = 1e-12

#: Medusa's published defaults for typical acceptance (ε = 0.09, δ = √ε = 0.3).
TYPICAL_EPSILON = 0.09
TYPICAL_DELTA = 0.3

#: The exact laws enumerate what rejections can leave behind: without replacement that is
#: about s·(s−1)⋯ branches (s the draft's support) of V entries each. Refused beyond this many
#: entries (about 2 s of work), with a ValueError naming k, rather than running for minutes.
MAX_ENUMERATION = 2 * 10**7


# ------------------------------------------------------------------ validation helpers
def check_rule(rule: object, name: str = "rule") -> str:
    if not isinstance(rule, str) or rule not in MULTI_DRAFT_RULES:
        raise ValueError(f"{name} must be one of {MULTI_DRAFT_RULES}, got {rule!r}")
    return rule


def check_replacement(replacement: object, name: str = "replacement") -> bool:
    return check_bool(replacement, name)


def check_children(children: object, threshold: object = None) -> tuple[str, Scalar | None]:
    """``children`` one of :data:`CHILD_CHOICES`; ``threshold`` a probability in [0, 1]: required
    with ``"pruned"``, optional with ``"top_k"`` (drop top tokens whose q is below it), refused
    with ``"sampled"``. Exact stays exact."""
    if not isinstance(children, str) or children not in CHILD_CHOICES:
        raise ValueError(f"children must be one of {CHILD_CHOICES}, got {children!r}")
    if children == "pruned" and threshold is None:
        raise ValueError('threshold is required with children="pruned" (prune candidates with q(x) below it)')
    if children == "sampled" and threshold is not None:
        raise ValueError(f'threshold is not used with children="sampled", got threshold={threshold!r}')
    return children, None if threshold is None else check_probability(threshold, "threshold", scalar=True)


def top_k_tokens(q: Probs, k: int) -> tuple[int, ...]:
    """The draft's k most likely tokens, most likely first (ties: the lower index first); k may
    not exceed the number of tokens q gives mass to."""
    qa = check_distribution(q, "q")
    k = check_k(k, qa, False)
    order = sorted((x for x in range(len(qa)) if qa[x] > 0), key=lambda x: (-qa[x], x))
    return tuple(order[:k])


def check_typical(epsilon: float, delta: float) -> tuple[float, float]:
    """ε in (0, 1] and δ ≥ 0, both finite numbers."""
    e = float(check_nonnegative(epsilon, "epsilon", "a number"))
    d = float(check_nonnegative(delta, "delta", "a number"))
    if not 0 < e <= 1:
        raise ValueError(f"epsilon must be in (0, 1], got {epsilon!r}")
    return e, d


def check_k(k: int, q: Probs, replacement: bool, name: str = "k") -> int:
    """k ≥ 1 candidates; without replacement no more than the draft's support holds."""
    k = check_gamma(k, name)
    replacement = check_replacement(replacement)
    if k < 1:
        raise ValueError(f"{name} must be at least 1, got {k}")
    support = int(sum(1 for v in np.asarray(q).flat if v > 0))
    if not replacement and k > support:
        raise ValueError(
            f"{name} = {k} candidates without replacement, but the draft q puts mass on only {support} tokens"
        )
    return k


def check_candidates(
    candidates: Sequence[int], q: np.ndarray, replacement: bool, name: str = "candidates"
) -> tuple[int, ...]:
    """Token indices in range, each with q(x) > 0, distinct when drawn without replacement."""
    replacement = check_replacement(replacement)
    # ordered: the order decides which candidate is tried first (a set or dict has none)
    items = check_sequence(candidates, name, "a sequence of token indices")
    cands = []
    V = len(q)
    for i, x in enumerate(items):
        x = check_int(x, f"{name}[{i}]", None, what="a token index (int)")
        if not 0 <= x < V:
            raise ValueError(f"{name}[{i}] = {x} is out of range for a vocabulary of {V}")
        if q[x] == 0:
            raise ValueError(f"{name}[{i}] = {x} has q(x) = 0: the draft cannot propose it")
        cands.append(int(x))
    if not cands:
        raise ValueError(f"{name} is empty: give at least one candidate")
    if not replacement and len(set(cands)) != len(cands):
        raise ValueError(f"{name} repeats a token, impossible when drawing without replacement: {cands}")
    return tuple(cands)


def typical_threshold(p: Probs, epsilon: float = TYPICAL_EPSILON, delta: float = TYPICAL_DELTA) -> float:
    """min(ε, δ·exp(−H(p))), H in nats: a candidate passes when p(x) exceeds it."""
    eps, dl = check_typical(epsilon, delta)
    pf = np.asarray(check_distribution(p, "p"), dtype=np.float64)
    nz = pf[pf > 0]
    h = float(-(nz * np.log(nz)).sum())
    return min(eps, dl * math.exp(-h))


# ------------------------------------------------------------------ small exact-or-float helpers
def _zero(exact):
    return Fraction(0) if exact else 0.0


def _remove(s, x):
    """s with token x removed and renormalized (the next proposal law without replacement)."""
    out = s.copy()
    out[x] = 0
    return out / (1 - s[x])


def _min(a, b):
    return np.array([min(u, v) for u, v in zip(a, b)], dtype=a.dtype)


def _accept_mass(rule, t, s, pass_set):
    """Per token: probability it is proposed (from s) and accepted (against t)."""
    if rule == "typical":
        return np.array([s[x] if x in pass_set else 0 * s[x] for x in range(len(s))], dtype=s.dtype)
    return _min(t, s)


def _accept_prob(rule, t, s, x, pass_set):
    if rule == "typical":
        return 1 if x in pass_set else 0
    return min(1, t[x] / s[x])


def _next(rule, p, t, s):
    """(next target, fallback if this was the last candidate) after a rejection."""
    if rule == "recursive":
        r = residual_distribution(t, s)
        return r, r
    if rule == "no_update":
        return p, residual_distribution(p, s)
    return p, p


# ------------------------------------------------------------------ the sampler
def sample_candidates(
    q: Probs, k: int, rng: np.random.Generator, *, replacement: bool = True
) -> tuple[int, ...]:
    """k candidate tokens from q: independent, or without replacement (renormalizing)."""
    qa = np.asarray(check_distribution(q, "q"), dtype=np.float64)
    k = check_k(k, qa, replacement)
    check_rng(rng)
    if replacement:  # the library's own sampler (float32 rows within SUM_TOL are fine)
        return tuple(int(x) for x in draw(qa, rng, size=k))
    out, s = [], qa.copy()
    for _ in range(k):
        x = int(draw(s, rng))
        out.append(x)
        s[x] = 0.0
    return tuple(out)


def choose_candidates(
    q: Probs,
    k: int,
    rng: np.random.Generator,
    *,
    children: str = "sampled",
    threshold: Scalar | None = None,
    replacement: bool = True,
) -> tuple[tuple[int, int], ...]:
    """The candidates a node offers, as ``(slot, token)`` pairs in slot order (``children``: see
    :data:`CHILD_CHOICES`): k draws from q; the draft's top k (no random draw; with a
    ``threshold`` only those whose q reaches it); or k draws from q with those below
    ``threshold`` left out. A slot left out is empty (in a tree: dropped with its subtree)."""
    children, threshold = check_children(children, threshold)
    qa = np.asarray(check_distribution(q, "q"), dtype=np.float64)
    check_rng(rng)
    if children == "top_k":
        tokens = top_k_tokens(qa, k)
    else:
        tokens = sample_candidates(qa, k, rng, replacement=replacement)
    return tuple((i, x) for i, x in enumerate(tokens) if threshold is None or qa[x] >= threshold)


def verify_candidates(
    p: Probs,
    q: Probs,
    candidates: Sequence[int],
    rng: np.random.Generator,
    *,
    rule: str = "recursive",
    replacement: bool = True,
    epsilon: float = TYPICAL_EPSILON,
    delta: float = TYPICAL_DELTA,
    children: str = "sampled",
) -> tuple[int | None, int]:
    """One position, k candidates, under ``rule``. Returns ``(index, token)``; ``index`` is the
    accepted candidate's position in ``candidates`` or ``None`` when every candidate was rejected
    (then ``token`` comes from the fallback: the last residual for "recursive").

    ``children="top_k"``: the candidates are the draft's top tokens, so each is verified as a
    one-hot proposal (kept with probability t(x); a rejection zeroes x in the current target).
    ``"sampled"`` and ``"pruned"`` divide by q (for pruned candidates that is the biased rule)."""
    check_rule(rule)
    children, _ = check_children(children, 0 if children == "pruned" else None)
    pa, qa, _ = check_pair(p, q)
    if pa.ndim != 1:
        raise ValueError(f"p and q must be single distributions (shape (V,)), got shape {pa.shape}")
    replacement = check_replacement(replacement)
    cands = check_candidates(candidates, qa, replacement and children != "top_k")
    check_rng(rng)
    pass_set = set()
    if rule == "typical":
        thr = typical_threshold(pa, epsilon, delta)
        pass_set = {x for x in range(len(pa)) if float(pa[x]) > thr}
    t, s, fallback = pa, qa, pa
    for i, x in enumerate(cands):
        if children == "top_k":
            s = _one_hot(x, qa)
        a = float(_accept_prob(rule, t, s, x, pass_set))
        if rng.random() < a or (
            t.dtype != object and rule != "typical" and float(rejection_probability(s, t)) < FLOAT_REJECT_TOL
        ):
            return i, x  # (a rejection that only float rounding allows is none)
        t, fallback = _next(rule, pa, t, s)
        if not replacement and children != "top_k" and i + 1 < len(cands):
            s = _remove(s, x)
    return None, int(draw(np.asarray(fallback, dtype=np.float64), rng))


def verify_multi_draft(
    p: Probs, q: Probs, candidates: Sequence[int], rng: np.random.Generator, *, replacement: bool = True
) -> tuple[int | None, int]:
    """Recursive rejection over k candidates (see the module docstring). Returns
    ``(index, token)``, ``index`` None when all candidates were rejected. Lossless: the token's
    law is p whenever the candidates really were drawn from q as ``replacement`` says."""
    return verify_candidates(p, q, candidates, rng, rule="recursive", replacement=replacement)


# ------------------------------------------------------------------ exact laws
@dataclass(frozen=True)
class MultiDraftLaw:
    """Exact (or float) outcome of one position with k candidates under one rule.

    ``output``: law of the emitted token; ``acceptance``: P(some candidate accepted);
    ``by_index``: P(candidate i is the accepted one), i = 0 … k−1."""

    output: np.ndarray
    acceptance: object
    by_index: tuple


def multi_draft_law(
    p: Probs,
    q: Probs,
    k: int,
    *,
    rule: str = "recursive",
    replacement: bool = True,
    epsilon: float = TYPICAL_EPSILON,
    delta: float = TYPICAL_DELTA,
    children: str = "sampled",
    threshold: Scalar | None = None,
) -> MultiDraftLaw:
    """The exact law of one position with k candidates, by enumerating every candidate a
    rejection can leave behind (no formula for the output is assumed). ``children`` and
    ``threshold``: how the candidates are chosen (:data:`CHILD_CHOICES`; module docstring)."""
    accepted, fallbacks = multi_draft_outcomes(
        p,
        q,
        k,
        rule=rule,
        replacement=replacement,
        epsilon=epsilon,
        delta=delta,
        children=children,
        threshold=threshold,
    )
    pa, _, exact = check_pair(p, q)
    k = check_gamma(k, "k")
    V = len(pa)
    out = np.array([_zero(exact)] * V, dtype=object if exact else np.float64)
    by_index = [_zero(exact)] * k
    for (i, x), m in accepted.items():
        out[x] += m
        by_index[i] += m
    for m, dist in fallbacks:
        out = out + m * dist
    return MultiDraftLaw(out, sum(by_index, _zero(exact)), tuple(by_index))


def _outcomes(rule, p, q, k, replacement, pass_set):
    """{(index, token): probability accepted there} and [(probability, fallback law)] for
    the all-rejected paths. Branches only over tokens a rejection can leave behind."""
    accepted = defaultdict(lambda: 0 * p[0])
    fallbacks = []
    if replacement:  # one path: a loop (k may be large; no recursion)
        t, reach = p, 1 + 0 * p[0]
        for i in range(k):
            acc = _accept_mass(rule, t, q, pass_set)
            for x in range(len(q)):
                if acc[x] != 0:
                    accepted[(i, x)] += reach * acc[x]
            total = (q - acc).sum()
            if total <= 0 or (t.dtype != object and total < FLOAT_REJECT_TOL):
                break  # nothing (or only float rounding) left to reject
            t_next, fb = _next(rule, p, t, q)
            if i + 1 == k:
                fallbacks.append((reach * total, fb))
            t, reach = t_next, reach * total
        return accepted, fallbacks

    def rec(t, s, i, reach):
        acc = _accept_mass(rule, t, s, pass_set)
        for x in range(len(s)):
            if acc[x] != 0:
                accepted[(i, x)] += reach * acc[x]
        rej = s - acc  # proposed and rejected, per token
        total = rej.sum()
        if total <= 0 or (t.dtype != object and total < FLOAT_REJECT_TOL):
            return  # nothing (or only float rounding) left to reject
        t_next, fb = _next(rule, p, t, s)
        if i + 1 == k:
            fallbacks.append((reach * total, fb))
        else:
            for x in range(len(s)):
                if rej[x] > 0:
                    rec(t_next, _remove(s, x), i + 1, reach * rej[x])

    rec(p, q, 0, 1 + 0 * p[0])
    return accepted, fallbacks


def _check_enumeration(k, q, replacement):
    """Refuse an enumeration of more than MAX_ENUMERATION entries (branches × V)."""
    V = len(q)
    if replacement:
        branches = k
    else:
        s = int(sum(1 for v in q if v > 0))
        branches, level = 0, 1
        for j in range(k):  # the j-th candidate is reached along s(s−1)⋯(s−j+1) paths
            branches += level
            level *= s - j
            if branches * V > MAX_ENUMERATION:
                break
    check_size(
        branches * V,
        f"k = {k} candidates {'with' if replacement else 'without'} replacement over {V} tokens",
        MAX_ENUMERATION,
        "table entries to enumerate",
    )


def multi_draft_outcomes(
    p: Probs,
    q: Probs,
    k: int,
    *,
    rule: str = "recursive",
    replacement: bool = True,
    epsilon: float = TYPICAL_EPSILON,
    delta: float = TYPICAL_DELTA,
    children: str = "sampled",
    threshold: Scalar | None = None,
) -> tuple[dict[tuple[int, int], Scalar], list[tuple[Scalar, np.ndarray]]]:
    """What can happen at one position with k candidates: ``({(index, token): probability that
    candidate ``index`` is accepted and is ``token``}, [(probability, fallback law), ...])`` for
    the all-rejected paths. The tree verifier composes these node by node. Sampled candidates are
    integrated over what each rejection leaves behind; ``"top_k"`` and ``"pruned"`` go through
    :func:`candidate_outcomes`."""
    children, threshold = check_children(children, threshold)
    if children != "sampled":
        return candidate_outcomes(
            p,
            q,
            k,
            children=children,
            threshold=threshold,
            rule=rule,
            replacement=replacement,
            epsilon=epsilon,
            delta=delta,
        )
    check_rule(rule)
    pa, qa, _ = check_pair(p, q)
    if pa.ndim != 1:
        raise ValueError(f"p and q must be single distributions (shape (V,)), got shape {pa.shape}")
    k = check_k(k, qa, replacement)
    _check_enumeration(k, qa, replacement)
    accepted, fallbacks = _outcomes(rule, pa, qa, k, replacement, _pass_set(rule, pa, epsilon, delta))
    return dict(accepted), fallbacks


def _pass_set(rule, pa, epsilon, delta):
    """The tokens the typical rule lets through (empty for the other rules)."""
    if rule != "typical":
        return set()
    thr = typical_threshold(pa, epsilon, delta)
    return {x for x in range(len(pa)) if float(pa[x]) > thr}


# ------------------------------------------------------------------ candidates by tuple
def _candidate_tuples(q, k, replacement, children, threshold):
    """[(((slot, token), ...), probability)]: every tuple of candidates the draft can offer, in
    slot order; a pruned candidate leaves its slot empty."""
    one = 1 + 0 * q[0]
    if children == "top_k":
        top = enumerate(top_k_tokens(q, k))
        return [(tuple((i, x) for i, x in top if threshold is None or q[x] >= threshold), one)]
    draws = [((), one, q)]  # (drawn so far, probability, law of the next draw)
    for j in range(k):
        nxt = []
        for drawn, pr, s in draws:
            for x in range(len(q)):
                if s[x] > 0:  # the law of the draw after x (none after the last one)
                    after = s if replacement or j + 1 == k else _remove(s, x)
                    nxt.append((drawn + (x,), pr * s[x], after))
        draws = nxt
    return [
        (tuple((i, x) for i, x in enumerate(drawn) if children == "sampled" or q[x] >= threshold), pr)
        for drawn, pr, _ in draws
    ]


def _one_hot(x, like):
    out = 0 * like
    out[x] = 1 + 0 * like[x]
    return out


def _next_proposal(s, x):
    """The verifier's proposal law after candidate x, drawn without replacement: x removed."""
    return _remove(s, x)


def _verify_tuple(rule, p, q, kept, pr, replacement, children, pass_set, accepted, fallbacks):
    """The verifier's exact outcome on one tuple of candidates ``kept`` (reached with
    probability ``pr``), added to ``accepted`` and ``fallbacks``. The proposal law it divides by:
    one-hot for top-k candidates; else q, without replacement with the earlier candidates removed."""
    t, s, fb, reach, prev = p, q, p, pr, None
    for i, x in kept:
        if children == "top_k":
            s = _one_hot(x, q)
        elif prev is not None and not replacement:
            s = _next_proposal(s, prev)
        a = _accept_prob(rule, t, s, x, pass_set)
        if a != 0:
            accepted[(i, x)] += reach * a
        reach = reach * (1 - a)
        if reach == 0 or (t.dtype != object and reach < FLOAT_REJECT_TOL * pr):
            return
        t, fb = _next(rule, p, t, s)
        prev = x
    fallbacks.append((reach, fb))


def candidate_outcomes(
    p: Probs,
    q: Probs,
    k: int,
    *,
    children: str = "sampled",
    threshold: Scalar | None = None,
    rule: str = "recursive",
    replacement: bool = True,
    epsilon: float = TYPICAL_EPSILON,
    delta: float = TYPICAL_DELTA,
) -> tuple[dict[tuple[int, int], Scalar], list[tuple[Scalar, np.ndarray]]]:
    """The same as :func:`multi_draft_outcomes`, computed another way: enumerate every tuple of
    candidates the draft can offer (``children``: sampled from q, the top k, or sampled and those
    with q(x) < ``threshold`` pruned) and, for each, the verifier's exact outcome. For sampled
    candidates it must agree with :func:`multi_draft_outcomes` (the tests check it); it is the
    only way to the law of top-k and pruned candidates."""
    children, threshold = check_children(children, threshold)
    check_rule(rule)
    pa, qa, _ = check_pair(p, q)
    if pa.ndim != 1:
        raise ValueError(f"p and q must be single distributions (shape (V,)), got shape {pa.shape}")
    replacement = check_replacement(replacement)
    k = check_k(k, qa, replacement and children != "top_k")
    support = int(sum(1 for v in qa if v > 0))
    tuples = 1 if children == "top_k" else math.perm(support, k) if not replacement else support**k
    check_size(
        tuples * k * len(qa),
        f"k = {k} {children} candidates over {len(qa)} tokens",
        MAX_ENUMERATION,
        "table entries to enumerate",
    )
    pass_set = _pass_set(rule, pa, epsilon, delta)
    accepted = defaultdict(lambda: 0 * pa[0])
    fallbacks = []
    for kept, pr in _candidate_tuples(qa, k, replacement, children, threshold):
        _verify_tuple(rule, pa, qa, kept, pr, replacement, children, pass_set, accepted, fallbacks)
    return dict(accepted), fallbacks


def multi_draft_acceptance_probability(p: Probs, q: Probs, k: int, *, replacement: bool = True) -> Scalar:
    """P(one of the k candidates is accepted) under recursive rejection; exact in, exact out.
    At k = 1 this is α = Σ min(p, q)."""
    return multi_draft_law(p, q, k, replacement=replacement).acceptance


def multi_draft_output_distribution(p: Probs, q: Probs, k: int, *, replacement: bool = True) -> np.ndarray:
    """The exact law of the emitted token under recursive rejection, by enumeration. It equals p
    (the tests and notebook 08 check it; nothing here assumes it)."""
    return multi_draft_law(p, q, k, replacement=replacement).output

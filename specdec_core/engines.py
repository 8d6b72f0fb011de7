"""What the engines a learner will use run, in this collection's terms (notebook 09b).

vLLM, Hugging Face transformers and llama.cpp verify drafts with one of two rules:

* **the strict rule** of notebook 02 (accept x with probability min(1, p(x)/q(x)), correct a
  rejection from the residual): :mod:`specdec_core.verify`;
* **the match rule**: draw the target's own token y ~ p at the position and keep the proposal x
  only if y = x; on a mismatch emit y and end the round. Every emitted token *is* a draw from
  p, so the output keeps p's law whatever the draft does; what the draft decides is only how
  often the round goes on. With a **sampled** draft (x ~ q, drawn independently of y) a
  proposal passes with probability Σₓ q(x)·p(x); with a **greedy** draft (x* = argmax q,
  ties to the first symbol) with probability p(x*). The strict rule with the same sampled
  draft passes with α = Σ min(p, q) ≥ Σ q·p (each term: min(p, q) ≥ q·p, as p, q ≤ 1), so
  matching a sampled draft is exact but wasteful. A greedy draft is the proposal law
  one-hot(x*), and the strict rule then accepts with α = min(p(x*), 1) = p(x*) and corrects
  from p with x* removed: the same acceptance and the same law as matching — the two rules
  coincide (:func:`match_round_law` against ``processors.round_output_law`` with
  :class:`GreedyDraft`, exactly).

The one-position functions take p and q of shape (V,) (validated together, exact in → exact
out: ``Fraction`` object arrays; floats → float64). :func:`match_joint_law` is the enumeration
the others read: the law of the pair (proposal x, target draw y). :data:`MISMATCH_RULES` names
what is emitted on a mismatch: only ``"target"`` (the target's own draw y) is right; the two
others are the deliberate mistakes the tests must catch.

Also here: the engines' dashboard numbers computed from recorded rounds
(:func:`engine_metrics`, each one a function of :mod:`specdec_core.acceptance_stats`), and the
round time when the draft overlaps the target's verification (:func:`overlapped_round_time_ms`,
notebook 05's timing model with max(draft, verify) in place of their sum).

Pure layer: numpy and fractions only.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from .acceptance_stats import acceptance_by_position, full_rounds
from .distributions import (
    check_distribution,
    check_gamma,
    check_pair,
    check_probability,
    check_time,
    check_token_ids,
    is_exact,
)
from .processors import MAX_ENUMERATED, chain_round_laws, check_law_models
from .timing import round_time_ms
from .verify import correction_weights

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .sampling import GenerationResult
    from .types import ExactModel, Probs, Scalar

#: How the draft picks its proposal: drawn from q, or q's most likely symbol (first on ties).
DRAFT_MODES = ("sampled", "greedy")

#: What the match rule emits when the target's draw y differs from the proposal x. "target"
#: (emit y) is the rule the engines run; "redraw" (draw a fresh token from p) and "residual"
#: (correct from the strict rule's residual, as if the proposal had been rejected by the ratio
#: test) are deliberate mistakes: both change the output law.
MISMATCH_RULES = ("target", "redraw", "residual")


def check_draft_mode(mode: object, name: str = "draft") -> str:
    """One of :data:`DRAFT_MODES`."""
    if not isinstance(mode, str) or mode not in DRAFT_MODES:
        raise ValueError(f"{name} must be one of {DRAFT_MODES}, got {mode!r}")
    return mode


def check_mismatch_rule(rule: object, name: str = "on_mismatch") -> str:
    """One of :data:`MISMATCH_RULES`."""
    if not isinstance(rule, str) or rule not in MISMATCH_RULES:
        raise ValueError(f"{name} must be one of {MISMATCH_RULES}, got {rule!r}")
    return rule


def _one_hot(arr: np.ndarray, exact: bool) -> np.ndarray:
    hot = int(np.argmax(np.asarray(arr, dtype=np.float64))) if not exact else _first_max(arr)
    if exact:
        out = np.full(arr.shape, Fraction(0), dtype=object)
        out[hot] = Fraction(1)
        return out
    out = np.zeros(arr.shape, dtype=np.float64)
    out[hot] = 1.0
    return out


def _first_max(arr: np.ndarray) -> int:
    best = max(arr)
    return next(i for i, v in enumerate(arr) if v == best)


def greedy_row(q: Probs) -> np.ndarray:
    """The greedy draft's proposal law: one-hot at q's most likely symbol (the first of equals).
    One distribution of shape (V,); exact q gives a Fraction array, float q a float64 one."""
    exact = is_exact(q)
    qa = check_distribution(q, "q", exact=exact)
    if qa.ndim != 1:
        raise ValueError(f"q must be one distribution of shape (V,), got shape {qa.shape}")
    return _one_hot(qa, exact)


def _pair(p, q, draft):
    check_draft_mode(draft)
    pa, qa, exact = check_pair(p, q)
    if pa.ndim != 1:
        raise ValueError(f"p and q must be single distributions of shape (V,), got shape {pa.shape}")
    proposal = _one_hot(qa, exact) if draft == "greedy" else qa
    return pa, qa, proposal, exact


def proposal_law(q: Probs, draft: str = "sampled") -> np.ndarray:
    """The law of the proposal x: q itself (``"sampled"``) or one-hot(argmax q) (``"greedy"``)."""
    check_draft_mode(draft)
    return greedy_row(q) if draft == "greedy" else check_distribution(q, "q", exact=is_exact(q))


def match_joint_law(p: Probs, q: Probs, draft: str = "sampled") -> np.ndarray:
    """The exact law of the pair (proposal x, target draw y) at one position: a (V, V) array
    with entry [x, y] = r(x)·p(y), r the proposal law — the two draws are independent. Every
    other function of the match rule reads this table. At most ``processors.MAX_ENUMERATED``
    cells are enumerated."""
    pa, _qa, r, _exact = _pair(p, q, draft)
    if pa.size**2 > MAX_ENUMERATED:
        raise ValueError(f"V = {pa.size} would enumerate V² pairs; at most {MAX_ENUMERATED:,} are enumerated")
    return np.multiply.outer(r, pa)


def match_accepted_mass(p: Probs, q: Probs, draft: str = "sampled") -> np.ndarray:
    """Per symbol, the probability that x is proposed and the target's draw matches it: the
    diagonal r(x)·p(x) of :func:`match_joint_law` (the strict rule's counterpart is min(p, q))."""
    return np.diagonal(match_joint_law(p, q, draft)).copy()


def match_acceptance(p: Probs, q: Probs, draft: str = "sampled") -> Scalar:
    """The chance one proposal passes the match rule: Σₓ q(x)·p(x) for a sampled draft, p(x*)
    for a greedy one. Compare the strict rule's α = Σ min(p, q) (``verify.acceptance_probability``)."""
    diag = match_accepted_mass(p, q, draft)
    return sum(diag, Fraction(0)) if diag.dtype == object else float(diag.sum())


def acceptance_gap(p: Probs, q: Probs, draft: str = "sampled") -> Scalar:
    """α − match acceptance, both for the same draft (≥ 0; 0 for a greedy draft, whose proposal
    law is one-hot, and for a sampled draft exactly when q is one-hot on a symbol, or p and q
    have disjoint supports)."""
    pa, _qa, r, exact = _pair(p, q, draft)
    both = [min(a, b) for a, b in zip(pa, r)]
    alpha = sum(both, Fraction(0)) if exact else float(np.minimum(pa, r).sum())
    return alpha - match_acceptance(p, q, draft)


def match_output_distribution(
    p: Probs, q: Probs, draft: str = "sampled", on_mismatch: str = "target"
) -> np.ndarray:
    """The law of the token one position emits under the match rule, by enumerating
    (x, y) (:func:`match_joint_law`): on a match x is emitted; on a mismatch ``on_mismatch``
    decides — ``"target"`` emits y (the engines' rule: the result is p exactly), ``"redraw"``
    a fresh draw from p, ``"residual"`` a draw from the strict rule's residual max(p − r, 0)
    of the proposal law r, normalized (p where that is empty). "redraw" is always a mistake;
    "residual" is one for a sampled draft (for a greedy draft, r one-hot, it happens to give p:
    the strict rule and the match rule coincide there)."""
    check_mismatch_rule(on_mismatch)
    pa, _qa, r, exact = _pair(p, q, draft)
    joint = match_joint_law(p, q, draft)
    out = np.diagonal(joint).copy()
    off = joint.copy()
    np.fill_diagonal(off, Fraction(0) if exact else 0.0)
    if on_mismatch == "target":
        return out + off.sum(axis=0)
    missed = off.sum()
    if on_mismatch == "redraw":
        return out + missed * pa
    w = correction_weights(pa, r, "residual")
    return out + missed * (w / w.sum())


class GreedyDraft:
    """A draft that always proposes its model's most likely token: rows one-hot at argmax
    (first of equals), floats from ``model(prefix)``, exact ones from ``model.exact(prefix)``.
    What vLLM's default ``draft_sample_method="greedy"`` and llama.cpp's draft loop propose."""

    def __init__(self, model: ExactModel):
        if not callable(model):
            raise ValueError(f"model must be a model: prefix -> probabilities, got {type(model).__name__}")
        self.model = model
        v = getattr(model, "vocab_size", None)
        self.vocab_size = (
            int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 else None
        )

    def __call__(self, prefix: Sequence[int]) -> np.ndarray:
        prefix = check_token_ids(prefix, "prefix", self.vocab_size)
        return greedy_row(np.asarray(self.model(prefix), dtype=np.float64))

    def exact(self, prefix: Sequence[int]) -> np.ndarray:
        if not hasattr(self.model, "exact"):
            raise ValueError("GreedyDraft.exact needs a model with exact rows (model.exact)")
        prefix = check_token_ids(prefix, "prefix", self.vocab_size)
        return greedy_row(list(self.model.exact(prefix)))

    def __repr__(self):
        return f"GreedyDraft({self.model!r})"


def _exact_row(model, ctx, name):
    if not hasattr(model, "exact"):
        raise ValueError(f"{name} must offer exact rows (model.exact), e.g. toy_target()")
    return list(check_distribution(list(model.exact(tuple(ctx))), f"{name} row", exact=True))


def match_round_law(
    target: ExactModel,
    draft: ExactModel,
    start: Sequence[int],
    gamma: int,
    draft_mode: str = "sampled",
    on_mismatch: str = "target",
) -> dict[tuple[int, ...], Fraction]:
    """Exact law ({emitted tokens: Fraction}) of one round of the match rule from ``start``:
    up to γ proposals (drawn from the draft's rows, or its argmax with ``draft_mode="greedy"``),
    the target's draw y at each position, the round ending at the first mismatch (emitting per
    ``on_mismatch``) or with the target's draw after γ matches (the bonus)."""
    g = check_gamma(gamma)
    check_draft_mode(draft_mode, "draft_mode")
    check_mismatch_rule(on_mismatch)
    start, V = check_law_models(target, draft, start)
    if (2 * g + 1) * np.log10(max(V, 1)) > np.log10(MAX_ENUMERATED) + 1e-9:
        raise ValueError(
            f"gamma = {g} would enumerate up to {V}^{2 * g + 1} paths; at most {MAX_ENUMERATED:,}"
        )
    law: dict = {}

    def add(seq, prob):
        law[seq] = law.get(seq, Fraction(0)) + prob

    def rec(acc, prob):
        p = _exact_row(target, start + acc, "target")
        if len(acc) == g:
            for y, py in enumerate(p):
                if py:
                    add(acc + (y,), prob * py)
            return
        q = _exact_row(draft, start + acc, "draft")
        step = match_output_distribution(p, q, draft_mode, on_mismatch) - match_accepted_mass(
            p, q, draft_mode
        )
        for y, mass in enumerate(step):  # emitted after a mismatch: the round ends
            if mass:
                add(acc + (y,), prob * mass)
        for x, mass in enumerate(match_accepted_mass(p, q, draft_mode)):  # matched: go on
            if mass:
                rec(acc + (x,), prob * mass)

    rec((), Fraction(1))
    return law


def match_sequence_law(
    target: ExactModel,
    draft: ExactModel,
    prefix: Sequence[int] = (),
    length: int = 3,
    gamma: int = 2,
    draft_mode: str = "sampled",
    on_mismatch: str = "target",
) -> dict[tuple[int, ...], Fraction]:
    """Exact law of ``length`` tokens from rounds of :func:`match_round_law` (γ_eff = min(γ,
    remaining − 1), as the samplers run them): compare with ``toy.sequence_law`` (TV 0)."""
    check_draft_mode(draft_mode, "draft_mode")
    check_mismatch_rule(on_mismatch)
    law = partial(match_round_law, draft_mode=draft_mode, on_mismatch=on_mismatch)
    return chain_round_laws(law, target, draft, prefix, length, gamma)


# ---------------------------------------------------------------- dashboard numbers


def engine_metrics(result: GenerationResult, gamma: int | None = None) -> dict[str, Fraction | tuple]:
    """The numbers engine dashboards print, computed from recorded rounds (the rounds of
    ``acceptance_stats.full_rounds``), each exact (Fractions of counts):

    * ``"draft_acceptance_rate"``: accepted / drafted — vLLM's "Avg Draft acceptance rate",
      llama.cpp's ``accept``; this collection's *accepted share*;
    * ``"mean_acceptance_length"``: 1 + accepted / drafts — vLLM's "Mean acceptance length"
      (the bonus or correction counted); this collection's acceptance length, mean K, when no
      stop token cut a round;
    * ``"per_position_acceptance_rate"``: for positions 1 … γ, the rounds that accepted that
      position over *all* rounds (vLLM's per-position rate: not accepted/checked);
    * ``"system_efficiency"``: emitted / (rounds · (γ + 1)) — vLLM v0's "system efficiency",
      mean K over its ceiling γ + 1 (γ the largest drafted).
    """
    recs = full_rounds(result, gamma)
    drafted = sum(r.gamma for r in recs)
    if drafted == 0:
        raise ValueError("no proposals were made (gamma = 0): the engines' acceptance numbers are undefined")
    accepted = sum(r.kept for r in recs)
    emitted = sum(len(r.emitted) for r in recs)
    g = max(r.gamma for r in recs)
    return {
        "draft_acceptance_rate": Fraction(accepted, drafted),
        "mean_acceptance_length": 1 + Fraction(accepted, len(recs)),
        "per_position_acceptance_rate": tuple(
            row["share_of_rounds"] for row in acceptance_by_position(result, gamma)
        ),
        "system_efficiency": Fraction(emitted, len(recs) * (g + 1)),
    }


# ---------------------------------------------------------------- synchronization and overlap


def overlapped_round_time_ms(
    *, draft_ms: Scalar, verify_ms: Scalar, overhead_ms: Scalar = 0, usable: Scalar = 1
) -> Scalar:
    """Expected round time when the next round's draft runs *while* the target verifies this
    one (on hardware of its own): max(T_draft, T_verify) + T_overhead when that early draft is
    usable, and the sequential T_draft + T_verify + T_overhead of notebook 05 when it is not
    (the draft guessed a continuation the verdict threw away and must draft again). ``usable``
    is the probability of the first case (an input: e.g. α^γ, the chance the round accepted
    everything, for a draft that continues its own proposals). ``usable = 0`` is notebook 05's
    round; on one device whose passes share the memory bandwidth the sum stays the sum."""
    seq = round_time_ms(draft_ms=draft_ms, verify_ms=verify_ms, overhead_ms=overhead_ms)
    a = check_probability(usable, "usable", scalar=True)
    d, v, o = (
        check_time(x, n)
        for x, n in ((draft_ms, "draft_ms"), (verify_ms, "verify_ms"), (overhead_ms, "overhead_ms"))
    )
    both = max(d, v) + o
    if all(isinstance(x, Fraction) or isinstance(x, int) for x in (d, v, o, a)):
        return Fraction(a) * both + (1 - Fraction(a)) * seq
    return float(a) * float(both) + (1.0 - float(a)) * float(seq)

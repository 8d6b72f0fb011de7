"""γ policies: how many proposals to draft in each round (notebook 04 §7).

``speculative_generate(target, draft, prefix, gamma=policy, ...)`` takes either a fixed γ (an int)
or a *policy*: an object with ``next_gamma(records, prefix) -> int``, asked before every round with
the :class:`~specdec_core.sampling.RoundRecord` s of the rounds already run in this generation and
the verified prefix (prompt + output so far), and
optionally ``keep_drafting(q_row, token) -> bool``, asked after each drafted token with the row it
was drawn from (drafting stops after the first token for which it says False).

**Why this keeps the target's law** (notebook 04, condition (5)). Strict verification emits the
target's law token by token whatever γ is, provided the decision to propose each position is a
stopping rule on the draft's own sequence: whether position i of a round is proposed may depend
on the verified prefix, on everything earlier rounds did (their proposals, verdicts, uniforms),
and on the draft's *earlier* tokens x₁ … xᵢ₋₁ of this round and the rows q₁ … qᵢ₋₁ they were drawn
from. It must not depend on

* xᵢ itself: drawing xᵢ and then withholding it when the draft is unsure proposes from q
  conditioned on confidence, not from the q that verification divides by (biased; the tree form
  is :mod:`~specdec_core.multidraft`'s ``children="pruned"``). A *greedy* draft is the exception:
  its xᵢ is a function of the earlier tokens, verified as a one-hot proposal;
* this round's verdicts: :func:`peeking_round_law` is the exact counterexample of a rule that peeks.

:class:`ConfidenceStop` satisfies it: it decides whether to propose position i + 1 from qᵢ(xᵢ), the
probability of a token already proposed.

* :class:`FixedGamma` — the constant policy (what an int means);
* :class:`PrefixGamma` — γ from the verified prefix alone, ``rule(prefix) -> int`` (e.g. how many
  tokens a prompt-lookup draft can offer there: notebook 09's adaptive γ);
* :class:`GrowShrink` — after a round where every proposal was accepted draft ``grow`` more next
  time, else ``shrink`` fewer (Hugging Face's "heuristic" schedule for assisted generation);
* :class:`ConfidenceStop` — up to ``max_gamma`` proposals, stop after a drafted token whose draft
  probability q(x) is below ``threshold`` (dynamic speculation on the draft's own confidence).

Every policy here is stateless: γ is recomputed from the records, so a replay of the records
(``replay.py``) shows the same γ's, and each record keeps the γ it was planned with
(``RoundRecord.gamma_chosen``).

Pure layer: numpy and fractions.
"""

from __future__ import annotations

import inspect
from fractions import Fraction
from typing import TYPE_CHECKING

from .distributions import check_gamma, check_int, check_probability
from .sampling import MAX_GAMMA, check_prefix

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

    from .sampling import RoundRecord
    from .types import Draft, ExactModel, GammaPolicy, ModelFn


class FixedGamma:
    """γ proposals every round."""

    def __init__(self, gamma: int):
        self.gamma = check_gamma(gamma, high=MAX_GAMMA)

    def next_gamma(self, records: Sequence[RoundRecord], prefix: Sequence[int] = ()) -> int:
        return self.gamma

    def __repr__(self):
        return f"FixedGamma({self.gamma})"


class PrefixGamma:
    """γ = ``rule(prefix)`` for the verified prefix (a non-negative int): a rule that looks only at
    the text already verified, e.g. ``lambda ctx: min(4, draft.available(ctx, 4))``."""

    def __init__(self, rule, name: str = "prefix rule"):
        if not callable(rule):
            raise ValueError("rule must be callable: prefix -> gamma")
        self.rule, self.name = rule, name

    def next_gamma(self, records: Sequence[RoundRecord], prefix: Sequence[int] = ()) -> int:
        return check_gamma(self.rule(tuple(prefix)), f"{self.name}(prefix)", high=MAX_GAMMA)

    def __repr__(self):
        return f"PrefixGamma({self.name!r})"


class GrowShrink:
    """Start at ``start``; after a round in which all its planned proposals were accepted, plan
    ``grow`` more; after a rejection, ``shrink`` fewer; always within [``low``, ``high``]. Reads
    only past rounds' records."""

    def __init__(self, start: int = 5, grow: int = 2, shrink: int = 1, low: int = 1, high: int = 10):
        self.low = check_int(low, "low", 0, MAX_GAMMA)
        self.high = check_int(high, "high", self.low, MAX_GAMMA)
        self.start = check_int(start, "start", self.low, self.high)
        self.grow = check_int(grow, "grow", 0)
        self.shrink = check_int(shrink, "shrink", 0)

    def next_gamma(self, records: Sequence[RoundRecord], prefix: Sequence[int] = ()) -> int:
        if not records:
            return self.start
        last = records[-1]
        planned = last.gamma_chosen if last.gamma_chosen is not None else last.gamma
        full = last.stop is None and last.gamma == planned
        g = planned + self.grow if full else planned - self.shrink
        return max(self.low, min(self.high, g))

    def __repr__(self):
        return f"GrowShrink(start={self.start}, grow={self.grow}, shrink={self.shrink}, low={self.low}, high={self.high})"


class ConfidenceStop:
    """Plan ``max_gamma`` proposals, but stop drafting after a token x whose draft probability
    q(x) is below ``threshold``: the draft's own confidence, never the target's."""

    def __init__(self, max_gamma: int = 6, threshold=0.4):
        self.max_gamma = check_gamma(max_gamma, "max_gamma", high=MAX_GAMMA)
        self.threshold = check_probability(threshold, "threshold", scalar=True)

    def next_gamma(self, records: Sequence[RoundRecord], prefix: Sequence[int] = ()) -> int:
        return self.max_gamma

    def keep_drafting(self, q_row: np.ndarray, token: int) -> bool:
        return q_row[token] >= self.threshold

    def __repr__(self):
        return f"ConfidenceStop(max_gamma={self.max_gamma}, threshold={self.threshold})"


def as_policy(gamma: int | GammaPolicy) -> GammaPolicy:
    """``gamma``: a non-negative int (→ :class:`FixedGamma`) or a policy offering a callable
    ``next_gamma(records, prefix)`` (and optionally ``keep_drafting(q_row, token)``)."""
    if callable(getattr(gamma, "next_gamma", None)):
        keep = getattr(gamma, "keep_drafting", None)
        if keep is not None and not callable(keep):
            raise ValueError("gamma policy: keep_drafting must be callable (q_row, token) -> bool")
        for method, args in (("next_gamma", ((), ())), ("keep_drafting", (None, 0))):
            f = getattr(gamma, method, None)
            try:
                if f is not None:
                    inspect.signature(f).bind(*args)
            except TypeError:
                raise ValueError(
                    f"gamma policy: {method} must take {'(records, prefix)' if method == 'next_gamma' else '(q_row, token)'}"
                    f", got the signature {inspect.signature(f)}"
                ) from None
            except ValueError:  # a builtin without a signature: called as it is
                pass
        return gamma
    if hasattr(gamma, "__dict__") and not isinstance(gamma, int):
        raise ValueError(
            f"gamma must be a non-negative integer or a policy with next_gamma(records, prefix), got {type(gamma).__name__}"
        )
    return FixedGamma(check_gamma(gamma))


def peeking_round_law(
    target: ExactModel, draft: ExactModel, start: Sequence[int], gamma: int
) -> dict[tuple[int, ...], Fraction]:
    """The exact law of one round of a rule that *peeks at the target's verdict*: run the round
    with γ proposals, but when the first proposal is rejected, throw the round away and draw one
    token from p instead (γ = 0: "fall back to plain sampling when the draft was wrong").
    {tokens: Fraction}. Its first token has law min(p, q) + (1 − α) p ≠ p whenever α < 1."""
    from .processors import round_output_law
    from .verify import acceptance_probability

    g = check_gamma(gamma)
    law = round_output_law(target, draft, start, g)
    if g == 0:
        return law
    p = list(target.exact(tuple(start)))
    alpha = Fraction(acceptance_probability(p, list(draft.exact(tuple(start)))))
    out = {k: v for k, v in law.items() if len(k) > 1}  # rounds whose first proposal passed
    for y, py in enumerate(p):
        if py:
            out[(y,)] = out.get((y,), Fraction(0)) + (1 - alpha) * py
    return out


def peeking_sequence_law(
    target: ExactModel, draft: ExactModel, prefix: Sequence[int] = (), length: int = 3, gamma: int = 2
) -> dict[tuple[int, ...], Fraction]:
    """Exact law of ``length`` tokens from rounds of :func:`peeking_round_law` (γ_eff = min(γ,
    remaining − 1), as ``speculative_generate`` runs them)."""
    from .processors import chain_round_laws

    return chain_round_laws(peeking_round_law, target, draft, prefix, length, gamma)


def peeking_generate(
    target: ModelFn,
    draft: Draft,
    prefix: Sequence[int],
    *,
    gamma: int,
    max_new_tokens: int,
    rng: np.random.Generator,
) -> tuple[int, ...]:
    """A deliberately *wrong* sampler for teaching and tests: rounds of γ proposals, but a round
    whose first proposal is rejected is replaced by one plain draw from p (the round's γ chosen
    after seeing the target's verdict). Returns the tokens. Its law: :func:`peeking_sequence_law`."""
    from .distributions import inverse_cdf
    from .sampling import speculative_round

    out: list = []
    prefix = check_prefix(prefix)
    n = check_int(max_new_tokens, "max_new_tokens", 0)
    g = check_gamma(gamma, high=MAX_GAMMA)
    while len(out) < n:
        ctx = tuple(prefix) + tuple(out)
        rec = speculative_round(target, draft, ctx, gamma=min(g, n - len(out) - 1), rng=rng)
        if rec.gamma and rec.stop == 0:  # peeked: the first proposal was rejected
            out.append(inverse_cdf(target(ctx), rng.random()))
        else:
            out.extend(rec.emitted)
    return tuple(out[:n])

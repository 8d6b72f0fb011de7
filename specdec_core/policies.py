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
and on this round's earlier draft tokens x₁ … xᵢ₋₁ and the rows q₁ … qᵢ₋₁ they were drawn from;
never on xᵢ itself, and never on this round's verdicts. So

* not on xᵢ: drawing xᵢ and then withholding it when the draft is unsure proposes from q
  conditioned on confidence, not from the q that verification divides by (biased; the tree form
  is :mod:`~specdec_core.multidraft`'s ``children="pruned"``). A *greedy* draft is the exception:
  its xᵢ is a function of the earlier tokens, verified as a one-hot proposal;
* not on this round's verdicts: :mod:`~specdec_core.peeking` is the exact counterexample of a
  rule that peeks (its first token has law min(p, q) + (1 − α) p ≠ p).

:class:`ConfidenceStop` satisfies it: xᵢ, once drawn, is always proposed; qᵢ(xᵢ) decides only
whether position i + 1 is drafted (a function of x₁ … xᵢ and q₁ … qᵢ, i.e. of what precedes
position i + 1).

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
from typing import TYPE_CHECKING

from .distributions import MAX_GAMMA, check_gamma, check_int, check_probability

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

    from .sampling import RoundRecord
    from .types import GammaPolicy


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
    """Plan ``max_gamma`` proposals, but stop drafting after a token xᵢ whose draft probability
    qᵢ(xᵢ) is below ``threshold``. xᵢ itself is proposed either way: qᵢ(xᵢ) decides only whether
    position i + 1 is drafted (the draft's own earlier tokens, never the target's verdicts)."""

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

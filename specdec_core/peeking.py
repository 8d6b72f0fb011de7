"""The peeking rule: the exact counterexample of a γ rule that looks at this round's verdicts
(notebook 04 §7, condition (5)).

A round drafts γ proposals, but when the first proposal is rejected the round is thrown away and
one token is drawn from p instead ("fall back to plain sampling when the draft was wrong"). γ is
then chosen *after* seeing the target's verdict on x₁, so the first token has law
min(p, q) + (1 − α) p ≠ p whenever α < 1. A legal stopping rule (:mod:`~specdec_core.policies`)
may depend on x₁ … xᵢ₋₁ and q₁ … qᵢ₋₁, never on xᵢ itself nor on this round's verdicts.

Its own module so that the γ policies (which :mod:`~specdec_core.sampling` uses) import no
sampler: sampling → policies, and peeking → sampling, processors, verify; no cycle.

Pure layer: fractions and numpy.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from .distributions import MAX_GAMMA, check_gamma, check_int, inverse_cdf
from .processors import chain_round_laws, round_output_law
from .sampling import check_prefix, speculative_round
from .verify import acceptance_probability

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

    from .types import Draft, ExactModel, ModelFn


def peeking_round_law(
    target: ExactModel, draft: ExactModel, start: Sequence[int], gamma: int
) -> dict[tuple[int, ...], Fraction]:
    """The exact law of one round of a rule that *peeks at the target's verdict*: run the round
    with γ proposals, but when the first proposal is rejected, throw the round away and draw one
    token from p instead (γ = 0: "fall back to plain sampling when the draft was wrong").
    {tokens: Fraction}. Its first token has law min(p, q) + (1 − α) p ≠ p whenever α < 1."""
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

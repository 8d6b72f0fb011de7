"""The three-symbol worked example: the one source of truth for its inputs and assumed timings.

Inputs are exact. Every number in :func:`worked_trace` is *computed by the library* from them;
the tests compare it with the lesson card's values. The timings are **assumed** budgets,
declared for the example: nothing here was measured.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction as F


@dataclass(frozen=True)
class WorkedExample:
    symbols: tuple = ("A", "B", "C")
    p: tuple = (F(3, 5), F(3, 10), F(1, 10))   # target  [0.6, 0.3, 0.1]
    q: tuple = (F(1, 5), F(3, 10), F(1, 2))    # draft   [0.2, 0.3, 0.5]
    gamma: int = 2
    # assumed timings, milliseconds per round (not measured)
    draft_ms: int = 2           # both draft steps together
    verify_ms: int = 6          # one target verification of gamma + 1 positions
    overhead_ms: int = 1
    baseline_ms: int = 6        # one plain target step per token
    slower_verify_ms: int = 12  # the "slower verification" scenario


WORKED = WorkedExample()


def worked_trace(example: WorkedExample = WORKED) -> dict:
    """Every quantity of the worked trace, exact (Fractions), computed by the library."""
    from .counts import expected_output_count, output_count_distribution
    from .timing import baseline_tokens_per_second, tokens_per_second
    from .verify import (acceptance_probabilities, acceptance_rate, accepted_mass,
                         output_distribution, rejection_probability, residual_distribution)

    p, q, g = example.p, example.q, example.gamma
    alpha = acceptance_rate(p, q)
    ek = expected_output_count(alpha, g)
    return {
        "acceptance": list(acceptance_probabilities(p, q)),
        "accepted_mass": list(accepted_mass(p, q)),
        "alpha": alpha,
        "rejection": rejection_probability(p, q),
        "residual": list(residual_distribution(p, q)),
        "output": list(output_distribution(p, q)),
        "count_distribution": list(output_count_distribution(alpha, g)),
        "expected_count": ek,
        "tokens_per_second": tokens_per_second(ek, draft_ms=example.draft_ms,
                                               verify_ms=example.verify_ms,
                                               overhead_ms=example.overhead_ms),
        "baseline_tokens_per_second": baseline_tokens_per_second(example.baseline_ms),
        "slower_tokens_per_second": tokens_per_second(ek, draft_ms=example.draft_ms,
                                                      verify_ms=example.slower_verify_ms,
                                                      overhead_ms=example.overhead_ms),
    }

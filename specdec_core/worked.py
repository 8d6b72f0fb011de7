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
    p: tuple = (F(3, 5), F(3, 10), F(1, 10))  # target  [0.6, 0.3, 0.1]
    q: tuple = (F(1, 5), F(3, 10), F(1, 2))  # draft   [0.2, 0.3, 0.5]
    gamma: int = 2
    # assumed timings, milliseconds per round (not measured)
    draft_ms: int = 2  # both draft steps together
    verify_ms: int = 6  # one target verification of gamma + 1 positions
    overhead_ms: int = 1
    baseline_ms: int = 6  # one plain target step per token
    slower_verify_ms: int = 12  # the "slower verification" scenario
    # notebook 05's "draft A": accepted more often, but drafting is slower; verification unchanged
    draft_a_alpha: F = F(4, 5)
    draft_a_draft_ms: int = 8  # its two draft steps together (4 ms each)


WORKED = WorkedExample()


def worked_trace(example: WorkedExample = WORKED) -> dict:
    """Every quantity of the worked trace, exact (Fractions), computed by the library."""
    if not isinstance(example, WorkedExample):
        raise ValueError(f"example must be a WorkedExample, got {type(example).__name__}")
    from .counts import expected_output_count, output_count_distribution
    from .timing import baseline_tokens_per_second, tokens_per_second
    from .verify import (
        acceptance_probabilities,
        acceptance_probability,
        accepted_mass,
        output_distribution,
        rejection_probability,
        residual_distribution,
    )

    p, q, g = example.p, example.q, example.gamma
    alpha = acceptance_probability(p, q)
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
        "tokens_per_second": tokens_per_second(
            ek, draft_ms=example.draft_ms, verify_ms=example.verify_ms, overhead_ms=example.overhead_ms
        ),
        "baseline_tokens_per_second": baseline_tokens_per_second(example.baseline_ms),
        "slower_tokens_per_second": tokens_per_second(
            ek, draft_ms=example.draft_ms, verify_ms=example.slower_verify_ms, overhead_ms=example.overhead_ms
        ),
    }


@dataclass(frozen=True)
class TruthExample:
    """A tiny, explicit counterexample to "accepted means true" (notebook 00): the target puts
    probability on false continuations, and speculative sampling keeps exactly that probability."""

    prompt: str = "The capital of Australia is"
    continuations: tuple = ("Canberra", "Sydney", "Melbourne")
    true: tuple = (True, False, False)
    p: tuple = (F(7, 10), F(1, 5), F(1, 10))  # target
    q: tuple = (F(3, 10), F(3, 5), F(1, 10))  # draft: even keener on the wrong answer


TRUTH_EXAMPLE = TruthExample()


def truth_counterexample(n: int, seed: int, example: TruthExample = TRUTH_EXAMPLE) -> dict:
    """The exact probability that speculative sampling writes a false continuation (it equals the
    target's), and its frequency in ``n`` seeded single-position speculative trials."""
    import numpy as np

    from .distributions import check_int
    from .simulate import simulate_position
    from .verify import acceptance_probability, accepted_mass, output_distribution

    seed = check_int(seed, "seed", 0)
    out = output_distribution(example.p, example.q)
    false = [i for i, t in enumerate(example.true) if not t]
    sim = simulate_position(example.p, example.q, n, np.random.default_rng(seed))
    freq = sim.output_frequencies()
    return {
        "alpha": acceptance_probability(example.p, example.q),
        "target_false": sum((example.p[i] for i in false), F(0)),
        "output_law": list(out),
        "output_false": sum((out[i] for i in false), F(0)),
        "simulated_false": float(sum(freq[i] for i in false)),
        "accepted_false_exact": sum((accepted_mass(example.p, example.q)[i] for i in false), F(0)),
        "accepted_false": float(np.isin(sim.emitted[sim.accepted], false).sum() / sim.n),
        "n": sim.n,
    }

"""Serving with speculation: one round of speculative decoding at a batch of S sequences, priced
on the roofline of :mod:`specdec_core.roofline`, and what it gains over plain decoding.

A round drafts γ tokens (γ draft passes over one position each, every pass reading the draft's
weights and its own cache for all S sequences) and verifies them in one target pass over γ + 1
positions. Priced on the same device as a plain decode step of the target, its speed-up is
notebook 05's ratio R/R₀ = E[K] × plain step ÷ (draft + verification)
(:func:`specdec_core.timing.speedup_ratio`). As the batch grows, more of each pass turns
compute-bound and the speed-up falls: :func:`break_even_batch` finds where it reaches 1.

The literature check sits with what it checks: Leviathan et al.'s reported speed-ups
(:data:`LEVIATHAN_TABLE2`) and the draft cost each implies (:func:`implied_draft_cost`).
Exact inputs give exact Fractions; any float gives floats.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from .counts import expected_output_count
from .distributions import check_gamma, check_int, check_positive, check_probability, exact_ratio
from .roofline import Hardware, float_hardware, pass_time

if TYPE_CHECKING:
    from .kv import ModelShape
    from .types import Scalar

__all__ = [
    "LEVIATHAN_SOURCE",
    "LEVIATHAN_TABLE2",
    "MAX_SERVING_GAMMA",
    "ServingPoint",
    "break_even_batch",
    "implied_draft_cost",
    "serving_curve",
    "serving_point",
    "speculation_speedup",
]

#: serving_curve prices one round per γ = 0 … max_gamma: at most this many.
MAX_SERVING_GAMMA = 1000


@dataclass(frozen=True)
class ServingPoint:
    """One (batch S, γ, α) point of speculative decoding priced by the roofline.

    Times in seconds. ``target_s`` the verification pass (γ + 1 positions, S sequences),
    ``draft_s`` the γ draft passes (one position each), ``step_s`` a plain decode step of the
    target at the same batch; ``expected_tokens`` E[K] per sequence per round (iid α);
    ``throughput`` tokens/s across the batch; ``latency_per_token_s`` the mean time between a
    sequence's tokens; ``draft_ratio`` c = draft pass ÷ target decode step."""

    sequences: int
    gamma: int
    alpha: object
    expected_tokens: object
    draft_s: object
    target_s: object
    step_s: object
    draft_ratio: object
    target_bound: str

    @property
    def round_s(self) -> Scalar:
        return self.draft_s + self.target_s

    @property
    def throughput(self) -> Scalar:
        return exact_ratio(self.sequences * self.expected_tokens, self.round_s)

    @property
    def latency_per_token_s(self) -> Scalar:
        return exact_ratio(self.round_s, self.expected_tokens)

    @property
    def speedup(self) -> Scalar:
        """Rate with speculation ÷ rate of plain decoding at the same batch."""
        return speculation_speedup(self)


def serving_point(
    target: ModelShape | str,
    draft: ModelShape | str,
    hardware: Hardware | str,
    *,
    dtype: str | int,
    alpha: Scalar,
    gamma: int,
    sequences: int,
    context: int,
    weight_dtype: str | int | None = None,
) -> ServingPoint:
    """Price one round: γ draft passes (each reads the draft's weights and its own cache for
    all S sequences) and one target pass over γ + 1 positions (the target's weights and S
    caches), on the same device. γ = 0 is plain decoding (no draft at all)."""
    a = check_probability(alpha, "alpha", scalar=True)
    g = check_gamma(gamma)
    kw = dict(dtype=dtype, sequences=sequences, context=context, weight_dtype=weight_dtype)
    step = pass_time(target, hardware, positions=1, **kw)
    tgt = pass_time(target, hardware, positions=g + 1, **kw) if g else step
    d_one = pass_time(draft, hardware, positions=1, **kw).total_s
    ek = expected_output_count(a, g)
    if not isinstance(ek, Fraction):
        ek = float(ek)
    return ServingPoint(
        sequences=check_int(sequences, "sequences", 1),
        gamma=g,
        alpha=a,
        expected_tokens=ek,
        draft_s=g * d_one,
        target_s=tgt.total_s,
        step_s=step.total_s,
        draft_ratio=exact_ratio(d_one, step.total_s),
        target_bound=tgt.bound,
    )


def serving_curve(
    target: ModelShape | str,
    draft: ModelShape | str,
    hardware: Hardware | str,
    *,
    dtype: str | int,
    alpha: Scalar,
    sequences: int,
    context: int,
    max_gamma: int,
) -> tuple[ServingPoint, ...]:
    """:func:`serving_point` for γ = 0, 1, …, ``max_gamma`` (same arguments otherwise)."""
    g = check_int(max_gamma, "max_gamma", 0, MAX_SERVING_GAMMA)
    kw = dict(dtype=dtype, alpha=alpha, sequences=sequences, context=context)
    return tuple(serving_point(target, draft, hardware, gamma=k, **kw) for k in range(g + 1))


def speculation_speedup(point: ServingPoint) -> Scalar:
    """Notebook 05's ratio R/R₀ for a priced round, through :func:`timing.speedup_ratio`
    (times in ms): E[K] × plain step ÷ (draft + verification)."""
    from .timing import speedup_ratio

    if not isinstance(point, ServingPoint):
        raise ValueError(f"point must be a ServingPoint, got {type(point).__name__}")
    return speedup_ratio(
        point.expected_tokens,
        draft_ms=point.draft_s * 1000,
        verify_ms=point.target_s * 1000,
        baseline_ms=point.step_s * 1000,
    )


def break_even_batch(
    target: ModelShape | str,
    draft: ModelShape | str,
    hardware: Hardware | str,
    *,
    dtype: str | int,
    alpha: Scalar,
    gamma: int,
    context: int,
    max_sequences: int = 1024,
    weight_dtype: str | int | None = None,
) -> int | None:
    """The smallest batch S ≤ ``max_sequences`` at which speculation with this γ no longer
    beats plain decoding at the same batch (speed-up ≤ 1), or ``None`` if it pays throughout.

    The speed-up falls as the batch grows (more of each pass turns compute-bound), so a
    bisection finds the crossing; float arithmetic (a search, not an exact result). The tests
    check it against a plain scan."""
    cap = check_int(max_sequences, "max_sequences", 1)
    check_int(check_gamma(gamma), "gamma", 1)
    hwf = float_hardware(hardware)
    a = float(check_probability(alpha, "alpha"))

    def loses(S):
        return (
            serving_point(
                target,
                draft,
                hwf,
                dtype=dtype,
                alpha=a,
                gamma=gamma,
                sequences=S,
                context=context,
                weight_dtype=weight_dtype,
            ).speedup
            <= 1
        )

    if loses(1):
        return 1
    if not loses(cap):
        return None
    lo, hi = 1, cap  # lo pays, hi loses
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if loses(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------- what the paper reported

#: Leviathan, Kalman & Matias (2023), "Fast Inference from Transformers via Speculative
#: Decoding", ICML 2023 (arXiv:2211.17192), Table 2: T5-XXL (11B) target, batch 1, one TPU-v4,
#: walltime speed-up over the T5X baseline. Rows: (task, draft, temperature, γ, α, speed-up).
#: Reported numbers (neither derived nor measured here).
LEVIATHAN_TABLE2 = (
    ("EnDe", "T5-small", 0, 7, Fraction(75, 100), Fraction(34, 10)),
    ("EnDe", "T5-base", 0, 7, Fraction(80, 100), Fraction(28, 10)),
    ("EnDe", "T5-large", 0, 7, Fraction(82, 100), Fraction(17, 10)),
    ("EnDe", "T5-small", 1, 7, Fraction(62, 100), Fraction(26, 10)),
    ("EnDe", "T5-base", 1, 5, Fraction(68, 100), Fraction(24, 10)),
    ("EnDe", "T5-large", 1, 3, Fraction(71, 100), Fraction(14, 10)),
    ("CNNDM", "T5-small", 0, 5, Fraction(65, 100), Fraction(31, 10)),
    ("CNNDM", "T5-base", 0, 5, Fraction(73, 100), Fraction(30, 10)),
    ("CNNDM", "T5-large", 0, 3, Fraction(74, 100), Fraction(22, 10)),
    ("CNNDM", "T5-small", 1, 5, Fraction(53, 100), Fraction(23, 10)),
    ("CNNDM", "T5-base", 1, 3, Fraction(55, 100), Fraction(22, 10)),
    ("CNNDM", "T5-large", 1, 3, Fraction(56, 100), Fraction(17, 10)),
)
LEVIATHAN_SOURCE = (
    "Leviathan, Kalman & Matias, Fast Inference from Transformers via Speculative "
    "Decoding, ICML 2023 (arXiv:2211.17192), Table 2: T5-XXL target, batch 1, TPU-v4"
)


def implied_draft_cost(alpha: Scalar, gamma: int, speedup: Scalar) -> Scalar:
    """The cost ratio c at which Leviathan et al.'s factor (1 − α^(γ+1)) / ((1 − α)(γc + 1))
    equals ``speedup``: c = (E[K] ÷ speed-up − 1) ÷ γ. Negative means the reported speed-up
    exceeds even a free draft's (c = 0) under iid acceptance."""
    g = check_int(check_gamma(gamma), "gamma", 1)
    s = check_positive(speedup, "speedup", "a positive speed-up")
    ek = expected_output_count(check_probability(alpha, "alpha"), g)
    return (exact_ratio(ek, s) - 1) / g

"""Many seeded sequences of the toy language: is the sampler's law the target's law?

Pure (numpy + the samplers): run ``n`` independent generations from one seeded generator, keep
the first ``length`` tokens of each, tally them, and compare the tally with the exact law
:func:`specdec_core.toy.sequence_law` of the target through a chi-square goodness-of-fit test
(:func:`specdec_core.lawcheck.chi_square_gof`, reject when p < 0.001).

The optional ``progress(done, total)`` callback lets a notebook move a progress bar; it is
called about ``updates`` times and once at the end.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .distributions import check_int
from .lawcheck import DEFAULT_THRESHOLD, GofResult, chi_square_gof
from .sampling import autoregressive_generate, speculative_generate
from .toy import sequence_law, toy_draft, toy_target
from .verify import check_rule

if TYPE_CHECKING:
    from .types import Draft, Target, Tokens

METHODS = ("speculative", "autoregressive")


@dataclass(frozen=True)
class LawExperiment:
    """The tally of first-``length`` token sequences, the exact law, and the test result."""

    method: str
    correction: str
    n: int
    length: int
    gamma: int
    seed: int
    counts: Counter
    law: dict
    gof: GofResult

    @property
    def label(self) -> str:
        if self.method == "autoregressive":
            return "autoregressive"
        return (
            "speculative" if self.correction == "residual" else f"speculative, correction={self.correction!r}"
        )

    @property
    def impossible(self) -> int:
        """How many sampled sequences have probability 0 under the target's law."""
        return sum(c for k, c in self.counts.items() if k not in self.law)

    def total_variation(self) -> Fraction:
        """½ Σ |frequency − exact probability| over all sequences seen or possible (exact)."""
        keys = set(self.law) | set(self.counts)
        return (
            sum(
                (abs(Fraction(self.counts.get(k, 0), self.n) - Fraction(self.law.get(k, 0))) for k in keys),
                Fraction(0),
            )
            / 2
        )

    def empirical(self) -> dict:
        """Observed frequencies {sequence: Fraction(count, n)} (exact ratios of counts)."""
        return {k: Fraction(v, self.n) for k, v in self.counts.items()}


def sample_first_tokens(
    method: str = "speculative",
    *,
    n: int,
    length: int = 3,
    seed: int = 0,
    gamma: int = 3,
    correction: str = "residual",
    max_new_tokens: int | None = None,
    prefix: Tokens = (),
    target: Target | None = None,
    draft: Draft | None = None,
    progress: Callable[[int, int], object] | None = None,
    updates: int = 50,
) -> Counter:
    """Counter of the first ``length`` tokens over ``n`` seeded generations.

    ``method`` is "speculative" (``speculative_generate`` with ``gamma`` and ``correction``) or
    "autoregressive". Each generation makes ``max_new_tokens`` tokens (default
    ``length + gamma``, so the first rounds run with the full γ) and keeps the first ``length``.
    All generations draw from one ``np.random.default_rng(seed)``: same arguments, same tally.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    n = check_int(n, "n", 1)
    length = check_int(length, "length", 1)
    gamma = check_int(gamma, "gamma", 0)
    seed = check_int(seed, "seed", 0)
    updates = check_int(updates, "updates", 1)
    check_rule(correction, "correction")
    horizon = length + gamma if max_new_tokens is None else check_int(max_new_tokens, "max_new_tokens", 1)
    if horizon < length:
        raise ValueError(f"max_new_tokens ({horizon}) must be >= length ({length})")
    if progress is not None and not callable(progress):
        raise ValueError("progress must be a callable progress(done, total) or None")
    target = toy_target() if target is None else target
    draft = toy_draft() if draft is None else draft
    rng = np.random.default_rng(seed)
    every = max(1, n // updates)
    counts: Counter = Counter()
    for i in range(n):
        if method == "speculative":
            res = speculative_generate(
                target, draft, prefix, gamma=gamma, max_new_tokens=horizon, rng=rng, correction=correction
            )
        else:
            res = autoregressive_generate(target, prefix, max_new_tokens=horizon, rng=rng)
        counts[tuple(res.tokens[:length])] += 1
        if progress is not None and ((i + 1) % every == 0 or i + 1 == n):
            progress(i + 1, n)
    return counts


def law_experiment(
    method: str = "speculative",
    *,
    n: int,
    length: int = 3,
    seed: int = 0,
    gamma: int = 3,
    correction: str = "residual",
    threshold: float = DEFAULT_THRESHOLD,
    prefix: Tokens = (),
    target: Target | None = None,
    draft: Draft | None = None,
    progress: Callable[[int, int], object] | None = None,
    updates: int = 50,
) -> LawExperiment:
    """Sample (see :func:`sample_first_tokens`) and test the tally against the target's exact
    law of ``length``-token continuations with a chi-square test (reject if p < threshold)."""
    target = toy_target() if target is None else target
    counts = sample_first_tokens(
        method,
        n=n,
        length=length,
        seed=seed,
        gamma=gamma,
        correction=correction,
        prefix=prefix,
        target=target,
        draft=draft,
        progress=progress,
        updates=updates,
    )
    law = sequence_law(target, prefix, length)
    gof = chi_square_gof(counts, law, threshold=threshold)
    return LawExperiment(
        method=method,
        correction=correction if method == "speculative" else "-",
        n=n,
        length=length,
        gamma=gamma if method == "speculative" else 0,
        seed=seed,
        counts=counts,
        law=law,
        gof=gof,
    )


def same_seed_texts(
    seed: int = 0,
    *,
    n_tokens: int = 12,
    gamma: int = 3,
    prefix: Tokens = (),
    target: Target | None = None,
    draft: Draft | None = None,
) -> tuple[tuple, tuple]:
    """(speculative tokens, autoregressive tokens) from two generators with the *same* seed.

    The two samplers consume their uniforms differently (proposals, acceptance draws,
    corrections), so the same seed does not give the same text, although both have the
    target's law."""
    n_tokens = check_int(n_tokens, "n_tokens", 1)
    seed = check_int(seed, "seed", 0)
    target = toy_target() if target is None else target
    draft = toy_draft() if draft is None else draft
    spec = speculative_generate(
        target, draft, prefix, gamma=gamma, max_new_tokens=n_tokens, rng=np.random.default_rng(seed)
    )
    ar = autoregressive_generate(target, prefix, max_new_tokens=n_tokens, rng=np.random.default_rng(seed))
    return spec.tokens, ar.tokens

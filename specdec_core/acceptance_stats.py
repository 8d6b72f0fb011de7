"""What "acceptance" means, computed from recorded rounds, and what iid acceptance predicts.

Two numbers are both called "acceptance" in papers and dashboards, and they answer different
questions:

* **accepted share** = accepted / proposed: the share of drafted tokens that reached the
  output. Proposals discarded after a rejection count as proposed, so it falls as γ grows.
  It is not the **acceptance probability α** = Σ min(p, q) of one checked proposal (papers and
  dashboards call either one "the acceptance rate"; this collection does not use that phrase).
* **acceptance length** = mean K, tokens emitted per verification round (accepted + the one
  correction or bonus). It is what the throughput formula of notebook 05 needs.

Both are counted from what reached the output: in the round that emits a stop token, the
accepted proposals after it (and the correction or bonus) are discarded, so they count as
proposed but neither as accepted nor as emitted (``RoundRecord.kept``, ``len(emitted)``).

**Which rounds count** (:func:`full_rounds`): every round, each with the γ it drafted, so a run
with a γ policy (``speculative_generate(gamma=policy)``: rounds of different γ, or drafting cut
by the draft's confidence) is counted whole — accepted share = Σ accepted / Σ γ over the rounds,
acceptance length = Σ K / rounds. Left out are only the rounds that ``max_new_tokens`` cut
short (the sampler drafts at most remaining − 1 at the end): with a fixed γ those are the
rounds below γ, as before. ``gamma=g`` selects the rounds that drafted exactly g instead.

Also here: the K histogram, acceptance per position, the average α over the prefixes the
rounds really checked, and, for exact models (``model.exact(prefix)``), the *exact* law of a
round and the long-run statistics of a first-order (previous-token) model such as
:mod:`specdec_core.toy`. Pure: numpy and fractions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .counts import expected_output_count, iid_accepted_share
from .distributions import check_distribution, check_gamma, check_model_rows
from .sampling import GenerationResult

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .sampling import RoundRecord
    from .types import ExactModel, ModelFn

# ---------------------------------------------------------------- from recorded rounds


def _check_result(result):
    if not isinstance(result, GenerationResult):
        raise ValueError(
            f"result must be a GenerationResult (from speculative_generate), got {type(result).__name__}"
        )
    if not result.records:
        raise ValueError("result has no rounds")
    return result


def _planned(rec, largest):
    """The γ a round was planned with (records made by hand carry none: the largest drafted)."""
    return rec.gamma_chosen if rec.gamma_chosen is not None else largest


def _cut_by_length(result):
    """Which rounds ``max_new_tokens`` cut short, judged by the length limit: the sampler drafts
    min(planned, n − before − 1) with n the limit and ``before`` the tokens emitted earlier, so a
    round was cut when its plan did not fit and it drafted exactly that cap, n − before − 1
    < planned (a round that ended at a stop token, or whose draft offered fewer than the cap,
    was not cut by the limit, wherever the output ends). Records
    put together by hand, without the limit: a run that did not stop at a stop token ran to
    its limit, n = its length; one that did has no known limit, and none of its rounds counts
    as cut."""
    records = result.records
    n = result.max_new_tokens
    if n is None:
        n = None if result.stopped else len(result.tokens)
    largest = max(r.gamma for r in records)
    cut, before = [], 0
    for r in records:
        cap = None if n is None else n - before - 1
        cut.append(cap is not None and cap < _planned(r, largest) and r.gamma == cap)
        before += len(r.emitted)
    return cut


def full_rounds(result: GenerationResult, gamma: int | None = None) -> list[RoundRecord]:
    """The rounds the statistics count. ``gamma=None``: every round, each with its own γ (a γ
    policy's rounds of different γ included), except those cut short by max_new_tokens
    (``speculative_generate`` drafts only what still fits at the end; if it cut every round, the
    rounds that drafted the most). With a fixed γ these are the rounds that drafted γ.
    ``gamma=g``: the rounds that drafted exactly g proposals."""
    result = _check_result(result)
    if gamma is None:
        cut = _cut_by_length(result)
        recs = [r for r, c in zip(result.records, cut) if not c]
        if recs:
            return recs
        gamma = max(r.gamma for r in result.records)  # every round cut: those that drafted most
    g = check_gamma(gamma)
    recs = [r for r in result.records if r.gamma == g]
    if not recs:
        raise ValueError(f"result has no round with gamma={g}")
    return recs


def _sum(recs, attr):
    return sum(getattr(r, attr) for r in recs)


def accepted_share(result: GenerationResult, gamma: int | None = None) -> Fraction:
    """The accepted share: Σ accepted / Σ γ over the rounds of :func:`full_rounds`, each round
    with the γ it drafted (exact Fraction of two counts). Not α: it counts the proposals
    discarded unchecked after a rejection."""
    recs = full_rounds(result, gamma)
    proposed = _sum(recs, "gamma")
    if proposed == 0:
        raise ValueError("no proposals were made (gamma = 0): the accepted share is undefined")
    return Fraction(_sum(recs, "kept"), proposed)


def per_check_acceptance(result: GenerationResult, gamma: int | None = None) -> Fraction:
    """accepted / checked: the share of *checked* proposals that were kept (estimates the
    acceptance probability α)."""
    recs = full_rounds(result, gamma)
    checked = sum(len(r.draws) for r in recs)
    if checked == 0:
        raise ValueError("no proposal was checked (gamma = 0)")
    return Fraction(_sum(recs, "accepted"), checked)


def acceptance_length(result: GenerationResult, gamma: int | None = None) -> Fraction:
    """Mean K: tokens emitted per round, over the rounds of :func:`full_rounds` whatever γ each
    drafted (exact Fraction)."""
    recs = full_rounds(result, gamma)
    return Fraction(sum(len(r.emitted) for r in recs), len(recs))


def k_histogram(result: GenerationResult, gamma: int | None = None) -> np.ndarray:
    """Counts of K = 1 … γ+1 over the rounds of :func:`full_rounds` (int array of length γ + 1,
    γ the largest drafted: a round of γ_j proposals has K ≤ γ_j + 1)."""
    recs = full_rounds(result, gamma)
    g = max(r.gamma for r in recs)
    return np.bincount([len(r.emitted) - 1 for r in recs], minlength=g + 1).astype(np.int64)


def acceptance_by_position(
    result: GenerationResult, gamma: int | None = None
) -> list[dict[str, int | Fraction | None]]:
    """Per proposal position i = 1 … γ (γ the largest drafted): how many rounds checked it, how
    many accepted it, the conditional rate accepted/checked (None if never checked) and the share
    of all rounds that accepted it. Under iid α the conditional rate is α at every position."""
    recs = full_rounds(result, gamma)
    g = max(r.gamma for r in recs)
    out = []
    for i in range(g):
        checked = sum(1 for r in recs if len(r.draws) > i)
        accepted = sum(1 for r in recs if r.accepted > i)
        out.append(
            {
                "position": i + 1,
                "checked": checked,
                "accepted": accepted,
                "rate": Fraction(accepted, checked) if checked else None,
                "share_of_rounds": Fraction(accepted, len(recs)),
            }
        )
    return out


def _alpha_at(target, draft, prefix):
    """α at one prefix, exact when both models offer ``.exact``."""
    if hasattr(target, "exact") and hasattr(draft, "exact"):
        p, q = target.exact(prefix), draft.exact(prefix)
        return sum((min(a, b) for a, b in zip(p, q)), Fraction(0))
    p = check_model_rows(target(prefix), "target")
    q = check_model_rows(draft(prefix), "draft", vocab=p.shape[0])
    return float(np.minimum(p, q).sum())


def visited_alpha(
    result: GenerationResult, target: ModelFn, draft: ModelFn, gamma: int | None = None
) -> Fraction | float:
    """Average α over the prefixes where a proposal was actually *checked* (each check one
    vote). Exact for exact models."""
    recs = full_rounds(result, gamma)
    vals = [_alpha_at(target, draft, r.prefix + r.proposals[:i]) for r in recs for i in range(len(r.draws))]
    if not vals:
        raise ValueError("no proposal was checked (gamma = 0)")
    total = sum(vals, Fraction(0)) if isinstance(vals[0], Fraction) else float(sum(vals))
    return total / len(vals)


def measured_work(result: GenerationResult, gamma: int | None = None) -> dict[str, int | Fraction]:
    """The work account of recorded rounds: proposals and target positions per output token
    and the fractions thrown away (exact Fractions of counts)."""
    recs = full_rounds(result, gamma)
    tokens = sum(len(r.emitted) for r in recs)  # output tokens (a stop token cuts a round)
    proposed = _sum(recs, "gamma")
    accepted = _sum(recs, "kept")  # accepted proposals that reached the output
    positions = _sum(recs, "target_positions")
    return {
        "rounds": len(recs),
        "tokens": tokens,
        "proposed": proposed,
        "accepted": accepted,
        "target_positions": positions,
        "proposals_per_token": Fraction(proposed, tokens),
        "target_positions_per_token": Fraction(positions, tokens),
        "proposals_thrown_away": Fraction(proposed - accepted, proposed) if proposed else Fraction(0),
        "target_positions_thrown_away": Fraction(positions - tokens, positions),
    }


@dataclass(frozen=True)
class AcceptanceReport:
    """Measured acceptance statistics of the counted rounds (:func:`full_rounds`, each with its
    own γ) next to the iid prediction at the same γ's."""

    gamma: int  # the largest γ drafted (every round's, with a fixed γ)
    rounds: int
    proposed: int  # Σ γ over the rounds
    checked: int
    accepted: int
    accepted_share: Fraction  # accepted / proposed
    per_check_acceptance: Fraction  # accepted / checked
    acceptance_length: Fraction  # mean K
    k_histogram: tuple
    average_alpha: object  # α averaged over checked prefixes
    iid_length: object  # mean over the rounds of E[K] at average_alpha and the round's γ
    iid_share: object  # iid accepted / proposed at average_alpha, over the rounds' γ's
    gamma_counts: tuple = ()  # rounds that drafted γ = 0, 1, …, gamma

    @property
    def gap(self) -> float:
        """Measured mean K − iid prediction."""
        return float(self.acceptance_length) - float(self.iid_length)


def acceptance_report(
    result: GenerationResult, target: ModelFn, draft: ModelFn, gamma: int | None = None
) -> AcceptanceReport:
    """Everything notebook 04's "reality" section prints, from one generation: the counts over
    the rounds of :func:`full_rounds`, each with the γ it drafted (a γ policy's rounds too), and
    the iid E[K] (notebook 04's equation (3)) averaged over those γ's at the average α of the
    checked prefixes."""
    recs = full_rounds(result, gamma)
    proposed = _sum(recs, "gamma")
    if proposed == 0:
        raise ValueError("gamma = 0 rounds propose nothing: no acceptance to report")
    counts = np.bincount([r.gamma for r in recs]).tolist()
    a = visited_alpha(result, target, draft, gamma)
    iid_length = sum(Fraction(c, len(recs)) * expected_output_count(a, g) for g, c in enumerate(counts) if c)
    iid_share = sum(
        Fraction(c * g, proposed) * iid_accepted_share(a, g) for g, c in enumerate(counts) if c and g
    )
    return AcceptanceReport(
        gamma=len(counts) - 1,
        rounds=len(recs),
        proposed=proposed,
        checked=sum(len(r.draws) for r in recs),
        accepted=_sum(recs, "accepted"),
        accepted_share=accepted_share(result, gamma),
        per_check_acceptance=per_check_acceptance(result, gamma),
        acceptance_length=acceptance_length(result, gamma),
        k_histogram=tuple(int(v) for v in k_histogram(result, gamma)),
        average_alpha=a,
        iid_length=iid_length,
        iid_share=iid_share,
        gamma_counts=tuple(counts),
    )


# ---------------------------------------------------------------- exact, for exact models


@dataclass(frozen=True)
class RoundLaw:
    """The exact law of one round from a given prefix (exact models)."""

    prefix: tuple
    gamma: int
    k_distribution: tuple  # P(K = 1 … γ+1)
    end_token: dict  # {last emitted token: probability}
    checks_by_position: tuple  # P(position i is checked), i = 1 … γ
    accepts_by_position: tuple  # P(position i is accepted)
    alpha_checked_sum: Fraction  # E[Σ α over checked prefixes]

    @property
    def expected_count(self) -> Fraction:
        return sum((k * pk for k, pk in enumerate(self.k_distribution, start=1)), Fraction(0))

    @property
    def expected_checks(self) -> Fraction:
        return sum(self.checks_by_position, Fraction(0))


def _exact_rows(model, prefix, name):
    if not hasattr(model, "exact"):
        raise ValueError(f"{name} must offer exact rows (model.exact(prefix)), e.g. toy_target()")
    return list(check_distribution(model.exact(prefix), f"{name}.exact({tuple(prefix)!r})", exact=True))


def exact_round_law(target: ExactModel, draft: ExactModel, prefix: Sequence[int], gamma: int) -> RoundLaw:
    """Enumerate one round exactly: P(K = k), the law of the last emitted token, and the
    chance each position is checked / accepted. Cost grows like V^γ: refused beyond
    :data:`specdec_core.processors.MAX_ENUMERATED` outcomes."""
    from .processors import check_law_models, check_round_enumeration

    g = check_gamma(gamma)
    prefix, V = check_law_models(target, draft, prefix)
    check_round_enumeration(V, g)
    kd = [Fraction(0)] * (g + 1)
    checks = [Fraction(0)] * g
    accepts = [Fraction(0)] * g
    end: dict = {}
    asum = Fraction(0)

    def rec(pre, i, prob):
        nonlocal asum
        p = _exact_rows(target, pre, "target")
        if i == g:  # all accepted: bonus from p
            kd[g] += prob
            for y, py in enumerate(p):
                if py:
                    end[y] = end.get(y, Fraction(0)) + prob * py
            return
        q = _exact_rows(draft, pre, "draft")
        if len(p) != len(q):
            raise ValueError("target and draft vocabularies differ")
        alpha = sum((min(a, b) for a, b in zip(p, q)), Fraction(0))
        checks[i] += prob
        asum += prob * alpha
        if alpha < 1:  # rejection here: correction from the residual (unnormalized mass 1 − α)
            kd[i] += prob * (1 - alpha)
            for y, (py, qy) in enumerate(zip(p, q)):
                if py > qy:
                    end[y] = end.get(y, Fraction(0)) + prob * (py - qy)
        for x, (px, qx) in enumerate(zip(p, q)):
            m = min(px, qx)
            if m:
                accepts[i] += prob * m
                rec(pre + (x,), i + 1, prob * m)

    rec(prefix, 0, Fraction(1))
    return RoundLaw(
        prefix=prefix,
        gamma=g,
        k_distribution=tuple(kd),
        end_token=end,
        checks_by_position=tuple(checks),
        accepts_by_position=tuple(accepts),
        alpha_checked_sum=asum,
    )


def _solve_stationary(P):
    """π with π P = π, Σ π = 1, for a small exact transition matrix (Fractions)."""
    n = len(P)
    A = [[(P[j][i] - (1 if i == j else 0)) for j in range(n)] for i in range(n)]
    A[-1] = [Fraction(1)] * n
    b = [Fraction(0)] * (n - 1) + [Fraction(1)]
    for col in range(n):
        piv = next((r for r in range(col, n) if A[r][col] != 0), None)
        if piv is None:
            raise ValueError("the round-start chain has no unique stationary law")
        A[col], A[piv] = A[piv], A[col]
        b[col], b[piv] = b[piv], b[col]
        for r in range(n):
            if r != col and A[r][col] != 0:
                f = A[r][col] / A[col][col]
                A[r] = [x - f * y for x, y in zip(A[r], A[col])]
                b[r] -= f * b[col]
    return [b[i] / A[i][i] for i in range(n)]


@dataclass(frozen=True)
class LongRun:
    """Long-run round statistics of a previous-token model, exact."""

    gamma: int
    stationary: dict  # {round-start token: probability}
    laws: dict  # {round-start token: RoundLaw}
    mean_count: Fraction  # long-run mean K per round
    average_alpha: Fraction  # α averaged over checked prefixes, long run
    iid_count: Fraction  # E[K] at average_alpha
    position_rates: tuple  # long-run P(accept | checked) at positions 1 … γ

    @property
    def gap(self) -> Fraction:
        return self.mean_count - self.iid_count


def long_run_stats(target: ExactModel, draft: ExactModel, gamma: int) -> LongRun:
    """Exact long-run statistics for models whose next-token rows depend only on the previous
    token (like :mod:`specdec_core.toy`): each round starts after the last emitted token, so
    the round-start token is a Markov chain; weight each start's exact round law by its
    stationary probability."""
    from .processors import check_round_enumeration

    g = check_gamma(gamma)
    if g == 0:
        raise ValueError("gamma must be at least 1 for acceptance statistics")
    V = len(_exact_rows(target, (), "target"))
    check_round_enumeration(V, g)
    laws = {s: exact_round_law(target, draft, (s,), g) for s in range(V)}
    P = [[laws[s].end_token.get(y, Fraction(0)) for y in range(V)] for s in range(V)]
    pi = _solve_stationary(P)
    w = dict(enumerate(pi))
    mean_k = sum((w[s] * laws[s].expected_count for s in range(V)), Fraction(0))
    checks = sum((w[s] * laws[s].expected_checks for s in range(V)), Fraction(0))
    avg_a = sum((w[s] * laws[s].alpha_checked_sum for s in range(V)), Fraction(0)) / checks
    rates = []
    for i in range(g):
        c = sum((w[s] * laws[s].checks_by_position[i] for s in range(V)), Fraction(0))
        a = sum((w[s] * laws[s].accepts_by_position[i] for s in range(V)), Fraction(0))
        rates.append(a / c if c else None)
    return LongRun(
        gamma=g,
        stationary=w,
        laws=laws,
        mean_count=mean_k,
        average_alpha=avg_a,
        iid_count=expected_output_count(avg_a, g),
        position_rates=tuple(rates),
    )

"""Does a sampler keep the target's law? Chi-square goodness of fit against an exact law.

Cells whose expected count is below ``min_expected`` are pooled into one cell, so the
chi-square approximation holds. The test *rejects* when the p-value is below the stated
threshold (default 0.001). With fixed seeds the outcome is deterministic.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

#: The p-value below which the notebooks and tests reject "the samples follow the law".
DEFAULT_THRESHOLD = 1e-3


@dataclass(frozen=True)
class GofResult:
    statistic: float
    dof: int
    p_value: float
    n: int
    cells: int
    threshold: float

    @property
    def rejected(self) -> bool:
        return self.p_value < self.threshold

    def __str__(self):
        verdict = "REJECT: not the target law" if self.rejected else "consistent with the target law"
        from .formatting import fmt_p_value

        return (f"chi-square = {self.statistic:.1f} on {self.dof} dof, p-value = {fmt_p_value(self.p_value)} "
                f"(n = {self.n}, reject if p-value < {self.threshold:g}) -> {verdict}")


def chi_square_gof(samples, law: dict, *, min_expected: float = 5.0,
                   threshold: float = DEFAULT_THRESHOLD) -> GofResult:
    """Chi-square test of observed outcomes (an iterable of hashable outcomes, or a Counter)
    against ``law`` ({outcome: probability}). Outcomes outside the law's support make the
    statistic infinite (p-value 0): the sampler produced something impossible."""
    from scipy.stats import chi2

    if not law:
        raise ValueError("law is empty")
    counts = samples if isinstance(samples, Counter) else Counter(samples)
    n = sum(counts.values())
    if n == 0:
        raise ValueError("samples is empty")
    if not 0 < threshold < 1:
        raise ValueError(f"threshold must be in (0, 1), got {threshold}")
    outside = sum(c for k, c in counts.items() if k not in law)
    if outside:
        return GofResult(float("inf"), max(len(law) - 1, 1), 0.0, n, len(law), threshold)
    keys = sorted(law, key=lambda k: float(law[k]), reverse=True)
    probs = np.array([float(law[k]) for k in keys])
    obs = np.array([counts.get(k, 0) for k in keys], dtype=np.float64)
    exp = probs * n
    big = exp >= min_expected
    o = list(obs[big])
    e = list(exp[big])
    if (~big).any():
        o.append(obs[~big].sum())
        e.append(exp[~big].sum())
    o, e = np.array(o), np.array(e)
    stat = float(((o - e) ** 2 / e).sum())
    dof = max(len(o) - 1, 1)
    return GofResult(stat, dof, float(chi2.sf(stat, dof)), n, len(o), threshold)

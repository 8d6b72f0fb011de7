"""Notebook 04's counts lab: the distribution of K (tokens per round) and E[K] over α and γ.

No math here: P(K = k), E[K] and the E[K]-against-γ curve come from :mod:`specdec_core.counts`.
"""

from __future__ import annotations

from functools import partial

from ..counts import expected_output_count, output_count_distribution
from ..formatting import labelled
from ..plots.counts import CountsPlot
from .base import Lab, LabSpec, float_slider, int_slider, show

MAX_GAMMA = 16
#: The one home of the lab's default state (the worked example: iid α = 0.6, γ = 2).
DEFAULTS = {"alpha": 0.6, "gamma": 2}


def count_texts(alpha, gamma, max_listed: int = 8) -> dict:
    """``"law"``: P(K = k) at (α, γ); ``"mean"``: E[K] (fixed rounding, never NaN). Long laws
    are shortened with "…" (any γ the library accepts)."""
    a, g = float(alpha), int(gamma)
    pmf = [float(v) for v in output_count_distribution(a, g)]
    ek = float(expected_output_count(a, g))
    items = [f"P(K={k})={v:.4f}" for k, v in enumerate(pmf, start=1)]
    if len(items) > max_listed:
        items = items[: max_listed - 2] + ["…", items[-1]]
    return {
        "law": labelled("derived", f"α = {a:.2f}, γ = {g} (iid): " + ", ".join(items)),
        "mean": labelled("derived", f"E[K] = {ek:.4f} tokens per round (at most {g + 1})"),
    }


def texts(state) -> dict:
    return count_texts(state["alpha"], state["gamma"])


SPEC = LabSpec(
    name="counts",
    defaults=DEFAULTS,
    controls={"alpha": float_slider("α", 0.0, 1.0, 0.01), "gamma": int_slider("γ", 0, MAX_GAMMA)},
    texts=texts,
    plot=partial(CountsPlot, MAX_GAMMA),
)


def counts_lab(**start) -> Lab:
    return Lab(SPEC, **start)


def show_counts(**start) -> None:
    """Display the lab and its static copy (notebook 04)."""
    show(counts_lab(**start))

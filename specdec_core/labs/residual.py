"""Notebook 02's corrections lab: pick the rule a rejected proposal is replaced from, see that
rule's output law against p and its total variation distance.

Like the acceptance lab, the sliders hold non-negative weights that are normalized; all-zero
weights on one side give a message (never NaN) and a greyed figure.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..formatting import labelled
from ..plots.acceptance import SYMBOLS
from ..plots.residual import RULE_LABELS, RulePlot
from ..verify import (
    CORRECTION_RULES,
    acceptance_probability,
    output_distribution_with,
    total_variation,
)
from .acceptance import (
    DEFAULT_P_WEIGHTS,
    DEFAULT_Q_WEIGHTS,
    normalize_weights,
    weight_sliders,
)
from .base import Lab, LabSpec, show, toggle

DEFAULT_RULE = "draft"
#: Below this total variation distance the output counts as equal to p (float round-off).
TV_TOLERANCE = 5e-5
N_SYMBOLS = len(DEFAULT_P_WEIGHTS)
P_KEYS = tuple(f"p_{s}" for s in SYMBOLS[:N_SYMBOLS])
Q_KEYS = tuple(f"q_{s}" for s in SYMBOLS[:N_SYMBOLS])

#: The one home of the lab's default state: the worked example and the "resample from q" rule.
DEFAULTS = {
    "rule": DEFAULT_RULE,
    **dict(zip(P_KEYS, DEFAULT_P_WEIGHTS)),
    **dict(zip(Q_KEYS, DEFAULT_Q_WEIGHTS)),
}


def normalized_pair(state):
    return (
        normalize_weights([state[k] for k in P_KEYS], "p"),
        normalize_weights([state[k] for k in Q_KEYS], "q"),
    )


def problem(state) -> str | None:
    try:
        normalized_pair(state)
    except ValueError as exc:
        return f"No distribution: {exc}."
    return None


def texts(state) -> dict:
    """The lab's readouts (pure; never NaN).

    ``"output"`` (the rule's output law and its sum), ``"tv"`` (TV distance to p), ``"verdict"``
    (whether that is p, and why; it names α, so moving q changes it even under the correct rule,
    whose output is p whatever q is). With all-zero weights the first readout says why, once, and
    the others are empty (the lab hides an empty readout).
    """
    rule = state["rule"]
    if rule not in CORRECTION_RULES:
        raise ValueError(f"rule must be one of {CORRECTION_RULES}, got {rule!r}")
    try:
        p, q = normalized_pair(state)
    except ValueError as exc:
        return {"output": f"No distribution: {exc}.", "tv": "", "verdict": ""}
    out = np.asarray(output_distribution_with(p, q, rule), dtype=np.float64)
    tv = float(total_variation(out, p))
    alpha = float(acceptance_probability(p, q))
    vec = "[" + ", ".join(f"{v:.4f}" for v in out) + "]"
    if alpha >= 1 - 1e-12:
        verdict = (
            "p = q: no proposal is ever rejected, so the correction is never used and every rule gives p."
        )
    elif tv < TV_TOLERANCE:
        verdict = (
            "✓ The output law is exactly p, whatever q is: moving a q slider changes α (now "
            f"{alpha:.4f}) and so how often the correction is drawn (1 − α = {1 - alpha:.4f}), "
            "never the output. That is the point of the residual."
        )
    elif abs(out.sum() - 1) > 1e-9:
        verdict = (
            f"✗ Not even a distribution: the output sums to {out.sum():.4f}. The rejected "
            f"mass 1 − α = {1 - alpha:.4f} is spread by a vector that itself sums to "
            f"1 − α, so only (1 − α)² = {(1 - alpha) ** 2:.4f} comes back."
        )
    else:
        verdict = "✗ Not p: this rule biases the output, so it does not sample the target."
    return {
        "output": labelled(
            "derived", f"output with rule “{RULE_LABELS[rule]}” = {vec} (sums to {out.sum():.4f})"
        ),
        "tv": labelled("derived", f"TV(output, p) = {tv:.4f}"),
        "verdict": verdict,
    }


def _controls():
    rule = toggle("correction", [(RULE_LABELS[r], r) for r in CORRECTION_RULES])
    return {"rule": rule, **weight_sliders(P_KEYS, Q_KEYS)}


SPEC = LabSpec(
    name="residual",
    defaults=DEFAULTS,
    controls=_controls(),
    texts=texts,
    plot=partial(RulePlot, normalized_pair),
    problem=problem,
    groups=(("", ("rule",)), ("target p (weights)", P_KEYS), ("draft q (weights)", Q_KEYS)),
)


def corrections_lab(**start) -> Lab:
    """The live lab (``start``: state values to begin from instead of the defaults)."""
    return Lab(SPEC, **start)


def show_corrections(**start) -> None:
    """Display the lab and its static copy (notebook 02)."""
    show(corrections_lab(**start))

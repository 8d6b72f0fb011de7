"""Notebook 09b's matching lab: the strict rule of notebook 02 against the match rule that
engines run ("draw the target's token, keep the proposal if it is the same"), for a sampled or a
greedy draft. Move p and q and see the acceptance gap α − Σ q·p, and what it does to E[K].

Like the acceptance lab, the sliders hold non-negative weights that are normalized; all-zero
weights on one side give a message (never NaN) and a greyed figure. The numbers come from
:mod:`specdec_core.engines`, :mod:`specdec_core.verify` and :mod:`specdec_core.counts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import numpy as np

from ..counts import expected_output_count
from ..engines import DRAFT_MODES, match_acceptance, match_output_distribution, proposal_law
from ..formatting import labelled
from ..plots.acceptance import SYMBOLS
from ..plots.matching import MAX_GAMMA, MatchingPlot
from ..verify import acceptance_probability, output_distribution_with, total_variation
from .acceptance import DEFAULT_P_WEIGHTS, DEFAULT_Q_WEIGHTS, normalize_weights, weight_sliders
from .base import Lab, LabSpec, int_slider, show, toggle

N_SYMBOLS = len(DEFAULT_P_WEIGHTS)
P_KEYS = tuple(f"p_{s}" for s in SYMBOLS[:N_SYMBOLS])
Q_KEYS = tuple(f"q_{s}" for s in SYMBOLS[:N_SYMBOLS])

#: The one home of the lab's default state: the worked example of notebooks 01-02, a sampled
#: draft, γ = 4 (vLLM's and llama.cpp's examples draft a handful of tokens).
DEFAULTS = {
    "draft": "sampled",
    "gamma": 4,
    **dict(zip(P_KEYS, DEFAULT_P_WEIGHTS)),
    **dict(zip(Q_KEYS, DEFAULT_Q_WEIGHTS)),
}


def normalized_pair(state: Mapping) -> tuple[np.ndarray, np.ndarray]:
    return (
        normalize_weights([state[k] for k in P_KEYS], "p"),
        normalize_weights([state[k] for k in Q_KEYS], "q"),
    )


def problem(state: Mapping) -> str | None:
    try:
        normalized_pair(state)
    except ValueError as exc:
        return f"No distribution: {exc}."
    return None


def _tv(out, p) -> float:
    return float(total_variation(np.asarray(out, dtype=np.float64), p))


def texts(state: Mapping) -> dict[str, str]:
    """The lab's readouts (pure; never NaN).

    ``"acceptance"``: the strict α and the match rule's acceptance for the chosen draft;
    ``"gap"``: their difference and E[K] of each at the chosen γ (iid); ``"law"``: the total
    variation distance of each rule's one-position output law from p (0 for both). With
    all-zero weights the first readout says why, once, and the others are empty (hidden)."""
    draft, g = state["draft"], int(state["gamma"])
    if draft not in DRAFT_MODES:
        raise ValueError(f"draft must be one of {DRAFT_MODES}, got {draft!r}")
    try:
        p, q = normalized_pair(state)
    except ValueError as exc:
        return {"acceptance": f"No distribution: {exc}.", "gap": "", "law": ""}  # said once
    r = proposal_law(q, draft)
    alpha = float(acceptance_probability(p, r))
    match = float(match_acceptance(p, q, draft))
    if draft == "greedy":
        top = SYMBOLS[int(np.argmax(r))]
        what = f"greedy draft proposes {top} (argmax q): strict α = min(p({top}), 1) = {alpha:.4f}"
        what += f" · match p({top}) = {match:.4f}"
    else:
        what = f"sampled draft: strict α = Σ min(p, q) = {alpha:.4f} · match Σ q·p = {match:.4f}"
    gap = 0.0 if abs(alpha - match) < 5e-13 else alpha - match  # never print "-0.0000"
    ek_s, ek_m = float(expected_output_count(alpha, g)), float(expected_output_count(match, g))
    tv_s = _tv(output_distribution_with(p, r, "residual"), p)
    tv_m = _tv(match_output_distribution(p, q, draft), p)
    return {
        "acceptance": labelled("derived", what),
        "gap": labelled(
            "derived",
            f"gap α − match = {gap:.4f} per proposal; at γ = {g} (iid) E[K] strict "
            f"{ek_s:.4f}, match {ek_m:.4f} tokens per round",
        ),
        "law": labelled("derived", f"output law: TV(strict, p) = {tv_s:.4f} · TV(match, p) = {tv_m:.4f}"),
    }


def _controls():
    draft = toggle("draft", [("sampled from q", "sampled"), ("greedy (argmax q)", "greedy")])
    return {"draft": draft, "gamma": int_slider("γ", 1, MAX_GAMMA), **weight_sliders(P_KEYS, Q_KEYS)}


SPEC = LabSpec(
    name="matching",
    defaults=DEFAULTS,
    controls=_controls(),
    texts=texts,
    plot=partial(MatchingPlot, normalized_pair, N_SYMBOLS),
    problem=problem,
    groups=(("", ("draft", "gamma")), ("target p (weights)", P_KEYS), ("draft q (weights)", Q_KEYS)),
)


def matching_lab(**start) -> Lab:
    """The live lab (``start``: state values to begin from instead of the defaults)."""
    return Lab(SPEC, **start)


def show_matching(**start) -> None:
    """Display the lab and its static copy (notebook 09b)."""
    show(matching_lab(**start))

"""Notebook 01's acceptance lab: edit p and q, see p, q, min(p, q), a(x) per symbol and α, live.

The sliders hold **non-negative weights**, not probabilities: each side is divided by its sum,
so whatever the sliders say, p and q are valid distributions. If every weight of p (or of q)
is 0 there is nothing to normalize: the texts say so (never NaN) and the figure is greyed.

State: ``symbols`` (3 to 6) and one weight per side and symbol, ``p_A … p_F``, ``q_A … q_F``
(symbols beyond ``symbols`` are hidden and ignored). Defaults: the worked example.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..distributions import check_distribution
from ..formatting import labelled
from ..plots.acceptance import SYMBOLS, AcceptancePlot
from ..verify import acceptance_probabilities, acceptance_probability
from .base import Lab, LabSpec, float_slider, int_slider, show

#: Worked example (target p = [0.6, 0.3, 0.1], draft q = [0.2, 0.3, 0.5]) as slider weights.
DEFAULT_P_WEIGHTS = (0.6, 0.3, 0.1)
DEFAULT_Q_WEIGHTS = (0.2, 0.3, 0.5)
#: One slider step (ArrowRight on a focused handle moves a weight by this much).
SLIDER_STEP = 0.05
#: Symbol-count range, and the weight a symbol beyond the first three starts with (both sides).
MIN_SYMBOLS, MAX_SYMBOLS = 3, 6
NEW_SYMBOL_WEIGHT = 0.1

P_KEYS = tuple(f"p_{s}" for s in SYMBOLS[:MAX_SYMBOLS])
Q_KEYS = tuple(f"q_{s}" for s in SYMBOLS[:MAX_SYMBOLS])


def _padded(weights) -> tuple:
    return tuple(weights) + (NEW_SYMBOL_WEIGHT,) * (MAX_SYMBOLS - len(weights))


#: The one home of the lab's default state.
DEFAULTS = {
    "symbols": len(DEFAULT_P_WEIGHTS),
    **dict(zip(P_KEYS, _padded(DEFAULT_P_WEIGHTS))),
    **dict(zip(Q_KEYS, _padded(DEFAULT_Q_WEIGHTS))),
}


def normalize_weights(weights, name: str = "weights") -> np.ndarray:
    """Non-negative weights → a float distribution (weights ÷ their sum).

    Raises ``ValueError`` (naming ``name``) for an empty vector, a negative or non-finite weight,
    or weights that are all 0 (nothing to normalize).
    """
    try:
        arr = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a vector of numbers, got {weights!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty vector of weights, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite numbers")
    if (arr < 0).any():
        raise ValueError(f"{name} must be non-negative")
    total = arr.sum()
    if total <= 0:
        raise ValueError(f"all weights of {name} are 0: raise at least one {name} slider above 0")
    return check_distribution(arr / total, name)


def weights(state) -> tuple[list, list]:
    """(p weights, q weights) of the shown symbols."""
    n = int(state["symbols"])
    return [state[k] for k in P_KEYS[:n]], [state[k] for k in Q_KEYS[:n]]


def normalized_pair(state):
    """Normalized (p, q) of the state, or ``ValueError`` with a message fit for the learner."""
    pw, qw = weights(state)
    return normalize_weights(pw, "p"), normalize_weights(qw, "q")


def problem(state) -> str | None:
    try:
        normalized_pair(state)
    except ValueError as exc:
        return f"No distribution: {exc}."
    return None


def texts(state) -> dict:
    """The lab's three readouts (pure; never NaN).

    ``"normalized"``: p and q after normalizing. ``"alpha"``: α = Σ min(p, q), 4 decimals.
    ``"acceptance"``: a(x) = min(1, p(x)/q(x)) per symbol, 4 decimals, or "never proposed"
    where q(x) = 0. When p or q has only zero weights the first readout says why, once, and the
    others are empty (the lab hides an empty readout).
    """
    try:
        p, q = normalized_pair(state)
    except ValueError as exc:
        return {"normalized": f"No distribution: {exc}.", "alpha": "", "acceptance": ""}
    names = SYMBOLS[: len(p)]
    a = acceptance_probabilities(p, q)
    parts = [f"{s} never proposed" if qi == 0 else f"{s} {ai:.4f}" for s, ai, qi in zip(names, a, q)]
    vec = lambda v: "[" + ", ".join(f"{x:.3f}" for x in v) + "]"
    return {
        "normalized": f"p = {vec(p)} · q = {vec(q)} (each side's weights divided by their sum)",
        "alpha": labelled("derived", f"α = Σ min(p, q) = {float(acceptance_probability(p, q)):.4f}"),
        "acceptance": labelled("derived", "a(x) = min(1, p(x)/q(x)): " + " · ".join(parts)),
    }


def hidden(state):
    n = int(state["symbols"])
    return P_KEYS[n:] + Q_KEYS[n:]


def weight_sliders(p_keys, q_keys) -> dict:
    """One weight slider per symbol for p, then for q (this lab's and the corrections lab's)."""
    return {
        k: float_slider(s, 0.0, 1.0, SLIDER_STEP, width=300)
        for keys in (p_keys, q_keys)
        for k, s in zip(keys, SYMBOLS)
    }


def _controls():
    symbols = int_slider("symbols", MIN_SYMBOLS, MAX_SYMBOLS, continuous=False, width=300)
    return {"symbols": symbols, **weight_sliders(P_KEYS, Q_KEYS)}


SPEC = LabSpec(
    name="acceptance",
    defaults=DEFAULTS,
    controls=_controls(),
    texts=texts,
    # the live lab builds a figure per symbol count up front (≈0.1 s once)
    plot=partial(AcceptancePlot, normalized_pair, range(MIN_SYMBOLS, MAX_SYMBOLS + 1)),
    problem=problem,
    hidden=hidden,
    groups=(("", ("symbols",)), ("target p (weights)", P_KEYS), ("draft q (weights)", Q_KEYS)),
)


def acceptance_lab(**start) -> Lab:
    """The live lab (``start``: state values to begin from instead of the defaults)."""
    return Lab(SPEC, **start)


def show_acceptance(**start) -> None:
    """Display the lab and its static copy (notebook 01)."""
    show(acceptance_lab(**start))

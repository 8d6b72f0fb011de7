"""Notebook 07's transforms lab: pick a setup (the correct one or a classic mistake), a
transform and its parameter, and a context of the toy language; see the emitted law against
the intended one.

The readout always names the transform and the parameter value used, and says so when, in the
chosen context, the transform leaves both p and q unchanged (then moving its slider changes
nothing there). Only the slider of the chosen transform is shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import numpy as np

from ..formatting import fmt, labelled
from ..plots.transforms import SETUP_TITLES, TransformPlot
from ..toy import SYMBOLS, toy_draft, toy_target
from ..transforms import (
    SETUPS,
    make_transform,
    one_position_acceptance,
    setup_distributions,
    verified_output,
)
from ..verify import total_variation
from .base import Lab, LabSpec, dropdown, float_slider, int_slider, show

CONTEXTS = {"start": (), "after A": (0,), "after B": (1,), "after C": (2,), "after D": (3,)}
TRANSFORMS = ("temperature", "top_k", "top_p", "greedy", "none")
#: Which state key holds each transform's parameter.
PARAMETER = {"temperature": "temperature", "top_k": "k", "top_p": "top_p"}
#: The one home of the lab's default state (T = 1/2 exactly: a linear slider, no snapping).
DEFAULTS = {
    "setup": "greedy_draft",
    "transform": "temperature",
    "temperature": 0.5,
    "k": 2,
    "top_p": 0.7,
    "context": "start",
}
#: Below this total variation distance the emitted law counts as the intended one.
TV_TOLERANCE = 1e-12

_TARGET, _DRAFT = toy_target(), toy_draft()


def parameter_text(state) -> str:
    kind = state["transform"]
    if kind == "temperature":
        return f"temperature T = {state['temperature']:.2f}"
    if kind == "top_k":
        return f"top-k with k = {state['k']}"
    if kind == "top_p":
        return f"top-p with p = {state['top_p']:.2f}"
    return "greedy (argmax)" if kind == "greedy" else "no transform"


def transform_of(state):
    kind = state["transform"]
    if kind in PARAMETER:
        return make_transform(kind, state[PARAMETER[kind]])
    return make_transform(kind)


def laws(state) -> dict:
    """Everything the lab shows, from the library: the distributions of the setup, the emitted
    and intended laws, acceptance, TV, and whether the transform changes p or q here."""
    prefix = CONTEXTS[state["context"]]
    p_raw, q_raw = _TARGET(prefix), _DRAFT(prefix)
    fn = transform_of(state)
    p_used, q_rep, q_smp, intended = setup_distributions(state["setup"], p_raw, q_raw, fn)
    out = verified_output(p_used, q_rep, q_smp)
    return {
        "p_used": p_used,
        "q_reported": q_rep,
        "q_sampled": q_smp,
        "intended": intended,
        "emitted": out,
        "tv": float(total_variation(out, intended)),
        "acceptance": float(one_position_acceptance(p_used, q_rep, q_smp)),
        "inert": bool(np.allclose(fn(p_raw), p_raw) and np.allclose(fn(q_raw), q_raw)),
    }


def texts(state) -> dict:
    """``"used"`` (setup, transform and its value, and whether it changes anything here),
    ``"laws"`` (intended and emitted laws, p and q as used) and ``"verdict"`` (✓/✗ with TV)."""
    r = laws(state)
    used = f"{SETUP_TITLES[state['setup']]} · {parameter_text(state)} · context: {state['context']}"
    if state["transform"] != "none" and r["inert"]:
        used += (
            f"\nIn this context {parameter_text(state)} leaves both p and q unchanged: "
            f"the result is the same as with no transform."
        )
    verdict = (
        "✓ emitted law = intended law"
        if r["tv"] < TV_TOLERANCE
        else f"✗ biased: TV(emitted, intended) = {r['tv']:.4f}"
    )
    return {
        "used": used,
        "laws": labelled(
            "derived",
            f"intended {fmt(r['intended'])} · emitted {fmt(r['emitted'])}\n"
            f"p used {fmt(r['p_used'])} · q reported {fmt(r['q_reported'])} · "
            f"q sampled {fmt(r['q_sampled'])} · acceptance probability {r['acceptance']:.4f}",
        ),
        "verdict": verdict,
    }


def figure_inputs(state: Mapping) -> tuple:
    """(intended law, emitted law, title) of the figure."""
    r = laws(state)
    return (
        r["intended"],
        r["emitted"],
        f"{SETUP_TITLES[state['setup']]} ({state['context']}), TV = {r['tv']:.4f}",
    )


def hidden(state):
    return tuple(v for k, v in PARAMETER.items() if k != state["transform"])


SPEC = LabSpec(
    name="transforms",
    defaults=DEFAULTS,
    controls={
        "setup": dropdown("setup", [(SETUP_TITLES[s], s) for s in SETUPS]),
        "transform": dropdown("transform", TRANSFORMS),
        "temperature": float_slider("temperature T", 0.0, 4.0, 0.05),
        "k": int_slider("top-k k", 1, len(SYMBOLS)),
        "top_p": float_slider("top-p p", 0.01, 1.0, 0.01),
        "context": dropdown("context", list(CONTEXTS)),
    },
    texts=texts,
    plot=partial(TransformPlot, figure_inputs, SYMBOLS),
    hidden=hidden,
)


def transforms_lab(**start) -> Lab:
    return Lab(SPEC, **start)


def show_transforms(**start) -> None:
    """Display the lab and its static copy (notebook 07)."""
    show(transforms_lab(**start))

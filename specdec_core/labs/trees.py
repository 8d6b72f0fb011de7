"""Notebook 08's trees lab: tree shape and size, the draft's quality and the acceptance rule →
the exact law of the first two tokens next to the target's, TV, E[accepted length], positions.

Everything is on the toy language at the start of a sequence, in float64 (derived). The draft is
(1 − quality)·(toy draft) + quality·(toy target): quality 0 is the toy draft, 1 a perfect draft.
State: ``family`` (chain / wide / deep), ``nodes`` (1 … 8), ``quality`` (0 … 1), ``rule``
(recursive / no_update / typical, with Medusa's ε = 0.09, δ = 0.3), ``replacement`` (True: the
children of a node are independent draws; False: drawn without replacement).
"""

from __future__ import annotations

from ..formatting import labelled
from ..multidraft import TYPICAL_DELTA, TYPICAL_EPSILON
from ..plots.trees import TreeLabView, tree_lab_figure
from ..trees import (
    FAMILY_LABELS,
    LAB_HORIZON,
    LAB_MAX_NODES,
    TREE_FAMILIES,
    tree_lab_numbers,
)
from .base import (
    Lab,
    LabSpec,
    checkbox,
    dropdown,
    float_slider,
    int_slider,
    show,
    toggle,
)

#: The one home of the lab's default state.
DEFAULTS = {"family": "deep", "nodes": 4, "quality": 0.0, "rule": "recursive", "replacement": True}

RULE_LABELS = {
    "recursive": "recursive rejection (lossless)",
    "no_update": "no residual update (lossy)",
    "typical": f"typical acceptance, ε = {TYPICAL_EPSILON}, δ = {TYPICAL_DELTA} (lossy)",
}


def texts(state) -> dict:
    """Three readouts (pure; never NaN): the law's distance from the target, the round's length
    and pass size, and what the rule does."""
    d = tree_lab_numbers(
        state["family"], state["nodes"], state["quality"], state["rule"], state["replacement"]
    )
    exact = d["tv"] < 1e-12
    verdict = (
        "the target's law (TV = 0 up to rounding)" if exact else f"NOT the target's law: TV = {d['tv']:.4f}"
    )
    draws = "independent draws" if state["replacement"] else "drawn without replacement"
    n, pos = state["nodes"], d["positions"]
    if pos == n + 1:
        pass_text = f"scores {n + 1} positions ({n} nodes + 1)"
    else:  # without replacement a node offers at most as many children as the draft has tokens
        short = f"{pos:.2f}".rstrip("0").rstrip(".")
        drafted = f"{pos - 1:.2f}".rstrip("0").rstrip(".")
        pass_text = (
            f"scores {short} positions{'' if float(pos).is_integer() else ' on average'} ({drafted} of "
            f"the {n} nodes drafted + 1: without replacement a node gets at most as many children "
            "as the draft has tokens)"
        )
    return {
        "law": labelled("derived", f"first {LAB_HORIZON} tokens emitted: {verdict}"),
        "length": labelled(
            "derived",
            f"E[accepted tokens] = {d['expected_accepted']:.3f}, "
            f"E[tokens per round] = {d['expected_emitted']:.3f}; one target pass {pass_text}",
        ),
        "rule": f"{FAMILY_LABELS[state['family']]}, {state['nodes']} nodes, children {draws}; "
        f"rule: {RULE_LABELS[state['rule']]}; draft quality {state['quality']:.1f}",
    }


def draw(state):
    return tree_lab_figure(state)


SPEC = LabSpec(
    name="trees",
    defaults=DEFAULTS,
    controls={
        "family": toggle("tree", [(FAMILY_LABELS[f].split(" (")[0], f) for f in TREE_FAMILIES]),
        "nodes": int_slider("nodes", 1, LAB_MAX_NODES, width=300),
        "quality": float_slider("draft quality", 0.0, 1.0, 0.1, fmt=".1f", width=300),
        "rule": dropdown("rule", [(v, k) for k, v in RULE_LABELS.items()], width=340),
        "replacement": checkbox("children independent (with replacement)", width=340),
    },
    texts=texts,
    draw=draw,
    view=TreeLabView,
    groups=(("tree", ("family", "nodes")), ("draft and rule", ("quality", "rule", "replacement"))),
)


def trees_lab(**start) -> Lab:
    """The live lab (``start``: state values to begin from instead of the defaults)."""
    return Lab(SPEC, **start)


def show_trees(**start) -> None:
    """Display the lab and its static copy (notebook 08)."""
    show(trees_lab(**start))

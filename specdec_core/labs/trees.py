"""Notebook 08's trees lab: tree shape and size, the draft's quality and the acceptance rule →
the exact law of the first two tokens next to the target's, TV, E[accepted length], positions.

Everything is on the toy language at the start of a sequence, in float64 (derived). The draft is
(1 − quality)·(toy draft) + quality·(toy target): quality 0 is the toy draft, 1 a perfect draft.
State: ``family`` (chain / wide / deep), ``nodes`` (1 … 8), ``quality`` (0 … 1), ``rule``
(recursive / no_update / typical, with Medusa's ε = 0.09, δ = 0.3), ``replacement`` (True: the
children of a node are independent draws; False: drawn without replacement).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from ..distributions import check_gamma, check_probability
from ..formatting import labelled
from ..multidraft import TYPICAL_DELTA, TYPICAL_EPSILON, check_replacement, check_rule
from ..plots.trees import TreeLabPlot
from ..toy import toy_draft, toy_target
from ..tree_laws import MixedDraft, compare_with_target, expected_drafted_nodes, family_curve, last_token_key
from ..trees import FAMILY_LABELS, TREE_FAMILIES, family_tree
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

#: The lab's node budget runs 1 … LAB_MAX_NODES; its law is over the first LAB_HORIZON tokens.
LAB_MAX_NODES = 8
LAB_HORIZON = 2

#: The one home of the lab's default state.
DEFAULTS = {"family": "deep", "nodes": 4, "quality": 0.0, "rule": "recursive", "replacement": True}

RULE_LABELS = {
    "recursive": "recursive rejection (lossless)",
    "no_update": "no residual update (lossy)",
    "typical": f"typical acceptance, ε = {TYPICAL_EPSILON}, δ = {TYPICAL_DELTA} (lossy)",
}


# ------------------------------------------------------------------ the lab's numbers (cached)
def tree_lab_numbers(family: str, nodes: int, quality: float, rule: str, replacement: bool) -> dict:
    """Everything the trees lab shows, for the toy language at the start of a sequence, with the
    draft (1 − quality)·toy draft + quality·target. float64 (derived), cached.

    Keys: ``law`` and ``target_law`` ({two tokens: probability}), ``tv``, ``expected_accepted``,
    ``expected_emitted``, ``positions`` (what one pass scores: 1 + the expected number of nodes
    drafted, see :class:`~specdec_core.trees.TreeRoundStats`), ``curve`` (E[accepted] for
    1 … LAB_MAX_NODES nodes)."""
    if family not in TREE_FAMILIES:
        raise ValueError(f"family must be one of {TREE_FAMILIES}, got {family!r}")
    nodes = check_gamma(nodes, "nodes")
    if not 1 <= nodes <= LAB_MAX_NODES:
        raise ValueError(f"nodes must be in 1..{LAB_MAX_NODES}, got {nodes}")
    quality = check_probability(quality, "quality", scalar=True)
    check_rule(rule)
    replacement = check_replacement(replacement)
    return _numbers(family, nodes, round(float(quality), 6), rule, bool(replacement))


#: (kind, family, …) -> numbers or curve; cleared past 4,000 entries.
_CACHE: dict = {}
_OPTIONS = {"exact": False, "key": last_token_key}


def lab_models(quality: float) -> tuple:
    """(toy target, the lab's draft at ``quality``)."""
    target = toy_target()
    return target, MixedDraft(toy_draft(), target, quality)


def _curve(family, quality, rule, replacement) -> tuple:
    ck = ("curve", family, quality, rule, replacement)
    if ck not in _CACHE:
        target, draft = lab_models(quality)
        curve = family_curve(
            target, draft, (), family, LAB_MAX_NODES, rule=rule, replacement=replacement, **_OPTIONS
        )
        _CACHE[ck] = tuple(float(v) for v in curve)
    return _CACHE[ck]


def _positions(draft, tree, replacement):
    """1 + E[nodes drafted], rounded to 9 places (4, not 3.9999999999999996, when the count is
    sure) and an int when whole."""
    pos = round(float(expected_drafted_nodes(draft, (), tree, replacement=replacement, **_OPTIONS)) + 1, 9)
    return int(pos) if pos.is_integer() else pos


def _numbers(family, nodes, quality, rule, replacement) -> dict:
    ck = ("numbers", family, nodes, quality, rule, replacement)
    if ck not in _CACHE:
        target, draft = lab_models(quality)
        tree = family_tree(family, nodes)
        c = compare_with_target(
            target, draft, (), tree, LAB_HORIZON, rule=rule, replacement=replacement, **_OPTIONS
        )
        curve = _curve(family, quality, rule, replacement)
        _CACHE[ck] = {
            "law": c.law,
            "target_law": c.target_law,
            "tv": float(c.tv),
            "expected_accepted": curve[nodes - 1],
            "expected_emitted": curve[nodes - 1] + 1,
            "positions": _positions(draft, tree, replacement),
            "curve": curve,
        }
        if len(_CACHE) > 4000:
            _CACHE.clear()
    return _CACHE[ck]


def numbers(state: Mapping) -> dict:
    """:func:`tree_lab_numbers` of a lab state."""
    return tree_lab_numbers(
        state["family"], state["nodes"], state["quality"], state["rule"], state["replacement"]
    )


def target_law() -> dict:
    """The toy target's law of the first LAB_HORIZON tokens (the same in every state)."""
    return numbers(DEFAULTS)["target_law"]


def texts(state) -> dict:
    """Three readouts (pure; never NaN): the law's distance from the target, the round's length
    and pass size, and what the rule does."""
    d = numbers(state)
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


SPEC = LabSpec(
    name="trees",
    defaults=DEFAULTS,
    controls={
        "family": toggle("shape", [(FAMILY_LABELS[f].split(" (")[0], f) for f in TREE_FAMILIES]),
        "nodes": int_slider("nodes", 1, LAB_MAX_NODES, width=300),
        "quality": float_slider("draft quality", 0.0, 1.0, 0.1, fmt=".1f", width=300),
        "rule": dropdown("rule", [(v, k) for k, v in RULE_LABELS.items()], width=340),
        "replacement": checkbox("children independent (with replacement)", width=340),
    },
    texts=texts,
    plot=partial(TreeLabPlot, numbers, target_law, LAB_MAX_NODES),
    groups=(("tree", ("family", "nodes")), ("draft and rule", ("quality", "rule", "replacement"))),
)


def trees_lab(**start) -> Lab:
    """The live lab (``start``: state values to begin from instead of the defaults)."""
    return Lab(SPEC, **start)


def show_trees(**start) -> None:
    """Display the lab and its static copy (notebook 08)."""
    show(trees_lab(**start))

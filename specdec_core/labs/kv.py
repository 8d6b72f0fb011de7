"""Notebook 06's KV-cache calculator on the lab protocol: presets, dtype, context, concurrency,
γ, a memory budget and whether weights count. Memory only: the speed side of "batch or
speculate" lives in the roofline lab (:mod:`specdec_core.labs.roofline`).

Everything shown is *derived* (integer arithmetic on published shapes) except α, an
*assumption* used only for the expected rollback.
"""

from __future__ import annotations

from functools import partial

from ..formatting import labelled
from ..kv import (
    DTYPE_BYTES,
    PRESETS,
    fmt_gib,
    gib_to_bytes,
    max_concurrent_sequences,
    rollback_positions,
    working_set,
)
from ..plots.kv import PART_STYLE, KvPlot
from .base import Lab, LabSpec, checkbox, dropdown, float_slider, int_slider, show

DEFAULTS = {
    "target": "Llama-3.1-8B",
    "draft": "Llama-3.2-1B",
    "dtype": "bf16",
    "context": 8192,
    "sequences": 16,
    "gamma": 4,
    "budget_gib": 40.0,
    "include_weights": True,
    "alpha": 0.7,
}


def _working_set(state):
    return working_set(
        state["target"],
        state["draft"],
        dtype=state["dtype"],
        context=state["context"],
        sequences=state["sequences"],
        gamma=state["gamma"],
        budget_bytes=gib_to_bytes(state["budget_gib"]),
        include_weights=state["include_weights"],
    )


def kv_texts(state: dict) -> dict:
    """The calculator's readouts (plain text, always the same keys)."""
    ws = _working_set(state)
    lines = [f"{PART_STYLE[p][0]}: {fmt_gib(v)}" for p, v in ws.parts().items()]
    parts = "\n".join(
        [f"working set of {_setup(state)}:"] + lines + [f"total at the peak: {fmt_gib(ws.total)}"]
    )
    verdict = (
        f"fits: {fmt_gib(ws.headroom)} to spare"
        if ws.fits
        else f"does not fit: {fmt_gib(-ws.headroom)} over the budget"
    )
    most = max_concurrent_sequences(
        state["target"],
        state["draft"],
        dtype=state["dtype"],
        context=state["context"],
        gamma=state["gamma"],
        budget_bytes=gib_to_bytes(state["budget_gib"]),
        include_weights=state["include_weights"],
    )
    fits = (
        f"{verdict} (budget {fmt_gib(ws.budget)}). Speculation adds "
        f"{fmt_gib(ws.speculation_extra)} over the target alone. At most {most} sequences fit "
        f"with γ = {state['gamma']}."
    )
    g = state["gamma"]
    rb = float(rollback_positions(state["alpha"], g))
    rollback = (
        f"Of the {g} provisional positions per sequence, {rb:.2f} are rolled back per round "
        f"on average at α = {state['alpha']:.2f} (iid), but all {g} are reserved at the peak."
    )
    notes = []
    t, d = PRESETS[state["target"]], PRESETS[state["draft"]]
    if g > 0 and t.vocab != d.vocab:
        notes.append(
            f"{state['draft']} and {state['target']} have different vocabularies "
            f"({d.vocab:,} vs {t.vocab:,} tokens): a real draft must share the target's "
            f"tokenizer."
        )
    if g > 0 and d.parameters >= t.parameters:
        notes.append("The draft is not smaller than the target: it would not save time.")
    return {
        "parts": labelled("derived", parts),
        "fits": labelled("derived", fits),
        "rollback": labelled("derived-from-assumed", rollback),
        "note": " ".join(notes),  # empty: the lab hides it
    }


def _setup(state) -> str:
    return (
        f"{state['target']} + {state['draft']}, {state['sequences']} × {state['context']:,} "
        f"tokens, γ = {state['gamma']}, {state['dtype']}"
    )


#: The figure's title is fixed (the setup is the first line of the "parts" readout): a title
#: that changed with every move cost a third of each frame in text rendering.
TITLE = "peak working set of one round against the memory budget"


SPEC = LabSpec(
    name="kv",
    defaults=DEFAULTS,
    controls={
        "target": dropdown("target model", list(PRESETS)),
        "draft": dropdown("draft model", list(PRESETS)),
        "dtype": dropdown("cache & weight dtype", list(DTYPE_BYTES)),
        "include_weights": checkbox("count the weights (same dtype)"),
        "context": int_slider("context (tokens)", 256, 131072, 256),
        "sequences": int_slider("concurrent sequences", 1, 256),
        "gamma": int_slider("γ (proposals)", 0, 16),
        "budget_gib": float_slider("memory budget (GiB)", 0.0, 320.0, 1.0, fmt=".0f"),
        "alpha": float_slider("α (assumed, iid)", 0.0, 1.0, 0.05),
    },
    groups=(
        ("models", ("target", "draft", "dtype", "include_weights")),
        ("load", ("context", "sequences", "gamma", "budget_gib", "alpha")),
    ),
    texts=kv_texts,
    plot=partial(KvPlot, _working_set, TITLE),
)


def kv_lab(**start) -> Lab:
    """The live calculator (``start``: other starting values, checked like the defaults)."""
    return Lab(SPEC, **start)


def show_kv(**start) -> None:
    """Display the calculator, its static copy at the defaults and the plain-text fallback."""
    show(kv_lab(**start) if start else SPEC)

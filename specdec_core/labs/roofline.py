"""Notebook 06's roofline lab: model, draft, hardware, dtype, batch S, context L, γ and α.

The texts come from :mod:`specdec_core.roofline` (pass times) and :mod:`specdec_core.timing`
(the speed-up, through :func:`specdec_core.roofline.speculation_speedup`); the figure from
:class:`specdec_core.plots.roofline.RooflinePlot`. Hardware numbers are datasheet values
(*assumed*), so every readout is *derived from assumed inputs*.
"""

from __future__ import annotations

from ..formatting import labelled
from ..kv import DTYPE_BYTES, PRESETS, ModelShape
from ..plots.roofline import RooflinePlot
from ..roofline import HARDWARE, Hardware, float_hardware, memory_bound_positions, pass_time, ridge_point
from ..serving import ServingPoint, serving_curve, serving_point
from .base import Lab, LabSpec, dropdown, float_slider, int_slider, show

DEFAULTS = {
    "target": "Llama-3.1-8B",
    "draft": "Llama-3.2-1B",
    "hardware": "NVIDIA A100 80GB SXM",
    "dtype": "bf16",
    "sequences": 1,
    "context": 2048,
    "gamma": 4,
    "alpha": 0.7,
}

MAX_GAMMA = RooflinePlot.MAX_GAMMA

#: The lab's memo of serving curves (the last 256): a learner moves back and forth between
#: settings. Keyed by the arguments' ``repr``, which tells ``Fraction(1, 2)`` from ``0.5``.
_CURVES: dict = {}


def lab_serving_curve(
    target: ModelShape | str, draft: ModelShape | str, hardware: Hardware | str, **kw: object
) -> tuple[ServingPoint, ...]:
    """:func:`specdec_core.serving.serving_curve`, memoized for the lab (most recently used last)."""
    key = repr((target, draft, hardware, sorted(kw.items())))
    curve = _CURVES.pop(key, None)
    if curve is None:
        curve = serving_curve(target, draft, hardware, **kw)
        if len(_CURVES) >= 256:
            _CURVES.pop(next(iter(_CURVES)))
    _CURVES[key] = curve
    return curve


def roofline_texts(state: dict) -> dict:
    """The lab's readouts for one state (plain text, always the same keys)."""
    hw = float_hardware(state["hardware"])
    kind = "derived-from-assumed" if hw.kind == "assumed" else "derived-from-measured"
    kw = {"dtype": state["dtype"], "sequences": state["sequences"], "context": state["context"]}
    g = state["gamma"]
    one = pass_time(state["target"], hw, positions=1, **kw)
    ver = pass_time(state["target"], hw, positions=g + 1, **kw)
    free = memory_bound_positions(state["target"], hw, max_positions=4096, **kw)
    ratio = float(ver.total_s / one.total_s)
    step = (
        f"One decode step (T = 1, S = {state['sequences']}, L = {state['context']:,}): "
        f"{float(one.total_ms):.3f} ms, {one.bound}-bound. Arithmetic intensity "
        f"{float(one.intensity):.1f} FLOP/byte; the ridge point of {hw.name} is "
        f"{float(ridge_point(hw)):.0f} FLOP/byte."
    )
    if free == 0:
        where = "Even one position is compute-bound here: every extra position costs its full share."
    elif free >= 4096:
        where = "Passes stay memory-bound beyond 4,096 positions: extra positions cost only their KV writes."
    else:
        where = (
            f"Passes stay memory-bound up to T = {free} positions: within that, extra positions "
            f"cost almost nothing."
        )
    verify = (
        f"Verification (T = γ + 1 = {g + 1}): {float(ver.total_ms):.3f} ms = {ratio:.2f} decode "
        f"steps, {ver.bound}-bound. {where}"
    )
    pts = lab_serving_curve(
        state["target"], state["draft"], hw, alpha=state["alpha"], max_gamma=MAX_GAMMA, **kw
    )
    sps = [float(p.speedup) for p in pts]
    best = max(range(len(sps)), key=lambda k: (sps[k], -k))
    here = (
        pts[g]
        if g <= MAX_GAMMA
        else serving_point(state["target"], state["draft"], hw, alpha=state["alpha"], gamma=g, **kw)
    )
    speed = (
        f"A draft step costs c = {float(here.draft_ratio):.3f} target steps (its own weights "
        f"and cache). E[K] = {float(here.expected_tokens):.2f} at α = {state['alpha']:.2f} "
        f"(iid) → speed-up {float(here.speedup):.2f}× over plain decoding at this batch; "
        f"the best γ ≤ {MAX_GAMMA} here is γ = {best} ({sps[best]:.2f}×)."
    )
    notes = []
    t, d = PRESETS[state["target"]], PRESETS[state["draft"]]
    if t.vocab != d.vocab:
        notes.append(
            f"{state['draft']} and {state['target']} have different vocabularies: a real "
            f"draft must share the target's tokenizer."
        )
    if d.parameters >= t.parameters:
        notes.append("The draft is not smaller than the target: it cannot save time.")
    return {
        "step": labelled(kind, step),
        "verify": labelled(kind, verify),
        "speedup": labelled(kind, speed),
        "note": " ".join(notes),  # empty: the lab hides it
    }


SPEC = LabSpec(
    name="roofline",
    defaults=DEFAULTS,
    controls={
        "target": dropdown("target", list(PRESETS)),
        "draft": dropdown("draft", list(PRESETS)),
        "hardware": dropdown("hardware (assumed)", list(HARDWARE)),
        "dtype": dropdown("dtype", list(DTYPE_BYTES)),
        "sequences": int_slider("batch S", 1, 256),
        "context": int_slider("context L", 0, 32768, 256),
        "gamma": int_slider("γ", 0, 16),
        "alpha": float_slider("α (iid, assumed)", 0.0, 1.0, 0.05),
    },
    groups=(
        ("models and hardware", ("target", "draft", "hardware", "dtype")),
        ("load and speculation", ("sequences", "context", "gamma", "alpha")),
    ),
    texts=roofline_texts,
    plot=RooflinePlot,
    note="Left: the time of one pass against the positions it scores, in decode steps. "
    "Right: the speed-up over plain decoding for each γ at this α.",
)


def roofline_lab(**start) -> Lab:
    """The live lab (``start``: other starting values, checked like the defaults)."""
    return Lab(SPEC, **start)


def show_roofline(**start) -> None:
    """Display the lab, its static copy at the defaults and the plain-text fallback."""
    show(roofline_lab(**start) if start else SPEC)

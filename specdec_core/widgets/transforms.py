"""Notebook 07's lab: pick a setup (the correct one or a classic mistake), a transform and its
parameter, and a context of the toy language; see the emitted law against the intended one."""
from __future__ import annotations

import html

import ipywidgets as w
from matplotlib.figure import Figure

from ..formatting import fmt
from .frames import figure_png, png_image
from ..plots.transforms import SETUP_TITLES, ComparisonView
from ..toy import SYMBOLS, toy_draft, toy_target
from ..transforms import SETUPS, make_transform, one_position_acceptance, setup_distributions, verified_output
from ..verify import total_variation



CONTEXTS = {"start": (), "after A": (0,), "after B": (1,), "after C": (2,), "after D": (3,)}
DEFAULTS = dict(setup="greedy_draft", transform="temperature", temperature=0.5, k=2, top_p=0.7,
                context="start")
#: p → 0 is the greedy limit; the slider's 0 stands for this smallest positive value.
MIN_TOP_P = 1e-9


def transform_for(kind, temperature, k, top_p):
    if kind == "temperature":
        return make_transform("temperature", float(temperature))
    if kind == "top_k":
        return make_transform("top_k", int(k))
    if kind == "top_p":
        return make_transform("top_p", max(float(top_p), MIN_TOP_P))
    return make_transform(kind)


def transform_text(setup, transform, temperature, k, top_p, context, target=None, draft=None):
    """(HTML report, (intended, output) or None) for one set of control values."""
    target = target or toy_target()
    draft = draft or toy_draft()
    try:
        prefix = CONTEXTS[context] if isinstance(context, str) else tuple(context)
        fn = transform_for(transform, temperature, k, top_p)
        p_used, q_rep, q_smp, intended = setup_distributions(setup, target(prefix), draft(prefix), fn)
        out = verified_output(p_used, q_rep, q_smp)
        tv = float(total_variation(out, intended))
        acc = float(one_position_acceptance(p_used, q_rep, q_smp))
        verdict = ("✅ emitted law = intended law" if tv < 1e-12 else f"❌ biased: TV = {tv:.4f}")
        text = (f"<p><b>{html.escape(SETUPS[setup])}</b></p>"
                f"<p>[derived] intended {fmt(intended)} · emitted {fmt(out)}<br>"
                f"p used {fmt(p_used)} · q reported {fmt(q_rep)} · q sampled {fmt(q_smp)}<br>"
                f"acceptance {acc:.4f} · TV(emitted, intended) = {tv:.4f} → <b>{verdict}</b></p>")
        return text, (intended, out, tv)
    except ValueError as exc:
        return f"<p class='specdec-error'>⚠️ {html.escape(str(exc))}</p>", None


def transform_lab(**overrides) -> w.VBox:
    """The lab widget. ``box.controls``, ``box.result`` and ``box.update`` are exposed for tests."""
    v = {**DEFAULTS, **overrides}
    style = {"description_width": "110px"}
    lay = w.Layout(width="420px")
    controls = {
        "setup": w.Dropdown(options=[(SETUP_TITLES[s], s) for s in SETUPS], value=v["setup"], description="setup", style=style, layout=lay),
        "transform": w.Dropdown(options=["temperature", "top_k", "top_p", "greedy", "none"], value=v["transform"], description="transform", style=style, layout=lay),
        "temperature": w.FloatLogSlider(value=v["temperature"], base=10, min=-2, max=2, step=0.05, description="temperature T", style=style, layout=lay),
        "k": w.IntSlider(value=v["k"], min=1, max=len(SYMBOLS), description="top-k k", style=style, layout=lay),
        "top_p": w.FloatSlider(value=v["top_p"], min=0.0, max=1.0, step=0.01, description="top-p p", style=style, layout=lay),
        "context": w.Dropdown(options=list(CONTEXTS), value=v["context"], description="context", style=style, layout=lay),
    }
    result = w.HTML()
    result.add_class("specdec-transform-result")
    fig = Figure(figsize=(5.0, 2.8))              # fixed layout: no solver on every redraw
    out = png_image(fig, dpi=80, css_class="specdec-figure")
    view = ComparisonView(fig.add_axes((0.12, 0.12, 0.85, 0.72)), SYMBOLS)
    target, draft = toy_target(), toy_draft()

    def update(_=None):
        vals = {k: c.value for k, c in controls.items()}
        text, res = transform_text(**vals, target=target, draft=draft)
        result.value = text
        if res is not None:
            intended, emitted, tv = res
            view.update(intended, emitted,
                            f"{SETUP_TITLES[vals['setup']]} ({vals['context']}), TV = {tv:.4f}")
            out.value = figure_png(fig, dpi=80)

    for c in controls.values():
        c.observe(update, names="value")
    update()
    box = w.VBox([w.HBox([w.VBox(list(controls.values())[:3]), w.VBox(list(controls.values())[3:])]),
                  result, out])
    box.add_class("specdec-transforms")
    box.controls, box.result, box.out, box.update, box.figure = controls, result, out, update, fig
    return box

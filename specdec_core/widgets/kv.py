"""Notebook 06's KV-cache calculator: presets, dtype, context, concurrency, γ and a budget.

The widget holds no math: it calls :mod:`specdec_core.kv` and redraws one reused figure into an
Output. Bad combinations never raise: the library's ValueError becomes a readable message.
"""
from __future__ import annotations

import html

import ipywidgets as w
from matplotlib.figure import Figure

from ..kv import (DTYPE_BYTES, PRESETS, best_configuration, compare_configurations, fmt_bytes,
                  fmt_gib, gib_to_bytes, max_concurrent_sequences, rollback_positions,
                  working_set)
from .frames import figure_png, png_image
from ..plots.kv import PART_STYLE, BreakdownView



DEFAULTS = dict(target="Llama-3.1-8B", draft="Llama-3.2-1B", dtype="bf16", context=8192,
                sequences=16, gamma=4, budget_gib=40.0, include_weights=True, alpha=0.7, draft_cost=0.1)


def kv_text(target, draft, *, dtype, context, sequences, gamma, budget_gib, include_weights=True,
            alpha=0.7, draft_cost=0.1) -> tuple[str, object]:
    """(HTML report, WorkingSet or None) for one set of control values."""
    try:
        budget = gib_to_bytes(budget_gib)
        ws = working_set(target, draft, dtype=dtype, context=context, sequences=sequences,
                         gamma=gamma, budget_bytes=budget, include_weights=include_weights)
        rows = "".join(
            f"<tr><td><span style='color:{PART_STYLE[p][1]}'>■</span> {html.escape(PART_STYLE[p][0])}</td><td style='text-align:right'>{fmt_bytes(v)}</td>"
            f"<td style='text-align:right'>{fmt_gib(v)}</td></tr>" for p, v in ws.parts().items())
        rows += (f"<tr><td><b>total at the peak</b></td><td style='text-align:right'><b>{fmt_bytes(ws.total)}</b></td>"
                 f"<td style='text-align:right'><b>{fmt_gib(ws.total)}</b></td></tr>")
        verdict = (f"✅ fits: {fmt_gib(ws.headroom)} to spare" if ws.fits
                   else f"❌ does not fit: {fmt_gib(-ws.headroom)} over the budget")
        most = max_concurrent_sequences(target, draft, dtype=dtype, context=context, gamma=gamma,
                                        budget_bytes=budget, include_weights=include_weights)
        cfgs = compare_configurations(target, draft, dtype=dtype, context=context, budget_bytes=budget,
                                      alpha=alpha, gammas=range(0, 9), include_weights=include_weights,
                                      draft_cost_ratio=draft_cost)
        best = best_configuration(cfgs)
        plain = cfgs[0]
        rb = float(rollback_positions(alpha, gamma))
        if best is None:
            cmp = "Nothing fits this budget, with or without a draft."
        else:
            cmp = (f"[assumed: iid α = {alpha:.2f}, a round costs 1 + {draft_cost:.2f}·γ target steps "
                   f"at any batch size] "
                   f"plain decoding fits {plain.sequences} sequences → {plain.tokens_per_step:.2f} "
                   f"tokens per step; the best γ ≤ 8 is γ = {best.gamma} with {best.sequences} "
                   f"sequences → {best.tokens_per_step:.2f} tokens per step.")
        notes = []
        t, d = PRESETS[target], PRESETS[draft]
        if gamma > 0 and t.vocab != d.vocab:
            notes.append(f"Note: {target} and {draft} have different vocabularies ({t.vocab:,} vs "
                         f"{d.vocab:,} tokens); a real draft must share the target's tokenizer.")
        if gamma > 0 and d.parameters >= t.parameters:
            notes.append("Note: the draft is not smaller than the target; it would not save time.")
        note = "".join(f"<p><i>{html.escape(n)}</i></p>" for n in notes)
        text = (f"<table class='specdec-kv-table'><tr><th>part</th><th>bytes</th><th>GiB</th></tr>{rows}</table>"
                f"<p><b>{verdict}</b> (budget {fmt_bytes(budget)} = {fmt_gib(budget)}). "
                f"Speculation adds {fmt_gib(ws.speculation_extra)} over the target alone. "
                f"At most <b>{most}</b> sequences fit with γ = {gamma}.</p>"
                f"<p>[derived, assuming iid α = {alpha:.2f}] of the {gamma} provisional positions per "
                f"sequence, {rb:.2f} are rolled back per round on average — but all {gamma} are "
                f"reserved at the peak.</p><p>{html.escape(cmp)}</p>{note}")
        return text, ws
    except ValueError as exc:
        return f"<p class='specdec-error'>⚠️ {html.escape(str(exc))}</p>", None


def kv_calculator(**overrides) -> w.VBox:
    """The calculator. ``box.controls`` (dict of widgets), ``box.result`` (HTML), ``box.update``."""
    v = {**DEFAULTS, **overrides}
    style = {"description_width": "150px"}
    lay = w.Layout(width="460px")
    controls = {
        "target": w.Dropdown(options=list(PRESETS), value=v["target"], description="target model", style=style, layout=lay),
        "draft": w.Dropdown(options=list(PRESETS), value=v["draft"], description="draft model", style=style, layout=lay),
        "dtype": w.Dropdown(options=list(DTYPE_BYTES), value=v["dtype"], description="cache & weight dtype", style=style, layout=lay),
        "context": w.IntSlider(value=v["context"], min=256, max=131072, step=256, description="context (tokens)", style=style, layout=lay),
        "sequences": w.IntSlider(value=v["sequences"], min=1, max=256, description="concurrent sequences", style=style, layout=lay),
        "gamma": w.IntSlider(value=v["gamma"], min=0, max=16, description="γ (proposals)", style=style, layout=lay),
        "budget_gib": w.FloatSlider(value=v["budget_gib"], min=0.0, max=320.0, step=1.0, description="memory budget (GiB)", style=style, layout=lay),
        "include_weights": w.Checkbox(value=v["include_weights"], description="include weights (assumed stored in the same dtype)", style=style),
        "alpha": w.FloatSlider(value=v["alpha"], min=0.0, max=1.0, step=0.05, description="α (assumed, iid)", style=style, layout=lay),
        "draft_cost": w.FloatSlider(value=v["draft_cost"], min=0.0, max=1.0, step=0.01, description="draft cost c (assumed)", style=style, layout=lay),
    }
    result = w.HTML()
    result.add_class("specdec-kv-result")
    fig = Figure(figsize=(6.4, 1.6))              # fixed layout: no solver on every redraw
    out = png_image(fig, dpi=80, css_class="specdec-figure")
    view = BreakdownView(fig.add_axes((0.03, 0.3, 0.94, 0.55)), legend=False)  # legend: the table

    def update(_=None):
        vals = {k: c.value for k, c in controls.items()}
        text, ws = kv_text(**vals)
        result.value = text
        if ws is not None:
            view.update(ws, f"{vals['target']} + {vals['draft']}, {vals['sequences']} × "
                                   f"{vals['context']:,} tokens, γ = {vals['gamma']}")
            out.value = figure_png(fig, dpi=80)

    for c in controls.values():
        c.observe(update, names="value")
    update()
    box = w.VBox([w.HBox([w.VBox(list(controls.values())[:5]), w.VBox(list(controls.values())[5:])]),
                  result, out])
    box.add_class("specdec-kv")
    box.controls, box.result, box.out, box.update, box.figure = controls, result, out, update, fig
    return box

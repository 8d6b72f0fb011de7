"""The capstone's cost of scoring T positions: both weight layouts, measured, beside the two
predictions made before the run (notebooks 06 and 09; ``benchmarks/bench_passcost.py``)."""

from __future__ import annotations

import numpy as np

from .frames import lab_figure
from .style import COLORS, tag_kind


def _steps(curve, one):
    Ts = sorted(curve)
    return Ts, np.array([curve[T] for T in Ts]) / one


def passcost_figure(products: dict, forward: dict, predicted: dict, *, title: str = ""):
    """Cost in decode steps (÷ the one-row product's time) against T, log axes.

    ``products``: {"product": {T: ms}, "x@w": {T: ms}} measured weight products (weights stored
    (out, in) through ``model.product``, and (in, out) with one BLAS call per product, ``x @ w``);
    ``forward``: {T: ms} the whole measured pass; ``predicted``: {T: {"roofline_ms",
    "serial_ms"}} or {T: PassPrediction} made before the run. Each prediction is shown ÷ its own T = 1 value."""
    fig = lab_figure(740, 300)
    ax = fig.add_axes((0.08, 0.15, 0.55, 0.75))
    one = products["product"][1]
    for label, curve, style, color in (
        ("weights read once (product), measured", products["product"], "-o", COLORS["accepted"]),
        ("one BLAS call per product (x @ w), measured", products.get("x@w"), "-s", COLORS["rejected"]),
        ("whole forward pass, measured", forward, ":^", COLORS["ink"]),
    ):
        if not curve:
            continue
        base = one if curve is not forward else forward[1]
        Ts, y = _steps(curve, base)
        ax.plot(Ts, y, style, ms=3.5, lw=1.6, color=color, label=label)
    for key, label, style in (
        ("roofline_ms", "predicted: roofline, max(memory, compute)", "--"),
        ("serial_ms", "predicted: memory + compute, no overlap", "-."),
    ):
        curve = {T: (v[key] if isinstance(v, dict) else getattr(v, key)) for T, v in predicted.items()}
        Ts, y = _steps(curve, curve[1])
        ax.plot(
            Ts,
            y,
            style,
            lw=1.6,
            color=COLORS["target"] if key == "roofline_ms" else COLORS["draft"],
            label=label,
        )
    ax.set_xscale("log", base=2)
    ticks = [T for T in sorted(predicted) if T & (T - 1) == 0]  # powers of two
    ax.set_xticks(ticks, [str(T) for T in ticks])
    ax.minorticks_off()
    ax.set_xlabel("positions scored in one call, T (log scale)")
    ax.set_ylabel("cost in decode steps (one row → 1)")
    ax.axhline(1, color=COLORS["discarded"], lw=0.8)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    tag_kind(ax, "measured", "upper left")
    return fig

"""Colour-blind-safe palette (Okabe & Ito) with one colour per role, and the kind tag.

Every figure states how its numbers were obtained — one of the kinds of
:data:`specdec_core.formatting.KINDS` (derived, assumed, simulated, measured, reported, derived
from assumed / measured inputs) — with :func:`tag_kind`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

COLORS = {
    "target": "#0072B2",  # p — blue
    "draft": "#E69F00",  # q — orange
    "accepted": "#009E73",  # min(p, q), accepted proposals — bluish green
    "rejected": "#D55E00",  # rejected proposal, wrong rules — vermillion
    "residual": "#CC79A7",  # residual / correction — reddish purple
    "bonus": "#56B4E9",  # bonus token — sky blue
    "discarded": "#999999",  # discarded branch — grey
    "highlight": "#F0E442",  # yellow
    "ink": "#000000",
}

#: One tag colour per kind of :data:`specdec_core.formatting.KINDS` (same keys; a test checks).
KIND_COLORS = {
    "derived": "#009E73",
    "assumed": "#E69F00",
    "simulated": "#CC79A7",
    "measured": "#0072B2",
    "reported": "#000000",
    "derived-from-assumed": "#D55E00",
    "derived-from-measured": "#004C80",
    "derived-from-simulated": "#8A3F74",  # the simulated purple, darker (white text stays legible)
}

#: Hatches to tell series apart without colour.
HATCHES = {"target": "", "draft": "//", "accepted": "..", "residual": "\\\\", "rejected": "xx"}


def new_axes(ncols: int = 1, *, width: float = 6.4, height: float = 3.2, nrows: int = 1, **kw):
    """A figure with ``nrows`` × ``ncols`` axes, constrained layout, readable font sizes."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained", **kw)
    return fig, axes


def tag_kind(ax, kind: str, where: str = "upper right"):
    """Write how the figure's values were obtained in a corner of ``ax``: the words of ``kind``
    (a key of :data:`specdec_core.formatting.KINDS`, e.g. ``"simulated"`` or
    ``"derived-from-assumed"`` → 'derived from assumed inputs') — the one label rule."""
    from ..formatting import kind_text

    kind_text(kind)  # refuses a kind outside KINDS
    x, ha = (0.99, "right") if "right" in where else (0.01, "left")
    y, va = (0.98, "top") if "upper" in where else (0.02, "bottom")
    ax.text(
        x,
        y,
        kind_text(kind),
        transform=ax.transAxes,
        ha=ha,
        va=va,
        fontsize=8,
        style="italic",
        color="white",
        bbox=dict(boxstyle="round,pad=0.2", fc=KIND_COLORS[kind], ec="none"),
    )
    return ax

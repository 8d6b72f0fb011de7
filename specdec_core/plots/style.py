"""Colour-blind-safe palette (Okabe & Ito) with one colour per role, and the kind tag.

Every figure states how its numbers were obtained — *derived* (exact math), *assumed* (a
declared budget) or *measured* (timed on this machine) — with :func:`tag_kind`.
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

KIND_COLORS = {
    "derived": "#009E73",
    "assumed": "#E69F00",
    "derived-from-assumed": "#D55E00",
    "measured": "#0072B2",
}

#: Hatches to tell series apart without colour.
HATCHES = {"target": "", "draft": "//", "accepted": "..", "residual": "\\\\", "rejected": "xx"}


def new_axes(ncols: int = 1, *, width: float = 6.4, height: float = 3.2, **kw):
    """A figure with ``ncols`` axes, constrained layout, readable font sizes."""
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), layout="constrained", **kw)
    return fig, axes


def tag_kind(ax, kind: str, where: str = "upper right"):
    """Write how the figure's values were obtained in a corner of ``ax``: 'derived', 'assumed',
    'derived from assumed inputs' (kind ``"derived-from-assumed"``) or 'measured' — the label
    rule of :mod:`specdec_core.formatting`."""
    from ..formatting import kind_text

    if kind not in KIND_COLORS:
        raise ValueError(f"kind must be one of {tuple(KIND_COLORS)}, got {kind!r}")
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

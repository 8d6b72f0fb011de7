"""Notebook 00's "one picture": a round of speculative decoding, drawn as boxes.

Two rounds with γ = 4 are shown. Left: the third proposal is rejected, replaced by a
correction drawn from the residual, and the fourth is discarded. Right: all four are accepted
and the target's extra position gives a bonus token. A schematic: it carries no numbers.
"""

from __future__ import annotations

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from .style import COLORS, new_axes

_BOX_W, _BOX_H, _GAP = 0.9, 0.62, 0.18


def _box(ax, x, y, text, face, *, ink="black", dashed=False, alpha=1.0):
    ax.add_patch(
        FancyBboxPatch(
            (x, y),
            _BOX_W,
            _BOX_H,
            boxstyle="round,pad=0.02,rounding_size=0.08",
            fc=face,
            ec="black",
            lw=1.0,
            ls="--" if dashed else "-",
            alpha=alpha,
        )
    )
    ax.text(x + _BOX_W / 2, y + _BOX_H / 2, text, ha="center", va="center", fontsize=9, color=ink)


def _arrow(ax, x0, y0, x1, y1):
    ax.add_patch(
        FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=10, lw=1.0, color="black")
    )


def _round(ax, x0, verdicts, title):
    """One round at horizontal offset x0. ``verdicts``: 'ok' / 'no' / 'skip' per proposal."""
    gamma = len(verdicts)
    step = _BOX_W + _GAP
    rows = {"draft": 3.0, "target": 1.8, "output": 0.6}
    ax.text(x0, 4.05, title, fontsize=10, weight="bold", va="bottom")
    _box(ax, x0, rows["draft"], "prefix", "#eeeeee")
    for i in range(gamma):
        _box(ax, x0 + (i + 1) * step, rows["draft"], f"x{i + 1}", COLORS["draft"])
    # the target scores gamma + 1 positions in one pass
    for i, v in enumerate(verdicts):
        x = x0 + (i + 1) * step
        face = {"ok": COLORS["accepted"], "no": COLORS["rejected"], "skip": COLORS["discarded"]}[v]
        mark = {"ok": "✓ keep", "no": "✗ reject", "skip": "discard"}[v]
        _box(ax, x, rows["target"], mark, face, ink="white", dashed=(v == "skip"))
        _arrow(ax, x + _BOX_W / 2, rows["draft"] - 0.02, x + _BOX_W / 2, rows["target"] + _BOX_H + 0.04)
    extra_x = x0 + (gamma + 1) * step
    all_ok = all(v == "ok" for v in verdicts)
    _box(
        ax,
        extra_x,
        rows["target"],
        "extra\nposition" if all_ok else "unused",
        COLORS["bonus"] if all_ok else "#eeeeee",
        dashed=not all_ok,
    )
    ax.text(x0 + step, rows["target"] - 0.22, "target: one pass scores γ + 1 positions", fontsize=8, va="top")
    # output row
    for i, v in enumerate(verdicts):
        x = x0 + (i + 1) * step
        if v == "ok":
            _box(ax, x, rows["output"], f"x{i + 1}", COLORS["accepted"], ink="white")
        elif v == "no":
            _box(ax, x, rows["output"], "c ~ r", COLORS["residual"], ink="white")
            ax.text(
                x + _BOX_W / 2,
                rows["output"] - 0.08,
                "correction\nfrom residual",
                fontsize=7,
                ha="center",
                va="top",
            )
            break
    if all_ok:
        _box(ax, extra_x, rows["output"], "b ~ p", COLORS["bonus"])
        ax.text(extra_x + _BOX_W / 2, rows["output"] - 0.08, "bonus", fontsize=7, ha="center", va="top")
    return extra_x + _BOX_W


def overview_figure():
    """The one-picture diagram of notebook 00 (a schematic, no numbers)."""
    fig, ax = new_axes(width=11.0, height=4.0)
    for y, label in ((3.0, "draft\nproposes"), (1.8, "target\nverifies"), (0.6, "output")):
        ax.text(-0.25, y + _BOX_H / 2, label, ha="right", va="center", fontsize=9, style="italic")
    right = _round(ax, 0.0, ["ok", "ok", "no", "skip"], "A round with a rejection (γ = 4): 3 tokens out")
    _round(ax, right + 0.9, ["ok", "ok", "ok", "ok"], "A round with no rejection (γ = 4): 5 tokens out")
    ax.set_xlim(-1.5, 2 * right + 1.0)
    ax.set_ylim(-0.1, 4.5)
    ax.set_axis_off()
    ax.text(
        2 * right + 1.0,
        -0.1,
        "schematic: no numbers",
        fontsize=7,
        style="italic",
        ha="right",
        va="bottom",
        color=COLORS["discarded"],
    )
    return fig

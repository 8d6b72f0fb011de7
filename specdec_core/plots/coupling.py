"""Figure for notebook 01 §6: a coupling of q and p as a grid, the diagonal (accepted) outlined.

Rows are the proposal X ~ q, columns the output Y ~ p; each cell shows π(x, y) as an exact
fraction, the margins show q (row sums) and p (column sums), and the diagonal total P(X = Y).
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from ..formatting import fmt
from .acceptance import symbol_labels
from .style import COLORS, new_axes, tag_kind


def coupling_figure(pi, p, q, symbols=None, *, title=None, kind="derived"):
    """Heat grid of the coupling ``pi`` (V, V) of q (rows) and p (columns), cell values written
    exactly, diagonal cells outlined in the accepted colour; tagged ``kind``."""
    arr = np.asarray(pi)
    V = arr.shape[0]
    labels = symbol_labels(V, symbols)
    vals = arr.astype(np.float64)
    fig, ax = new_axes(width=4.6, height=3.6)
    ax.imshow(vals, cmap="Blues", vmin=0, vmax=max(float(vals.max()), 1e-12) * 1.4)
    for x in range(V):
        for y in range(V):
            ax.text(y, x, fmt(arr[x, y]), ha="center", va="center", fontsize=9)
        ax.add_patch(Rectangle((x - 0.5, x - 0.5), 1, 1, fill=False, lw=2.5, ec=COLORS["accepted"]))
    ax.set_xticks(range(V), [f"{s}\np = {fmt(v)}" for s, v in zip(labels, p)], fontsize=8)
    ax.set_yticks(range(V), [f"{s}  q = {fmt(v)}" for s, v in zip(labels, q)], fontsize=8)
    ax.set_xlabel("output Y (column sums p)")
    ax.set_ylabel("proposal X (row sums q)")
    diag = sum((arr[x, x] for x in range(V)), 0)
    ax.set_title(title or f"coupling π(x, y); outlined diagonal P(X = Y) = {fmt(diag)}", fontsize=9)
    tag_kind(ax, kind, where="lower right")
    return fig

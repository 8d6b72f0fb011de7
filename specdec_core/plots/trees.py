"""Figures of notebook 08: several candidates, lossy rules, tree budgets, the tree attention mask,
and the trees lab's frame. Every figure is tagged derived / measured (see :func:`tag_kind`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..toy import SYMBOLS
from ..trees import FAMILY_LABELS, tree_attention_mask
from .frames import LabPlot
from .style import COLORS, HATCHES, new_axes, tag_kind

_FAMILY_STYLE = {
    "chain": (COLORS["target"], "o", "-"),
    "wide": (COLORS["draft"], "s", "--"),
    "deep": (COLORS["accepted"], "^", "-."),
}


def multi_k_figure(series, *, title="P(one of k candidates is accepted)"):
    """Lines of acceptance probability against k. ``series``: (label, ks, values, colour, linestyle)."""
    fig, ax = new_axes(width=6.4, height=3.0)
    for label, ks, vals, colour, ls in series:
        ax.plot(ks, [float(v) for v in vals], marker="o", color=colour, ls=ls, label=label)
    ax.set_xlabel("k, candidates at the position")
    ax.set_ylabel("P(accept one)")
    ax.set_ylim(0, 1.05)
    ax.set_xticks(sorted({k for s in series for k in s[1]}))
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    tag_kind(ax, "derived", "upper left")
    return fig


def law_bars(ax, names, target, laws: dict):
    """Grouped bars: the target law, then each rule's emitted law (``laws``: label -> vector)."""
    n = 1 + len(laws)
    width = 0.8 / n
    x = np.arange(len(names))
    colours = [COLORS["rejected"], COLORS["residual"], COLORS["draft"], COLORS["bonus"]]
    hatches = [HATCHES["rejected"], HATCHES["residual"], HATCHES["draft"], ""]
    ax.bar(x - 0.4 + width / 2, [float(v) for v in target], width, color=COLORS["target"], label="target p")
    for j, (label, law) in enumerate(laws.items()):
        ax.bar(
            x - 0.4 + width * (j + 1.5),
            [float(v) for v in law],
            width,
            color=colours[j % 4],
            hatch=hatches[j % 4],
            edgecolor="white",
            label=label,
        )
    ax.set_xticks(x)
    ax.set_xticklabels(names)
    ax.set_ylabel("probability")
    return ax


def lossy_law_figure(names, target, laws: dict, title: str):
    fig, ax = new_axes(width=6.4, height=3.0)
    law_bars(ax, names, target, laws)
    ax.set_xlabel("emitted token")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    tag_kind(ax, "derived", "upper left")
    return fig


def tree_budget_figure(nodes, curves: dict, cost_ms: dict | None = None, cost_label: str = ""):
    """Left: E[emitted tokens per round] against the node budget, per tree family (derived).
    Right (when ``cost_ms`` — positions -> ms per pass, or (fastest, middle, slowest) ms, measured —
    is given): emitted tokens per second of target time, E[emitted] / t(nodes + 1) with t the
    middle value (derived from measured inputs)."""
    if cost_ms:
        cost_ms = {
            n: (float(v[len(v) // 2]) if isinstance(v, (tuple, list)) else float(v))
            for n, v in cost_ms.items()
        }
    fig, axes = new_axes(2 if cost_ms else 1, width=7.6 if cost_ms else 5.0, height=3.2)
    ax = axes[0] if cost_ms else axes
    for fam, vals in curves.items():
        c, m, ls = _FAMILY_STYLE[fam]
        ax.plot(nodes, [1 + float(v) for v in vals], color=c, marker=m, ls=ls, label=FAMILY_LABELS[fam])
    ax.set_xlabel("nodes in the tree (draft tokens)")
    ax.set_ylabel("E[tokens emitted per round]")
    ax.set_title("Longer rounds per node budget", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    tag_kind(ax, "derived", "lower right")
    if cost_ms:
        ax2 = axes[1]
        for fam, vals in curves.items():
            c, m, ls = _FAMILY_STYLE[fam]
            ok = [(n, v) for n, v in zip(nodes, vals) if (n + 1) in cost_ms]
            ax2.plot(
                [n for n, _ in ok],
                [(1 + float(v)) / cost_ms[n + 1] * 1000 for n, v in ok],
                color=c,
                marker=m,
                ls=ls,
                label=FAMILY_LABELS[fam],
            )
        if 1 in cost_ms:
            ax2.axhline(1000 / cost_ms[1], color=COLORS["discarded"], ls=":", label="plain decoding")
        ax2.set_xlabel("nodes in the tree (draft tokens)")
        ax2.set_ylabel("tokens per second of target time")
        ax2.set_title(cost_label or "Per second, with the measured pass cost", fontsize=9)
        ax2.legend(fontsize=7, loc="lower right")
        tag_kind(ax2, "measured", "upper left")
        ax2.text(
            0.01, 0.86, "derived from measured inputs", transform=ax2.transAxes, fontsize=7, style="italic"
        )
    return fig


def mask_figure(tree, prefix_len: int = 0, labels=None, title: str = "Tree attention mask"):
    """The mask as a grid: row = the node being scored, column = what it may look at."""
    m = tree_attention_mask(tree, prefix_len)
    n, cols = m.shape
    fig, ax = new_axes(width=min(6.4, 1.6 + 0.42 * cols), height=min(4.6, 1.4 + 0.42 * n))
    ax.imshow(m, cmap="Blues", vmin=-0.3, vmax=1.2, aspect="equal")
    names = list(labels) if labels is not None else [f"n{i}" for i in range(n)]
    ax.set_xticks(range(cols))
    ax.set_xticklabels([f"p{j}" for j in range(prefix_len)] + names, fontsize=8)
    ax.set_yticks(range(n))
    ax.set_yticklabels(names, fontsize=8)
    ax.set_xlabel("may attend to (prefix, then tree nodes)")
    ax.set_ylabel("node being scored")
    for i in range(n):
        for j in range(cols):
            ax.text(
                j,
                i,
                "✓" if m[i, j] else "·",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if m[i, j] else COLORS["discarded"],
            )
    ax.set_title(title, fontsize=10)
    tag_kind(ax, "derived", "lower left")
    return fig


# ------------------------------------------------------------------ the trees lab's frame
_PAIRS = [(a, b) for a in range(len(SYMBOLS)) for b in range(len(SYMBOLS))]
_LAW_YMAX = 0.5


class TreeLabPlot(LabPlot):
    """The trees lab's frame. Left: the law of the first two tokens under the chosen rule next to
    the target's, over all 16 pairs (fixed axes). Right: E[accepted tokens] against the node budget
    for the chosen family, rule and draft, the current budget circled. The target's bars are the
    same in every state (static); the emitted bars are one collection and the curve two lines, the
    only artists redrawn per frame.

    The lab gives ``read(state)`` (its numbers: ``law``, ``curve``, ``expected_accepted``) and
    ``target_law()`` ({two tokens: probability}); the curve has ``max_nodes`` points."""

    size = (740, 300)

    def __init__(
        self,
        read: Callable[[Mapping], dict],
        target_law: Callable[[], dict],
        max_nodes: int,
        *,
        blit: bool = True,
    ):
        from matplotlib.collections import PolyCollection
        from matplotlib.patches import Patch

        super().__init__(blit=blit)
        self.read = read
        target = target_law()
        ax = self.ax = self.fig.add_axes([0.07, 0.2, 0.55, 0.66])
        x = np.arange(len(_PAIRS))
        ax.bar(
            x - 0.2, [min(float(target.get(k, 0.0)), _LAW_YMAX) for k in _PAIRS], 0.4, color=COLORS["target"]
        )
        self.law_bars = PolyCollection(
            [], facecolors=COLORS["rejected"], edgecolors="white", hatch=HATCHES["rejected"], linewidths=0.5
        )
        ax.add_collection(self.law_bars)
        ax.set_xlim(-0.6, len(_PAIRS) - 0.4)
        ax.set_xticks(x)
        ax.set_xticklabels(["".join(SYMBOLS[t] for t in k) for k in _PAIRS], fontsize=7)
        ax.set_xlabel("first two tokens")
        ax.set_ylabel("probability")
        ax.set_ylim(0, _LAW_YMAX)
        emitted = Patch(
            facecolor=COLORS["rejected"], edgecolor="white", hatch=HATCHES["rejected"], label="emitted"
        )
        ax.legend(
            handles=[Patch(color=COLORS["target"], label="target"), emitted], fontsize=7, loc="upper right"
        )
        ax.set_title("emitted law of two tokens vs the target's", fontsize=9)
        tag_kind(ax, "derived", "upper left")
        ax2 = self.ax2 = self.fig.add_axes([0.71, 0.2, 0.27, 0.66])
        xs = list(range(1, max_nodes + 1))
        (self.curve,) = ax2.plot(xs, np.zeros(len(xs)), marker="o", ms=4)
        (self.mark,) = ax2.plot([1], [0], marker="o", ms=10, mfc="none", mec=COLORS["ink"], ls="none")
        ax2.set_xlabel("nodes")
        ax2.set_ylabel("E[accepted tokens]")
        ax2.set_ylim(0, max_nodes * 0.75)
        ax2.set_xticks(xs)
        ax2.set_title("against the node budget", fontsize=9)
        tag_kind(ax2, "derived", "upper left")
        self.blit([self.law_bars, self.curve, self.mark])

    def update(self, state: Mapping) -> None:
        d = self.read(state)
        verts = []
        for i, k in enumerate(_PAIRS):
            h = min(float(d["law"].get(k, 0.0)), _LAW_YMAX)
            if h > 0:
                verts.append([(i, 0), (i, h), (i + 0.4, h), (i + 0.4, 0)])
        self.law_bars.set_verts(verts)
        c, m, ls = _FAMILY_STYLE[state["family"]]
        self.curve.set_ydata(d["curve"])
        self.curve.set(color=c, marker=m, ls=ls)
        self.mark.set_data([state["nodes"]], [d["expected_accepted"]])

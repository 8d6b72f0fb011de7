"""Figures for notebook 03: the toy language's tables, one replayed round, and sequence laws.

:func:`round_figure` draws the *same* replay steps the stepper widget shows
(:func:`specdec_core.replay.replay_steps`), so the static figure and the widget cannot disagree.
"""

from __future__ import annotations

from fractions import Fraction

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyBboxPatch

from ..formatting import fmt
from ..replay import replay_steps
from ..toy import SYMBOLS
from .style import COLORS, HATCHES, tag_kind

STATUS_STYLE = {  # status -> (face colour, label, line style)
    "proposed": (COLORS["draft"], "proposed", "-"),
    "accepted": (COLORS["accepted"], "accepted ✓", "-"),
    "rejected": (COLORS["rejected"], "rejected ✗", "-"),
    "discarded": (COLORS["discarded"], "discarded", "--"),
    "correction": (COLORS["residual"], "correction", "-"),
    "bonus": (COLORS["bonus"], "bonus ★", "-"),
}


def _sub(i):
    return str(i).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def short_caption(step, symbols=SYMBOLS) -> str:
    """A one-line caption of a replay step for figures."""
    g = len(step.proposals)
    nm = (lambda t: symbols[t]) if symbols else str
    if step.kind == "propose":
        return f"draft proposes {g} token{'s' * (g != 1)}" if g else "draft proposes nothing"
    if step.kind == "score":
        return f"target scores {g + 1} positions together"
    if step.kind in ("accept", "reject"):
        rel = "<" if step.kind == "accept" else "≥"
        return (
            f"check {step.position + 1}: u = {step.u:.3f} {rel} min(1, p/q) = {step.ratio:.3f}"
            f"  → {'accept' if step.kind == 'accept' else 'reject'} {nm(step.token)}"
        )
    if step.kind == "discard":
        return "later proposals discarded, never checked"
    if step.kind == "correct":
        return f"correction {nm(step.final)} ~ residual at that prefix"
    return f"bonus {nm(step.final)} ~ p{_sub(g + 1)}"


def _draw_chip(ax, x, y, text, status, w=0.84, h=0.62):
    face, label, ls = STATUS_STYLE[status]
    lw = 2.2 if status == "rejected" else 1.0
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0.02,rounding_size=0.12",
            fc=face,
            ec="black",
            lw=lw,
            ls=ls,
        )
    )
    ax.text(x, y + 0.1, text, ha="center", va="center", fontsize=10, weight="bold")
    ax.text(x, y - 0.17, label, ha="center", va="center", fontsize=7)


def round_figure(records, round_index: int = 0, *, symbols=SYMBOLS, correction: str = "residual"):
    """One full round, step by step (rows), with the correction or bonus row on the right.

    Each row shows the proposal chips after that step, coloured *and* labelled accepted /
    rejected / discarded, and what the step did (u against min(1, p/q) for checks)."""
    steps = replay_steps(records, correction=correction)
    rows = [s for s in steps if s.round == round_index and s.kind != "start"]
    if not rows:
        raise ValueError(f"round_index {round_index} is not a recorded round")
    g = len(rows[0].proposals)
    last = rows[-1]
    fig, (ax, bx) = plt.subplots(
        1,
        2,
        figsize=(11.5, 0.62 * len(rows) + 1.3),
        layout="constrained",
        gridspec_kw={"width_ratios": [3.2, 1.2]},
    )
    for r, s in enumerate(rows):
        y = -r
        ax.text(-0.7, y, f"{r + 1}. {s.kind}", ha="right", va="center", fontsize=9)
        for i, (x, st) in enumerate(zip(s.proposals, s.statuses)):
            _draw_chip(ax, i, y, f"x{_sub(i + 1)}={symbols[x]}", st)
        if s.final is not None:
            _draw_chip(ax, g + 0.2, y, symbols[s.final], s.final_kind)
        ax.text(g + 0.9, y, short_caption(s, symbols), ha="left", va="center", fontsize=8.5)
    ax.set_xlim(-2.3, g + 6.3)
    ax.set_ylim(-len(rows) + 0.4, 0.6)
    ax.axis("off")
    prefix = " ".join(symbols[t] for t in last.prefix) or "(empty)"
    ax.set_title(
        f"Round {round_index + 1}: prefix {prefix}, γ = {g}; emitted "
        f"{' '.join(symbols[t] for t in (last.proposals[: last.position] if last.kind == 'correct' else last.proposals))}"
        f" + {symbols[last.final]}",
        fontsize=10,
        loc="left",
    )
    _row_panel(bx, last, symbols)
    tag_kind(ax, "simulated")  # the steps: seeded draws u and their outcomes
    tag_kind(bx, "derived")  # the rows: exact table entries (the drawn token is marked "drawn")
    return fig


def _row_panel(ax, step, symbols):
    V = len(step.row) if step.row is not None else len(symbols)
    x = np.arange(V)
    if step.row is None:
        ax.text(0.5, 0.5, "distributions not recorded", ha="center", va="center", transform=ax.transAxes)
    elif step.kind == "bonus":
        ax.bar(
            x,
            step.row,
            color=COLORS["bonus"],
            ec="black",
            label=f"p{_sub(len(step.proposals) + 1)} (bonus row)",
        )
    else:
        wdt = 0.27
        ax.bar(x - wdt, step.p_row, wdt, color=COLORS["target"], ec="black", label="p target")
        ax.bar(x, step.q_row, wdt, color=COLORS["draft"], ec="black", hatch=HATCHES["draft"], label="q draft")
        ax.bar(
            x + wdt,
            step.row,
            wdt,
            color=COLORS["residual"],
            ec="black",
            hatch=HATCHES["residual"],
            label="residual",
        )
    if step.row is not None:
        ax.annotate(
            "drawn (seeded)",
            (step.final, max(step.row[step.final], 0.02)),
            xytext=(0, 14),
            textcoords="offset points",
            ha="center",
            fontsize=8,
            arrowprops=dict(arrowstyle="->"),
        )
    ax.set_xticks(x, [symbols[t] for t in range(V)])
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("probability")
    ax.set_title("row the last token came from", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")


def toy_tables_figure(target, draft, symbols=SYMBOLS):
    """Heatmaps of the toy target p and draft q (one row per previous token, exact fractions
    written in the cells, zeros hatched) and α = Σ min(p, q) per previous token."""
    keys = list(target.table)
    names = ["start" if k is None else f"after {symbols[k]}" for k in keys]
    P = [[target.table[k][t] for t in range(len(symbols))] for k in keys]
    Q = [[draft.table[k][t] for t in range(len(symbols))] for k in keys]
    alpha = [sum(min(p, q) for p, q in zip(pr, qr)) for pr, qr in zip(P, Q)]
    fig, axes = plt.subplots(
        1, 3, figsize=(11, 3.3), layout="constrained", gridspec_kw={"width_ratios": [1, 1, 0.9]}
    )
    for ax, M, title, cmap in (
        (axes[0], P, "target p(next | previous)", "Blues"),
        (axes[1], Q, "draft q(next | previous)", "Oranges"),
    ):
        A = np.array([[float(v) for v in r] for r in M])
        ax.imshow(A, cmap=cmap, vmin=0, vmax=1, aspect="auto")
        for i, r in enumerate(M):
            for j, v in enumerate(r):
                ax.text(
                    j,
                    i,
                    fmt(Fraction(v)),
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if v > Fraction(1, 2) else "black",
                )
                if v == 0:
                    ax.add_patch(
                        plt.Rectangle(
                            (j - 0.5, i - 0.5), 1, 1, fill=False, hatch="xx", ec=COLORS["discarded"], lw=0
                        )
                    )
        ax.set_xticks(range(len(symbols)), symbols)
        ax.set_yticks(range(len(names)), names)
        ax.set_title(title, fontsize=10)
    ax = axes[2]
    y = np.arange(len(names))
    ax.barh(y, [float(a) for a in alpha], color=COLORS["accepted"], ec="black", hatch=HATCHES["accepted"])
    for i, a in enumerate(alpha):
        ax.text(float(a) + 0.02, i, fmt(a), va="center", fontsize=9)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.25)
    ax.set_title("α = Σ min(p, q) per context", fontsize=10)
    tag_kind(ax, "derived")
    return fig


def law_comparison_figure(law: dict, samples: dict, symbols=SYMBOLS, *, kind: str = "simulated"):
    """Exact law (bars outlined) against one or more empirical tallies ``{label: Counter}``,
    one group per sequence, sorted by exact probability; sequences outside the law's support
    (impossible under the target) are appended at the right, marked with *."""
    keys = sorted(law, key=lambda k: (-float(law[k]), k))
    extra = sorted({k for c in samples.values() for k in c if k not in law})
    keys += extra
    x = np.arange(len(keys))
    n_series = 1 + len(samples)
    wdt = 0.8 / n_series
    fig, ax = plt.subplots(figsize=(11, 3.4), layout="constrained")
    ax.bar(
        x - 0.4 + wdt / 2,
        [float(law.get(k, 0)) for k in keys],
        wdt,
        color=COLORS["target"],
        ec="black",
        label="exact target law (derived)",
    )
    palette = [
        (COLORS["accepted"], HATCHES["accepted"]),
        (COLORS["highlight"], "//"),
        (COLORS["rejected"], HATCHES["rejected"]),
        (COLORS["draft"], "\\\\"),
    ]
    for j, (label, counts) in enumerate(samples.items()):
        n = sum(counts.values())
        face, hatch = palette[j % len(palette)]
        ax.bar(
            x - 0.4 + wdt * (j + 1.5),
            [counts.get(k, 0) / n for k in keys],
            wdt,
            color=face,
            hatch=hatch,
            ec="black",
            label=f"{label} (n = {n})",
        )
    ax.set_xticks(
        x,
        ["".join(symbols[t] for t in k) + ("*" if k not in law else "") for k in keys],
        rotation=90,
        fontsize=8,
    )
    ax.set_xlabel("first tokens (* = impossible under the target)" if extra else "first tokens")
    ax.set_ylabel("probability / frequency")
    ax.legend(fontsize=8, loc="upper right", bbox_to_anchor=(0.9, 1))
    tag_kind(ax, kind)
    return fig

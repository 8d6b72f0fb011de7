"""Figures for notebook 05's latency section: tokens received over time, and the distribution
of gaps between tokens (numbers from :mod:`specdec_core.latency`)."""

from __future__ import annotations

import numpy as np

from .frames import lab_figure
from .style import COLORS, tag_kind


def latency_figure(spec_times, plain_times, *, horizon_ms=None, kind="assumed"):
    """Left: tokens received against time (a staircase for speculation, an even ramp for plain
    decoding). Right: the empirical CDF of the gaps between consecutive tokens, with each
    stream's mean gap (1 ÷ rate) dashed."""
    spec = np.asarray(spec_times, dtype=float)
    plain = np.asarray(plain_times, dtype=float)
    fig = lab_figure(740, 280)
    ax1 = fig.add_axes((0.08, 0.17, 0.4, 0.72))
    ax2 = fig.add_axes((0.58, 0.17, 0.4, 0.72))
    h = horizon_ms if horizon_ms is not None else float(min(spec[-1], plain[-1]))
    for t, label, color, ls in (
        (spec, "speculative", COLORS["target"], "-"),
        (plain, "plain decoding", COLORS["draft"], "--"),
    ):
        n = np.arange(1, t.size + 1)
        keep = t <= h
        ax1.step(np.r_[0, t[keep]], np.r_[0, n[keep]], where="post", color=color, ls=ls, lw=1.8, label=label)
        g = np.diff(t)
        xs = np.sort(g)
        ax2.step(
            np.r_[0, xs],
            np.r_[0, np.arange(1, xs.size + 1) / xs.size],
            where="post",
            color=color,
            ls=ls,
            lw=1.8,
            label=label,
        )
        ax2.axvline(g.mean(), color=color, ls=":", lw=1.4)
    ax1.set_xlim(0, h)
    ax1.set_xlabel("time since the request (ms)")
    ax1.set_ylabel("tokens received")
    ax1.legend(fontsize=8, frameon=False, loc="upper left")
    ax2.set_xlabel("gap between consecutive tokens (ms)")
    ax2.set_ylabel("share of gaps ≤ x")
    ax2.set_ylim(0, 1.02)
    ax2.set_title("dotted: mean gap = 1 ÷ rate", fontsize=8)
    tag_kind(ax1, kind, "lower right")
    return fig

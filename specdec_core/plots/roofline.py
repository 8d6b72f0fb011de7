"""Figures for notebook 06's roofline and serving sections (matplotlib only; numbers from
:mod:`specdec_core.roofline` and :mod:`specdec_core.latency`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.ticker import MaxNLocator

from ..roofline import float_hardware, memory_bound_positions, pass_time
from ..serving import serving_curve, serving_point
from .frames import LabPlot, lab_figure
from .style import COLORS, tag_kind

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..measured import HardwareRun

LINESTYLES = ("-", "--", "-.", ":")
GAMMA_COLORS = (COLORS["ink"], COLORS["target"], COLORS["draft"], COLORS["rejected"])


def _curve(model, hardware, *, dtype, sequences, context, max_positions):
    Ts = np.arange(1, max_positions + 1)
    pts = [
        pass_time(model, hardware, dtype=dtype, positions=int(T), sequences=sequences, context=context)
        for T in Ts
    ]
    ms = lambda attr: np.array([float(getattr(p, attr)) * 1e3 for p in pts])
    return Ts, ms("memory_s"), ms("compute_s"), ms("total_s")


# ---------------------------------------------------------------- this machine


def matmul_figure(hw: HardwareRun, threads: tuple[int, ...] = (1, 2)) -> Figure:
    """Measured float32 matmul rate (GFLOP/s) against rows M, for the two weight shapes, with
    the roofline of this machine for the head-sized product: min(peak, intensity × bandwidth).
    ``hw``: the record of ``measured.read_stored("hardware.json")``."""
    fig = lab_figure(740, 300)
    ax = fig.add_axes((0.09, 0.16, 0.62, 0.76))
    for j, t in enumerate(threads):
        for i, (shape, curve) in enumerate(hw.matmul[t].items()):
            Ms = sorted(curve.gflops)
            g = np.array([curve.gflops[m] for m in Ms], dtype=float)
            ax.plot(
                Ms,
                g,
                LINESTYLES[i],
                marker="os"[j],
                ms=3,
                lw=1.4,
                color=(COLORS["target"], COLORS["draft"])[j],
                label=f"{shape}, {t} thread{'s' if t > 1 else ''}",
            )
    Ms = np.arange(1, 65)
    bw = float(hw.bandwidth[2].copy_GBps)
    k, n = 576, 49152
    intensity = 2 * Ms * k * n / (4 * (k * n + Ms * k + Ms * n))
    ax.plot(
        Ms,
        intensity * bw,
        color=COLORS["discarded"],
        lw=1.2,
        ls="-",
        label="576x49152: bytes limit at copy bandwidth",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("rows M in x (M × 576) @ W (float32)")
    ax.set_ylabel("GFLOP/s")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    tag_kind(ax, "measured", "lower right")
    return fig


def serving_figure(
    target, draft, hardware, *, dtype, context, alphas, gammas=(0, 2, 4, 8), batches=None, max_sequences=None
):
    """Throughput across the batch (left) and time per token of one sequence (right) against
    the batch size S, one line per γ, one panel row per α. ``max_sequences`` (dict γ → S)
    draws where the memory budget ends."""
    batches = (
        np.unique(np.round(np.geomspace(1, 256, 25)).astype(int)) if batches is None else np.asarray(batches)
    )
    rows = len(alphas)
    fig = lab_figure(740, 40 + 230 * rows)
    h = (1 - 40 / (40 + 230 * rows)) / rows
    for r, a in enumerate(alphas):
        y0 = 1 - (r + 1) * h + 0.13 * h
        ax1 = fig.add_axes((0.09, y0, 0.38, 0.7 * h))
        ax2 = fig.add_axes((0.6, y0, 0.38, 0.7 * h))
        for i, g in enumerate(gammas):
            pts = [
                serving_point(
                    target, draft, hardware, dtype=dtype, alpha=a, gamma=g, sequences=int(S), context=context
                )
                for S in batches
            ]
            thr = np.array([float(p.throughput) for p in pts])
            lat = np.array([float(p.latency_per_token_s) * 1e3 for p in pts])
            kw = dict(
                color=GAMMA_COLORS[i % 4],
                ls=LINESTYLES[i % 4],
                lw=1.7,
                label=("plain (γ = 0)" if g == 0 else f"γ = {g}"),
            )
            if max_sequences is not None and g in max_sequences:
                fits = batches <= max_sequences[g]
                ax1.plot(batches[fits], thr[fits], **kw)
                ax2.plot(batches[fits], lat[fits], **kw)
                kw.pop("label")
                ax1.plot(batches[~fits], thr[~fits], **{**kw, "alpha": 0.25})
                ax2.plot(batches[~fits], lat[~fits], **{**kw, "alpha": 0.25})
            else:
                ax1.plot(batches, thr, **kw)
                ax2.plot(batches, lat, **kw)
        for ax in (ax1, ax2):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("sequences in the batch, S")
        ax1.set_yscale("log")
        ax1.set_ylabel("tokens/s, whole batch")
        ax2.set_ylabel("ms per token, one sequence")
        ax1.set_title(f"α = {a}: throughput", fontsize=9)
        ax2.set_title(f"α = {a}: latency (lower is better)", fontsize=9)
        ax2.set_ylim(bottom=0)
        if r == 0:
            ax1.legend(fontsize=7, frameon=False)
        tag_kind(ax1, "assumed", "lower right")
    return fig


def padding_figure(share, *, batch, gamma):
    """Histogram of the share of padded slots wasted per round (a ragged batch)."""
    fig = lab_figure(560, 240)
    ax = fig.add_axes((0.12, 0.2, 0.84, 0.68))
    bins = np.linspace(0, 1, 21)
    ax.hist(np.asarray(share), bins=bins, color=COLORS["discarded"], edgecolor="white")
    ax.axvline(float(np.mean(share)), color=COLORS["rejected"], lw=2, ls="--", label="mean")
    ax.set_xlabel("share of the round's padded slots wasted")
    ax.set_ylabel("rounds")
    ax.set_title(f"batch {batch}, γ = {gamma}: padding every sequence to the longest run", fontsize=9)
    ax.legend(fontsize=8, frameon=False)
    tag_kind(ax, "measured", "upper right")
    return fig


class RooflinePlot(LabPlot):
    """The roofline lab's figure, built once with fixed axes (cost in decode steps, speed-up),
    so a new state only moves the lines and regions (the only artists blitted). State: ``target``,
    ``draft``, ``hardware``, ``dtype``, ``sequences``, ``context``, ``gamma``, ``alpha``."""

    size = (740, 300)

    MAX_T = 24
    MAX_GAMMA = 12
    Y_STEPS = 8.0
    Y_SPEEDUP = 4.0

    def __init__(self, *, blit: bool = True):
        super().__init__(blit=blit)
        ax1 = self.ax1 = self.fig.add_axes((0.08, 0.16, 0.5, 0.76))
        ax2 = self.ax2 = self.fig.add_axes((0.7, 0.16, 0.28, 0.76))
        T = np.arange(1, self.MAX_T + 1)
        z = np.zeros_like(T, dtype=float)
        self.free_span = ax1.axvspan(0.5, 1.5, color=COLORS["accepted"], alpha=0.15, lw=0)
        self.busy_span = ax1.axvspan(1.5, self.MAX_T + 0.5, color=COLORS["rejected"], alpha=0.12, lw=0)
        ax1.plot(T, T, color=COLORS["discarded"], lw=0.8, ls="-", label="T separate steps")
        (self.mem,) = ax1.plot(T, z, color=COLORS["target"], ls="--", lw=1.4, label="bytes ÷ bandwidth")
        (self.comp,) = ax1.plot(T, z, color=COLORS["draft"], ls=":", lw=2, label="FLOPs ÷ peak")
        (self.tot,) = ax1.plot(T, z, color=COLORS["ink"], lw=2, label="pass time = max")
        (self.mark,) = ax1.plot(
            [1], [0], "o", ms=8, mfc="none", mec=COLORS["rejected"], mew=2, label="verification, T = γ + 1"
        )
        ax1.set_xlim(0.5, self.MAX_T + 0.5)
        ax1.set_ylim(0, self.Y_STEPS)
        ax1.set_xlabel("positions scored in one pass, T")
        ax1.set_ylabel("time in decode steps (T = 1 → 1)")
        ax1.legend(fontsize=7, loc="upper left", frameon=True, framealpha=0.85)
        ax1.text(
            0.98,
            0.03,
            "green: memory-bound · red: compute-bound",
            transform=ax1.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
        )
        self.tags = {k: tag_kind(ax1, k, "upper right").texts[-1] for k in ("assumed", "measured")}
        g = np.arange(0, self.MAX_GAMMA + 1)
        ax2.axhline(1, color=COLORS["discarded"], lw=1)
        (self.sp,) = ax2.plot(
            g, np.ones_like(g, dtype=float), color=COLORS["target"], marker="o", ms=3, lw=1.6
        )
        (self.sp_mark,) = ax2.plot([0], [1], "o", ms=9, mfc="none", mec=COLORS["rejected"], mew=2)
        ax2.set_xlim(-0.5, self.MAX_GAMMA + 0.5)
        ax2.set_ylim(0, self.Y_SPEEDUP)
        ax2.set_xlabel("γ")
        ax2.xaxis.set_major_locator(MaxNLocator(integer=True))  # γ is a count: no 2.5 / 7.5 ticks
        ax2.set_ylabel("speed-up over plain decoding")
        ax2.set_title("notebook 05's ratio, priced here", fontsize=8)
        self.blit(
            [
                self.free_span,
                self.busy_span,
                self.mem,
                self.comp,
                self.tot,
                self.mark,
                self.sp,
                self.sp_mark,
                *self.tags.values(),
            ],
        )

    def update(self, state: Mapping) -> None:
        hw = float_hardware(state["hardware"])
        kw = dict(dtype=state["dtype"], sequences=state["sequences"], context=state["context"])
        Ts, mem, comp, tot = _curve(state["target"], hw, max_positions=self.MAX_T, **kw)
        free = memory_bound_positions(state["target"], hw, max_positions=self.MAX_T, **kw)
        step = tot[0]
        self.mem.set_ydata(mem / step)
        self.comp.set_ydata(comp / step)
        self.tot.set_ydata(tot / step)
        T = state["gamma"] + 1
        self.mark.set_visible(T <= self.MAX_T)
        if T <= self.MAX_T:
            self.mark.set_data([T], [min(tot[T - 1] / step, self.Y_STEPS * 0.98)])
        self.free_span.set_visible(free > 0)
        self.free_span.set_x(0.5)
        self.free_span.set_width(free)
        self.busy_span.set_visible(free < self.MAX_T)
        self.busy_span.set_x(free + 0.5)
        self.busy_span.set_width(self.MAX_T - free)
        for k, t in self.tags.items():
            t.set_visible(k == hw.kind)
        curve = serving_curve(
            state["target"], state["draft"], hw, alpha=state["alpha"], max_gamma=self.MAX_GAMMA, **kw
        )
        sp = np.array([float(pt.speedup) for pt in curve])
        self.sp.set_ydata(np.minimum(sp, self.Y_SPEEDUP * 0.99))
        g = state["gamma"]
        self.sp_mark.set_visible(g <= self.MAX_GAMMA)
        if g <= self.MAX_GAMMA:
            self.sp_mark.set_data([g], [min(sp[g], self.Y_SPEEDUP * 0.99)])

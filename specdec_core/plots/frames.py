"""Fast PNG frames for labs: a fixed-pixel figure, rendered to PNG bytes without pyplot.

* :func:`lab_figure` — a ``Figure`` of an exact pixel size (shown 1:1 by the lab, so it is crisp);
* :func:`figure_png` — one Agg draw, fast PNG compression;
* :class:`BlitPNG` — re-draw only what changes (static parts cached);
* :func:`message_png` — a greyed frame carrying a message, used instead of a stale or NaN figure;
* :func:`png_data_url` — a frame as the ``data:`` URL the lab's image widget shows;
* :class:`LabPlot` — the one figure hand-off of a lab (``update(state)``, ``.fig``, ``.png()``).

Matplotlib only (no ipywidgets): the lab widget in :mod:`specdec_core.labs.base` shows the bytes.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Mapping

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: Dots per inch of every lab figure; a figure of ``w × h`` pixels is ``w/DPI × h/DPI`` inches.
DPI = 80
#: Widest figure a lab may show: it must fit an 800 px output area with its padding.
MAX_WIDTH_PX = 760


def lab_figure(width_px: int, height_px: int, dpi: int = DPI) -> Figure:
    """A figure of exactly ``width_px × height_px`` pixels at ``dpi`` (no pyplot, no layout
    engine: place axes with ``fig.add_axes`` or ``subplots_adjust``)."""
    for name, v in (("width_px", width_px), ("height_px", height_px), ("dpi", dpi)):
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if width_px > MAX_WIDTH_PX:
        raise ValueError(f"width_px must be at most {MAX_WIDTH_PX} (an 800 px output area), got {width_px}")
    fig = Figure(figsize=(width_px / dpi, height_px / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def _encode_png(canvas) -> bytes:
    """The canvas as an RGBA PNG: no row filter, zlib level 1. RGBA, not RGB: Agg's buffer is
    RGBA, and copying it whole is much faster than picking out three bytes of every four (a lab
    frame: 3.0 ms instead of 5.5 ms to encode, about 1/6 more bytes). Faster than PIL's encoder."""
    rgba = np.asarray(canvas.buffer_rgba())
    h, w = rgba.shape[:2]
    rows = np.empty((h, 1 + 4 * w), dtype=np.uint8)
    rows[:, 0] = 0  # filter type 0 (none) on every row
    rows[:, 1:] = rgba.reshape(h, 4 * w)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
        + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 1))
        + _png_chunk(b"IEND", b"")
    )


def _own_canvas(fig, dpi):
    if not isinstance(fig.canvas, FigureCanvasAgg) or fig.dpi != dpi:
        FigureCanvasAgg(fig)
        fig.set_dpi(dpi)
    return fig.canvas


def figure_png(fig, dpi: int | None = None) -> bytes:
    """Render ``fig`` to PNG bytes with a single Agg draw (no tight bbox, fast compression).

    The first call lets a layout engine (if any) place the axes; then it is switched off, so
    later calls keep those positions.
    """
    canvas = _own_canvas(fig, fig.dpi if dpi is None else dpi)
    canvas.draw()
    if fig.get_layout_engine() is not None:
        fig.set_layout_engine("none")
    return _encode_png(canvas)


def png_data_url(png: bytes) -> bytes:
    """``png`` as the bytes of a ``data:image/png;base64,…`` URL (what a lab's image widget shows)."""
    if not isinstance(png, bytes | bytearray) or not png.startswith(b"\x89PNG\r\n\x1a\n"):
        raise ValueError("png must be the bytes of a PNG image")
    return b"data:image/png;base64," + base64.b64encode(png)


def message_png(width_px: int, height_px: int, text: str, dpi: int = DPI) -> bytes:
    """A light-grey frame of the given size with ``text`` centred: what a lab shows instead of a
    figure when its state is impossible (never a stale or NaN figure)."""
    fig = lab_figure(width_px, height_px, dpi)
    fig.set_facecolor("#eeeeee")
    fig.text(0.5, 0.5, text, ha="center", va="center", fontsize=11, color="#333333", wrap=True)
    return figure_png(fig)


def pin_xlabel(ax) -> None:
    """Fix the x-axis label of a drawn Axes at the place the last draw gave it.

    Matplotlib places an x label below the tick labels' bounding boxes, measured at every draw.
    Horizontal tick labels keep their height when the limits change, so the place does not move;
    pinning it skips that measuring. Identical pixels (tested against fresh draws)."""
    label = ax.xaxis.label
    if not label.get_text():
        return
    x, y = ax.transAxes.inverted().transform(label.get_transform().transform(label.get_position()))
    ax.xaxis.set_label_coords(float(x), float(y))


class BlitPNG:
    """PNG frames of a figure whose static parts are drawn once.

    ``dynamic`` artists are marked animated (left out of the full draw); each :meth:`png`
    restores the cached static background and draws only them, which skips the costly text
    and tick layout. Call :meth:`invalidate` when something static changes (limits, ticks,
    titles): the next frame redraws everything, or only one Axes' static parts.

    ``regions`` (optional, Axes -> ``(x0, y0, x1, y1)`` in figure fractions) gives an Axes a fixed
    panel that holds all its static parts; then ``invalidate(ax, key)`` caches that panel's
    pixels under ``key`` (e.g. the γ whose ticks it shows), and a later invalidation with the
    same key restores them instead of drawing again. After the first full draw, the x-axis label
    of each such Axes is pinned where that draw put it (:func:`pin_xlabel`), so a repaint does not
    measure every tick label again to place it (kv lab: 4-5 ms of a ~30 ms repaint).
    """

    def __init__(self, fig, dynamic, dpi: int | None = None, regions=None, max_cached: int = 64):
        self.fig = fig
        self.dpi = fig.dpi if dpi is None else dpi
        self.dynamic = list(dynamic)
        for a in self.dynamic:
            a.set_animated(True)
        self.background = None
        self.stale_axes: dict = {}
        self.extents: dict = {}
        self.regions = dict(regions or {})
        self.cache: dict = {}
        self.max_cached = max_cached

    def invalidate(self, ax=None, key=None):
        """Redraw everything on the next frame, or only the static parts of one Axes ``ax``
        (its ticks, labels, title, legend), which is much cheaper than a full redraw."""
        if ax is None:
            self.background = None
            self.stale_axes.clear()
            self.cache.clear()
        elif self.background is not None:
            self.stale_axes[ax] = key

    def _region_bbox(self, ax):
        from matplotlib.transforms import Bbox

        x0, y0, x1, y1 = self.regions[ax]
        return Bbox.from_extents(x0, y0, x1, y1).transformed(self.fig.transFigure)

    def _repaint(self, canvas, ax, key):
        from matplotlib.patches import Rectangle
        from matplotlib.transforms import Bbox

        if ax in self.regions and key is not None and (ax, key) in self.cache:
            canvas.restore_region(self.cache[(ax, key)])
            return
        renderer = canvas.get_renderer()
        if ax in self.regions:
            box = self._region_bbox(ax)
        else:
            new = ax.get_tightbbox(renderer)
            old = self.extents.get(ax, new)
            box = Bbox.union([old, new]).padded(2)
            self.extents[ax] = new
        patch = Rectangle(
            (box.x0, box.y0),
            box.width,
            box.height,
            transform=None,
            facecolor=self.fig.get_facecolor(),
            edgecolor="none",
        )
        patch.set_figure(self.fig)
        patch.draw(renderer)  # wipe the old ticks and labels
        ax.draw(renderer)  # animated (dynamic) artists are skipped here
        if ax in self.regions and key is not None:
            if len(self.cache) >= self.max_cached:
                self.cache.pop(next(iter(self.cache)))
            self.cache[(ax, key)] = canvas.copy_from_bbox(box)

    def png(self) -> bytes:
        canvas = _own_canvas(self.fig, self.dpi)
        if self.background is None:
            canvas.draw()
            if self.fig.get_layout_engine() is not None:
                self.fig.set_layout_engine("none")
                canvas.draw()
            renderer = canvas.get_renderer()
            for ax in self.regions:
                pin_xlabel(ax)
            self.extents = {ax: ax.get_tightbbox(renderer) for ax in self.fig.axes}
            self.background = canvas.copy_from_bbox(self.fig.bbox)
            self.stale_axes.clear()
        else:
            canvas.restore_region(self.background)
            if self.stale_axes:
                for ax, key in self.stale_axes.items():
                    self._repaint(canvas, ax, key)
                self.stale_axes.clear()
                self.background = canvas.copy_from_bbox(self.fig.bbox)
        for a in self.dynamic:
            if a.get_visible():
                self.fig.draw_artist(a)
        return _encode_png(canvas)


class LabPlot:
    """A lab's figure: what :class:`~specdec_core.labs.base.LabSpec` takes as ``plot``.

    A subclass declares ``size`` (pixels, shown 1:1; the lab's frame size, known without drawing),
    builds its artists on ``self.fig`` in ``__init__`` and hands the ones that move to
    :meth:`blit`; :meth:`update` moves them to a lab state. ``blit=False`` gives a plain figure
    whose :meth:`png` is one full draw (the static copy); ``blit=True`` caches the static parts
    (the live lab). Both draw the same picture."""

    size: tuple[int, int] = (MAX_WIDTH_PX, 300)

    def __init__(self, *, blit: bool = True):
        self.fig = lab_figure(*self.size)
        self.frames: BlitPNG | None = None
        self._blit = blit

    def blit(self, dynamic, regions=None) -> None:
        """Mark ``dynamic`` as the artists that move (only when built with ``blit=True``)."""
        if self._blit:
            self.frames = BlitPNG(self.fig, dynamic, regions=regions)

    def invalidate(self, ax, key=None) -> None:
        """The static parts of ``ax`` changed (limits, ticks): repaint them on the next frame."""
        if self.frames is not None:
            self.frames.invalidate(ax, key)

    def update(self, state: Mapping) -> None:
        """Move the figure to ``state`` (a lab state; never an impossible one)."""
        raise NotImplementedError

    def png(self) -> bytes:
        """The current frame as PNG bytes."""
        return self.frames.png() if self.frames is not None else figure_png(self.fig)


def plot_size(factory) -> tuple[int, int]:
    """The declared pixel size of a lab's plot factory (a :class:`LabPlot` subclass, or a
    ``functools.partial`` of one), read without drawing."""
    size = getattr(factory, "size", None) or getattr(getattr(factory, "func", None), "size", None)
    if size is None:
        raise ValueError(f"plot factory {factory!r} declares no size")
    w, h = size
    if w > MAX_WIDTH_PX:
        raise ValueError(f"a lab figure is at most {MAX_WIDTH_PX} px wide, {factory!r} declares {w}")
    return int(w), int(h)

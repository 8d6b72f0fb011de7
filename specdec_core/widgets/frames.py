"""Fast PNG frames for widgets: render a matplotlib Figure to PNG bytes for an
``ipywidgets.Image`` without pyplot, and re-draw only what changes (:class:`BlitPNG`).
Shared by every widget that shows a figure."""
from __future__ import annotations

import ipywidgets as w


def _encode_png(canvas) -> bytes:
    import io

    from PIL import Image

    img = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="png", compress_level=1)
    return buf.getvalue()


def _own_canvas(fig, dpi):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg) or fig.dpi != dpi:
        FigureCanvasAgg(fig)
        fig.set_dpi(dpi)
    return fig.canvas


def figure_png(fig, dpi: int = 72) -> bytes:
    """Render ``fig`` to PNG bytes with a single Agg draw (no tight bbox, fast compression).

    The first call lets the layout engine place the axes; then it is switched off, so later
    calls keep those positions.
    """
    canvas = _own_canvas(fig, dpi)
    canvas.draw()
    if fig.get_layout_engine() is not None:
        fig.set_layout_engine("none")
    return _encode_png(canvas)


class BlitPNG:
    """PNG frames of a figure whose static parts are drawn once.

    ``dynamic`` artists are marked animated (left out of the full draw); each :meth:`png`
    restores the cached static background and draws only them, which skips the costly text
    and tick layout. Call :meth:`invalidate` when something static changes (limits, ticks,
    titles): the next frame redraws everything.
    """

    def __init__(self, fig, dynamic, dpi: int = 72):
        self.fig, self.dpi = fig, dpi
        self.dynamic = list(dynamic)
        for a in self.dynamic:
            a.set_animated(True)
        self.background = None

        self.stale_axes: set = set()
        self._extents: dict = {}

    def invalidate(self, ax=None):
        """Redraw everything on the next frame, or only the static parts of one Axes ``ax``
        (its ticks, labels, title, legend), which is much cheaper than a full redraw."""
        if ax is None or self.background is None:
            self.background = None
            self.stale_axes.clear()
        else:
            self.stale_axes.add(ax)

    def _repaint(self, canvas, ax):
        from matplotlib.patches import Rectangle
        from matplotlib.transforms import Bbox

        renderer = canvas.get_renderer()
        new = ax.get_tightbbox(renderer)
        old = self._extents.get(ax, new)
        box = Bbox.union([old, new]).padded(2)
        patch = Rectangle((box.x0, box.y0), box.width, box.height, transform=None,
                          facecolor=self.fig.get_facecolor(), edgecolor="none")
        patch.set_figure(self.fig)
        patch.draw(renderer)      # wipe the old ticks and labels
        ax.draw(renderer)         # animated (dynamic) artists are skipped here
        self._extents[ax] = new

    def png(self) -> bytes:
        canvas = _own_canvas(self.fig, self.dpi)
        if self.background is None:
            canvas.draw()
            if self.fig.get_layout_engine() is not None:
                self.fig.set_layout_engine("none")
                canvas.draw()
            renderer = canvas.get_renderer()
            self._extents = {ax: ax.get_tightbbox(renderer) for ax in self.fig.axes}
            self.background = canvas.copy_from_bbox(self.fig.bbox)
        else:
            canvas.restore_region(self.background)
            if self.stale_axes:
                for ax in self.stale_axes:
                    self._repaint(canvas, ax)
                self.stale_axes.clear()
                self.background = canvas.copy_from_bbox(self.fig.bbox)
        for a in self.dynamic:
            if a.get_visible():
                self.fig.draw_artist(a)
        return _encode_png(canvas)


def png_image(fig, dpi: int = 72, css_class: str | None = None) -> w.Image:
    """An ``ipywidgets.Image`` sized 1:1 to ``fig`` at ``dpi`` (never stretched, so it stays crisp)."""
    width = round(fig.get_figwidth() * dpi)
    img = w.Image(format="png", layout=w.Layout(width=f"{width}px", max_width="100%"))
    if css_class:
        img.add_class(css_class)
    return img

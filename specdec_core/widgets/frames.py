"""Kept only for ``widgets/kv.py`` until it moves onto :mod:`specdec_core.labs`; the frame code
lives in :mod:`specdec_core.plots.frames`. Delete this file with ``widgets/kv.py``."""
from __future__ import annotations

import ipywidgets as w

from ..plots.frames import BlitPNG, figure_png  # noqa: F401


def png_image(fig, dpi: int = 72, css_class: str | None = None) -> w.Image:
    """An ``ipywidgets.Image`` sized 1:1 to ``fig`` at ``dpi``."""
    width = round(fig.get_figwidth() * dpi)
    img = w.Image(format="png", layout=w.Layout(width=f"{width}px", max_width="100%"))
    if css_class:
        img.add_class(css_class)
    return img

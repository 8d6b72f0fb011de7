"""matplotlib figures for the notebooks: the palette, kind labels, and one module per concept."""

from .style import COLORS, KIND_COLORS, new_axes, tag_kind  # noqa: F401

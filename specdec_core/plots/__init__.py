"""matplotlib figures for the notebooks: the palette, kind labels, and one module per concept.

Show any figure of this package with :func:`show` (the one idiom): a ``*_figure`` function returns
either a pyplot figure or a fixed-pixel figure (:func:`specdec_core.plots.frames.lab_figure`, shown
1:1 so it stays crisp), and ``show(fig)`` displays either kind correctly. (``plt.show()`` shows
only the pyplot kind.)
"""

from matplotlib.figure import Figure

from .style import COLORS, KIND_COLORS, new_axes, tag_kind  # noqa: F401


def show(fig: Figure) -> None:
    """Display ``fig`` in a notebook, whichever kind it is: a pyplot figure as pyplot shows it
    (then closed, so the cell does not show it twice), a fixed-pixel figure as its PNG at 1:1."""
    from IPython.display import Image, display

    from .frames import figure_png

    if getattr(fig.canvas, "manager", None) is not None:  # made by pyplot
        import matplotlib.pyplot as plt

        display(fig)
        plt.close(fig)
    else:
        display(Image(figure_png(fig)))

"""A progress bar for a cell that runs for a few seconds, readable without a kernel too.

A stored notebook keeps no widgets (``tools/execute_notebooks.py``), only each output's plain
text; an ``ipywidgets.IntProgress`` would leave its raw repr ("IntProgress(value=0, …)") for a
reader on GitHub or in a freshly opened notebook. :class:`ProgressBar` says what it is instead.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..distributions import check_int, check_name


class ProgressBar(widgets.IntProgress):
    """An ``IntProgress`` from 0 to ``total`` whose plain-text form is a sentence."""

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = f"Progress bar '{self._label}' (it moves while the cell runs)"
        return data


def progress_bar(total: int, description: str) -> ProgressBar:
    """A progress bar from 0 to ``total`` (≥ 1) labelled ``description``; set ``.value`` as work
    advances. It carries the CSS class ``specdec-progress``."""
    total = check_int(total, "total", low=1)
    description = check_name(description, "description")
    bar = ProgressBar(min=0, max=total, description=description)
    bar._label = description
    bar.add_class("specdec-progress")
    return bar

"""A learner who opens a course notebook and touches nothing must not be asked to save it
(issue 25): Lab marks a notebook modified when opening changes its model. Two causes were found
in headless Chromium (JupyterLab 4 + ipywidgets 8):

1. the stored ``metadata.kernelspec`` ("Python 3") differed from the spec Lab writes when the
   kernel connects ("Python 3 (ipykernel)"); fixed by ``tools/execute_notebooks.py`` storing the
   installed spec, checked without a browser by ``tests/test_collection.py``;
2. ipywidgets' Lab manager restores the stored widget state on open and, with ``saveState: true``
   (``binder/overrides.json``), marks the notebook dirty for every model it registers. Open:
   the strict xfail below turns into a failure once that is resolved, so the mark gets removed.
"""

from __future__ import annotations

import json

import pytest
from labdriver import open_notebook

NOTEBOOK = "notebooks/01-proposals-and-acceptance.ipynb"
STATE = """() => {
  const m = window.jupyterapp.shell.currentWidget.context.model;
  return {dirty: m.dirty, kernelspec: m.getMetadata('kernelspec')};
}"""
SETTLE_MS = 4_000  # the widget manager's restore lands ~1 s after the kernel is idle


def _opened_state(page, lab, workspace):
    open_notebook(page, lab, NOTEBOOK, workspace)
    page.wait_for_timeout(SETTLE_MS)
    return page.evaluate(STATE)


def test_opening_keeps_the_stored_kernelspec(lab, page):
    stored = json.loads((lab.root / NOTEBOOK).read_text(encoding="utf-8"))["metadata"]["kernelspec"]
    state = _opened_state(page, lab, "open-kernelspec")
    assert state["kernelspec"] == stored


@pytest.mark.xfail(
    strict=True,
    reason="ipywidgets' Lab manager marks the notebook dirty when it restores stored widget state "
    "while saveState is true (binder/overrides.json); a design decision is pending",
)
def test_a_course_notebook_opens_unmodified(lab, page):
    state = _opened_state(page, lab, "open-clean")
    assert not state["dirty"], "opened untouched, yet Lab marks the notebook modified"

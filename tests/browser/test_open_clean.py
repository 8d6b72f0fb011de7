"""A learner who opens a course notebook and touches nothing must not be asked to save it
(issue 25): Lab marks a notebook modified when opening changes its model. Two causes were found
in headless Chromium (JupyterLab 4 + ipywidgets 8), both fixed in how notebooks are stored
(``tools/execute_notebooks.py``, checked without a browser by ``tests/test_collection.py`` and
``tests/test_static_render.py``):

1. the stored ``metadata.kernelspec`` ("Python 3") differed from the spec Lab writes when the
   kernel connects ("Python 3 (ipykernel)"): the installed spec is stored;
2. ipywidgets' Lab manager restores stored widget state on open and, with ``saveState: true``
   (``binder/overrides.json``, kept so that a learner's own saved work reopens with its widgets),
   marks the notebook dirty for every model it registers: no widget state or view is stored.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from labdriver import open_notebook

REPO = Path(__file__).resolve().parents[2]

NOTEBOOK = "notebooks/01-proposals-and-acceptance.ipynb"
STATE = """() => {
  const m = window.jupyterapp.shell.currentWidget.context.model;
  return {dirty: m.dirty, kernelspec: m.getMetadata('kernelspec')};
}"""
SETTLE_MS = 4_000  # the widget manager's restore lands ~1 s after the kernel is idle


def _opened_state(page, lab, workspace, notebook=NOTEBOOK):
    """Open a pristine copy of the committed ``notebook`` (the server's own copies may have been
    run and saved by earlier browser tests, with widget state, as a learner's own work is) and
    return Lab's view of it once the widget manager has settled."""
    pristine = Path("pristine") / workspace / Path(notebook).name
    (lab.root / pristine).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / notebook, lab.root / pristine)
    open_notebook(page, lab, pristine.as_posix(), workspace)
    page.wait_for_timeout(SETTLE_MS)
    return page.evaluate(STATE)


def test_opening_keeps_the_stored_kernelspec(lab, page):
    stored = json.loads((REPO / NOTEBOOK).read_text(encoding="utf-8"))["metadata"]["kernelspec"]
    state = _opened_state(page, lab, "open-kernelspec")
    assert state["kernelspec"] == stored


@pytest.mark.parametrize(
    "notebook",
    [NOTEBOOK, "notebooks/03-one-round-step-by-step.ipynb", "notebooks/09-measure-a-real-model.ipynb"],
    ids=lambda p: p.split("/")[-1][:2],
)
def test_a_course_notebook_opens_unmodified(lab, page, notebook):
    state = _opened_state(page, lab, f"open-clean-{notebook.split('/')[-1][:2]}", notebook)
    assert not state["dirty"], "opened untouched, yet Lab marks the notebook modified"

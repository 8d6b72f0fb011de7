"""Re-execute notebooks in place, top to bottom, the one way their stored outputs are made.

    .venv/bin/python tools/execute_notebooks.py                 # every notebooks/NN-*.ipynb, in order
    .venv/bin/python tools/execute_notebooks.py notebooks/03-*.ipynb

Why a script and not a bare ``nbconvert --inplace``: the stored outputs are what nbval compares and
what readers without a kernel see, so they must be made the same way every time —
- the kernel starts in ``notebooks/`` (as in JupyterLab), from this environment;
- no widget is stored (:func:`stored_form`): neither the widget views in the outputs nor
  ``metadata.widgets``. A lab's output keeps its plain text ("Interactive lab … run this cell with
  a kernel") and its static copy (the figure at the defaults). Why: when a notebook carries widget
  state, ipywidgets' Lab manager restores it on open and, because Lab saves widget state
  (``binder/overrides.json``, so a learner's *own* saved work reopens with its widgets), marks the
  notebook modified for every model it registers — a course notebook opened untouched asked to be
  saved (issue 25). Without stored widgets it opens clean; see ``specdec_core/labs/base.py``;
- ``metadata.kernelspec`` is the installed kernel's own spec (:func:`lab_kernelspec`), the one Lab
  writes into the notebook when its kernel connects: a stored "Python 3" where the kernel says
  "Python 3 (ipykernel)" made every notebook "modified" the moment it was opened;
- Jupyter, IPython and matplotlib state go to a temporary folder, not the user's ``$HOME``;
- a cell that raises stops the run (unless tagged ``raises-exception``) and nothing is written.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def lab_kernelspec(name: str = "python3") -> dict:
    """The kernelspec metadata JupyterLab sets when kernel ``name`` connects (name, display name
    and language of the installed spec)."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(name)
    return {"display_name": spec.display_name, "language": spec.language, "name": name}


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def stored_form(nb):
    """The notebook as it is stored: every widget view dropped from the outputs' bundles (their
    ``text/plain`` stays), no ``metadata.widgets``. An output that held only a widget view is
    dropped. Returns ``nb`` (changed in place). nbval ignores widget views when comparing, so
    this does not change what it checks."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        kept = []
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data is not None and WIDGET_VIEW in data:
                del data[WIDGET_VIEW]
                if not data:
                    continue
            kept.append(out)
        cell.outputs = kept
    return nb


def execute(path: Path, timeout: int = 900) -> float:
    import nbformat
    from nbconvert.preprocessors import ExecutePreprocessor

    nb = nbformat.read(path, as_version=4)
    ep = ExecutePreprocessor(timeout=timeout, kernel_name="python3", store_widget_state=False)
    start = time.perf_counter()
    ep.preprocess(nb, {"metadata": {"path": str(path.parent)}})
    elapsed = time.perf_counter() - start
    nb.metadata["kernelspec"] = lab_kernelspec()
    stored_form(nb)
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
    with tempfile.TemporaryDirectory(prefix="specdec-exec-") as tmp:
        for var in ("JUPYTER_CONFIG_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
            os.environ[var] = str(Path(tmp) / var.lower())
        for path in paths:
            print(f"{path.name}: ", end="", flush=True)
            print(f"{execute(path):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

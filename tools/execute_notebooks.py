"""Re-execute notebooks in place, top to bottom, the one way their stored outputs are made.

    .venv/bin/python tools/execute_notebooks.py                 # every notebooks/NN-*.ipynb, in order
    .venv/bin/python tools/execute_notebooks.py notebooks/03-*.ipynb

Why a script and not a bare ``nbconvert --inplace``: the stored outputs are what nbval compares and
what readers without a kernel see, so they must be made the same way every time —
- the kernel starts in ``notebooks/`` (as in JupyterLab), from this environment;
- widget state is stored (nbconvert's default ``store_widget_state``), because Lab is configured to
  save widget state too (``binder/overrides.json``; see ``specdec_core/labs/base.py``);
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


def execute(path: Path, timeout: int = 900) -> float:
    import nbformat
    from nbconvert.preprocessors import ExecutePreprocessor

    nb = nbformat.read(path, as_version=4)
    ep = ExecutePreprocessor(timeout=timeout, kernel_name="python3", store_widget_state=True)
    start = time.perf_counter()
    ep.preprocess(nb, {"metadata": {"path": str(path.parent)}})
    elapsed = time.perf_counter() - start
    nb.metadata["kernelspec"] = lab_kernelspec()
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

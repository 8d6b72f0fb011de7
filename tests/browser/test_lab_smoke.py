"""The browser harness tested on its own, independent of the course notebooks: a small temporary
notebook shows a lab built on the real lab protocol (``smokelab.SPEC``: one control of every kind,
an action, an impossible state) and the full learner walk of ``labdriver.walk_notebook`` runs on
it — first open, Run All, every control to both ends and a middle value with the readouts checked
against ``texts(state)`` computed in this process, layout at 1280 px with the file browser open,
kernel restart note, save → close → reopen. Then a deliberately wrong expectation must fail, so
the checks can fail."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
import smokelab
from labdriver import Console, wait_texts, walk_notebook

HERE = Path(__file__).resolve().parent
CELLS = [
    f"import sys\nsys.path.insert(0, {str(HERE)!r})\nfrom smokelab import SPEC\nfrom specdec_core.labs import show",
    "show(SPEC)",
    "print('ready', 6 * 7)",
]


def _write_notebook(lab) -> str:
    """The smoke notebook, executed and stored the way the course notebooks are (nbconvert keeps
    the widget state), so first open shows the static copy and the friendly fallback."""
    from nbconvert.preprocessors import ExecutePreprocessor

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    ExecutePreprocessor(timeout=120, kernel_name="python3").preprocess(nb, {"metadata": {"path": str(HERE)}})
    (lab.root / "_smoke").mkdir(exist_ok=True)
    nbformat.write(nb, lab.root / "_smoke" / "smoke.ipynb")
    return "_smoke/smoke.ipynb"


def test_walk_a_lab_built_on_the_protocol(lab, page, screenshots_dir):
    console = Console().attach(page)
    relpath = _write_notebook(lab)
    report = walk_notebook(
        page,
        lab,
        relpath,
        ["smoke"],
        workspace="smoke",
        console=console,
        specs={"smoke": smokelab.SPEC},
        shots=screenshots_dir,
    )
    assert report.labs == ["smoke"]
    assert report.events >= 3 * len(smokelab.SPEC.controls)
    print(report)
    # The readout check is not vacuous: the reopened lab (rendered from the saved widget state)
    # shows the last state reached; expecting any other texts fails.
    wrong = dict(smokelab.texts(smokelab.DEFAULTS), clicks="clicks: 7")
    with pytest.raises(pytest.fail.Exception, match="clicks"):
        wait_texts(page, 0, wrong, "deliberately wrong", timeout_ms=1_000)


@pytest.mark.xfail(
    strict=False,
    reason=(
        "load-dependent in ipywidgets 8.1.9 (jupyterlab-manager 5.0.16): a reopened notebook's widgets "
        "are restored twice at once, kernel-only when the new kernel connects and kernel+notebook from "
        "the manager's constructor; the first to finish marks the manager restored and re-renders the "
        "outputs, and get_model() waits only 2 s for a model (both read in its bundled source). On a "
        "busy machine the notebook's saved state is not loaded in time: 'model not found' although the "
        "saved file holds every model (seen on 04 and 01 at load average ≈ 10 on 2 cores)"
    ),
)
def test_reopen_in_the_same_page(lab, page):
    """Run, save, close the tab and reopen the file in the same Lab page: no widget error."""
    from labdriver import check_no_forbidden_text, close_reopen, open_notebook, run_all, save

    relpath = _write_notebook(lab)
    open_notebook(page, lab, relpath, "smoke-same-page")
    run_all(page)
    save(page)
    close_reopen(page, relpath, lab)
    check_no_forbidden_text(page, "reopened in the same page")

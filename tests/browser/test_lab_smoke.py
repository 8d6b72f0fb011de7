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


_EXECUTED: list = []  # the executed smoke notebook, built once per session (nbconvert: ~4 s)


def _write_notebook(lab) -> str:
    """The smoke notebook, executed and stored the way the course notebooks are (nbconvert keeps
    the widget state), so first open shows the static copy and the friendly fallback. Executed
    once; each test gets a fresh copy of that file."""
    from nbconvert.preprocessors import ExecutePreprocessor

    if not _EXECUTED:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in CELLS])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        ExecutePreprocessor(timeout=120, kernel_name="python3").preprocess(
            nb, {"metadata": {"path": str(HERE)}}
        )
        _EXECUTED.append(nbformat.writes(nb))
    (lab.root / "_smoke").mkdir(exist_ok=True)
    (lab.root / "_smoke" / "smoke.ipynb").write_text(_EXECUTED[0])
    return "_smoke/smoke.ipynb"


def test_walk_a_lab_built_on_the_protocol(lab, lab_page, screenshots_dir):
    page = lab_page
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
    console.detach()
    assert report.labs == ["smoke"]
    assert report.events >= 3 * len(smokelab.SPEC.controls)
    print(report)
    # The readout check is not vacuous: the reopened lab (rendered from the saved widget state)
    # shows the last state reached; expecting any other texts fails.
    wrong = dict(smokelab.texts(smokelab.DEFAULTS), clicks="clicks: 7")
    with pytest.raises(pytest.fail.Exception, match="clicks"):
        wait_texts(page, 0, wrong, "deliberately wrong", timeout_ms=1_000)


# ipywidgets 8.1.9 (jupyterlab-manager 5.0.16) restores a reopened notebook's widgets twice at once
# (kernel-only when the new kernel connects, kernel+notebook from the manager's constructor) and
# get_model() waits only 2 s: on a busy machine a saved lab can come back as "model not found"
# although the file holds its state (seen on 04 and 01 at load average ≈ 10 on 2 cores). The
# static copy's CSS hides such an output and shows the copy instead, so this must pass either way;
# the next test forces the failing case.
def test_reopen_in_the_same_page(lab, lab_page):
    """Run, save, close the tab and reopen the file in the same Lab page: no visible widget error,
    and the lab readable (restored from its saved state, or its static copy)."""
    from labdriver import (
        check_no_forbidden_text,
        check_static_copies,
        close_reopen,
        open_notebook,
        run_all,
        save,
    )

    page = lab_page
    relpath = _write_notebook(lab)
    open_notebook(page, lab, relpath, "smoke-same-page")
    run_all(page)
    save(page)
    close_reopen(page, relpath, lab)
    check_no_forbidden_text(page, "reopened in the same page")
    check_static_copies(page, [smokelab.SPEC.name], "reopened in the same page", fallback_ok=False)


def test_reopen_without_saved_state_shows_the_static_copy(lab, lab_page):
    """When ipywidgets cannot restore a saved lab (the race above, or a notebook saved without
    widget state), the failed widget output must not show its error: the static copy's CSS hides
    it and the static copy is visible instead. Forced here by removing the saved widget state and
    re-signing the file, so Lab trusts it (as it trusts a notebook the learner saved)."""
    from labdriver import (
        check_no_forbidden_text,
        check_static_copies,
        close_reopen,
        open_notebook,
        run_all,
        save,
    )
    from nbformat.sign import NotebookNotary

    page = lab_page
    relpath = _write_notebook(lab)
    open_notebook(page, lab, relpath, "smoke-no-state")
    run_all(page)
    save(page)
    path = lab.root / relpath
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.pop("widgets", None), "the saved notebook should have carried widget state"
    NotebookNotary(data_dir=str(lab.runtime.parent / "data")).sign(nb)
    nbformat.write(nb, path)
    close_reopen(page, relpath, lab)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.node.textContent.includes('model not found')",
        timeout=30_000,
        polling=200,
    )  # the error is in the page (the test is not vacuous) ...
    check_no_forbidden_text(page, "reopened without widget state")  # ... but nobody sees it
    check_static_copies(page, [smokelab.SPEC.name], "reopened without widget state", fallback_ok=False)


def test_server_runs_the_project_extension(lab, page):
    """The test server enables specdec_core.server.nodelay as `make lab` and Binder do (its log says so
    at start-up)."""
    from specdec_core.server.nodelay import LOADED

    assert LOADED in lab.log_tail(10**7), lab.log_tail()

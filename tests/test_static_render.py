"""Every stored notebook reads well without a kernel (GitHub, nbviewer, the static site).

Rendered to HTML with nbconvert, without executing anything, each notebook must:
- have been stored executed, top to bottom (every code cell has an execution count, increasing);
- hold no error output (except in a cell tagged ``raises-exception``, which shows one on purpose);
- give every interactive section a static stand-in: a code cell that displays a widget
  (``application/vnd.jupyter.widget-view+json``) has an ``image/png`` output in the same cell or in
  one of the next two code cells (the figure at the widget's default values). The only other accepted
  stand-in is the self-check quiz's own static version (``show_quiz``: HTML with a collapsed answer
  in the same cell), and a lab's static copy from ``specdec_core.labs.show`` (HTML in the same cell,
  its figure embedded as a PNG);
- store no widget at all: no widget view in an output, no ``metadata.widgets``
  (``tools/execute_notebooks.py: stored_form``). Stored widget state made Lab mark a course
  notebook modified the moment it opened (issue 25); a lab's output keeps its plain text
  ("Interactive lab … run this cell with a kernel") and its static copy;
- render to HTML that carries every stored PNG.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
LOOKAHEAD = 2  # code cells after a widget cell in which its static figure may appear
#: The plain text a stored widget output keeps (labs/base.LabDisplay, labs/progress.ProgressBar).
WIDGET_TEXTS = ("Interactive lab ", "Progress bar ")


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def _tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


def _mimes(cell):
    return [mime for out in cell.get("outputs", []) for mime in out.get("data", {})]


def _is_quiz_fallback(cell) -> bool:
    for out in cell.get("outputs", []):
        html = out.get("data", {}).get("text/html", "")
        html = "".join(html) if isinstance(html, list) else html
        if "Self-check" in html and "<details" in html:
            return True
    return False


def _is_lab_static_copy(cell) -> bool:
    """A lab shown with ``specdec_core.labs.show``: its static copy (texts and, for a lab with a
    figure, the figure as an embedded PNG) is an HTML output of the same cell."""
    for out in cell.get("outputs", []):
        html = out.get("data", {}).get("text/html", "")
        html = "".join(html) if isinstance(html, list) else html
        if "class='lab-static " in html:
            return True
    return False


def _shows_widget(cell) -> bool:
    """The cell displayed a widget: a widget view, or the plain text a stored widget output keeps."""
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        plain = data.get("text/plain", "")
        plain = "".join(plain) if isinstance(plain, list) else plain
        if WIDGET_VIEW in data or plain.startswith(WIDGET_TEXTS):
            return True
    return False


def widget_cells_without_static_figure(nb) -> list[str]:
    """Code cells showing a widget with no PNG in that cell or the next LOOKAHEAD code cells."""
    code = _code_cells(nb)
    missing = []
    for i, cell in enumerate(code):
        if not _shows_widget(cell) or _is_quiz_fallback(cell) or _is_lab_static_copy(cell):
            continue
        window = code[i : i + 1 + LOOKAHEAD]
        if not any("image/png" in _mimes(c) for c in window):
            first_line = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
            missing.append(f"code cell {i + 1} ({first_line!r})")
    return missing


def ids(paths):
    return [p.name for p in paths]


if not NOTEBOOKS:

    def test_there_are_notebooks():
        pytest.skip("no notebooks/NN-*.ipynb stored yet")


@pytest.fixture(scope="module")
def exporter():
    from nbconvert import HTMLExporter

    return HTMLExporter(template_name="lab")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_stored_executed_top_to_bottom(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    counts = [
        c.execution_count for c in _code_cells(nb) if c.source.strip() and "skip-execution" not in _tags(c)
    ]
    assert None not in counts, f"{path.name}: some code cells were never run (store it executed)"
    assert counts == sorted(counts) and len(set(counts)) == len(counts), (
        f"{path.name}: cells were not run top to bottom: {counts}"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_no_stored_error_output(path):
    nb = nbformat.read(path, as_version=4)
    errors = [
        f"code cell {i + 1}: {o.get('ename')}: {o.get('evalue')}"
        for i, c in enumerate(_code_cells(nb))
        if "raises-exception" not in _tags(c)
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert not errors, f"{path.name} stores error outputs: {errors}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_every_widget_has_a_static_figure(path):
    nb = nbformat.read(path, as_version=4)
    missing = widget_cells_without_static_figure(nb)
    assert not missing, (
        f"{path.name}: widgets without a static figure (image/png) in the same "
        f"cell or the next {LOOKAHEAD} code cells: {missing}"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_no_widget_is_stored(path):
    """A stored notebook opens unmodified in Lab (issue 25): no widget state to restore, no widget
    view pointing at one; the widget cells keep their plain text (checked as not vacuous)."""
    nb = nbformat.read(path, as_version=4)
    assert "widgets" not in nb.metadata, f"{path.name}: stored widget state (run tools/execute_notebooks.py)"
    views = [
        i + 1 for i, c in enumerate(_code_cells(nb)) for o in c.outputs if WIDGET_VIEW in o.get("data", {})
    ]
    assert not views, f"{path.name}: widget views stored in code cells {views}"
    labs = sum(_shows_widget(c) for c in _code_cells(nb))
    assert labs or "show_" not in "".join(c.source for c in _code_cells(nb)), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_renders_to_html_with_every_figure(path, exporter):
    nb = nbformat.read(path, as_version=4)
    body, _ = exporter.from_notebook_node(nb)
    pngs = sum(1 for c in _code_cells(nb) for o in c.outputs if "image/png" in o.get("data", {}))
    assert body.count("data:image/png;base64,") >= pngs
    title = next(
        (
            c.source.lstrip("# ").splitlines()[0]
            for c in nb.cells
            if c.cell_type == "markdown" and c.source.startswith("# ")
        ),
        None,
    )
    assert title, f"{path.name}: the first heading (# Title) is missing"
    assert "<h1" in body


# --- the checker itself ---------------------------------------------------------------------------


def _cell(outputs, tags=()):
    c = nbformat.v4.new_code_cell("x", execution_count=1)
    c.outputs = outputs
    c.metadata["tags"] = list(tags)
    return c


def _out(*mimes):
    return nbformat.v4.new_output(
        "display_data",
        data={
            m: "" if m != WIDGET_VIEW else {"model_id": "m", "version_major": 2, "version_minor": 0}
            for m in mimes
        },
    )


def test_checker_accepts_figure_nearby_and_rejects_far_or_missing():
    widget, png, text = _out(WIDGET_VIEW, "text/plain"), _out("image/png"), _out("text/plain")
    nb = nbformat.v4.new_notebook()
    nb.cells = [_cell([widget]), _cell([text]), _cell([png])]
    assert widget_cells_without_static_figure(nb) == []
    nb.cells = [_cell([widget]), _cell([text]), _cell([text]), _cell([png])]
    assert widget_cells_without_static_figure(nb) == ["code cell 1 ('x')"]
    nb.cells = [_cell([widget, png])]
    assert widget_cells_without_static_figure(nb) == []
    nb.cells = [_cell([widget])]
    assert len(widget_cells_without_static_figure(nb)) == 1
    quiz = nbformat.v4.new_output(
        "display_data",
        data={"text/html": "<p><b>Self-check.</b> ?</p><details><summary>Show</summary></details>"},
    )
    nb.cells = [_cell([widget, quiz])]
    assert widget_cells_without_static_figure(nb) == []

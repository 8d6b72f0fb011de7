"""Small helpers that drive JupyterLab through `window.jupyterapp` (expose_app_in_browser)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The notebooks the server serves (a temporary copy is made). Overridable for developing the tests.
NOTEBOOKS_SRC = Path(os.environ.get("SPECDEC_BROWSER_NOTEBOOKS", ROOT / "notebooks"))
SCREENSHOTS = ROOT / "build" / "screenshots"
#: CI (.ci/run) sets this: then a browser test that cannot run is a failure, never a skip.
REQUIRE = os.environ.get("SPECDEC_REQUIRE_BROWSER") == "1"


def unavailable(reason: str):
    """Skip with `reason`, or fail under SPECDEC_REQUIRE_BROWSER=1."""
    if REQUIRE:
        pytest.fail(f"SPECDEC_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def notebook_contract(notebook: str, module: str):
    """The contract module of a notebook under test, or skip/fail when either is missing."""
    import importlib

    if not (NOTEBOOKS_SRC / Path(notebook).name).exists():
        unavailable(f"{notebook} does not exist")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        unavailable(f"{module} (the contract {notebook} is tested against) is missing: {exc}")

# True once the notebook at `path` is the current widget, its document is loaded and its kernel is
# connected AND idle. Waiting for the toolbar's "idle" text alone is flaky: Run All can be sent
# before the kernel connects (field notes: 3 of 12 runs failed that way).
KERNEL_READY = """(path) => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return false;
  const w = app.shell.currentWidget;
  if (!w || !w.context || w.context.path !== path || !w.context.isReady || !w.sessionContext) return false;
  const s = w.sessionContext.session;
  const k = s && s.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""

START_RUN_ALL = """() => {
  window.__specdecRunAll = 'running';
  window.jupyterapp.commands.execute('notebook:run-all-cells').then(
    (ok) => { window.__specdecRunAll = ok ? 'ok' : 'failed'; },
    (err) => { window.__specdecRunAll = 'error: ' + err; });
}"""

# Every non-empty code cell has an execution count and the kernel is idle again.
ALL_EXECUTED = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  if (!k || k.status !== 'idle') return false;
  return w.content.widgets
    .filter((c) => c.model.type === 'code' && c.model.sharedModel.getSource().trim() !== '')
    .every((c) => c.model.executionCount !== null);
}"""

# Error outputs of cells not tagged raises-exception, as "cell N: Name: value".
CELL_ERRORS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const errors = [];
  w.content.widgets.forEach((c, i) => {
    if (c.model.type !== 'code') return;
    const tags = c.model.getMetadata('tags') || [];
    if (tags.includes('raises-exception')) return;
    c.model.outputs.toJSON().forEach((o) => {
      if (o.output_type === 'error') errors.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
    });
  });
  return errors;
}"""

NOTEBOOK_SCROLLER = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const o = w.node.querySelector('.jp-WindowedPanel-outer') || w.content.node;
  return {scroll: o.scrollHeight, client: o.clientHeight};
}"""

NOTEBOOK_TO_TOP = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const o = w.node.querySelector('.jp-WindowedPanel-outer') || w.content.node;
  o.scrollTop = 0;
}"""


def open_notebook(page, lab, relpath: str, workspace: str) -> None:
    """Open `relpath` (relative to the server root) in a fresh workspace; wait for an idle kernel."""
    page.goto(lab.url(relpath, workspace))
    try:
        page.wait_for_function(KERNEL_READY, arg=relpath, timeout=90_000, polling=200)
    except Exception as exc:
        pytest.fail(f"{relpath}: kernel not connected and idle: {exc}\n--- server log ---\n"
                    f"{lab.log_tail()}", pytrace=False)


def run_all(page, timeout_ms: int = 120_000) -> str:
    """Run every cell (Lab's own command) and wait until all are executed and the kernel is idle."""
    page.evaluate(START_RUN_ALL)
    page.wait_for_function("() => window.__specdecRunAll !== 'running'", timeout=timeout_ms,
                           polling=200)
    status = page.evaluate("() => window.__specdecRunAll")
    errors = page.evaluate(CELL_ERRORS)
    assert not errors, f"cells raised: {errors}"
    assert status == "ok", f"Run All: {status}"
    page.wait_for_function(ALL_EXECUTED, timeout=timeout_ms, polling=200)
    return status


def screenshot_notebook(page, path: Path) -> Path:
    """The whole notebook, legible: sidebars collapsed, the viewport as tall as the notebook."""
    page.evaluate("() => { const s = window.jupyterapp.shell; s.collapseLeft && s.collapseLeft();"
                  " s.collapseRight && s.collapseRight(); }")
    page.wait_for_timeout(300)
    size = page.viewport_size
    dims = page.evaluate(NOTEBOOK_SCROLLER)
    height = min(size["height"] + dims["scroll"] - dims["client"] + 20, 16_000)
    page.set_viewport_size({"width": size["width"], "height": height})
    page.evaluate(NOTEBOOK_TO_TOP)
    page.wait_for_timeout(1_000)  # let Lab relayout and render the cells now on screen
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    return path

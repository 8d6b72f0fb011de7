"""Generic helpers that drive JupyterLab (through `window.jupyterapp`, expose_app_in_browser) and the
labs of :mod:`specdec_core.labs` through their DOM contract (see ``specdec_core/labs/base.py``):

* live root ``.specdec-lab.lab-<name>``; controls ``.lab-control-<key>``; readouts
  ``.lab-text-<key>``; figure ``.lab-figure``; restart note ``.lab-restart-note``;
  static copy ``.lab-static.lab-static-<name>``.

Nothing here knows a particular lab: a test finds the labs of a notebook, drives every control to
its minimum, maximum and one middle value, and after each event compares every readout with
``spec.texts(state)`` computed *here*, in the test process, for the state the event reached
(:class:`LabModel` replays the lab's state machine: control values, then action ``fn``s).
"""

from __future__ import annotations

import html
import importlib
import json
import os
import pkgutil
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import labproc  # noqa: E402  (tools/: Lab and Chromium, one home)

#: The notebooks the server serves (a temporary copy is made). Overridable for developing the tests.
NOTEBOOKS_SRC = Path(os.environ.get("SPECDEC_BROWSER_NOTEBOOKS", ROOT / "notebooks"))
SCREENSHOTS = ROOT / "build" / "screenshots"
#: Screenshots of every lab (build/screenshots/) are for a person checking the layout by eye; they
#: cost time in every run, so they are taken only with SPECDEC_SCREENSHOTS=1.
TAKE_SCREENSHOTS = os.environ.get("SPECDEC_SCREENSHOTS") == "1"
#: CI (.ci/run) sets this: then a browser test that cannot run is a failure, never a skip.
REQUIRE = os.environ.get("SPECDEC_REQUIRE_BROWSER") == "1"
#: The Lab settings `make lab` and Binder install (the widgets' saveState decision lives there).
PROJECT_OVERRIDES = Path(os.environ.get("SPECDEC_PROJECT_OVERRIDES", ROOT / "binder" / "overrides.json"))
#: How long a readout may take to show the texts of a new state before the test fails. Generous:
#: this is a correctness test on a shared 2-core machine; speed is measured in benchmarks/.
UPDATE_TIMEOUT_MS = 15_000
#: Debian's Chromium and the flags every browser test launches it with: tools/labproc.py, their
#: one home (bench_browser.py uses them too).
CHROMIUM, CHROMIUM_ARGS = labproc.CHROMIUM, list(labproc.CHROMIUM_ARGS)


def unavailable(reason: str):
    """Skip with `reason`, or fail under SPECDEC_REQUIRE_BROWSER=1."""
    if REQUIRE:
        pytest.fail(f"SPECDEC_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def lab_settings() -> dict:
    """The Lab settings the test server uses: the project's own (``binder/overrides.json``, what
    `make lab` and Binder install) with the test-only keys of ``tests/browser/overrides.json``
    (no news prompt, no update check, no autosave) merged on top, plugin by plugin."""
    merged: dict = {}
    for path in (PROJECT_OVERRIDES, Path(__file__).with_name("overrides.json")):
        if path.exists():
            for plugin, values in json.loads(path.read_text()).items():
                merged.setdefault(plugin, {}).update(values)
    return merged


# ------------------------------------------------------------------------------------ console

#: Console messages that are not errors of the course. Each is matched against the message text;
#: keep this list short, add only what was seen, and justify every entry.
CONSOLE_ALLOWLIST: list[tuple[str, str]] = [
    # Lab's debugger asks a new kernel for its debug state; the test shuts that kernel down (close
    # and reopen) before it answers, and Lab logs the cancelled request. Caused by the test's speed.
    (
        r"^Could not restore the debugger state: Canceled future for debug_request message",
        "the test closes a notebook while Lab's debugger still queries its kernel",
    ),
    # The same race with ipykernel 7's subshells: Lab asks a new kernel for a subshell, the test's
    # reopen step shuts that kernel down first, and the cancelled request surfaces as an uncaught
    # page error (seen once, 09's reopen step, CI rehearsal 2026-12-03; the same test passed alone).
    (
        r"Canceled future for create_subshell_request message before replies were done",
        "the test closes a notebook while Lab still asks its kernel for a subshell",
    ),
]


@dataclass
class Console:
    """Every console error and uncaught page error of a page, from the moment it is attached."""

    errors: list = field(default_factory=list)
    allowed: list = field(default_factory=list)

    pages: list = field(default_factory=list)

    def attach(self, page) -> "Console":
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)
        self.pages.append(page)
        return self

    def detach(self) -> None:
        """Stop listening (a page shared by several tests gets a new Console per test)."""
        for page in self.pages:
            page.remove_listener("console", self._on_console)
            page.remove_listener("pageerror", self._on_page_error)
        self.pages.clear()

    def _on_page_error(self, exc):
        for pattern, _why in CONSOLE_ALLOWLIST:
            if re.search(pattern, str(exc)):
                self.allowed.append(str(exc))
                return
        self.errors.append(f"page error: {exc}")

    def _on_console(self, msg):
        if msg.type != "error":
            return
        text = msg.text
        for pattern, _why in CONSOLE_ALLOWLIST:
            if re.search(pattern, text):
                self.allowed.append(text)
                return
        loc = msg.location or {}
        self.errors.append(f"console error: {text} ({loc.get('url', '')}:{loc.get('lineNumber', '')})")

    def check(self, where: str = "") -> None:
        assert not self.errors, f"{where}: console/page errors:\n" + "\n".join(self.errors)


# ------------------------------------------------------------------------------------ JupyterLab

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

START_COMMAND = """([command, args]) => {
  window.__specdecCmd = 'running';
  window.jupyterapp.commands.execute(command, args || {}).then(
    (ok) => { window.__specdecCmd = (ok === false) ? 'failed' : 'ok'; },
    (err) => { window.__specdecCmd = 'error: ' + err; });
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


def lab_loaded(page, lab) -> bool:
    """Whether `page` already shows JupyterLab of server `lab` (then documents open inside it)."""
    return page.url.startswith(lab.base + "/lab") and page.evaluate(
        "() => !!(window.jupyterapp && window.jupyterapp.shell)"
    )


def load_lab(page, lab, workspace: str) -> None:
    """Load JupyterLab in `page`, in a fresh workspace with no document open."""
    page.goto(lab.home_url(workspace))
    page.wait_for_function(
        "() => !!(window.jupyterapp && window.jupyterapp.shell && document.querySelector('#filebrowser'))",
        timeout=90_000,
        polling=100,
    )


def open_notebook(page, lab, relpath: str, workspace: str) -> None:
    """Open `relpath` (relative to the server root) and wait for an idle kernel: inside the Lab
    the page already shows (``docmanager:open``, as a learner opens a file from the file browser),
    else by loading Lab in a fresh workspace with that notebook."""
    if lab_loaded(page, lab):
        assert command(page, "docmanager:open", {"path": relpath, "factory": "Notebook"}) == "ok"
    else:
        page.goto(lab.url(relpath, workspace))
    wait_kernel_ready(page, relpath, lab)


CLOSE_ALL = """async () => {
  const app = window.jupyterapp;
  for (const w of [...app.shell.widgets('main')]) {
    if (w.sessionContext) { try { await w.sessionContext.shutdown(); } catch (e) { /* gone */ } }
    w.dispose();
  }
  return [...app.shell.widgets('main')].length;
}"""


def close_all(page) -> None:
    """Shut down the kernel of every open document in `page` and close it (no dialog): the
    page is then a Lab with nothing open, ready for the next notebook."""
    left = page.evaluate(CLOSE_ALL)
    assert left == 0, f"{left} documents still open after closing all"


def wait_kernel_ready(page, relpath: str, lab=None, timeout_ms: int = 90_000) -> None:
    try:
        page.wait_for_function(KERNEL_READY, arg=relpath, timeout=timeout_ms, polling=200)
    except Exception as exc:
        log = f"\n--- server log ---\n{lab.log_tail()}" if lab is not None else ""
        pytest.fail(f"{relpath}: kernel not connected and idle: {exc}{log}", pytrace=False)


def command(page, name: str, args: dict | None = None, timeout_ms: int = 60_000) -> str:
    """Run a Lab command and wait for its promise."""
    page.evaluate(START_COMMAND, [name, args or {}])
    page.wait_for_function("() => window.__specdecCmd !== 'running'", timeout=timeout_ms, polling=100)
    return page.evaluate("() => window.__specdecCmd")


def run_all(page, timeout_ms: int = 120_000) -> str:
    """Run every cell (Lab's own command) and wait until all are executed and the kernel is idle."""
    status = command(page, "notebook:run-all-cells", timeout_ms=timeout_ms)
    errors = page.evaluate(CELL_ERRORS)
    assert not errors, f"cells raised: {errors}"
    assert status == "ok", f"Run All: {status}"
    page.wait_for_function(ALL_EXECUTED, timeout=timeout_ms, polling=200)
    return status


RUN_CELLS = """async (indices) => {
  const app = window.jupyterapp, w = app.shell.currentWidget;
  for (const i of indices) {
    w.content.activeCellIndex = i;
    await app.commands.execute('notebook:run-cell');
    const cell = w.content.widgets[i];
    const k = () => w.sessionContext.session.kernel;
    while (cell.model.executionCount === null || k().status !== 'idle') {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return true;
}"""


def run_cells(page, indices: list[int], timeout_ms: int = 120_000) -> None:
    """Run the code cells at `indices` (notebook cell indices), in order, each to completion: for
    a notebook whose Run All is too costly for the browser suite (the capstone loads a model)."""
    page.evaluate(RUN_CELLS, indices)
    errors = page.evaluate(CELL_ERRORS)
    assert not errors, f"cells raised: {errors}"


def show_file_browser(page) -> None:
    """JupyterLab's default layout: the file browser open in the left sidebar."""
    page.evaluate("() => window.jupyterapp.shell.activateById('filebrowser')")
    page.wait_for_function(
        "() => { const n = document.querySelector('#filebrowser');"
        " return !!n && n.getBoundingClientRect().width > 100; }",
        timeout=10_000,
    )


def save(page) -> None:
    """Save the notebook (what autosave does every two minutes in `make lab`)."""
    assert command(page, "docmanager:save") == "ok"


def close_reopen(page, relpath: str, lab=None, reload_workspace: str | None = None) -> None:
    """Shut the notebook's kernel down, close it, and open it again from disk without running
    anything: in the same page (``docmanager:open``), or by loading Lab afresh in a new workspace
    (``reload_workspace``). Waits for the new kernel to be idle and for every widget output to
    have finished loading."""
    page.evaluate("""async () => {
      const w = window.jupyterapp.shell.currentWidget;
      await w.sessionContext.shutdown();
      w.dispose();
    }""")
    if reload_workspace is not None:
        page.goto(lab.url(relpath, reload_workspace))
    else:
        assert command(page, "docmanager:open", {"path": relpath, "factory": "Notebook"}) == "ok"
    wait_kernel_ready(page, relpath, lab)
    wait_outputs_settled(page)


def wait_outputs_settled(page, timeout_ms: int = 30_000) -> None:
    """Until no widget output says "Loading widget..." (the renderer's text while it waits)."""
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return !w.node.innerText.includes('Loading widget...'); }",
        timeout=timeout_ms,
        polling=200,
    )
    page.wait_for_timeout(300)


def restart_kernel(page) -> None:
    """Restart the notebook's kernel as Kernel ▸ Restart does (without its confirmation dialog)
    and wait until the new kernel is idle."""
    page.evaluate(
        "async () => { await window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart(); }"
    )
    page.wait_for_function(
        "() => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;"
        " return k.connectionStatus === 'connected' && k.status === 'idle'; }",
        timeout=60_000,
    )


def screenshot_notebook(page, path: Path) -> Path:
    """The whole notebook, legible: sidebars collapsed, the viewport as tall as the notebook."""
    page.evaluate(
        "() => { const s = window.jupyterapp.shell; s.collapseLeft && s.collapseLeft();"
        " s.collapseRight && s.collapseRight(); }"
    )
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


# ------------------------------------------------------------------------------------ labs: DOM side

#: The live roots of the current notebook, in document order.
LIVE_ROOTS = ".jp-NotebookPanel .specdec-lab"

# Collects, below widget model `m`, each control's synced attributes and each readout's value
# into `lab` (shared by LAB_MODELS and LAB_MODEL).
_WALK = """const walk = async (m, lab) => {
    for (const c of (m.get('_dom_classes') || [])) {
      let hit;
      if ((hit = c.match(/^lab-control-(.+)$/))) {
        const o = {};
        for (const a of ['value', 'min', 'max', 'step', 'base', 'index', '_options_labels',
                         'disabled', 'description', 'readout_format']) {
          const v = m.get(a); if (v !== undefined) o[a] = v;
        }
        o.model = m.get('_model_name');
        lab.controls[hit[1]] = o;
      } else if ((hit = c.match(/^lab-text-(.+)$/))) {
        lab.texts[hit[1]] = m.get('value');
      }
    }
    const ch = m.get('children');
    if (Array.isArray(ch)) for (const c of ch) if (c && c.get) await walk(c, lab);
  };"""

# The widget models behind every live lab root, in notebook order (the same order as LIVE_ROOTS):
# for each, its name and, per control, the synced model attributes. Read through the widget
# manager of ipywidgets' Lab renderer, so values are the exact numbers the kernel holds.
LAB_MODELS = """async () => {
  const w = window.jupyterapp.shell.currentWidget;
  const findRenderer = (x) => {
    if (!x) return null;
    if (x._manager && x._manager.promise) return x;
    for (const k of (x.widgets || [])) { const r = findRenderer(k); if (r) return r; }
    return null;
  };
  let manager = null;
  for (const cell of w.content.widgets) {
    if (cell.model.type === 'code' && cell.outputArea) {
      const r = findRenderer(cell.outputArea);
      if (r) { manager = await r._manager.promise; break; }
    }
  }
  if (!manager) return [];
  const labs = [];
  ${WALK}
  for (const cell of w.content.widgets) {
    if (cell.model.type !== 'code') continue;
    for (const o of cell.model.outputs.toJSON()) {
      const d = o.data && o.data['application/vnd.jupyter.widget-view+json'];
      if (!d || !d.model_id) continue;
      let m;
      try { m = await manager.get_model(d.model_id); } catch (e) { continue; }
      const classes = m.get('_dom_classes') || [];
      if (!classes.includes('specdec-lab')) continue;
      const name = classes.filter((c) => c.startsWith('lab-') && c !== 'lab-impossible')
                          .map((c) => c.slice(4))[0];
      const lab = {name, model_id: d.model_id, controls: {}, texts: {}};
      await walk(m, lab);
      labs.push(lab);
    }
  }
  window.__specdecLabs = {manager, ids: labs.map((l) => l.model_id)};
  return labs;
}""".replace("${WALK}", _WALK)

# The same for live root `i` only, through the manager and root ids LAB_MODELS left in the page.
LAB_MODEL = """async (i) => {
  const cache = window.__specdecLabs;
  if (!cache || !cache.ids[i]) return null;
  const m = await cache.manager.get_model(cache.ids[i]);
  ${WALK}
  const lab = {model_id: cache.ids[i], controls: {}, texts: {}};
  await walk(m, lab);
  return lab;
}""".replace("${WALK}", _WALK)

# Per readout of live root `i`: its innerHTML as the browser normalizes it, its innerText, and
# whether it is visible. The expected HTML is normalized the same way (parsed by the browser).
READ_TEXTS = """([i, expected]) => {
  const root = document.querySelectorAll('.jp-NotebookPanel .specdec-lab')[i];
  if (!root) return {missing: true};
  const norm = (h) => { const d = document.createElement('div'); d.innerHTML = h; return d.innerHTML; };
  const out = {};
  for (const el of root.querySelectorAll('[class*="lab-text-"]')) {
    const key = [...el.classList].find((c) => c.startsWith('lab-text-')).slice(9);
    const content = el.querySelector('.widget-html-content') || el;
    out[key] = {html: content.innerHTML, text: el.innerText,
                visible: el.getClientRects().length > 0 || getComputedStyle(el).display !== 'none'};
  }
  const want = {};
  for (const [k, v] of Object.entries(expected || {})) want[k] = norm(v);
  let same = true;
  for (const [k, v] of Object.entries(want)) if (!out[k] || out[k].html !== v) same = false;
  for (const k of Object.keys(out)) if (!(k in want)) same = false;
  return {same, got: out, want};
}"""


def lab_models(page) -> list[dict]:
    return page.evaluate(LAB_MODELS)


def lab_model(page, index: int) -> dict:
    """The synced model attributes of live root `index` (fast: one lab, cached manager)."""
    res = page.evaluate(LAB_MODEL, index)
    return res if res is not None else lab_models(page)[index]


def live_roots(page):
    return page.locator(LIVE_ROOTS)


def lab_names_in_page(page) -> list[str]:
    return page.evaluate("""() => [...document.querySelectorAll('.jp-NotebookPanel .specdec-lab')]
      .map((r) => [...r.classList].filter((c) => c.startsWith('lab-') && c !== 'lab-impossible')
      .map((c) => c.slice(4))[0])""")


def text_html(value) -> str:
    """What the lab puts in a readout for a ``texts()`` value (the documented contract: plain text
    escaped with newlines as line breaks; an ``Html`` value verbatim)."""
    from specdec_core.labs.base import Html

    if isinstance(value, Html):
        return str(value)
    return html.escape(str(value)).replace("\n", "<br>")


WAIT_TEXTS = f"""([i, expected]) => {{
  const res = ({READ_TEXTS})([i, expected]);
  return res.same ? res : false;
}}"""


def wait_texts(page, index: int, texts: dict, what: str, timeout_ms: int = UPDATE_TIMEOUT_MS) -> None:
    """Until live root `index` shows exactly `texts` (``texts(state)`` of the lab), or fail with
    the difference. Waits in the page (checked every animation frame), not by polling from here."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    expected = {k: text_html(v) for k, v in texts.items()}
    try:
        res = page.wait_for_function(
            WAIT_TEXTS, arg=[index, expected], polling="raf", timeout=timeout_ms
        ).json_value()
    except PlaywrightTimeout:
        res = page.evaluate(READ_TEXTS, [index, expected])
    if res.get("same"):
        # An empty readout is hidden by the lab (a message said once, no lone placeholder).
        bad = [k for k, v in res["got"].items() if not v["visible"] and expected.get(k)]
        assert not bad, f"{what}: readouts not visible: {bad}"
        return
    diff = {
        k: (res["got"].get(k, {}).get("html"), v)
        for k, v in res.get("want", {}).items()
        if res["got"].get(k, {}).get("html") != v
    }
    extra = sorted(set(res.get("got", {})) - set(expected))
    pytest.fail(
        f"{what}: the readouts do not show texts(state) after {timeout_ms} ms.\n"
        f"  (shown, expected) per key: {diff}\n  readouts not in texts(): {extra}",
        pytrace=False,
    )


# ------------------------------------------------------------------------------------ labs: Python side


def _lab_modules():
    import specdec_core.labs as labs_pkg

    yield labs_pkg
    for info in pkgutil.iter_modules(labs_pkg.__path__):
        if info.name != "base":
            yield importlib.import_module(f"specdec_core.labs.{info.name}")


def find_specs() -> dict:
    """Every ``LabSpec`` the library defines, by name: module-level ``LabSpec`` objects of
    ``specdec_core.labs.*`` and the results of their zero-argument ``*_spec()`` factories, or a
    registry the package exports (``SPECS`` / ``spec_for``)."""
    import inspect

    from specdec_core.labs.base import LabSpec

    specs: dict = {}
    for mod in _lab_modules():
        registry = getattr(mod, "SPECS", None)
        if isinstance(registry, dict):
            for v in registry.values():
                if isinstance(v, LabSpec):
                    specs.setdefault(v.name, v)
        for attr, v in vars(mod).items():
            if isinstance(v, LabSpec):
                specs.setdefault(v.name, v)
            elif attr.endswith("_spec") and inspect.isfunction(v) and v.__module__ == mod.__name__:
                try:
                    sig = inspect.signature(v)
                    if all(p.default is not p.empty for p in sig.parameters.values()):
                        s = v()
                        if isinstance(s, LabSpec):
                            specs.setdefault(s.name, s)
                except Exception:  # a factory that needs arguments is not a default spec
                    pass
    return specs


def resolve_spec(name: str, model: dict, specs: dict | None = None):
    """The ``LabSpec`` behind a live lab: a registered spec of that name, or (for labs built per
    item, e.g. one quiz per question) ``specdec_core.labs.spec_for(name, texts)`` if the package
    offers it. ``None`` if the library has no such lab (the caller fails with a message)."""
    import specdec_core.labs as labs_pkg

    finder = getattr(labs_pkg, "spec_for", None)
    if finder is not None:
        try:
            s = finder(name, model.get("texts", {}))
        except TypeError:
            s = finder(name)
        if s is not None:
            return s
    specs = find_specs() if specs is None else specs
    return specs.get(name)


class LabModel:
    """The lab's state machine, replayed in the test process: what ``Lab`` does in the kernel
    (control values; actions ``state.update(fn(state))``), so that ``spec.texts(state)`` gives
    the texts the browser must show."""

    def __init__(self, spec, initial_controls: dict):
        self.spec = spec
        self.state = dict(spec.defaults)
        for key, info in initial_controls.items():
            if key in spec.controls:
                self.state[key] = self.value_of(key, info)

    def value_of(self, key: str, info: dict):
        """A control's value from its synced model attributes (selections sync only an index)."""
        c = self.spec.controls[key]
        if c.kind in ("dropdown", "toggle", "radio"):
            idx = info.get("index")
            return None if idx is None else c.options[idx][1]
        if c.kind == "int":
            return int(info["value"])
        if c.kind == "float":
            return float(info["value"])
        return info["value"]

    def press(self, key: str) -> None:
        self.state.update(self.spec.actions[key].fn(dict(self.state)))

    def texts(self) -> dict:
        return self.spec.texts(dict(self.state))

    def problem(self):
        return self.spec.problem(dict(self.state)) if self.spec.problem is not None else None


# ------------------------------------------------------------------------------------ labs: driving


def root(page, index: int):
    return live_roots(page).nth(index)


def control_targets(spec, key: str, info: dict) -> list[tuple[str, object]]:
    """(label, target) for a control: its minimum, maximum and one middle value. Targets are
    model-side: a number for sliders, an option index for selections, a bool for checkboxes."""
    c = spec.controls[key]
    if c.kind in ("int", "float"):
        lo, hi, step = c.lo, c.hi, c.step
        n = round((hi - lo) / step)
        mid = lo + (n // 2) * step
        if c.kind == "int":
            lo, hi, mid = int(lo), int(hi), int(mid)
        else:
            mid = float(repr_round(mid))
        return [("min", lo), ("max", hi), ("middle", mid)]
    if c.kind in ("dropdown", "toggle", "radio"):
        n = len(c.options)
        return [("first", 0), ("last", n - 1), ("middle", n // 2)]
    if c.kind == "checkbox":
        return [("off", False), ("on", True), ("off again", False)]
    raise AssertionError(f"unknown control kind {c.kind!r}")


def repr_round(x: float) -> str:
    """The shortest decimal text of a grid value (lo + k·step accumulates float error)."""
    for digits in range(1, 17):
        t = f"{x:.{digits}g}"
        if abs(float(t) - x) <= 1e-12 * max(1.0, abs(x)):
            return t
    return repr(x)


def set_control(page, index: int, spec, key: str, target) -> None:
    """Move control `key` of live root `index` to `target` the way a learner would."""
    c = spec.controls[key]
    ctl = root(page, index).locator(f".lab-control-{key}")
    # (Playwright scrolls a control into view itself before a click or a fill.)
    if c.kind in ("int", "float"):
        if target in (c.lo, c.hi):
            ctl.locator(".noUi-handle").first.focus()
            page.keyboard.press("Home" if target == c.lo else "End")
        else:  # the slider's own readout is an editable text box: replace its text, Enter
            readout = ctl.locator(".widget-readout")
            readout.fill(repr_round(target) if c.kind == "float" else str(target))
            readout.press("Enter")
    elif c.kind == "dropdown":
        ctl.locator("select").select_option(index=target)
    elif c.kind == "toggle":
        ctl.locator("button").nth(target).click()
    elif c.kind == "radio":
        ctl.locator("input[type=radio]").nth(target).check()
    elif c.kind == "checkbox":
        box = ctl.locator("input[type=checkbox]")
        if box.is_checked() != target:
            box.click()
    else:
        raise AssertionError(f"unknown control kind {c.kind!r}")


def wait_control(page, index: int, model: LabModel, key: str, target, timeout_ms: int = 10_000):
    """Until the control's synced model holds `target`; returns the value as the kernel sees it."""
    c = model.spec.controls[key]
    deadline = time.monotonic() + timeout_ms / 1000
    info = None
    while time.monotonic() < deadline:
        info = lab_model(page, index)["controls"][key]
        if c.kind in ("dropdown", "toggle", "radio"):
            if info.get("index") == target:
                return model.value_of(key, info)
        elif c.kind == "checkbox":
            if info.get("value") is target:
                return True if target else False
        elif abs(float(info["value"]) - float(target)) <= 1e-9 * max(1.0, abs(float(target))):
            return model.value_of(key, info)
        page.wait_for_timeout(50)
    pytest.fail(f"control {key}: never reached {target!r} (model: {info})", pytrace=False)


def press_action(page, index: int, key: str) -> None:
    # (click() scrolls the button into view itself, as for the other controls)
    root(page, index).locator(f".lab-control-{key}").click()


def figure_state(page, index: int) -> dict:
    """The figure of live root `index`: present, its src (to see it change), natural and shown
    size, and whether the root is marked impossible."""
    return page.evaluate(
        """(i) => {
      const r = document.querySelectorAll('.jp-NotebookPanel .specdec-lab')[i];
      const img = r.querySelector('.lab-figure');
      const out = {impossible: r.classList.contains('lab-impossible'), present: !!img};
      if (img) {
        const b = img.getBoundingClientRect();
        Object.assign(out, {src: img.src.length + ':' + img.src.slice(-64), natural: [img.naturalWidth, img.naturalHeight],
                            shown: [Math.round(b.width), Math.round(b.height)],
                            opacity: getComputedStyle(img).opacity});
      }
      return out;
    }""",
        index,
    )


GREY_SHARE = """async (i) => {
  const r = document.querySelectorAll('.jp-NotebookPanel .specdec-lab')[i];
  const img = r.querySelector('.lab-figure');
  if (!img || !img.naturalWidth) return null;
  if (!img.complete) await new Promise((ok) => img.addEventListener('load', ok, {once: true}));
  const c = document.createElement('canvas');
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  let grey = 0;
  for (let k = 0; k < d.length; k += 4)
    if (Math.abs(d[k] - 238) <= 2 && Math.abs(d[k + 1] - 238) <= 2 && Math.abs(d[k + 2] - 238) <= 2) grey++;
  return grey / (d.length / 4);
}"""


def figure_grey_share(page, index: int) -> float | None:
    """Share of the shown figure's pixels in the greyed frame's colour (#eeeeee) of
    ``plots.frames.message_png``: ≈ 1 for the "impossible" frame, ≈ 0 for a plot."""
    return page.evaluate(GREY_SHARE, index)


# ------------------------------------------------------------------------------------ layout checks

# Everything that overflows the output area holding a live lab or a static copy (at the current
# viewport), and every element that clips its own content (an `overflow` other than visible with
# content wider than its box: a readout cut to "81" for 8192, a label cut mid-word).
OVERFLOW = """async (only) => {
  const problems = [];
  const frame = () => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
  const desc = (el) => {
    const cls = [...el.classList].filter((c) => c.startsWith('lab-') || c.startsWith('widget-')).join('.');
    return `${el.tagName.toLowerCase()}${cls ? '.' + cls : ''} "${(el.innerText || el.value || '').slice(0, 30)}"`;
  };
  let areas = [...document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea-output')]
    .filter((o) => o.querySelector('.specdec-lab, .lab-static'));
  if (only !== null) {   // the output area of live root `only`
    const r = document.querySelectorAll('.jp-NotebookPanel .specdec-lab')[only];
    areas = areas.filter((o) => o.contains(r));
  }
  for (const o of areas) {
    o.scrollIntoView({block: 'nearest'});   // Lab skips laying out cells out of view
    await frame();
    const lab = o.querySelector('.specdec-lab, .lab-static');
    const name = [...lab.classList].filter((c) => c.startsWith('lab-') && c !== 'lab-impossible').join(' ');
    if (o.getClientRects().length === 0) continue;           // hidden (e.g. a static copy under a live lab)
    if (getComputedStyle(lab).display === 'none') continue;
    if (o.scrollWidth > o.clientWidth + 1)
      problems.push(`${name}: output area scrolls (${o.scrollWidth} > ${o.clientWidth} px)`);
    const box = o.getBoundingClientRect();
    for (const el of o.querySelectorAll('*')) {
      if (['STYLE', 'SCRIPT', 'BR'].includes(el.tagName)) continue;
      const s = getComputedStyle(el);
      if (s.display === 'none' || s.visibility === 'hidden') continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.right > box.right + 1 || r.left < box.left - 1)
        problems.push(`${name}: ${desc(el)} spans x ${Math.round(r.left)}..${Math.round(r.right)}, output area ${Math.round(box.left)}..${Math.round(box.right)}`);
      const clips = ['hidden', 'clip', 'scroll', 'auto'].includes(s.overflowX) || s.textOverflow === 'ellipsis';
      if (clips && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
        problems.push(`${name}: ${desc(el)} clips its content (${el.scrollWidth} > ${el.clientWidth} px)`);
    }
  }
  return {areas: areas.length, problems};
}"""


def overflow_problems(page, index: int | None = None) -> dict:
    """Layout problems of every lab output area (or only live root `index`'s)."""
    return page.evaluate(OVERFLOW, index)


def output_area_widths(page) -> list[int]:
    return page.evaluate("""() => [...document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea-output')]
      .filter((o) => o.querySelector('.specdec-lab, .lab-static') && o.getClientRects().length)
      .map((o) => o.clientWidth)""")


# ------------------------------------------------------------------------------------ the walk

#: Texts that must never be on the page: ipywidgets' errors and raw widget reprs.
FORBIDDEN_TEXT = ("Error displaying widget", "model not found", "VBox(children=", "Loading widget...")


@dataclass
class WalkReport:
    """What one notebook's walk did (printed by the tests, used by nobody else)."""

    notebook: str
    labs: list = field(default_factory=list)  # names, in page order
    events: int = 0
    seconds: dict = field(default_factory=dict)
    allowed_console: list = field(default_factory=list)
    output_area_px: list = field(default_factory=list)  # widths of the labs' output areas


def visible_count(page, selector: str) -> int:
    """How many elements match and are rendered (not display:none / visibility:hidden, checked
    through their ancestors too); cells scrolled out of view still count (Lab skips painting
    them with content-visibility, which is not hiding)."""
    return page.evaluate(
        """(sel) => [...document.querySelectorAll(sel)]
      .filter((el) => el.checkVisibility({visibilityProperty: true})).length""",
        selector,
    )


def visible_count_in(page, index: int, selector: str) -> int:
    return page.evaluate(
        """([i, sel]) => [...document.querySelectorAll('.jp-NotebookPanel .specdec-lab')[i]
      .querySelectorAll(sel)].filter((el) => el.checkVisibility({visibilityProperty: true})).length""",
        [index, selector],
    )


def saved_state_report(path: Path) -> str:
    """Which widget outputs of the saved notebook have their model in its saved widget state."""
    nb = json.loads(path.read_text())
    state = (
        nb["metadata"]
        .get("widgets", {})
        .get("application/vnd.jupyter.widget-state+json", {})
        .get("state", {})
    )
    lines = [f"saved file: {len(state)} models in metadata.widgets"]
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            d = out.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            if d:
                lines.append(
                    f"  cell {i}: {d['model_id']} {'in' if d['model_id'] in state else 'NOT in'} the saved state"
                )
    return "\n".join(lines)


#: The forbidden texts that a learner can see: in a text node whose element is rendered (not
#: display:none through any ancestor). Cells outside the viewport still count (Lab skips painting
#: them with content-visibility, which checkVisibility does not treat as hidden by default).
VISIBLE_FORBIDDEN = """(forbidden) => {
  const found = new Set();
  const walker = document.createTreeWalker(window.jupyterapp.shell.currentWidget.node, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const hits = forbidden.filter((f) => node.nodeValue.includes(f));
    if (hits.length && node.parentElement.checkVisibility({visibilityProperty: true})) {
      hits.forEach((f) => found.add(f));
    }
  }
  return [...found];
}"""


def check_no_forbidden_text(page, where: str) -> None:
    """No ipywidgets error or raw repr is visible. A widget output that failed to render is hidden
    by the static copy's CSS (specdec_core/labs/base.py, ``_STATIC_CSS``), so the learner sees the
    static copy; such a hidden error is not a failure, a visible one is."""
    found = page.evaluate(VISIBLE_FORBIDDEN, list(FORBIDDEN_TEXT))
    assert not found, f"{where}: the notebook shows {found}"


def check_static_copies(page, names, where: str, fallback_ok: bool = True) -> None:
    """Every lab of `names` is readable without a live kernel: its live root rendered (from saved
    widget state), or its static copy visible, or the friendly plain-text fallback."""
    for name in set(names):
        deadline = time.monotonic() + 10
        while True:  # Lab attaches the outputs of far-down cells a moment after the first ones
            shown = visible_count(page, f".jp-NotebookPanel .lab-static-{name}") + visible_count(
                page, f".jp-NotebookPanel .specdec-lab.lab-{name}"
            )
            friendly = 0 if shown else page.get_by_text(f"Interactive lab {name}").count()
            if shown or (fallback_ok and friendly) or time.monotonic() > deadline:
                break
            page.wait_for_timeout(200)
        assert shown or (fallback_ok and friendly), (
            f"{where}: lab {name!r}: no live lab, no visible static copy, no friendly fallback"
        )


def check_layout(page, where: str, index: int | None = None) -> None:
    res = overflow_problems(page, index)
    assert not res["problems"], f"{where}: elements overflow or clip:\n" + "\n".join(res["problems"])


def drive_lab(page, index: int, spec, hooks: dict, report: WalkReport, where: str) -> LabModel:
    """Every control of live root `index` to its min, max and a middle value, every action once,
    checking after each event that the readouts show ``texts(state)``, the figure is never stale
    (impossible state: greyed frame, class ``lab-impossible``) and nothing overflows."""
    info = lab_models(page)[index]
    model = LabModel(spec, info["controls"])
    missing = sorted(set(spec.controls) - set(info["controls"]))
    assert not missing, f"{where}: controls {missing} of the spec are not in the page"
    for key, c in spec.controls.items():  # starts exactly on the slider grid (no 0.501 snapping)
        try:
            c.check(model.state[key], key)
        except ValueError as exc:
            pytest.fail(f"{where}: control {key} starts at {model.state[key]!r}: {exc}", pytrace=False)
    wait_texts(page, index, model.texts(), f"{where} at the start")
    if hooks.get("start") is not None:
        hooks["start"](page, index, model, where)
    root(page, index).scroll_into_view_if_needed()
    _check_figure(page, index, model, f"{where} at the start")
    for key in spec.controls:
        for label, target in control_targets(spec, key, info["controls"][key]):
            shown = visible_count_in(page, index, f".lab-control-{key}") > 0
            expect_shown = key in visible_controls(spec, model.state)
            assert shown == expect_shown, (
                f"{where}: control {key} shown={shown}, but spec.hidden(state) says {not expect_shown}"
            )
            if not shown:  # hidden for this state: nothing to click
                continue
            what = f"{where}: {key} → {label} ({target!r})"
            set_control(page, index, spec, key, target)
            model.state[key] = wait_control(page, index, model, key, target)
            wait_texts(page, index, model.texts(), what)
            _check_figure(page, index, model, what)
            report.events += 1
            if label == "max":
                check_layout(page, what, index)
    if spec.problem is not None:
        reached = reach_impossible(page, index, model, report, where)
        assert reached or not hooks.get("require_impossible"), (
            f"{where}: no impossible state found from the controls' ends (the lab must show one)"
        )
    for key in spec.actions:
        if key in (hooks.get("skip_actions") or ()):
            continue
        press_action(page, index, key)
        model.press(key)
        wait_texts(page, index, model.texts(), f"{where}: action {key}")
        _check_figure(page, index, model, f"{where}: action {key}")
        report.events += 1
    if hooks.get("after") is not None:
        hooks["after"](page, index, model, where)
    check_layout(page, f"{where} after driving", index)
    return model


def visible_controls(spec, state) -> list[str]:
    hidden = set(spec.hidden(dict(state))) if spec.hidden is not None else set()
    return [k for k in spec.controls if k not in hidden]


def impossible_changes(model: LabModel) -> dict | None:
    """Control changes (key -> model-side target) that make ``problem(state)`` speak: one control
    to an end, else visible controls set to their minimum one after another (then maximum), else
    all at their minimum but one at its maximum."""
    spec = model.spec
    ends = {k: control_targets(spec, k, {})[:2] for k in spec.controls}
    base = dict(model.state)

    def value(key, target):
        c = spec.controls[key]
        return c.options[target][1] if c.kind in ("dropdown", "toggle", "radio") else target

    def bad(state):
        return spec.problem(dict(state)) is not None

    for key in visible_controls(spec, base):
        for _label, target in ends[key]:
            if bad({**base, key: value(key, target)}):
                return {key: target}
    for which in (0, 1):
        state, changes = dict(base), {}
        for key in visible_controls(spec, base):
            target = ends[key][which][1]
            state[key] = value(key, target)
            changes[key] = target
            if bad(state):
                return changes
    # every other control at its minimum and one at its maximum (e.g. no time for any step, at
    # γ ≥ 1: impossible, while γ = 0 with no speculative budget is valid plain decoding)
    for top in visible_controls(spec, base):
        state, changes = dict(base), {}
        for key in visible_controls(spec, base):
            if key != top:
                state[key], changes[key] = value(key, ends[key][0][1]), ends[key][0][1]
        state[top], changes[top] = value(top, ends[top][1][1]), ends[top][1][1]
        if bad(state):
            return changes
    return None


def reach_impossible(page, index: int, model: LabModel, report, where: str) -> bool:
    """Drive the lab into an impossible state (if its controls can reach one) and check the
    figure is the greyed message frame, not a stale plot; then come back to the state before."""
    changes = impossible_changes(model)
    if changes is None:
        return False
    spec, before = model.spec, dict(model.state)
    for key, target in changes.items():
        set_control(page, index, spec, key, target)
        model.state[key] = wait_control(page, index, model, key, target)
        report.events += 1
    what = f"{where}: impossible state {changes}"
    assert model.problem() is not None
    wait_texts(page, index, model.texts(), what)
    _check_figure(page, index, model, what)
    share = None
    deadline = time.monotonic() + UPDATE_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        share = figure_grey_share(page, index)
        if share is not None and share > 0.8:
            break
        page.wait_for_timeout(100)
    assert share is not None and share > 0.8, (
        f"{what}: the figure is not the greyed frame ({share} of its pixels are #eeeeee)"
    )
    if TAKE_SCREENSHOTS:
        root(page, index).screenshot(path=str(SCREENSHOTS / f"impossible-{model.spec.name}.png"))
    for key in reversed(list(changes)):  # back, in reverse order (hidden controls reappear)
        c = spec.controls[key]
        target = before[key]
        if c.kind in ("dropdown", "toggle", "radio"):
            target = [v for _, v in c.options].index(target)
        set_control(page, index, spec, key, target)
        model.state[key] = wait_control(page, index, model, key, target)
    wait_texts(page, index, model.texts(), f"{where}: back from the impossible state")
    _check_figure(page, index, model, f"{where}: back from the impossible state")
    return True


def _check_figure(page, index: int, model: LabModel, what: str) -> None:
    if model.spec.plot is None:
        return
    deadline = time.monotonic() + UPDATE_TIMEOUT_MS / 1000
    impossible = model.problem() is not None
    fig = figure_state(page, index)
    while fig["impossible"] != impossible and time.monotonic() < deadline:
        page.wait_for_timeout(50)
        fig = figure_state(page, index)
    assert fig["present"], f"{what}: no .lab-figure"
    assert fig["impossible"] == impossible, (
        f"{what}: lab-impossible is {fig['impossible']}, problem(state) says {model.problem()!r}"
    )
    if fig["shown"][0] and fig["natural"][0]:  # shown 1:1 (crisp), or scaled down to fit
        assert fig["shown"][0] <= fig["natural"][0] + 1, f"{what}: figure upscaled {fig}"


def walk_notebook(
    page,
    lab,
    relpath: str,
    expected: list[str],
    *,
    workspace: str,
    console: Console,
    hooks: dict | None = None,
    specs: dict | None = None,
    per_item: dict | None = None,
    run: list[int] | None = None,
    shots: Path | None = None,
) -> WalkReport:
    """The whole learner walk of one notebook (see tests/browser/test_browser_labs.py).

    `page` may be a blank page (Lab is loaded with the notebook) or a Lab with nothing open (the
    notebook is opened inside it: :func:`open_notebook`). The reopen step loads Lab afresh in
    `page`; it ends as a Lab showing the reopened notebook."""
    hooks = hooks or {}
    report = WalkReport(relpath)
    t0 = time.monotonic()
    open_notebook(page, lab, relpath, workspace)
    show_file_browser(page)
    wait_outputs_settled(page)
    report.seconds["open"] = round(time.monotonic() - t0, 1)
    # 1. First open, nothing run: friendly fallbacks and static copies, no raw reprs or errors.
    check_no_forbidden_text(page, f"{relpath} first open")
    check_static_copies(page, expected, f"{relpath} first open")
    # 2. Run All (or the cells that show labs, for a notebook too costly to run whole).
    t1 = time.monotonic()
    if run is None:
        run_all(page)
    else:
        run_cells(page, run)
    wait_outputs_settled(page)
    report.seconds["run"] = round(time.monotonic() - t1, 1)
    check_no_forbidden_text(page, f"{relpath} after running")
    names = lab_names_in_page(page)
    models = lab_models(page)
    report.labs = names
    assert [m["name"] for m in models] == names, f"DOM roots {names} vs widget models {models}"
    assert sorted(set(expected) - set(names)) == [], (
        f"{relpath}: labs {sorted(set(expected) - set(names))} expected but not shown (shown: {names})"
    )
    # The static copy of a live lab hides itself.
    for name in set(names):
        visible = visible_count(page, f".jp-NotebookPanel .lab-static-{name}")
        assert not visible, f"{relpath}: the static copy of {name} stays visible under the live lab"
    check_layout(page, f"{relpath} after running")
    report.output_area_px = sorted(set(output_area_widths(page)))
    # 3. Drive every lab.
    t1 = time.monotonic()
    all_specs = find_specs() if specs is None else specs
    for i, m in enumerate(models):
        if per_item and m["name"] in per_item:  # built per item (a question, recorded rounds)
            spec = per_item[m["name"]](m["texts"])
        else:
            spec = resolve_spec(m["name"], m, all_specs)
        assert spec is not None, f"{relpath}: no LabSpec named {m['name']!r} in specdec_core.labs"
        where = f"{relpath} lab {m['name']} #{i}"
        drive_lab(page, i, spec, hooks.get(m["name"], {}), report, where)
        if shots is not None:
            root(page, i).scroll_into_view_if_needed()
            root(page, i).screenshot(path=str(shots / f"{Path(relpath).stem}--{i}-{m['name']}.png"))
    report.seconds["drive"] = round(time.monotonic() - t1, 1)
    console.check(f"{relpath} while driving")
    # 4. Save while the labs are live (as autosave does), then restart the kernel: every live lab
    #    shows its note.
    t1 = time.monotonic()
    save(page)
    restart_kernel(page)
    for i, name in enumerate(names):
        note = root(page, i).locator(".lab-restart-note")
        try:
            note.wait_for(state="visible", timeout=10_000)
        except Exception:
            pytest.fail(
                f"{relpath} lab {name} #{i}: no visible .lab-restart-note after a kernel restart",
                pytrace=False,
            )
    if shots is not None and names:
        root(page, 0).scroll_into_view_if_needed()
        root(page, 0).screenshot(path=str(shots / f"{Path(relpath).stem}--restarted.png"))
    console.check(f"{relpath} after the kernel restart")
    report.seconds["restart"] = round(time.monotonic() - t1, 1)
    # 5. Close, reopen without running: no widget errors, every lab still readable.
    t1 = time.monotonic()
    # Reopened by loading Lab afresh (a learner coming back later). Reopening inside a loaded Lab
    # (close the tab, open the file again; or open it in another loaded Lab page: tried
    # 2026-12-02) races in ipywidgets' restore under load, logging "widget model not found"
    # (test_lab_smoke.py::test_reopen_in_the_same_page); a fresh Lab load has not, in any run.
    close_reopen(page, relpath, lab, reload_workspace=workspace + "-reopened")
    report.seconds["reopen"] = round(time.monotonic() - t1, 1)
    show_file_browser(page)
    try:
        check_no_forbidden_text(page, f"{relpath} reopened")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{saved_state_report(lab.root / relpath)}") from None
    check_static_copies(page, names, f"{relpath} reopened", fallback_ok=False)
    check_layout(page, f"{relpath} reopened")
    console.check(f"{relpath} reopened")
    if shots is not None and os.environ.get("SPECDEC_FULL_SCREENSHOTS") == "1":  # ≈3 s each
        screenshot_notebook(page, shots / f"{Path(relpath).stem}--reopened.png")
    report.allowed_console = list(console.allowed)
    report.seconds["total"] = round(time.monotonic() - t0, 1)
    return report

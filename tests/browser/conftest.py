"""Fixtures for the browser tests: one JupyterLab server and one headless Chromium per session.

- Chromium is Debian's (/usr/bin/chromium); no browser is ever downloaded. Without it the tests
  skip with a reason, unless SPECDEC_REQUIRE_BROWSER=1 (CI, see .ci/run), where they fail.
- The server (tests/browser/labserver.py) runs on loopback, on a temporary copy of notebooks/, with
  temporary Jupyter folders and the project's Lab settings (binder/overrides.json, as `make lab`).
- The notebook walks share one page (``lab_page``): each notebook is opened inside the Lab it
  already shows, as a learner opens a file (loading JupyterLab takes 5-6 s on 2 cores, opening a
  notebook inside it 2-3 s). The walk's reopen step still loads Lab afresh in that page (see
  ``labdriver.walk_notebook``). After each test every document is closed and its kernel shut
  down; after a failed test the page is replaced, so a failure does not leak into the next one.
- Teardown stops the server and every kernel it started: nothing is left behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from labdriver import CHROMIUM, CHROMIUM_ARGS, REQUIRE, SCREENSHOTS, TAKE_SCREENSHOTS, close_all, load_lab
from labserver import LabServer, api, start_lab_server

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the item (``item.rep_call``), so a fixture can see a failure."""
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


def _unavailable(reason: str):
    if REQUIRE:
        pytest.fail(f"SPECDEC_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(
        f"{reason} (install Debian's chromium: apt-get install chromium; "
        "set SPECDEC_REQUIRE_BROWSER=1 to make this a failure)"
    )


@pytest.fixture(scope="session")
def chromium_path() -> str:
    if not (CHROMIUM.exists() and os.access(CHROMIUM, os.X_OK)):
        _unavailable(f"no Chromium at {CHROMIUM}")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    return str(CHROMIUM)


@pytest.fixture(scope="session")
def browser(chromium_path, playwright_driver):
    """Chromium launched from the session's one Playwright driver (tests/conftest.py)."""
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    b = playwright_driver.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def page(browser):
    """A fresh page (its own browser context) for one test."""
    pg = _new_page(browser)
    try:
        yield pg
    finally:
        pg.context.close()


def _new_page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
    context.set_default_timeout(60_000)
    return context.new_page()


class SharedPage:
    """One page of the session's server, shared by the notebook walks (loaded on first use)."""

    def __init__(self, browser, lab):
        self.browser, self.lab, self.page = browser, lab, None

    def get(self):
        if self.page is None:
            self.page = _new_page(self.browser)
            load_lab(self.page, self.lab, "shared")
        return self.page

    def reset(self, failed: bool) -> None:
        """Close every document (kernels shut down); after a failure, or if closing fails, drop
        the page so the next test loads Lab afresh."""
        if self.page is None:
            return
        if not failed:
            try:
                close_all(self.page)
                return
            except Exception:  # noqa: BLE001 - a page in a bad state is replaced below
                pass
        self.close()

    def close(self) -> None:
        if self.page is not None:
            self.page.context.close()
        self.page = None


_SHARED: list[SharedPage] = []  # so the server's last test closes it before the server stops


@pytest.fixture(scope="session")
def shared_page(browser, lab_server):
    shared = SharedPage(browser, lab_server)
    _SHARED.append(shared)
    try:
        yield shared
    finally:
        shared.close()


@pytest.fixture
def lab_page(shared_page, lab, request):
    """A Lab page with nothing open, shared across tests (see the module docstring); cleaned up
    after the test (before the ``lab`` fixture shuts kernels down)."""
    yield shared_page.get()
    rep = getattr(request.node, "rep_call", None)
    shared_page.reset(failed=rep is None or rep.failed)


@pytest.fixture(scope="session")
def lab_server(chromium_path, tmp_path_factory) -> LabServer:
    lab = start_lab_server(tmp_path_factory.mktemp("lab"))
    try:
        yield lab
    finally:
        lab.stop()


@pytest.fixture
def lab(lab_server, request):
    """The server, for one test: afterwards every kernel it started is shut down (the idle server
    stays up for the next test; the session fixture stops it)."""
    yield lab_server
    for session in api(lab_server, "GET", "/api/sessions") or []:
        api(lab_server, "DELETE", f"/api/sessions/{session['id']}")
    for kernel in api(lab_server, "GET", "/api/kernels") or []:
        api(lab_server, "DELETE", f"/api/kernels/{kernel['id']}")
    # After the session's last browser test, stop the server now rather than at the very end of
    # the whole test run (the notebooks' nbval run comes later and the machine is small).
    browser_items = [i for i in request.session.items if i.get_closest_marker("browser")]
    if browser_items and request.node is browser_items[-1]:
        for shared in _SHARED:
            shared.close()
        lab_server.stop()


@pytest.fixture(scope="session")
def screenshots_dir() -> Path | None:
    """build/screenshots/ with SPECDEC_SCREENSHOTS=1 (labdriver.TAKE_SCREENSHOTS), else None."""
    if not TAKE_SCREENSHOTS:
        return None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS

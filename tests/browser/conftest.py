"""Fixtures for the browser tests: one JupyterLab server and one headless Chromium per session.

- Chromium is Debian's (/usr/bin/chromium); no browser is ever downloaded. Without it the tests
  skip with a reason, unless SPECDEC_REQUIRE_BROWSER=1 (CI, see .ci/run), where they fail.
- The server (tests/browser/labserver.py) runs on loopback, on a temporary copy of notebooks/, with
  temporary Jupyter folders and the project's Lab settings (binder/overrides.json, as `make lab`).
- Teardown stops the server and every kernel it started: nothing is left behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from labdriver import CHROMIUM, CHROMIUM_ARGS, REQUIRE, SCREENSHOTS, TAKE_SCREENSHOTS
from labserver import LabServer, api, start_lab_server

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)


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
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
    context.set_default_timeout(60_000)
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture(scope="session")
def lab_server(chromium_path, tmp_path_factory) -> LabServer:
    lab = start_lab_server(tmp_path_factory.mktemp("lab"))
    try:
        yield lab
    finally:
        lab.stop()


@pytest.fixture
def lab(lab_server, page, request):
    """The server, for one test: afterwards the page is closed and every kernel it started is shut
    down (the idle server stays up for the next test; the session fixture stops it)."""
    yield lab_server
    page.context.close()
    for session in api(lab_server, "GET", "/api/sessions") or []:
        api(lab_server, "DELETE", f"/api/sessions/{session['id']}")
    for kernel in api(lab_server, "GET", "/api/kernels") or []:
        api(lab_server, "DELETE", f"/api/kernels/{kernel['id']}")
    # After the session's last browser test, stop the server now rather than at the very end of
    # the whole test run (the notebooks' nbval run comes later and the machine is small).
    browser_items = [i for i in request.session.items if i.get_closest_marker("browser")]
    if browser_items and request.node is browser_items[-1]:
        lab_server.stop()


@pytest.fixture(scope="session")
def screenshots_dir() -> Path | None:
    """build/screenshots/ with SPECDEC_SCREENSHOTS=1 (labdriver.TAKE_SCREENSHOTS), else None."""
    if not TAKE_SCREENSHOTS:
        return None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS

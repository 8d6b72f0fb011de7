"""Chromium for the site and Binder tests, set up exactly as the "browser" helper's tests do: the
path and args come from tests/browser/conftest.py (imported, not copied). Without Chromium or
playwright a test skips with a reason, unless SPECDEC_REQUIRE_BROWSER=1 (CI), where it fails."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import sys
from pathlib import Path

import pytest

BROWSER_DIR = Path(__file__).resolve().parent / "browser"
REQUIRE = os.environ.get("SPECDEC_REQUIRE_BROWSER") == "1"


@functools.cache
def browser_conftest():
    if str(BROWSER_DIR) not in sys.path:
        sys.path.insert(0, str(BROWSER_DIR))
    spec = importlib.util.spec_from_file_location("specdec_browser_conftest", BROWSER_DIR / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def unavailable(reason: str):
    if REQUIRE:
        pytest.fail(f"SPECDEC_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(f"{reason} (install Debian's chromium; SPECDEC_REQUIRE_BROWSER=1 makes this a failure)")


@contextlib.contextmanager
def chromium(driver=None):
    """A headless Debian Chromium (playwright Browser), closed on exit, launched from ``driver``
    (the session's Playwright, fixture ``playwright_driver`` in tests/conftest.py) or, without
    one, from a Playwright of its own (only when no other is running in this thread)."""
    conf = browser_conftest()
    path, args = Path(conf.CHROMIUM), list(conf.CHROMIUM_ARGS)
    if not (path.exists() and os.access(path, os.X_OK)):
        unavailable(f"no Chromium at {path}")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        unavailable("the playwright Python package is not installed")
    expect.set_options(timeout=60_000)
    with contextlib.ExitStack() as stack:
        pw = driver if driver is not None else stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=str(path), headless=True, args=args)
        try:
            yield browser
        finally:
            browser.close()

"""Fixtures shared by every folder of tests.

One Playwright driver for the whole test session. Playwright's sync API runs an event loop in this
thread, so a second ``sync_playwright()`` started while the first is still open fails ("using
Playwright Sync API inside the asyncio loop"). The browser tests (tests/browser/), the site tests
and the Binder rehearsal therefore all launch Chromium from this one driver.

The tiny random-weight GGUF of :mod:`specdec_core.llm.testing` is written once per session
(``tiny_gguf``); each test module loads its own model from it (``lm``), so no state crosses modules.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def playwright_driver():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("SPECDEC_REQUIRE_BROWSER") == "1":
            pytest.fail(
                "SPECDEC_REQUIRE_BROWSER=1 but the playwright package is not installed", pytrace=False
            )
        pytest.skip("the playwright Python package is not installed")
    driver = sync_playwright().start()
    try:
        yield driver
    finally:
        driver.stop()


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory):
    """(path, dequantized weights in Hugging Face layout) of the tiny GGUF, written once."""
    from specdec_core.llm.testing import write_tiny_gguf

    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    return path, write_tiny_gguf(path)


@pytest.fixture(scope="module")
def lm(tiny_gguf):
    """The tiny model, loaded for this test module."""
    from specdec_core.llm import load_model

    return load_model(str(tiny_gguf[0]), cache=False)

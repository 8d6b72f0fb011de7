"""Notebook 03 in JupyterLab: run all, click the round stepper's "next" a few times and check the
counters text after every click against the library."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from labdriver import notebook_contract, open_notebook, run_all, screenshot_notebook

NOTEBOOK = "notebooks/03-one-round-step-by-step.ipynb"
CLICKS = 5


@pytest.fixture(scope="session")  # session: set up before (and so instead of) the Lab server
def contract():
    return notebook_contract(NOTEBOOK, "specdec_core.widgets.stepper")


def test_next_button_updates_counters(contract, lab, page, screenshots_dir):
    records = contract.demo_records()
    open_notebook(page, lab, NOTEBOOK, "nb03")
    run_all(page)

    stepper = page.locator(".jp-OutputArea-output", has=page.locator(".specdec-counters")).first
    counters = stepper.locator(".specdec-counters")
    nxt = stepper.locator(".specdec-step-next")
    expect(counters).to_have_text(contract.counters_text(records, 0))
    seen = {contract.counters_text(records, 0)}
    for n in range(1, CLICKS + 1):
        nxt.click()
        expected = contract.counters_text(records, n)
        expect(counters).to_have_text(expected)
        seen.add(expected)
    assert len(seen) > 2, "the clicks should have moved the counters"

    stepper.scroll_into_view_if_needed()
    stepper.screenshot(path=str(screenshots_dir / "03-stepper-after-clicks.png"))
    screenshot_notebook(page, screenshots_dir / "03-one-round-step-by-step.png")

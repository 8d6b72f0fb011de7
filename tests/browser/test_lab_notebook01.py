"""Notebook 01 in JupyterLab: run all, move the first q slider one step with the keyboard, and check
that the displayed α and per-symbol acceptance become exactly what the library computes."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from labdriver import notebook_contract, open_notebook, run_all, screenshot_notebook

NOTEBOOK = "notebooks/01-proposals-and-acceptance.ipynb"


@pytest.fixture(scope="session")  # session: set up before (and so instead of) the Lab server
def contract():
    return notebook_contract(NOTEBOOK, "specdec_core.widgets.acceptance")


def _readouts(explorer, css):
    texts = explorer.locator(f".{css} .widget-readout").all_text_contents()
    return [float(t) for t in texts]


def test_q_slider_updates_alpha_and_acceptance(contract, lab, page, screenshots_dir):
    open_notebook(page, lab, NOTEBOOK, "nb01")
    run_all(page)

    # The output that holds the explorer (the notebook may show other widgets too).
    explorer = page.locator(".jp-OutputArea-output", has=page.locator(".specdec-alpha")).first
    alpha = explorer.locator(".specdec-alpha")
    acceptance = explorer.locator(".specdec-acceptance")
    expect(alpha).to_be_attached()
    explorer.scroll_into_view_if_needed()

    p = _readouts(explorer, "specdec-p-slider")
    q = _readouts(explorer, "specdec-q-slider")
    assert len(p) == len(q) >= 3
    assert (tuple(p), tuple(q)) == (contract.DEFAULT_P_WEIGHTS, contract.DEFAULT_Q_WEIGHTS)
    before = contract.acceptance_texts(p, q)
    expect(alpha).to_have_text(before["alpha"])
    expect(acceptance).to_have_text(before["acceptance"])

    # One keyboard step on the first q handle.
    explorer.locator(".specdec-q-slider .noUi-handle").first.focus()
    page.keyboard.press("ArrowRight")
    moved = round(q[0] + contract.SLIDER_STEP, 10)
    expect(explorer.locator(".specdec-q-slider .widget-readout").first).to_have_text(f"{moved:.2f}")
    after = contract.acceptance_texts(p, [moved, *q[1:]])
    assert after != before, "the test step must change the displayed values"
    expect(alpha).to_have_text(after["alpha"])
    expect(acceptance).to_have_text(after["acceptance"])
    # The readout now agrees with what the texts were computed from.
    assert _readouts(explorer, "specdec-q-slider") == [moved, *q[1:]]

    explorer.scroll_into_view_if_needed()
    explorer.screenshot(path=str(screenshots_dir / "01-explorer-after-step.png"))
    screenshot_notebook(page, screenshots_dir / "01-proposals-and-acceptance.png")

"""Smoke test of the browser harness itself, independent of the course notebooks: JupyterLab opens a
small temporary notebook, runs it, renders a widget, and a keyboard move of a slider handle reaches
the kernel and comes back as new text."""
from __future__ import annotations

import nbformat
from playwright.sync_api import expect

from labdriver import open_notebook, run_all

SMOKE_CELLS = [
    "import ipywidgets as w\n"
    "slider = w.IntSlider(value=3, min=0, max=10, description='n')\n"
    "slider.add_class('smoke-slider')\n"
    "square = w.HTML(value='square = 9')\n"
    "square.add_class('smoke-square')\n"
    "slider.observe(lambda ch: setattr(square, 'value', f\"square = {ch['new'] ** 2}\"), names='value')\n"
    "w.VBox([slider, square])",
    "print('ready', 6 * 7)",
]


def test_lab_runs_a_notebook_and_a_slider_reaches_the_kernel(lab, page):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in SMOKE_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (lab.root / "_smoke").mkdir(exist_ok=True)
    nbformat.write(nb, lab.root / "_smoke" / "smoke.ipynb")

    open_notebook(page, lab, "_smoke/smoke.ipynb", "smoke")
    run_all(page)
    expect(page.locator(".jp-OutputArea-output").filter(has_text="ready 42")).to_have_count(1)
    square = page.locator(".smoke-square")
    expect(square).to_have_text("square = 9")
    page.locator(".smoke-slider .noUi-handle").first.focus()
    page.keyboard.press("ArrowRight")
    expect(square).to_have_text("square = 16")
    expect(page.locator(".smoke-slider .widget-readout")).to_have_text("4")

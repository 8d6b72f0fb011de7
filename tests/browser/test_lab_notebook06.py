"""Notebook 06 in JupyterLab: the KV calculator and the roofline lab walked the way a learner uses
them (labdriver.walk_notebook): first open shows the static copies, Run All, every control to its
minimum, maximum and a middle value with every readout checked against ``texts(state)`` computed
in this process, nothing overflowing an 800 px output area (1280 px window, file browser open),
the restart note after a kernel restart, and save → close → reopen without widget errors."""
from __future__ import annotations

from labdriver import Console, walk_notebook

NOTEBOOK = "notebooks/06-speculation-state.ipynb"


def test_notebook06_labs(lab, page, screenshots_dir):
    console = Console().attach(page)
    report = walk_notebook(page, lab, NOTEBOOK, ["kv", "roofline"], workspace="nb06",
                           console=console, shots=screenshots_dir)
    assert {"kv", "roofline"} <= set(report.labs)
    assert report.events >= 3 * 8
    print(report)

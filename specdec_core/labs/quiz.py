"""The self-check quiz every notebook ends with, built on the lab protocol.

``show_quiz(question)`` displays the live quiz (options, a Check button, feedback with ✓/✗) and
its static copy (the question, options and a collapsed answer), which hides itself under a
live quiz, through the same :func:`~specdec_core.labs.base.show` as every lab. Questions live
in :mod:`specdec_core.questions`; this module only renders them.

State: ``choice`` (the selected option index, or None), ``graded`` (the choice last checked)
and ``checks`` (how many times Check was pressed; 0 = no feedback yet).
"""

from __future__ import annotations

import html

from ..questions import Question, grade
from .base import Action, Html, Lab, LabSpec, radio, show

#: The one home of a quiz's default state: nothing chosen, nothing checked.
DEFAULTS = {"choice": None, "graded": None, "checks": 0}


def quiz_texts(question: Question, state) -> dict:
    """``"prompt"`` (HTML: "Self-check." in bold, then the escaped prompt) and ``"feedback"``
    (empty before the first Check; ✓/✗, never emoji)."""
    feedback = ""
    if state["checks"]:
        ok, text = grade(question, state["graded"])
        mark = "✓ " if ok else ("✗ " if state["graded"] is not None else "")
        feedback = mark + text
    return {"prompt": Html(f"<b>Self-check.</b> {html.escape(question.prompt)}"), "feedback": feedback}


def static_quiz_html(question: Question) -> str:
    """The question as plain HTML with the answer in a collapsed <details>."""
    opts = "".join(f"<li>{html.escape(o)}</li>" for o in question.options)
    ans = html.escape(question.options[question.answer])
    return (
        f"<p><b>Self-check.</b> {html.escape(question.prompt)}</p><ol type='a'>{opts}</ol>"
        f"<details><summary>Show the answer</summary><p><b>{ans}</b>. "
        f"{html.escape(question.explanation)}</p></details>"
    )


def quiz_spec(question: Question) -> LabSpec:
    if not isinstance(question, Question):
        raise ValueError(f"question must be a Question, got {type(question).__name__}")
    return LabSpec(
        name="quiz",
        defaults=DEFAULTS,
        controls={"choice": radio("", [(o, i) for i, o in enumerate(question.options)])},
        texts=lambda state: quiz_texts(question, state),
        actions={
            "check": Action(
                "Check", lambda s: {"graded": s["choice"], "checks": s["checks"] + 1}, primary=True
            )
        },
        static=lambda: static_quiz_html(question),
        order=("text:prompt", "controls", "actions", "text:feedback"),
    )


def quiz_lab(question: Question) -> Lab:
    return Lab(quiz_spec(question))


def show_quiz(question: Question) -> None:
    """Display the live quiz and its static copy (every notebook's self-check)."""
    show(quiz_lab(question))

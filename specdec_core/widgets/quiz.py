"""The quiz widget every notebook reuses: options, a Check button, immediate feedback.

``show_quiz(question)`` displays the widget *and* a static fallback (the question, options and a
collapsed answer) so the notebook still reads on GitHub / nbviewer without a kernel.
"""
from __future__ import annotations

import html

import ipywidgets as w

from ..questions import Question, grade


def quiz_widget(question: Question) -> w.VBox:
    """RadioButtons + Check button + feedback. ``box.choice``, ``box.check``, ``box.feedback``
    are exposed for tests."""
    prompt = w.HTML(f"<b>Self-check.</b> {html.escape(question.prompt)}")
    choice = w.RadioButtons(options=[(o, i) for i, o in enumerate(question.options)], value=None,
                            layout=w.Layout(width="auto"))
    check = w.Button(description="Check", button_style="primary")
    feedback = w.HTML("")
    feedback.add_class("specdec-quiz-feedback")

    def on_check(_=None):
        ok, text = grade(question, choice.value)
        mark = "✅" if ok else ("❌" if choice.value is not None else "")
        feedback.value = f"{mark} {html.escape(text)}"

    check.on_click(on_check)
    box = w.VBox([prompt, choice, check, feedback])
    box.add_class("specdec-quiz")
    box.choice, box.check, box.feedback, box.on_check = choice, check, feedback, on_check
    return box


#: Hides the static copy where the live quiz widget rendered just above it (JupyterLab with a
#: kernel); GitHub strips <style>, and nbviewer/nbconvert without a kernel keep the copy visible.
_HIDE_WHEN_LIVE = ("<style>.jp-OutputArea-child:has(.specdec-quiz) + .jp-OutputArea-child "
                   ".specdec-quiz-static {display: none;}</style>")


def static_quiz_html(question: Question) -> str:
    """The same question as plain HTML with the answer in a collapsed <details>."""
    opts = "".join(f"<li>{html.escape(o)}</li>" for o in question.options)
    ans = html.escape(question.options[question.answer])
    return (f"{_HIDE_WHEN_LIVE}<div class='specdec-quiz-static'>"
            f"<p><b>Self-check</b> <i>(static copy for reading without a kernel)</i>. "
            f"{html.escape(question.prompt)}</p><ol type='a'>{opts}</ol>"
            f"<details><summary>Show the answer</summary><p><b>{ans}</b>. "
            f"{html.escape(question.explanation)}</p></details></div>")


def show_quiz(question: Question):
    """Display the interactive quiz (live kernel) and its static fallback (no kernel).

    In JupyterLab with a running kernel the fallback hides itself (a CSS ``:has`` rule), so the
    learner sees the question once; on GitHub / nbviewer the fallback is what shows."""
    from IPython.display import HTML, display

    display(quiz_widget(question))
    display(HTML(static_quiz_html(question)))

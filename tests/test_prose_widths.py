"""What a learner reads in notebooks 00, 03, 04, 07 and 08 (issue 38 item 5, issue 37 item 3):
printed lines that JupyterLab shows without breaking a word, a time estimate under every title,
quiz texts without markdown marks (the quiz shows plain text) and without the old condition on γ.

Each check reads the stored notebooks (no kernel) and has a case showing that it can fail.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from specdec_core import questions
from specdec_core.formatting import PRINT_WIDTH, wrapped
from specdec_core.questions import ALL_QUESTIONS

ROOT = Path(__file__).resolve().parents[1]
NB = {p.name[:2]: p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))}
#: The notebooks this check covers (the others are held to it by their own owners' tests).
CHECKED = ["00", "03", "04", "07", "08"]


def printed_lines(cell) -> list[str]:
    """Each line a code cell's stored outputs print (streams and text/plain, output by output)."""
    lines = []
    for o in cell.get("outputs", []):
        text = o.text if o.output_type == "stream" else o.get("data", {}).get("text/plain", "")
        lines += text.splitlines()
    return lines


def too_wide(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [
        f"cell {i}: {len(line)} characters: {line[:60]}…"
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for line in printed_lines(c)
        if len(line) > PRINT_WIDTH
    ]


@pytest.mark.parametrize("key", CHECKED)
def test_printed_lines_fit_without_breaking_a_word(key):
    """Lab breaks a longer output line anywhere (``word-break: break-all``): "rejecte / d"."""
    wide = too_wide(NB[key])
    assert not wide, f"{NB[key].name}: shorten these lines or print them through formatting.wrapped: {wide}"


def test_the_width_check_can_fail():
    cell = nbformat.v4.new_code_cell("print(x)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="word " * 30 + "\n")]
    assert max(len(line) for line in printed_lines(cell)) > PRINT_WIDTH


def test_wrapped_breaks_at_spaces_only():
    line = "[simulated] recursive k = 3: " + "chi-square = 12.2 on 2 dof, p-value = 0.00227 " * 3
    out = wrapped(line)
    assert all(len(x) <= PRINT_WIDTH for x in out.splitlines())
    assert out.replace("\n    ", " ").split() == line.split()  # no word cut, none lost
    assert wrapped("a  b    c") == "a  b    c"  # aligned columns of a short line kept
    assert wrapped("x" * 100) == "x" * 100  # one long word is left whole, not cut
    for bad in ({"width": 5}, {"width": 30.0}, {"indent": " " * 50}):
        with pytest.raises(ValueError, match="width|indent"):
            wrapped(line, **bad)


def time_estimate(first_cell: str) -> re.Match | None:
    """ "About N minutes." in the Prerequisites paragraph under the title."""
    para = next((p for p in first_cell.split("\n\n") if p.startswith("**Prerequisites.**")), "")
    return re.search(r"\bAbout \d+ minutes\.", para)


@pytest.mark.parametrize("key", CHECKED)
def test_time_estimate_under_the_title(key):
    assert time_estimate(nbformat.read(NB[key], as_version=4).cells[0].source), NB[key].name


def test_time_estimate_check_can_fail():
    assert time_estimate("**Prerequisites.** 01.\n\nAbout 20 minutes.") is None
    assert time_estimate("# t\n\n**Prerequisites.** 01 and\n02. About 20 minutes.")


def test_quiz_texts_carry_no_markdown_marks():
    """Quiz feedback is plain text: a ``*law*`` showed its asterisks (00's quiz)."""
    marks = re.compile(r"\*\w|\w\*|`|\$")
    found = [t for q in ALL_QUESTIONS for t in (q.prompt, q.explanation, *q.options) if marks.search(t)]
    assert not found, found
    assert marks.search("the same *law*") and not marks.search("5 × 3, p·q")


def test_gamma_policy_question_states_condition_5():
    """04's self-check: γ may not depend on the proposed token itself (the old text allowed 'the
    draft's own draws'), and the stop option names a token already proposed."""
    q = questions.GAMMA_POLICY_QUESTION
    assert "own draws" not in q.explanation
    assert "xᵢ itself" in q.explanation and "verdict" in q.explanation
    assert "after proposing" in q.options[1]
    assert q.answer == 2


def test_03_check_reports_a_cell_that_did_not_run_instead_of_grading_the_old_accept():
    """03 exercise 6: after a syntax error the old ``accept`` is still defined; the check must say
    the cell did not run rather than grade the earlier line (walk: "your line gives 'yes'")."""
    nb = nbformat.read(NB["03"], as_version=4)
    (cell,) = [c for c in nb.cells if "from-scratch-check" in c.metadata.get("tags", [])]
    body = cell.source.split("\nprint(check_accept(accept))")[0]
    (exercise,) = [c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith("def accept(")]
    old = lambda u, p_x, q_x: "yes"  # noqa: E731 - what an earlier run left behind

    def check(history):
        ns = {"_ih": history}
        exec(body, ns)
        return ns["check_accept"](old)

    assert "your line gives 'yes'" in check([])  # outside IPython: grades what it is given
    assert "your line gives 'yes'" in check([exercise])  # the stored cell parses: graded
    broken = exercise.replace(
        'raise NotImplementedError("replace this line with yours")', "return u < min(1, p_x / q_x"
    )
    assert broken != exercise
    assert check([exercise, broken, body]).startswith("✗ your cell did not run")
    deleted = exercise.split("    raise NotImplementedError")[0]  # body deleted: the docstring still parses
    compile(deleted, "deleted", "exec")
    assert "your line gives 'yes'" in check([exercise, deleted])


def test_00_faq_says_how_to_reach_a_section_in_lab():
    """Lab opens a linked notebook at its top (walk): the FAQ says so and names the way there."""
    faq = next(
        c.source for c in nbformat.read(NB["00"], as_version=4).cells if "Frequently asked" in c.source
    )
    assert "Table of Contents" in faq and "at its **top**" in faq


def test_00_faq_counterexample_numbers():
    """'usually accepted less often': p = [.51, .49], q = [.49, .51]: greedy never accepts, α = 0.98."""
    from fractions import Fraction as F

    from specdec_core import acceptance_probability, greedy

    p, q = [F(51, 100), F(49, 100)], [F(49, 100), F(51, 100)]
    assert acceptance_probability(p, q) == F(98, 100)
    assert acceptance_probability(greedy(p), greedy(q)) == 0
    faq = next(
        c.source for c in nbformat.read(NB["00"], as_version=4).cells if "Frequently asked" in c.source
    )
    assert "usually accepted less often" in faq and "α = 0.98" in faq


def test_policies_docstring_states_condition_5():
    import specdec_core.policies as policies

    doc = policies.__doc__
    assert "draft's own draws in this round" not in doc  # the old condition (review N1 residue)
    assert "xᵢ itself" in doc and "x₁ … xᵢ₋₁" in doc

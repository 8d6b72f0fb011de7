"""Every quiz question lives in specdec_core.questions, grades itself, and the right answers are
spread over the option positions (a learner must learn the idea, not the position)."""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from specdec_core import questions
from specdec_core.questions import ALL_QUESTIONS, Question, grade

ROOT = Path(__file__).resolve().parents[1]


def test_all_questions_lists_every_question_defined():
    defined = {name for name, v in vars(questions).items() if isinstance(v, Question)}
    listed = {name for name, v in vars(questions).items() if isinstance(v, Question) and v in ALL_QUESTIONS}
    assert defined == listed, f"not in ALL_QUESTIONS: {sorted(defined - listed)}"
    assert len(ALL_QUESTIONS) >= 12
    assert len({q.prompt for q in ALL_QUESTIONS}) == len(ALL_QUESTIONS), "duplicate question"


@pytest.mark.parametrize("q", ALL_QUESTIONS, ids=lambda q: q.prompt[:40])
def test_each_question_grades_its_answer(q):
    assert grade(q, q.answer)[0]
    for wrong in set(range(len(q.options))) - {q.answer}:
        ok, text = grade(q, wrong)
        assert not ok and q.explanation in text
    assert len(set(q.options)) == len(q.options), "two options are the same"


def answer_positions(qs):
    return Counter(q.answer for q in qs)


def test_answer_positions_are_spread():
    counts = answer_positions(ALL_QUESTIONS)
    worst, n = max(counts.values()), len(ALL_QUESTIONS)
    assert worst <= n / 2, f"one position holds {worst} of {n} answers: {dict(counts)}"
    assert len(counts) >= 3, f"answers use only positions {sorted(counts)}"


def test_answer_is_not_always_the_longest_option():
    def is_longest(q):
        return len(q.options[q.answer]) == max(len(o) for o in q.options)

    assert not all(is_longest(q) for q in ALL_QUESTIONS)
    assert sum(not is_longest(q) for q in ALL_QUESTIONS) >= 3


def test_the_spread_check_can_fail():
    """The old collection: 11 of 12 answers at position 1. The check must reject that."""
    opts = ("short", "a much longer right answer", "medium one")
    old = [Question("q", opts, 1, "e")] * 11 + [Question("q", opts, 0, "e")]
    assert max(answer_positions(old).values()) > len(old) / 2


def test_no_quiz_question_is_defined_outside_questions_py():
    """One home: no other module or notebook builds a Question(...) itself."""
    offenders = []
    for path in (ROOT / "specdec_core").rglob("*.py"):
        if path.name != "questions.py" and re.search(r"\bQuestion\(", path.read_text(encoding="utf-8")):
            offenders.append(str(path.relative_to(ROOT)))
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        if any(c["cell_type"] == "code" and re.search(r"\bQuestion\(", "".join(c["source"])) for c in cells):
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"quiz questions defined outside specdec_core/questions.py: {offenders}"


def test_questions_have_one_import_path():
    """The old re-exports (kv.KV_QUESTION, transforms.TRANSFORM_QUESTION) are gone: a question is
    imported from questions.py only (tests/test_one_home.py checks every name this way)."""
    from specdec_core import kv, transforms

    assert not hasattr(kv, "KV_QUESTION")
    assert not hasattr(transforms, "TRANSFORM_QUESTION")

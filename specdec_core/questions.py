"""Self-check questions (pure data) and the grading rule the quiz widget uses.

The three questions of the lesson card are here; notebooks add their own ``Question``s.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Question:
    prompt: str
    options: tuple
    answer: int          # index into options
    explanation: str     # shown after any attempt

    def __post_init__(self):
        if not self.options:
            raise ValueError("options is empty")
        if not (isinstance(self.answer, int) and 0 <= self.answer < len(self.options)):
            raise ValueError(f"answer must index options (0..{len(self.options) - 1}), got {self.answer!r}")


def grade(question: Question, choice) -> tuple[bool, str]:
    """(correct?, feedback text) for the option index ``choice`` (None: nothing chosen yet)."""
    if choice is None:
        return False, "Pick an option, then press Check."
    if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(question.options):
        raise ValueError(f"choice must be an option index 0..{len(question.options) - 1}, got {choice!r}")
    if choice == question.answer:
        return True, f"Correct. {question.explanation}"
    return False, f"Not quite: “{question.options[choice]}” is not it. {question.explanation}"


RESIDUAL_QUESTION = Question(
    prompt="With p = [0.6, 0.3, 0.1] (target) and q = [0.2, 0.3, 0.5] (draft), a rejected "
           "proposal is replaced by a token drawn from which distribution?",
    options=("The draft q = [0.2, 0.3, 0.5]", "The residual [1, 0, 0]", "A uniform distribution"),
    answer=1,
    explanation="Only A has p > q; max(p − q, 0) = [0.4, 0, 0] normalizes to [1, 0, 0]. The 0.4 of "
                "rejected mass then restores exactly the 0.4 that A was missing: 0.2 + 0.4 = 0.6.",
)

EXPECTED_COUNT_QUESTION = Question(
    prompt="Each proposal is accepted independently with α = 0.6 and the draft proposes γ = 2 "
           "tokens. How many tokens does a round emit on average, counting the correction or bonus?",
    options=("1.2", "1.96", "3"),
    answer=1,
    explanation="E[K] = 1 + α + α² = 1 + 0.6 + 0.36 = 1.96. The first token always comes (a "
                "correction or an accepted proposal); each further one needs one more acceptance.",
)

TRUTH_QUESTION = Question(
    prompt="Speculative sampling reproduces the target's distribution exactly. Does that make the "
           "sampled statements true?",
    options=("Yes", "No", "Only when α = 1"),
    answer=1,
    explanation="It guarantees the same *law* as sampling the target alone, nothing more. If the "
                "target puts probability on a false continuation, so does speculative sampling.",
)

CARD_QUESTIONS = (RESIDUAL_QUESTION, EXPECTED_COUNT_QUESTION, TRUTH_QUESTION)

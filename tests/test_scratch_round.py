"""Notebook 03 §6: the round written from scratch in plain numpy writes exactly the library's tokens.

The cells tagged ``from-scratch`` in notebook 03 are executed here as they stand (no copy of the
code lives in tests), then ``round_from_scratch`` and ``sampling.speculative_round`` are run with
the same seed for every context of the toy language and γ = 0 … 5: identical emitted tokens and
an identical generator state afterwards (the same random numbers were used, in the same order).
A deliberately broken copy (correcting from q) is shown to disagree, so the comparison can fail;
the exercise's check (``from-scratch-check``) accepts the right line and catches wrong ones.
"""

import json
import pathlib

import numpy as np
import pytest

from specdec_core.sampling import speculative_round
from specdec_core.toy import toy_draft, toy_target

NB = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "03-one-round-step-by-step.ipynb"
T, D = toy_target(), toy_draft()
CONTEXTS = [(), (0,), (1,), (2,), (3,), (1, 2)]


def _cells(tag):
    cells = json.loads(NB.read_text(encoding="utf-8"))["cells"]
    src = ["".join(c["source"]) for c in cells if tag in c.get("metadata", {}).get("tags", [])]
    assert src, f"no cell tagged {tag} in {NB.name}"
    return src


def _namespace(tag, **given):
    ns: dict = dict(given)
    for src in _cells(tag):
        exec(compile(src, f"{NB.name}[{tag}]", "exec"), ns)
    return ns


SCRATCH = _namespace("from-scratch")


@pytest.mark.parametrize("gamma", range(6))
@pytest.mark.parametrize("prefix", CONTEXTS)
def test_scratch_round_writes_the_library_tokens(prefix, gamma):
    for seed in range(150):
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        ours = SCRATCH["round_from_scratch"](T, D, prefix, gamma, r1)
        lib = speculative_round(T, D, prefix, gamma=gamma, rng=r2)
        assert tuple(ours) == lib.emitted, (seed, ours, lib.emitted)
        assert r1.bit_generator.state == r2.bit_generator.state, seed


def test_a_broken_scratch_round_is_caught():
    src = "\n".join(_cells("from-scratch")).replace("np.maximum(ps[i] - qs[i], 0)", "qs[i]")
    assert "qs[i]" in src and "np.maximum(ps[i] - qs[i], 0)" not in src
    ns: dict = {}
    exec(src, ns)
    differ = sum(
        tuple(ns["round_from_scratch"](T, D, (), 2, np.random.default_rng(s)))
        != speculative_round(T, D, (), gamma=2, rng=np.random.default_rng(s)).emitted
        for s in range(300)
    )
    assert differ > 0


def test_exercise_check_accepts_the_right_line_and_catches_wrong_ones():
    def unwritten(u, p_x, q_x):
        raise NotImplementedError

    check = _namespace("from-scratch-check", accept=unwritten)["check_accept"]
    assert check(lambda u, p, q: u < min(1.0, p / q)).startswith("✓")
    # a wrong, empty or failing line gets a ✗ message, never a traceback (Run All reaches the quizzes)
    for wrong in (
        lambda u, p, q: u <= p / q,  # keeps p(x) = 0 when u = 0
        lambda u, p, q: u < q / p if p else False,  # ratio upside down
        lambda u, p, q: u < p,  # forgets q
        lambda u, p, q: None,  # returns nothing
        lambda u, p, q: 1 / 0,  # fails
    ):
        assert check(wrong).startswith("✗")
    assert check(unwritten).startswith("not written yet")

"""A draft with another tokenizer (notebook 08): the re-tokenized proposal's true law keeps the
target's law; the naive per-character q does not (exact TV); the shared-vocabulary variant is exact."""

import itertools
from fractions import Fraction as F

import pytest

from specdec_core.tokenizers import longest_match, naive_reported_q, proposal_law, verified_output_reported

V = ("a", "b", "ab")
CHARS = {"a": F(1, 2), "b": F(1, 2)}
P = {"a": F(1, 2), "b": F(1, 8), "ab": F(3, 8)}


def tv(a, b):
    return sum(abs(a[x] - b[x]) for x in a) / 2


def test_longest_match():
    assert longest_match("abba", V) == ("ab", "b", "a")
    assert longest_match("aab", V) == ("a", "ab")
    with pytest.raises(ValueError, match="not in the vocabulary"):
        longest_match("abc", V)


def test_worked_counterexample():
    s, naive = proposal_law(CHARS, V), naive_reported_q(CHARS, V)
    assert s == {"a": F(1, 4), "b": F(1, 2), "ab": F(1, 4)}
    assert naive == {"a": F(1, 2), "b": F(1, 2), "ab": F(1, 4)}
    assert verified_output_reported(P, s, s) == P
    wrong = verified_output_reported(P, s, naive)
    assert wrong == {"a": F(1, 4), "b": F(1, 8), "ab": F(5, 8)} and tv(wrong, P) == F(1, 4)


def test_true_proposal_law_is_exact_for_many_pairs():
    grid = [F(i, 6) for i in range(1, 6)]
    for qa, pa, pb in itertools.product(grid, grid, grid):
        if pa + pb >= 1:
            continue
        chars = {"a": qa, "b": 1 - qa}
        p = {"a": pa, "b": pb, "ab": 1 - pa - pb}
        s = proposal_law(chars, V)
        assert sum(s.values()) == 1
        assert verified_output_reported(p, s, s) == p
        shared = {"a": qa, "b": 1 - qa, "ab": F(0)}  # the draft's own tokens, all shared with the target
        assert verified_output_reported(p, shared, shared) == p

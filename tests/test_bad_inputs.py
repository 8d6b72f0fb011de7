"""Bad input gets a clear ValueError naming the argument and the fault. Documented as a table."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import specdec_core as sc
from specdec_core.symbolic import expected_count_polynomial
from specdec_core.toy import toy_draft, toy_target

GOOD = [0.6, 0.3, 0.1]
EX = [F(3, 5), F(3, 10), F(1, 10)]
rng = np.random.default_rng(0)
T, D = toy_target(), toy_draft()


class Scored:
    """The toy target through .score, with its rows passed through ``corrupt``."""

    vocab_size = 4

    def __init__(self, corrupt):
        self.corrupt = corrupt

    def __call__(self, prefix):
        return T(prefix)

    def score(self, prefix, cont):
        rows = np.stack([T(tuple(prefix) + tuple(cont[:i])) for i in range(len(cont) + 1)])
        return self.corrupt(rows)


class Proposing:
    """The toy draft through .propose, with (tokens, rows) passed through ``corrupt``."""

    def __init__(self, corrupt):
        self.corrupt = corrupt

    def __call__(self, prefix):
        return D(prefix)

    def propose(self, prefix, gamma, rng):
        toks, rows, ctx = [], [], tuple(prefix)
        for _ in range(gamma):
            q = D(ctx)
            x = int(np.argmax(q))
            toks.append(x), rows.append(q)
            ctx += (x,)
        return self.corrupt(toks, np.stack(rows))


CASES = [
    # (call, message fragment)
    (lambda: sc.acceptance_rate([], []), "p is empty"),
    (lambda: sc.acceptance_rate(GOOD, [0.5, 0.5]), "p and q must have the same shape"),
    (lambda: sc.acceptance_rate([1.2, -0.2, 0.0], GOOD), "p has a negative entry"),
    (lambda: sc.acceptance_rate(GOOD, [np.nan, 0.5, 0.5]), "q contains NaN"),
    (lambda: sc.acceptance_rate(GOOD, [np.inf, 0.5, 0.5]), "q contains an infinite entry"),
    (lambda: sc.acceptance_rate(GOOD, [0.5, 0.3, 0.1]), "q must sum to 1"),
    (lambda: sc.acceptance_rate(EX, [F(1, 3), F(1, 3), F(1, 4)]), "q must sum to exactly 1, got 11/12"),
    (lambda: sc.accepted_mass("abc", GOOD), "p must be a sequence of numbers"),
    (lambda: sc.accepted_mass(["a", "b"], [0.5, 0.5]), "p must hold numbers only"),
    (lambda: sc.accepted_mass([True, False], [0.5, 0.5]), "p must hold numbers, not booleans"),
    (lambda: sc.accepted_mass(0.5, GOOD), "p must be a vector of probabilities"),
    (lambda: sc.accepted_mass(None, GOOD), "p must be a sequence of numbers"),
    (
        lambda: sc.acceptance_probabilities([[0.5, 0.5], [1.0]], [[0.5, 0.5], [1.0]]),
        "p must be a rectangular array",
    ),
    (lambda: sc.acceptance_probabilities([1j, 0], [1, 0]), "p must hold real numbers"),
    (lambda: sc.residual_distribution(GOOD, GOOD), "p equals q"),
    (lambda: sc.residual_distribution(EX, EX), "residual is undefined"),
    (lambda: sc.output_count_distribution(1.5, 2), "alpha must be in [0, 1]"),
    (lambda: sc.output_count_distribution(-0.1, 2), "alpha must be in [0, 1]"),
    (lambda: sc.output_count_distribution(float("nan"), 2), "alpha is NaN"),
    (lambda: sc.output_count_distribution("0.5", 2), "alpha must be a number"),
    (lambda: sc.output_count_distribution(F(6, 5), 2), "alpha must be in [0, 1], got 6/5"),
    (lambda: sc.expected_output_count(0.5, -1), "gamma must be a non-negative integer"),
    (lambda: sc.expected_output_count(0.5, 2.0), "gamma must be a non-negative integer"),
    (lambda: sc.expected_output_count(0.5, True), "gamma must be a non-negative integer"),
    (lambda: sc.tokens_per_second(1.96, draft_ms=-1, verify_ms=6), "draft_ms must be non-negative"),
    (lambda: sc.tokens_per_second(1.96, draft_ms=2, verify_ms=float("inf")), "verify_ms must be finite"),
    (lambda: sc.tokens_per_second(1.96, draft_ms=2, verify_ms=float("nan")), "verify_ms must be finite"),
    (
        lambda: sc.tokens_per_second(1.96, draft_ms=2, verify_ms=6, overhead_ms="1"),
        "overhead_ms must be a number",
    ),
    (
        lambda: sc.tokens_per_second(1.96, draft_ms=0, verify_ms=0, overhead_ms=0),
        "a round that takes no time",
    ),
    (lambda: sc.tokens_per_second(-1, draft_ms=2, verify_ms=6), "expected_tokens must be non-negative"),
    (lambda: sc.tokens_per_second(float("nan"), draft_ms=2, verify_ms=6), "expected_tokens must be finite"),
    (lambda: sc.baseline_tokens_per_second(0), "ms_per_token is 0"),
    (
        lambda: sc.speculative_generate(T, D, (), gamma=-1, max_new_tokens=3, rng=rng),
        "gamma must be a non-negative integer",
    ),
    (
        lambda: sc.speculative_generate(T, D, (), gamma=2, max_new_tokens=-3, rng=rng),
        "max_new_tokens must be a non-negative integer",
    ),
    (
        lambda: sc.speculative_generate(T, D, (), gamma=2, max_new_tokens=3, rng=0),
        "rng must be a numpy.random.Generator",
    ),
    (
        lambda: sc.speculative_generate(T, D, "AB", gamma=2, max_new_tokens=3, rng=rng),
        "prefix must be a sequence of token ids",
    ),
    (
        lambda: sc.speculative_generate(T, D, (), gamma=2, max_new_tokens=3, rng=rng, correction="q"),
        "correction must be one of",
    ),
    (
        lambda: sc.speculative_generate(T, lambda pre: [0.5, 0.5], (), gamma=2, max_new_tokens=3, rng=rng),
        "vocabularies differ",
    ),
    (
        lambda: sc.speculative_generate(
            T, lambda pre: [0.5, 0.6, 0, 0], (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "draft output must sum to 1",
    ),
    (
        lambda: sc.autoregressive_generate(lambda pre: [np.nan, 1.0], (), max_new_tokens=2, rng=rng),
        "target output contains NaN",
    ),
    (
        lambda: sc.verify_batch(np.ones((2, 3)), np.ones((2, 2, 3)), np.zeros((2, 2), int), rng),
        "target_probs must have shape (B, gamma+1, V)",
    ),
    (
        lambda: sc.verify_batch(
            np.full((2, 3, 4), 0.25), np.full((2, 3, 4), 0.25), np.zeros((2, 2), int), rng
        ),
        "draft_probs must have shape (2, 2, 4)",
    ),
    (
        lambda: sc.verify_batch(
            np.full((2, 3, 4), 0.25), np.full((2, 2, 4), 0.25), np.zeros((2, 3), int), rng
        ),
        "draft_tokens must have shape (2, 2)",
    ),
    (
        lambda: sc.verify_batch(np.full((2, 3, 4), 0.25), np.full((2, 2, 4), 0.25), np.full((2, 2), 4), rng),
        "draft_tokens must be in [0, 4)",
    ),
    (
        lambda: sc.verify_batch(np.full((2, 3, 4), 0.25), np.full((2, 2, 4), 0.25), np.zeros((2, 2)), rng),
        "draft_tokens must be integers",
    ),
    (
        lambda: sc.verify_batch(np.full((2, 3, 4), 0.25), np.zeros((2, 2, 4)), np.zeros((2, 2), int), rng),
        "a drafted token has q = 0",
    ),
    (
        lambda: sc.verify_batch(
            np.full((2, 3, 4), np.nan), np.full((2, 2, 4), 0.25), np.zeros((2, 2), int), rng
        ),
        "NaN",
    ),
    (
        lambda: sc.verify_batch(
            np.full((2, 3, 4), 0.3), np.full((2, 2, 4), 0.25), np.zeros((2, 2), int), rng, check_all=True
        ),
        "target_probs must sum to 1",
    ),
    (
        lambda: sc.verify_batch(
            np.full((2, 3, 4), 0.25), np.full((2, 2, 4), 0.25), np.zeros((2, 2), int), np.random
        ),
        "rng must be a numpy.random.Generator",
    ),
    (lambda: sc.chi_square_gof([], {0: 1.0}), "samples is empty"),
    # ---- model outputs are input too (issue 9 §4): what a target or draft returns mid-run
    (
        lambda: sc.speculative_generate(
            lambda pre: [0.5, 0.5, np.inf, 0], D, (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "target output contains an infinite entry",
    ),
    (
        lambda: sc.speculative_generate(
            T, lambda pre: [1.2, -0.2, 0, 0], (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "draft output has a negative entry",
    ),
    (
        lambda: sc.speculative_generate(T, lambda pre: ["0.25"] * 4, (), gamma=2, max_new_tokens=3, rng=rng),
        "draft must hold numbers only, not strings",
    ),
    (
        lambda: sc.speculative_generate(
            T, lambda pre: [True, False, False, False], (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "draft must hold numbers, not booleans",
    ),
    (
        lambda: sc.speculative_generate(
            Scored(lambda rows: rows * 1.1), D, (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "target.score output must sum to 1",
    ),
    (
        lambda: sc.speculative_generate(
            Scored(lambda rows: rows[:-1]), D, (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "target.score returned 2 rows, expected 3",
    ),
    (
        lambda: sc.speculative_generate(
            T, Proposing(lambda t, r: ([-1] + t[1:], r)), (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "negative token id -1",
    ),
    (
        lambda: sc.speculative_generate(
            T, Proposing(lambda t, r: ([4] + t[1:], r)), (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "outside the vocabulary [0, 4)",
    ),
    (
        lambda: sc.speculative_generate(
            T, Proposing(lambda t, r: ([float(x) for x in t], r)), (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "must hold integer token ids",
    ),
    (
        lambda: sc.speculative_generate(
            T, Proposing(lambda t, r: (t, r[:, :3])), (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "vocabularies differ",
    ),
    (
        lambda: sc.speculative_generate(
            T, Proposing(lambda t, r: (t, np.where(r > 0, np.nan, r))), (), gamma=2, max_new_tokens=3, rng=rng
        ),
        "draft.propose rows output contains NaN",
    ),
    (
        lambda: sc.speculative_generate(T, D, (1.5,), gamma=2, max_new_tokens=3, rng=rng),
        "prefix must hold integer token ids",
    ),
    (
        lambda: sc.speculative_generate(T, D, (7,), gamma=2, max_new_tokens=3, rng=rng),
        "outside the vocabulary",
    ),
    (
        lambda: sc.speculative_generate(None, D, (), gamma=2, max_new_tokens=3, rng=rng),
        "target must be a model",
    ),
    (
        lambda: sc.verify_batch(
            np.full((2, 3, 4), 0.25), np.tile([0.5, 0.5, 0.25, -0.25], (2, 2, 1)), np.zeros((2, 2), int), rng
        ),
        "draft_probs[0, 0] (a row this round uses) has a negative entry",
    ),
    (
        lambda: sc.verify_batch(
            np.tile([0.25, 0.25, 0.25, 0.35], (2, 3, 1)), np.full((2, 2, 4), 0.25), np.zeros((2, 2), int), rng
        ),
        "target_probs[0, 0] (a row this round uses) does not sum to 1",
    ),
    # ---- stop tokens
    (
        lambda: sc.speculative_generate(T, D, (), gamma=2, max_new_tokens=3, rng=rng, stop=3),
        "stop must be a collection of token ids",
    ),
    (
        lambda: sc.autoregressive_generate(T, (), max_new_tokens=3, rng=rng, stop=[9]),
        "stop holds the token id 9, outside the vocabulary",
    ),
    # ---- laws passed to statistics helpers
    (lambda: sc.chi_square_gof([0], {0: 0.5, 1: np.nan}), "law probabilities contains NaN"),
    (lambda: sc.chi_square_gof([0], {0: 0.7, 1: 0.7}), "law probabilities must sum to 1"),
    (lambda: sc.total_variation([0.5, np.nan], [0.5, 0.5]), "p contains NaN"),
    (lambda: sc.total_variation([0.5, 0.5], [-0.5, 1.5]), "q has a negative entry"),
    # ---- numeric strings and bools mixed into probability vectors
    (lambda: sc.acceptance_rate(["0.6", "0.4"], [0.5, 0.5]), "p must hold numbers only, not strings"),
    (lambda: sc.acceptance_rate([0.5, 0.5], [True, 0.0]), "q must hold numbers, not booleans"),
    (lambda: sc.acceptance_rate([F(1, 2), True], [0.5, 0.5]), "p must hold numbers, not booleans"),
    # ---- transforms at their limits are fine; bad values are refused
    (lambda: sc.top_p(GOOD, 0), "top_p must be in (0, 1]"),
    (lambda: sc.top_k(GOOD, 1.0), "k must be a positive integer"),
    # ---- γ beyond what can be computed: refused, never a hang
    (lambda: sc.expected_output_count(F(3, 5), 10**9), "too large for exact arithmetic"),
    (lambda: sc.output_count_distribution(0.6, 10**9), "at most 10,000,000 are computed"),
    (lambda: expected_count_polynomial(10**9), "gamma must be at most 1000, got 1000000000"),
]


@pytest.mark.parametrize("call,message", CASES, ids=[m for _, m in CASES])
def test_bad_input_raises_clear_value_error(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)


@given(
    st.lists(
        st.one_of(
            st.floats(min_value=-0.5, max_value=1.5),
            st.sampled_from([0.0, 0.25, 0.5, 1.0, float("nan"), float("inf"), -float("inf")]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_check_distribution_fast_path_agrees_with_the_full_checks(values):
    """A float64 ndarray takes a fast path; a list takes the full checks. Same verdict, same values,
    and the same message when it fails."""
    from specdec_core.distributions import check_distribution

    def verdict(x):
        try:
            return ("ok", np.asarray(check_distribution(x, "p")).tolist())
        except ValueError as exc:
            return ("error", str(exc))

    for row in (values, [v / s for v in values] if (s := sum(values)) and np.isfinite(s) else values):
        assert verdict(np.array(row, dtype=np.float64)) == verdict(list(row))

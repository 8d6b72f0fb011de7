"""Bad input gets a clear ValueError naming the argument and the fault. Documented as a table."""

import json
import warnings
from collections import Counter
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import assume, given, settings
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
    (lambda: sc.acceptance_probability([], []), "p is empty"),
    (lambda: sc.acceptance_probability(GOOD, [0.5, 0.5]), "p and q must have the same shape"),
    (lambda: sc.acceptance_probability([1.2, -0.2, 0.0], GOOD), "p has a negative entry"),
    (lambda: sc.acceptance_probability(GOOD, [np.nan, 0.5, 0.5]), "q contains NaN"),
    (lambda: sc.acceptance_probability(GOOD, [np.inf, 0.5, 0.5]), "q contains an infinite entry"),
    (lambda: sc.acceptance_probability(GOOD, [0.5, 0.3, 0.1]), "q must sum to 1"),
    (
        lambda: sc.acceptance_probability(EX, [F(1, 3), F(1, 3), F(1, 4)]),
        "q must sum to exactly 1, got 11/12",
    ),
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
            np.full((2, 3, 4), 0.3), np.full((2, 2, 4), 0.25), np.zeros((2, 2), int), rng, check="all"
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
    (lambda: sc.acceptance_probability(["0.6", "0.4"], [0.5, 0.5]), "p must hold numbers only, not strings"),
    (lambda: sc.acceptance_probability([0.5, 0.5], [True, 0.0]), "q must hold numbers, not booleans"),
    (lambda: sc.acceptance_probability([F(1, 2), True], [0.5, 0.5]), "p must hold numbers, not booleans"),
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


# ==================================================================== issue 27: the adversarial pass
# One row per finding of /work/shared/findings/adversarial-2026-12.md (its ID leads the test id),
# then one property test per *kind* of argument: it drives every public function that takes
# that kind through the shared validator of specdec_core.distributions, so a function that
# skips it fails here.

import sympy as sp  # noqa: E402

import specdec_core.acceptance_stats  # noqa: E402, F401
import specdec_core.distributions  # noqa: E402, F401
import specdec_core.labs  # noqa: E402, F401
import specdec_core.latency  # noqa: E402, F401
import specdec_core.llm  # noqa: E402, F401
import specdec_core.llm.predict  # noqa: E402, F401
import specdec_core.peeking  # noqa: E402, F401
import specdec_core.policies  # noqa: E402, F401
import specdec_core.processors  # noqa: E402, F401
import specdec_core.sampling  # noqa: E402, F401
import specdec_core.timing  # noqa: E402, F401
from specdec_core import multidraft as md  # noqa: E402
from specdec_core import roofline as RF  # noqa: E402
from specdec_core import serving as SV  # noqa: E402
from specdec_core import tree_laws as tl  # noqa: E402
from specdec_core import tree_sampling as ts  # noqa: E402
from specdec_core import trees as tr  # noqa: E402
from specdec_core.labs.trees import tree_lab_numbers  # noqa: E402
from specdec_core.measured import CostCurve, codec  # noqa: E402


def _curve(points: dict):
    """A cost curve read from its stored form (``points`` {"T": {"median", "min", "max"}})."""
    return codec.decode(CostCurve, json.dumps({"source": "test", "points": points}), "test curve")


from specdec_core.distributions import SUM_TOL  # noqa: E402

R = np.random.default_rng
M8, D1B = "Llama-3.1-8B", "Llama-3.2-1B"
HW = sc.HARDWARE["NVIDIA H100 SXM"]
T1 = sc.TokenTree((-1, -1, 0), (0, 1, 1))
P1 = np.array([T(()), T((0,)), T((1,)), T((0, 1))])
Q1 = np.array([D(()), D((0,)), D((1,)), D((0, 1))])


def _leaf(row):
    return np.vstack([P1[:3], [row]])


def _f32_softmax(V, seed):
    z = np.random.default_rng(seed).normal(size=V).astype(np.float32)
    e = np.exp(z - z.max())
    return e / e.sum()  # float32: sums to 1 within ~1e-7, not within rng.choice's 1.5e-8


class F32Model:
    """A model whose rows are float32 softmaxes over V tokens (depends on the last token)."""

    def __init__(self, V, salt=0):
        self.vocab_size, self.salt = V, salt

    def __call__(self, prefix):
        return _f32_softmax(self.vocab_size, self.salt + (prefix[-1] if prefix else 0))


ISSUE27 = [
    # ---- wrong-silent
    ("W1 all cells pooled", lambda: sc.chi_square_gof([0] * 9, {i: 0.01 for i in range(100)}), "no test"),
    ("W1 fair coin n=9", lambda: sc.chi_square_gof([1] * 9, {0: 0.5, 1: 0.5}), "no test"),
    (
        "W1 min_expected=inf",
        lambda: sc.chi_square_gof([0] * 9, {0: 0.5, 1: 0.5}, min_expected=float("inf")),
        "min_expected must be finite",
    ),
    ("W1 one-outcome law", lambda: sc.chi_square_gof([0] * 50, {0: 1.0}), "no test"),
    (
        "W4 tiny temperature",
        lambda: sc.llm.probs_from_logits(np.array([[1e10, 0.0]], np.float32), 1e-300),
        "temperature must be 0 (greedy) or at least",
    ),
    (
        "W4 inf logits",
        lambda: sc.llm.probs_from_logits(np.array([[np.inf, 0.0]]), 1.0),
        "logits must be finite",
    ),
    (
        "W4 NaN logits",
        lambda: sc.llm.probs_from_logits(np.array([[np.nan, 0.0]]), 1.0),
        "logits must be finite",
    ),
    ("W4 NgramDraft temperature", lambda: sc.llm.NgramDraft(10, temperature=1e-320), "temperature must be 0"),
    # ---- hang-memory
    (
        "H1 without replacement V=10000",
        lambda: sc.multi_draft_acceptance_probability(
            np.full(10**4, 1e-4), np.full(10**4, 1e-4), 2, replacement=False
        ),
        "at most 20,000,000 are computed",
    ),
    (
        "H1 multi_draft_law k=4 V=200",
        lambda: sc.multi_draft_law(np.full(200, 0.005), np.full(200, 0.005), 4, replacement=False),
        "k = 4 candidates without replacement",
    ),
    (
        "H2 chain_tree(16) law",
        lambda: sc.tree_round_law(T, D, (), tr.chain_tree(16), key=tl.last_token_key, exact=False),
        "outcomes to enumerate",
    ),
    (
        "H2 tree_sequence_law length",
        lambda: sc.tree_sequence_law(T, D, (), tr.chain_tree(1), 40, key=tl.last_token_key),
        "at most 1,000,000 are enumerated",
    ),
    ("H3 mask prefix_len", lambda: sc.tree_attention_mask(sc.TokenTree((-1,)), 10**12), "prefix_len = "),
    (
        "H4 batch x rounds",
        lambda: sc.simulate_ragged_batch([0.5, 0.5], [0.4, 0.6], gamma=3, batch=10**9, rounds=10, rng=R(0)),
        "batch × rounds × gamma",
    ),
    (
        "H5 max_gamma",
        lambda: SV.serving_curve(
            M8, D1B, HW, dtype="bf16", alpha=0.5, sequences=1, context=0, max_gamma=10**5
        ),
        "max_gamma must be at most 1000",
    ),
    # ---- crash-unclear
    (
        "C3 NaN leaf row",
        lambda: sc.verify_tree(T1, _leaf([np.nan, 0, 0, 1]), Q1, R(0)),
        "p_rows contains NaN",
    ),
    (
        "C3 negative leaf row",
        lambda: sc.verify_tree(T1, _leaf([-1, 1, 0, 1]), Q1, R(0)),
        "p_rows has a negative",
    ),
    ("C3 zero leaf row", lambda: sc.verify_tree(T1, _leaf([0, 0, 0, 0]), Q1, R(0)), "p_rows must sum to 1"),
    ("C3 complex rows", lambda: sc.verify_tree(T1, P1 + 0j, Q1, R(0)), "p_rows must hold real numbers"),
    (
        "C3 ragged rows",
        lambda: sc.verify_tree(T1, [list(r) for r in P1[:3]] + [[1.0]], Q1, R(0)),
        "p_rows must be a rectangular array",
    ),
    (
        "C4 prefix out of vocab",
        lambda: sc.tree_round_law(T, D, (9,), tr.chain_tree(1)),
        "outside the vocabulary",
    ),
    (
        "C4 string prefix",
        lambda: sc.tree_round_law(T, D, "ab", tr.chain_tree(1)),
        "prefix must be a sequence",
    ),
    ("C4 negative prefix", lambda: sc.tree_round_stats(T, D, (-1,), tr.chain_tree(1)), "negative token id"),
    (
        "C4 None prefix",
        lambda: ts.tree_round(T, D, None, tr.chain_tree(1), R(0)),
        "prefix must be a sequence",
    ),
    ("C4 target=3", lambda: sc.tree_round_law(3, D, (), tr.chain_tree(1)), "target must be a model"),
    ("C4 key=3", lambda: sc.tree_round_law(T, D, (), tr.chain_tree(1), key=3), "key must be a function"),
    (
        "C4 tree_generate draft",
        lambda: ts.tree_generate(T, "d", (), tr.chain_tree(1), 3, R(0)),
        "draft must be",
    ),
    (
        "C6 alpha array",
        lambda: sc.serving_point(
            M8, D1B, HW, dtype="bf16", alpha=np.array([0.5, 0.6]), gamma=2, sequences=1, context=0
        ),
        "alpha must be one number",
    ),
    (
        "C6 alpha list of strings",
        lambda: sc.serving_point(M8, D1B, HW, dtype="bf16", alpha=["0.5"], gamma=2, sequences=1, context=0),
        "alpha must be one number",
    ),
    (
        "C7 subnormal bandwidth",
        lambda: sc.Hardware("x", 5e-324, 1e14, "assumed", "a test rig here"),
        "bandwidth must be at least 1",
    ),
    (
        "C8 a raw dict, not the HardwareRun record",
        lambda: RF.hardware_from_benchmark(
            {
                "bandwidth": {"threads2": {"copy_GBps": 3}},
                "matmul": {"threads2": {"a": {"gflops": {"1": 5}}}},
                "machine": None,
            }
        ),
        "results must be the HardwareRun record",
    ),
    (
        "C9 empty prefix",
        lambda: sc.llm.PromptLookupDraft(10).propose((), 2, R(0)),
        "prefix must hold at least one",
    ),
    (
        "C9 token >= vocab",
        lambda: sc.llm.PromptLookupDraft(5).propose((7, 7), 2, R(0)),
        "outside the vocabulary",
    ),
    ("C9 gamma=-1", lambda: sc.llm.PromptLookupDraft(10).propose((1, 2), -1, R(0)), "gamma must be"),
    ("C10 temperature '1'", lambda: sc.llm.probs_from_logits(np.zeros((1, 3)), "1"), "temperature must be"),
    ("C10 NgramDraft(None)", lambda: sc.llm.NgramDraft(None), "vocab_size must be"),
    (
        "C10 shrink='x'",
        lambda: sc.llm.fit_exit_map(np.ones((3, 2)), np.ones((3, 2)), shrink="x"),
        "shrink must be",
    ),
    (
        "C10 singular fit",
        lambda: sc.llm.fit_exit_map(np.ones((3, 2)), np.ones((3, 2)), shrink=0),
        "singular least squares",
    ),
    ("C11 complex gaps", lambda: sc.inter_token_gaps_ms([1 + 0j, 2 + 0j]), "arrivals must hold real numbers"),
    ("C11 gap_summary strings", lambda: sc.gap_summary(["x"]), "gaps must hold numbers only"),
    ("C11 Symbol gaps", lambda: sc.gap_summary([sp.Symbol("x")]), "gaps must hold numbers"),
    ("C11 ragged arrivals", lambda: sc.inter_token_gaps_ms([[1, 2], [3]]), "arrivals must be a rectangular"),
    ("C11 ragged K", lambda: sc.padding_waste([[1, 2], [3]]), "K must be a rectangular array"),
    (
        "C11 ragged verify_batch",
        lambda: sc.verify_batch([[[0.5, 0.5]], [[1.0]]], np.zeros((2, 0, 2)), np.zeros((2, 0), int), R(0)),
        "target_probs must be a rectangular array",
    ),
    (
        "C11 2-D p in simulate_ragged_batch",
        lambda: sc.simulate_ragged_batch([[0.5, 0.5]], [[0.5, 0.5]], gamma=1, batch=1, rounds=1, rng=R(0)),
        "single distributions",
    ),
    ("C12 positions=5", lambda: RF.roofline_curve(M8, HW, dtype="bf16", positions=5), "positions must be"),
    ("C12 relative_cost 'x'", lambda: RF.relative_cost({1: 2, 2: "x"}), "curve[2] must be"),
    (
        "C13 speedup_map gammas=3",
        lambda: sc.timing.speedup_map([0.5], 3, draft_per_token_ms=1, verify_base_ms=1, baseline_ms=6),
        "gammas must be a non-empty sequence",
    ),
    ("C13 stepper symbols", lambda: sc.labs.stepper_lab(symbols=("A",)), "symbols names 1 tokens"),
    (
        "C13 rule=array",
        lambda: sc.tree_round_law(T, D, (), tr.chain_tree(1), rule=np.array(["recursive"])),
        "rule must be one of",
    ),
    (
        "C13 record_distributions=array",
        lambda: sc.speculative_generate(
            T, D, (), gamma=1, max_new_tokens=1, rng=R(0), record_distributions=np.array([1, 0])
        ),
        "record_distributions must be True or False",
    ),
    ("C13 worked_trace('x')", lambda: sc.worked_trace("x"), "example must be a WorkedExample"),
    # ---- accepted-bad-input
    (
        "A1 float prefix",
        lambda: sc.tree_round_law(T, D, (1.2, -0.2, 0.0), tr.chain_tree(1)),
        "integer token ids",
    ),
    ("A1 dict prefix", lambda: sc.tree_round_law(T, D, {0: 0.5}, tr.chain_tree(1)), "ordered sequence"),
    ("A2 x3 leaf row", lambda: sc.verify_tree(T1, _leaf([3, 0, 0, 0]), Q1, R(0)), "p_rows must sum to 1"),
    ("A2 string rows", lambda: sc.verify_tree(T1, P1.astype(str), Q1, R(0)), "p_rows must hold numbers only"),
    (
        "A3 exact='no'",
        lambda: sc.tree_round_law(T, D, (), tr.chain_tree(1), exact="no"),
        "exact must be True or",
    ),
    (
        "A3 check='no'",
        lambda: sc.verify_batch(
            np.full((1, 2, 2), 0.5), np.full((1, 1, 2), 0.5), np.zeros((1, 1), int), R(0), check="no"
        ),
        "check must be one of ('used', 'all', 'none')",
    ),
    (
        "A3 check=False",
        lambda: sc.verify_batch(
            np.full((1, 2, 2), 0.5), np.full((1, 1, 2), 0.5), np.zeros((1, 1), int), R(0), check=False
        ),
        "check must be one of ('used', 'all', 'none'), got False",
    ),
    (
        "A3 record_distributions='no'",
        lambda: sc.speculative_generate(
            T, D, (), gamma=1, max_new_tokens=1, rng=R(0), record_distributions="no"
        ),
        "record_distributions must be True or False",
    ),
    (
        "A3 check_distribution exact='x'",
        lambda: sc.distributions.check_distribution([0.5, 0.5], exact="x"),
        "exact must be True or False",
    ),
    (
        "A3 pass_bytes parts='yes'",
        lambda: RF.pass_bytes(M8, dtype="bf16", positions=1, parts="yes"),
        "parts must be True or False",
    ),
    (
        "A4 dict prefix",
        lambda: sc.speculative_generate(T, D, {0: 0.5}, gamma=1, max_new_tokens=1, rng=R(0)),
        "ordered sequence",
    ),
    (
        "A4 dict candidates",
        lambda: sc.verify_multi_draft([0.5, 0.5], [0.5, 0.5], {0: 0.5}, R(0)),
        "candidates must be a sequence",
    ),
    ("A4 set candidates", lambda: sc.verify_multi_draft([0.5, 0.5], [0.5, 0.5], {0, 1}, R(0)), "got a set"),
    (
        "A5 tied_embeddings='no'",
        lambda: sc.ModelShape("m", 2, 1, 4, 2, 8, 16, 10, "no", "src"),
        "tied_embeddings must be True or False",
    ),
    (
        "A5 name=None",
        lambda: sc.ModelShape(None, 2, 1, 4, 2, 8, 16, 10, True, "src"),
        "name must be a non-empty",
    ),
    (
        "A5 Hardware name=None",
        lambda: sc.Hardware(None, 1e12, 1e14, "assumed", "a test rig here"),
        "name must be",
    ),
    (
        "A6 positions=[1.7]",
        lambda: RF.roofline_curve(M8, HW, dtype="bf16", positions=[1.7]),
        "positions must be",
    ),
    (
        "A6 positions=['3']",
        lambda: RF.roofline_curve(M8, HW, dtype="bf16", positions=["3"]),
        "positions must be",
    ),
    (
        "A6 positions=[True]",
        lambda: RF.roofline_curve(M8, HW, dtype="bf16", positions=[True]),
        "positions must be",
    ),
    (
        "A7 T=-2",
        lambda: _curve(
            {"1": {"median": 3.0, "min": 3.0, "max": 3.0}, "-2": {"median": 5.0, "min": 5.0, "max": 5.0}}
        ),
        "test curve: points: Expected `int` >= 0 (a key)",
    ),
    (
        "A7 boolean time",
        lambda: _curve({"1": {"median": True, "min": 1.0, "max": 1.0}}),
        "test curve: points[1].median: Expected `float`, got `bool`",
    ),
    (
        "A7 string T",
        lambda: _curve({"one": {"median": 3.0, "min": 3.0, "max": 3.0}}),
        "test curve: points: Expected `int`, got `str` (a key)",
    ),
    (
        "A7 median outside min..max",
        lambda: _curve({"1": {"median": 9.0, "min": 3.0, "max": 4.0}}),
        "min ≤ median ≤ max",
    ),
    ("A8 infinite time", lambda: RF.relative_cost({1: float("inf"), 2: 1.0}), "curve[1] must be finite"),
    ("A8 negative time", lambda: RF.relative_cost({1: 2, 2: -1}), "curve[2] must be non-negative"),
    ("A9 round_ms=True", lambda: sc.arrival_times_ms([2, 1], True), "round_ms must be a number"),
    ("A9 round_ms strings", lambda: sc.arrival_times_ms([2, 1], ["1", "2"]), "round_ms must be one time"),
    (
        "A9 string arrivals",
        lambda: sc.inter_token_gaps_ms(["1", "2", "4"]),
        "arrivals must hold numbers only",
    ),
    ("A9 boolean gaps", lambda: sc.gap_summary([True, False]), "gaps must hold numbers, not booleans"),
    ("A9 dict records", lambda: sc.arrival_times_ms({1: 2}, 1.0), "records must be RoundRecords"),
    ("A10 alpha ['0.5']", lambda: sc.expected_output_count(["0.5"], 2), "alpha must hold numbers only"),
    ("A10 alpha []", lambda: sc.expected_output_count([], 2), "alpha must be a non-empty sequence"),
    ("A10 softmax string", lambda: sc.softmax([0.5, ".5"]), "not strings"),
    (
        "A11 TTFT overflow",
        lambda: sc.time_to_first_token_ms(target_prefill_ms=1e308, draft_prefill_ms=1e308),
        "overflows",
    ),
    ("A11 arrival overflow", lambda: sc.arrival_times_ms([1, 1], 1e308), "overflows"),
    (
        "A11 pass overhead overflow",
        lambda: RF.pass_time(M8, HW, dtype="bf16", positions=1, overhead_s=1e308),
        "overflows",
    ),
    (
        "A11 tokens_per_second overflow",
        lambda: sc.tokens_per_second(2, draft_ms=0, verify_ms=5e-324),
        "overflows",
    ),
    ("A12 NgramDraft floats", lambda: sc.llm.NgramDraft(2.7, n=2.9), "vocab_size must be an integer"),
    ("A12 NgramDraft n=True", lambda: sc.llm.NgramDraft(10, n=True), "n must be a positive integer"),
    ("A12 discount string", lambda: sc.llm.NgramDraft(10, discount="0.3"), "discount must be a number"),
    ("A12 temperature string", lambda: sc.llm.NgramDraft(10, temperature="0.5"), "temperature must be"),
    (
        "A12 NgramDraft prefix 1.5",
        lambda: sc.llm.NgramDraft(10)((1.5,)),
        "prefix must hold integer token ids",
    ),
    ("A12 PromptLookup n_min=-3", lambda: sc.llm.PromptLookupDraft(10, n_min=-3), "n_min must be"),
    ("A12 PromptLookup vocab '10'", lambda: sc.llm.PromptLookupDraft("10"), "vocab_size must be"),
    # ---- cosmetic
    (
        "K4 names the draft",
        lambda: sc.tree_round_law(T, lambda pre: np.array([0.5, 0.6, 0, 0]), (), tr.chain_tree(1)),
        "draft row must sum to 1",
    ),
    ("K6 set parents", lambda: sc.TokenTree({-1, 0}), "parents must be a sequence of node indices"),
    ("K6 dict parents", lambda: sc.TokenTree({-1: 0}), "got a dict"),
    # ---- C13 remainder: format digits
    ("C13 fmt digits 'x'", lambda: sc.fmt(0.5, "x"), "digits must be an integer in 0..50"),
    ("C13 fmt_decimal digits 2.0", lambda: sc.fmt_decimal(0.5, 2.0), "digits must be an integer in 0..50"),
    ("C13 fmt digits -1", lambda: sc.fmt([0.5], -1), "digits must be an integer in 0..50"),
    ("C13 fmt_decimal digits 10**6", lambda: sc.fmt_decimal(0.5, 10**6), "digits must be at most 50"),
]


@pytest.mark.parametrize("call,message", [c[1:] for c in ISSUE27], ids=[c[0] for c in ISSUE27])
def test_issue27_finding_raises_clear_value_error(call, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning or ComplexWarning on the way
        with pytest.raises(ValueError) as err:
            call()
    assert message in str(err.value)


# ---- findings fixed by a correct answer rather than an error
def test_W1_pooled_tail_still_tested_when_two_cells_remain():
    law = {0: 0.5, 1: 0.5}
    assert not sc.chi_square_gof([0] * 50 + [1] * 50, law).rejected
    assert sc.chi_square_gof([0] * 100, law).rejected


def _split(law, counts):
    return Counter({k: int(c) for k, c in zip(law, counts) if c})


def test_W1_a_concentration_inside_the_pooled_tail_is_rejected():
    # the finding: 300 x 'big' and 300 x outcome 0, which the law expects 3 times in 600; one
    # pooled tail cell was exactly on target (300 expected, 300 seen) and the test said "consistent"
    law = {"big": 0.5, **{i: 0.005 for i in range(100)}}
    res = sc.chi_square_gof(["big"] * 300 + [0] * 300, law)
    assert res.rejected and res.dof == 50  # 'big' + 50 groups of two tail outcomes (expected 6 each)
    # the reproducer of W1 now has 50 groups of two outcomes (4.99 expected each) to test
    assert sc.chi_square_gof([0] * 499, {i: 0.01 for i in range(100)}).rejected
    # a correct sample of the same law passes
    counts = R(3).multinomial(600, list(law.values()))
    assert not sc.chi_square_gof(_split(law, counts), law).rejected
    # the power calculation uses the same cells: against this alternative it is 1
    alt = {"big": 0.5, 0: 0.5, **{i: 0.0 for i in range(1, 100)}}
    assert sc.power.chi_square_power(law, alt, 600) == pytest.approx(1.0)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.floats(1e-3, 1.0), min_size=1, max_size=300),
    st.integers(1, 5000),
    st.sampled_from([1.0, 5.0, 7.5]),
)
def test_W1_pooled_groups_partition_and_each_group_reaches_min_expected(weights, n, m):
    from specdec_core.lawcheck import pooled_groups

    exp = np.sort(np.array(weights) / sum(weights) * n)[::-1]
    groups = pooled_groups(exp, m)
    m = m * (1 - 1e-9)  # pooled_groups' own threshold (rounding must not decide a cell)
    assert sorted(i for g in groups for i in g) == list(range(len(exp)))  # a partition
    for g in groups:
        assert g == list(range(g[0], g[-1] + 1))  # consecutive outcomes, in decreasing order
    tail = [g for g in groups if len(g) > 1 or exp[g[0]] < m]
    big = [g for g in groups if g not in tail]
    assert all(exp[g[0]] >= m for g in big)
    m_tol = m * (1 - 1e-6)  # sums in another order round differently
    if sum(exp[exp < m]) >= m:  # every tail group is expected at least m times
        assert all(exp[g].sum() >= m_tol for g in tail)
    for g in tail[:-1]:  # a group closes as soon as it reaches m
        assert exp[g[:-1]].sum() < m / m_tol * m
    if tail:  # the last group: a group that reached m plus a short remainder (< m), merged
        c = np.cumsum(exp[tail[-1]])
        first = int(np.argmax(c >= m)) if (c >= m).any() else len(c) - 1
        assert c[-1] - c[first] < m
    if sum(exp[exp < m]) >= 2 * m + max(exp[exp < m], default=0):  # room for two full groups
        assert len(tail) >= 2


@pytest.mark.parametrize("n", [200, 600])
@pytest.mark.parametrize("name", ["finding", "geometric", "zipf"])
def test_W1_a_correct_sample_is_rejected_at_the_stated_rate(name, n):
    """2000 seeded samples of the law itself, tested at threshold 0.01: the share rejected stays
    within the 1 − 1e-4 quantile of Binomial(2000, 0.01), i.e. at most 37 (0.0185); the
    approximation's size with groups of about min_expected is close to the threshold."""
    from scipy.stats import binom

    law = {
        "finding": {"big": 0.5, **{i: 0.005 for i in range(100)}},
        "geometric": dict(enumerate(0.9 ** np.arange(60) / (0.9 ** np.arange(60)).sum())),
        "zipf": dict(enumerate((1 / np.arange(1, 201)) / (1 / np.arange(1, 201)).sum())),
    }[name]
    reps, thr = 2000, 0.01
    rng = R(11)
    counts = rng.multinomial(n, list(law.values()), size=reps)
    rejected = sum(sc.chi_square_gof(_split(law, c), law, threshold=thr).rejected for c in counts)
    assert rejected <= binom.isf(1e-4, reps, thr)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(20, 200),
    st.floats(0.2, 0.8),
    st.integers(200, 3000),
    st.floats(0.2, 1.0),
    st.data(),
)
def test_W1_any_concentrated_tail_is_rejected(tail_size, big, n, share, data):
    """A law with one big outcome and a tail of equal small ones; the samples match the big
    outcome and the tail's total exactly (so a single pooled tail cell would be on target) but
    put ``share`` of the tail's samples on one tail outcome: rejected whenever that outcome's own
    group alone carries the statistic past the critical value (a sound condition: the statistic is
    a sum of non-negative cells)."""
    law = {"big": big, **{i: (1 - big) / tail_size for i in range(tail_size)}}
    tail_n = n - round(big * n)
    assume(tail_n / tail_size < 5 and tail_n >= 10)  # every tail outcome pooled, two groups at least
    j = data.draw(st.integers(0, tail_size - 1))
    hot = max(int(share * tail_n), 10)
    rest = tail_n - hot
    spread = Counter({i: rest // (tail_size - 1) for i in range(tail_size) if i != j})
    spread[(j + 1) % tail_size] += rest - sum(spread.values())
    samples = Counter({"big": n - tail_n, j: hot}) + spread
    res = sc.chi_square_gof(samples, law)
    # the concentration must be visible: the cell holding the hot outcome alone contributes
    # (O - E)^2 / E to the statistic, so when that exceeds the critical value the test must reject
    # (a single pooled tail cell, on target by construction, would contribute nothing)
    from scipy.stats import chi2

    from specdec_core.lawcheck import pooled_groups

    keys = sorted(law, key=lambda k: float(law[k]), reverse=True)
    exp = np.array([law[k] * n for k in keys])
    g = next(g for g in pooled_groups(exp) if keys.index(j) in g)
    o_g, e_g = sum(samples[keys[i]] for i in g), exp[g].sum()
    assume((o_g - e_g) ** 2 / e_g > chi2.isf(res.threshold, res.dof))
    assert res.rejected


def test_W1_probability_zero_outcomes_are_impossible():
    law = {0: 0.5, 1: 0.5, 2: 0.0}
    assert sc.chi_square_gof([0] * 50 + [1] * 49 + [2], law).statistic == float("inf")
    assert not sc.chi_square_gof([0] * 50 + [1] * 50, law).rejected


def test_K2_timing_lab_judges_the_scenario_shown():
    from specdec_core.labs import timing as timing_lab_mod

    zero = dict(draft_per_token_ms=0.0, verify_base_ms=0.0, verify_per_position_ms=0.0, overhead_ms=0.0)
    lab = sc.labs.timing_lab()
    lab.set(gamma=0, **zero)  # plain decoding at 6 ms: uses none of the speculative budget
    assert timing_lab_mod.problem(lab.state) is None and "lab-impossible" not in lab._dom_classes
    t = lab.last_texts
    assert "166.67 tokens/s" in t["rates"] and "ratio 1.000×" in t["rates"] and "gamma=1" not in str(t)
    assert "rows γ ≥ 1 are grey" in t["break_even"]
    assert lab.png.startswith(b"\x89PNG")
    from specdec_core.plots.timing import map_ratio

    ratio = map_ratio(range(4), **zero, baseline_ms=6.0)
    assert (ratio[0] == 1).all() and np.isnan(ratio[1:]).all()
    lab.set(gamma=1)  # now the scenario shown is a round that takes no time
    assert "lab-impossible" in lab._dom_classes
    assert lab.last_texts["round"].startswith("This budget is impossible")  # once, in the first readout
    assert lab.last_texts["rates"] == lab.last_texts["work"] == ""
    lab.set(gamma=0, overhead_ms=1.0)  # a positive budget: the map's rows are back, no grey note
    assert "grey" not in lab.last_texts["break_even"] and "lab-impossible" not in lab._dom_classes


class _SupportDraft:
    """Support 2 at the start; after token 0 a one-hot row (support 1), else support 2."""

    vocab_size = 4

    def __call__(self, prefix):
        if prefix and prefix[-1] == 0:
            return np.array([1.0, 0.0, 0.0, 0.0])
        return np.array([0.5, 0.5, 0.0, 0.0])


def test_K3_positions_count_the_nodes_really_drafted():
    st_ = sc.tree_round_stats(T, D, (), tr.family_tree("wide", 4), replacement=False)
    assert st_.positions == 4 and st_.nodes == 4  # the toy draft's support is 3 at the start
    assert sc.tree_round_stats(T, D, (), tr.family_tree("wide", 4)).positions == 5  # with replacement
    assert tree_lab_numbers("wide", 4, 0.0, "recursive", False)["positions"] == 4
    from specdec_core.labs.trees import DEFAULTS, texts

    text = texts({**DEFAULTS, "family": "wide", "replacement": False})["length"]
    assert "scores 4 positions (3 of the 4 nodes drafted + 1" in text
    assert "scores 5 positions (4 nodes + 1)" in texts(DEFAULTS)["length"]
    # a support that depends on the token drawn: the root's child is 0 or 1 (1/2 each); below 0
    # only one child can be drafted, below 1 both: E[nodes drafted] = 1 + 1/2 + 1 = 5/2
    tree = sc.TokenTree((-1, 0, 0))
    drafted = tl.expected_drafted_nodes(_SupportDraft(), (), tree, replacement=False)
    assert drafted == pytest.approx(2.5)
    got = np.mean(
        [ts.draft_tree(tree, _SupportDraft(), (), R(i), replacement=False)[0].n_nodes for i in range(2000)]
    )
    assert abs(got - 2.5) < 4 * 0.5 / np.sqrt(2000)  # sd of the count is 1/2
    stats = sc.tree_round_stats(T, _SupportDraft(), (), tree, replacement=False, exact=False)
    assert stats.positions == pytest.approx(3.5) and stats.nodes == 3
    assert tl.expected_drafted_nodes(_SupportDraft(), (), tree) == 3  # with replacement: all


@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.int32, np.uint16, np.int64])
def test_W2_padding_waste_in_int64_whatever_the_dtype(dtype):
    K = np.array([[40] + [1] * 999]) if np.iinfo(dtype).max >= 40 else None
    K = np.array([[200, 1]]) if dtype == np.uint8 else K
    ref = sc.padding_waste(K.astype(np.int64))
    got = sc.padding_waste(K.astype(dtype))
    assert got["wasted"].tolist() == ref["wasted"].tolist() and (got["wasted"] >= 0).all()
    assert np.allclose(got["share"], ref["share"]) and (got["share"] <= 1).all()


def test_W3_statistics_count_what_reached_the_output():
    from specdec_core import acceptance_stats as AS

    res = sc.speculative_generate(T, D, (), gamma=4, max_new_tokens=50, rng=R(0), stop={1})
    recs = AS.full_rounds(res, 4)
    kept = sum(min(r.accepted, len(r.emitted)) for r in recs)
    emitted = sum(len(r.emitted) for r in recs)
    w = AS.measured_work(res, 4)
    assert w["accepted"] == kept
    assert w["proposals_thrown_away"] == F(w["proposed"] - kept, w["proposed"])
    assert AS.acceptance_length(res, 4) == F(emitted, len(recs))
    assert AS.accepted_share(res, 4) == F(kept, w["proposed"])
    # the round that emitted the stop token accepted proposals that never reached the output
    assert any(r.accepted > r.kept for r in recs)


def test_C1_empty_trees_earn_a_bonus():
    for tree in (sc.TokenTree(()), tr.chain_tree(0), tr.branching_tree([]), tr.broom_tree(2, 0)):
        v = ts.tree_round(T, D, (), tree, R(0))
        assert v.bonus and len(v.tokens) == 1
        assert len(ts.tree_generate(T, D, (), tree, 3, R(0))) == 3


def test_C2_float32_drafts_work_in_the_tree_sampler():
    V = 1000
    draft, target = F32Model(V, 1), F32Model(V, 2)
    rows = [_f32_softmax(V, s) for s in range(50)]
    assert all(abs(float(r.astype(np.float64).sum()) - 1) <= SUM_TOL for r in rows)
    for s, r in enumerate(rows):
        md.sample_candidates(r, 3, R(s))
        md.sample_candidates(r, 3, R(s), replacement=False)
    for tree in (tr.family_tree("wide", 2), tr.branching_tree([2, 2])):
        ts.tree_round(target, draft, (), tree, R(0))
    assert len(ts.tree_generate(target, draft, (), tr.family_tree("deep", 3), 6, R(1))) == 6


def test_one_sampler_keeps_the_old_draw_sequence():
    """The shared sampler takes one uniform per draw, as rng.choice(p=...) did, and agrees with it
    (away from rounding at a CDF edge): notebooks keep their stored draws."""
    from specdec_core.distributions import draw

    for seed in range(30):
        q = np.random.default_rng(seed).dirichlet(np.ones(7))
        a, b = R(seed), R(seed)
        assert draw(q, a, size=5).tolist() == b.choice(7, size=5, p=q).tolist()
        assert int(draw(q, a)) == int(b.choice(7, p=q))
        assert a.random() == b.random()  # the same number of uniforms consumed


def test_C5_no_recursion_limit():
    law = sc.multi_draft_law([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], 990)
    assert np.allclose(law.output, [0.5, 0.3, 0.2])
    ex = sc.multi_draft_law([F(1, 2), F(1, 2)], [F(1, 4), F(3, 4)], 1200)
    assert list(ex.output) == [F(1, 2), F(1, 2)]
    s = sc.tree_round_stats(T, D, (), tr.chain_tree(600), key=tl.last_token_key, exact=False)
    assert 0 < s.expected_accepted < 600
    wide = sc.tree_round_law(T, D, (), tr.family_tree("wide", 1200), key=tl.last_token_key, exact=False)
    assert abs(sum(wide.values()) - 1) < 1e-9
    deep = sc.tree_round_law(T, D, (), tr.chain_tree(1500), key=tl.last_token_key, exact=False, max_len=2)
    assert abs(sum(deep.values()) - 1) < 1e-9


def test_H3_children_are_indexed():
    import time

    tree = tr.branching_tree([100, 100])
    t = time.perf_counter()
    ts.tree_round(T, D, (), tree, R(0))
    assert time.perf_counter() - t < 3.0
    assert tree.children(-1) == tuple(range(100))


def test_K1_and_K5_exact_and_numpy_numbers():
    hw = sc.Hardware("s", sp.Rational(3, 2) * 10**12, sp.Integer(10) ** 14, "assumed", "sympy numbers, exact")
    assert sc.ridge_point(hw) == F(200, 3)
    hw = sc.Hardware("n", np.int64(3 * 10**12), np.int64(10**14), "assumed", "numpy ints, exact")
    assert isinstance(sc.ridge_point(hw), F)
    assert tl.MixedDraft(D, T, np.float32(0.5)).weight == 0.5
    assert tl.MixedDraft(D, T, sp.Rational(1, 2)).weight == F(1, 2)
    assert tree_lab_numbers("wide", 2, np.float32(0.5), "recursive", True)["positions"] == 3


# ---------------------------------------------------------------- one property test per kind
BAD_BOOLS = st.sampled_from(["no", "yes", "", 0, 1, 1.0, None, np.array([True]), [True], np.int64(1)])

FLAG_TAKERS = {
    "tree_round_law(exact)": lambda v: sc.tree_round_law(T, D, (), tr.chain_tree(1), exact=v),
    "tree_round_stats(exact)": lambda v: sc.tree_round_stats(T, D, (), tr.chain_tree(1), exact=v),
    "tree_sequence_law(exact)": lambda v: sc.tree_sequence_law(T, D, (), tr.chain_tree(1), 1, exact=v),
    "tree_round_law(replacement)": lambda v: sc.tree_round_law(T, D, (), tr.chain_tree(1), replacement=v),
    "tree_round(replacement)": lambda v: ts.tree_round(T, D, (), tr.chain_tree(1), R(0), replacement=v),
    "draft_tree(replacement)": lambda v: ts.draft_tree(tr.chain_tree(1), D, (), R(0), replacement=v),
    "expected_drafted_nodes(replacement)": lambda v: tl.expected_drafted_nodes(
        D, (), tr.chain_tree(1), replacement=v
    ),
    "expected_drafted_nodes(exact)": lambda v: tl.expected_drafted_nodes(D, (), tr.chain_tree(1), exact=v),
    "sample_candidates(replacement)": lambda v: md.sample_candidates(GOOD, 1, R(0), replacement=v),
    "multi_draft_law(replacement)": lambda v: sc.multi_draft_law(GOOD, GOOD, 1, replacement=v),
    "speculative_generate(record_distributions)": lambda v: sc.speculative_generate(
        T, D, (), gamma=1, max_new_tokens=1, rng=R(0), record_distributions=v
    ),
    "speculative_round(record_distributions)": lambda v: sc.sampling.speculative_round(
        T, D, (), gamma=1, rng=R(0), record_distributions=v
    ),
    "autoregressive_generate(record_distributions)": lambda v: sc.autoregressive_generate(
        T, (), max_new_tokens=1, rng=R(0), record_distributions=v
    ),
    "check_distribution(exact)": lambda v: sc.distributions.check_distribution(GOOD, exact=v),
    "pass_bytes(parts)": lambda v: RF.pass_bytes(M8, dtype="bf16", positions=1, parts=v),
    "pass_flops(parts)": lambda v: RF.pass_flops(M8, positions=1, parts=v),
    "ModelShape(tied_embeddings)": lambda v: sc.ModelShape("m", 2, 1, 4, 2, 8, 16, 10, v, "src"),
    "tree_lab_numbers(replacement)": lambda v: tree_lab_numbers("wide", 2, 0.5, "recursive", v),
}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(FLAG_TAKERS)), BAD_BOOLS)
def test_every_flag_refuses_truthy_non_bools(where, value):
    assume(not (value is None and where == "check_distribution(exact)"))  # None: decide from the input
    with pytest.raises(ValueError, match="must be True or False"):
        FLAG_TAKERS[where](value)


BAD_COUNTS = st.one_of(
    st.floats(0.1, 50).filter(lambda x: not x.is_integer()),
    st.sampled_from([2.0, np.float64(3.0), "3", True, False, None, [2], -1, -5]),
)

COUNT_TAKERS = {
    "chain_tree(n)": lambda v: tr.chain_tree(v),
    "broom_tree(nodes)": lambda v: tr.broom_tree(2, v),
    "family_tree(nodes)": lambda v: tr.family_tree("wide", v),
    "branching_tree(entry)": lambda v: tr.branching_tree([v]),
    "tree_attention_mask(prefix_len)": lambda v: sc.tree_attention_mask(tr.chain_tree(1), v),
    "tree_generate(max_new_tokens)": lambda v: ts.tree_generate(T, D, (), tr.chain_tree(1), v, R(0)),
    "tree_sequence_law(length)": lambda v: sc.tree_sequence_law(T, D, (), tr.chain_tree(1), v),
    "tree_round_law(max_len)": lambda v: sc.tree_round_law(T, D, (), tr.chain_tree(1), max_len=v),
    "multi_draft_law(k)": lambda v: sc.multi_draft_law(GOOD, GOOD, v),
    "sample_candidates(k)": lambda v: md.sample_candidates(GOOD, v, R(0)),
    "speculative_generate(gamma)": lambda v: sc.speculative_generate(
        T, D, (), gamma=v, max_new_tokens=2, rng=R(0)
    ),
    "speculative_generate(max_new_tokens)": lambda v: sc.speculative_generate(
        T, D, (), gamma=1, max_new_tokens=v, rng=R(0)
    ),
    "simulate_ragged_batch(batch)": lambda v: sc.simulate_ragged_batch(
        GOOD, GOOD, gamma=1, batch=v, rounds=1, rng=R(0)
    ),
    "simulate_ragged_batch(rounds)": lambda v: sc.simulate_ragged_batch(
        GOOD, GOOD, gamma=1, batch=1, rounds=v, rng=R(0)
    ),
    "serving_curve(max_gamma)": lambda v: SV.serving_curve(
        M8, D1B, HW, dtype="bf16", alpha=0.5, sequences=1, context=0, max_gamma=v
    ),
    "roofline_curve(positions)": lambda v: RF.roofline_curve(M8, HW, dtype="bf16", positions=[v]),
    "speedup_map(gammas)": lambda v: sc.timing.speedup_map(
        [0.5], [v], draft_per_token_ms=1, verify_base_ms=1, baseline_ms=6
    ),
    "expected_output_count(gamma)": lambda v: sc.expected_output_count(0.5, v),
    "NgramDraft(vocab_size)": lambda v: sc.llm.NgramDraft(v),
    "NgramDraft(n)": lambda v: sc.llm.NgramDraft(10, n=v),
    "PromptLookupDraft(vocab_size)": lambda v: sc.llm.PromptLookupDraft(v),
    "PromptLookupDraft(n_min)": lambda v: sc.llm.PromptLookupDraft(10, n_min=v),
    "PromptLookupDraft.propose(gamma)": lambda v: sc.llm.PromptLookupDraft(10).propose((1, 2), v, R(0)),
    "fmt(digits)": lambda v: sc.fmt(0.5, v),
    "fmt_decimal(digits)": lambda v: sc.fmt_decimal([0.5], v),
    # issue 38: γ wherever it enters (policies, exact laws, the predictor), counts of a trace
    "GrowShrink(high)": lambda v: sc.policies.GrowShrink(start=1, high=v),
    "ConfidenceStop(max_gamma)": lambda v: sc.policies.ConfidenceStop(v, 0.5),
    "round_output_law(gamma)": lambda v: sc.processors.round_output_law(T, D, (), v),
    "peeking_sequence_law(gamma)": lambda v: sc.peeking.peeking_sequence_law(T, D, (), 2, v),
    "exact_round_law(gamma)": lambda v: sc.acceptance_stats.exact_round_law(T, D, (), v),
    "sampled_traces(gamma)": lambda v: sc.llm.predict.sampled_traces([0.5] * 4, v, sims=1),
    "RoundTrace(accepted)": lambda v: sc.llm.predict.RoundTrace((3,), (v,)),
    "plain_trace(n)": lambda v: sc.llm.predict.plain_trace(v),
    "median_range(repeats)": lambda v: sc.llm.predict.median_range(
        sc.llm.predict.CostModel({1: 1.0}), [[sc.llm.predict.plain_trace(2)]] * 2, v
    ),
}


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(sorted(COUNT_TAKERS)), BAD_COUNTS)
def test_every_count_refuses_non_integers(where, value):
    assume(not (value is None and where == "tree_round_law(max_len)"))  # None: no limit (the default)
    with pytest.raises(ValueError, match="must be"):
        COUNT_TAKERS[where](value)


BAD_PREFIXES = st.one_of(
    st.sampled_from(["ab", None, {0: 0.5}, {0, 1}, frozenset({1}), 3, (9,), (-1,), (True,), ("1",), (0.0,)]),
    st.lists(st.floats(0.5, 3).filter(lambda x: not x.is_integer()), min_size=1, max_size=3).map(tuple),
    st.integers(4, 10**6).map(lambda t: (0, t)),
)

PREFIX_TAKERS = {
    "tree_round_law": lambda pre: sc.tree_round_law(T, D, pre, tr.chain_tree(1)),
    "tree_round_stats": lambda pre: sc.tree_round_stats(T, D, pre, tr.chain_tree(1)),
    "tree_sequence_law": lambda pre: sc.tree_sequence_law(T, D, pre, tr.chain_tree(1), 1),
    "compare_with_target": lambda pre: tl.compare_with_target(T, D, pre, tr.chain_tree(1), 1),
    "tree_round": lambda pre: ts.tree_round(T, D, pre, tr.chain_tree(1), R(0)),
    "tree_generate": lambda pre: ts.tree_generate(T, D, pre, tr.chain_tree(1), 2, R(0)),
    "draft_tree": lambda pre: ts.draft_tree(tr.chain_tree(1), D, pre, R(0)),
    "expected_drafted_nodes": lambda pre: tl.expected_drafted_nodes(D, pre, tr.chain_tree(1)),
    "speculative_generate": lambda pre: sc.speculative_generate(
        T, D, pre, gamma=1, max_new_tokens=2, rng=R(0)
    ),
    "speculative_round": lambda pre: sc.sampling.speculative_round(T, D, pre, gamma=1, rng=R(0)),
    "autoregressive_generate": lambda pre: sc.autoregressive_generate(T, pre, max_new_tokens=2, rng=R(0)),
    "NgramDraft": lambda pre: sc.llm.NgramDraft(4)(pre if pre != () else (0,)),
    "PromptLookupDraft.propose": lambda pre: sc.llm.PromptLookupDraft(4).propose(pre, 1, R(0)),
    # issue 38 (NC4): the exact laws, the processors and the toy models themselves
    "round_output_law": lambda pre: sc.processors.round_output_law(T, D, pre, 1),
    "speculative_sequence_law": lambda pre: sc.processors.speculative_sequence_law(T, D, pre, 2, 1),
    "peeking_round_law": lambda pre: sc.peeking.peeking_round_law(T, D, pre, 1),
    "peeking_sequence_law": lambda pre: sc.peeking.peeking_sequence_law(T, D, pre, 2, 1),
    "exact_round_law": lambda pre: sc.acceptance_stats.exact_round_law(T, D, pre, 1),
    "StaleProcessed.score": lambda pre: sc.processors.StaleProcessed(
        T, [sc.processors.RepetitionPenalty(2)]
    ).score(pre, ()),
    "processed model": lambda pre: sc.processors.processed(T, sc.processors.RepetitionPenalty(2))(pre),
    "toy model": lambda pre: T(pre),
    "toy model exact": lambda pre: D.exact(pre),
}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(PREFIX_TAKERS)), BAD_PREFIXES)
def test_every_prefix_is_validated(where, prefix):
    with pytest.raises(ValueError, match="prefix"):
        PREFIX_TAKERS[where](prefix)


BAD_MODELS = st.sampled_from([3, None, "toy", [0.25] * 4, np.ones(4) / 4, {0: 1.0}])

MODEL_TAKERS = {
    "tree_round_law(target)": lambda m: sc.tree_round_law(m, D, (), tr.chain_tree(1)),
    "tree_round_law(draft)": lambda m: sc.tree_round_law(T, m, (), tr.chain_tree(1)),
    "tree_round_stats(draft)": lambda m: sc.tree_round_stats(T, m, (), tr.chain_tree(1)),
    "tree_sequence_law(target)": lambda m: sc.tree_sequence_law(m, D, (), tr.chain_tree(1), 1),
    "tree_round(target)": lambda m: ts.tree_round(m, D, (), tr.chain_tree(1), R(0)),
    "tree_generate(draft)": lambda m: ts.tree_generate(T, m, (), tr.chain_tree(1), 2, R(0)),
    "draft_tree(draft)": lambda m: ts.draft_tree(tr.chain_tree(1), m, (), R(0)),
    "expected_drafted_nodes(draft)": lambda m: tl.expected_drafted_nodes(m, (), tr.chain_tree(1)),
    "MixedDraft(draft)": lambda m: tl.MixedDraft(m, T, 0.5),
    "speculative_generate(target)": lambda m: sc.speculative_generate(
        m, D, (), gamma=1, max_new_tokens=1, rng=R(0)
    ),
    "speculative_generate(draft)": lambda m: sc.speculative_generate(
        T, m, (), gamma=1, max_new_tokens=1, rng=R(0)
    ),
    "autoregressive_generate(target)": lambda m: sc.autoregressive_generate(
        m, (), max_new_tokens=1, rng=R(0)
    ),
}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(MODEL_TAKERS)), BAD_MODELS)
def test_every_model_argument_is_validated(where, model):
    with pytest.raises(ValueError, match="must be a model"):
        MODEL_TAKERS[where](model)


@st.composite
def bad_rows(draw, n, V):
    """(n, V) rows with one fault: NaN, ±inf, negative, scaled, all-zero, complex, strings, ragged."""
    rows = [list(np.full(V, 1.0 / V)) for _ in range(n)]
    i = draw(st.integers(0, n - 1))
    kind = draw(st.sampled_from(["nan", "inf", "neg", "scale", "zero", "complex", "str", "ragged", "bool"]))
    if kind == "nan":
        rows[i][0] = float("nan")
    elif kind == "inf":
        rows[i][0] = float("inf")
    elif kind == "neg":
        rows[i][0], rows[i][-1] = -0.5, rows[i][-1] + 0.5
    elif kind == "scale":
        rows[i] = [v * draw(st.sampled_from([0.5, 1.01, 3.0])) for v in rows[i]]
    elif kind == "zero":
        rows[i] = [0.0] * V
    elif kind == "complex":
        rows[i][0] = complex(rows[i][0], 0)
    elif kind == "str":
        rows[i] = [str(v) for v in rows[i]]
    elif kind == "bool":
        rows[i] = [True] + [False] * (V - 1)
    else:
        rows[i] = rows[i][:-1]
    return rows


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from(["verify_tree p_rows", "verify_tree q_rows", "sample_candidates q"]))
def test_every_distribution_row_is_validated(data, where):
    """A faulty row is a ValueError naming the argument, never numpy's message from a draw."""
    V = 4
    if where == "sample_candidates q":
        row = data.draw(bad_rows(1, V))[0]
        call, name = (lambda: md.sample_candidates(row, 2, R(0))), "q"
    else:
        rows = data.draw(bad_rows(4, V))
        if where == "verify_tree p_rows":
            call, name = (lambda: sc.verify_tree(T1, rows, Q1, R(0))), "p_rows"
        else:
            call, name = (lambda: sc.verify_tree(T1, P1, rows, R(0))), "q_rows"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError) as err:
            call()
    assert str(err.value).startswith(name)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 2000), st.integers(0, 10**6), st.sampled_from([np.float16, np.float32, np.float64]))
def test_rows_of_any_accepted_float_dtype_are_sampled(V, seed, dtype):
    """Rows the validator accepts (within SUM_TOL) are drawn from by every sampler: no stricter
    tolerance hides in a draw."""
    z = np.random.default_rng(seed).normal(size=V)
    row = (np.exp(z - z.max()) / np.exp(z - z.max()).sum()).astype(dtype)
    try:
        sc.distributions.check_distribution(row)
    except ValueError:
        return  # float16 rows of many symbols may be refused by the validator: consistent
    md.sample_candidates(row, 3, R(seed))
    md.verify_candidates(row, row, [int(np.argmax(row))], R(seed))
    sc.verify_tree(
        sc.TokenTree((-1,), (int(np.argmax(row)),)), np.vstack([row, row]), np.vstack([row, row]), R(seed)
    )


BAD_TIMES = st.sampled_from(
    ["1", True, None, 1 + 0j, float("nan"), float("inf"), -1.0, {1: 2}, sp.Symbol("t")]
)

TIME_TAKERS = {
    "arrival_times_ms(round_ms)": lambda v: sc.arrival_times_ms([1, 2], v),
    "arrival_times_ms(start_ms)": lambda v: sc.arrival_times_ms([1, 2], 1.0, start_ms=v),
    "inter_token_gaps_ms": lambda v: sc.inter_token_gaps_ms([0.0, v]),
    "gap_summary": lambda v: sc.gap_summary([1.0, v]),
    "stream_times_ms(first_token_ms)": lambda v: sc.latency.stream_times_ms([1, 2], 1.0, first_token_ms=v),
    "time_to_first_token_ms": lambda v: sc.time_to_first_token_ms(target_prefill_ms=v),
    "tokens_per_second(verify_ms)": lambda v: sc.tokens_per_second(2, draft_ms=1, verify_ms=v),
    "speedup_map(baseline_ms)": lambda v: sc.timing.speedup_map(
        [0.5], [1], draft_per_token_ms=1, verify_base_ms=1, baseline_ms=v
    ),
    "relative_cost": lambda v: RF.relative_cost({1: 1.0, 2: v}),
    "CostModel(verify_ms)": lambda v: sc.llm.predict.CostModel({1: 1.0, 2: v}),
    "CostModel(draft_ms)": lambda v: sc.llm.predict.CostModel({1: 1.0}, {0: v}),
}


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(TIME_TAKERS)), BAD_TIMES)
def test_every_time_is_validated(where, value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError):
            TIME_TAKERS[where](value)


BAD_HW = st.sampled_from(
    ["1e12", True, None, 0, -1.0, float("nan"), float("inf"), 5e-324, 1e-300, 0.5, 1 + 0j]
)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["bandwidth", "peak"]), BAD_HW)
def test_every_hardware_number_is_validated(field, value):
    kw = {"bandwidth": 1e12, "peak": 1e14}
    kw[field] = value
    with pytest.raises(ValueError, match=field):
        sc.Hardware("x", kw["bandwidth"], kw["peak"], "assumed", "a test rig here")


BAD_ALPHAS = st.sampled_from(
    ["0.5", ["0.5"], [0.5, "0.5"], [], True, None, [True], 1.5, -0.1, float("nan"), 0.5j]
)

ALPHA_TAKERS = {
    "expected_output_count": lambda a: sc.expected_output_count(a, 2),
    "output_count_distribution": lambda a: sc.output_count_distribution(a, 2),
    "speedup_map": lambda a: sc.timing.speedup_map(
        [a], [1], draft_per_token_ms=1, verify_base_ms=1, baseline_ms=6
    ),
    "serving_point": lambda a: sc.serving_point(
        M8, D1B, HW, dtype="bf16", alpha=a, gamma=2, sequences=1, context=0
    ),
    "MixedDraft(weight)": lambda a: tl.MixedDraft(D, T, a),
    "tree_lab_numbers(quality)": lambda a: tree_lab_numbers("wide", 2, a, "recursive", True),
    "sampled_traces(alpha)": lambda a: sc.llm.predict.sampled_traces([0.5, a], 1, sims=1),
}


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(sorted(ALPHA_TAKERS)), BAD_ALPHAS)
def test_every_probability_is_validated(where, value):
    if where == "speedup_map" and value == []:
        value = "0.5"  # [[]] is a 2-D empty: its own (also refused) case
    with pytest.raises(ValueError):
        ALPHA_TAKERS[where](value)

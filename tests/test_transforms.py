"""Sampling transforms (specdec_core.transforms): exact values, laws, the setups of notebook 07."""

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core import chi_square_gof, speculative_generate, total_variation
from specdec_core.toy import sequence_law, toy_draft, toy_target
from specdec_core.transforms import (
    MisreportingDraft,
    apply_temperature,
    greedy,
    make_transform,
    one_position_acceptance,
    setup_models,
    setup_output,
    softmax,
    support_size,
    top_k,
    top_p,
    transformed,
    verified_output,
)
from specdec_core.verify import acceptance_probabilities, output_distribution, residual_distribution

P = [F(1, 2), F(1, 4), F(1, 4), F(0)]  # toy target after "start"
Q = [F(1, 4), F(1, 2), F(0), F(1, 4)]  # toy draft after "start"


def probs(min_size=2, max_size=8):
    return (
        st.lists(st.floats(0, 1, allow_nan=False), min_size=min_size, max_size=max_size)
        .filter(lambda xs: sum(xs) > 1e-3)
        .map(lambda xs: np.array(xs) / np.sum(xs))
    )


def exact_probs(min_size=2, max_size=6):
    return (
        st.lists(st.integers(0, 6), min_size=min_size, max_size=max_size)
        .filter(lambda xs: sum(xs) > 0)
        .map(lambda xs: [F(x, sum(xs)) for x in xs])
    )


def valid(d):
    d = np.asarray(d, dtype=float)
    return np.isfinite(d).all() and (d >= 0).all() and abs(d.sum(axis=-1) - 1).max() < 1e-9


# ---------------------------------------------------------------- exact values


def test_exact_values():
    assert list(top_k(P, 2)) == [F(2, 3), F(1, 3), 0, 0]  # tie B/C: lower index kept
    assert list(top_k(P, 3)) == [F(1, 2), F(1, 4), F(1, 4), 0]
    assert list(top_p(P, F(1, 2))) == [1, 0, 0, 0]  # A alone reaches 1/2
    assert list(top_p(P, F(3, 4))) == [F(2, 3), F(1, 3), 0, 0]
    assert list(top_p(P, F(4, 5))) == [F(1, 2), F(1, 4), F(1, 4), 0]
    assert list(greedy(Q)) == [0, 1, 0, 0]
    assert list(greedy([F(1, 3)] * 3)) == [1, 0, 0]  # ties: lower index
    assert list(apply_temperature(P, F(1, 2))) == [F(2, 3), F(1, 6), F(1, 6), 0]
    assert list(apply_temperature(P, F(1, 3))) == [F(4, 5), F(1, 10), F(1, 10), 0]
    assert list(apply_temperature(P, 0)) == [1, 0, 0, 0]
    assert all(isinstance(v, F) for v in top_k(P, 2))


def test_float_threshold_slack():
    # 0.6 + 0.3 is 0.8999999999999999 in floats: still reaches 0.9, so C is dropped
    np.testing.assert_allclose(top_p([0.6, 0.3, 0.1], 0.9), [2 / 3, 1 / 3, 0])


def test_temperature_limits():
    np.testing.assert_allclose(apply_temperature(P, 1e-6), [1, 0, 0, 0])
    np.testing.assert_allclose(apply_temperature(P, 1e6), [1 / 3, 1 / 3, 1 / 3, 0], atol=1e-5)
    # T → 0⁺ spreads over tied maxima; T = 0 picks the lower index
    np.testing.assert_allclose(apply_temperature([0.4, 0.4, 0.2], 1e-3), [0.5, 0.5, 0], atol=1e-300)
    np.testing.assert_array_equal(apply_temperature([0.4, 0.4, 0.2], 0), [1, 0, 0])
    assert valid(apply_temperature([1e-300, 1 - 1e-300], 1e-3))
    for t in (1e-320, 5e-324, 1e300, 1.7e308):  # subnormal and huge T: no NaN
        assert valid(apply_temperature([0.5, 0.25, 0.25, 0.0], t))
    np.testing.assert_array_equal(apply_temperature([0.4, 0.4, 0.2], 5e-324), [0.5, 0.5, 0])


def test_softmax():
    z = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(softmax(z), np.exp(z) / np.exp(z).sum())
    np.testing.assert_allclose(softmax([1000.0, 1000.0]), [0.5, 0.5])  # stable
    np.testing.assert_allclose(softmax([0.0, -np.inf]), [1, 0])
    np.testing.assert_array_equal(softmax([[1, 3, 3]], 0), [[0, 1, 0]])
    np.testing.assert_allclose(softmax(z, 2), apply_temperature(softmax(z), 2))


@settings(max_examples=120, deadline=None)
@given(
    rows=st.integers(1, 4),
    V=st.integers(1, 40),
    t=st.sampled_from([0.0, 1e-3, 0.5, 1.0, 3.0]),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_softmax_matches_the_textbook_formula(rows, V, t, dtype, seed):
    """The single-scratch softmax equals exp((z − max)/T) / Σ on float32 and float64 rows with
    masked (−inf) entries, returns float64, and leaves its input untouched; T = 0 is one-hot."""
    rng = np.random.default_rng(seed)
    z = (rng.standard_normal((rows, V)) * 5).astype(dtype)
    z[rng.random((rows, V)) < 0.2] = -np.inf
    z[:, rng.integers(V)] = rng.standard_normal(rows)  # a finite entry in every row
    before = z.copy()
    got = softmax(z, t)
    assert got.dtype == np.float64 and got.shape == z.shape
    np.testing.assert_array_equal(z, before)
    z64 = z.astype(np.float64)
    if t == 0:
        want = np.zeros_like(z64)
        want[np.arange(rows), np.argmax(z64, axis=1)] = 1.0
        np.testing.assert_array_equal(got, want)
        return
    with np.errstate(under="ignore"):
        e = np.exp((z64 - z64.max(axis=1, keepdims=True)) / t)
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.array([[0.0, np.nan, 1.0]], np.float32), "contains NaN"),
        (np.array([[0.0, np.inf]]), "contains +inf"),
        (np.array([[0.0, 1.0], [-np.inf, -np.inf]]), "every entry is -inf"),
        (np.array([[np.inf, np.nan]]), "contains NaN"),
    ],
)
def test_softmax_names_a_bad_row(bad, message):
    with pytest.raises(ValueError, match=message.replace("+", r"\+")):
        softmax(bad)


# ---------------------------------------------------------------- laws


@settings(max_examples=80, deadline=None)
@given(p=probs(), t=st.floats(0.01, 100), k=st.integers(1, 10), tp=st.floats(1e-6, 1))
def test_transforms_give_distributions(p, t, k, tp):
    assert valid(softmax(np.log(p + 1e-12), t))
    for d in (apply_temperature(p, t), top_k(p, k), top_p(p, tp), greedy(p)):
        assert valid(d)
        assert ((np.asarray(d) > 0) <= (p > 0)).all()  # never adds support


@settings(max_examples=80, deadline=None)
@given(p=exact_probs(), k=st.integers(1, 8))
def test_top_k_support(p, k):
    out = top_k(p, k)
    assert sum(out) == 1
    assert support_size(out) == min(k, support_size(p))  # ties never add symbols
    kept = [i for i, v in enumerate(out) if v > 0]
    dropped = [i for i, v in enumerate(p) if v > 0 and out[i] == 0]
    assert all(p[i] >= p[j] for i in kept for j in dropped)
    assert all(out[i] / p[i] == out[kept[0]] / p[kept[0]] for i in kept)  # proportional


@settings(max_examples=80, deadline=None)
@given(p=exact_probs(), num=st.integers(1, 20))
def test_top_p_smallest_prefix(p, num):
    tp = F(num, 20)
    out = top_p(p, tp)
    kept = [i for i, v in enumerate(out) if v > 0]
    mass = sum(p[i] for i in kept)
    assert mass >= tp
    # removing the least probable kept symbol drops below tp: the prefix is the smallest
    smallest = min(kept, key=lambda i: (p[i], -i))
    assert mass - p[smallest] < tp
    assert sum(out) == 1


@settings(max_examples=60, deadline=None)
@given(p=exact_probs())
def test_identities(p):
    assert list(apply_temperature(p, 1)) == p
    assert list(top_p(p, 1)) == p
    assert list(top_k(p, len(p))) == p
    assert list(top_p(p, F(1, 10**9))) == list(greedy(p))
    assert list(top_k(p, 1)) == list(greedy(p))


@settings(max_examples=60, deadline=None)
@given(p=probs(4, 4))
def test_float_temperature_one_identity(p):
    np.testing.assert_array_equal(apply_temperature(p, 1.0), p)


def test_stacks_along_last_axis():
    rows = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    np.testing.assert_allclose(top_k(rows, 1), [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_allclose(top_p(rows, 0.6), [[0.5 / 0.8, 0.3 / 0.8, 0], [0, 0, 1]])
    np.testing.assert_array_equal(greedy(rows), [[1, 0, 0], [0, 0, 1]])


# ---------------------------------------------------------------- verification with transforms

TRANSFORMS = [
    make_transform("none"),
    make_transform("temperature", F(1, 2)),
    make_transform("top_k", 2),
    make_transform("top_p", F(3, 4)),
    make_transform("greedy"),
]


@pytest.mark.parametrize("fn", TRANSFORMS)
def test_correct_setup_is_exact(fn):
    out, intended = setup_output("correct", P, Q, fn)
    assert list(out) == list(intended) == list(fn(P))


@settings(max_examples=60, deadline=None)
@given(p=exact_probs(4, 4), q=exact_probs(4, 4), k=st.integers(1, 4), num=st.integers(1, 10))
def test_correct_and_honest_setups_exact(p, q, k, num):
    for fn in (
        make_transform("top_k", k),
        make_transform("top_p", F(num, 10)),
        make_transform("temperature", F(1, 2)),
    ):
        for setup in ("correct", "target_only"):  # q = what was sampled in both
            out, intended = setup_output(setup, p, q, fn)
            assert list(out) == list(intended)


@pytest.mark.parametrize(
    "setup,fn,tv",
    [
        ("greedy_draft", make_transform("none"), F(1, 4)),
        ("greedy_draft", make_transform("temperature", F(1, 2)), F(5, 48)),
        ("draft_only", make_transform("temperature", F(1, 2)), F(1, 6)),
        ("draft_only", make_transform("top_k", 2), F(1, 4)),
        ("unreported", make_transform("top_k", 2), F(1, 9)),
        ("unreported", make_transform("temperature", F(1, 2)), F(4, 63)),
    ],
)
def test_each_mistake_biased(setup, fn, tv):
    out, intended = setup_output(setup, P, Q, fn)
    assert sum(out) == 1
    assert total_variation(out, intended) == tv


def test_top_k_on_target_only_is_not_biased():
    # the guarantee only needs p = what we want and q = what was sampled
    out, intended = setup_output("target_only", P, Q, make_transform("top_k", 2))
    assert total_variation(out, intended) == 0


def test_verified_output_honest_is_output_distribution():
    assert list(verified_output(P, Q)) == list(output_distribution(P, Q)) == P
    assert one_position_acceptance(P, Q) == F(1, 2)


def test_greedy_verification_is_argmax_match():
    p1, q1 = greedy(P), greedy(Q)  # A vs B: the draft's pick is not the target's argmax
    assert list(acceptance_probabilities(p1, q1)) == [1, 0, 1, 1]
    assert one_position_acceptance(p1, q1) == 0
    assert list(residual_distribution(p1, q1)) == [1, 0, 0, 0]
    assert list(output_distribution(p1, q1)) == [1, 0, 0, 0]
    assert one_position_acceptance(p1, p1) == 1


def test_greedy_speculative_equals_greedy_decoding():
    t = transformed(toy_target(), greedy)
    d = transformed(toy_draft(), greedy)
    spec = speculative_generate(t, d, (), gamma=3, max_new_tokens=12, rng=np.random.default_rng(0))
    ctx = ()
    for _ in range(12):
        ctx += (int(np.argmax(toy_target()(ctx))),)
    assert spec.tokens == ctx


@pytest.mark.parametrize(
    "setup,rejected",
    [
        ("correct", False),
        ("greedy_draft", True),
        ("draft_only", True),
        ("target_only", False),
        ("unreported", True),
    ],
)
def test_simulation_gof(setup, rejected):
    fn = make_transform("temperature", F(1, 2))
    t, d, intended = setup_models(setup, toy_target(), toy_draft(), fn)
    rng = np.random.default_rng(8)
    samples = [speculative_generate(t, d, (), gamma=2, max_new_tokens=3, rng=rng).tokens for _ in range(1500)]
    res = chi_square_gof(samples, sequence_law(intended, (), 3), threshold=1e-3)
    assert res.rejected is rejected


def test_transformed_exact_row():
    m = transformed(toy_target(), lambda p: top_k(p, 2))
    assert list(m.exact(())) == [F(2, 3), F(1, 3), 0, 0]
    np.testing.assert_allclose(m(()), [2 / 3, 1 / 3, 0, 0])
    law = sequence_law(m, (), 2)
    assert sum(law.values()) == 1


def test_misreporting_draft_rows():
    d = MisreportingDraft(transformed(toy_draft(), greedy), toy_draft())
    toks, rows = d.propose((), 3, np.random.default_rng(0))
    assert toks[0] == 1 and rows.shape == (3, 4)
    np.testing.assert_allclose(rows[0], toy_draft()(()))


# ---------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: apply_temperature(P, -1), "temperature"),
        (lambda: apply_temperature(P, float("nan")), "temperature"),
        (lambda: apply_temperature(P, float("inf")), "temperature"),
        (lambda: apply_temperature(P, "hot"), "temperature"),
        (lambda: top_k(P, 0), "k must"),
        (lambda: top_k(P, 1.5), "k must"),
        (lambda: top_k(P, True), "k must"),
        (lambda: top_p(P, 0), "top_p"),
        (lambda: top_p(P, 1.01), "top_p"),
        (lambda: top_p(P, float("nan")), "top_p"),
        (lambda: greedy([0.5, 0.6]), "sum"),
        (lambda: greedy([0.5, float("nan")]), "NaN"),
        (lambda: top_k([-0.5, 1.5], 1), "negative"),
        (lambda: softmax([1, float("nan")]), "NaN"),
        (lambda: softmax([1, float("inf")]), r"\+inf"),
        (lambda: softmax([-np.inf, -np.inf]), "-inf"),
        (lambda: softmax([]), "non-empty"),
        (lambda: softmax("abc"), "logits"),
        (lambda: make_transform("top_q", 1), "kind"),
        (lambda: make_transform("top_k", 0), "k must"),
        (lambda: verified_output(P, Q, [0, 0, 1, 0]), "q = 0"),
        (lambda: verified_output(P, Q[:3] + [F(1, 4)], [1, 0]), "shape"),
        (lambda: setup_output("wrong", P, Q, greedy), "setup"),
        (lambda: setup_output("correct", P, Q, 3), "transform"),
        (lambda: transformed(3, greedy), "callable"),
    ],
)
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()

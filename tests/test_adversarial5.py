"""The fifth adversarial pass (issue 38, ``../shared/findings/adversarial-2026-12-05.md``): one test
per finding, grouped by class and parametrized over the entry points, each failing on the code
the pass ran against; then one property test per kind of argument (γ, T, a prefix, a cost curve)
driving every public function that takes it with the pass's argument kinds.

Classes: wrong and silent (W5-*), a crash on a valid configuration (C5-1), hangs and blow-ups
(H5-*, K5-3: a tripwire model turns "the enumeration started" into a failure, a deadline turns a
hang into one), and foreign errors or accepted bad input (C5-9, K5-1, A5-3…A5-9 and the previous
pass's still-open NC4, NC5–NC11, NA6–NA9, NK2). The weight-layout findings are in
``test_adversarial5_layout.py``.
"""

from __future__ import annotations

import contextlib
import math
import signal
import warnings
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import specdec_core as sc
import specdec_core.engines
import specdec_core.kv
import specdec_core.latency
import specdec_core.llm.runs
import specdec_core.serving
import specdec_core.symbolic
from specdec_core import acceptance_stats as AS
from specdec_core import counts as CT
from specdec_core import coupling as CP
from specdec_core import lawcheck as LC
from specdec_core import peeking as PK
from specdec_core import policies as PO
from specdec_core import processors as PR
from specdec_core import repeats as RP
from specdec_core import roofline as RF
from specdec_core import timing as TM
from specdec_core import tokenizers as TK
from specdec_core import tree_sampling as ts
from specdec_core import trees as tr
from specdec_core.llm import predict as P
from specdec_core.llm import report as RE
from specdec_core.toy import sequence_law, toy_draft, toy_target

T, D = toy_target(), toy_draft()
R = np.random.default_rng
M8, D1B, HW = "Llama-3.1-8B", "Llama-3.2-1B", sc.HARDWARE["NVIDIA H100 SXM"]


class Dense:
    """An exact model over V symbols whose row depends on the last token (all entries > 0), with
    a tripwire: more than ``calls`` rows asked for raises RuntimeError ("the enumeration
    started"), so a missing size guard fails fast instead of hanging."""

    def __init__(self, V, shift=0, calls=10**9):
        self.vocab_size, self.shift, self.left = V, shift, calls

    def exact(self, prefix):
        self.left -= 1
        if self.left < 0:
            raise RuntimeError("the enumeration started")
        last = prefix[-1] if len(prefix) else 0
        w = [1 + (i + last + self.shift) % 3 for i in range(self.vocab_size)]
        return [F(x, sum(w)) for x in w]

    def __call__(self, prefix):
        return np.asarray(self.exact(prefix), dtype=np.float64)


class CountingDraft:
    """The toy draft, raising RuntimeError after ``calls`` rows: a γ that is never refused drafts."""

    def __init__(self, calls):
        self.left = calls

    def __call__(self, prefix):
        self.left -= 1
        if self.left < 0:
            raise RuntimeError("the draft was asked for thousands of proposals")
        return D(prefix)


@contextlib.contextmanager
def deadline(seconds):
    """A hang becomes a failure (SIGALRM), not a stuck test run."""

    def fire(*_):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def cap():
    from specdec_core.measured import read_capstone

    return read_capstone()


def _cost(top_T=5, top_g=4):
    return P.CostModel(
        {t: 10.0 + t for t in range(1, top_T + 1)},
        {g: float(g) for g in range(top_g + 1)},
        {g: 0.5 for g in range(top_g + 1)},
    )


# ================================================================ wrong, silent


class ShortLookup:
    """A ``.propose`` draft that offers fewer tokens than asked where the prefix says so (like
    prompt lookup): whether it offers γ or 1 depends only on the prefix, so the law is kept."""

    vocab_size = 4

    def __call__(self, prefix):
        return D(prefix)

    def propose(self, prefix, gamma, rng):
        n = gamma if len(prefix) % 2 == 0 else min(gamma, 1)
        toks, rows, ctx = [], [], tuple(prefix)
        for _ in range(n):
            q = D(ctx)
            x = int(sc.distributions.inverse_cdf(q, rng.random()))
            toks.append(x), rows.append(q)
            ctx += (x,)
        return tuple(toks), np.array(rows).reshape(len(toks), 4)


def _cut_by_the_limit(res, n):
    """The rounds max_new_tokens = n cut short, from the sampler's rule γ = min(planned, n − before − 1):
    the cap bound (< planned) and the round drafted exactly the cap."""
    out, before = [], 0
    for r in res.records:
        cap = n - before - 1
        out.append(cap < r.gamma_chosen and r.gamma == cap)
        before += len(r.emitted)
    return out


@pytest.mark.parametrize(
    "draft,gamma",
    [(D, PO.ConfidenceStop(5, F(1, 2))), (ShortLookup(), 4), (ShortLookup(), PO.GrowShrink(start=3, high=6))],
    ids=["ConfidenceStop", "propose-fewer", "propose-fewer+GrowShrink"],
)
def test_W5_1_rounds_are_cut_by_the_length_limit_not_by_the_outputs_end(draft, gamma):
    """With a stop token the output may end early; only rounds the length limit cut are left out
    (the old rule dropped any round that drafted fewer than planned and reached the end: 94 of
    200 runs wrong)."""
    n, wrong = 200, 0
    for seed in range(120):
        res = sc.speculative_generate(T, draft, (), gamma=gamma, max_new_tokens=n, rng=R(seed), stop={2})
        want = [r for r, c in zip(res.records, _cut_by_the_limit(res, n)) if not c] or None
        got = AS.full_rounds(res)
        if want is not None and got != want:
            wrong += 1
    assert wrong == 0


def test_W5_1_the_finding_reproducer():
    r = sc.speculative_generate(
        T, D, (), gamma=PO.ConfidenceStop(5, 0.5), max_new_tokens=200, rng=R(0), stop={2}
    )
    assert r.max_new_tokens == 200 and r.stopped
    assert len(AS.full_rounds(r)) == r.rounds == 4


def test_W5_2_goal_gap_without_an_interval_says_so(cap):
    """One repeat per configuration (a quick run): no interval, so no verdict 'inside its interval'."""
    one = tuple(
        r.replace(speedup_paired=RP.PairedRatio(r.speedup_paired.ratio, None, None, 1, None, 0.95))
        for r in cap.runs
    )
    lines = RE.goal_gap(cap.replace(runs=one), goal=1.1)
    assert lines and all("inside its interval" not in ln and "no interval (n = 1)" in ln for ln in lines)


@pytest.mark.parametrize(
    "call,fragment",
    [
        (
            lambda c: P.break_even_alpha(P.CostModel.from_micro(c.micro, 1.0, "exit"), 6),
            "draft_ms is measured for gamma from 0 to 2",
        ),
        (
            lambda c: P.CostModel.from_micro(c.micro, 1.0, "lookup").round_ms(30),
            "verify_ms is measured for T from 1 to 16",
        ),
        (lambda c: P.break_even_alpha(P.CostModel.from_micro(c.micro, 1.0, "feature"), 5), "draft_ms"),
        (lambda c: P.predict_decode(_cost(5, 4), P.RoundTrace((50,), (3,))), "verify_ms"),
    ],
    ids=["break_even exit γ=6", "round_ms(30)", "break_even feature γ=5", "predict_decode γ=50"],
)
def test_W5_3_a_cost_beyond_the_measured_range_is_refused_not_held_flat(cap, call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call(cap)


def test_W5_3_inside_the_range_costs_interpolate_as_before():
    c = P.CostModel({1: 10.0, 3: 20.0}, {0: 0.0, 2: 4.0}, {0: 1.0, 2: 2.0})
    assert c.round_ms(1) == pytest.approx(15.0 + 2.0 + 1.5)  # verify(2), draft(1), overhead(1)
    assert P.CostModel({1: 10.0}).round_ms(0) == 10.0  # draft and overhead left out: free


@pytest.mark.parametrize("tol", [math.nan, "x", True, -1.0, 0.0, 0, 1.0, math.inf])
def test_W5_4_H5_3_tol_is_validated(tol):
    """tol = NaN gave 0.5 (the loop never ran); tol ≤ 0 looped forever."""
    c = P.CostModel(
        {1: 10.0, 2: 11.0, 3: 12.0, 4: 13.0, 5: 14.0},
        {g: 1.0 * g for g in range(5)},
        {g: 0.5 for g in range(5)},
    )
    with deadline(5), pytest.raises(ValueError, match="tol"):
        P.break_even_alpha(c, 3, tol=tol)


def test_H5_3_a_tiny_tol_stops_at_adjacent_floats():
    c = P.CostModel(
        {1: 10.0, 2: 11.0, 3: 12.0, 4: 13.0}, {g: 1.0 * g for g in range(4)}, {g: 0.5 for g in range(4)}
    )
    with deadline(5):
        a = P.break_even_alpha(c, 3, tol=1e-300)
    assert a == pytest.approx(P.break_even_alpha(c, 3), abs=1e-9)


# ================================================================ crash on a valid configuration


GRAMMAR_TARGET = PR.processed(T, PR.at_most_once(0, 4))

C51_RUNS = {
    "speculative γ=2": lambda s: sc.speculative_generate(
        GRAMMAR_TARGET, D, (), gamma=2, max_new_tokens=4, rng=R(s)
    ),
    "speculative γ=3": lambda s: sc.speculative_generate(
        GRAMMAR_TARGET, D, (), gamma=3, max_new_tokens=8, rng=R(s)
    ),
    "speculative GrowShrink": lambda s: sc.speculative_generate(
        GRAMMAR_TARGET, D, (), gamma=PO.GrowShrink(start=3), max_new_tokens=8, rng=R(s)
    ),
    "tree chain 2": lambda s: ts.tree_generate(GRAMMAR_TARGET, D, (), tr.chain_tree(2), 6, R(s)),
    "tree wide 3": lambda s: ts.tree_generate(GRAMMAR_TARGET, D, (), tr.family_tree("wide", 3), 6, R(s)),
    "tree [2, 2]": lambda s: ts.tree_generate(GRAMMAR_TARGET, D, (), tr.branching_tree([2, 2]), 6, R(s)),
}


@pytest.mark.parametrize("name", sorted(C51_RUNS))
def test_C5_1_a_grammar_target_with_an_ordinary_draft_never_crashes(name):
    """The grammar-processed target is a valid model; a proposal it forbids is rejected, and the
    rows after it are never scored (they used to raise 'no probability mass left' in 13–61 %)."""
    for seed in range(300):
        toks = C51_RUNS[name](seed)
        assert toks.tokens.count(0) <= 1 if hasattr(toks, "tokens") else toks.count(0) <= 1


def test_C5_1_rows_after_a_forbidden_proposal_are_not_scored():
    """After a proposal p gives 0 (surely rejected), a row the grammar target has no answer for
    (its prefix breaks the grammar) is zeros ("not scored"); every other row is the processed
    target's own, as before."""
    zeros = 0
    for seed in range(200):
        res = sc.speculative_generate(
            GRAMMAR_TARGET, D, (), gamma=3, max_new_tokens=8, rng=R(seed), record_distributions=True
        )
        for r in res.records:
            first = next((i for i, x in enumerate(r.proposals) if r.p_rows[i][x] == 0), None)
            if first is not None:
                assert r.stop is not None and r.stop <= first
            for i in range(len(r.proposals) + 1):
                ctx = r.prefix + r.proposals[:i]
                if ctx.count(0) > 1:
                    assert first is not None and i > first and not r.p_rows[i].any()
                    zeros += 1
                else:
                    np.testing.assert_allclose(r.p_rows[i], GRAMMAR_TARGET(ctx))
    assert zeros > 20


# ================================================================ hangs and blow-ups


@pytest.mark.parametrize(
    "call",
    [
        lambda: PR.speculative_sequence_law(Dense(10, 0, 10**4), Dense(10, 1, 10**4), (), 8, 1),
        lambda: PK.peeking_sequence_law(Dense(10, 0, 10**4), Dense(10, 1, 10**4), (), 8, 1),
        lambda: PR.chain_round_laws(PR.round_output_law, Dense(6, 0, 10**4), Dense(6, 1, 10**4), (), 8, 2),
    ],
    ids=["speculative_sequence_law", "peeking_sequence_law", "chain_round_laws"],
)
def test_H5_1_chained_laws_have_a_total_size_guard(call):
    with pytest.raises(ValueError, match=r"length = 8 .*at most 100,000"):
        call()


def test_H5_1_the_guard_allows_what_fits():
    law = PR.speculative_sequence_law(Dense(3), Dense(3, 1), (), 4, 1)
    assert sum(law.values()) == 1


@pytest.mark.parametrize(
    "gamma,match",
    [
        (20000, "gamma = 20,000 proposals"),
        (PO.FixedGamma, "gamma = 50,000"),
        (lambda: PO.GrowShrink(start=40000, high=40000), "high"),
        (lambda: PO.ConfidenceStop(10**5, 0.1), "max_gamma"),
        (lambda: PO.PrefixGamma(lambda ctx: 10**5, "rule"), "rule"),
    ],
    ids=["int", "FixedGamma", "GrowShrink", "ConfidenceStop", "PrefixGamma"],
)
def test_H5_2_max_gamma_where_gamma_enters(gamma, match):
    """γ beyond MAX_GAMMA is refused wherever it enters, not drafted (quadratic in γ: > 60 s)."""
    with pytest.raises(ValueError, match=match):
        g = gamma if isinstance(gamma, int) else (gamma(50000) if gamma is PO.FixedGamma else gamma())
        sc.speculative_generate(T, CountingDraft(5000), (), gamma=g, max_new_tokens=20001, rng=R(0))


@pytest.mark.parametrize(
    "V,gamma,outcomes",
    [(10, 5, "1,111,110"), (1000, 1, "1,001,000"), (2, 18, "1,048,574")],
)
def test_K5_3_the_round_guard_counts_every_outcome(V, gamma, outcomes):
    """V + V² + … + V^(γ+1) outcomes, not only the V^(γ+1) full-length ones."""
    for f in (PR.round_output_law, AS.exact_round_law):
        with pytest.raises(ValueError, match=rf"up to {outcomes} round outputs"):
            f(Dense(V, 0, 10**4), Dense(V, 1, 10**4), (), gamma)


# ================================================================ foreign errors, accepted bad input

CM = _cost(4, 3)
TRACES = [[P.plain_trace(3)], [P.plain_trace(4)]]
STALE = PR.StaleProcessed(T, [PR.RepetitionPenalty(2)])


class OldPolicy:
    def next_gamma(self, records):  # the signature before the prefix argument
        return 2


class ArrayKeep:
    def next_gamma(self, records, prefix):
        return 2

    def keep_drafting(self, q_row, token):
        return q_row >= 0.1  # an array, not a bool


FOREIGN = [
    # ---- NC4: unknown prefix tokens were the model's KeyError
    *[
        (f"NC4 {name} {pre!r}", call(pre), "prefix")
        for pre in ((9,), "ab", (1.7,), (-1,))
        for name, call in (
            ("round_output_law", lambda pre: lambda: PR.round_output_law(T, D, pre, 2)),
            ("speculative_sequence_law", lambda pre: lambda: PR.speculative_sequence_law(T, D, pre, 3, 2)),
            ("peeking_round_law", lambda pre: lambda: PK.peeking_round_law(T, D, pre, 2)),
            ("peeking_sequence_law", lambda pre: lambda: PK.peeking_sequence_law(T, D, pre, 3, 2)),
            ("StaleProcessed.score", lambda pre: lambda: STALE.score(pre, ())),
            ("exact_round_law", lambda pre: lambda: AS.exact_round_law(T, D, pre, 1)),
            ("processed model", lambda pre: lambda: PR.processed(T, PR.RepetitionPenalty(2))(pre)),
            ("toy model", lambda pre: lambda: T(pre)),
            (
                "peeking_generate",
                lambda pre: lambda: PK.peeking_generate(T, D, pre, gamma=1, max_new_tokens=2, rng=R(0)),
            ),
        )
    ],
    # ---- NC5 / A5-4: tokenizers
    ("NC5 proposal_law empty character", lambda: TK.proposal_law({"": F(1)}, ["a"]), "single characters"),
    (
        "A5-4 proposal_law two-letter character",
        lambda: TK.proposal_law({"ab": F(1, 2), "c": F(1, 2)}, ["a", "b", "c"]),
        "single characters",
    ),
    ("A5-4 proposal_law duplicate tokens", lambda: TK.proposal_law({"a": F(1)}, ["a", "a"]), "twice"),
    ("NC5 longest_match int", lambda: TK.longest_match(5, ["a"]), "text must be a string"),
    ("NC5 longest_match vocab int", lambda: TK.longest_match("a", 5), "vocab"),
    (
        "NC5 verified_output_reported q = 0",
        lambda: TK.verified_output_reported(
            {"a": F(1, 2), "b": F(1, 2)}, {"a": F(1, 2), "b": F(1, 2)}, {"a": F(0), "b": F(1)}
        ),
        "reported gives 0",
    ),
    (
        "NC5 verified_output_reported missing token",
        lambda: TK.verified_output_reported({"a": F(1, 2), "b": F(1, 2)}, {"a": F(1)}, {"a": F(1)}),
        "sampled must have exactly p's tokens",
    ),
    # ---- NC6: chained laws
    ("NC6 round_law=3", lambda: PR.chain_round_laws(3, T, D, (), 2, 1), "round_law must be a function"),
    (
        "NC6 empty round outcome",
        lambda: PR.chain_round_laws(lambda *a: {(): F(1)}, T, D, (), 2, 1),
        "non-empty",
    ),
    # ---- NC7: couplings
    ("NC7 agreement of strings", lambda: CP.agreement([["a", "b"], ["c", "d"]]), "pi"),
    ("NC7 agreement NaN", lambda: CP.agreement([[math.nan, 0.0], [0.0, 1.0]]), "pi contains NaN"),
    ("NC7 simplex_max shapes", lambda: CP.simplex_max([1], [[1, 2]], [1]), "simplex_max needs c of length n"),
    ("NC7 simplex_max NaN", lambda: CP.simplex_max([math.nan], [[1]], [1]), "c must hold finite numbers"),
    # ---- NC8: zero costs, empty traces
    (
        "NC8 predict_decode zero costs",
        lambda: P.predict_decode(P.CostModel({1: 0.0}), P.plain_trace(3)),
        "0 ms",
    ),
    (
        "NC8 break_even zero step",
        lambda: P.break_even_alpha(P.CostModel({1: 0.0, 2: 0.0, 3: 0.0}), 2),
        "costs 0 ms",
    ),
    ("NC8 trace of no rounds", lambda: P.RoundTrace((), ()), "gammas must be a non-empty sequence"),
    ("NC8 plain_trace(0)", lambda: P.plain_trace(0), "n must be a positive integer"),
    (
        "NC8 class, roofline.relative_cost zero (passcost.relative: the lead's)",
        lambda: RF.relative_cost({1: 0, 2: 5}),
        "curve[1] must be positive",
    ),
    ("NC8 CostModel 'x'", lambda: P.CostModel({1: "x"}), "verify_ms[1]"),
    # ---- NC9: γ policies
    (
        "NC9 old next_gamma signature",
        lambda: sc.speculative_generate(T, D, (), gamma=OldPolicy(), max_new_tokens=3, rng=R(0)),
        "next_gamma must take",
    ),
    (
        "NC9 keep_drafting array",
        lambda: sc.speculative_generate(T, D, (), gamma=ArrayKeep(), max_new_tokens=3, rng=R(0)),
        "keep_drafting",
    ),
    # ---- NC11: pooling and grammars
    ("NC11 pooled_groups('abc')", lambda: LC.pooled_groups("abc"), "expected"),
    ("NC11 pooled_groups 2-D", lambda: LC.pooled_groups([[5.0, 6.0]]), "expected must be a 1-D"),
    ("NC11 pool out of range", lambda: LC.pool([1.0, 2.0], [[5]]), "groups must be at most 1"),
    ("NC11 at_most_once vocab '4'", lambda: PR.at_most_once(0, "4"), "vocab"),
    # ---- NA7: counts
    ("NA7 5 accepted of 2", lambda: P.RoundTrace((2,), (5,)), "accepted[0] = 5 is more than"),
    ("NA7 negative accepted", lambda: P.RoundTrace((2,), (-3,)), "accepted must be a non-negative integer"),
    ("NA7 unequal lengths", lambda: P.RoundTrace((1, 2), (1,)), "one entry per round"),
    ("NA7 CostModel {'1': True}", lambda: P.CostModel({"1": True}), "verify_ms: a point"),
    ("NA7 sampled_traces γ = −1", lambda: P.sampled_traces(np.ones(5), -1), "gamma"),
    ("NA7 sampled_traces γ = 2.5", lambda: P.sampled_traces(np.ones(5), 2.5), "gamma"),
    ("NA7 sampled_traces α 1.5", lambda: P.sampled_traces(np.full(5, 1.5), 2), "alpha"),
    # ---- NA8 / NA9: overflowing ratios
    ("NA9 paired_ratio overflow", lambda: RP.paired_ratio([1e308], [1e-308]), "overflows"),
    ("NA9 paired_ratio underflow", lambda: RP.paired_ratio([1e-308, 1e-308], [1e308, 1e308]), "overflows"),
    (
        "NA8 relative_cost negative",
        lambda: RF.relative_cost({1: 2.0, 2: -1.0}),
        "curve[2] must be non-negative",
    ),
    # ---- K5-1 / A5-3: goal_gap's goal and temperature
    *[
        (f"K5-1 goal={g!r}", lambda g=g: RE.goal_gap(_CAP(), goal=g), "goal")
        for g in (math.nan, -1, "1.1", True)
    ],
    *[
        (f"A5-3 temperature={t!r}", lambda t=t: RE.goal_gap(_CAP(), temperature=t), "temperature")
        for t in ("1", 0.5, math.nan, True)
    ],
    (
        "A5-3 break_even unknown draft",
        lambda: RE.break_even(_CAP(), "banana", 1),
        "draft = 'banana' was not measured",
    ),
    # ---- A5-5: vocabularies that differ
    (
        "A5-5 round_output_law V 3 and 4",
        lambda: PR.round_output_law(Dense(3), Dense(4, 1), (), 2),
        "vocabularies differ",
    ),
    (
        "A5-5 speculative_sequence_law V 3 and 4",
        lambda: PR.speculative_sequence_law(Dense(3), Dense(4, 1), (), 2, 1),
        "vocabularies differ",
    ),
    # ---- C5-6's class: an array where a named option is expected (numpy's ambiguous truth value)
    ("C5-6 family_tree(array)", lambda: tr.family_tree(np.array([1, 2]), 2), "family must be one of"),
    (
        "C5-6 fit_feature_map(inputs=array)",
        lambda: _fit(inputs=np.array([1, 2])),
        "inputs must be one of",
    ),
    # ---- A5-9: repeats and level
    ("A5-9 repeats 10**18", lambda: P.median_range(CM, TRACES, 10**18), "repeats must be at most"),
    ("A5-9 level 1e-300", lambda: P.median_range(CM, TRACES, 2, level=1e-300), "level"),
]


def _fit(**kw):
    from specdec_core.llm.features import fit_feature_map

    x = np.ones((10, 2), np.float32)
    return fit_feature_map(x, x, x, **kw)


def _CAP():
    from specdec_core.measured import read_capstone

    return read_capstone()


@pytest.mark.parametrize("call,fragment", [c[1:] for c in FOREIGN], ids=[c[0] for c in FOREIGN])
def test_foreign_errors_and_bad_input_are_named_value_errors(call, fragment):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with deadline(20), pytest.raises(ValueError, match=_re(fragment)):
            call()


def _re(fragment):
    import re

    return re.escape(fragment)


def test_NC10_NA6_feature_draft_token_ids_and_numbers(lm):
    """Token ids go through check_token_ids (1.7, '3', −5, a string refused), numbers through
    the number validators (True, '2' refused)."""
    from specdec_core.llm import features as FT

    with pytest.raises(ValueError, match="sequences"):
        FT.collect_features(lm.model, "abc")
    with pytest.raises(ValueError, match=r"sequences\[0\]"):
        FT.collect_features(lm.model, [[1.7, 5, 6]])
    with pytest.raises(ValueError, match="negative"):
        FT.shortlist_from_counts([[-5, 1]], 2)
    with pytest.raises(ValueError, match="size"):
        FT.shortlist_from_counts([[5, 1]], 2.0)
    fm = FT.FeatureMap(np.zeros((2, 2), np.float32), np.zeros(2, np.float32), "h,e", 0.0, 1)
    for bad in ("2", True, 0.0, math.nan):
        with pytest.raises(ValueError, match="logit_scale"):
            fm.with_logit_scale(bad)


@pytest.mark.parametrize(
    "call",
    [
        lambda PC: PC.relative({1: 0, 2: 5}),  # NC8: ZeroDivisionError
        lambda PC: PC.relative({1: 1.0, 2: -1.0}),  # NA8: −1 accepted
        lambda PC: PC.compute_rate([1], dim=-1),  # NH5: numpy's "negative dimensions"
        lambda PC: PC.compute_rate([1], reps=0),  # NA9: NaN with warnings
    ],
    ids=["relative zero", "relative negative", "compute_rate dim -1", "compute_rate reps 0"],
)
def test_NC8_NA8_NA9_passcost_names_its_arguments(call):
    from specdec_core.llm import passcost as PC

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"\b(curve|dim|reps)\b"):
            call(PC)


def test_NC10_drafts_name_a_missing_generator():
    from specdec_core.llm import NgramDraft

    with pytest.raises(ValueError, match="rng"):
        NgramDraft(10).propose((1, 2), 2, None)


def test_NK2_numpy_scalars_are_accepted_where_python_numbers_are():
    assert RP.paired_ratio([2.0, 2.0], [1.0, 1.0], level=np.float64(0.9)).level == pytest.approx(0.9)
    assert RP.repeats_needed(np.float64(0.1), np.float32(0.05)) > 1
    lo, hi = P.median_range(CM, TRACES, np.int64(3), level=np.float32(0.9))
    assert 0 < lo <= hi
    from specdec_core import labs

    lab = labs.kv_lab().set(gamma=np.int64(4), context=np.int64(8192))
    assert type(lab.state["gamma"]) is int and lab.state["gamma"] == 4


def test_C5_9_the_stored_quick_results_read():
    import pathlib

    from specdec_core.measured import read_capstone

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "llm-quick.json"
    quick = read_capstone(str(path))
    assert quick.quick and quick.runs


# ================================================================ one property test per kind

#: The argument kinds of the pass: bool, float for int, numpy scalars, NaN, ±inf, negative, huge,
#: wrong shape, strings and None.
KINDS = [
    True,
    False,
    2.5,
    2.0,
    np.float64(2.0),
    np.int64(2),
    np.int32(1),
    math.nan,
    math.inf,
    -math.inf,
    -1,
    10**9,
    10**30,
    [2],
    np.array([2]),
    "2",
    None,
]

CM4 = _cost(5, 4)
RES = sc.speculative_generate(T, D, (), gamma=2, max_new_tokens=20, rng=R(0))

GAMMA_TAKERS = {
    "speculative_generate": (
        "gamma",
        lambda v: sc.speculative_generate(T, D, (), gamma=v, max_new_tokens=3, rng=R(0)),
    ),
    "speculative_round": ("gamma", lambda v: sc.sampling.speculative_round(T, D, (), gamma=v, rng=R(0))),
    "FixedGamma": ("gamma", lambda v: PO.FixedGamma(v)),
    "GrowShrink(start)": ("start", lambda v: PO.GrowShrink(start=v, high=10)),
    "GrowShrink(high)": ("high", lambda v: PO.GrowShrink(start=1, high=v)),
    "ConfidenceStop": ("max_gamma", lambda v: PO.ConfidenceStop(v, 0.5)),
    "PrefixGamma rule": (
        "rule",
        lambda v: sc.speculative_generate(
            T, D, (), gamma=PO.PrefixGamma(lambda c: v, "rule"), max_new_tokens=3, rng=R(0)
        ),
    ),
    "peeking_generate": (
        "gamma",
        lambda v: PK.peeking_generate(T, D, (), gamma=v, max_new_tokens=3, rng=R(0)),
    ),
    "round_output_law": ("gamma", lambda v: PR.round_output_law(T, D, (), v)),
    "speculative_sequence_law": ("gamma", lambda v: PR.speculative_sequence_law(T, D, (), 2, v)),
    "peeking_round_law": ("gamma", lambda v: PK.peeking_round_law(T, D, (), v)),
    "peeking_sequence_law": ("gamma", lambda v: PK.peeking_sequence_law(T, D, (), 2, v)),
    "exact_round_law": ("gamma", lambda v: AS.exact_round_law(T, D, (), v)),
    "long_run_stats": ("gamma", lambda v: AS.long_run_stats(T, D, v)),
    "full_rounds": (
        "gamma",
        lambda v: AS.full_rounds(RES, v) if v is not None else AS.full_rounds(RES, "none"),
    ),
    "output_count_distribution": ("gamma", lambda v: CT.output_count_distribution(0.5, v)),
    "expected_output_count": ("gamma", lambda v: CT.expected_output_count(0.5, v)),
    "expected_gain": ("gamma_to", lambda v: CT.expected_gain(0.5, 1, v)),
    "expected_count_curve": ("max_gamma", lambda v: CT.expected_count_curve(0.5, v)),
    "iid_accepted_share": ("gamma", lambda v: CT.iid_accepted_share(0.5, v)),
    "draft_cost_ms": ("gamma", lambda v: TM.draft_cost_ms(v, per_token_ms=1)),
    "verify_cost_ms": ("gamma", lambda v: TM.verify_cost_ms(v, base_ms=1)),
    "improvement_factor": ("gamma", lambda v: TM.improvement_factor(0.5, v, 0.1)),
    "optimal_gamma": ("max_gamma", lambda v: TM.optimal_gamma(0.5, 0.1, v)),
    "work_account": ("gamma", lambda v: TM.work_account(0.5, v)),
    "serving_point": (
        "gamma",
        lambda v: sc.serving_point(M8, D1B, HW, dtype="bf16", alpha=0.5, gamma=v, sequences=1, context=0),
    ),
    "simulate_ragged_batch": (
        "gamma",
        lambda v: sc.simulate_ragged_batch([0.5, 0.5], [0.5, 0.5], gamma=v, batch=2, rounds=2, rng=R(0)),
    ),
    "CostModel.round_ms": ("gamma", lambda v: CM4.round_ms(v)),
    "break_even_alpha": ("gamma", lambda v: P.break_even_alpha(CM4, v)),
    "sampled_traces": ("gamma", lambda v: P.sampled_traces(np.full(5, 0.5), v, sims=2)),
    "acceptance_length": ("gamma", lambda v: AS.acceptance_length(RES, "none" if v is None else v)),
    "acceptance_report": ("gamma", lambda v: AS.acceptance_report(RES, T, D, "none" if v is None else v)),
    "measured_work": ("gamma", lambda v: AS.measured_work(RES, "none" if v is None else v)),
    "expected_accepted": ("gamma", lambda v: CT.expected_accepted(0.5, v)),
    "mixture_expected_count": ("gamma", lambda v: CT.mixture_expected_count([0.5], [1.0], v)),
    "rollback_positions": ("gamma", lambda v: sc.kv.rollback_positions(0.5, v)),
    "time_to_first_token_ms": (
        "gamma",
        lambda v: sc.latency.time_to_first_token_ms(target_prefill_ms=1.0, gamma=v),
    ),
    "verification_cost": ("gamma", lambda v: RF.verification_cost(M8, HW, dtype="bf16", gamma=v)),
    "implied_draft_cost": ("gamma", lambda v: sc.serving.implied_draft_cost(0.5, v, 1.5)),
    "serving_curve": (
        "max_gamma",
        lambda v: sc.serving.serving_curve(
            M8, D1B, HW, dtype="bf16", alpha=0.5, sequences=1, context=0, max_gamma=v
        ),
    ),
    "expected_count_polynomial": ("gamma", lambda v: sc.symbolic.expected_count_polynomial(v)),
    "alpha_needed": ("max_gamma", lambda v: TM.alpha_needed(0.1, max_gamma=v)),
    "expected_tokens_iid": ("gamma", lambda v: sc.llm.runs.expected_tokens_iid(0.5, v)),
    "StaleProcessed.propose": ("gamma", lambda v: STALE.propose((), v, R(0))),
}

T_TAKERS = {
    "CostModel(verify_ms) point": ("verify_ms", lambda v: P.CostModel({v: 1.0})),
    "CostModel(draft_ms) point": ("draft_ms", lambda v: P.CostModel({1: 1.0}, {v: 1.0})),
    "relative_cost point": ("curve", lambda v: RF.relative_cost({1: 1.0, v: 2.0})),
    "roofline_curve": ("positions", lambda v: RF.roofline_curve(M8, HW, dtype="bf16", positions=[v])),
    "pass_time": ("positions", lambda v: RF.pass_time(M8, HW, dtype="bf16", positions=v)),
    "pass_bytes": ("positions", lambda v: RF.pass_bytes(M8, dtype="bf16", positions=v)),
    "pass_flops": ("positions", lambda v: RF.pass_flops(M8, positions=v)),
}

PREFIX_TAKERS = {
    "speculative_generate": lambda v: sc.speculative_generate(T, D, v, gamma=1, max_new_tokens=2, rng=R(0)),
    "speculative_round": lambda v: sc.sampling.speculative_round(T, D, v, gamma=1, rng=R(0)),
    "autoregressive_generate": lambda v: sc.autoregressive_generate(T, v, max_new_tokens=2, rng=R(0)),
    "round_output_law": lambda v: PR.round_output_law(T, D, v, 1),
    "speculative_sequence_law": lambda v: PR.speculative_sequence_law(T, D, v, 2, 1),
    "peeking_round_law": lambda v: PK.peeking_round_law(T, D, v, 1),
    "peeking_sequence_law": lambda v: PK.peeking_sequence_law(T, D, v, 2, 1),
    "peeking_generate": lambda v: PK.peeking_generate(T, D, v, gamma=1, max_new_tokens=2, rng=R(0)),
    "StaleProcessed.score": lambda v: STALE.score(v, ()),
    "StaleProcessed.propose": lambda v: STALE.propose(v, 1, R(0)),
    "processed model": lambda v: PR.processed(T, PR.RepetitionPenalty(2))(v),
    "exact_round_law": lambda v: AS.exact_round_law(T, D, v, 1),
    "tree_round_law": lambda v: sc.tree_round_law(T, D, v, tr.chain_tree(1)),
    "tree_generate": lambda v: ts.tree_generate(T, D, v, tr.chain_tree(1), 2, R(0)),
    "toy sequence_law": lambda v: sequence_law(T, v, 2),
    "toy model": lambda v: T(v),
    "toy model exact": lambda v: T.exact(v),
    "match_round_law": lambda v: sc.engines.match_round_law(T, D, v, 1, "sampled"),
    "match_sequence_law": lambda v: sc.engines.match_sequence_law(T, D, v, 2, 1, "sampled"),
    "GreedyDraft.exact": lambda v: sc.engines.GreedyDraft(D).exact(v),
    "Grammar.allowed": lambda v: PR.at_most_once(0, 4).allowed(v, 4),
    "process": lambda v: PR.process([0.25] * 4, v, [PR.at_most_once(0, 4)]),
}
PREFIX_KINDS = KINDS + [
    (9,),
    (-1,),
    (True,),
    ("1",),
    (0.0,),
    (1.7,),
    (np.int64(1),),
    (1e30,),
    (math.nan,),
    {0: 0.5},
    {0, 1},
    "ab",
    np.array([[1]]),
    (10**30,),
]

COST_TAKERS = {
    "CostModel(verify_ms)": ("verify_ms", lambda v: P.CostModel({1: v})),
    "CostModel(draft_ms)": ("draft_ms", lambda v: P.CostModel({1: 1.0}, {0: v})),
    "CostModel(overhead_ms)": ("overhead_ms", lambda v: P.CostModel({1: 1.0}, None, {0: v})),
    "CostModel(curve)": ("verify_ms", lambda v: P.CostModel(v)),
    "relative_cost(time)": ("curve", lambda v: RF.relative_cost({1: 1.0, 2: v})),
    "relative_cost(curve)": ("curve", lambda v: RF.relative_cost(v)),
    "break_even_alpha(costs)": ("costs", lambda v: P.break_even_alpha(v, 1)),
    "predict_decode(costs)": ("costs", lambda v: P.predict_decode(v, P.plain_trace(2))),
    "median_range(costs)": ("costs", lambda v: P.median_range(v, TRACES, 2)),
}
COST_KINDS = KINDS + [1 + 0j, {1: 1.0}, {}, {1: math.nan}, {0.5: 1.0}, 1e308, np.float32(2.0), CM]


def _value_or_named_error(call, name):
    """The call returns a value, or raises a ValueError whose message names ``name``: never
    another exception, a warning, or a hang."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with deadline(20):
            try:
                call()
            except ValueError as exc:
                assert name in str(exc), f"the ValueError does not name {name!r}: {exc}"


@settings(max_examples=250, deadline=None)
@given(st.sampled_from(sorted(GAMMA_TAKERS)), st.sampled_from(KINDS))
def test_every_gamma_taker_gives_a_value_or_names_the_argument(where, value):
    name, call = GAMMA_TAKERS[where]
    _value_or_named_error(lambda: call(value), name)
    if isinstance(value, (bool, float, str, list, np.ndarray, np.floating)) or value is None or value == -1:
        with pytest.raises(ValueError):  # never taken for an integer γ
            call(value)


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(sorted(T_TAKERS)),
    st.sampled_from([v for v in KINDS if not isinstance(v, (list, np.ndarray))]),
)
def test_every_T_taker_gives_a_value_or_names_the_argument(where, value):
    name, call = T_TAKERS[where]
    _value_or_named_error(lambda: call(value), name)
    if (isinstance(value, (float, str, np.floating)) or value is None or value == -1) and not isinstance(
        value, bool
    ):
        with pytest.raises(ValueError):
            call(value)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(PREFIX_TAKERS)), st.sampled_from(PREFIX_KINDS))
def test_every_prefix_taker_gives_a_value_or_names_the_prefix(where, value):
    call = PREFIX_TAKERS[where]
    _value_or_named_error(lambda: call(value), "prefix")
    seq = isinstance(value, (tuple, list)) or (isinstance(value, np.ndarray) and value.ndim == 1)
    ok = seq and all(
        isinstance(t, (int, np.integer)) and not isinstance(t, bool) and 0 <= t < 4 for t in value
    )
    if not ok:
        with pytest.raises(ValueError):
            call(value)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(COST_TAKERS)), st.sampled_from(COST_KINDS))
def test_every_cost_curve_taker_gives_a_value_or_names_the_argument(where, value):
    name, call = COST_TAKERS[where]
    _value_or_named_error(lambda: call(value), name)

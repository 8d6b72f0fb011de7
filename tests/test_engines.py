"""The verifiers engines run, checked exactly (``specdec_core.engines``, notebook 09b).

Exact enumeration, in fractions: the match rule's one-position law is p and its law of 4-token
texts is the toy target's (TV 0), for a sampled and for a greedy draft; the two deliberately
wrong mismatch rules ("redraw", and "residual" with a sampled draft) are caught with their exact
TV > 0. With a greedy draft the match rule and the strict rule of notebook 02 coincide: the same
round law, exactly. Property tests (hypothesis): Σ q·p ≤ Σ min(p, q) with equality exactly when
every symbol has min(p, q) = 0 or max(p, q) = 1. The engines' dashboard numbers against the
collection's own functions on a seeded run; the overlap time model; bad input; the lab's texts.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import exact_pair, float_pair

from specdec_core import engines as E
from specdec_core.acceptance_stats import acceptance_by_position, acceptance_length, accepted_share
from specdec_core.labs import matching as lab_mod
from specdec_core.labs import matching_lab
from specdec_core.processors import round_output_law
from specdec_core.sampling import speculative_generate
from specdec_core.timing import round_time_ms
from specdec_core.toy import sequence_law, toy_draft, toy_target
from specdec_core.verify import acceptance_probability, output_distribution_with, total_variation

P = [F(3, 5), F(3, 10), F(1, 10)]
Q = [F(1, 5), F(3, 10), F(1, 2)]
T, D = toy_target(), toy_draft()


def tv_law(a: dict, b: dict) -> F:
    return sum((abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b)), F(0)) / 2


# ---------------------------------------------------------------- one position, exactly


@pytest.mark.parametrize("draft", E.DRAFT_MODES)
def test_match_rule_emits_p_exactly_at_the_worked_example(draft):
    out = E.match_output_distribution(P, Q, draft)
    assert list(out) == P and all(isinstance(v, F) for v in out)
    assert total_variation(out, P) == 0


def test_acceptances_at_the_worked_example():
    assert E.match_acceptance(P, Q) == F(13, 50)  # 0.2·0.6 + 0.3·0.3 + 0.5·0.1
    assert acceptance_probability(P, Q) == F(3, 5)
    assert E.acceptance_gap(P, Q) == F(17, 50)
    assert list(E.greedy_row(Q)) == [0, 0, 1]  # C is q's most likely symbol
    assert E.match_acceptance(P, Q, "greedy") == F(1, 10) == acceptance_probability(P, E.greedy_row(Q))
    assert E.acceptance_gap(P, Q, "greedy") == 0
    assert E.match_acceptance([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]) == pytest.approx(0.26, abs=1e-15)


@pytest.mark.parametrize(
    "draft, rule, tv",
    [("sampled", "redraw", F(9, 250)), ("sampled", "residual", F(13, 50)), ("greedy", "redraw", F(9, 100))],
)
def test_wrong_mismatch_rules_are_caught_exactly(draft, rule, tv):
    """The deliberate mistakes change the law, and the exact check sees it."""
    out = E.match_output_distribution(P, Q, draft, rule)
    assert sum(out) == 1 and total_variation(out, P) == tv > 0


def test_residual_after_a_greedy_match_happens_to_be_right():
    """With one-hot r the strict residual is p without x*: the strict rule and matching coincide."""
    assert list(E.match_output_distribution(P, Q, "greedy", "residual")) == P


def test_joint_law_is_the_product_of_independent_draws():
    J = E.match_joint_law(P, Q)
    assert J.shape == (3, 3) and sum(J.flat) == 1
    assert all(J[x, y] == Q[x] * P[y] for x in range(3) for y in range(3))
    assert list(J.sum(axis=0)) == P  # the target's draw is p whatever x is: why "emit y" is exact


@settings(max_examples=200, deadline=None)
@given(exact_pair(max_n=6), st.sampled_from(E.DRAFT_MODES))
def test_match_rule_keeps_p_for_any_pair(pq, draft):
    p, q = pq
    assert list(E.match_output_distribution(p, q, draft)) == list(p)
    r = E.proposal_law(q, draft)
    assert list(output_distribution_with(p, r, "residual")) == list(p)  # the strict rule too


@settings(max_examples=300, deadline=None)
@given(exact_pair(max_n=6))
def test_match_acceptance_never_exceeds_alpha_and_equality_is_characterized(pq):
    """Σ q·p ≤ Σ min(p, q), each term: q·p = min·max ≤ min. Equality iff every symbol has
    min(p, q) = 0 or max(p, q) = 1 (disjoint supports, or p or q one-hot)."""
    p, q = pq
    alpha, match = acceptance_probability(p, q), E.match_acceptance(p, q)
    assert isinstance(match, F) and 0 <= match <= alpha
    equal_iff = all(min(a, b) == 0 or max(a, b) == 1 for a, b in zip(p, q))
    assert (match == alpha) == equal_iff
    assert E.acceptance_gap(p, q) == alpha - match
    assert E.acceptance_gap(p, q, "greedy") == 0


@settings(max_examples=100, deadline=None)
@given(float_pair(max_n=8), st.sampled_from(E.DRAFT_MODES))
def test_float_inputs_give_float64_and_agree_with_exact(pq, draft):
    p, q = pq
    out = E.match_output_distribution(p, q, draft)
    assert out.dtype == np.float64 and np.allclose(out, p, atol=1e-12)
    m = E.match_acceptance(p, q, draft)
    assert isinstance(m, float) and m <= float(acceptance_probability(p, E.proposal_law(q, draft))) + 1e-12


# ---------------------------------------------------------------- whole rounds and texts, exactly


@pytest.mark.parametrize("gamma", [0, 1, 2, 3])
def test_greedy_match_round_equals_the_strict_round_with_a_one_hot_draft(gamma):
    G = E.GreedyDraft(D)
    for start in [(), (0,), (2,), (3,)]:
        strict = round_output_law(T, G, start, gamma)
        assert E.match_round_law(T, D, start, gamma, "greedy") == strict
        assert E.match_round_law(T, G, start, gamma, "sampled") == strict  # G's rows are one-hot


@pytest.mark.parametrize("gamma", [1, 2, 3])
@pytest.mark.parametrize("draft", E.DRAFT_MODES)
def test_match_rule_keeps_the_law_of_whole_texts(draft, gamma):
    law = sequence_law(T, (), 4)
    assert tv_law(E.match_sequence_law(T, D, (), 4, gamma, draft), law) == 0


@pytest.mark.parametrize(
    "draft, rule, tv", [("sampled", "redraw", F(2249, 16000)), ("sampled", "residual", F(5369, 16000))]
)
def test_wrong_rules_break_the_law_of_whole_texts(draft, rule, tv):
    law = sequence_law(T, (), 4)
    assert tv_law(E.match_sequence_law(T, D, (), 4, 3, draft, rule), law) == tv


def test_sampled_match_rounds_are_shorter_than_strict_rounds():
    """Same law, fewer tokens per round: E[K] of the match round is below the strict one's."""

    def mean_k(law):
        return sum((len(k) * v for k, v in law.items()), F(0))

    strict, match = round_output_law(T, D, (), 3), E.match_round_law(T, D, (), 3)
    assert sum(match.values()) == 1 and mean_k(match) < mean_k(strict)


def test_greedy_draft_rows():
    G = E.GreedyDraft(D)
    for ctx in [(), (0,), (1,), (2,), (3,)]:
        exact, flt = G.exact(ctx), G(ctx)
        assert sum(exact) == 1 and int(np.argmax(flt)) == list(exact).index(1)
        assert int(np.argmax(flt)) == int(np.argmax(D(ctx)))
    assert "GreedyDraft" in repr(G)


# ---------------------------------------------------------------- dashboard numbers


def test_engine_metrics_are_the_collections_functions_on_a_seeded_run():
    res = speculative_generate(T, D, (), gamma=4, max_new_tokens=400, rng=np.random.default_rng(7))
    m = E.engine_metrics(res)
    assert m["draft_acceptance_rate"] == accepted_share(res)
    assert m["mean_acceptance_length"] == acceptance_length(res)  # no stop token here
    assert m["system_efficiency"] == acceptance_length(res) / 5
    rows = acceptance_by_position(res)
    assert m["per_position_acceptance_rate"] == tuple(r["share_of_rounds"] for r in rows)
    # per position over *all* rounds falls with the position; accepted/checked need not
    rates = m["per_position_acceptance_rate"]
    assert all(a >= b for a, b in zip(rates, rates[1:]))
    assert rates[0] == rows[0]["rate"]  # every round checks position 1


def test_engine_metrics_refuse_a_run_without_proposals():
    res = speculative_generate(T, D, (), gamma=0, max_new_tokens=5, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="no proposals"):
        E.engine_metrics(res)


# ---------------------------------------------------------------- overlap


def test_overlap_time_model():
    kw = dict(draft_ms=F(4), verify_ms=F(10), overhead_ms=F(1))
    assert E.overlapped_round_time_ms(**kw, usable=0) == round_time_ms(**kw) == 15
    assert E.overlapped_round_time_ms(**kw) == 11  # max(4, 10) + 1
    assert E.overlapped_round_time_ms(**kw, usable=F(1, 2)) == 13
    assert E.overlapped_round_time_ms(draft_ms=4.0, verify_ms=10.0, overhead_ms=1.0, usable=0.5) == 13.0
    assert E.overlapped_round_time_ms(draft_ms=F(10), verify_ms=F(10)) == 10  # the best case: half


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: E.match_acceptance(P, Q, "beam"), "draft must be one of"),
        (lambda: E.match_output_distribution(P, Q, "sampled", "skip"), "on_mismatch must be one of"),
        (lambda: E.match_acceptance(P, [F(1, 2), F(1, 2)]), "same shape"),
        (lambda: E.match_acceptance([0.5, 0.6], [0.5, 0.5]), "must sum to 1"),
        (lambda: E.match_acceptance([[0.5, 0.5]], [[0.5, 0.5]]), "shape"),
        (lambda: E.greedy_row([F(1, 2), F(1, 3)]), "sum to exactly 1"),
        (lambda: E.GreedyDraft(3), "model must be a model"),
        (lambda: E.match_round_law(T, D, (), -1), "gamma"),
        (lambda: E.match_round_law(T, D, (), 2, "top-k"), "draft_mode must be one of"),
        (lambda: E.match_round_law(T, lambda c: [1.0, 0, 0, 0], (), 1), "draft must offer exact rows"),
        (lambda: E.match_round_law(T, D, (), 12), "would enumerate"),
        (lambda: E.match_joint_law([1 / 2000] * 2000, [1 / 2000] * 2000), "would enumerate"),
        (lambda: E.overlapped_round_time_ms(draft_ms=-1, verify_ms=1), "draft_ms"),
        (lambda: E.overlapped_round_time_ms(draft_ms=1, verify_ms=1, usable=1.5), "usable"),
        (lambda: E.overlapped_round_time_ms(draft_ms=0, verify_ms=0), "takes no time"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------- the lab's texts


def test_lab_defaults_show_the_worked_example():
    t = matching_lab().last_texts
    assert (
        t["acceptance"] == "[derived] sampled draft: strict α = Σ min(p, q) = 0.6000 · match Σ q·p = 0.2600"
    )
    assert t["gap"].startswith(
        "[derived] gap α − match = 0.3400 per proposal; at γ = 4 (iid) E[K] strict 2.3056"
    )
    assert t["law"] == "[derived] output law: TV(strict, p) = 0.0000 · TV(match, p) = 0.0000"


def test_lab_greedy_draft_closes_the_gap():
    lab = matching_lab(draft="greedy")
    assert "proposes C (argmax q)" in lab.last_texts["acceptance"]
    assert "gap α − match = 0.0000" in lab.last_texts["gap"]


def test_lab_zero_weights_say_why_once():
    lab = matching_lab()
    lab.set(q_A=0.0, q_B=0.0, q_C=0.0)
    t = lab.last_texts
    assert (
        t["acceptance"].startswith("No distribution: all weights of q are 0") and t["gap"] == t["law"] == ""
    )
    assert "lab-impossible" in lab._dom_classes


def _ends_and_middle(ctl):
    if ctl.kind in ("int", "float"):
        n = round((ctl.hi - ctl.lo) / ctl.step)
        vals = [round(v, 10) for v in (ctl.lo, ctl.lo + (n // 2) * ctl.step, ctl.hi)]
        return [int(v) for v in vals] if ctl.kind == "int" else vals
    return [v for _, v in ctl.options]


@pytest.mark.parametrize("key", list(lab_mod.SPEC.controls))
def test_lab_every_control_at_both_ends_and_the_middle(key):
    lab = matching_lab()
    for v in _ends_and_middle(lab_mod.SPEC.controls[key]):
        lab.set(**{key: v})
        t = lab.last_texts
        assert t == lab_mod.texts(lab.state)
        assert all(
            "nan" not in s.lower() and "inf" not in s.lower() and "-0.0000" not in s for s in t.values()
        )
        assert lab.png.startswith(b"\x89PNG")


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.35, 0.5, 1.0]), min_size=6, max_size=6),
    st.sampled_from(E.DRAFT_MODES),
    st.integers(1, 8),
)
def test_lab_texts_are_the_librarys_numbers(w, draft, gamma):
    state = {
        **lab_mod.DEFAULTS,
        "draft": draft,
        "gamma": gamma,
        **dict(zip(lab_mod.P_KEYS + lab_mod.Q_KEYS, w)),
    }
    t = lab_mod.texts(state)
    if sum(w[:3]) == 0 or sum(w[3:]) == 0:
        assert t["acceptance"].startswith("No distribution") and t["gap"] == t["law"] == ""
        return
    p, q = lab_mod.normalized_pair(state)
    assert f"{float(E.match_acceptance(p, q, draft)):.4f}" in t["acceptance"]
    assert "TV(match, p) = 0.0000" in t["law"] and "TV(strict, p) = 0.0000" in t["law"]

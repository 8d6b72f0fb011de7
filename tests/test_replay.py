"""Replay of recorded rounds (specdec_core.replay): exact step lists for hand-built records, and
counter invariants over many seeded rounds of the toy language.

Statistics and thresholds: none are statistical here. The hand-built records are checked
step by step *exactly*; the property tests check identities that must hold for every round
(tolerance 0): emitted = accepted + 1 per round, proposed = accepted + rejected + discarded,
target rows scored = proposed + 1 = emitted + unused target rows, and the replay's final
counters equal GenerationResult's own accounting.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.replay import (
    Counters,
    correction_row,
    counters_line,
    describe_step,
    format_counters,
    replay_steps,
    step_at,
)
from specdec_core.sampling import RoundRecord, speculative_generate
from specdec_core.toy import SYMBOLS, toy_draft, toy_target

T, D = toy_target(), toy_draft()


def _rows(prefix, xs, model):
    return np.stack([model(prefix + tuple(xs[:i])) for i in range(len(xs) + (model is T))])


def rejection_record():
    """From the empty prefix the draft proposed B B A; B accepted (u 0.3 < 1/2), B rejected
    (u 0.9 ≥ 4/5), A discarded, correction C from the residual after B = [0, 0, 5/6, 1/6]."""
    xs = (1, 1, 0)
    return RoundRecord(
        prefix=(),
        proposals=xs,
        q_x=(0.5, 0.25, 0.25),
        p_x=(0.25, 0.2, 0.0),
        ratios=(0.5, 0.8, 0.0),
        draws=(0.3, 0.9),
        stop=1,
        emitted=(1, 2),
        kind="correction",
        p_rows=_rows((), xs, T),
        q_rows=_rows((), xs, D),
    )


def bonus_record():
    """After A (where target = draft) the draft proposed B C; both accepted; bonus A ~ p₃."""
    xs = (1, 2)
    return RoundRecord(
        prefix=(0,),
        proposals=xs,
        q_x=(0.6, 0.5),
        p_x=(0.6, 0.5),
        ratios=(1.0, 1.0),
        draws=(0.7, 0.2),
        stop=None,
        emitted=(1, 2, 0),
        kind="bonus",
        p_rows=_rows((0,), xs, T),
        q_rows=_rows((0,), xs, D),
    )


def test_rejection_round_exact_steps():
    steps = replay_steps(rejection_record())
    assert [s.kind for s in steps] == ["start", "propose", "score", "accept", "reject", "discard", "correct"]
    assert [s.index for s in steps] == list(range(7))
    assert [s.statuses for s in steps] == [
        (),
        ("proposed",) * 3,
        ("proposed",) * 3,
        ("accepted", "proposed", "proposed"),
        ("accepted", "rejected", "proposed"),
        ("accepted", "rejected", "discarded"),
        ("accepted", "rejected", "discarded"),
    ]
    C = Counters
    assert [s.counters for s in steps] == [
        C(),
        C(proposed=3),
        C(proposed=3, scored=4),
        C(proposed=3, scored=4, accepted=1),
        C(proposed=3, scored=4, accepted=1, rejected=1),
        C(proposed=3, scored=4, accepted=1, rejected=1, discarded=1),
        C(rounds_done=1, proposed=3, scored=4, accepted=1, rejected=1, discarded=1, corrections=1, emitted=2),
    ]
    acc, rej = steps[3], steps[4]
    assert (acc.position, acc.token, acc.u, acc.ratio, acc.p_x, acc.q_x) == (0, 1, 0.3, 0.5, 0.25, 0.5)
    assert (rej.position, rej.token, rej.u, rej.ratio) == (1, 1, 0.9, 0.8)
    assert acc.draws == (0.3,) and rej.draws == (0.3, 0.9)
    last = steps[-1]
    assert (last.final, last.final_kind, last.position) == (2, "correction", 1)
    assert last.row == pytest.approx((0, 0, 5 / 6, 1 / 6), abs=1e-12)
    assert last.positive_part == pytest.approx((0, 0, 0.25, 0.05), abs=1e-12)
    assert last.p_row == pytest.approx((0, 0.2, 0.5, 0.3)) and last.q_row == pytest.approx((0.25,) * 4)
    assert steps[-1].counters.rejected_work == 2


def test_bonus_round_exact_steps():
    steps = replay_steps([bonus_record()])
    assert [s.kind for s in steps] == ["start", "propose", "score", "accept", "accept", "bonus"]
    assert steps[-1].statuses == ("accepted", "accepted")
    assert steps[-1].counters == Counters(rounds_done=1, proposed=2, scored=3, accepted=2, bonus=1, emitted=3)
    assert (steps[-1].final, steps[-1].final_kind) == (0, "bonus")
    assert steps[-1].row == pytest.approx((2 / 5, 0, 1 / 5, 2 / 5))  # p after C
    assert steps[-1].counters.rejected_work == 0


def test_two_rounds_counters_accumulate_and_text():
    recs = [rejection_record(), bonus_record()]
    steps = replay_steps(recs)
    assert len(steps) == 1 + 6 + 5
    assert steps[-1].counters == Counters(
        rounds_done=2,
        proposed=5,
        scored=7,
        accepted=3,
        rejected=1,
        discarded=1,
        corrections=1,
        bonus=1,
        emitted=5,
    )
    assert counters_line(recs, 0) == (
        "round 1 of 2 · draft proposals 0 · target rows scored 0 · "
        "accepted tokens 0 · unused target rows 0 (0 of discarded "
        "proposals + 0 bonus) · emitted output 0"
    )
    assert counters_line(recs, 99) == (
        "round 2 of 2 · draft proposals 5 · target rows scored 7 · "
        "accepted tokens 3 · unused target rows 2 (1 of discarded "
        "proposals + 1 bonus) · emitted output 5"
    )
    assert counters_line(recs, -3) == counters_line(recs, 0)


def test_rejection_at_last_position_has_no_discard_step():
    r = rejection_record()
    rec = RoundRecord(
        prefix=(),
        proposals=(1, 1),
        q_x=r.q_x[:2],
        p_x=r.p_x[:2],
        ratios=r.ratios[:2],
        draws=(0.3, 0.9),
        stop=1,
        emitted=(1, 2),
        kind="correction",
        p_rows=r.p_rows[:3],
        q_rows=r.q_rows[:2],
    )
    assert [s.kind for s in replay_steps(rec)] == ["start", "propose", "score", "accept", "reject", "correct"]


def test_gamma_zero_round_and_no_distributions():
    rec = RoundRecord(
        prefix=(2,), proposals=(), q_x=(), p_x=(), ratios=(), draws=(), stop=None, emitted=(3,), kind="bonus"
    )
    steps = replay_steps(rec)
    assert [s.kind for s in steps] == ["start", "propose", "score", "bonus"]
    assert steps[-1].row is None and steps[-1].counters.emitted == 1 and steps[-1].counters.scored == 1
    assert "proposes nothing" in describe_step(steps[1], SYMBOLS)


def test_empty_records_give_only_start():
    steps = replay_steps([])
    assert len(steps) == 1 and steps[0].kind == "start"
    assert format_counters(steps[0], 0).startswith("no rounds")


def test_describe_steps_readable():
    texts = [describe_step(s, SYMBOLS) for s in replay_steps([rejection_record(), bonus_record()])]
    assert "u = 0.300 < min(1, p/q) = 0.500" in texts[3]
    assert "u = 0.900 ≥ min(1, p/q) = 0.800" in texts[4]
    assert "residual" in texts[6] and "bonus token A" in texts[-1]
    assert not any("nan" in t.lower() for t in texts)


@pytest.mark.parametrize(
    "rule,expected",
    [
        ("residual", (0, 0, 5 / 6, 1 / 6)),
        ("draft", (0.25,) * 4),
        ("target", (0, 0.2, 0.5, 0.3)),
        ("uniform", (0.25,) * 4),
    ],
)
def test_correction_row_rules(rule, expected):
    assert correction_row((0, 0.2, 0.5, 0.3), (0.25,) * 4, rule) == pytest.approx(expected)


def test_correction_row_equal_rows_falls_back_to_p():
    assert correction_row((0.5, 0.5), (0.5, 0.5)) == (0.5, 0.5)


def _bad(**changes):
    base = dict(
        prefix=(),
        proposals=(1, 1),
        q_x=(0.5, 0.25),
        p_x=(0.25, 0.2),
        ratios=(0.5, 0.8),
        draws=(0.3, 0.9),
        stop=1,
        emitted=(1, 2),
        kind="correction",
    )
    base.update(changes)
    return RoundRecord(**base)


@pytest.mark.parametrize(
    "records,match",
    [
        ([object()], "not a RoundRecord"),
        ([_bad(stop=5)], "stop=5 outside"),
        ([_bad(draws=(0.3,))], "1 draws for 2 checked"),
        ([_bad(kind="bonus")], "does not match stop"),
        ([_bad(emitted=(0, 2))], "accepted prefix"),
        ([_bad(stop=None, draws=(0.1, 0.2), emitted=(1, 1))], "does not match stop"),
    ],
)
def test_bad_records_raise(records, match):
    with pytest.raises(ValueError, match=match):
        replay_steps(records)


@pytest.mark.parametrize(
    "args,match",
    [
        (((0.5, 0.5), (1.0,), "residual"), "same length"),
        (((0.5, 0.5), (0.5, 0.5), "bogus"), "correction must be"),
    ],
)
def test_correction_row_bad_inputs(args, match):
    with pytest.raises(ValueError, match=match):
        correction_row(*args)


@pytest.mark.parametrize("n", [1.5, "2", True, None])
def test_step_at_bad_clicks(n):
    with pytest.raises(ValueError, match="n_clicks"):
        step_at(replay_steps(rejection_record()), n)


def test_step_at_empty():
    with pytest.raises(ValueError, match="empty"):
        step_at([], 0)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    gamma=st.integers(0, 5),
    n=st.integers(1, 14),
    prefix=st.sampled_from([(), (0,), (1,), (2,), (3,)]),
)
def test_counter_invariants_over_seeded_rounds(seed, gamma, n, prefix):
    res = speculative_generate(
        T,
        D,
        prefix,
        gamma=gamma,
        max_new_tokens=n,
        rng=np.random.default_rng(seed),
        record_distributions=True,
    )
    steps = replay_steps(res.records)
    prev = steps[0].counters
    round_start = prev
    for s in steps[1:]:
        c = s.counters
        # counters never decrease
        for f in ("rounds_done", "proposed", "scored", "accepted", "rejected", "discarded", "emitted"):
            assert getattr(c, f) >= getattr(prev, f)
        if s.kind in ("correct", "bonus"):  # round finished: per-round identities
            d = {
                f: getattr(c, f) - getattr(round_start, f)
                for f in ("proposed", "scored", "accepted", "rejected", "discarded", "emitted")
            }
            assert d["emitted"] == d["accepted"] + 1
            assert d["proposed"] == d["accepted"] + d["rejected"] + d["discarded"]
            assert d["scored"] == d["proposed"] + 1 == d["emitted"] + d["rejected"] + d["discarded"]
            assert d["rejected"] == (s.kind == "correct")
            round_start = c
        prev = c
    c = steps[-1].counters
    summ = res.summary()
    assert (
        c.rounds_done,
        c.proposed,
        c.accepted,
        c.rejected,
        c.discarded,
        c.corrections,
        c.bonus,
        c.scored,
    ) == (
        summ["rounds"],
        summ["proposed"],
        summ["accepted"],
        summ["rejected"],
        summ["discarded"],
        summ["corrections"],
        summ["bonus"],
        summ["target_positions"],
    )
    assert c.emitted == len(res.tokens) == n
    # the correction rows shown are distributions, with the drawn token in their support
    for s in steps:
        if s.kind in ("correct", "bonus"):
            assert sum(s.row) == pytest.approx(1.0) and s.row[s.final] > 0
            assert s.final == s.token


def test_exact_residual_row_matches_verify():
    from specdec_core.verify import residual_distribution

    exact = residual_distribution(T.exact((1,)), D.exact((1,)))
    assert tuple(exact) == (0, 0, Fraction(5, 6), Fraction(1, 6))
    assert replay_steps(rejection_record())[-1].row == pytest.approx(tuple(float(v) for v in exact))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    gamma=st.integers(0, 5),
    n=st.integers(1, 14),
    stop=st.sets(st.integers(0, 3), max_size=1),
)
def test_counters_line_words_are_true(seed, gamma, n, stop):
    """The counters line's breakdown, recomputed from the records row by row: a round scores
    rows 0..γ; row i is used when proposal i is checked (the rejected one's row gives the
    correction), row γ when all γ are accepted (the bonus). Unused rows = rejected_work, the
    ones before row γ = discarded, unused bonus rows = rejected; rows = emitted + after stop +
    unused."""
    res = speculative_generate(
        T, D, (), gamma=gamma, max_new_tokens=n, rng=np.random.default_rng(seed), stop=stop
    )
    unused_before_bonus = unused_bonus = 0
    for rec in res.records:
        g = len(rec.proposals)
        used = set(range(len(rec.draws))) | ({g} if rec.stop is None else set())
        unused = set(range(g + 1)) - used
        unused_bonus += g in unused
        unused_before_bonus += len(unused - {g})
        assert all(i > rec.stop for i in unused)  # only rows after the rejection
    steps = replay_steps(res.records)
    c = steps[-1].counters
    assert (c.unused_rows, c.unused_discarded_rows, c.unused_bonus_rows) == (
        unused_before_bonus + unused_bonus,
        unused_before_bonus,
        unused_bonus,
    )
    assert (c.rejected_work, c.discarded, c.rejected) == (
        unused_before_bonus + unused_bonus,
        unused_before_bonus,
        unused_bonus,
    )
    assert c.scored == c.emitted + c.after_stop + c.rejected_work
    line = format_counters(steps[-1], len(res.records))
    assert (
        f"unused target rows {c.rejected_work} ({unused_before_bonus} of discarded proposals "
        f"+ {unused_bonus} bonus)"
    ) in line
    assert f"target rows scored {c.scored} " in line
    assert ("discarded after stop" in line) == (c.after_stop > 0)
    if c.after_stop:
        assert line.endswith(f" · emitted output {c.emitted} · discarded after stop {c.after_stop}")

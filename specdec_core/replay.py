"""Replay recorded rounds step by step: a pure list of what happened, in order, with counters.

A :class:`~specdec_core.sampling.RoundRecord` already holds every number a round used (the
proposals, their p and q, the uniforms, where it stopped, what it emitted). This module only
*re-reads* that record in the order the algorithm works, so a stepper widget or a static figure
can show one step at a time. Nothing here draws a random number or decides anything: each
step's outcome comes from the record.

Steps of one round with γ proposals x₁…x_γ::

    propose   the draft proposes x₁…x_γ                      (draft proposals += γ)
    score     the target scores the γ+1 positions together   (target rows scored += γ+1)
    accept i  uᵢ < min(1, pᵢ(xᵢ)/qᵢ(xᵢ)): xᵢ is kept           (accepted += 1)
    reject i  uᵢ ≥ min(1, pᵢ(xᵢ)/qᵢ(xᵢ)): xᵢ is thrown away    (rejected += 1)
    discard   x_{i+1}…x_γ were never checked, thrown away     (discarded += γ − i)
    correct   a token drawn from the residual at that prefix  (emitted += accepted + 1)
    bonus     all γ accepted: a token drawn from p_{γ+1}      (emitted += γ + 1)
    stop      the round emitted a stop token: what it made after that token is discarded
              and generation ends                          (emitted −= after, after_stop += after)

The replay of a list of records starts with one ``start`` step (all counters 0); clicking
"next" n times shows step n. Counters are cumulative over the rounds replayed so far.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .distributions import check_int
from .verify import check_rule, correction_weights


@dataclass(frozen=True)
class Counters:
    """Cumulative accounting after a step.

    A round with γ proposals scores γ + 1 target rows: row i checks proposal i, row γ is the
    bonus row (p_{γ+1}). ``rejected`` counts rejected proposals (at most one per round) and
    ``discarded`` the unchecked proposals after a rejection. ``scored = emitted + after_stop +
    rejected_work``.

    ``unused_rows``: scored target rows never used — the rows after the first rejection, bonus
    row included; the rejected position's own row is used, it gives the correction. They are
    ``unused_discarded_rows`` (the rows *of* the discarded proposals, one each: ``discarded``)
    plus ``unused_bonus_rows`` (a round with a rejection leaves its one bonus row unused, so
    this equals ``rejected``). ``rejected_work`` is the old name of ``unused_rows``.

    ``emitted`` counts output tokens and grows when a round finishes (accepted prefix + 1
    correction or bonus); a ``stop`` step takes back what the round made after a stop token
    (counted in ``after_stop``).
    """

    rounds_done: int = 0
    proposed: int = 0
    scored: int = 0
    accepted: int = 0
    rejected: int = 0
    discarded: int = 0
    corrections: int = 0
    bonus: int = 0
    emitted: int = 0
    after_stop: int = 0

    @property
    def unused_discarded_rows(self) -> int:
        """Target rows of the proposals discarded unchecked after a rejection (one each)."""
        return self.discarded

    @property
    def unused_bonus_rows(self) -> int:
        """Bonus rows left unused: one per round that had a rejection."""
        return self.rejected

    @property
    def unused_rows(self) -> int:
        """Scored target rows never used: discarded proposals' rows + unused bonus rows."""
        return self.unused_discarded_rows + self.unused_bonus_rows

    @property
    def rejected_work(self) -> int:
        """The old name of :attr:`unused_rows`."""
        return self.unused_rows


@dataclass(frozen=True)
class ReplayStep:
    """One step of the replay. ``round`` is 0-based (−1 only for no records at all).

    ``statuses`` gives each proposal's chip status after this step; ``final`` is the
    correction/bonus token once drawn (else None). For check steps ``position``, ``token``,
    ``u``, ``ratio``, ``p_x``, ``q_x`` describe the check; for correct/bonus steps ``row`` is
    the distribution the token was drawn from (residual at the rejected prefix, or p_{γ+1}),
    with ``p_row``/``q_row`` the target/draft rows at that prefix (when recorded).
    """

    index: int
    round: int
    kind: str
    statuses: tuple
    counters: Counters
    prefix: tuple = ()
    proposals: tuple = ()
    final: int | None = None
    final_kind: str | None = None
    position: int | None = None
    token: int | None = None
    u: float | None = None
    ratio: float | None = None
    p_x: float | None = None
    q_x: float | None = None
    row: tuple | None = None
    p_row: tuple | None = None
    q_row: tuple | None = None
    scored: bool = False
    p_xs: tuple = ()
    q_xs: tuple = ()
    ratios: tuple = ()
    draws: tuple = ()
    positive_part: tuple | None = None


def _row_tuple(rows, i):
    if rows is None:
        return None
    rows = np.asarray(rows, dtype=np.float64)
    if rows.ndim != 2 or i >= rows.shape[0]:
        return None
    return tuple(float(v) for v in rows[i])


def correction_row(p_row, q_row, correction: str = "residual"):
    """The row a correction is drawn from, normalized, as floats (for display): the sampler's
    own rule (:func:`specdec_core.verify.correction_weights`), so the replay shows exactly what
    was drawn from. A residual that sums to 0 (only possible through float rounding) falls back
    to p, as the sampler does.
    """
    check_rule(correction, "correction")
    p = np.asarray(p_row, dtype=np.float64)
    q = np.asarray(q_row, dtype=np.float64)
    if p.shape != q.shape or p.ndim != 1:
        raise ValueError(f"p_row and q_row must be 1-D of the same length, got {p.shape} and {q.shape}")
    r = correction_weights(p, q, correction)
    return tuple(float(v) for v in r / r.sum())


def _check_record(rec, k):
    for name in ("proposals", "ratios", "draws", "stop", "emitted", "kind"):
        if not hasattr(rec, name):
            raise ValueError(f"records[{k}] is not a RoundRecord (no {name!r})")
    g = len(rec.proposals)
    checked = g if rec.stop is None else rec.stop + 1
    if rec.stop is not None and not 0 <= rec.stop < g:
        raise ValueError(f"records[{k}]: stop={rec.stop} outside 0..{g - 1}")
    if len(rec.draws) != checked or len(rec.ratios) < checked:
        raise ValueError(f"records[{k}]: {len(rec.draws)} draws for {checked} checked proposals")
    if rec.kind not in ("correction", "bonus") or (rec.kind == "bonus") != (rec.stop is None):
        raise ValueError(f"records[{k}]: kind {rec.kind!r} does not match stop={rec.stop}")
    acc = g if rec.stop is None else rec.stop
    made = tuple(getattr(rec, "produced", None) or rec.emitted)
    if len(made) != acc + 1 or made[:acc] != tuple(rec.proposals[:acc]):
        raise ValueError(f"records[{k}]: produced {made} is not the accepted prefix + 1 token")
    stop_at = getattr(rec, "stop_at", None)
    cut = made if stop_at is None else made[: stop_at + 1]
    if stop_at is not None and not 0 <= stop_at < len(made):
        raise ValueError(f"records[{k}]: stop_at={stop_at} outside 0..{len(made) - 1}")
    if tuple(rec.emitted) != cut:
        raise ValueError(f"records[{k}]: emitted {rec.emitted} is not {cut}")


def replay_steps(records: object, *, correction: str = "residual") -> list[ReplayStep]:
    """The ordered replay of ``records`` (a RoundRecord or a list of them), starting with a
    ``start`` step. ``correction`` only says which row to *display* for corrections (the
    sampler's rule); it changes no outcome."""
    if hasattr(records, "proposals"):
        records = [records]
    records = list(records)
    for k, rec in enumerate(records):
        _check_record(rec, k)
    c = Counters()
    first_prefix = tuple(records[0].prefix) if records else ()
    steps = [ReplayStep(0, 0 if records else -1, "start", (), c, prefix=first_prefix, proposals=())]
    for k, rec in enumerate(records):
        c = _RoundReplay(steps, c, k, rec, correction).run()
    return steps


class _RoundReplay:
    """One round's steps, appended to ``steps`` in the order the algorithm works (propose, score,
    the checks, discard, correct or bonus, stop); each step advances the counters ``c``."""

    def __init__(self, steps: list, c: Counters, k: int, rec: object, correction: str) -> None:
        self.steps, self.c, self.rec, self.correction = steps, c, rec, correction
        self.g = len(rec.proposals)
        self.status = ["proposed"] * self.g
        self.draws = tuple(float(v) for v in rec.draws)
        self.made = tuple(int(t) for t in (getattr(rec, "produced", None) or rec.emitted))
        self.base = dict(
            round=k,
            prefix=tuple(rec.prefix),
            proposals=tuple(int(x) for x in rec.proposals),
            p_xs=tuple(float(v) for v in rec.p_x),
            q_xs=tuple(float(v) for v in rec.q_x),
            ratios=tuple(float(v) for v in rec.ratios),
        )

    def add(self, kind: str, counts: dict, **fields) -> None:
        """Advance the counters by ``counts`` ({counter: increment}) and append a step."""
        self.c = replace(self.c, **{k: getattr(self.c, k) + v for k, v in counts.items()})
        statuses = tuple(self.status)
        self.steps.append(
            ReplayStep(len(self.steps), kind=kind, statuses=statuses, counters=self.c, **self.base, **fields)
        )

    def run(self) -> Counters:
        self.add("propose", {"proposed": self.g})
        self.add("score", {"scored": self.g + 1}, scored=True)
        self.checks()
        if self.rec.stop is None:
            self.bonus()
        else:
            self.discard()
            self.correct()
        if getattr(self.rec, "stop_at", None) is not None:
            self.stop()
        return self.c

    def checks(self) -> None:
        """accept i / reject i: uᵢ against min(1, pᵢ(xᵢ)/qᵢ(xᵢ)), up to the first rejection."""
        rec = self.rec
        for i in range(self.g if rec.stop is None else rec.stop + 1):
            ok = rec.stop != i
            self.status[i] = "accepted" if ok else "rejected"
            self.add(
                "accept" if ok else "reject",
                {"accepted": int(ok), "rejected": int(not ok)},
                scored=True,
                position=i,
                token=self.base["proposals"][i],
                u=float(rec.draws[i]),
                ratio=float(rec.ratios[i]),
                p_x=float(rec.p_x[i]) if len(rec.p_x) > i else None,
                q_x=float(rec.q_x[i]) if len(rec.q_x) > i else None,
                draws=self.draws[: i + 1],
            )

    def discard(self) -> None:
        """The proposals after the rejection, never checked (no step when there are none)."""
        first = self.rec.stop + 1
        if first < self.g:
            self.status[first:] = ["discarded"] * (self.g - first)
            self.add("discard", {"discarded": self.g - first}, scored=True, position=first, draws=self.draws)

    def correct(self) -> None:
        """The correction, drawn from the residual at the rejected position's prefix."""
        stop = self.rec.stop
        p_row, q_row = _row_tuple(self.rec.p_rows, stop), _row_tuple(self.rec.q_rows, stop)
        both = bool(p_row and q_row)
        self.add(
            "correct",
            {"corrections": 1, "emitted": stop + 1, "rounds_done": 1},
            **self.ending("correction", stop, self.made[-1]),
            row=correction_row(p_row, q_row, self.correction) if both else None,
            p_row=p_row,
            q_row=q_row,
            positive_part=_positive_part(p_row, q_row) if both else None,
        )

    def bonus(self) -> None:
        """Every proposal accepted: the bonus token, drawn from p_{γ+1}."""
        p_row = _row_tuple(self.rec.p_rows, self.g)
        counts = {"bonus": 1, "emitted": self.g + 1, "rounds_done": 1}
        self.add("bonus", counts, **self.ending("bonus", self.g, self.made[-1]), row=p_row, p_row=p_row)

    def stop(self) -> None:
        """A stop token emitted: what the round made after it is taken back."""
        at = self.rec.stop_at
        after = len(self.made) - at - 1
        kind = "correction" if self.rec.stop is not None else "bonus"
        self.add("stop", {"emitted": -after, "after_stop": after}, **self.ending(kind, at, self.made[at]))

    def ending(self, kind: str, position: int, token: int) -> dict:
        """The fields of the steps that end a round (correct or bonus, then stop)."""
        return dict(
            scored=True,
            final=self.made[-1],
            final_kind=kind,
            position=position,
            token=token,
            draws=self.draws,
        )


def _positive_part(p_row: tuple, q_row: tuple) -> tuple:
    """max(p − q, 0) before normalizing, as floats (for display)."""
    return tuple(float(v) for v in correction_weights(np.asarray(p_row), np.asarray(q_row), "unnormalized"))


def step_at(steps, n_clicks: int) -> ReplayStep:
    """The step shown after pressing "next" ``n_clicks`` times from the start (clamped to the
    last step; negative counts clamp to the start)."""
    n_clicks = check_int(n_clicks, "n_clicks", None)
    if not isinstance(steps, (list, tuple)) or not all(isinstance(s, ReplayStep) for s in steps):
        raise ValueError("steps must be the list replay_steps(...) returned")
    if not steps:
        raise ValueError("steps is empty")
    return steps[min(max(int(n_clicks), 0), len(steps) - 1)]


def format_counters(step: ReplayStep, n_rounds: int) -> str:
    """The counters line shown under the stepper (plain text, no markup)."""
    c = step.counters
    rnd = f"round {step.round + 1} of {n_rounds}" if n_rounds else "no rounds"
    return (
        f"{rnd} · draft proposals {c.proposed} · target rows scored {c.scored} · "
        f"accepted tokens {c.accepted} · unused target rows {c.unused_rows} "
        f"({c.unused_discarded_rows} of discarded proposals + {c.unused_bonus_rows} bonus) · "
        f"emitted output {c.emitted}" + (f" · discarded after stop {c.after_stop}" if c.after_stop else "")
    )


def _sub(i: int) -> str:
    return str(i).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def describe_step(step: ReplayStep, symbols=None, digits: int = 3) -> str:
    """One plain-text sentence saying what this step did."""
    name = (lambda t: symbols[t]) if symbols else str
    xs = " ".join(name(x) for x in step.proposals)
    g = len(step.proposals)
    if step.kind == "start":
        return "Before the first round: nothing proposed, nothing emitted. Press next."
    if step.kind == "propose":
        if not g:
            return f"Round {step.round + 1}: only one token is left to make, so the draft proposes nothing."
        return f"Round {step.round + 1}: the draft proposes {g} token{'s' * (g != 1)}: {xs}."
    if step.kind == "score":
        last = f"p{_sub(g + 1)}"
        return (
            f"The target scores all {g + 1} positions in one pass: p₁…{last} "
            f"({last} is only used if every proposal passes)."
        )
    i = step.position
    if step.kind in ("accept", "reject"):
        rel = "<" if step.kind == "accept" else "≥"
        verdict = "accepted" if step.kind == "accept" else "rejected"
        return (
            f"Check {i + 1}: {name(step.token)} has p = {step.p_x:.{digits}f}, q = {step.q_x:.{digits}f}; "
            f"u = {step.u:.{digits}f} {rel} min(1, p/q) = {step.ratio:.{digits}f}, so {name(step.token)} is {verdict}."
        )
    if step.kind == "discard":
        rest = " ".join(name(x) for x in step.proposals[i:])
        return f"The proposals after the rejection ({rest}) are discarded unchecked: their prefix is gone."
    if step.kind == "correct":
        return (
            f"Correction: {name(step.final)} is drawn from the residual at the rejected "
            f"position's prefix; the round emits {step.position + 1} token{'s' * (step.position != 0)}."
        )
    if step.kind == "stop":
        kept = step.position + 1
        return (
            f"{name(step.token)} is a stop token: the output ends with it, so the round keeps "
            f"{kept} token{'s' * (kept != 1)}; what it made after {name(step.token)} is discarded "
            f"and generation ends."
        )
    return (
        f"All {g} accepted: a bonus token {name(step.final)} is drawn from p{_sub(g + 1)}; "
        f"the round emits {g + 1} tokens."
    )


def counters_line(records, n_clicks: int) -> str:
    """``format_counters`` of the step reached after ``n_clicks`` presses of next."""
    steps = replay_steps(records)
    recs = [records] if hasattr(records, "proposals") else list(records)
    return format_counters(step_at(steps, n_clicks), len(recs))

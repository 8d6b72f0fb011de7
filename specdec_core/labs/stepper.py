"""Notebook 03's stepper lab: replay recorded rounds one step at a time.

The lab only *displays* :func:`specdec_core.replay.replay_steps`; it never draws a random
number or decides an acceptance. State: ``step`` (0 … last), moved by the step slider and the
buttons "◀ back", "next ▶", "round ▶▶" (to the start of the next round) and "reset ⟲".

Readouts: ``view`` (HTML: chips, the check table, the residual or bonus row), ``counters``
(plain text, exactly ``replay.counters_line(records, n_clicks)`` after n presses of next) and
``cue`` (empty until the last step, then an end-of-replay note). The lab has no figure.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..distributions import check_int, check_sequence
from ..plots.style import COLORS
from ..replay import describe_step, format_counters, replay_steps
from ..sampling import speculative_generate
from ..toy import SYMBOLS, toy_draft, toy_target
from .base import Action, Html, Lab, LabSpec, int_slider, show

if TYPE_CHECKING:
    from ..replay import ReplayStep
    from ..sampling import RoundRecord

#: Defaults of the demo: round 1 accepts B, rejects B, discards A and corrects to C; round 4
#: is a bonus round.
DEMO_SEED, DEMO_GAMMA, DEMO_ROUNDS = 27, 3, 4

CHIP = {  # status -> (colour, label): the label makes colour never the only cue
    "proposed": (COLORS["draft"], "proposed ?"),
    "accepted": (COLORS["accepted"], "accepted ✓"),
    "rejected": (COLORS["rejected"], "rejected ✗"),
    "discarded": (COLORS["discarded"], "discarded –"),
    "correction": (COLORS["residual"], "correction ↺"),
    "bonus": (COLORS["bonus"], "bonus ★"),
}
SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def demo_records(
    seed: int = DEMO_SEED, gamma: int = DEMO_GAMMA, rounds: int = DEMO_ROUNDS
) -> list[RoundRecord]:
    """The first ``rounds`` rounds of ``speculative_generate`` on the toy language, from the
    empty prefix, with ``np.random.default_rng(seed)`` and distributions recorded.

    ``max_new_tokens = rounds·(γ+1)`` leaves at least γ+1 tokens to make before each of the
    first ``rounds`` rounds, so all of them run with the full γ. Deterministic."""
    seed, gamma, rounds = (
        check_int(seed, "seed", 0),
        check_int(gamma, "gamma", 1),
        check_int(rounds, "rounds", 1),
    )
    res = speculative_generate(
        toy_target(),
        toy_draft(),
        (),
        gamma=int(gamma),
        max_new_tokens=int(rounds) * (int(gamma) + 1),
        rng=np.random.default_rng(int(seed)),
        record_distributions=True,
    )
    return list(res.records[: int(rounds)])


def _n_rounds(records) -> int:
    return 1 if hasattr(records, "proposals") else len(list(records))


# ---------------------------------------------------------------- HTML rendering (display only)


def _chip(title: str, status: str) -> str:
    colour, label = CHIP[status]
    border = {"rejected": "3px solid #000", "discarded": "2px dashed #555"}.get(status, "1px solid #333")
    deco = "line-through" if status == "discarded" else "none"
    return (
        f'<span class="specdec-chip specdec-chip-{status}" style="display:inline-block;'
        f"min-width:84px;margin:2px 3px;padding:3px 6px;border-radius:7px;text-align:center;"
        f'background:{colour};color:#000;border:{border}">'
        f'<b style="text-decoration:{deco}">{html.escape(title)}</b><br>'
        f"<small>{label}</small></span>"
    )


def _name(t, symbols):
    return symbols[t] if symbols else str(t)


def _prefix_text(prefix, symbols):
    return " ".join(_name(t, symbols) for t in prefix) if prefix else "(empty)"


def _check_table(step, symbols) -> str:
    g = len(step.proposals)
    head = "".join(f"<th>{i + 1}</th>" for i in range(g + 1))
    td = 'style="padding:1px 7px;text-align:center"'

    def row(label, cells):
        return (
            f"<tr><th style='text-align:left'>{label}</th>"
            + "".join(f"<td {td}>{c}</td>" for c in cells)
            + "</tr>"
        )

    tok = [
        f"x{str(i + 1).translate(SUB)} = {html.escape(_name(x, symbols))}"
        for i, x in enumerate(step.proposals)
    ]
    tok.append("bonus row" if step.scored else "")
    q = [f"{v:.3f}" for v in step.q_xs] + ["—"]
    p = [f"{v:.3f}" if step.scored else "…" for v in step.p_xs] + [
        f"p{str(g + 1).translate(SUB)}" if step.scored else "…"
    ]
    r = [f"{v:.3f}" if step.scored else "…" for v in step.ratios] + ["—"]
    u = [f"{v:.3f}" for v in step.draws] + [""] * (g + 1 - len(step.draws))
    verdict = []
    for s in step.statuses:
        verdict.append(
            {"accepted": "u &lt; ratio ✓", "rejected": "u ≥ ratio ✗", "discarded": "not checked"}.get(s, "")
        )
    verdict.append(
        "used ★"
        if step.kind == "bonus"
        else ("not used" if step.kind == "correct" or "discarded" in step.statuses else "")
    )
    return (
        "<table style='border-collapse:collapse;font-size:90%;margin:4px 0'>"
        f"<tr><th style='text-align:left'>position</th>{head}</tr>"
        + row("token", tok)
        + row("q(x) draft", q)
        + row("p(x) target", p)
        + row("min(1, p/q)", r)
        + row("u", u)
        + row("check", verdict)
        + "</table>"
    )


def _row_table(step, symbols) -> str:
    if step.row is None:
        return ""
    V = len(step.row)
    names = [html.escape(_name(t, symbols)) for t in range(V)]
    td = 'style="padding:1px 7px;text-align:center"'

    def row(label, vals):
        cells = "".join(
            f"<td {td}>{'<b>' if t == step.final else ''}{v:.3f}{'</b>' if t == step.final else ''}</td>"
            for t, v in enumerate(vals)
        )
        return f"<tr><th style='text-align:left'>{label}</th>{cells}</tr>"

    head = "".join(f"<th {td}>{n}</th>" for n in names)
    if step.kind == "bonus":
        g = len(step.proposals)
        body = row(f"p{str(g + 1).translate(SUB)} target (bonus row)", step.row)
    else:
        body = ""
        if step.p_row is not None:
            body += row("p target", step.p_row) + row("q draft", step.q_row)
        if step.positive_part is not None:
            body += row("max(p − q, 0)", step.positive_part)
        body += row("residual (normalized)", step.row)
    drawn = html.escape(_name(step.final, symbols))
    return (
        f"<table style='border-collapse:collapse;font-size:90%;margin:4px 0'><tr><th>token</th>{head}</tr>"
        f"{body}</table><small>drawn: <b>{drawn}</b> (bold column)</small>"
    )


def step_html(step: ReplayStep, n_rounds: int, symbols: Sequence[str] = SYMBOLS) -> str:
    """The round view for one replay step as an HTML fragment."""
    if step.kind == "start" or step.round < 0:
        head = f"<b>Ready.</b> {n_rounds} recorded round{'s' * (n_rounds != 1)} to replay."
        return f"<div class='specdec-stepper-view'>{head}<p>{html.escape(describe_step(step, symbols))}</p></div>"
    chips = "".join(
        _chip(f"x{str(i + 1).translate(SUB)} = {_name(x, symbols)}", s)
        for i, (x, s) in enumerate(zip(step.proposals, step.statuses))
    )
    if not step.proposals:
        chips = "<i>no proposals</i>"
    if step.final is not None:
        chips += " → " + _chip(_name(step.final, symbols), step.final_kind)
    return (
        f"<div class='specdec-stepper-view' style='line-height:1.4'>"
        f"<b>Round {step.round + 1} of {n_rounds}</b> · prefix: <code>{html.escape(_prefix_text(step.prefix, symbols))}</code>"
        f"<div style='margin:4px 0'>{chips}</div>"
        f"{_check_table(step, symbols)}"
        f"<p style='margin:4px 0'>{html.escape(describe_step(step, symbols))}</p>"
        f"{_row_table(step, symbols)}</div>"
    )


# ---------------------------------------------------------------- the lab

#: The one home of the lab's default state: the start of the replay.
DEFAULTS = {"step": 0}


def end_cue(n_rounds: int) -> str:
    return (
        f"End of the replay: all {n_rounds} recorded round{'s' * (n_rounds != 1)} shown. "
        f"Press reset ⟲ to watch again."
    )


def _check_symbols(symbols, records) -> None:
    """``symbols``: one name (a string) per token id the records hold (or empty: ids shown)."""
    names = check_sequence(symbols, "symbols", "a sequence of token names")
    for i, n in enumerate(names):
        if not isinstance(n, str):
            raise ValueError(f"symbols[{i}] must be a string, got {n!r}")
    if not names:
        return
    recs = [records] if hasattr(records, "proposals") else list(records)
    V = max(
        [max((*r.prefix, *r.proposals, *(r.produced or r.emitted)), default=-1) + 1 for r in recs]
        + [r.p_rows.shape[-1] for r in recs if getattr(r, "p_rows", None) is not None]
    )
    if len(names) < V:
        raise ValueError(f"symbols names {len(names)} tokens, but the records use a vocabulary of {V}")


def stepper_spec(
    records: Sequence[RoundRecord], *, symbols: Sequence[str] = SYMBOLS, correction: str = "residual"
) -> LabSpec:
    """The lab over ``records`` (RoundRecords, ideally with recorded distributions)."""
    steps = replay_steps(records, correction=correction)
    n_rounds = _n_rounds(records)
    _check_symbols(symbols, records)
    last = len(steps) - 1
    round_starts = [s.index for s in steps if s.kind == "propose"]

    def texts(state):
        step = steps[state["step"]]
        return {
            "view": Html(step_html(step, n_rounds, symbols)),
            "counters": format_counters(step, n_rounds),
            "cue": end_cue(n_rounds) if state["step"] == last else "",
        }

    def next_round(state):
        later = [i for i in round_starts if i > state["step"]]
        return {"step": later[0] if later else last}

    return LabSpec(
        name="stepper",
        defaults=DEFAULTS,
        controls={"step": int_slider("step", 0, last, width=420)},
        texts=texts,
        actions={
            "back": Action("◀ back", lambda s: {"step": max(s["step"] - 1, 0)}, "previous step"),
            "next": Action("next ▶", lambda s: {"step": min(s["step"] + 1, last)}, "next step", primary=True),
            "round": Action("round ▶▶", next_round, "jump to the start of the next round"),
            "reset": Action("reset ⟲", lambda s: {"step": 0}, "back to the start"),
        },
    )


def stepper_lab(records: Sequence[RoundRecord] | None = None, **kw: object) -> Lab:
    """The live stepper (default: :func:`demo_records`)."""
    return Lab(stepper_spec(demo_records() if records is None else records, **kw))


def show_stepper(records: Sequence[RoundRecord] | None = None, **kw: object) -> None:
    """Display the stepper and its static copy (notebook 03)."""
    show(stepper_lab(records, **kw))

"""The round stepper of notebook 03: replay recorded rounds one step at a time.

The widget only *displays* :func:`specdec_core.replay.replay_steps`; it never draws a random
number or decides an acceptance. Controls: "◀ back", "next ▶", "round ▶▶" (to the start of the
next round), "reset" and a step slider; every control just moves the slider, whose
``observe(..., names="value")`` redraws two HTML widgets (the round view and the counters).

Contract used by the browser tests:

* ``demo_records(seed=..., gamma=..., rounds=...)``: the fixed-seed records notebook 03 uses;
* ``round_stepper(records)``: the widget (notebook 03 calls ``round_stepper(demo_records())``);
* ``counters_text(records, n_clicks)``: exactly the text of the HTML widget with CSS class
  ``specdec-counters`` after pressing next ``n_clicks`` times from the initial state;
* the next button has CSS class ``specdec-step-next`` and a description containing "next".
"""
from __future__ import annotations

import html

import ipywidgets as w
import numpy as np

from ..plots.style import COLORS
from ..replay import describe_step, format_counters, replay_steps, step_at
from ..sampling import speculative_generate
from ..toy import SYMBOLS, toy_draft, toy_target

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


def demo_records(seed: int = DEMO_SEED, gamma: int = DEMO_GAMMA, rounds: int = DEMO_ROUNDS) -> list:
    """The first ``rounds`` rounds of ``speculative_generate`` on the toy language, from the
    empty prefix, with ``np.random.default_rng(seed)`` and distributions recorded.

    ``max_new_tokens = rounds·(γ+1)`` leaves at least γ+1 tokens to make before each of the
    first ``rounds`` rounds, so all of them run with the full γ. Deterministic."""
    for name, v in (("seed", seed), ("gamma", gamma), ("rounds", rounds)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < (1 if name != "seed" else 0):
            raise ValueError(f"{name} must be a {'non-negative' if name == 'seed' else 'positive'} integer, got {v!r}")
    res = speculative_generate(toy_target(), toy_draft(), (), gamma=int(gamma),
                               max_new_tokens=int(rounds) * (int(gamma) + 1),
                               rng=np.random.default_rng(int(seed)), record_distributions=True)
    return list(res.records[: int(rounds)])


def _n_rounds(records) -> int:
    return 1 if hasattr(records, "proposals") else len(list(records))


def counters_text(records, n_clicks: int) -> str:
    """The counters text the widget shows after ``n_clicks`` presses of next from the start
    (clicks past the end stay on the last step)."""
    return format_counters(step_at(replay_steps(records), n_clicks), _n_rounds(records))


# ---------------------------------------------------------------- HTML rendering (display only)

def _chip(title: str, status: str) -> str:
    colour, label = CHIP[status]
    border = {"rejected": "3px solid #000", "discarded": "2px dashed #555"}.get(status, "1px solid #333")
    deco = "line-through" if status == "discarded" else "none"
    return (f'<span class="specdec-chip specdec-chip-{status}" style="display:inline-block;'
            f'min-width:84px;margin:2px 3px;padding:3px 6px;border-radius:7px;text-align:center;'
            f'background:{colour};color:#000;border:{border}">'
            f'<b style="text-decoration:{deco}">{html.escape(title)}</b><br>'
            f'<small>{label}</small></span>')


def _name(t, symbols):
    return symbols[t] if symbols else str(t)


def _prefix_text(prefix, symbols):
    return " ".join(_name(t, symbols) for t in prefix) if prefix else "(empty)"


def _check_table(step, symbols) -> str:
    g = len(step.proposals)
    head = "".join(f"<th>{i + 1}</th>" for i in range(g + 1))
    td = 'style="padding:1px 7px;text-align:center"'

    def row(label, cells):
        return f"<tr><th style='text-align:left'>{label}</th>" + "".join(f"<td {td}>{c}</td>" for c in cells) + "</tr>"

    tok = [f"x{str(i + 1).translate(SUB)} = {html.escape(_name(x, symbols))}" for i, x in enumerate(step.proposals)]
    tok.append("bonus row" if step.scored else "")
    q = [f"{v:.3f}" for v in step.q_xs] + ["—"]
    p = [f"{v:.3f}" if step.scored else "…" for v in step.p_xs] + [
        f"p{str(g + 1).translate(SUB)}" if step.scored else "…"]
    r = [f"{v:.3f}" if step.scored else "…" for v in step.ratios] + ["—"]
    u = [f"{v:.3f}" for v in step.draws] + [""] * (g + 1 - len(step.draws))
    verdict = []
    for i, s in enumerate(step.statuses):
        verdict.append({"accepted": "u &lt; ratio ✓", "rejected": "u ≥ ratio ✗",
                        "discarded": "not checked"}.get(s, ""))
    verdict.append("used ★" if step.kind == "bonus" else ("not used" if step.kind == "correct" or
                                                          "discarded" in step.statuses else ""))
    return ("<table style='border-collapse:collapse;font-size:90%;margin:4px 0'>"
            f"<tr><th style='text-align:left'>position</th>{head}</tr>"
            + row("token", tok) + row("q(x) draft", q) + row("p(x) target", p)
            + row("min(1, p/q)", r) + row("u", u) + row("check", verdict) + "</table>")


def _row_table(step, symbols) -> str:
    if step.row is None:
        return ""
    V = len(step.row)
    names = [html.escape(_name(t, symbols)) for t in range(V)]
    td = 'style="padding:1px 7px;text-align:center"'

    def row(label, vals):
        cells = "".join(
            f"<td {td}>{'<b>' if t == step.final else ''}{v:.3f}{'</b>' if t == step.final else ''}</td>"
            for t, v in enumerate(vals))
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
    return (f"<table style='border-collapse:collapse;font-size:90%;margin:4px 0'><tr><th>token</th>{head}</tr>"
            f"{body}</table><small>drawn: <b>{drawn}</b> (bold column)</small>")


def step_html(step, n_rounds: int, symbols=SYMBOLS) -> str:
    """The round view for one replay step as an HTML fragment."""
    if step.kind == "start" or step.round < 0:
        head = f"<b>Ready.</b> {n_rounds} recorded round{'s' * (n_rounds != 1)} to replay."
        return (f"<div class='specdec-stepper-view'>{head}<p>{html.escape(describe_step(step, symbols))}</p></div>")
    chips = "".join(_chip(f"x{str(i + 1).translate(SUB)} = {_name(x, symbols)}", s)
                    for i, (x, s) in enumerate(zip(step.proposals, step.statuses)))
    if not step.proposals:
        chips = "<i>no proposals</i>"
    if step.final is not None:
        chips += " → " + _chip(_name(step.final, symbols), step.final_kind)
    return (f"<div class='specdec-stepper-view' style='line-height:1.4'>"
            f"<b>Round {step.round + 1} of {n_rounds}</b> · prefix: <code>{html.escape(_prefix_text(step.prefix, symbols))}</code>"
            f"<div style='margin:4px 0'>{chips}</div>"
            f"{_check_table(step, symbols)}"
            f"<p style='margin:4px 0'>{html.escape(describe_step(step, symbols))}</p>"
            f"{_row_table(step, symbols)}</div>")


# ---------------------------------------------------------------- the widget

def round_stepper(records, *, symbols=SYMBOLS, correction: str = "residual") -> w.VBox:
    """A stepper over ``records`` (RoundRecords, ideally with recorded distributions).

    Exposes ``.steps``, ``.slider``, ``.next_button``, ``.back_button``, ``.round_button``,
    ``.reset_button``, ``.view`` and ``.counters`` for tests."""
    steps = replay_steps(records, correction=correction)
    n_rounds = _n_rounds(records)
    slider = w.IntSlider(value=0, min=0, max=len(steps) - 1, description="step",
                         continuous_update=True, layout=w.Layout(width="420px"))
    slider.add_class("specdec-step-slider")
    back = w.Button(description="◀ back", tooltip="previous step")
    nxt = w.Button(description="next ▶", tooltip="next step", button_style="primary")
    rnd = w.Button(description="round ▶▶", tooltip="jump to the start of the next round")
    reset = w.Button(description="reset ⟲", tooltip="back to the start")
    for b, cls in ((back, "back"), (nxt, "next"), (rnd, "round"), (reset, "reset")):
        b.add_class(f"specdec-step-{cls}")
    view = w.HTML()
    view.add_class("specdec-step-view")
    counters = w.HTML()
    counters.add_class("specdec-counters")
    round_starts = [s.index for s in steps if s.kind == "propose"]

    def render(change=None):
        step = steps[slider.value]
        view.value = step_html(step, n_rounds, symbols)
        counters.value = format_counters(step, n_rounds)

    def go(i):
        slider.value = min(max(int(i), 0), len(steps) - 1)

    def on_next_round(_=None):
        later = [i for i in round_starts if i > slider.value]
        go(later[0] if later else len(steps) - 1)

    back.on_click(lambda _: go(slider.value - 1))
    nxt.on_click(lambda _: go(slider.value + 1))
    rnd.on_click(on_next_round)
    reset.on_click(lambda _: go(0))
    slider.observe(render, names="value")
    render()
    box = w.VBox([w.HBox([back, nxt, rnd, reset]), slider, view, counters])
    box.add_class("specdec-stepper")
    box.steps, box.slider, box.view, box.counters = steps, slider, view, counters
    box.next_button, box.back_button, box.round_button, box.reset_button = nxt, back, rnd, reset
    box.render, box.go = render, go
    return box

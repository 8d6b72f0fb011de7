"""Notebook 05's timing lab: tokens per second under an *assumed* budget, against the baseline.

Controls: α, γ, draft cost per proposal, verification cost (base + per scored position),
overhead, baseline ms per token. Shows both rates, their ratio, the break-even verification
time, the work account, and the (α, γ) map of where speculation pays. No math here: it calls
:func:`specdec_core.timing.scenario_rates` / :func:`~specdec_core.timing.work_account`.
An impossible budget (the round of the scenario shown takes no time) gives a message and a
greyed figure. The lab judges the scenario shown: at γ = 0 (plain decoding, which uses none of
the speculative budget) a budget whose speculative costs are all 0 is valid; only the map's
γ ≥ 1 rows are then undefined, drawn grey and explained in the break-even line.
"""

from __future__ import annotations

from functools import partial

from ..formatting import labelled
from ..plots.timing import BUDGET_KEYS, TimingPlot, no_speculative_budget
from ..timing import scenario_rates, work_account
from ..verify import acceptance_probability
from ..worked import WORKED
from .base import Lab, LabSpec, float_slider, int_slider, show

MAX_GAMMA = 16

#: The one home of the lab's default state: the worked example's α, γ and assumed timings
#: (2 ms of drafting for γ = 2, 6 ms verification, 1 ms overhead, 6 ms per baseline token).
DEFAULTS = {
    "alpha": float(acceptance_probability(WORKED.p, WORKED.q)),
    "gamma": WORKED.gamma,
    "draft_per_token_ms": float(WORKED.draft_ms) / WORKED.gamma,
    "verify_base_ms": float(WORKED.verify_ms),
    "verify_per_position_ms": 0.0,
    "overhead_ms": float(WORKED.overhead_ms),
    "baseline_ms": float(WORKED.baseline_ms),
}


def budget(state) -> dict:
    """The budget part of a state (keyword arguments of :func:`scenario_rates`)."""
    return {k: state[k] for k in BUDGET_KEYS}


def problem(state) -> str | None:
    """A message when the budget is impossible for the scenario shown, else None. (At γ = 0 a
    budget with no speculative cost is valid: plain decoding uses none of it.)"""
    try:
        scenario_rates(state["alpha"], state["gamma"], **budget(state))
    except ValueError as exc:
        if round_is_free(state):
            return (
                f"This budget is impossible: at γ = {state['gamma']} every part of the round is 0 ms "
                "(draft ms / proposal, verify ms (base), verify ms / position, overhead ms), so a "
                "round would take no time. Raise one of these sliders."
            )
        return f"This budget is impossible: {exc}."
    return None


def round_is_free(state) -> bool:
    """Whether the round of the scenario shown, (1a) of notebook 05, takes 0 ms."""
    g = state["gamma"]
    return (
        g * state["draft_per_token_ms"]
        + state["verify_base_ms"]
        + state["verify_per_position_ms"] * (g + 1)
        + state["overhead_ms"]
    ) == 0


def timing_texts(alpha, gamma, **budget) -> dict:
    """The lab's readouts (fixed rounding, never NaN). Raises ``ValueError`` (from the library)
    for an impossible budget; :func:`texts` turns that into a message."""
    s = scenario_rates(alpha, gamma, **budget)
    acc = work_account(alpha, gamma)
    be = float(s["break_even_verify_ms"])
    if s["plain"]:
        be_text = "γ = 0 is plain decoding: one target step per token, exactly the baseline"
        if no_speculative_budget(budget):
            be_text += (
                "; the map's rows γ ≥ 1 are grey: with every speculative cost at 0 a round there "
                "would take no time"
            )
    elif be >= 0:
        be_text = f"break-even verification time {be:.2f} ms (now {float(s['verify_ms']):.2f} ms: " + (
            "pays)" if s["pays"] else "loses)"
        )
    else:
        be_text = (
            "no verification time can make this pay: draft + overhead already cost more "
            "than E[K] baseline tokens"
        )
    verdict = (
        "speculation pays"
        if s["pays"]
        else ("no gain, no loss" if float(s["ratio"]) == 1 else "speculation loses")
    )
    return {
        "round": labelled(
            "derived-from-assumed",
            f"round: draft {float(s['draft_ms']):.2f} + verify {float(s['verify_ms']):.2f} "
            f"+ overhead {float(s['overhead_ms']):.2f} = {float(s['round_ms']):.2f} ms, "
            f"E[K] = {float(s['expected_tokens']):.4f} tokens",
        ),
        "rates": labelled(
            "derived-from-assumed",
            f"speculative {float(s['rate']):.2f} tokens/s vs baseline "
            f"{float(s['baseline_rate']):.2f} tokens/s: ratio {float(s['ratio']):.3f}× "
            f"({verdict})",
        ),
        "break_even": labelled("derived-from-assumed", be_text),
        "work": labelled(
            "derived",
            f"work per output token: {float(acc['proposals_per_token']):.3f} "
            f"draft proposals, {float(acc['target_positions_per_token']):.3f} "
            f"target positions; thrown away: "
            f"{100 * float(acc['proposals_thrown_away']):.1f}% of proposals, "
            f"{100 * float(acc['target_positions_thrown_away']):.1f}% of "
            f"scored positions",
        ),
    }


def texts(state) -> dict:
    msg = problem(state)
    if msg is not None:  # said once; the lab hides the empty readouts
        return {"round": msg, "rates": "", "break_even": "", "work": ""}
    return timing_texts(state["alpha"], state["gamma"], **budget(state))


SPEC = LabSpec(
    name="timing",
    defaults=DEFAULTS,
    controls={
        "alpha": float_slider("α", 0.0, 1.0, 0.01),
        "gamma": int_slider("γ", 0, MAX_GAMMA),
        "draft_per_token_ms": float_slider("draft ms / proposal", 0.0, 10.0, 0.1, ".1f"),
        "verify_base_ms": float_slider("verify ms (base)", 0.0, 30.0, 0.5, ".1f"),
        "verify_per_position_ms": float_slider("verify ms / position", 0.0, 5.0, 0.1, ".1f"),
        "overhead_ms": float_slider("overhead ms", 0.0, 10.0, 0.5, ".1f"),
        "baseline_ms": float_slider("baseline ms / token", 0.5, 30.0, 0.5, ".1f"),
    },
    texts=texts,
    plot=partial(TimingPlot, MAX_GAMMA),
    problem=problem,
    note="All times are assumed budgets (ms); the rates are derived from them.",
)


def timing_lab(**start) -> Lab:
    return Lab(SPEC, **start)


def show_timing(**start) -> None:
    """Display the lab and its static copy (notebook 05)."""
    show(timing_lab(**start))

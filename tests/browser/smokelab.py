"""A small lab on the real lab protocol (``specdec_core.labs.base``) with one control of every kind,
an action, and an impossible state: the browser harness is tested on it independently of the
course notebooks (``test_lab_smoke.py``). Imported both by the kernel (from the smoke notebook)
and by the test, so the texts the browser shows are compared with ``texts(state)`` computed here.
"""

from __future__ import annotations

from specdec_core.labs.base import (
    Action,
    LabSpec,
    checkbox,
    dropdown,
    float_slider,
    int_slider,
    radio,
    toggle,
)
from specdec_core.plots.frames import LabPlot

DEFAULTS = {"n": 3, "x": 0.5, "mode": "a", "shape": "wide", "pick": None, "flag": False, "clicks": 0}


def texts(state) -> dict:
    pick = "nothing" if state["pick"] is None else state["pick"]
    return {
        "summary": f"n = {state['n']}, x = {state['x']:.2f}, n·x = {state['n'] * state['x']:.2f}",
        "choice": f"mode {state['mode']}, shape {state['shape']}, picked {pick}\nflag {state['flag']}",
        "clicks": f"clicks: {state['clicks']}",
    }


class SmokePlot(LabPlot):
    """The smallest lab figure: two bars, the only artists that move."""

    size = (400, 120)

    def __init__(self, *, blit: bool = True):
        super().__init__(blit=blit)
        ax = self.fig.add_axes((0.12, 0.25, 0.84, 0.65))
        self.bars = ax.bar(["n", "x"], [0, 0], color="#0072B2")
        ax.set_ylim(0, 10)
        ax.set_ylabel("value (-)")
        self.blit(list(self.bars))

    def update(self, state) -> None:
        for bar, v in zip(self.bars, (state["n"], state["x"])):
            bar.set_height(v)


def problem(state):
    return "n = 0 is impossible here" if state["n"] == 0 else None


SPEC = LabSpec(
    name="smoke",
    defaults=DEFAULTS,
    controls={
        "n": int_slider("n", 0, 8),
        "x": float_slider("x", 0.0, 1.0, 0.05),
        "mode": dropdown("mode", ["a", "b", "c"]),
        "shape": toggle("shape", [("wide", "wide"), ("tall", "tall"), ("round", "round")]),
        "pick": radio("pick", ["p", "q", "r"]),
        "flag": checkbox("flag"),
    },
    texts=texts,
    plot=SmokePlot,
    problem=problem,
    actions={"bump": Action("bump", lambda s: {"clicks": s["clicks"] + 1}, primary=True)},
)

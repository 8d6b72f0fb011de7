"""Every lab driven from Python through the one protocol (``specdec_core.labs``).

For every lab: the texts at the defaults against the library; every control driven to both ends
and a middle value (no NaN, no traceback, texts equal the pure ``texts(state)``); impossible
states grey the figure; the static copy equals a fresh draw at the defaults; controls start
exactly at their defaults; the DOM contract's CSS classes. Plus the substance of the old widget
tests (worked values, extremes, symbol count, stepper clicks, quiz grading).
"""

import io
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core import acceptance_probabilities, acceptance_probability, labs
from specdec_core.counts import expected_output_count, output_count_distribution
from specdec_core.labs import (
    ACCEPTANCE,
    COUNTS,
    TIMING,
    Lab,
    LabSpec,
    acceptance_lab,
    base,
    corrections_lab,
    counts_lab,
    quiz_lab,
    static_html,
    stepper_lab,
    still,
    timing_lab,
    transforms_lab,
)
from specdec_core.labs import acceptance as acc_mod
from specdec_core.labs import counts as counts_mod
from specdec_core.labs import quiz as quiz_mod
from specdec_core.labs import residual as res_mod
from specdec_core.labs import stepper as step_mod
from specdec_core.labs import timing as timing_mod
from specdec_core.labs import transforms as tr_mod
from specdec_core.plots.frames import MAX_WIDTH_PX, figure_png, message_png
from specdec_core.questions import ALL_QUESTIONS, TRUTH_QUESTION, grade
from specdec_core.replay import counters_line, replay_steps
from specdec_core.timing import scenario_rates, work_account
from specdec_core.verify import (
    CORRECTION_RULES,
    output_distribution_with,
    total_variation,
)

ROOT = Path(__file__).resolve().parents[1]
PNG = b"\x89PNG"
#: Every lab spec the package exports (the generic protocol tests run on all of them).
SPECS = {obj.name: obj for obj in (getattr(labs, n) for n in labs.__all__) if isinstance(obj, LabSpec)}
FACTORIES = {
    **{name: (lambda spec=spec: Lab(spec)) for name, spec in SPECS.items()},
    "stepper": stepper_lab,
    "quiz": lambda: quiz_lab(TRUTH_QUESTION),
}


def test_every_exported_lab_is_in_the_generic_tables():
    """SPECS/FACTORIES are read from ``labs.__all__``; check that they really hold every lab the
    package exports (the trees, KV and roofline labs included) and that each ``*_lab`` factory
    builds the spec the generic tests drive."""
    assert {
        "acceptance",
        "residual",
        "counts",
        "timing",
        "transforms",
        "trees",
        "kv",
        "roofline",
        "stepper",
        "quiz",
    } <= set(FACTORIES)
    assert SPECS["trees"] is labs.TREES and SPECS["kv"] is labs.KV and SPECS["roofline"] is labs.ROOFLINE
    for name in labs.__all__:
        if name.endswith("_lab") and name not in ("stepper_lab", "quiz_lab"):
            lab = getattr(labs, name)()
            assert SPECS.get(lab.spec.name) is lab.spec, name


def clean(texts: dict):
    for v in texts.values():
        low = v.lower()
        assert "nan" not in re.sub(r"nanoseconds", "", low), v
        assert not re.search(r"\binf\b", low), v
        assert "traceback" not in low, v


def pixels(png):
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGB"), dtype=float)


def control_values(ctl):
    """Both ends and a middle value of a control, on its grid."""
    if ctl.kind in ("int", "float"):
        n = round((ctl.hi - ctl.lo) / ctl.step)
        vals = [ctl.lo, ctl.lo + (n // 2) * ctl.step, ctl.hi]
        vals = [round(v, 10) for v in vals]
        return [int(v) for v in vals] if ctl.kind == "int" else vals
    if ctl.kind == "checkbox":
        return [False, True]
    opts = [v for _, v in ctl.options]
    return [opts[0], opts[len(opts) // 2], opts[-1]]


# ---------------------------------------------------------------------------- the protocol


@pytest.mark.parametrize("name", list(FACTORIES))
def test_dom_contract_and_public_attributes(name):
    lab = FACTORIES[name]()
    assert isinstance(lab, Lab)
    assert "specdec-lab" in lab._dom_classes and f"lab-{lab.spec.name}" in lab._dom_classes
    for key, c in lab.controls.items():
        assert f"lab-control-{key}" in c._dom_classes
    for key, b in lab.actions.items():
        assert f"lab-control-{key}" in b._dom_classes
    for key, t in lab.texts.items():
        assert t._dom_classes == (f"lab-text-{key}",)
    if lab.figure is not None:
        assert "lab-figure" in lab.figure._dom_classes
        assert lab.png.startswith(PNG)
        w = int(lab.figure.layout.width.removesuffix("px"))
        assert w <= MAX_WIDTH_PX and pixels(lab.png).shape[1] == w  # 1:1, crisp
    note = lab.children[0]
    assert "lab-restart-note" in note._dom_classes and "jupyter-widgets-disconnected" in note.value
    assert lab.state == {**lab.spec.defaults}
    assert set(lab.last_texts) == set(lab.texts)


@pytest.mark.parametrize("name", list(FACTORIES))
def test_controls_start_exactly_at_their_defaults(name):
    lab = FACTORIES[name]()
    for key, c in lab.controls.items():
        assert c.value == lab.spec.defaults[key], key
        assert type(c.value) is type(lab.spec.defaults[key]) or lab.spec.defaults[key] is None


@pytest.mark.parametrize("name", list(SPECS))
def test_static_copy_is_a_fresh_draw_at_the_defaults(name):
    spec = SPECS[name]
    assert base.static_png(spec) == fresh_png(spec, spec.defaults)
    html = static_html(spec)
    assert f"lab-static lab-static-{spec.name}" in html and "lab-static-figure" in html
    for key, text in spec.texts(spec.defaults).items():
        assert f"lab-static-text-{key}" in html
        assert base.text_html(text) in html
    # and the live lab's first frame shows the same picture
    live = pixels(Lab(spec).png)
    assert np.abs(live - pixels(base.static_png(spec))).mean() < 1.0  # blit draw order may differ


def fresh_png(spec, state) -> bytes:
    """A fresh full drawing of ``spec``'s figure at ``state`` (a new plot, no blitting)."""
    plot = spec.plot(blit=False)
    plot.update(state)
    return figure_png(plot.fig)


@pytest.mark.parametrize("name", list(SPECS))
def test_one_figure_hand_off_with_a_declared_size(name):
    """A lab hands over one plot factory; its declared size is the size drawn (nothing is drawn
    to learn it), and the static copy is one full draw (no artist left out as 'animated')."""
    spec = SPECS[name]
    w, h = base.figure_size(spec)
    assert w <= MAX_WIDTH_PX and pixels(base.static_png(spec)).shape[:2] == (h, w)
    plot = spec.plot(blit=False)
    plot.update(spec.defaults)
    animated = [a for ax in plot.fig.axes for a in (*ax.lines, *ax.patches, *ax.texts, *ax.collections)]
    assert not [a for a in animated if a.get_animated()]
    live = spec.plot(blit=True)
    live.update(spec.defaults)
    assert pixels(live.png()).shape[:2] == (h, w)


@pytest.mark.parametrize("name", list(SPECS))
def test_every_control_at_both_ends_and_the_middle(name):
    spec = SPECS[name]
    lab = Lab(spec)
    for key, ctl in spec.controls.items():
        for v in control_values(ctl):
            lab.set(**{key: v})
            assert lab.state[key] == v
            assert lab.last_texts == spec.texts(lab.state)
            clean(lab.last_texts)
            assert lab.png.startswith(PNG)
            assert ("lab-impossible" in lab._dom_classes) == (
                spec.problem is not None and spec.problem(lab.state) is not None
            )
        lab.set(**{key: spec.defaults[key]})


@pytest.mark.parametrize("name", list(SPECS))
def test_live_frames_match_a_fresh_draw_after_moves(name):
    """The blitted live figure never goes stale: after a walk it equals a fresh drawing."""
    assert live_frame_gap(SPECS[name]) < 1.0


def live_frame_gap(spec, seed=5, moves=12) -> float:
    """Mean pixel gap between the live figure after seeded moves and a fresh drawing there."""
    lab = Lab(spec)
    rng = np.random.default_rng(seed)
    keys = list(spec.controls)
    for _ in range(moves):
        key = keys[rng.integers(len(keys))]
        lab.set(**{key: control_values(spec.controls[key])[rng.integers(3)]})
    want = (
        message_png(*base.figure_size(spec), spec.problem(lab.state))
        if spec.problem and spec.problem(lab.state)
        else fresh_png(spec, lab.state)
    )
    return float(np.abs(pixels(lab.png) - pixels(want)).mean())


def test_a_stale_figure_is_caught():
    """The check above can fail: a view that keeps showing its first frame is caught."""
    from dataclasses import replace

    from specdec_core.plots.counts import CountsPlot

    class Stale(CountsPlot):
        def update(self, state):
            if not getattr(self, "seen", False):
                self.seen = True
                super().update(state)

    assert live_frame_gap(replace(COUNTS, plot=Stale)) > 1.0
    assert live_frame_gap(COUNTS) < 1.0


def test_set_refuses_unknown_keys_and_off_grid_values():
    lab = counts_lab()
    with pytest.raises(ValueError, match="unknown state keys"):
        lab.set(beta=0.5)
    with pytest.raises(ValueError, match="not on the slider's grid"):
        lab.set(alpha=0.333)
    with pytest.raises(ValueError, match=r"must lie in \[0"):
        lab.set(gamma=17)
    with pytest.raises(ValueError, match="unknown action"):
        lab.press("next")


def test_spec_validation():
    with pytest.raises(ValueError, match="name must match"):
        LabSpec("Bad Name", {}, {}, texts=lambda s: {})
    with pytest.raises(ValueError, match="no default"):
        LabSpec("x", {}, {"a": base.int_slider("a", 0, 3)}, texts=lambda s: {})
    with pytest.raises(ValueError, match="would snap"):
        LabSpec("x", {"a": 0.501}, {"a": base.float_slider("a", 0, 1, 0.01)}, texts=lambda s: {})
    with pytest.raises(ValueError, match="groups must list every control"):
        LabSpec("x", {"a": 1}, {"a": base.int_slider("a", 0, 3)}, texts=lambda s: {}, groups=(("", ()),))


def test_friendly_plain_text_fallback_not_a_raw_repr():
    lab = counts_lab()
    bundle = base.LabDisplay(lab, "counts")._repr_mimebundle_()
    assert bundle["text/plain"].startswith("Interactive lab counts — run this cell with a kernel")
    assert "VBox" not in bundle["text/plain"]
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == lab.model_id


def test_show_displays_the_live_lab_then_the_static_copy(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    assert base.show(COUNTS) is None
    assert isinstance(shown[0], base.LabDisplay)
    assert "lab-static-counts" in shown[1].data
    # the hiding rule: a live lab in the output just above hides the static copy
    assert ":has(.specdec-lab) + .jp-OutputArea-child .lab-static" in shown[1].data


def test_still_reads_the_defaults_and_refuses_impossible_states():
    img = still(TIMING, verify_base_ms=5.0, verify_per_position_ms=0.5)
    assert img.data.startswith(PNG) and img.width == base.figure_size(TIMING)[0]
    with pytest.raises(ValueError, match="impossible"):
        still(TIMING, draft_per_token_ms=0.0, verify_base_ms=0.0, overhead_ms=0.0)
    with pytest.raises(ValueError, match="unknown state keys"):
        still(TIMING, budget=3)


def test_lab_setting_saves_widget_state_for_make_lab_and_binder():
    overrides = json.loads((ROOT / "binder" / "overrides.json").read_text())
    assert overrides["@jupyter-widgets/jupyterlab-manager:plugin"]["saveState"] is True
    assert "binder/overrides.json" in (ROOT / "Makefile").read_text()
    assert "binder/overrides.json" in (ROOT / "binder" / "postBuild").read_text()


RAW_WIDGET_REPR = re.compile(r"^[A-Z][A-Za-z]*\((value|children|description|layout)=")


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_stored_widget_outputs_read_as_text(path):
    """A stored notebook keeps no widgets (issue 25: stored widget state made Lab mark it
    modified on open); what a widget output leaves is its plain text, which must be a sentence
    for a reader (labs' "Interactive lab …", the progress bar's), never a raw widget repr."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert "widgets" not in nb["metadata"], f"{path.name}: widget state stored"
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            plain = "".join(out.get("data", {}).get("text/plain", ""))
            assert not RAW_WIDGET_REPR.match(plain), f"{path.name}: raw widget repr stored: {plain[:60]}"


# ---------------------------------------------------------------------------- 01 acceptance


def test_acceptance_defaults_show_the_worked_example():
    lab = acceptance_lab()
    t = lab.last_texts
    assert t["alpha"] == "[derived] α = Σ min(p, q) = 0.6000"
    assert t["acceptance"] == "[derived] a(x) = min(1, p(x)/q(x)): A 1.0000 · B 1.0000 · C 0.2000"
    assert "p = [0.600, 0.300, 0.100]" in t["normalized"]
    assert acc_mod.DEFAULT_P_WEIGHTS == (0.6, 0.3, 0.1) and acc_mod.DEFAULT_Q_WEIGHTS == (0.2, 0.3, 0.5)
    assert [lab.controls[k].layout.display for k in acc_mod.P_KEYS[3:]] == ["none"] * 3


def acc_state(pw, qw):
    n = len(pw)
    return {
        **acc_mod.DEFAULTS,
        "symbols": n,
        **dict(zip(acc_mod.P_KEYS, pw)),
        **dict(zip(acc_mod.Q_KEYS, qw)),
    }


EXTREMES = [
    ((0.6, 0.3, 0.1), (0.0, 0.3, 0.5), "A never proposed"),
    ((0.2, 0.3, 0.5), (0.2, 0.3, 0.5), "α = Σ min(p, q) = 1.0000"),
    ((0.4, 0.6, 0.0), (0.2, 0.3, 0.0), "α = Σ min(p, q) = 1.0000"),
    ((1.0, 0.0, 0.0), (0.2, 0.3, 0.5), "α = Σ min(p, q) = 0.2000"),
    ((0.6, 0.3, 0.1), (0.0, 0.0, 1.0), "A never proposed · B never proposed · C 0.1000"),
    ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0), "α = Σ min(p, q) = 0.0000"),
    ((0.0, 0.0, 0.0), (0.2, 0.3, 0.5), "all weights of p are 0"),
    ((0.6, 0.3, 0.1), (0.0, 0.0, 0.0), "all weights of q are 0"),
    ((1.0, 1.0, 1.0), (0.05, 0.0, 0.0), "α = Σ min(p, q) = 0.3333"),
]


@pytest.mark.parametrize("pw, qw, expected", EXTREMES)
def test_acceptance_extremes(pw, qw, expected):
    lab = acceptance_lab()
    lab.set(**{k: v for k, v in acc_state(pw, qw).items() if k != "symbols"})
    assert expected in " ".join(lab.last_texts.values())
    clean(lab.last_texts)
    impossible = sum(pw) == 0 or sum(qw) == 0
    assert ("lab-impossible" in lab._dom_classes) == impossible
    if impossible:  # greyed, never the previous figure
        assert lab.png == message_png(*base.figure_size(ACCEPTANCE), acc_mod.problem(lab.state))


def test_acceptance_one_step_on_a_q_slider_changes_both_texts():
    lab = acceptance_lab()
    before = dict(lab.last_texts)
    lab.set(q_B=0.35)
    assert lab.last_texts["alpha"] != before["alpha"] and lab.last_texts["acceptance"] != before["acceptance"]


def test_acceptance_symbol_count_shows_new_symbols():
    lab = acceptance_lab()
    lab.set(symbols=6)
    assert "F 1.0000" in lab.last_texts["acceptance"]
    assert (
        lab.controls["q_F"].layout.display is None and lab.controls["q_D"].value == acc_mod.NEW_SYMBOL_WEIGHT
    )
    lab.set(q_F=0.0)
    assert "F never proposed" in lab.last_texts["acceptance"]
    lab.set(symbols=3)
    assert lab.last_texts == acc_mod.texts(acc_mod.DEFAULTS | {"q_F": 0.0})
    assert pixels(lab.png).shape == pixels(base.static_png(ACCEPTANCE)).shape


@pytest.mark.parametrize(
    "weights, match",
    [
        ([0, 0, 0], "all weights of p are 0"),
        ([0.5, -0.1, 0.6], "non-negative"),
        ([np.nan, 1, 1], "finite"),
        ([], "non-empty"),
        ("abc", "vector of numbers"),
    ],
)
def test_normalize_weights_bad_inputs(weights, match):
    with pytest.raises(ValueError, match=match):
        acc_mod.normalize_weights(weights, "p")


@settings(max_examples=120, deadline=None)
@given(
    st.integers(3, 6).flatmap(
        lambda n: st.tuples(
            st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.35, 0.5, 1.0]), min_size=n, max_size=n),
            st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.35, 0.5, 1.0]), min_size=n, max_size=n),
        )
    )
)
def test_acceptance_texts_property(pq):
    """At any slider position: no NaN, and the numbers are the library's, rounded to 4 places."""
    pw, qw = pq
    t = acc_mod.texts(acc_state(pw, qw))
    clean(t)
    if sum(pw) == 0 or sum(qw) == 0:
        assert t["normalized"].startswith("No distribution") and t["alpha"] == t["acceptance"] == ""
        return
    p, q = acc_mod.normalize_weights(pw, "p"), acc_mod.normalize_weights(qw, "q")
    assert t["alpha"].endswith(f"α = Σ min(p, q) = {float(acceptance_probability(p, q)):.4f}")
    parts = t["acceptance"].split(": ", 1)[1].split(" · ")
    assert len(parts) == len(pw)
    for part, ai, qi in zip(parts, acceptance_probabilities(p, q), q):
        assert part.endswith("never proposed") if qi == 0 else part.endswith(f"{ai:.4f}")


# ---------------------------------------------------------------------------- 02 corrections

EXPECTED_TV = {
    "residual": "0.0000",
    "draft": "0.3200",
    "target": "0.1600",
    "uniform": "0.2667",
    "unnormalized": "0.1200",
}


@pytest.mark.parametrize("rule", CORRECTION_RULES)
def test_corrections_every_rule_at_the_worked_example(rule):
    lab = corrections_lab()
    lab.set(rule=rule)
    assert lab.last_texts["tv"] == f"[derived] TV(output, p) = {EXPECTED_TV[rule]}"
    assert ("exactly p" in lab.last_texts["verdict"]) == (rule == "residual")
    out = output_distribution_with([0.6, 0.3, 0.1], [0.2, 0.3, 0.5], rule)
    assert f"{float(total_variation(out, [0.6, 0.3, 0.1])):.4f}" in lab.last_texts["tv"]


def test_corrections_correct_rule_answers_a_q_slider_on_screen():
    """Under the residual rule the output is p whatever q is; the verdict says so and names α, and
    the figure's title carries α, so moving q visibly changes something (lab walk: 'looks frozen')."""
    lab = corrections_lab(rule="residual")
    before_texts, before_png = dict(lab.last_texts), lab.png
    lab.set(q_A=0.4)
    assert lab.last_texts["output"] == before_texts["output"]  # still p
    assert (
        "whatever q is" in lab.last_texts["verdict"] and lab.last_texts["verdict"] != before_texts["verdict"]
    )
    assert "α (now 0.6000)" in before_texts["verdict"] and lab.png != before_png


def test_02_static_figures_fit_an_800px_output_area():
    """02's side-by-side figures were 990 and 1150 px wide, shown scaled to 85 % and 73 % in Lab."""
    from fractions import Fraction as F

    import matplotlib.pyplot as plt

    from specdec_core.plots.residual import decomposition_figure, rules_figure

    cases = [("a", [0.6, 0.3, 0.1], [0.6, 0.3, 0.1]), ("b", [F(1, 5), F(3, 10), F(1, 2)], [0.5, 0.5, 0])] * 2
    for fig in (rules_figure([0.6, 0.3, 0.1], [0.2, 0.3, 0.5]), decomposition_figure(cases)):
        assert fig.get_size_inches()[0] * fig.dpi <= 760
        plt.close(fig)


def test_corrections_specific_outputs():
    s = res_mod.DEFAULTS
    assert "[0.2800, 0.4200, 0.3000]" in res_mod.texts(s)["output"]
    un = res_mod.texts({**s, "rule": "unnormalized"})
    assert "(sums to 0.7600)" in un["output"] and "Not even a distribution" in un["verdict"]
    assert "(sums to 1.0000)" in res_mod.texts({**s, "rule": "residual"})["output"]


@pytest.mark.parametrize("rule", CORRECTION_RULES)
def test_corrections_p_equals_q_every_rule_gives_p(rule):
    lab = corrections_lab()
    lab.set(rule=rule, q_A=0.6, q_B=0.3, q_C=0.1)
    assert (
        lab.last_texts["tv"].endswith("TV(output, p) = 0.0000") and "never used" in lab.last_texts["verdict"]
    )


def test_corrections_zero_weights_and_bad_rule():
    t = res_mod.texts({**res_mod.DEFAULTS, "p_A": 0.0, "p_B": 0.0, "p_C": 0.0})
    assert t["output"].startswith("No distribution") and t["tv"] == t["verdict"] == ""  # said once
    with pytest.raises(ValueError, match="rule must be one of"):
        res_mod.texts({**res_mod.DEFAULTS, "rule": "magic"})
    with pytest.raises(ValueError, match="must be one of"):
        corrections_lab(rule="magic")


def test_rule_updater_asks_for_a_redraw_when_the_verdict_flips():
    from matplotlib.figure import Figure

    from specdec_core.plots.residual import draw_rule_output

    ax = Figure().add_subplot()
    update = draw_rule_output(ax, (0.6, 0.3, 0.1), (0.2, 0.3, 0.5), "draft")
    assert update((0.6, 0.3, 0.1), (0.25, 0.25, 0.5), "draft") is True
    assert update((0.6, 0.3, 0.1), (0.2, 0.3, 0.5), "residual") is False
    assert update((0.5, 0.5), (0.5, 0.5), "draft") is False


# ---------------------------------------------------------------------------- 03 stepper


@pytest.fixture(scope="module")
def recs():
    return step_mod.demo_records()


def test_demo_records_deterministic_and_rich(recs):
    again = step_mod.demo_records()
    assert [(r.proposals, r.draws, r.emitted) for r in recs] == [
        (r.proposals, r.draws, r.emitted) for r in again
    ]
    assert len(recs) == step_mod.DEMO_ROUNDS and all(r.gamma == step_mod.DEMO_GAMMA for r in recs)
    assert recs[0].stop is not None and recs[0].discarded > 0
    assert any(r.kind == "bonus" for r in recs)
    assert all(recs[k + 1].prefix == recs[k].prefix + recs[k].emitted for k in range(len(recs) - 1))


def test_stepper_next_and_back_past_both_ends_with_an_end_cue(recs):
    lab = stepper_lab(recs)
    n = len(replay_steps(recs))
    assert lab.actions["next"].description.startswith("next")
    assert lab.last_texts["counters"] == counters_line(recs, 0) and lab.last_texts["cue"] == ""
    for k in range(1, n + 3):
        lab.actions["next"].click()
        assert lab.last_texts["counters"] == counters_line(recs, k)
        clean(lab.last_texts)
        assert ("End of the replay" in lab.last_texts["cue"]) == (k >= n - 1)
    assert lab.state["step"] == n - 1
    for _ in range(n + 2):
        lab.press("back")
    assert lab.state["step"] == 0 and lab.last_texts["cue"] == ""


def test_stepper_round_and_reset(recs):
    lab = stepper_lab(recs)
    starts = [s.index for s in replay_steps(recs) if s.kind == "propose"]
    for want in starts:
        lab.press("round")
        assert lab.state["step"] == want
    lab.press("round")
    assert lab.last_texts["cue"].startswith("End of the replay")
    lab.press("reset")
    assert lab.state == {"step": 0}


def test_stepper_marks_are_text_not_emoji(recs):
    lab = stepper_lab(recs)
    seen = ""
    for k in range(len(replay_steps(recs))):
        lab.set(step=k)
        seen += lab.last_texts["view"]
    assert "✓" in seen and "✗" in seen
    assert not re.search("[\u2705\u274c\U0001f300-\U0001faff]", seen)


# ---------------------------------------------------------------------------- 04 counts


def test_counts_defaults_show_worked_values():
    t = counts_lab().last_texts
    assert "P(K=1)=0.4000" in t["law"] and "P(K=2)=0.2400" in t["law"] and "P(K=3)=0.3600" in t["law"]
    assert t["mean"] == "[derived] E[K] = 1.9600 tokens per round (at most 3)"


@pytest.mark.parametrize("alpha, gamma", list(itertools.product([0.0, 0.01, 0.5, 0.99, 1.0], [0, 1, 16])))
def test_counts_texts_agree_with_the_library(alpha, gamma):
    lab = counts_lab()
    lab.set(alpha=alpha, gamma=gamma)
    pmf = [float(v) for v in output_count_distribution(alpha, gamma)]
    assert f"E[K] = {float(expected_output_count(alpha, gamma)):.4f}" in lab.last_texts["mean"]
    assert f"P(K={len(pmf)})={pmf[-1]:.4f}" in lab.last_texts["law"]
    clean(lab.last_texts)


def test_counts_huge_gamma_is_shortened():
    t = counts_mod.count_texts(1.0, 10_000)
    assert "…" in t["law"] and "E[K] = 10001.0000" in t["mean"]
    clean(t)


# ---------------------------------------------------------------------------- 05 timing


def test_timing_defaults_are_the_worked_example():
    from specdec_core.worked import WORKED

    d = timing_mod.DEFAULTS
    assert d["draft_per_token_ms"] * d["gamma"] == WORKED.draft_ms and d["verify_base_ms"] == WORKED.verify_ms
    t = timing_lab().last_texts
    assert "217.78 tokens/s" in t["rates"] and "166.67 tokens/s" in t["rates"]
    assert "ratio 1.307×" in t["rates"] and "break-even verification time 8.76 ms" in t["break_even"]
    assert "52.0% of proposals" in t["work"]
    s = scenario_rates(0.6, 2, **timing_mod.budget(d))
    assert f"{float(s['rate']):.2f}" in t["rates"]
    assert f"{100 * float(work_account(0.6, 2)['proposals_thrown_away']):.1f}%" in t["work"]


def test_timing_slower_verification_loses():
    lab = timing_lab()
    lab.set(verify_base_ms=12.0)
    assert "130.67 tokens/s" in lab.last_texts["rates"] and "speculation loses" in lab.last_texts["rates"]


def test_timing_impossible_budget_greys_the_figure_and_recovers():
    lab = timing_lab()
    live = lab.png
    lab.set(draft_per_token_ms=0.0, verify_base_ms=0.0, verify_per_position_ms=0.0, overhead_ms=0.0)
    said = [v for v in lab.last_texts.values() if v]
    assert len(said) == 1 and said[0].startswith("This budget is impossible")  # once, in words
    assert "draft ms / proposal" in said[0] and "draft_ms" not in said[0]
    assert "lab-impossible" in lab._dom_classes and lab.png != live
    assert lab.png == message_png(*base.figure_size(TIMING), timing_mod.problem(lab.state))
    lab.set(overhead_ms=1.0)
    assert "tokens/s" in lab.last_texts["rates"] and "lab-impossible" not in lab._dom_classes


def test_timing_corner_combinations():
    lab = timing_lab()
    ends = {
        "alpha": [0.0, 1.0],
        "gamma": [0, 16],
        "draft_per_token_ms": [0.0, 10.0],
        "verify_base_ms": [0.0, 30.0],
        "overhead_ms": [0.0, 10.0],
    }
    for combo in itertools.product(*ends.values()):
        lab.set(**dict(zip(ends, combo)))
        clean(lab.last_texts)
        assert lab.png.startswith(PNG)


def test_timing_texts_huge_gamma_and_negative_break_even():
    clean(
        timing_mod.timing_texts(
            0.9,
            10_000,
            draft_per_token_ms=1,
            verify_base_ms=6,
            verify_per_position_ms=0.1,
            overhead_ms=1,
            baseline_ms=6,
        )
    )
    t = timing_mod.timing_texts(0.0, 4, draft_per_token_ms=5, verify_base_ms=6, overhead_ms=1, baseline_ms=6)
    assert "no verification time can make this pay" in t["break_even"]


# ---------------------------------------------------------------------------- 07 transforms


def test_transforms_temperature_starts_at_exactly_one_half():
    lab = transforms_lab()
    assert lab.controls["temperature"].value == 0.5 == tr_mod.DEFAULTS["temperature"]
    assert "temperature T = 0.50" in lab.last_texts["used"]
    assert lab.controls["k"].layout.display == "none" and lab.controls["temperature"].layout.display is None


def test_transforms_texts_agree_with_the_library():
    from specdec_core.toy import toy_draft, toy_target
    from specdec_core.transforms import make_transform, setup_output

    for setup, context in itertools.product(tr_mod.SETUP_TITLES, tr_mod.CONTEXTS):
        state = {**tr_mod.DEFAULTS, "setup": setup, "context": context}
        prefix = tr_mod.CONTEXTS[context]
        out, intended = setup_output(
            setup, toy_target()(prefix), toy_draft()(prefix), make_transform("temperature", 0.5)
        )
        tv = float(total_variation(out, intended))
        t = tr_mod.texts(state)
        assert ("✓" in t["verdict"]) == (tv < 1e-12)
        if tv >= 1e-12:
            assert f"{tv:.4f}" in t["verdict"]


def test_transforms_say_when_the_parameter_changes_nothing():
    t = tr_mod.texts({**tr_mod.DEFAULTS, "context": "after D"})
    assert "leaves both p and q unchanged" in t["used"] and "T = 0.50" in t["used"]
    t = tr_mod.texts({**tr_mod.DEFAULTS, "transform": "top_k", "k": 4})
    assert "leaves both p and q unchanged" in t["used"] and "k = 4" in t["used"]
    assert "unchanged" not in tr_mod.texts(tr_mod.DEFAULTS)["used"]


# ---------------------------------------------------------------------------- quizzes


@pytest.mark.parametrize("q", ALL_QUESTIONS, ids=lambda q: q.prompt[:30])
def test_quiz_grades_every_question_with_text_marks(q):
    lab = quiz_lab(q)
    assert lab.last_texts["feedback"] == ""
    lab.press("check")
    assert lab.last_texts["feedback"] == grade(q, None)[1]
    lab.set(choice=q.answer)
    lab.actions["check"].click()
    assert lab.last_texts["feedback"].startswith("✓ Correct")
    lab.set(choice=(q.answer + 1) % len(q.options))
    lab.press("check")
    assert lab.last_texts["feedback"].startswith("✗ Not quite")
    html = static_html(lab.spec)
    assert "<details>" in html and "lab-static-quiz" in html
    assert not re.search("[\u2705\u274c]", html + "".join(lab.last_texts.values()))


def test_quiz_refuses_a_non_question():
    with pytest.raises(ValueError, match="question must be a Question"):
        quiz_mod.quiz_spec("What?")


TRANSFORM_EXTREMES = [
    ("temperature", "temperature", [0.0, 0.05, 1.0, 4.0]),
    ("top_k", "k", [1, 4]),
    ("top_p", "top_p", [0.01, 0.5, 1.0]),
    ("none", "temperature", [0.05]),
    ("greedy", "temperature", [0.05]),
]


@pytest.mark.parametrize("transform, key, values", TRANSFORM_EXTREMES)
def test_transforms_extremes_in_every_setup_and_context(transform, key, values):
    """The texts for every setup × context × extreme value: clean, and the correct and
    target-only setups always keep the intended law."""
    for setup, ctx, v in itertools.product(tr_mod.SETUP_TITLES, tr_mod.CONTEXTS, values):
        t = tr_mod.texts({**tr_mod.DEFAULTS, "setup": setup, "transform": transform, "context": ctx, key: v})
        clean(t)
        if setup in ("correct", "target_only"):
            assert t["verdict"].startswith("✓")


def test_transforms_greedy_draft_bias_at_the_defaults():
    t = transforms_lab().last_texts
    assert t["verdict"] == "✗ biased: TV(emitted, intended) = 0.1042"  # 5/48 at T = 1/2
    assert transforms_lab(setup="correct").last_texts["verdict"] == "✓ emitted law = intended law"


def test_kv_restores_a_cached_scale_without_going_stale():
    """The KV lab caches its axis panel per x-limit: leaving a scale and coming back restores the
    cached ticks; the frame must still equal a fresh drawing (and a new scale too)."""
    spec = SPECS["kv"]
    lab = Lab(spec)
    for budget in (40.0, 300.0, 41.0, 2.0, 300.0, 39.0):
        lab.set(budget_gib=budget)
        fresh = fresh_png(spec, lab.state)
        assert np.abs(pixels(lab.png) - pixels(fresh)).mean() < 1.0, budget


def test_live_frame_is_sent_as_a_data_url_of_the_png_shown():
    """The image widget gets each frame as a data: URL (shown sooner than ipywidgets' blob: URL);
    ``Lab.png`` is the PNG inside it, for every update."""
    import base64

    from specdec_core.plots.frames import png_data_url

    lab = Lab(ACCEPTANCE)
    for change in ({}, {"p_A": 0.2}, {"symbols": 5}):
        lab.set(**change)
        assert lab.figure.format == "url"
        head, _, b64 = bytes(lab.figure.value).partition(b",")
        assert head == b"data:image/png;base64" and base64.b64decode(b64) == lab.png
        assert lab.png.startswith(PNG)
    assert png_data_url(lab.png) == bytes(lab.figure.value)
    for bad in (b"GIF89a", "text", None):
        with pytest.raises(ValueError, match="png must be"):
            png_data_url(bad)


def test_pinned_xlabel_sits_where_a_fresh_draw_puts_it():
    """BlitPNG pins a region Axes' x label after its first draw (frames.pin_xlabel); across new
    axis scales it must stay exactly where a fresh drawing of that state places it — and the
    comparison can fail: a label pinned 3 px lower is caught."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from specdec_core.labs import kv as kv_mod

    def label_box(fig, ax):
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        return ax.xaxis.label.get_window_extent(canvas.get_renderer()).get_points()

    view = kv_mod.SPEC.plot()
    view.update(kv_mod.DEFAULTS)
    view.png()
    for budget in (5.0, 61.0, 250.0, 320.0):  # four x scales, each a new region repaint
        state = {**kv_mod.DEFAULTS, "budget_gib": budget}
        view.update(state)
        view.png()
        live = label_box(view.fig, view.bars.ax)
        fresh_plot = kv_mod.SPEC.plot(blit=False)
        fresh_plot.update(state)
        fresh = label_box(fresh_plot.fig, fresh_plot.bars.ax)
        assert np.allclose(live, fresh, atol=1e-6), (budget, live, fresh)
    x, y = view.bars.ax.xaxis.label.get_position()
    view.bars.ax.xaxis.set_label_coords(x, y - 3 / view.bars.ax.bbox.height)
    assert not np.allclose(label_box(view.fig, view.bars.ax), fresh, atol=1e-6)

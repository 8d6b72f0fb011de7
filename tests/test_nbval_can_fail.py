"""Proof that the nbval check can fail: a changed worked value in a stored output is caught.

Notebook 01 is copied twice into a temporary folder: once unchanged, once with α's stored output
changed from 3/5 to 2/5. One nbval run over both copies (a subprocess, with the options of the
test command; the JUnit report tells the copies apart) must pass every cell of the first copy and
fail exactly the α cell of the second.
"""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "01-proposals-and-acceptance.ipynb"
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"
MARKER = "[derived] α = Σ min(p, q) = 3/5"


def _alpha_cell(nb) -> int:
    hits = [
        i
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code"
        and any(MARKER in "".join(o.get("text", "")) for o in c.get("outputs", []))
    ]
    assert len(hits) == 1, f"expected one stored output containing {MARKER!r}, found {hits}"
    return hits[0]


def test_changed_worked_value_fails_and_original_passes(tmp_path):
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    (tmp_path / "good.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    idx = _alpha_cell(nb)
    for out in nb["cells"][idx]["outputs"]:
        if "text" in out:
            text = "".join(out["text"])
            out["text"] = text.replace(MARKER, MARKER.replace("3/5", "2/5"))
    (tmp_path / "bad.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not the repo's addopts
    # a copy next to the notebooks: a sanitize file outside the rootdir garbles nbval's node ids
    (tmp_path / "sanitize.cfg").write_text(SANITIZE.read_text(encoding="utf-8"), encoding="utf-8")
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(tmp_path / "jupyter"),
        IPYTHONDIR=str(tmp_path / "ipython"),
        MPLCONFIGDIR=str(tmp_path / "mpl"),
    )

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--nbval",
            "--nbval-current-env",
            "--nbval-sanitize-with",
            "sanitize.cfg",
            "--junitxml=report.xml",
            "good.ipynb",
            "bad.ipynb",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = proc.stdout + proc.stderr
    results = {}  # notebook -> {cell name: passed?}
    for case in ET.parse(tmp_path / "report.xml").getroot().iter("testcase"):
        bad = case.find("failure") is not None or case.find("error") is not None
        results.setdefault(case.get("classname"), {})[case.get("name")] = not bad
    good, changed = results.get("good.ipynb", {}), results.get("bad.ipynb", {})
    assert len(good) >= 10 and all(good.values()), log
    code_index = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"].index(idx)
    # nbval numbers code cells only; exactly the changed cell fails
    assert [name for name, ok in changed.items() if not ok] == [f"Cell {code_index}"], log
    assert len(changed) == len(good) and proc.returncode == 1, log
    assert "2/5" in log and "3/5" in log  # the mismatch report shows both values

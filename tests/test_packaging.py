"""The stored results the notebooks print ship inside the package (issue 24: `pip install .`
gave notebooks 06 and 09 no data, because they read a folder outside the package)."""

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "specdec_core" / "results"


def test_results_are_package_data():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "results/*.json" in cfg["tool"]["setuptools"]["package-data"]["specdec_core"]
    from specdec_core.measured import RESULTS_DIR

    assert RESULTS_DIR == RESULTS


def test_every_results_file_a_notebook_names_is_in_the_package():
    names = set()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code":
                src = "".join(cell["source"])
                names |= set(re.findall(r"""read_stored\(["']([\w.-]+\.json)["']""", src))
                if re.search(r"read_capstone\(\)|measured_pass_costs\(\)", src):
                    names.add("llm.json")
    assert names, "no notebook reads stored results?"
    missing = sorted(n for n in names if not (RESULTS / n).exists())
    assert not missing, f"notebooks read {missing}, missing from specdec_core/results"


def _names_read() -> set:
    """Every results file a notebook or the package reads (read_stored / results_path names,
    llm.json for read_capstone)."""
    texts = [p.read_text() for p in (ROOT / "specdec_core").rglob("*.py")]
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        texts += [
            "".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"
        ]
    names = set()
    for src in texts:
        names |= set(re.findall(r"""(?:read_stored|results_path)\(\s*["']([\w.-]+\.json)["']""", src))
        names |= set(
            re.findall(r""""([\w-]+\.json)": \w+,""", src)
        )  # the readers' table in measured/store.py
        if re.search(r"read_capstone\(|measured_pass_costs\(", src):
            names.add("llm.json")
    return names


def test_every_results_file_read_is_inside_a_built_wheel(tmp_path):
    """Issue 24: build the wheel (``pip wheel --no-deps``) and list it: every results file a
    notebook or ``specdec_core`` reads must be inside, so ``pip install .`` runs 06, 08, 09."""
    import subprocess
    import sys
    import zipfile

    import pytest

    names = _names_read()
    assert {"llm.json", "hardware.json", "passcost.json", "features.json", "rounding.json"} <= names
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    wheels = list(tmp_path.glob("*.whl"))
    if r.returncode or not wheels:
        pytest.skip(f"could not build the wheel here (no package index?): {r.stderr[-300:]}")
    inside = set(zipfile.ZipFile(wheels[0]).namelist())
    missing = sorted(n for n in names if f"specdec_core/results/{n}" not in inside)
    assert not missing, f"read but not in the wheel: {missing}"


def test_license_is_an_spdx_string_so_the_build_prints_no_deprecation_banner():
    """A ``license = {text = ...}`` table makes setuptools >= 77 print a deprecation banner at each
    of pip's three build hooks (three times in a learner's first ``make lab``, issue 38)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert isinstance(project["license"], str) and project["license"] == "MIT"
    assert (ROOT / project["license-files"][0]).is_file()
    assert not any(c.startswith("License ::") for c in project.get("classifiers", []))

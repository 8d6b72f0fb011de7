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

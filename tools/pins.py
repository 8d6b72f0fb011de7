"""Read the project's pins from pyproject.toml (the one place they live).

python tools/pins.py runtime|test|model   one requirement per line
python tools/pins.py binder               the text of binder/requirements.txt
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pins(group: str) -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    if group == "runtime":
        return list(project["dependencies"])
    return list(project["optional-dependencies"][group])


def binder_requirements() -> str:
    lines = [
        "# Generated from pyproject.toml by `python tools/pins.py binder`; do not edit by hand.",
        "# tests/test_binder.py checks that it matches.",
        *pins("runtime"),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "runtime"
    if what == "binder":
        sys.stdout.write(binder_requirements())
    else:
        print("\n".join(pins(what)))

"""The repository placeholder lives in one place: the README's Binder badge.

    https://mybinder.org/v2/gh/ORG/REPO/HEAD?urlpath=lab/tree/notebooks/00-start-here.ipynb

Everything that needs ORG/REPO or the badge's urlpath (the book's launch buttons, the Binder
rehearsal test, the benchmark) reads it from there with these functions.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BADGE = re.compile(r"\]\((https://mybinder\.org/v2/gh/([\w.-]+)/([\w.-]+)/HEAD\?urlpath=([^)\s]+))\)")


def _badge(readme: Path | None = None) -> re.Match:
    text = (readme or ROOT / "README.md").read_text(encoding="utf-8")
    found = BADGE.findall(text)
    if len(found) != 1:
        raise ValueError(f"README.md: expected exactly one Binder badge link, found {len(found)}")
    return BADGE.search(text)


def binder_repo(readme: Path | None = None) -> tuple[str, str]:
    """(ORG, REPO) of the README badge."""
    m = _badge(readme)
    return m.group(2), m.group(3)


def binder_urlpath(readme: Path | None = None) -> str:
    """The badge's urlpath, e.g. 'lab/tree/notebooks/00-start-here.ipynb'."""
    return _badge(readme).group(4)

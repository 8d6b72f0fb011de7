"""The built site, shared by tests/test_site.py and tests/test_site_browser.py: built once per
pytest session (tools/book/build.py, ≈10-20 s on 2 cores) into a temporary folder removed at exit,
with a JupyterHub URL set so that both launch buttons can be checked."""
from __future__ import annotations

import atexit
import functools
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "book"))
import build as book  # noqa: E402
import placeholders  # noqa: E402

HUB = "https://hub.example.org"


@dataclass(frozen=True)
class Site:
    out: Path
    notebooks: tuple[Path, ...]   # the stored notebooks, in page order

    @property
    def pages(self) -> list[str]:
        return [nb.stem + ".html" for nb in self.notebooks]


@functools.cache
def built_site() -> Site:
    tmp = Path(tempfile.mkdtemp(prefix="specdec-site-test-"))
    atexit.register(shutil.rmtree, tmp, True)
    notebooks = book.build(tmp / "site", jupyterhub_url=HUB)
    return Site(tmp / "site", tuple(notebooks))


def binder_url(notebook: str) -> str:
    org, repo = placeholders.binder_repo()
    return f"https://mybinder.org/v2/gh/{org}/{repo}/HEAD?urlpath=lab/tree/notebooks/{notebook}"

"""The built site, shared by tests/test_site.py and tests/test_site_browser.py: built once per
pytest session (tools/book/build.py, ≈10-20 s on 2 cores) into a temporary folder removed at exit,
with a JupyterHub URL set so that both launch buttons can be checked."""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
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
    notebooks: tuple[Path, ...]  # the stored notebooks, in page order
    offline: bool  # built inside a network namespace with no network at all

    @property
    def pages(self) -> list[str]:
        return [nb.stem + ".html" for nb in self.notebooks]


def _can_unshare_network() -> bool:
    """True where `unshare -n` works (Linux as root, e.g. CI): then the build runs without network."""
    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@functools.cache
def built_site() -> Site:
    tmp = Path(tempfile.mkdtemp(prefix="specdec-site-test-"))
    atexit.register(shutil.rmtree, tmp, True)
    offline = _can_unshare_network()
    notebooks = book.build(tmp / "site", jupyterhub_url=HUB, no_network=offline)
    return Site(tmp / "site", tuple(notebooks), offline)


def binder_url(notebook: str) -> str:
    org, repo = placeholders.binder_repo()
    return f"https://mybinder.org/v2/gh/{org}/{repo}/HEAD?urlpath=lab/tree/notebooks/{notebook}"

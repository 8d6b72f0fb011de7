"""Start and stop the JupyterLab server of the browser tests (benchmarks/bench_browser.py
imports no test: it starts its own Lab through ``tools/labproc.py`` too).

- The server (``tools/labproc.py``: isolated folders, loopback, a free port, a random token,
  readiness by TCP connect, a stop that leaves no kernel behind) runs on a temporary copy of
  notebooks/, with an app settings folder holding the project's binder/overrides.json (what
  `make lab` and Binder install) merged with tests/browser/overrides.json (no news prompt, no
  update check, no autosave), and the project's server extension enabled
  (binder/jupyter-server-extension.json: ``specdec_core.server.nodelay``, as `make lab` and Binder).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from labdriver import NOTEBOOKS_SRC, ROOT, lab_settings

sys.path.insert(0, str(ROOT / "tools"))
import labproc  # noqa: E402

SERVER_START_TIMEOUT = 60.0
#: Enables the project's Jupyter server extension (what `make lab` and binder/postBuild install).
SERVER_EXTENSION = ROOT / "binder" / "jupyter-server-extension.json"


@dataclass
class LabServer:
    base: str
    token: str
    root: Path  # the server's root_dir: holds notebooks/ (a copy)
    runtime: Path
    log: Path
    stop: object = None  # idempotent: stops the server and its kernels

    def url(self, relpath: str, workspace: str) -> str:
        return f"{self.base}/lab/workspaces/{workspace}/tree/{relpath}?reset&token={self.token}"

    def home_url(self, workspace: str) -> str:
        """Lab in a fresh workspace with no document open (notebooks are then opened in it)."""
        return f"{self.base}/lab/workspaces/{workspace}?reset&token={self.token}"

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""


def start_lab_server(tmp: Path) -> "LabServer":
    """A running server on a copy of the notebooks under ``tmp`` (call ``.stop()`` when done)."""
    root = tmp / "root"
    if NOTEBOOKS_SRC.is_dir():
        shutil.copytree(
            NOTEBOOKS_SRC, root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints")
        )
    else:
        (root / "notebooks").mkdir(parents=True)
    app_settings = tmp / "app-settings"
    app_settings.mkdir()
    (app_settings / "overrides.json").write_text(json.dumps(lab_settings(), indent=1))
    scratch = tmp / "jupyter"  # labproc's isolated Jupyter folders; JUPYTER_CONFIG_DIR is its config/
    server_conf = scratch / "config" / "jupyter_server_config.d"
    server_conf.mkdir(parents=True)
    shutil.copy(SERVER_EXTENSION, server_conf / "specdec-notebooks.json")
    env = dict(os.environ)
    env.pop("SPECDEC_REQUIRE_BROWSER", None)
    proc = labproc.start_lab(
        [sys.executable, "-m", "jupyterlab"],
        root,
        scratch,
        env,
        extra_args=(f"--LabApp.app_settings_dir={app_settings}",),
        timeout=SERVER_START_TIMEOUT,
    )
    return LabServer(proc.base, proc.token, root, proc.runtime, proc.log, stop=proc.stop)


def api(lab: LabServer, method: str, path: str):
    req = urllib.request.Request(
        f"{lab.base}{path}", method=method, headers={"Authorization": f"token {lab.token}"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        body = resp.read()
    return json.loads(body) if body else None

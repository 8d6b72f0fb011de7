"""Start and stop the JupyterLab server of the browser tests and benchmarks/bench_browser.py.

- The server runs on a free loopback port with a random token, on a temporary copy of notebooks/,
  with temporary JUPYTER_CONFIG_DIR / JUPYTER_RUNTIME_DIR / JUPYTER_DATA_DIR / IPYTHONDIR /
  MPLCONFIGDIR and Lab settings/workspaces folders (a fresh data dir: no notebook is trusted, as
  after a clone), and an app settings folder holding the project's binder/overrides.json (what
  `make lab` and Binder install) merged with tests/browser/overrides.json (no news prompt, no
  update check, no autosave). Readiness is checked by TCP connect (a GET could start work).
- ``stop()`` asks the server to shut down (which stops its kernels), then kills its process
  group, then kills any kernel still running on a connection file of this server: nothing is
  left behind.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from labdriver import NOTEBOOKS_SRC, lab_settings

SERVER_START_TIMEOUT = 60.0


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

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"jupyter lab exited with {proc.returncode}:\n" + log.read_text(errors="replace")[-4000:]
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(
        f"jupyter lab did not listen on port {port} within {timeout:.0f} s:\n"
        + log.read_text(errors="replace")[-4000:]
    )


def _pids_using(path: Path) -> list[int]:
    """Processes whose command line mentions `path` (the kernels of this session)."""
    found, needle = [], str(path).encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _stop_server(proc: subprocess.Popen, lab: LabServer) -> None:
    try:  # graceful: the server shuts its kernels down, then exits
        req = urllib.request.Request(
            f"{lab.base}/api/shutdown", method="POST", headers={"Authorization": f"token {lab.token}"}
        )
        urllib.request.urlopen(req, timeout=5).close()
        proc.wait(timeout=15)
    except Exception:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    # Kernels run in their own sessions; any survivor still names our runtime folder.
    for pid in _pids_using(lab.runtime):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def start_lab_server(tmp: Path) -> "LabServer":
    """A running server on a copy of the notebooks under ``tmp`` (call ``.stop()`` when done)."""
    root = tmp / "root"
    if NOTEBOOKS_SRC.is_dir():
        shutil.copytree(
            NOTEBOOKS_SRC, root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints")
        )
    else:
        (root / "notebooks").mkdir(parents=True)
    dirs = {
        name: tmp / name
        for name in (
            "config",
            "runtime",
            "ipython",
            "mpl",
            "user-settings",
            "workspaces",
            "app-settings",
            "data",
        )
    }
    for d in dirs.values():
        d.mkdir()
    # The project's Lab settings (binder/overrides.json: what `make lab` and Binder install, e.g. the
    # widgets' saveState) plus the test-only keys of tests/browser/overrides.json.
    (dirs["app-settings"] / "overrides.json").write_text(json.dumps(lab_settings(), indent=1))
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        IPYTHONDIR=str(dirs["ipython"]),
        MPLCONFIGDIR=str(dirs["mpl"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["user-settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("SPECDEC_REQUIRE_BROWSER", None)
    port, token = _free_port(), secrets.token_hex(16)
    log = tmp / "jupyter-lab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.app_settings_dir={dirs['app-settings']}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    lab = LabServer(f"http://127.0.0.1:{port}", token, root, dirs["runtime"], log)
    stopped = []

    def stop():
        if not stopped:
            stopped.append(True)
            _stop_server(proc, lab)

    lab.stop = stop
    try:
        _wait_for_port(port, proc, log, SERVER_START_TIMEOUT)
    except BaseException:
        stop()
        raise
    return lab


def api(lab: LabServer, method: str, path: str):
    req = urllib.request.Request(
        f"{lab.base}{path}", method=method, headers={"Authorization": f"token {lab.token}"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        body = resp.read()
    return json.loads(body) if body else None

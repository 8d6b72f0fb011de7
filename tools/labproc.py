"""Start and stop an isolated JupyterLab server: the one home of how the browser tests
(``tests/browser/labserver.py``), their benchmark and the Binder rehearsal
(``tools/binder_rehearsal.py``) run Lab.

* Isolated: every Jupyter/IPython/matplotlib folder is a fresh one under a scratch folder (a fresh
  data dir: no notebook is trusted, as after a clone); loopback only, a free port, a random token.
* Ready when the port accepts a TCP connection (a GET could start work).
* ``stop()`` asks the server to shut down (it stops its kernels), then signals its process group,
  then kills any kernel still running on one of its connection files: nothing is left behind.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

#: Debian's Chromium (no browser is ever downloaded; field notes) and the flags every headless
#: run launches it with: the browser tests (tests/browser/labdriver.py) and bench_browser.py,
#: which adds the background-throttling switches a latency measurement needs.
CHROMIUM = Path(os.environ.get("SPECDEC_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)

#: The folders a server gets of its own, and the environment variable naming each.
FOLDERS = {
    "config": "JUPYTER_CONFIG_DIR",
    "data": "JUPYTER_DATA_DIR",
    "runtime": "JUPYTER_RUNTIME_DIR",
    "ipython": "IPYTHONDIR",
    "mpl": "MPLCONFIGDIR",
    "settings": "JUPYTERLAB_SETTINGS_DIR",
    "workspaces": "JUPYTERLAB_WORKSPACES_DIR",
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LabProcess:
    """A running server: its process, base URL, token, runtime folder and log file."""

    proc: subprocess.Popen
    base: str
    token: str
    runtime: Path
    log: Path
    _stopped: list = field(default_factory=list, repr=False)

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Idempotent: shut the server down, then make sure (process group, then its kernels)."""
        if self._stopped:
            return
        self._stopped.append(True)
        if self.proc.poll() is None:
            try:  # graceful: the server shuts its kernels down, then exits
                req = urllib.request.Request(
                    f"{self.base}/api/shutdown",
                    method="POST",
                    headers={"Authorization": f"token {self.token}"},
                )
                urllib.request.urlopen(req, timeout=5).close()
                self.proc.wait(timeout=15)
            except Exception:
                pass
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.proc.poll() is not None:
                break
            try:
                os.killpg(self.proc.pid, sig)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        for pid in pids_mentioning(self.runtime):  # kernels run in sessions of their own
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def pids_mentioning(path: Path) -> list[int]:
    """Processes (not this one) whose command line mentions ``path``."""
    found, needle = [], str(path).encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def start_lab(
    launcher: list[str],
    root: Path,
    scratch: Path,
    base_env: dict,
    *,
    extra_args: tuple = (),
    timeout: float = 60.0,
) -> LabProcess:
    """Run ``launcher`` (e.g. ``[python, "-m", "jupyterlab"]`` or ``[".../bin/jupyter", "lab"]``)
    with ``root`` as the server's root and working folder and ``base_env`` plus isolated folders
    under ``scratch``; return once the port listens (or raise with the log's tail)."""
    env = dict(base_env, PYTHONDONTWRITEBYTECODE="1")
    for name, var in FOLDERS.items():
        d = scratch / name
        d.mkdir(parents=True, exist_ok=True)
        env[var] = str(d)
    port, token = free_port(), secrets.token_hex(16)
    log = scratch / "jupyter-lab.log"
    cmd = [
        *launcher,
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        *extra_args,
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
    lab = LabProcess(proc, f"http://127.0.0.1:{port}", token, scratch / "runtime", log)
    deadline = time.monotonic() + timeout
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{lab.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return lab
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"jupyter lab did not listen on port {port} within {timeout:.0f} s:\n{lab.log_tail()}"
                    ) from None
                time.sleep(0.2)
    except BaseException:
        lab.stop()
        raise

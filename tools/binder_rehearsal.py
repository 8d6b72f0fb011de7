"""Rehearse what Binder (repo2docker) does with binder/, as far as a machine without a container
daemon allows. Used by tests/test_binder_rehearsal.py and benchmarks/bench_binder.py.

1. copy the repository (its files, no .venv/.git/build) into a scratch folder, as Binder copies it;
2. create a fresh Python 3.11 virtual environment there and install binder/requirements.txt ONLY
   (pip's own download cache is the one thing shared between runs);
3. run ./binder/postBuild in the copy's root with that environment first on PATH and
   NB_PYTHON_PREFIX / KERNEL_PYTHON_PREFIX pointing at it, as repo2docker's Dockerfile does;
4. start JupyterLab from that environment (loopback, random token), to be opened at the README
   badge's urlpath.

    python tools/binder_rehearsal.py SCRATCH    prepare steps 1-3 and print the timings
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IGNORE = shutil.ignore_patterns(
    ".venv",
    ".git",
    "build",
    "__pycache__",
    "*.egg-info",
    ".ipynb_checkpoints",
    ".hypothesis",
    ".pytest_cache",
    ".jupyter_cache",
)


def python311() -> str:
    """A Python 3.11 interpreter to build the venv from (binder/runtime.txt says python-3.11)."""
    base = getattr(sys, "_base_executable", sys.executable)
    for cand in (base, shutil.which("python3.11")):
        if (
            cand
            and subprocess.run(
                [cand, "-c", "import sys; assert sys.version_info[:2] == (3, 11)"], capture_output=True
            ).returncode
            == 0
        ):
            return cand
    raise RuntimeError("no Python 3.11 found (binder/runtime.txt pins python-3.11)")


def clean_env(extra: dict | None = None) -> dict:
    """The environment of the rehearsal: no trace of the project's .venv or the user's site."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX")
        and not k.startswith(("JUPYTER", "SPECDEC_"))
    }
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT / ".venv"))
    )
    env.update(PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.update(extra or {})
    return env


def dir_size(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


@dataclass
class Rehearsal:
    scratch: Path
    repo: Path = field(init=False)
    venv: Path = field(init=False)
    seconds: dict = field(default_factory=dict)
    log: Path = field(init=False)

    def __post_init__(self):
        self.scratch = Path(self.scratch)
        self.repo, self.venv = self.scratch / "repo", self.scratch / "env"
        self.log = self.scratch / "rehearsal.log"

    @property
    def env(self) -> dict:
        return clean_env(
            {
                "PATH": f"{self.venv / 'bin'}{os.pathsep}{clean_env()['PATH']}",
                "NB_PYTHON_PREFIX": str(self.venv),
                "KERNEL_PYTHON_PREFIX": str(self.venv),
                "VIRTUAL_ENV": str(self.venv),
            }
        )

    def _run(self, step: str, cmd, **kw):
        start = time.perf_counter()
        with open(self.log, "a") as log:
            log.write(f"\n===== {step}: {' '.join(map(str, cmd))}\n")
            log.flush()
            proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **kw)
        self.seconds[step] = time.perf_counter() - start
        if proc.returncode != 0:
            raise RuntimeError(
                f"{step} failed ({proc.returncode}):\n" + self.log.read_text(errors="replace")[-4000:]
            )

    def prepare(self, compile_bytecode: bool = True) -> "Rehearsal":
        """Steps 1-3: copy, fresh venv from binder/requirements.txt only, postBuild.

        compile_bytecode=False (pip --no-compile) skips writing .pyc files for the ≈120
        distributions, which is most of pip's CPU time here: the test uses it, the benchmark does
        not (Binder compiles)."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        shutil.copytree(ROOT, self.repo, ignore=IGNORE, symlinks=True)
        self.seconds["copy"] = time.perf_counter() - start
        self._run("venv", [python311(), "-m", "venv", str(self.venv)], env=clean_env())
        py = str(self.venv / "bin" / "python")
        self._run(
            "pip_install",
            [
                py,
                "-m",
                "pip",
                "install",
                "--quiet",
                *([] if compile_bytecode else ["--no-compile"]),
                "-r",
                "binder/requirements.txt",
            ],
            cwd=self.repo,
            env=self.env,
        )
        self._run("postBuild", ["./binder/postBuild"], cwd=self.repo, env=self.env)
        return self

    def sizes(self) -> dict:
        site = next((self.venv / "lib").glob("python3.*/site-packages"))
        frozen = subprocess.run(
            [str(self.venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
            capture_output=True,
            text=True,
            env=self.env,
            check=True,
        ).stdout
        return {
            "env_bytes": dir_size(self.venv),
            "site_packages_bytes": dir_size(site),
            "distributions": len(json.loads(frozen)),
        }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Lab:
    proc: subprocess.Popen
    base: str
    token: str
    runtime: Path
    log: Path

    def url(self, urlpath: str) -> str:
        return f"{self.base}/{urlpath}?token={self.token}"

    def stop(self) -> None:
        """Shut the server down (it stops its kernels), then make sure: process group, kernels."""
        if self.proc.poll() is None:
            try:
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
        needle = str(self.runtime).encode()
        for entry in Path("/proc").iterdir():  # kernels started for this server, if any survived
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                try:
                    if needle in (entry / "cmdline").read_bytes():
                        os.kill(int(entry.name), signal.SIGKILL)
                except OSError:
                    pass


def start_lab(r: Rehearsal, timeout: float = 90.0) -> Lab:
    """JupyterLab from the rehearsal's environment, root = the repository copy (as on Binder)."""
    dirs = {
        k: r.scratch / "jupyter" / k
        for k in ("config", "data", "runtime", "ipython", "mpl", "settings", "workspaces")
    }
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    env = dict(
        r.env,
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        IPYTHONDIR=str(dirs["ipython"]),
        MPLCONFIGDIR=str(dirs["mpl"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
    )
    port, token = free_port(), secrets.token_hex(16)
    log = r.scratch / "jupyter-lab.log"
    cmd = [
        str(r.venv / "bin" / "jupyter"),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        "--allow-root",
        f"--ServerApp.root_dir={r.repo}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    start = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=r.repo,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    lab = Lab(proc, f"http://127.0.0.1:{port}", token, dirs["runtime"], log)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(
                f"jupyter lab exited ({proc.returncode}):\n" + log.read_text(errors="replace")[-4000:]
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError as err:
            if time.monotonic() > deadline:
                lab.stop()
                raise RuntimeError(
                    "jupyter lab did not listen in time:\n" + log.read_text(errors="replace")[-4000:]
                ) from err
            time.sleep(0.2)
    r.seconds["lab_listening"] = time.perf_counter() - start
    return lab


if __name__ == "__main__":
    reh = Rehearsal(Path(sys.argv[1])).prepare()
    print(json.dumps({"seconds": reh.seconds, **reh.sizes()}, indent=1))

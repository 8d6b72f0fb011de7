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
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import labproc  # noqa: E402

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


class Lab(labproc.LabProcess):
    """The rehearsal's server (``tools/labproc.py``), opened at a Binder urlpath."""

    def url(self, urlpath: str) -> str:
        return f"{self.base}/{urlpath}?token={self.token}"


def start_lab(r: Rehearsal, timeout: float = 90.0) -> Lab:
    """JupyterLab from the rehearsal's environment, root = the repository copy (as on Binder)."""
    start = time.perf_counter()
    p = labproc.start_lab(
        [str(r.venv / "bin" / "jupyter"), "lab"], r.repo, r.scratch / "jupyter", r.env, timeout=timeout
    )
    r.seconds["lab_listening"] = time.perf_counter() - start
    return Lab(p.proc, p.base, p.token, p.runtime, p.log)


if __name__ == "__main__":
    reh = Rehearsal(Path(sys.argv[1])).prepare()
    print(json.dumps({"seconds": reh.seconds, **reh.sizes()}, indent=1))

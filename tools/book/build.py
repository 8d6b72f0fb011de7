"""Build the notebooks as a static book (Sphinx + myst-nb + sphinx-book-theme; see conf.py).

    python tools/book/build.py [--out build/site] [--jupyterhub-url URL]

Builds from the outputs stored in notebooks/ (nothing is executed) every notebooks/NN-*.ipynb
that exists, in the order of its number (gaps allowed), plus the contents page tools/book/index.md.
The notebooks are staged in a scratch folder first, where widget views are dropped (each lab's
static copy stays) and stored widget state is removed; the download button still serves the
original notebook. The site needs no network to build or to read: open index.html, or serve the
folder with any static web server.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NOTEBOOK_NAME = re.compile(r"\d\d[a-z]?-[^/]+\.ipynb")  # NN-name or NNx-name (09b)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def notebooks_in_order(folder: Path = ROOT / "notebooks") -> list[Path]:
    """notebooks/NN-*.ipynb and NNx-*.ipynb, sorted by number (then name: 09 before 09b); numbers
    need not be contiguous."""
    found = [p for p in folder.glob("[0-9][0-9]*-*.ipynb") if NOTEBOOK_NAME.fullmatch(p.name)]
    return sorted(found, key=lambda p: (int(p.name[:2]), p.name))


#: Put under the title of every page whose notebook stores widgets (see also index.md).
WIDGET_NOTE = (
    ":::{note}\n:class: specdec-static-note\n"
    "This page is a static copy. Its labs and quizzes show their figures and readouts at the "
    "default values; moving a slider, stepping a round or checking an answer needs a running kernel: "
    "use the rocket button above to open this notebook in JupyterLab, or `make lab` locally.\n:::"
)


#: The plain text a widget output keeps in a stored notebook, which stores no widget views
#: (tools/execute_notebooks.py: stored_form; labs/base.LabDisplay, labs/progress.ProgressBar).
WIDGET_TEXTS = ("Interactive lab ", "Progress bar ")


def _shows_widget(out: dict) -> bool:
    data = out.get("data", {})
    plain = data.get("text/plain", "")
    plain = "".join(plain) if isinstance(plain, list) else plain
    return WIDGET_VIEW in data or plain.startswith(WIDGET_TEXTS)


def has_widgets(nb: dict) -> bool:
    return "widgets" in nb.get("metadata", {}) or any(
        _shows_widget(o) for c in nb["cells"] for o in c.get("outputs", [])
    )


def static_copy(nb: dict) -> dict:
    """The notebook as a page shows it: no widget views (a page has no kernel to drive them; the
    lab's static copy is stored right after each one), no stored widget state, and a note under
    the first cell saying so when the notebook has widgets."""
    note = has_widgets(nb)
    nb = dict(nb, metadata={k: v for k, v in nb.get("metadata", {}).items() if k != "widgets"})
    cells = []
    for cell in nb["cells"]:
        if cell.get("cell_type") == "code":
            outputs = [o for o in cell.get("outputs", []) if WIDGET_VIEW not in o.get("data", {})]
            cell = dict(cell, outputs=outputs)
        cells.append(cell)
        if note and len(cells) == 1:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": WIDGET_NOTE})
    nb["cells"] = cells
    return nb


#: A link from one notebook to a section of another, with JupyterLab's anchor (the heading's text
#: with spaces as '-', as Lab's ``createHeaderId`` makes it): ``](NN-name.ipynb#Lab-anchor)``.
LAB_LINK = re.compile(r"\]\((\d\d[a-z]?-[^)#/]+\.ipynb)#([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def heading_slugs(nb: dict) -> dict[str, str]:
    """{Lab anchor: the page's anchor} for every markdown heading of a notebook: notebooks link
    with Lab's anchors (what a learner clicks in JupyterLab), the page's headings get MyST's
    GitHub-style slugs (``myst_heading_anchors``)."""
    from myst_parser.slugs import github_slugify

    out = {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        src = cell.get("source", "")
        for line in (src if isinstance(src, str) else "".join(src)).splitlines():
            m = HEADING.match(line)
            if m:
                out.setdefault(m.group(2).replace(" ", "-"), github_slugify(m.group(2)))
    return out


def page_links(nb: dict, slugs: dict[str, dict[str, str]]) -> dict:
    """The notebook with every Lab-anchored link to another notebook's section pointed at that
    section's anchor on its page (``slugs`` {notebook name: :func:`heading_slugs`}); a link
    whose heading is not found is left as it is (the site's link test reports it)."""

    def fix(m):
        name, anchor = m.group(1), m.group(2)
        slug = slugs.get(name, {}).get(anchor)
        return f"]({name}#{slug})" if slug else m.group(0)

    cells = []
    for cell in nb["cells"]:
        if cell.get("cell_type") == "markdown":
            src = cell.get("source", "")
            src = src if isinstance(src, str) else "".join(src)
            cell = dict(cell, source=LAB_LINK.sub(fix, src))
        cells.append(cell)
    return dict(nb, cells=cells)


def stage(src: Path, dest: Path, originals: Path) -> list[Path]:
    """Copy the contents page, the notebooks (as static copies) and their asset files into dest,
    and each notebook as read (the same bytes, for the download button) into originals."""
    notebooks = notebooks_in_order(src)
    if not notebooks:
        raise SystemExit(f"no {src}/NN-*.ipynb to build")
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE / "index.md", dest / "index.md")
    for item in src.iterdir():  # images and other files the notebooks link to
        if item.suffix != ".ipynb" and not item.name.startswith("."):
            copy = shutil.copytree if item.is_dir() else shutil.copy
            copy(item, dest / item.name)
    originals.mkdir(parents=True, exist_ok=True)
    read = {}
    for nb_path in notebooks:
        raw = nb_path.read_bytes()  # read once: other work may be saving notebooks meanwhile
        (originals / nb_path.name).write_bytes(raw)
        read[nb_path.name] = json.loads(raw.decode("utf-8"))
    slugs = {name: heading_slugs(nb) for name, nb in read.items()}
    for name, nb in read.items():
        (dest / name).write_text(
            json.dumps(page_links(static_copy(nb), slugs), indent=1, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
    return notebooks


def build(
    out: Path,
    src: Path = ROOT / "notebooks",
    jupyterhub_url: str | None = None,
    quiet: bool = True,
    no_network: bool = False,
) -> list[Path]:
    """Build the site into `out` (replaced); returns the notebooks built, in page order.
    no_network=True runs Sphinx in a new network namespace (`unshare -n`, Linux, root): the
    proof that the build needs no network."""
    out = Path(out).resolve()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if jupyterhub_url is not None:
        env["SPECDEC_JUPYTERHUB_URL"] = jupyterhub_url
    with tempfile.TemporaryDirectory(prefix="specdec-book-") as tmp:
        staged = Path(tmp) / "src"
        notebooks = stage(Path(src), staged, Path(tmp) / "originals")
        html = Path(tmp) / "html"  # myst-nb writes beside the output folder: keep that in tmp
        cmd = [
            *(["unshare", "-n"] if no_network else []),
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-c",
            str(HERE),
            "-d",
            str(Path(tmp) / "doctrees"),
            "-j",
            "1",
            *(["-q"] if quiet else []),
            str(staged),
            str(html),
        ]
        proc = subprocess.run(cmd, env=env, cwd=tmp, text=True, capture_output=quiet)
        if proc.returncode != 0:
            raise RuntimeError(
                f"sphinx-build failed ({proc.returncode}):\n"
                f"{(proc.stdout or '')[-3000:]}{(proc.stderr or '')[-3000:]}"
            )
        if quiet and proc.stderr.strip():
            sys.stderr.write(proc.stderr)  # Sphinx warnings (broken links, ...)
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        # The download button serves the notebook as stored, widgets and all.
        for nb_path in notebooks:
            shutil.copy(Path(tmp) / "originals" / nb_path.name, html / "_sources" / nb_path.name)
        shutil.move(str(html), str(out))
    (out / ".nojekyll").touch()  # GitHub Pages: serve _static/ and _sources/ as they are
    return notebooks


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    ap.add_argument(
        "--jupyterhub-url",
        default=None,
        help="also add a JupyterHub launch button (default: $SPECDEC_JUPYTERHUB_URL)",
    )
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    notebooks = build(args.out, jupyterhub_url=args.jupyterhub_url, quiet=not args.verbose)
    print(
        f"{len(notebooks)} notebook pages + contents in {args.out} "
        f"({time.perf_counter() - start:.0f} s); open {args.out / 'index.html'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

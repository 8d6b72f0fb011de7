"""Build a static HTML version of the collection (offline, nothing is executed).

    python tools/build_site.py [--notebooks notebooks] [--out build/site]

One page per stored notebook (notebooks/NN-*.ipynb, in order) rendered with nbconvert from its
stored outputs, an index page listing each notebook's title and learning objective, and on every
page links to the contents and to the previous and next notebook. Links between notebooks
(`NN-x.ipynb`) become links between pages; other relative links that leave notebooks/ (the library,
the README) point to the repository on GitHub (REPO_URL, a placeholder until the repository has a
public home); files inside notebooks/ that a notebook links to are copied next to the pages.
"""
from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
# Placeholder: the repository has no public remote yet. Same ORG/REPO as the README's Binder badge.
REPO_URL = "https://github.com/specdec/specdec-notebooks/blob/HEAD"
SITE_TITLE = "Speculative decoding, verified: the notebooks"

CSS = """
.specdec-nav { font-family: system-ui, sans-serif; display: flex; justify-content: space-between;
  gap: 1em; max-width: 1100px; margin: 0.6em auto; padding: 0.5em 1em; border: 1px solid #ccc;
  border-radius: 6px; background: #f7f7f7; font-size: 15px; }
.specdec-nav a { text-decoration: none; color: #0057a3; }
.specdec-nav .specdec-nav-prev, .specdec-nav .specdec-nav-next { flex: 1; }
.specdec-nav .specdec-nav-next { text-align: right; }
.specdec-nav .specdec-nav-contents { flex: 0 0 auto; text-align: center; }
"""
INDEX_CSS = """
body { font-family: system-ui, sans-serif; max-width: 900px; margin: 2em auto; padding: 0 1em;
  line-height: 1.5; color: #222; }
ol.specdec-contents { padding-left: 1.2em; }
ol.specdec-contents li { margin-bottom: 1em; }
ol.specdec-contents a { font-weight: 600; font-size: 1.1em; color: #0057a3; }
.specdec-objective { margin: 0.2em 0 0 0; }
"""


@dataclass
class Page:
    source: Path
    slug: str            # file name of the page, e.g. "01-proposals-and-acceptance.html"
    title: str
    objective_html: str  # the learning objective, rendered from markdown ("" if none)


def notebooks_in_order(folder: Path) -> list[Path]:
    return sorted(folder.glob("[0-9][0-9]-*.ipynb"))


def _title(nb, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+?)\s*$", cell.source, flags=re.M)
            if m:
                return m.group(1)
    return fallback


def _objective_markdown(nb) -> str:
    """The paragraph that starts with **Learning objective.** (without that label)."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        m = re.search(r"\*\*Learning objectives?\.?\*\*\.?\s*(.+?)(?:\n\s*\n|\Z)", cell.source, flags=re.S)
        if m:
            return " ".join(m.group(1).split())
    return ""


def _markdown_inline(text: str) -> str:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    out = markdown2html_mistune(text).strip()
    return re.sub(r"^<p>(.*)</p>$", r"\1", out, flags=re.S)


def read_pages(notebooks: list[Path]) -> list[Page]:
    import nbformat

    pages = []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        objective = _objective_markdown(nb)
        pages.append(Page(path, path.stem + ".html", _title(nb, path.stem),
                          _markdown_inline(objective) if objective else ""))
    return pages


def _nav(pages: list[Page], i: int) -> str:
    prev = (f'<a class="specdec-nav-prev" rel="prev" href="{pages[i - 1].slug}">← '
            f'{html.escape(pages[i - 1].title)}</a>' if i > 0 else '<span class="specdec-nav-prev"></span>')
    nxt = (f'<a class="specdec-nav-next" rel="next" href="{pages[i + 1].slug}">'
           f'{html.escape(pages[i + 1].title)} →</a>' if i + 1 < len(pages)
           else '<span class="specdec-nav-next"></span>')
    return (f'<nav class="specdec-nav">{prev}<a class="specdec-nav-contents" href="index.html">'
            f'Contents</a>{nxt}</nav>')


_LINK = re.compile(r'(?P<attr>\b(?:href|src)=)(?P<q>["\'])(?P<url>[^"\']*)(?P=q)')


def _rewrite_links(body: str, notebook_dir: Path, out_dir: Path, slugs: set[str]) -> str:
    """.ipynb links -> pages; links leaving notebooks/ -> the repository; local files -> copied."""
    repo_root = notebook_dir.resolve().parent  # the repository holding notebooks/

    def fix(m):
        url = html.unescape(m.group("url"))
        parts = urlsplit(url)
        if parts.scheme or url.startswith(("#", "//")) or not parts.path:
            return m.group(0)
        suffix = (f"#{parts.fragment}" if parts.fragment else "")
        target = (notebook_dir / parts.path).resolve()
        name = PurePosixPath(parts.path).name
        if name.endswith(".ipynb") and target.parent == notebook_dir.resolve() \
                and name[:-6] + ".html" in slugs:
            new = name[:-6] + ".html" + suffix
        elif target.is_relative_to(notebook_dir.resolve()) and target.is_file():
            rel = target.relative_to(notebook_dir.resolve())
            (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(target, out_dir / rel)
            new = rel.as_posix() + suffix
        elif target.is_relative_to(repo_root):
            new = f"{REPO_URL}/{target.relative_to(repo_root).as_posix()}{suffix}"
        else:
            return m.group(0)
        return f'{m.group("attr")}{m.group("q")}{html.escape(new)}{m.group("q")}'

    return _LINK.sub(fix, body)


def _render_notebook(page: Page, exporter) -> str:
    import nbformat

    nb = nbformat.read(page.source, as_version=4)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": page.title}})
    return body


def _index_html(pages: list[Page]) -> str:
    items = "\n".join(
        f'<li><a href="{p.slug}">{html.escape(p.title)}</a>'
        + (f'<p class="specdec-objective"><b>Objective.</b> {p.objective_html}</p>' if p.objective_html else "")
        + "</li>" for p in pages)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(SITE_TITLE)}</title>
<style>{INDEX_CSS}</style>
</head>
<body>
<h1>{html.escape(SITE_TITLE)}</h1>
<p>A static, read-only version of the notebooks: every page shows the stored outputs, and every
interactive widget has a static figure next to it. To move the sliders, open the notebooks in
JupyterLab (<code>make lab</code>) or on Binder.</p>
<h2>Contents</h2>
<ol class="specdec-contents" start="0">
{items}
</ol>
</body>
</html>
"""


def build_site(notebooks_dir: Path = ROOT / "notebooks", out_dir: Path = ROOT / "build" / "site") -> list[Page]:
    """Build the site into `out_dir` (replaced); return the pages in order."""
    from nbconvert import HTMLExporter

    notebooks_dir, out_dir = Path(notebooks_dir), Path(out_dir)
    notebooks = notebooks_in_order(notebooks_dir)
    if not notebooks:
        raise SystemExit(f"no notebooks NN-*.ipynb in {notebooks_dir}")
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    pages = read_pages(notebooks)
    slugs = {p.slug for p in pages}
    exporter = HTMLExporter(template_name="lab")
    for i, page in enumerate(pages):
        body = _render_notebook(page, exporter)
        body = _rewrite_links(body, notebooks_dir, out_dir, slugs)
        nav = _nav(pages, i)
        body = body.replace("</head>", f"<style>{CSS}</style>\n</head>", 1)
        body, n = re.subn(r"(<body[^>]*>)", lambda m: m.group(1) + "\n" + nav, body, count=1)
        if n != 1:
            raise RuntimeError(f"{page.source.name}: no <body> in nbconvert's output")
        body = body.replace("</body>", nav.replace('class="specdec-nav"', 'class="specdec-nav specdec-nav-bottom"')
                            + "\n</body>", 1)
        (out_dir / page.slug).write_text(body, encoding="utf-8")
    (out_dir / "index.html").write_text(_index_html(pages), encoding="utf-8")
    return pages


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notebooks", type=Path, default=ROOT / "notebooks")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    args = ap.parse_args(argv)
    pages = build_site(args.notebooks, args.out)
    print(f"{len(pages)} pages + index.html in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The static site (tools/build_site.py) builds offline into a temporary folder, has one page per
stored notebook in order, a contents page with each title and objective, previous/next links, and
no relative link that leads nowhere."""
from __future__ import annotations

import hashlib
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_site  # noqa: E402

NOTEBOOKS = build_site.notebooks_in_order(ROOT / "notebooks")
pytestmark = pytest.mark.skipif(not NOTEBOOKS, reason="no notebooks/NN-*.ipynb stored yet")


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids, self.navs = [], set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "name" in a:
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.links.append((tag, a.get("rel"), a.get("class") or "", a[key]))


def parse(path: Path) -> Links:
    p = Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def _digest(paths):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "site"
    before = _digest(NOTEBOOKS)
    pages = build_site.build_site(ROOT / "notebooks", out)
    assert _digest(NOTEBOOKS) == before, "building the site must not touch the notebooks"
    return out, pages


def test_every_notebook_has_a_page_in_order(site):
    out, pages = site
    assert [p.slug for p in pages] == [nb.stem + ".html" for nb in NOTEBOOKS]
    for page in pages:
        text = (out / page.slug).read_text(encoding="utf-8")
        assert len(text) > 1000 and "<h1" in text, page.slug


def test_index_lists_titles_and_objectives_in_order(site):
    out, pages = site
    index = (out / "index.html").read_text(encoding="utf-8")
    hrefs = [h for _, _, _, h in parse(out / "index.html").links]
    assert hrefs == [p.slug for p in pages]
    for page in pages:
        assert page.title and page.title in index.replace("&#x27;", "'"), page.slug
        assert page.objective_html, f"{page.source.name}: no **Learning objective.** paragraph"
        assert page.objective_html in index


def test_previous_next_and_contents_links(site):
    out, pages = site
    for i, page in enumerate(pages):
        links = parse(out / page.slug).links
        rel = {(r, h) for _, r, _, h in links if r in ("prev", "next")}
        expected = set()
        if i > 0:
            expected.add(("prev", pages[i - 1].slug))
        if i + 1 < len(pages):
            expected.add(("next", pages[i + 1].slug))
        assert rel == expected, page.slug
        assert sum(1 for _, _, c, h in links if "specdec-nav-contents" in c and h == "index.html") == 2


def test_relative_links_resolve(site):
    out, _ = site
    broken = []
    for html_file in sorted(out.glob("*.html")):
        parsed = parse(html_file)
        for tag, _, _, url in parsed.links:
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//"):
                continue
            if parts.path.endswith(".ipynb"):
                broken.append(f"{html_file.name}: {url} (a notebook link not turned into a page)")
                continue
            target = (html_file.parent / unquote(parts.path)) if parts.path else html_file
            if not target.is_file():
                broken.append(f"{html_file.name}: {url}")
            elif parts.fragment and target.suffix == ".html":
                ids = parsed.ids if target == html_file else parse(target).ids
                if unquote(parts.fragment) not in {unquote(i) for i in ids}:
                    broken.append(f"{html_file.name}: {url} (no such anchor)")
    assert not broken, broken


def test_build_site_cli(tmp_path):
    import subprocess

    out = tmp_path / "cli-site"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "build_site.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (out / "index.html").is_file()
    assert f"{len(NOTEBOOKS)} pages" in proc.stdout


def test_links_are_rewritten_for_the_site(tmp_path):
    import nbformat

    src = tmp_path / "repo" / "notebooks"
    (src / "img").mkdir(parents=True)
    (src / "img" / "dot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    md = ("# 00 · First\n\n**Learning objective.** Learn *one* thing.\n\n"
          "[next](01-second.ipynb), [sec](01-second.ipynb#Part), [lib](../specdec_core/verify.py), "
          "![dot](img/dot.png), [web](https://example.org/x.ipynb)")
    for name, source in (("00-first.ipynb", md), ("01-second.ipynb", "# 01 · Second\n\n## Part")):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(source)])
        nbformat.write(nb, src / name)
    pages = build_site.build_site(src, tmp_path / "site")
    assert [(p.slug, p.title) for p in pages] == [("00-first.html", "00 · First"),
                                                   ("01-second.html", "01 · Second")]
    assert pages[0].objective_html == "Learn <em>one</em> thing."
    hrefs = [h for _, _, _, h in parse(tmp_path / "site" / "00-first.html").links]
    assert "01-second.html" in hrefs and "01-second.html#Part" in hrefs
    assert f"{build_site.REPO_URL}/specdec_core/verify.py" in hrefs
    assert "img/dot.png" in hrefs and (tmp_path / "site" / "img" / "dot.png").is_file()
    assert "https://example.org/x.ipynb" in hrefs

"""The static site (tools/book: Sphinx + myst-nb + sphinx-book-theme), checked on its HTML files.

Built once per session from the stored outputs (tests/sitebuild.py). Checked here: one page per
notebooks/NN-*.ipynb in number order (gaps allowed), the contents page lists them in that order,
previous/next links chain the whole collection, every page loads scripts, styles, images and
fonts from the site itself (MathJax 2 included) and never from another host, the launch buttons
open JupyterLab at the page's notebook on Binder and on the configured JupyterHub with the README
badge's repository, the download button serves the stored notebook, widget views are left out
(their static copies stay), and no relative link leads nowhere. tests/test_site_browser.py reads
the same site in Chromium.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from sitebuild import HUB, ROOT, binder_url, book, built_site, placeholders

pytestmark = pytest.mark.skipif(not book.notebooks_in_order(), reason="no notebooks/NN-*.ipynb yet")


class Page(HTMLParser):
    def __init__(self, path: Path):
        super().__init__()
        self.path, self.ids, self.tags, self.rel = path, set(), [], {}
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        self.tags.append((tag, a))
        if tag == "link" and a.get("rel") in ("prev", "next"):
            self.rel[a["rel"]] = a["href"]

    def links(self, tag=None, cls=None):
        return [
            a
            for t, a in self.tags
            if (tag is None or t == tag) and (cls is None or cls in (a.get("class") or "").split())
        ]


def served(site, nb: Path) -> str:
    """The notebook as the build read it (the download button's copy)."""
    return (site.out / "_sources" / nb.name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def site():
    return built_site()


def test_notebooks_in_order_allows_gaps_and_ignores_other_files(tmp_path):
    for name in (
        "10-late.ipynb",
        "08-new.ipynb",
        "00-a.ipynb",
        "09-b.ipynb",
        "draft.ipynb",
        "8-short.ipynb",
        "01-x.txt",
    ):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in book.notebooks_in_order(tmp_path)] == [
        "00-a.ipynb",
        "08-new.ipynb",
        "09-b.ipynb",
        "10-late.ipynb",
    ]


def test_static_copy_drops_widget_views_and_state_only():
    view = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "x"}, "text/plain": "VBox(...)"},
    }
    static = {"output_type": "display_data", "metadata": {}, "data": {"text/html": "<p>copy</p>"}}
    stream = {"output_type": "stream", "name": "stdout", "text": "α = 3/5\n"}
    nb = {
        "metadata": {"widgets": {"state": {}}, "kernelspec": {"name": "python3"}},
        "cells": [
            {"cell_type": "code", "source": "show()", "outputs": [view, static, stream]},
            {"cell_type": "markdown", "source": "# t"},
        ],
    }
    out = book.static_copy(nb)
    assert out["metadata"] == {"kernelspec": {"name": "python3"}}
    assert out["cells"][0]["outputs"] == [static, stream]
    assert out["cells"][1]["source"] == book.WIDGET_NOTE, "a note under the first cell"
    assert out["cells"][2] == nb["cells"][1]
    assert len(nb["cells"][0]["outputs"]) == 3, "the input notebook is not modified"
    plain = {"metadata": {}, "cells": [dict(nb["cells"][0], outputs=[stream]), nb["cells"][1]]}
    assert book.static_copy(plain) == plain, "no widgets, no note"
    # A stored notebook keeps no widget views, only a lab's plain text: still a page with labs.
    text = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "Interactive lab x — run"}}
    stored = {"metadata": {}, "cells": [dict(nb["cells"][0], outputs=[text, static]), nb["cells"][1]]}
    assert book.has_widgets(stored) and book.static_copy(stored)["cells"][1]["source"] == book.WIDGET_NOTE


def test_a_small_collection_with_a_gap_builds_in_order_and_is_not_modified(tmp_path):
    import hashlib

    import nbformat

    src = tmp_path / "notebooks"
    (src / "img").mkdir(parents=True)
    (src / "img" / "dot.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    texts = {
        "00-first.ipynb": "# 00 · First\n\n$\\alpha = 3/5$, see [next](03-third.ipynb)"
        " and ![dot](img/dot.svg)",
        "03-third.ipynb": "# 03 · Third\n\n## Part",
        "10-late.ipynb": "# 10 · Late",
    }
    for name, md in texts.items():
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(md)])
        nbformat.write(nb, src / name)
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in src.glob("*.ipynb")}
    built = book.build(tmp_path / "site", src=src)
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in src.glob("*.ipynb")}
    assert before == after, "building the site must not touch the notebooks"
    assert [p.name for p in built] == list(texts)
    out = tmp_path / "site"
    assert Page(out / "00-first.html").rel == {"prev": "index.html", "next": "03-third.html"}
    assert Page(out / "03-third.html").rel == {"prev": "00-first.html", "next": "10-late.html"}
    first = (out / "00-first.html").read_text(encoding="utf-8")
    assert 'href="03-third.html"' in first and (out / "_images" / "dot.svg").is_file()
    assert "\\(\\alpha = 3/5\\)" in first, "inline math is left for MathJax"


def test_the_site_was_built_with_no_network_at_all(site):
    if not site.offline:
        pytest.skip(
            "`unshare -n` is not available here (needs Linux and root): the build ran with "
            "the network present; test_pages_fetch_nothing_from_another_host still holds"
        )
    assert (site.out / "index.html").is_file() and (site.out / "_static" / "mathjax").is_dir()


def test_one_page_per_notebook_and_contents_in_order(site):
    assert [p.name for p in site.notebooks] == [p.name for p in book.notebooks_in_order()]
    main = (site.out / "index.html").read_text(encoding="utf-8")
    body = main[main.index('<div class="toctree-wrapper') :]
    toc = re.findall(r'<li class="toctree-l1"><a class="reference internal" href="([^"]+)"', body)
    assert toc == site.pages
    for nb, page in zip(site.notebooks, site.pages):
        title = json.loads(served(site, nb))["cells"][0]["source"]
        title = "".join(title).splitlines()[0].lstrip("# ").strip()
        html = (site.out / page).read_text(encoding="utf-8")
        assert len(html) > 5000 and "<h1>" in html, page
        assert f"<title>{title.replace('&', '&amp;')}" in html.replace("&#39;", "'"), page


def test_previous_next_links_chain_the_collection(site):
    chain = ["index.html", *site.pages]
    for i, name in enumerate(chain):
        page = Page(site.out / name)
        expected = {}
        if i > 0:
            expected["prev"] = chain[i - 1]
        if i + 1 < len(chain):
            expected["next"] = chain[i + 1]
        assert page.rel == expected, name
        footer_next = [a["href"] for a in page.links("a", "right-next")]
        footer_prev = [a["href"] for a in page.links("a", "left-prev")]
        assert footer_next == ([expected["next"]] if "next" in expected else []), name
        assert footer_prev == ([expected["prev"]] if "prev" in expected else []), name


def _fetched_urls(page: Page):
    """URLs a browser fetches while loading the page (not the ones a reader may click)."""
    for tag, a in page.tags:
        if tag in ("script", "img", "iframe", "source", "video", "audio", "embed") and a.get("src"):
            yield tag, a["src"]
        if (
            tag == "link"
            and a.get("href")
            and a.get("rel") in ("stylesheet", "preload", "icon", "modulepreload", "preconnect")
        ):
            yield tag, a["href"]


def test_pages_fetch_nothing_from_another_host(site):
    outside = []
    for html in sorted(site.out.glob("*.html")):
        for tag, url in _fetched_urls(Page(html)):
            if urlsplit(url).scheme not in ("", "data") or url.startswith("//"):
                outside.append(f"{html.name}: <{tag}> {url}")
    css_js = [p for p in site.out.rglob("*") if p.suffix in (".css",) and "mathjax" not in p.parts]
    for css in css_js:
        for url in re.findall(r"url\(\s*['\"]?([^'\")]+)", css.read_text(errors="replace")):
            if urlsplit(url).scheme in ("http", "https") or url.startswith("//"):
                outside.append(f"{css.relative_to(site.out)}: url({url})")
    assert not outside, outside


def test_mathjax_is_served_by_the_site(site):
    page = Page(site.out / site.pages[min(2, len(site.pages) - 1)])
    srcs = [a["src"] for a in page.links("script") if "MathJax" in a.get("src", "")]
    assert srcs == ["_static/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"]
    mj = site.out / "_static" / "mathjax"
    for rel in (
        "MathJax.js",
        "config/TeX-AMS-MML_HTMLorMML-full.js",
        "jax/output/HTML-CSS/fonts/STIX-Web/fontdata.js",
    ):
        assert (mj / rel).is_file(), rel
    assert any((mj / "fonts" / "HTML-CSS" / "STIX-Web" / "woff").rglob("*.woff"))
    config = [a for t, a in page.tags if t == "script" and a.get("type") == "text/x-mathjax-config"]
    assert config, "MathJax 2 configuration (webFont STIX-Web, no image fonts) missing"


def test_launch_buttons_open_lab_at_the_notebook(site):
    org, repo = placeholders.binder_repo()
    for nb, page_name in zip(site.notebooks, site.pages):
        page = Page(site.out / page_name)
        hrefs = [a["href"] for a in page.links("a") if a.get("href", "").startswith("https://")]
        assert binder_url(nb.name) in hrefs, page_name
        hub = [h for h in hrefs if h.startswith(HUB)]
        assert len(hub) == 1, page_name
        parts = urlsplit(hub[0])
        query = parse_qs(parts.query)
        assert parts.path == "/hub/user-redirect/git-pull"
        assert query == {
            "repo": [f"https://github.com/{org}/{repo}"],
            "branch": ["HEAD"],
            "urlpath": [f"lab/tree/{repo}/notebooks/{nb.name}"],
        }, page_name
    # The contents page is not a notebook: no launch button there.
    assert not [
        a
        for a in Page(site.out / "index.html").links("a")
        if a.get("href", "").startswith("https://mybinder.org")
    ]


def test_download_button_serves_the_stored_notebook(site):
    for nb, page_name in zip(site.notebooks, site.pages):
        hrefs = [a["href"] for a in Page(site.out / page_name).links("a")]
        assert f"_sources/{nb.name}" in hrefs, page_name
        # The stored notebook as the build read it, not the page's static copy (which adds the
        # note cell). (Not compared with notebooks/ now: other work may be saving them.)
        copy = json.loads(served(site, nb))
        assert copy["cells"] and copy["metadata"].get("kernelspec"), nb.name
        assert book.WIDGET_NOTE not in ["".join(c.get("source", "")) for c in copy["cells"]], nb.name


def test_widget_views_are_left_out_and_static_copies_kept(site):
    for nb, page_name in zip(site.notebooks, site.pages):
        html = (site.out / page_name).read_text(encoding="utf-8")
        assert "application/vnd.jupyter.widget" not in html, page_name
        assert "VBox(children=" not in html and "HBox(children=" not in html, page_name
        stored = json.loads(served(site, nb))
        n_static = sum(
            1
            for c in stored["cells"]
            for o in c.get("outputs", [])
            if "application/vnd.jupyter.widget-view+json" not in o.get("data", {})
            and "image/png" in o.get("data", {})
            and "text/html" not in o["data"]
        )
        assert html.count("<img") >= n_static, f"{page_name}: stored figures missing"
        assert ("specdec-static-note" in html) == book.has_widgets(stored), page_name
    intro = (site.out / "index.html").read_text(encoding="utf-8")
    assert "needs a kernel" in intro and "static copy" in intro


def test_relative_links_resolve(site):
    broken = []
    pages = {p: Page(p) for p in sorted(site.out.glob("*.html"))}
    for path, page in pages.items():
        for tag, a in page.tags:
            url = a.get("href") if tag in ("a", "link") else a.get("src")
            if not url or tag not in ("a", "link", "img", "script"):
                continue
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if not target.is_file():
                broken.append(f"{path.name}: {url}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else Page(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.name}: {url} (no such anchor)")
    assert not broken, broken


def test_make_site_and_readme_say_how_to_publish():
    make = (ROOT / "Makefile").read_text()
    assert re.search(r"^site:.*\n\t.*tools/book/build\.py", make, re.M)
    assert not (ROOT / "tools" / "build_site.py").exists(), "the hand-written builder is replaced"
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Binder and the static site") :]
    assert "make site" in section and "static" in section

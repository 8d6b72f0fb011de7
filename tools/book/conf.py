"""Sphinx configuration of the static site (the notebooks as a book). Built by tools/book/build.py.

Why Sphinx + myst-nb + sphinx-book-theme directly rather than Jupyter Book 1.x (jupyter-book
1.0.4.post1, which wraps exactly these three): Jupyter Book 1 pins an older Sphinx (7.4) and
myst-parser (3.0) and pulls 13 more packages we do not use (bibtex, thebe, comments, LaTeX, ...);
this file gives the same book look with fewer pins and direct control of what makes the site work
offline (the MathJax path, no widget JavaScript, the launch buttons). Jupyter Book 2 (mystmd) needs
Node and downloads its theme at build time, so it is not an option here.

Offline by construction, checked by tests/test_site.py and tests/test_site_browser.py:
- notebooks are never executed: the pages show the outputs stored in notebooks/ (nbval proves them);
- MathJax 2.7 is served from the site itself: copied from the `jupyter-server-mathjax` wheel (PyPI)
  into _static/mathjax/ (Sphinx's default would load MathJax 4 from a CDN);
- widget views are dropped by the build (tools/book/build.py) and myst-nb's widget JavaScript (a CDN
  require.js) is switched off: each lab's static copy, stored next to it, is what a page shows;
- the theme's fonts and icons ship inside its wheel.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from placeholders import binder_repo  # noqa: E402

ORG, REPO = binder_repo()  # the README badge's ORG/REPO placeholder: defined there, once
JUPYTERHUB_URL = os.environ.get("SPECDEC_JUPYTERHUB_URL", "").strip()

project = "Speculative decoding, exactly"
author = "specdec-notebooks"
copyright = "specdec-notebooks contributors (MIT)"
root_doc = "index"
language = "en"

extensions = ["myst_nb", "sphinx.ext.mathjax"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "jupyter_execute"]
myst_enable_extensions = ["dollarmath", "amsmath", "html_image", "colon_fence"]
myst_update_mathjax = False  # MathJax 2 below, configured with mathjax2_config
myst_heading_anchors = 3  # [text](NN-name.ipynb#a-heading) links resolve

# Never execute: the site shows the stored outputs.
nb_execution_mode = "off"
nb_ipywidgets_js = {}  # no require.js / widget manager from a CDN
nb_merge_streams = True
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]

# --- math, offline -------------------------------------------------------------------------------
import jupyter_server_mathjax  # noqa: E402

MATHJAX_SRC = Path(jupyter_server_mathjax.__file__).parent / "static"
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processEscapes": True,
        "processEnvironments": True,
    },
    # The wheel carries the STIX-Web web fonts only; never fall back to image fonts or a CDN.
    "HTML-CSS": {
        "availableFonts": [],
        "preferredFont": None,
        "webFont": "STIX-Web",
        "imageFont": None,
        # MathJax's measuring font is url('about:blank'), which Chromium reports as a
        # failed cross-origin font load on every page; a missing local() font is silent.
        "styles": {"@font-face": {"font-family": "MathJax_Blank", "src": "local('MathJax_Blank_None')"}},
    },
    "menuSettings": {"zoom": "None"},
    "showMathMenu": False,
    "messageStyle": "none",
}

# --- HTML and theme -------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = project
html_favicon = "favicon.svg"  # else browsers ask the server for /favicon.ico (a 404)
html_copy_source = True  # _sources/NN-name.ipynb: the notebook download button
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "repository_url": f"https://github.com/{ORG}/{REPO}",
    "repository_branch": "HEAD",  # as the README badge: Binder builds the default branch
    "path_to_docs": "notebooks",  # a page NN-name is notebooks/NN-name.ipynb in the repository
    "use_repository_button": True,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "launch_buttons": {
        "binderhub_url": "https://mybinder.org",
        "jupyterhub_url": JUPYTERHUB_URL,  # make site JUPYTERHUB_URL=https://hub.example.edu
        "notebook_interface": "jupyterlab",
    },
    "show_navbar_depth": 1,
    "home_page_in_toc": True,
    "navigation_with_keys": False,
}
html_context = {"default_mode": "light"}
# The site's own CSS (tools/book/static/, relative to this file): wide display math scrolls, never cut.
html_static_path = ["static"]
html_css_files = ["specdec.css"]


def _copy_mathjax(app, exception):
    if exception is None and app.builder.format == "html":
        shutil.copytree(
            MATHJAX_SRC,
            Path(app.outdir) / "_static" / "mathjax",
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("*.py", "__pycache__"),
        )


def _unsplit_display_math(app, doctree):
    """Display math holding a line break (``\\\\``) is passed to MathJax as written, between
    ``\\[ … \\]``. Sphinx would wrap it in ``\\begin{split}``, where MathJax rejects the
    ``\\tag{n}`` that numbers the notebooks' equations (and an ``aligned`` inside it): Lab
    typesets the same source without the wrapper, and so must the site."""
    from docutils import nodes

    for node in doctree.findall(nodes.math_block):
        text = node.astext()
        if "\\\\" in text and not node.get("nowrap"):
            node["nowrap"] = True
            node.children = [nodes.Text("\\[" + text + "\\]")]


def setup(app):
    app.connect("doctree-read", _unsplit_display_math)
    app.connect("build-finished", _copy_mathjax)

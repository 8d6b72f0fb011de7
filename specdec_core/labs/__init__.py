"""Interactive labs: the one import surface for notebooks.

Every lab is built on :mod:`specdec_core.labs.base` (read its docstring: the protocol, the DOM
contract for browser tests, and how labs survive JupyterLab). Notebooks call ``show_<lab>()``;
tests and benchmarks build ``<lab>_lab()`` and drive it with ``.set(...)``.
"""
from .base import Lab, LabSpec, show, static_html  # noqa: F401

"""The layers stay apart (issue 24 item 3).

The *pure layer* is every top-level module ``specdec_core/*.py``: math only. It imports no view,
notebook or server package and does no file I/O, so a learner can read it without a Jupyter in mind
and a wheel install needs nothing outside the package for it. What is not pure lives in
subpackages, each declared below with the reason.

Checked two ways: by importing EVERY module of the package (``pkgutil.walk_packages``, not only
what ``import specdec_core`` loads) in a fresh interpreter, pure modules first; and by reading each
pure module's AST (an import inside a function, or ``open(`` in a branch the import never runs, is
still caught).
"""

import ast
import json
import pathlib
import subprocess
import sys

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "specdec_core"

# The one definition of the layers. Top-level modules are the pure layer; every subpackage must be
# listed here with why it is not pure (a new one fails test_every_subpackage_is_declared).
NOT_PURE = {
    "labs": "the interactive labs: ipywidgets and matplotlib, run in a kernel",
    "plots": "matplotlib figures for the notebooks",
    "llm": "the capstone's real model: reads the model file, its corpus and stored results",
    "measured": "typed records of stored measurements: reads specdec_core/results/",
    "server": "Jupyter server extensions: import jupyter_server, run in the server process",
}

# Top-level packages the pure layer never imports (at module level or inside a function).
VIEW_PACKAGES = frozenset(
    {"ipywidgets", "matplotlib", "IPython", "ipykernel", "jupyter_server", "jupyter_client", "tornado"}
)

# File I/O, by AST. Calls of these names (builtins), of these attributes on any object
# (Path.read_text, Path.open, …) and of these module functions; and imports of these modules.
IO_BUILTINS = frozenset({"open"})
IO_METHODS = frozenset(
    {"read_text", "read_bytes", "write_text", "write_bytes", "open", "iterdir", "glob", "rglob"}
)
IO_FUNCTIONS = frozenset(
    {
        ("json", "load"),
        ("json", "dump"),
        ("np", "load"),
        ("np", "save"),
        ("np", "savez"),
        ("np", "loadtxt"),
        ("np", "savetxt"),
        ("np", "fromfile"),
        ("numpy", "load"),
        ("os", "listdir"),
        ("os", "scandir"),
        ("os", "walk"),
        ("pickle", "load"),
        ("pickle", "dump"),
    }
)
IO_MODULES = frozenset({"glob", "importlib.resources", "pickle", "shelve", "shutil", "tempfile"})

# State, by AST: a pure function's answer depends on its arguments only, so no module-level
# container that functions write (a cache), no ``global``, no functools cache decorator.
MUTATORS = frozenset({"clear", "append", "extend", "update", "setdefault", "pop", "popitem", "add"})
CACHE_DECORATORS = frozenset({"lru_cache", "cache", "cached_property"})

# Known offenders, as (file, enclosing function), while a work stream moves them out of the pure
# layer: the scan xfails naming them and fails on any offender not listed. Empty: strict.
KNOWN: frozenset[tuple[str, str]] = frozenset()


def pure_files() -> list[pathlib.Path]:
    return sorted(PKG.glob("*.py"))


def subpackages() -> set[str]:
    return {p.parent.name for p in PKG.glob("*/__init__.py")}


def _dotted(node) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _imported_modules(node, package: str) -> list[str]:
    """Absolute names of the modules an Import/ImportFrom node brings in."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        up = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(up + ([base] if base else []))
    return [base] + [f"{base}.{a.name}" for a in node.names]


def _functions_by_line(tree) -> dict[int, str]:
    """Line → the innermost enclosing function (or class); lines outside any are not keys."""
    where: dict[int, str] = {}
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    for d in sorted(defs, key=lambda n: n.end_lineno - n.lineno, reverse=True):  # inner ones last
        for line in range(d.lineno, d.end_lineno + 1):
            where[line] = d.name
    return where


def _module_containers(tree) -> set[str]:
    """Names bound at module level to a dict/list/set (literal or constructor call)."""
    out = set()
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        if isinstance(value, (ast.Dict, ast.List, ast.Set)) or (
            isinstance(value, ast.Call)
            and _dotted(value.func) in {"dict", "list", "set", "OrderedDict", "collections.OrderedDict"}
        ):
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def _state_offences(tree):
    """(node, what, function) for module state written from a function."""
    state = _module_containers(tree)
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for d in fn.decorator_list:
            name = _dotted(d.func if isinstance(d, ast.Call) else d) or ""
            if name.rsplit(".", 1)[-1] in CACHE_DECORATORS:
                yield d, f"@{name} (a cache)", fn.name
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                yield node, "global " + ", ".join(node.names), fn.name
            elif (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, (ast.Store, ast.Del))
                and isinstance(node.value, ast.Name)
                and node.value.id in state
            ):
                yield node, f"writes module state {node.value.id}[...]", fn.name
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in state
                and node.func.attr in MUTATORS
            ):
                yield node, f"writes module state {node.func.value.id}.{node.func.attr}(", fn.name


def scan_source(source: str, name: str, package: str = "specdec_core") -> list[tuple[str, str, str]]:
    """Offences of one pure module: ``[(name, enclosing function, 'line N: what')]``."""
    tree = ast.parse(source)
    where = _functions_by_line(tree)
    out = []

    def hit(node, what, function=None):
        function = function or where.get(node.lineno, "<module>")
        out.append((name, function, f"line {node.lineno}: {what}"))

    for node, what, function in _state_offences(tree):
        hit(node, what, function)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for mod in _imported_modules(node, package):
                if mod.split(".")[0] in VIEW_PACKAGES:
                    hit(node, f"imports {mod}")
                parts = mod.split(".")
                if any(".".join(parts[:i]) in IO_MODULES for i in range(1, len(parts) + 1)):
                    hit(node, f"imports {mod} (file I/O)")
                if parts[0] == "specdec_core" and len(parts) > 1 and parts[1] in NOT_PURE:
                    hit(node, f"imports {mod} (not pure)")
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in IO_BUILTINS:
                hit(node, f"{f.id}(")
            elif isinstance(f, ast.Attribute):
                dotted = _dotted(f)
                head = tuple(dotted.rsplit(".", 1)) if dotted and "." in dotted else None
                if head in IO_FUNCTIONS:
                    hit(node, f"{dotted}(")
                elif f.attr in IO_METHODS:
                    hit(node, f".{f.attr}(")
    return sorted(set(out))


def pure_layer_offences() -> list[tuple[str, str, str]]:
    out = []
    for p in pure_files():
        out += scan_source(p.read_text(encoding="utf-8"), p.relative_to(PKG.parent).as_posix())
    return out


# Pure modules first (iter_modules imports nothing; walk_packages imports each subpackage to
# recurse, so it runs after the view check), then every module.
_IMPORT_ALL = """
import importlib, json, pkgutil, sys
import specdec_core
pure = sorted("specdec_core." + m.name for m in pkgutil.iter_modules(specdec_core.__path__) if not m.ispkg)
view = set(sys.argv[1].split(","))
for n in pure:
    importlib.import_module(n)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in view)
names = sorted(m.name for m in pkgutil.walk_packages(specdec_core.__path__, "specdec_core.", onerror=print))
failed = {}
for n in names:
    try:
        importlib.import_module(n)
    except Exception as e:  # reported, not raised: every module is tried
        failed[n] = f"{type(e).__name__}: {e}"
print(json.dumps({"names": names, "pure": pure, "view_loaded": loaded, "failed": failed}))
"""


@pytest.fixture(scope="module")
def imported():
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, ",".join(sorted(VIEW_PACKAGES))],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_module_imports(imported):
    assert not imported["failed"], imported["failed"]
    # Every .py file under the package was found by the walk (none hidden from the import check).
    files = {
        ".".join(p.relative_to(PKG.parent).with_suffix("").parts).removesuffix(".__init__")
        for p in PKG.rglob("*.py")
    }
    assert files - {"specdec_core"} == set(imported["names"])


def test_pure_layer_loads_no_view_or_server_package(imported):
    assert sorted(imported["pure"]) == sorted(
        f"specdec_core.{p.stem}" for p in pure_files() if p.stem != "__init__"
    )
    assert imported["view_loaded"] == []


def test_every_subpackage_is_declared():
    assert subpackages() <= set(NOT_PURE), f"declare {subpackages() - set(NOT_PURE)} in NOT_PURE (and why)"


def test_pure_layer_does_no_io_and_imports_no_view():
    hits = pure_layer_offences()
    new = [h for h in hits if h[:2] not in KNOWN]
    assert not new, "pure layer: " + "; ".join(f"{f} in {fn} {what}" for f, fn, what in new)
    if hits:
        pytest.xfail("known, moving out (issue 24): " + "; ".join(sorted({f"{f} {fn}" for f, fn, _ in hits})))


def test_known_offenders_are_still_offending():
    """A KNOWN function that still exists but no longer offends is stale: remove it. (One that
    has moved out of the file is simply gone; remove it from KNOWN when convenient.)"""
    offending = {h[:2] for h in pure_layer_offences()}
    stale = []
    for f, fn in sorted(KNOWN):
        path = PKG.parent / f
        if not path.exists():
            continue
        names = {n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if hasattr(n, "name")}
        if fn in names and (f, fn) not in offending:
            stale.append((f, fn))
    assert not stale, f"remove from KNOWN: {stale}"


BAD = """
import json
from pathlib import Path
from .labs import base


def table(path):
    return json.load(open(path))


def rows(folder):
    import matplotlib.pyplot as plt
    return [p.read_text() for p in Path(folder).glob("*.csv")], plt


def cached():
    import numpy as np
    from importlib.resources import files
    return np.load(files("specdec_core") / "x.npy")


_CACHE = {}


def remembered(k):
    if k not in _CACHE:
        _CACHE[k] = k * k
    return _CACHE[k]


@functools.lru_cache
def also_remembered(k):
    global _CALLS
    return k


def fine(p, q):
    return json.loads("[1]"), sum(min(a, b) for a, b in zip(p, q))
"""


def test_the_scanner_can_fail():
    hits = scan_source(BAD, "specdec_core/bad.py")
    by_function = {}
    for _, fn, what in hits:
        by_function.setdefault(fn, []).append(what.split(": ", 1)[1])
    assert "fine" not in by_function
    assert by_function["remembered"] == ["writes module state _CACHE[...]"]
    assert sorted(by_function["also_remembered"]) == ["@functools.lru_cache (a cache)", "global _CALLS"]
    assert sorted(by_function["<module>"]) == [
        "imports specdec_core.labs (not pure)",
        "imports specdec_core.labs.base (not pure)",
    ]
    assert sorted(by_function["table"]) == ["json.load(", "open("]
    assert sorted(by_function["rows"]) == [".glob(", ".read_text(", "imports matplotlib.pyplot"]
    assert sorted(by_function["cached"]) == [
        "imports importlib.resources (file I/O)",
        "imports importlib.resources.files (file I/O)",
        "np.load(",
    ]


def test_import_specdec_core_loads_no_sympy():
    """`import specdec_core` stays light: sympy (symbolic display) loads only when asked for."""
    code = (
        "import sys, specdec_core; "
        "print(sorted(m for m in ('ipywidgets', 'matplotlib', 'sympy', 'IPython') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_api_names():
    import specdec_core as sc

    for name in (
        "acceptance_probabilities",
        "accepted_mass",
        "acceptance_probability",
        "residual_distribution",
        "output_distribution",
        "output_count_distribution",
        "expected_output_count",
        "tokens_per_second",
        "speculative_generate",
        "autoregressive_generate",
        "verify_batch",
    ):
        assert callable(getattr(sc, name)), name
    assert set(sc.__all__) <= set(dir(sc))


# ---------------------------------------------------------------- the import graph (issue 36)
#
# Every ``import`` in specdec_core, read from the AST: at module level AND inside functions (a
# function-level import is still a dependency, only a late one). Imports under ``if
# TYPE_CHECKING:`` are annotations, never run, and are left out. ``from X import name`` is an
# edge to the module ``X.name`` when that is a module, else to ``X``.

# Which layer may import which: a row lists the layers its modules may import (their own
# included). Read from what the code does (issue 36): the pure top-level modules import no
# subpackage; ``measured`` (typed records, the codec, the timer) only the pure layer; ``llm`` the
# pure layer and ``measured``; ``plots`` draw pure results, stored measurements and the
# capstone's report (``plots/llm.py`` → ``llm/report.py``); ``labs`` are widgets over pure
# functions and plots; ``server`` runs in the Jupyter server and imports none of them.
ALLOWED_LAYERS: dict[str, frozenset[str]] = {
    "pure": frozenset({"pure"}),
    "measured": frozenset({"pure", "measured"}),
    "llm": frozenset({"pure", "measured", "llm"}),
    "plots": frozenset({"pure", "measured", "llm", "plots"}),
    "labs": frozenset({"pure", "plots", "labs"}),
    "server": frozenset({"server"}),
}

# Outside the package, ``measured`` imports only these (besides the standard library): the codec,
# numpy for the spread of repeats, and threadpoolctl for the BLAS pools a machine record names.
MEASURED_THIRD_PARTY = frozenset({"msgspec", "numpy", "threadpoolctl"})


def module_files(root: pathlib.Path = PKG) -> dict[str, pathlib.Path]:
    """``specdec_core.x.y`` → its file, for every .py file under the package."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        out[".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")] = p
    return out


def layer_of(name: str) -> str:
    """``specdec_core.sampling`` → "pure"; ``specdec_core.llm.model`` / ``specdec_core.llm`` → "llm"."""
    parts = name.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in NOT_PURE) else "pure"


def _type_checking_nodes(tree) -> set[int]:
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def imports_of(source: str, name: str, is_package: bool, known) -> dict[str, set[str]]:
    """Absolute names a module imports (package-internal ones resolved to modules in ``known``)
    → the line numbers, as ``{"specdec_core.x": {3}, "numpy": {5}}``."""
    tree = ast.parse(source)
    skip = _type_checking_nodes(tree)
    package = name if is_package else name.rpartition(".")[0]
    out: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if id(node) in skip or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = _imported_modules(node, package)[0]
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for t in targets:
            while t.startswith("specdec_core.") and t not in known and "." in t:
                t = t.rpartition(".")[0]  # a name inside a module → the module
            out.setdefault(t, set()).add(node.lineno)
    return out


def import_graph(files: dict[str, pathlib.Path] | None = None) -> dict[str, dict[str, set[str]]]:
    """module → {imported module or outside package → lines}."""
    files = module_files() if files is None else files
    return {
        m: imports_of(p.read_text(encoding="utf-8"), m, p.name == "__init__.py", files)
        for m, p in files.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def back_edges(graph: dict[str, dict[str, set[str]]]) -> list[str]:
    """``a -> b (line N)`` for every package-internal import ALLOWED_LAYERS does not allow, and
    every import of ``measured`` outside the package, :data:`MEASURED_THIRD_PARTY` and the standard library."""
    out = []
    for a, targets in sorted(graph.items()):
        for b, lines in sorted(targets.items()):
            where = f"{a} -> {b} (line {min(lines)})"
            if b.split(".")[0] == "specdec_core":
                if b != "specdec_core" and layer_of(b) not in ALLOWED_LAYERS[layer_of(a)]:
                    out.append(where)
            elif layer_of(a) == "measured":
                top = b.split(".")[0]
                if top not in sys.stdlib_module_names and top not in MEASURED_THIRD_PARTY:
                    out.append(where)
    return out


def _internal(graph):
    return {a: {b for b in t if b.startswith("specdec_core.") and b in graph} for a, t in graph.items()}


def test_no_import_cycles():
    found = cycles(_internal(import_graph()))
    assert not found, "import cycles (module-level or function-level imports): " + "; ".join(
        " ↔ ".join(c) for c in found
    )


def test_every_layer_is_in_the_table():
    assert set(NOT_PURE) <= set(ALLOWED_LAYERS)


def test_pure_layer_imports_no_subpackage():
    bad = [e for e in back_edges(import_graph()) if layer_of(e.split(" ")[0]) == "pure"]
    assert not bad, bad


def test_llm_plots_labs_server_have_no_back_edges():
    bad = [e for e in back_edges(import_graph()) if layer_of(e.split(" ")[0]) not in {"pure", "measured"}]
    assert not bad, bad


def test_measured_imports_only_the_pure_layer():
    bad = [e for e in back_edges(import_graph()) if layer_of(e.split(" ")[0]) == "measured"]
    assert not bad, bad


def test_the_graph_scans_can_fail(tmp_path):
    root = tmp_path / "specdec_core"
    (root / "measured").mkdir(parents=True)
    (root / "llm").mkdir()
    files = {
        "__init__.py": "from .a import f\n",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\ndef f():\n    from .b import g\n",
        "b.py": "from . import a\n",
        "c.py": "from .a import f\n",
        "measured/__init__.py": "",
        "measured/rec.py": "import scipy\nimport json\ndef cost():\n    from ..llm.model import m\n",
        "llm/__init__.py": "",
        "llm/model.py": "from ..measured import rec\nfrom .. import b\n",
    }
    for rel, text in files.items():
        (root / rel).write_text(text)
    graph = import_graph(module_files(root))
    # a → b inside a function, b → a at module level: a cycle; c → a only under TYPE_CHECKING;
    # rec → model inside a function, model → rec at module level: a second one.
    assert cycles(_internal(graph)) == [
        ["specdec_core.a", "specdec_core.b"],
        ["specdec_core.llm.model", "specdec_core.measured.rec"],
    ]
    assert back_edges(graph) == [
        "specdec_core.measured.rec -> scipy (line 1)",
        "specdec_core.measured.rec -> specdec_core.llm.model (line 4)",
    ]
    graph["specdec_core.a"]["specdec_core.llm.model"] = {9}
    assert back_edges(graph)[0] == "specdec_core.a -> specdec_core.llm.model (line 9)"

"""One home per concept (issues 11 and 24), checked on the AST and the import graph — not on
spelling — over the package, ``benchmarks/``, the tests and the notebooks.

* **no private imports**: no module imports another module's ``_private`` name;
* **one import path per name**: a name is imported from the module that defines it, or from a
  package ``__init__`` that lists it in ``__all__`` (``specdec_core`` re-exports the public API;
  ``specdec_core.labs`` / ``.llm`` / ``.measured`` theirs). No other module re-exports a name;
* **notebooks use the public path**: a name a package's ``__all__`` lists is imported from that
  package (the innermost one), any other name from its defining module — so every name reaches
  the notebooks by exactly one path;
* **concept homes, by what the code calls**: the correction rules in ``verify``
  (``CORRECTION_RULES``, ``correction_weights``), the residual max(p − q, 0) in ``verify``; the
  inverse-CDF draw in ``distributions.inverse_cdf`` / ``draw`` (``sample_rows`` is its batched
  form) — no ``Generator.choice(..., p=...)``; E[K] = (1 − α^(γ+1)) / (1 − α) in ``counts``
  (``symbolic*`` derive it in sympy for display); temperature in ``transforms``; scalar
  validators in ``distributions``; the χ² power in ``power``; stored results read by the
  measurement package (``specdec_core.measured``) and the capstone's ``llm/``.

Each scan lists offenders; any offender fails. ``KNOWN`` tolerates a listed offender for a while
(files other work streams are changing) as an xfail that names it, so that a *new* offender
anywhere still fails.
"""

from __future__ import annotations

import ast
import json
import pathlib
from functools import cache

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "specdec_core"


# ---------------------------------------------------------------- sources and the import graph


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _notebook_source(path: pathlib.Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    lines = []
    for c in cells:
        if c["cell_type"] == "code":
            src = "".join(c["source"])
            lines += ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in src.splitlines()]
    return "\n".join(lines)


@cache
def sources() -> tuple[tuple[str, str, str], ...]:
    """(kind, relative path, source) for the package, benchmarks, tools, tests and notebooks."""
    out = []
    for kind, pattern in (
        ("lib", "specdec_core/**/*.py"),
        ("bench", "benchmarks/**/*.py"),
        ("tools", "tools/**/*.py"),
        ("tests", "tests/**/*.py"),
    ):
        for p in sorted(ROOT.glob(pattern)):
            out.append((kind, p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")))
    for p in sorted((ROOT / "notebooks").glob("*.ipynb")):
        out.append(("notebook", p.relative_to(ROOT).as_posix(), _notebook_source(p)))
    return tuple(out)


def _resolve(module: str | None, level: int, importer: str, is_package: bool) -> str:
    if not level:
        return module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - level + 1]
    return ".".join(base + ([module] if module else []))


class Graph:
    """Modules of the package: what each defines, imports (name → (module, name)), lists in
    ``__all__``, and uses; read from the AST, nothing imported."""

    def __init__(self, files: dict[str, str]):
        self.modules: dict[str, str] = {}  # module → relative path
        self.defined: dict[str, set[str]] = {}
        self.imported: dict[str, dict[str, tuple[str, str]]] = {}
        self.all: dict[str, set[str]] = {}
        self.used: dict[str, set[str]] = {}
        for rel, src in files.items():
            path = ROOT / rel
            name, pkg = _module_name(path), path.name == "__init__.py"
            self.modules[name] = rel
            tree = ast.parse(src)
            self.defined[name], self.imported[name], self.all[name] = set(), {}, set()
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.defined[name].add(node.name)
                elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        for n in ast.walk(t):
                            if isinstance(n, ast.Name):
                                self.defined[name].add(n.id)
                    if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                        self.all[name] = {
                            e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant)
                        }
                elif isinstance(node, ast.ImportFrom):
                    base = _resolve(node.module, node.level, name, pkg)
                    for a in node.names:
                        self.imported[name][a.asname or a.name] = (base, a.name)
            self.used[name] = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        self.packages = {_module_name(ROOT / r) for r in self.modules.values() if r.endswith("__init__.py")}

    def home(self, module: str, name: str, depth: int = 0) -> str | None:
        """The module that defines ``module.name`` (following imports), or None."""
        if f"{module}.{name}" in self.modules:
            return f"{module}.{name}"  # a submodule
        if name in self.defined.get(module, ()):
            return module
        if name in self.imported.get(module, {}) and depth < 20:
            return self.home(*self.imported[module][name], depth + 1)
        return None

    def public_path(self, home: str, name: str) -> str:
        """Where a notebook imports ``name`` from: the innermost package whose ``__all__`` lists
        it, else its home."""
        parts = home.split(".")
        for i in range(len(parts) - 1, 0, -1):
            pkg = ".".join(parts[:i])
            if pkg in self.packages and name in self.all.get(pkg, ()):
                return pkg
        return home


@cache
def graph() -> Graph:
    return Graph({rel: src for kind, rel, src in sources() if kind == "lib"})


def _imports_from_package(tree, importer: str, is_package: bool):
    """(line, module, name) for every ``from specdec_core… import name``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _resolve(node.module, node.level, importer, is_package) if node.level else node.module
            if base and base.split(".")[0] == "specdec_core":
                for a in node.names:
                    yield node.lineno, base, a.name


def _parsed():
    for kind, rel, src in sources():
        path = ROOT / rel
        importer = _module_name(path) if kind == "lib" else ""
        yield kind, rel, ast.parse(src), importer, path.name == "__init__.py"


# ---------------------------------------------------------------- the scans


def private_imports():
    out = []
    mods = {m.rsplit(".", 1)[-1] for m in graph().modules} | {"sc", "specdec_core"}
    for kind, rel, tree, importer, pkg in _parsed():
        if kind in ("tests", "tools"):
            continue  # tests may reach into a module's internals
        for line, base, name in _imports_from_package(tree, importer, pkg):
            if name.startswith("_") and not name.startswith("__"):
                out.append(f"{rel}:{line} imports {name} from {base}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and node.value.id in mods
            ):
                out.append(f"{rel}:{node.lineno} uses {node.value.id}.{node.attr}")
    return out


def reexport_aliases():
    """A module (not a package ``__init__``) that passes on a name defined elsewhere: listed in
    its ``__all__``, imported and never used (kept for importers), or imported from it."""
    g = graph()
    out = []
    for mod, rel in g.modules.items():
        if mod in g.packages:
            continue
        for local, (base, name) in g.imported[mod].items():
            if not base.startswith("specdec_core") or f"{base}.{name}" in g.modules:
                continue
            if local in g.all[mod] or local not in g.used[mod]:
                out.append(f"{rel} re-exports {local} (its home: {g.home(base, name)})")
    for _, rel, tree, importer, pkg in _parsed():
        for line, base, name in _imports_from_package(tree, importer, pkg):
            if base in g.packages or base not in g.modules or f"{base}.{name}" in g.modules:
                continue
            home = g.home(base, name)
            if home is not None and home != base:
                out.append(f"{rel}:{line} imports {name} from {base} (its home: {home})")
    return out


def notebook_paths():
    """Each name a notebook imports comes by its public path (see :meth:`Graph.public_path`)."""
    g = graph()
    out = []
    for kind, rel, tree, _, _ in _parsed():
        if kind != "notebook":
            continue
        for _, base, name in _imports_from_package(tree, "", False):
            if f"{base}.{name}" in g.modules:
                continue  # a module (from specdec_core.llm import report)
            home = g.home(base, name)
            if home is None:
                out.append(f"{rel} imports {name} from {base}, which neither defines nor exports it")
                continue
            want = g.public_path(home, name)
            if base != want:
                out.append(f"{rel} imports {name} from {base}: import it from {want}")
    return out


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            yield node, f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _code(kinds=("lib", "bench")):
    for kind, rel, tree, *_ in _parsed():
        if kind in kinds:
            yield rel, tree


def rule_name_tuples():
    """Tuples/lists of string constants naming the correction rules, outside verify.py."""
    out = []
    for rel, tree in _code():
        if rel == "specdec_core/verify.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Tuple, ast.List)):
                vals = {
                    e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                }
                if {"residual", "draft", "uniform"} <= vals:
                    out.append(f"{rel}:{node.lineno} spells out the correction rules")
    return out


def _sample_rows_home() -> set[str]:
    return {
        rel
        for rel, tree in _code(("lib",))
        if any(isinstance(n, ast.FunctionDef) and n.name == "sample_rows" for n in tree.body)
    }


def inverse_cdf_copies():
    """Draws from a probability vector outside distributions.inverse_cdf (and sample_rows):
    ``.choice(..., p=...)`` and ``searchsorted(..., side="right")``."""
    allowed = {"specdec_core/distributions.py"} | _sample_rows_home()
    out = []
    for rel, tree in _code():
        if rel in allowed:
            continue
        for node, name in _calls(tree):
            kw = {k.arg: k.value for k in node.keywords}
            if name == "choice" and "p" in kw:
                out.append(f"{rel}:{node.lineno} draws with .choice(p=...)")
            side = kw.get("side")
            if name == "searchsorted" and isinstance(side, ast.Constant) and side.value == "right":
                out.append(f"{rel}:{node.lineno} draws with searchsorted(side='right')")
    return out


def residual_copies():
    """max(a − b, 0) of two arrays (not an index minus a constant), outside verify.py."""
    out = []
    for rel, tree in _code():
        if rel == "specdec_core/verify.py":
            continue
        for node, name in _calls(tree):
            if name != "maximum" or len(node.args) != 2:
                continue
            a, b = node.args
            if (
                isinstance(a, ast.BinOp)
                and isinstance(a.op, ast.Sub)
                and not isinstance(a.left, ast.Constant)
                and not isinstance(a.right, ast.Constant)
                and isinstance(b, ast.Constant)
                and b.value == 0
            ):
                out.append(f"{rel}:{node.lineno} computes max({ast.unparse(a)}, 0)")
    return out


def _is_one_minus(node) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and isinstance(node.left, ast.Constant)
        and node.left.value == 1
    )


def _plus_one(node) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 1
    )


def expected_count_copies():
    """(1 − a^(g+1)) / (1 − a) — E[K] — outside counts (and the symbolic display)."""
    allowed = {f"specdec_core/{m}.py" for m in ("counts", "symbolic", "symbolic_timing")}
    out = []
    for rel, tree in _code():
        if rel in allowed:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _is_one_minus(node.right):
                powers = [
                    n
                    for n in ast.walk(node.left)
                    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and _plus_one(n.right)
                ]
                if powers:
                    out.append(f"{rel}:{node.lineno} computes E[K] = {ast.unparse(node)}")
    return out


def temperature_copies():
    """Division by a temperature outside transforms.py (logits / T, log p / T)."""
    out = []
    for rel, tree in _code():
        if rel == "specdec_core/transforms.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.Div):
                right = node.right if isinstance(node, ast.BinOp) else node.value
                name = right.attr if isinstance(right, ast.Attribute) else getattr(right, "id", "")
                if name.lower() in ("temperature", "temp"):
                    out.append(f"{rel}:{node.lineno} divides by {ast.unparse(right)}")
    return out


def validator_copies():
    """Scalar validation outside distributions.py: an ``isinstance(x, np.random.Generator)``
    check, or a function that validates a real number by hand — refuses bools, accepts reals and
    tests for NaN/inf itself — instead of calling ``distributions.check_*``."""
    out = []
    for rel, tree in _code():
        if rel == "specdec_core/distributions.py":
            continue
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            kinds, calls = set(), set()
            for node, name in _calls(fn):
                calls.add(name)
                if name == "isinstance" and len(node.args) == 2:
                    t = node.args[1]
                    kinds |= {ast.unparse(e) for e in (t.elts if isinstance(t, ast.Tuple) else [t])}
            if kinds & {"np.random.Generator", "Generator"}:
                out.append(f"{rel}:{fn.lineno} {fn.name} checks for a Generator")
            reals = kinds & {"numbers.Real", "np.floating", "float", "numbers.Number"}
            if "bool" in kinds and reals and calls & {"isnan", "isinf", "isfinite"}:
                out.append(f"{rel}:{fn.lineno} {fn.name} validates a real number by hand")
    return out


def power_copies():
    """The noncentral χ² (scipy's ncx2) outside power.py."""
    out = []
    for rel, tree in _code():
        if rel == "specdec_core/power.py":
            continue
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, (ast.Import, ast.ImportFrom)) else []
            if "ncx2" in names or any(n.endswith(".ncx2") for n in names):
                out.append(f"{rel}:{node.lineno} imports ncx2")
            if isinstance(node, ast.Attribute) and node.attr == "ncx2":
                out.append(f"{rel}:{node.lineno} uses .ncx2")
    return out


def results_file_readers():
    """json.load in the package outside the measurement package and the capstone's llm/."""
    out = []
    for rel, tree in _code(("lib",)):
        if rel.startswith(("specdec_core/measured/", "specdec_core/llm/")):
            continue
        for node, name in _calls(tree):
            if (
                name == "load"
                and isinstance(node.func, ast.Attribute)
                and ast.unparse(node.func.value) == "json"
            ):
                out.append(f"{rel}:{node.lineno} parses a results file (json.load)")
    return out


# Known offenders, by scan: a path prefix per entry makes the scan xfail naming it while a work
# stream moves it, and fail on any offender not listed. Empty: every scan is strict.
KNOWN: dict[str, tuple[str, ...]] = {}

SCANS = {
    f.__name__: f
    for f in (
        private_imports,
        reexport_aliases,
        notebook_paths,
        rule_name_tuples,
        inverse_cdf_copies,
        residual_copies,
        expected_count_copies,
        temperature_copies,
        validator_copies,
        power_copies,
        results_file_readers,
    )
}


@pytest.mark.parametrize("scan", sorted(SCANS))
def test_one_home(scan):
    hits = SCANS[scan]()
    known = KNOWN.get(scan, ())
    new = [h for h in hits if not h.startswith(known)] if known else hits
    assert not new, f"{scan}: " + "; ".join(new)
    if hits:
        pytest.xfail(f"{scan}, known (issue 24, other work streams): " + "; ".join(hits))


BAD_LIB = {
    "specdec_core/bad.py": """
import json
import numpy as np
from scipy.stats import ncx2
from .sampling import _sample
from .power import chi_square_power
from .verify import total_variation

RULES = ('residual', 'draft', 'target', 'uniform')


def f(row, u, rng, alpha, gamma, p, q, logits, temperature, x):
    i = np.searchsorted(np.cumsum(row), u, side="right")
    j = rng.choice(len(row), p=row)
    r = np.maximum(p - q, 0.0)
    ek = (1 - alpha ** (gamma + 1)) / (1 - alpha)
    z = logits / temperature
    if not isinstance(rng, np.random.Generator) or isinstance(x, bool):
        raise ValueError
    return json.load(open("results.json")), total_variation(p, q), ncx2
""",
    "specdec_core/good.py": "from .bad import total_variation\n",
}
BAD_NOTEBOOK = "from specdec_core.verify import acceptance_probability\n"


def test_scans_can_fail(monkeypatch):
    """A deliberately bad module (and a notebook importing a public name by its module) is
    caught by every scan."""
    import sys

    here = sys.modules[__name__]
    real = {rel: src for kind, rel, src in sources() if kind == "lib"}
    fake = {
        **real,
        **BAD_LIB,
        "specdec_core/__init__.py": real["specdec_core/__init__.py"],
    }
    rows = tuple(("lib", rel, src) for rel, src in fake.items()) + (
        ("notebook", "notebooks/99-bad.ipynb", BAD_NOTEBOOK),
    )
    monkeypatch.setattr(here, "sources", lambda: rows)
    monkeypatch.setattr(here, "graph", lambda: Graph(fake))
    for name, scan in SCANS.items():
        hits = [h for h in scan() if "bad" in h or "good" in h]
        assert hits, name


def test_the_homes_are_used():
    """The samplers, the simulator and the replay draw corrections through verify's one rule."""
    from specdec_core import replay, sampling, simulate, verify

    assert sampling.correction_weights is verify.correction_weights
    assert replay.correction_weights is verify.correction_weights
    assert set(verify.SAMPLEABLE_RULES) < set(verify.CORRECTION_RULES)
    assert not hasattr(simulate, "SAMPLEABLE_RULES") and not hasattr(simulate, "draw_categorical")
    assert not hasattr(sampling, "CORRECT_RULES")


def test_one_power_approximation():
    """The χ² power approximation has one implementation and one import path: power.py."""
    from specdec_core import multidraft

    assert not hasattr(multidraft, "chi_square_power")


# ---------------------------------------------------------------- the 60-line rule (issue 36)

#: The longest function or method body allowed anywhere in specdec_core/ (the ``def`` line to
#: the last line, decorators excluded; a nested function counts on its own and inside its parent).
MAX_FUNCTION_LINES = 60

#: Functions over the limit in files other work streams are changing, as "path:qualified name":
#: tolerated while they are split (each entry must still be over the limit). Empty: strict.
LONG_FUNCTIONS_KNOWN: frozenset[str] = frozenset()


def long_functions(source: str, path: str, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """{"path:Class.method": lines} for every def (at any depth) longer than ``limit`` lines."""
    out = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = child.end_lineno - child.lineno + 1
                if n > limit:
                    out[f"{path}:{prefix}{child.name}"] = n
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def package_long_functions() -> dict[str, int]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        out.update(long_functions(p.read_text(encoding="utf-8"), p.relative_to(ROOT).as_posix()))
    return out


def test_no_function_is_longer_than_60_lines():
    found = package_long_functions()
    new = {k: n for k, n in found.items() if k not in LONG_FUNCTIONS_KNOWN}
    assert not new, f"over {MAX_FUNCTION_LINES} lines (split them): " + "; ".join(
        f"{k} ({n})" for k, n in new.items()
    )
    stale = sorted(LONG_FUNCTIONS_KNOWN - set(found))
    assert not stale, f"no longer over the limit, remove from LONG_FUNCTIONS_KNOWN: {stale}"


def test_the_length_rule_can_fail():
    def lines(n, indent):
        return "\n".join(f"{' ' * indent}x{i} = {i}" for i in range(n))

    src = (
        f"@decorator\ndef ok():\n{lines(59, 4)}\n\n\n"  # 60 lines: the decorator is not counted
        f"class C:\n    def long(self):\n{lines(60, 8)}\n\n"  # 61 lines
        f"    def outer(self):\n        def inner():\n{lines(60, 12)}\n"  # 62 and 61 lines
    )
    assert long_functions(src, "m.py") == {"m.py:C.long": 61, "m.py:C.outer": 62, "m.py:C.outer.inner": 61}

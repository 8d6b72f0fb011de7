"""Public functions have type hints (CONTRIBUTING; issue 24 item 6).

Two checks:

* **every exported function is hinted**: each function listed in the ``__all__`` of a package of
  ``specdec_core`` (every ``__init__.py`` that defines ``__all__``, found on disk, so a new package
  is covered without editing this file) has an annotation on every parameter (``*args`` and
  ``**kwargs`` aside) and on its return. Read with ``inspect.signature(eval_str=False)``: a string
  annotation (``from __future__ import annotations``) counts, nothing is evaluated.
* **hinted modules stay hinted**: in every module of ``FULLY_HINTED`` every public module-level
  function and every public method of a public class is fully hinted (an AST scan, so helpers a
  package does not export are covered too). A module joins the list when its hints are done.

The shared aliases of the hints (``Scalar``, ``Probs``, the model protocols) live in
:mod:`specdec_core.types`.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "specdec_core"

# Modules (paths under specdec_core/) whose public functions and methods are all hinted.
FULLY_HINTED: tuple[str, ...] = (
    "acceptance_stats.py",
    "batch.py",
    "counts.py",
    "coupling.py",
    "experiments.py",
    "formatting.py",
    "kv.py",
    "latency.py",
    "lawcheck.py",
    "multidraft.py",
    "peeking.py",
    "policies.py",
    "power.py",
    "processors.py",
    "questions.py",
    "repeats.py",
    "roofline.py",
    "sampling.py",
    "serving.py",
    "simulate.py",
    "symbolic.py",
    "symbolic_timing.py",
    "timing.py",
    "tokenizers.py",
    "toy.py",
    "transforms.py",
    "tree_laws.py",
    "tree_sampling.py",
    "trees.py",
    "types.py",
    "verify.py",
    "worked.py",
    "engines.py",
    "labs/kv.py",
    "labs/matching.py",
    "labs/roofline.py",
    "labs/stepper.py",
    "llm/adapters.py",
    "llm/drafts.py",
    "llm/kernels.py",
    "llm/lawtest.py",
    "llm/loader.py",
    "llm/report.py",
    "llm/rounding.py",
    "llm/runs.py",
    "llm/tokenizer.py",
    "llm/workloads.py",
    "measured/store.py",
    "plots/matching.py",
)


# ---------------------------------------------------------------- what "hinted" means


def missing_hints(fn) -> list[str]:
    """The parameters of ``fn`` without an annotation (``*args``/``**kwargs`` and a bound
    ``self``/``cls`` aside), and ``"return"`` when the return is not annotated."""
    sig = inspect.signature(fn, eval_str=False)
    P = inspect.Parameter
    out = [
        p.name
        for p in sig.parameters.values()
        if p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD) and p.annotation is P.empty
    ]
    if sig.return_annotation is inspect.Signature.empty:
        out.append("return")
    return out


def _missing_in_def(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    a = node.args
    params = a.posonlyargs + a.args + a.kwonlyargs
    if method and params and params[0].arg in ("self", "cls"):
        params = params[1:]
    if method and any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list):
        params = a.posonlyargs + a.args + a.kwonlyargs
    out = [p.arg for p in params if p.annotation is None]
    if node.returns is None:
        out.append("return")
    return out


def unhinted_defs(source: str) -> list[str]:
    """``name(missing, …)`` for every public module-level function and public method of a public
    class (not ``_private``, not dunder) in ``source`` that lacks a hint."""
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            if miss := _missing_in_def(node, method=False):
                out.append(f"{node.name}({', '.join(miss)})")
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and not sub.name.startswith("_"):
                    if miss := _missing_in_def(sub, method=True):
                        out.append(f"{node.name}.{sub.name}({', '.join(miss)})")
    return out


# ---------------------------------------------------------------- the exported functions


def _packages_with_all() -> list[str]:
    """Every package of specdec_core whose ``__init__.py`` assigns ``__all__``."""
    out = []
    for init in sorted(PKG.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        if any(
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
            for n in tree.body
        ):
            rel = init.parent.relative_to(ROOT)
            out.append(".".join(rel.parts))
    return out


def exported_functions() -> dict[str, object]:
    """{package.name: function} for every function in a package's ``__all__``."""
    out = {}
    for pkg in _packages_with_all():
        mod = importlib.import_module(pkg)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj):
                out[f"{pkg}.{name}"] = obj
    return out


def offenders() -> dict[str, tuple[str, str]]:
    """{package.name: (defining module, "function(missing, …)")} for the exports lacking hints."""
    out = {}
    for path, fn in exported_functions().items():
        if miss := missing_hints(fn):
            out[path] = (fn.__module__, f"{fn.__qualname__}({', '.join(miss)})")
    return out


def test_packages_are_found():
    pkgs = _packages_with_all()
    assert {"specdec_core", "specdec_core.llm", "specdec_core.labs", "specdec_core.measured"} <= set(pkgs)


def test_every_exported_function_is_hinted():
    bad = offenders()
    by_module: dict[str, list[str]] = {}
    for path, (module, what) in sorted(bad.items()):
        by_module.setdefault(module, []).append(f"{what}  (exported as {path})")
    assert not bad, "exported functions without full type hints, by module:\n" + "\n".join(
        f"  {mod}:\n" + "\n".join(f"    {line}" for line in lines) for mod, lines in sorted(by_module.items())
    )


# ---------------------------------------------------------------- hinted modules stay hinted


@pytest.mark.parametrize("rel", FULLY_HINTED)
def test_hinted_module_stays_hinted(rel):
    path = PKG / rel
    assert path.exists(), f"FULLY_HINTED lists {rel}, which does not exist"
    bad = unhinted_defs(path.read_text(encoding="utf-8"))
    assert not bad, f"specdec_core/{rel}: public functions without full type hints: {bad}"


# ---------------------------------------------------------------- the checks can fail


def test_the_checks_can_fail():
    def hinted(x: int, *args, k: str = "a", **kw) -> float: ...

    def no_return(x: int): ...

    def no_param(x, y: int) -> None: ...

    assert missing_hints(hinted) == []
    assert missing_hints(no_return) == ["return"]
    assert missing_hints(no_param) == ["x"]

    src = (
        "def ok(a: int) -> int: ...\n"
        "def bad(a, b: int): ...\n"
        "def _private(a): ...\n"
        "class C:\n"
        "    def m(self, x) -> None: ...\n"
        "    def n(self) -> int: ...\n"
        "    def __init__(self, y): ...\n"
        "    @staticmethod\n"
        "    def s(self) -> None: ...\n"
        "class _D:\n"
        "    def m(self, x): ...\n"
    )
    assert unhinted_defs(src) == ["bad(a, return)", "C.m(x)", "C.s(self)"]

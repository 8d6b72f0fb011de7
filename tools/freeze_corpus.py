"""Freeze the feature draft's calibration text: the docstrings (≥ 80 characters) of
``specdec_core``'s own modules, written once to ``specdec_core/llm/corpus.json`` so the text a
notebook or benchmark fits on does not change whenever a docstring is edited.

    .venv/bin/python tools/freeze_corpus.py
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "specdec_core" / "llm" / "corpus.json"


def main():
    corpus = {}
    for f in sorted((ROOT / "specdec_core").rglob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        docs = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                d = ast.get_docstring(node)
                if d and len(d) >= 80:
                    docs.append(d)
        if docs:
            corpus[f.relative_to(ROOT).as_posix()] = docs
    OUT.write_text(json.dumps(corpus, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(corpus)} modules, {sum(len(v) for v in corpus.values())} docstrings")


if __name__ == "__main__":
    main()

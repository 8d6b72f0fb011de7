"""One path for every measured number (issue 36): timed by the one timer, returned as a record,
written and read by the one codec. Read from the source (AST and text), nothing imported.

The layer and cycle scans are in ``test_layers.py``, the 60-line rule in ``test_one_home.py``, the
mutation test of the stored files in ``test_results_fuzz.py``.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "specdec_core"
MEASURED = PKG / "measured"

#: The codec's budget (the issue: serialization ≤ 160 lines, in one place).
CODEC_LINES = 160
#: measured/ as issue 36 left it: 1,882 lines before, 1,388 after, the one timer and the codec
#: included (the issue asked ≤ 1,300). A ratchet, so the layer does not grow back: lower it as it shrinks.
MEASURED_LINES = 1_390
#: The whole library, the same ratchet (22,060 lines before issue 36; the issue asked ≤ 19,250
#: before the quantized-draft work, which is not met).
LIBRARY_LINES = 21_520

#: Benchmarks that time something the one timer does not: bench_labs times a sequence of different
#: lab moves, each once, in wall and CPU time (process_time), not repeats of one call.
OWN_CLOCKS = {"benchmarks/bench_labs.py"}


def sources(*roots: pathlib.Path) -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for root in roots for p in sorted(root.rglob("*.py"))}


def lines(root: pathlib.Path) -> int:
    return sum(len(s.splitlines()) for s in sources(root).values())


def test_serialization_lives_in_the_codec_alone():
    assert len((MEASURED / "codec.py").read_text().splitlines()) <= CODEC_LINES
    hand_written = [
        f"{rel}:{node.lineno} {node.name}"
        for rel, src in sources(PKG, ROOT / "benchmarks").items()
        for node in ast.walk(ast.parse(src))
        if isinstance(node, ast.FunctionDef) and node.name in {"to_json", "from_json", "to_dict", "from_dict"}
    ]
    assert not hand_written, f"per-class JSON readers or writers: {hand_written}"


def test_no_json_round_trips_and_one_parser_of_results():
    found = [
        f"{rel}: {what}"
        for rel, src in sources(PKG, ROOT / "benchmarks").items()
        for what in ("json.loads(json.dumps", "msgspec.json.decode", "msgspec.convert")
        if what in src and rel != "specdec_core/measured/codec.py"
    ]
    assert not found, found


def test_no_hand_built_field_paths():
    """The codec names the field; no reader spells a path itself (``f"{where}.{k}"``)."""
    found = []
    for rel, src in sources(PKG).items():
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.JoinedStr):
                text = ast.unparse(node)
                if "{where}." in text or "{where}[" in text or "{w}." in text:
                    found.append(f"{rel}:{node.lineno} {text}")
    assert not found, found


def test_one_timer():
    """Only measured/timer.py reads the clock (``perf_counter``) in the library and benchmarks."""
    found = []
    for rel, src in sources(PKG, ROOT / "benchmarks").items():
        if rel in OWN_CLOCKS or rel == "specdec_core/measured/timer.py":
            continue
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Attribute) and node.attr in {
                "perf_counter",
                "perf_counter_ns",
                "monotonic",
            }:
                found.append(f"{rel}:{node.lineno}")
        if "time.perf_counter()" in src:  # a script run in another process, held in a string
            found.append(f"{rel}: time.perf_counter() in a string")
    assert not found, f"clocks read outside the one timer: {found}"


@pytest.mark.parametrize(
    "root, limit", [(MEASURED, MEASURED_LINES), (PKG, LIBRARY_LINES)], ids=["measured", "library"]
)
def test_line_budgets(root, limit):
    assert lines(root) <= limit, f"{root.relative_to(ROOT)}: {lines(root)} lines, budget {limit}"


def test_the_scans_can_fail(tmp_path, monkeypatch):
    """Each scan finds what it looks for in a made-up module."""
    bad = tmp_path / "specdec_core"
    bad.mkdir()
    (bad / "m.py").write_text(
        "import json, time\n"
        "def from_json(d, where):\n"
        "    t = time.perf_counter()\n"
        "    return json.loads(json.dumps(d)), f'{where}.x'\n"
    )
    monkeypatch.setattr(__import__(__name__), "PKG", bad)
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    for scan in (
        test_serialization_lives_in_the_codec_alone,
        test_no_json_round_trips_and_one_parser_of_results,
        test_no_hand_built_field_paths,
        test_one_timer,
    ):
        with pytest.raises(AssertionError):
            scan()

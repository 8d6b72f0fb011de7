"""Every stored results file, mutated as an adversarial user would, is read right or refused right
(issue 36).

Copies of the five files in ``specdec_core/results`` are changed one place at a time: every number
(made negative, 1e400, NaN, a string, a bool, null), every string (a number, null), every bool
("x", 1, null) and every section (deleted, null, a string, the wrong container, its first key
renamed, a key no record declares added). Each copy is read
with :func:`specdec_core.measured.read_stored`. What must hold, for every mutation:

- nothing but a ValueError escapes (no AttributeError, KeyError, OverflowError, ...);
- a refusal names the file and the place: every key on the path to what was changed;
- a copy that is read must be read faithfully: written back by the codec it gives the same JSON
  (a key left out may come back only with its declared default), so ``"quick": "x"`` cannot be
  read as true and 1e400 cannot be read as infinity;
- a negative number is read only where the field is signed by meaning (:data:`SIGNED`).

Hypothesis picks the places and the mutations (derandomized: the same examples every run);
``benchmarks/bench_robustness.py --results`` sweeps every place with every mutation.
"""

from __future__ import annotations

import functools
import json
import math
import shutil

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdec_core.measured import read_stored
from specdec_core.measured.store import RESULTS_DIR

FILES = ("hardware.json", "passcost.json", "features.json", "rounding.json", "llm.json")

#: Fields whose numbers may be negative by meaning: a prediction's signed relative error.
SIGNED = frozenset({"prediction_error", "error"})

#: Top-level sections a file may leave out (they are read as their declared default).
OPTIONAL_SECTIONS = frozenset()

_INF, _NAN = "\x00inf\x00", "\x00nan\x00"


def places(obj, path=()) -> list[tuple[tuple, object]]:
    """Every (path, value) in a parsed JSON document, sections and leaves, depth first."""
    out = [(path, obj)] if path else []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        out += places(v, (*path, k))
    return out


def mutations(path: tuple, value) -> list:
    """The changes tried at one place (``DELETE``: the key removed from its object)."""
    if isinstance(value, bool):
        return ["x", 1, 0, None]
    if isinstance(value, (int, float)):
        return [-1, -0.5, _INF, _NAN, "1", True, None, []]
    if isinstance(value, str):
        return [5, None, True, []]
    if value is None:
        return ["x", -1, True]
    extra = [DELETE] if isinstance(path[-1], str) else []
    keys = [Rename("x"), Rename("-1"), Added()] if isinstance(value, dict) and value else []
    return [*extra, *keys, None, "x", [] if isinstance(value, dict) else {}]


DELETE = object()


class Rename:
    """The first key of an object renamed (a key is a field name or a typed key: a size, a T)."""

    def __init__(self, key: str):
        self.key = key

    def __repr__(self):
        return f"Rename({self.key!r})"


class Added:
    """A key no record declares ("zz"), added to an object, holding a copy of its first value."""

    def __repr__(self):
        return "Added()"


def numeric_keys(d: dict) -> bool:
    """Whether every key of ``d`` spells a number (an int- or float-keyed object)."""
    try:
        return all(math.isfinite(float(k)) for k in d)
    except ValueError:
        return False


def mutated_text(doc, path: tuple, change) -> str:
    doc = json.loads(json.dumps(doc))  # a deep copy of the parsed file
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    if change is DELETE:
        del parent[path[-1]]
    elif isinstance(change, Added):
        d = parent[path[-1]]
        parent[path[-1]] = {**d, "zz": next(iter(d.values()))}
    elif isinstance(change, Rename):
        d = parent[path[-1]]
        first = next(iter(d))
        parent[path[-1]] = {(change.key if k == first else k): v for k, v in d.items()}
    else:
        parent[path[-1]] = change
    text = json.dumps(doc)
    return text.replace(json.dumps(_INF), "1e400").replace(json.dumps(_NAN), "NaN")


def same(a, b) -> bool:
    """JSON values equal, an int equal to the same float (the codec writes 3 as 3.0)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b


def keyed(d, path):
    """The key of ``path`` as the codec writes it (object keys are strings)."""
    for k in path:
        d = d[k]
    return d


def check(name: str, doc, path: tuple, change, tmp_path) -> None:
    """One mutation: read right or refused right (the module docstring)."""
    tmp_path.joinpath(name).write_text(mutated_text(doc, path, change))
    try:
        record = read_stored(name, tmp_path)
    except ValueError as e:
        msg = str(e)
        assert name in msg, f"{path} → {change!r}: the refusal does not name the file: {msg}"
        named = [str(k) for k in (path[:-1] if change is DELETE or isinstance(change, Rename) else path)]
        assert all(k in msg for k in named), (
            f"{path} → {change!r}: the refusal does not name the place: {msg}"
        )
        return
    except Exception as e:  # a foreign exception: the test's whole point
        pytest.fail(f"{name} {path} → {change!r}: {type(e).__name__} escaped: {e}")
    back = json.loads(msgspec.json.encode(record))
    if change is DELETE and path[-1] in keyed(back, path[:-1]):
        assert len(path) > 1 or path[-1] in OPTIONAL_SECTIONS, (
            f"{name}: the section {path[0]} may be left out"
        )
        return  # a field left out, read as its declared default
    if isinstance(change, Rename):
        original = keyed(doc, path)
        assert not (numeric_keys(original) and (change.key == "x" or "-" in change.key)), (
            f"{name}: {path} took the key {change.key!r} among number keys"
        )
    assert change not in (_INF, _NAN), f"{name}: {path} read {change!r}"
    if isinstance(change, (int, float)) and not isinstance(change, bool) and change < 0:
        assert any(str(k) in SIGNED for k in path), f"{name}: {path} = {change} (negative) was read"
    wanted = json.loads(mutated_text(doc, path, change))
    assert same(back, wanted) or (change is None and keyed(back, path) is None), (
        f"{name}: {path} → {change!r} was read as {keyed(back, path)!r}"
    )


@functools.cache
def parsed(name: str):
    """The stored file ``name``, parsed (read once per session)."""
    return json.loads((RESULTS_DIR / name).read_text())


@pytest.mark.parametrize("name", FILES)
def test_the_stored_file_reads_and_writes_back_unchanged(name):
    record = read_stored(name)
    assert same(json.loads(msgspec.json.encode(record)), parsed(name))


@pytest.mark.parametrize("name", FILES)
@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_mutated_files_are_read_right_or_refused_right(name, tmp_path, data):
    doc = parsed(name)
    path, value = data.draw(st.sampled_from(places(doc)), label="place")
    change = data.draw(st.sampled_from(mutations(path, value)), label="change")
    check(name, doc, path, change, tmp_path)


@pytest.mark.parametrize("name", FILES)
def test_every_top_level_section_deleted_or_replaced_is_refused_or_defaulted(name, tmp_path):
    doc = parsed(name)
    for key, value in doc.items():
        for change in mutations((key,), value):
            check(name, doc, (key,), change, tmp_path)


def test_a_broken_reader_is_caught(tmp_path, monkeypatch):
    """The check can fail: a reader that reads ``"x"`` as a bool (what the old reader did) fails it."""
    from specdec_core.measured import store

    real = store.read_stored

    def lax(name, results_dir=None):
        text = (tmp_path / name).read_text().replace('"quick": "x"', '"quick": true')
        (tmp_path / "lax").mkdir(exist_ok=True)
        (tmp_path / "lax" / name).write_text(text)
        return real(name, tmp_path / "lax")

    monkeypatch.setattr(f"{__name__}.read_stored", lax)
    with pytest.raises(AssertionError, match="was read as True"):
        check("hardware.json", parsed("hardware.json"), ("quick",), "x", tmp_path)
    shutil.rmtree(tmp_path / "lax")


def test_a_key_added_to_a_stored_layout_is_refused_naming_the_field(tmp_path):
    """Found by the full sweep: a "storage/method" key the layout does not know was refused by the
    record's own check, whose message named the storage but not ``timings``."""
    check("passcost.json", parsed("passcost.json"), ("layout", "timings"), Added(), tmp_path)

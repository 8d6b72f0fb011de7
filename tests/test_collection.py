"""The collection hangs together: README table, notebook 00's map, prerequisites lines and
"Next" links all agree with the notebooks that exist (numbers need not be contiguous).

Each helper below parses one kind of reference; each has a small test on a made-up input, so a
parser that silently finds nothing cannot make the collection checks pass vacuously.
"""

import html
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+\.ipynb)\)")
#: notebooks/NN-name.ipynb, or NNx-name.ipynb for a closing part that sorts right after NN (09b after 09).
NUMBERED = re.compile(r"^(\d{2}[a-z]?)-.+\.ipynb$")


def number(name):
    """The notebook number of a file name: "04" for 04-x.ipynb, "09b" for 09b-x.ipynb."""
    m = NUMBERED.match(name)
    return m.group(1) if m else name[:2]


def notebooks():
    """notebooks/NN-*.ipynb (and NNx-*.ipynb) in numeric order (gaps allowed; "09-…" before "09b-…")."""
    return sorted((p for p in NB_DIR.glob("*.ipynb") if NUMBERED.match(p.name)), key=lambda p: p.name)


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def markdown(path):
    return ["".join(c["source"]) for c in cells(path) if c["cell_type"] == "markdown"]


def paragraph(text, head):
    """The paragraph of ``text`` that starts with ``head`` (None if absent)."""
    for par in re.split(r"\n\s*\n", text):
        if par.strip().startswith(head):
            return " ".join(par.split())
    return None


def numbers_named(text, known):
    """Notebook numbers named in ``text`` ("01–03", "04", "notebook 00", link targets), keeping only
    numbers of notebooks in ``known``; durations such as "About 20 minutes" are ignored."""
    text = re.sub(r"\b\d+\s*minutes?\b", "", text)
    found = set()
    for a, b in re.findall(r"\b(\d{2})\s*[–-]\s*(\d{2})\b", text):
        found |= {f"{n:02d}" for n in range(int(a), int(b) + 1)}
    found |= set(re.findall(r"\b(\d{2}[a-z]?)\b", text))
    return found & set(known)


def map_rows(text):
    """Rows of 00's map table: (number, link text, file, needs cell)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        m = LINK.search(cols[0]) if cols else None
        if m:
            rows.append((number(Path(m.group(2)).name), m.group(1), m.group(2), cols[-1]))
    return rows


def readme_rows(text):
    rows = []
    for line in text.splitlines():
        m = LINK.search(line) if line.startswith("|") else None
        if m and m.group(2).startswith("notebooks/"):
            rows.append(m.group(2))
    return rows


def next_link(path):
    """(text, target) of the notebook's "Next:" link, or None."""
    for text in markdown(path)[::-1]:
        if "**Next:**" in text:
            m = LINK.search(text[text.index("**Next:**") :])
            return (m.group(1), m.group(2)) if m else ("", "")
    return None


# ---------------------------------------------------------------- the parsers themselves


def test_numbers_named_reads_ranges_lists_and_links_but_not_durations():
    known = [f"{i:02d}" for i in range(10)]
    line = "**Prerequisites.** Notebooks 01–03 (acceptance), 05 and [07 — x](07-x.ipynb). About 20 minutes."
    assert numbers_named(line, known) == {"01", "02", "03", "05", "07"}
    assert numbers_named("A little Python.", known) == set()
    assert numbers_named("01, 03", ["01", "03"]) == {"01", "03"}
    assert numbers_named("—", known) == set()
    # a closing part numbered 09b is its own number, never read as 09 (and 09 never as 09b)
    assert numbers_named("Notebooks 02 and [09](09-x.ipynb).", known + ["09b"]) == {"02", "09"}
    assert numbers_named("02, 09b", known + ["09b"]) == {"02", "09b"}
    assert [number(n) for n in ("09-x.ipynb", "09b-y.ipynb")] == ["09", "09b"]


def test_map_parser_finds_rows():
    table = (
        "| Notebook | Objective | Needs |\n|---|---|---|\n"
        "| **[00 · Start](00-start.ipynb)** (this one) | x | — |\n| **[04 · T](04-t.ipynb)** | y | 01, 03 |"
    )
    assert map_rows(table) == [
        ("00", "00 · Start", "00-start.ipynb", "—"),
        ("04", "04 · T", "04-t.ipynb", "01, 03"),
    ]


# ---------------------------------------------------------------- the collection

NBS = notebooks()
NUMS = [number(p.name) for p in NBS]
MAP_TEXT = next(t for t in markdown(NB_DIR / "00-start-here.ipynb") if "| Needs |" in t)


def test_collection_is_numbered_without_duplicates():
    assert NUMS[0] == "00" and len(NBS) >= 9
    assert len(set(NUMS)) == len(NUMS), "two notebooks share a number"


def test_readme_table_lists_every_notebook_in_order():
    rows = readme_rows((ROOT / "README.md").read_text(encoding="utf-8"))
    assert rows == [f"notebooks/{p.name}" for p in NBS]


def test_map_lists_every_notebook_in_order():
    assert [f for _, _, f, _ in map_rows(MAP_TEXT)] == [p.name for p in NBS]


def test_every_linked_notebook_exists():
    sources = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    sources |= {p.name: "\n".join(markdown(p)) for p in NBS}
    missing = []
    for name, text in sources.items():
        base = ROOT if name == "README.md" else NB_DIR
        for _, target in LINK.findall(text):
            if not target.startswith("http") and not (base / target.split("#")[0]).exists():
                missing.append(f"{name} → {target}")
    assert not missing, missing


@pytest.mark.parametrize("path", NBS, ids=lambda p: number(p.name))
def test_objective_and_prerequisites_at_the_top(path):
    first = markdown(path)[0]
    assert paragraph(first, "**Learning objective.**"), "no Learning objective line"
    assert paragraph(first, "**Prerequisites.**"), "no Prerequisites line"


@pytest.mark.parametrize("row", map_rows(MAP_TEXT), ids=lambda r: r[0])
def test_map_needs_column_agrees_with_prerequisites_line(row):
    number, _, file, needs = row
    path = NB_DIR / file
    if not path.exists():
        pytest.fail(f"{file} is in the map but does not exist")
    line = paragraph(markdown(path)[0], "**Prerequisites.**")
    assert numbers_named(needs, NUMS) == numbers_named(line, NUMS) - {number}, (
        f"map says {needs!r}; {file} says {line!r}"
    )


@pytest.mark.parametrize("i", range(len(NBS)), ids=lambda i: NUMS[i])
def test_next_link_points_to_the_following_notebook(i):
    link = next_link(NBS[i])
    if i == len(NBS) - 1:
        assert link is None, "the last notebook has no next notebook"
        return
    assert link is not None, f"{NBS[i].name} has no '**Next:**' link"
    following = NBS[i + 1].name
    assert link[1] == following
    titles = {f: t for _, t, f, _ in map_rows(MAP_TEXT)}
    assert link[0] == titles[following], "the next link's text differs from the map's title"


LABEL = re.compile(r"(?:^|>)\s*\[([a-z][a-z ]*)\] ", re.M)


def output_labels(outputs):
    """The "[...]" prefixes of printed lines in ``outputs``: stream text, and the text or HTML of
    rich outputs (a lab's static copy prints its labelled results inside HTML tags)."""
    found = set()
    for out in outputs:
        texts = ["".join(out.get("text", ""))] if out.get("output_type") == "stream" else []
        texts += [
            html.unescape("".join(v))
            for mime, v in out.get("data", {}).items()
            if mime in ("text/plain", "text/html")
        ]
        for text in texts:
            found |= {m.group(1) for m in LABEL.finditer(text)}
    return found


def bracket_labels(path):
    """The "[...]" prefixes of printed output lines, e.g. "derived from assumed inputs"."""
    found = set()
    for c in cells(path):
        found |= output_labels(c.get("outputs", []))
    return found


def test_bracket_labels_parser():
    import specdec_core.formatting as f

    assert f.labelled("derived-from-assumed", "x").startswith("[derived from assumed inputs] ")
    outs = [
        {"output_type": "stream", "text": ["[simulated] a\n", "x [not a label] b\n", "[timed] c\n"]},
        {"output_type": "display_data", "data": {"text/html": ["<p>[derived from measured inputs] d</p>"]}},
        {"output_type": "display_data", "data": {"text/plain": ["E[accepted tokens] e"]}},
    ]
    assert output_labels(outs) == {"simulated", "timed", "derived from measured inputs"}


@pytest.mark.parametrize("path", NBS, ids=lambda p: number(p.name))
def test_printed_labels_follow_the_one_label_rule(path):
    from specdec_core.formatting import KINDS

    outside = bracket_labels(path) - set(KINDS.values())
    assert not outside, f"{path.name} prints labels outside formatting.KINDS: {sorted(outside)}"


#: Notebooks whose stored kernelspec is fixed by another work stream (06 and 09 are being
#: rewritten); the check below xfails for them, naming them, and fails for every other notebook.
KERNELSPEC_PENDING: set[str] = set()


@pytest.mark.parametrize("path", NBS, ids=lambda p: number(p.name))
def test_stored_kernelspec_is_the_one_lab_writes(path):
    """When its kernel connects, Lab replaces ``metadata.kernelspec`` with the kernel's own spec;
    a different stored one ("Python 3" for "Python 3 (ipykernel)") marks the notebook modified
    the moment a learner opens it. ``tools/execute_notebooks.py`` stores the installed spec."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from execute_notebooks import lab_kernelspec

    got = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("kernelspec")
    if got != lab_kernelspec() and path.name[:2] in KERNELSPEC_PENDING:
        pytest.xfail(f"{path.name}: kernelspec {got} (fix pending in its own work stream)")
    assert got == lab_kernelspec()


def test_stored_form_drops_widgets_and_keeps_their_text():
    """``tools/execute_notebooks.stored_form``: widget views leave the bundles (their plain text
    stays), an output that was only a view leaves, ``metadata.widgets`` leaves; nothing else moves."""
    import sys

    import nbformat

    sys.path.insert(0, str(ROOT / "tools"))
    from execute_notebooks import WIDGET_VIEW, stored_form

    view = {WIDGET_VIEW: {"model_id": "m"}}
    KS = {"display_name": "K", "language": "python", "name": "k"}
    nb = nbformat.v4.new_notebook(metadata={"widgets": {"state": {}}, "kernelspec": KS})
    nb.cells = [
        nbformat.v4.new_code_cell(
            "show()",
            outputs=[
                nbformat.v4.new_output("display_data", data={**view, "text/plain": "Interactive lab x"}),
                nbformat.v4.new_output("display_data", data=dict(view)),
                nbformat.v4.new_output("stream", name="stdout", text="α = 3/5\n"),
            ],
        ),
        nbformat.v4.new_markdown_cell("# t"),
    ]
    out = stored_form(nb)
    assert dict(out.metadata) == {"kernelspec": KS}
    outs = out.cells[0].outputs
    assert [o.output_type for o in outs] == ["display_data", "stream"]
    assert dict(outs[0].data) == {"text/plain": "Interactive lab x"}
    assert out.cells[1].source == "# t"


def test_progress_bar_reads_as_a_sentence_without_a_kernel():
    from specdec_core.labs.progress import progress_bar

    bar = progress_bar(9, "sampling")
    data = bar._repr_mimebundle_()
    assert data["text/plain"] == "Progress bar 'sampling' (it moves while the cell runs)"
    assert "application/vnd.jupyter.widget-view+json" in data and bar.max == 9
    for bad, match in (((0, "x"), "total"), ((3, ""), "description"), ((2.5, "x"), "total")):
        with pytest.raises(ValueError, match=match):
            progress_bar(*bad)


# ---------------------------------------------------------------- README: time per notebook, disk


def readme_times(text: str) -> dict[str, int]:
    """{notebook number: minutes} from the README table's last column ("about N min")."""
    times = {}
    for line in text.splitlines():
        m = LINK.search(line) if line.startswith("|") else None
        t = re.search(r"\|\s*about (\d+) min\s*\|\s*$", line)
        if m and m.group(2).startswith("notebooks/") and t:
            times[number(Path(m.group(2)).name)] = int(t.group(1))
    return times


def test_readme_times_parser():
    row = "| [05 Tokens per second](notebooks/05-tokens-per-second.ipynb) | turn E[K] into a rate | about 35 min |"
    assert readme_times(row) == {"05": 35}
    assert readme_times(row.replace("about 35 min", "")) == {}


def test_readme_gives_every_notebook_a_time_that_agrees_with_the_notebook():
    """Issue 38: a time estimate per notebook, in the README table and under each title."""
    times = readme_times((ROOT / "README.md").read_text(encoding="utf-8"))
    for path in notebooks():
        key = number(path.name)
        assert key in times, f"README table: no 'about N min' for {path.name}"
        stated = re.search(r"\bAbout (\d+) minutes", "".join(cells(path)[0]["source"]))
        if stated:  # 09 may state its time in another form (its run's minutes)
            assert int(stated.group(1)) == times[key], (
                f"{path.name}: {stated.group(0)} vs README {times[key]}"
            )


def test_readme_says_where_the_weight_cache_lives_and_how_to_delete_it(monkeypatch):
    from specdec_core.llm.loader import default_cache_dir

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    monkeypatch.delenv("SPECDEC_CACHE", raising=False)
    home = str(Path.home())
    folder = "~" + default_cache_dir()[len(home) :] if default_cache_dir().startswith(home) else ""
    assert folder and f"`{folder}/`" in readme, (folder, "the cache folder is not named in README.md")
    assert "SPECDEC_CACHE" in readme and f"rm -rf {folder}" in readme

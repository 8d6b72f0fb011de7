"""What a learner reads (issue 32, item 4): display equations that fit a 1280 px JupyterLab window,
no raw LaTeX outside math, links that land on their sections, an exercise check that answers with a
message, notebook 09's announced memory and wait, and prose that agrees with the stored results.

Every check reads the stored notebooks (no kernel) and has a test showing that it can fail.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
NB = {p.name[:2]: p for p in NOTEBOOKS}


def read(path: Path):
    return nbformat.read(path, as_version=4)


def markdown_cells(path: Path) -> list[tuple[int, str]]:
    return [(i, c.source) for i, c in enumerate(read(path).cells) if c.cell_type == "markdown"]


def printed_text(cell) -> str:
    """The text a code cell's stored outputs show (streams and text/plain)."""
    parts = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            parts.append(o.text)
        elif "data" in o:
            parts.append(o.data.get("text/plain", ""))
    return "".join(parts)


# ---------------------------------------------------------------- display equations fit the page

#: Widest display line, in em, that fits a 1280 px JupyterLab window with the file browser open:
#: the notebook's cell area is then about 850 px, and MathJax sets display math at about 16.5 px per
#: em (Lab's 14 px text, scaled to match). 41 em ≈ 680 px leaves room for the estimate's error.
#: The lines broken for issue 32 measured 42–55 em; every line now is at most 40.
MAX_EM = 41.0

_SPACES = {"qquad": 2.0, "quad": 1.0, ",": 0.17, ";": 0.28, ":": 0.22, " ": 0.25, "!": -0.17}
_ZERO = {"left", "right", "big", "Big", "bigg", "Bigg", "textstyle", "displaystyle", "limits", "nolimits"}
_ZERO |= {"mathbf", "mathit", "boldsymbol", "mathcal", "mathbb"}
_TEXT = {"text", "mathrm", "operatorname", "textbf", "textit", "mbox"}
_REL = {"le", "leq", "ge", "geq", "to", "approx", "sim", "neq", "ne", "equiv", "mapsto", "Rightarrow", "iff"}
_REL |= {"in", "propto", "gets", "ll", "gg", "leftarrow", "rightarrow"}
_BIN = {"times", "cdot", "pm", "otimes", "cup", "cap", "setminus", "circ"}
_WIDE = {"sum": 1.1, "prod": 1.1, "int": 0.6, "dots": 1.0, "ldots": 1.0, "cdots": 1.0, "max": 1.7, "min": 1.6}
_WIDE |= {"arg": 1.3, "log": 1.3, "exp": 1.4, "lVert": 0.5, "rVert": 0.5, "mid": 0.6}


def _group(s: str, i: int) -> tuple[str, int]:
    """The {group} (or single token) starting at s[i], and the index after it."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        return "", i
    if s[i] == "{":
        depth = 0
        for j in range(i, len(s)):
            depth += {"{": 1, "}": -1}.get(s[j], 0)
            if depth == 0:
                return s[i + 1 : j], j + 1
        return s[i + 1 :], len(s)
    if s[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.)", s[i:])
        return m.group(0), i + len(m.group(0))
    return s[i], i + 1


def _command(tex: str, i: int, name: str) -> tuple[float, int]:
    """Width of the command ``name`` whose arguments start at tex[i], and the index after them."""
    if name in _SPACES:
        return _SPACES[name], i
    if name in _ZERO:
        return 0.0, i
    if name in _TEXT:
        g, i = _group(tex, i)
        return 0.5 * len(g.replace("\\", "")), i
    if name in ("frac", "dfrac", "tfrac"):
        a, i = _group(tex, i)
        b, i = _group(tex, i)
        return max(width_em(a), width_em(b)) + 0.3, i
    if name in ("underbrace", "overbrace"):
        a, i = _group(tex, i)
        if i < len(tex) and tex[i] in "_^":
            b, i = _group(tex, i + 1)
            return max(width_em(a), 0.7 * width_em(b)), i
        return width_em(a), i
    if name == "tag":
        g, i = _group(tex, i)
        return 2.0 + 0.5 * (len(g) + 2), i
    if name in ("hat", "bar", "tilde", "vec", "sqrt", "overline"):
        g, i = _group(tex, i)
        return width_em(g) + (0.6 if name == "sqrt" else 0.0), i
    if name in ("begin", "end"):
        return 0.0, _group(tex, i)[1]
    return (1.3 if name in _REL else 1.2 if name in _BIN else _WIDE.get(name, 0.6)), i


def width_em(tex: str) -> float:
    """Estimated width in em of one line of display LaTeX as MathJax sets it (a proxy for the
    rendered width: letters ≈ 0.55 em, relations and binary operators with their spacing, text at
    0.5 em a character, sub- and superscripts at 70 %, a fraction as wide as its wider part)."""
    w, i = 0.0, 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            dw, i = _command(tex, i + len(m.group(0)), m.group(1))
            w += dw
            continue
        if ch in "_^":
            g, i = _group(tex, i + 1)
            w += 0.7 * width_em(g)
            continue
        i += 1
        if ch in "{}& \n":
            continue
        w += (
            1.3
            if ch in "=<>"
            else 1.2
            if ch in "+-−×"
            else 0.45
            if ch in ",;"
            else 0.39
            if ch in "()[]|."
            else 0.5
            if ch.isdigit()
            else 0.55
        )
    return w


def display_lines(markdown: str) -> list[str]:
    """Each line of each $$…$$ display equation: MathJax breaks a display only at \\\\ (a newline
    in the source is a space), so a line is what lies between two \\\\."""
    lines = []
    for m in re.finditer(r"\$\$(.+?)\$\$", markdown, re.S):
        lines += [line.strip() for line in re.split(r"\\\\", m.group(1)) if line.strip()]
    return lines


def test_width_estimate_tells_a_long_line_from_a_broken_one():
    one_line = (
        r"\text{TTFT} = T_\text{prefill, target} + T_\text{prefill, draft} + \gamma\,T_\text{draft step} + "
        r"T_\text{overhead},"
        "\n"
        r"   \qquad \text{TTFT}_\text{plain} = T_\text{prefill, target} \tag{7}"
    )
    broken = one_line.replace(r"\qquad", r"\\")
    assert width_em(one_line) > MAX_EM  # the source's newline does not break the display
    assert len(display_lines(f"$${one_line}$$")) == 1 and len(display_lines(f"$${broken}$$")) == 2
    assert all(width_em(line) <= MAX_EM for line in display_lines(f"$${broken}$$"))
    assert width_em(r"\frac{a}{b}") < width_em("ab") + 0.5 < width_em(r"\text{a long label}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_display_equations_fit_a_1280px_lab_window(path):
    wide = [
        f"cell {i}: {width_em(line):.0f} em: {line[:80]}"
        for i, src in markdown_cells(path)
        for line in display_lines(src)
        if width_em(line) > MAX_EM
    ]
    assert not wide, f"{path.name}: break these display equations into lines (aligned, \\\\): {wide}"


# ---------------------------------------------------------------- no raw LaTeX in prose

_MATH_OR_CODE = re.compile(r"\$\$.+?\$\$|\$[^$\n]+?\$|```.*?```|`[^`\n]*`|<code>.*?</code>", re.S)
_LATEX_COMMANDS = (
    "frac|sum|prod|alpha|gamma|beta|mathrm|text|le|ge|leq|geq|cdot|times|min|max|lVert|hat|tag|mid"
)
RAW_LATEX = re.compile(
    r"[_^]\{"  # t_{k+1}, q^{x}
    rf"|\\(?:{_LATEX_COMMANDS})\b"  # \frac, \sum, …
    r"|(?<![A-Za-z0-9_])[A-Za-zα-ωΣ]_[A-Za-z0-9α-ω]\b"  # f_s, x_γ, Σ_x (snake_case words are not)
    r"|\^⊗"
)


def raw_latex(text: str, *, markdown: bool) -> list[str]:
    """LaTeX written as plain text: in markdown outside $…$ and code, in printed text anywhere."""
    prose = _MATH_OR_CODE.sub(" ", text) if markdown else text
    return [prose[max(0, m.start() - 20) : m.end() + 10] for m in RAW_LATEX.finditer(prose)]


def test_raw_latex_finder_catches_the_forms_seen():
    for bad in (
        "the residual t_{k+1}.",
        "Write f_s for",
        "(E[K] = Σ_{j ≥ 0} P(K ≥ j))",
        r"a \frac{1}{2}",
        "x_γ",
    ):
        assert raw_latex(bad, markdown=True), bad
    for good in ("the residual $t_{k+1}$.", "`n_random`", "bench_llm.py and top_k", "tᵢ and Σ over j ≥ 0"):
        assert not raw_latex(good, markdown=True), good


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_no_raw_latex_in_prose_or_printed_text(path):
    found = []
    for i, cell in enumerate(read(path).cells):
        if cell.cell_type == "markdown":
            found += [f"cell {i} (markdown): {s!r}" for s in raw_latex(cell.source, markdown=True)]
        elif cell.cell_type == "code":
            found += [f"cell {i} (printed): {s!r}" for s in raw_latex(printed_text(cell), markdown=False)]
    assert not found, f"{path.name}: write math as $…$ (markdown) or Unicode (printed): {found}"


# ---------------------------------------------------------------- links land on their sections


def lab_heading_id(heading: str) -> str:
    """The id JupyterLab 4 gives a rendered markdown heading (rendermime's createHeaderId: the
    heading's text content with every space replaced by '-', case and punctuation kept)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    text = re.sub(r"(\*\*|__|\*|`)", "", text)  # emphasis and code marks are not text
    return text.strip().replace(" ", "-")


def heading_ids(path: Path) -> set[str]:
    ids = set()
    for _, src in markdown_cells(path):
        src = re.sub(r"```.*?```", "", src, flags=re.S)
        ids |= {lab_heading_id(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", src, re.M)}
    return ids


LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]*)\)")


def test_lab_heading_ids_keep_case_and_punctuation():
    assert lab_heading_id("8. Which drafts pay?") == "8.-Which-drafts-pay?"
    assert lab_heading_id("Part C. Batch or **speculate**") == "Part-C.-Batch-or-speculate"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_internal_links_match_a_lab_heading_id(path):
    broken = []
    for i, src in markdown_cells(path):
        for text, url in LINK.findall(src):
            if "#" not in url or url.startswith(("http:", "https:")):
                continue
            target, anchor = url.split("#", 1)
            doc = path if not target else path.parent / target
            if not doc.exists() or anchor not in heading_ids(doc):
                broken.append(f"cell {i}: [{text}]({url})")
    assert not broken, f"{path.name}: anchors must be a heading's Lab id (spaces → '-'): {broken}"


def test_faq_links_to_a_section_carry_its_anchor():
    """The FAQ (00) names sections ("09 §5", "06 Part C"); each such link must land on it."""
    src = next(s for _, s in markdown_cells(NB["00"]) if "## Frequently asked questions" in s)
    section_links = [(t, u) for t, u in LINK.findall(src) if "§" in t or "Part " in t]
    assert len(section_links) >= 6
    assert all("#" in u for _, u in section_links), [u for _, u in section_links if "#" not in u]


# ---------------------------------------------------------------- 03: the exercise answers with a message


def _check_accept():
    nb = read(NB["03"])
    (cell,) = [c for c in nb.cells if "from-scratch-check" in c.metadata.get("tags", [])]
    ns: dict = {}
    exec(cell.source.split("\nprint(check_accept(accept))")[0], ns)  # the check itself, not its call
    return cell, ns["check_accept"]


def test_exercise_check_grades_with_a_message_never_a_traceback():
    cell, check = _check_accept()

    def not_yet(u, p_x, q_x):
        raise NotImplementedError

    def fails(u, p_x, q_x):
        return u < p_x / q_x[0]  # TypeError

    def empty(u, p_x, q_x):
        pass

    assert check(lambda u, p_x, q_x: u < min(1.0, p_x / q_x)).startswith("✓")
    assert "not written yet" in check(not_yet)
    assert "raised TypeError" in check(fails)
    assert check(empty).startswith("✗") and "None" in check(empty)
    assert "✗ u = 0.5, p(x) = 0.25" in check(lambda u, p_x, q_x: u <= p_x / q_x)  # the edge u = p/q
    assert check(lambda u, p_x, q_x: True).startswith("✗")
    assert "not written yet" in printed_text(cell)  # the stored run, with the exercise as shipped


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_run_all_raises_nowhere(path):
    """Run All reaches the self-check: no cell is expected to raise, none stored an error."""
    cells = read(path).cells
    tagged = [i for i, c in enumerate(cells) if "raises-exception" in c.metadata.get("tags", [])]
    errors = [i for i, c in enumerate(cells) if any(o.output_type == "error" for o in c.get("outputs", []))]
    assert not tagged and not errors, (tagged, errors)


# ---------------------------------------------------------------- 09: memory and wait announced


def _find(path: Path, pattern: str) -> tuple[int, re.Match]:
    for i, cell in enumerate(read(path).cells):
        text = cell.source if cell.cell_type == "markdown" else printed_text(cell)
        m = re.search(pattern, text)
        if m:
            return i, m
    raise AssertionError(f"{path.name}: nothing matches {pattern!r}")


def test_09_announces_its_peak_memory_and_the_fit_time_before_they_happen():
    nb9 = NB["09"]
    i_mem, mem = _find(nb9, r"about \*\*([\d.]+) GiB\*\* of\s+memory")
    i_wait, wait = _find(nb9, r"about \*\*(\d+) s\*\* go to fitting")
    i_load, _ = next((i, c) for i, c in enumerate(read(nb9).cells) if "load_model(" in c.source)
    i_fit, _ = next((i, c) for i, c in enumerate(read(nb9).cells) if "fit_feature_map(" in c.source)
    assert i_mem < i_load and i_wait < i_fit
    _, peak = _find(nb9, r"this kernel's peak resident memory: ([\d.]+) GiB")
    _, took = _find(nb9, r"fit and scoring took (\d+) s")
    announced, measured = float(mem.group(1)), float(peak.group(1))
    assert 0.9 * measured <= announced <= 1.3 * measured, (announced, measured)
    assert 0.5 * int(took.group(1)) <= int(wait.group(1)) <= 2 * int(took.group(1)), (
        wait.group(1),
        took.group(1),
    )
    _, done = _find(nb9, r"fit: done")  # the fit showed its progress in the stored run


def test_fit_feature_map_reports_progress_and_bounds_n_random():
    from specdec_core.llm.features import MAX_RANDOM, collect_features, fit_feature_map

    rng = np.random.default_rng(0)
    h, e, y = (rng.standard_normal((60, 4)).astype(np.float32) for _ in range(3))
    lines: list[str] = []
    fit_feature_map(h, e, y, inputs="h,e", n_random=8, progress=lines.append)
    assert len(lines) == 3 and lines[-1] == "fit: done" and "8 random features" in lines[0]
    assert fit_feature_map(h, e, y, inputs="h,e", n_random=8).n == 60  # silent without progress
    for bad in (-1, MAX_RANDOM + 1, 2.0, True):
        with pytest.raises(ValueError, match="n_random"):
            fit_feature_map(h, e, y, inputs="h,e", n_random=bad)
    with pytest.raises(ValueError, match="progress"):
        fit_feature_map(h, e, y, inputs="h,e", n_random=0, progress="print")
    with pytest.raises(ValueError, match="progress"):
        collect_features(None, [[1, 2]], progress=3)
    assert "progress" in inspect.signature(collect_features).parameters


# ---------------------------------------------------------------- 06 and 09 agree with the stored results


def _steps():
    from specdec_core.llm import passcost
    from specdec_core.measured import read_stored

    pc = read_stored("passcost.json")
    products = passcost.curves(pc, threads=1)[0]
    new, old = products["product"], products["x@w"]
    return {T: new[T] / new[1] for T in new}, {T: old[T] / new[1] for T in old}, new[1] / pc.at(1).floor_ms


def _prose(key: str) -> str:
    return " ".join(" ".join(src.split()) for _, src in markdown_cells(NB[key]))


def test_06_and_09_cost_claims_agree_with_passcost():
    read_once, earlier, floor_ratio = _steps()
    text06, text09 = _prose("06"), _prose("09")
    assert "two positions already cost more than two steps" in text06 and earlier[2] > 2
    assert "paid more than two steps for two positions" in text06 and earlier[2] > 2
    assert "one row costs at most a quarter more than the floor" in text06 and floor_ratio <= 1.25
    assert "more than two steps for two positions" in text09 and earlier[2] > 2
    assert "a few positions cost a fraction of a step more than one" in text09 and read_once[4] < 2
    assert "two positions still cost noticeably more than one step" in text09 and read_once[2] > 1.05
    for typed in ("about three steps", "three steps the earlier layout", "paid about three"):
        assert typed not in text06 + text09, typed


def test_09_draft_cost_and_law_test_claims_agree_with_the_stored_results():
    from specdec_core.llm import lawtest
    from specdec_core.measured import read_capstone, read_stored

    text, cap, ft = _prose("09"), read_capstone(), read_stored("features.json")
    assert "the feature draft costs a few per cent of a step" in text
    assert ft.cost.draft_step_top4096_ms / ft.cost.target_step_ms < 0.1
    assert "with probability at least 0.99" in text and cap.law.power >= 0.99
    assert "expects fewer than 5 times" in text
    assert inspect.signature(lawtest.pooled_cells).parameters["min_expected"].default == 5
    # The earlier outcomes are printed by code: what is stored, or that none is.
    _, m = _find(NB["09"], r"(earlier, .*|earlier outcomes kept in this results file: none)")
    assert ("none" in m.group(0)) == (not cap.law_history)

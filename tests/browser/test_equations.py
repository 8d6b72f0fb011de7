"""Every display equation fits its cell in JupyterLab, number included, and no printed line wraps
(issue 38 item 5): measured in Chromium, not estimated.

The lab walk of 2026-12-05 found 13 display equations that lost their right side or their number
at 1024 px with the file browser open (01 (7) without "= 1 − TV(p, q)", 04 (5) without "rounds
1 … t−1"), and one cut even at 1280. An estimate of the typeset width from the LaTeX source had
passed them all. So this test opens every notebook once in the session's Lab page (no cell is
run), with the file browser open as in JupyterLab's default layout, opens every ``<details>``
(solutions are read too), and for each window width of ``WIDTHS`` measures every display equation
MathJax has typeset — in markdown and in stored outputs: the union of the boxes of its body and
its number (MathJax's ``mjx-table`` and ``mjx-labels`` cell; the whole ``mjx-math`` for an
equation without a number) must lie inside the cell's rendered text. A number pushed onto the
body counts too (MathJax then widens the container past the cell instead).

Printed lines (stored streams and text/plain outputs) are measured at 1280 px: a line whose text
lies on more than one line box wraps, and Lab wraps printed text mid-word.

The window is 1024×768 and 1280×900 (the browser suite's own size); the notebook is opened once and
the window resized. Lab lays cells out lazily (``content-visibility``), so each equation is
scrolled into view before it is measured.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from labdriver import NOTEBOOKS_SRC, command, show_file_browser

#: Window sizes, (width, height) in CSS px at device scale 1: a small laptop or half a screen, and
#: the size every other browser test uses.
WIDTHS = ((1024, 768), (1280, 900))
#: Printed lines must not wrap at this window width (file browser open); at 1024 px a table may.
PRINTED_WIDTH = 1280
#: Notebooks whose printed lines are not yet fitted (issue 38 item 5: 09's author is on it; remove it
#: once its lines fit, e.g. with ``specdec_core.formatting.wrapped``). Its equations are checked all
#: the same.
PRINTED_NOT_YET: set[str] = set()
#: Every notebook of the collection (numbered NN or NNx), whoever wrote it.
NOTEBOOKS = sorted(p for p in NOTEBOOKS_SRC.glob("[0-9][0-9]*-*.ipynb"))

#: The display equations of markdown: $$ … $$ (what MathJax typesets in display mode).
DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)

TYPESET = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  if (!w || !w.content || !w.context || !w.context.isReady) return -1;
  w.node.querySelectorAll('details').forEach((d) => { d.open = true; });
  return w.node.querySelectorAll('.jp-MarkdownCell mjx-container[display="true"]').length;
}"""

# For every typeset display equation (markdown display math, and any MathJax in an output):
# where its body and number are, against the box of the text it sits in.
MEASURE = """async () => {
  const frame = () => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
  const w = window.jupyterapp.shell.currentWidget;
  const found = [];
  const cells = w.content.widgets;
  for (let i = 0; i < cells.length; i++) {
    const node = cells[i].node;
    const eqs = [...node.querySelectorAll('.jp-MarkdownCell mjx-container[display="true"], '
                                          + '.jp-OutputArea-output mjx-container')];
    for (const c of eqs) {
      c.scrollIntoView({block: 'nearest'});
      await frame();
      if (c.getClientRects().length === 0) continue;   // not shown (e.g. a hidden output)
      const text = c.closest('.jp-RenderedHTMLCommon, .jp-RenderedLatex, .jp-OutputArea-output');
      const box = text.getBoundingClientRect();
      const parts = [...c.querySelectorAll(':scope > mjx-math > mjx-mtable > mjx-table, '
                                           + ':scope > mjx-math > mjx-mtable > mjx-labels mjx-mtd')];
      if (parts.length === 0) parts.push(c.querySelector('mjx-math') || c);
      const rects = parts.map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0);
      if (!rects.length) continue;
      const left = Math.min(...rects.map((r) => r.left)), right = Math.max(...rects.map((r) => r.right));
      const mml = c.querySelector('mjx-assistive-mml');
      const label = mml && mml.querySelector('mlabeledtr > mtd');   // the number, as text
      found.push({
        cell: i,
        number: label ? label.textContent.trim() : '',
        text: (mml ? mml.textContent : c.textContent).replace(/\\s+/g, ' ').trim().slice(0, 70),
        left: Math.round(left), right: Math.round(right),
        boxLeft: Math.round(box.left), boxRight: Math.round(box.right),
      });
    }
  }
  return found;
}"""


# Every printed line (a stored stream or text/plain output) that the output area wraps: a line is
# wrapped when its text lies on more than one line box. Lab breaks printed text anywhere, mid-word
# included ("rejecte / d"), so a line must fit.
WRAPPED = """async () => {
  const frame = () => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
  const w = window.jupyterapp.shell.currentWidget;
  const found = [];
  const cells = w.content.widgets;
  for (let i = 0; i < cells.length; i++) {
    for (const pre of cells[i].node.querySelectorAll('.jp-OutputArea-output.jp-RenderedText pre')) {
      pre.scrollIntoView({block: 'nearest'});
      await frame();
      if (pre.getClientRects().length === 0) continue;
      const nodes = [];
      const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
      const at = (offset) => {   // (text node, offset in it) of a character offset in the pre
        for (const n of nodes) {
          if (offset <= n.data.length) return [n, offset];
          offset -= n.data.length;
        }
        const last = nodes[nodes.length - 1];
        return [last, last.data.length];
      };
      const text = nodes.map((n) => n.data).join('');
      let start = 0;
      for (const line of text.split('\\n')) {
        if (line.trim()) {
          const range = document.createRange();
          range.setStart(...at(start));
          range.setEnd(...at(start + line.length));
          const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0)
                                                          .map((r) => Math.round(r.top)));
          if (tops.size > 1) found.push({cell: i, chars: [...line].length, text: line.slice(0, 60)});
        }
        start += line.length + 1;
      }
    }
  }
  return found;
}"""


def markdown_display_count(path: Path) -> int:
    nb = nbformat.read(path, as_version=4)
    return sum(len(DISPLAY.findall(c.source)) for c in nb.cells if c.cell_type == "markdown")


def overflowing(measured: list[dict], width: int) -> list[str]:
    """The equations of ``measured`` whose body or number leaves its text box, as readable lines."""
    out = []
    for e in measured:
        over = max(e["right"] - e["boxRight"], e["boxLeft"] - e["left"])
        if over > 1:
            out.append(
                f"{width} px: cell {e['cell']} eq {e['number'] or '(unnumbered)'}: spans x "
                f"{e['left']}..{e['right']}, its cell's text {e['boxLeft']}..{e['boxRight']} "
                f"({over} px over): {e['text']}"
            )
    return out


def test_overflow_check_can_fail():
    """The verdict on measured boxes: inside passes, a number or body past either edge fails."""
    inside = {
        "cell": 3,
        "number": "(1)",
        "text": "x",
        "left": 400,
        "right": 960,
        "boxLeft": 378,
        "boxRight": 970,
    }
    assert overflowing([inside], 1024) == []
    assert overflowing([{**inside, "right": 1134}], 1024)[0].startswith("1024 px: cell 3 eq (1)")
    assert overflowing([{**inside, "left": 370}], 1024)
    assert overflowing([{**inside, "right": 971}], 1024) == []  # a rounding pixel is not a cut


def wrapped_lines(found: list[dict], width: int) -> list[str]:
    return [
        f"{width} px: cell {e['cell']}: a printed line of {e['chars']} characters wraps: {e['text']}"
        for e in found
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name.split("-")[0])
def test_display_equations_and_printed_lines_fit_their_cells(lab, lab_page, path):
    page = lab_page
    relpath = f"notebooks/{path.name}"
    expected = markdown_display_count(path)
    try:
        page.set_viewport_size({"width": WIDTHS[0][0], "height": WIDTHS[0][1]})
        assert command(page, "docmanager:open", {"path": relpath, "factory": "Notebook"}) == "ok"
        show_file_browser(page)
        page.wait_for_function(f"() => ({TYPESET})() >= {expected}", timeout=60_000, polling=200)
        problems, counted = [], set()
        for width, height in WIDTHS:
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(400)  # Lab lays out again on the window's resize event
            measured = page.evaluate(MEASURE)
            counted.add(len(measured))
            problems += overflowing(measured, width)
            if width == PRINTED_WIDTH and path.name.split("-")[0] not in PRINTED_NOT_YET:
                problems += wrapped_lines(page.evaluate(WRAPPED), width)
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})
    assert min(counted) >= expected, (
        f"{path.name}: {expected} display equations in the source, measured {counted}"
    )
    assert not problems, (
        f"{path.name}: display equations leave their cell (break them into aligned lines, \\\\, keeping "
        "the \\tag), or printed lines wrap (print shorter lines):\n" + "\n".join(problems)
    )

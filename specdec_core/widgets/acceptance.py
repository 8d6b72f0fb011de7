"""Notebook 01's explorer: edit p and q, see p, q, min(p, q), a(x) per symbol and α, live.

The sliders hold **non-negative weights**, not probabilities: the view divides each side by its
sum, so whatever the sliders say, p and q are valid distributions. If every weight of p (or of q)
is 0 there is no distribution to normalize; the view then shows a message asking to raise one
slider, and no number (never NaN).

Contract used by the browser tests (keep it exact):

* ``DEFAULT_P_WEIGHTS`` / ``DEFAULT_Q_WEIGHTS``: the worked example, 3 symbols; ``SLIDER_STEP``.
* :func:`acceptance_explorer` builds the widget. p sliders carry the CSS class
  ``specdec-p-slider``, q sliders ``specdec-q-slider`` (in symbol order).
* :func:`acceptance_texts` returns exactly the plain-text strings shown by the HTML widgets of
  class ``specdec-alpha`` (key ``"alpha"``) and ``specdec-acceptance`` (key ``"acceptance"``).
  They hold no markup, so a browser's ``innerText`` equals them.
"""
from __future__ import annotations

import io

import ipywidgets as w
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..distributions import check_distribution
from ..verify import acceptance_probabilities, acceptance_rate
from ..plots.acceptance import SYMBOLS, draw_acceptance, draw_message
from ..plots.style import tag_kind

#: Worked example (target p = [0.6, 0.3, 0.1], draft q = [0.2, 0.3, 0.5]) as slider weights.
DEFAULT_P_WEIGHTS = (0.6, 0.3, 0.1)
DEFAULT_Q_WEIGHTS = (0.2, 0.3, 0.5)
#: One slider step (ArrowRight on a focused handle moves a weight by this much).
SLIDER_STEP = 0.05
#: Range of each weight slider.
WEIGHT_MAX = 1.0
#: Symbol-count control range, and the weight a newly added symbol starts with (both sides).
MIN_SYMBOLS, MAX_SYMBOLS = 3, 6
NEW_SYMBOL_WEIGHT = 0.1


def normalize_weights(weights, name: str = "weights") -> np.ndarray:
    """Non-negative weights → a float distribution (weights ÷ their sum).

    Raises ``ValueError`` (naming ``name``) for an empty vector, a negative or non-finite weight,
    or weights that are all 0 (nothing to normalize).
    """
    try:
        arr = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a vector of numbers, got {weights!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty vector of weights, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite numbers")
    if (arr < 0).any():
        raise ValueError(f"{name} must be non-negative")
    total = arr.sum()
    if total <= 0:
        raise ValueError(f"all weights of {name} are 0: raise at least one {name} slider above 0")
    return check_distribution(arr / total, name)


def symbol_names(n: int) -> tuple:
    if not MIN_SYMBOLS <= n <= MAX_SYMBOLS:
        raise ValueError(f"the explorer shows {MIN_SYMBOLS} to {MAX_SYMBOLS} symbols, got {n}")
    return SYMBOLS[:n]


def _pair(p_weights, q_weights):
    """Normalized (p, q) or raise ValueError with a message fit for the learner."""
    if len(p_weights) != len(q_weights):
        raise ValueError(f"p has {len(p_weights)} weights but q has {len(q_weights)}")
    return normalize_weights(p_weights, "p"), normalize_weights(q_weights, "q")


def acceptance_texts(p_weights, q_weights) -> dict:
    """The two strings the explorer shows, for given slider weights (pure; never NaN).

    ``"alpha"``: α = Σ min(p, q) with 4 decimals. ``"acceptance"``: a(x) = min(1, p(x)/q(x)) per
    symbol with 4 decimals, or "never proposed" where q(x) = 0. When p or q has only zero
    weights, both strings carry the same readable message instead of numbers.
    """
    try:
        p, q = _pair(p_weights, q_weights)
    except ValueError as exc:
        msg = f"No distribution: {exc}."
        return {"alpha": msg, "acceptance": msg}
    names = SYMBOLS[:len(p)] if len(p) <= len(SYMBOLS) else [str(i) for i in range(len(p))]
    a = acceptance_probabilities(p, q)
    parts = [f"{s} never proposed" if qi == 0 else f"{s} {ai:.4f}"
             for s, ai, qi in zip(names, a, q)]
    return {"alpha": f"α = Σ min(p, q) = {float(acceptance_rate(p, q)):.4f}",
            "acceptance": "a(x) = min(1, p(x)/q(x)): " + " · ".join(parts)}


def normalized_text(p_weights, q_weights) -> str:
    """The normalized distributions as shown under the sliders (or the same message)."""
    try:
        p, q = _pair(p_weights, q_weights)
    except ValueError as exc:
        return f"No distribution: {exc}."
    fmt = lambda v: "[" + ", ".join(f"{x:.3f}" for x in v) + "]"  # noqa: E731
    return f"p = {fmt(p)} · q = {fmt(q)} (each side's weights divided by their sum)"


def render_png(fig) -> bytes:
    """The figure as PNG bytes (Agg canvas; no pyplot state involved)."""
    buf = io.BytesIO()
    FigureCanvasAgg(fig).print_png(buf, pil_kwargs={"compress_level": 1})  # fast, local anyway
    return buf.getvalue()


def make_weight_slider(value, description, css_class):
    s = w.FloatSlider(value=float(value), min=0.0, max=WEIGHT_MAX, step=SLIDER_STEP,
                      description=description, readout_format=".2f", continuous_update=True,
                      layout=w.Layout(width="260px"), style={"description_width": "28px"})
    s.add_class(css_class)
    return s


class AcceptanceView:
    """One figure, updated in place and rendered to PNG bytes on every update.

    Fast by construction: no pyplot, a small dpi, fixed margins (a constrained layout would cost
    about as much again as the drawing), and the bars and labels are *moved*, not recreated,
    while the number of symbols stays the same.
    """

    def __init__(self, width=6.0, height=3.0, dpi=90):
        self.fig = Figure(figsize=(width, height), dpi=dpi)
        self.fig.subplots_adjust(left=0.1, right=0.98, top=0.9, bottom=0.1)
        self.pixel_width = round(width * dpi)
        self.ax = self.fig.add_subplot()
        self._key, self._update = None, None

    def png(self, p_weights, q_weights) -> bytes:
        try:
            p, q = _pair(p_weights, q_weights)
        except ValueError as exc:
            self.ax.clear()
            self._key = None
            draw_message(self.ax, f"No distribution:\n{exc}.")
        else:
            if self._key != len(p):
                self.ax.clear()
                self._update = draw_acceptance(self.ax, p, q, SYMBOLS[:len(p)])
                tag_kind(self.ax, "derived")
                self._key = len(p)
            else:
                self._update(p, q)
        return render_png(self.fig)


def acceptance_explorer(p_weights=DEFAULT_P_WEIGHTS, q_weights=DEFAULT_Q_WEIGHTS) -> w.VBox:
    """The explorer widget of notebook 01.

    Attributes exposed for tests: ``count`` (IntSlider 3..6), ``p_sliders``, ``q_sliders``
    (lists, symbol order), ``alpha_html``, ``acceptance_html``, ``normalized_html``, ``image``,
    ``update()`` (recompute from the sliders) and ``weights()`` → (p weights, q weights).
    """
    if len(p_weights) != len(q_weights):
        raise ValueError(f"p_weights has {len(p_weights)} entries but q_weights has {len(q_weights)}")
    symbol_names(len(p_weights))
    view = AcceptanceView()
    p_sliders = [make_weight_slider(v, s, "specdec-p-slider") for v, s in zip(p_weights, SYMBOLS)]
    q_sliders = [make_weight_slider(v, s, "specdec-q-slider") for v, s in zip(q_weights, SYMBOLS)]
    count = w.IntSlider(value=len(p_weights), min=MIN_SYMBOLS, max=MAX_SYMBOLS, step=1,
                        description="symbols", continuous_update=False)
    count.add_class("specdec-symbol-count")
    p_col = w.VBox([w.HTML("<b>target p</b> (weights)")])
    q_col = w.VBox([w.HTML("<b>draft q</b> (weights)")])
    alpha_html, acceptance_html, normalized_html = w.HTML(), w.HTML(), w.HTML()
    alpha_html.add_class("specdec-alpha")
    acceptance_html.add_class("specdec-acceptance")
    normalized_html.add_class("specdec-normalized")
    image = w.Image(format="png", layout=w.Layout(width=f"{view.pixel_width}px"))  # 1:1, crisp
    image.add_class("specdec-acceptance-figure")
    box = w.VBox()

    def weights():
        return [s.value for s in box.p_sliders], [s.value for s in box.q_sliders]

    def update(_=None):
        pw, qw = weights()
        texts = acceptance_texts(pw, qw)
        alpha_html.value = texts["alpha"]
        acceptance_html.value = texts["acceptance"]
        normalized_html.value = normalized_text(pw, qw)
        image.value = view.png(pw, qw)

    def layout_sliders():
        p_col.children = p_col.children[:1] + tuple(box.p_sliders)
        q_col.children = q_col.children[:1] + tuple(box.q_sliders)

    def on_count(change):
        n = change["new"]
        while len(box.p_sliders) < n:
            s = SYMBOLS[len(box.p_sliders)]
            for sliders, cls in ((box.p_sliders, "specdec-p-slider"), (box.q_sliders, "specdec-q-slider")):
                sl = make_weight_slider(NEW_SYMBOL_WEIGHT, s, cls)
                sl.observe(update, names="value")
                sliders.append(sl)
        del box.p_sliders[n:], box.q_sliders[n:]
        layout_sliders()
        update()

    box.p_sliders, box.q_sliders = p_sliders, q_sliders
    for s in p_sliders + q_sliders:
        s.observe(update, names="value")
    count.observe(on_count, names="value")
    layout_sliders()
    box.children = [count, w.HBox([p_col, q_col]), normalized_html, alpha_html, acceptance_html,
                    image]
    box.add_class("specdec-acceptance-explorer")
    box.count, box.alpha_html, box.acceptance_html = count, alpha_html, acceptance_html
    box.normalized_html, box.image, box.update, box.weights, box.view = (
        normalized_html, image, update, weights, view)
    update()
    return box

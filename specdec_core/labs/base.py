"""The one way to build an interactive lab: a :class:`LabSpec`, the :class:`Lab` widget, :func:`show`.

Writing a lab
=============
Fill in a :class:`LabSpec` (``labs/counts.py`` is the shortest example)::

    SPEC = LabSpec(
        name="counts",                              # CSS class lab-counts, one word, a-z0-9-
        defaults={"alpha": 0.6, "gamma": 2},        # THE home of the default state
        controls={"alpha": float_slider("α", 0, 1, 0.01),   # key -> how to build its widget
                  "gamma": int_slider("γ", 0, 16)},
        texts=count_texts,                          # pure: state -> {key: plain text}
        plot=partial(CountsPlot, MAX_GAMMA),        # plots/: the figure (optional)
        problem=None,                               # optional: state -> message if impossible
    )

* ``defaults``: every state key and its default. A control starts at exactly its default
  (sliders check the value lies on their step grid). State keys without a control (e.g. the
  quiz's graded answer) are allowed: actions change them.
* ``texts(state) -> dict[str, str]``: pure, always the same keys, never "nan". A value is plain
  text (escaped, ``\\n`` becomes a line break) unless it is an :class:`Html` (trusted markup).
* ``plot``: a factory of a :class:`~specdec_core.plots.frames.LabPlot` — a subclass, or a
  ``functools.partial`` of one. ``plot(blit=True)`` is the live lab's figure, ``plot(blit=False)``
  the static copy's; each has ``update(state)``, ``.fig`` and ``.png()``, and the class declares
  its pixel ``size`` (≤ 760 px wide, shown 1:1). No ``plot``: the lab has no figure.
* ``problem(state) -> str | None``: a message when the state is impossible; the figure is then a
  greyed frame with that message (``update`` is not called) and the root gets the class
  ``lab-impossible``. ``texts`` must still read well for such states.
* ``actions``: buttons, key -> :class:`Action` (label, ``fn(state) -> changes``).
* ``groups``: optional ((heading, (keys…)), …): titled groups are columns side by side; a group
  with an empty heading takes a full row. ``hidden(state) -> keys``: controls not shown now.
* ``note``: one plain line above the controls; ``static``: optional ``() -> html`` replacing the
  static copy's body; ``order``: optional top-to-bottom order of "actions", "controls",
  "text:<key>", "figure".

Public attributes of every :class:`Lab` (tests and benchmarks use only these):
``.spec``, ``.state`` (dict copy), ``.controls`` (key -> widget), ``.actions`` (key -> Button),
``.texts`` (key -> ``ipywidgets.HTML``), ``.figure`` (``ipywidgets.Image`` or ``None``; its value
is the frame as a ``data:`` URL), ``.png`` (that frame's PNG bytes, or ``None``),
``.set(**changes)`` (several values, one refresh), ``.press(key)``, ``.refresh()``, ``.last_texts``.

DOM contract (browser tests rely on it exactly)
===============================================
* live root: CSS classes ``specdec-lab lab-<name>`` (plus ``lab-impossible`` while ``problem``
  says so; plus Jupyter's ``jupyter-widgets-disconnected`` once the kernel is gone);
* each control (and action button): ``lab-control-<key>``; hidden controls get ``display: none``;
* each text readout: ``lab-text-<key>``; its ``innerText`` is ``texts(state)[key]``;
* the figure: ``lab-figure`` (an ``<img>``, exactly ``size`` pixels, ``max-width: 100%``);
* the restart note: ``lab-restart-note`` inside the live root, hidden while connected;
* the static copy (a separate HTML output right after the live widget): ``lab-static
  lab-static-<name>``, its readouts ``lab-static-text-<key>``, its image ``lab-static-figure``.

What a learner sees, and why
============================
* **With a kernel**: :func:`show` displays the live :class:`Lab`, then the static copy. A CSS
  ``:has`` rule (shipped inside the static copy) hides the static copy when the output just above
  it holds a live ``.specdec-lab``, so the learner sees one lab.
* **Without a kernel** (GitHub, nbviewer, an untrusted notebook in Lab): the widget output falls
  back to its ``text/plain`` — "Interactive lab <name> — run this cell with a kernel; a static copy
  is shown below." (:class:`LabDisplay`), never a raw ``VBox(children=…)`` repr — and the static
  copy (the lab's plot and ``texts`` at the defaults, computed from them, never retyped) is
  visible.
* **After a kernel restart** the widget manager marks every view ``jupyter-widgets-disconnected``
  (ipywidgets 8, ``DOMWidgetView._comm_live_update``). A CSS rule shipped in the lab's own note
  widget turns that class into a visible note "The kernel restarted (or this is a saved copy):
  re-run this cell to use the controls", and greys and disables the controls (no "Cannot send").
  The same note shows on a lab rendered from saved widget state (its models are not live either).
  ``tests/browser/test_lab_smoke.py`` walks each of these in JupyterLab (restart, re-run,
  save → reopen, reopen without saved state).
* **A stored course notebook keeps no widgets** (``tools/execute_notebooks.py: stored_form``): no
  widget view in its outputs, no ``metadata.widgets``; each lab cell keeps the plain text above and
  its static copy. So a freshly opened notebook is exactly "without a kernel" until its cells run,
  and it opens unmodified: with stored widget state, ipywidgets' Lab manager restores it on open
  and, under ``saveState``, marks the notebook dirty for every model it registers (issue 25;
  ``tests/browser/test_open_clean.py``).
* **Save, close, reopen** (the learner's own work): Lab saves widget state. ``make lab`` and Binder
  install ``binder/overrides.json`` (``{"@jupyter-widgets/jupyterlab-manager:plugin": {"saveState":
  true}}``) into ``<env>/share/jupyter/lab/settings/``, so a notebook the learner ran and saved
  carries the state of the widgets its outputs point at; reopening renders them (with the note, as
  they are not live) and, as restoring state does, marks that notebook modified (nothing is lost). In a Lab without that setting the reopened widget output fails to find its
  model; the static copy's CSS hides that error and the static copy shows instead
  (``tests/browser/test_lab_smoke.py``); re-running the cell brings the live lab back.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as w
import numpy as np

from ..plots.frames import MAX_WIDTH_PX, message_png, plot_size, png_data_url

__all__ = [
    "Action",
    "Control",
    "Html",
    "Lab",
    "LabDisplay",
    "LabSpec",
    "checkbox",
    "dropdown",
    "float_slider",
    "int_slider",
    "radio",
    "show",
    "static_html",
    "toggle",
]


class Html(str):
    """A text value that is already HTML (inserted verbatim); plain ``str`` values are escaped."""


# ---------------------------------------------------------------------------------- controls


@dataclass(frozen=True)
class Control:
    """How to build one control widget from its default value. Use the helpers below."""

    kind: str  # "int", "float", "dropdown", "checkbox", "toggle", "radio"
    label: str
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    options: tuple = ()  # (label, value) pairs for dropdown / toggle / radio
    fmt: str | None = None  # slider readout format, e.g. ".2f"
    width: int = 340  # pixels; controls wrap, so any width ≤ 760 fits
    continuous: bool = True

    def check(self, value, key: str = "value"):
        """Raise ``ValueError`` unless ``value`` is a value this control can hold exactly;
        returns it as the control holds it (a numpy number as the Python int or float)."""
        if self.kind in ("int", "float"):
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)
            ):
                raise ValueError(f"{key} must be a finite number, got {value!r}")
            if isinstance(value, np.generic):
                value = value.item()
            if not self.lo <= value <= self.hi:  # NaN and ±inf fail this too
                raise ValueError(f"{key} must lie in [{self.lo}, {self.hi}], got {value!r}")
            k = (value - self.lo) / self.step
            if abs(k - round(k)) > 1e-9:
                raise ValueError(
                    f"{key} = {value!r} is not on the slider's grid "
                    f"({self.lo} + k·{self.step}); it would snap"
                )
            if self.kind == "int" and value != int(value):
                raise ValueError(f"{key} must be an integer, got {value!r}")
        elif self.kind == "radio" and value is None:
            return value  # nothing selected yet
        elif self.kind == "checkbox":
            if not isinstance(value, bool):
                raise ValueError(f"{key} must be True or False, got {value!r}")
        elif value not in [v for _, v in self.options]:
            raise ValueError(f"{key} must be one of {[v for _, v in self.options]}, got {value!r}")
        return value

    def build(self, value, key: str) -> w.Widget:
        """The widget, starting at exactly ``value`` (checked)."""
        self.check(value, key)
        lay = w.Layout(width=f"{self.width}px", max_width="100%")
        style = {"description_width": "initial"}
        if self.kind == "int":
            c = w.IntSlider(
                value=int(value),
                min=int(self.lo),
                max=int(self.hi),
                step=int(self.step),
                description=self.label,
                continuous_update=self.continuous,
                layout=lay,
                style=style,
            )
        elif self.kind == "float":
            c = w.FloatSlider(
                value=float(value),
                min=float(self.lo),
                max=float(self.hi),
                step=float(self.step),
                description=self.label,
                readout_format=self.fmt or ".2f",
                continuous_update=self.continuous,
                layout=lay,
                style=style,
            )
        elif self.kind == "dropdown":
            c = w.Dropdown(
                options=list(self.options), value=value, description=self.label, layout=lay, style=style
            )
        elif self.kind == "toggle":
            c = w.ToggleButtons(
                options=list(self.options),
                value=value,
                description=self.label,
                style={"button_width": "auto", "description_width": "initial"},
                layout=w.Layout(width="auto", max_width="100%"),
            )
        elif self.kind == "radio":
            c = w.RadioButtons(
                options=list(self.options),
                value=value,
                description=self.label,
                layout=w.Layout(width="auto", max_width="100%"),
                style=style,
            )
        elif self.kind == "checkbox":
            c = w.Checkbox(value=value, description=self.label, indent=False, layout=lay)
        else:
            raise ValueError(f"unknown control kind {self.kind!r}")
        if c.value != value:
            raise ValueError(f"{key}: the control starts at {c.value!r}, not its default {value!r}")
        c.add_class(f"lab-control-{key}")
        return c


def int_slider(label: str, lo: int, hi: int, step: int = 1, **kw) -> Control:
    return Control("int", label, lo, hi, step, **kw)


def float_slider(label: str, lo: float, hi: float, step: float, fmt: str = ".2f", **kw) -> Control:
    return Control("float", label, lo, hi, step, fmt=fmt, **kw)


def _pairs(options) -> tuple:
    return tuple(o if isinstance(o, tuple) else (str(o), o) for o in options)


def dropdown(label: str, options, **kw) -> Control:
    """``options``: values, or (label, value) pairs."""
    return Control("dropdown", label, options=_pairs(options), **kw)


def toggle(label: str, options, **kw) -> Control:
    return Control("toggle", label, options=_pairs(options), **kw)


def radio(label: str, options, **kw) -> Control:
    return Control("radio", label, options=_pairs(options), **kw)


def checkbox(label: str, **kw) -> Control:
    return Control("checkbox", label, **kw)


@dataclass(frozen=True)
class Action:
    """A button: ``fn(state) -> changes`` (a dict passed to :meth:`Lab.set`)."""

    label: str
    fn: Callable[[Mapping], Mapping]
    tooltip: str = ""
    primary: bool = False


# ---------------------------------------------------------------------------------- the spec

_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


@dataclass(frozen=True)
class LabSpec:
    """Everything that defines a lab (see the module docstring)."""

    name: str
    defaults: Mapping[str, Any]
    controls: Mapping[str, Control]
    texts: Callable[[Mapping], dict]
    plot: Callable[..., Any] | None = None  # a LabPlot factory: plot(blit=...) -> LabPlot
    problem: Callable[[Mapping], str | None] | None = None
    actions: Mapping[str, Action] = field(default_factory=dict)
    groups: tuple = ()
    hidden: Callable[[Mapping], Any] | None = None
    note: str = ""  # one plain line shown above the controls (optional)
    static: Callable[[], str] | None = None  # HTML body of the static copy (default: texts + figure)
    order: tuple = ()  # top-to-bottom parts: "actions", "controls", "text:<key>", "figure"

    def __post_init__(self):
        if not _NAME.match(self.name):
            raise ValueError(f"name must match {_NAME.pattern}, got {self.name!r}")
        for key in self.controls:
            if key not in self.defaults:
                raise ValueError(f"control {key!r} has no default in defaults")
            self.controls[key].check(self.defaults[key], key)
        for key in self.actions:
            if key in self.controls:
                raise ValueError(f"action {key!r} has the name of a control")
        if self.plot is not None:
            plot_size(self.plot)  # declared, and at most MAX_WIDTH_PX wide
        grouped = [k for _, keys in self.groups for k in keys]
        if self.groups and sorted(grouped) != sorted(self.controls):
            raise ValueError("groups must list every control exactly once")

    def with_defaults(self, **changes) -> LabSpec:
        """The same lab starting from other values (checked like the defaults)."""
        unknown = set(changes) - set(self.defaults)
        if unknown:
            raise ValueError(f"unknown state keys {sorted(unknown)}; known: {list(self.defaults)}")
        from dataclasses import replace

        return replace(self, defaults={**self.defaults, **changes})


def text_html(value) -> str:
    if isinstance(value, Html):
        return str(value)
    return html.escape(str(value)).replace("\n", "<br>")


def _problem(spec: LabSpec, state) -> str | None:
    return spec.problem(state) if spec.problem is not None else None


#: Shipped inside every lab's note widget. ``jupyter-widgets-disconnected`` is set by ipywidgets 8
#: on every view whose model lost its kernel (restart, or rendered from saved state).
_LIVE_CSS = """<style>
.specdec-lab .lab-restart-note {display: none;}
.specdec-lab.jupyter-widgets-disconnected .lab-restart-note {display: block; background: #fff3cd;
  border: 2px solid #E69F00; padding: 4px 8px; color: #000; font-weight: bold;}
.specdec-lab.jupyter-widgets-disconnected .lab-controls {opacity: 0.45; pointer-events: none;}
.specdec-lab .jupyter-widgets-disconnected::before {display: none;}
.specdec-lab.lab-impossible .lab-figure {opacity: 0.6;}
.specdec-lab .widget-html-content {line-height: 1.45; overflow-wrap: anywhere;}
.specdec-lab .widget-html {height: auto;}
.specdec-lab .widget-html:has(> .widget-html-content:empty) {display: none;}
</style>"""
RESTART_NOTE = (
    "The kernel restarted (or this is a saved copy): the controls are not connected. "
    "Re-run this cell to use the lab."
)

#: Shipped inside every static copy. First rule: hide the copy when the output just above holds a
#: live lab. Second rule: when the output just above holds no lab (ipywidgets could not render it:
#: "Loading widget...", or "Error displaying widget: model not found" after a reopen whose saved
#: state was not restored in time), hide that output, so the learner sees the static copy instead
#: of an error. Untrusted notebooks drop <style>, so there the friendly text/plain line stays.
_STATIC_CSS = (
    "<style>.jp-OutputArea-child:has(.specdec-lab) + .jp-OutputArea-child .lab-static {display: none;}"
    ".jp-OutputArea-child:not(:has(.specdec-lab)):has(+ .jp-OutputArea-child .lab-static)"
    " {display: none;}</style>"
)


# ---------------------------------------------------------------------------------- the widget


class Lab(w.VBox):
    """The live widget of one :class:`LabSpec` (see the module docstring for its attributes)."""

    def __init__(self, spec: LabSpec, **start):
        if not isinstance(spec, LabSpec):
            raise ValueError(f"spec must be a LabSpec, got {type(spec).__name__}")
        if start:
            spec = spec.with_defaults(**start)
        self.spec = spec
        self._state = dict(spec.defaults)
        self._busy = False
        self.controls = {k: c.build(spec.defaults[k], k) for k, c in spec.controls.items()}
        self.actions = {}
        for key, act in spec.actions.items():
            b = w.Button(
                description=act.label,
                tooltip=act.tooltip or act.label,
                button_style="primary" if act.primary else "",
                layout=w.Layout(width="auto"),
            )
            b.add_class(f"lab-control-{key}")
            b.on_click(lambda _b, key=key: self.press(key))
            self.actions[key] = b
        first = spec.texts(self._state)
        self._keys = tuple(first)
        self.texts = {}
        for key in self._keys:
            t = w.HTML(layout=w.Layout(max_width="100%"))
            t.add_class(f"lab-text-{key}")
            self.texts[key] = t
        self.figure = None
        self._png = None
        self._plot = None
        if spec.plot is not None:
            self._plot = spec.plot(blit=True)
            self._size = plot_size(spec.plot)
            self.figure = _figure_widget(self._size)
        note = w.HTML(_LIVE_CSS + html.escape(RESTART_NOTE))
        note.add_class("lab-restart-note")
        children = [note]
        if spec.note:
            children.append(w.HTML(text_html(spec.note)))
        order = spec.order or ("actions", "controls", *(f"text:{k}" for k in self._keys), "figure")
        parts = {
            "actions": self._actions_box(),
            "controls": self._controls_box(),
            "figure": self.figure,
            **{f"text:{k}": t for k, t in self.texts.items()},
        }
        if set(order) - set(parts) or {k for k in parts if parts[k] is not None} - set(order):
            raise ValueError(f"order must list each of {sorted(parts)} once, got {order}")
        children += [parts[k] for k in order if parts[k] is not None]
        super().__init__(children, layout=w.Layout(max_width=f"{MAX_WIDTH_PX}px"))
        self.add_class("specdec-lab")
        self.add_class(f"lab-{spec.name}")
        for c in self.controls.values():
            c.observe(self._on_change, names="value")
        self.refresh()

    # -- layout
    def _actions_box(self) -> w.Box | None:
        if not self.actions:
            return None
        box = w.Box(list(self.actions.values()), layout=_wrap())
        box.add_class("lab-controls")
        return box

    def _controls_box(self) -> w.Box | None:
        wrap = _wrap()
        parts = []
        if self.spec.groups:
            # a titled group is a column (columns sit side by side and wrap); an untitled group
            # takes a full row of its own
            cols = [
                w.VBox(
                    ([w.HTML(f"<b>{html.escape(h)}</b>")] if h else []) + [self.controls[k] for k in keys],
                    layout=w.Layout(margin="0 12px 0 0", max_width="100%", width=None if h else "100%"),
                )
                for h, keys in self.spec.groups
            ]
            parts.append(w.Box(cols, layout=wrap))
        elif self.controls:
            parts.append(w.Box(list(self.controls.values()), layout=wrap))
        if not parts:
            return None
        box = w.VBox(parts, layout=w.Layout(max_width="100%"))
        box.add_class("lab-controls")
        return box

    # -- state
    @property
    def state(self) -> dict:
        """The current state (a copy): control values and the state keys actions change."""
        s = dict(self._state)
        for k, c in self.controls.items():
            s[k] = c.value
        return s

    def _on_change(self, change):
        if not self._busy:
            self.refresh()

    def set(self, **changes) -> Lab:
        """Change several state values at once (one refresh). Unknown keys or values a control
        cannot hold exactly raise ``ValueError``."""
        unknown = set(changes) - set(self._state)
        if unknown:
            raise ValueError(f"unknown state keys {sorted(unknown)}; known: {list(self._state)}")
        changes = {
            k: self.spec.controls[k].check(v, k) if k in self.spec.controls else v for k, v in changes.items()
        }
        self._busy = True
        try:
            for k, v in changes.items():
                if k in self.controls:
                    self.controls[k].value = v
                self._state[k] = v
        finally:
            self._busy = False
        self.refresh()
        return self

    def press(self, key: str) -> Lab:
        """Run the action ``key`` (what clicking its button does)."""
        if key not in self.spec.actions:
            raise ValueError(f"unknown action {key!r}; known: {list(self.spec.actions)}")
        return self.set(**self.spec.actions[key].fn(self.state))

    def refresh(self) -> dict:
        """Recompute texts and figure from the current state; returns the texts shown.

        Everything is computed first and only then sent, figure first: the page starts decoding
        the frame at once, and it does not redraw readouts while the kernel is still drawing (on a
        2-core machine the two would compete for the CPU)."""
        state = self.state
        texts = self.spec.texts(state)
        if tuple(texts) != self._keys:
            raise ValueError(f"texts() returned keys {tuple(texts)}, expected {self._keys}")
        html_texts = {k: text_html(v) for k, v in texts.items()}
        hide = set(self.spec.hidden(state)) if self.spec.hidden is not None else None
        msg = _problem(self.spec, state)
        png = None
        if self.figure is not None:
            png = message_png(*self._size, msg) if msg is not None else _frame(self._plot, state)
        # -- send
        if png is not None and self._png != png:
            self._png = png
            self.figure.value = png_data_url(png)
        for k, new in html_texts.items():
            if self.texts[k].value != new:
                self.texts[k].value = new
        if hide is not None:
            for k, c in self.controls.items():
                c.layout.display = "none" if k in hide else None
        if msg is None:
            self.remove_class("lab-impossible")
        else:
            self.add_class("lab-impossible")
        self.last_texts = texts
        return texts

    @property
    def png(self) -> bytes | None:
        """The PNG bytes of the figure shown now (``None`` for a lab without a figure)."""
        return self._png


def _figure_widget(size) -> w.Image:
    # Each frame goes to the page as a data: URL (format "url"), not as PNG bytes: ipywidgets shows
    # PNG bytes through a blob: URL, which Chromium fetches and decodes later — measured in
    # headless Chromium, decode-to-paint median 16 ms for a blob: URL, 3 ms for a data: URL of the
    # same frame (1/3 more bytes on the wire: 20-70 kB per frame).
    img = w.Image(
        format="url",
        width=size[0],
        height=size[1],
        layout=w.Layout(width=f"{size[0]}px", height="auto", max_width="100%"),
    )
    img.add_class("lab-figure")
    return img


def _wrap() -> w.Layout:
    return w.Layout(display="flex", flex_flow="row wrap", align_items="flex-start", max_width="100%")


def _frame(plot, state) -> bytes:
    plot.update(state)
    return plot.png()


def figure_size(spec: LabSpec) -> tuple[int, int]:
    """The pixel size of the lab's figure, as its plot declares it (nothing is drawn)."""
    if spec.plot is None:
        raise ValueError(f"lab {spec.name} has no figure")
    return plot_size(spec.plot)


# ---------------------------------------------------------------------------------- display


def static_png(spec: LabSpec) -> bytes | None:
    """PNG of the figure at the defaults (``None`` for a lab without a figure)."""
    if spec.plot is None:
        return None
    msg = _problem(spec, spec.defaults)
    if msg is not None:
        return message_png(*figure_size(spec), msg)
    return _frame(spec.plot(blit=False), spec.defaults)


def static_html(spec: LabSpec, caption: str | None = None) -> str:
    """The static copy: the texts and the figure at the defaults, as plain HTML (no widget)."""
    texts = spec.texts(spec.defaults)
    cap = (
        caption
        if caption is not None
        else ("Static copy at the default settings (run the cell above with a kernel for the live lab).")
    )
    parts = [
        _STATIC_CSS,
        f"<div class='lab-static lab-static-{spec.name}'>",
        f"<p><i>{html.escape(cap)}</i></p>",
    ]
    if spec.static is not None:
        return "".join(parts) + spec.static() + "</div>"
    for k, v in texts.items():
        parts.append(f"<div class='lab-static-text-{k}'>{text_html(v)}</div>")
    png = static_png(spec)
    if png is not None:
        wpx, hpx = figure_size(spec)
        data = base64.b64encode(png).decode("ascii")
        parts.append(
            f"<img class='lab-static-figure' src='data:image/png;base64,{data}' "
            f"width='{wpx}' height='{hpx}' style='max-width:100%;height:auto' "
            f"alt='{html.escape(spec.name)} at its defaults'>"
        )
    parts.append("</div>")
    return "".join(parts)


class LabDisplay:
    """Displays a widget with a friendly ``text/plain`` (what shows without a kernel or in an
    untrusted notebook) instead of the raw ``VBox(children=…)`` repr."""

    def __init__(self, widget: w.Widget, name: str):
        self.widget, self.name = widget, name

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data = dict(data or {})
        data["text/plain"] = (
            f"Interactive lab {self.name} — run this cell with a kernel; a static copy is shown below."
        )
        return data

    def __repr__(self):
        return f"<LabDisplay {self.name}>"


def show(lab: Lab | LabSpec, static: bool = True) -> None:
    """Display the live lab (with the friendly fallback) and, below it, the static copy at the
    defaults, which hides itself while the live lab is rendered. Returns ``None`` (so a cell
    ending in ``show(...)`` displays nothing twice); build a :class:`Lab` yourself to keep one."""
    from IPython.display import HTML, display

    if isinstance(lab, LabSpec):
        lab = Lab(lab)
    if not isinstance(lab, Lab):
        raise ValueError(f"lab must be a Lab or a LabSpec, got {type(lab).__name__}")
    display(LabDisplay(lab, lab.spec.name))
    if static:
        display(HTML(static_html(lab.spec)))


def still(spec: LabSpec, **changes: Any) -> Any:
    """The lab's figure at its defaults with ``changes`` applied, as an image shown 1:1 (for a
    notebook's fixed scenario next to a lab: the scenario reads the lab's defaults, never
    retypes them). Raises ``ValueError`` for a lab without a figure or an impossible state."""
    from IPython.display import Image

    if spec.plot is None:
        raise ValueError(f"lab {spec.name} has no figure")
    spec = spec.with_defaults(**changes)
    for k, v in changes.items():
        if k in spec.controls:
            spec.controls[k].check(v, k)
    msg = _problem(spec, spec.defaults)
    if msg is not None:
        raise ValueError(f"changes give an impossible state: {msg}")
    return Image(data=static_png(spec), format="png", width=figure_size(spec)[0])

"""What scoring T positions in one forward pass costs: a prediction from the roofline, and the
timing that tests it.

Notebook 06's roofline says a pass over T positions takes about max(bytes ÷ bandwidth,
FLOPs ÷ rate): while the first term is larger the pass is *memory-bound* and extra positions
are nearly free. For a dense model at batch 1 and short context the bytes are the weights
(read once per pass if the product is written to read them once) and the FLOPs are
2 · parameters · T. Two predictions come from the same two measured numbers:

* **roofline** ``max(memory, compute)``: reading and arithmetic fully overlap (the bound);
* **serial** ``memory + compute``: no overlap at all, as when one core streams a block of
  weights and then multiplies it (what a numpy loop over blocks on one thread does).

Both are made from a bandwidth and a compute rate measured *before* and apart from the pass
they predict (:func:`specdec_core.measured.timer.read_floor_ms`, :func:`compute_rate`), so they are tested on data they did
not see. :func:`time_products` times the weight products of a whole model for several T in two
layouts, interleaved, for notebook 09's live cell and ``benchmarks/bench_passcost.py``.
"""

from __future__ import annotations

import numpy as np

from ..distributions import check_int, check_int_sequence, check_positive
from ..measured.records import CostCurve
from ..measured.studies import PassCost, PassPrediction
from ..measured.timer import time_calls
from .layout import as_rows
from .model import product


def _check_Ts(Ts) -> list:
    return list(check_int_sequence(Ts, "Ts", low=1))


def _check_positive(x, name):
    return float(check_positive(x, name))


def predict_pass_ms(Ts, *, weight_bytes, params, bandwidth, rate) -> dict[int, PassPrediction]:
    """{T: PassPrediction (memory, compute, roofline, serial ms)} for the weight products of
    one pass over T positions. ``bandwidth`` in bytes/s; ``rate`` in FLOP/s, either one number
    or a dict {T: FLOP/s} (a product's rate depends on T: one row runs as a matrix–vector
    product at a fraction of the matrix–matrix rate). FLOPs = 2 · params · T."""
    Ts = _check_Ts(Ts)
    wb = _check_positive(weight_bytes, "weight_bytes")
    n = _check_positive(params, "params")
    bw = _check_positive(bandwidth, "bandwidth")
    if isinstance(rate, dict):
        missing = [T for T in Ts if T not in rate]
        if missing:
            raise ValueError(f"rate has no entry for T = {missing}")
        rates = {T: _check_positive(rate[T], f"rate[{T}]") for T in Ts}
    else:
        r = _check_positive(rate, "rate")
        rates = {T: r for T in Ts}
    out = {}
    for T in Ts:
        mem = wb / bw * 1e3
        comp = 2 * n * T / rates[T] * 1e3
        out[T] = PassPrediction(
            memory_ms=mem, compute_ms=comp, roofline_ms=max(mem, comp), serial_ms=mem + comp
        )
    return out


def relative(curve: dict, key: str | None = None) -> dict:
    """{T: cost(T) ÷ cost(1)} of a curve {T: ms} (or {T: record}, its field ``key`` in ms)."""
    if not isinstance(curve, dict) or 1 not in curve:
        raise ValueError("curve must be a dict {T: ms} holding T = 1")
    get = (lambda v: getattr(v, key)) if key else (lambda v: v)
    ms = {T: _check_positive(get(v), f"curve[{T}]") for T, v in curve.items()}  # a time: > 0, finite
    return {T: v / ms[1] for T, v in ms.items()}


def matrices(weights) -> list:
    """The 2-D weight matrices of a packed weight dict, largest first (the products of a pass)."""
    mats = [w for w in weights.values() if getattr(w, "ndim", 0) == 2]
    if not mats:
        raise ValueError("weights holds no 2-D matrices")
    return sorted(mats, key=lambda w: -w.size)


def compute_rate(Ts, dim: int = 576, out: int = 256, inner: int = 200, reps: int = 5) -> dict:
    """{T: FLOP/s} of :func:`product` on a small cache-resident weight (out × dim float32,
    about 0.6 MB): arithmetic without memory traffic, measured apart from the model's pass."""
    Ts = _check_Ts(Ts)
    dim, out = check_int(dim, "dim", 1, 1 << 16), check_int(out, "out", 1, 1 << 16)
    inner, reps = check_int(inner, "inner", 1, 10**6), check_int(reps, "reps", 1, 1000)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((out, dim), dtype=np.float32)

    def products(x):
        def run():
            for _ in range(inner):
                product(x, w)

        return run

    res = {}
    for T in Ts:  # one T at a time, its repeats back to back
        x = rng.standard_normal((T, dim), dtype=np.float32)
        seconds = time_calls({T: products(x)}, reps, sweep=False, scale=1)[T].median
        res[T] = 2 * out * dim * T * inner / seconds
    return res


def stored_layout(mats) -> list:
    """Transposed copies (in, out) of the matrices: the layout the forward pass used before
    (``x @ w`` with w stored (in, out)); for timing the two layouts side by side."""
    return [np.ascontiguousarray(as_rows(w).T) for w in mats]


def time_products(mats, Ts, *, old=None, reps: int = 5, seed: int = 0) -> dict[str, CostCurve]:
    """The weight products of one pass over T positions for each T, as cost curves (ms):
    ``"product"`` (:func:`product` on weights stored (out, in)) and, with ``old`` (the same
    matrices stored (in, out), see :func:`stored_layout`), ``"x@w"`` (one BLAS call, as before).
    Interleaved by the one timer: every repeat runs every (T, layout) once, in the same order, so
    slow spells of a shared machine fall on all of them."""
    Ts = _check_Ts(Ts)
    check_int(reps, "reps", 1)
    rng = np.random.default_rng(seed)
    xs = {T: [rng.standard_normal((T, w.shape[1]), dtype=np.float32) for w in mats] for T in Ts}
    layouts = {"product": lambda x, i: product(x, mats[i])}
    if old is not None:
        if len(old) != len(mats):
            raise ValueError("old must hold the same matrices as mats, transposed")
        layouts["x@w"] = lambda x, i: x @ old[i]

    def one_pass(f, T):
        def run():
            for i, x in enumerate(xs[T]):
                f(x, i)

        return run

    calls = {(name, T): one_pass(f, T) for T in Ts for name, f in layouts.items()}
    spreads = time_calls(calls, int(reps), sweep=False)
    return {
        name: CostCurve({T: spreads[name, T] for T in Ts}, name, reps=int(reps), threads=None)
        for name in layouts
    }


# ---------------------------------------------------------------- reading stored results


def _record(pc) -> PassCost:
    if not isinstance(pc, PassCost):
        raise ValueError(
            f"pc must be the PassCost record (measured.read_stored('passcost.json')), got {type(pc).__name__}"
        )
    return pc


def curves(pc: PassCost, threads: int = 1) -> tuple[dict, dict, dict]:
    """(products {layout: {T: ms}}, forward {T: ms}, predicted {T: PassPrediction}) of the stored
    pass costs (medians), for :func:`specdec_core.plots.passcost.passcost_figure`."""
    r = _record(pc).at(threads)
    products = {name: c.median() for name, c in r.products.items()}
    return products, r.forward.median(), dict(sorted(r.predicted.items()))


def how(pc: PassCost) -> str:
    """Where, when and how the stored pass costs were measured (``pc``: the stored passcost.json,
    :func:`specdec_core.measured.read_stored`)."""
    rec = _record(pc)
    machine = rec.machine.how(rec.script).replace(
        ", ".join(f"{api} × {n} threads" for api, n in rec.machine.blas),
        "1 and then 2 threads (each line says which)",
    )
    return f"{machine}; {pc.method}"


def input_lines(pc: PassCost, threads: int = 1) -> list[str]:
    """The prediction's inputs, measured before and apart from the pass."""
    r = _record(pc).at(threads)
    rates = r.rate_GFLOPs
    return [
        f"{threads} BLAS thread{'s' if threads > 1 else ''}: weight-read floor {r.floor_ms:.1f} ms for "
        f"{pc.weight_bytes / 1e6:.0f} MB → β = {r.bandwidth_GBps:.1f} GB/s",
        "product rate on a cache-resident matrix, GFLOP/s: "
        + ", ".join(f"T = {T}: {rates[T]:.0f}" for T in sorted(rates) if T in (1, 2, 4, 8, 16, 32, 128)),
    ]


def table(pc: PassCost, threads: int = 1, Ts=(1, 2, 4, 8, 16, 32, 128)) -> list[str]:
    """Predicted and measured cost of T positions, in ms and in decode steps (÷ T = 1)."""
    products, fwd, pred = curves(pc, threads)
    new, old = products["product"], products.get("x@w", {})
    lines = [
        f"{'T':>4} {'predicted: roofline':>20} {'no overlap':>12} {'measured: read once':>20} "
        f"{'earlier layout':>15} {'whole pass':>12}"
    ]
    for T in Ts:
        if T not in new or T not in pred:
            continue
        pr, ps = pred[T].roofline_ms, pred[T].serial_ms
        cells = [
            f"{pr:6.1f} ({pr / pred[1].roofline_ms:.2f})",
            f"{ps:6.1f} ({ps / pred[1].serial_ms:.2f})",
            f"{new[T]:6.1f} ({new[T] / new[1]:.2f})",
            f"{old[T]:6.1f} ({old[T] / new[1]:.2f})" if T in old else "—",
            f"{fwd[T]:6.1f} ({fwd[T] / fwd[1]:.2f})" if T in fwd else "—",
        ]
        lines.append(f"{T:>4} {cells[0]:>20} {cells[1]:>12} {cells[2]:>20} {cells[3]:>15} {cells[4]:>12}")
    return lines


def prediction_errors(pc: PassCost, threads: int = 1) -> dict[str, dict[int, float]]:
    """{"roofline"|"serial": {T: predicted ÷ measured − 1}} for the weight products (read once)."""
    products, _, pred = curves(pc, threads)
    new = products["product"]
    return {
        kind: {T: getattr(pred[T], f"{kind}_ms") / new[T] - 1 for T in sorted(new) if T in pred}
        for kind in ("roofline", "serial")
    }

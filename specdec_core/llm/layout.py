"""How the weights are laid out in memory and multiplied, chosen by timing them on this machine.

Scoring T positions reads every weight once: while T is small the pass is memory-bound, so T
rows should cost about what one row costs (notebook 06). Whether they do depends on how the
product is called, and the fastest call differs between CPUs: on one 2-core Xeon, row blocks of
16 outputs did best; on a 2-core EPYC they cost 2× the read floor at T = 1, while column blocks
of 64 outputs stayed near the floor up to T = 4. So nothing here is tuned by hand. At load,
:func:`choose_layout` times every candidate on a sample of the model's own matrices, each timed
product following a read of the rest of the weights (the cache state the pass finds it in), and
keeps the fastest.

A **storage** is how a matrix (out, in) sits in memory — one copy, whatever is chosen:

* ``"rows"``: (out, in) as loaded;
* ``"cols{b}"``: cut into contiguous column blocks, (out/b, in, b): block j holds outputs
  j·b … j·b+b−1 with each input's b weights side by side.

A **method** multiplies T input rows by a stored matrix:

* rows: ``"gemv"`` (T = 1: one matrix–vector product), ``"rows{h}"`` (blocks of h outputs, one
  ``np.matmul`` over the blocks, each read once while in cache), ``"blas"`` (one ``x @ w.T``);
* cols: ``"blocks"`` (one ``np.matmul`` of the T rows with every block), ``"pad2"`` (T = 1
  padded to two rows, when the one-row call is slow);
* rows, up to :data:`~specdec_core.llm.kernels.KERNEL_MAX_ROWS` rows: ``"nb{g}"``, the compiled
  loop of :mod:`specdec_core.llm.kernels` taking g = 1, 2 or 4 input rows per weight read.

One more storage is timed but never chosen for the target, because it changes the model:
``"q8"``, int8 codes with a float32 scale per output row (:func:`specdec_core.llm.kernels.quantize_rows`),
the weights of the **quantized-copy draft** (:func:`quantize_weights`). Its methods: ``"nb1"``,
``"nb4"`` (the compiled int8 loops) and ``"deq"`` (dequantize the matrix, one BLAS call: a
prompt's prefill). Its rows in the table tell the draft's plan and what its step costs.

A :class:`Weight` holds one stored matrix and its plan {T: method}; :func:`specdec_core.llm.model.product`
dispatches on it. All methods give ``x @ w.T`` up to float32 rounding (``tests/test_llm_layout.py``).
"""

from __future__ import annotations

import numpy as np

from ..distributions import check_int, check_int_sequence
from ..measured.layout import LayoutChoice, check_storage
from ..measured.timer import REDUCTIONS, time_calls
from . import kernels
from .kernels import KERNEL_MAX_ROWS

#: The input sizes the choice is timed at (decode and short verification).
CHOICE_TS = (1, 2, 4, 8)
#: Column-block widths tried (a width is used only where it divides every matrix's outputs).
COL_WIDTHS = (16, 32, 64)
#: Row-block heights tried (reshape views of the loaded (out, in) matrix: no copy).
ROW_HEIGHTS = (8, 16, 32)
#: Beyond this many rows (a prompt's prefill) a stored matrix uses its bulk method.
SMALL_MAX_ROWS = 32


def storages(shapes) -> list[str]:
    """The storages tried for matrices of these (out, in) shapes: rows, and every column width
    no wider than the narrowest matrix (a last partial block is padded with zeros)."""
    outs = [int(s[0]) for s in shapes]
    return ["rows"] + [f"cols{b}" for b in COL_WIDTHS if b <= min(outs)]


#: Input rows per weight read of the compiled loops timed (:mod:`kernels`).
KERNEL_GROUPS = {"rows": (1, 2, 4), "q8": (1, 4)}


def methods(storage: str, T: int) -> list[str]:
    """The methods a ``storage`` offers for T rows."""
    check_storage(storage)
    nb = [f"nb{g}" for g in KERNEL_GROUPS.get(storage, ())] if T <= KERNEL_MAX_ROWS else []
    if storage == "rows":
        return (["gemv"] if T == 1 else []) + [f"rows{h}" for h in ROW_HEIGHTS] + ["blas"] + nb
    if storage == "q8":
        return nb or ["deq"]
    return ["blocks", "pad2"] if T == 1 else ["blocks"]


def _width(storage: str) -> int:
    return int(storage[4:])


def store(w: np.ndarray, storage: str) -> np.ndarray:
    """The (out, in) matrix ``w`` in ``storage`` (a new contiguous array; ``"rows"``: w itself).
    Column blocks: (ceil(out/b), in, b), the last block padded with zero outputs."""
    if storage == "rows":
        return w
    check_storage(storage)
    if storage == "q8":
        raise ValueError("storage 'q8' holds codes and scales: use kernels.quantize_rows")
    out, inn = w.shape
    b = _width(storage)
    nb = -(-out // b)
    data = np.zeros((nb, inn, b), dtype=w.dtype)
    full = out // b
    data[:full] = w[: full * b].reshape(full, b, inn).transpose(0, 2, 1)
    if full < nb:
        data[full, :, : out - full * b] = w[full * b :].T
    return data


def multiply(
    x: np.ndarray, data: np.ndarray, storage: str, method: str, out: int | None = None, scale=None
) -> np.ndarray:
    """``x @ w.T`` (T, out), contiguous, for ``data`` = :func:`store` (w, storage); ``out``: the
    matrix's outputs when column blocks were padded (default: all of them). Storage ``"q8"``:
    ``data`` the int8 codes and ``scale`` their float32 scales per output row."""
    T = x.shape[0]
    if method.startswith("nb"):
        if storage == "q8":
            return kernels.product_q8(x, data, scale, int(method[2:]))
        return kernels.product_f32(x, data, int(method[2:]))
    if storage == "q8":  # "deq": the float matrix once, then one BLAS call (a prompt's prefill)
        return x @ kernels.dequantize_rows(data, scale).T
    if storage == "rows":
        out, inn = data.shape
        if method == "gemv":
            if T != 1:
                raise ValueError(f"method gemv takes one row, got {T}")
            return (data @ x[0])[None, :]
        if method == "blas":
            return x @ data.T
        h = int(method[4:])
        if out % h:  # a height that does not divide the outputs: the bulk call
            return x @ data.T
        r = np.matmul(data.reshape(out // h, h, inn), x.T)  # (blocks, h, T)
        # back to contiguous (T, out) rows: a strided view makes every later row step ≈ 10× slower
        return np.ascontiguousarray(r.transpose(2, 0, 1).reshape(T, out))
    nb, _, b = data.shape
    if method == "pad2" and T == 1:
        r = np.matmul(np.concatenate([x, x]), data)[:, :1]  # (blocks, 1, b)
    else:
        r = np.matmul(x, data)  # (blocks, T, b)
    y = r.transpose(1, 0, 2).reshape(T, nb * b)
    return np.ascontiguousarray(y if out is None or out == nb * b else y[:, :out])


class Weight:
    """One weight matrix (logical shape (out, in)) in its chosen storage, with the method
    to use for each number of rows (``plan`` {T: method}; a T not in the plan uses the
    largest planned T below it, and more than :data:`SMALL_MAX_ROWS` rows the bulk method)."""

    __slots__ = ("data", "storage", "plan", "shape", "dtype", "scale")

    def __init__(
        self, data: np.ndarray, storage: str, plan: dict[int, str], out: int | None = None, scale=None
    ):
        check_storage(storage)
        if not plan:
            raise ValueError("plan must name a method for at least one T")
        for T, m in plan.items():
            if m not in methods(storage, check_int(T, "plan T", 1)):
                raise ValueError(f"plan: storage {storage!r} has no method {m!r} at T = {T}")
        self.data, self.storage, self.plan = data, storage, dict(sorted(plan.items()))
        self.scale = scale
        if storage == "q8" and (scale is None or len(scale) != data.shape[0] or data.dtype != np.int8):
            raise ValueError("storage 'q8' needs int8 codes (out, in) and a float32 scale per output row")
        if storage.startswith("cols"):  # column blocks: the logical outputs (a padded last block holds fewer)
            nb, inn, b = data.shape
            if out is None or not nb * b - b < int(out) <= nb * b:
                raise ValueError(
                    f"out must be the matrix's outputs, in ({nb * b - b}, {nb * b}], got {out!r}"
                )
            self.shape = (int(out), inn)
        else:
            self.shape = tuple(data.shape)
        self.dtype = data.dtype if storage != "q8" else np.dtype(np.float32)

    ndim = 2  # a matrix, like the ndarray it stands for

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes) + (0 if self.scale is None else int(self.scale.nbytes))

    @property
    def size(self) -> int:
        return int(self.shape[0] * self.shape[1])

    def method(self, T: int) -> str:
        bulk = {"rows": "blas", "q8": "deq"}.get(self.storage, "blocks")
        if T > SMALL_MAX_ROWS or T < 1:
            return bulk
        below = [t for t in self.plan if t <= T]
        m = self.plan[max(below)] if below else self.plan[min(self.plan)]
        if m.startswith("nb") and T > KERNEL_MAX_ROWS:
            return "rows16" if self.storage == "rows" else bulk
        return "rows16" if (m == "gemv" and T > 1) else ("blocks" if m == "pad2" and T > 1 else m)

    def product(self, x: np.ndarray) -> np.ndarray:
        if x.shape[0] == 0:
            return np.zeros((0, self.shape[0]), np.float32)
        return multiply(x, self.data, self.storage, self.method(x.shape[0]), self.shape[0], self.scale)

    def rows(self, ids) -> np.ndarray:
        """Rows ``ids`` of the logical (out, in) matrix, (len(ids), in), contiguous (embedding
        lookups and restricted heads)."""
        raw = np.asarray(ids)
        if raw.size and (raw.dtype.kind not in "iu"):  # 1.7, "3" and True are not row numbers
            raise ValueError(f"ids must be integers (row numbers), got {raw.dtype} values")
        ids = raw.astype(np.int64)
        if ids.ndim != 1 or (ids.size and (ids.min() < 0 or ids.max() >= self.shape[0])):
            raise ValueError(f"ids must be a 1-D array of rows in [0, {self.shape[0]})")
        if self.storage == "q8":
            return kernels.dequantize_rows(self.data[ids], self.scale[ids])
        if self.storage == "rows":
            return np.ascontiguousarray(self.data[ids])
        b = self.data.shape[2]
        return np.ascontiguousarray(self.data[ids // b, :, ids % b])

    def __array__(self, dtype=None, copy=None):
        d = self.dense()
        return d if dtype is None else d.astype(dtype)

    @property
    def T(self) -> np.ndarray:
        """The logical matrix transposed (a dense copy unless stored as rows)."""
        return self.dense().T

    def dense(self) -> np.ndarray:
        """The logical (out, in) matrix (a copy unless stored as rows)."""
        return self.data if self.storage == "rows" else self.rows(np.arange(self.shape[0]))


#: The plan of a matrix stored as loaded when no layout was timed (``load_model(layout=None)``,
#: the test models, a draft's own small matrices): one row by BLAS gemv (streams each weight row
#: once), 2 … :data:`SMALL_MAX_ROWS` rows in row blocks of 16 outputs (each block read once while
#: in cache; a height that does not divide the outputs falls back to BLAS), more rows one BLAS
#: call (a prompt's prefill, compute-bound).
PLAIN_PLAN = {1: "gemv", 2: "rows16"}


def as_weight(w) -> Weight:
    """``w`` as a :class:`Weight`: a Weight as it is; a 2-D ndarray (out, in) as a plain-rows
    Weight (:data:`PLAIN_PLAN`, no copy). Every matrix the model multiplies goes through here,
    so the forward pass has one product path."""
    if isinstance(w, Weight):
        return w
    if not isinstance(w, np.ndarray) or w.ndim != 2:
        raise ValueError(f"a weight matrix must be a 2-D ndarray or a Weight, got {type(w).__name__}")
    return Weight(w, "rows", PLAIN_PLAN)


def as_rows(w) -> np.ndarray:
    """The (out, in) ndarray behind ``w`` (a :class:`Weight` or an ndarray)."""
    return as_weight(w).dense()


def is_matrix(w) -> bool:
    """A weight matrix (a 2-D ndarray or a :class:`Weight`), not a norm vector or a flag."""
    return getattr(w, "ndim", 0) == 2


# ---------------------------------------------------------------- the timed choice


def sample_matrices(weights: dict, head_rows: int = 8192) -> dict[str, np.ndarray]:
    """{name: (out, in) matrix} timed by :func:`choose_layout`: every matrix of the first,
    middle and last layer, and the first ``head_rows`` rows of the head (the head is the
    largest matrix; a slice has its shape's inner dimension)."""

    def layer(k: str) -> int | None:
        first = k.split(".")[0]
        return int(first) if "." in k and first.isdigit() else None

    if not isinstance(weights, dict):
        raise ValueError(f"weights must be a dict of weight matrices, got {type(weights).__name__}")
    layers = sorted({layer(k) for k in weights} - {None})
    if not layers:
        raise ValueError("weights holds no layer matrices")
    chosen = {layers[0], layers[len(layers) // 2], layers[-1]}
    out = {k: as_rows(w) for k, w in weights.items() if layer(k) in chosen and is_matrix(w)}
    if "head" in weights:
        h = as_weight(weights["head"])
        n = min(check_int(head_rows, "head_rows", 1), h.shape[0])
        out["head"] = h.rows(np.arange(n))  # never the whole head copied
    return out


def _check_choice_args(Ts, reps, seed, flush) -> tuple[list[int], int, int]:
    Ts = list(check_int_sequence(Ts, "Ts", low=1, high=SMALL_MAX_ROWS))
    if len(set(Ts)) != len(Ts):
        raise ValueError(f"Ts must not repeat a size, got {Ts}")
    if 1 not in Ts:
        raise ValueError("Ts must include 1 (the decode step every ratio is taken against)")
    reps, seed = check_int(reps, "reps", 1, 1000), check_int(seed, "seed")
    if flush is not None and not callable(flush):
        raise ValueError(f"flush must be a function or None, got {flush!r}")
    return Ts, reps, seed


def _check_sample(mats) -> dict[str, np.ndarray]:
    if not isinstance(mats, dict) or not mats:
        raise ValueError("sample must be a non-empty dict of (out, in) matrices")
    for k, m in mats.items():
        if not isinstance(m, np.ndarray) or m.ndim != 2 or 0 in m.shape or m.dtype != np.float32:
            raise ValueError(f"sample[{k!r}] must be a non-empty 2-D float32 matrix")
    return mats


def _stream_the_rest(weights: dict, mats: dict):
    """The default flush: stream the stored data of every matrix not sampled (no dense copy)
    with the cheapest reduction, as a whole pass leaves the caches."""
    rest = [as_weight(w).data.reshape(-1) for k, w in weights.items() if is_matrix(w) and k not in mats]

    def flush():
        for v in rest:
            v.max()

    return flush


def _timed_calls(mats: dict, Ts: list[int], seed: int, quantized: bool) -> dict:
    """{("floor", reduction) | (storage, method, T): no-argument call}: the read floor of the
    sample stored as rows (each of :data:`REDUCTIONS`) and every cell, products of the sample."""
    shapes = [m.shape for m in mats.values()]
    stored = {s: [store(np.ascontiguousarray(m), s) for m in mats.values()] for s in storages(shapes)}
    q8 = [kernels.quantize_rows(m) for m in mats.values()] if quantized else []
    if q8:  # the quantized-copy draft's storage: timed for its plan, never chosen for the target
        stored["q8"] = [c for c, _ in q8]
    scales = {"q8": [s for _, s in q8]}
    outs = [m.shape[0] for m in mats.values()]
    rng = np.random.default_rng(seed)
    xs = {T: [rng.standard_normal((T, m.shape[1]), dtype=np.float32) for m in mats.values()] for T in Ts}
    flat = [a.reshape(-1) for a in stored["rows"]]

    def floor(f):
        return lambda: [f(v) for v in flat]

    def cell(s, m, T):
        args = list(zip(xs[T], stored[s], outs, scales.get(s, outs)))

        def run():
            for x, data, o, sc in args:
                multiply(x, data, s, m, o, sc)

        return run

    calls = {("floor", k): floor(f) for k, f in REDUCTIONS.items()}
    calls.update({(s, m, T): cell(s, m, T) for s in stored for T in Ts for m in methods(s, T)})
    return calls


def choose_layout(
    weights: dict,
    Ts=CHOICE_TS,
    reps: int = 5,
    seed: int = 0,
    flush=None,
    sample: dict | None = None,
    quantized: bool = True,
) -> LayoutChoice:
    """Time every (storage, method) on a sample of ``weights`` (:func:`sample_matrices`) for
    each T, choose the storage whose fastest methods sum to the least over ``Ts``, and, per T,
    its fastest method. ``quantized``: also time the int8 storage ``"q8"`` of the quantized-copy
    draft (its plan: :meth:`LayoutChoice.plan_of`). ``flush``: called (untimed) before every
    timed call, to leave the caches as a whole pass leaves them; default: stream the model's
    other matrices once (:data:`REDUCTIONS`' max). Timed by :func:`~specdec_core.measured.timer.time_calls`,
    interleaved: every repeat times the read floor of the sample (:data:`REDUCTIONS`) and then
    every cell once, each after a flush; the medians are kept."""
    kernels.warm_up()  # compile (or load) the compiled loops before anything is timed
    Ts, reps, seed = _check_choice_args(Ts, reps, seed, flush)
    mats = _check_sample(sample if sample is not None else sample_matrices(weights))
    flush = flush if flush is not None else _stream_the_rest(weights, mats)
    spreads = time_calls(_timed_calls(mats, Ts, seed, quantized), reps, flush=flush, sweep=False)
    timings: dict[str, dict[int, float]] = {}
    for key, sp in spreads.items():
        if key[0] != "floor":
            s, m, T = key
            timings.setdefault(f"{s}/{m}", {})[T] = sp.median
    floors = {key[1]: sp.median for key, sp in spreads.items() if key[0] == "floor"}
    return pick(
        timings,
        floor_ms=min(floors.values()),
        floor_by_reduction=floors,
        sample_bytes=sum(m.nbytes for m in mats.values()),
        reps=reps,
        sample=tuple(mats),
    )


#: Storages that change the model (the quantized copy): timed, never chosen for the target.
LOSSY_STORAGES = ("q8",)

#: A copy of the weights in another storage is made only if its total beats the loaded rows' by
#: more than this share: within it, the timings do not tell them apart on a shared machine (two
#: runs a minute apart ranked them differently here), and a copy costs load time and prefill speed.
COPY_MARGIN = 0.05


def _check_margin(x, name: str) -> float:
    """A share in [0, 1) (a margin): real, finite; bools, strings and NaN refused."""
    if (
        isinstance(x, bool)
        or not isinstance(x, (int, float, np.floating, np.integer))
        or not 0 <= float(x) < 1
    ):
        raise ValueError(f"{name} must be a share in [0, 1), got {x!r}")
    return float(x)


def pick(timings: dict[str, dict[int, float]], margin: float = COPY_MARGIN, **info) -> LayoutChoice:
    """The choice from a table of timings {"storage/method": {T: ms}} (see :func:`choose_layout`):
    the storage with the least total over the T every storage was timed at, except that the
    loaded rows are kept unless the best other storage is more than ``margin`` faster in total;
    then, per T, that storage's fastest method."""
    if not isinstance(timings, dict) or not timings:
        raise ValueError("timings must be a non-empty dict {'storage/method': {T: ms}}")
    margin = _check_margin(margin, "margin")
    for key, v in timings.items():
        if not isinstance(key, str) or key.count("/") != 1:
            raise ValueError(f"timings: {key!r} is not a 'storage/method' key")
        if not isinstance(v, dict) or not v:
            raise ValueError(f"timings[{key!r}] must be a non-empty dict {{T: ms}}")
        for T, ms in v.items():
            check_int(T, f"timings[{key!r}] T", 1)
            if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 < ms < float("inf"):
                raise ValueError(f"timings[{key!r}][{T}] must be a positive finite time in ms, got {ms!r}")
    missing = {"floor_ms", "sample_bytes", "reps"} - set(info)
    if missing:
        raise ValueError(f"pick needs {', '.join(sorted(missing))} (what choose_layout measured)")
    by_storage: dict[str, dict[int, tuple[float, str]]] = {}
    for key, v in timings.items():
        s, m = key.split("/")
        if s in LOSSY_STORAGES:  # another model's weights: never the target's storage
            continue
        for T, ms in v.items():
            cur = by_storage.setdefault(s, {}).get(T)
            if cur is None or ms < cur[0]:
                by_storage[s][T] = (ms, m)
    if not by_storage:
        raise ValueError("timings hold no storage the target may use (only lossy ones)")
    Ts = set.intersection(*(set(d) for d in by_storage.values()))
    if not Ts:
        raise ValueError("timings share no T across storages: nothing to compare")
    total = {s: sum(by_storage[s][T][0] for T in Ts) for s in by_storage}
    best = min(total, key=lambda s: (total[s], s != "rows"))
    if "rows" in total and best != "rows" and total[best] >= (1 - margin) * total["rows"]:
        best = "rows"  # a copy only when more than ``margin`` faster
    plan = {T: by_storage[best][T][1] for T in sorted(by_storage[best])}
    return LayoutChoice(storage=best, plan=plan, timings=timings, **info)


def apply_layout(weights: dict, choice: LayoutChoice) -> dict:
    """Put every 2-D matrix of ``weights`` into the chosen storage and plan as a :class:`Weight`,
    **in place**, one matrix at a time: each loaded (memory-mapped) matrix is released as soon as
    its copy is made, so the weights are never held twice. Returns ``weights``."""
    if not isinstance(choice, LayoutChoice):
        raise ValueError(f"choice must be a LayoutChoice (choose_layout), got {type(choice).__name__}")
    bad = [k for k, w in weights.items() if is_matrix(w) and as_weight(w).dtype != np.float32]
    if bad:  # checked first: nothing is converted when one matrix is wrong
        raise ValueError(
            f"weights[{bad[0]!r}] is {weights[bad[0]].dtype}: the forward pass multiplies float32 matrices"
        )
    for k in [k for k, w in weights.items() if is_matrix(w)]:
        rows = as_rows(weights[k])
        data = rows if choice.storage == "rows" else store(np.ascontiguousarray(rows), choice.storage)
        weights[k] = Weight(data, choice.storage, choice.plan, out=rows.shape[0])
        del rows, data
    return weights


def quantize_weights(weights: dict, choice: LayoutChoice | None = None) -> dict:
    """The weights of the **quantized-copy draft**: every 2-D matrix of ``weights`` as int8 codes
    with a float32 scale per output row (storage ``"q8"``, :func:`kernels.quantize_rows`, a quarter
    of the bytes), multiplied by the compiled int8 loop with the plan that ``choice`` timed on this
    machine (default: one row per weight read up to T = 4, then four); norms and other vectors are
    shared with ``weights`` (no copy). A new dict: ``weights`` is unchanged."""
    if choice is not None and not isinstance(choice, LayoutChoice):
        raise ValueError(f"choice must be a LayoutChoice or None, got {type(choice).__name__}")
    plan = choice.plan_of("q8") if choice is not None and "q8" in choice.storages() else {}
    plan = plan or {1: "nb1", 4: "nb4"}
    out = {}
    for k, w in weights.items():
        if is_matrix(w):
            codes, scale = kernels.quantize_rows(as_rows(w))
            out[k] = Weight(codes, "q8", plan, scale=scale)
        else:
            out[k] = w
    return out

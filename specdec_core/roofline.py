"""The roofline: how long one forward pass takes, and why verifying γ + 1 positions is
sometimes (not always) about as cheap as decoding one.

A pass over ``T`` new positions for ``S`` sequences, each with ``L`` tokens already cached,
moves bytes and does arithmetic:

    bytes  = weights + S × KV(L) read + S × KV(T) written                          (1)
    FLOPs  = 2 × parameters × S × T  +  4 × layers × heads × head_dim × S × (T·L + T(T+1)/2)  (2)

(KV(n) is :func:`specdec_core.kv.model_kv_bytes` for n tokens; the attention term counts the
two products q·Kᵀ and softmax·V, each 2 × head_dim FLOPs per query head per attended key; new
position j attends to the L cached keys and the j new ones up to itself.) On hardware that
streams ``bandwidth`` bytes/s and computes ``peak`` FLOP/s, the pass takes at least

    time = max(bytes ÷ bandwidth, FLOPs ÷ peak) + fixed per-pass cost               (3)

The pass is *memory-bound* while the first term wins: then extra positions ride along almost
for free. Its *arithmetic intensity* FLOPs ÷ bytes crosses the hardware's *ridge point*
peak ÷ bandwidth exactly where it turns *compute-bound*.

What a whole round of speculative decoding costs at a batch, priced on this roofline, is
:mod:`specdec_core.serving`. Everything here is pure arithmetic on declared inputs. Exact inputs
(int / Fraction) give exact Fractions; any float gives floats. Hardware numbers are either
**assumed** (a vendor datasheet, named in ``source``) or **measured** (built from
``specdec_core/results/hardware.json`` by :func:`hardware_from_benchmark`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING

from .distributions import (
    check_bool,
    check_cost_curve,
    check_finite_result,
    check_gamma,
    check_int,
    check_int_sequence,
    check_name,
    check_nonnegative,
    check_positive,
    check_size,
    exact_ratio,
    is_exact,
    to_fraction,
)
from .kv import ModelShape, check_dtype, get_shape, model_kv_bytes

if TYPE_CHECKING:
    from .types import Scalar

__all__ = [
    "HARDWARE",
    "Hardware",
    "PassTime",
    "arithmetic_intensity",
    "float_hardware",
    "get_hardware",
    "hardware_from_benchmark",
    "memory_bound_positions",
    "pass_bytes",
    "pass_flops",
    "pass_time",
    "relative_cost",
    "ridge_point",
    "roofline_curve",
    "verification_cost",
]

#: roofline_curve prices one pass per position count: at most this many.
MAX_CURVE_POINTS = 10**4

# ---------------------------------------------------------------- validation


def _hardware_number(x, name: str, what: str, positive: bool = True):
    """A hardware number as given when it is an int or a Fraction; any other exact number
    (numpy int, sympy Rational) as a Fraction (it stays exact); a float as a float. Rates
    below 1 per second (a subnormal bandwidth) are refused: a pass would take forever."""
    v = check_positive(x, name, what) if positive else check_nonnegative(x, name, what)
    if positive and v < 1:
        raise ValueError(f"{name} must be at least 1 ({what}), got {x!r}")
    if isinstance(x, (int, Fraction)) and not isinstance(x, bool):
        return x
    if is_exact(x):
        f = to_fraction(x, name)
        return int(f) if f.denominator == 1 else f
    return v


def _exact(*xs) -> bool:
    return all(isinstance(x, (int, Fraction)) and not isinstance(x, bool) for x in xs)


# ---------------------------------------------------------------- hardware


@dataclass(frozen=True)
class Hardware:
    """What a device can move and compute: ``bandwidth`` in bytes/s, ``peak`` in FLOP/s,
    ``pass_overhead_s`` a fixed cost per forward pass (kernel launches, synchronisation) in
    seconds. ``kind`` is "assumed" (datasheet numbers) or "measured" (timed here);
    ``source`` says where the numbers come from."""

    name: str
    bandwidth: object
    peak: object
    kind: str
    source: str
    pass_overhead_s: object = 0
    dtype_note: str = ""

    def __post_init__(self):
        check_name(self.name, "name")
        for f, what in (
            ("bandwidth", "a number of bytes per second"),
            ("peak", "a number of FLOP per second"),
        ):
            object.__setattr__(self, f, _hardware_number(getattr(self, f), f, what))
        object.__setattr__(
            self,
            "pass_overhead_s",
            _hardware_number(self.pass_overhead_s, "pass_overhead_s", "a number of seconds", positive=False),
        )
        if self.kind not in ("assumed", "measured"):
            raise ValueError(f"kind must be 'assumed' or 'measured', got {self.kind!r}")
        if not isinstance(self.source, str) or len(self.source) < 10:
            raise ValueError("source must name where the numbers come from")


G = 10**9
T_ = 10**12

# The datasheets, one row per device: name, bandwidth (B/s), peak (FLOP/s), what the peak is for;
# and where each row's numbers come from.
_DATASHEETS = (
    ("NVIDIA H100 SXM", 3350 * G, 989 * T_, "bf16 tensor cores"),
    ("NVIDIA A100 80GB SXM", 2039 * G, 312 * T_, "bf16 tensor cores"),
    ("NVIDIA RTX 4090", 1008 * G, 165 * T_, "bf16 tensor cores"),
    ("Apple M2 (laptop)", 100 * G, Fraction(36, 10) * T_, "float32 GPU"),
    ("Laptop CPU (8 cores, DDR5)", Fraction(896, 10) * G, 768 * G, "float32 AVX2"),
)
_DATASHEET_SOURCES = {
    "NVIDIA H100 SXM": "NVIDIA H100 Tensor Core GPU datasheet: H100 SXM 80 GB HBM3, 3.35 TB/s; "
    "BF16 tensor core 1,979 TFLOPS with sparsity, so 989 TFLOPS dense.",
    "NVIDIA A100 80GB SXM": "NVIDIA A100 Tensor Core GPU datasheet: A100 80GB SXM, HBM2e 2,039 GB/s; "
    "BF16 tensor core 312 TFLOPS dense (624 with sparsity).",
    "NVIDIA RTX 4090": "NVIDIA Ada Lovelace GPU architecture whitepaper, GeForce RTX 4090: GDDR6X "
    "1,008 GB/s; BF16 tensor core (FP32 accumulate) 165.2 TFLOPS dense.",
    "Apple M2 (laptop)": "Apple M2 announcement (June 2022): 100 GB/s unified memory bandwidth; "
    "10-core GPU up to 3.6 TFLOPS (float32).",
    "Laptop CPU (8 cores, DDR5)": "Illustrative laptop, not one product: dual-channel DDR5-5600 (JEDEC speed "
    "grade: 2 × 8 B × 5.6 GT/s = 89.6 GB/s); 8 cores × 3 GHz × 32 float32 "
    "FLOP/cycle (two 8-wide AVX2 FMA units) = 768 GFLOP/s.",
}
#: Datasheet numbers (**assumed**: nothing here was measured; dense, no sparsity). The GPUs'
#: peaks are for 16-bit tensor-core arithmetic, the laptop CPU's for float32 vector FMA.
HARDWARE = {
    name: Hardware(
        name, bandwidth=bw, peak=peak, kind="assumed", source=_DATASHEET_SOURCES[name], dtype_note=note
    )
    for name, bw, peak, note in _DATASHEETS
}


def get_hardware(hw: Hardware | str) -> Hardware:
    """A :class:`Hardware`, or the name of a preset in :data:`HARDWARE`."""
    if isinstance(hw, Hardware):
        return hw
    if isinstance(hw, str) and hw in HARDWARE:
        return HARDWARE[hw]
    raise ValueError(f"hardware must be a Hardware or one of {tuple(HARDWARE)}, got {hw!r}")


def float_hardware(hw: Hardware | str) -> Hardware:
    """The same hardware with float numbers (fast arithmetic for labs and searches; exact
    Fractions are for checking, not for redrawing a figure)."""
    h = get_hardware(hw)
    return replace(
        h, bandwidth=float(h.bandwidth), peak=float(h.peak), pass_overhead_s=float(h.pass_overhead_s)
    )


def hardware_from_benchmark(results: object, *, threads: int = 2) -> Hardware:
    """This machine as **measured** by ``benchmarks/bench_hardware.py``: bandwidth from the
    STREAM-like copy with ``threads`` threads, peak from the best float32 matmul throughput
    seen at that thread count. ``results`` is the stored record
    (:class:`specdec_core.measured.HardwareRun`, ``measured.read_stored("hardware.json")``)."""
    t = check_int(threads, "threads", 1)
    for name in ("bandwidth", "matmul", "machine"):
        if not hasattr(results, name) or isinstance(results, dict):
            raise ValueError(
                f"results must be the HardwareRun record of measured.read_stored('hardware.json'), "
                f"got {type(results).__name__}"
            )
    if t not in results.bandwidth or t not in results.matmul:
        raise ValueError(f"results has no measurement with threads={t} (have {sorted(results.bandwidth)})")
    bw = results.bandwidth[t].copy_GBps * 1e9
    peak = max(g for curve in results.matmul[t].values() for g in curve.gflops.values()) * 1e9
    m = results.machine
    return Hardware(
        f"this machine ({t} thread{'s' if t > 1 else ''})",
        bandwidth=bw,
        peak=peak,
        kind="measured",
        source=f"benchmarks/bench_hardware.py on {m.cpu}, {t} threads, "
        f"{m.date_utc}: numpy copy bandwidth and best float32 matmul rate",
        dtype_note="float32 numpy/BLAS",
    )


# ---------------------------------------------------------------- bytes and FLOPs


def _shape_args(model, positions, sequences, context):
    m = get_shape(model)
    T = check_int(positions, "positions", 1)
    S = check_int(sequences, "sequences", 1)
    L = check_int(context, "context", 0)
    return m, T, S, L


def pass_bytes(
    model: ModelShape | str,
    *,
    dtype: str | int,
    positions: int,
    sequences: int = 1,
    context: int = 0,
    weight_dtype: str | int | None = None,
    parts: bool = False,
) -> int | dict[str, int]:
    """Bytes one pass moves, equation (1): every weight once, each sequence's cached keys and
    values for ``context`` tokens, and the new keys and values for ``positions`` tokens
    (exact int). ``dtype`` is the cache's dtype, ``weight_dtype`` the weights' (default: the
    same). With ``parts=True``: a dict with ``weights``, ``kv_read``, ``kv_written``, ``total``."""
    parts = check_bool(parts, "parts")
    m, T, S, L = _shape_args(model, positions, sequences, context)
    wb = check_dtype(dtype if weight_dtype is None else weight_dtype)
    weights = m.parameters * wb
    read = model_kv_bytes(m, dtype, L, S) if L else 0
    written = model_kv_bytes(m, dtype, T, S)
    total = weights + read + written
    if parts:
        return {"weights": weights, "kv_read": read, "kv_written": written, "total": total}
    return total


def pass_flops(
    model: ModelShape | str, *, positions: int, sequences: int = 1, context: int = 0, parts: bool = False
) -> int | dict[str, int]:
    """FLOPs of one pass, equation (2) (exact int): 2 per parameter per new position per
    sequence, plus attention over the ``context`` cached tokens and the new ones. With
    ``parts=True``: a dict with ``matmul``, ``attention``, ``total``."""
    parts = check_bool(parts, "parts")
    m, T, S, L = _shape_args(model, positions, sequences, context)
    matmul = 2 * m.parameters * S * T
    attention = 4 * m.layers * m.heads * m.head_dim * S * (T * L + T * (T + 1) // 2)
    if parts:
        return {"matmul": matmul, "attention": attention, "total": matmul + attention}
    return matmul + attention


def arithmetic_intensity(flops: Scalar, n_bytes: Scalar) -> Scalar:
    """FLOPs per byte moved (exact for exact inputs)."""
    f = check_nonnegative(flops, "flops", "a number of FLOPs")
    b = check_positive(n_bytes, "n_bytes", "a number of bytes")
    return exact_ratio(f, b)


def ridge_point(hardware: Hardware | str) -> Scalar:
    """peak ÷ bandwidth, in FLOPs per byte: work below this intensity is memory-bound."""
    hw = get_hardware(hardware)
    return exact_ratio(hw.peak, hw.bandwidth)


# ---------------------------------------------------------------- time of a pass


@dataclass(frozen=True)
class PassTime:
    """One pass on one device (seconds): ``memory_s`` = bytes ÷ bandwidth, ``compute_s`` =
    FLOPs ÷ peak, ``overhead_s`` the fixed cost; ``total_s`` = max of the first two + overhead."""

    n_bytes: int
    flops: int
    memory_s: object
    compute_s: object
    overhead_s: object
    total_s: object = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "total_s", max(self.memory_s, self.compute_s) + self.overhead_s)

    @property
    def bound(self) -> str:
        """ "memory" or "compute": which limit sets the time (ties count as memory)."""
        return "memory" if self.memory_s >= self.compute_s else "compute"

    @property
    def intensity(self) -> Scalar:
        return exact_ratio(self.flops, self.n_bytes)

    @property
    def total_ms(self) -> Scalar:
        return self.total_s * 1000


def pass_time(
    model: ModelShape | str,
    hardware: Hardware | str,
    *,
    dtype: str | int,
    positions: int,
    sequences: int = 1,
    context: int = 0,
    weight_dtype: str | int | None = None,
    overhead_s: Scalar | None = None,
) -> PassTime:
    """Equation (3) for one pass. ``overhead_s`` overrides the hardware's fixed per-pass cost."""
    hw = get_hardware(hardware)
    b = pass_bytes(
        model,
        dtype=dtype,
        positions=positions,
        sequences=sequences,
        context=context,
        weight_dtype=weight_dtype,
    )
    f = pass_flops(model, positions=positions, sequences=sequences, context=context)
    o = (
        hw.pass_overhead_s
        if overhead_s is None
        else check_nonnegative(overhead_s, "overhead_s", "a number of seconds")
    )
    exact = _exact(hw.bandwidth, hw.peak, o)
    if not exact:
        o = float(o)
    out = PassTime(
        n_bytes=b,
        flops=f,
        memory_s=exact_ratio(b, hw.bandwidth),
        compute_s=exact_ratio(f, hw.peak),
        overhead_s=o,
    )
    check_finite_result(
        out.total_ms if not isinstance(out.total_ms, Fraction) else 0.0,
        "the pass time",
        "this hardware's bandwidth / peak and overhead_s",
    )
    return out


def verification_cost(
    model: ModelShape | str,
    hardware: Hardware | str,
    *,
    dtype: str | int,
    gamma: int,
    sequences: int = 1,
    context: int = 0,
    weight_dtype: str | int | None = None,
    overhead_s: Scalar | None = None,
) -> Scalar:
    """Time of one pass over γ + 1 positions in units of one decode step (a pass over one
    position) at the same batch and context: 1 means verification is "free"."""
    g = check_gamma(gamma)
    kw = dict(
        dtype=dtype, sequences=sequences, context=context, weight_dtype=weight_dtype, overhead_s=overhead_s
    )
    one = pass_time(model, hardware, positions=1, **kw).total_s
    return exact_ratio(pass_time(model, hardware, positions=g + 1, **kw).total_s, one)


def memory_bound_positions(
    model: ModelShape | str,
    hardware: Hardware | str,
    *,
    dtype: str | int,
    sequences: int = 1,
    context: int = 0,
    weight_dtype: str | int | None = None,
    max_positions: int = 4096,
) -> int:
    """The largest T ≤ ``max_positions`` whose pass is still memory-bound (0 if even one
    position is compute-bound). Up to there, positions cost (almost) only the bytes they
    write. The compute-minus-memory gap is convex in T, so the memory-bound T form one run
    starting at 1; the search stops at its end."""
    cap = check_int(max_positions, "max_positions", 1)
    kw = dict(dtype=dtype, sequences=sequences, context=context, weight_dtype=weight_dtype)
    if pass_time(model, hardware, positions=1, **kw).bound != "memory":
        return 0
    lo, hi = 1, cap
    if pass_time(model, hardware, positions=hi, **kw).bound == "memory":
        return hi
    while hi - lo > 1:  # invariant: lo memory-bound, hi compute-bound
        mid = (lo + hi) // 2
        if pass_time(model, hardware, positions=mid, **kw).bound == "memory":
            lo = mid
        else:
            hi = mid
    return lo


# ---------------------------------------------------------------- measured curves


def relative_cost(curve: dict[int, Scalar]) -> dict[int, Scalar]:
    """{T: time(T) ÷ time(1)}: a cost curve in decode steps."""
    curve = check_cost_curve(curve, "curve", low=1, positive=True)
    if 1 not in curve:
        raise ValueError("curve must be a dict {T: time} with T = 1")
    one = curve[1]
    return {T: exact_ratio(v, one) for T, v in curve.items()}


def roofline_curve(
    model: ModelShape | str,
    hardware: Hardware | str,
    *,
    dtype: str | int,
    positions: Sequence[int],
    context: int = 0,
) -> dict[int, Scalar]:
    """{T: pass time in ms} at batch 1 for each T in ``positions``."""
    ts = check_int_sequence(positions, "positions", 1)
    check_size(len(ts), "positions", MAX_CURVE_POINTS, "passes")
    return {T: pass_time(model, hardware, dtype=dtype, positions=T, context=context).total_ms for T in ts}

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

Everything here is pure arithmetic on declared inputs. Exact inputs (int / Fraction) give
exact Fractions; any float gives floats. Hardware numbers are either **assumed** (a vendor
datasheet, named in ``source``) or **measured** (built from ``specdec_core/results/hardware.json``
by :func:`hardware_from_benchmark`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from .counts import expected_output_count
from .distributions import (
    check_bool,
    check_finite_result,
    check_gamma,
    check_int,
    check_int_sequence,
    check_name,
    check_nonnegative,
    check_positive,
    check_probability,
    check_size,
    is_exact,
    to_fraction,
)
from .kv import check_dtype, get_shape, model_kv_bytes

__all__ = [
    "HARDWARE",
    "LEVIATHAN_SOURCE",
    "LEVIATHAN_TABLE2",
    "Hardware",
    "PassTime",
    "ServingPoint",
    "arithmetic_intensity",
    "break_even_batch",
    "float_hardware",
    "get_hardware",
    "hardware_from_benchmark",
    "implied_draft_cost",
    "memory_bound_positions",
    "pass_bytes",
    "pass_flops",
    "pass_time",
    "relative_cost",
    "ridge_point",
    "roofline_curve",
    "serving_curve",
    "serving_point",
    "speculation_speedup",
    "verification_cost",
]


# ---------------------------------------------------------------- validation


def _positive(x, name: str, what: str):
    return check_positive(x, name, what)


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


def _div(a, b):
    """a / b, exact when both are exact."""
    if _exact(a, b):
        return Fraction(a) / Fraction(b)
    return float(a) / float(b)


def _max(a, b):
    return max(a, b)


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

#: Datasheet numbers (**assumed**: nothing here was measured; dense, no sparsity). The GPUs'
#: peaks are for 16-bit tensor-core arithmetic, the laptop CPU's for float32 vector FMA.
HARDWARE = {
    "NVIDIA H100 SXM": Hardware(
        "NVIDIA H100 SXM",
        bandwidth=3350 * G,
        peak=989 * T_,
        kind="assumed",
        source="NVIDIA H100 Tensor Core GPU datasheet: H100 SXM 80 GB HBM3, 3.35 TB/s; "
        "BF16 tensor core 1,979 TFLOPS with sparsity, so 989 TFLOPS dense.",
        dtype_note="bf16 tensor cores",
    ),
    "NVIDIA A100 80GB SXM": Hardware(
        "NVIDIA A100 80GB SXM",
        bandwidth=2039 * G,
        peak=312 * T_,
        kind="assumed",
        source="NVIDIA A100 Tensor Core GPU datasheet: A100 80GB SXM, HBM2e 2,039 GB/s; "
        "BF16 tensor core 312 TFLOPS dense (624 with sparsity).",
        dtype_note="bf16 tensor cores",
    ),
    "NVIDIA RTX 4090": Hardware(
        "NVIDIA RTX 4090",
        bandwidth=1008 * G,
        peak=165 * T_,
        kind="assumed",
        source="NVIDIA Ada Lovelace GPU architecture whitepaper, GeForce RTX 4090: GDDR6X "
        "1,008 GB/s; BF16 tensor core (FP32 accumulate) 165.2 TFLOPS dense.",
        dtype_note="bf16 tensor cores",
    ),
    "Apple M2 (laptop)": Hardware(
        "Apple M2 (laptop)",
        bandwidth=100 * G,
        peak=Fraction(36, 10) * T_,
        kind="assumed",
        source="Apple M2 announcement (June 2022): 100 GB/s unified memory bandwidth; "
        "10-core GPU up to 3.6 TFLOPS (float32).",
        dtype_note="float32 GPU",
    ),
    "Laptop CPU (8 cores, DDR5)": Hardware(
        "Laptop CPU (8 cores, DDR5)",
        bandwidth=Fraction(896, 10) * G,
        peak=768 * G,
        kind="assumed",
        source="Illustrative laptop, not one product: dual-channel DDR5-5600 (JEDEC speed "
        "grade: 2 × 8 B × 5.6 GT/s = 89.6 GB/s); 8 cores × 3 GHz × 32 float32 "
        "FLOP/cycle (two 8-wide AVX2 FMA units) = 768 GFLOP/s.",
        dtype_note="float32 AVX2",
    ),
}


def get_hardware(hw) -> Hardware:
    """A :class:`Hardware`, or the name of a preset in :data:`HARDWARE`."""
    if isinstance(hw, Hardware):
        return hw
    if isinstance(hw, str) and hw in HARDWARE:
        return HARDWARE[hw]
    raise ValueError(f"hardware must be a Hardware or one of {tuple(HARDWARE)}, got {hw!r}")


def float_hardware(hw) -> Hardware:
    """The same hardware with float numbers (fast arithmetic for labs and searches; exact
    Fractions are for checking, not for redrawing a figure)."""
    from dataclasses import replace

    h = get_hardware(hw)
    return replace(
        h, bandwidth=float(h.bandwidth), peak=float(h.peak), pass_overhead_s=float(h.pass_overhead_s)
    )


def hardware_from_benchmark(results, *, threads: int = 2) -> Hardware:
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


def pass_bytes(model, *, dtype, positions, sequences=1, context=0, weight_dtype=None, parts: bool = False):
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


def pass_flops(model, *, positions, sequences=1, context=0, parts: bool = False):
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


def arithmetic_intensity(flops, n_bytes):
    """FLOPs per byte moved (exact for exact inputs)."""
    f = check_nonnegative(flops, "flops", "a number of FLOPs")
    b = _positive(n_bytes, "n_bytes", "a number of bytes")
    return _div(f, b)


def ridge_point(hardware):
    """peak ÷ bandwidth, in FLOPs per byte: work below this intensity is memory-bound."""
    hw = get_hardware(hardware)
    return _div(hw.peak, hw.bandwidth)


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
        object.__setattr__(self, "total_s", _max(self.memory_s, self.compute_s) + self.overhead_s)

    @property
    def bound(self) -> str:
        """ "memory" or "compute": which limit sets the time (ties count as memory)."""
        return "memory" if self.memory_s >= self.compute_s else "compute"

    @property
    def intensity(self):
        return _div(self.flops, self.n_bytes)

    @property
    def total_ms(self):
        return self.total_s * 1000


def pass_time(
    model, hardware, *, dtype, positions, sequences=1, context=0, weight_dtype=None, overhead_s=None
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
        n_bytes=b, flops=f, memory_s=_div(b, hw.bandwidth), compute_s=_div(f, hw.peak), overhead_s=o
    )
    check_finite_result(
        out.total_ms if not isinstance(out.total_ms, Fraction) else 0.0,
        "the pass time",
        "this hardware's bandwidth / peak and overhead_s",
    )
    return out


def verification_cost(
    model, hardware, *, dtype, gamma, sequences=1, context=0, weight_dtype=None, overhead_s=None
):
    """Time of one pass over γ + 1 positions in units of one decode step (a pass over one
    position) at the same batch and context: 1 means verification is "free"."""
    g = check_gamma(gamma)
    kw = dict(
        dtype=dtype, sequences=sequences, context=context, weight_dtype=weight_dtype, overhead_s=overhead_s
    )
    one = pass_time(model, hardware, positions=1, **kw).total_s
    return _div(pass_time(model, hardware, positions=g + 1, **kw).total_s, one)


def memory_bound_positions(
    model, hardware, *, dtype, sequences=1, context=0, weight_dtype=None, max_positions: int = 4096
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


# ---------------------------------------------------------------- speculation on a roofline


@dataclass(frozen=True)
class ServingPoint:
    """One (batch S, γ, α) point of speculative decoding priced by the roofline.

    Times in seconds. ``target_s`` the verification pass (γ + 1 positions, S sequences),
    ``draft_s`` the γ draft passes (one position each), ``step_s`` a plain decode step of the
    target at the same batch; ``expected_tokens`` E[K] per sequence per round (iid α);
    ``throughput`` tokens/s across the batch; ``latency_per_token_s`` the mean time between a
    sequence's tokens; ``draft_ratio`` c = draft pass ÷ target decode step."""

    sequences: int
    gamma: int
    alpha: object
    expected_tokens: object
    draft_s: object
    target_s: object
    step_s: object
    draft_ratio: object
    target_bound: str

    @property
    def round_s(self):
        return self.draft_s + self.target_s

    @property
    def throughput(self):
        return _div(self.sequences * self.expected_tokens, self.round_s)

    @property
    def latency_per_token_s(self):
        return _div(self.round_s, self.expected_tokens)

    @property
    def speedup(self):
        """Rate with speculation ÷ rate of plain decoding at the same batch."""
        return speculation_speedup(self)


def serving_point(
    target, draft, hardware, *, dtype, alpha, gamma, sequences, context, weight_dtype=None
) -> ServingPoint:
    """Price one round: γ draft passes (each reads the draft's weights and its own cache for
    all S sequences) and one target pass over γ + 1 positions (the target's weights and S
    caches), on the same device. γ = 0 is plain decoding (no draft at all)."""
    a = check_probability(alpha, "alpha", scalar=True)
    g = check_gamma(gamma)
    kw = dict(dtype=dtype, sequences=sequences, context=context, weight_dtype=weight_dtype)
    step = pass_time(target, hardware, positions=1, **kw)
    tgt = pass_time(target, hardware, positions=g + 1, **kw) if g else step
    d_one = pass_time(draft, hardware, positions=1, **kw).total_s
    ek = expected_output_count(a, g)
    if not isinstance(ek, Fraction):
        ek = float(ek)
    return ServingPoint(
        sequences=check_int(sequences, "sequences", 1),
        gamma=g,
        alpha=a,
        expected_tokens=ek,
        draft_s=g * d_one,
        target_s=tgt.total_s,
        step_s=step.total_s,
        draft_ratio=_div(d_one, step.total_s),
        target_bound=tgt.bound,
    )


def serving_curve(
    target, draft, hardware, *, dtype, alpha, sequences, context, max_gamma: int
) -> tuple[ServingPoint, ...]:
    """:func:`serving_point` for γ = 0, 1, …, ``max_gamma`` (same arguments otherwise).

    Memoized (the last 256 curves): a lab asks for the same curve from its readouts and from its
    figure, and a learner moves back and forth between settings. The key is the arguments'
    ``repr``, which tells ``Fraction(1, 2)`` from ``0.5`` (exact in, exact out).
    """
    g = check_int(max_gamma, "max_gamma", 0, MAX_SERVING_GAMMA)
    key = repr((target, draft, hardware, dtype, alpha, sequences, context, g))
    curve = _CURVES.pop(key, None)
    if curve is None:
        kw = dict(dtype=dtype, alpha=alpha, sequences=sequences, context=context)
        curve = tuple(serving_point(target, draft, hardware, gamma=k, **kw) for k in range(g + 1))
        if len(_CURVES) >= 256:
            _CURVES.pop(next(iter(_CURVES)))
    _CURVES[key] = curve  # most recently used last
    return curve


_CURVES: dict = {}

#: serving_curve prices one round per γ = 0 … max_gamma: at most this many.
MAX_SERVING_GAMMA = 1000

#: roofline_curve prices one pass per position count: at most this many.
MAX_CURVE_POINTS = 10**4


def speculation_speedup(point: ServingPoint):
    """Notebook 05's ratio R/R₀ for a priced round, through :func:`timing.speedup_ratio`
    (times in ms): E[K] × plain step ÷ (draft + verification)."""
    from .timing import speedup_ratio

    if not isinstance(point, ServingPoint):
        raise ValueError(f"point must be a ServingPoint, got {type(point).__name__}")
    return speedup_ratio(
        point.expected_tokens,
        draft_ms=point.draft_s * 1000,
        verify_ms=point.target_s * 1000,
        baseline_ms=point.step_s * 1000,
    )


def break_even_batch(
    target, draft, hardware, *, dtype, alpha, gamma, context, max_sequences: int = 1024, weight_dtype=None
):
    """The smallest batch S ≤ ``max_sequences`` at which speculation with this γ no longer
    beats plain decoding at the same batch (speed-up ≤ 1), or ``None`` if it pays throughout.

    The speed-up falls as the batch grows (more of each pass turns compute-bound), so a
    bisection finds the crossing; float arithmetic (a search, not an exact result). The tests
    check it against a plain scan."""
    cap = check_int(max_sequences, "max_sequences", 1)
    check_int(check_gamma(gamma), "gamma", 1)
    hwf = float_hardware(hardware)
    a = float(check_probability(alpha, "alpha"))

    def loses(S):
        return (
            serving_point(
                target,
                draft,
                hwf,
                dtype=dtype,
                alpha=a,
                gamma=gamma,
                sequences=S,
                context=context,
                weight_dtype=weight_dtype,
            ).speedup
            <= 1
        )

    if loses(1):
        return 1
    if not loses(cap):
        return None
    lo, hi = 1, cap  # lo pays, hi loses
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if loses(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------- measured curves


def relative_cost(curve: dict) -> dict:
    """{T: time(T) ÷ time(1)}: a cost curve in decode steps."""
    if not isinstance(curve, dict) or 1 not in curve:
        raise ValueError("curve must be a dict {T: time} with T = 1")
    for T, v in curve.items():
        check_int(T, "curve's position T", 1)
        check_positive(v, f"curve[{T}]", "a positive, finite time")
    one = curve[1]
    return {T: _div(v, one) for T, v in curve.items()}


def roofline_curve(model, hardware, *, dtype, positions, context=0) -> dict:
    """{T: pass time in ms} at batch 1 for each T in ``positions``."""
    ts = check_int_sequence(positions, "positions", 1)
    check_size(len(ts), "positions", MAX_CURVE_POINTS, "passes")
    return {T: pass_time(model, hardware, dtype=dtype, positions=T, context=context).total_ms for T in ts}


# ---------------------------------------------------------------- what the paper reported

#: Leviathan, Kalman & Matias (2023), "Fast Inference from Transformers via Speculative
#: Decoding", ICML 2023 (arXiv:2211.17192), Table 2: T5-XXL (11B) target, batch 1, one TPU-v4,
#: walltime speed-up over the T5X baseline. Rows: (task, draft, temperature, γ, α, speed-up).
#: Reported numbers (neither derived nor measured here).
LEVIATHAN_TABLE2 = (
    ("EnDe", "T5-small", 0, 7, Fraction(75, 100), Fraction(34, 10)),
    ("EnDe", "T5-base", 0, 7, Fraction(80, 100), Fraction(28, 10)),
    ("EnDe", "T5-large", 0, 7, Fraction(82, 100), Fraction(17, 10)),
    ("EnDe", "T5-small", 1, 7, Fraction(62, 100), Fraction(26, 10)),
    ("EnDe", "T5-base", 1, 5, Fraction(68, 100), Fraction(24, 10)),
    ("EnDe", "T5-large", 1, 3, Fraction(71, 100), Fraction(14, 10)),
    ("CNNDM", "T5-small", 0, 5, Fraction(65, 100), Fraction(31, 10)),
    ("CNNDM", "T5-base", 0, 5, Fraction(73, 100), Fraction(30, 10)),
    ("CNNDM", "T5-large", 0, 3, Fraction(74, 100), Fraction(22, 10)),
    ("CNNDM", "T5-small", 1, 5, Fraction(53, 100), Fraction(23, 10)),
    ("CNNDM", "T5-base", 1, 3, Fraction(55, 100), Fraction(22, 10)),
    ("CNNDM", "T5-large", 1, 3, Fraction(56, 100), Fraction(17, 10)),
)
LEVIATHAN_SOURCE = (
    "Leviathan, Kalman & Matias, Fast Inference from Transformers via Speculative "
    "Decoding, ICML 2023 (arXiv:2211.17192), Table 2: T5-XXL target, batch 1, TPU-v4"
)


def implied_draft_cost(alpha, gamma, speedup):
    """The cost ratio c at which Leviathan et al.'s factor (1 − α^(γ+1)) / ((1 − α)(γc + 1))
    equals ``speedup``: c = (E[K] ÷ speed-up − 1) ÷ γ. Negative means the reported speed-up
    exceeds even a free draft's (c = 0) under iid acceptance."""
    g = check_int(check_gamma(gamma), "gamma", 1)
    s = _positive(speedup, "speedup", "a positive speed-up")
    ek = expected_output_count(check_probability(alpha, "alpha"), g)
    return (_div(ek, s) - 1) / g

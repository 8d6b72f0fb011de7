"""roofline.py: bytes and FLOPs of a pass by hand, exactness, the two limits, monotonicity,
units, the hardware presets and the measured-hardware reader; serving.py: the serving model."""

from fractions import Fraction as F

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdec_core.kv import PRESETS, ModelShape, model_kv_bytes
from specdec_core.roofline import (
    HARDWARE,
    Hardware,
    arithmetic_intensity,
    get_hardware,
    hardware_from_benchmark,
    memory_bound_positions,
    pass_bytes,
    pass_flops,
    pass_time,
    ridge_point,
    verification_cost,
)
from specdec_core.serving import serving_curve, serving_point, speculation_speedup
from specdec_core.timing import improvement_factor

TINY = ModelShape(
    "tiny",
    layers=2,
    kv_heads=1,
    head_dim=4,
    heads=2,
    hidden=8,
    intermediate=16,
    vocab=10,
    tied_embeddings=True,
    source="a hand-checkable toy shape for tests",
)


#: Issue 12's setting: the 8B target with the 1B draft on an A100 (bf16, α = 0.7, γ = 4).
A100_PAIR = ("Llama-3.1-8B", "Llama-3.2-1B", "NVIDIA A100 80GB SXM")
ISSUE12 = {"dtype": "bf16", "alpha": F(7, 10), "gamma": 4}


def hw(bw, peak, overhead=0):
    return Hardware(
        "toy", bandwidth=bw, peak=peak, pass_overhead_s=overhead, kind="assumed", source="declared in a test"
    )


# ---------------------------------------------------------------- by hand


def test_tiny_parameters_by_hand():
    # attention: 8·2·4·2 (q, o) + 8·1·4·2 (k, v) = 128 + 64; MLP 3·8·16 = 384; norms 16
    per_layer = 128 + 64 + 384 + 16
    assert TINY.parameters == 2 * per_layer + 10 * 8 + 8 == 1272


def test_pass_bytes_by_hand():
    # fp32 weights 1272·4; KV per token 2·2·1·4·4 = 64 B; 3 sequences × 5 cached, × 2 new
    p = pass_bytes(TINY, dtype="fp32", positions=2, sequences=3, context=5, parts=True)
    assert p == {"weights": 5088, "kv_read": 64 * 5 * 3, "kv_written": 64 * 2 * 3, "total": 5088 + 960 + 384}
    assert pass_bytes(TINY, dtype="fp32", positions=2, sequences=3, context=5) == 6432


def test_pass_flops_by_hand():
    # 2·1272·3·2 + 4·2 layers·2 heads·4 dims·3 seqs·(2·5 + 3)
    p = pass_flops(TINY, positions=2, sequences=3, context=5, parts=True)
    assert p["matmul"] == 15264
    assert p["attention"] == 4 * 2 * 2 * 4 * 3 * 13 == 2496
    assert p["total"] == 17760


def test_pass_time_exact_and_bound():
    t = pass_time(TINY, hw(1000, 10**6, F(1, 100)), dtype="fp32", positions=2, sequences=3, context=5)
    assert t.memory_s == F(6432, 1000) and t.compute_s == F(17760, 10**6)
    assert t.total_s == F(6432, 1000) + F(1, 100) and t.bound == "memory"
    assert isinstance(t.total_s, F)
    assert t.intensity == F(17760, 6432)


def test_smollm2_fp32_weights_match_field_notes():
    # field notes: 538 MB as float32
    b = pass_bytes("SmolLM2-135M", dtype="fp32", positions=1, context=0, parts=True)["weights"]
    assert round(b / 1e6) == 538


def test_llama8b_long_context_reads_exceed_weights():
    """Issue 12's first error: at 8,192 tokens, 16 sequences read more KV than weights."""
    p = pass_bytes("Llama-3.1-8B", dtype="bf16", positions=1, sequences=16, context=8192, parts=True)
    assert p["kv_read"] == 16 * 2**30 > p["weights"]


def test_draft_ratio_about_one_fifth():
    """Issue 12's second error: the 1B draft's own reads make c ≈ 0.2 at 16 × 8,192."""
    sp = serving_point(*A100_PAIR, **ISSUE12, sequences=16, context=8192)
    assert 0.19 < float(sp.draft_ratio) < 0.22


# ---------------------------------------------------------------- the two limits


@settings(max_examples=60, deadline=None)
@given(T=st.integers(1, 64), S=st.integers(1, 64), L=st.integers(0, 4096))
def test_limits(T, S, L):
    kw = dict(dtype="bf16", positions=T, sequences=S, context=L)
    b = pass_bytes("Llama-3.1-8B", **kw)
    f = pass_flops("Llama-3.1-8B", positions=T, sequences=S, context=L)
    # infinite compute: time = bytes / bandwidth; infinite bandwidth: time = FLOPs / peak
    fast_compute = pass_time("Llama-3.1-8B", hw(10**12, 10**40), **kw)
    fast_memory = pass_time("Llama-3.1-8B", hw(10**40, 10**15), **kw)
    assert fast_compute.total_s == F(b, 10**12) and fast_compute.bound == "memory"
    assert fast_memory.total_s == F(f, 10**15) and fast_memory.bound == "compute"


@settings(max_examples=60, deadline=None)
@given(
    T=st.integers(1, 32),
    S=st.integers(1, 32),
    L=st.integers(0, 2048),
    dT=st.integers(0, 8),
    dS=st.integers(0, 8),
    dL=st.integers(0, 512),
)
def test_monotone(T, S, L, dT, dS, dL):
    """More positions, sequences or context never move fewer bytes, fewer FLOPs or take less
    time; more bandwidth or peak never take more time."""
    a = dict(dtype="fp16", positions=T, sequences=S, context=L)
    b = dict(dtype="fp16", positions=T + dT, sequences=S + dS, context=L + dL)
    assert pass_bytes("Llama-3.2-1B", **a) <= pass_bytes("Llama-3.2-1B", **b)
    fa = {k: v for k, v in a.items() if k != "dtype"}
    fb = {k: v for k, v in b.items() if k != "dtype"}
    assert pass_flops("Llama-3.2-1B", **fa) <= pass_flops("Llama-3.2-1B", **fb)
    h = hw(10**11, 10**13)
    assert pass_time("Llama-3.2-1B", h, **a).total_s <= pass_time("Llama-3.2-1B", h, **b).total_s
    assert (
        pass_time("Llama-3.2-1B", hw(2 * 10**11, 10**13), **a).total_s
        <= pass_time("Llama-3.2-1B", h, **a).total_s
    )
    assert (
        pass_time("Llama-3.2-1B", hw(10**11, 2 * 10**13), **a).total_s
        <= pass_time("Llama-3.2-1B", h, **a).total_s
    )


@settings(max_examples=40, deadline=None)
@given(bw=st.integers(1, 10**6), peak=st.integers(1, 10**9), T=st.integers(1, 40))
def test_time_is_max_of_the_two(bw, peak, T):
    t = pass_time(TINY, hw(bw, peak), dtype="fp16", positions=T, context=3)
    assert t.total_s == max(F(t.n_bytes, bw), F(t.flops, peak))
    # the ridge point decides: intensity above it <=> compute-bound
    assert (t.bound == "compute") == (t.intensity > ridge_point(hw(bw, peak)))


def test_units_scale():
    """Twice the bandwidth and twice the peak halve the time (seconds = bytes ÷ bytes/s)."""
    a = pass_time("SmolLM2-135M", hw(10**10, 10**11), dtype="fp32", positions=7, context=100)
    b = pass_time("SmolLM2-135M", hw(2 * 10**10, 2 * 10**11), dtype="fp32", positions=7, context=100)
    assert b.total_s * 2 == a.total_s
    assert a.total_ms == a.total_s * 1000


def test_float_inputs_give_floats():
    t = pass_time(TINY, hw(1e3, 1e6), dtype="fp32", positions=2)
    assert isinstance(t.total_s, float)


def test_arithmetic_intensity_and_ridge():
    assert arithmetic_intensity(10, 4) == F(5, 2)
    assert ridge_point("NVIDIA A100 80GB SXM") == F(312 * 10**12, 2039 * 10**9)
    with pytest.raises(ValueError, match="n_bytes"):
        arithmetic_intensity(1, 0)


# ---------------------------------------------------------------- verification cost


def test_verification_free_when_memory_bound():
    # batch 1 on an A100: 5 positions cost within 0.1% of one
    v = verification_cost("Llama-3.1-8B", "NVIDIA A100 80GB SXM", dtype="bf16", gamma=4, context=1024)
    assert 1 <= v < F(1001, 1000)
    assert verification_cost(TINY, hw(1, 10**9), dtype="fp32", gamma=0) == 1


def test_verification_costs_gamma_plus_one_when_compute_bound():
    # infinite bandwidth, no attention (context 0, positions add only matmul FLOPs + triangle)
    v = verification_cost(TINY, hw(10**40, 10**6), dtype="fp32", gamma=3)
    f1 = pass_flops(TINY, positions=1)
    f4 = pass_flops(TINY, positions=4)
    assert v == F(f4, f1) and v > 4


def test_memory_bound_positions_matches_scan():
    for h in ("Laptop CPU (8 cores, DDR5)", "NVIDIA H100 SXM"):
        n = memory_bound_positions(
            "Llama-3.2-1B", h, dtype="bf16", sequences=4, context=512, max_positions=600
        )
        scan = [
            pass_time("Llama-3.2-1B", h, dtype="bf16", positions=T, sequences=4, context=512).bound
            for T in range(1, 601)
        ]
        expected = next((i for i, b in enumerate(scan) if b == "compute"), 600)
        assert n == expected
    assert memory_bound_positions(TINY, hw(10**40, 1), dtype="fp32") == 0


# ---------------------------------------------------------------- speculation on the roofline


def test_serving_curve_is_serving_point_per_gamma_and_keeps_exactness():
    kw = dict(dtype="bf16", sequences=4, context=1024)
    args = ("Llama-3.1-8B", "Llama-3.2-1B", "NVIDIA H100 SXM")
    for alpha in (F(1, 2), 0.5, F(1, 2)):  # equal and equally hashed, but not the same result type
        curve = serving_curve(*args, alpha=alpha, max_gamma=5, **kw)
        assert curve == tuple(serving_point(*args, alpha=alpha, gamma=g, **kw) for g in range(6))
        assert isinstance(curve[3].expected_tokens, F) == isinstance(alpha, F)
    # the roofline lab memoizes curves (serving_curve itself keeps no state), by the arguments'
    # repr: Fraction(1, 2) and 0.5 are equal and equally hashed, but not the same curve
    from specdec_core.labs.roofline import lab_serving_curve

    for alpha in (F(1, 2), 0.5, F(1, 2)):
        memo = lab_serving_curve(*args, alpha=alpha, max_gamma=5, **kw)
        assert memo == serving_curve(*args, alpha=alpha, max_gamma=5, **kw)
        assert isinstance(memo[3].expected_tokens, F) == isinstance(alpha, F)
    assert lab_serving_curve(*args, alpha=0.5, max_gamma=5, **kw) is lab_serving_curve(
        *args, alpha=0.5, max_gamma=5, **kw
    )
    with pytest.raises(ValueError, match="max_gamma"):
        serving_curve(*args, alpha=0.5, max_gamma=-1, **kw)
    with pytest.raises(ValueError, match="alpha"):
        serving_curve(*args, alpha=1.5, max_gamma=2, **kw)


def test_serving_point_gamma0_is_plain_decoding():
    sp = serving_point(
        "Llama-3.1-8B",
        "Llama-3.2-1B",
        "NVIDIA H100 SXM",
        dtype="bf16",
        alpha=F(1, 2),
        gamma=0,
        sequences=8,
        context=2048,
    )
    assert sp.draft_s == 0 and sp.expected_tokens == 1 and speculation_speedup(sp) == 1
    assert sp.throughput == 8 / sp.step_s


def test_speedup_matches_improvement_factor_when_verification_is_free():
    """With no attention and a memory-bound pass, notebook 05's Leviathan factor returns, with
    c the draft's step ratio and verification ≈ one step."""
    sp = serving_point(*A100_PAIR, **ISSUE12, sequences=1, context=0)
    want = improvement_factor(F(7, 10), 4, sp.draft_ratio)
    assert abs(float(sp.speedup) / float(want) - 1) < 1e-3


def test_speculation_stops_paying_under_load():
    """At short context a large batch turns the verification pass compute-bound, and γ = 8
    then loses to plain decoding; at batch 1 it wins."""
    kw = dict(dtype="bf16", alpha=F(7, 10), gamma=8, context=512)
    low = serving_point("Llama-3.1-8B", "Llama-3.2-1B", "NVIDIA A100 80GB SXM", sequences=1, **kw)
    high = serving_point("Llama-3.1-8B", "Llama-3.2-1B", "NVIDIA A100 80GB SXM", sequences=256, **kw)
    assert low.speedup > 1 > high.speedup
    assert high.target_bound == "compute"


# ---------------------------------------------------------------- hardware


def test_presets_have_sources_and_kinds():
    assert len(HARDWARE) >= 5
    for h in HARDWARE.values():
        assert h.kind == "assumed" and len(h.source) > 40
        assert get_hardware(h.name) is h


def test_hardware_from_benchmark():
    from specdec_core.measured import HardwareRun, Machine
    from specdec_core.measured.studies import Bandwidth, MatmulCurve

    bw = Bandwidth(20.0, 19.0, 2, 18.0, 17.0, 5, 11.0, 8, 2)
    curve = {
        s: MatmulCurve({1: (1.0, 1.0), 64: (2.0, 2.0)}, {1: g1, 64: g64}, 1.0, 1, 2)
        for s, g1, g64 in (("1x2", 5.0, 40.0), ("3x4", 10.0, 90.0))
    }
    machine = Machine.now().replace(cpu="X", date_utc="2026-01-01 00:00 UTC")
    res = HardwareRun(machine, False, {2: bw}, {2: curve}, (1, 64), ("1x2", "3x4"), 1.0)
    h = hardware_from_benchmark(res, threads=2)
    assert h.kind == "measured" and h.bandwidth == 20e9 and h.peak == 90e9 and "X" in h.source
    with pytest.raises(ValueError, match="threads=1"):
        hardware_from_benchmark(res, threads=1)
    with pytest.raises(ValueError, match="HardwareRun"):
        hardware_from_benchmark(msgspec.structs.asdict(res), threads=2)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(positions=0), "positions"),
        (dict(positions=1.0), "positions"),
        (dict(sequences=0), "sequences"),
        (dict(context=-1), "context"),
        (dict(dtype="fp64"), "dtype"),
    ],
)
def test_bad_inputs(kw, match):
    args = dict(dtype="bf16", positions=1, sequences=1, context=0) | kw
    with pytest.raises(ValueError, match=match):
        pass_time("Llama-3.2-1B", "NVIDIA H100 SXM", **args)


def test_bad_hardware():
    with pytest.raises(ValueError, match="bandwidth"):
        hw(0, 1)
    with pytest.raises(ValueError, match="peak"):
        hw(1, float("nan"))
    with pytest.raises(ValueError, match="hardware"):
        get_hardware("TPU v9")
    with pytest.raises(ValueError, match="alpha"):
        serving_point(TINY, TINY, hw(1, 1), dtype="fp32", alpha=2, gamma=1, sequences=1, context=0)


def test_a_broken_roofline_is_caught():
    """Adding the two limits instead of taking their maximum (a common slip) fails the limit
    test: with both limits finite the sum exceeds the max."""
    t = pass_time(TINY, hw(1000, 1000), dtype="fp32", positions=3)
    broken = t.memory_s + t.compute_s
    assert broken != t.total_s and t.total_s == max(t.memory_s, t.compute_s)


def test_kv_read_uses_kv_module():
    assert pass_bytes("Llama-3.1-8B", dtype="bf16", positions=1, context=100, parts=True)[
        "kv_read"
    ] == model_kv_bytes(PRESETS["Llama-3.1-8B"], "bf16", 100)


# ---------------------------------------------------------------- the lab (labs/roofline.py)


def test_roofline_lab_texts_at_defaults():
    from specdec_core.labs.roofline import DEFAULTS, roofline_texts

    t = roofline_texts(DEFAULTS)
    assert list(t) == ["step", "verify", "speedup", "note"]
    assert t["step"].startswith("[derived from assumed inputs]") and "memory-bound" in t["step"]
    assert "1.00 decode steps" in t["verify"]
    sp = serving_point(
        DEFAULTS["target"],
        DEFAULTS["draft"],
        DEFAULTS["hardware"],
        dtype="bf16",
        alpha=DEFAULTS["alpha"],
        gamma=DEFAULTS["gamma"],
        sequences=1,
        context=DEFAULTS["context"],
    )
    assert f"speed-up {float(sp.speedup):.2f}×" in t["speedup"]


@pytest.mark.parametrize(
    "changes",
    [
        dict(sequences=256, context=0),
        dict(sequences=256, context=32768, dtype="fp32"),
        dict(gamma=0),
        dict(gamma=16, alpha=1.0),
        dict(alpha=0.0),
        dict(hardware="Laptop CPU (8 cores, DDR5)"),
        dict(hardware="Apple M2 (laptop)", dtype="fp8"),
        dict(draft="Llama-3.1-70B"),
        dict(draft="SmolLM2-135M", target="SmolLM2-135M"),
    ],
)
def test_roofline_lab_extremes(changes):
    from specdec_core.labs.roofline import roofline_lab

    lab = roofline_lab().set(**changes)
    text = " ".join(lab.last_texts.values())
    assert "nan" not in text.lower() and "inf" not in text.lower()
    assert lab.png[:4] == b"\x89PNG"
    if changes.get("gamma") == 0:
        assert "1.00× over plain decoding" in lab.last_texts["speedup"]
    if "draft" in changes and changes["draft"] == "Llama-3.1-70B":
        assert "not smaller" in lab.last_texts["note"]


def test_roofline_lab_dom_contract():
    from specdec_core.labs.roofline import SPEC, roofline_lab

    lab = roofline_lab()
    assert "specdec-lab" in lab._dom_classes and "lab-roofline" in lab._dom_classes
    for key, c in lab.controls.items():
        assert f"lab-control-{key}" in c._dom_classes and c.value == SPEC.defaults[key]
    assert int(lab.figure.width) <= 760


# ---------------------------------------------------------------- measured curves, the paper


def test_relative_cost():
    from specdec_core.roofline import relative_cost

    assert relative_cost({1: 10.0, 2: 15.0}) == {1: 1.0, 2: 1.5}


def test_leviathan_rows_and_implied_cost():
    from specdec_core.serving import LEVIATHAN_TABLE2, implied_draft_cost

    assert len(LEVIATHAN_TABLE2) == 12
    # EnDe T5-small, greedy: α = 0.75, γ = 7, reported 3.4×; a free draft would give 3.6×
    task, draft, temp, g, a, s = LEVIATHAN_TABLE2[0]
    assert improvement_factor(a, g, 0) == (1 - a**8) / (1 - a)
    c = implied_draft_cost(a, g, s)
    assert improvement_factor(a, g, c) == s  # exact round trip
    with pytest.raises(ValueError, match="speedup"):
        implied_draft_cost(a, g, 0)


def test_break_even_batch():
    from specdec_core.serving import break_even_batch

    kw = dict(dtype="bf16", alpha=F(7, 10), gamma=8, context=512)
    S = break_even_batch("Llama-3.1-8B", "Llama-3.2-1B", "NVIDIA A100 80GB SXM", max_sequences=256, **kw)
    assert S is not None and 1 < S <= 256
    pts = [
        serving_point("Llama-3.1-8B", "Llama-3.2-1B", "NVIDIA A100 80GB SXM", sequences=n, **kw)
        for n in (S - 1, S)
    ]
    assert pts[0].speedup > 1 >= pts[1].speedup


@pytest.mark.parametrize(
    "context,alpha,gamma", [(512, 0.6, 8), (512, 0.8, 2), (8192, 0.6, 8), (2048, 0.8, 2)]
)
def test_break_even_bisection_matches_scan(context, alpha, gamma):
    from specdec_core.serving import break_even_batch

    kw = dict(dtype="bf16", alpha=alpha, gamma=gamma, context=context)
    got = break_even_batch("Llama-3.1-8B", "Llama-3.2-1B", "NVIDIA A100 80GB SXM", max_sequences=200, **kw)
    scan = next(
        (
            S
            for S in range(1, 201)
            if serving_point(
                "Llama-3.1-8B", "Llama-3.2-1B", "NVIDIA A100 80GB SXM", sequences=S, **kw
            ).speedup
            <= 1
        ),
        None,
    )
    assert got == scan


def test_roofline_lab_gamma_axis_has_integer_ticks():
    """γ is a count: the speed-up panel's axis shows no 2.5 / 7.5 ticks (lab walk 2026-12-05)."""
    from specdec_core.labs.roofline import DEFAULTS
    from specdec_core.plots.roofline import RooflinePlot

    plot = RooflinePlot(blit=False)
    plot.update(DEFAULTS)
    plot.fig.canvas.draw()
    ticks = [t for t in plot.ax2.get_xticks() if plot.ax2.get_xlim()[0] <= t <= plot.ax2.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks

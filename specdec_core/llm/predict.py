"""Predicting tokens per second *before* the speculative run, from inputs measured apart.

Two kinds of input, neither taken from the run being predicted:

* **Costs** (:class:`CostModel`) from isolated micro-benchmarks on a calibration context
  (not an evaluated prompt): the target call scoring T new positions (:func:`verify_cost_curve`),
  one draft call proposing γ tokens (:func:`draft_cost_curve`), and the sampler's own work
  per round with zero-cost stand-in models (:func:`overhead_curve`); the last two timed right
  after an untimed target step (:func:`target_pass`), from the cold caches a round leaves.
* **Acceptance** by teacher forcing along a target trajectory generated separately
  (:class:`RoundTrace`): greedy — walk the trajectory round by round and ask the draft what it
  would propose there (:func:`greedy_trace`); temperature 1 — α_j = Σ_x min(p_j, q_j) at each
  position j of a sampled trajectory (:func:`alpha_along`), turned into rounds by Monte Carlo
  (:func:`sampled_traces`).

:func:`predict_decode` combines them with notebook 05's model: a round costs
draft(γ_r) + verify(γ_r + 1) + overhead(γ_r) and emits K_r tokens. It accepts only a
CostModel and RoundTraces; it refuses run records, so it cannot read the logs of the run it
predicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..distributions import (
    MAX_GAMMA,
    check_cost_curve,
    check_gamma,
    check_int,
    check_int_sequence,
    check_level,
    check_positive,
    check_probability,
    check_rows,
    check_sequence,
    check_temperature,
    check_token_ids,
)
from ..measured.timer import time_calls
from ..repeats import MAX_REPEATS
from .adapters import CachedTarget

# ---------------------------------------------------------------- micro-benchmarks


def _timed(calls: dict, reps: int, flush=None) -> dict:
    """{point: Spread of ms} by the one timer (:func:`specdec_core.measured.timer.time_calls`,
    interleaved), after one untimed sweep; ``flush`` runs untimed before every call, the sweep's
    included."""
    for f in calls.values():
        if flush is not None:
            flush()
        f()
    return time_calls(calls, reps, flush=flush, sweep=False)


def verify_cost_curve(model, context, Ts, *, temperature, reps=5):
    """Milliseconds of one ``CachedTarget.score`` call scoring T new positions after
    ``context`` (forward pass, head, probabilities at the temperature) — exactly the target
    call of a round with γ = T − 1 (T = 1: a plain decoding step)."""
    context = [int(t) for t in context]
    tgt = CachedTarget(model, temperature)
    tgt.prefill(context[:-1])
    V = model.cfg.vocab_size

    def one(T):
        cont = [(13 * i + 7) % V for i in range(T - 1)]
        return lambda: tgt.score(context, cont)

    return _timed({T: one(T) for T in Ts}, reps, flush=lambda: tgt.cache.rollback(len(context) - 1))


def rewind(draft, context):
    """Put a stateful draft where a round finds it: everything but the last context token seen."""
    context = [int(t) for t in context]
    if hasattr(draft, "cache"):
        if draft.cache.n == 0:
            draft.prefill(context[:-1])
        draft.cache.rollback(min(draft.cache.n, len(context) - 1))
    elif hasattr(draft, "sync"):
        draft.reset()
        draft.sync(context[:-1])


def target_pass(model, context):
    """A callable running one untimed target step after ``context`` on a cache of its own: what
    precedes a draft call and the sampler's work in a real round. The step streams the whole
    model through the processor's caches, so whatever a micro-benchmark times next starts as
    cold as it does inside a run (a warm repeat of a draft call alone ran ≈ 0.8 ms faster per
    round than the same call inside a run, in the stored capstone of 2026-12-03)."""
    context = [int(t) for t in context]
    tgt = CachedTarget(model, 1.0)
    tgt.prefill(context[:-1])

    def step():
        tgt.cache.rollback(len(context) - 1)
        tgt.logits(context)

    return step


def draft_cost_curve(draft, context, gammas, *, reps=5, seed=0, before=None):
    """Milliseconds of one ``draft.propose(context, γ)`` call from the state a round finds it
    in (:func:`rewind`; ``before``, e.g. :func:`target_pass`, runs untimed just before each
    timed call). γ = 0 times ``draft.available`` (adaptive prompt lookup's check) when the
    draft has one, else 0."""
    context = [int(t) for t in context]
    rng = np.random.default_rng(seed)

    def one(g):
        if g == 0:
            return (lambda: draft.available(context, 16)) if hasattr(draft, "available") else (lambda: None)
        return lambda: draft.propose(context, g, rng)

    def flush():
        rewind(draft, context)
        if before is not None:
            before()

    return _timed({g: one(g) for g in gammas}, reps, flush=flush)


class _Canned:
    """Zero-cost stand-ins returning fixed rows, to time the sampler alone."""

    def __init__(self, p_rows, q_rows):
        self.p, self.q = p_rows, q_rows

    def score(self, prefix, continuation):
        return self.p[: len(continuation) + 1]

    def __call__(self, prefix):
        return self.p[0]

    def propose(self, prefix, gamma, rng):
        return list(range(1, gamma + 1)), self.q[:gamma]


def overhead_curve(vocab_size, gammas, *, temperature, reps=20, seed=0, before=None):
    """Milliseconds the sampler spends per round outside the models (acceptance draws,
    residual or bonus draw, checks), timed with zero-cost canned models over the real
    vocabulary size: γ ≥ 1 one ``speculative_round``; γ = 0 one plain decoding step.
    ``before`` (e.g. :func:`target_pass`) runs untimed just before each timed round."""
    from ..sampling import autoregressive_generate, speculative_round

    rng = np.random.default_rng(seed)
    g_max = max(max(gammas), 1)
    if temperature == 0:  # one-hot rows; the canned proposals are all accepted (bonus path)
        p = np.zeros((g_max + 1, vocab_size))
        p[np.arange(g_max + 1), np.arange(1, g_max + 2) % vocab_size] = 1.0
        q = p[:g_max].copy()
    else:  # dense rows; proposals accepted or rejected at random (residual or bonus path)
        p = rng.dirichlet(np.full(vocab_size, 0.05), size=g_max + 1)
        q = 0.5 * p[:g_max] + 0.5 / vocab_size
    fake = _Canned(p, q)

    def one(g):
        if g == 0:
            return lambda: autoregressive_generate(fake, (0,), max_new_tokens=1, rng=rng)
        return lambda: speculative_round(fake, fake, (0,), gamma=g, rng=rng)

    return _timed({g: one(g) for g in gammas}, reps, flush=before)


# ---------------------------------------------------------------- the cost model


def _interp(curve: dict, x: int, name: str, what: str) -> float:
    """The curve at ``x``: measured, or linearly between the two measured points around it.
    Outside the measured range it is refused (a ValueError naming the curve and its range),
    never held flat at the last point nor extrapolated: a cost beyond the points measured is
    not known."""
    xs = list(curve)  # sorted by check_cost_curve
    if not xs[0] <= x <= xs[-1]:
        raise ValueError(
            f"{name} is measured for {what} from {xs[0]} to {xs[-1]}; {what} = {x} is outside that range "
            "(CostModel interpolates between measured points and refuses to extrapolate: measure it)"
        )
    return float(np.interp(x, xs, [float(curve[k]) for k in xs]))


@dataclass(frozen=True)
class CostModel:
    """Milliseconds, from micro-benchmarks: ``verify_ms[T]`` one target call of T new
    positions; ``draft_ms[γ]`` one draft call of γ proposals (γ = 0: the availability check
    of an adaptive draft, or 0); ``overhead_ms[γ]`` the sampler per round (γ = 0: a plain
    step). Points between measured ones are interpolated linearly; a point outside a curve's
    measured range is **refused** (ValueError naming the curve and its range), neither held at
    the last measured value nor extrapolated. ``draft_ms`` / ``overhead_ms`` left out (None):
    free at every γ (0 ms)."""

    verify_ms: dict
    draft_ms: dict | None = None
    overhead_ms: dict | None = None

    @classmethod
    def from_micro(cls, micro, temperature: float, draft: str | None = None) -> CostModel:
        """The medians of the capstone's micro-benchmarks (a
        :class:`specdec_core.measured.capstone.Micro`) at ``temperature``, with ``draft``'s
        proposal curve (None: plain decoding, no draft)."""
        t = float(check_temperature(temperature, "temperature"))
        if t not in micro.verify or t not in micro.overhead:
            raise ValueError(f"temperature = {temperature!r} was not measured (have {sorted(micro.verify)})")
        if draft is not None and draft not in micro.draft:
            raise ValueError(f"draft = {draft!r} was not measured (have {sorted(micro.draft)})")
        d = micro.draft[draft].median() if draft is not None else {0: 0.0}
        return cls(micro.verify[t].median(), d, micro.overhead[t].median())

    def __post_init__(self):
        for name, low in (("verify_ms", 1), ("draft_ms", 0), ("overhead_ms", 0)):
            d = getattr(self, name)
            if d is not None:
                curve = check_cost_curve(d, name, low=low)
                object.__setattr__(self, name, {k: float(v) for k, v in curve.items()})

    def _part(self, name: str, x: int, what: str) -> float:
        curve = getattr(self, name)
        return 0.0 if curve is None else _interp(curve, x, name, what)

    def round_ms(self, gamma: int, first: bool = False) -> float:
        """One round of γ proposals: verify(γ + 1) + draft(γ) + overhead(γ) (the first round of
        a generation scores max(γ, 1) positions: its first token's position is in the prefill)."""
        gamma = check_gamma(gamma, high=MAX_GAMMA)
        T = max(gamma, 1) if first else gamma + 1  # the first round's last token is in the prefill
        return (
            self._part("verify_ms", T, "T")
            + self._part("draft_ms", gamma, "gamma")
            + self._part("overhead_ms", gamma, "gamma")
        )


@dataclass(frozen=True)
class RoundTrace:
    """One predicted way a generation splits into rounds: γ used and proposals accepted per
    round (from teacher forcing, never from a timed run)."""

    gammas: tuple
    accepted: tuple

    def __post_init__(self):
        g = check_int_sequence(self.gammas, "gammas", 0, MAX_GAMMA)
        a = check_int_sequence(self.accepted, "accepted", 0)
        if len(g) != len(a):
            raise ValueError(f"gammas and accepted must have one entry per round, got {len(g)} and {len(a)}")
        bad = next((i for i, (x, y) in enumerate(zip(g, a)) if y > x), None)
        if bad is not None:
            raise ValueError(
                f"accepted[{bad}] = {a[bad]} is more than the round's gamma = {g[bad]} proposals"
            )
        object.__setattr__(self, "gammas", g)
        object.__setattr__(self, "accepted", a)

    @property
    def tokens(self) -> int:
        return sum(a + 1 for a in self.accepted)

    @property
    def rounds(self) -> int:
        return len(self.gammas)


def greedy_trace(draft, prompt, trajectory, gamma, *, adaptive=False) -> RoundTrace:
    """Greedy decoding emits the target's greedy trajectory whatever the draft does, so the
    rounds follow from the draft alone: at each round start i, ask the draft for its proposals
    after prompt + trajectory[:i] and count how many match the trajectory."""
    prompt, traj = list(check_token_ids(prompt, "prompt")), list(check_token_ids(trajectory, "trajectory"))
    gamma = check_gamma(gamma, high=MAX_GAMMA)
    n = len(traj)
    if n == 0:
        raise ValueError("trajectory is empty: a trace needs at least one round")
    rng = np.random.default_rng(0)
    i, gs, acc = 0, [], []
    while i < n:
        g = min(gamma, n - i - 1)
        ctx = prompt + traj[:i]
        if adaptive and g > 0:
            g = min(g, draft.available(ctx, g))
        a = 0
        if g > 0:
            toks = list(draft.propose(ctx, g, rng)[0])[:g]
            while a < g and toks[a] == traj[i + a]:
                a += 1
        gs.append(g)
        acc.append(a)
        i += a + 1
    return RoundTrace(tuple(gs), tuple(acc))


def alpha_along(p_rows, q_rows) -> np.ndarray:
    """α_j = Σ_x min(p_j(x), q_j(x)) for each row pair (teacher forcing at temperature 1)."""
    p, q = check_rows(p_rows, "p_rows"), check_rows(q_rows, "q_rows")
    if p.shape != q.shape or p.ndim != 2:
        raise ValueError(f"p_rows and q_rows must be (n, V) of one shape, got {p.shape} and {q.shape}")
    return np.minimum(p, q).sum(axis=1)


def sampled_traces(alpha, gamma, *, avail=None, sims=300, seed=0) -> list:
    """Monte Carlo rounds from per-position acceptance α_j: a round starting at i with
    γ_r = min(γ, n − i − 1[, avail_i]) accepts proposal t with probability α_{i+t} until the
    first rejection. ``avail``: per position, how many proposals an adaptive draft offers.
    ``alpha`` may be (n, D): α by position and by proposal depth (a draft that feeds its own
    predictions, whose later proposals are accepted less often); proposal t of a round uses
    column min(t, D − 1)."""
    alpha = np.asarray(check_probability(alpha, "alpha"), np.float64)
    if alpha.ndim == 1:
        alpha = alpha[:, None]
    if alpha.ndim != 2 or alpha.shape[1] < 1 or alpha.shape[0] < 1:
        raise ValueError(f"alpha must be (n,) or (n, depth) with n >= 1, got shape {alpha.shape}")
    gamma = check_gamma(gamma, high=MAX_GAMMA)
    sims = check_int(sims, "sims", 1, 10**6)
    seed = check_int(seed, "seed", 0)
    if avail is not None:
        avail = check_int_sequence(avail, "avail", 0)
        if len(avail) != alpha.shape[0]:
            raise ValueError(f"avail must have one entry per position ({alpha.shape[0]}), got {len(avail)}")
    D = alpha.shape[1]
    n = len(alpha)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(sims):
        i, gs, acc = 0, [], []
        while i < n:
            g = min(gamma, n - i - 1)
            if avail is not None:
                g = min(g, int(avail[i]))
            a = 0
            while a < g and rng.random() < alpha[i + a, min(a, D - 1)]:
                a += 1
            gs.append(g)
            acc.append(a)
            i += a + 1
        out.append(RoundTrace(tuple(gs), tuple(acc)))
    return out


def median_range(
    costs: CostModel, by_trajectory, repeats: int, *, level: float = 0.95
) -> tuple[float, float]:
    """(low, high) tokens/s in which the median of ``repeats`` timed runs is expected.

    At temperature 1 every timed run samples its own trajectory, so its acceptance varies from
    run to run as much as from one teacher-forced trajectory to another. Each trajectory's
    traces give one prediction (:func:`predict_decode`). A speed is positive and its spread is
    multiplicative, so the range is built on the log scale, where the median is exact (the
    median of log speeds is the log of the median speed): with s the standard deviation of the
    trajectories' log predictions, the median of ``repeats`` runs has a standard error of about
    1.2533·s/√repeats (the median of a normal sample), and the range is the pooled prediction
    ×/÷ exp(z·that) (z for the central ``level``). Its low end is therefore always above 0
    (a ± range on the linear scale went negative when trajectories differed widely), and for a
    small spread it is the linear ± range to first order. Costs are taken as fixed: the range
    is acceptance's share of the uncertainty, and with a handful of trajectories s is itself
    rough. Trajectories may differ in length (a stop token): each one's speed is its own
    tokens over its own time, and the pooled prediction weights them as :func:`predict_decode`
    does."""
    groups = [
        check_sequence(g, "by_trajectory's traces") for g in check_sequence(by_trajectory, "by_trajectory")
    ]
    if len(groups) < 2 or not all(groups):
        raise ValueError("by_trajectory must hold the traces of at least 2 trajectories, none empty")
    repeats = check_int(repeats, "repeats", 1, MAX_REPEATS)
    level = float(check_level(level, "level"))
    if not 1e-6 <= level <= 1 - 1e-12:
        raise ValueError(f"level must be in [1e-6, 1 − 1e-12], got {level!r}")
    per = np.log([predict_decode(costs, g)["tokens_per_s"] for g in groups])
    center = predict_decode(costs, [t for g in groups for t in g])["tokens_per_s"]
    half = NormalDist().inv_cdf((1 + level) / 2) * 1.2533 * float(np.std(per, ddof=1)) / np.sqrt(repeats)
    return center * float(np.exp(-half)), center * float(np.exp(half))


def predict_decode(costs: CostModel, traces) -> dict:
    """Predicted decode-only time and tokens/s: ``decode_ms`` the mean over ``traces``
    (RoundTraces) of Σ_rounds costs.round_ms(γ_r), ``tokens_per_s`` all traces' tokens over all
    their time (mean tokens ÷ mean time: each trace's own speed weighted by its time, as one long
    run through them all would measure). Traces may differ in length (trajectories cut by a stop
    token); for traces of one length this is tokens ÷ ``decode_ms``. ``rounds``, ``mean_k`` and
    ``alpha`` are means per trace, per round and per checked proposal. Raises ValueError for
    anything else (a timed run's record cannot be passed in)."""
    if not isinstance(costs, CostModel):
        raise ValueError(f"costs must be a CostModel, got {type(costs).__name__}")
    if isinstance(traces, RoundTrace):
        traces = [traces]
    try:
        traces = list(traces)
    except TypeError:
        raise ValueError(
            f"traces must be RoundTrace objects (teacher forcing), got {type(traces).__name__}"
        ) from None
    if not traces or not all(isinstance(t, RoundTrace) for t in traces):
        raise ValueError("traces must be RoundTrace objects (teacher forcing), not run records")
    ms = [sum(costs.round_ms(g, first=(r == 0)) for r, g in enumerate(t.gammas)) for t in traces]
    mean_ms = float(np.mean(ms))
    if mean_ms <= 0:
        raise ValueError("costs: every round of the traces costs 0 ms, so tokens per second is undefined")
    return {
        "decode_ms": mean_ms,
        "tokens_per_s": 1e3 * float(np.mean([t.tokens for t in traces])) / mean_ms,
        "rounds": float(np.mean([t.rounds for t in traces])),
        "mean_k": float(np.mean([t.tokens / t.rounds for t in traces])),
        "alpha": float(
            np.sum([sum(t.accepted) for t in traces])
            / max(
                1,
                np.sum(
                    [sum(t.accepted) + sum(1 for g, a in zip(t.gammas, t.accepted) if a < g) for t in traces]
                ),
            )
        ),
    }


def plain_trace(n: int) -> RoundTrace:
    """Plain decoding as rounds: n rounds of γ = 0, one token each."""
    n = check_int(n, "n", 1)
    return RoundTrace((0,) * n, (0,) * n)


def break_even_alpha(costs: CostModel, gamma: int, *, speedup: float = 1.0, tol: float = 1e-9):
    """The acceptance α at which speculative decoding with ``gamma`` proposals per round
    matches plain decoding under ``costs`` (iid acceptance, notebook 04's E[K]):

        E[K](α, γ) · (verify(1) + overhead(0)) = draft(γ) + verify(γ + 1) + overhead(γ),

    or, with ``speedup`` s, is s times as fast (E[K] · step = s · round). E[K] grows from 1
    (α = 0) to γ + 1 (α = 1), so the root is unique; returns None when even α = 1 does not
    reach it (the round costs more than (γ + 1)/s plain steps). ``tol``: the bisection stops
    when α is known within it (a number in (0, 1); it also stops at adjacent floats)."""
    from ..counts import expected_output_count

    if not isinstance(costs, CostModel):
        raise ValueError(f"costs must be a CostModel, got {type(costs).__name__}")
    gamma = check_int(gamma, "gamma", 1, MAX_GAMMA)
    s = float(check_positive(speedup, "speedup"))
    tol = float(check_level(tol, "tol"))
    step = costs.round_ms(0)
    if step <= 0:
        raise ValueError("costs: a plain step (verify(1) + overhead(0)) costs 0 ms, so no break-even exists")
    need = s * costs.round_ms(int(gamma)) / step  # E[K] the round must reach
    if not np.isfinite(need):
        raise ValueError(f"speedup × round ÷ step overflows for speedup = {speedup!r}")
    if need <= 1:
        return 0.0
    if need > gamma + 1:
        return None
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if mid in (lo, hi):  # adjacent floats: as close as float64 gets
            break
        if float(expected_output_count(mid, int(gamma))) < need:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2

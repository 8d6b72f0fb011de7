"""Sampling transforms — temperature, top-k, top-p, greedy — and how they meet verification.

Every transform maps distributions to distributions along the last axis (shape (V,) or
(..., V)). Floats give float64; exact inputs (Fraction / int / sympy Rational) stay exact where
the math allows: top-k, top-p and greedy always, temperature when 1/T is a whole number.

**Tie rule (one rule everywhere).** Symbols are ranked by probability, highest first, and
equal probabilities are ranked by *lower index first*. Greedy picks the first of that ranking
(``np.argmax``); top-k keeps exactly the first k of it (never more, even when the k-th and
(k+1)-th are tied); top-p keeps the shortest prefix of it whose mass reaches p. Zero-probability
symbols are never kept.

**The guarantee.** Strict speculative sampling emits the target's law for the two distributions
it is *given*: p must be the distribution you want to sample (the transformed target) and q must
be the distribution the draft *really* sampled its proposal from. :func:`verified_output`
computes the law of the emitted token when the proposal is drawn from ``sampled`` but the
verifier is told ``q`` — equal to ``p`` exactly when ``sampled == q``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .distributions import (
    check_distribution,
    check_int,
    check_model_rows,
    check_nonnegative,
    check_reals,
    check_temperature,
    inverse_cdf,
    is_exact,
)
from .verify import acceptance_probabilities, correction_weights

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import ArrayLike

    from .types import ModelFn, Probs, Scalar

    #: A one-argument transform of distributions (see :func:`make_transform`).
    Transform = Callable[[np.ndarray], np.ndarray]

#: Float slack when comparing a running sum with top_p (0.6 + 0.3 is 0.8999999999999999).
#: Applied whenever top_p or p is a float, so exact and float inputs keep the same symbols.
TOP_P_TOL = 1e-12
#: apply_temperature stays exact for exact p when 1/T is a whole number up to this (p^n with a
#: larger n has huge numerators); beyond it the float path is used.
MAX_EXACT_POWER = 1000


# ---------------------------------------------------------------- helpers


def _dist(p, name="p"):
    arr = check_distribution(p, name)
    return arr, arr.dtype == object


def _ranking(arr: np.ndarray) -> np.ndarray:
    """Indices along the last axis, highest probability first, ties by lower index."""
    if arr.dtype == object:
        out = np.empty(arr.shape, dtype=np.int64)
        for idx in np.ndindex(arr.shape[:-1]):
            row = arr[idx]
            out[idx] = sorted(range(len(row)), key=lambda i: (-row[i], i))
        return out
    return np.argsort(-arr, axis=-1, kind="stable")


def _renormalize(kept: np.ndarray) -> np.ndarray:
    total = kept.sum(axis=-1, keepdims=True)
    return kept / total


# ---------------------------------------------------------------- the transforms


def softmax(logits: ArrayLike, temperature: float = 1.0) -> np.ndarray:
    """Stable softmax of ``logits / temperature`` along the last axis (float64).

    ``-inf`` logits are allowed (masked symbols get probability 0); NaN, ``+inf`` and rows that
    are all ``-inf`` are errors. ``temperature = 0`` is greedy decoding: one-hot at the argmax
    (ties: lower index).
    """
    if isinstance(logits, (str, bytes)) or logits is None:
        raise ValueError("logits must be an array of numbers")
    try:
        z = (
            logits
            if isinstance(logits, np.ndarray) and logits.dtype.kind == "f"
            else check_reals(logits, "logits")
        )
    except ValueError as exc:
        raise ValueError(f"logits must be a rectangular array of real numbers ({exc})") from None
    if z.ndim == 0 or z.shape[-1] == 0:
        raise ValueError(f"logits must have a non-empty last axis, got shape {z.shape}")
    # one pass finds each row's maximum, and it carries every bad entry: NaN and +inf propagate
    # into it, and a row that is all -inf has -inf as its maximum
    top = z.max(axis=-1, keepdims=True)
    if not np.isfinite(top).all():
        if np.isnan(top).any():
            raise ValueError("logits contains NaN")
        if np.isposinf(top).any():
            raise ValueError("logits contains +inf")
        raise ValueError("logits has a row where every entry is -inf")
    t = check_temperature(temperature)
    if t == 0:
        out = np.zeros(z.shape)
        np.put_along_axis(out, np.argmax(z, axis=-1)[..., None], 1.0, axis=-1)
        return out
    # differences are <= 0 (or -inf for masked symbols); a tiny T sends them to -inf (-> 0) and a
    # huge T towards 0 (-> uniform): neither is an error, so no overflow/underflow warnings.
    # One float64 scratch array, updated in place (a model's (rows, V) logits are large).
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        e = np.subtract(z, top, dtype=np.float64)
        if t != 1:
            e /= float(t)
        np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e


def greedy(p: Probs) -> np.ndarray:
    """One-hot at the most probable symbol (ties: the lower index). Exact stays exact."""
    arr, exact = _dist(p)
    first = _ranking(arr)[..., :1]
    out = np.zeros(arr.shape, dtype=np.float64)
    np.put_along_axis(out, first, 1.0, axis=-1)
    if exact:
        return np.vectorize(lambda v: Fraction(int(v)), otypes=[object])(out)
    return out


def apply_temperature(p: Probs, temperature: Scalar) -> np.ndarray:
    """p(x)^(1/T) / Σ_y p(y)^(1/T) — the same as softmax(logits / T) when p = softmax(logits).

    * T = 1 returns p unchanged (exact stays exact);
    * T = 0 is greedy (:func:`greedy`: one-hot, ties to the lower index). Note that the limit
      T → 0⁺ spreads the mass evenly over *tied* maxima; T = 0 picks one;
    * exact p with 1/T a whole number up to :data:`MAX_EXACT_POWER` (T = 1/2, 1/3, …) gives an
      exact result; otherwise float64,
      computed in log space so tiny and huge T stay finite (large T → uniform on the support).

    Zero-probability symbols stay at zero for every T.
    """
    arr, exact = _dist(p)
    t = check_temperature(temperature)
    if t == 0:
        return greedy(arr)
    if t == 1:
        return arr.copy()
    if exact and isinstance(t, Fraction) and (1 / t).denominator == 1 and 1 / t <= MAX_EXACT_POWER:
        n = int(1 / t)
        return _renormalize(np.vectorize(lambda v: v**n, otypes=[object])(arr))
    f = arr.astype(np.float64)
    with np.errstate(divide="ignore"):
        logp = np.log(f)
    # subtract the row maximum *before* dividing by T: differences are ≤ 0, so even a subnormal
    # T gives -inf (→ 0) rather than -inf − (-inf) = NaN; log 0 = -inf keeps zeros at zero
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        z = (logp - logp.max(axis=-1, keepdims=True)) / float(t)
        e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _check_k(k):
    return check_int(k, "k", 1)


def top_k(p: Probs, k: int) -> np.ndarray:
    """Keep the k most probable symbols (tie rule: lower index first — exactly k are kept, or
    fewer when the support is smaller), zero the rest, renormalize. k ≥ V is the identity."""
    arr, exact = _dist(p)
    k = _check_k(k)
    rank = np.empty(arr.shape, dtype=np.int64)
    np.put_along_axis(
        rank, _ranking(arr), np.broadcast_to(np.arange(arr.shape[-1]), arr.shape).copy(), axis=-1
    )
    keep = (rank < k) & (arr > 0)
    kept = np.where(keep, arr, Fraction(0) if exact else 0.0)
    if exact:
        kept = kept.astype(object)
    return _renormalize(kept)


def _check_top_p(top_p):
    v = check_nonnegative(top_p, "top_p", "a number in (0, 1]")
    if not 0 < v <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {v}")
    return v


def top_p(p: Probs, top_p: Scalar) -> np.ndarray:
    """Nucleus sampling: keep the shortest prefix of the ranking (highest first, ties by lower
    index) whose total mass is ≥ ``top_p``, zero the rest, renormalize.

    A symbol is kept when the mass ranked *before* it is < top_p, so the most probable symbol is
    always kept (top_p → 0 gives greedy) and top_p = 1 keeps the whole support. Exact inputs are
    compared exactly; floats with a slack of 1e-12 (so 0.6 + 0.3 counts as reaching 0.9).
    """
    arr, exact = _dist(p)
    tp = _check_top_p(top_p)
    order = _ranking(arr)
    sorted_p = np.take_along_axis(arr, order, axis=-1)
    before = np.cumsum(sorted_p, axis=-1) - sorted_p
    if exact:
        # an exact threshold is compared exactly; a float one with the float rule's slack, so
        # the same symbols are kept whichever kind p and top_p are
        tpe = tp if isinstance(tp, Fraction) else Fraction(tp) - Fraction(TOP_P_TOL)
        keep_sorted = np.vectorize(lambda b: b < tpe, otypes=[bool])(before)
    else:
        keep_sorted = before < float(tp) - TOP_P_TOL
    keep_sorted[..., 0] = True  # the most probable symbol always stays: top_p → 0 is greedy
    keep_sorted &= sorted_p > 0
    keep = np.zeros(arr.shape, dtype=bool)
    np.put_along_axis(keep, order, keep_sorted, axis=-1)
    kept = np.where(keep, arr, Fraction(0) if exact else 0.0)
    if exact:
        kept = kept.astype(object)
    return _renormalize(kept)


def support_size(p: Probs) -> int | np.ndarray:
    """Number of symbols with positive probability (per row)."""
    arr, _ = _dist(p)
    n = (arr > 0).sum(axis=-1)
    return int(n) if np.ndim(n) == 0 else n


# ---------------------------------------------------------------- named transforms


def make_transform(kind: str, value: Scalar | None = None) -> Transform:
    """A one-argument transform by name: ("none"), ("temperature", T), ("top_k", k),
    ("top_p", p), ("greedy"). Validated now, so a bad value fails here and not later."""
    if kind == "none":
        return lambda p: check_distribution(p, "p").copy()
    if kind == "greedy":
        return greedy
    if kind == "temperature":
        t = check_temperature(value)
        return lambda p: apply_temperature(p, t)
    if kind == "top_k":
        k = _check_k(value)
        return lambda p: top_k(p, k)
    if kind == "top_p":
        tp = _check_top_p(value)
        return lambda p: top_p(p, tp)
    raise ValueError(f"kind must be one of ('none', 'temperature', 'top_k', 'top_p', 'greedy'), got {kind!r}")


# ---------------------------------------------------------------- verification with transforms


def verified_output(p: Probs, q: Probs, sampled: Probs | None = None) -> np.ndarray:
    """Law of the token emitted at one verified position when the proposal is drawn from
    ``sampled`` but the verifier is told the draft distribution ``q`` (and the target ``p``):

        out(x) = sampled(x)·min(1, p(x)/q(x)) + (1 − Σ_y sampled(y)·min(1, p(y)/q(y)))·r(x),
        r = max(p − q, 0) / Σ max(p − q, 0).

    ``sampled=None`` means ``sampled = q`` (the honest case): then out = p exactly. A symbol the
    draft can sample but that ``q`` gives probability 0 is an error (the verifier would divide
    by zero; :func:`specdec_core.speculative_generate` refuses it too).
    """
    exact = is_exact(p) and is_exact(q) and (sampled is None or is_exact(sampled))
    pa = check_distribution(p, "p", exact=exact)
    qa = check_distribution(q, "q", exact=exact)
    sa = qa if sampled is None else check_distribution(sampled, "sampled", exact=exact)
    if not pa.shape == qa.shape == sa.shape:
        raise ValueError(f"p, q and sampled must have the same shape, got {pa.shape}, {qa.shape}, {sa.shape}")
    if ((sa > 0) & (qa == 0)).any():
        raise ValueError(
            "sampled puts mass on a symbol where q = 0: the verifier could not "
            "compute p/q for a proposal the draft can make"
        )
    ratio = acceptance_probabilities(pa, qa)
    pos = correction_weights(pa, qa, "unnormalized")  # max(p − q, 0)
    acc = sa * ratio
    rejected = 1 - acc.sum(axis=-1, keepdims=True)
    total = pos.sum(axis=-1, keepdims=True)
    if exact:
        out = acc.copy()
        for idx in np.ndindex(pa.shape[:-1]):
            rj, tt = rejected[idx][0], total[idx][0]
            if rj != 0:
                out[idx] = acc[idx] + rj * pos[idx] / tt
        return out
    safe = np.where(total > 0, total, 1.0)
    return acc + np.maximum(rejected, 0.0) * pos / safe


def one_position_acceptance(p: Probs, q: Probs, sampled: Probs | None = None) -> Scalar | np.ndarray:
    """Σ_x sampled(x)·min(1, p(x)/q(x)): how often the proposal is accepted (α when honest)."""
    out = verified_output(p, q, sampled)  # validates
    exact = out.dtype == object
    pa = check_distribution(p, "p", exact=exact)
    qa = check_distribution(q, "q", exact=exact)
    sa = qa if sampled is None else check_distribution(sampled, "sampled", exact=exact)
    return (sa * acceptance_probabilities(pa, qa)).sum(axis=-1)


#: The setups notebook 07 compares. For each: which transform the target's p gets, which the
#: draft *samples* with, which q it *reports*, and whether the intended law is kept.
SETUPS = {
    "correct": "same transform on both sides; q is what the draft sampled",
    "greedy_draft": "draft decodes greedily, but its (transformed) softmax is reported as q",
    "draft_only": "transform applied to the draft only; the target verifies with its raw p",
    "target_only": "transform applied to the target only; the draft samples raw q and reports it",
    "unreported": "draft samples from its transformed q but reports the raw softmax as q",
}


def setup_distributions(
    setup: str, p_raw: Probs, q_raw: Probs, transform: Transform
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(p used by the verifier, q reported, q actually sampled, intended law) for a setup.

    ``transform`` is a one-argument function (see :func:`make_transform`); the intended law is
    always ``transform(p_raw)``, the target as the user asked to sample it.
    """
    if setup not in SETUPS:
        raise ValueError(f"setup must be one of {tuple(SETUPS)}, got {setup!r}")
    if not callable(transform):
        raise ValueError("transform must be a callable taking a distribution")
    pr, qr, _ = _pair(p_raw, q_raw)
    pt, qt = transform(pr), transform(qr)
    if setup == "correct":
        return pt, qt, qt, pt
    if setup == "greedy_draft":
        return pt, qt, greedy(qr), pt
    if setup == "draft_only":
        return pr, qt, qt, pt
    if setup == "target_only":
        return pt, qr, qr, pt
    return pt, qr, qt, pt  # unreported


def _pair(p, q):
    from .distributions import check_pair

    return check_pair(p, q, ("p_raw", "q_raw"))


def setup_output(
    setup: str, p_raw: Probs, q_raw: Probs, transform: Transform
) -> tuple[np.ndarray, np.ndarray]:
    """(output law at a verified position, intended law) for a setup — see :data:`SETUPS`."""
    p_used, q_rep, q_smp, intended = setup_distributions(setup, p_raw, q_raw, transform)
    return verified_output(p_used, q_rep, q_smp), intended


# ---------------------------------------------------------------- model wrappers


class TransformedModel:
    """``fn(model(prefix))`` as a model for the samplers (rows cached per prefix).

    ``.exact(prefix)`` is offered when the base model has it; it applies ``fn`` to the exact row
    (so :func:`specdec_core.toy.sequence_law` gives an exact law when ``fn`` keeps exactness).
    """

    def __init__(self, model, fn, name=None):
        if not callable(model) or not callable(fn):
            raise ValueError("model and fn must both be callable")
        self.model, self.fn = model, fn
        self.name = name or f"{getattr(model, 'name', 'model')}∘transform"
        self.vocab_size = getattr(model, "vocab_size", None)
        self._cache = {}
        if hasattr(model, "exact"):
            self.exact = self._exact

    def __call__(self, prefix):
        key = tuple(prefix)
        row = self._cache.get(key)
        if row is None:
            row = np.asarray(self.fn(np.asarray(self.model(key), dtype=np.float64)), dtype=np.float64)
            self._cache[key] = row
        return row.copy()

    def _exact(self, prefix):
        return self.fn(self.model.exact(tuple(prefix)))

    def __repr__(self):
        return f"TransformedModel({self.name!r})"


def transformed(model: ModelFn, fn: Transform, name: str | None = None) -> TransformedModel:
    """Wrap a model (prefix → probabilities) so it returns ``fn`` of its output."""
    return TransformedModel(model, fn, name)


class MisreportingDraft:
    """A draft that samples its proposals from ``sampler(prefix)`` but hands the verifier
    ``reported(prefix)`` as q — the shape of every "q is not what was sampled" bug. With
    ``sampler is reported`` it is an honest draft. Works with ``speculative_generate`` through
    the ``propose(prefix, gamma, rng)`` fast path."""

    def __init__(self, sampler, reported, name="misreporting draft"):
        if not callable(sampler) or not callable(reported):
            raise ValueError("sampler and reported must both be callable")
        self.sampler, self.reported, self.name = sampler, reported, name

    def __call__(self, prefix):
        return np.asarray(self.reported(tuple(prefix)), dtype=np.float64)

    def propose(
        self, prefix: Sequence[int], gamma: int, rng: np.random.Generator
    ) -> tuple[tuple[int, ...], np.ndarray]:
        toks, rows = [], []
        ctx = tuple(prefix)
        for _ in range(gamma):
            s = check_model_rows(self.sampler(ctx), "sampler")
            x = inverse_cdf(s, rng.random())
            toks.append(x)
            rows.append(np.asarray(self.reported(ctx), dtype=np.float64))
            ctx = ctx + (x,)
        return tuple(toks), np.stack(rows)


def setup_models(
    setup: str, target: ModelFn, draft: ModelFn, fn: Transform
) -> tuple[ModelFn, ModelFn, ModelFn]:
    """(target model, draft model, intended model) for a setup on whole sequences, ready for
    :func:`specdec_core.speculative_generate`; the intended model is ``fn`` applied to the target."""
    if setup not in SETUPS:
        raise ValueError(f"setup must be one of {tuple(SETUPS)}, got {setup!r}")
    tt, dt = transformed(target, fn, "target∘f"), transformed(draft, fn, "draft∘f")
    if setup == "correct":
        return tt, dt, tt
    if setup == "greedy_draft":
        return tt, MisreportingDraft(transformed(draft, greedy, "greedy draft"), dt), tt
    if setup == "draft_only":
        return target, dt, tt
    if setup == "target_only":
        return tt, draft, tt
    return tt, MisreportingDraft(dt, draft), tt

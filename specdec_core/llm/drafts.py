"""Three drafts whose q is a genuine distribution over the whole vocabulary.

* :class:`NgramDraft` — a learned n-gram model: counts of the n-grams in prompt + output so
  far, smoothed by interpolated absolute discounting down to the unigram counts and a small
  uniform floor, so q(x) > 0 for every token. At temperature 1 the proposals are *sampled*
  from q and strict verification does real work: acceptance min(1, p/q), residual
  max(p − q, 0) after a rejection, bonus from p after a full acceptance.
* :class:`ExitDraft` — self-speculation with a trained early exit: the first k target layers,
  then an affine map fitted by least squares (:func:`fit_exit_map`, numpy closed form) from the
  layer-k residual stream to the last layer's, then the target's final norm and tied head.
  With the identity map it *is* the untrained layer-skip draft.
* :class:`QuantizedDraft` — the canonical draft of the papers, a cheaper model whose q is close
  to p: the target's own network with int8 weights (:func:`quantized_model`), its own KV cache,
  the compiled int8 product. Its α is high because quantizing each output row moves every
  weight by at most half a step of that row's scale, and the logits move little.

Both follow :mod:`specdec_core.sampling`'s draft protocol (``propose`` and ``__call__``), take
a :class:`~specdec_core.llm.adapters.CallLog`, and have ``prefill(prompt)`` and ``fresh``
for the benchmark's clean-state rule.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import numpy as np

from ..distributions import (
    check_gamma,
    check_int,
    check_nonnegative,
    check_reals,
    check_rng,
    check_token_ids,
    inverse_cdf,
)
from ..measured.timer import Stopwatch
from ..transforms import apply_temperature
from .adapters import CallLog, check_model_temperature, probs_from_logits, sample_proposals
from .layout import quantize_weights
from .model import Llama, rms_norm

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..measured.layout import LayoutChoice


def _check_fraction(x, name, low_open: bool, high_closed: bool):
    v = float(check_nonnegative(x, name, "a number"))
    if not ((0 < v if low_open else 0 <= v) and (v <= 1 if high_closed else v < 1)):
        lo, hi = "(" if low_open else "[", "]" if high_closed else ")"
        raise ValueError(f"{name} must be in {lo}0, 1{hi}, got {x!r}")
    return v


def _shape_rows(q, temperature):
    """A probability row at the draft's temperature (:func:`specdec_core.transforms.apply_temperature`:
    one-hot argmax at 0, q^(1/T) renormalized otherwise); q itself at 1."""
    return q if temperature == 1 else apply_temperature(q, temperature)


class NgramDraft:
    """Interpolated absolute-discount n-gram draft over prompt + output so far.

    For a context h of length m (m = n−1 … 1) seen c(h) times, with u(h) distinct followers:
    P_m(x | h) = max(c(h, x) − d, 0) / c(h) + d·u(h)/c(h) · P_{m−1}(x | shorter h);
    P_0(x) = (1 − ε)·c(x)/N + ε/V (unigram counts with a uniform floor ε). Unseen contexts
    back off unchanged. q is dense (all V entries positive) and sums to 1.
    ``discount`` d and ``floor`` ε are the knobs; the benchmark picks d on calibration prompts.
    Counts are updated incrementally as the output grows; proposals are never counted.
    """

    def __init__(
        self,
        vocab_size: int,
        n: int = 3,
        discount: float = 0.3,
        floor: float = 0.02,
        temperature: float = 1.0,
        log: CallLog | None = None,
    ):
        self.V = check_int(vocab_size, "vocab_size", 2)
        self.n = check_int(n, "n", 1)
        self.d = _check_fraction(discount, "discount", True, False)
        self.eps = _check_fraction(floor, "floor", True, True)
        self.temperature = check_model_temperature(temperature)
        self.log = log if log is not None else CallLog()
        self.reset()

    def reset(self) -> None:
        self.seen: list = []
        self.uni = np.zeros(self.V, np.float64)
        # counts[m][h] = {x: c(h, x)} for contexts h of length m
        self.counts = [defaultdict(lambda: defaultdict(int)) for _ in range(self.n)]

    @property
    def fresh(self) -> bool:
        return not self.seen

    def _add(self, tok):
        s = self.seen
        for m in range(1, self.n):
            if len(s) >= m:
                self.counts[m][tuple(s[len(s) - m :])][tok] += 1
        self.uni[tok] += 1
        s.append(tok)

    def sync(self, prefix: Sequence[int]) -> None:
        """Count the tokens of ``prefix`` not counted yet (rebuild if it is not an extension)."""
        prefix = list(check_token_ids(prefix, "prefix", self.V))
        if prefix[: len(self.seen)] != self.seen:
            self.reset()
        for t in prefix[len(self.seen) :]:
            if not 0 <= t < self.V:
                raise ValueError(f"token ids must be in [0, {self.V}), got {t}")
            self._add(t)

    prefill = sync

    def distribution(self, ctx: Sequence[int]) -> np.ndarray:
        """q(· | ctx) at temperature 1 from the current counts (float64, sums to 1)."""
        N = self.uni.sum()
        if N:
            q = self.uni * ((1 - self.eps) / N)
            q += self.eps / self.V
        else:
            q = np.full(self.V, 1.0 / self.V)
        for m in range(1, self.n):
            if len(ctx) < m:
                break
            follow = self.counts[m].get(tuple(ctx[len(ctx) - m :]))
            if not follow:
                continue
            c = sum(follow.values())
            q *= self.d * len(follow) / c
            for x, cx in follow.items():
                q[x] += max(cx - self.d, 0.0) / c
        q /= q.sum()
        return q

    def propose(
        self, prefix: Sequence[int], gamma: int, rng: np.random.Generator
    ) -> tuple[list[int], np.ndarray]:
        watch = Stopwatch()
        gamma, rng = check_gamma(gamma), check_rng(rng)
        self.sync(prefix)
        ctx = [int(x) for x in prefix]
        toks, rows = [], []
        for _ in range(gamma):
            q = _shape_rows(self.distribution(ctx), self.temperature)
            x = inverse_cdf(q, rng.random())
            toks.append(x)
            rows.append(q)
            ctx.append(x)
        self.log.add("draft", 0, gamma, watch.seconds())
        return toks, (np.stack(rows) if rows else np.zeros((0, self.V)))

    def __call__(self, prefix):
        self.sync(prefix)
        return _shape_rows(self.distribution([int(x) for x in prefix]), self.temperature)


def collect_residuals(
    model: Llama, sequences: Iterable[Sequence[int]], layers: Iterable[int]
) -> dict[int, np.ndarray]:
    """{layer: (N, dim) float32} residual streams of the target over the sequences (N = total
    positions); layer = model.n_layers gives the last one (before the final norm)."""
    out = {l: [] for l in layers}
    for seq in sequences:
        got = {}
        model.forward(list(seq), model.new_cache(len(seq)), collect=got)
        for l in layers:
            out[l].append(got[l])
    return {l: np.concatenate(v) for l, v in out.items()}


def fit_exit_map(x_k: np.ndarray, x_last: np.ndarray, shrink: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares affine map (A, b) with x_last ≈ x_k @ A + b, closed form in float64:

        minimize  Σ_positions ‖x_k A + b − x_last‖² + λ ‖A − I‖²,   λ = shrink · tr(x_kᵀ x_k) / dim,

    i.e. ridge regression *shrunk toward the identity* — toward plain layer skipping, which is
    what the map does with λ → ∞ (with b then the mean difference). With a few hundred
    positions for dim² parameters an unshrunk fit overfits and does worse than skipping on new
    text; the benchmark picks ``shrink`` on a validation prompt. Returns float32 A (dim, dim)
    and b (dim,)."""
    X = check_reals(x_k, "x_k")
    Y = check_reals(x_last, "x_last")
    if X.ndim != 2 or Y.shape != X.shape:
        raise ValueError(f"x_k and x_last must be (N, dim) arrays of one shape, got {X.shape} and {Y.shape}")
    if X.shape[0] < 2:
        raise ValueError("need at least 2 positions to fit the map")
    if not (np.isfinite(X).all() and np.isfinite(Y).all()):
        raise ValueError("x_k and x_last must be finite")
    shrink = float(check_nonnegative(shrink, "shrink", "a number >= 0"))
    D = X.shape[1]
    lam = shrink * float(np.einsum("ij,ij->", X, X)) / D
    mx, my = X.mean(axis=0), Y.mean(axis=0)
    Xc, Yc = X - mx, Y - my
    try:
        A = np.linalg.solve(Xc.T @ Xc + lam * np.eye(D), Xc.T @ Yc + lam * np.eye(D))
    except np.linalg.LinAlgError:
        raise ValueError(
            "x_k's centred positions do not span its dimensions (singular least squares): "
            "pass shrink > 0 or more, varied positions"
        ) from None
    b = my - mx @ A
    return A.astype(np.float32), b.astype(np.float32)


class _ModelDraft:
    """What the drafts that run a network of their own share: a KV cache of their own (``fresh``,
    ``reset``), γ proposals sampled from their rows (``propose``) and q after a prefix (``__call__``).
    A subclass sets ``model``, ``cache``, ``temperature``, ``log`` and defines ``_logits_after(ctx)``."""

    model: Llama

    @property
    def fresh(self) -> bool:
        return self.cache.n == 0

    def reset(self) -> None:
        self.cache.rollback(0)

    def propose(
        self, prefix: Sequence[int], gamma: int, rng: np.random.Generator
    ) -> tuple[list[int], np.ndarray]:
        v = self.model.cfg.vocab_size
        return sample_proposals(
            self._logits_after, prefix, gamma, rng, temperature=self.temperature, vocab=v, log=self.log
        )

    def __call__(self, prefix):
        ctx = list(check_token_ids(prefix, "prefix", self.model.cfg.vocab_size))
        return probs_from_logits(self._logits_after(ctx), self.temperature)[0]


class ExitDraft(_ModelDraft):
    """The first ``k`` target layers → x_k @ A + b → the target's final norm → tied head.
    ``A=None`` is the identity (the untrained layer-skip draft). Own KV cache (k layers)."""

    def __init__(
        self, model: Llama, k: int, A=None, b=None, temperature: float = 1.0, log: CallLog | None = None
    ):
        self.k = check_int(k, "k", 1, model.cfg.n_layers)
        self.base = model
        self.model = Llama(model.cfg, model.w, n_layers=self.k, check_dtype=model.check_dtype)
        dim = model.cfg.dim
        if (A is None) != (b is None):
            raise ValueError("give both A and b, or neither")
        if A is not None:
            A, b = check_reals(A, "A").astype(np.float32), check_reals(b, "b").astype(np.float32)
            if A.shape != (dim, dim) or b.shape != (dim,):
                raise ValueError(f"A must be ({dim}, {dim}) and b ({dim},), got {A.shape} and {b.shape}")
            if not (np.isfinite(A).all() and np.isfinite(b).all()):
                raise ValueError("A and b must be finite (a NaN map gives NaN rows)")
        self.A, self.b = A, b
        self.temperature = check_model_temperature(temperature)
        self.cache = self.model.new_cache()
        self.log = log if log is not None else CallLog()

    def logits_from_residual(self, x: np.ndarray) -> np.ndarray:
        if self.A is not None:
            x = x @ self.A + self.b
        h = rms_norm(x, self.model.w["output_norm"], self.model.cfg.rms_eps)
        return self.model.logits(h)

    def prefill(self, prompt: Iterable[int]) -> None:
        ctx = [int(t) for t in prompt]
        c = self.cache.common_prefix(ctx)
        self.cache.rollback(c)
        self.model.forward(ctx[c:], self.cache, final_norm=False)

    def _logits_after(self, ctx):
        if not ctx:
            raise ValueError("prefix must hold at least one token")
        c = self.cache.common_prefix(ctx)
        if c == len(ctx):  # already cached: recompute nothing, re-read the residual
            c = len(ctx) - 1
        self.cache.rollback(c)
        self.model.forward(ctx[c:], self.cache, final_norm=False)
        return self.logits_from_residual(self.cache.hidden[len(ctx) - 1 : len(ctx)])[0]

    def logits_along(self, tokens: Sequence[int]) -> np.ndarray:
        """Draft logits at every position of ``tokens`` from scratch (teacher forcing)."""
        cache = self.model.new_cache(len(tokens))
        return self.logits_from_residual(self.model.forward(list(tokens), cache, final_norm=False))


def quantized_model(model: Llama, choice: LayoutChoice | None = None) -> Llama:
    """The target's network with every weight matrix quantized to int8 per output row
    (:func:`specdec_core.llm.layout.quantize_weights`; ``choice``: the
    :class:`~specdec_core.measured.layout.LayoutChoice` whose int8 timings plan the product).
    Made once per loaded model (about a quarter of the float32 weights' bytes) and shared by every
    :class:`QuantizedDraft`: each draft has only its own cache."""
    if not isinstance(model, Llama):
        raise ValueError(f"model must be a Llama, got {type(model).__name__}")
    return Llama(model.cfg, quantize_weights(model.w, choice), check_dtype=model.check_dtype)


def quantization_report(model: Llama, qmodel: Llama) -> dict[str, float]:
    """How far :func:`quantized_model` moved the weights: per output row of every matrix, the RMS
    of the change over the RMS of the row (``row_error_median``, ``row_error_p99`` over all rows),
    and the bytes of the int8 and of the float32 matrices. Exact arithmetic on the stored weights:
    the same on every machine."""
    from .layout import as_rows

    if not isinstance(model, Llama) or not isinstance(qmodel, Llama):
        raise ValueError("model and qmodel must be Llama models (qmodel = quantized_model(model))")
    errs, f32, i8 = [], 0, 0
    for k, w in model.w.items():
        if getattr(w, "ndim", 0) != 2:
            continue
        dense, q = as_rows(w), qmodel.w[k]
        change = ((dense - q.dense()) ** 2).mean(axis=1)
        errs.append(np.sqrt(change / np.maximum((dense**2).mean(axis=1), 1e-30)))
        f32, i8 = f32 + dense.nbytes, i8 + q.nbytes
    e = np.concatenate(errs)
    return {
        "row_error_median": float(np.median(e)),
        "row_error_p99": float(np.quantile(e, 0.99)),
        "int8_bytes": int(i8),
        "float32_bytes": int(f32),
    }


class QuantizedDraft(_ModelDraft):
    """The quantized copy of the target as a draft: q = softmax(int8 model's logits / T), sampled
    γ times per round, each on the draft's own KV cache (rolled back to what the target kept).
    ``qmodel``: :func:`quantized_model` of the target, made once. Decoding with ``qmodel`` alone
    (``CachedTarget(qmodel, T)``) is faster still but samples q's law, not p's: the lossy path."""

    def __init__(self, qmodel: Llama, temperature: float = 1.0, log: CallLog | None = None):
        if not isinstance(qmodel, Llama):
            raise ValueError(f"qmodel must be a Llama (quantized_model), got {type(qmodel).__name__}")
        self.model = qmodel
        self.temperature = check_model_temperature(temperature)
        self.cache = qmodel.new_cache()
        self.log = log if log is not None else CallLog()

    def prefill(self, prompt: Iterable[int]) -> None:
        ctx = [int(t) for t in prompt]
        c = self.cache.common_prefix(ctx)
        self.cache.rollback(c)
        self.model.forward(ctx[c:], self.cache)

    def _logits_after(self, ctx):
        if not ctx:
            raise ValueError("prefix must hold at least one token")
        c = self.cache.common_prefix(ctx)
        self.cache.rollback(c)
        self.model.forward(ctx[c:], self.cache)  # nothing new when all is cached: re-read the row
        return self.model.logits(self.cache.hidden[len(ctx) - 1 : len(ctx)])[0]

    def logits_along(self, tokens: Sequence[int]) -> np.ndarray:
        """Draft logits at every position of ``tokens`` from scratch (teacher forcing)."""
        return self.model.logits_for(list(check_token_ids(tokens, "tokens", self.model.cfg.vocab_size)))

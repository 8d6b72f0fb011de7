"""A draft built from the target's own features (the idea of EAGLE, Li et al. 2024).

The target already computes, at every position t, its final-normed hidden state h_t — the state
whose logits (through the tied head) predict token t+1. The draft predicts the *next* state from
the current one and the token that follows it,

    ĥ_{t+1} = F(h_t, e(x_{t+1})[, h_{t−1}]),

and reads its proposal distribution through the target's own head: q = softmax(head(ĥ)/T). F is
fitted in closed form (ridge regression, float64, seconds — :func:`fit_feature_map`) on states
the target computed along text (:func:`collect_features`). To propose γ tokens the draft starts
from the target's real state (from the target's KV cache, no extra target work) and then feeds
its own predictions: ĥ_{L−1} = F(h_{L−2}, e(x_{L−1})), sample x_L, ĥ_L = F(ĥ_{L−1}, e(x_L)), …
(:class:`FeatureDraft`). A draft step costs one small map product and one head product; with a
*shortlist* of a few thousand frequent tokens the head shrinks from 576 × 49152 to 576 × 4096
and the whole step is a few percent of a target step.

Why the output law is exactly the target's, whatever F and the shortlist are: strict
verification only needs the q row each proposal was drawn from. A draft whose q has zeros (a
shortlist) never proposes those tokens; after a rejection the correction is drawn from
max(p − q, 0), which at a token with q = 0 is p itself — so such tokens keep their full mass p,
reached through corrections (and bonus tokens) only. The price is acceptance: α = Σ_x min(p, q)
= Σ_{x in shortlist} min(p(x), q(x)) ≤ p(shortlist); mass of p outside the shortlist can never
be accepted.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

import numpy as np

from ..distributions import (
    MAX_GAMMA,
    check_choice,
    check_gamma,
    check_int,
    check_nonnegative,
    check_positive,
    check_rng,
    check_sequence,
    check_temperature,
    check_token_ids,
)
from ..measured.timer import Stopwatch
from .adapters import CachedTarget, CallLog, probs_from_logits
from .layout import as_weight
from .model import Llama, product

INPUTS = ("h,e", "h,hprev,e")
# The most random features fit_feature_map accepts: its float64 normal equations hold a square
# matrix of (inputs + n_random)² numbers, 0.8 GB at 8192 (and 3 GB at 16384, beyond a 2 GB Binder).
MAX_RANDOM = 8192


def _check_progress(progress) -> Callable[[str], object] | None:
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be None or a callable taking one str (e.g. print), got {progress!r}")
    return progress


def _report(progress, message: str) -> None:
    if progress is not None:
        progress(message)


class Features(NamedTuple):
    """Aligned rows, one per position t that has a successor (float32, (N, dim) each):
    ``h`` = h_t, ``e`` = e(x_{t+1}), ``h_next`` = h_{t+1}, ``h_prev`` = h_{t−1} (h_t itself at
    t = 0); ``seq`` and ``pos``: which sequence and which t (int64, (N,))."""

    h: np.ndarray
    e: np.ndarray
    h_next: np.ndarray
    h_prev: np.ndarray
    seq: np.ndarray
    pos: np.ndarray


def collect_features(
    model: Llama, sequences: Iterable[Sequence[int]], *, progress: Callable[[str], object] | None = None
) -> Features:
    """Run the target once from scratch over each token sequence (fresh cache) and return the
    aligned features, concatenated over the sequences (sequences shorter than 2 give no rows).
    ``progress`` (e.g. ``print``) is called with a short line after every quarter of the
    sequences (no times: the lines are the same on every run)."""
    progress = _check_progress(progress)
    V = model.cfg.vocab_size
    sequences = [
        check_token_ids(s, f"sequences[{i}]", V)
        for i, s in enumerate(check_sequence(sequences, "sequences", "a sequence of token sequences"))
    ]
    marks = {max(1, round(len(sequences) * f / 4)) for f in range(1, 5)}
    hs, es, hn, hp, sq, ps = [], [], [], [], [], []
    for i, seq in enumerate(sequences):
        if i + 1 in marks:
            _report(progress, f"target states: sequence {i + 1} of {len(sequences)}")
        seq = list(seq)
        if len(seq) < 2:
            continue
        h = model.forward(seq, model.new_cache(len(seq)))
        n = len(seq) - 1
        hs.append(h[:n])
        es.append(model.embed(seq[1:]))
        hn.append(h[1:])
        hp.append(np.concatenate([h[:1], h[: n - 1]]))
        sq.append(np.full(n, i, np.int64))
        ps.append(np.arange(n, dtype=np.int64))
    if not hs:
        raise ValueError("sequences must hold at least one sequence of 2 or more tokens")
    f32 = [np.ascontiguousarray(np.concatenate(a), dtype=np.float32) for a in (hs, es, hn, hp)]
    return Features(*f32, np.concatenate(sq), np.concatenate(ps))


@dataclasses.dataclass(frozen=True, eq=False)
class FeatureMap:
    """ĥ_{t+1} = W · φ(x) + b for the input x = [h_t, (h_{t−1},) e(x_{t+1})] (``inputs``).

    φ(x) = x, followed, when ``n_random`` > 0, by random features max(0, R·z + c) of the
    standardized input z = (x − mu)/sd (a nonlinear map still fitted in closed form).
    ``renorm``: rescale the prediction so that ĥ/g has unit RMS (g = the final norm's weight),
    as every real final-normed state has. ``logit_scale`` multiplies the draft's logits of a
    *predicted* state (a ridge prediction is shrunk toward the mean and gives flatter logits; a
    scale > 1 undoes that; chosen on held-out data). All arrays float32; ``n`` positions and
    ``ridge`` record what it was fitted on."""

    W: np.ndarray  # (dim, n_features), stored (out, in) for model.product
    b: np.ndarray  # (dim,)
    inputs: str
    ridge: float
    n: int
    R: np.ndarray | None = None  # (n_random, n_inputs)
    c: np.ndarray | None = None  # (n_random,)
    mu: np.ndarray | None = None  # (n_inputs,)
    sd: np.ndarray | None = None  # (n_inputs,)
    renorm: bool = False
    norm_weight: np.ndarray | None = None  # g, (dim,), needed by renorm
    logit_scale: float = 1.0

    @property
    def dim(self) -> int:
        return self.W.shape[0]

    @property
    def n_random(self) -> int:
        return 0 if self.R is None else self.R.shape[0]

    def with_logit_scale(self, s: float) -> FeatureMap:
        s = float(check_positive(s, "logit_scale", "a positive, finite number"))
        return dataclasses.replace(self, logit_scale=s)

    def design(self, h, e, h_prev=None) -> np.ndarray:
        """The map's input rows φ(x), float32 (N, n_features)."""
        parts = _parts(self.inputs, h, h_prev, e)
        if self.inputs == "h,hprev,e" and h_prev is None:
            raise ValueError("this map's inputs include h_prev: pass h_prev")
        x = np.concatenate([np.atleast_2d(np.asarray(a, np.float32)) for a in parts], axis=1)
        if self.R is None:
            return x
        z = (x - self.mu) / self.sd
        return np.concatenate([x, np.maximum(product(z, self.R) + self.c, 0.0)], axis=1)

    def apply(self, h, e, h_prev=None) -> np.ndarray:
        """ĥ for rows of h, e (and h_prev): (N, dim) float32."""
        out = product(self.design(h, e, h_prev), self.W) + self.b
        if self.renorm:
            g = self.norm_weight
            out = out / np.sqrt(np.mean((out / g) ** 2, axis=1, keepdims=True) + 1e-12)
        return out.astype(np.float32, copy=False)


def _check_rows(name, a, n=None, dim=None):
    a = np.asarray(a)
    if a.ndim != 2 or (n is not None and a.shape[0] != n) or (dim is not None and a.shape[1] != dim):
        want = f"({'N' if n is None else n}, {'dim' if dim is None else dim})"
        raise ValueError(f"{name} must be a {want} array, got shape {a.shape}")
    if a.dtype.kind not in "fiu" or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must hold finite numbers (no NaN or inf)")
    return a


def fit_feature_map(
    h: np.ndarray,
    e: np.ndarray,
    h_next: np.ndarray,
    *,
    h_prev: np.ndarray | None = None,
    ridge: float = 1e-2,
    inputs: str = "h,hprev,e",
    n_random: int = 1024,
    renorm: bool = False,
    norm_weight: np.ndarray | None = None,
    seed: int = 0,
    progress: Callable[[str], object] | None = None,
) -> FeatureMap:
    """Ridge regression ĥ_{t+1} = W φ(x_t) + b in closed form (float64 normal equations).

    Columns of φ are standardized before the fit (then folded back into W, b), the intercept is
    not penalized, and the penalty is ``ridge`` · N · ‖W_std‖² (N = rows): ``ridge`` is
    scale-free (1e-3 = each standardized column shrunk as if by 0.1 % of its own energy).
    ``inputs``: "h,e" or "h,hprev,e" (then ``h_prev`` is required). ``n_random`` > 0 appends
    that many ReLU random features (seeded by ``seed``). ``renorm`` needs ``norm_weight`` (the
    model's ``w["output_norm"]``); ``n_random`` is at most :data:`MAX_RANDOM`. ``progress``
    (e.g. ``print``) is called with one short line per stage (no times, so the lines are the same
    on every run). Raises ValueError naming the bad argument.

    The defaults are the best of benchmarks/feature_study.py on SmolLM2-135M (results/features.json):
    inputs [h_t, h_{t−1}, e(x_{t+1})] plus 1024 ReLU random features, ridge 1e-2, no renorm, fitted
    on ≈33k positions (docstrings + the target's own temperature-1 samples of calibration prompts):
    depth-1 α at T = 1 of 0.48 on held-out docstrings, 0.24 on held-out calibration samples and
    0.19 / 0.28 / 0.30 on the copy / code / story workloads' own continuations (plain [h_t, e]:
    0.47, 0.23, 0.16 / 0.22 / 0.25)."""
    inputs = check_choice(inputs, "inputs", INPUTS)
    h, e, h_next, h_prev = _check_fit_rows(h, e, h_next, h_prev, inputs)
    N, D = h.shape
    ridge = float(check_nonnegative(ridge, "ridge"))
    n_random = _check_n_random(n_random)
    progress = _check_progress(progress)
    norm_weight = _check_norm_weight(norm_weight, D) if renorm else None
    _check_enough_rows(N, (3 if inputs == "h,hprev,e" else 2) * D + n_random, ridge)
    X = np.concatenate([np.asarray(a, np.float32) for a in _parts(inputs, h, h_prev, e)], axis=1)
    _report(
        progress, f"fit: {N} positions, inputs {inputs} ({X.shape[1]} numbers) + {n_random} random features"
    )
    X, R, c, mu, sd = _with_random_features(X, n_random, check_int(seed, "seed", 0))
    _report(progress, f"fit: solving the normal equations ({X.shape[1]} × {X.shape[1]}, float64)")
    W, b = _ridge_fit(X.astype(np.float64), np.asarray(h_next, np.float64), ridge)
    _report(progress, "fit: done")
    return FeatureMap(
        W=np.ascontiguousarray(W.T, dtype=np.float32),
        b=b.astype(np.float32),
        inputs=inputs,
        ridge=ridge,
        n=N,
        R=R,
        c=c,
        mu=mu,
        sd=sd,
        renorm=bool(renorm),
        norm_weight=norm_weight,
    )


def _parts(inputs: str, h, h_prev, e) -> list:
    """The blocks of φ's input rows, in order: [h, h_prev, e] or [h, e]."""
    return [h, h_prev, e] if inputs == "h,hprev,e" else [h, e]


def _check_fit_rows(h, e, h_next, h_prev, inputs: str) -> tuple:
    """(h, e, h_next, h_prev) checked: the same (N, D) rows each; h_prev only (and then
    required) when ``inputs`` is "h,hprev,e"."""
    h = _check_rows("h", h)
    N, D = h.shape
    e = _check_rows("e", e, N, D)
    h_next = _check_rows("h_next", h_next, N, D)
    if inputs == "h,hprev,e":
        if h_prev is None:
            raise ValueError("h_prev is required when inputs is 'h,hprev,e'")
        h_prev = _check_rows("h_prev", h_prev, N, D)
    return h, e, h_next, h_prev


def _check_n_random(n_random) -> int:
    n_random = check_int(n_random, "n_random", 0, what=f"an integer from 0 to {MAX_RANDOM} (random features)")
    if n_random > MAX_RANDOM:
        raise ValueError(
            f"n_random must be at most {MAX_RANDOM} (its normal equations would not fit in memory), got {n_random}"
        )
    return n_random


def _check_enough_rows(N: int, n_features: int, ridge: float) -> None:
    if N < 2:
        raise ValueError(f"h: need at least 2 rows to fit, got {N}")
    if ridge == 0 and N <= n_features:
        raise ValueError(f"h: {N} rows are too few for {n_features} features without ridge")


def _check_norm_weight(norm_weight, D: int) -> np.ndarray:
    if norm_weight is None:
        raise ValueError("norm_weight (the model's output_norm weight) is required when renorm is set")
    norm_weight = np.asarray(norm_weight, np.float32)
    if norm_weight.shape != (D,) or not np.all(np.isfinite(norm_weight)) or np.any(norm_weight == 0):
        raise ValueError(f"norm_weight must be ({D},) finite and non-zero")
    return norm_weight


def _with_random_features(X: np.ndarray, n_random: int, seed: int) -> tuple:
    """X (float32) with ``n_random`` ReLU random features of its standardized columns appended:
    ``(X, R, c, mu, sd)`` (the last four ``None`` when ``n_random`` is 0)."""
    if not n_random:
        return X, None, None, None, None
    n_in = X.shape[1]
    mu = X.mean(axis=0, dtype=np.float64).astype(np.float32)
    sd = (X.std(axis=0, dtype=np.float64) + 1e-6).astype(np.float32)
    rng = np.random.default_rng(seed)
    R = (rng.standard_normal((n_random, n_in)) / np.sqrt(n_in)).astype(np.float32)
    c = (0.5 * rng.standard_normal(n_random)).astype(np.float32)
    return np.concatenate([X, np.maximum(product((X - mu) / sd, R) + c, 0.0)], axis=1), R, c, mu, sd


def _ridge_fit(X: np.ndarray, Y: np.ndarray, ridge: float) -> tuple[np.ndarray, np.ndarray]:
    """Y ≈ X W + b (float64): columns standardized, penalty ``ridge`` · N · ‖W_std‖² on the
    standardized weights, intercept free; W folded back to X's scale, (n_features, dim)."""
    mx, my = X.mean(axis=0), Y.mean(axis=0)
    Xc = X - mx
    s = np.sqrt((Xc * Xc).mean(axis=0)) + 1e-12
    Xs = Xc / s
    G = Xs.T @ Xs
    G[np.diag_indices_from(G)] += ridge * len(X)
    Ws = np.linalg.solve(G, Xs.T @ (Y - my)) if ridge > 0 else np.linalg.lstsq(Xs, Y - my, rcond=None)[0]
    W = Ws / s[:, None]
    return W, my - mx @ W


def predicted_states(fmap: FeatureMap, feats: Features, depth: int) -> tuple:
    """Teacher-forced chains of the map along the sequences, for depths k = 1 … ``depth``: a
    chain starts from the real h_t (row r), applies the map k times with the real next tokens
    e(x_{t+1}), …, e(x_{t+k}), feeding its own predictions, and its ĥ estimates h_{t+k} =
    ``feats.h_next[r + k − 1]``. Returns, per depth, (start rows r, target rows r + k − 1, ĥ)."""
    out = []
    idx = np.arange(len(feats.h))
    cur_h, cur_prev, rows, nh = feats.h, feats.h_prev, idx, None
    for k in range(1, depth + 1):
        if k > 1:
            # continue chains whose next row (same sequence, next position) exists
            nxt = rows + 1
            ok = nxt < len(feats.h)
            ok[ok] &= feats.seq[nxt[ok]] == feats.seq[rows[ok]]
            keep = np.flatnonzero(ok)
            rows, cur_prev, cur_h = rows[keep] + 1, cur_h[keep], nh[keep]
        nh = fmap.apply(cur_h, feats.e[rows], cur_prev)
        out.append((rows - (k - 1), rows, nh))
    return out


def alpha_by_depth(
    model: Llama,
    fmap: FeatureMap,
    feats: Features,
    *,
    depth: int = 4,
    temperatures=(1.0, 0.0),
    shortlists=None,
    first_state=None,
    chunk: int = 512,
) -> dict:
    """Mean acceptance α = Σ_x min(p, q) of the chained map at depths 1 … ``depth``, teacher
    forced along the sequences (the chain sees the real tokens, i.e. the earlier proposals were
    accepted). p = softmax(head(h)/T), q the draft's row; temperature 0 compares argmaxes.
    ``shortlists``: {name: token ids or None (full head)}; q is restricted to the shortlist, p
    never. ``first_state``: per sequence, the first predicted position counted (e.g. the
    prompt's last position, so only continuation tokens count). Returns
    {shortlist name: {T: [α at depth 1, …]}} and, under "_n", the positions per depth."""
    shortlists = {"full": None} if shortlists is None else shortlists
    head = model.w["head"]
    res = {name: {float(T): [] for T in temperatures} for name in shortlists}
    counts = []
    for _, tr, nh in predicted_states(fmap, feats, depth):
        target_pos = feats.pos[tr] + 1
        keep = np.ones(len(tr), bool)
        if first_state is not None:
            keep = target_pos >= np.asarray(first_state)[feats.seq[tr]]
        tr, nh = tr[keep], nh[keep]
        counts.append(int(len(tr)))
        acc = {name: {float(T): 0.0 for T in temperatures} for name in shortlists}
        for s0 in range(0, len(tr), chunk):
            zp = product(feats.h_next[tr[s0 : s0 + chunk]], head)
            zq = product(nh[s0 : s0 + chunk], head) * np.float32(fmap.logit_scale)
            for T in temperatures:
                T = float(T)
                p = probs_from_logits(zp, T)
                for name, sl in shortlists.items():
                    if sl is None:
                        q = probs_from_logits(zq, T)
                        acc[name][T] += float(np.minimum(p, q).sum())
                    else:
                        ids = np.asarray(sl)
                        qs = probs_from_logits(zq[:, ids], T)
                        acc[name][T] += float(np.minimum(p[:, ids], qs).sum())
        for name in shortlists:
            for T in temperatures:
                res[name][float(T)].append(acc[name][float(T)] / max(len(tr), 1))
    res["_n"] = counts
    return res


def shortlist_from_counts(token_sequences: Iterable[Sequence[int]], size: int) -> np.ndarray:
    """The ``size`` most frequent token ids over the sequences (ties: smaller id first), sorted
    ascending, int64. Fewer if fewer distinct tokens occur."""
    size = check_int(size, "size", 1)
    c = Counter()
    for i, s in enumerate(
        check_sequence(token_sequences, "token_sequences", "a sequence of token sequences")
    ):
        c.update(check_token_ids(s, f"token_sequences[{i}]"))
    if not c:
        raise ValueError("token_sequences must hold at least one token")
    top = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[: int(size)]
    return np.array(sorted(k for k, _ in top), dtype=np.int64)


class FeatureDraft:
    """The draft of the module docstring, reading the target's states from ``target``'s cache.

    Proposing after a prefix of length L:

    * the target's cache normally holds positions 0 … L−2 (the last prefix token, the round's
      correction or bonus, is scored in the next verification call): start from the real
      h_{L−2}, ĥ_{L−1} = F(h_{L−2}, e(x_{L−1})). Only the cached positions whose tokens equal
      the prefix are used (rejected proposals beyond them are ignored).
    * if the cache already holds position L−1 too (right after ``prefill(prompt)``), start from
      the real h_{L−1}: the first row is then the target's own p (restricted to the shortlist,
      if any), with no map application.
    * if it holds fewer (a fresh target, or another prefix): **fallback** — the target's cache is
      filled up to prefix[:−1] (L−1 positions, one forward call, counted as draft time and as a
      "draft-prefill" call in the log), then as in the first case. The target's next
      verification call scores only what it would have scored anyway.

    Then sample x from q = softmax(head(ĥ)·s/T) (s = ``fmap.logit_scale`` for predicted states,
    1 for real ones; T = 0 is argmax), feed ĥ and x to the map for the next position, and so on.
    ``shortlist``: token ids; q is 0 outside them and the head is restricted to their rows
    (precomputed once). The law stays the target's; see the module docstring for why and for
    what it costs in α.

    The draft holds no state of its own (``reset`` does nothing; ``fresh`` is the target's);
    ``prefill(prompt)`` makes sure the target holds the prompt.
    """

    def __init__(
        self,
        target: CachedTarget,
        fmap: FeatureMap,
        temperature: float = 1.0,
        shortlist=None,
        log: CallLog | None = None,
    ):
        if not isinstance(target, CachedTarget):
            raise ValueError(f"target must be a CachedTarget, got {type(target).__name__}")
        if not isinstance(fmap, FeatureMap):
            raise ValueError(f"fmap must be a FeatureMap, got {type(fmap).__name__}")
        self.target = target
        self.model: Llama = target.model
        self.V = self.model.cfg.vocab_size
        if fmap.dim != self.model.cfg.dim:
            raise ValueError(f"fmap predicts {fmap.dim}-dim states, the model has {self.model.cfg.dim}")
        self.fmap = fmap
        self.temperature = float(check_temperature(temperature))
        if shortlist is None:
            self.rows = None
            self.head = self.model.w["head"]
        else:
            ids = np.unique(np.asarray(check_token_ids(shortlist, "shortlist", self.V), dtype=np.int64))
            self.rows = ids
            self.head = as_weight(self.model.head_rows(ids))  # validates the ids
        self.log = log if log is not None else CallLog()
        self.fallbacks = 0

    @property
    def fresh(self) -> bool:
        return self.target.fresh

    def reset(self):
        """Nothing of its own to forget (the target's owner resets the target)."""

    def prefill(self, prompt):
        prompt = list(check_token_ids(prompt, "prompt", self.V))
        if self.target.cache.common_prefix(prompt) < len(prompt):
            self.target.prefill(prompt)

    def _start(self, prefix):
        """(h, h_prev, needs_map, fallback seconds): the real state to start from."""
        L = len(prefix)
        if L == 0:
            raise ValueError("prefix must hold at least one token")
        cache = self.target.cache
        c = cache.common_prefix(prefix)
        spent = 0.0
        if c < L - 1 or c == 0:
            watch = Stopwatch()
            cache.rollback(c)
            stop = max(L - 1, 1)
            self.model.forward(prefix[c:stop], cache)
            self.fallbacks += 1
            spent = watch.seconds()
            self.log.add("draft-prefill", stop - c, 0, spent)
            c = stop
        i = L - 1 if c >= L else L - 2
        hp = cache.hidden[max(i - 1, 0) : max(i - 1, 0) + 1].copy()
        return cache.hidden[i : i + 1].copy(), hp, c < L, spent

    def _row(self, h, predicted):
        z = product(h, self.head)
        if predicted and self.fmap.logit_scale != 1.0:
            z = z * np.float32(self.fmap.logit_scale)
        return probs_from_logits(z, self.temperature)[0]

    def _full(self, qs):
        if self.rows is None:
            return qs
        q = np.zeros(self.V)
        q[self.rows] = qs
        return q

    def propose(self, prefix, gamma, rng):
        from ..distributions import inverse_cdf

        watch = Stopwatch()
        ctx = list(check_token_ids(prefix, "prefix", self.V))
        if not ctx:
            raise ValueError("prefix must hold at least one token (the draft continues a text)")
        gamma = check_gamma(gamma, high=MAX_GAMMA)
        rng = check_rng(rng)
        h, hp, needs_map, spent = self._start(ctx)
        toks, rows = [], []
        tok = ctx[-1]
        for i in range(gamma):
            if needs_map or i > 0:
                h, hp = self.fmap.apply(h, self.model.embed([tok]), hp), h
            qs = self._row(h, predicted=needs_map or i > 0)
            j = inverse_cdf(qs, rng.random())
            tok = int(j if self.rows is None else self.rows[j])
            toks.append(tok)
            rows.append(self._full(qs))
        self.log.add("draft", 0, gamma, watch.seconds() - spent)
        return toks, (np.stack(rows) if rows else np.zeros((0, self.V)))

    def __call__(self, prefix):
        ctx = list(check_token_ids(prefix, "prefix", self.V))
        if not ctx:
            raise ValueError("prefix must hold at least one token (the draft continues a text)")
        h, hp, needs_map, _ = self._start(ctx)
        if needs_map:
            h = self.fmap.apply(h, self.model.embed([ctx[-1]]), hp)
        return self._full(self._row(h, predicted=needs_map))


def alpha_along(
    model: Llama, fmap: FeatureMap, tokens, start: int, *, depth: int, temperature, shortlist=None
):
    """Per continuation token, α = Σ_x min(p, q) of the draft's proposal at each depth:
    an (n, depth) array for tokens[start:], teacher forced (the chain sees the real tokens).
    Column d − 1 is the α of that token when it is a round's d-th proposal; where a token is too
    early in the sequence for depth d, the column repeats depth d − 1. For the predictor's
    :func:`~specdec_core.llm.predict.sampled_traces` (temperature 0: argmax agreement)."""
    tokens = list(check_token_ids(tokens, "tokens", model.cfg.vocab_size))
    start = check_int(start, "start", 2, len(tokens) - 1)
    depth = check_int(depth, "depth", 1)
    feats = collect_features(model, [tokens])
    head = model.w["head"]
    W = head if shortlist is None else as_weight(model.head_rows(shortlist))
    ids = None if shortlist is None else np.asarray(shortlist, np.int64)
    n = len(tokens) - start
    out = np.full((n, depth), np.nan)
    for k, (_, tr, nh) in enumerate(predicted_states(fmap, feats, depth), 1):
        j = feats.pos[tr] + 2  # the token this chain's state predicts
        keep = (j >= start) & (j < len(tokens))
        tr, nh, j = tr[keep], nh[keep], j[keep]
        if not len(tr):
            continue
        p = probs_from_logits(product(feats.h_next[tr], head), temperature)
        q = probs_from_logits(product(nh, W) * np.float32(fmap.logit_scale), temperature)
        pp = p if ids is None else p[:, ids]
        out[j - start, k - 1] = np.minimum(pp, q).sum(axis=1)
    for k in range(depth):
        col = out[:, k]
        fill = out[:, k - 1] if k else np.zeros(n)
        col[np.isnan(col)] = fill[np.isnan(col)]
    return out

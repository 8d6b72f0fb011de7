"""Plugging the numpy Llama into :mod:`specdec_core.sampling`.

* :class:`CachedTarget` is a *stateful* target: ``target(prefix)`` and
  ``target.score(prefix, continuation)``. It keeps one KV cache keyed on the tokens it has
  seen; each call reuses the longest common prefix, rolls back the rest (rejected
  proposals) and scores only the new positions, all in one forward call. In a speculative
  round that is exactly γ+1 new positions: the previous round's correction/bonus token plus
  the γ proposals.
* :class:`PromptLookupDraft` proposes the continuation of the latest earlier occurrence of the
  last n tokens (q one-hot). The drafts that run a network of their own (the first k layers of
  the same model, its int8 copy) are in :mod:`.drafts`.

Every call is timed (the one timer's ``Stopwatch``) into ``.log``, so a benchmark can split a run into
draft, verification and overhead time without touching the sampler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..distributions import (
    check_gamma,
    check_int,
    check_reals,
    check_rng,
    check_temperature,
    check_token_ids,
    inverse_cdf,
)
from ..measured.timer import Stopwatch
from ..transforms import softmax
from .model import KVCache, Llama

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from numpy.typing import ArrayLike

#: Below this a positive temperature only overflows exp(logits / T): use 0 (greedy) instead.
MIN_TEMPERATURE = 1e-6


def check_model_temperature(t: float, name: str = "temperature") -> float:
    """A model's sampling temperature, as a float: :func:`specdec_core.distributions.check_temperature`
    with positive values below :data:`MIN_TEMPERATURE` refused."""
    return float(check_temperature(t, name, smallest=MIN_TEMPERATURE))


def probs_from_logits(logits: ArrayLike, temperature: float) -> np.ndarray:
    """Rows of float64 probabilities: :func:`specdec_core.transforms.softmax` of finite
    (rows, V) logits (float32 from the model) at ``temperature``. 0 = greedy: a one-hot row at
    the argmax (so strict verification against a one-hot target is exact-match greedy decoding)."""
    temperature = check_model_temperature(temperature)
    z = (
        logits
        if isinstance(logits, np.ndarray) and logits.dtype.kind == "f"
        else check_reals(logits, "logits")
    )
    z = np.atleast_2d(z)
    if z.ndim != 2 or z.shape[-1] == 0:
        raise ValueError(f"logits must be a (rows, V) array with V >= 1, got shape {z.shape}")
    if not np.isfinite(z).all():
        raise ValueError("logits must be finite (no NaN or infinite entry)")
    return softmax(z, temperature)


def sample_proposals(
    logits_after: Callable[[list[int]], np.ndarray],
    prefix: Sequence[int],
    gamma: int,
    rng: np.random.Generator,
    *,
    temperature: float,
    vocab: int,
    log: CallLog,
) -> tuple[list[int], np.ndarray]:
    """γ proposals of a draft that is itself a language model: each one drawn from
    q = softmax(``logits_after(ctx)`` / T) by the inverse CDF and appended to ctx before the next.
    Returns the tokens and their q rows (γ, V); the time is logged as one "draft" call."""
    watch = Stopwatch()
    gamma, rng = check_gamma(gamma), check_rng(rng)
    ctx = list(check_token_ids(prefix, "prefix", vocab))
    toks, rows = [], []
    for _ in range(gamma):
        q = probs_from_logits(logits_after(ctx), temperature)[0]
        x = inverse_cdf(q, rng.random())
        toks.append(x)
        rows.append(q)
        ctx.append(x)
    log.add("draft", gamma, gamma, watch.seconds())
    return toks, (np.stack(rows) if rows else np.zeros((0, vocab)))


class CallLog:
    """(what, new_positions, rows, seconds) per model call."""

    def __init__(self):
        self.calls = []

    def add(self, what: str, new: int, rows: int, seconds: float) -> None:
        self.calls.append((what, new, rows, seconds))

    def clear(self) -> None:
        self.calls.clear()

    def seconds(self, what: str | None = None) -> float:
        return sum(c[3] for c in self.calls if what is None or c[0] == what)

    def count(self, what: str | None = None) -> int:
        return sum(1 for c in self.calls if what is None or c[0] == what)


class CachedTarget:
    """The target model p as a sampling.py model: callable and ``.score``."""

    def __init__(self, model: Llama, temperature: float = 1.0, log: CallLog | None = None):
        self.model = model
        self.temperature = check_model_temperature(temperature)
        self.cache: KVCache = model.new_cache()
        self.log = log if log is not None else CallLog()

    def reset(self) -> None:
        self.cache.rollback(0)

    @property
    def fresh(self) -> bool:
        """True while the KV cache holds nothing (a timed run must start this way)."""
        return self.cache.n == 0

    def prefill(self, prompt: Iterable[int]) -> None:
        """Score the prompt into the cache (untimed by a decode-only measurement); the first
        decoding call then computes only its new positions."""
        prompt = [int(t) for t in prompt]
        c = self.cache.common_prefix(prompt)
        self.cache.rollback(c)
        self.model.forward(prompt[c:], self.cache)

    def logits(self, prefix: Sequence[int], continuation: Sequence[int] = ()) -> np.ndarray:
        """(len(continuation)+1, V) float32 logits after prefix, prefix+c₁, …, in one call."""
        watch = Stopwatch()
        out, new = self._forward(prefix, continuation)
        self.log.add("target", new, out.shape[0], watch.seconds())
        return out

    def score(self, prefix: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        """The rows of p for one verification call; the call's logged time includes the
        softmax, so a run's target time is all the work of scoring."""
        watch = Stopwatch()
        out, new = self._forward(prefix, continuation)
        probs = probs_from_logits(out, self.temperature)
        self.log.add("target", new, out.shape[0], watch.seconds())
        return probs

    def _forward(self, prefix, continuation) -> tuple[np.ndarray, int]:
        """(logits, positions computed): roll the cache back to the longest common prefix,
        run the new positions, read the head at the last len(continuation)+1."""
        V = self.model.cfg.vocab_size
        full = list(check_token_ids(prefix, "prefix", V)) + list(
            check_token_ids(continuation, "continuation", V)
        )
        P = len(prefix)
        if P == 0:
            raise ValueError("prefix must hold at least one token")
        c = self.cache.common_prefix(full)
        self.cache.rollback(c)
        new = full[c:]
        self.model.forward(new, self.cache)
        return self.model.logits(self.cache.hidden[P - 1 : len(full)]), len(new)

    def __call__(self, prefix):
        return self.score(prefix, ())[0]


class PromptLookupDraft:
    """Prompt lookup: find the latest earlier occurrence of the last n tokens (n from
    ``n_max`` down to ``n_min``) in prompt + output and propose what followed it. q is
    one-hot, so strict verification accepts x with probability p(x) and, on rejection,
    draws from p with x removed (renormalized).

    ``propose`` always returns γ tokens (sampling.py's protocol): when the match runs out it
    looks up again in the extended context; with no match at all it repeats the last token.
    :meth:`available` tells how many tokens a genuine match offers (for variable γ).
    """

    def __init__(self, vocab_size: int, n_max: int = 3, n_min: int = 2, log: CallLog | None = None):
        self.V = check_int(vocab_size, "vocab_size", 1)
        self.n_max, self.n_min = check_int(n_max, "n_max", 1), check_int(n_min, "n_min", 1)
        if self.n_min > self.n_max:
            raise ValueError(f"n_min ({self.n_min}) must be at most n_max ({self.n_max})")
        self.log = log if log is not None else CallLog()

    fresh = True  # stateless

    def prefill(self, prompt: Iterable[int]) -> None:
        """Nothing to do: the lookup searches the context it is given."""

    def _lookup(self, ctx, limit):
        L = len(ctx)
        for n in range(min(self.n_max, L - 1), self.n_min - 1, -1):
            key = ctx[L - n :]
            # latest earlier occurrence ending before the last position
            for s in range(L - n - 1, -1, -1):
                if ctx[s : s + n] == key:
                    return ctx[s + n : s + n + limit]
        return []

    def match(self, prefix: Sequence[int], limit: int) -> list[int]:
        """The tokens that followed the latest earlier occurrence of the context's last n
        tokens (at most ``limit``; empty without a match)."""
        return self._lookup(list(prefix), limit)

    def available(self, prefix: Sequence[int], gamma: int) -> int:
        watch = Stopwatch()
        out = len(self._lookup(list(prefix), gamma))
        self.log.add("lookup", 0, 0, watch.seconds())
        return out

    def propose_tokens(self, prefix: Sequence[int], gamma: int) -> list[int]:
        gamma = check_gamma(gamma)
        ctx = list(check_token_ids(prefix, "prefix", self.V))
        if not ctx and gamma:
            raise ValueError("prefix must hold at least one token: prompt lookup continues a context")
        out = []
        while len(out) < gamma:
            nxt = self._lookup(ctx, gamma - len(out)) or [ctx[-1]]
            out.extend(nxt)
            ctx.extend(nxt)
        return out[:gamma]

    def propose(
        self, prefix: Sequence[int], gamma: int, rng: np.random.Generator
    ) -> tuple[list[int], np.ndarray]:
        watch = Stopwatch()
        gamma = check_gamma(gamma)
        toks = self.propose_tokens(prefix, gamma)
        q = np.zeros((gamma, self.V))
        q[np.arange(gamma), toks] = 1.0
        self.log.add("draft", 0, gamma, watch.seconds())
        return toks, q

    def __call__(self, prefix):
        q = np.zeros(self.V)
        q[self.propose_tokens(prefix, 1)[0]] = 1.0
        return q

"""Loading the model in one call, and timed generation runs for the notebook and benchmark."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from .adapters import CachedTarget, CallLog
from .loader import LlamaConfig, LoadInfo, load_gguf
from .model import Llama
from .tokenizer import TextCodec


@dataclass
class LoadedModel:
    cfg: LlamaConfig
    model: Llama
    codec: TextCodec
    info: LoadInfo


def text_progress(stream=None, width=30):
    """A progress callback printing one bar line per stage, updated in place."""
    stream = stream or sys.stderr
    state = {"stage": None}

    def cb(i, n, stage):
        if stage != state["stage"]:
            if state["stage"] is not None:
                stream.write("\n")
            state["stage"] = stage
        if i == n or i % max(1, n // width) == 0:
            done = int(width * i / n)
            stream.write(f"\r{stage:>12} [{'#' * done}{'.' * (width - done)}] {i}/{n}")
            if i == n:
                stream.write("\n")
                state["stage"] = None
            stream.flush()
    return cb


def load_model(path=None, *, cache=True, progress=None) -> LoadedModel:
    cfg, packed, tok, info = load_gguf(path, cache=cache, progress=progress)
    return LoadedModel(cfg, Llama(cfg, packed), TextCodec(tok), info)


# ---------------------------------------------------------------- timed runs

@dataclass
class RunStats:
    """One timed generation. Times in seconds, measured with time.perf_counter.

    ``target_s``: time inside target calls (forward pass over the new positions, head,
    softmax, cache rollback); ``draft_s``: time inside the draft; ``overhead_s``: the rest
    (the sampler's acceptance draws, corrections, bookkeeping)."""
    label: str
    gamma: int
    temperature: float
    tokens: tuple
    wall_s: float
    target_s: float
    draft_s: float
    rounds: int
    proposed: int
    accepted: int
    rejected: int
    k_hist: list            # k_hist[k] = rounds that emitted k tokens
    round_gammas: list      # γ actually used per round
    accept_by_pos: list     # [accepted, checked] per proposal position

    @property
    def n_tokens(self):
        return len(self.tokens)

    @property
    def overhead_s(self):
        return max(self.wall_s - self.target_s - self.draft_s, 0.0)

    @property
    def tokens_per_s(self):
        return self.n_tokens / self.wall_s

    @property
    def alpha(self):
        """Per-proposal acceptance: accepted / checked proposals (NaN if none checked)."""
        checked = self.accepted + self.rejected
        return self.accepted / checked if checked else float("nan")

    @property
    def mean_k(self):
        return self.n_tokens / self.rounds

    def per_round_ms(self):
        r = self.rounds
        return {"draft": 1e3 * self.draft_s / r, "verify": 1e3 * self.target_s / r,
                "overhead": 1e3 * self.overhead_s / r}

    def to_dict(self):
        d = {k: getattr(self, k) for k in ("label", "gamma", "temperature", "wall_s", "target_s",
                                           "draft_s", "rounds", "proposed", "accepted", "rejected",
                                           "k_hist", "round_gammas", "accept_by_pos")}
        d.update(n_tokens=self.n_tokens, overhead_s=self.overhead_s, tokens_per_s=self.tokens_per_s,
                 alpha=self.alpha, mean_k=self.mean_k, tokens=list(self.tokens))
        return d


def _stats(label, gamma, temperature, result, wall, target_s, draft_s):
    k_hist = [0] * (max([len(r.emitted) for r in result.records] + [1]) + 1)
    by_pos = [[0, 0] for _ in range(max([r.gamma for r in result.records] + [0]))]
    for r in result.records:
        k_hist[len(r.emitted)] += 1
        for i in range(len(r.draws)):
            by_pos[i][1] += 1
            by_pos[i][0] += int(r.stop is None or i < r.stop)
    return RunStats(label, gamma, temperature, tuple(result.tokens), wall, target_s, draft_s,
                    result.rounds, result.proposed, result.accepted, result.rejected, k_hist,
                    [r.gamma for r in result.records], by_pos)


class OfferOnlyMatches:
    """A draft that offers only what its match really holds: ``propose`` returns
    min(γ, draft.available(context, γ)) proposals (possibly none, then the round is a plain
    target step). How many depends only on the context, so the target's law is kept."""

    def __init__(self, draft):
        self.draft = draft

    def __call__(self, prefix):
        return self.draft(prefix)

    def propose(self, prefix, gamma, rng):
        g = min(gamma, self.draft.available(prefix, gamma))
        if g == 0:
            return (), np.zeros((0, 0))
        return self.draft.propose(prefix, g, rng)


def speculative_generate_adaptive(target, draft, prefix, *, gamma, max_new_tokens, rng):
    """Speculative sampling where each round drafts only what the draft really has:
    γ_round = min(γ, draft.available(context, γ), remaining − 1). The library's own
    ``speculative_generate`` runs it: drafts may offer fewer than γ proposals."""
    from ..sampling import speculative_generate

    return speculative_generate(target, OfferOnlyMatches(draft), tuple(int(t) for t in prefix),
                                gamma=gamma, max_new_tokens=max_new_tokens, rng=rng)


def run_plain(target, prefix, max_new_tokens, rng, label="plain"):
    from ..sampling import autoregressive_generate

    target.log.clear()
    t = time.perf_counter()
    res = autoregressive_generate(target, tuple(prefix), max_new_tokens=max_new_tokens, rng=rng)
    wall = time.perf_counter() - t
    return _stats(label, 0, target.temperature, res, wall, target.log.seconds("target"), 0.0)


def run_speculative(target, draft, prefix, gamma, max_new_tokens, rng, *, adaptive=False, label=None):
    from ..sampling import speculative_generate

    target.log.clear()
    draft.log.clear()
    t = time.perf_counter()
    if adaptive:
        res = speculative_generate_adaptive(target, draft, prefix, gamma=gamma,
                                            max_new_tokens=max_new_tokens, rng=rng)
    else:
        res = speculative_generate(target, draft, tuple(prefix), gamma=gamma,
                                   max_new_tokens=max_new_tokens, rng=rng)
    wall = time.perf_counter() - t
    draft_s = draft.log.seconds()
    return _stats(label or type(draft).__name__, gamma, target.temperature, res, wall,
                  target.log.seconds("target"), draft_s)


def position_cost_curve(model, context, Ts, *, reps=5):
    """Milliseconds to score T new positions after ``context`` (forward + head), T in Ts:
    {T: (min, median)} over ``reps`` repetitions. The repetitions sweep all T in turn
    (rather than repeating one T back to back), so a burst of load elsewhere on the machine
    spoils one point of several curves instead of a whole point; the cache is rolled back
    between calls. One untimed sweep comes first."""
    cache = model.new_cache(len(context) + max(Ts) + 1)
    model.forward(list(context), cache)
    n0 = cache.n
    ts = {T: [] for T in Ts}
    for rep in range(reps + 1):  # the first sweep only warms up (page faults, thread start-up)
        for T in Ts:
            cache.rollback(n0)
            t = time.perf_counter()
            model.logits(model.forward([(13 * i + 7) % model.cfg.vocab_size for i in range(T)], cache))
            if rep:
                ts[T].append(1e3 * (time.perf_counter() - t))
    return {T: (min(v), float(np.median(v))) for T, v in ts.items()}


def expected_tokens_iid(alpha, gamma):
    """E[K] = (1 − α^{γ+1}) / (1 − α) for independent acceptances (notebook 04)."""
    if alpha >= 1:
        return gamma + 1.0
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def predict_tokens_per_second(stats: RunStats, cost_ms: dict, *, use="k_hist"):
    """Notebook 05's model R = E[K] / (T_draft + T_verify + T_overhead) fed with measured inputs:
    E[K] from the run's K histogram (``use="k_hist"``) or from its α through the i.i.d.
    formula (``use="alpha"``); T_verify from the separately measured cost curve at T = γ+1
    (averaged over the γ each round used); draft and overhead per round from the run's logs."""
    from ..timing import tokens_per_second

    if use == "k_hist":
        ek = stats.mean_k
    else:
        ek = float(np.mean([expected_tokens_iid(stats.alpha if stats.rejected + stats.accepted else 0.0, g)
                            for g in stats.round_gammas]))
    verify = float(np.mean([cost_ms[g + 1] for g in stats.round_gammas]))
    per = stats.per_round_ms()
    return tokens_per_second(ek, draft_ms=per["draft"], verify_ms=verify, overhead_ms=per["overhead"])


def one_step_gap(p, q):
    """max |output distribution − p| for one strict verification step (verify.output_distribution)."""
    from ..verify import output_distribution

    return float(np.abs(output_distribution(p, q) - p).max())

"""Loading the model in one call, and timed generation runs for the notebook and benchmark."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..measured.layout import LayoutChoice
from ..measured.timer import Stopwatch
from .layout import apply_layout, choose_layout
from .loader import LlamaConfig, LoadInfo, load_gguf
from .model import Llama
from .tokenizer import TextCodec

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from ..sampling import GenerationResult
    from ..types import Probs, ProposingDraft, Target
    from .adapters import CachedTarget, CallLog, PromptLookupDraft

    class TimedDraft(ProposingDraft, Protocol):
        """A draft a timed run can account for: it proposes and logs its calls."""

        log: CallLog


@dataclass
class LoadedModel:
    cfg: LlamaConfig
    model: Llama
    codec: TextCodec
    info: LoadInfo
    #: how the weights are laid out (None: as loaded, (out, in) rows with the fixed rules of
    #: :func:`model.product`)
    layout: LayoutChoice | None = None


def load_model(
    path: str | None = None,
    *,
    cache: bool | str = True,
    progress: Callable[[int, int, str], object] | None = None,
    layout: str | LayoutChoice | None = None,
) -> LoadedModel:
    """Load the model. ``layout="auto"``: time the candidate weight layouts on this machine
    (:func:`layout.choose_layout`, a few seconds, one BLAS thread recommended) and use the
    fastest; a :class:`~layout.LayoutChoice`: use that one; None: the weights as loaded."""
    if not (
        layout is None or isinstance(layout, LayoutChoice) or (isinstance(layout, str) and layout == "auto")
    ):
        raise ValueError(f"layout must be None, 'auto' or a LayoutChoice, got {layout!r}")
    cfg, packed, tok, info = load_gguf(path, cache=cache, progress=progress)
    choice = None
    if layout is not None:
        choice = choose_layout(packed) if layout == "auto" else layout
        apply_layout(packed, choice)
    return LoadedModel(cfg, Llama(cfg, packed), TextCodec(tok), info, choice)


# ---------------------------------------------------------------- timed runs


@dataclass
class RunStats:
    """One timed generation. Times in seconds, measured with :class:`~specdec_core.measured.timer.Stopwatch`.

    ``wall_s`` is **decode-only**: from the first decoding call to the last token, with the
    prompt already scored into fresh target and draft caches (``prefill_s``, timed apart);
    ``e2e_s`` = prefill_s + wall_s is end to end. Inside the decode: ``target_s`` time inside
    target calls (forward pass over the new positions, head, softmax, cache rollback);
    ``draft_s`` time inside the draft; ``overhead_s`` the rest (the sampler's acceptance
    draws, corrections, bookkeeping) — a "where did the time go" breakdown of one run."""

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
    k_hist: list  # k_hist[k] = rounds that emitted k tokens
    round_gammas: list  # γ actually used per round
    accept_by_pos: list  # [accepted, checked] per proposal position
    prefill_s: float = 0.0

    @property
    def e2e_s(self) -> float:
        return self.prefill_s + self.wall_s

    @property
    def e2e_tokens_per_s(self) -> float:
        return self.n_tokens / self.e2e_s

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def overhead_s(self) -> float:
        return max(self.wall_s - self.target_s - self.draft_s, 0.0)

    @property
    def tokens_per_s(self) -> float:
        return self.n_tokens / self.wall_s

    @property
    def alpha(self) -> float:
        """Per-proposal acceptance: accepted / checked proposals (NaN if none checked)."""
        checked = self.accepted + self.rejected
        return self.accepted / checked if checked else float("nan")

    @property
    def mean_k(self) -> float:
        return self.n_tokens / self.rounds

    def per_round_ms(self) -> dict[str, float]:
        r = self.rounds
        return {
            "draft": 1e3 * self.draft_s / r,
            "verify": 1e3 * self.target_s / r,
            "overhead": 1e3 * self.overhead_s / r,
        }


@dataclass(frozen=True)
class SweptRun:
    """One run of :func:`sweep`: which workload, draft (its label: "plain", a draft, or a model
    decoding alone), repetition and γ policy, and its :class:`RunStats`."""

    workload: str
    draft: str
    rep: int
    adaptive: bool
    stats: RunStats


def _stats(label, gamma, temperature, result, wall, target_s, draft_s, prefill_s=0.0):
    k_hist = [0] * (max([len(r.emitted) for r in result.records] + [1]) + 1)
    by_pos = [[0, 0] for _ in range(max([r.gamma for r in result.records] + [0]))]
    for r in result.records:
        k_hist[len(r.emitted)] += 1
        for i in range(len(r.draws)):
            by_pos[i][1] += 1
            by_pos[i][0] += int(r.stop is None or i < r.stop)
    return RunStats(
        label,
        gamma,
        temperature,
        tuple(result.tokens),
        wall,
        target_s,
        draft_s,
        result.rounds,
        result.proposed,
        result.accepted,
        result.rejected,
        k_hist,
        [r.gamma for r in result.records],
        by_pos,
        prefill_s,
    )


class OfferOnlyMatches:
    """A draft that offers only what its match really holds: ``propose`` returns
    min(γ, draft.available(context, γ)) proposals (possibly none, then the round is a plain
    target step). How many depends only on the context, so the target's law is kept."""

    def __init__(self, draft: PromptLookupDraft):
        self.draft = draft

    def __call__(self, prefix):
        return self.draft(prefix)

    def propose(
        self, prefix: Sequence[int], gamma: int, rng: np.random.Generator
    ) -> tuple[Sequence[int], np.ndarray]:
        g = min(gamma, self.draft.available(prefix, gamma))
        if g == 0:
            return (), np.zeros((0, 0))
        return self.draft.propose(prefix, g, rng)


def speculative_generate_adaptive(
    target: Target,
    draft: PromptLookupDraft,
    prefix: Sequence[int],
    *,
    gamma: int,
    max_new_tokens: int,
    rng: np.random.Generator,
) -> GenerationResult:
    """Speculative sampling where each round drafts only what the draft really has:
    γ_round = min(γ, draft.available(context, γ), remaining − 1). The library's own
    ``speculative_generate`` runs it: drafts may offer fewer than γ proposals."""
    from ..sampling import speculative_generate

    return speculative_generate(
        target,
        OfferOnlyMatches(draft),
        tuple(int(t) for t in prefix),
        gamma=gamma,
        max_new_tokens=max_new_tokens,
        rng=rng,
    )


class StaleStateError(RuntimeError):
    """A timed run was handed a target or draft that already holds state (a KV cache or
    counts from an earlier run): its prefill would be free and its first round could be
    served from the previous run."""


def timed_run(
    target: CachedTarget,
    draft: TimedDraft | None,
    prompt: Sequence[int],
    *,
    gamma: int = 0,
    max_new_tokens: int,
    rng: np.random.Generator,
    adaptive: bool = False,
    label: str | None = None,
) -> RunStats:
    """One timed generation from a **fresh** target (and draft): checks that both hold no
    state (raises :class:`StaleStateError`), scores the prompt into them (``prefill_s``), then
    decodes ``max_new_tokens`` tokens — plain decoding when ``draft`` is None, speculative
    sampling otherwise — timing the decode alone (``wall_s``). Decode-only and end-to-end
    figures come from the same run."""
    from ..sampling import autoregressive_generate, speculative_generate

    prompt = tuple(int(t) for t in prompt)
    for name, obj in (("target", target), ("draft", draft)):
        if obj is not None and not getattr(obj, "fresh", True):
            raise StaleStateError(
                f"{name} {type(obj).__name__} holds state from an earlier run: "
                "build a new one (or reset it) for every timed run"
            )
    clock = Stopwatch()
    target.prefill(prompt)
    if draft is not None and hasattr(draft, "prefill"):
        draft.prefill(prompt)
    prefill_s = clock.seconds()
    target.log.clear()
    if draft is not None:
        draft.log.clear()
    clock.restart()
    if draft is None:
        res = autoregressive_generate(target, prompt, max_new_tokens=max_new_tokens, rng=rng)
    elif adaptive:
        res = speculative_generate_adaptive(
            target, draft, prompt, gamma=gamma, max_new_tokens=max_new_tokens, rng=rng
        )
    else:
        res = speculative_generate(target, draft, prompt, gamma=gamma, max_new_tokens=max_new_tokens, rng=rng)
    wall = clock.seconds()
    draft_s = draft.log.seconds() if draft is not None else 0.0
    return _stats(
        label or ("plain" if draft is None else type(draft).__name__),
        gamma if draft is not None else 0,
        target.temperature,
        res,
        wall,
        target.log.seconds("target"),
        draft_s,
        prefill_s,
    )


def _reset(obj):
    if obj is not None and hasattr(obj, "reset"):
        obj.reset()


def run_plain(
    target: CachedTarget,
    prefix: Sequence[int],
    max_new_tokens: int,
    rng: np.random.Generator,
    label: str = "plain",
) -> RunStats:
    """Plain decoding, timed decode-only after a prefill; the target is reset first."""
    _reset(target)
    return timed_run(target, None, prefix, max_new_tokens=max_new_tokens, rng=rng, label=label)


def run_speculative(
    target: CachedTarget,
    draft: TimedDraft,
    prefix: Sequence[int],
    gamma: int,
    max_new_tokens: int,
    rng: np.random.Generator,
    *,
    adaptive: bool = False,
    label: str | None = None,
) -> RunStats:
    """Speculative decoding, timed decode-only after a prefill; target and draft are reset first."""
    _reset(target)
    _reset(draft)
    return timed_run(
        target,
        draft,
        prefix,
        gamma=gamma,
        max_new_tokens=max_new_tokens,
        rng=rng,
        adaptive=adaptive,
        label=label,
    )


def sweep(
    make_target: Callable[[float], CachedTarget],
    make_draft: Callable[..., TimedDraft],
    prompts: dict[str, Sequence[int]],
    configs: Iterable[tuple[str, int, bool]],
    *,
    temperatures: Iterable[float],
    reps: int,
    max_new_tokens: int | dict[str, int],
    seed: int = 100,
    on_run: Callable[[SweptRun], object] | None = None,
    alone: dict[str, Callable[[float], CachedTarget]] | None = None,
) -> list[SweptRun]:
    """The benchmark's timed sweep, interleaved: for each repetition, workload and temperature
    (a *block*), one plain run and one run of every speculative configuration ``(draft_name,
    gamma, adaptive)``, in an order shuffled afresh for every block (seeded by ``seed`` and the
    repetition), so no configuration always runs first or always follows the same one. Each run
    gets a target and draft built new by ``make_target(temperature)`` and
    ``make_draft(draft_name, temperature)`` (so nothing survives between timed runs); a
    ``make_draft`` with a third parameter also receives that run's target (a draft built from
    the target's own features reads its cache, :class:`~specdec_core.llm.features.FeatureDraft`).
    Repetition r uses sampling seed ``seed + r`` for plain and speculative alike.
    ``alone`` {name: make_model(temperature)}: other models decoding by themselves, each once per
    block beside plain (e.g. the int8 copy of the target: faster, but it samples its own law).
    Returns the :class:`SweptRun` records, in run order."""
    import inspect

    wants_target = len(inspect.signature(make_draft).parameters) >= 3
    alone = dict(alone or {})
    out = []
    block = [("plain", 0, False)] + [(name, 0, False) for name in alone] + list(configs)
    for rep in range(reps):
        order_rng = np.random.default_rng([seed, rep])
        for wname, prompt in prompts.items():
            n = max_new_tokens[wname] if isinstance(max_new_tokens, dict) else int(max_new_tokens)
            for temp in temperatures:
                for i in order_rng.permutation(len(block)):
                    name, g, adaptive = block[i]
                    tgt = alone[name](temp) if name in alone else make_target(temp)
                    if name == "plain" or name in alone:
                        draft = None
                    else:
                        draft = make_draft(name, temp, tgt) if wants_target else make_draft(name, temp)
                    s = timed_run(
                        tgt,
                        draft,
                        prompt,
                        gamma=g,
                        max_new_tokens=n,
                        rng=np.random.default_rng(seed + rep),
                        adaptive=adaptive,
                        label=name,
                    )
                    out.append(SweptRun(wname, name, rep, adaptive, s))
                    if on_run is not None:
                        on_run(out[-1])
    return out


def expected_tokens_iid(alpha: float, gamma: int) -> float:
    """E[K] for independent acceptances (notebook 04), as a float: the one formula,
    :func:`specdec_core.counts.expected_output_count`."""
    from ..counts import expected_output_count
    from ..distributions import check_gamma, check_probability

    return float(expected_output_count(check_probability(alpha, "alpha", scalar=True), check_gamma(gamma)))


def one_step_gap(p: Probs, q: Probs) -> float:
    """max |output distribution − p| for one strict verification step (verify.output_distribution)."""
    from ..verify import output_distribution

    return float(np.abs(output_distribution(p, q) - p).max())

"""The feature draft (specdec_core.llm.features) on the real model: fit on calibration text only,
then α per draft depth on held-out calibration text and on the target's own continuations of the
three evaluated workloads, full head and shortlists, and the draft step's cost next to a target
step. Writes specdec_core/results/features.json.

Data (nothing evaluated is ever fitted on):

* calibration text = the docstrings of specdec_core (packed into sequences of ≤ 256 tokens,
  split by module: most modules fit, the rest held out) + the target's own temperature-1
  continuations of the CALIBRATION prompts of workloads.py (four fit, two held out);
* evaluation = held-out calibration text, and the target's temperature-1 continuations of the
  three WORKLOADS prompts (seeded), counted on the continuation tokens only.

α at depth k is teacher forced: the chain starts from the target's real state h_t and applies
the map k times with the real next tokens (as if the earlier proposals had been accepted); at
temperature 1 α = Σ min(p, q), at temperature 0 the argmax agreement. The logit scale and the
ridge are chosen on the held-out *calibration* text; the workload numbers are reported only.

    .venv/bin/python benchmarks/feature_study.py [--quick --results-dir /tmp]

The stages (each returns what it measured; :func:`study` runs them into the typed
:class:`~specdec_core.measured.FeatureStudy`): :func:`generate_texts`, :func:`collect`,
:func:`select_variant`, :func:`alpha_study`, :func:`shortlist_mass`, :func:`draft_cost`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from specdec_core import autoregressive_generate  # noqa: E402
from specdec_core.llm import CachedTarget, Llama, LoadedModel, load_model  # noqa: E402
from specdec_core.llm import features as FT  # noqa: E402
from specdec_core.llm import workloads as W  # noqa: E402
from specdec_core.llm.model import product  # noqa: E402
from specdec_core.measured import FeatureStudy, Machine, Stopwatch, time_calls, write_stored  # noqa: E402
from specdec_core.measured import studies as S  # noqa: E402

CAL_FIT = ("cal-copy", "cal-code", "cal-explain", "cal-list")
CAL_HELD = ("cal-letter", "cal-story")
SEEDS = {"calibration": 7, "own_samples": 50, "workloads": 1000, "random_features": 0, "timing": 3}
SHORTLISTS = (2048, 4096, 8192)
DEPTH = 4
BASELINE = "h,e | docs+cal (baseline)"


@dataclass(frozen=True)
class Settings:
    """What a quick run sets differently from a full one (:data:`FULL`, :data:`QUICK`)."""

    quick: bool
    docstrings_fit: int | None  # docstring sequences fitted on (None: all)
    docstrings_held: int  # held-out docstring sequences (≈ 1.5k positions at 8: enough for α)
    calibration_tokens: int
    own_tokens: int
    own_per_prompt: int
    workload_tokens: int
    ridges: tuple[float, ...]
    reps: int  # timing repeats


FULL = Settings(False, None, 8, 96, 128, 2, 128, (1e-3, 1e-2), 30)
QUICK = Settings(True, 6, 2, 24, 24, 1, 32, (1e-3,), 5)


def continuations(model: Llama, prompts: dict, n_new: int, seed: int) -> dict:
    """{name: (prompt, continuation)}: plain temperature-1 sampling from a CachedTarget."""
    out = {}
    for i, (name, prompt) in enumerate(prompts.items()):
        tgt = CachedTarget(model, 1.0)
        r = autoregressive_generate(
            tgt, tuple(prompt), max_new_tokens=n_new, rng=np.random.default_rng(seed + i)
        )
        out[name] = (list(prompt), list(r.tokens))
    return out


def median_ms(fn: Callable[[], object], reps: int) -> float:
    """Median ms of ``reps`` calls back to back (the one timer; no warm-up call, as before)."""
    return time_calls({0: fn}, reps, sweep=False)[0].median


def _joined(pairs: dict, names: Iterable[str]) -> list:
    return [pairs[n][0] + pairs[n][1] for n in names]


# ---------------------------------------------------------------- data


@dataclass
class Texts:
    """Stage 1: docstring sequences (fit, held out) and {name: (prompt, continuation)} of the
    calibration prompts, the target's own samples and the workloads."""

    doc_fit: list
    doc_held: list
    cal: dict
    own: dict
    workloads: dict
    seconds: float


def generate_texts(lm: LoadedModel, s: Settings) -> Texts:
    """Stage 1: the texts, split before anything is fitted."""
    clock = Stopwatch()
    m, codec = lm.model, lm.codec
    doc_fit, doc_held = W.split_by_module(W.docstring_sequences(codec))
    if s.docstrings_fit is not None:
        doc_fit = doc_fit[: s.docstrings_fit]
    cal_prompts = {n: W.calibration_prompt(codec, n) for n in W.CALIBRATION}
    cal = continuations(m, cal_prompts, s.calibration_tokens, SEEDS["calibration"])
    own_prompts = {
        f"{n}#{k}": W.calibration_prompt(codec, n) for n in CAL_FIT for k in range(s.own_per_prompt)
    }
    own = continuations(m, own_prompts, s.own_tokens, SEEDS["own_samples"])
    wl_prompts = {n: W.workload_prompt(codec, n) for n in W.WORKLOADS}
    wl = continuations(m, wl_prompts, s.workload_tokens, SEEDS["workloads"])
    return Texts(doc_fit, doc_held[: s.docstrings_held], cal, own, wl, clock.seconds())


@dataclass
class Data:
    """Stage 2: features to fit on (``base`` docstrings + calibration, ``all`` + own samples),
    the held-out and evaluation sets {name: (features, first scored position per sequence)},
    the fitting texts (for shortlists) and the stored description (``info``)."""

    base: FT.Features
    all: FT.Features
    held: dict
    evals: dict
    fit_texts: list
    info: S.FeatureData


def collect(lm: LoadedModel, texts: Texts, s: Settings) -> Data:
    """Stage 2: the target's states along every text."""
    m, clock = lm.model, Stopwatch()
    fit_seqs, own_seqs = texts.doc_fit + _joined(texts.cal, CAL_FIT), _joined(texts.own, texts.own)
    F_base, F_own = FT.collect_features(m, fit_seqs), FT.collect_features(m, own_seqs)
    F_all = FT.Features(
        *(np.concatenate([getattr(F_base, k), getattr(F_own, k)]) for k in FT.Features._fields)
    )
    held = {
        "held-out docstrings": (FT.collect_features(m, texts.doc_held), None),
        "held-out calibration continuations": (
            FT.collect_features(m, _joined(texts.cal, CAL_HELD)),
            [len(texts.cal[n][0]) - 1 for n in CAL_HELD],
        ),
    }
    evals = dict(held)
    for n, (prompt, gen) in texts.workloads.items():
        evals[f"workload {n}"] = (FT.collect_features(m, [prompt + gen]), [len(prompt) - 1])
    info = S.FeatureData(
        fit_positions={"docstrings+calibration": int(len(F_base.h)), "own T=1 samples": int(len(F_own.h))},
        eval_positions={k: int(len(f.h)) for k, (f, _) in evals.items()},
        docstring_sequences_fit=len(texts.doc_fit),
        docstring_sequences_held=len(texts.doc_held),
        calibration_fit=CAL_FIT,
        calibration_held=CAL_HELD,
        calibration_new_tokens=s.calibration_tokens,
        own_samples=S.OwnSamples(CAL_FIT, s.own_per_prompt, s.own_tokens),
        workload_new_tokens={n: len(g) for n, (_, g) in texts.workloads.items()},
        workload_texts={n: lm.codec.decode(g) for n, (_, g) in texts.workloads.items()},
        seeds=dict(SEEDS),
        generate_s=texts.seconds,
        features_s=clock.seconds(),
    )
    print(
        f"data: fit {len(F_all.h)} ({texts.seconds:.0f} s gen, {info.features_s:.0f} s features)",
        flush=True,
    )
    return Data(F_base, F_all, held, evals, fit_seqs + own_seqs, info)


# ---------------------------------------------------------------- the variants and α


@dataclass
class Selected:
    """Stage 3: the fitted maps {variant | ridge: map}, the comparison as stored, the choice."""

    fitted: dict
    selection: S.FeatureSelection
    chosen: str

    @property
    def fmap(self) -> FT.FeatureMap:
        return self.fitted[self.chosen]

    def choice(self) -> S.FeatureChoice:
        f = self.fmap
        return S.FeatureChoice(self.chosen, float(f.ridge), f.inputs, int(f.n_random), int(f.n))


def variants(lm: LoadedModel, data: Data) -> dict:
    """{name: (features, fit keywords)} of the compared designs."""
    g = lm.model.w["output_norm"]
    return {
        BASELINE: (data.base, dict(inputs="h,e")),
        "h,e | docs+cal+own": (data.all, dict(inputs="h,e")),
        "h,hprev,e | docs+cal+own": (data.all, dict(inputs="h,hprev,e")),
        "h,e renorm | docs+cal+own": (data.all, dict(inputs="h,e", renorm=True, norm_weight=g)),
        "h,hprev,e +1024 random | docs+cal+own": (
            data.all,
            dict(inputs="h,hprev,e", n_random=1024, seed=SEEDS["random_features"]),
        ),
    }


def select_variant(lm: LoadedModel, data: Data, s: Settings) -> Selected:
    """Stage 3: fit every variant and ridge; choose by depth-1 α at T = 1 (full head), mean
    over the held-out calibration sets (never the workloads)."""
    m, clock = lm.model, Stopwatch()
    study, fitted = {}, {}
    for vname, (D, kw) in variants(lm, data).items():
        for r in s.ridges:
            fit_clock = Stopwatch()
            fm = FT.fit_feature_map(D.h, D.e, D.h_next, h_prev=D.h_prev, ridge=r, **kw)
            t_fit = fit_clock.seconds()
            a = {
                k: FT.alpha_by_depth(m, fm, f, depth=1, temperatures=(1.0, 0.0), first_state=fs)["full"]
                for k, (f, fs) in data.held.items()
            }
            a1 = {k: v[1.0][0] for k, v in a.items()}
            a0 = {k: v[0.0][0] for k, v in a.items()}
            key = f"{vname} | ridge {r:g}"
            fitted[key] = fm
            score = float(np.mean(list(a1.values())))
            study[key] = S.VariantScore(t_fit, a1, a0, score)
            print(f"{key:50s} fit {t_fit:5.1f} s  α(T=1,d=1) {a1}  T=0 {a0}", flush=True)
    best = max(study, key=lambda k: study[k].score)  # the first of equal scores, as before
    selection = S.FeatureSelection(study, "max mean depth-1 α at T=1 over the held-out sets", clock.seconds())
    sel = Selected(fitted, selection, best)
    print("chosen:", sel.choice(), flush=True)
    return sel


def _split(a: dict) -> tuple[dict, tuple[int, ...]]:
    """(α {head: {T: α by depth, 4 digits}}, positions by depth) of :func:`FT.alpha_by_depth`'s result."""
    alpha = {
        h: {float(T): tuple(round(x, 4) for x in xs) for T, xs in v.items()}
        for h, v in a.items()
        if h != "_n"
    }
    return alpha, tuple(int(n) for n in a["_n"])


def alpha_study(
    lm: LoadedModel, data: Data, sel: Selected, shortlists: dict, s: Settings
) -> tuple[dict, dict, float]:
    """Stage 4: α per depth, T = 1 and 0, on every held-out and workload set: the chosen map
    with every shortlist, the baseline with the full head. Returns (α, positions by depth, seconds)."""
    clock = Stopwatch()
    base = sel.fitted[f"{BASELINE} | ridge {s.ridges[0]:g}"]
    alphas, ns = {"chosen": {}, "baseline": {}}, {"chosen": {}, "baseline": {}}
    for k, (f, fs) in data.evals.items():
        a = FT.alpha_by_depth(lm.model, sel.fmap, f, depth=DEPTH, shortlists=shortlists, first_state=fs)
        alphas["chosen"][k], ns["chosen"][k] = _split(a)
        b = FT.alpha_by_depth(lm.model, base, f, depth=DEPTH, shortlists={"full": None}, first_state=fs)
        alphas["baseline"][k], ns["baseline"][k] = _split(b)
        print(k, alphas["chosen"][k]["full"], flush=True)
    return alphas, ns, clock.seconds()


def shortlist_mass(lm: LoadedModel, data: Data, shortlists: dict) -> dict:
    """Stage 5: mean mass of p (T = 1) inside each shortlist, the ceiling on its α."""
    cov, head = {}, lm.model.w["head"]
    for k, (f, fs) in data.evals.items():
        rows = np.arange(len(f.h)) if fs is None else np.flatnonzero(f.pos + 1 >= np.asarray(fs)[f.seq])
        z = (f.h_next[rows] @ head.T).astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        cov[k] = {
            name: float(p[:, ids].sum(axis=1).mean()) for name, ids in shortlists.items() if ids is not None
        }
    return cov


# ---------------------------------------------------------------- cost


def draft_cost(lm: LoadedModel, fmap: FT.FeatureMap, shortlists: dict, s: Settings) -> S.FeatureCost:
    """Stage 6: median ms of one draft step (map + head + softmax + draw) per head, of one
    target step and of verifying 5 positions."""
    m, reps = lm.model, s.reps
    rng = np.random.default_rng(SEEDS["timing"])
    prompt = W.workload_prompt(lm.codec, "story")
    tgt = CachedTarget(m, 1.0)
    tgt.prefill(prompt)
    h = tgt.cache.hidden[len(prompt) - 1 : len(prompt)].copy()
    e = m.embed([prompt[-1]])
    cost = {"map_ms": median_ms(lambda: fmap.apply(h, e, h), reps)}
    pre = list(prompt) + [int(prompt[-1])]  # the cache holds L−1 positions: one map per step
    for k, ids in shortlists.items():
        W_head = m.w["head"] if ids is None else m.head_rows(ids)
        cost[f"head_{k}_ms"] = median_ms(lambda: product(h, W_head), reps)
        d = FT.FeatureDraft(tgt, fmap, 1.0, shortlist=ids)
        cost[f"draft_gamma4_{k}_ms"] = median_ms(lambda: d.propose(pre, 4, rng), reps)
        cost[f"draft_step_{k}_ms"] = cost[f"draft_gamma4_{k}_ms"] / 4
    assert tgt.cache.n == len(prompt)

    def one_target_step():
        tgt.cache.rollback(len(prompt))
        tgt.logits(list(prompt) + [5], ())

    def five():
        tgt.cache.rollback(len(prompt) - 1)
        tgt.logits(list(prompt), [5, 6, 7, 8])

    cost["target_step_ms"] = median_ms(one_target_step, reps)
    cost["target_verify_5_positions_ms"] = median_ms(five, reps)
    print("cost:", {k: round(v, 2) for k, v in cost.items()})
    return S.FeatureCost(**cost, reps=reps)


# ---------------------------------------------------------------- the study


def study(lm: LoadedModel, s: Settings, machine: Machine, clock: Stopwatch | None = None) -> FeatureStudy:
    """Every stage in order, into the typed record (``machine`` finished at the end; the total
    counts from ``clock``, default now)."""
    if not isinstance(s, Settings):
        raise ValueError(f"s must be a Settings, got {type(s).__name__}")
    if not isinstance(machine, Machine):
        raise ValueError(f"machine must be a Machine, got {type(machine).__name__}")
    clock = Stopwatch() if clock is None else clock
    data = collect(lm, generate_texts(lm, s), s)
    # shortlists from the fitting text only (docstrings, calibration prompts and samples)
    sl = {f"top{n}": FT.shortlist_from_counts(data.fit_texts, n) for n in SHORTLISTS}
    shortlists = {"full": None, **sl}
    sel = select_variant(lm, data, s)
    alphas, ns, alpha_s = alpha_study(lm, data, sel, shortlists, s)
    mass = shortlist_mass(lm, data, shortlists)
    cost = draft_cost(lm, sel.fmap, shortlists, s)
    total = clock.seconds()
    return FeatureStudy(
        machine=machine.finished(total / 60),
        quick=s.quick,
        data=data.info,
        selection=sel.selection,
        chosen=sel.choice(),
        alpha=alphas,
        alpha_n=ns,
        alpha_seconds=alpha_s,
        shortlist_mass=mass,
        cost=cost,
        total_s=total,
    )


def main(argv: list[str] | None = None) -> FeatureStudy:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="small sizes (a smoke run, stored only with --results-dir)"
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--results-dir", default=None, help="where to write features.json (default: the stored results)"
    )
    args = ap.parse_args(argv)
    clock = Stopwatch()
    with threadpool_limits(args.threads):
        machine = Machine.now(threads=args.threads)
        rec = study(load_model(), QUICK if args.quick else FULL, machine, clock=clock)
    if not args.quick or args.results_dir is not None:
        print("wrote", write_stored(rec, args.results_dir))
    print(f"total {rec.total_s:.0f} s")
    return rec


if __name__ == "__main__":
    main()

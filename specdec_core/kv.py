"""The state that speculation costs: KV-cache sizes, speculation's extra positions, budgets.

A decoder keeps, for every layer and every KV head, one key vector and one value vector of
``head_dim`` numbers per token it has seen. So the cache of one sequence of ``tokens`` tokens is

    bytes = 2 × layers × kv_heads × head_dim × bytes_per_element × tokens        (per sequence)

and ``concurrent sequences`` times that for a batch. Everything here is integer arithmetic on
bytes (exact); GiB (2**30 bytes) are only for display.

What speculation adds, per sequence and per round (all **derived** from the shapes):

* the draft model's own cache for the same context;
* γ provisional target positions: verification writes K/V for the γ proposals before knowing
  which survive;
* γ provisional draft positions (we count γ; an implementation that never feeds the last
  proposal back to the draft writes γ − 1, one position less);
* after verification the rejected positions are rolled back (truncated), but the memory for
  all γ must be reserved at the peak, so the budget is set by the peak.

How long a round takes — and so whether to batch more or speculate deeper — is not a memory
question: :mod:`specdec_core.roofline` prices a pass from the same shapes (bytes moved, FLOPs).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .counts import expected_output_count
from .distributions import (
    check_bool,
    check_gamma,
    check_int,
    check_name,
    check_nonnegative,
    check_probability,
)

if TYPE_CHECKING:
    from .types import Scalar

#: Bytes per stored number for the dtypes a cache is usually kept in.
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}

GIB = 2**30


# ---------------------------------------------------------------- validation


def check_dtype(dtype: str | int) -> int:
    """Bytes per element for a dtype name ("bf16", "fp8", ...) or a positive integer."""
    if isinstance(dtype, str):
        if dtype not in DTYPE_BYTES:
            raise ValueError(
                f"dtype must be one of {tuple(DTYPE_BYTES)} or a positive integer, got {dtype!r}"
            )
        return DTYPE_BYTES[dtype]
    return check_int(dtype, "dtype", 1)


def check_budget(budget_bytes: int, name: str = "budget_bytes") -> int:
    """A memory budget in bytes: a non-negative integer (0 is allowed: nothing fits)."""
    return check_int(budget_bytes, name, 0)


def gib_to_bytes(gib: Scalar) -> int:
    """GiB (float or exact) → whole bytes, rounded to the nearest byte. Non-negative, finite."""
    return round(Fraction(check_nonnegative(gib, "gib", "a number of GiB")) * GIB)


def fmt_gib(n_bytes: int, digits: int = 2) -> str:
    """Bytes shown as GiB with a fixed rounding, e.g. ``14.96 GiB``."""
    return f"{int(n_bytes) / GIB:.{digits}f} GiB"


def fmt_bytes(n_bytes: int) -> str:
    """Bytes as an integer with thousands separators, e.g. ``1,073,741,824 B``."""
    return f"{int(n_bytes):,} B"


# ---------------------------------------------------------------- shapes and presets


@dataclass(frozen=True)
class ModelShape:
    """The published shape of a decoder-only transformer (Llama-style: grouped-query attention,
    gated MLP with three matrices, RMSNorm weights, optional tied output head).

    The KV cache needs only ``layers``, ``kv_heads`` and ``head_dim``; the other fields give the
    parameter count (:attr:`parameters`), checked against the published totals in the tests.
    """

    name: str
    layers: int
    kv_heads: int
    head_dim: int
    heads: int
    hidden: int
    intermediate: int
    vocab: int
    tied_embeddings: bool
    source: str

    def __post_init__(self):
        for f in ("layers", "kv_heads", "head_dim", "heads", "hidden", "intermediate", "vocab"):
            check_int(getattr(self, f), f, 1)
        if self.heads % self.kv_heads:
            raise ValueError(f"heads ({self.heads}) must be a multiple of kv_heads ({self.kv_heads})")
        check_name(self.name, "name")
        check_bool(self.tied_embeddings, "tied_embeddings")
        check_name(self.source, "source")

    @property
    def parameters(self) -> int:
        """Parameter count implied by the shape (embeddings, attention, MLP, norms, head)."""
        h, d = self.hidden, self.head_dim
        attn = h * self.heads * d * 2 + h * self.kv_heads * d * 2  # q, o and k, v
        mlp = 3 * h * self.intermediate  # gate, up, down
        per_layer = attn + mlp + 2 * h  # + two norm weights
        emb = self.vocab * h
        return self.layers * per_layer + emb * (1 if self.tied_embeddings else 2) + h

    @property
    def kv_elements_per_token(self) -> int:
        """2 × layers × kv_heads × head_dim: numbers stored per token (keys and values)."""
        return 2 * self.layers * self.kv_heads * self.head_dim


#: The presets' published shapes, one row each: name, layers, kv_heads, head_dim, heads (query),
#: hidden, intermediate, vocab, tied_embeddings (the fields of :class:`ModelShape`, in order).
_SHAPES = (
    ("SmolLM2-135M", 30, 3, 64, 9, 576, 1536, 49152, True),
    ("Llama-3.2-1B", 16, 8, 64, 32, 2048, 8192, 128256, True),
    ("Llama-3.1-8B", 32, 8, 128, 32, 4096, 14336, 128256, False),
    ("Llama-3.1-70B", 80, 8, 128, 64, 8192, 28672, 128256, False),
)

#: Where each preset's numbers come from.
_SOURCES = {
    "SmolLM2-135M": "HuggingFaceTB/SmolLM2-135M config; the same numbers are in the GGUF of "
    "notebook 09 (30 layers, width 576, 9 query / 3 KV heads, head dim 64, tied head).",
    "Llama-3.2-1B": "meta-llama/Llama-3.2-1B config.json (16 layers, 32 query / 8 KV heads, "
    "head dim 64, tied head); shares the Llama 3 tokenizer, so it can draft for 3.1.",
    "Llama-3.1-8B": "meta-llama/Llama-3.1-8B config.json (32 layers, 32 query / 8 KV heads, head dim 128).",
    "Llama-3.1-70B": "meta-llama/Llama-3.1-70B config.json (80 layers, 64 query / 8 KV heads, head dim 128).",
}

#: The presets by name: :class:`ModelShape` records built from the rows above.
PRESETS = {row[0]: ModelShape(*row, source=_SOURCES[row[0]]) for row in _SHAPES}


def get_shape(model: ModelShape | str) -> ModelShape:
    """A ModelShape, or the name of a preset."""
    if isinstance(model, ModelShape):
        return model
    if isinstance(model, str) and model in PRESETS:
        return PRESETS[model]
    raise ValueError(f"model must be a ModelShape or one of {tuple(PRESETS)}, got {model!r}")


# ---------------------------------------------------------------- the formula


def kv_cache_bytes(
    *, layers: int, kv_heads: int, head_dim: int, bytes_per_element: int, tokens: int, sequences: int = 1
) -> int:
    """2 × layers × kv_heads × head_dim × bytes_per_element × tokens × sequences (exact int).

    ``tokens`` may be 0 (an empty cache); every other argument must be a positive integer.
    """
    L = check_int(layers, "layers", 1)
    H = check_int(kv_heads, "kv_heads", 1)
    D = check_int(head_dim, "head_dim", 1)
    B = check_int(bytes_per_element, "bytes_per_element", 1)
    T = check_int(tokens, "tokens", 0)
    S = check_int(sequences, "sequences", 1)
    return 2 * L * H * D * B * T * S


def model_kv_bytes(model: ModelShape | str, dtype: str | int, tokens: int, sequences: int = 1) -> int:
    """:func:`kv_cache_bytes` for a preset or ModelShape."""
    m = get_shape(model)
    return kv_cache_bytes(
        layers=m.layers,
        kv_heads=m.kv_heads,
        head_dim=m.head_dim,
        bytes_per_element=check_dtype(dtype),
        tokens=tokens,
        sequences=sequences,
    )


def weight_bytes(model: ModelShape | str, dtype: str | int) -> int:
    """parameters × bytes per element: the weights, *assuming* they are stored in ``dtype``."""
    return get_shape(model).parameters * check_dtype(dtype)


# ---------------------------------------------------------------- speculation's working set


@dataclass(frozen=True)
class WorkingSet:
    """The peak memory of one speculative round for ``sequences`` sequences (bytes, exact).

    ``target_cache``/``draft_cache``: the accepted context; ``target_provisional``/
    ``draft_provisional``: the γ positions per sequence written before verification decides;
    ``target_weights``/``draft_weights``: 0 unless weights were included.
    """

    target_cache: int
    target_provisional: int
    draft_cache: int
    draft_provisional: int
    target_weights: int
    draft_weights: int
    budget: int | None = None

    PARTS = (
        "target_weights",
        "draft_weights",
        "target_cache",
        "target_provisional",
        "draft_cache",
        "draft_provisional",
    )

    @property
    def kv_total(self) -> int:
        return self.target_cache + self.target_provisional + self.draft_cache + self.draft_provisional

    @property
    def speculation_extra(self) -> int:
        """Everything plain decoding of the target alone would not need."""
        return self.total - self.target_cache - self.target_weights

    @property
    def total(self) -> int:
        return sum(getattr(self, p) for p in self.PARTS)

    @property
    def fits(self) -> bool | None:
        return None if self.budget is None else self.total <= self.budget

    @property
    def headroom(self) -> int | None:
        """budget − total (negative when it does not fit)."""
        return None if self.budget is None else self.budget - self.total

    def parts(self) -> dict[str, int]:
        return {p: getattr(self, p) for p in self.PARTS}


def working_set(
    target: ModelShape | str,
    draft: ModelShape | str,
    *,
    dtype: str | int,
    context: int,
    sequences: int,
    gamma: int,
    budget_bytes: int | None = None,
    include_weights: bool = True,
) -> WorkingSet:
    """Peak memory of speculative decoding: caches for ``context`` tokens per sequence in both
    models, plus γ provisional positions in each, plus (optionally) both models' weights.

    γ = 0 means plain decoding: no draft is loaded (no draft cache, no draft weights).
    """
    t = get_shape(target)
    d = get_shape(draft)
    b = check_dtype(dtype)
    n = check_int(context, "context", 0)
    s = check_int(sequences, "sequences", 1)
    g = check_gamma(gamma)
    budget = None if budget_bytes is None else check_budget(budget_bytes)
    if not isinstance(include_weights, (bool, np.bool_)):
        raise ValueError(f"include_weights must be True or False, got {include_weights!r}")
    spec = g > 0
    return WorkingSet(
        target_cache=model_kv_bytes(t, b, n, s),
        target_provisional=model_kv_bytes(t, b, g, s),
        draft_cache=model_kv_bytes(d, b, n, s) if spec else 0,
        draft_provisional=model_kv_bytes(d, b, g, s) if spec else 0,
        target_weights=weight_bytes(t, b) if include_weights else 0,
        draft_weights=weight_bytes(d, b) if include_weights and spec else 0,
        budget=budget,
    )


def per_sequence_bytes(
    target: ModelShape | str, draft: ModelShape | str, *, dtype: str | int, context: int, gamma: int
) -> int:
    """KV bytes one more sequence adds at the peak (target and draft, context + γ each)."""
    ws = working_set(
        target, draft, dtype=dtype, context=context, sequences=1, gamma=gamma, include_weights=False
    )
    return ws.kv_total


def max_concurrent_sequences(
    target: ModelShape | str,
    draft: ModelShape | str,
    *,
    dtype: str | int,
    context: int,
    gamma: int,
    budget_bytes: int,
    include_weights: bool = True,
) -> int:
    """The most sequences whose peak working set fits in ``budget_bytes`` (0 if none fits)."""
    budget = check_budget(budget_bytes)
    fixed = working_set(
        target, draft, dtype=dtype, context=context, sequences=1, gamma=gamma, include_weights=include_weights
    )
    weights = fixed.target_weights + fixed.draft_weights
    per_seq = fixed.kv_total
    if budget < weights:
        return 0
    if per_seq == 0:
        raise ValueError("context and gamma are both 0: a sequence needs no cache, any number fits")
    return (budget - weights) // per_seq


def rollback_positions(alpha: Scalar, gamma: int) -> Scalar:
    """Expected target positions rolled back per sequence per round under iid acceptance α:
    γ − E[accepted] = γ − (E[K] − 1). The peak reservation is still γ. Exact α stays exact."""
    g = check_gamma(gamma)
    a = check_probability(alpha, "alpha")
    accepted = expected_output_count(a, g) - 1
    return g - accepted

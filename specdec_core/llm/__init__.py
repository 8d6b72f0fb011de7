"""The real model of notebook 09: SmolLM2-135M-Instruct in numpy on the CPU.

``load_model()`` → :class:`LoadedModel` (config, :class:`Llama`, tokenizer codec);
``CachedTarget`` / ``PromptLookupDraft`` and, with a real q,
``NgramDraft`` / ``ExitDraft`` / ``QuantizedDraft`` (the target's own weights in int8,
:func:`quantized_model`; :mod:`.drafts`) and ``FeatureDraft`` (:mod:`.features`) plug into :mod:`specdec_core.sampling`;
:mod:`.runs` times generations from fresh state; :mod:`.predict` predicts tokens/s before a
run; :mod:`.lawtest` is the powered law test; :mod:`.report` reads the benchmark's results.
"""

from .adapters import CachedTarget, CallLog, PromptLookupDraft, probs_from_logits
from .drafts import ExitDraft, NgramDraft, QuantizedDraft, fit_exit_map, quantized_model
from .features import (
    FeatureDraft,
    FeatureMap,
    Features,
    collect_features,
    fit_feature_map,
    shortlist_from_counts,
)
from .loader import LlamaConfig, load_gguf, model_path
from .model import KVCache, Llama
from .runs import LoadedModel, load_model
from .tokenizer import TextCodec, build_tokenizer

__all__ = [
    "CachedTarget",
    "CallLog",
    "PromptLookupDraft",
    "probs_from_logits",
    "ExitDraft",
    "NgramDraft",
    "fit_exit_map",
    "QuantizedDraft",
    "quantized_model",
    "FeatureDraft",
    "FeatureMap",
    "Features",
    "collect_features",
    "fit_feature_map",
    "shortlist_from_counts",
    "LlamaConfig",
    "load_gguf",
    "model_path",
    "KVCache",
    "Llama",
    "TextCodec",
    "build_tokenizer",
    "LoadedModel",
    "load_model",
]

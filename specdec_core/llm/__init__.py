"""The real model of notebook 09: SmolLM2-135M-Instruct in numpy on the CPU.

``load_model()`` → :class:`LoadedModel` (config, :class:`Llama`, tokenizer codec);
``CachedTarget`` / ``PromptLookupDraft`` / ``LayerSkipDraft`` plug into
:mod:`specdec_core.sampling`; :mod:`.runs` times generations and sweeps.
"""
from .adapters import (CachedTarget, CallLog, LayerSkipDraft, PromptLookupDraft,
                       probs_from_logits)
from .loader import LlamaConfig, load_gguf, model_path
from .model import KVCache, Llama
from .tokenizer import TextCodec, build_tokenizer
from .runs import LoadedModel, load_model

__all__ = ["CachedTarget", "CallLog", "LayerSkipDraft", "PromptLookupDraft", "probs_from_logits",
           "LlamaConfig", "load_gguf", "model_path", "KVCache", "Llama", "TextCodec",
           "build_tokenizer", "LoadedModel", "load_model"]

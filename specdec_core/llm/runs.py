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

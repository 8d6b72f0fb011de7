"""The three workloads of notebook 09 and its benchmark: prompts as ChatML token ids."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tokenizer import TextCodec

PARAGRAPH = (
    "The lighthouse stood at the end of a narrow spit of rock, and every night for forty years "
    "its keeper climbed the one hundred and twelve steps to light the lamp. Ships passing in the "
    "dark saw the beam sweep across the water and knew where the reef lay. When the keeper grew "
    "old, the town decided to replace the lamp with an automatic light, and a crew of engineers "
    "arrived with crates of cables, batteries and glass. The keeper watched them work for three "
    "days. On the last evening he climbed the steps one more time, wiped the great lens with a "
    "soft cloth, and walked down to the village without looking back."
)

CODE = """def average(values):
    total = 0
    count = 0
    for v in values:
        total = total + v
        count = count + 1
    if count == 0:
        return 0
    return total / count


def report(values):
    total = sum(values)
    print("total:", total)
    print("average:", average(values))
"""

WORKLOADS = {
    "copy": (
        "Copy-heavy: repeat a given paragraph",
        "Repeat the following paragraph exactly, word for word:\n\n" + PARAGRAPH,
    ),
    "code": (
        "Code edit: rename a variable in a given function",
        "Rewrite this Python code, renaming the variable `total` to `running_sum` everywhere. "
        "Output only the code.\n\n```python\n" + CODE + "```",
    ),
    "story": (
        "Open story: no source to copy from",
        "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    ),
}


def workload_prompt(codec: TextCodec, name: str) -> list[int]:
    if name not in WORKLOADS:
        raise ValueError(f"workload must be one of {tuple(WORKLOADS)}, got {name!r}")
    return codec.chat(WORKLOADS[name][1])


#: Calibration prompts: never evaluated. The benchmark fits the early-exit maps, picks the
#: n-gram discount and measures every micro-benchmark on these, so the evaluated workloads
#: above are held out.
CALIBRATION = {
    "cal-copy": "Repeat the following sentences exactly:\n\nThe old mill by the river turned for a hundred "
    "years. Every spring the water rose, the wheel ran faster, and the miller sang while he "
    "worked. When the river changed its course, the wheel stopped, and children came to play "
    "in the quiet yard.",
    "cal-code": "Rewrite this Python function so that it uses a for loop instead of a while loop. Output "
    "only the code.\n\n```python\ndef count_up(n):\n    i = 0\n    out = []\n    while i < n:\n"
    "        out.append(i)\n        i = i + 1\n    return out\n```",
    "cal-explain": "Explain in a few sentences why the sky looks blue during the day.",
    "cal-list": "Give me a short list of tips for keeping a vegetable garden healthy.",
    "cal-letter": "Write a short, friendly letter inviting a neighbour to a summer picnic.",
    "cal-story": "Tell a short story about a fox who learns to swim.",
}


def calibration_prompt(codec: TextCodec, name: str) -> list[int]:
    if name not in CALIBRATION:
        raise ValueError(f"calibration prompt must be one of {tuple(CALIBRATION)}, got {name!r}")
    return codec.chat(CALIBRATION[name])


def docstring_sequences(codec: TextCodec, seq_len: int = 256) -> dict[str, list[list[int]]]:
    """{module path: [token sequences]}: calibration text for the feature draft that is never
    evaluated — the docstrings (≥ 80 characters) of ``specdec_core``'s own modules, frozen in
    ``llm/corpus.json`` (``tools/freeze_corpus.py``; it ships with the package), packed into
    sequences of at most ``seq_len`` tokens."""
    import json
    from pathlib import Path

    corpus = json.loads((Path(__file__).resolve().parent / "corpus.json").read_text(encoding="utf-8"))
    out = {}
    for path, docs in corpus.items():
        seqs, cur = [], []
        for d in docs:
            ids = codec.encode(d + "\n\n")[:seq_len]
            if len(cur) + len(ids) > seq_len and cur:
                seqs.append(cur)
                cur = []
            cur = cur + ids
        if cur:
            seqs.append(cur)
        out[path] = seqs
    return out


def split_by_module(
    docs: dict[str, list[list[int]]], held_fraction: float = 0.2
) -> tuple[list[list[int]], list[list[int]]]:
    """(fit sequences, held-out sequences), split by module with a stable hash of its path."""
    import zlib

    fit, held = [], []
    for path, seqs in docs.items():
        (held if zlib.crc32(path.encode()) % 100 < 100 * held_fraction else fit).extend(seqs)
    return fit, held

"""A draft with another tokenizer (notebook 08): what re-tokenizing the draft's text does to q.

Speculative sampling needs p and q over **the same token events**: the target verifies "the next
target token is x", so q(x) must be the probability that the draft's procedure *proposes that
target token*. When the draft writes text in its own tokens and the text is re-tokenized with the
target's tokenizer (universal assisted generation), the proposal is "the first target token of
the re-tokenized text", and its law is a sum over every draft text that re-tokenizes to it
(:func:`proposal_law`). The naive scheme reports instead the draft's probability of the characters
spelling x (:func:`naive_reported_q`): the event "the draft wrote a" is not the event "the first
target token is a" when the target also has the token "ab".

The toy: the draft writes characters one at a time; the target's tokenizer is greedy longest
match over its vocabulary. :func:`verified_output_reported` gives the exact law of the verified
token for any reported weights, so the naive scheme's bias is an exact total variation.

Pure layer: fractions only.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import TYPE_CHECKING

from .distributions import check_distribution, check_int, check_sequence, check_weights

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from .types import Scalar


def longest_match(text: str, vocab: Iterable[str]) -> tuple[str, ...]:
    """Greedy longest-match tokenization of ``text`` over the strings ``vocab`` (every single
    character of ``text`` must be in it)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    vocab = set(_check_vocab(vocab, "vocab"))
    longest = max(len(v) for v in vocab)
    out, i = [], 0
    while i < len(text):
        for n in range(min(longest, len(text) - i), 0, -1):
            if text[i : i + n] in vocab:
                out.append(text[i : i + n])
                i += n
                break
        else:
            raise ValueError(f"character {text[i]!r} is not in the vocabulary")
    return tuple(out)


def _check_vocab(vocab, name: str) -> list:
    """A tokenizer's vocabulary: a non-empty sequence of distinct, non-empty strings."""
    if isinstance(vocab, (set, frozenset)):
        vocab = sorted(vocab, key=str)
    items = check_sequence(vocab, name, "a sequence of strings")
    if not items or not all(isinstance(v, str) and v for v in items):
        raise ValueError(f"{name} must be a non-empty sequence of non-empty strings, got {vocab!r}")
    dup = next((v for i, v in enumerate(items) if v in items[:i]), None)
    if dup is not None:
        raise ValueError(f"{name} holds {dup!r} twice: a tokenizer's tokens are distinct")
    return items


def _check_chars(char_probs) -> dict:
    if not isinstance(char_probs, dict) or not char_probs:
        raise ValueError("char_probs must be a non-empty dict {character: probability}")
    bad = next((c for c in char_probs if not (isinstance(c, str) and len(c) == 1)), None)
    if bad is not None:
        raise ValueError(f"char_probs must map single characters to probabilities, got the key {bad!r}")
    vals = check_distribution(list(char_probs.values()), "char_probs", exact=True)
    return dict(zip(char_probs, vals))


#: proposal_law enumerates len(char_probs)^lookahead draft texts: at most this many.
MAX_ENUMERATED = 10**6


def proposal_law(
    char_probs: Mapping[str, Scalar], target_vocab: Sequence[str], lookahead: int | None = None
) -> dict[str, Fraction]:
    """The true law of the proposed target token: the draft writes ``lookahead`` characters
    independently from ``char_probs`` (default: the longest target token, enough to decide the
    first token), the text is re-tokenized by :func:`longest_match`, and its first token is the
    proposal. {target token: Fraction}."""
    chars = _check_chars(char_probs)
    target_vocab = _check_vocab(target_vocab, "target_vocab")
    n = check_int(
        lookahead if lookahead is not None else max(len(v) for v in target_vocab), "lookahead", 1, 12
    )
    if n * math.log10(len(chars)) > math.log10(MAX_ENUMERATED) + 1e-9:
        raise ValueError(
            f"lookahead = {n} would enumerate {len(chars)}^{n} draft texts (char_probs has "
            f"{len(chars)} characters); at most {MAX_ENUMERATED:,} are enumerated"
        )
    law: dict = {}
    for text in itertools.product(chars, repeat=n):
        prob = Fraction(1)
        for ch in text:
            prob *= chars[ch]
        if prob:
            first = longest_match("".join(text), target_vocab)[0]
            law[first] = law.get(first, Fraction(0)) + prob
    return {t: law.get(t, Fraction(0)) for t in target_vocab}


def naive_reported_q(char_probs: Mapping[str, Scalar], target_vocab: Iterable[str]) -> dict[str, Fraction]:
    """What the naive scheme reports for proposal x: the draft's probability of the characters
    spelling x, Π q(character). Not a distribution over target tokens ("a" and "ab" overlap)."""
    chars = _check_chars(char_probs)
    out = {}
    for t in target_vocab:
        prob = Fraction(1)
        for ch in t:
            prob *= chars.get(ch, Fraction(0))
        out[t] = prob
    return out


def verified_output_reported(p: dict, sampled: dict, reported: dict) -> dict:
    """Law of the verified token when the proposal x is drawn from ``sampled`` and the verifier
    uses ``reported`` weights (any non-negative numbers) as q: keep x with min(1, p(x)/q(x)), else
    draw from max(p − q, 0) normalized. {token: Fraction}; equals p when reported = sampled."""
    p = _check_law(p, "p", check_distribution)
    keys = list(p)
    sampled = _check_law(sampled, "sampled", check_distribution, keys)
    reported = _check_law(reported, "reported", check_weights, keys)
    zero = next((x for x in keys if sampled[x] and not reported[x]), None)
    if zero is not None:
        raise ValueError(
            f"reported gives 0 to {zero!r}, which sampled proposes: a verifier cannot divide by it"
        )
    kept = {
        x: (sampled[x] * min(Fraction(1), p[x] / reported[x]) if sampled[x] else Fraction(0)) for x in keys
    }
    rejected = 1 - sum(kept.values())
    pos = {x: max(p[x] - reported[x], Fraction(0)) for x in keys}
    total = sum(pos.values())
    if rejected and not total:
        raise ValueError("the residual max(p - q, 0) has no mass: the reported q covers p everywhere")
    return {x: kept[x] + (rejected * pos[x] / total if rejected else 0) for x in keys}


def _check_law(d, name: str, check, keys=None) -> dict:
    """{token: exact weight} through ``check`` (a distribution, or non-negative weights), with
    exactly the tokens ``keys`` when given."""
    if not isinstance(d, dict) or not d:
        raise ValueError(f"{name} must be a non-empty dict {{token: probability}}, got {d!r}")
    if keys is not None and set(d) != set(keys):
        raise ValueError(
            f"{name} must have exactly p's tokens {sorted(keys, key=str)}, got {sorted(d, key=str)}"
        )
    order = list(d) if keys is None else list(keys)
    vals = (
        check([d[k] for k in order], name)
        if check is check_weights
        else check([d[k] for k in order], name, exact=True)
    )
    if check is check_weights and not all(isinstance(v, Fraction) for v in vals):
        raise ValueError(f"{name} must hold exact numbers (int, Fraction or sympy Rational)")
    return dict(zip(order, vals))

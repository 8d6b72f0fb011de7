"""Size guards (issue 32, item 3): an argument that would make a function enumerate or allocate
without bound is refused with a ValueError naming it and the limit — before any enumeration.
Each test's model (or enumerator) raises RuntimeError as soon as the work starts, so the old
code, which started it, fails fast instead of hanging."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


class _Tripwire:
    """An exact model over V symbols (uniform) that raises after ``calls`` row requests."""

    def __init__(self, V: int, calls: int = 5):
        self.V, self.left = V, calls

    def exact(self, prefix):
        self.left -= 1
        if self.left < 0:
            raise RuntimeError("the enumeration started")
        return [F(1, self.V)] * self.V

    def __call__(self, prefix):
        return np.asarray(self.exact(prefix), dtype=np.float64)


def test_round_output_law_refuses_an_enumeration_over_the_limit():
    from specdec_core.processors import MAX_ENUMERATED, round_output_law

    V = 1001  # V + V² = 1,003,002 > 10^6 outputs at γ = 1
    with pytest.raises(ValueError, match=rf"gamma = 1 would enumerate up to 1,003,002 .*{MAX_ENUMERATED:,}"):
        round_output_law(_Tripwire(V), _Tripwire(V), (), 1)
    with pytest.raises(ValueError, match="gamma = 40"):
        round_output_law(_Tripwire(2), _Tripwire(2), (), 40)
    law = round_output_law(_Tripwire(3, 100), _Tripwire(3, 100), (), 1)  # 3² outputs: computed
    assert sum(law.values()) == 1


def test_proposal_law_refuses_an_enumeration_over_the_limit(monkeypatch):
    from specdec_core import tokenizers

    def product(*a, **k):
        raise RuntimeError("the enumeration started")

    chars = {chr(0x100 + i): F(1, 40) for i in range(40)}  # 40^4 > 10^6 draft texts
    monkeypatch.setattr(tokenizers.itertools, "product", product)
    with pytest.raises(
        ValueError, match=r"lookahead = 4 would enumerate 40\^4 .*char_probs has 40 .*1,000,000"
    ):
        tokenizers.proposal_law(chars, list(chars), lookahead=4)
    monkeypatch.undo()
    for bad in ((), "ab", ["a", ""], ["a", 3]):
        with pytest.raises(ValueError, match="target_vocab"):
            tokenizers.proposal_law({"a": F(1, 2), "b": F(1, 2)}, bad)
    assert tokenizers.proposal_law({"a": F(1, 2), "b": F(1, 2)}, ("a", "b", "ab"))["ab"] == F(1, 4)


def test_speculative_round_refuses_an_absurd_gamma():
    from specdec_core.distributions import MAX_GAMMA
    from specdec_core.sampling import speculative_round

    target, draft = _Tripwire(4), _Tripwire(4)
    with pytest.raises(ValueError, match=rf"gamma = 1,000,000,000 .*at most {MAX_GAMMA:,}"):
        speculative_round(target, draft, (0,), gamma=10**9, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="gamma"):
        speculative_round(target, draft, (0,), gamma=MAX_GAMMA + 1, rng=np.random.default_rng(0))
    rec = speculative_round(_Tripwire(4, 100), _Tripwire(4, 100), (0,), gamma=3, rng=np.random.default_rng(0))
    assert 1 <= len(rec.emitted) <= 4


def test_repeats_needed_validates_max_n():
    from specdec_core.repeats import MAX_REPEATS, repeats_needed

    for bad in ("100", 2.0, True, None, 1, 0, -5):
        with pytest.raises(ValueError, match="max_n must be"):
            repeats_needed(0.05, 0.05, max_n=bad)
    with pytest.raises(ValueError, match=f"max_n must be at most {MAX_REPEATS}"):
        repeats_needed(0.05, 0.05, max_n=10**12)
    # a spread no max_n can serve is refused at once (the old search tried every n up to max_n)
    with pytest.raises(ValueError, match="more than max_n = 1000000"):
        repeats_needed(5.0, 0.001, max_n=MAX_REPEATS)


def _smallest_n(sd, precision, level, max_n):
    from scipy.stats import t

    target = math.log1p(precision)
    for n in range(2, max_n + 1):
        if float(t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n) <= target:
            return n
    return None


@settings(max_examples=60, deadline=None)
@given(
    sd=st.floats(0.0, 0.6),
    precision=st.sampled_from((0.01, 0.02, 0.05, 0.1, 0.5)),
    level=st.sampled_from((0.5, 0.9, 0.95, 0.99)),
)
def test_repeats_needed_is_the_smallest_n(sd, precision, level):
    """Starting the search at the normal bound never skips the answer: it equals the smallest n
    found by trying every n from 2."""
    from specdec_core.repeats import repeats_needed

    want = _smallest_n(sd, precision, level, 3000)
    if want is None:
        with pytest.raises(ValueError, match="max_n"):
            repeats_needed(sd, precision, level, max_n=3000)
    else:
        assert repeats_needed(sd, precision, level, max_n=3000) == want

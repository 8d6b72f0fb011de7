"""The two-level inverse-CDF sampler behind verify_batch."""

from collections import Counter

import numpy as np
import pytest

from specdec_core import chi_square_gof
from specdec_core.batch import sample_rows


@pytest.mark.parametrize("V", [1, 7, 512, 513, 5000])
def test_never_returns_zero_weight_columns(V):
    rng = np.random.default_rng(V)
    W = rng.random((200, V)) * (rng.random((200, V)) < 0.3)
    W[:, -1] = 0.0
    W[W.sum(1) == 0, 0] = 1.0
    for _ in range(5):
        idx = sample_rows(W, rng.random(200))
        assert (W[np.arange(200), idx] > 0).all()
    # edge uniforms: 0 and the largest double below 1
    idx = sample_rows(W, np.r_[np.zeros(100), np.full(100, np.nextafter(1.0, 0))])
    assert (W[np.arange(200), idx] > 0).all()


def test_law_over_a_long_row():
    """Chi-square, reject if p < 0.001: 40,000 draws from one 2,000-column row (float32 input)."""
    rng = np.random.default_rng(3)
    w = (rng.random(2000) ** 4).astype(np.float32)
    w[rng.random(2000) < 0.5] = 0
    idx = sample_rows(np.broadcast_to(w, (40000, 2000)), rng.random(40000))
    law = {i: float(v) / float(w.astype(np.float64).sum()) for i, v in enumerate(w) if v > 0}
    res = chi_square_gof(Counter(idx.tolist()), law)
    assert not res.rejected, str(res)


def test_rows_without_mass_are_refused():
    with pytest.raises(ValueError, match="no positive, finite mass"):
        sample_rows(np.zeros((2, 4)), np.array([0.1, 0.2]))

"""Hypothesis strategies shared by the pure-layer tests."""

from fractions import Fraction

from hypothesis import strategies as st


def _normalize(weights):
    total = sum(weights)
    return [Fraction(w, total) for w in weights]


@st.composite
def exact_distribution(draw, n):
    """An exact distribution over n symbols: zeros, tiny values (1e-12-ish) and one-hots included."""
    kind = draw(st.sampled_from(["weights", "tiny", "onehot"]))
    if kind == "onehot":
        i = draw(st.integers(0, n - 1))
        return [Fraction(int(j == i)) for j in range(n)]
    hi = 10 if kind == "weights" else 10**12
    w = draw(st.lists(st.integers(0, hi), min_size=n, max_size=n).filter(lambda v: sum(v) > 0))
    return _normalize(w)


@st.composite
def exact_pair(draw, max_n=6):
    """(p, q) over the same symbols; sometimes p = q, sometimes one-hot q."""
    n = draw(st.integers(1, max_n))
    p = draw(exact_distribution(n))
    how = draw(st.sampled_from(["independent", "equal", "onehot_q"]))
    if how == "equal":
        return p, list(p)
    if how == "onehot_q":
        i = draw(st.integers(0, n - 1))
        return p, [Fraction(int(j == i)) for j in range(n)]
    return p, draw(exact_distribution(n))


@st.composite
def float_pair(draw, max_n=8):
    n = draw(st.integers(1, max_n))

    def one():
        w = draw(
            st.lists(st.floats(0, 1, allow_nan=False), min_size=n, max_size=n).filter(lambda v: sum(v) > 1e-3)
        )
        s = sum(w)
        return [x / s for x in w]

    return one(), one()

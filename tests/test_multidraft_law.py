"""The samplers against the exact law: chi-square goodness of fit, and a broken variant caught.

Statistic: Pearson chi-square of the emitted outcomes against the exact law
(:func:`specdec_core.chi_square_gof`, cells with expected count < 5 pooled). Threshold: reject when
the p-value is below 0.001 (fixed in advance). Seeds are fixed, so the outcome is deterministic.
The broken variant ("no_update": accept any candidate the target would accept, never moving the
target to the residual) is caught; its power at the stated sample size is computed exactly from
the two laws (noncentral chi-square approximation) and asserted to be at least 0.99.
"""

from collections import Counter
from fractions import Fraction as F

import numpy as np
import pytest

from specdec_core import chi_square_gof
from specdec_core.multidraft import (
    multi_draft_law,
    sample_candidates,
    verify_candidates,
)
from specdec_core.power import chi_square_power
from specdec_core.toy import sequence_law, toy_draft, toy_target
from specdec_core.tree_laws import last_token_key, tree_sequence_law
from specdec_core.tree_sampling import tree_generate
from specdec_core.trees import branching_tree

THRESHOLD = 1e-3
P = [0.6, 0.3, 0.1]
Q = [0.2, 0.3, 0.5]
N_POSITION = 3000  # samples for one position
N_TREE = 2000  # three-token sequences for the tree sampler


def _position_samples(rule, k, replacement, seed, n=N_POSITION):
    rng = np.random.default_rng(seed)
    out = Counter()
    for _ in range(n):
        c = sample_candidates(Q, k, rng, replacement=replacement)
        out[verify_candidates(P, Q, c, rng, rule=rule, replacement=replacement)[1]] += 1
    return out


@pytest.mark.parametrize("k, replacement", [(2, True), (3, True), (2, False), (3, False)])
def test_multi_candidate_sampler_follows_p(k, replacement):
    res = chi_square_gof(
        _position_samples("recursive", k, replacement, seed=10 + k),
        {i: v for i, v in enumerate(P)},
        threshold=THRESHOLD,
    )
    assert not res.rejected, str(res)


def test_multi_candidate_broken_variant_is_caught():
    law = {i: v for i, v in enumerate(P)}
    broken = multi_draft_law([F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)], 2, rule="no_update")
    alt = {i: float(v) for i, v in enumerate(broken.output)}
    assert chi_square_power(law, alt, N_POSITION, threshold=THRESHOLD) > 0.99
    res = chi_square_gof(_position_samples("no_update", 2, True, seed=3), law, threshold=THRESHOLD)
    assert res.rejected, str(res)


TREE = branching_tree((2, 2))


def _tree_samples(rule, replacement, seed, n=N_TREE):
    rng = np.random.default_rng(seed)
    return Counter(
        tree_generate(toy_target(), toy_draft(), (), TREE, 3, rng, rule=rule, replacement=replacement)
        for _ in range(n)
    )


@pytest.mark.parametrize("replacement", [True, False])
def test_tree_sampler_follows_the_exact_law(replacement):
    law = tree_sequence_law(
        toy_target(), toy_draft(), (), TREE, 3, replacement=replacement, key=last_token_key
    )
    assert law == sequence_law(toy_target(), (), 3)  # the exact law is the target's
    res = chi_square_gof(_tree_samples("recursive", replacement, seed=7), law, threshold=THRESHOLD)
    assert not res.rejected, str(res)


def test_tree_broken_variant_is_caught():
    law = sequence_law(toy_target(), (), 3)
    alt = tree_sequence_law(toy_target(), toy_draft(), (), TREE, 3, rule="no_update", key=last_token_key)
    power = chi_square_power(law, alt, N_TREE, threshold=THRESHOLD)
    assert power > 0.99, power
    res = chi_square_gof(_tree_samples("no_update", True, seed=8), law, threshold=THRESHOLD)
    assert res.rejected, str(res)
    # and the broken sampler does follow its own (wrong) exact law: the law computation is right
    assert not chi_square_gof(_tree_samples("no_update", True, seed=9), alt, threshold=THRESHOLD).rejected


@pytest.mark.parametrize("replacement", [True, False])
def test_which_candidate_is_accepted_follows_the_exact_law(replacement):
    """Not only the token: the index of the accepted candidate (None: all rejected) follows the
    enumerated law, so the sampler's steps, not just its output, match the exact computation."""
    exact = multi_draft_law(
        [F(3, 5), F(3, 10), F(1, 10)], [F(1, 5), F(3, 10), F(1, 2)], 3, replacement=replacement
    )
    law = {i: float(v) for i, v in enumerate(exact.by_index) if v > 0}
    if exact.acceptance < 1:
        law[None] = 1 - float(exact.acceptance)
    rng = np.random.default_rng(21)
    seen = Counter(
        verify_candidates(
            P, Q, sample_candidates(Q, 3, rng, replacement=replacement), rng, replacement=replacement
        )[0]
        for _ in range(N_POSITION)
    )
    res = chi_square_gof(seen, law, threshold=THRESHOLD)
    assert not res.rejected, str(res)

"""RankBoost's numba kernels against naive numpy references (also run with NUMBA_DISABLE_JIT=1)."""

from __future__ import annotations

import numpy as np
import pytest

from boostkit_rankboost.kernels import (
    _exact_pair_weights,
    bipartite_weights,
    class_score_sums,
    pair_weights,
)


def naive_pair_distribution(margin, lower, upper, d1):
    """D(p) = D_1(p) exp(F(x0) - F(x1)) / sum, with the sum, straight from the definition."""
    unnormalised = d1 * np.exp(margin[lower] - margin[upper])
    return unnormalised / unnormalised.sum(), unnormalised.sum()


def naive_row_weights(n_rows, lower, upper, pair_distribution):
    return 0.5 * (np.bincount(lower, pair_distribution, n_rows)
                  + np.bincount(upper, pair_distribution, n_rows))


def test_class_score_sums_match_numpy():
    rng = np.random.default_rng(0)
    scores = rng.uniform(-1, 1, 50)
    weights = rng.exponential(size=50)
    is_pos = (rng.random(50) < 0.3).astype(np.uint8)
    neg_sum, neg_total, pos_sum, pos_total, low, high = class_score_sums(scores, weights, is_pos)
    pos = is_pos == 1
    assert neg_sum == pytest.approx(np.dot(weights[~pos], scores[~pos]))
    assert neg_total == pytest.approx(weights[~pos].sum())
    assert pos_sum == pytest.approx(np.dot(weights[pos], scores[pos]))
    assert pos_total == pytest.approx(weights[pos].sum())
    assert (low, high) == (scores.min(), scores.max())


@pytest.mark.parametrize("seed", range(4))
def test_bipartite_weights_are_the_marginals_of_the_all_pairs_distribution(seed):
    rng = np.random.default_rng(seed)
    n = 30
    is_pos = (rng.random(n) < 0.4).astype(np.uint8)
    is_pos[:2] = (0, 1)
    d1 = rng.exponential(size=n)
    d1[rng.random(n) < 0.2] = 0.0
    d1[:2] = 1.0
    d1 /= d1.sum()
    margin = rng.normal(scale=3.0, size=n)
    out = np.empty(n)
    log_potential = bipartite_weights(margin, is_pos, d1, out)

    # All (negative, positive) pairs with D_1(x0, x1) = v_1(x0) v_1(x1).
    neg, pos = np.flatnonzero(is_pos == 0), np.flatnonzero(is_pos == 1)
    lower, upper = np.repeat(neg, pos.size), np.tile(pos, neg.size)
    pair_d1 = d1[lower] / d1[neg].sum() * d1[upper] / d1[pos].sum()
    distribution, potential = naive_pair_distribution(margin, lower, upper, pair_d1)
    np.testing.assert_allclose(out, naive_row_weights(n, lower, upper, distribution), atol=1e-15)
    assert log_potential == pytest.approx(np.log(potential), abs=1e-12)
    assert out[neg].sum() == pytest.approx(0.5) and out[pos].sum() == pytest.approx(0.5)
    assert (out[d1 == 0] == 0).all()


def test_bipartite_weights_survive_huge_margins():
    margin = np.array([900.0, -900.0, 850.0, -870.0])
    is_pos = np.array([0, 1, 0, 1], dtype=np.uint8)
    out = np.empty(4)
    log_potential = bipartite_weights(margin, is_pos, np.full(4, 0.25), out)
    assert np.isfinite(out).all() and np.isfinite(log_potential)
    # v(x0) ~ e^{F(x0)}: the negative at 900 takes (almost) all of its class's half.
    assert out[0] == pytest.approx(0.5) and out[1] == pytest.approx(0.5)
    # log(1/2 (e^900 + e^850)) + log(1/2 (e^900 + e^870)), without overflowing.
    expected = 900 + np.log(0.5 * (1 + np.exp(-50))) + 900 + np.log(0.5 * (1 + np.exp(-30)))
    assert log_potential == pytest.approx(expected, rel=1e-14)


def _random_pairs(rng, n_rows, n_pairs):
    is_pos = np.zeros(n_rows, dtype=np.uint8)
    is_pos[n_rows // 2:] = 1
    lower = rng.integers(0, n_rows // 2, n_pairs)
    upper = rng.integers(n_rows // 2, n_rows, n_pairs)
    d1 = rng.exponential(size=n_pairs)
    return is_pos, lower.astype(np.int64), upper.astype(np.int64), d1 / d1.sum()


@pytest.mark.parametrize("seed", range(4))
def test_pair_weights_match_the_definition(seed):
    rng = np.random.default_rng(seed)
    is_pos, lower, upper, d1 = _random_pairs(rng, 24, 80)
    margin = rng.normal(scale=4.0, size=24)
    out = np.empty(24)
    log_potential = pair_weights(margin, is_pos, lower, upper, d1, out)
    distribution, potential = naive_pair_distribution(margin, lower, upper, d1)
    np.testing.assert_allclose(out, naive_row_weights(24, lower, upper, distribution), atol=1e-15)
    assert log_potential == pytest.approx(np.log(potential), abs=1e-12)


def test_pair_weights_fall_back_to_log_space_when_the_shifted_products_underflow():
    # Two groups whose margins lie 2000 apart: the largest lower margin and the smallest upper
    # margin belong to different groups, so exp(a - b) is far above every actual pair.
    is_pos = np.array([0, 1, 0, 1], dtype=np.uint8)
    margin = np.array([1000.0, 1001.0, -1000.0, -999.0])
    lower, upper = np.array([0, 2]), np.array([1, 3])
    d1 = np.array([0.5, 0.5])
    out = np.empty(4)
    log_potential = pair_weights(margin, is_pos, lower, upper, d1, out)
    np.testing.assert_allclose(out, 0.25)
    assert log_potential == pytest.approx(-1.0)
    exact = np.empty(4)
    assert _exact_pair_weights(margin, lower, upper, d1, exact) == pytest.approx(-1.0)
    np.testing.assert_allclose(exact, out)

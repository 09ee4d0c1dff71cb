"""sort_pool_ties (the MSD radix sort that carries weights and targets, pooling bucket by bucket)
against pool_ties along numpy's stable argsort, bit for bit: same points (a tied zero keeps the
sign of its first example of positive weight), same pooled weights, same means. Run also with
NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostkit_pav.kernels import sort_pool_ties
from pooling_reference import pool_ties


def sorted_pooling(scores, weights, targets):
    n = scores.shape[0]
    out = [np.empty(n) for _ in range(3)]
    m = sort_pool_ties(scores, weights, targets, np.empty(n, dtype=np.uint64),
                       np.empty(n, dtype=np.uint64), np.empty(n), np.empty(n), *out)
    return [a[:m] for a in out]


def pooling_along_numpy_sort(scores, weights, targets):
    n = scores.shape[0]
    out = [np.empty(n) for _ in range(3)]
    m = pool_ties(scores, weights, targets, np.argsort(scores, kind="stable"), *out)
    return [a[:m] for a in out]


def assert_same_bits(scores, weights, targets):
    got = sorted_pooling(scores, weights, targets)
    expected = pooling_along_numpy_sort(scores, weights, targets)
    for a, b in zip(got, expected):
        assert a.tobytes() == b.tobytes()


special = st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2e-308, -1e-310, 1e308, -1e308, 1.0,
                           1.0 + 2.0**-52, -1.0, 3.0])
score_values = st.one_of(special, st.floats(allow_nan=False, allow_infinity=False))
data = st.integers(1, 200).flatmap(lambda n: st.tuples(
    st.lists(score_values, min_size=n, max_size=n),
    st.lists(st.sampled_from([0.0, 0.1, 0.7, 1.3, 2.0 / 3.0]), min_size=n, max_size=n),
    st.lists(st.floats(-3.0, 3.0), min_size=n, max_size=n),
))


@settings(max_examples=300, deadline=None)
@given(data)
def test_sort_pool_ties_equals_pooling_along_numpy_stable_argsort(arrays):
    scores, weights, targets = (np.array(a, dtype=np.float64) for a in arrays)
    assert_same_bits(scores, weights, targets)


def skewed(kind, n, rng):
    if kind == "normal":
        return rng.normal(size=n)
    if kind == "exponential":
        return rng.exponential(size=n)
    if kind == "all equal":
        return np.full(n, -2.5)
    if kind == "sorted":
        return np.sort(rng.normal(size=n))
    if kind == "reversed":
        return np.sort(rng.normal(size=n))[::-1].copy()
    if kind == "one ulp apart":  # one bucket and one sub-bucket: the long-segment radix sort
        return (1.0 + np.arange(n) * 2.0**-52)[::-1].copy()
    if kind == "rounded":
        return np.round(rng.normal(size=n), 2)
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["normal", "exponential", "all equal", "sorted", "reversed",
                                  "one ulp apart", "rounded"])
@pytest.mark.parametrize("n", [0, 1, 33, 20_000])
def test_sort_pool_ties_on_skewed_scores(kind, n):
    rng = np.random.default_rng(n)
    scores = skewed(kind, n, rng)
    weights = rng.exponential(size=n)
    weights[rng.random(n) < 0.1] = 0.0
    assert_same_bits(scores, weights, rng.random(n))


def test_a_tied_zero_keeps_the_sign_of_its_first_weighted_example():
    scores = np.array([0.0, -0.0, 0.0, 1.0])
    weights = np.array([0.0, 1.0, 1.0, 1.0])
    points = sorted_pooling(scores, weights, np.array([0.0, 1.0, 0.0, 1.0]))[0]
    assert np.signbit(points[0]) and points.shape == (2,)

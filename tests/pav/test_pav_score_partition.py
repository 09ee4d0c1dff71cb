"""How the ``pav`` calibration cuts a new hypothesis' scores into quantile bins (Wilbur et al. 2005,
section 5) without a comparison sort: the bucket sort, the edges it gives, the bucketed binning, and
the kernel that does both in one call.

Each is compared with a naive reference: ``np.sort``, the engine's ``bin_features`` (the edges it
gives one column) and a per-example ``np.searchsorted``; the edges and sums bit for bit. Run
also with NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostkit.data import bin_features
from boostkit_pav.calibrations import score_thresholds
from boostkit_pav.kernels import _least_first, _rank_sort, bin_class_sums, partition_scores, sort_finite

# Values of every kind the scores of a round can hold: ties, both zeros, infinities, NaN, huge
# and tiny magnitudes, and a crowd within one bucket's width.
special = st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 5e-324,
                           1e-300, 3.0, 3.0 + 2**-51, 3.0 + 2**-50])
score_lists = st.lists(st.one_of(st.floats(-1e6, 1e6), special), min_size=0, max_size=400)


def reference_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """The edges the engine's feature binning gives a column holding ``values``."""
    return bin_features(values[:, None], bins).thresholds[0]


def bucket_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """The edges the calibration gives scores it keeps whole (all of positive initial weight)."""
    return score_thresholds(values, np.ones(values.shape[0]), bins, np.random.default_rng(0))


def naive_bin_class_sums(scores, thresholds, weights, is_pos):
    cells = np.where(np.isnan(scores), 0, np.searchsorted(thresholds, scores, side="left"))
    sums = np.zeros((thresholds.shape[0] + 1, 2))
    for cell, w, c in zip(cells, weights, is_pos):
        sums[cell, c] += w
    return cells, sums


@settings(max_examples=300, deadline=None)
@given(score_lists)
def test_sort_finite_sorts_the_values_that_are_not_nan(values):
    values = np.array(values, dtype=np.float64)
    out = np.empty(values.shape[0])
    m = sort_finite(values, out)
    expected = np.sort(values[~np.isnan(values)]) + 0.0  # one zero, +0.0
    assert m == expected.shape[0]
    assert out[:m].tobytes() == expected.tobytes()


@pytest.mark.parametrize("distribution", ["normal", "cubed", "lognormal", "one outlier"])
def test_sort_finite_sorts_skewed_scores(distribution):
    # The buckets are equal-width: a crowded one falls back to a sort of its own.
    rng = np.random.default_rng(3)
    values = {"normal": rng.normal(size=20_000), "cubed": rng.normal(size=20_000) ** 3,
              "lognormal": np.exp(8 * rng.normal(size=20_000)),
              "one outlier": np.append(rng.normal(size=19_999), 1e12)}[distribution]
    out = np.empty(values.shape[0])
    assert sort_finite(values, out) == values.shape[0]
    assert np.array_equal(out, np.sort(values))


@settings(max_examples=300, deadline=None)
@given(score_lists, st.sampled_from([2, 3, 5, 17, 255]))
def test_quantile_edges_are_the_engine_binning_edges_bit_for_bit(values, bins):
    values = np.array(values, dtype=np.float64)
    assert bucket_edges(values, bins).tobytes() == reference_edges(values, bins).tobytes()


@pytest.mark.parametrize("n", [256, 1000, 20_000])
@pytest.mark.parametrize("distinct", [7, 255, 256, 300, None])
def test_quantile_edges_of_many_ties_are_the_engine_binning_edges(n, distinct):
    rng = np.random.default_rng(n)
    if distinct is None:
        values = rng.normal(size=n) ** 3
    else:
        values = rng.choice(rng.normal(size=distinct), size=n) * rng.choice([1.0, -1.0])
    for bins in (2, 64, 255):
        assert bucket_edges(values, bins).tobytes() == reference_edges(values, bins).tobytes()


@settings(max_examples=200, deadline=None)
@given(score_lists, score_lists)
def test_bin_class_sums_equals_the_naive_reference_on_any_edges(edges, scores):
    thresholds = np.unique(np.array([t for t in edges if t == t], dtype=np.float64))
    scores = np.array(scores, dtype=np.float64)
    rng = np.random.default_rng(len(scores))
    weights = rng.exponential(size=scores.shape[0])
    is_pos = (rng.random(scores.shape[0]) < 0.5).astype(np.uint8)
    cells = np.empty(scores.shape[0], dtype=np.uint8 if thresholds.shape[0] < 255 else np.int64)
    sums = np.zeros((thresholds.shape[0] + 1, 2))
    bin_class_sums(scores, thresholds, weights, is_pos, cells, sums)
    expected_cells, expected_sums = naive_bin_class_sums(scores, thresholds, weights, is_pos)
    assert (cells == expected_cells).all()
    assert sums.tobytes() == expected_sums.tobytes()


def assert_bins_as_naive(scores, thresholds, rng):
    """bin_class_sums of ``scores`` (random weights and classes) is naive_bin_class_sums'."""
    weights = rng.exponential(size=scores.shape[0])
    is_pos = (rng.random(scores.shape[0]) < 0.5).astype(np.uint8)
    cells = np.empty(scores.shape[0], dtype=np.uint8)
    sums = np.zeros((thresholds.shape[0] + 1, 2))
    bin_class_sums(scores, thresholds, weights, is_pos, cells, sums)
    expected_cells, expected_sums = naive_bin_class_sums(scores, thresholds, weights, is_pos)
    assert (cells == expected_cells).all()
    assert sums.tobytes() == expected_sums.tobytes()


def test_bin_class_sums_with_crowded_edges_searches_inside_the_bucket():
    # 250 edges within 1e-9 of each other and 4 far apart: almost every edge in one bucket.
    rng = np.random.default_rng(5)
    thresholds = np.sort(np.concatenate((1.0 + 1e-9 * rng.random(250), [-1e6, -5.0, 7.0, 1e6])))
    scores = np.concatenate((1.0 + 1e-9 * rng.random(3000), rng.normal(size=3000) * 1e3))
    assert_bins_as_naive(scores, thresholds, rng)


@pytest.mark.parametrize("n, zero_weights", [(5_000, False), (5_000, True), (30_000, False)])
def test_score_thresholds_are_the_engine_edges_of_the_threshold_sample(n, zero_weights):
    # The rows of positive initial weight; above 20 000 of them, a seeded sample of 20 000.
    rng = np.random.default_rng(n)
    scores = rng.standard_t(3, size=n)
    sample_weight = np.ones(n)
    if zero_weights:
        sample_weight[::3] = 0.0
    got = score_thresholds(scores, sample_weight, 255, np.random.default_rng(7))
    rows = np.flatnonzero(sample_weight > 0)
    if rows.shape[0] > 20_000:
        rows = np.random.default_rng(7).choice(rows, 20_000, replace=False)
    assert got.tobytes() == reference_edges(scores[rows], 255).tobytes()


@pytest.mark.parametrize("per_cluster", [2, 5, 8, 9, 40])
def test_bin_class_sums_with_edges_sharing_buckets(per_cluster):
    # Clusters of edges closer than a bucket's width: a score is compared with each edge of its
    # bucket (up to 8 of them), or searched among them (more).
    rng = np.random.default_rng(per_cluster)
    centres = np.sort(rng.normal(size=240 // per_cluster))
    thresholds = np.unique((centres[:, None] + 1e-7 * np.arange(per_cluster)).ravel())
    scores = np.concatenate((rng.choice(thresholds, 500), rng.choice(thresholds, 500) + 5e-8,
                             rng.normal(size=4000), [np.nan, np.inf, -np.inf]))
    assert_bins_as_naive(scores, thresholds, rng)


@settings(max_examples=200, deadline=None)
@given(score_lists, st.sampled_from([2, 3, 17, 255]), st.booleans())
def test_partition_scores_is_the_engine_edges_then_the_naive_bin_sums(values, bins, subsample):
    scores = np.array(values, dtype=np.float64)
    sample = scores[::2] if subsample else scores
    rng = np.random.default_rng(len(values))
    weights = rng.exponential(size=scores.shape[0])
    is_pos = (rng.random(scores.shape[0]) < 0.5).astype(np.uint8)
    thresholds = np.empty(bins - 1)
    cells = np.empty(scores.shape[0], dtype=np.uint8)
    sums = np.zeros((bins, 2))
    n = partition_scores(sample, bins, scores, weights, is_pos, thresholds, cells, sums)
    edges = reference_edges(sample, bins)
    assert thresholds[:n].tobytes() == edges.tobytes()
    expected_cells, expected_sums = naive_bin_class_sums(scores, edges, weights, is_pos)
    assert (cells == expected_cells).all()
    assert sums[: n + 1].tobytes() == expected_sums.tobytes()
    assert not sums[n + 1:].any()


# What the quantile kernel sorts: a bucket's values as dealt (no NaN, -0.0 made +0.0).
sortable = st.lists(st.one_of(st.floats(-1e6, 1e6).map(lambda x: x + 0.0),
                              st.sampled_from([0.0, 1.0, -1.0, np.inf, -np.inf])),
                    min_size=1, max_size=32)


@settings(max_examples=300, deadline=None)
@given(sortable, st.integers(0, 3))
def test_rank_sort_and_least_first_against_np_sort(values, offset):
    values = np.array(values, dtype=np.float64)
    padded = np.concatenate((np.full(offset, 7.0), values, [7.0]))
    ranked = padded.copy()
    _rank_sort(ranked, offset, offset + values.shape[0], np.empty(32))
    assert ranked[offset: offset + values.shape[0]].tobytes() == np.sort(values).tobytes()
    assert (ranked[:offset] == 7.0).all() and ranked[-1] == 7.0  # nothing outside touched
    least = padded.copy()
    _least_first(least, offset, offset + values.shape[0])
    assert least[offset] == values.min()
    assert np.sort(least[offset: offset + values.shape[0]]).tobytes() == np.sort(values).tobytes()

"""Feature binning (boostkit.data.bin_features) and the numba kernels (boostkit.kernels), each
against a naive numpy reference (DESIGN.md, "Data and speed"). Kernels are called directly."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import boostkit
from boostkit.data import MAX_BINS, bin_features, encode_bins
from boostkit.errors import DataError
from boostkit.kernels import binning
from boostkit.kernels.binning import (CODE_BLOCK, CODE_TILE, SEARCH_WIDTH, code_bins,
                                      code_bins_parallel, column_thresholds, count_below,
                                      quantile_bins, quantile_bins_parallel, sort_column,
                                      sort_float32_column)
from boostkit.kernels.boosting import (
    interleaved_sum,
    add_contribution,
    exponential_weights,
    exponential_weights_parallel,
    sign_error,
)
from boostkit.kernels.histogram import cell_class_sums, class_histogram, class_histogram_parallel

# Each kernel with a variant in blocks of examples is checked serially (None) and in blocks on
# 1 to 3 threads (these small inputs are one block; tests/engine/test_block_kernels.py has many).
N_CHUNKS = [None, 1, 2, 3]

# -- binning ------------------------------------------------------------------------------------


def test_few_distinct_values_get_one_bin_each_with_midpoint_thresholds():
    column = np.array([3.0, -1.0, 3.0, 0.5, 10.0, -1.0, 0.5])
    binned = bin_features(column[:, None], max_bins=4)
    np.testing.assert_array_equal(binned.thresholds[0], [-0.25, 1.75, 6.5])
    np.testing.assert_array_equal(binned.codes[0], [2, 0, 2, 1, 3, 0, 1])
    assert binned.n_bins.tolist() == [4]
    np.testing.assert_array_equal(binned.bin_counts[0], [2, 2, 2, 1])


def test_constant_feature_has_one_bin():
    binned = bin_features(np.full((5, 1), 2.0))
    assert binned.thresholds[0].shape == (0,)
    assert binned.n_bins.tolist() == [1]
    np.testing.assert_array_equal(binned.codes[0], np.zeros(5))


def test_adjacent_floats_keep_a_threshold_that_separates_them():
    lo = 1.0
    hi = np.nextafter(lo, 2.0)  # their midpoint rounds to hi
    binned = bin_features(np.array([[lo], [hi]]))
    np.testing.assert_array_equal(binned.thresholds[0], [lo])
    np.testing.assert_array_equal(binned.codes[0], [0, 1])


@pytest.mark.parametrize("max_bins", [16, 64, 255])
def test_continuous_feature_gets_equal_count_quantile_bins(max_bins):
    n = 20_000
    # heavy tails: equal-width bins would leave most of them empty
    column = np.random.default_rng(max_bins).standard_cauchy(n)
    binned = bin_features(column[:, None], max_bins=max_bins)
    assert binned.codes.dtype == np.uint8
    assert binned.n_bins[0] == max_bins
    counts = binned.bin_counts[0, :max_bins]
    np.testing.assert_allclose(counts, n / max_bins, rtol=0.01, atol=1)


def test_many_ties_give_at_most_max_bins_bins():
    column = np.random.default_rng(3).integers(0, 1000, size=5000).astype(float) ** 2
    binned = bin_features(column[:, None], max_bins=32)
    assert 2 <= binned.n_bins[0] <= 32
    assert np.all(np.diff(binned.thresholds[0]) > 0)


@settings(max_examples=60, deadline=None)
@given(
    X=hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 60), st.integers(1, 3)),
        elements=st.floats(-1e6, 1e6, allow_nan=False, width=32)
        | st.sampled_from([0.0, 1.0, -1.0]),
    ),
    max_bins=st.integers(2, 12),
)
def test_codes_count_thresholds_strictly_below_each_value(X, max_bins):
    binned = bin_features(X, max_bins=max_bins)
    for f, thresholds in enumerate(binned.thresholds):
        assert thresholds.shape[0] <= max_bins - 1
        assert np.all(np.diff(thresholds) > 0)
        expected = np.searchsorted(thresholds, X[:, f], side="left")
        np.testing.assert_array_equal(binned.codes[f], expected)
        distinct = np.unique(X[:, f])
        if distinct.shape[0] <= max_bins:  # every distinct value alone in its bin
            assert np.unique(binned.codes[f]).shape[0] == distinct.shape[0]


def reference_thresholds(values, max_bins):
    """The binning rule written with numpy: distinct values and counts by np.unique, midpoints
    of neighbours when there are at most max_bins of them, else cuts after the first value whose
    cumulative count reaches total x q / max_bins (searchsorted), each once, none after the last
    value."""
    distinct, counts = np.unique(values, return_counts=True)
    if distinct.shape[0] <= 1:
        return np.empty(0)
    if distinct.shape[0] <= max_bins:
        below = np.arange(distinct.shape[0] - 1)
    else:
        cum = np.cumsum(counts)
        targets = cum[-1] * np.arange(1, max_bins) / max_bins
        below = np.unique(np.searchsorted(cum, targets, side="left"))
        below = below[below < distinct.shape[0] - 1]
    lo, hi = distinct[below], distinct[below + 1]
    mid = lo / 2.0 + hi / 2.0
    return np.where(mid >= hi, lo, mid)


def reference_binning(X, max_bins, sample_weight, sampled_rows, n_categories):
    """``(thresholds, codes, bin_counts)`` of bin_features, by numpy: thresholds of the sampled
    rows' values (NaN left out), codes by searchsorted, counts by bincount over positive
    weight."""
    n, d = X.shape
    missing = np.isnan(X).any()
    n_hist = max_bins + missing
    sample = X[sampled_rows]
    thresholds = [
        np.arange(n_categories[f] - 1) + 0.5 if n_categories[f]
        else reference_thresholds(sample[:, f][~np.isnan(sample[:, f])], max_bins)
        for f in range(d)
    ]
    codes = np.array([np.where(np.isnan(X[:, f]), n_hist - 1,
                               np.searchsorted(thresholds[f], X[:, f], side="left"))
                      for f in range(d)], dtype=np.uint8).reshape(d, n)
    counted = codes[:, sample_weight > 0]
    counts = np.array([np.bincount(c, minlength=n_hist) for c in counted]).reshape(d, n_hist)
    return thresholds, codes, counts


# Values with ties, both zeros, subnormals, neighbours whose midpoint rounds up, and float32s.
_awkward = st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1e-310, 1.0, np.nextafter(1.0, 2.0),
                            -3.5, 1e300, -1e300, np.nan])


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # 1e300
@settings(max_examples=150, deadline=None)
@given(
    X=hnp.arrays(np.float64, st.tuples(st.integers(1, 400), st.integers(1, 3)),
                 elements=st.floats(-1e6, 1e6, allow_nan=False, width=32) | _awkward),
    max_bins=st.sampled_from([2, 3, 7, 16, 255]),
    weighted=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_binning_equals_the_numpy_reference_bit_for_bit(X, max_bins, weighted, seed):
    rng = np.random.default_rng(seed)
    n, d = X.shape
    sample_weight = rng.exponential(size=n) * (rng.random(n) < 0.7) if weighted else np.ones(n)
    if not sample_weight.any():
        sample_weight[0] = 1.0
    n_categories = np.zeros(d, dtype=np.int64)
    if d > 1 and seed % 3 == 0:  # the first column holds category indices
        n_categories[0] = k = min(max_bins, 1 + seed % 5)
        X[:, 0] = np.where(np.isnan(X[:, 0]), np.nan, rng.integers(0, k, size=n))
    binned = bin_features(X, max_bins, sample_weight if weighted else None, None, n_categories)
    thresholds, codes, counts = reference_binning(X, max_bins, sample_weight,
                                                  np.flatnonzero(sample_weight > 0), n_categories)
    for ours, expected in zip(binned.thresholds, thresholds):
        assert ours.tobytes() == expected.tobytes()
    np.testing.assert_array_equal(binned.codes, codes)
    np.testing.assert_array_equal(binned.bin_counts, counts)
    np.testing.assert_array_equal(binned.n_bins, [t.shape[0] + 1 for t in thresholds])


@settings(max_examples=60, deadline=None)
@given(values=hnp.arrays(np.float64, st.integers(0, 600),
                         elements=st.floats(-1e6, 1e6, allow_nan=False) | _awkward),
       max_bins=st.sampled_from([2, 5, 255]))
def test_column_thresholds_equal_the_numpy_reference(values, max_bins):
    out = np.full(max_bins - 1, np.nan)
    n = column_thresholds(values, max_bins, out)
    expected = reference_thresholds(values[~np.isnan(values)], max_bins)
    assert out[:n].tobytes() == expected.tobytes()


@pytest.mark.parametrize("weighted", [False, True])
def test_binning_a_row_sample_equals_the_reference(monkeypatch, weighted):
    """Above BIN_SAMPLE rows of positive weight, a seeded sample of them places the thresholds
    (the same rows as before: rng.choice of their indices), and every row is coded."""
    monkeypatch.setattr(boostkit.data, "BIN_SAMPLE", 300)
    rng = np.random.default_rng(5)
    X = rng.standard_cauchy(size=(2000, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    sample_weight = rng.exponential(size=2000) * (rng.random(2000) < 0.8) if weighted else None
    binned = bin_features(X, 64, sample_weight, np.random.default_rng(11))
    positive = np.flatnonzero(sample_weight > 0) if weighted else np.arange(2000)
    rows = np.random.default_rng(11).choice(positive, 300, replace=False)
    thresholds, codes, counts = reference_binning(
        X, 64, sample_weight if weighted else np.ones(2000), rows, np.zeros(3, dtype=np.int64))
    for ours, expected in zip(binned.thresholds, thresholds):
        assert ours.tobytes() == expected.tobytes()
    np.testing.assert_array_equal(binned.codes, codes)
    np.testing.assert_array_equal(binned.bin_counts, counts)


_TINY32 = float(np.nextafter(np.float32(0.0), np.float32(1.0)))  # the least float32 subnormal


def reference_sort(column):
    """The rows of the values that are not NaN, in a stable increasing order."""
    present = np.flatnonzero(~np.isnan(column))
    return present[np.argsort(column[present], kind="stable")]


@settings(max_examples=60, deadline=None)
@given(column=hnp.arrays(np.float64, st.integers(0, 3000),
                         elements=st.floats(allow_nan=True, allow_infinity=True) | _awkward))
def test_sort_column_is_a_stable_sort_leaving_out_nan(column):
    n = column.shape[0]
    scratch = [np.empty(n), np.empty(n, dtype=np.intp), np.empty(n), np.empty(n, dtype=np.intp)]
    values, rows = sort_column(column[:, None], 0, *scratch)
    expected_rows = reference_sort(column)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_array_equal(values, column[expected_rows])
    assert not np.signbit(values[values == 0]).any()  # -0.0 comes back as +0.0


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # 1e300
@settings(max_examples=60, deadline=None)
@given(column=hnp.arrays(np.float64, st.integers(0, 3000),
                         elements=st.floats(allow_nan=True, allow_infinity=True, width=32)
                         | st.sampled_from([0.0, -0.0, _TINY32, -_TINY32, np.nan])),
       spoiler=st.sampled_from([None, 1e300, 1e-320, 0.1, np.nextafter(1.0, 2.0)]))
def test_sort_float32_column_sorts_float32_columns_and_declines_the_others(column, spoiler):
    n = column.shape[0]
    if spoiler is not None and n:  # one value that is not a float32
        column[n // 2] = spoiler
    scratch = [np.empty(n, np.float32), np.empty(n, np.int32), np.empty(n, np.float32),
               np.empty(n, np.int32)]
    values, rows, is_float32 = sort_float32_column(column[:, None], 0, *scratch)
    if spoiler is not None and n:
        assert not is_float32 and values.shape == rows.shape == (0,)
        return
    assert is_float32 and values.dtype == np.float32 and rows.dtype == np.int32
    expected_rows = reference_sort(column)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_array_equal(values.astype(np.float64), column[expected_rows])
    assert not np.signbit(values[values == 0]).any()


def test_parallel_binning_equals_serial_binning():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(5000, 6)).astype(np.float32).astype(np.float64)
    X[:, 5] = rng.standard_cauchy(5000)  # float64 values: the 64-bit sort
    X[rng.random(X.shape) < 0.02] = np.nan
    n_categories = np.array([0, 0, 4, 0, 0, 0])
    X[:, 2] = np.where(np.isnan(X[:, 2]), np.nan, rng.integers(0, 4, size=5000))
    weighted = rng.random(5000) < 0.5
    answers = []
    for kernel in (quantile_bins, quantile_bins_parallel):
        out = (np.empty((6, 254)), np.empty(6, dtype=np.int64), np.empty((6, 5000), np.uint8),
               np.empty((6, 256), dtype=np.int64))
        kernel(X, weighted, 255, n_categories, 255, *out)
        answers.append(out)
    (table, n_thresholds, codes, counts), parallel = answers
    assert n_thresholds.tolist() == parallel[1].tolist()
    for f in range(6):
        assert table[f, :n_thresholds[f]].tobytes() == parallel[0][f, :n_thresholds[f]].tobytes()
    np.testing.assert_array_equal(codes, parallel[2])
    np.testing.assert_array_equal(counts, parallel[3])



@pytest.mark.parametrize("n_rows", [300, 40_000])
def test_binning_gives_the_same_bins_whichever_sort_takes_a_column(n_rows):
    """Float32 columns among others sort on 32-bit keys only when they hold enough values; a
    column whose first rows are float32 values but a later one is not is declined by the 32-bit
    sort and sorted again on 64-bit keys. Every column gets the bins of the 64-bit sort."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 300, size=(n_rows, 4)).astype(np.float64)  # float32 values
    X[:, 1] = rng.normal(size=n_rows)  # float64 values
    X[n_rows - 5, 2] = 0.1  # declined late
    X[rng.random(X.shape) < 0.03] = np.nan
    weighted = rng.random(n_rows) < 0.8
    n_categories = np.zeros(4, dtype=np.int64)

    def binned(kernel, *columns):
        out = (np.zeros((4, 254)), np.zeros(4, dtype=np.int64), np.zeros((4, n_rows), np.uint8),
               np.zeros((4, 256), dtype=np.int64))
        kernel(X, *columns, weighted, 255, n_categories, 255, *out)
        return out

    assert (4 * n_rows >= binning.FLOAT32_SORT_VALUES) == (n_rows == 40_000)
    expected = binned(binning.binning_kernel(binning._quantile_bins64), np.arange(4))
    for got in (binned(quantile_bins), binned(quantile_bins_parallel)):
        for expected_part, got_part in zip(expected, got):
            np.testing.assert_array_equal(got_part, expected_part)

def search_table(thresholds):
    """code_bins' table: each feature's thresholds padded with +inf to SEARCH_WIDTH values."""
    table = np.full((len(thresholds), SEARCH_WIDTH), np.inf)
    for f, t in enumerate(thresholds):
        table[f, :t.shape[0]] = t
    return table


def run_code_bins(kernel, X, thresholds, weighted, missing_code):
    """(codes, bin_counts, n_missing) of a code_bins kernel, outputs filled with junk first."""
    n, d = X.shape
    codes = np.full((d, n), 77, dtype=np.uint8)
    bin_counts = np.full((d, missing_code + 1), -5, dtype=np.int64)
    n_missing = np.full(d, -5, dtype=np.int64)
    kernel(X, search_table(thresholds), weighted, missing_code, codes, bin_counts, n_missing)
    return codes, bin_counts, n_missing


def naive_code_bins(X, thresholds, weighted, missing_code):
    """Reference: count_below (the plain binary search) value by value, then counts."""
    n, d = X.shape
    codes = np.empty((d, n), dtype=np.uint8)
    for f, t in enumerate(thresholds):
        for i in range(n):
            x = X[i, f]
            codes[f, i] = missing_code if np.isnan(x) else count_below(t, 0, t.shape[0], x)
    bin_counts = np.array([np.bincount(c[weighted], minlength=missing_code + 1) for c in codes],
                          dtype=np.int64).reshape(d, missing_code + 1)
    return codes, bin_counts, np.isnan(X).sum(axis=0)


# Values at the edges of the search: both zeros, infinities, the extremes of float64, subnormals
# and NaN; thresholds are drawn from the same values, so values fall on thresholds too.
_edge_values = st.sampled_from([0.0, -0.0, np.inf, -np.inf, 1.7976931348623157e308,
                                -1.7976931348623157e308, 5e-324, -5e-324, 1.0, -1.0, 2.5])


@settings(max_examples=200 if not numba.config.DISABLE_JIT else 40, deadline=None)
@given(
    X=hnp.arrays(np.float64, st.tuples(st.integers(1, 3 * CODE_TILE + 5), st.integers(1, 5)),
                 elements=st.floats(-1e3, 1e3) | _edge_values | st.just(np.nan)),
    n_thresholds=st.lists(st.sampled_from([0, 1, 2, 3, 127, 128, 200, 253, 254]), min_size=5,
                          max_size=5),
    seed=st.integers(0, 2**16),
    parallel=st.booleans(),
)
def test_code_bins_equal_the_binary_search_value_by_value(X, n_thresholds, seed, parallel):
    """code_bins (tiles of rows, an 8-step search without branches over +inf-padded thresholds,
    the bins counted in the same pass) gives count_below's codes bit for bit, with NaN coded
    missing_code, values equal to a threshold in the lower bin, 0 and 254 thresholds."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    pool = np.concatenate([X[~np.isnan(X)].ravel(), rng.normal(scale=300.0, size=600),
                           [0.0, np.inf, -np.inf, 1.7976931348623157e308, 5e-324]])
    thresholds = []
    for f in range(d):
        distinct = np.unique(np.where(pool == 0.0, 0.0, pool))  # -0.0 and 0.0: one threshold
        k = min(n_thresholds[f], distinct.shape[0])
        thresholds.append(np.sort(rng.choice(distinct, k, replace=False)))
    weighted = rng.random(n) < 0.7
    missing_code = int(rng.integers(max(t.shape[0] for t in thresholds) + 1, 256))
    kernel = code_bins_parallel if parallel else code_bins
    ours = run_code_bins(kernel, X, thresholds, weighted, missing_code)
    expected = naive_code_bins(X, thresholds, weighted, missing_code)
    for got, want in zip(ours, expected):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kernel", [code_bins, code_bins_parallel])
@pytest.mark.parametrize("n", [1, CODE_TILE - 1, CODE_TILE, CODE_TILE + 1, 3 * CODE_TILE + 17])
@pytest.mark.parametrize("d", [1, 7])
def test_code_bins_at_the_edges_of_the_row_tiles(kernel, n, d):
    """Rows in a last, partial tile, one feature, and a number of features that is no multiple
    of anything: every value coded, none twice, counts of the weighted rows only."""
    rng = np.random.default_rng(n * 10 + d)
    X = rng.standard_cauchy(size=(n, d))
    X[rng.random(X.shape) < 0.05] = np.nan
    thresholds = [np.unique(rng.standard_cauchy(int(rng.integers(0, SEARCH_WIDTH))))
                  for _ in range(d)]
    weighted = rng.random(n) < 0.5
    ours = run_code_bins(kernel, X, thresholds, weighted, 255)
    expected = naive_code_bins(X, thresholds, weighted, 255)
    for got, want in zip(ours, expected):
        np.testing.assert_array_equal(got, want)


def test_code_bins_parallel_counts_every_block():
    """More rows than one block of code_bins_parallel (the last one partial): the blocks' bin
    counts and NaN counts add up to code_bins' ones, and the codes are the same."""
    n = CODE_BLOCK + CODE_TILE + 3
    rng = np.random.default_rng(12)
    X = rng.normal(size=(n, 2))
    X[rng.random(X.shape) < 0.01] = np.nan
    thresholds = [np.sort(rng.normal(size=254)), np.array([-1.0, 0.0, 1.0])]
    weighted = rng.random(n) < 0.8
    serial = run_code_bins(code_bins, X, thresholds, weighted, 255)
    parallel = run_code_bins(code_bins_parallel, X, thresholds, weighted, 255)
    for a, b in zip(serial, parallel):
        np.testing.assert_array_equal(a, b)
    searched = [np.where(np.isnan(X[:, f]), 255, np.searchsorted(t, X[:, f], side="left"))
                for f, t in enumerate(thresholds)]
    np.testing.assert_array_equal(serial[0], np.array(searched, dtype=np.uint8))
    np.testing.assert_array_equal(serial[2], np.isnan(X).sum(axis=0))


def test_a_missing_value_in_a_row_of_zero_weight_still_gives_the_missing_bin(monkeypatch):
    """Above BIN_SAMPLE rows the NaNs are found while coding, over every row: a NaN where the
    weight is 0 (never sampled, never counted) still makes the missing-value bin."""
    monkeypatch.setattr(boostkit.data, "BIN_SAMPLE", 300)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1000, 2))
    sample_weight = np.ones(1000)
    sample_weight[7] = 0.0
    X[7, 1] = np.nan
    binned = bin_features(X, 32, sample_weight, np.random.default_rng(3))
    assert binned.missing_bin == 32
    assert binned.bin_counts.shape == (2, 33)
    assert binned.codes[1, 7] == 32 and binned.bin_counts[1, 32] == 0
    X[7, 1] = 0.5  # no NaN: no missing-value bin
    binned = bin_features(X, 32, sample_weight, np.random.default_rng(3))
    assert binned.missing_bin is None and binned.bin_counts.shape == (2, 32)
    assert binned.bin_counts.sum(axis=1).tolist() == [999, 999]


def test_encode_bins_refuses_more_thresholds_than_uint8_codes_hold():
    thresholds = (np.arange(3.0), np.arange(255.0))
    with pytest.raises(DataError, match=r"feature 1 must number at most 254.*got 255"):
        encode_bins(np.zeros((4, 2)), thresholds, None, 255)


@pytest.mark.parametrize("max_bins", [0, 1, MAX_BINS + 1, 2.5, "16", None])
def test_max_bins_out_of_range_is_refused(max_bins):
    with pytest.raises(DataError, match=r"max_bins must be an integer in \[2, 255\]"):
        bin_features(np.zeros((3, 1)), max_bins=max_bins)


def test_booster_refuses_max_bins_out_of_range():
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(DataError, match="max_bins"):
        boostkit.Booster("adaboost", max_bins=1).fit(X, X[:, 0] > 0)


# -- kernels ------------------------------------------------------------------------------------


def random_binned(n=3000, d=5, n_bins=17, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_bins, size=(d, n)).astype(np.uint8)
    weights = rng.exponential(size=n)
    weights[rng.random(n) < 0.1] = 0.0
    is_pos = (rng.random(n) < 0.4).astype(np.uint8)
    return codes, weights, is_pos


def reference_histogram(codes, weights, is_pos, n_bins):
    out = np.zeros((codes.shape[0], n_bins, 2))
    for f in range(codes.shape[0]):
        np.add.at(out[f], (codes[f], is_pos), weights)
    return out


@pytest.mark.parametrize("n_chunks", N_CHUNKS)
def test_class_histogram_matches_reference(n_chunks):
    codes, weights, is_pos = random_binned()
    out = np.full((codes.shape[0], 20, 2), np.nan)  # stale contents must be overwritten
    if n_chunks is None:
        class_histogram(codes, weights, is_pos, out)
    else:
        class_histogram_parallel(codes, weights, is_pos, out, n_chunks)
    expected = reference_histogram(codes, weights, is_pos, 20)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=0)


def test_cell_class_sums_matches_reference():
    rng = np.random.default_rng(1)
    n_cells = 6
    cells = rng.integers(0, n_cells - 1, size=500)  # the last cell stays empty
    weights = rng.exponential(size=500)
    weights[:50] = 0.0
    is_pos = (rng.random(500) < 0.5).astype(np.uint8)
    wneg, wpos = cell_class_sums(cells, weights, is_pos, n_cells)
    pos = is_pos == 1
    expected_wpos = np.bincount(cells[pos], weights[pos], minlength=n_cells)
    expected_wneg = np.bincount(cells[~pos], weights[~pos], minlength=n_cells)
    np.testing.assert_allclose(wpos, expected_wpos, rtol=1e-12)
    np.testing.assert_allclose(wneg, expected_wneg, rtol=1e-12)
    assert wneg[-1] == wpos[-1] == 0.0


def test_add_contribution_matches_reference():
    rng = np.random.default_rng(2)
    n = 400
    margin = rng.normal(size=n)
    contribution = rng.choice([-0.7, 0.0, 0.3, 1.2], size=n)  # zeros are abstentions
    margin[:20] = -contribution[:20]  # F_t = 0 exactly: counts as a training error
    y = rng.choice([-1.0, 1.0], size=n)
    d1 = rng.exponential(size=n)
    d1[-30:] = 0.0
    d1 /= d1.sum()
    weights = rng.dirichlet(np.ones(n))
    margin[-1] = -100.0 * y[-1] - contribution[-1]  # the least margin, but of D_1 = 0
    expected_margin = margin + contribution
    training_error, weighted_error, least_margin, finite = add_contribution(
        margin, contribution, y, d1, weights)
    np.testing.assert_array_equal(margin, expected_margin)  # updated in place
    assert least_margin == (y * expected_margin)[d1 > 0].min()  # examples of D_1 = 0 left out
    assert finite
    yc = y * contribution
    assert training_error == pytest.approx(d1[y * expected_margin <= 0].sum(), rel=1e-12)
    expected_weighted_error = weights[yc < 0].sum() + 0.5 * weights[yc == 0].sum()
    assert weighted_error == pytest.approx(expected_weighted_error, rel=1e-12)


def reference_exponential_weights(margin, y, d1):
    """D(i) proportional to D_1(i) exp(-y_i F(x_i)), in log space.

    Returns ``(D, log sum_i D_1(i) exp(-y_i F(x_i)))``.
    """
    positive = d1 > 0
    log_terms = np.full(margin.shape, -np.inf)
    log_terms[positive] = np.log(d1[positive]) - y[positive] * margin[positive]
    top = log_terms.max()
    scaled = np.exp(log_terms - top)
    return scaled / scaled.sum(), top + np.log(scaled.sum())


@pytest.mark.parametrize("n_chunks", N_CHUNKS)
@pytest.mark.parametrize("scale", [0.5, 30.0, 1e4])
def test_exponential_weights_match_reference(scale, n_chunks):
    rng = np.random.default_rng(3)
    n = 300
    margin = scale * rng.normal(size=n)
    y = rng.choice([-1.0, 1.0], size=n)
    d1 = rng.exponential(size=n)
    d1[::7] = 0.0  # zero initial weight stays zero, whatever the margin
    d1 /= d1.sum()
    out = np.full(n, np.nan)
    if n_chunks is None:
        log_potential = exponential_weights(margin, y, d1, out)
    else:
        log_potential = exponential_weights_parallel(margin, y, d1, out, n_chunks)
    expected, expected_log = reference_exponential_weights(margin, y, d1)
    assert np.all(np.isfinite(out)) and np.isfinite(log_potential)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-300)
    assert out[::7].max() == 0.0
    assert out.sum() == pytest.approx(1.0)
    assert log_potential == pytest.approx(expected_log, rel=1e-12)


def test_exponential_weights_with_margins_of_ten_thousand():
    margin = np.array([1e4, -1e4, 1e4, -1e4, 0.0])
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0])
    d1 = np.full(5, 0.2)
    out = np.empty(5)
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is fine
        log_potential = exponential_weights(margin, y, d1, out)
    # the two examples with y F = -1e4 share all the weight; log potential = 1e4 + ln(2 * 0.2)
    np.testing.assert_array_equal(out, [0.0, 0.5, 0.5, 0.0, 0.0])
    assert log_potential == pytest.approx(1e4 + np.log(0.4), rel=1e-15)


def test_exponential_weights_equal_the_normalised_multiplicative_update():
    """D_{t+1} = D_t exp(-y c_t) / Z_t (Wilbur et al. 2005, eq. 6) is what the margin form
    computes."""
    rng = np.random.default_rng(4)
    n = 50
    y = rng.choice([-1.0, 1.0], size=n)
    d1 = np.full(n, 1.0 / n)
    margin = np.zeros(n)
    expected = d1.copy()
    out = np.empty(n)
    for _ in range(5):
        contribution = rng.normal(size=n)
        margin += contribution
        expected = expected * np.exp(-y * contribution)
        expected /= expected.sum()
        exponential_weights(margin, y, d1, out)
        np.testing.assert_allclose(out, expected, rtol=1e-10)


def test_sign_error_matches_reference_and_counts_non_binary_scores():
    rng = np.random.default_rng(5)
    n = 300
    scores = rng.choice([-1.0, 1.0], size=n)
    y = rng.choice([-1.0, 1.0], size=n)
    weights = rng.dirichlet(np.ones(n))
    eps, n_not_pm1 = sign_error(scores, y, weights)
    assert eps == pytest.approx(weights[scores != y].sum(), rel=1e-12)
    assert n_not_pm1 == 0
    scores[[3, 10, 11]] = [0.0, 0.5, -2.0]
    assert sign_error(scores, y, weights)[1] == 3


def test_interleaved_sum_is_the_sum_in_a_fixed_order():
    w = np.random.default_rng(7).random(23)
    for n in range(24):
        assert interleaved_sum(w[:n]) == pytest.approx(w[:n].sum(), rel=1e-15, abs=0)


def test_binning_reads_values_of_any_layout_with_one_specialisation():
    """C- and F-ordered, strided and read-only values give the same bins, from the one compiled
    signature of each kernel (X of any layout, read-only)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 6)).astype(np.float32).astype(np.float64)  # the 32-bit sort
    X[399, 5] = 0.1  # declined there: the 64-bit sort
    read_only = X.copy()
    read_only.setflags(write=False)
    strided = np.repeat(X, 2, axis=0)[::2]
    answers = []
    for values in (X, np.asfortranarray(X), strided, read_only):
        out = (np.empty((6, 254)), np.empty(6, dtype=np.int64), np.empty((6, 400), np.uint8),
               np.empty((6, 256), dtype=np.int64))
        quantile_bins(values, np.ones(400, dtype=bool), 255, np.zeros(6, dtype=np.int64), 255,
                      *out)
        answers.append(out)
    for other in answers[1:]:
        for expected, got in zip(answers[0], other):
            np.testing.assert_array_equal(got, expected)
    if not numba.config.DISABLE_JIT:
        for kernel in (binning._quantile_bins32, binning._quantile_bins64):
            assert len(binning.binning_kernel(kernel).signatures) == 1

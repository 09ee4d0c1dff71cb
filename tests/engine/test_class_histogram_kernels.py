"""The class histogram kernel (boostkit.kernels.histogram.class_histogram), and the carried
histogram's sums over gathered rows (boostkit.kernels.carried.changed_class_histogram, and
carry_class_histogram's update from them), bit for bit against a naive loop that adds the examples to their bins one by one, in increasing order:
the order the one-thread models (tests/reference) depend on."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boostkit.kernels import carried as kc
from boostkit.kernels import histogram as kh
from boostkit.kernels.carried import changed_class_histogram
from boostkit.kernels.histogram import class_histogram, class_histogram_block


def in_order_histogram(codes, weights, columns, n_bins, n_columns):
    """Each example's weight added to its bin of every feature, one example after the other."""
    d = codes.shape[0]
    out = np.zeros((d, n_bins, n_columns))
    features = np.arange(d)
    for i in range(codes.shape[1]):
        out[features, codes[:, i], columns[i]] += weights[i]  # one bin per feature: no repeats
    return out


def random_binned(n, d, n_bins, n_columns=2, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_bins, size=(d, n), dtype=np.uint8)
    # Weights over eleven orders of magnitude: a sum in another order differs in its last bits.
    weights = rng.exponential(size=n) * 10.0 ** rng.integers(-8, 3, size=n)
    weights[rng.random(n) < 0.05] = 0.0
    columns = rng.integers(0, n_columns, size=n).astype(np.uint8 if n_columns == 2 else np.int64)
    return codes, weights, columns


# n: none, fewer than eight (no eight-code load), remainders of eight, and more than a tile with
# a remainder; d: fewer features than a group, whole groups and a last group of one to three.
@pytest.mark.parametrize("n", [0, 1, 7, 8, 29, 4099, 2 * kh._TILE + 13])
@pytest.mark.parametrize("d", [1, 3, 4, 6, 9])
def test_class_histogram_adds_each_bin_in_example_order(n, d):
    codes, weights, is_pos = random_binned(n, d, 255, seed=n + d)
    out = np.full((d, 255, 2), np.nan)  # stale contents must be overwritten
    class_histogram(codes, weights, is_pos, out)
    np.testing.assert_array_equal(out, in_order_histogram(codes, weights, is_pos, 255, 2))


@pytest.mark.parametrize("n_bins", [1, 2, 17, 256])
def test_every_number_of_bins(n_bins):
    codes, weights, is_pos = random_binned(1000, 5, n_bins, seed=n_bins)
    out = np.full((5, n_bins, 2), np.nan)
    class_histogram(codes, weights, is_pos, out)
    np.testing.assert_array_equal(out, in_order_histogram(codes, weights, is_pos, n_bins, 2))


def test_bins_beyond_the_codes_are_empty():
    codes, weights, is_pos = random_binned(500, 5, 256, seed=3)
    out = np.full((5, 300, 2), np.nan)
    class_histogram(codes, weights, is_pos, out)
    np.testing.assert_array_equal(out, in_order_histogram(codes, weights, is_pos, 300, 2))


def test_class_indices_as_columns():
    # SAMME's path: int64 class indices in place of the uint8 sign, one column per class.
    codes, weights, labels = random_binned(3001, 7, 40, n_columns=5, seed=4)
    out = np.full((7, 40, 5), np.nan)
    class_histogram(codes, weights, labels, out)
    np.testing.assert_array_equal(out, in_order_histogram(codes, weights, labels, 40, 5))


@pytest.mark.parametrize("start, stop", [(0, 0), (3, 4), (3, 5000), (1001, 1009), (5, 9999)])
def test_block_is_the_histogram_of_its_examples(start, stop):
    codes, weights, is_pos = random_binned(10_000, 6, 30, seed=start)
    out = np.full((6, 30, 2), np.nan)
    assert class_histogram_block(codes, weights, is_pos, out, start, stop) is out
    expected = in_order_histogram(codes[:, start:stop], weights[start:stop], is_pos[start:stop],
                                  30, 2)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("layout", ["transposed", "every other example"])
def test_codes_not_adjacent_in_memory(layout):
    codes, weights, is_pos = random_binned(2 * 3001, 5, 60, seed=9)
    if layout == "transposed":  # (n, d) C-ordered data seen as (d, n)
        codes = np.ascontiguousarray(codes.T).T
    else:
        codes, weights, is_pos = codes[:, ::2], weights[::2], is_pos[::2]
    assert codes.strides[1] != 1
    out = np.empty((5, 60, 2))
    class_histogram(codes, weights, is_pos, out)
    np.testing.assert_array_equal(out, in_order_histogram(codes, weights, is_pos, 60, 2))
    class_histogram_block(codes, weights, is_pos, out, 17, 2900)
    np.testing.assert_array_equal(out, in_order_histogram(
        codes[:, 17:2900], weights[17:2900], is_pos[17:2900], 60, 2))


@numba.njit
def eight_codes_compiled(row, i):
    return kh._eight_codes(row, i)


@pytest.mark.parametrize("i", [0, 1, 5, 8, 13])
def test_eight_codes_load_is_the_python_definition(i):
    row = np.random.default_rng(i).integers(0, 256, size=40, dtype=np.uint8)[3:]  # unaligned
    expected = sum(int(row[i + j]) << (8 * j) for j in range(8))
    assert int(kh._eight_codes(row, i)) == expected
    assert int(eight_codes_compiled(row, i)) == expected


# The carried histogram's change of weight over the gathered rows
# (boostkit.kernels.carried.changed_class_histogram), read where the codes are, four features
# per pass: against the naive loop over the gathered rows' codes, bit for bit.

def gathered_rows(codes, share):
    """Rows as a stump leaves them off its kept cell: the rows whose code of one feature is above
    a cut (increasing, with gaps), ``share`` of them or so."""
    cut = np.quantile(codes[0], 1.0 - share) if codes.shape[1] else 0
    return np.flatnonzero(codes[0] > cut).astype(np.uintp)


def in_order_changed_histogram(codes, rows, change, is_pos, n_bins):
    return in_order_histogram(codes[:, rows], change, is_pos, n_bins, 2)


# d: fewer features than a group of four, whole groups, and a last group of one to three;
# shares of the rows: none, a few (added into out), many and every row (by groups).
@pytest.mark.parametrize("d", [1, 3, 4, 5, 8, 9, 14, 20])
@pytest.mark.parametrize("share", [0.0, 0.05, 0.4, 1.0])
def test_changed_class_histogram_adds_each_bin_in_row_order(d, share):
    rng = np.random.default_rng(d)
    codes, weights, is_pos = random_binned(3000, d, 255, seed=d)
    rows = gathered_rows(codes, share) if share < 1.0 else np.arange(3000, dtype=np.uintp)
    change = weights[rows] * rng.choice([-1.0, 0.5], size=rows.size)
    pos = is_pos[rows]
    out = np.full((d, 255, 2), np.nan)  # stale contents must be overwritten
    changed_class_histogram(codes, rows, change, pos, out)
    np.testing.assert_array_equal(out, in_order_changed_histogram(codes, rows, change, pos, 255))


@pytest.mark.parametrize("n_bins", [1, 2, 17, 256])
def test_changed_class_histogram_every_number_of_bins(n_bins):
    rng = np.random.default_rng(n_bins)
    codes, weights, is_pos = random_binned(2000, 11, n_bins, seed=n_bins)
    rows = np.flatnonzero(rng.random(2000) < 0.3).astype(np.uintp)
    out = np.full((11, n_bins, 2), np.nan)
    changed_class_histogram(codes, rows, weights[rows], is_pos[rows], out)
    np.testing.assert_array_equal(
        out, in_order_changed_histogram(codes, rows, weights[rows], is_pos[rows], n_bins))


def random_changes(rng, n, d, n_bins, share, top_exponent):
    """Random codes, the changed rows (about ``share`` of them), their weight changes and
    classes. The changes have either sign and magnitudes 1e-8 .. 10^(top_exponent - 1): another
    order of the sums gives other bits."""
    codes = rng.integers(0, n_bins, size=(d, n), dtype=np.uint8)
    rows = np.flatnonzero(rng.random(n) < share).astype(np.uintp)
    change = rng.normal(size=rows.size) * 10.0 ** rng.integers(-8, top_exponent, size=rows.size)
    is_pos = rng.integers(0, 2, size=rows.size, dtype=np.uint8)
    return codes, rows, change, is_pos


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 1200), d=st.integers(1, 19), n_bins=st.integers(1, 256),
       seed=st.integers(0, 2**32 - 1), share=st.floats(0.0, 1.0))
def test_changed_class_histogram_property(n, d, n_bins, seed, share):
    rng = np.random.default_rng(seed)
    codes, rows, change, is_pos = random_changes(rng, n, d, n_bins, share, top_exponent=3)
    expected = in_order_changed_histogram(codes, rows, change, is_pos, n_bins)
    # The kernel, and both of its ways whatever the rows' number picks: into out, by groups.
    for kernel in (changed_class_histogram, kc._changed_into_out, kc._changed_by_groups):
        out = np.full((d, n_bins, 2), np.nan)
        kernel(codes, rows, change, is_pos, out)
        np.testing.assert_array_equal(out, expected)


def carried_by_formula(codes, rows, change, is_pos, kept_factors, hist):
    """H_{t+1} as the batch kernel carried it before carry_class_histogram: the sums of
    changed_class_histogram, Z_t summed over feature 0's bins in order, each bin times 1 / Z_t."""
    summed = np.empty_like(hist)
    changed_class_histogram(codes, rows, change, is_pos, summed)
    g0, g1 = kept_factors
    total = 0.0
    for b in range(hist.shape[1]):
        total += (hist[0, b, 0] * g0 + summed[0, b, 0]) + (hist[0, b, 1] * g1 + summed[0, b, 1])
    scale = 1.0 / total
    out = hist.copy()
    out[..., 0] = (hist[..., 0] * g0 + summed[..., 0]) * scale
    out[..., 1] = (hist[..., 1] * g1 + summed[..., 1]) * scale
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 1200), d=st.integers(1, 19), n_bins=st.integers(1, 256),
       seed=st.integers(0, 2**32 - 1), share=st.floats(0.0, 1.0))
def test_carry_class_histogram_is_the_formula_bit_for_bit(n, d, n_bins, seed, share):
    rng = np.random.default_rng(seed)
    codes, rows, change, is_pos = random_changes(rng, n, d, n_bins, share, top_exponent=1)
    codes[:, 0] = 0  # feature 0's total is positive
    hist = rng.exponential(size=(d, n_bins, 2)) * 10.0 ** rng.integers(-8, 3, size=(d, n_bins, 2))
    hist[:, 0, :] += 1e3
    kept_factors = np.exp(rng.normal(size=2))
    expected = carried_by_formula(codes, rows, change, is_pos, kept_factors, hist)
    kc.carry_class_histogram(codes, rows, change, is_pos, kept_factors, hist)
    np.testing.assert_array_equal(hist, expected)


@numba.njit
def adjacent_codes_compiled(codes, weights, is_pos, start, stop):
    return kh._adjacent_codes(codes, weights, is_pos, start, stop)


@pytest.mark.parametrize("layout", ["C", "transposed", "every other example"])
def test_adjacent_codes_copy_only_codes_not_adjacent_in_memory(layout):
    codes, weights, is_pos = random_binned(2 * 300, 5, 60, seed=4)
    if layout == "transposed":
        codes = np.ascontiguousarray(codes.T).T
    elif layout == "every other example":
        codes, weights, is_pos = codes[:, ::2], weights[::2], is_pos[::2]
    for adjacent_codes in (kh._adjacent_codes, adjacent_codes_compiled):
        got_codes, got_weights, got_pos, start, stop = adjacent_codes(codes, weights, is_pos,
                                                                      17, 290)
        assert got_codes.strides[1] == 1
        if layout == "C":  # the arguments themselves
            assert got_codes is codes or np.shares_memory(got_codes, codes)
            assert (start, stop) == (17, 290)
        else:  # a copy of the examples [17, 290)
            assert (start, stop) == (0, 273)
        np.testing.assert_array_equal(got_codes[:, start:stop], codes[:, 17:290])
        np.testing.assert_array_equal(got_weights[start:stop], weights[17:290])
        np.testing.assert_array_equal(got_pos[start:stop], is_pos[17:290])

"""Mapping raw feature values to bin codes.

:func:`quantile_bins` bins a whole training set: each column is sorted once (a radix sort, linear
in the rows), and the one sorted pass gives its distinct values with their counts, hence its
quantile thresholds, and then every row's code by a merge with the thresholds (no search per
value). :func:`code_bins` codes a large data set against thresholds already known (found on a
sample of its rows), and :func:`apply_bins` a column.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import types

from .sorting import N_DIGITS, N_DIGITS32, SIGN, SIGN32, flip_keys, radix_sort, unflip_keys


@numba.njit(cache=True, nogil=True)
def count_below(values, lo, hi, x):
    """``lo`` plus the number of ``values[lo:hi]`` (increasing) strictly below ``x``, by binary
    search: the index of the first of them not below ``x``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, nogil=True)
def _bin_feature(X, f, thresholds, lo0, hi0, missing_code, out):
    for i in range(X.shape[0]):
        x = X[i, f]
        if x != x:
            out[f, i] = missing_code
        else:
            out[f, i] = count_below(thresholds, lo0, hi0, x) - lo0


@numba.njit(cache=True, nogil=True)
def apply_bins(X, thresholds, offsets, missing_code, out):
    """Bin every value: ``out[f, i]`` = number of feature-f thresholds strictly below ``X[i, f]``.

    ``thresholds`` concatenates every feature's increasing thresholds; feature f owns
    ``thresholds[offsets[f]:offsets[f + 1]]``. A value equal to a threshold goes to the lower bin,
    so bin b holds t_{b-1} < x <= t_b, matching the ``x <= threshold`` rule of the stumps. A
    missing value (NaN) gets ``missing_code``, the bin after every feature's own bins.
    ``out`` is ``(d, n)`` uint8 (feature-major, the layout the histogram kernel scans).
    """
    for f in range(X.shape[1]):
        _bin_feature(X, f, thresholds, offsets[f], offsets[f + 1], missing_code, out)


# Every feature's thresholds in :func:`code_bins`' search table: a row of SEARCH_WIDTH = 2**8 - 1
# values, the feature's own (at most 254) followed by +inf, so 8 halvings always end the search.
SEARCH_WIDTH = 255
# Rows coded together: their values (256 rows x d features, 40 kB at d = 20) stay in the cache while
# each feature's codes are found down the tile, where coding feature by feature down the whole of a
# row-major X read all of it once per feature.
CODE_TILE = 256
# Rows of one task of code_bins_parallel (its bin counts are summed after): a number of rows, so
# the blocks, and the answer, do not depend on the threads.
CODE_BLOCK = 1 << 16
# Rows of each column that quantile_bins reads first to guess whether it holds float32 values.
FLOAT32_PROBE = 256
# Values in float32 columns from which a data set with other columns too sorts them on 32-bit
# keys: that saves ~5 ns a value (43 against 33 ms at 100 000 x 20, one thread) but compiles the
# 32-bit sort besides the 64-bit one (~2.5 s, once); below, at most ~0.3 ms a fit.
FLOAT32_SORT_VALUES = 1 << 16


@numba.njit(cache=True, nogil=True, inline="always")
def _search_row(row, x):
    """The number of ``row``'s values (:data:`SEARCH_WIDTH`, increasing, +inf-padded) strictly
    below ``x``: a binary search of 8 fixed halvings without branches (a compare added to the
    position), which random values cannot mispredict and whose rows overlap in the pipeline.
    Any answer for NaN (every compare false: 0)."""
    p = 128 * (row[127] < x)
    p += 64 * (row[p + 63] < x)
    p += 32 * (row[p + 31] < x)
    p += 16 * (row[p + 15] < x)
    p += 8 * (row[p + 7] < x)
    p += 4 * (row[p + 3] < x)
    p += 2 * (row[p + 1] < x)
    p += row[p] < x
    return p


@numba.njit(cache=True, nogil=True)
def _code_rows(X, table, weighted, missing_code, codes, bin_counts, n_missing, start, stop):
    """:func:`code_bins` for rows ``[start, stop)``, adding to ``bin_counts`` and ``n_missing``."""
    for tile in range(start, stop, CODE_TILE):
        tile_stop = min(tile + CODE_TILE, stop)
        for f in range(X.shape[1]):
            row = table[f]
            counts = bin_counts[f]
            missing = 0  # in a register: n_missing[f] in memory would chain the rows' updates
            for i in range(tile, tile_stop):
                x = X[i, f]
                present = x == x
                code = _search_row(row, x) if present else missing_code
                codes[f, i] = code
                counts[code] += weighted[i]
                missing += not present
            n_missing[f] += missing


@numba.njit(cache=True, nogil=True)
def code_bins(X, table, weighted, missing_code, codes, bin_counts, n_missing):
    """Bin every value of ``X`` (``(n, d)``) and count the bins, in one pass over ``X``.

    ``codes[f, i]`` (``(d, n)`` uint8) is the number of thresholds of feature f strictly below
    ``X[i, f]``, as :func:`apply_bins` gives it (a value equal to a threshold goes to the lower
    bin), or ``missing_code`` for NaN. Feature f's thresholds are ``table[f]``, increasing, padded
    with +inf to :data:`SEARCH_WIDTH` values. ``bin_counts[f, b]`` (``(d, missing_code + 1)``,
    overwritten) is the number of ``weighted`` rows with code b, ``n_missing[f]`` the number of
    rows (weighted or not) where feature f is NaN. Rows go in tiles of :data:`CODE_TILE`.
    """
    bin_counts[:, :] = 0
    n_missing[:] = 0
    # np.intp(0), not the literal 0, for which numba would compile _code_rows again besides
    # code_bins_parallel's specialisation (the cold start, docs/performance.md).
    _code_rows(X, table, weighted, missing_code, codes, bin_counts, n_missing, np.intp(0),
               X.shape[0])


@numba.njit(cache=True, nogil=True, parallel=True)
def code_bins_parallel(X, table, weighted, missing_code, codes, bin_counts, n_missing):
    """:func:`code_bins` with blocks of :data:`CODE_BLOCK` rows spread over numba's threads, each
    counting its own bins (the same answer: the codes are the same and counts are integers)."""
    n, d = X.shape
    n_blocks = (n + CODE_BLOCK - 1) // CODE_BLOCK
    block_counts = np.zeros((n_blocks, d, bin_counts.shape[1]), dtype=np.int64)
    block_missing = np.zeros((n_blocks, d), dtype=np.int64)
    for k in numba.prange(n_blocks):
        _code_rows(X, table, weighted, missing_code, codes, block_counts[k], block_missing[k],
                   k * CODE_BLOCK, min((k + 1) * CODE_BLOCK, n))
    bin_counts[:, :] = 0
    n_missing[:] = 0
    for k in range(n_blocks):
        bin_counts += block_counts[k]
        n_missing += block_missing[k]


@numba.njit(cache=True, nogil=True)
def sort_column(X, f, values, rows, values_tmp, rows_tmp):
    """``(sorted_values, sorted_rows)``: the values of column ``f`` of ``X`` that are not NaN,
    increasing, and the row of each; equal values keep their rows' order (a stable sort).

    A radix sort (:func:`~boostkit.kernels.sorting.radix_sort`) of the values' 64-bit IEEE-754
    patterns made order-preserving as unsigned integers
    (:func:`~boostkit.kernels.sorting.flip_keys`). -0.0 is sorted (and returned) as +0.0, the
    value it equals. ``values``, ``rows`` (intp), ``values_tmp`` and ``rows_tmp``
    are scratch arrays of length ``X.shape[0]``; the answer is a view of one of the two pairs.
    """
    m = 0
    for i in range(X.shape[0]):
        x = X[i, f]
        if x == x:
            values[m] = x + 0.0  # -0.0 + 0.0 is +0.0: one key for the two equal zeros
            rows[m] = i
            m += 1
    keys = values[:m].view(np.uint64)
    flip_keys(keys, SIGN)
    keys, sorted_rows = radix_sort(keys, rows[:m], values_tmp[:m].view(np.uint64),
                                   rows_tmp[:m], N_DIGITS)
    unflip_keys(keys, SIGN)
    return keys.view(np.float64), sorted_rows


@numba.njit(cache=True, nogil=True)
def sort_float32_column(X, f, values, rows, values_tmp, rows_tmp):
    """``(sorted_values, sorted_rows, True)`` as :func:`sort_column` gives them (as float32
    values and int32 rows), when every value of the column is a float32 value (NaN aside), else
    ``(empty, empty, False)``, known at the first value that is not.

    Half the bytes of :func:`sort_column` move in each pass, and 32-bit keys have 3 digits: the
    usual case of features stored as float32, and of the drop-in estimators, which compare
    features as float32 as scikit-learn's trees do. The scratch arrays are float32 and int32
    (``X.shape[0]`` < 2**31).
    """
    m = 0
    for i in range(X.shape[0]):
        x = X[i, f]
        if x == x:
            v = np.float32(x)
            if v != x:
                return values[:0], rows[:0], False
            values[m] = v + np.float32(0.0)
            rows[m] = i
            m += 1
    keys = values[:m].view(np.uint32)
    flip_keys(keys, SIGN32)
    keys, sorted_rows = radix_sort(keys, rows[:m], values_tmp[:m].view(np.uint32),
                                   rows_tmp[:m], N_DIGITS32)
    unflip_keys(keys, SIGN32)
    return keys.view(np.float32), sorted_rows, True


@numba.njit(cache=True, nogil=True, inline="always")
def _midpoint(lo, hi):
    """CART's threshold between neighbours ``lo < hi``: their midpoint, or ``lo`` when rounding
    makes the midpoint equal ``hi``."""
    mid = lo / 2.0 + hi / 2.0
    return lo if mid >= hi else mid


@numba.njit(cache=True, nogil=True)
def quantile_thresholds(sorted_values, sorted_rows, placing, max_bins, distinct, counts, out):
    """Write into ``out`` the increasing thresholds cutting the ``placing`` rows' values into
    at most ``max_bins`` bins, and return how many there are.

    ``sorted_values``/``sorted_rows`` are :func:`sort_column`'s answer; ``distinct`` and
    ``counts`` are scratch arrays as long. With at most ``max_bins`` distinct values every value
    gets its own bin and each threshold is the midpoint of two neighbours (:func:`_midpoint`).
    Otherwise the cuts fall at count quantiles: after the first distinct value whose cumulative
    count reaches total x q / max_bins, for q = 1 .. max_bins - 1, each cut once, none after the
    last value.
    """
    n_distinct = 0
    for j in range(sorted_values.shape[0]):
        if placing[sorted_rows[j]]:
            v = sorted_values[j]
            if n_distinct == 0 or v != distinct[n_distinct - 1]:
                distinct[n_distinct] = v
                counts[n_distinct] = 1
                n_distinct += 1
            else:
                counts[n_distinct - 1] += 1
    n_out = 0
    if n_distinct <= 1:
        return n_out
    if n_distinct <= max_bins:
        for b in range(n_distinct - 1):
            out[b] = _midpoint(distinct[b], distinct[b + 1])
        return n_distinct - 1
    total = 0
    for b in range(n_distinct):  # counts become cumulative counts
        total += counts[b]
        counts[b] = total
    b = 0
    last = -1
    for q in range(1, max_bins):
        target = (total * q) / max_bins
        while counts[b] < target:
            b += 1
        if b < n_distinct - 1 and b != last:
            out[n_out] = _midpoint(distinct[b], distinct[b + 1])
            n_out += 1
            last = b
    return n_out


def column_thresholds(values, max_bins, out):
    """:func:`quantile_thresholds` of every value of the 1-D float64 array ``values`` (NaN
    left out), written into ``out``; returns how many there are.

    Scratch: 24 bytes a value (rows as int32 below 2**31 values: less to move in each pass of
    the sort), the sort's spare pair of arrays holding the distinct values and their counts.
    The row type is chosen here, so a first call compiles the sort for it alone, not for both.
    """
    n = values.shape[0]
    rows = np.int32 if n < 2**31 else np.intp
    return _column_thresholds(values, max_bins, out, np.empty(n, dtype=rows),
                              np.empty(n, dtype=rows))


@numba.njit(cache=True, nogil=True)
def _column_thresholds(values, max_bins, out, rows, rows_tmp):
    n = values.shape[0]
    keys, keys_tmp = np.empty(n), np.empty(n)
    # np.intp(0): the literal 0 would compile sort_column for it alone (docs/performance.md).
    sorted_values, sorted_rows = sort_column(values.reshape((n, 1)), np.intp(0), keys, rows,
                                             keys_tmp, rows_tmp)
    if sorted_values.ctypes.data == keys.ctypes.data:  # the answer is in (keys, rows)
        distinct, counts = keys_tmp, rows_tmp
    else:
        distinct, counts = keys, rows
    return quantile_thresholds(sorted_values, sorted_rows, np.ones(n, dtype=np.bool_),
                               max_bins, distinct, counts, out)


@numba.njit(cache=True, nogil=True)
def _code_sorted_column(sorted_values, sorted_rows, f, weighted, max_bins,
                        n_categories, thresholds, n_thresholds, codes, bin_counts, distinct,
                        counts):
    """Feature f's thresholds, and the codes and bin counts of its values that are not NaN,
    from its sorted values (:func:`quantile_bins`)."""
    if n_categories[f] > 0:  # category c is bin c: cuts at 0.5, 1.5, ...
        n_cuts = n_categories[f] - 1
        for b in range(n_cuts):
            thresholds[f, b] = b + 0.5
    else:
        n_cuts = quantile_thresholds(sorted_values, sorted_rows, weighted, max_bins, distinct,
                                     counts, thresholds[f])
    n_thresholds[f] = n_cuts
    code = 0
    for j in range(sorted_values.shape[0]):  # a merge of the sorted values and thresholds
        v = sorted_values[j]
        while code < n_cuts and thresholds[f, code] < v:
            code += 1
        i = sorted_rows[j]
        codes[f, i] = code
        if weighted[i]:
            bin_counts[f, code] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def _bin_sorted_column(X, f, weighted, max_bins, n_categories, missing_code, thresholds,
                       n_thresholds, codes, bin_counts, sorted_values, sorted_rows, distinct,
                       counts):
    bin_counts[f, :] = 0
    _code_sorted_column(sorted_values, sorted_rows, f, weighted, max_bins, n_categories,
                        thresholds, n_thresholds, codes, bin_counts, distinct, counts)
    if sorted_values.shape[0] < X.shape[0]:
        for i in range(X.shape[0]):
            if X[i, f] != X[i, f]:
                codes[f, i] = missing_code
                if weighted[i]:
                    bin_counts[f, missing_code] += 1


def _quantile_bins64(X, columns, weighted, max_bins, n_categories, missing_code, thresholds,
                     n_thresholds, codes, bin_counts):
    n = X.shape[0]
    values, values_tmp, distinct = np.empty(n), np.empty(n), np.empty(n)
    rows, rows_tmp = np.empty(n, dtype=np.intp), np.empty(n, dtype=np.intp)
    counts = np.empty(n, dtype=np.int64)
    for f in columns:
        sorted_values, sorted_rows = sort_column(X, f, values, rows, values_tmp, rows_tmp)
        _bin_sorted_column(X, f, weighted, max_bins, n_categories, missing_code, thresholds,
                           n_thresholds, codes, bin_counts, sorted_values, sorted_rows,
                           distinct, counts)


def _quantile_bins32(X, columns, declined, weighted, max_bins, n_categories, missing_code,
                     thresholds, n_thresholds, codes, bin_counts):
    n = X.shape[0]
    values, values_tmp = np.empty(n, dtype=np.float32), np.empty(n, dtype=np.float32)
    rows, rows_tmp = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
    distinct, counts = np.empty(n), np.empty(n, dtype=np.int64)
    for f in columns:
        sorted_values, sorted_rows, is_float32 = sort_float32_column(X, f, values, rows,
                                                                     values_tmp, rows_tmp)
        if is_float32:
            _bin_sorted_column(X, f, weighted, max_bins, n_categories, missing_code,
                               thresholds, n_thresholds, codes, bin_counts, sorted_values,
                               sorted_rows, distinct, counts)
        else:
            declined[f] = True


def _quantile_bins64_parallel(X, columns, weighted, max_bins, n_categories, missing_code,
                              thresholds, n_thresholds, codes, bin_counts):
    n = X.shape[0]
    for j in numba.prange(columns.shape[0]):
        f = columns[j]
        sorted_values, sorted_rows = sort_column(X, f, np.empty(n), np.empty(n, dtype=np.intp),
                                                 np.empty(n), np.empty(n, dtype=np.intp))
        _bin_sorted_column(X, f, weighted, max_bins, n_categories, missing_code, thresholds,
                           n_thresholds, codes, bin_counts, sorted_values, sorted_rows,
                           np.empty(n), np.empty(n, dtype=np.int64))


def _quantile_bins32_parallel(X, columns, declined, weighted, max_bins, n_categories,
                              missing_code, thresholds, n_thresholds, codes, bin_counts):
    n = X.shape[0]
    for j in numba.prange(columns.shape[0]):
        f = columns[j]
        sorted_values, sorted_rows, is_float32 = sort_float32_column(
            X, f, np.empty(n, dtype=np.float32), np.empty(n, dtype=np.int32),
            np.empty(n, dtype=np.float32), np.empty(n, dtype=np.int32))
        if is_float32:
            _bin_sorted_column(X, f, weighted, max_bins, n_categories, missing_code,
                               thresholds, n_thresholds, codes, bin_counts, sorted_values,
                               sorted_rows, np.empty(n), np.empty(n, dtype=np.int64))
        else:
            declined[f] = True


# The binning kernels' arguments after X and the columns (for the 32-bit sort, the columns it
# declines): weighted, max_bins, n_categories, missing_code, thresholds, n_thresholds, codes,
# bin_counts. X is read in any layout and may be read-only: one specialisation serves C- and
# F-ordered, strided and read-only values (each took ~1 s to compile, cold), at the cost of an
# index computed from both strides.
_BIN_ARGS = (types.Array(types.bool_, 1, "A", readonly=True), types.int64,
             types.Array(types.int64, 1, "A", readonly=True), types.int64,
             types.float64[:, ::1], types.int64[::1], types.uint8[:, ::1], types.int64[:, ::1])
_VALUES = types.Array(types.float64, 2, "A", readonly=True)
_COLUMNS = types.Array(types.int64, 1, "A", readonly=True)
_BINS64 = types.none(_VALUES, _COLUMNS, *_BIN_ARGS)
_BINS32 = types.none(_VALUES, _COLUMNS, types.bool_[::1], *_BIN_ARGS)


@functools.cache
def binning_kernel(kernel):
    """One of the binning kernels (``_quantile_bins64``, ``_quantile_bins32`` and their
    ``_parallel`` forms) compiled for its one signature, on first use (loaded from numba's cache
    afterwards)."""
    signature = _BINS32 if kernel in (_quantile_bins32, _quantile_bins32_parallel) else _BINS64
    parallel = kernel in (_quantile_bins32_parallel, _quantile_bins64_parallel)
    return numba.njit(signature, cache=True, nogil=True, parallel=parallel)(kernel)


def _bin_by_key_width(kernel32, kernel64, X, *args):
    # Columns whose first rows are float32 values try the 32-bit sort (below 2**31 rows), which
    # declines a column at its first value that is not; the others, and the declined, take the
    # 64-bit sort. Each kernel compiles only when a column needs it: on data of one kind a cold
    # start compiles one of the two, and so does data with few float32 values among others.
    n, d = X.shape
    declined = np.ones(d, dtype=np.bool_)
    if n < 2**31:
        head = X[:FLOAT32_PROBE]
        with np.errstate(over="ignore"):  # a value beyond float32's range: not float32
            may_be_float32 = ((head.astype(np.float32) == head) | np.isnan(head)).all(axis=0)
        n_float32 = int(may_be_float32.sum())
        if n_float32 and (n_float32 == d or n_float32 * n >= FLOAT32_SORT_VALUES):
            declined &= ~may_be_float32
            binning_kernel(kernel32)(X, np.flatnonzero(may_be_float32), declined, *args)
    if declined.any():
        binning_kernel(kernel64)(X, np.flatnonzero(declined), *args)


def quantile_bins(X, weighted, max_bins, n_categories, missing_code, thresholds,
                  n_thresholds, codes, bin_counts):
    """Bin every column of ``X`` (``(n, d)``) from one sort of it.

    Feature f's thresholds are :func:`quantile_thresholds` of the rows where ``weighted`` (the
    rows of positive weight) is true (NaN left out), or 0.5, 1.5, ... when ``n_categories[f]``
    > 0 marks a column of category indices; they go to ``thresholds[f, :n_thresholds[f]]``
    (``thresholds`` is ``(d, max_bins - 1)``). ``codes[f, i]`` (``(d, n)`` uint8) is the number
    of thresholds strictly below ``X[i, f]`` (as :func:`apply_bins` gives it), ``missing_code``
    for NaN, and ``bin_counts[f, b]`` the number of ``weighted`` rows with code b. Scratch: 48
    bytes a row. Columns of float32 values (NaN aside) sort on 32-bit keys
    (:func:`sort_float32_column`) when every column holds them or they hold at least
    ``FLOAT32_SORT_VALUES`` values, the others on 64-bit keys (:func:`sort_column`): the same
    order, the same answer.
    """
    _bin_by_key_width(_quantile_bins32, _quantile_bins64, X, weighted, max_bins, n_categories,
                      missing_code, thresholds, n_thresholds, codes, bin_counts)


def quantile_bins_parallel(X, weighted, max_bins, n_categories, missing_code,
                           thresholds, n_thresholds, codes, bin_counts):
    """:func:`quantile_bins` with the columns spread over numba's threads (the same answer):
    worth it for a whole training set, not for one column."""
    _bin_by_key_width(_quantile_bins32_parallel, _quantile_bins64_parallel, X, weighted,
                      max_bins, n_categories, missing_code, thresholds, n_thresholds, codes,
                      bin_counts)

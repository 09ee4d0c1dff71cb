"""Mapping raw feature values to bin codes."""

from __future__ import annotations

import numba


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


@numba.njit(cache=True, nogil=True, parallel=True)
def apply_bins_parallel(X, thresholds, offsets, missing_code, out):
    """:func:`apply_bins` with the features spread over numba's threads: worth it for a whole
    training set, not for one column (waking the threads then costs more than the column)."""
    for f in numba.prange(X.shape[1]):
        _bin_feature(X, f, thresholds, offsets[f], offsets[f + 1], missing_code, out)

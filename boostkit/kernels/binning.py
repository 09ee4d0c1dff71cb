"""Mapping raw feature values to bin codes."""

from __future__ import annotations

import numba


@numba.njit(cache=True, nogil=True, parallel=True)
def apply_bins(X, thresholds, offsets, out):
    """Bin every value: ``out[f, i]`` = number of feature-f thresholds strictly below ``X[i, f]``.

    ``thresholds`` concatenates every feature's increasing thresholds; feature f owns
    ``thresholds[offsets[f]:offsets[f + 1]]``. A value equal to a threshold goes to the lower bin,
    so bin b holds t_{b-1} < x <= t_b, matching the ``x <= threshold`` rule of the stumps.
    ``out`` is ``(d, n)`` uint8 (feature-major, the layout the histogram kernel scans).
    """
    n, d = X.shape
    for f in numba.prange(d):
        lo0 = offsets[f]
        hi0 = offsets[f + 1]
        for i in range(n):
            x = X[i, f]
            lo = lo0
            hi = hi0
            while lo < hi:
                mid = (lo + hi) >> 1
                if thresholds[mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            out[f, i] = lo - lo0

"""Per-feature, per-bin weighted class histograms: the sufficient statistics of stumps.

For binned features ``codes[f, i]`` (feature-major, uint8) the histogram holds, for every feature
f and bin b, the total weight of the negative and of the positive examples that fall into b:
``out[f, b, 0] = sum_{i: codes[f,i]=b, y_i=-1} w_i`` and ``out[f, b, 1]`` likewise for y_i=+1.
A stump's two sides, a tree's children and RankBoost's r are all sums over these.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def class_histogram(codes, weights, is_pos, out):
    """Fill ``out`` (shape ``(d, n_bins, 2)``, float64) with the weighted class histogram.

    ``codes`` is ``(d, n)`` uint8, ``weights`` ``(n,)`` float64, ``is_pos`` ``(n,)`` uint8 (1 for
    a positive example). ``out`` is overwritten. One pass over ``d * n`` bytes.
    """
    d, n = codes.shape
    out[:] = 0.0
    for f in range(d):
        row = codes[f]
        hist = out[f]
        for i in range(n):
            hist[row[i], is_pos[i]] += weights[i]


@numba.njit(cache=True, nogil=True, parallel=True)
def class_histogram_parallel(codes, weights, is_pos, out):
    """:func:`class_histogram` with features spread over numba's threads."""
    d, n = codes.shape
    for f in numba.prange(d):
        row = codes[f]
        hist = out[f]
        hist[:] = 0.0
        for i in range(n):
            hist[row[i], is_pos[i]] += weights[i]


@numba.njit(cache=True, nogil=True)
def cell_class_sums(cells, weights, is_pos, n_cells):
    """Weight of the negative and positive examples in each cell: ``(wneg, wpos)``.

    ``cells`` is ``(n,)`` integer with values in ``[0, n_cells)``.
    """
    wneg = np.zeros(n_cells)
    wpos = np.zeros(n_cells)
    for i in range(cells.shape[0]):
        if is_pos[i]:
            wpos[cells[i]] += weights[i]
        else:
            wneg[cells[i]] += weights[i]
    return wneg, wpos

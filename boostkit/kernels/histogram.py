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
def _accumulate_rows(codes, weights, is_pos, out, start, stop):
    # Four features per pass over the examples: each weight and class is loaded once for four
    # histograms, and the four independent updates overlap (about 1.7x faster than one feature
    # per pass at 100 000 x 20). The row range is sliced first so every loop index starts at 0:
    # numba then knows it is non-negative and drops its negative-index checks (1.6x faster).
    weights = weights[start:stop]
    is_pos = is_pos[start:stop]
    m = stop - start
    d = codes.shape[0]
    f = 0
    while f + 4 <= d:
        r0 = codes[f, start:stop]
        r1 = codes[f + 1, start:stop]
        r2 = codes[f + 2, start:stop]
        r3 = codes[f + 3, start:stop]
        h0, h1, h2, h3 = out[f], out[f + 1], out[f + 2], out[f + 3]
        for i in range(m):
            w = weights[i]
            c = is_pos[i]
            h0[r0[i], c] += w
            h1[r1[i], c] += w
            h2[r2[i], c] += w
            h3[r3[i], c] += w
        f += 4
    while f < d:
        row = codes[f, start:stop]
        hist = out[f]
        for i in range(m):
            hist[row[i], is_pos[i]] += weights[i]
        f += 1


@numba.njit(cache=True, nogil=True)
def class_histogram(codes, weights, is_pos, out):
    """Fill ``out`` (shape ``(d, n_bins, 2)``, float64) with the weighted class histogram.

    ``codes`` is ``(d, n)`` uint8, ``weights`` ``(n,)`` float64, ``is_pos`` ``(n,)`` uint8 (1 for
    a positive example). ``out`` is overwritten. One pass over ``d * n`` bytes.
    """
    out[:] = 0.0
    _accumulate_rows(codes, weights, is_pos, out, 0, codes.shape[1])


@numba.njit(cache=True, nogil=True, parallel=True)
def class_histogram_parallel(codes, weights, is_pos, out, n_chunks):
    """:func:`class_histogram` in ``n_chunks`` blocks of examples spread over numba's threads.

    Splitting examples rather than features keeps the threads evenly loaded whatever the number
    of features; the private histograms are small (d x n_bins x 2) and summed at the end.
    """
    n = codes.shape[1]
    partial = np.zeros((n_chunks,) + out.shape)
    for chunk in numba.prange(n_chunks):
        _accumulate_rows(codes, weights, is_pos, partial[chunk],
                         chunk * n // n_chunks, (chunk + 1) * n // n_chunks)
    out[:] = 0.0
    for chunk in range(n_chunks):
        out += partial[chunk]


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


@numba.njit(cache=True, nogil=True)
def threshold_class_sums(hist, wneg, wpos):
    """Class weights on both sides of every bin edge, from a ``(d, B, 2)`` histogram.

    For the cut after bin b of feature f: ``wneg[f, b] = (left, right)`` weight of negatives and
    ``wpos[f, b]`` likewise for positives; both outputs are ``(d, B - 1, 2)``. Left sides are
    prefix sums and right sides suffix sums, so a light side is exact rather than the difference
    of two large totals.
    """
    d, n_bins, _ = hist.shape
    for f in range(d):
        left_neg = 0.0
        left_pos = 0.0
        for b in range(n_bins - 1):
            left_neg += hist[f, b, 0]
            left_pos += hist[f, b, 1]
            wneg[f, b, 0] = left_neg
            wpos[f, b, 0] = left_pos
        right_neg = 0.0
        right_pos = 0.0
        for b in range(n_bins - 1, 0, -1):
            right_neg += hist[f, b, 0]
            right_pos += hist[f, b, 1]
            wneg[f, b - 1, 1] = right_neg
            wpos[f, b - 1, 1] = right_pos


# -- Several classes: sums over (example, class) pairs ----------------------------------------
#
# With C > 1 margin columns (Schapire & Singer 1999, section 7-9: multi-class multi-label
# boosting as binary boosting over pairs), every example i carries a weight D(i, l) and a sign
# Y(i, l) for each class l. The sufficient statistics of a partition are then, per cell j and
# class l, the weight of the pairs with Y = -1 and with Y = +1: W-_{jl} and W+_{jl}.


@numba.njit(cache=True, nogil=True)
def split_pair_weights(weights, is_pos, out):
    """``out[i, l, 0] = D(i, l)`` where Y(i, l) = -1, else 0; ``out[i, l, 1]`` likewise for +1.

    ``weights`` and ``is_pos`` are ``(n, C)``; ``out`` is ``(n, C, 2)``. Laid out this way every
    example's 2C signed weights are contiguous, so a histogram adds them to a bin as one vector.
    """
    n, c = weights.shape
    for i in range(n):
        for l in range(c):
            w = weights[i, l]
            p = is_pos[i, l]
            out[i, l, 1] = w * p
            out[i, l, 0] = w - w * p


@numba.njit(cache=True, nogil=True)
def _accumulate_pair_rows(codes, signed, out, start, stop):
    signed = signed[start:stop]
    m = stop - start
    d = codes.shape[0]
    for f in range(d):
        row = codes[f, start:stop]
        hist = out[f]
        for i in range(m):
            hist[row[i]] += signed[i]


@numba.njit(cache=True, nogil=True)
def pair_histogram(codes, signed, out):
    """Fill ``out`` (``(d, n_bins, C, 2)``, float64) with the per-bin, per-class signed sums.

    ``codes`` is ``(d, n)`` uint8 and ``signed`` the ``(n, C, 2)`` output of
    :func:`split_pair_weights`: ``out[f, b, l, s]`` is the weight of the pairs (i, l) with
    ``codes[f, i] = b`` and sign s (0: Y = -1, 1: Y = +1). One pass over the binned data.
    """
    out[:] = 0.0
    _accumulate_pair_rows(codes, signed, out, 0, codes.shape[1])


@numba.njit(cache=True, nogil=True, parallel=True)
def pair_histogram_parallel(codes, signed, out, n_chunks):
    """:func:`pair_histogram` in ``n_chunks`` blocks of examples over numba's threads, the
    private histograms summed in block order."""
    n = codes.shape[1]
    partial = np.zeros((n_chunks,) + out.shape)
    for chunk in numba.prange(n_chunks):
        _accumulate_pair_rows(codes, signed, partial[chunk],
                              chunk * n // n_chunks, (chunk + 1) * n // n_chunks)
    out[:] = 0.0
    for chunk in range(n_chunks):
        out += partial[chunk]


@numba.njit(cache=True, nogil=True)
def cell_pair_sums(cells, weights, is_pos, n_cells):
    """``(wneg, wpos)``, each ``(n_cells, C)``: the weight of the pairs with Y = -1 (+1) of each
    class in each cell. ``cells`` is ``(n,)`` with values in ``[0, n_cells)``."""
    c = weights.shape[1]
    wneg = np.zeros((n_cells, c))
    wpos = np.zeros((n_cells, c))
    for i in range(cells.shape[0]):
        j = cells[i]
        for l in range(c):
            if is_pos[i, l]:
                wpos[j, l] += weights[i, l]
            else:
                wneg[j, l] += weights[i, l]
    return wneg, wpos


@numba.njit(cache=True, nogil=True)
def threshold_pair_sums(hist, wneg, wpos):
    """Per-class weights on both sides of every bin edge, from a ``(d, B, C, 2)`` histogram.

    For the cut after bin b of feature f: ``wneg[f, b, side, l]`` (side 0: left, 1: right) is the
    weight of class l's pairs with Y = -1 on that side, ``wpos`` likewise for Y = +1; both
    outputs are ``(d, B - 1, 2, C)``. Left sides are prefix sums and right sides suffix sums, as
    in :func:`threshold_class_sums`.
    """
    d, n_bins, c, _ = hist.shape
    for f in range(d):
        for l in range(c):
            left_neg = 0.0
            left_pos = 0.0
            for b in range(n_bins - 1):
                left_neg += hist[f, b, l, 0]
                left_pos += hist[f, b, l, 1]
                wneg[f, b, 0, l] = left_neg
                wpos[f, b, 0, l] = left_pos
            right_neg = 0.0
            right_pos = 0.0
            for b in range(n_bins - 1, 0, -1):
                right_neg += hist[f, b, l, 0]
                right_pos += hist[f, b, l, 1]
                wneg[f, b - 1, 1, l] = right_neg
                wpos[f, b - 1, 1, l] = right_pos

"""Margins of a run of threshold terms, in one pass over the rows.

A model's terms whose hypotheses are thresholds on one feature (``WeakHypothesis.threshold_split``)
and whose contributions are constant per cell (``Contribution.cell_table``) are flattened into
arrays: ``features[t]``, ``thresholds[t]``, ``missing_left[t]`` and ``values[t, cell]`` (or
``values[t, cell, l]`` for C margin columns). The kernels add term after term to each row's
margin in the model's order, so the result is the term-by-term evaluation's, bit for bit, while
each row is read once and no per-term arrays are allocated.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _cell(x, threshold, missing_left):
    # Without branches (a comparison of random values mispredicts half the time): x > t is
    # False for NaN, which then goes right only when it learnt to.
    return np.intp(x > threshold) | (np.intp(x != x) & np.intp(not missing_left))


@numba.njit(cache=True, nogil=True, inline="always")
def _rows(X, features, thresholds, missing_left, values, margin, start, stop):
    n_terms = features.shape[0]
    for i in range(start, stop):
        acc = margin[i]
        for t in range(n_terms):
            acc += values[t, _cell(X[i, features[t]], thresholds[t], missing_left[t])]
        margin[i] = acc


@numba.njit(cache=True, nogil=True)
def threshold_margins(X, features, thresholds, missing_left, values, margin):
    """Add every term to ``margin`` (``(n,)``, updated in place), in term order.

    ``X`` is ``(n, d)`` float64, ``features`` ``(T,)`` int64, ``thresholds`` ``(T,)`` float64,
    ``missing_left`` ``(T,)`` bool and ``values`` ``(T, 2)`` float64 (cell 0: x <= threshold).
    """
    _rows(X, features, thresholds, missing_left, values, margin, 0, X.shape[0])


@numba.njit(cache=True, nogil=True, parallel=True)
def threshold_margins_parallel(X, features, thresholds, missing_left, values, margin, n_chunks):
    """:func:`threshold_margins` over ``n_chunks`` blocks of rows on numba's threads (every row
    is summed by one thread in term order: the same bits)."""
    n = X.shape[0]
    for chunk in numba.prange(n_chunks):
        _rows(X, features, thresholds, missing_left, values, margin, chunk * n // n_chunks,
              (chunk + 1) * n // n_chunks)


@numba.njit(cache=True, nogil=True)
def threshold_margin_columns(X, features, thresholds, missing_left, values, margin):
    """:func:`threshold_margins` for C margin columns: ``values`` ``(T, 2, C)``, ``margin``
    ``(n, C)``."""
    n_terms, n_columns = features.shape[0], values.shape[2]
    for i in range(X.shape[0]):
        for t in range(n_terms):
            cell = _cell(X[i, features[t]], thresholds[t], missing_left[t])
            for col in range(n_columns):
                margin[i, col] += values[t, cell, col]

"""Numba kernels of the term-presence stump learner (:mod:`boostkit_adaboost.terms`).

A term's presence is stored column by column, as a CSC-like structure of the rows where the term
is present (x_f > 0): ``rows[indptr[f]:indptr[f + 1]]`` for term f. The kernels sum, for every
term at once, the weight of the (example, class) pairs of each sign in its "present" cell; the
"absent" cell is the class total minus that, so a round costs one pass over the present entries
(the stored non-zeros of a sparse X), never over the d x n matrix.

Weights and signs are ``(n, C)`` (C = 1 for a binary fit: pass ``weights.reshape(n, 1)``), so one
kernel serves binary and multiclass (Schapire & Singer 1999, AdaBoost.MH) fits. Plain arrays in,
output arrays passed in and overwritten, compiled with ``cache=True``.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _column_sums(indptr, rows, weights, is_pos, wneg, wpos, f):
    c = weights.shape[1]
    for l in range(c):
        wneg[f, l] = 0.0
        wpos[f, l] = 0.0
    for k in range(indptr[f], indptr[f + 1]):
        i = rows[k]
        for l in range(c):
            w = weights[i, l]
            if is_pos[i, l]:
                wpos[f, l] += w
            else:
                wneg[f, l] += w


@numba.njit(cache=True, nogil=True)
def present_pair_sums(indptr, rows, weights, is_pos, wneg, wpos):
    """Per-term, per-class weight of the pairs with Y = -1 (``wneg``) and Y = +1 (``wpos``) among
    the examples where the term is present.

    ``indptr`` is ``(d + 1,)`` and ``rows`` ``(nnz,)`` integers (the present rows of each term);
    ``weights`` ``(n, C)`` float64, ``is_pos`` ``(n, C)`` uint8 (1 where Y(i, l) = +1);
    ``wneg``/``wpos`` ``(d, C)`` float64, overwritten: ``wpos[f, l] = sum_{i: x_if > 0,
    Y(i,l)=+1} D(i, l)``.
    """
    for f in range(indptr.shape[0] - 1):
        _column_sums(indptr, rows, weights, is_pos, wneg, wpos, f)


@numba.njit(cache=True, nogil=True, parallel=True)
def present_pair_sums_parallel(indptr, rows, weights, is_pos, wneg, wpos):
    """:func:`present_pair_sums` with the terms spread over numba's threads (each term's sums are
    its own, so the result is the serial one, bit for bit)."""
    for f in numba.prange(indptr.shape[0] - 1):
        # prange's index is unsigned: as an intp, _column_sums is compiled once for both kernels
        _column_sums(indptr, rows, weights, is_pos, wneg, wpos, np.intp(f))


@numba.njit(cache=True, nogil=True)
def column_hits(indices, data, n_columns):
    """The number of strictly positive stored entries of each column: ``(n_columns,)`` int64.

    ``indices``/``data`` are a CSR matrix's column indices and values (duplicates summed)."""
    counts = np.zeros(n_columns, dtype=np.int64)
    for k in range(indices.shape[0]):
        if data[k] > 0.0:
            counts[indices[k]] += 1
    return counts


@numba.njit(cache=True, nogil=True)
def present_rows(indptr_csr, indices, data, col_indptr, rows):
    """Fill ``rows`` with the rows of the strictly positive entries of a CSR matrix, grouped by
    column: ``rows[col_indptr[f]:col_indptr[f + 1]]`` are the rows (increasing) where column f is
    > 0. ``col_indptr`` is the cumulative sum of :func:`column_hits` with a leading 0."""
    d = col_indptr.shape[0] - 1
    fill = col_indptr[:d].copy()
    for i in range(indptr_csr.shape[0] - 1):
        for k in range(indptr_csr[i], indptr_csr[i + 1]):
            if data[k] > 0.0:
                f = indices[k]
                rows[fill[f]] = i
                fill[f] += 1

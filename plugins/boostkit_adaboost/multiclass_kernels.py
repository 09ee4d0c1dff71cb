"""Numba kernels of SAMME's weights (:mod:`boostkit_adaboost.multiclass`): the true-label pairs
(i, labels[i]) of ``(n, C)`` arrays read into, and written from, ``(n,)`` arrays in one pass
over the rows. Plain arrays in, output arrays passed in and overwritten, ``cache=True``.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True, nogil=True)
def gather_true_pairs(pairs, labels, out):
    """``out[i] = pairs[i, labels[i]]``: the entries of the true-label pairs of ``(n, C)``
    ``pairs``."""
    for i in range(labels.shape[0]):
        out[i] = pairs[i, labels[i]]


@numba.njit(cache=True, nogil=True)
def scatter_true_pairs(values, labels, out):
    """``out[i, labels[i]] = values[i]`` and 0 on every other pair of the ``(n, C)`` ``out``:
    its rows written whole, in order."""
    for i in range(labels.shape[0]):
        for c in range(out.shape[1]):
            out[i, c] = 0.0
        out[i, labels[i]] = values[i]

"""The plugin's hot loop, a numba kernel kept apart from the components.

A plain module-level function over arrays (no attrs objects, no boostkit state), compiled with
``cache=True`` so the compilation is paid once per machine, and called from the proposal once
per round.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True, nogil=True)
def class_weighted_sums(X, weights, is_pos, sums, totals):
    """Per-class weighted sums of the rows of ``X``, in one pass.

    ``sums[c, j] = sum_{i in class c} w_i X[i, j]`` and ``totals[c] = sum_{i in class c} w_i``,
    with class 0 the negatives and class 1 the positives (``is_pos`` is 1 for a positive). ``X``
    is ``(n, d)`` float64, ``weights`` ``(n,)`` float64, ``sums`` ``(2, d)`` and ``totals``
    ``(2,)`` float64, both overwritten.
    """
    sums[:] = 0.0
    totals[:] = 0.0
    for i in range(X.shape[0]):
        c = is_pos[i]
        w = weights[i]
        totals[c] += w
        for j in range(X.shape[1]):
            sums[c, j] += w * X[i, j]

"""Sampling kernels: weighted bootstrap multiplicities without sorting the draws."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def bootstrap_counts(cdf, draws, out):
    """How often each row is drawn: ``out[i]`` = #{u in draws: cdf[i-1] <= u < cdf[i]}.

    ``cdf`` is the non-decreasing cumulative distribution of the rows' probabilities (ending at
    1), ``draws`` uniform draws in [0, 1), in any order: the counts of
    ``numpy.random.RandomState.choice(n, n, p=...)`` given the same draws
    (``cdf.searchsorted(draws, side="right")``), in expected linear time. Draw u starts its
    search at ``first[int(u n)]``, the first row i with ``int(cdf[i] n) >= int(u n)``: every
    earlier row has cdf[i] < u (rounding keeps x -> int(x n) non-decreasing), and it walks
    only past rows of its own bucket; the n buckets are equally likely and share the n rows, so
    a draw walks past one row on average, however skewed the weights.
    """
    n = cdf.shape[0]
    first = np.empty(n + 1, dtype=np.int64)
    row = 0
    for b in range(n + 1):
        while row < n - 1 and int(cdf[row] * n) < b:
            row += 1
        first[b] = row
    out[:] = 0
    for k in range(draws.shape[0]):
        u = draws[k]
        row = first[int(u * n)]
        while row < n - 1 and cdf[row] <= u:
            row += 1
        out[row] += 1

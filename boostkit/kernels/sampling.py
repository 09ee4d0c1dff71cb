"""Sampling kernels: weighted bootstrap multiplicities without random memory access."""

from __future__ import annotations

import numba


@numba.njit(cache=True, nogil=True)
def bootstrap_counts(cdf, draws, out):
    """How often each row is drawn: ``out[i]`` = #{u in draws: cdf[i-1] <= u < cdf[i]}.

    ``cdf`` is the increasing cumulative distribution of the rows' probabilities, ``draws``
    the uniform draws sorted increasingly: the counts of
    ``numpy.random.RandomState.choice(n, n, p=...)`` given the same draws, without its random
    memory access (``cdf.searchsorted(draws, side="right")``).
    """
    out[:] = 0
    row = 0
    n = cdf.shape[0]
    for k in range(draws.shape[0]):
        u = draws[k]
        while row < n - 1 and cdf[row] <= u:
            row += 1
        out[row] += 1

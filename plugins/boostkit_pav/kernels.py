"""Numba kernels of the PAV plugin: tie pooling, the O(N) PAV algorithm, and interpolation.

All three are plain functions over arrays (000_ea597104f195fc85.txt section 2). The tests keep
naive references beside them and also run them with ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def pool_ties(scores, weights, targets, order, out_scores, out_weights, out_means):
    """Pool the examples that share a parameter value (000 section 2, before eq. 1).

    ``order`` sorts ``scores`` increasingly. Every run of equal scores becomes one point whose
    weight is the run's total weight and whose target is the run's weighted mean target.
    Examples of weight 0 are left out (they carry no information, and a run of them would have
    no mean). Writes the distinct values, in increasing order, into ``out_scores``,
    ``out_weights`` and ``out_means`` (each at least ``len(order)`` long) and returns their
    number N.
    """
    n_out = 0
    current = 0.0
    total_w = 0.0
    total_wp = 0.0
    for idx in range(order.shape[0]):
        i = order[idx]
        w = weights[i]
        if w <= 0.0:
            continue
        s = scores[i]
        if n_out > 0 and s == current:
            total_w += w
            total_wp += w * targets[i]
        else:
            if n_out > 0:
                out_weights[n_out - 1] = total_w
                out_means[n_out - 1] = total_wp / total_w
            out_scores[n_out] = s
            current = s
            total_w = w
            total_wp = w * targets[i]
            n_out += 1
    if n_out > 0:
        out_weights[n_out - 1] = total_w
        out_means[n_out - 1] = total_wp / total_w
    return n_out


@numba.njit(cache=True, nogil=True)
def pav_pools(means, weights, pool_starts, pool_values):
    """The Pool Adjacent Violators algorithm exactly as 000 section 2.1 gives it.

    Input: N points in increasing order of their parameter, with positive ``weights`` w_i and
    targets ``means`` p_i. Output: the pools (maximal irreducible intervals, eq. 4) and their
    values q = sum w_k p_k / sum w_k (eq. 3), the weighted isotonic (non-decreasing) regression
    that maximises the likelihood (2). ``pool_starts`` (length >= N + 1) receives the index where
    each pool begins followed by N; ``pool_values`` (length >= N) the pool values. Returns the
    number of pools K.

    As in the paper, forward pointers F and backward pointers B link the beginnings of the
    current intervals, and two FIFO queues hold the intervals to examine: a pass examines the
    intervals of Q1 in order, pooling each with its successors while they are adjacent
    violators (5), and puts the predecessor of every interval that grew into Q2 for the next
    pass. The marker m skips queue entries swallowed by a pool during the pass. An entry enters
    Q2 only after a pooling, so there are at most N of them in all and at most 2N violator tests:
    O(N) time and space. Adjacent intervals with equal means count as violators (eq. 5 with >=)
    so that the pools are maximal.
    """
    n = means.shape[0]
    forward = np.empty(n, dtype=np.int64)
    backward = np.empty(n, dtype=np.int64)
    sum_w = np.empty(n)
    sum_wp = np.empty(n)
    queue = np.empty(n, dtype=np.int64)
    next_queue = np.empty(n, dtype=np.int64)
    for k in range(n):
        forward[k] = k + 1
        backward[k] = k - 1
        sum_w[k] = weights[k]
        sum_wp[k] = weights[k] * means[k]
        queue[k] = k
    queue_length = n
    while queue_length > 0:
        marker = 0
        next_length = 0
        for position in range(queue_length):
            k = queue[position]
            pooled = False
            if marker <= k:
                while forward[k] != n:
                    j = forward[k]
                    # mean(k) >= mean(j), cross-multiplied (all weights are positive).
                    if sum_wp[k] * sum_w[j] < sum_wp[j] * sum_w[k]:
                        break
                    sum_w[k] += sum_w[j]
                    sum_wp[k] += sum_wp[j]
                    u = forward[j]
                    forward[k] = u
                    if u < n:
                        backward[u] = k
                    marker = u
                    pooled = True
            if pooled and backward[k] >= 0:
                next_queue[next_length] = backward[k]
                next_length += 1
        queue, next_queue = next_queue, queue
        queue_length = next_length
    n_pools = 0
    k = 0
    while k < n:
        pool_starts[n_pools] = k
        pool_values[n_pools] = sum_wp[k] / sum_w[k]
        n_pools += 1
        k = forward[k]
    pool_starts[n_pools] = n
    return n_pools


@numba.njit(cache=True, nogil=True)
def interpolate_points(points, values, s, linear, out):
    """Extend a function known on increasing ``points`` to any ``s`` (000 section 2.2).

    Case 1: s equals a point, take its value. Cases 2 and 4: below the first or above the last
    point, take the first or last value. Case 3: strictly between two neighbours, take the
    midpoint of their values, or with ``linear`` the linear interpolation between them.
    Writes into ``out``; O(len(s) log len(points)) by binary search.
    """
    n = points.shape[0]
    for i in range(s.shape[0]):
        x = s[i]
        # lo = number of points strictly below x
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if points[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        if lo < n and points[lo] == x:
            out[i] = values[lo]
        elif lo == 0:
            out[i] = values[0]
        elif lo == n:
            out[i] = values[n - 1]
        elif linear:
            left = points[lo - 1]
            right = points[lo]
            t = (x - left) / (right - left)
            out[i] = values[lo - 1] + t * (values[lo] - values[lo - 1])
        else:
            out[i] = 0.5 * (values[lo - 1] + values[lo])

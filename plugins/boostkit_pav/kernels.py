"""Numba kernels of the PAV plugin: input checks, tie pooling, the O(N) PAV algorithm,
interpolation, and the binned class sums of approximate PAV-AdaBoost.

All are plain functions over arrays (000_ea597104f195fc85.txt sections 2 and 5). The tests keep
naive references beside them and also run them with ``NUMBA_DISABLE_JIT=1``.

Tied scores are pooled in the order of the examples, whichever kernel pools them
(:func:`pool_ties` along a stable sort, or :func:`pool_ties_hashed` without one): the pooled
sums, and so every fit, are one deterministic function of the data.
"""

from __future__ import annotations

import numba
import numpy as np

from boostkit.kernels.binning import count_below

# Fibonacci hashing: multiplying by 2^64 / golden ratio spreads the bits of a float's pattern
# over the top bits, which pick the slot.
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True, nogil=True)
def check_regression_input(scores, weights, targets):
    """``(all_finite, any_negative_weight, any_positive_weight)`` of the inputs of isotonic
    regression, in one pass over the three arrays (of one length)."""
    finite = True
    negative = False
    positive = False
    for i in range(scores.shape[0]):
        w = weights[i]
        # x - x is 0 for every finite x and NaN for infinities and NaN.
        finite &= (scores[i] - scores[i] == 0.0) & (w - w == 0.0) & (targets[i] - targets[i] == 0.0)
        negative |= w < 0.0
        positive |= w > 0.0
    return finite, negative, positive


@numba.njit(cache=True, nogil=True)
def pool_ties(scores, weights, targets, order, out_scores, out_weights, out_means):
    """Pool the examples that share a parameter value (000 section 2, before eq. 1).

    ``order`` sorts ``scores`` increasingly. Every run of equal scores becomes one point whose
    weight is the run's total weight and whose target is the run's weighted mean target, summed
    in the order ``order`` lists them (the examples' order when the sort is stable).
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
def pool_ties_hashed(scores, bits, weights, targets, max_points, out_scores, out_weights,
                     out_means):
    """:func:`pool_ties` without a sort, for scores with at most ``max_points`` distinct values.

    One pass over the examples in their order: an open-addressing hash table keyed by the
    score's bit pattern (``bits``, ``scores`` viewed as int64; 0.0 and -0.0 hash alike) gives
    each distinct score of positive weight its point, whose weight and weighted target are
    summed in the order of the examples, as :func:`pool_ties` sums them. Writes the N points in
    the order of their first example (not sorted: the caller sorts N values instead of n) into
    the ``out_*`` arrays (each at least ``max_points`` long) and returns N, or -1 as soon as a
    value beyond the first ``max_points`` appears. O(n) expected time; the table (4
    ``max_points`` slots at most) stays in cache for the small ``max_points`` it is meant for.
    """
    n = scores.shape[0]
    log_size = 2
    while (1 << log_size) < 2 * min(max_points, n):
        log_size += 1
    size = 1 << log_size
    mask = size - 1
    shift = np.uint64(64 - log_size)
    table = np.full(size, -1, dtype=np.int64)
    n_out = 0
    for i in range(n):
        w = weights[i]
        if w <= 0.0:
            continue
        s = scores[i]
        key = np.uint64(bits[i]) if s != 0.0 else np.uint64(0)
        slot = np.int64((key * _HASH_MULTIPLIER) >> shift)
        while True:
            point = table[slot]
            if point < 0:
                if n_out == max_points:
                    return -1
                table[slot] = n_out
                out_scores[n_out] = s
                out_weights[n_out] = w
                out_means[n_out] = w * targets[i]
                n_out += 1
                break
            if out_scores[point] == s:
                out_weights[point] += w
                out_means[point] += w * targets[i]
                break
            slot = (slot + 1) & mask
    for point in range(n_out):
        out_means[point] = out_means[point] / out_weights[point]
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
        lo = count_below(points, 0, n, x)  # the number of points strictly below x
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


@numba.njit(cache=True, nogil=True)
def bin_class_sums(scores, thresholds, weights, is_pos, cells, sums):
    """Bin the scores and sum the weight of each class per bin, in one pass (000 section 5).

    ``cells[i]`` receives the number of ``thresholds`` (increasing) strictly below
    ``scores[i]`` (bin b holds t_{b-1} < s <= t_b; NaN goes to bin 0), and ``sums[b, c]``
    (``(len(thresholds) + 1, 2)``, zeroed by the caller) the weight of the examples of bin b with
    ``is_pos == c``, added in the order of the examples. The search is branch-free (a fixed
    number of halvings, Khuong & Morin's layout-free form), so unpredictable scores cost no
    mispredictions.
    """
    n_thresholds = thresholds.shape[0]
    for i in range(scores.shape[0]):
        x = scores[i]
        cell = 0
        if n_thresholds > 0:
            base = 0
            length = n_thresholds
            while length > 1:
                half = length >> 1
                base = base + half if thresholds[base + half] < x else base
                length -= half
            cell = base + (thresholds[base] < x)
        cells[i] = cell
        sums[cell, is_pos[i]] += weights[i]

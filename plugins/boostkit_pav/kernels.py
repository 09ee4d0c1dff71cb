"""Numba kernels of the PAV plugin: input checks, tie pooling, the O(N) PAV algorithm,
interpolation, and what approximate PAV-AdaBoost needs to partition a new hypothesis' scores:
a bucket sort of them (for the engine's quantile edges) and the binned class sums.

All are plain functions over arrays (Wilbur et al. 2005, sections 2 and 5). The tests keep
naive references beside them and also run them with ``NUMBA_DISABLE_JIT=1``.

Tied scores are pooled in the order of the examples, whichever kernel pools them
(:func:`sort_pool_ties` along its stable sort, or :func:`pool_ties_hashed` without one): the
pooled sums, and so every fit, are one deterministic function of the data, the sums of pooling
along ``np.argsort(kind="stable")`` (the tests' reference).
"""

from __future__ import annotations

import numba
import numpy as np

from boostkit.kernels.binning import count_below, quantile_thresholds
from boostkit.kernels.sorting import N_DIGITS, SIGN, radix_sort

# Fibonacci hashing: multiplying by 2^64 / golden ratio spreads the bits of a float's pattern
# over the top bits, which pick the slot.
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
# sort_pool_ties deals the examples into 2^16 buckets by their keys' top bits (sign, exponent
# and 4 bits of the mantissa: a bucket's examples then fit in cache), then each bucket into
# up to 2^16 sub-buckets; a sub-bucket of at most _INSERTION_SEGMENT is insertion sorted.
_TOP_BITS = 16
_SUB_BITS = 16
_INSERTION_SEGMENT = 32


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
def split_weights(weights, is_pos, pos, neg):
    """The weights of each class, ``pos = weights * is_pos`` and ``neg = weights - pos`` (the
    bits of numpy's two passes), written in one pass (Wilbur et al. 2005, section 7: Cmass's
    centroids and naive Bayes' counts weigh each class by D_t)."""
    for i in range(weights.shape[0]):
        p = weights[i] * is_pos[i]
        pos[i] = p
        neg[i] = weights[i] - p


@numba.njit(cache=True, nogil=True)
def _move(keys, weights, targets, src, out_keys, out_weights, out_targets, dst):
    out_keys[dst] = keys[src]
    out_weights[dst] = weights[src]
    out_targets[dst] = targets[src]


@numba.njit(cache=True, nogil=True)
def _insertion_sort_carried(keys, weights, targets, lo, hi):
    """Insertion sort of ``keys[lo:hi]``, equal keys in their order, ``weights`` and
    ``targets`` moved alongside; a key not below the one before it is not moved at all."""
    for j in range(lo + 1, hi):
        k = keys[j]
        if keys[j - 1] <= k:
            continue
        w, t = weights[j], targets[j]
        i = j - 1
        while i >= lo and keys[i] > k:  # strict: equal keys keep their order
            _move(keys, weights, targets, i, keys, weights, targets, i + 1)
            i -= 1
        keys[i + 1], weights[i + 1], targets[i + 1] = k, w, t


@numba.njit(cache=True, nogil=True)
def _sort_segment(keys, weights, targets, lo, hi):
    """``keys[lo:hi]`` sorted, equal keys in their order, with ``weights`` and ``targets``
    moved alongside: an insertion sort when short, else a radix sort of the keys (by their
    indices) and one gather."""
    if hi - lo <= _INSERTION_SEGMENT:
        _insertion_sort_carried(keys, weights, targets, lo, hi)
        return
    m = hi - lo
    sorted_keys, order = radix_sort(keys[lo:hi].copy(), np.arange(m), np.empty(m, dtype=np.uint64),
                                    np.empty(m, dtype=np.int64), N_DIGITS)
    w_segment, t_segment = weights[lo:hi].copy(), targets[lo:hi].copy()
    for j in range(m):
        keys[lo + j] = sorted_keys[j]
        weights[lo + j] = w_segment[order[j]]
        targets[lo + j] = t_segment[order[j]]


@numba.njit(cache=True, nogil=True)
def sort_pool_ties(scores, weights, targets, keys, bucket_keys, bucket_weights, bucket_targets,
                   out_scores, out_weights, out_means):
    """Pooling of ties along the stable sort of ``scores`` (finite), the same N points bit for
    bit, with the sort done here and the weights and targets carried through it, so that the
    pooling reads them in order instead of gathering them along an index.

    The sort is an MSD radix sort of the scores' keys (``boostkit.kernels.sorting.flip_keys``,
    -0.0 taken as +0.0): one pass deals (key, weight, target) into buckets by the key's top
    :data:`_TOP_BITS` bits, in the examples' order; each bucket is then dealt by its next
    log2(size) bits into sub-buckets of about one example each, which an insertion sort (or,
    when long, a radix sort) finishes while the bucket is in cache, and is pooled at once.
    Every step keeps equal keys in their order, so ties are summed in the examples' order.
    ``keys``, ``bucket_keys`` (uint64), ``bucket_weights`` and ``bucket_targets`` (float64) are
    scratch as long as ``scores``; the ``out_*`` arrays are at least as long. Returns N.
    """
    n = scores.shape[0]
    bits = scores.view(np.uint64)
    top_shift = np.uint64(64 - _TOP_BITS)
    starts = np.zeros((1 << _TOP_BITS) + 1, dtype=np.int64)
    zero_bits = np.uint64(0)  # the first zero of positive weight, as pooling along a sort keeps
    zero_seen = False
    for i in range(n):
        k = bits[i]
        if scores[i] == 0.0:
            k = np.uint64(0)
            if not zero_seen and weights[i] > 0.0:
                zero_bits = bits[i]
                zero_seen = True
        k = ~k if k & SIGN else k | SIGN  # flip_keys of one key
        keys[i] = k
        starts[(k >> top_shift) + 1] += 1
    largest = 0
    for b in range(1 << _TOP_BITS):
        largest = max(largest, starts[b + 1])
        starts[b + 1] += starts[b]
    ends = starts[:-1].copy()  # the next free slot of each bucket while dealing
    for i in range(n):
        b = keys[i] >> top_shift
        _move(keys, weights, targets, i, bucket_keys, bucket_weights, bucket_targets, ends[b])
        ends[b] += 1
    sub_keys = np.empty(largest, dtype=np.uint64)
    sub_weights = np.empty(largest)
    sub_targets = np.empty(largest)
    sub_ends = np.empty((1 << _SUB_BITS) + 1, dtype=np.int64)
    out_bits = out_scores.view(np.uint64)
    n_out = 0
    current = np.uint64(0)
    total_w = 0.0
    total_wp = 0.0
    for b in range(1 << _TOP_BITS):
        lo = starts[b]
        m = starts[b + 1] - lo
        if m == 0:
            continue
        sub_bits = 1
        while (1 << sub_bits) < m and sub_bits < _SUB_BITS:
            sub_bits += 1
        sub_shift = np.uint64(64 - _TOP_BITS - sub_bits)
        sub_mask = np.uint64((1 << sub_bits) - 1)
        sub_ends[: (1 << sub_bits) + 1] = 0
        for j in range(lo, lo + m):
            sub_ends[((bucket_keys[j] >> sub_shift) & sub_mask) + 1] += 1
        crowd = 0  # the most examples in one sub-bucket
        for d in range(1 << sub_bits):
            crowd = max(crowd, sub_ends[d + 1])
            sub_ends[d + 1] += sub_ends[d]
        for j in range(lo, lo + m):
            d = (bucket_keys[j] >> sub_shift) & sub_mask
            _move(bucket_keys, bucket_weights, bucket_targets, j, sub_keys, sub_weights,
                  sub_targets, sub_ends[d])
            sub_ends[d] += 1
        if crowd <= _INSERTION_SEGMENT:
            # One insertion sort of the bucket: keys of different sub-buckets are in order
            # already, so each moves only within its own, and most are not moved at all. A
            # branch per sub-bucket (whether it holds two keys or more) instead mispredicts a
            # quarter of the time, over twice as many sub-buckets as keys (0.83x to 0.87x the
            # time of the whole kernel at 10^6 and 10^7 distinct scores).
            _insertion_sort_carried(sub_keys, sub_weights, sub_targets, 0, m)
        else:
            sub_start = 0  # sub-bucket d now ends at sub_ends[d]
            for d in range(1 << sub_bits):
                if sub_ends[d] - sub_start > 1:
                    _sort_segment(sub_keys, sub_weights, sub_targets, sub_start, sub_ends[d])
                sub_start = sub_ends[d]
        for j in range(m):
            w = sub_weights[j]
            if w <= 0.0:
                continue
            k = sub_keys[j]
            if n_out > 0 and k == current:  # equal keys, equal scores
                total_w += w
                total_wp += w * sub_targets[j]
            else:
                if n_out > 0:
                    out_weights[n_out - 1] = total_w
                    out_means[n_out - 1] = total_wp / total_w
                # unflip_keys of one key; 0.0 and -0.0 share one key
                out_bits[n_out] = zero_bits if k == SIGN else (k ^ SIGN if k & SIGN else ~k)
                current = k
                total_w = w
                total_wp = w * sub_targets[j]
                n_out += 1
    if n_out > 0:
        out_weights[n_out - 1] = total_w
        out_means[n_out - 1] = total_wp / total_w
    return n_out


@numba.njit(cache=True, nogil=True)
def pool_ties_hashed(scores, bits, weights, targets, max_points, out_scores, out_weights,
                     out_means):
    """Pooling of ties without a sort, for scores with at most ``max_points`` distinct values.

    One pass over the examples in their order: an open-addressing hash table keyed by the
    score's bit pattern (``bits``, ``scores`` viewed as int64; 0.0 and -0.0 hash alike) gives
    each distinct score of positive weight its point, whose weight and weighted target are
    summed in the order of the examples, as pooling along a stable sort sums them. Writes the N points in
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
    """The Pool Adjacent Violators algorithm exactly as Wilbur et al. 2005, section 2.1 gives it.

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
    return pav_pools_scratch(means, weights, pool_starts, pool_values,
                             np.empty(3 * n, dtype=np.int64), np.empty(n))


@numba.njit(cache=True, nogil=True)
def pav_pools_scratch(means, weights, pool_starts, pool_values, links, sums):
    """:func:`pav_pools` (the same pools and values, bit for bit) in the caller's scratch:
    ``links`` (int64, at least 3N: the two queues, then the intervals' forward and backward
    pointers) and ``sums`` (float64, at least N: the pooled weighted targets), while
    ``pool_starts`` holds each interval's first point and ``pool_values`` its pooled weight
    until the pools are read out.

    For millions of points the caller's arrays are worth it: numpy backs large arrays with huge
    pages, which are first touched far faster than memory allocated inside a kernel. The first
    pass, over every point in order, is one scan of the inputs that writes only the intervals
    it leaves (a point is read as an interval of its own where the paper initialises one).

    The intervals the first pass leaves are numbered in order, and the pointers, sums and queue
    entries of the later passes are those numbers, not the intervals' first points: the same
    pointers in the same order (the numbering is increasing), so the same poolings and sums,
    over arrays as long as the intervals instead of the points. At 10^6 points leaving 151 000
    intervals the later passes went from 15 to 2.5 ms: their scattered reads of six arrays of
    8 MB missed every cache.
    """
    n = means.shape[0]
    start = pool_starts
    sum_w = pool_values
    sum_wp = sums
    # An entry enters a queue only for an interval that grew (in the first pass by at least one
    # point, later by pooling), and the entries of a pass are at most those of the pass before:
    # each queue holds at most N / 2 entries.
    half = n // 2
    queue = links[:half]
    next_queue = links[half: 2 * half]
    # The first pass: every interval in order, each pooled with its successors while they are
    # adjacent violators. Its successors are single points not yet examined, so their sums are
    # read from the inputs, and only the intervals it leaves are written: interval t begins at
    # point start[t], and its pointers are t + 1 and t - 1 until a pooling moves them.
    next_length = 0
    t = 0
    k = 0
    while k < n:
        total_w = weights[k]
        total_wp = weights[k] * means[k]
        j = k + 1
        while j < n:
            w = weights[j]
            wp = w * means[j]
            if total_wp * w < wp * total_w:  # mean(k) < mean(j): no violation
                break
            total_w += w
            total_wp += wp
            j += 1
        start[t] = k
        sum_w[t] = total_w
        sum_wp[t] = total_wp
        if j > k + 1 and t > 0:
            queue[next_length] = t - 1
            next_length += 1
        t += 1
        k = j
    m = t  # intervals; m stands for the paper's "no next interval"
    forward = links[n: n + m]
    backward = links[n + m: n + 2 * m]
    for t in range(m):
        forward[t] = t + 1
        backward[t] = t - 1
    queue_length = next_length
    while queue_length > 0:
        marker = 0
        next_length = 0
        for position in range(queue_length):
            k = queue[position]
            pooled = False
            if marker <= k:
                while forward[k] != m:
                    j = forward[k]
                    # mean(k) >= mean(j), cross-multiplied (all weights are positive).
                    if sum_wp[k] * sum_w[j] < sum_wp[j] * sum_w[k]:
                        break
                    sum_w[k] += sum_w[j]
                    sum_wp[k] += sum_wp[j]
                    u = forward[j]
                    forward[k] = u
                    if u < m:
                        backward[u] = k
                    marker = u
                    pooled = True
            if pooled and backward[k] >= 0:
                next_queue[next_length] = backward[k]
                next_length += 1
        queue, next_queue = next_queue, queue
        queue_length = next_length
    # Read the pools out in place: pool p is written at index p <= t, the interval it begins
    # with, after that interval's first point and sums are read.
    n_pools = 0
    t = 0
    while t < m:
        following = forward[t]
        first = start[t]
        value = sum_wp[t] / sum_w[t]
        pool_starts[n_pools] = first
        pool_values[n_pools] = value
        n_pools += 1
        t = following
    pool_starts[n_pools] = n
    return n_pools


@numba.njit(cache=True, nogil=True)
def interpolate_points(points, values, s, linear, out):
    """Extend a function known on increasing ``points`` to any ``s`` (Wilbur et al. 2005,
    section 2.2).

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
def pav_bins(wpos, wneg, linear, out):
    """p per bin of an ordered partition by PAV over its bins (Wilbur et al. 2005, section 5,
    eq. 39): bin b holds the weight ``wpos[b]`` of positive and ``wneg[b]`` of negative examples.
    The bins that hold weight are the points of :func:`pav_pools`, at their bin index, with weight
    ``wpos + wneg`` and target ``wpos / (wpos + wneg)``; a bin without weight gets its value by
    :func:`interpolate_points` over the bin index (``linear`` or midpoint). Writes p into ``out``
    (as long as ``wpos``) and returns the number of bins that hold weight; with none, 0 and ``out``
    untouched."""
    n_bins = wpos.shape[0]
    occupied = np.empty(n_bins)
    means = np.empty(n_bins)
    weights = np.empty(n_bins)
    k = 0
    for b in range(n_bins):
        total = wpos[b] + wneg[b]
        if total > 0.0:
            occupied[k] = b
            means[k] = wpos[b] / total
            weights[k] = total
            k += 1
    if k == 0:
        return 0
    pool_starts = np.empty(k + 1, dtype=np.int64)
    pool_values = np.empty(k)
    n_pools = pav_pools(means[:k], weights[:k], pool_starts, pool_values)
    fitted = out if k == n_bins else np.empty(k)
    for j in range(n_pools):
        fitted[pool_starts[j]: pool_starts[j + 1]] = pool_values[j]
    if k < n_bins:
        interpolate_points(occupied[:k], fitted, np.arange(n_bins).astype(np.float64), linear, out)
    return k


# Buckets per threshold in the lookup table of bin_class_sums: a score's bucket, one multiply
# away, leaves a handful of thresholds at most to compare with where the bins are evenly spread.
_BUCKETS_PER_THRESHOLD = 8
# At most this many thresholds in one bucket are compared with a score one by one (see _bin_of).
_COMPARED_THRESHOLDS = 8

# Values per bucket of sort_finite (on average): most buckets then hold zero to three values,
# which insertion sort orders at once; larger ones (a heavy tail's crowd) go to np.sort first.
# quantile_neighbours sorts its buckets of at most _INSERTION_SORT values by _rank_sort.
_VALUES_PER_BUCKET = 1
_INSERTION_SORT = 32
# Values per bucket of quantile_neighbours, which sorts only ~2 max_bins buckets: fewer buckets
# to count and scan, each still sorted at once.
_VALUES_PER_SELECTED_BUCKET = 4


@numba.njit(cache=True, nogil=True, inline="always")
def _bucket(x, low, scale, n_buckets):
    """The bucket of ``x`` among ``n_buckets`` equal slices from ``low`` (``scale`` slices per
    unit), clipped to the first and last. Non-decreasing in x (every step rounds monotonically),
    so x < y whenever x's bucket is below y's; -inf and NaN go to the first bucket, +inf to the
    last."""
    u = (x - low) * scale
    if u >= n_buckets - 1:
        return n_buckets - 1
    if u > 0.0:
        return int(u)
    return 0


@numba.njit(cache=True, nogil=True)
def _bucket_scale(low, high, n_buckets):
    """Slices per unit for ``n_buckets`` equal buckets over [low, high]; 0 (every value in the
    first bucket) when that range is empty or overflows."""
    width = high - low
    scale = n_buckets / width if width > 0.0 else 0.0
    return scale if 0.0 < scale < np.inf else 0.0


@numba.njit(cache=True, nogil=True)
def _bucket_starts(values, values_per_bucket):
    """``(m, buckets, starts)``: the number m of values of ``values`` that are not NaN, the
    bucket ``buckets[i]`` of each among about m / ``values_per_bucket`` equal-width buckets
    between their smallest and largest finite value (infinities into the end buckets), and
    where each bucket begins in their bucket order: bucket b at ``starts[b]:starts[b + 1]``."""
    low = np.inf
    high = -np.inf
    m = 0
    for i in range(values.shape[0]):
        x = values[i]
        m += x == x
        # No branch on NaN, which fails both comparisons: the loop runs at a compare per value.
        low = x if x < low else low
        high = x if x > high else high
    if low == -np.inf or high == np.inf:  # the range of the finite values only
        low = np.inf
        high = -np.inf
        for i in range(values.shape[0]):
            x = values[i]
            if x - x == 0.0:  # finite
                low = min(low, x)
                high = max(high, x)
    n_buckets = m // values_per_bucket + 1
    scale = _bucket_scale(low, high, n_buckets)
    buckets = np.empty(values.shape[0], dtype=np.int32)
    starts = np.zeros(n_buckets + 1, dtype=np.int64)
    for i in range(values.shape[0]):
        x = values[i]
        if x == x:
            b = _bucket(x, low, scale, n_buckets)
            buckets[i] = b
            starts[b + 1] += 1
    for b in range(n_buckets):
        starts[b + 1] += starts[b]
    return m, buckets, starts


@numba.njit(cache=True, nogil=True)
def _deal(values, buckets, starts, chosen, out):
    """Write the values of the ``chosen`` buckets into ``out`` at their bucket's place
    (:func:`_bucket_starts`), in no order inside a bucket. -0.0 is written as +0.0, the value
    it equals. ``out`` needs one slot more than the values when a bucket is not chosen."""
    # No branch on the bucket (chosen or not is as unpredictable as the value): the values of
    # the buckets not chosen are all written to the last slot, which stays in cache.
    spare = out.shape[0] - 1
    fill = np.empty(starts.shape[0] - 1, dtype=np.int64)
    for b in range(fill.shape[0]):
        fill[b] = starts[b] if chosen[b] else spare
    for i in range(values.shape[0]):
        x = values[i]
        if x == x:
            b = buckets[i]
            out[fill[b]] = x + 0.0  # -0.0 + 0.0 is +0.0
            fill[b] += chosen[b]


@numba.njit(cache=True, nogil=True)
def _insertion_sort(values, lo, hi):
    """Sort ``values[lo:hi]`` in place, moving each value only past larger ones before it."""
    for j in range(lo + 1, hi):
        x = values[j]
        k = j
        while k > lo and values[k - 1] > x:
            values[k] = values[k - 1]
            k -= 1
        values[k] = x


@numba.njit(cache=True, nogil=True)
def _rank_sort(values, lo, hi, scratch):
    """Sort ``values[lo:hi]`` (not NaN, at most ``scratch``'s length) in place by placing
    each value at its rank: the values below it, and the equal ones before it. Quadratic, but
    its comparisons are summed, not branched on, so a short run of unpredictable values sorts
    with no mispredicted branch (an insertion sort mispredicts about once per value)."""
    m = hi - lo
    scratch[:m] = values[lo:hi]
    for i in range(m):
        x = scratch[i]
        rank = 0
        for j in range(m):
            rank += scratch[j] < x
        for j in range(i):
            rank += scratch[j] == x
        values[lo + rank] = x


@numba.njit(cache=True, nogil=True)
def _least_first(values, lo, hi):
    """Swap the least of ``values[lo:hi]`` (not NaN, at least one) to ``values[lo]``."""
    least = lo
    for j in range(lo + 1, hi):
        least = j if values[j] < values[least] else least
    values[lo], values[least] = values[least], values[lo]


@numba.njit(cache=True, nogil=True)
def sort_finite(values, out):
    """Sort the values of ``values`` that are not NaN into ``out``; returns their number m.

    A bucket sort: ``values`` are dealt into about m equal-width buckets between their
    smallest and largest finite value (infinities into the end buckets), then every bucket is
    sorted (a crowded one by ``np.sort``, the others by one insertion pass over all). O(m) for
    scores of a smooth distribution, never worse than one sort of a crowded bucket plus 32
    moves per value; it keeps no rows, unlike the engine's radix sort of a column
    (``boostkit.kernels.binning.sort_column``). -0.0 comes out as +0.0, the value it equals, as
    from the engine's sort.
    """
    m, buckets, starts = _bucket_starts(values, _VALUES_PER_BUCKET)
    n_buckets = starts.shape[0] - 1
    _deal(values, buckets, starts, np.ones(n_buckets, dtype=np.bool_), out)
    for b in range(n_buckets):
        if starts[b + 1] - starts[b] > _INSERTION_SORT:
            out[starts[b]:starts[b + 1]].sort()
    # One insertion sort of the whole: values of different buckets are in order already, so
    # each value moves only within its bucket.
    _insertion_sort(out, 0, m)
    return m


@numba.njit(cache=True, nogil=True)
def _cut_position(m, q, max_bins):
    """The sorted position of the value the q-th quantile cut of m values follows: the first
    whose cumulative count reaches m q / max_bins, as the engine's quantile rule counts."""
    return int(np.ceil((m * q) / max_bins)) - 1


@numba.njit(cache=True, nogil=True)
def quantile_neighbours(values, max_bins, out, cut_below):
    """The few values that decide the engine's quantile thresholds of ``values``, without
    sorting them all (Wilbur et al. 2005, section 5 bins a new hypothesis' scores every round).

    ``boostkit.kernels.binning.quantile_thresholds`` of the m values that are not NaN (every
    one placing) gives every distinct value its own bin when there are at most ``max_bins``,
    and otherwise cuts, for q = 1 .. max_bins - 1, between the distinct value v_q at the sorted
    position ceil(m q / max_bins) - 1 (the first whose cumulative count reaches
    m q / max_bins) and the next distinct value, unless v_q is the largest or was cut after
    already. Writes into ``out`` (length >= 2 ``max_bins``) the increasing distinct values that
    those thresholds lie between, all of them in the first case, and sets ``cut_below[i]``
    (same length) when a threshold lies between ``out[i]`` and ``out[i + 1]``; returns their
    number. The thresholds are then the engine's midpoints of those neighbours.

    The values are counted into equal-width buckets, and only the buckets holding a cut's
    position, each with the next occupied bucket (which holds the value after when v_q ends
    its own), are filled: the first sorted, the others with only their least value brought
    first. Equal values share a bucket, so more occupied buckets than ``max_bins`` prove more
    distinct values; with fewer, all the values are sorted (:func:`sort_finite`) and the
    distinct values counted.
    """
    sorted_values = np.empty(values.shape[0] + 1)  # a spare slot for _deal
    m, buckets, starts = _bucket_starts(values, _VALUES_PER_SELECTED_BUCKET)
    n_buckets = starts.shape[0] - 1
    occupied = 0
    for b in range(n_buckets):
        occupied += starts[b + 1] > starts[b]
    n_out = 0
    if occupied <= max_bins:
        sort_finite(values, sorted_values)
        n_distinct = 0
        for j in range(m):
            if j == 0 or sorted_values[j] != sorted_values[j - 1]:
                n_distinct += 1
        if n_distinct <= max_bins:
            for j in range(m):
                if j == 0 or sorted_values[j] != sorted_values[j - 1]:
                    out[n_out] = sorted_values[j]
                    cut_below[n_out] = True
                    n_out += 1
            if n_out > 0:
                cut_below[n_out - 1] = False
            return n_out
        # One bucket for all, sorted: every position is in place.
        starts = np.array([0, m], dtype=np.int64)
    else:
        chosen = np.zeros(n_buckets, dtype=np.bool_)
        holds_cut = np.zeros(n_buckets, dtype=np.bool_)
        picked = np.empty(2 * max_bins, dtype=np.int64)  # the chosen buckets, listed once
        n_picked = 0
        b = 0
        for q in range(1, max_bins):
            j = _cut_position(m, q, max_bins)
            if starts[b + 1] > j and chosen[b]:
                continue
            while starts[b + 1] <= j:
                b += 1
            if not chosen[b]:
                picked[n_picked] = b
                n_picked += 1
            chosen[b] = True
            holds_cut[b] = True
            following = b + 1
            while following < n_buckets and starts[following + 1] == starts[following]:
                following += 1
            if following < n_buckets and not chosen[following]:
                picked[n_picked] = following
                n_picked += 1
                chosen[following] = True
        _deal(values, buckets, starts, chosen, sorted_values)
        scratch = np.empty(_INSERTION_SORT)
        for t in range(n_picked):
            b = picked[t]
            if not holds_cut[b]:  # only the bucket after a cut's: its least value is read
                _least_first(sorted_values, starts[b], starts[b + 1])
            elif starts[b + 1] - starts[b] > _INSERTION_SORT:
                sorted_values[starts[b]:starts[b + 1]].sort()
            else:
                _rank_sort(sorted_values, starts[b], starts[b + 1], scratch)
    b = 0
    cut = False  # a cut made already, after the value last_cut
    last_cut = 0.0
    for q in range(1, max_bins):
        j = _cut_position(m, q, max_bins)
        while starts[b + 1] <= j:
            b += 1
        v = sorted_values[j]
        if cut and v == last_cut:
            continue
        # The next distinct value: later in v's bucket, else the least of the next occupied one.
        k = j + 1
        while k < starts[b + 1] and sorted_values[k] == v:
            k += 1
        if k == m:
            break  # v is the largest value: no cut, now or for a later q
        if n_out == 0 or out[n_out - 1] != v:
            out[n_out] = v
            n_out += 1
        cut_below[n_out - 1] = True
        cut = True
        last_cut = v
        out[n_out] = sorted_values[k]
        cut_below[n_out] = False
        n_out += 1
    return n_out


@numba.njit(cache=True, nogil=True)
def _edge_table(thresholds, low, scale, n_buckets):
    """``(below, padded, widest)`` for finding the bin of a score by its bucket among
    ``n_buckets`` (:func:`_bucket` with ``low`` and ``scale``): ``below[b]``, the number of
    ``thresholds`` in buckets before b (all below any score of bucket b; those of later buckets
    are all above it); ``widest``, the most thresholds in one bucket; ``padded``, the
    thresholds followed by ``widest`` infinities (:func:`_bin_of`)."""
    n_thresholds = thresholds.shape[0]
    below = np.zeros(n_buckets + 1, dtype=np.int64)
    for j in range(n_thresholds):
        below[_bucket(thresholds[j], low, scale, n_buckets) + 1] += 1
    widest = 0
    for b in range(n_buckets):
        widest = max(widest, below[b + 1])
        below[b + 1] += below[b]
    padded = np.full(n_thresholds + widest, np.inf)
    padded[:n_thresholds] = thresholds
    return below, padded, widest


@numba.njit(cache=True, nogil=True, inline="always")
def _bin_of(x, b, below, padded, widest):
    """The number of thresholds strictly below ``x`` (not NaN) of bucket ``b``
    (:func:`_edge_table`): those of earlier buckets, plus a comparison with each of the
    ``widest`` thresholds from there on. Those of later buckets, or the padding, are above x
    and add nothing, so the count needs no search and the loop no data-dependent branch (a
    score's bin is as unpredictable as the score); a search when buckets are crowded."""
    lo = below[b]
    if widest > _COMPARED_THRESHOLDS:
        return count_below(padded, lo, below[b + 1], x)
    cell = lo
    for j in range(widest):
        cell += padded[lo + j] < x
    return cell


@numba.njit(cache=True, nogil=True)
def bin_class_sums(scores, thresholds, weights, is_pos, cells, sums):
    """Bin the scores and sum the weight of each class per bin, in one pass (Wilbur et al. 2005,
    section 5).

    ``cells[i]`` receives the number of ``thresholds`` (increasing) strictly below
    ``scores[i]`` (bin b holds t_{b-1} < s <= t_b; NaN goes to bin 0), and ``sums[b, c]``
    (``(len(thresholds) + 1, 2)``, zeroed by the caller) the weight of the examples of bin b with
    ``is_pos == c``, added in the order of the examples. A score's bin is found without a search
    of all the thresholds: a table of equal-width buckets over the thresholds' range gives the
    thresholds below its bucket, and only those inside its bucket are searched.
    """
    n_thresholds = thresholds.shape[0]
    n_buckets = 1
    low = 0.0
    scale = 0.0
    if n_thresholds > 0:
        n_buckets = _BUCKETS_PER_THRESHOLD * n_thresholds
        low = thresholds[0]
        scale = _bucket_scale(low, thresholds[n_thresholds - 1], n_buckets)
    below, padded, widest = _edge_table(thresholds, low, scale, n_buckets)
    for i in range(scores.shape[0]):
        x = scores[i]
        cell = 0
        if x == x:
            cell = _bin_of(x, _bucket(x, low, scale, n_buckets), below, padded, widest)
        cells[i] = cell
        sums[cell, is_pos[i]] += weights[i]


@numba.njit(cache=True, nogil=True)
def _thresholds_of_neighbours(neighbours, cut_below, k, out):
    """The engine's thresholds between the ``k`` neighbours of :func:`quantile_neighbours`
    (``quantile_thresholds`` of them, every one its own bin: the midpoint of each two) where
    ``cut_below`` marks a cut, written into ``out``; returns their number."""
    between = np.empty(max(k - 1, 0))
    quantile_thresholds(neighbours[:k], np.arange(k), np.ones(k, dtype=np.bool_), max(k, 2),
                        np.empty(k), np.empty(k, dtype=np.int64), between)
    n_out = 0
    for j in range(k - 1):
        if cut_below[j]:
            out[n_out] = between[j]
            n_out += 1
    return n_out


@numba.njit(cache=True, nogil=True)
def quantile_edges(values, max_bins, out):
    """``boostkit.kernels.binning.quantile_thresholds`` of the values of ``values`` that are not
    NaN (every one placing, at most ``max_bins`` bins), from :func:`quantile_neighbours`: no
    sort of all of them. Writes the thresholds into ``out`` (length >= ``max_bins`` - 1) and
    returns their number."""
    neighbours = np.empty(2 * max_bins)
    cut_below = np.empty(2 * max_bins, dtype=np.bool_)
    k = quantile_neighbours(values, max_bins, neighbours, cut_below)
    return _thresholds_of_neighbours(neighbours, cut_below, k, out)


@numba.njit(cache=True, nogil=True)
def partition_scores(sample, max_bins, scores, weights, is_pos, thresholds, cells, sums):
    """:func:`quantile_edges` of ``sample`` into ``thresholds`` (length >= ``max_bins`` - 1),
    then :func:`bin_class_sums` of ``scores`` on them into ``cells`` and ``sums``
    (``(max_bins, 2)``, zeroed by the caller): a new hypothesis' partition and the class weights
    of its bins in one call (Wilbur et al. 2005, section 5). Returns the number of thresholds."""
    n_thresholds = quantile_edges(sample, max_bins, thresholds)
    bin_class_sums(scores, thresholds[:n_thresholds], weights, is_pos, cells, sums)
    return n_thresholds

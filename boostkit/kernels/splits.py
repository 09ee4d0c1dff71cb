"""The candidate splits of binned data with missing values and categorical columns, in one pass.

:func:`boostkit.splits.best_binned_split` scores every candidate of every feature with one call
of the partition loss; this kernel lists them. A candidate is a (left, right) pair of class sums
over the bins of one feature, the missing-value bin's sums on the side its direction names:

* numeric feature f, cut after bin b: left = bins <= b, right = bins > b (values only);
* categorical feature f, ordering o, prefix length p: left = the first p categories of
  ``orders[row, o]``, right = the remaining sorted categories plus the rare ones.

Left sides are prefix sums and right sides suffix sums, so a light side is exact rather than the
difference of two large totals (as :func:`boostkit.kernels.histogram.threshold_pair_sums`).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _emit(neg, pos, k, left, right, i, miss, direction):
    # Candidate k's sides, ``left[i]`` and ``right[i]``, with the missing bin's sums added to the
    # right (direction 0) or the left (1). Inlined in numba's IR: a call passing arrays, or a
    # view, costs reference counting (atomic updates, 30 ns a candidate).
    for l in range(left.shape[1]):
        if direction == 0:
            neg[k, 0, l] = left[i, l, 0]
            pos[k, 0, l] = left[i, l, 1]
            neg[k, 1, l] = right[i, l, 0] + miss[l, 0]
            pos[k, 1, l] = right[i, l, 1] + miss[l, 1]
        else:
            neg[k, 0, l] = left[i, l, 0] + miss[l, 0]
            pos[k, 0, l] = left[i, l, 1] + miss[l, 1]
            neg[k, 1, l] = right[i, l, 0]
            pos[k, 1, l] = right[i, l, 1]


@numba.njit(cache=True, nogil=True)
def binned_split_candidates(hist, counts, missing_bin, n_bins, categorical, orders, at_least,
                            at_most, neg, pos, meta):
    """Fill ``neg``, ``pos`` and ``meta`` with every valid split of every feature; return how many.

    ``hist`` is ``(d, B, C, 2)`` float64 class sums per bin, ``counts`` ``(d, B)`` int64 examples
    per bin, ``missing_bin`` the missing-value bin's code (at least every ``n_bins[f]``) or -1,
    ``n_bins`` ``(d,)`` int64 bins of values per feature (codes ``0 .. n_bins[f] - 1``; the bins
    past them are empty), ``categorical`` ``(d,)`` bool, ``orders`` ``(k, n_orders, K)`` int64:
    row r orders the categories of the r-th categorical feature, those with at least
    ``at_most`` examples first. Every side must hold at least ``at_least`` examples (missing
    values counted on theirs).

    Candidate j (in the order of the ties: feature; then cut, or ordering then prefix; then the
    missing bin right before left) gets its ``(2, C)`` (left, right) sums ``neg[j]``/``pos[j]``
    and ``meta[:, j]``: the feature, the bin cut after or the prefix length, the ordering (-1 for
    a numeric cut) and the direction (0: missing values right, 1: left). A cut after an empty
    bin repeats the cut before it and is left out; missing values go left only where the feature
    has some; categories with fewer than ``at_most`` examples always go right. The arrays must
    hold every candidate: ``2 (B - 1)`` per numeric feature, ``2 n_orders n_bins[f]`` per
    categorical one.
    """
    d, n_hist, c, _ = hist.shape
    miss = np.zeros((c, 2))
    rare = np.zeros((c, 2))
    prefix = np.empty((n_hist, c, 2))  # prefix[i], suffix[i]: the sides of cut or prefix i
    suffix = np.empty((n_hist, c, 2))
    k = 0
    row = -1  # the current categorical feature's row of orders
    for f in range(d):
        n_miss = 0
        if missing_bin >= 0:
            n_miss = counts[f, missing_bin]
            for l in range(c):
                miss[l, 0] = hist[f, missing_bin, l, 0]
                miss[l, 1] = hist[f, missing_bin, l, 1]
        n_values = n_bins[f]
        if not categorical[f]:
            # Numeric: the cuts after bins 0 .. n_cuts - 1 (the bins past a feature's values are
            # empty, and adding their zeros would change no sum).
            n_cuts = min(n_values, n_hist - 1)
            for l in range(c):
                left_neg = 0.0
                left_pos = 0.0
                for b in range(n_cuts):
                    left_neg += hist[f, b, l, 0]
                    left_pos += hist[f, b, l, 1]
                    prefix[b, l, 0] = left_neg
                    prefix[b, l, 1] = left_pos
                right_neg = 0.0
                right_pos = 0.0
                for b in range(n_values - 1, n_cuts - 1, -1):
                    right_neg += hist[f, b, l, 0]
                    right_pos += hist[f, b, l, 1]
                for b in range(n_cuts - 1, -1, -1):
                    suffix[b, l, 0] = right_neg
                    suffix[b, l, 1] = right_pos
                    right_neg += hist[f, b, l, 0]
                    right_pos += hist[f, b, l, 1]
            n_total = 0
            for b in range(n_values):
                n_total += counts[f, b]
            n_left = 0
            for b in range(n_cuts):
                if counts[f, b] == 0:
                    continue
                n_left += counts[f, b]
                n_right = n_total - n_left
                if n_left >= at_least and n_right + n_miss >= at_least:
                    _emit(neg, pos, k, prefix, suffix, b, miss, 0)
                    meta[0, k], meta[1, k], meta[2, k], meta[3, k] = f, b, -1, 0
                    k += 1
                if n_miss > 0 and n_left + n_miss >= at_least and n_right >= at_least:
                    _emit(neg, pos, k, prefix, suffix, b, miss, 1)
                    meta[0, k], meta[1, k], meta[2, k], meta[3, k] = f, b, -1, 1
                    k += 1
            continue
        row += 1
        # Categorical: the sorted categories (at least at_most examples) and the rare ones.
        n_sorted = 0
        n_rare = 0
        rare[:, :] = 0.0
        for b in range(n_values):
            if counts[f, b] >= at_most:
                n_sorted += 1
            elif counts[f, b] > 0:
                n_rare += counts[f, b]
                for l in range(c):
                    rare[l, 0] += hist[f, b, l, 0]
                    rare[l, 1] += hist[f, b, l, 1]
        if n_sorted == 0:
            continue
        for o in range(orders.shape[1]):
            for l in range(c):
                left_neg = 0.0
                left_pos = 0.0
                for i in range(n_sorted):
                    left_neg += hist[f, orders[row, o, i], l, 0]
                    left_pos += hist[f, orders[row, o, i], l, 1]
                    prefix[i, l, 0] = left_neg
                    prefix[i, l, 1] = left_pos
                # Suffix sums of the sorted categories, then the rare ones added.
                right_neg = 0.0
                right_pos = 0.0
                for i in range(n_sorted - 1, -1, -1):
                    suffix[i, l, 0] = right_neg + rare[l, 0]
                    suffix[i, l, 1] = right_pos + rare[l, 1]
                    right_neg += hist[f, orders[row, o, i], l, 0]
                    right_pos += hist[f, orders[row, o, i], l, 1]
            n_prefix = 0
            for i in range(n_sorted):
                n_prefix += counts[f, orders[row, o, i]]
            n_left = 0
            for i in range(n_sorted):
                n_left += counts[f, orders[row, o, i]]
                n_right = n_prefix - n_left + n_rare
                if n_left >= at_least and n_right + n_miss >= at_least:
                    _emit(neg, pos, k, prefix, suffix, i, miss, 0)
                    meta[0, k], meta[1, k], meta[2, k], meta[3, k] = f, i + 1, o, 0
                    k += 1
                if n_miss > 0 and n_left + n_miss >= at_least and n_right >= at_least:
                    _emit(neg, pos, k, prefix, suffix, i, miss, 1)
                    meta[0, k], meta[1, k], meta[2, k], meta[3, k] = f, i + 1, o, 1
                    k += 1
    return k


@numba.njit(cache=True, nogil=True)
def first_near_minimum(scores, valid, tolerance):
    """The flat index of the first valid score within ``tolerance`` (relative) of the lowest,
    or -1 when nothing is valid.

    ``scores`` and ``valid`` (bool) are 2-D of one shape. Exactly what
    ``s = np.where(valid, scores, inf); argmax(s <= s.min() + tolerance * abs(s.min()))`` gives,
    without the temporaries: a NaN among the valid scores makes the minimum NaN, so nothing
    compares true and the answer is 0, as numpy's; so does a minimum of inf, where the masked
    cuts (inf) tie too. Each row's lowest valid score (:func:`_row_lowest`), then
    :func:`_first_near_lowest`, which scans only the first row that reaches the bound: at
    10 x 254 scores 0.45-0.75x the time of a pass for the lowest and one up to the answer
    (the former form), though slower with a few hundred scores or fewer (0.18 -> 0.42 us at
    100 x 1, 14 -> 52 ns at 2 x 3).
    """
    lowest = np.empty(scores.shape[0])
    for f in range(scores.shape[0]):
        lowest[f] = _row_lowest(scores, valid, f)
    return _first_near_lowest(scores, valid, tolerance, lowest)


@numba.njit(cache=True, nogil=True, inline="always")
def _row_lowest(scores, valid, f):
    # The lowest of row f's valid scores: inf if none, NaN if one is NaN. Four running minima by
    # selects, so that no comparison waits on the one before (the NaNs noted apart). Inlined,
    # indexing the 2-D arrays: a row's views cost reference counting (~25 ns a row).
    cols = scores.shape[1]
    low0 = low1 = low2 = low3 = np.inf
    nan = False
    b = 0
    while b + 4 <= cols:
        x0 = scores[f, b] if valid[f, b] else np.inf
        x1 = scores[f, b + 1] if valid[f, b + 1] else np.inf
        x2 = scores[f, b + 2] if valid[f, b + 2] else np.inf
        x3 = scores[f, b + 3] if valid[f, b + 3] else np.inf
        nan |= (x0 != x0) | (x1 != x1) | (x2 != x2) | (x3 != x3)
        low0 = x0 if x0 < low0 else low0
        low1 = x1 if x1 < low1 else low1
        low2 = x2 if x2 < low2 else low2
        low3 = x3 if x3 < low3 else low3
        b += 4
    for b in range(b, cols):
        x0 = scores[f, b] if valid[f, b] else np.inf
        nan |= x0 != x0
        low0 = x0 if x0 < low0 else low0
    low0 = low1 if low1 < low0 else low0
    low2 = low3 if low3 < low2 else low2
    return np.nan if nan else (low2 if low2 < low0 else low0)


@numba.njit(cache=True, nogil=True)
def two_cell_error(wpos, wneg, out):
    """``out[j] = min(wpos[2j], wneg[2j]) + min(wpos[2j+1], wneg[2j+1])``: the weighted error of
    :func:`boostkit.criteria.weighted_error` for two cells, over flattened ``(..., 2)`` sums.

    The same two minima (NaN if either value is, as ``np.minimum``) and the same addition as
    numpy's, without its two temporaries and strided views.
    """
    for j in range(out.shape[0]):
        p0, n0 = wpos[2 * j], wneg[2 * j]
        p1, n1 = wpos[2 * j + 1], wneg[2 * j + 1]
        left = p0 if (p0 <= n0 or p0 != p0) else n0
        right = p1 if (p1 <= n1 or p1 != p1) else n1
        out[j] = left + right


@numba.njit(cache=True, nogil=True)
def _error_cuts_of_four(hist, f, valid, right, scores, lowest):
    # Features f..f+3: suffix sums into ``right``, then prefix sums, each cut's error and each
    # feature's lowest valid error. Eight running sums at once: a chain of dependent additions
    # is bound by their latency.
    m = hist.shape[1] - 1
    h0, h1, h2, h3 = hist[f], hist[f + 1], hist[f + 2], hist[f + 3]
    r0, r1, r2, r3 = right[0], right[1], right[2], right[3]
    sn0 = sn1 = sn2 = sn3 = sp0 = sp1 = sp2 = sp3 = 0.0
    for k in range(m):
        b = m - k
        sn0 += h0[b, 0]
        sp0 += h0[b, 1]
        sn1 += h1[b, 0]
        sp1 += h1[b, 1]
        sn2 += h2[b, 0]
        sp2 += h2[b, 1]
        sn3 += h3[b, 0]
        sp3 += h3[b, 1]
        r0[b - 1, 0], r0[b - 1, 1], r1[b - 1, 0], r1[b - 1, 1] = sn0, sp0, sn1, sp1
        r2[b - 1, 0], r2[b - 1, 1], r3[b - 1, 0], r3[b - 1, 1] = sn2, sp2, sn3, sp3
    s0, s1, s2, s3 = scores[f], scores[f + 1], scores[f + 2], scores[f + 3]
    v0, v1, v2, v3 = valid[f], valid[f + 1], valid[f + 2], valid[f + 3]
    sn0 = sn1 = sn2 = sn3 = sp0 = sp1 = sp2 = sp3 = 0.0
    low0 = low1 = low2 = low3 = np.inf
    for b in range(m):
        sn0 += h0[b, 0]
        sp0 += h0[b, 1]
        sn1 += h1[b, 0]
        sp1 += h1[b, 1]
        sn2 += h2[b, 0]
        sp2 += h2[b, 1]
        sn3 += h3[b, 0]
        sp3 += h3[b, 1]
        e0 = _min_or_nan(sp0, sn0) + _min_or_nan(r0[b, 1], r0[b, 0])
        e1 = _min_or_nan(sp1, sn1) + _min_or_nan(r1[b, 1], r1[b, 0])
        e2 = _min_or_nan(sp2, sn2) + _min_or_nan(r2[b, 1], r2[b, 0])
        e3 = _min_or_nan(sp3, sn3) + _min_or_nan(r3[b, 1], r3[b, 0])
        s0[b], s1[b], s2[b], s3[b] = e0, e1, e2, e3
        low0 = _min_or_nan(e0 if v0[b] else np.inf, low0)
        low1 = _min_or_nan(e1 if v1[b] else np.inf, low1)
        low2 = _min_or_nan(e2 if v2[b] else np.inf, low2)
        low3 = _min_or_nan(e3 if v3[b] else np.inf, low3)
    lowest[f], lowest[f + 1], lowest[f + 2], lowest[f + 3] = low0, low1, low2, low3


@numba.njit(cache=True, nogil=True, inline="always")
def _min_or_nan(x, y):
    # np.minimum(x, y): NaN if either is.
    return x if (x <= y or x != x) else y


@numba.njit(cache=True, nogil=True, inline="always")
def cut_sides(hist, f, c, sides):
    """Write the sides of the cut after bin c of feature f to ``sides`` (row 0 the negatives'
    weight left and right, row 1 the positives'), summed in the order of
    :func:`boostkit.kernels.histogram.threshold_class_sums` (left upwards, right downwards)."""
    m = hist.shape[1] - 1
    ln = lp = rn = rp = 0.0
    for b in range(c + 1):
        ln += hist[f, b, 0]
        lp += hist[f, b, 1]
    for b in range(m, c, -1):
        rn += hist[f, b, 0]
        rp += hist[f, b, 1]
    sides[0, 0], sides[0, 1], sides[1, 0], sides[1, 1] = ln, rn, lp, rp


@numba.njit(cache=True, nogil=True)
def lowest_error_cut(hist, valid, tolerance, scores, sides):
    """The cut of lowest weighted error of a ``(d, B, 2)`` class histogram, in one call: the
    flat index ``f * (B - 1) + b`` of the cut after bin b of feature f, or -1 when no cut is
    ``valid`` (``(d, B - 1)`` bool).

    Bit for bit what :func:`boostkit.kernels.histogram.threshold_class_sums`, the weighted
    error :func:`two_cell_error` of their two cells and :func:`first_near_minimum` (ties within
    ``tolerance``, relative, to the lowest index) give: each side summed in the same order,
    without the four ``(d, B - 1, 2)`` arrays of sides, and the selection from each feature's
    lowest error. ``scores`` (``(d, B - 1)``) receives every cut's error; ``sides`` (``(2, 2)``)
    the chosen cut's (left, right) weight of negatives (row 0) and of positives (row 1).
    """
    d, n_bins, _ = hist.shape
    m = n_bins - 1
    right = np.empty((4, m, 2))
    lowest = np.empty(d)  # each feature's lowest valid error (inf: none; NaN: a NaN)
    # A range's index, not a counter from the constant 0: numba would first type the call with
    # f the literal 0 and compile _error_cuts_of_four twice (cold start, docs/performance.md).
    for group in range(d // 4):
        _error_cuts_of_four(hist, 4 * group, valid, right, scores, lowest)
    for f in range(d - d % 4, d):
        r = right[0]
        sn = sp = 0.0
        for b in range(m, 0, -1):
            sn += hist[f, b, 0]
            sp += hist[f, b, 1]
            r[b - 1, 0], r[b - 1, 1] = sn, sp
        sn = sp = 0.0
        low = np.inf
        for b in range(m):
            sn += hist[f, b, 0]
            sp += hist[f, b, 1]
            e = _min_or_nan(sp, sn) + _min_or_nan(r[b, 1], r[b, 0])
            scores[f, b] = e
            low = _min_or_nan(e if valid[f, b] else np.inf, low)
        lowest[f] = low
    k = _first_near_lowest(scores, valid, tolerance, lowest)
    if k >= 0:
        cut_sides(hist, k // m, k % m, sides)
    return k


# No nogil: the call takes the GIL (numba warns of a nogil function with an object-mode block).
@numba.njit(cache=True)
def lowest_error_cut_when_reached(hist, valid, tolerance, scores, sides):
    """:func:`lowest_error_cut`, for compiled code that seldom reaches it (a faster search's
    fallback on NaN or inf weights): called through Python (numba's object mode), so it is
    compiled when first called, not with every kernel that may call it (~1.6 s of a cold start,
    docs/performance.md). A call costs a few microseconds more, and takes the GIL."""
    with numba.objmode(k="int64"):
        k = lowest_error_cut(hist, valid, tolerance, scores, sides)
    return k


@numba.njit(cache=True, nogil=True)
def pair_z_scores(hist, scores):
    """Fill ``scores`` (``(d, B - 1)``) with AdaBoost.MH's normaliser
    Z = 2 sum_{side, l} sqrt(W+_{side,l} W-_{side,l}) of the cut after every bin of a
    ``(d, B, C, 2)`` pair histogram (Schapire & Singer 1999, sections 7-8; Wilbur et al. 2005,
    eq. 12): :func:`boostkit.criteria.partition_loss`'s pair ``"z"`` of the sides
    :func:`boostkit.kernels.histogram.threshold_pair_sums` gives (left prefix sums, right
    suffix sums, in its order), without their two ``(d, B - 1, 2, C)`` arrays or numpy's
    temporaries. The classes' square roots are added left side first, class by class: the
    same terms as numpy's reduction, summed in another order (a few ulps apart)."""
    d, n_bins, n_classes, _ = hist.shape
    m = n_bins - 1
    right = np.empty((m, n_classes))  # sqrt(W+ W-) of each class on the right of every cut
    left = np.empty((n_classes, 2))
    for f in range(d):
        h = hist[f]
        left[:] = 0.0  # the right sides' running sums first
        for b in range(m, 0, -1):
            for l in range(n_classes):
                left[l, 0] += h[b, l, 0]
                left[l, 1] += h[b, l, 1]
                right[b - 1, l] = np.sqrt(left[l, 1] * left[l, 0])
        left[:] = 0.0
        for b in range(m):
            z = 0.0
            for l in range(n_classes):
                left[l, 0] += h[b, l, 0]
                left[l, 1] += h[b, l, 1]
                z += np.sqrt(left[l, 1] * left[l, 0])
            for l in range(n_classes):
                z += right[b, l]
            scores[f, b] = 2.0 * z


@numba.njit(cache=True, nogil=True)
def _first_near_lowest(scores, valid, tolerance, lowest):
    # first_near_minimum's answer, given each row's lowest valid score: only the first row that
    # reaches the bound is scanned.
    rows, cols = scores.shape
    any_valid = False
    for f in range(rows):
        for b in range(cols):
            if valid[f, b]:
                any_valid = True
                break
        if any_valid:
            break
    if not any_valid:
        return -1
    overall = np.inf
    for f in range(rows):
        if np.isnan(lowest[f]):  # first_near_minimum stops at a NaN: the answer is 0
            return 0
        if lowest[f] < overall:
            overall = lowest[f]
    bound = overall + tolerance * abs(overall)
    for f in range(rows):
        if lowest[f] <= bound or overall == np.inf:
            for b in range(cols):
                if (scores[f, b] if valid[f, b] else np.inf) <= bound:
                    return f * cols + b
    return 0

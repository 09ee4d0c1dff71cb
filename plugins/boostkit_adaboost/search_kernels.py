"""The stump's compiled searches under Z, the squared error and the weighted error, scoring
exactly only the cuts that can win.

The search scoring every cut sums each cut's sides as
:func:`boostkit.kernels.histogram.threshold_class_sums` does (left upwards, right downwards) and
takes the lowest loss within :data:`boostkit.splits.TIE_TOLERANCE` (relative), the lowest
feature, then the lowest cut (:func:`boostkit.kernels.splits.first_near_minimum`). Its cost is a
square root (Z = 2 sum_j sqrt(W+_j W-_j), Wilbur et al. 2005, eq. 12) or a division (the
squared error sum_j W_j - (W+_j - W-_j)^2 / W_j of a per-cell mean of y, FHT Algorithm 4) per
cell and cut. Here most cuts are shown to lose by a test of products alone, and only the others
are scored, with the same sides and the same arithmetic: the same cut is chosen.

* Z: with a = W+_0 W-_0, b = W+_1 W-_1 and a bound t, sqrt(a) + sqrt(b) > t exactly when
  a + b >= t^2 or 4 a b > (t^2 - a - b)^2;
* squared error: with W_j the cells' weights and d_j = W+_j - W-_j, the loss exceeds T exactly
  when (W_0 + W_1 - T) W_0 W_1 > d_0^2 W_1 + d_1^2 W_0.

One pass per four features (two, or one, for the last) sums the left sides (a pass's stores
bound it);
the test takes each right side as the feature's total less the left, within
delta = 4 B eps W of the suffix sum (W the feature's weight, B the bins). The test's bound is the
best loss known plus margins that cover delta and rounding many times over, so a cut set aside
loses to the best by more than the tie tolerance: for Z, t = (1 + 2e-6) best / 2 + 1.01 eta
with eta = sqrt(2 delta W) (|sqrt(x) - sqrt(y)| <= sqrt(|x - y|)); for the squared error,
T = (1 + 1e-9) best + 8 delta + 1e-12 W (a cell's loss 4 W+ W- / W moves by at most 4 per unit
of either weight while both stay >= 0; it can be ~0, hence the absolute part). The first bound
of a group of features comes from every 32nd cut of each, scored on the approximate sides plus
the same margins. The cuts that pass are scored with their right sides summed downwards, as the
search scoring every cut sums them. Outside weights of 1e-100..1e100 every cut is scored.

The weighted error (:func:`lowest_weighted_error_cut`, the cut of
:func:`boostkit.kernels.splits.lowest_error_cut`) needs no test of products: the same left sums
give each feature's lowest error on the approximate sides (a vectorised minimum of integer keys
in the errors' order) and a margin, and only the features whose margin reaches the tie bound
are scored.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from boostkit.kernels.splits import cut_sides, lowest_error_cut_when_reached
from boostkit.splits import TIE_TOLERANCE

_EPS = np.finfo(np.float64).eps
# Where the tests' products neither overflow nor leave the normal numbers: outside, no cut is
# set aside.
_SMALLEST = 1e-100
_LARGEST = 1e100
# Every how many cuts a group's features are first scored, for the test's first bound.
_SAMPLE_STRIDE = 32


@numba.njit(cache=True, nogil=True, inline="always")
def _prefix_of_four(hist, f, left):
    # left[j, b] = (negatives, positives) left of the cut after bin b of feature f + j, summed
    # upwards: each pair adjacent, as the histogram's (stored at a better pace than (4, 2, m)).
    # Eight running sums at once: one chain of dependent additions is bound by their latency.
    m = hist.shape[1] - 1
    h0, h1, h2, h3 = hist[f], hist[f + 1], hist[f + 2], hist[f + 3]
    s0, s1, s2, s3 = left[0], left[1], left[2], left[3]
    sn0 = sn1 = sn2 = sn3 = sp0 = sp1 = sp2 = sp3 = 0.0
    for b in range(m):
        sn0 += h0[b, 0]
        sp0 += h0[b, 1]
        sn1 += h1[b, 0]
        sp1 += h1[b, 1]
        sn2 += h2[b, 0]
        sp2 += h2[b, 1]
        sn3 += h3[b, 0]
        sp3 += h3[b, 1]
        s0[b, 0], s0[b, 1], s1[b, 0], s1[b, 1] = sn0, sp0, sn1, sp1
        s2[b, 0], s2[b, 1], s3[b, 0], s3[b, 1] = sn2, sp2, sn3, sp3


@numba.njit(cache=True, nogil=True, inline="always")
def _prefix_of_two(hist, f, left):
    # _prefix_of_four's sums of features f and f + 1, into left[0] and left[1].
    m = hist.shape[1] - 1
    h0, h1, s0, s1 = hist[f], hist[f + 1], left[0], left[1]
    sn0 = sn1 = sp0 = sp1 = 0.0
    for b in range(m):
        sn0 += h0[b, 0]
        sp0 += h0[b, 1]
        sn1 += h1[b, 0]
        sp1 += h1[b, 1]
        s0[b, 0], s0[b, 1], s1[b, 0], s1[b, 1] = sn0, sp0, sn1, sp1


@numba.njit(cache=True, nogil=True, inline="always")
def _prefix_of_one(hist, f, left):
    # _prefix_of_four's sums of feature f alone, into left[0].
    m = hist.shape[1] - 1
    h, s = hist[f], left[0]
    sn = sp = 0.0
    for b in range(m):
        sn += h[b, 0]
        sp += h[b, 1]
        s[b, 0], s[b, 1] = sn, sp


@numba.njit(cache=True, nogil=True, inline="always")
def _z_loss(ln, lp, rn, rp):
    # boostkit.criteria.z_loss of a cut, as the search scoring every cut computes it.
    return 2.0 * (math.sqrt(lp * ln) + math.sqrt(rp * rn))


@numba.njit(cache=True, nogil=True, inline="always")
def _z_upper(ln, lp, rn, rp, delta, total):
    # At least the Z of a cut whose right side (rn, rp >= 0) is within delta of its sum.
    eta = math.sqrt(2.0 * delta * total)
    return (_z_loss(ln, lp, rn, rp) + 2.0 * eta) * (1.0 + 1e-12)


@numba.njit(cache=True, nogil=True, inline="always")
def _z_limit(best, delta, total):
    # t^2 of the test (module docstring): inf, nothing set aside, outside the safe range.
    eta = math.sqrt(2.0 * delta * total)
    half = 0.5 * best * (1.0 + 2e-6) + 1.01 * eta
    limit = half * half
    return limit if _SMALLEST < limit < _LARGEST else np.inf


@numba.njit(cache=True, nogil=True, inline="always")
def _z_loses(ln, lp, rn, rp, limit):
    # sqrt(a) + sqrt(b) > sqrt(limit), from products: a + b at the limit (within 1e-8 of it,
    # where the square below loses its precision), or 4 a b > (limit - a - b)^2. Bitwise
    # operators, no branch: the compiler tests several cuts at once.
    a = lp * ln
    b = rp * rn
    rest = limit - (a + b)
    return (rest <= 1e-8 * limit) | (4.0 * a * b > rest * rest)


@numba.njit(cache=True, nogil=True, inline="always")
def _squared_cell(n, p):
    # The squared error a cell's weighted mean of y leaves: W - (W+ - W-) c, c = (W+ - W-) / W
    # (0 for an empty cell), as gentle-step's partition loss.
    total = p + n
    value = (p - n) / total if total > 0.0 else 0.0
    return total - (p - n) * value


@numba.njit(cache=True, nogil=True, inline="always")
def _squared_loss(ln, lp, rn, rp):
    return _squared_cell(ln, lp) + _squared_cell(rn, rp)


@numba.njit(cache=True, nogil=True, inline="always")
def _squared_upper(ln, lp, rn, rp, delta, total):
    # At least the squared error of a cut whose right side (rn, rp >= 0) is within delta of
    # its sum.
    return _squared_loss(ln, lp, rn, rp) + 8.0 * delta + 8.0 * _EPS * total


@numba.njit(cache=True, nogil=True, inline="always")
def _squared_limit(best, delta, total):
    # T of the test (module docstring): inf, nothing set aside, outside the safe range.
    if not (_SMALLEST < total < _LARGEST) or not best < np.inf:
        return np.inf
    return best * (1.0 + 1e-9) + 8.0 * delta + 1e-12 * total


@numba.njit(cache=True, nogil=True, inline="always")
def _squared_loses(ln, lp, rn, rp, limit):
    # W_0 + W_1 - d_0^2 / W_0 - d_1^2 / W_1 > T times W_0 W_1: only where the right side's
    # weights are >= 0 (the sum is, a difference may not be) and W_1 > 0; an empty left cell
    # gives false.
    left = lp + ln
    right = rp + rn
    dl = lp - ln
    dr = rp - rn
    return ((rn >= 0.0) & (rp >= 0.0) & (right > 0.0)
            & ((left + right - limit) * left * right > dl * dl * right + dr * dr * left))


@numba.njit(cache=True, nogil=True, inline="always")
def _scale(hist, f, left, j, n_bins):
    # Feature f's class totals, its weight W and delta, the bound on |total - left - right|.
    m = n_bins - 1
    total_neg = left[j, m - 1, 0] + hist[f, m, 0]
    total_pos = left[j, m - 1, 1] + hist[f, m, 1]
    total = total_neg + total_pos
    return total_neg, total_pos, total, 4.0 * n_bins * _EPS * total


@numba.njit(cache=True, nogil=True, inline="always")
def _sample(hist, f, left, j, valid, best, upper):
    # The best known bound after scoring feature f's every 32nd valid cut on approximate sides.
    n_bins = hist.shape[1]
    m = n_bins - 1
    total_neg, total_pos, total, delta = _scale(hist, f, left, j, n_bins)
    for b in range(_SAMPLE_STRIDE // 2, m, _SAMPLE_STRIDE):
        ln, lp = left[j, b, 0], left[j, b, 1]
        rn = total_neg - ln
        rp = total_pos - lp
        if valid[f, b] and rn >= 0.0 and rp >= 0.0:
            s = upper(ln, lp, rn, rp, delta, total)
            if s < best:
                best = s
    return best


@numba.njit(cache=True, nogil=True, inline="always")
def _scan_feature(hist, f, left, j, valid, best, flags, found, n_found, loss, limit_of, loses):
    # Feature f's cuts that the test cannot set aside, scored with their exact right sides and
    # appended to ``found`` (flat index, loss); the best loss after them.
    n_bins = hist.shape[1]
    m = n_bins - 1
    total_neg, total_pos, total, delta = _scale(hist, f, left, j, n_bins)
    limit = limit_of(best, delta, total)
    n_left = 0
    if limit < np.inf:
        for b in range(m):
            ln, lp = left[j, b, 0], left[j, b, 1]
            flag = valid[f, b] & ~loses(ln, lp, total_neg - ln, total_pos - lp, limit)
            flags[b] = flag
            n_left += flag
    else:
        for b in range(m):
            flags[b] = valid[f, b]
            n_left += valid[f, b]
    if n_left > 0:
        lowest = 0
        while not flags[lowest]:
            lowest += 1
        rn = rp = 0.0
        for c in range(m - 1, lowest - 1, -1):  # the right sides summed downwards, exactly
            rn += hist[f, c + 1, 0]
            rp += hist[f, c + 1, 1]
            if flags[c]:
                ln, lp = left[j, c, 0], left[j, c, 1]
                s = loss(ln, lp, rn, rp)
                found[n_found, 0] = f * m + c
                found[n_found, 1] = s
                found[n_found, 2], found[n_found, 3] = ln, rn
                found[n_found, 4], found[n_found, 5] = lp, rp
                n_found += 1
                if s < best:
                    best = s
    return best, n_found


@numba.njit(cache=True, nogil=True, inline="always")
def _scan_group(hist, f, first, count, left, valid, best, flags, found, n_found, loss, upper,
                limit_of, loses):
    # Features f + first .. f + count - 1, their left sums in left[first:count]: a first bound
    # from their samples, then each feature's scan.
    for j in range(first, count):
        best = _sample(hist, f + j, left, j, valid, best, upper)
    for j in range(first, count):
        best, n_found = _scan_feature(hist, f + j, left, j, valid, best, flags, found, n_found,
                                      loss, limit_of, loses)
    return best, n_found


@numba.njit(cache=True, nogil=True, inline="always")
def _first_near_lowest_found(found, n_found):
    # first_near_minimum over the scored cuts (each cut set aside loses by more than the
    # tolerance): the row in ``found`` of the lowest index within the tolerance of the lowest
    # loss; -2 for the index 0 (a NaN loss, or a lowest loss of inf); -1 when none was scored.
    if n_found == 0:
        return -1
    lowest = np.inf
    for i in range(n_found):
        s = found[i, 1]
        if np.isnan(s):
            return -2
        lowest = min(lowest, s)
    if lowest == np.inf:
        return -2
    bound = lowest + TIE_TOLERANCE * abs(lowest)
    row = -1
    for i in range(n_found):
        if found[i, 1] <= bound and (row < 0 or found[i, 0] < found[row, 0]):
            row = i
    return row


@numba.njit(cache=True, nogil=True, inline="always")
def _lowest_loss_cut(hist, valid, sides, loss, upper, limit_of, loses):
    # The flat index of the chosen cut (-1: none valid), its sides written.
    d, n_bins, _ = hist.shape
    m = n_bins - 1
    if m == 0:  # one bin, no cut (and no last left sum for _scale to read)
        return -1
    left = np.empty((4, m, 2))
    flags = np.empty(m, dtype=np.bool_)
    found = np.empty((d * m, 6))  # index, loss, sides (ln, rn, lp, rp) of every cut scored
    n_found = 0
    best = np.inf
    # Groups of four features, then the rest: three as a group ending at feature d - 1 (the
    # features it shares with the group before are not scanned again), two as a pair, one
    # alone. A pass's stores bound it: a pair's take half a group's, as do a lone feature's
    # two chains of additions. One call site of the inlined _scan_group: four compiled four
    # copies of it (a cold compile of lowest_z_cut 10.9 s against 3.6, the same speed).
    done = 0
    while done < d:
        if d - done >= 4:
            f, first = done, 0
            _prefix_of_four(hist, f, left)
            done += 4
            count = 4
        elif d - done == 3 and d > 4:
            f, first = d - 4, 1
            _prefix_of_four(hist, f, left)
            done = d
            count = 4
        elif d - done >= 2:
            f, first = done, 0
            _prefix_of_two(hist, f, left)
            done += 2
            count = 2
        else:
            f, first = done, 0
            _prefix_of_one(hist, f, left)
            done += 1
            count = 1
        best, n_found = _scan_group(hist, f, first, count, left, valid, best, flags, found,
                                    n_found, loss, upper, limit_of, loses)
    row = _first_near_lowest_found(found, n_found)
    if row == -1:
        return -1
    if row == -2:  # the cut after feature 0's first bin, as first_near_minimum answers
        cut_sides(hist, 0, 0, sides)
        return 0
    sides[0, 0], sides[0, 1] = found[row, 2], found[row, 3]
    sides[1, 0], sides[1, 1] = found[row, 4], found[row, 5]
    return int(found[row, 0])


@numba.njit(cache=True, nogil=True)
def lowest_z_cut(hist, valid, sides):
    """The flat index ``f * (B - 1) + b`` of the cut of lowest Z = 2 sum_j sqrt(W+_j W-_j) of a
    ``(d, B, 2)`` class histogram (``[..., 0]`` negatives) among the ``valid`` ``(d, B - 1)``
    cuts, -1 when none is: what :func:`boostkit.splits.best_split` chooses under
    :func:`boostkit.criteria.z_loss`, scoring only the cuts that can win. The chosen cut's
    sides go to ``sides`` (as :func:`boostkit.kernels.splits.cut_sides`)."""
    return _lowest_loss_cut(hist, valid, sides, _z_loss, _z_upper, _z_limit, _z_loses)


@numba.njit(cache=True, nogil=True)
def lowest_squared_error_cut(hist, valid, sides):
    """:func:`lowest_z_cut` under the weighted squared error of a per-cell mean of y,
    sum_j W_j - (W+_j - W-_j)^2 / W_j (FHT Algorithm 4; gentle-step's partition loss)."""
    return _lowest_loss_cut(hist, valid, sides, _squared_loss, _squared_upper, _squared_limit,
                            _squared_loses)


# -- The weighted error: each feature's lowest on approximate sides, then the features that can
#    hold the chosen cut scored exactly ---------------------------------------------------------


@numba.njit(cache=True, nogil=True, inline="always")
def _approximate_error(sn, sp, total_neg, total_pos):
    # The weighted error of a cut, its left sums given and its right side the totals' rest
    # (min(W+, W-) on each side, as boostkit.criteria.weighted_error).
    return min(sp, sn) + min(total_pos - sp, total_neg - sn)


@numba.njit(cache=True, nogil=True, inline="always")
def _error_margin(feature_neg, feature_pos, total_neg, total_pos, n_bins):
    # At least |approximate - exact error| of every cut of a feature whose bins sum (upwards) to
    # feature_neg, feature_pos, the totals being feature 0's (lowest_weighted_error_cut): twice
    # the totals' difference, and 8 (B + 1) times the rounding of one addition,
    # relative (eps) and, among subnormal numbers, absolute. NaN or inf: a weight is.
    gap = abs(total_neg - feature_neg) + abs(total_pos - feature_pos)
    return 2.0 * gap + 8.0 * (n_bins + 1) * (_EPS * (feature_neg + feature_pos) + 5e-324)


@numba.njit(cache=True, nogil=True, inline="always")
def _prefix_sums(hist, f, count, left):
    # The left sums of features f .. f + count - 1 (count 4, 2 or 1) into left[:count].
    if count == 4:
        _prefix_of_four(hist, f, left)
    elif count == 2:
        _prefix_of_two(hist, f, left)
    else:
        _prefix_of_one(hist, f, left)


#: The bits of a float64 below its sign: what _order_key flips for a negative number.
_BELOW_SIGN = np.int64(0x7FFFFFFFFFFFFFFF)
#: _order_key(inf).
_INF_KEY = np.int64(0x7FF0000000000000)


@numba.njit(cache=True, nogil=True, inline="always")
def _order_key(x):
    # An int64 in the order of the float64 x (-0.0 just below +0.0; its own inverse): integer
    # minima are vector instructions, where a float minimum that keeps NaN's meaning is a chain
    # of compares and selects.
    bits = np.float64(x).view(np.int64)
    return bits ^ ((bits >> 63) & _BELOW_SIGN)


@numba.njit(cache=True, nogil=True, inline="always")
def _from_order_key(key):
    # The float64 whose _order_key is key.
    return np.int64(_order_key(np.int64(key).view(np.float64))).view(np.float64)


@numba.njit(cache=True, nogil=True, inline="always")
def _lowest_valid(errors, is_valid):
    # min(errors[b] for the valid b), inf if none: a loop the compiler vectorises (_order_key).
    low = _INF_KEY
    for b in range(errors.shape[0]):
        key = _order_key(errors[b])
        low = min(low, key if is_valid[b] else _INF_KEY)
    return _from_order_key(low)


@numba.njit(cache=True, nogil=True, inline="always")
def _lowest_errors(hist, f, first, count, left, valid, total_neg, total_pos, lowest, margin):
    # lowest[f + j] and margin[f + j] of features f + first .. f + count - 1, their left sums in
    # left[first:count]: the lowest valid approximate error over the feature's cuts, one loop
    # the compiler vectorises (order keys, _order_key), and its margin.
    n_bins = hist.shape[1]
    m = n_bins - 1
    for j in range(first, count):
        sums, is_valid = left[j], valid[f + j]
        low = _INF_KEY
        for b in range(m):
            key = _order_key(_approximate_error(sums[b, 0], sums[b, 1], total_neg, total_pos))
            low = min(low, key if is_valid[b] else _INF_KEY)
        lowest[f + j] = _from_order_key(low)
        feature_neg, feature_pos, _, _ = _scale(hist, f + j, left, j, n_bins)
        margin[f + j] = _error_margin(feature_neg, feature_pos, total_neg, total_pos, n_bins)


@numba.njit(cache=True, nogil=True, inline="always")
def _exact_errors(hist, f, valid, scores, left, right):
    # Feature f's errors into scores[f], as lowest_error_cut computes them (right sides summed
    # downwards, then left sides upwards, min(W+, W-) on each: its _min_or_nan on numbers),
    # each cut's sides kept in left and right; the lowest valid error.
    m = hist.shape[1] - 1
    sn = sp = 0.0
    for b in range(m, 0, -1):
        sn += hist[f, b, 0]
        sp += hist[f, b, 1]
        right[b - 1, 0], right[b - 1, 1] = sn, sp
    sn = sp = 0.0
    for b in range(m):
        sn += hist[f, b, 0]
        sp += hist[f, b, 1]
        left[b, 0], left[b, 1] = sn, sp
        rn, rp = right[b, 0], right[b, 1]
        scores[f, b] = (sp if sp <= sn else sn) + (rp if rp <= rn else rn)
    return _lowest_valid(scores[f], valid[f])


@numba.njit(cache=True, nogil=True)
def lowest_weighted_error_cut(hist, valid, scores, sides):
    """:func:`boostkit.kernels.splits.lowest_error_cut` (ties within
    :data:`boostkit.splits.TIE_TOLERANCE`): the same cut and the same ``sides``, bit for bit,
    scoring exactly only the features that can hold it. ``scores`` (``(d, B - 1)``) is scratch.

    One pass, four features at a time, sums their bins upwards (the left sides), and one loop per
    feature, which the compiler vectorises, finds its lowest error with each cut's right side
    the class totals' rest (feature 0's bins' sums) instead of its suffix sum, and a margin
    M_f bounding the difference of every cut's two errors: twice the difference of the feature's
    totals and feature 0's, plus 8 (B + 1) times one addition's rounding of the feature's weight
    (each of a prefix sum, a suffix sum and a total errs by at most B roundings of it). A
    feature's exact lowest error is then within M_f of its approximate one, so the lowest overall
    is at most U = min_f (low_f + M_f), the tie bound at most U + tolerance |U|, and only the
    features with low_f - M_f under that can hold a cut within it: those (usually one) are
    scored with :func:`~boostkit.kernels.splits.lowest_error_cut`'s sums, and the first cut
    within the bound of their lowest exact error is chosen, as
    :func:`boostkit.kernels.splits.first_near_minimum` does.
    A weight that is NaN or inf (a margin that is not finite), or no valid cut, is left to
    :func:`~boostkit.kernels.splits.lowest_error_cut` over every feature, called through
    :func:`~boostkit.kernels.splits.lowest_error_cut_when_reached` (compiled only when first
    reached). Weights are >= 0, as a class histogram's."""
    d, n_bins, _ = hist.shape
    m = n_bins - 1
    if m == 0:  # no cut
        return lowest_error_cut_when_reached(hist, valid, TIE_TOLERANCE, scores, sides)
    bounds = np.empty((2, d))  # each feature's lowest approximate error and its margin
    lowest, margin = bounds[0], bounds[1]
    sums = np.empty((4, m, 2))
    total_neg = total_pos = 0.0
    # Groups of four features, then the rest (the Z search's groups): each group's left sums,
    # then each feature's lowest. The totals are feature 0's, every row being in one of its bins,
    # summed upwards: its left sums of the first group and its last bin.
    f = 0
    while f < d:
        start, first, count = f, 0, min(d - f, 4)
        if count == 3:
            start, first, count = (d - 4, 1, 4) if d > 4 else (f, 0, 2)
        _prefix_sums(hist, start, count, sums)
        if f == 0:
            total_neg = sums[0, m - 1, 0] + hist[0, m, 0]
            total_pos = sums[0, m - 1, 1] + hist[0, m, 1]
        _lowest_errors(hist, start, first, count, sums, valid, total_neg, total_pos, lowest,
                       margin)
        f = start + count
    reach = np.inf  # the most the lowest exact error can be
    finite = True
    for f in range(d):
        reach = min(reach, lowest[f] + margin[f])
        finite &= np.isfinite(margin[f])
    if not (finite and reach < np.inf):
        return lowest_error_cut_when_reached(hist, valid, TIE_TOLERANCE, scores, sides)
    reach += TIE_TOLERANCE * abs(reach)  # the most the tie bound can be
    left, right = sums[0], sums[1]  # the left sums are read: the exact sides' scratch
    overall = np.inf
    kept = -1  # the feature whose sides left and right hold
    for f in range(d):
        if lowest[f] - margin[f] <= reach:
            lowest[f] = _exact_errors(hist, f, valid, scores, left, right)
            overall = min(overall, lowest[f])
            kept = f
        else:
            lowest[f] = np.inf
    bound = overall + TIE_TOLERANCE * abs(overall)
    for f in range(d):
        if lowest[f] <= bound:  # the first feature within the bound: its first such cut
            for b in range(m):
                if valid[f, b] and scores[f, b] <= bound:
                    if f == kept:  # summed as cut_sides sums them
                        sides[0, 0], sides[0, 1] = left[b, 0], right[b, 0]
                        sides[1, 0], sides[1, 1] = left[b, 1], right[b, 1]
                    else:
                        cut_sides(hist, f, b, sides)
                    return f * m + b
    return -1  # not reached: a feature scored holds the lowest exact error

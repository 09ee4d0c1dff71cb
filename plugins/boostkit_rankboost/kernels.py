"""RankBoost's hot loops: per-class score sums, and pair weights from the margins.

Plain module-level numba functions over arrays and scalars (``cache=True``). The tests keep naive
numpy references beside them (``tests/rankboost/test_rankboost_kernels.py``) and also run under
``NUMBA_DISABLE_JIT=1``.

Notation of Yoder 2011 (slides "RankBoost", "Bounds and alpha"): x0 ranges over the
examples that should be ranked *below* (negatives, the "lower" role), x1 over those ranked above
(positives, the "upper" role); D(x0, x1) is the distribution over pairs and F the running margin.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def class_score_sums(scores, weights, is_pos):
    """One pass: ``(sum_neg w h, W_neg, sum_pos w h, W_pos, min h, max h)``.

    The per-class weighted sums give RankBoost's r = sum_{x0,x1} D(x0,x1) (h(x1) - h(x0)) in O(n)
    when D factorises as v(x0) v(x1) (Yoder 2011, "r = sum_x h(x) s(x) v(x) sum_{x'} v(x')"):
    r = sum_pos w h / W_pos - sum_neg w h / W_neg. The range lets the caller check that h lies
    where the coefficient rule assumes it does without a second pass.
    """
    neg_sum = 0.0
    neg_total = 0.0
    pos_sum = 0.0
    pos_total = 0.0
    low = np.inf
    high = -np.inf
    for i in range(scores.shape[0]):
        h = scores[i]
        w = weights[i]
        if is_pos[i]:
            pos_sum += w * h
            pos_total += w
        else:
            neg_sum += w * h
            neg_total += w
        low = min(low, h)
        high = max(high, h)
    return neg_sum, neg_total, pos_sum, pos_total, low, high


@numba.njit(cache=True, nogil=True)
def bipartite_weights(margin, is_pos, d1, out):
    """Bipartite RankBoost's factorised pair distribution, as per-example weights.

    D_{t+1}(x0, x1) = D_1(x0, x1) exp(F(x0) - F(x1)) / prod_s Z_s with D_1(x0, x1) = v_1(x0) v_1(x1)
    (v_1: ``d1`` normalised within each class) factorises into v(x0) ~ v_1(x0) exp(F(x0)) over the
    negatives and v(x1) ~ v_1(x1) exp(-F(x1)) over the positives: both are d1(i) exp(-y_i F(x_i))
    normalised within the class. ``out`` receives v / 2, so each class holds half of a
    distribution over examples, and the return value is

        log sum_{x0,x1} D_1(x0,x1) exp(F(x0) - F(x1))
            = log sum_{x0} v_1(x0) e^{F(x0)} + log sum_{x1} v_1(x1) e^{-F(x1)},

    the log of prod_s Z_s, which bounds the ranking loss. Computed in log space (the largest
    exponent of each class is subtracted first), so large margins never overflow. Both classes
    need positive total ``d1``.
    """
    n = margin.shape[0]
    top = np.full(2, -np.inf)
    class_d1 = np.zeros(2)
    for i in range(n):
        if d1[i] > 0.0:
            c = is_pos[i]
            e = margin[i] if c == 0 else -margin[i]
            top[c] = max(top[c], e)
            class_d1[c] += d1[i]
    total = np.zeros(2)
    for i in range(n):
        c = is_pos[i]
        if d1[i] > 0.0:
            e = margin[i] if c == 0 else -margin[i]
            w = d1[i] * np.exp(e - top[c])
        else:
            w = 0.0
        out[i] = w
        total[c] += w
    for i in range(n):
        out[i] /= 2.0 * total[is_pos[i]]
    return (top[0] + np.log(total[0] / class_d1[0])) + (top[1] + np.log(total[1] / class_d1[1]))


# Below this total the shifted products of the fast path may have lost pairs to underflow.
_FAST_PATH_FLOOR = 1e-200


@numba.njit(cache=True, nogil=True)
def _exact_pair_weights(margin, lower, upper, d1, out):
    top = -np.inf
    for p in range(lower.shape[0]):
        top = max(top, np.log(d1[p]) + margin[lower[p]] - margin[upper[p]])
    out[:] = 0.0
    total = 0.0
    for p in range(lower.shape[0]):
        w = np.exp(np.log(d1[p]) + margin[lower[p]] - margin[upper[p]] - top)
        out[lower[p]] += w
        out[upper[p]] += w
        total += w
    out /= 2.0 * total
    return top + np.log(total)


@numba.njit(cache=True, nogil=True)
def pair_weights(margin, is_pos, lower, upper, d1, out):
    """General RankBoost over an explicit preference set, as per-row weights.

    Pair p says row ``lower[p]`` (x0, ``is_pos`` 0) should rank below row ``upper[p]`` (x1,
    ``is_pos`` 1); D_{t+1}(p) = D_1(p) exp(F(x0) - F(x1)) / prod_s Z_s (Yoder 2011, "Basic RankBoost
    algorithm", the update written from the margins), with ``d1`` = D_1 (positive, summing to 1).
    ``out[row]`` receives half of the D_{t+1}-weight of the pairs in which the row takes part:
    the lower rows then hold 1/2 and the upper rows 1/2, and RankBoost's
    r = sum_p D(p) (h(x1) - h(x0)) is the difference of their per-class weighted sums of h, as
    in the bipartite case. Returns log sum_p D_1(p) exp(F(x0) - F(x1)), the log of prod_s Z_s.

    exp(F(x0) - F(x1)) = exp(F(x0) - a) exp(b - F(x1)) exp(a - b) with a the largest margin of a
    lower row and b the smallest of an upper row: one exponential per row instead of one per
    pair, and no factor exceeds 1. If the pairs sit far below a - b (groups whose margins lie
    hundreds apart), their products could underflow; then every pair is redone in log space.
    O(rows + pairs).
    """
    n = margin.shape[0]
    shift_lower = -np.inf
    shift_upper = np.inf
    for i in range(n):
        if is_pos[i]:
            shift_upper = min(shift_upper, margin[i])
        else:
            shift_lower = max(shift_lower, margin[i])
    scale = np.empty(n)
    for i in range(n):
        scale[i] = np.exp(shift_upper - margin[i]) if is_pos[i] else np.exp(margin[i] - shift_lower)
    out[:] = 0.0
    total = 0.0
    for p in range(lower.shape[0]):
        w = d1[p] * scale[lower[p]] * scale[upper[p]]
        out[lower[p]] += w
        out[upper[p]] += w
        total += w
    if total < _FAST_PATH_FLOOR:
        return _exact_pair_weights(margin, lower, upper, d1, out)
    out /= 2.0 * total
    return (shift_lower - shift_upper) + np.log(total)

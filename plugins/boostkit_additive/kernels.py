"""LogitBoost's per-example quantities, from the margins, in single passes.

Friedman, Hastie & Tibshirani (2000), "Additive logistic regression: a statistical view of
boosting" (FHT), Algorithm 3, with p(x) = 1 / (1 + e^{-2F(x)}) (their eq. 19) and y* = (y + 1)/2:

* the working response z = (y* - p) / (p (1 - p)), which is y (1 + e^{-2yF}) written without a
  division, clipped to |z| <= z_max: FHT stabilise the response where p(1 - p) is close to 0
  (the technical-report version, FHT98 p. 18, as Friedman 2001 section 4.5 cites it), with z_max
  in [2, 4];
* w |z|, the values whose class histogram, beside that of the weights w = p (1 - p), holds every
  cut's least-squares fit of z (the weights and the potential
  sum_i D_1(i) log2(1 + e^{-2 y_i F(x_i)}) are the engine's margin loss ``logitboost``);
* the least-squares stump's search over those sums (:func:`explained_squares`,
  :func:`least_squares_cut`), and the compiled forms a round batch calls
  (:func:`least_squares_search`, :func:`response_histogram`: plain functions, compiled by
  ``boostkit.compiled.compile_form``);
* for Algorithm 6 (several classes, :mod:`boostkit_additive.multinomial`), the half log-odds of
  each class against the rest under the softmax of the class logits, on which the two quantities
  above are Algorithm 6's per class, and the pairs' arrays class by class (:func:`class_major`).

Plain module-level functions over arrays and scalars (boostkit's kernel conventions). The loops
over examples use the engine's plain-arithmetic exponential and logarithms
(``exp_nonpositive``, ``log_positive``, ``softplus``), which LLVM vectorises where the C
library's cannot be.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from boostkit.kernels.exponential import CONTRACT, exp_nonpositive
from boostkit.kernels.margin_loss import log_positive, softplus
from boostkit.kernels.two_channel import (DIRECT_ROWS, TILE_ROWS, add_two_channel_tile,
                                          two_channel_from_groups, two_channel_groups,
                                          two_channel_histogram)
from boostkit.kernels.splits import first_near_minimum


@numba.njit(cache=True, nogil=True)
def working_response(margin, y, z_max, out):
    """z_i = y_i min(1 + e^{-2 y_i F_i}, z_max): FHT Algorithm 3's (y* - p) / (p (1 - p)), clipped.

    With p = 1 / (1 + e^{-2F}): for y = +1, z = 1/p = 1 + e^{-2F}; for y = -1,
    z = -1/(1 - p) = -(1 + e^{2F}). So |z| >= 1 always, and the exponent is capped at
    ln(z_max) before exponentiating, so a margin of any size gives a finite z. ``out`` receives z.
    """
    cap = math.log(z_max)
    for i in range(margin.shape[0]):
        e = min(-2.0 * y[i] * margin[i], cap)
        out[i] = y[i] * min(1.0 + math.exp(e), z_max)


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, error_model="numpy")
def response_weights(margin, y, weights, z_max, out):
    """out_i = w_i |z_i|, with z_i the clipped working response of :func:`working_response`.

    The sum of w z over the positive examples of a cell less that over its negative ones is the
    numerator of FHT Algorithm 3's weighted least-squares fit of z: a class histogram of these
    values beside the class histogram of w holds every cut's fit. |z| = min(1 + e^{x}, z_max)
    with x = -2 y F, from e^{-|x|} (the engine's vectorisable ``exp_nonpositive``) and, where
    x > 0, its reciprocal (inf where it underflowed, which the clip takes to z_max): one SIMD
    loop, no branch, no call to the C library.
    """
    for i in range(margin.shape[0]):
        x = -2.0 * y[i] * margin[i]
        e = exp_nonpositive(-abs(x))
        grow = e if x <= 0.0 else 1.0 / e  # e^x
        out[i] = weights[i] * min(1.0 + grow, z_max)


@numba.njit(cache=True, nogil=True)
def explained_squares(wpos, wneg, n_columns, out):
    """out_r = sum_{j, l} S_rjl^2 / W_rjl over the cells j and classes l of candidate r.

    ``wpos`` and ``wneg`` are ``(m, K, 2C)``: for each of m candidate partitions, K cells and
    stacked columns, [0, C) the weight w of the positive (negative) examples per class and
    [C, 2C) their w |z|, so that W = w+ + w- and S = sum w z = (w|z|)+ - (w|z|)-. The weighted
    squared error of the per-cell least-squares fit of z is sum w z^2 - out_r (FHT Algorithm
    3, step 2(b)); a cell without weight explains nothing. ``out`` is ``(m,)``.
    """
    m, k, _ = wpos.shape
    for r in range(m):
        explained = 0.0
        for j in range(k):
            for l in range(n_columns):
                total = wpos[r, j, l] + wneg[r, j, l]
                net = wpos[r, j, n_columns + l] - wneg[r, j, n_columns + l]
                if total > 0.0:
                    explained += net * net / total
        out[r] = explained


@numba.njit(cache=True, nogil=True, inline="always")
def _side_explained(total, net):
    # S^2 / W of one side, 0 without weight: a select, so the loop over cuts stays one SIMD loop
    # (the division of a side without weight is computed and dropped, never raised).
    return net * net / total if total > 0.0 else 0.0


@numba.njit(cache=True, nogil=True, error_model="numpy")
def least_squares_cut(hist, valid, tolerance, scores, wneg, wpos):
    """The cut of least weighted squared error of z over a ``(d, B, 2, 2)`` response histogram.

    ``hist[f, b, 0]`` (C-contiguous) holds the weight w and the w |z| of the negative examples
    in bin b of feature f, ``hist[f, b, 1]`` those of the positive ones (one margin column: the
    layout of :func:`boostkit.kernels.two_channel.two_channel_histogram`). ``scores``
    (``(d, B - 1)``) receives every cut's loss, -(S_L^2 / W_L + S_R^2 / W_R) (FHT Algorithm 3, step 2(b), as
    :func:`explained_squares` scores it, from left sums added bin by bin upwards and right sums
    downwards, as :func:`boostkit.kernels.histogram.threshold_pair_sums` adds them: the same
    numbers as ``boostkit.splits.best_split`` on the stacked sums). Returns the flat index of
    the first valid cut within ``tolerance`` (relative) of the least loss
    (:func:`boostkit.kernels.splits.first_near_minimum`, best_split's rule for ties), having
    written its sides' sums into ``wneg`` and ``wpos`` (``(2, 2)``: side x [w, w|z|]), or -1
    when no cut is valid. One compiled call in place of the sides' arrays, the loss over them
    and the choice.

    Per feature, one loop adds the left sums upwards and the right sums downwards together
    (eight independent chains of additions, where one side at a time waited on four), keeping
    each cut's W and S of both sides; a second loop scores every cut from them with selects,
    which the compiler vectorises, divisions included.
    """
    d, n_bins = hist.shape[0], hist.shape[1]
    n_cuts = n_bins - 1
    sides = np.empty((4, n_cuts))  # W_L, S_L, W_R, S_R of every cut of one feature
    left_w, left_s, right_w, right_s = sides[0], sides[1], sides[2], sides[3]
    for f in range(d):
        # Flat, unsigned indices: no test for negative ones in the loop (hist C-contiguous).
        h = hist[f].reshape(4 * n_bins)
        lnw = lpw = lnv = lpv = 0.0
        rnw = rpw = rnv = rpv = 0.0
        for b in range(np.uintp(n_cuts)):
            lo = np.uintp(4) * b  # [b, class, channel] at 4 b + 2 class + channel
            lnw += h[lo]
            lnv += h[lo + np.uintp(1)]
            lpw += h[lo + np.uintp(2)]
            lpv += h[lo + np.uintp(3)]
            left_w[b] = lpw + lnw
            left_s[b] = lpv - lnv
            r = np.uintp(n_cuts) - b  # the right side of cut r - 1 starts at bin r
            ro = np.uintp(4) * r
            rnw += h[ro]
            rnv += h[ro + np.uintp(1)]
            rpw += h[ro + np.uintp(2)]
            rpv += h[ro + np.uintp(3)]
            right_w[r - np.uintp(1)] = rpw + rnw
            right_s[r - np.uintp(1)] = rpv - rnv
        row = scores[f]
        for b in range(np.uintp(n_cuts)):
            # explained_squares' terms in its order: 0, the left cell, then the right.
            row[b] = -((0.0 + _side_explained(left_w[b], left_s[b]))
                       + _side_explained(right_w[b], right_s[b]))
    k = first_near_minimum(scores, valid, tolerance)
    if k < 0:
        return k
    f, cut = k // (n_bins - 1), k % (n_bins - 1)
    h = hist[f]
    wneg[:] = 0.0
    wpos[:] = 0.0
    for b in range(cut + 1):
        for channel in range(2):
            wneg[0, channel] += h[b, 0, channel]
            wpos[0, channel] += h[b, 1, channel]
    for b in range(n_bins - 1, cut, -1):
        for channel in range(2):
            wneg[1, channel] += h[b, 0, channel]
            wpos[1, channel] += h[b, 1, channel]
    return k


def response_histogram(codes, is_pos, margin, y, weights, params, scratch, out):
    """``logit-stump``'s histogram in a round batch (signature
    :data:`boostkit.compiled.HISTOGRAM`): the class histograms of w and of w |z| (z clipped to
    ``params[0]`` = z_max) that ``logit-stump`` sums on one thread (:func:`response_weights`,
    then :func:`boostkit.kernels.two_channel.two_channel_histogram`), into ``out`` seen as
    its ``(d, B, 2, 2)``: [feature, bin, class, channel]. From
    :data:`~boostkit.kernels.two_channel.DIRECT_ROWS` examples on, w |z| of a tile of examples
    is made just before the tile is added to the histogram, so the histogram reads it, and the
    tile's w, from the cache (the same numbers: the values are the example's own)."""
    d, n = codes.shape
    both = out.reshape((d, out.shape[1], 2, 2))
    if n < DIRECT_ROWS:
        response_weights(margin, y, weights, params[0], scratch)
        two_channel_histogram(codes, weights, scratch, is_pos, both)
        return
    groups = two_channel_groups(d)
    for lo in range(0, n, TILE_ROWS):
        hi = min(lo + TILE_ROWS, n)
        response_weights(margin[lo:hi], y[lo:hi], weights[lo:hi], params[0], scratch[lo:hi])
        add_two_channel_tile(codes, weights, scratch, is_pos, groups, lo, hi)
    two_channel_from_groups(groups, both)


def least_squares_search(hist, valid, scores, sides, cell_scores, params):
    """``logit-stump``'s search in a round batch (signature :data:`boostkit.compiled.SEARCH`).

    ``hist`` is the ``(d, B, 4)`` histogram of w and of w |z| (:func:`response_histogram`), the
    ``(d, B, 2, 2)`` of :func:`least_squares_cut` ([feature, bin, class, channel]) seen flat;
    ties within ``params[1]``. Writes
    the sides' weights w (``sides``, row 0 negatives, row 1 positives) and the cell scores,
    each side's weighted mean of z (0 for a side without weight), as ``LogitStump`` makes them
    from the same sums; no valid cut: the constant stump's, every row in cell 0.
    """
    d, n_bins = hist.shape[0], hist.shape[1]
    both = hist.reshape((d, n_bins, 2, 2))
    wneg = np.zeros((2, 2))
    wpos = np.zeros((2, 2))
    k = least_squares_cut(both, valid, params[1], scores, wneg, wpos)
    if k < 0:
        for b in range(n_bins):  # feature 0's bins hold every row once
            for channel in range(2):
                wneg[0, channel] += both[0, b, 0, channel]
                wpos[0, channel] += both[0, b, 1, channel]
    for j in range(2):
        sides[0, j] = wneg[j, 0]
        sides[1, j] = wpos[j, 0]
        total = wneg[j, 0] + wpos[j, 0]
        cell_scores[j] = (wpos[j, 1] - wneg[j, 1]) / total if total > 0.0 else 0.0
    return k


@numba.njit(cache=True, nogil=True)
def class_major(pairs, out):
    """``out[l, i] = pairs[i, l]``: an ``(n, C)`` array of (example, class) pairs class by
    class, each class's examples adjacent (a binary problem of their own). One pass reading
    the pairs in order (numpy's transposed copy took 4.6x as long at 100 000 x 10)."""
    n, c = pairs.shape
    for i in range(n):
        for l in range(c):
            out[l, i] = pairs[i, l]


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, error_model="numpy")
def class_log_sigmoids(margin, out):
    """s = log sigma(2 G) = -softplus(-2 G) of every margin: the logits of the class
    probabilities the half log-odds G stand for (FHT Algorithm 6's F up to a constant per
    example). One SIMD loop over the flat arrays (the engine's vectorisable ``softplus``)."""
    for i in range(margin.shape[0]):
        out[i] = -softplus(-2.0 * margin[i])


#: Examples per tile of :func:`class_half_log_odds`: its per-example numbers (five of them) stay
#: in the first-level cache while every class is visited.
_TILE_ROWS = 256


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, error_model="numpy")
def class_half_log_odds(logits, out):
    """G_il = 1/2 log(p_il / (1 - p_il)) of the softmax p_il = e^{s_il} / sum_k e^{s_ik}.

    FHT Algorithm 6's symmetric multinomial probabilities written as the half log-odds of each
    class against the rest: the margins from which ``boostkit.model.margin_probabilities`` gives
    back sigma(2 G_il) / sum_k sigma(2 G_ik) = p_il.
    ``logits`` is ``(n, C)``, C >= 2, any row shift (a row constant cancels);
    G_il = 1/2 (s_il - log sum_{k != l} e^{s_ik}). The row's largest logit s_top is subtracted
    before exponentiating, and the top class's sum over the others is taken about the second
    largest, so however far apart the logits grow the sum neither overflows nor underflows to 0,
    and for every other class the sum 1 + sum_{k != top, l} e^{s_k - s_top} is at least 1.
    ``out`` (``(n, C)``) receives G.

    Class by class over tiles of examples, with selects for the top class and the engine's
    plain-arithmetic ``exp_nonpositive`` and ``log_positive`` (every exponent is <= 0, every
    logarithm's argument >= 1): loops over the examples that LLVM vectorises, where one example
    at a time called the C library per class (3.7 ms at 20 000 x 10 classes).
    """
    n, c = logits.shape
    s, g, scratch = _tile_arrays(c)
    for lo in range(0, n, _TILE_ROWS):
        m = min(lo + _TILE_ROWS, n) - lo
        for i in range(m):
            for l in range(c):
                s[l, i] = logits[lo + i, l]
        _tile_half_log_odds(s, g, m, scratch)
        for i in range(m):
            for l in range(c):
                out[lo + i, l] = g[l, i]


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, error_model="numpy")
def moved_half_log_odds(margin, step, scale, out):
    """:func:`class_half_log_odds` of the logits log sigma(2 G) + ``scale`` * ``step``.

    ``margin`` G and ``step`` are ``(n, C)``: the half log-odds of the softmax of the logits
    the margins stand for (:func:`class_log_sigmoids`), moved by a step of Algorithm 6 (``scale``
    1) or not (``scale`` 0: the margins normalised). The logits are made in the tile, with no
    array of their own: the same numbers as the two kernels one after the other.
    """
    n, c = margin.shape
    s, g, scratch = _tile_arrays(c)
    for lo in range(0, n, _TILE_ROWS):
        m = min(lo + _TILE_ROWS, n) - lo
        for i in range(m):
            for l in range(c):
                s[l, i] = margin[lo + i, l]
        for l in range(c):
            sl = s[l]
            for i in range(m):
                sl[i] = -softplus(-2.0 * sl[i])
        if scale != 0.0:  # unmoved (scale 0): adding 0 * step would change no logit
            for i in range(m):
                for l in range(c):
                    s[l, i] += scale * step[lo + i, l]
        _tile_half_log_odds(s, g, m, scratch)
        for i in range(m):
            for l in range(c):
                out[lo + i, l] = g[l, i]


@numba.njit(cache=True, nogil=True, inline="always")
def _tile_arrays(c):
    # A tile's logits and half log-odds, class-major (each loop runs over examples), and five
    # numbers per example (_tile_half_log_odds).
    return (np.empty((c, _TILE_ROWS)), np.empty((c, _TILE_ROWS)),
            np.empty((5, _TILE_ROWS)))


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, error_model="numpy", inline="always")
def _tile_half_log_odds(s, g, m, scratch):
    # g[l, i] = G_il of the logits s[l, i] of the tile's first m examples (class-major).
    c = s.shape[0]
    top = scratch[0]  # the top class, as a float (the selects stay one width)
    top_logit = scratch[1]
    second = scratch[2]
    near = scratch[3]  # sum_{k != top} e^{s_k - second} >= 1, then its log
    rest = scratch[4]  # sum_{k != top} e^{s_k - s_top}
    for i in range(m):
        top[i] = 0.0
        top_logit[i] = s[0, i]
        second[i] = -np.inf
        near[i] = 0.0
    for l in range(1, c):  # the first largest logit, as a strict > keeps it
        sl = s[l]
        for i in range(m):
            higher = sl[i] > top_logit[i]
            top[i] = l if higher else top[i]
            top_logit[i] = sl[i] if higher else top_logit[i]
    for l in range(c):
        sl = s[l]
        for i in range(m):
            x = sl[i] if l != top[i] else -np.inf
            second[i] = x if x > second[i] else second[i]
    for l in range(c):
        sl = s[l]
        for i in range(m):
            e = exp_nonpositive(sl[i] - second[i])
            near[i] += e if l != top[i] else 0.0
    for i in range(m):
        rest[i] = exp_nonpositive(second[i] - top_logit[i]) * near[i]
        near[i] = log_positive(near[i])
    for l in range(c):
        sl, gl = s[l], g[l]
        for i in range(m):
            x = sl[i]
            others = 1.0 + (rest[i] - exp_nonpositive(x - top_logit[i]))
            gl[i] = (0.5 * (x - second[i] - near[i]) if l == top[i]
                     else 0.5 * (x - top_logit[i] - log_positive(others)))

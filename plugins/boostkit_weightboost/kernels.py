"""Numba kernels of the WeightBoost plugin (Jin et al. 2003).

* :func:`regularized_term` (fit) and :func:`regularized_values` (predict): the input-dependent
  term c_t(x) = v_t(x) g(F_{t-1}(x)) s_t of eq. 4 / eq. 10, the same numbers at fit and at
  predict time; the fit kernel also gives the factor g and its D_1-weighted sum.
* :func:`penalized_exponential_weights` (and its parallel twin): weights proportional to
  D_1(i) exp(-y_i F(x_i) - penalty(F(x_i))), WeightBoost's eq. 7 / eq. 11 and the weight-decay
  baseline, in log space; returns log sum_i D_1(i) exp(-y_i F(x_i)), the exponential cost that
  bounds the training error (eq. 5). :func:`penalized_distribution` is the entry point.
* :func:`eq6_log_bound`: the log of eq. 6's upper bound on the exponential cost after a round.
* :func:`tree_leaves`: the leaf reached by every row in a depth-limited decision tree.
* :func:`node_histogram`, :func:`valid_cuts`, :func:`cut_entropy` (with :func:`approximate_log`):
  what the tree learner computes at every node: its class histogram and example counts, the
  cuts worth scoring, and C4.5's entropy of all of them at once, within a stated bound;
  :func:`screened_cut_entropy` scores only the cuts that a lower bound (without logarithms)
  cannot rule out, and :func:`entropy_split` is a node's whole search: the sides of every cut,
  the screen, the criterion's own value of the cuts near the lowest, and the choice.
* :func:`describes_tree`, :func:`fill_rows`, :func:`fill_split_leaves`, :func:`sibling_sums`:
  the check that a tree's links make a tree, a leaf's index written to its rows, the two
  leaves' indices written to the rows of a split whose children are both leaves, and a child's
  histogram as its parent's minus its sibling's.

The regularizer g = exp(-penalty) is chosen by an integer ``kind``: :data:`ABSOLUTE` penalty
beta |F| (WeightBoost's e^{-|beta F|}, eq. 4), :data:`LOG1P` penalty p ln(1 + beta |F|)
(g = (1 + beta |F|)^{-p}, the "inverse of polynomials" of section 5), :data:`SQUARED` penalty
beta F^2 (the weight-decay baseline, section 2).

The kernels of the factor and of the weights exponentiate with the engine's vectorisable
:func:`boostkit.kernels.exponential.exp_nonpositive`, with FMA contraction allowed (see that
module); on one machine they give the same numbers in every run, at fit and at predict time.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from boostkit.kernels import blocks
from boostkit.kernels.boosting import exponential_distribution, interleaved_sum
from boostkit.kernels.exponential import CONTRACT, exp_nonpositive
from boostkit.kernels.histogram import add_pair, threshold_class_sums
from boostkit.kernels.splits import first_near_minimum

ABSOLUTE = 0
LOG1P = 1
SQUARED = 2

# Examples per block in the kernels that exponentiate and then sum: the block's terms are summed
# in a second loop while still in cache, so the loop with the exponentials has no reduction
# (which would keep LLVM from vectorising it without reassociating the sum).
_BLOCK = 1024

@numba.njit(cache=True, nogil=True, inline="always")
def _penalty(f, beta, kind, power):
    """-ln g(F) for the regularizer ``kind`` (see the module docstring); >= 0 for beta >= 0."""
    if kind == ABSOLUTE:
        return abs(beta * f)
    if kind == LOG1P:
        return power * np.log1p(abs(beta * f))
    return beta * f * f


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, inline="always")
def _factor(f, beta, kind, power):
    """g(F) = exp(-penalty(F)) in [0, 1], the one definition of the fit and predict kernels."""
    return exp_nonpositive(-_penalty(f, beta, kind, power))


# The kernels below run their loop over the examples through an inlined helper, called once per
# kind with the kind as a constant: each copy has the branch on the kind folded away, and LLVM
# vectorises those of ABSOLUTE and SQUARED (LOG1P's calls the C library's log1p, which it cannot;
# with the branch left in the loop, it vectorises none).


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, inline="always")
def _term_loop(values, margin, d1, beta, kind, power, factor, out):
    weighted = np.empty(min(margin.shape[0], _BLOCK))
    total = 0.0
    for lo in range(0, margin.shape[0], _BLOCK):
        hi = min(lo + _BLOCK, margin.shape[0])
        m, v, d, g, o = margin[lo:hi], values[lo:hi], d1[lo:hi], factor[lo:hi], out[lo:hi]
        for i in range(hi - lo):
            gi = _factor(m[i], beta, kind, power)
            g[i] = gi
            o[i] = v[i] * gi
            weighted[i] = d[i] * gi
        total += interleaved_sum(weighted[:hi - lo])
    return total


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT)
def regularized_term(values, margin, d1, beta, kind, power, factor, out):
    """The input-dependent term on the training examples: returns sum_i D_1(i) g_i.

    ``factor[i] = g(margin[i])`` and ``out[i] = values[i] * factor[i]``, equal bit for bit to
    :func:`regularized_values` with ``scale = 1``, in one pass (the sum is taken block by block,
    outside the loop with the exponentials, which it would keep from being vectorised). With
    beta = 0 the factor is exactly 1.0 and ``out`` equals ``values`` (the AdaBoost limit of eq. 4).
    """
    if kind == ABSOLUTE:
        return _term_loop(values, margin, d1, beta, ABSOLUTE, power, factor, out)
    if kind == LOG1P:
        return _term_loop(values, margin, d1, beta, LOG1P, power, factor, out)
    return _term_loop(values, margin, d1, beta, SQUARED, power, factor, out)


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, inline="always")
def _values_loop(values, margin, beta, kind, power, scale, out):
    for i in range(margin.shape[0]):
        out[i] = values[i] * (_factor(margin[i], beta, kind, power) * scale)


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT)
def regularized_values(values, margin, beta, kind, power, scale, out):
    """``out[i] = values[i] * (g(margin[i]) * scale)``: the term of eq. 4 / eq. 10, one pass.

    Equal, bit for bit, to ``values * (factor * scale)`` with ``factor`` from
    :func:`regularized_term` (IEEE products are exact functions of their operands). With
    beta = 0 and scale = 1 the factor is exactly 1.0, so ``out`` equals ``values`` bit for bit
    (the AdaBoost limit of eq. 4).
    """
    if kind == ABSOLUTE:
        _values_loop(values, margin, beta, ABSOLUTE, power, scale, out)
    elif kind == LOG1P:
        _values_loop(values, margin, beta, LOG1P, power, scale, out)
    else:
        _values_loop(values, margin, beta, SQUARED, power, scale, out)


@numba.njit(cache=True, nogil=True)
def _max_exponents(margin, y, d1, beta, kind, power, start, stop):
    margin = margin[start:stop]
    y = y[start:stop]
    d1 = d1[start:stop]
    top_cost = -np.inf
    top_weight = -np.inf
    for i in range(stop - start):
        if d1[i] > 0.0:
            e = -y[i] * margin[i]
            top_cost = max(top_cost, e)
            top_weight = max(top_weight, e - _penalty(margin[i], beta, kind, power))
    return top_cost, top_weight


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, inline="always")
def _exp_sums_loop(margin, y, d1, beta, kind, power, top_cost, top_weight, out):
    costs = np.empty(min(margin.shape[0], _BLOCK))
    cost = 0.0
    total = 0.0
    for lo in range(0, margin.shape[0], _BLOCK):
        hi = min(lo + _BLOCK, margin.shape[0])
        m, yy, d, w = margin[lo:hi], y[lo:hi], d1[lo:hi], out[lo:hi]
        for i in range(hi - lo):
            # Both exponents are <= 0 where D_1(i) > 0 (the tops are the largest there); the
            # other examples get weight 0, whatever their exponentials.
            e = -yy[i] * m[i]
            positive = d[i] > 0.0
            w[i] = d[i] * exp_nonpositive(e - _penalty(m[i], beta, kind, power) - top_weight) \
                if positive else 0.0
            costs[i] = d[i] * exp_nonpositive(e - top_cost) if positive else 0.0
        total += interleaved_sum(w)
        cost += interleaved_sum(costs[:hi - lo])
    return cost, total


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT)
def _exp_sums(margin, y, d1, beta, kind, power, top_cost, top_weight, out, start, stop):
    margin = margin[start:stop]
    y = y[start:stop]
    d1 = d1[start:stop]
    out = out[start:stop]
    if kind == ABSOLUTE:
        return _exp_sums_loop(margin, y, d1, beta, ABSOLUTE, power, top_cost, top_weight, out)
    if kind == LOG1P:
        return _exp_sums_loop(margin, y, d1, beta, LOG1P, power, top_cost, top_weight, out)
    return _exp_sums_loop(margin, y, d1, beta, SQUARED, power, top_cost, top_weight, out)


@numba.njit(cache=True, nogil=True)
def penalized_exponential_weights(margin, y, d1, beta, kind, power, out):
    """D(i) proportional to D_1(i) exp(-y_i F(x_i) - penalty(F(x_i))), in log space.

    ``out`` receives the normalised weights (eq. 7 for ``ABSOLUTE``, eq. 11 in general). The
    largest exponent among examples of positive initial weight is subtracted before
    exponentiating, so no number of rounds overflows. Returns log sum_i D_1(i) exp(-y_i F(x_i)),
    the log of the exponential cost, which bounds the training error (Jin et al. 2003, eq. 5).
    """
    n = margin.shape[0]
    # The start as an intp, as the threaded form's blocks pass it: a literal 0 compiled the two
    # helpers a second time (~2.5 s of a cold start).
    start = np.intp(0)
    top_cost, top_weight = _max_exponents(margin, y, d1, beta, kind, power, start, n)
    cost, total = _exp_sums(margin, y, d1, beta, kind, power, top_cost, top_weight, out, start,
                            n)
    out /= total
    return top_cost + np.log(cost)


@numba.njit(cache=True, nogil=True, parallel=True)
def penalized_exponential_weights_parallel(margin, y, d1, beta, kind, power, out, n_chunks):
    """:func:`penalized_exponential_weights` in ``n_chunks`` blocks over numba's threads."""
    n = margin.shape[0]
    tops = np.empty((n_chunks, 2))
    for chunk in numba.prange(n_chunks):
        a, b = _max_exponents(margin, y, d1, beta, kind, power,
                              chunk * n // n_chunks, (chunk + 1) * n // n_chunks)
        tops[chunk, 0] = a
        tops[chunk, 1] = b
    top_cost = tops[:, 0].max()
    top_weight = tops[:, 1].max()
    sums = np.empty((n_chunks, 2))
    for chunk in numba.prange(n_chunks):
        a, b = _exp_sums(margin, y, d1, beta, kind, power, top_cost, top_weight, out,
                         chunk * n // n_chunks, (chunk + 1) * n // n_chunks)
        sums[chunk, 0] = a
        sums[chunk, 1] = b
    total = sums[:, 1].sum()
    for chunk in numba.prange(n_chunks):
        out[chunk * n // n_chunks:(chunk + 1) * n // n_chunks] /= total
    return top_cost + np.log(sums[:, 0].sum())


def penalized_distribution(margin, y, d1, beta: float, kind: int, power: float, n_jobs: int = 1):
    """``(weights, log_cost)``: :func:`penalized_exponential_weights` into a new array, on
    ``n_jobs`` threads when each gets at least
    :data:`boostkit.kernels.blocks.MIN_THREADED_ROWS` examples (below that, waking threads
    costs more than the pass, as for the engine's exponential weights).

    With beta = 0 the penalty is 0 and the weights are AdaBoost's: they are then computed by the
    engine's :func:`boostkit.kernels.boosting.exponential_distribution`, bit for bit (its
    exponentials are the C library's, not :func:`exp_nonpositive`).
    """
    if beta == 0.0:
        return exponential_distribution(margin, y, d1, n_jobs)
    out = np.empty(margin.shape[0])
    if n_jobs > 1 and margin.shape[0] // n_jobs >= blocks.MIN_THREADED_ROWS:
        log_cost = penalized_exponential_weights_parallel(margin, y, d1, beta, kind, power, out,
                                                          n_jobs)
    else:
        log_cost = penalized_exponential_weights(margin, y, d1, beta, kind, power, out)
    return out, float(log_cost)


@numba.njit(cache=True, nogil=True)
def eq6_log_bound(margin, y, d1, factor, values):
    """log of eq. 6's bound on the exponential cost after adding factor(x) * values(x).

    For a factor g in [0, 1], convexity gives exp(g a) <= 1 + (e^a - 1) g, so

        sum_i D_1(i) e^{-y_i (F + g v)} <= sum_i D_1(i) e^{-y_i F} [(1 - g_i) + g_i e^{-y_i v_i}]

    (Jin et al. 2003, eq. 6, with F = H_{T-1}, g = e^{-|beta H_{T-1}|} and v = alpha_T h_T).
    ``margin`` is F_{t-1}, ``factor`` g and ``values`` the inner (unregularized) term v. Computed
    relative to the largest exponent, so it never overflows.
    """
    n = margin.shape[0]
    top = -np.inf
    for i in range(n):
        if d1[i] > 0.0:
            top = max(top, -y[i] * margin[i])
    total = 0.0
    for i in range(n):
        if d1[i] > 0.0:
            g = factor[i]
            u = -y[i] * values[i]
            # g e^u, written as one exponential where e^u alone could overflow (and 0 * inf).
            moved = g * np.exp(u) if u < 700.0 else (np.exp(np.log(g) + u) if g > 0.0 else 0.0)
            total += d1[i] * np.exp(-y[i] * margin[i] - top) * ((1.0 - g) + moved)
    return top + np.log(total)


@numba.njit(cache=True, nogil=True)
def tree_leaves(X, feature, threshold, left, right, out):
    """The leaf index of every row of ``X`` in a tree of ``feature.shape[0] >= 1`` splits.

    Node k sends a row left when ``X[row, feature[k]] <= threshold[k]``; ``left[k]`` and
    ``right[k]`` are the next split node (>= 0) or a leaf, stored as ``-1 - leaf``. Node 0 is the
    root. ``out`` (``(n,)`` integer) receives the leaf indices.
    """
    for i in range(X.shape[0]):
        node = 0
        while node >= 0:
            if X[i, feature[node]] <= threshold[node]:
                node = left[node]
            else:
                node = right[node]
        out[i] = -1 - node


@numba.njit(cache=True, nogil=True)
def describes_tree(left, right):
    """Whether ``left``/``right`` (the children of split nodes 0..n-1, ``-1 - leaf`` for a leaf)
    make a binary tree rooted at node 0: every split node but the root is the child of exactly
    one earlier split node (so evaluation always ends), and every leaf 0..n of exactly one."""
    n_split = left.shape[0]
    seen_node = np.zeros(n_split, dtype=np.bool_)
    seen_leaf = np.zeros(n_split + 1, dtype=np.bool_)
    for parent in range(n_split):
        for child in (left[parent], right[parent]):
            if child >= 0:
                if child <= parent or child >= n_split or seen_node[child]:
                    return False
                seen_node[child] = True
            else:
                leaf = -1 - child
                if leaf > n_split or seen_leaf[leaf]:
                    return False
                seen_leaf[leaf] = True
    # 2 n children fill the n - 1 split nodes below the root and the n + 1 leaves exactly.
    return True


# node_histogram sums four features per pass over a node's rows into one flat array of pairs
# (weight, count): column c (the class), feature f + j, bin b at pair c * 1024 + j * 256 + b
# (every uint8 code has its bin), so that an example's four updates share one base address, that
# of its class, plus the code and a constant offset (the layout of the engine's histogram kernel).
_GROUP = 4
_CODES = 256


@numba.njit(cache=True, nogil=True)
def node_histogram(codes, rows, weights, is_pos, counted, hist, counts):
    """The class histogram and the example counts of one tree node, without a copy of its codes.

    For the node's ``rows`` (increasing): ``hist[f, b, c]`` (``(d, B, 2)``, B <= 256,
    overwritten) receives the weight of the rows with ``codes[f, row] == b`` and
    ``is_pos[row] == c``, added in the order of the rows, as
    :func:`boostkit.kernels.histogram.class_histogram` adds them over a copy of the node's
    columns; ``counts[f, b]`` (``(d, B)`` integer, overwritten) the number of those rows with
    ``counted[row]`` (of positive initial weight). The rows' indices, weights, classes and counts
    are gathered once, and four features share each pass over them (about 1.2x faster than four
    separate (B, 2) histograms). A bin's weight and count sit side by side and are updated by
    one two-double add (1.3x faster than a separate integer count, whose load and store doubled
    the loop's memory operations); the counts are sums of ones in float64, exact below 2^53.
    """
    m = rows.shape[0]
    d, n_bins = counts.shape
    # Unsigned indices: numba adds no wrap-around of negative ones.
    node_rows = np.empty(m, dtype=np.uint64)
    node_weights = np.empty(m)
    node_columns = np.empty(m, dtype=np.uint64)  # the class's first value in the flat pairs
    node_counted = np.empty(m)
    for k in range(m):
        i = rows[k]
        node_rows[k] = i
        node_weights[k] = weights[i]
        node_columns[k] = np.uint64(is_pos[i]) * np.uint64(2 * _GROUP * _CODES)
        node_counted[k] = 1.0 if counted[i] else 0.0
    pairs = np.empty(2 * 2 * _GROUP * _CODES)
    last = d - 1
    for f in range(0, d, _GROUP):
        pairs[:] = 0.0
        # Features past the last are the last again (their sums are not copied out).
        c0, c1 = codes[f], codes[min(f + 1, last)]
        c2, c3 = codes[min(f + 2, last)], codes[min(f + 3, last)]
        for k in range(m):
            i = node_rows[k]
            w = node_weights[k]
            column = node_columns[k]
            n = node_counted[k]
            add_pair(pairs, column + np.uint64(2) * np.uint64(c0[i]), w, n)
            add_pair(pairs, column + np.uint64(2 * _CODES) + np.uint64(2) * np.uint64(c1[i]), w, n)
            add_pair(pairs, column + np.uint64(4 * _CODES) + np.uint64(2) * np.uint64(c2[i]), w, n)
            add_pair(pairs, column + np.uint64(6 * _CODES) + np.uint64(2) * np.uint64(c3[i]), w, n)
        for j in range(min(_GROUP, d - f)):
            for b in range(n_bins):
                neg = 2 * (j * _CODES + b)
                pos = 2 * ((_GROUP + j) * _CODES + b)
                hist[f + j, b, 0] = pairs[neg]
                hist[f + j, b, 1] = pairs[pos]
                counts[f + j, b] = np.int64(pairs[neg + 1] + pairs[pos + 1])


@numba.njit(cache=True, nogil=True)
def valid_cuts(counts, min_leaf, out):
    """``out[f, b]``: whether the cut after bin b of feature f is worth scoring in a tree node
    whose examples per bin are ``counts`` (``(d, B)``): bin b holds examples (a cut after an
    empty bin repeats an earlier partition) and each side keeps at least ``min_leaf`` (>= 1)
    examples. ``out`` is ``(d, B - 1)`` bool."""
    d, n_bins = counts.shape
    for f in range(d):
        total = 0
        for b in range(n_bins):
            total += counts[f, b]
        left = 0
        for b in range(n_bins - 1):
            left += counts[f, b]
            out[f, b] = counts[f, b] > 0 and left >= min_leaf and total - left >= min_leaf


# ln 2, and the mantissa bits of sqrt(2): approximate_log reduces x to m 2^e with m in
# [sqrt(2)/2, sqrt(2)].
_LN2 = 0.6931471805599453
_SQRT2_MANTISSA = 0x6A09E667F3BCD
_MANTISSA = 0x000FFFFFFFFFFFFF
_EXPONENT_BIAS = 1023
_SMALLEST_NORMAL = 2.2250738585072014e-308
#: A bound on |approximate_log(x) - ln x| for 0 < x <= 1: the series below stops at s^15
#: (|s| <= 0.172: the next term is ~1e-14), and e ln 2 + ... rounds at |ln x| <= 745 (~1e-13).
LOG_ERROR = 1e-12


# error_model="numpy": a division by zero gives inf or NaN instead of a check that would keep the
# loops from being vectorised (no divisor here is zero).
@numba.njit(cache=True, nogil=True, error_model="numpy")
def approximate_log(x, out, exponents):
    """``out[i]`` = ln ``x[i]`` to within :data:`LOG_ERROR`, for ``x`` in (0, 1].

    x = m 2^e with m in [sqrt(2)/2, sqrt(2)] read from the bits of x, and ln m = 2 atanh(s),
    s = (m - 1)/(m + 1), by its series; both loops are plain arithmetic that LLVM vectorises
    (about 4x faster than the C library's ln). Subnormal x (below 2.2e-308), whose bits hold no
    exponent, get the C library's ln. ``exponents`` is float64 scratch space of the length of ``x``.
    """
    bits = x.view(np.int64)
    reduced = out.view(np.int64)
    n = x.shape[0]
    for i in range(n):
        b = bits[i]
        high = (b & _MANTISSA) > _SQRT2_MANTISSA  # m > sqrt(2): halve it
        reduced[i] = (b & _MANTISSA) | (0x3FE0000000000000 if high else 0x3FF0000000000000)
        exponents[i] = (b >> 52) - _EXPONENT_BIAS + (1 if high else 0)
    for i in range(n):
        m = out[i]
        s = (m - 1.0) / (m + 1.0)
        z = s * s
        series = 1.0 + z * (1.0 / 3 + z * (1.0 / 5 + z * (1.0 / 7 + z * (
            1.0 / 9 + z * (1.0 / 11 + z * (1.0 / 13 + z * (1.0 / 15)))))))
        out[i] = exponents[i] * _LN2 + 2.0 * s * series
    for i in range(n):
        if x[i] < _SMALLEST_NORMAL:
            out[i] = np.log(x[i])


@numba.njit(cache=True, nogil=True, error_model="numpy")
def cut_entropy(wpos, wneg, valid, out):
    """C4.5's entropy criterion (:func:`boostkit.criteria.entropy`) of every ``valid`` cut,
    inf elsewhere, to within a bound; returns ``(smallest, bound)``.

    ``wpos`` and ``wneg`` are the C-contiguous ``(d, B - 1, 2)`` class weights on the two sides
    of every cut (:func:`boostkit.kernels.histogram.threshold_class_sums`), ``out`` is
    ``(d, B - 1)``. Each cut's loss -sum_sides (W+ ln(W+/W) + W- ln(W-/W)) is that function's,
    with :func:`approximate_log` for ln: the error of every term is at most its weight times
    :data:`LOG_ERROR`, so every value is within ``bound`` = :data:`LOG_ERROR` times the largest
    weight of a cut (plus a few units in the last place) of the exact one.
    """
    n_cuts = valid.shape[0] * valid.shape[1]
    n_sides = 2 * n_cuts
    p = wpos.reshape(n_sides)  # cut k's left side at 2k, its right side at 2k + 1
    q = wneg.reshape(n_sides)
    # Each class's share of each side (the positives' first, then the negatives'); an empty
    # class gets 1, whose ln is exactly 0 (its term is 0 anyway).
    ratios = np.empty(2 * n_sides)
    for j in range(n_sides):
        total = p[j] + q[j]
        ratios[j] = p[j] / total if p[j] > 0.0 else 1.0
        ratios[n_sides + j] = q[j] / total if q[j] > 0.0 else 1.0
    logs = np.empty(2 * n_sides)
    approximate_log(ratios, logs, np.empty(2 * n_sides))
    losses = out.reshape(n_cuts)
    is_valid = valid.reshape(n_cuts)
    lowest = np.inf
    heaviest = 0.0
    for k in range(n_cuts):
        if is_valid[k]:
            left, right = 2 * k, 2 * k + 1
            loss = -((p[left] * logs[left] + q[left] * logs[n_sides + left])
                     + (p[right] * logs[right] + q[right] * logs[n_sides + right]))
            losses[k] = loss
            lowest = min(lowest, loss)
            heaviest = max(heaviest, (p[left] + q[left]) + (p[right] + q[right]))
        else:
            losses[k] = np.inf
    return lowest, heaviest * LOG_ERROR


#: 4 ln 2: weight times binary entropy (nats) is at least 4 ln 2 W+ W- / W (the entropy in bits
#: of a share r is at least 4 r (1 - r), with equality at r = 1/2), i.e. 2 ln 2 times Gini.
_FOUR_LN2 = 4.0 * _LN2
#: :func:`screened_cut_entropy` scores a cut only when its lower bound is within this (relative),
#: plus twice the logarithm's bound, of the best cut's entropy: far above the tie tolerance
#: (1e-12) and the trees' re-scoring margin (1e-9), so no cut it skips could be chosen.
PRUNE_MARGIN = 1e-6
#: Tangents of phi(r) = h(r) / (r (1 - r)) on (0, 1/2], h the binary entropy in nats.
TANGENTS = 256


def entropy_ratio_tangents(n: int = TANGENTS) -> tuple[np.ndarray, np.ndarray]:
    """``(value, slope)``, ``(n + 1,)`` each: lines below phi(r) = h(r) / (r (1 - r)), the ratio
    of the binary entropy (nats) to r (1 - r), one per interval ``[j, j + 1) / (2 n)`` of
    r in [0, 1/2] and the last for r = 1/2 itself.

    phi is convex on (0, 1/2] (and falls to its minimum 4 ln 2 at 1/2), so its tangent at any
    point is below it everywhere: line j is the tangent at the interval's midpoint, scaled down
    by 1e-9 against the rounding of its coefficients and of its use. Within its interval it is
    within 0.3 % of phi for r >= 0.05 (a share of 5 %), where 4 ln 2 (the Gini bound's constant)
    is up to 24 % under it.
    """
    c = (np.arange(n) + 0.5) / (2 * n)
    gini = c * (1.0 - c)
    h = -(c * np.log(c) + (1.0 - c) * np.log1p(-c))
    slope = ((np.log1p(-c) - np.log(c)) * gini - h * (1.0 - 2.0 * c)) / gini**2  # (h/g)'
    value = h / gini - slope * c
    safe = 1.0 - 1e-9
    return (np.append(value, _FOUR_LN2) * safe, np.append(slope, 0.0) * safe)


_TANGENT_VALUE, _TANGENT_SLOPE = entropy_ratio_tangents()


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _side_tangent_bound(p, q):
    # A lower bound of W h(r) = m (1 - r) phi(r), m = min(W+, W-), r = m / W <= 1/2.
    w = p + q
    m = p if p < q else q
    r = m / w if w > 0.0 else 0.0
    r = r if r <= 0.5 else 0.5  # a NaN (inf / inf) must not index outside the tangents
    j = np.intp(r * (2 * TANGENTS))
    return m * (1.0 - r) * (_TANGENT_VALUE[j] + _TANGENT_SLOPE[j] * r)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def screened_cut_entropy(wpos, wneg, valid, out):
    """:func:`cut_entropy` where it matters, a lower bound elsewhere; returns ``(lowest, bound,
    scored, threshold)``.

    Arguments as for :func:`cut_entropy`. Every valid cut first gets the lower bound
    4 ln 2 sum_sides W+ W- / W of its entropy (no logarithm, one division, vectorised). The cut
    of the smallest bound is scored by :func:`cut_entropy`; its value plus the bound is at least
    the lowest entropy, ``upper``, which gives a threshold ``upper + 2 bound + PRUNE_MARGIN
    |upper|``. The cuts under it get a second, tighter lower bound, sum_sides m (1 - r) line(r)
    with m the lighter class's weight, r = m / W and ``line`` the tangent of
    :func:`entropy_ratio_tangents` for r (tight where a side's classes are unbalanced, where
    the first is loose); the cut of the smallest second bound, if another, gives a second
    threshold, and ``threshold`` is the lower. Only the cuts whose bound is at most
    ``threshold`` are scored by :func:`cut_entropy` (one or a few in a boosted node); ``scored``
    lists their flat indices, increasing. Every other valid cut keeps its (larger) lower bound,
    which exceeds ``threshold`` >= ``lowest + 2 bound + PRUNE_MARGIN |lowest|``: they can be
    neither the minimum nor tied with it. So ``out`` holds, for every valid cut, either the
    :func:`cut_entropy` value (within ``bound`` of the exact entropy; ``lowest`` is their
    minimum) or a value of at most the exact entropy (up to rounding) and above ``threshold``;
    inf for the others. Without a valid cut: ``(inf, 0.0, [], inf)``.
    """
    n_cuts = valid.shape[0] * valid.shape[1]
    p = wpos.reshape(2 * n_cuts)  # cut k's left side at 2k, its right side at 2k + 1
    q = wneg.reshape(2 * n_cuts)
    losses = out.reshape(n_cuts)
    is_valid = valid.reshape(n_cuts)
    for k in range(n_cuts):  # plain arithmetic and a select: vectorised
        left, right = 2 * k, 2 * k + 1
        total_left = p[left] + q[left]
        total_right = p[right] + q[right]
        both = total_left * total_right
        # NaN where the product of the sides' weights is 0 or subnormal (imprecise).
        losses[k] = (_FOUR_LN2 * ((p[left] * q[left] * total_right
                                   + p[right] * q[right] * total_left) / both)
                     if both >= _SMALLEST_NORMAL else np.nan)
    first = -1
    for k in range(n_cuts):
        if not is_valid[k]:
            losses[k] = np.inf
            continue
        if not losses[k] < np.inf:  # NaN above, or an overflow: side by side (no weight: 0)
            left, right = 2 * k, 2 * k + 1
            total_left = p[left] + q[left]
            total_right = p[right] + q[right]
            # p (q / W), not p q / W: the product of two small weights may be subnormal.
            losses[k] = _FOUR_LN2 * (
                (p[left] * (q[left] / total_left) if total_left > 0.0 else 0.0)
                + (p[right] * (q[right] / total_right) if total_right > 0.0 else 0.0))
        if first < 0 or losses[k] < losses[first]:
            first = k
    if first < 0:
        return np.inf, 0.0, np.empty(0, dtype=np.intp), np.inf
    sides_pos = wpos.reshape(n_cuts, 2)
    sides_neg = wneg.reshape(n_cuts, 2)
    threshold = _threshold_of(sides_pos, sides_neg, first)
    below = np.empty(n_cuts, dtype=np.intp)  # the cuts under it, then their second bound
    m = 0
    for k in range(n_cuts):
        below[m] = k
        m += losses[k] <= threshold
    second = -1
    for j in range(m):
        k = below[j]
        tight = (_side_tangent_bound(p[2 * k], q[2 * k])
                 + _side_tangent_bound(p[2 * k + 1], q[2 * k + 1]))
        if tight > losses[k]:
            losses[k] = tight
        if second < 0 or losses[k] < losses[second]:
            second = k
    if second != first:
        threshold = min(threshold, _threshold_of(sides_pos, sides_neg, second))
    kept = np.empty(m, dtype=np.intp)
    n_kept = 0
    for j in range(m):
        kept[n_kept] = below[j]
        n_kept += losses[below[j]] <= threshold
    kept = kept[:n_kept]
    kept_pos = np.empty((1, n_kept, 2))
    kept_neg = np.empty((1, n_kept, 2))
    for j in range(n_kept):
        kept_pos[0, j] = sides_pos[kept[j]]
        kept_neg[0, j] = sides_neg[kept[j]]
    scored = np.empty((1, n_kept))
    lowest, bound = cut_entropy(kept_pos, kept_neg, np.ones((1, n_kept), dtype=np.bool_), scored)
    for j in range(n_kept):
        losses[kept[j]] = scored[0, j]
    return lowest, bound, kept, threshold


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _threshold_of(sides_pos, sides_neg, k):
    # Cut k scored: its entropy plus the bound is at least the lowest, upper; no cut whose lower
    # bound exceeds upper + 2 bound + PRUNE_MARGIN |upper| can be the minimum or tie with it.
    value, bound = cut_entropy(sides_pos[k:k + 1].reshape(1, 1, 2),
                               sides_neg[k:k + 1].reshape(1, 1, 2),
                               np.ones((1, 1), dtype=np.bool_), np.empty((1, 1)))
    upper = value + bound
    return upper + 2.0 * bound + PRUNE_MARGIN * abs(upper)


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _cell_entropy(p, q):
    # One cell's W+ ln(W+/W) + W- ln(W-/W), an empty class adding 0.0: the operations of
    # boostkit.criteria.entropy, in its order, with the C library's ln (math.log, compiled or
    # not), which is numpy's unless numpy runs its own SIMD ln (then the last bit may differ).
    total = p + q
    return ((p * math.log(p / total) if p > 0.0 else 0.0)
            + (q * math.log(q / total) if q > 0.0 else 0.0))


@numba.njit(cache=True, nogil=True)
def _first_tied(flat, candidates, width, priority, tolerance):
    # best_split's choice among the flat indices ``candidates`` (increasing; every cut that may
    # be the lowest or tie with it among them): the first cut within tolerance (relative) of the
    # lowest; given a priority (``width`` cuts per feature), the tied feature of the lowest
    # priority (the first of equal ones), its first tied cut.
    lowest = np.inf
    for k in candidates:
        if flat[k] < lowest:
            lowest = flat[k]
    bound = lowest + tolerance * abs(lowest)
    best = -1
    for k in candidates:
        if flat[k] <= bound:
            if not priority.shape[0]:
                return k
            if best < 0 or priority[k // width] < priority[best // width]:
                best = k
    return best


@numba.njit(cache=True, nogil=True, error_model="numpy")
def entropy_split(hist, valid, priority, tolerance, screen, node_pos, node_neg, sides):
    """The cut of lowest C4.5 entropy in a tree node, as :func:`boostkit.splits.best_split`
    chooses it with :func:`boostkit.criteria.entropy`, in one call; returns ``(cut, loss,
    node_loss)``.

    ``hist`` is the node's ``(d, B, 2)`` class histogram, ``valid`` its ``(d, B - 1)`` cuts worth
    scoring, ``priority`` the ``(d,)`` rank of the features among tied cuts (empty: the lowest
    feature), ``tolerance`` best_split's tie tolerance, ``node_pos``/``node_neg`` the node's
    class weights. The class weights of every cut's sides
    (:func:`boostkit.kernels.histogram.threshold_class_sums`) are screened
    (:func:`screened_cut_entropy`); the cuts within ``2 bound + screen |lowest|`` of its
    ``lowest`` get the criterion's own value, the others keep the screen's, which lies above the
    true minimum by more than the tie tolerance: the choice is best_split's with the criterion on
    every cut, and is made among the scored cuts only. ``cut`` is the flat index
    ``feature * (B - 1) + bin`` (-1: no valid cut), ``loss`` its entropy, ``node_loss`` the
    node's as one cell; ``sides`` (``(2, 2)``) receives the cut's ``(wneg, wpos)`` of its (left,
    right) sides.
    """
    d, n_bins = hist.shape[0], hist.shape[1]
    node_loss = -(_cell_entropy(node_pos, node_neg) + 0.0)  # one cell and an empty one
    if d * (n_bins - 1) == 0:
        return -1, np.inf, node_loss
    wneg = np.empty((d, n_bins - 1, 2))
    wpos = np.empty((d, n_bins - 1, 2))
    threshold_class_sums(hist, wneg, wpos)
    losses = np.empty((d, n_bins - 1))
    lowest, bound, scored, threshold = screened_cut_entropy(wpos, wneg, valid, losses)
    if lowest == np.inf:
        return -1, np.inf, node_loss
    limit = lowest + 2.0 * bound + screen * abs(lowest)
    flat = losses.reshape(-1)
    sides_pos = wpos.reshape(-1, 2)
    sides_neg = wneg.reshape(-1, 2)
    # Near the lowest are only scored cuts, unless rounding in a degenerate node reaches past
    # the screen's threshold: then every cut is looked at.
    within = limit < threshold
    for k in scored if within else np.arange(flat.shape[0]):
        if flat[k] <= limit:
            flat[k] = -(_cell_entropy(sides_pos[k, 0], sides_neg[k, 0])
                        + _cell_entropy(sides_pos[k, 1], sides_neg[k, 1]))
    if within:
        cut = _first_tied(flat, scored, n_bins - 1, priority, tolerance)
    elif priority.shape[0]:
        cut = _first_tied(flat, np.flatnonzero(valid.reshape(-1)), n_bins - 1, priority,
                          tolerance)
    else:
        cut = first_near_minimum(losses, valid, tolerance)
    if cut < 0:
        return -1, np.inf, node_loss
    sides[0] = sides_neg[cut]
    sides[1] = sides_pos[cut]
    return cut, flat[cut], node_loss


@numba.njit(cache=True, nogil=True)
def sibling_sums(hist, child_hist, counts, child_counts, sibling_counts):
    """A child's histogram and counts from its parent's and its sibling's: ``hist`` (the
    parent's ``(d, B, 2)``) becomes ``max(hist - child_hist, 0)`` in place (0 against rounding,
    NaN kept, -0.0 made 0.0, as ``np.maximum`` does), and ``sibling_counts`` receives ``counts -
    child_counts``."""
    h = hist.reshape(-1)
    c = child_hist.reshape(-1)
    for k in range(h.shape[0]):
        x = h[k] - c[k]
        h[k] = x if (x > 0.0 or x != x) else 0.0
    n = counts.reshape(-1)
    m = child_counts.reshape(-1)
    out = sibling_counts.reshape(-1)
    for k in range(n.shape[0]):
        out[k] = n[k] - m[k]


@numba.njit(cache=True, nogil=True)
def fill_rows(out, rows, value):
    """``out[rows] = value`` (a leaf's index for its rows)."""
    for k in range(rows.shape[0]):
        out[rows[k]] = value


@numba.njit(cache=True, nogil=True)
def fill_split_leaves(out, feature_codes, rows, cut, left_leaf):
    """``out[i]`` = ``left_leaf`` for the ``rows`` whose code is ``<= cut``, ``left_leaf + 1`` for
    the others: a split whose two children are leaves, without their lists of rows."""
    for k in range(rows.shape[0]):
        i = rows[k]
        out[i] = left_leaf + (feature_codes[i] > cut)


@numba.njit(cache=True, nogil=True)
def code_leaves(codes, feature, left_bins, left, right, out):
    """The leaf of every row of a tree read from the rows' bin codes alone.

    ``codes`` is the ``(d, n)`` uint8 bin codes; split node k sends row i left when
    ``left_bins[k, codes[feature[k], i]]`` (``(n_split, B)`` uint8: the bins going left, the
    missing-value bin and a categorical split's categories included). ``left[k]`` and
    ``right[k]`` are the next split node (>= 0) or a leaf, stored as ``-1 - leaf``; node 0 is
    the root, and a tree without split nodes is one leaf. ``out`` (``(n,)`` integer) receives
    the leaf indices.
    """
    if feature.shape[0] == 0:
        out[:] = 0
        return
    for i in range(codes.shape[1]):
        node = 0
        while node >= 0:
            if left_bins[node, codes[feature[node], i]]:
                node = left[node]
            else:
                node = right[node]
        out[i] = -1 - node


@numba.njit(cache=True, nogil=True)
def penalized_row_weights(margin, y, d1, beta, kind, power, out):
    """The row form of :func:`penalized_exponential_weights`: ``out`` receives D_1(i)
    exp(-y_i F(x_i) - penalty(F(x_i)) - s) for these rows, unnormalised; returns ``(s, log
    cost)``, s the largest exponent among the rows of positive initial weight (``-inf`` if
    none) and log sum_i D_1(i) exp(-y_i F(x_i)) over them (``-inf`` if none), so the weights
    of all rows, wherever they live, are normalised by the log-sum-exp of their totals."""
    n = margin.shape[0]
    start = np.intp(0)  # as in penalized_exponential_weights
    top_cost, top_weight = _max_exponents(margin, y, d1, beta, kind, power, start, n)
    if top_weight == -np.inf:  # no row of positive initial weight
        out[:] = 0.0
        return -np.inf, -np.inf
    cost, _ = _exp_sums(margin, y, d1, beta, kind, power, top_cost, top_weight, out, start, n)
    return top_weight, top_cost + np.log(cost)


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT)
def weighted_factor_sum(margin, d1, beta, kind, power):
    """sum_i D_1(i) g(margin[i]): the regularizer's D_1-weighted sum over some rows, the same
    factor as :func:`regularized_term` (which also gives it, with the term, where all rows
    are at hand)."""
    total = 0.0
    for i in range(margin.shape[0]):
        total += d1[i] * _factor(margin[i], beta, kind, power)
    return total

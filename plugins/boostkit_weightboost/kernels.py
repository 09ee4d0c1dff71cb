"""Numba kernels of the WeightBoost plugin (001_e064afeb8d6bf0ca.txt).

* :func:`regularizer_factor` and :func:`regularized_values`: g(F_{t-1}(x)) and the
  input-dependent term c_t(x) = v_t(x) g(F_{t-1}(x)) s_t of eq. 4 / eq. 10, which give the same
  numbers at fit and at predict time.
* :func:`penalized_exponential_weights` (and its parallel twin): weights proportional to
  D_1(i) exp(-y_i F(x_i) - penalty(F(x_i))), WeightBoost's eq. 7 / eq. 11 and the weight-decay
  baseline, in log space; returns log sum_i D_1(i) exp(-y_i F(x_i)), the exponential cost that
  bounds the training error (eq. 5).
* :func:`eq6_log_bound`: the log of eq. 6's upper bound on the exponential cost after a round.
* :func:`tree_leaves`: the leaf reached by every row in a depth-limited decision tree.

The regularizer g = exp(-penalty) is chosen by an integer ``kind`` (loop-invariant, so the branch
costs nothing): :data:`ABSOLUTE` penalty beta |F| (WeightBoost's e^{-|beta F|}, eq. 4),
:data:`LOG1P` penalty p ln(1 + beta |F|) (g = (1 + beta |F|)^{-p}, the "inverse of polynomials"
of section 5), :data:`SQUARED` penalty beta F^2 (the weight-decay baseline, section 2).
"""

from __future__ import annotations

import numba
import numpy as np

ABSOLUTE = 0
LOG1P = 1
SQUARED = 2


@numba.njit(cache=True, nogil=True)
def _penalty(f, beta, kind, power):
    """-ln g(F) for the regularizer ``kind`` (see the module docstring); >= 0 for beta >= 0."""
    if kind == ABSOLUTE:
        return abs(beta * f)
    if kind == LOG1P:
        return power * np.log1p(abs(beta * f))
    return beta * f * f


@numba.njit(cache=True, nogil=True)
def regularizer_factor(margin, beta, kind, power, out):
    """``out[i] = g(margin[i]) = exp(-penalty(margin[i]))``, in [0, 1]."""
    for i in range(margin.shape[0]):
        out[i] = np.exp(-_penalty(margin[i], beta, kind, power))


@numba.njit(cache=True, nogil=True)
def regularized_values(values, margin, beta, kind, power, scale, out):
    """``out[i] = values[i] * (g(margin[i]) * scale)``: the term of eq. 4 / eq. 10, one pass.

    Equal, bit for bit, to ``values * (factor * scale)`` with ``factor`` from
    :func:`regularizer_factor` (IEEE products are exact functions of their operands). With
    beta = 0 and scale = 1 the factor is exactly 1.0, so ``out`` equals ``values`` bit for bit
    (the AdaBoost limit of eq. 4).
    """
    for i in range(values.shape[0]):
        out[i] = values[i] * (np.exp(-_penalty(margin[i], beta, kind, power)) * scale)


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


@numba.njit(cache=True, nogil=True)
def _exp_sums(margin, y, d1, beta, kind, power, top_cost, top_weight, out, start, stop):
    margin = margin[start:stop]
    y = y[start:stop]
    d1 = d1[start:stop]
    out = out[start:stop]
    cost = 0.0
    total = 0.0
    for i in range(stop - start):
        if d1[i] > 0.0:
            e = -y[i] * margin[i]
            # Same operations, in the same order, as AdaBoost's exponential_weights: with
            # beta = 0 the penalty is 0.0, e - 0.0 == e, and the weights agree bit for bit.
            w = d1[i] * np.exp(e - _penalty(margin[i], beta, kind, power) - top_weight)
            cost += d1[i] * np.exp(e - top_cost)
        else:
            w = 0.0
        out[i] = w
        total += w
    return cost, total


@numba.njit(cache=True, nogil=True)
def penalized_exponential_weights(margin, y, d1, beta, kind, power, out):
    """D(i) proportional to D_1(i) exp(-y_i F(x_i) - penalty(F(x_i))), in log space.

    ``out`` receives the normalised weights (eq. 7 for ``ABSOLUTE``, eq. 11 in general). The
    largest exponent among examples of positive initial weight is subtracted before
    exponentiating, so no number of rounds overflows. Returns log sum_i D_1(i) exp(-y_i F(x_i)),
    the log of the exponential cost, which bounds the training error (001 eq. 5).
    """
    n = margin.shape[0]
    top_cost, top_weight = _max_exponents(margin, y, d1, beta, kind, power, 0, n)
    cost, total = _exp_sums(margin, y, d1, beta, kind, power, top_cost, top_weight, out, 0, n)
    out /= total
    return top_cost + np.log(cost)


@numba.njit(cache=True, nogil=True, parallel=True)
def penalized_exponential_weights_parallel(margin, y, d1, beta, kind, power, out, n_chunks):
    """:func:`penalized_exponential_weights` in ``n_chunks`` blocks over numba's threads.

    The blocks are those of the engine's ``exponential_weights_parallel``, so with beta = 0 the
    two agree bit for bit at every thread count.
    """
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


@numba.njit(cache=True, nogil=True)
def eq6_log_bound(margin, y, d1, factor, values):
    """log of eq. 6's bound on the exponential cost after adding factor(x) * values(x).

    For a factor g in [0, 1], convexity gives exp(g a) <= 1 + (e^a - 1) g, so

        sum_i D_1(i) e^{-y_i (F + g v)} <= sum_i D_1(i) e^{-y_i F} [(1 - g_i) + g_i e^{-y_i v_i}]

    (001 eq. 6, with F = H_{T-1}, g = e^{-|beta H_{T-1}|} and v = alpha_T h_T). ``margin`` is
    F_{t-1}, ``factor`` g and ``values`` the inner (unregularized) term v. Computed relative to
    the largest exponent, so it never overflows.
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

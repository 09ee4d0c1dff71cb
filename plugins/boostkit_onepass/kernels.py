"""Numba kernels of one-pass boosting (002_e834e6eb4e496457.txt), over plain arrays.

* Column and linear-score access to CSR matrices (``indptr``, ``indices``, ``data`` with sorted
  indices, as :func:`boostkit.data.check_features` returns them), so a fitted model predicts on
  sparse term counts without densifying them.
* :func:`exp_loss_alpha`: the voting weight alpha minimising the exponential potential over the
  examples where a confidence-rated base classifier does not abstain (section 4: "choose each
  voting weight alpha_t in order to maximize the reduction in potential ... using Newton's
  method"); :func:`potential_advantage`: PickyAdaBoost's advantage for such classifiers.
* :func:`one_pass_counts` and :func:`one_pass_signs`: one whole pass of one-pass AdaBoost or
  PickyAdaBoost (section 3) fused into one loop, touching only the examples a base classifier
  votes on: O(nnz) for term counts, as Naive Bayes.

Naive reference implementations live in ``tests/onepass/test_onepass_kernels.py``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

# Count values 1..SMALL_COUNTS (times the label's sign) are grouped into bins, so Newton's
# iterations cost O(distinct counts) instead of O(examples) for term counts.
SMALL_COUNTS = 64
# The fused passes resum their unnormalised weights every RESUM_EVERY accepted rounds, so the
# running total never drifts from the weights by more than rounding.
RESUM_EVERY = 256


@numba.njit(cache=True, nogil=True)
def csr_column(indptr, indices, data, j, out):
    """Write column ``j`` of a CSR matrix (sorted indices) into ``out`` (length n_rows).

    One binary search per row: O(n log(nnz per row)), the same order as the engine's per-round
    O(n) margin update, so no CSC copy of the prediction data is needed.
    """
    for i in range(out.shape[0]):
        start = indptr[i]
        stop = indptr[i + 1]
        k = start + np.searchsorted(indices[start:stop], j)
        out[i] = data[k] if k < stop and indices[k] == j else 0.0


@numba.njit(cache=True, nogil=True)
def csr_linear(indptr, indices, data, value_weights, indicator_weights, intercept, out):
    """out_i = intercept + sum_j value_weights_j x_ij + indicator_weights_j [x_ij > 0] (CSR)."""
    for i in range(out.shape[0]):
        total = intercept
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            v = data[k]
            total += value_weights[j] * v + indicator_weights[j] * (v > 0.0)
        out[i] = total


@numba.njit(cache=True, nogil=True)
def dense_linear(X, value_weights, indicator_weights, intercept, out):
    """:func:`csr_linear` for a dense C-ordered ``X`` (never forms the (n, d) indicator array)."""
    n, d = X.shape
    for i in range(n):
        total = intercept
        for j in range(d):
            v = X[i, j]
            total += value_weights[j] * v + indicator_weights[j] * (v > 0.0)
        out[i] = total


@numba.njit(cache=True, nogil=True)
def csr_margin_columns(indptr, indices, data, y, n_columns):
    """The CSC form of a CSR matrix with values y_i x_ij: ``(column_ptr, rows, margins)``.

    One counting pass and one scatter pass (as scipy's ``tocsc``), multiplying by the labels on
    the way, so the one-pass kernel reads margins directly. Rows come out sorted in each column.
    """
    column_ptr = np.zeros(n_columns + 1, dtype=np.int64)
    for k in range(indices.shape[0]):
        column_ptr[indices[k] + 1] += 1
    for j in range(n_columns):
        column_ptr[j + 1] += column_ptr[j]
    fill = column_ptr[:-1].copy()
    rows = np.empty(indices.shape[0], dtype=indices.dtype)
    margins = np.empty(indices.shape[0])
    for i in range(indptr.shape[0] - 1):
        for k in range(indptr[i], indptr[i + 1]):
            p = fill[indices[k]]
            rows[p] = i
            margins[p] = y[i] * data[k]
            fill[indices[k]] = p + 1
    return column_ptr, rows, margins


@numba.njit(cache=True, nogil=True)
def all_plus_minus_one(values):
    """Whether every entry of a dense array is -1 or +1 (stops at the first that is not)."""
    for v in values.ravel():
        if v != 1.0 and v != -1.0:
            return False
    return True


@numba.njit(cache=True, nogil=True)
def exp_loss_alpha(u, w, smoothing, tol, max_iter):
    """alpha minimising Z(alpha) = sum_k w_k exp(-alpha u_k) + s (e^{alpha M} + e^{-alpha M}).

    ``u`` are the non-zero margins y_i h(x_i) (examples where h abstains add a constant to Z),
    ``w`` their weights under D_t, M = max |u_k|. The s-terms are the two phantom examples of
    ``boostkit_adaboost``'s newton-alpha, which keep alpha finite when every u_k has one sign;
    the minimiser is the same as newton-alpha's. Z is strictly convex: Newton's method in
    beta = alpha M, safeguarded by bisection inside a bracket of the root, converges.
    """
    scale = 0.0
    smallest = np.inf
    for k in range(u.shape[0]):
        scale = max(scale, abs(u[k]))
        smallest = min(smallest, abs(u[k]))
    if scale == 0.0:
        return 0.0
    if smallest == scale:
        # Every |u_k| = M (a +-1 classifier, or a term that never occurs twice in a text):
        # Z = W+ e^{-beta} + W- e^{beta} + s (e^beta + e^-beta), minimised in closed form.
        agree = smoothing
        disagree = smoothing
        for k in range(u.shape[0]):
            if u[k] > 0.0:
                agree += w[k]
            else:
                disagree += w[k]
        return 0.5 * math.log(agree / disagree) / scale
    g0 = 0.0
    for k in range(u.shape[0]):
        g0 -= w[k] * u[k] / scale
    if g0 == 0.0:
        return 0.0
    # g'(beta) >= -1 + s (e^beta - e^-beta) > 0 beyond ln(2/s) + 1: the root lies in the bracket.
    bound = math.log(2.0 / smoothing) + 1.0
    lo, hi = (0.0, bound) if g0 < 0.0 else (-bound, 0.0)
    # First step: Newton's from beta = 0 (the root is usually near 0), kept inside the bracket.
    curvature = 2.0 * smoothing
    for k in range(u.shape[0]):
        curvature += w[k] * (u[k] / scale) ** 2
    beta = -g0 / curvature
    if not lo < beta < hi:
        beta = 0.5 * (lo + hi)
    for _ in range(max_iter):
        up = math.exp(beta)
        g1 = smoothing * (up - 1.0 / up)
        g2 = smoothing * (up + 1.0 / up)
        for k in range(u.shape[0]):
            v = u[k] / scale
            e = w[k] * math.exp(-beta * v)
            g1 -= v * e
            g2 += v * v * e
        if abs(g1) <= tol * g2:  # the Newton step is below tol
            break
        if g1 > 0.0:
            hi = beta
        else:
            lo = beta
        step = beta - g1 / g2
        beta = step if lo < step < hi else 0.5 * (lo + hi)
    return beta / scale


# Near-zero smoothing for the potential's infimum (see potential_advantage).
_INFIMUM_SMOOTHING = 1e-15


@numba.njit(cache=True, nogil=True)
def potential_advantage(u, w, tol, max_iter):
    """|gamma| = 1/2 sqrt(1 - Z*^2), Z* = min_alpha sum_i D(i) exp(-alpha y_i h(x_i)).

    ``u`` are the non-zero margins y_i h(x_i), ``w`` their weights under a distribution D (the
    other examples add their mass to Z whatever alpha). For h in {-1, +1}, Z* = 2 sqrt(eps
    (1 - eps)) and this is exactly |1/2 - eps|, the magnitude of 002's advantage; in general it
    is the advantage of the +-1 classifier that would lower AdaBoost's potential by the same
    factor Z* (Z_t = sqrt(1 - 4 gamma_t^2)). 1 - Z* = -sum_k w_k expm1(-alpha* u_k) is summed
    directly, so small advantages keep their precision. When every u_k has one sign the infimum
    is reached at infinity: Z* is the mass of the examples where h abstains. (The 1e-15
    smoothing only keeps Newton's bracket finite.)
    """
    agree = 0.0
    disagree = 0.0
    for k in range(u.shape[0]):
        if u[k] > 0.0:
            agree += w[k]
        else:
            disagree += w[k]
    if agree == 0.0 or disagree == 0.0:  # one-signed: Z* = the abstainers' mass, at infinity
        drop = agree + disagree
    else:
        alpha = exp_loss_alpha(u, w, _INFIMUM_SMOOTHING, tol, max_iter)
        drop = 0.0
        for k in range(u.shape[0]):
            drop -= w[k] * math.expm1(-alpha * u[k])
    drop = min(max(drop, 0.0), 1.0)
    return 0.5 * math.sqrt(drop * (2.0 - drop))


@numba.njit(cache=True, nogil=True, inline="always")
def _column_margins(start, stop, indices, margins, w, total, bins, out_u, out_w):
    """The margins y_i x_ij of one CSC column with their weights w_i / total, grouped.

    Margins +-1..+-SMALL_COUNTS (term counts) are summed per value in ``bins``, a zeroed
    (2, SMALL_COUNTS + 1) scratch array left zeroed on return; other margins pass through.
    Returns ``(g, largest)``: the number of (margin, weight) pairs written to
    ``out_u``/``out_w``, and the largest grouped count.
    """
    m = 0
    largest = 0
    for k in range(start, stop):
        i = indices[k]
        v = margins[k]
        a = abs(v)
        if a <= SMALL_COUNTS and a == int(a):
            c = int(a)
            bins[int(v > 0.0), c] += w[i]
            largest = max(largest, c)
        else:
            out_u[m] = v
            out_w[m] = w[i]
            m += 1
    for side in range(2):
        for c in range(1, largest + 1):
            if bins[side, c] != 0.0:
                out_u[m] = c if side == 1 else -c
                out_w[m] = bins[side, c]
                bins[side, c] = 0.0
                m += 1
    for k in range(m):  # normalise the few sums, not every document's weight
        out_w[k] /= total
    return m, largest


@numba.njit(cache=True, nogil=True)
def one_pass_counts(indptr, indices, margins, d1, order, gamma_bar, smoothing, tol, max_iter,
                    alpha_out):
    """One pass of (Picky)AdaBoost over confidence-rated base classifiers h_j(x) = x_j.

    ``indptr``/``indices``/``margins``: the training matrix by columns, with values
    y_i x_ij (:func:`csr_margin_columns`: the pass never reads the labels). For each feature j
    in ``order``: if its advantage |gamma| (:func:`potential_advantage`) is below ``gamma_bar``
    the classifier is skipped (PickyAdaBoost, section 3; ``gamma_bar = 0`` is one-pass
    AdaBoost, which uses every classifier), else alpha_j minimises the potential
    (:func:`exp_loss_alpha`) and only the weights of the examples with x_j != 0 change.

    Weights are kept unnormalised, w_i = D_1(i) exp(-y_i F(x_i)) / scale, with their running
    total (multiplied by each round's Z_t); they are rescaled when the total leaves
    [1e-100, 1e100] and resummed every ``RESUM_EVERY`` accepted rounds. ``alpha_out[j]``
    receives alpha_j (0 for skipped features). Returns ``(n_used, log_potential)``: the number
    of classifiers used and log sum_i D_1(i) exp(-y_i F(x_i)).
    """
    w = d1.copy()
    total = w.sum()
    log_scale = 0.0
    max_nnz = 0
    for j in range(indptr.shape[0] - 1):
        max_nnz = max(max_nnz, indptr[j + 1] - indptr[j])
    gu = np.empty(max_nnz + 2 * SMALL_COUNTS)
    gw = np.empty(max_nnz + 2 * SMALL_COUNTS)
    bins = np.zeros((2, SMALL_COUNTS + 1))
    factors = np.ones((2, SMALL_COUNTS + 1))
    n_used = 0
    for j in order:
        start = indptr[j]
        stop = indptr[j + 1]
        alpha_out[j] = 0.0
        g, largest = _column_margins(start, stop, indices, margins, w, total, bins, gu, gw)
        if g == 0:  # abstains on every example: nothing to use
            continue
        if gamma_bar > 0.0 and potential_advantage(gu[:g], gw[:g], tol, max_iter) < gamma_bar:
            continue
        alpha = exp_loss_alpha(gu[:g], gw[:g], smoothing, tol, max_iter)
        alpha_out[j] = alpha
        n_used += 1
        # The total changes by the factor Z_t = 1 + sum_k D(k) expm1(-alpha u_k), summed over
        # the few groups; the documents' weights are then updated without a serial sum.
        change = 0.0
        for k in range(g):
            change += gw[k] * math.expm1(-alpha * gu[k])
        total *= 1.0 + change
        # exp(-alpha u) for the grouped margins u = +-c: a table lookup instead of an exp (and
        # of a branch on the unpredictable label) per document.
        agree, disagree = math.exp(-alpha), math.exp(alpha)
        for c in range(1, largest + 1):
            factors[1, c] = factors[1, c - 1] * agree
            factors[0, c] = factors[0, c - 1] * disagree
        for k in range(start, stop):
            v = margins[k]
            a = abs(v)
            c = int(a)
            if c == a and c <= largest:
                w[indices[k]] *= factors[int(v > 0.0), c]
            else:
                w[indices[k]] *= math.exp(-alpha * v)
        if n_used % RESUM_EVERY == 0:
            total = w.sum()
        if not 1e-100 < total < 1e100:
            w /= total
            log_scale += math.log(total)
            total = 1.0
    total = w.sum()
    return n_used, log_scale + math.log(total)


@numba.njit(cache=True, nogil=True)
def one_pass_signs(signs, y, d1, order, gamma_bar, smoothing, alpha_out):
    """One pass of (Picky)AdaBoost over +-1 base classifiers, ``signs[j, i] = h_j(x_i)`` (int8).

    Feature-major (d, n), so a base classifier is one contiguous row. For each j in ``order``:
    eps = sum_i D_t(i) [h_j(x_i) != y_i], gamma = 1/2 - eps; skip if |gamma| < ``gamma_bar``,
    else alpha_j = 1/2 ln((1 - eps + s) / (eps + s)) (002 Fig. 1, smoothed by s as
    ``constant-alpha``/``onepass-alpha``) and D_{t+1}(i) = D_t(i) exp(-alpha_j y_i h_j(x_i)) / Z_t,
    normalised in the same loop. Returns ``(n_used, log_potential)`` as :func:`one_pass_counts`.
    """
    n = y.shape[0]
    w = d1 / d1.sum()
    log_potential = 0.0
    n_used = 0
    for j in order:
        h = signs[j]
        eps = 0.0
        for i in range(n):
            eps += w[i] * (h[i] != y[i])
        alpha_out[j] = 0.0
        if abs(0.5 - eps) < gamma_bar:
            continue
        alpha = 0.5 * math.log((1.0 - eps + smoothing) / (eps + smoothing))
        alpha_out[j] = alpha
        n_used += 1
        down = math.exp(-alpha)
        up = math.exp(alpha)
        total = 0.0
        for i in range(n):
            w[i] *= down if h[i] == y[i] else up
            total += w[i]
        w /= total
        log_potential += math.log(total)
    return n_used, log_potential

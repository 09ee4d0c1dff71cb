"""Numba kernels of one-pass boosting (Barutcuoglu et al. 2007), over plain arrays.

* Column and linear-score access to CSR matrices (``indptr``, ``indices``, ``data`` with sorted
  indices, as :func:`boostkit.data.check_features` returns them), so a fitted model predicts on
  sparse term counts without densifying them.
* :func:`potential_advantage`: PickyAdaBoost's advantage for confidence-rated classifiers. Their
  voting weight (section 4: "choose each voting weight alpha_t in order to maximize the
  reduction in potential ... using Newton's method") is the engine's
  :func:`boostkit.kernels.boosting.exp_loss_alpha`, over the examples where they do not abstain.
* :func:`one_pass_counts` and :func:`one_pass_signs`: one whole pass of one-pass AdaBoost or
  PickyAdaBoost (section 3) fused into one loop, touching only the examples a base classifier
  votes on: O(nnz) for term counts, as Naive Bayes.

Naive reference implementations live in ``tests/onepass/test_onepass_kernels.py``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from boostkit.kernels.boosting import exp_loss_alpha, interleaved_sum

# Count values 1..SMALL_COUNTS (times the label's sign) are grouped into bins, so Newton's
# iterations cost O(distinct counts) instead of O(examples) for term counts.
SMALL_COUNTS = 64
# The column copy of csr_margin_columns packs each non-zero into one integer,
# row << CODE_BITS | code: code = 2 c + [margin > 0] for a margin +-c, c in 0..SMALL_COUNTS
# (c = 0: a stored zero, on which h abstains), or RAW_CODE for any other margin, kept aside in a
# float64 array. The conversion's cost is its scattered writes: one 4-byte write per term count
# instead of a row and a float64 margin; the code is also the bin and the weight factor's index.
CODE_BITS = 8
RAW_CODE = (1 << CODE_BITS) - 1


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
def csr_margin_columns(indptr, indices, data, y, n_columns, entries):
    """The CSC form of a CSR matrix with values y_i x_ij, coded: ``(column_ptr, raw)``.

    ``entries`` (length nnz; uint32 when ``(n_rows << CODE_BITS) | RAW_CODE`` fits, else uint64:
    unsigned, so the kernels index with them without tests for negative indices) receives,
    column by column with rows sorted, ``row << CODE_BITS | code`` (see ``CODE_BITS``);
    ``raw[k]`` is the margin of an entry coded ``RAW_CODE`` (other slots are left unset). One
    counting pass and one scatter pass, as scipy's ``tocsc``, multiplying by the labels on the
    way, so the one-pass kernel reads margins directly.
    """
    column_ptr = np.zeros(n_columns + 1, dtype=np.int64)
    for k in range(indices.shape[0]):
        column_ptr[indices[k] + 1] += 1
    for j in range(n_columns):
        column_ptr[j + 1] += column_ptr[j]
    fill = column_ptr[:-1].copy()
    raw = np.empty(indices.shape[0])
    for i in range(indptr.shape[0] - 1):
        row = i << CODE_BITS
        for k in range(indptr[i], indptr[i + 1]):
            v = y[i] * data[k]
            a = abs(v)
            j = np.uint64(indices[k])  # unsigned: no wraparound test for negative indices
            p = fill[j]
            fill[j] = p + 1
            if a <= SMALL_COUNTS and a == int(a):
                entries[p] = row | (2 * int(a) + (v > 0.0))
            else:
                entries[p] = row | RAW_CODE
                raw[p] = v
    return column_ptr, raw


@numba.njit(cache=True, nogil=True)
def all_plus_minus_one(values):
    """Whether every entry of a dense array is -1 or +1 (stops at the first that is not)."""
    for v in values.ravel():
        if v != 1.0 and v != -1.0:
            return False
    return True


# Near-zero smoothing for the potential's infimum (see potential_advantage).
_INFIMUM_SMOOTHING = 1e-15


@numba.njit(cache=True, nogil=True)
def potential_advantage(u, w, tol, max_iter):
    """|gamma| = 1/2 sqrt(1 - Z*^2), Z* = min_alpha sum_i D(i) exp(-alpha y_i h(x_i)).

    ``u`` are the non-zero margins y_i h(x_i), ``w`` their weights under a distribution D (the
    other examples add their mass to Z whatever alpha). For h in {-1, +1}, Z* = 2 sqrt(eps
    (1 - eps)) and this is exactly |1/2 - eps|, the magnitude of Barutcuoglu et al. 2007's
    advantage; in general it is the advantage of the +-1 classifier that would lower AdaBoost's
    potential by the same factor Z* (Z_t = sqrt(1 - 4 gamma_t^2)). 1 - Z* = -sum_k w_k expm1(-alpha*
    u_k) is summed directly, so small advantages keep their precision. When every u_k has one sign
    the infimum is reached at infinity: Z* is the mass of the examples where h abstains. (The 1e-15
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
def _column_margins(start, stop, entries, raw, w, total, bins, out_u, out_w, out_code):
    """The margins y_i x_ij of one coded column with their weights w_i / total, grouped.

    Entries coded +-1..+-SMALL_COUNTS (term counts) are summed per code in ``bins``, a zeroed
    (2, 2 SMALL_COUNTS + 2) scratch array left zeroed on return (codes 0 and 1, stored zeros, are
    never read): two partial sums per code, alternating, halve the chain of dependent additions.
    ``RAW_CODE`` margins pass through. Returns ``(g, largest)``: the number of
    (margin, weight, code) triples written to ``out_u``/``out_w``/``out_code`` (the raw ones in
    row order, then -1, -2, ..., then +1, +2, ...), and the largest code in the column.
    """
    m = 0
    largest = 0
    for k in range(start, stop):
        i = entries[k] >> CODE_BITS
        code = entries[k] & RAW_CODE
        if code == RAW_CODE:
            out_u[m] = raw[k]
            out_w[m] = w[i]
            out_code[m] = RAW_CODE
            m += 1
        else:
            bins[k & 1, code] += w[i]
            largest = max(largest, code)
    for side in range(2):
        for code in range(2 + side, largest + 1, 2):
            both = bins[0, code] + bins[1, code]
            if both != 0.0:
                out_u[m] = code >> 1 if side == 1 else -(code >> 1)
                out_w[m] = both
                out_code[m] = code
                bins[0, code] = 0.0
                bins[1, code] = 0.0
                m += 1
    for k in range(m):  # normalise the few sums, not every document's weight
        out_w[k] /= total
    return m, largest


@numba.njit(cache=True, nogil=True)
def one_pass_counts(indptr, entries, raw, d1, order, gamma_bar, smoothing, tol, max_iter,
                    alpha_out):
    """One pass of (Picky)AdaBoost over confidence-rated base classifiers h_j(x) = x_j.

    ``indptr``/``entries``/``raw``: the training matrix by columns, with values y_i x_ij coded
    (:func:`csr_margin_columns`: the pass never reads the labels). For each feature j
    in ``order``: if its advantage |gamma| (:func:`potential_advantage`) is below ``gamma_bar``
    the classifier is skipped (PickyAdaBoost, section 3; ``gamma_bar = 0`` is one-pass
    AdaBoost, which uses every classifier), else alpha_j minimises the potential
    (:func:`exp_loss_alpha`) and only the weights of the examples with x_j != 0 change.

    Weights are kept unnormalised, w_i = D_1(i) exp(-y_i F(x_i)) / scale, with their running
    total (multiplied by each round's Z_t, from the grouped sums): no O(m) normalisation per
    round. The total is resummed once the rounds since the last resum have updated m weights
    (so the resums cost O(nnz + m) in all, and the total drifts from the weights' sum by the
    roundings of at most m rounds), and the weights are rescaled when it leaves
    [1e-100, 1e100].
    ``alpha_out[j]`` receives alpha_j (0 for skipped features). Returns
    ``(n_used, log_potential)``: the number of classifiers used and
    log sum_i D_1(i) exp(-y_i F(x_i)).
    """
    w = d1.copy()
    total = interleaved_sum(w)
    log_scale = 0.0
    max_nnz = 0
    for j in range(indptr.shape[0] - 1):
        max_nnz = max(max_nnz, indptr[j + 1] - indptr[j])
    gu = np.empty(max_nnz + 2 * SMALL_COUNTS)
    gw = np.empty(max_nnz + 2 * SMALL_COUNTS)
    gcode = np.empty(max_nnz + 2 * SMALL_COUNTS, dtype=np.int64)
    bins = np.zeros((2, 2 * SMALL_COUNTS + 2))
    factors = np.ones(2 * SMALL_COUNTS + 2)  # by code; 1 for stored zeros
    n_used = 0
    updated = 0  # weights updated since the last resum
    for j in order:
        start = indptr[j]
        stop = indptr[j + 1]
        alpha_out[j] = 0.0
        g, largest = _column_margins(start, stop, entries, raw, w, total, bins, gu, gw, gcode)
        if g == 0:  # abstains on every example: nothing to use
            continue
        if gamma_bar > 0.0 and potential_advantage(gu[:g], gw[:g], tol, max_iter) < gamma_bar:
            continue
        alpha = exp_loss_alpha(gu[:g], gw[:g], smoothing, tol, max_iter)
        alpha_out[j] = alpha
        n_used += 1
        # exp(-alpha u) for the grouped margins u = +-c: a table lookup instead of an exp (and
        # of a branch on the unpredictable label) per document.
        agree = math.exp(-alpha)
        disagree = 1.0 / agree
        for code in range(2, largest + 1, 2):
            factors[code] = factors[code - 2] * disagree
            factors[code + 1] = factors[code - 1] * agree
        # The total changes by the factor Z_t = 1 + sum_k D(k) (exp(-alpha u_k) - 1), summed
        # over the few groups with the factors the documents' weights get (no serial sum over
        # the documents, and no other exp per group).
        change = 0.0
        for k in range(g):
            if gcode[k] == RAW_CODE:
                change += gw[k] * math.expm1(-alpha * gu[k])
            else:
                change += gw[k] * (factors[gcode[k]] - 1.0)
        total *= 1.0 + change
        for k in range(start, stop):
            i = entries[k] >> CODE_BITS
            code = entries[k] & RAW_CODE
            if code == RAW_CODE:
                w[i] *= math.exp(-alpha * raw[k])
            else:
                w[i] *= factors[code]
        updated += stop - start
        if updated >= w.shape[0]:
            total = interleaved_sum(w)
            updated = 0
        if not 1e-100 < total < 1e100:
            w /= total
            log_scale += math.log(total)
            total = 1.0
    total = interleaved_sum(w)
    return n_used, log_scale + math.log(total)


@numba.njit(cache=True, nogil=True)
def one_pass_signs(signs, y, d1, order, gamma_bar, smoothing, alpha_out, renormalize=True):
    """One pass of (Picky)AdaBoost over +-1 base classifiers, ``signs[j, i] = h_j(x_i)`` (int8).

    Feature-major (d, n), so a base classifier is one contiguous row. For each j in ``order``:
    eps = sum_i D_t(i) [h_j(x_i) != y_i], gamma = 1/2 - eps; skip if |gamma| < ``gamma_bar``,
    else alpha_j = 1/2 ln((1 - eps + s) / (eps + s)) (Barutcuoglu et al. 2007, Fig. 1, smoothed by s
    as ``constant-alpha``/``onepass-alpha``) and D_{t+1}(i) = D_t(i) exp(-alpha_j y_i h_j(x_i)) /
    Z_t, normalised in the same loop. Returns ``(n_used, log_potential)`` as
    :func:`one_pass_counts`.

    ``renormalize=False`` is not the paper's algorithm: the weights D_1(i) prod_s
    exp(-alpha_s y_i h_s(x_i)) are never divided by Z_t, so eps (and Picky's |gamma|) is their
    raw mass on the mistakes. It is the reading under which Table 2's published OPAB and Picky
    errors come out (see :func:`boostkit_onepass.synthetic.run_table2_row`).
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
        if renormalize:
            w /= total
            log_potential += math.log(total)
        else:  # w is then the potential's terms themselves
            log_potential = math.log(total)
    return n_used, log_potential

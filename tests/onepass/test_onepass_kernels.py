"""The numba kernels of boostkit_onepass against naive reference implementations.

Everything here also runs under ``NUMBA_DISABLE_JIT=1`` (sizes are small). Paper:
Barutcuoglu et al. 2007 (sections 3 and 4).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from boostkit_adaboost.coefficients import newton_alpha
from boostkit_onepass.kernels import (
    CODE_BITS,
    RAW_CODE,
    SMALL_COUNTS,
    _column_margins,
    all_plus_minus_one,
    csr_column,
    csr_margin_columns,
    csr_linear,
    dense_linear,
    exp_loss_alpha,
    one_pass_counts,
    one_pass_signs,
    potential_advantage,
)


def _random_counts(rng, n, d, density=0.3, high=4):
    X = sparse.random(n, d, density=density, format="csr", random_state=rng,
                      data_rvs=lambda k: rng.integers(1, high, k).astype(float))
    X.sort_indices()
    return X


def _coded_columns(X, y, dtype=np.uint32):
    """csr_margin_columns of a CSR ``X`` (entries of ``dtype``): (column_ptr, entries, raw)."""
    entries = np.empty(X.nnz, dtype=dtype)
    column_ptr, raw = csr_margin_columns(X.indptr, X.indices, X.data, y, X.shape[1], entries)
    return column_ptr, entries, raw


def _decoded(entries, raw):
    """(rows, margins) of coded entries: code 2c + [margin > 0] is +-c, RAW_CODE reads ``raw``."""
    rows = (entries >> CODE_BITS).astype(np.int64)
    codes = (entries & RAW_CODE).astype(np.int64)
    margins = np.where(codes % 2 == 1, 1.0, -1.0) * (codes // 2)
    margins[codes == RAW_CODE] = raw[codes == RAW_CODE]
    return rows, margins


# -- naive references ---------------------------------------------------------------------------


def naive_one_pass(columns, y, d1, order, gamma_bar, s):
    """One-pass (Picky)AdaBoost written out round by round on dense columns h_j(x_i).

    D_t is renormalised every round; the advantage is 1/2 |1 - 2 eps| for +-1 columns and
    1/2 sqrt(1 - Z*^2) otherwise, with Z* the smallest potential on a fine grid of alphas.
    """
    D = d1 / d1.sum()
    alphas = np.zeros(columns.shape[1])
    for j in order:
        h = columns[:, j]
        if np.all(np.abs(h) == 1):
            eps = D[h != y].sum()
            gamma = abs(0.5 - eps)
            alpha = 0.5 * math.log((1 - eps + s) / (eps + s))
        else:
            rows = h != 0
            if not rows.any():
                continue
            u, w = y[rows] * h[rows], D[rows]
            zero_mass = 1 - w.sum()
            grid = np.linspace(-40, 40, 80001) / np.abs(u).max()
            z_star = float((np.exp(-np.outer(grid, u)) @ w).min()) + zero_mass
            gamma = 0.5 * math.sqrt(max(0.0, 1 - min(z_star, 1.0) ** 2))
            alpha = newton_alpha(y * h, D, s)
        if gamma_bar > 0 and gamma < gamma_bar:
            continue
        alphas[j] = alpha
        D = D * np.exp(-alpha * y * h)
        D /= D.sum()
    return alphas


# -- CSR access ---------------------------------------------------------------------------------


def test_csr_column_and_linear_match_dense():
    rng = np.random.default_rng(0)
    X = _random_counts(rng, 30, 12)
    dense = X.toarray()
    for j in range(12):
        out = np.empty(30)
        csr_column(X.indptr, X.indices, X.data, j, out)
        assert np.array_equal(out, dense[:, j])
    a, c = rng.normal(size=12), rng.normal(size=12)
    expected = 0.7 + dense @ a + (dense > 0) @ c
    out = np.empty(30)
    csr_linear(X.indptr, X.indices, X.data, a, c, 0.7, out)
    assert np.allclose(out, expected, rtol=0, atol=1e-12)
    dense_linear(dense, a, c, 0.7, out)
    assert np.allclose(out, expected, rtol=0, atol=1e-12)


def test_all_plus_minus_one():
    assert all_plus_minus_one(np.array([[1.0, -1.0], [-1.0, 1.0]]))
    assert not all_plus_minus_one(np.array([1.0, 0.0]))
    assert not all_plus_minus_one(np.array([1.0, 2.0]))


# -- voting weights -----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**31 - 1), st.sampled_from([1e-15, 1e-4, 0.05]))
def test_exp_loss_alpha_is_newton_alphas_minimiser(n, seed, s):
    """Same minimiser as boostkit_adaboost's newton-alpha, which sees every example."""
    rng = np.random.default_rng(seed)
    u = rng.integers(-3, 4, n).astype(float) * rng.choice([1.0, 0.5], n)
    w = rng.random(n)
    w /= w.sum()
    rows = u != 0
    expected = newton_alpha(u, w, s)
    got = exp_loss_alpha(u[rows], w[rows], s, 1e-12, 100)
    assert got == pytest.approx(expected, rel=1e-8, abs=1e-10)


def test_exp_loss_alpha_closed_form_for_two_values():
    # u in {+2, -2} with weights 0.6 / 0.2 (0.2 abstains):
    # beta = 1/2 ln((0.6 + s) / (0.2 + s)), alpha = beta / 2
    u, w = np.array([2.0, 2.0, -2.0]), np.array([0.3, 0.3, 0.2])
    s = 0.01
    expected = 0.25 * math.log(0.61 / 0.21)
    assert exp_loss_alpha(u, w, s, 1e-12, 100) == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("eps", [0.1, 0.3, 0.45, 0.7])
def test_potential_advantage_is_the_advantage_of_a_sign_classifier(eps):
    u = np.array([1.0, -1.0])
    w = np.array([1 - eps, eps])
    assert potential_advantage(u, w, 1e-12, 100) == pytest.approx(abs(0.5 - eps), rel=1e-9)


def test_potential_advantage_of_counts_against_a_grid():
    u = np.array([3.0, 1.0, -2.0, 1.0])
    w = np.array([0.2, 0.3, 0.25, 0.05])  # 0.2 abstains
    grid = np.linspace(-5, 5, 200001)
    z_star = float((np.exp(-np.outer(grid, u)) @ w).min()) + 0.2
    gamma = potential_advantage(u, w, 1e-12, 100)
    assert gamma == pytest.approx(0.5 * math.sqrt(1 - z_star**2), rel=1e-6)
    # rescaling the classifier changes nothing
    assert potential_advantage(7 * u, w, 1e-12, 100) == pytest.approx(gamma, rel=1e-9)


def test_potential_advantage_of_a_pure_term_is_its_infimum():
    # a term seen only in positive texts of mass 0.1: Z* = 0.9 (alpha -> infinity)
    got = potential_advantage(np.array([1.0, 2.0]), np.array([0.05, 0.05]), 1e-12, 100)
    assert got == pytest.approx(0.5 * math.sqrt(1 - 0.9**2), rel=1e-12)


def test_column_margins_group_equal_counts():
    # one column: counts 1, 1, 2, 0.5, 100, 1 and a stored zero, labels +, -, +, +, -, +, -
    X = sparse.csr_matrix((np.array([1.0, 1.0, 2.0, 0.5, 100.0, 1.0, 0.0]), np.zeros(7, int),
                           np.arange(8)), shape=(7, 1))
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0])
    column_ptr, entries, raw = _coded_columns(X, y)
    w = np.array([0.1, 0.2, 0.3, 0.15, 0.25, 0.05, 0.4]) * 2  # total 2
    bins = np.zeros((2, 2 * SMALL_COUNTS + 2))
    out_u, out_w = np.empty(7 + 2 * SMALL_COUNTS), np.empty(7 + 2 * SMALL_COUNTS)
    out_code = np.empty(7 + 2 * SMALL_COUNTS, dtype=np.int64)
    g, largest = _column_margins(0, 7, entries, raw, w, 2.0, bins, out_u, out_w, out_code)
    assert largest == 2 * 2 + 1  # +2
    # raw margins in row order, then -1, then +1, +2 (counts summed, the stored zero dropped)
    assert np.array_equal(out_u[:g], [0.5, -100.0, -1.0, 1.0, 2.0])
    assert np.allclose(out_w[:g], [0.15, 0.25, 0.2, 0.15, 0.3], rtol=0, atol=1e-15)
    assert np.array_equal(out_code[:g], [RAW_CODE, RAW_CODE, 2, 3, 5])
    assert not bins[:, 2:].any()


# -- fused passes -------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma_bar", [0.0, 0.02, 0.1])
@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_one_pass_counts_matches_the_naive_pass(gamma_bar, dtype):
    rng = np.random.default_rng(3)
    dense = _random_counts(rng, 40, 15, density=0.25).toarray()
    dense[0, 3] = 0.5  # a non-integer count and one above SMALL_COUNTS go through the exp path
    dense[1, 4] = SMALL_COUNTS + 1.0
    dense[2, 5] = 0.0
    rows, columns = np.nonzero(dense)
    rows, columns = np.append(rows, 2), np.append(columns, 5)  # a stored zero: h abstains
    X = sparse.csr_matrix((dense[rows, columns], (rows, columns)), shape=dense.shape)
    assert X.nnz == np.count_nonzero(dense) + 1
    y = np.where(rng.random(40) < 0.4, 1.0, -1.0)
    d1 = np.full(40, 1 / 40)
    order = rng.permutation(15)
    s = 1 / 40
    expected = naive_one_pass(X.toarray(), y, d1, order, gamma_bar, s)
    alpha = np.zeros(15)
    n_used, log_potential = one_pass_counts(*_coded_columns(X, y, dtype), d1, order, gamma_bar,
                                            s, 1e-12, 100, alpha)
    assert np.allclose(alpha, expected, rtol=1e-7, atol=1e-9)
    assert n_used == np.count_nonzero(expected)
    F = X.toarray() @ alpha
    assert log_potential == pytest.approx(math.log(np.mean(np.exp(-y * F))), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("gamma_bar", [0.0, 0.05, 0.2])
def test_one_pass_signs_matches_the_naive_pass(gamma_bar):
    rng = np.random.default_rng(4)
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    X = np.where(rng.random((50, 8)) < 0.7, y[:, None], -y[:, None])
    d1 = rng.random(50)
    order = rng.permutation(8)
    expected = naive_one_pass(X, y, d1, order, gamma_bar, 1e-3)
    alpha = np.zeros(8)
    n_used, log_potential = one_pass_signs(X.T.astype(np.int8).copy(), y, d1, order, gamma_bar,
                                           1e-3, alpha)
    assert np.allclose(alpha, expected, rtol=1e-12, atol=1e-14)
    assert n_used == np.count_nonzero(expected)
    D1 = d1 / d1.sum()
    assert log_potential == pytest.approx(math.log(D1 @ np.exp(-y * (X @ alpha))), rel=1e-10)


@pytest.mark.parametrize("gamma_bar", [0.0, 0.1])
def test_one_pass_signs_without_renormalising_uses_the_raw_mass_of_the_mistakes(gamma_bar):
    rng = np.random.default_rng(8)
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    X = np.where(rng.random((60, 10)) < 0.65, y[:, None], -y[:, None])
    d1, order, s = np.full(60, 1 / 60), rng.permutation(10), 1e-3
    W, expected = d1.copy(), np.zeros(10)  # never divided by Z_t
    for j in order:
        eps = W[X[:, j] != y].sum()
        if gamma_bar > 0 and abs(0.5 - eps) < gamma_bar:
            continue
        expected[j] = 0.5 * math.log((1 - eps + s) / (eps + s))
        W = W * np.exp(-expected[j] * y * X[:, j])
    alpha = np.zeros(10)
    n_used, log_potential = one_pass_signs(X.T.astype(np.int8).copy(), y, d1, order, gamma_bar,
                                           s, alpha, False)
    assert np.allclose(alpha, expected, rtol=1e-12, atol=1e-14)
    assert n_used == np.count_nonzero(expected)
    assert log_potential == pytest.approx(math.log(W.sum()), rel=1e-10)
    renormalised = np.zeros(10)
    one_pass_signs(X.T.astype(np.int8).copy(), y, d1, order, gamma_bar, s, renormalised)
    assert not np.allclose(alpha, renormalised)  # the two readings differ after round one


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_csr_margin_columns_is_the_transpose_times_the_labels(dtype):
    rng = np.random.default_rng(6)
    X = _random_counts(rng, 25, 9, high=2 * SMALL_COUNTS)  # counts above SMALL_COUNTS stay raw
    X.data[::7] *= rng.choice([0.5, -1.0, 1e6], X.data[::7].shape)
    y = np.where(rng.random(25) < 0.5, 1.0, -1.0)
    column_ptr, entries, raw = _coded_columns(X, y, dtype)
    reference = sparse.csc_matrix(X.multiply(y[:, None]))
    reference.sort_indices()
    rows, margins = _decoded(entries, raw)
    assert np.array_equal(column_ptr, reference.indptr)
    assert np.array_equal(rows, reference.indices)
    assert np.array_equal(margins, reference.data)

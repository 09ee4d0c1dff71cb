"""The fused pass of a term constant per cell (boostkit.kernels.fused) against numpy: the
margins and errors of add_contribution, the weights times their cell's factor, their total, and
the rows off the kept cell in order with their change of weight; carry_factors' factors, kept
cell and drift factor."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
from boostkit.kernels.boosting import add_contribution, exponential_distribution
from boostkit.kernels.fused import (carry_factors, cell_term_pass, cell_term_pass_into,
                                    factor_scale, pair_term_pass, pair_term_pass_into)


def _problem(rng, n, n_bins, n_cells, n_classes=None):
    shape = (n,) if n_classes is None else (n, n_classes)
    code_row = rng.integers(0, n_bins, n).astype(np.uint8)
    table = rng.integers(0, n_cells, n_bins).astype(np.uint8)
    table[:n_cells] = np.arange(n_cells)  # every cell a bin
    values_shape = (n_cells,) if n_classes is None else (n_cells, n_classes)
    values = rng.normal(size=values_shape)
    values.ravel()[0] = 0.0  # an abstaining cell
    is_pos = rng.integers(0, 2, shape).astype(np.uint8)
    d1 = rng.random(shape)
    d1.ravel()[:3] = 0.0
    d1 /= max(d1.sum(), 1.0)
    weights = rng.random(shape)
    weights /= weights.sum()
    margin = rng.normal(size=shape)
    log_factors = np.stack([values, -values], axis=-1)  # AdaBoost's exponential rule
    return code_row, table, values, log_factors, is_pos, d1, weights, margin


def _expected(code_row, table, values, factors, kept, is_pos, d1, weights, margin):
    cells = table[code_row]
    y = 2.0 * is_pos - 1.0
    value = values[cells]
    new_margin = margin + value
    train_err = float((d1 * (y * new_margin <= 0)).sum())
    yv = y * value
    werr = float((weights * ((yv < 0) + 0.5 * (yv == 0))).sum())
    factor = np.take_along_axis(factors[cells], is_pos[..., None].astype(np.intp), -1)[..., 0]
    new_weights = weights * factor
    off = np.flatnonzero(cells != kept) if kept >= 0 else np.empty(0, dtype=np.intp)
    kept_factor = np.take_along_axis(factors[kept][None].repeat(len(cells), 0),
                                     is_pos[..., None].astype(np.intp), -1)[..., 0]
    change = ((factor - kept_factor) * weights)[off]
    return new_margin, train_err, werr, new_weights, off, change, is_pos[off]


def _run(kernel, code_row, table, values, factors, kept, is_pos, d1, weights, margin):
    weights, margin = weights.copy(), margin.copy()
    rows = np.empty(code_row.shape[0], dtype=np.uintp)
    row_change = np.empty(weights.shape)
    row_pos = np.empty(weights.shape, dtype=np.uint8)
    n_off, total, train_err, werr = kernel(code_row, table, values, factors, kept, is_pos, d1,
                                           weights, margin, rows, row_change, row_pos)
    return (weights, margin, rows[:n_off], row_change[:n_off], row_pos[:n_off], total,
            train_err, werr)


def _check_against_numpy(got, want):
    """A pass's outputs against :func:`_expected`'s; its new margins and two errors."""
    new_weights, new_margin, rows, change, pos, total, train_err, werr = got
    np.testing.assert_array_equal(new_margin, want[0])
    np.testing.assert_array_equal(new_weights, want[3])
    assert total == pytest.approx(new_weights.sum(), rel=1e-13)
    np.testing.assert_array_equal(rows, want[4])
    np.testing.assert_allclose(change, want[5], rtol=1e-15, atol=0)
    np.testing.assert_array_equal(pos, want[6])
    return new_margin, train_err, werr


@pytest.mark.parametrize("kept", [-1, 0, 2])
def test_the_binary_pass_is_numpys_and_add_contributions(kept):
    rng = np.random.default_rng(1)
    code_row, table, values, log_factors, is_pos, d1, weights, margin = _problem(rng, 1001, 9, 3)
    margin[3:9] = -values[table[code_row[3:9]]]  # F_t = 0 exactly: wrong for either sign
    factors = np.exp(log_factors)
    got = _run(cell_term_pass, code_row, table, values, factors, kept, is_pos, d1, weights,
               margin)
    new_margin, train_err, werr = _check_against_numpy(
        got, _expected(code_row, table, values, factors, kept, is_pos, d1, weights, margin))
    # The margins and the errors of the whole-rows pass, bit for bit.
    old_margin = margin.copy()
    y = 2.0 * is_pos - 1.0
    train, weighted, _, finite = add_contribution(old_margin, values[table[code_row]], y, d1,
                                                  weights)
    assert finite and (train_err, werr) == (train, weighted)
    np.testing.assert_array_equal(new_margin, old_margin)


@pytest.mark.parametrize("kept", [-1, 1])
def test_the_pair_pass_is_numpys_and_add_contributions_over_the_flat_pairs(kept):
    rng = np.random.default_rng(2)
    code_row, table, values, log_factors, is_pos, d1, weights, margin = _problem(
        rng, 777, 7, 3, n_classes=4)
    factors = np.exp(log_factors)
    got = _run(pair_term_pass, code_row, table, values, factors, kept, is_pos, d1, weights,
               margin)
    new_margin, train_err, werr = _check_against_numpy(
        got, _expected(code_row, table, values, factors, kept, is_pos, d1, weights, margin))
    old_margin = margin.copy().ravel()
    y = (2.0 * is_pos - 1.0).ravel()
    train, weighted, _, finite = add_contribution(
        old_margin, values[table[code_row]].ravel(), y, d1.ravel(), weights.ravel())
    assert finite and (train_err, werr) == (train, weighted)


def test_carry_factors_by_hand():
    # Cells 0 (10 rows), 1 (30 rows: kept), 2 (no rows: its huge factor scales nothing).
    log_factors = np.array([[0.5, -0.5], [-0.25, 0.25], [800.0, -800.0]])
    factors, kept, growth = carry_factors(log_factors, np.array([10.0, 30.0, 0.0]))
    assert kept == 1
    np.testing.assert_allclose(factors[:2], np.exp(log_factors[:2] - 0.5), rtol=1e-15)
    # rho = max over signs of g[kept] / g[0]: e^{0.25 + 0.5} for the positive rows.
    assert growth == pytest.approx(np.exp(0.75), rel=1e-15)
    factors, kept, growth = carry_factors(np.stack([log_factors] * 2, axis=1).copy(),
                                          np.array([10.0, 30.0, 0.0]))
    assert factors.shape == (3, 2, 2) and kept == 1 and growth == pytest.approx(np.exp(0.75))


def test_carry_factors_says_inf_when_a_factor_of_a_cell_with_rows_underflows():
    log_factors = np.array([[0.0, 0.0], [-800.0, 800.0]])
    assert carry_factors(log_factors, np.array([5.0, 1.0]))[2] == np.inf
    assert carry_factors(np.array([[0.0, np.nan], [1.0, 1.0]]), np.array([5.0, 1.0]))[2] == np.inf
    # A cell that is kept and alone: nothing changes, rho is 1.
    assert carry_factors(log_factors, np.array([5.0, 0.0]))[2] == 1.0



@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.sampled_from([None, 3]), st.sampled_from([1.0, 300.0, 800.0]),
       st.integers(0, 2 ** 32 - 1))
def test_property_carry_factors_are_exp_of_the_log_factors_less_the_scale_bit_for_bit(
        n_cells, n_classes, spread, seed):
    # factors = e^{log g - scale} elementwise (libm's exp, as Python's math.exp), 0 where a
    # cell without rows overflowed or the scale is not finite; the shape of log_factors.
    rng = np.random.default_rng(seed)
    shape = (n_cells, 2) if n_classes is None else (n_cells, n_classes, 2)
    log_factors = rng.normal(size=shape) * spread
    if seed % 5 == 0:
        log_factors.flat[seed % log_factors.size] = (np.nan, np.inf, -np.inf)[seed % 3]
    rows_per_cell = rng.integers(0, 3, n_cells) * rng.random(n_cells)
    factors, _, _ = carry_factors(log_factors, rows_per_cell)
    scale = factor_scale(log_factors, rows_per_cell)
    assert factors.shape == shape and factors.dtype == np.float64
    for index, value in np.ndenumerate(log_factors):
        try:
            want = math.exp(value - scale) if math.isfinite(scale) else 0.0
        except OverflowError:  # Python raises where libm gives inf
            want = math.inf
        if rows_per_cell[index[0]] <= 0 and not math.isfinite(want):
            want = 0.0
        assert factors[index] == want or (math.isnan(want) and math.isnan(factors[index]))

@settings(max_examples=60, deadline=None)
@given(st.integers(0, 300), st.integers(1, 6), st.integers(-1, 5), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([None, 3]))
def test_property_weights_stay_non_negative_and_the_compaction_is_the_rows_off_the_kept_cell(
        n, n_cells, kept, seed, n_classes):
    rng = np.random.default_rng(seed)
    kept = min(kept, n_cells - 1)
    code_row, table, values, log_factors, is_pos, d1, weights, margin = _problem(
        rng, n, max(n_cells, 4), n_cells, n_classes)
    values *= 20.0
    log_factors *= 20.0
    rows_per_cell = np.bincount(table[code_row], minlength=n_cells).astype(np.float64)
    factors, carry_kept, growth = carry_factors(log_factors, rows_per_cell)
    assert growth >= 1.0 and (n == 0 or rows_per_cell[carry_kept] == rows_per_cell.max())
    kernel = cell_term_pass if n_classes is None else pair_term_pass
    new_weights, _, rows, change, pos, total, _, _ = _run(
        kernel, code_row, table, values, factors, kept, is_pos, d1, weights, margin)
    assert (new_weights >= 0).all()
    assert total == pytest.approx(new_weights.sum(), rel=1e-12, abs=1e-300)
    cells = table[code_row]
    want = np.flatnonzero(cells != kept) if kept >= 0 else np.empty(0, dtype=np.intp)
    np.testing.assert_array_equal(rows, want)
    np.testing.assert_array_equal(pos, is_pos[want])
    # Each compacted row's change of weight: (g[cell, s] - g[kept, s]) D_t(i).
    sign = is_pos[want][..., None].astype(np.intp)
    factor = np.take_along_axis(factors[cells[want]], sign, -1)[..., 0]
    kept_factor = np.take_along_axis(factors[max(kept, 0)][None].repeat(len(want), 0), sign,
                                     -1)[..., 0]
    np.testing.assert_array_equal(change, (factor - kept_factor) * weights[want])


def test_a_reweighting_that_overrides_the_rule_below_its_factors_declares_none():
    from boostkit_adaboost.multiclass import SammeWeights
    from boostkit_adaboost.reweighting import ExponentialReweighting

    from boostkit.plane import cell_log_factors

    exponential = ExponentialReweighting()
    assert cell_log_factors(exponential) == exponential.cell_log_factors
    # SAMME's weights floored after normalising are no product of per-cell factors.
    assert cell_log_factors(SammeWeights(floor=1e-3)) is None
    assert cell_log_factors(object()) is None


@pytest.mark.parametrize("kernel, into, n_classes", [
    (cell_term_pass, cell_term_pass_into, None), (pair_term_pass, pair_term_pass_into, 3)])
def test_the_into_passes_leave_d_t_and_write_the_in_place_passes_numbers(kernel, into, n_classes):
    rng = np.random.default_rng(3)
    code_row, table, values, log_factors, is_pos, d1, weights, margin = _problem(
        rng, 513, 6, 3, n_classes)
    factors = np.exp(log_factors)
    in_place = _run(kernel, code_row, table, values, factors, 1, is_pos, d1, weights, margin)
    kept_weights, new_weights, new_margin = weights.copy(), np.empty(weights.shape), margin.copy()
    rows = np.empty(513, dtype=np.uintp)
    row_change, row_pos = np.empty(weights.shape), np.empty(weights.shape, dtype=np.uint8)
    n_off, total, train_err, werr = into(code_row, table, values, factors, 1, is_pos, d1,
                                         kept_weights, new_weights, new_margin, rows, row_change,
                                         row_pos)
    np.testing.assert_array_equal(kept_weights, weights)
    got = (new_weights, new_margin, rows[:n_off], row_change[:n_off], row_pos[:n_off], total,
           train_err, werr)
    for a, b in zip(got, in_place):
        np.testing.assert_array_equal(a, b)


def test_fused_weights_stay_within_the_drift_bound_of_the_margins_weights():
    # 200 rounds of real AdaBoost on separable mushroom (its values grow to several units):
    # every weight of the normal range within (3 k + 2 sum_t max |v_t| + 2 max |y F| + 2 n) u
    # of exp(-y F) normalised, the weights computed from the margins (2 n u: the two totals'
    # rounding, a common scale).
    if "mushroom" not in boostkit.datasets.available():
        pytest.skip("dataset mushroom is not available")
    data = boostkit.datasets.load("mushroom", dropna=True)
    worst, bound, size = [], [], [0.0]

    def compare(state, record):
        size[0] += float(np.abs(record.coefficients).max())
        expected, _ = exponential_distribution(state.margin.ravel(), state.data.y.ravel(),
                                               state.initial_weights.ravel())
        normal = expected > np.finfo(np.float64).tiny
        got = state.weights.ravel()[normal]
        worst.append(float((np.abs(got - expected[normal]) / expected[normal]).max()))
        margins = np.abs(state.margin).max()
        bound.append((3 * state.round + 2 * size[0] + 2 * margins + 2 * state.weights.size)
                     * 2.0 ** -53)

    model = boostkit.Booster("real-adaboost", n_rounds=200, callbacks=[compare]).fit(
        data.X, data.y, features=data.features)
    assert len(model.records) == 200
    assert all(w <= b for w, b in zip(worst, bound))

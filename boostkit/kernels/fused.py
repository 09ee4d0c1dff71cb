"""One pass over the rows for a term constant per cell under a reweighting multiplicative per
cell: the margins, the errors, the next weights and the rows the carried histogram sums again.

When the round's term has a value v[j] in each cell j of one binned feature's bins
(``Contribution.cell_table``) and the reweighting multiplies each row's weight by a factor
g[j, y] of its cell and sign (``cell_log_factors``: AdaBoost's exponential rule, D_{t+1}(i) =
D_t(i) e^{-y_i c_t(x_i)} / Z_t, Wilbur et al. 2005, eq. 6), a round's work after the search is
one pass (:func:`cell_term_pass`; :func:`pair_term_pass` over (example, class) pairs,
AdaBoost.MH, Schapire & Singer 1999, Fig. 5): each row's cell from its code, F_t = F_{t-1} +
v[cell] (the margins the whole-rows path writes, bit for bit), the training error and the
term's weighted error (the sums of :func:`boostkit.kernels.boosting.add_contribution`, in the
same order), w_i <- w_i g[cell_i, y_i] and their total, and the rows off the kept cell with
their change of weight (g[cell_i, y_i] - g[kept, y_i]) D_t(i), which the carried histogram sums
(:class:`boostkit.plane.CarriedHistogram`). :func:`carry_factors` gives the factors up to a
common scale, the kept cell and the round's drift factor rho_t from the log factors: the one
rule for every caller. Writes are branch-free, as in
:func:`boostkit.kernels.carried.rows_off_cell`: every row is written at the compaction's end,
the next row overwrites one that stays.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.extending import overload

__all__ = ["carry_factors", "cell_term_pass", "cell_term_pass_into", "factor_scale",
           "pair_term_pass", "pair_term_pass_into"]

#: The least positive normal float64: a weight below it has lost relative precision.
TINY = np.finfo(np.float64).tiny


def _cell_rows(array):
    """``array`` (``(n_cells, ...)``, C-contiguous) as ``(n_cells, k)``: a cell's values in a
    row. This Python body runs without the JIT; compiled, a 2-d array is itself (numba compiles
    no reshape for it, a tenth of a second at a cold start)."""
    return array.reshape(array.shape[0], -1)


@overload(_cell_rows)
def _cell_rows_jit(array):
    if array.ndim == 2:
        return lambda array: array
    return lambda array: array.reshape(array.shape[0], -1)


@numba.njit(cache=True, nogil=True)
def factor_scale(log_factors, rows_per_cell):
    """max log g over the cells that hold rows (``rows_per_cell > 0``; over every cell if none
    does), or NaN if one of theirs is not finite: the common scale :func:`carry_factors`
    divides out, so the round's true factor sum is Z_t = total e^{scale}."""
    n_cells = log_factors.shape[0]
    flat = _cell_rows(log_factors)
    occupied = False
    for j in range(n_cells):
        occupied = occupied or rows_per_cell[j] > 0
    top = -math.inf
    for j in range(n_cells):
        if rows_per_cell[j] > 0 or not occupied:
            for q in range(flat.shape[1]):
                value = flat[j, q]
                if not math.isfinite(value):
                    return math.nan
                top = value if value > top else top
    return top


@numba.njit(cache=True, nogil=True)
def carry_factors(log_factors, rows_per_cell):
    """``(factors, kept, growth)`` of a round's ``log_factors`` (``(n_cells, 2)``, or
    ``(n_cells, C, 2)`` per class; C-contiguous) given the rows in each cell (``(n_cells,)``).

    ``factors`` = exp(log g - :func:`factor_scale`): g up to a common scale, without overflow;
    ``kept`` the cell with the most rows (the first such); ``growth`` rho_t = max(1,
    max_{j != kept, s} g[kept, s] / g[j, s]) over the cells that hold rows, the factor by which
    a carried histogram's relative rounding error may grow in the round
    (:class:`boostkit.plane.CarriedHistogram`), or inf when a factor of a cell with rows
    underflowed or a log factor is not finite: then nothing bounds the drift, and the weights
    of that cell's rows would be lost. A cell without rows (of positive D_1) whose factor
    overflowed gets factor 0: its rows, if any, have weight 0 and keep it.
    """
    n_cells = log_factors.shape[0]
    flat = _cell_rows(log_factors)
    kept = 0
    for j in range(n_cells):
        kept = j if rows_per_cell[j] > rows_per_cell[kept] else kept
    top = factor_scale(log_factors, rows_per_cell)
    finite = math.isfinite(top)
    # Scalar loops with math.exp (the same libm exp as np.exp on an array, bit for bit): numba
    # compiles them in a fraction of the time numpy's array API takes to type and lower.
    shaped_factors = np.empty(log_factors.shape, dtype=np.float64)
    factors = _cell_rows(shaped_factors)
    for j in range(n_cells):
        for q in range(flat.shape[1]):
            factor = math.exp(flat[j, q] - top) if finite else 0.0
            factors[j, q] = 0.0 if rows_per_cell[j] <= 0 and not math.isfinite(factor) else factor
    growth = 1.0 if finite else math.inf
    for j in range(n_cells):
        if rows_per_cell[j] > 0 or j == kept:
            for q in range(flat.shape[1]):
                kept_factor, factor = factors[kept, q], factors[j, q]
                if not (kept_factor > 0.0 and factor > 0.0):
                    growth = math.inf
                elif kept_factor > growth * factor:
                    growth = kept_factor / factor
    return shaped_factors, kept, growth


@numba.njit(cache=True, nogil=True)
def _cell_tables(values, factors, kept_cell, n_classes):
    # Per (cell, class) q = j C + l and sign s, flat at 2 q + s: the term's error weight
    # [y v < 0] + 0.5 [v == 0], the factor g and its change from the kept cell's g[kept, l, s]
    # (0 when nothing is compacted). ``values`` (n_cells C,), ``factors`` (n_cells C, 2).
    size = values.shape[0]
    tables = np.empty((3, 2 * size))  # one allocation, not three (~40 ns each, every round)
    error, factor, change = tables[0], tables[1], tables[2]
    for q in range(size):
        kept = kept_cell * n_classes + q % n_classes
        for s in range(2):
            yv = (2.0 * s - 1.0) * values[q]
            error[2 * q + s] = (yv < 0.0) + 0.5 * (yv == 0.0)
            factor[2 * q + s] = factors[q, s]
            change[2 * q + s] = factors[q, s] - factors[kept, s] if kept_cell >= 0 else 0.0
    return error, factor, change


@numba.njit(cache=True, nogil=True, inline="always")
def _cell_row(i, code_row, table, values, error, factor, is_pos, d1, weights, new_weights,
              margin, total, train_err, werr):
    # Row i of the binary pass: F, the errors, the new weight; the sums so far, updated, and
    # the row's cell, old weight and sign. Branch-free, as add_contribution: the signs are
    # unpredictable.
    cell = table[np.uintp(code_row[i])]
    s = is_pos[i]
    at = np.uintp(2) * np.uintp(cell) + np.uintp(s)
    m = margin[i] + values[cell]
    margin[i] = m
    # D_1(i) [y_i F_t(x_i) <= 0] as D_1(i)'s bits masked by the comparison: D_1(i) or +0.0
    # (D_1 is finite and >= 0), the product's sum bit for bit, without the product or a branch.
    wrong = -np.int64((2.0 * s - 1.0) * m <= 0.0)
    train_err += np.int64(np.float64(d1[i]).view(np.int64) & wrong).view(np.float64)
    w = weights[i]
    werr += w * error[at]
    new = w * factor[at]
    new_weights[i] = new
    total += new
    return total, train_err, werr, cell, w


@numba.njit(cache=True, nogil=True, inline="always")
def _cell_pass(code_row, table, values, factors, kept_cell, is_pos, d1, weights, new_weights,
               margin, rows, row_change, row_pos):
    # cell_term_pass with the new weights written to ``new_weights`` (may be ``weights``).
    error, factor, change = _cell_tables(values, factors, kept_cell, 1)
    n = code_row.shape[0]
    total = train_err = werr = 0.0
    if kept_cell < 0:  # nothing to compact: a loop LLVM vectorises (1.8 against 3.1 ms at 10^6)
        for i in range(n):
            total, train_err, werr, _, _ = _cell_row(i, code_row, table, values, error, factor,
                                                     is_pos, d1, weights, new_weights, margin,
                                                     total, train_err, werr)
        return 0, total, train_err, werr
    k = 0
    for i in range(n):  # every row written at the end, the next overwrites one that stays
        total, train_err, werr, cell, w = _cell_row(i, code_row, table, values, error, factor,
                                                    is_pos, d1, weights, new_weights, margin,
                                                    total, train_err, werr)
        rows[k] = i
        row_change[k] = w  # D_t(i), multiplied by the change of factor below
        k += cell != kept_cell
    for j in range(k):  # two stores a row above, not three: 2.7 against 3.1 ms at 10^6 rows
        i = rows[j]
        s = is_pos[i]
        row_pos[j] = s
        at = np.uintp(2) * np.uintp(table[np.uintp(code_row[i])]) + np.uintp(s)
        row_change[j] = change[at] * row_change[j]
    return k, total, train_err, werr


@numba.njit(cache=True, nogil=True, inline="always")
def _pair_pass(code_row, table, values, factors, kept_cell, is_pos, d1, weights, new_weights,
               margin, rows, row_change, row_pos):
    # pair_term_pass with the new weights written to ``new_weights`` (may be ``weights``).
    n_cells, n_classes = values.shape[0], values.shape[1]
    flat_values = np.ascontiguousarray(values).reshape(n_cells * n_classes)
    flat_factors = np.ascontiguousarray(factors).reshape(n_cells * n_classes, 2)
    error, factor, change = _cell_tables(flat_values, flat_factors, kept_cell, n_classes)
    compact = kept_cell >= 0
    n = code_row.shape[0]
    k = 0
    total = train_err = werr = 0.0
    for i in range(n):
        cell = table[np.uintp(code_row[i])]
        base = np.uintp(cell) * np.uintp(n_classes)
        for l in range(n_classes):
            s = is_pos[i, l]
            at = np.uintp(2) * (base + np.uintp(l)) + np.uintp(s)
            y = 2.0 * s - 1.0
            m = margin[i, l] + flat_values[base + np.uintp(l)]
            margin[i, l] = m
            train_err += d1[i, l] * (y * m <= 0.0)
            w = weights[i, l]
            werr += w * error[at]
            new = w * factor[at]
            new_weights[i, l] = new
            total += new
            row_change[k, l] = change[at] * w
            row_pos[k, l] = s
        rows[k] = i
        k += (cell != kept_cell) & compact
    return k, total, train_err, werr


@numba.njit(cache=True, nogil=True)
def cell_term_pass(code_row, table, values, factors, kept_cell, is_pos, d1, weights, margin,
                   rows, row_change, row_pos):
    """One pass over the rows for a term of value ``values[j]`` in each cell j and a
    reweighting that multiplies a row's weight by ``factors[j, sign]``: returns ``(n_off,
    total, training_error, weighted_error)``.

    ``code_row`` ``(n,)`` uint8 is the split feature's bin codes, ``table`` uint8 the cell of
    each bin code; ``is_pos`` ``(n,)`` uint8 the rows' signs, ``d1`` D_1. In place:
    ``weights`` D_t(i) -> D_t(i) factors[cell_i, sign_i] (unnormalised; ``total`` is their
    sum) and ``margin`` F_{t-1} -> F_t = F_{t-1} + values[cell_i]. The first ``n_off`` entries
    of ``rows`` (uintp), ``row_change`` (float64) and ``row_pos`` (uint8) are the rows whose cell
    is not ``kept_cell`` (increasing), their change of weight (factors[cell, s] -
    factors[kept_cell, s]) D_t(i) and their sign; ``kept_cell`` -1 compacts none (``n_off`` 0).
    ``training_error`` = sum_i D_1(i) [y_i F_t(x_i) <= 0] and ``weighted_error`` = sum_i D_t(i)
    ([y_i v < 0] + 0.5 [v == 0]), v = values[cell_i]: the sums of
    :func:`boostkit.kernels.boosting.add_contribution`, in its order, so the same numbers.
    """
    return _cell_pass(code_row, table, values, factors, kept_cell, is_pos, d1, weights, weights,
                      margin, rows, row_change, row_pos)


@numba.njit(cache=True, nogil=True)
def cell_term_pass_into(code_row, table, values, factors, kept_cell, is_pos, d1, weights,
                        new_weights, margin, rows, row_change, row_pos):
    """:func:`cell_term_pass` with D_t left as it is: the new weights go to ``new_weights``."""
    return _cell_pass(code_row, table, values, factors, kept_cell, is_pos, d1, weights, new_weights,
                      margin, rows, row_change, row_pos)


@numba.njit(cache=True, nogil=True)
def pair_term_pass(code_row, table, values, factors, kept_cell, is_pos, d1, weights, margin,
                   rows, row_change, row_pos):
    """:func:`cell_term_pass` over (example, class) pairs (AdaBoost.MH): one cell per row, and
    per class l the value ``values[j, l]`` (``(n_cells, C)``) and factors ``factors[j, l,
    sign]`` (``(n_cells, C, 2)``); ``is_pos``, ``d1``, ``weights`` and ``margin`` are ``(n, C)``,
    and so are ``row_change`` and ``row_pos`` (a compacted row's C pairs). The errors are summed
    over the pairs in row-major order, as :func:`~boostkit.kernels.boosting.add_contribution`
    sums the flattened pairs."""
    return _pair_pass(code_row, table, values, factors, kept_cell, is_pos, d1, weights, weights,
                      margin, rows, row_change, row_pos)


@numba.njit(cache=True, nogil=True)
def pair_term_pass_into(code_row, table, values, factors, kept_cell, is_pos, d1, weights,
                        new_weights, margin, rows, row_change, row_pos):
    """:func:`pair_term_pass` with D_t left as it is: the new weights go to ``new_weights``."""
    return _pair_pass(code_row, table, values, factors, kept_cell, is_pos, d1, weights, new_weights,
                      margin, rows, row_change, row_pos)

"""The kernels of a histogram carried across rounds: the rows off a term's largest cell, and
the change of their weights summed per feature and bin.

When a reweighting multiplies every row's weight by a factor g[cell, sign] of the last term's
cell and the row's sign, next round's histogram is g[O, .] H + sum_{j != O} (g[j, .] - g[O, .])
H_j, where O is the term's largest cell and H_j the histogram of cell j's rows: only the rows
off O are summed again, as LightGBM gets a leaf's histogram from its sibling's by subtraction.
:func:`rows_off_cell` gathers them (once per round, from the split feature's codes);
:func:`changed_class_histogram` and :func:`changed_pair_histogram` sum
(g[cell_i, y_i] - g[O, y_i]) D_t(i) over them, per feature and bin.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["rows_off_cell", "changed_class_histogram", "changed_pair_histogram"]


@numba.njit(cache=True, nogil=True)
def rows_off_cell(code_row, table, kept_cell):
    """``(rows, cells)``: the rows (increasing, int64) whose cell ``table[code_row[i]]`` is not
    ``kept_cell``, and their cells (uint8). ``code_row`` is one feature's ``(n,)`` uint8 codes,
    ``table`` the ``(n_bins,)`` uint8 cell of every bin code."""
    n = code_row.shape[0]
    count = 0
    for i in range(n):
        if table[code_row[i]] != kept_cell:
            count += 1
    rows = np.empty(count, dtype=np.int64)
    cells = np.empty(count, dtype=np.uint8)
    k = 0
    for i in range(n):
        cell = table[code_row[i]]
        if cell != kept_cell:
            rows[k] = i
            cells[k] = cell
            k += 1
    return rows, cells


@numba.njit(cache=True, nogil=True)
def changed_class_histogram(codes, rows, cells, weights, is_pos, delta, out):
    """Overwrite ``out`` (``(d, n_bins, 2)``) with sum_k delta[cells[k], y_k] D(rows[k]) per
    feature and bin, over the gathered ``rows`` (from :func:`rows_off_cell`).

    ``codes`` is ``(d, n)`` uint8, ``weights`` ``(n,)`` float64 (D_t), ``is_pos`` ``(n,)``
    uint8, ``delta`` ``(n_cells, 2)`` float64 (the change of factor of each cell and sign).
    Every bin adds its rows in increasing order."""
    m = rows.shape[0]
    change = np.empty(m)
    column = np.empty(m, dtype=np.uint8)
    for k in range(m):
        i = rows[k]
        c = is_pos[i]
        column[k] = c
        change[k] = delta[cells[k], c] * weights[i]
    out[:] = 0.0
    d = codes.shape[0]
    f = 0
    while f + 4 <= d:  # four features per pass: a row's change and column are read once
        r0, r1, r2, r3 = codes[f], codes[f + 1], codes[f + 2], codes[f + 3]
        h0, h1, h2, h3 = out[f], out[f + 1], out[f + 2], out[f + 3]
        for k in range(m):
            i = rows[k]
            w = change[k]
            c = column[k]
            h0[r0[i], c] += w
            h1[r1[i], c] += w
            h2[r2[i], c] += w
            h3[r3[i], c] += w
        f += 4
    for g in range(f, d):
        row, hist = codes[g], out[g]
        for k in range(m):
            hist[row[rows[k]], column[k]] += change[k]


@numba.njit(cache=True, nogil=True)
def changed_pair_histogram(codes, rows, cells, weights, is_pos, delta, out):
    """:func:`changed_class_histogram` over (example, class) pairs: ``out`` is
    ``(d, n_bins, C, 2)``, ``weights`` and ``is_pos`` ``(n, C)``, ``delta``
    ``(n_cells, C, 2)``; pair (i, l) adds delta[cell_i, l, Y(i, l) > 0] D(i, l) to
    ``out[f, code, l, Y(i, l) > 0]``."""
    m = rows.shape[0]
    n_classes = weights.shape[1]
    change = np.empty((m, n_classes, 2))
    for k in range(m):
        i = rows[k]
        for l in range(n_classes):
            c = is_pos[i, l]
            change[k, l, c] = delta[cells[k], l, c] * weights[i, l]
            change[k, l, 1 - c] = 0.0
    out[:] = 0.0
    for f in range(codes.shape[0]):
        row, hist = codes[f], out[f]
        for k in range(m):
            b = row[rows[k]]
            for l in range(n_classes):
                hist[b, l, 0] += change[k, l, 0]
                hist[b, l, 1] += change[k, l, 1]

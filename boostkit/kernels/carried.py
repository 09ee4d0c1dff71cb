"""The kernels of a histogram carried across rounds: the rows off a term's largest cell, and
the change of their weights summed per feature and bin.

When a reweighting multiplies every row's weight by a factor g[cell, sign] of the last term's
cell and the row's sign, next round's histogram is g[O, .] H + sum_{j != O} (g[j, .] - g[O, .])
H_j, where O is the term's largest cell and H_j the histogram of cell j's rows: only the rows
off O are summed again, as LightGBM gets a leaf's histogram from its sibling's by subtraction.
:func:`rows_off_cell` finds them (once per round, from the split feature's codes),
:func:`gather_codes` copies their codes into adjacent memory, and :func:`changed_class_weights`
(:func:`changed_pair_weights` over (example, class) pairs) gives each its change of weight
(g[cell_i, y_i] - g[O, y_i]) D_t(i); the engine's histogram kernels sum those per feature and
bin (:func:`boostkit.splits.histogram`) as they sum the weights of all the rows.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["rows_off_cell", "gather_codes", "changed_class_weights", "changed_pair_weights"]


@numba.njit(cache=True, nogil=True)
def rows_off_cell(code_row, table, kept_cell):
    """``(rows, cells)``: the rows (increasing, uintp) whose cell ``table[code_row[i]]`` is not
    ``kept_cell``, and their cells (uint8). ``code_row`` is one feature's ``(n,)`` uint8 codes,
    ``table`` the ``(n_bins,)`` uint8 cell of every bin code."""
    n = code_row.shape[0]
    rows = np.empty(n, dtype=np.uintp)
    cells = np.empty(n, dtype=np.uint8)
    k = 0
    for i in range(n):  # without a branch: every row is written, the next overwrites a kept one
        cell = table[np.uintp(code_row[i])]
        rows[k] = i
        cells[k] = cell
        k += cell != kept_cell
    return rows[:k], cells[:k]


@numba.njit(cache=True, nogil=True)
def gather_codes(codes, rows):
    """The ``(d, m)`` uint8 codes of the gathered ``rows`` (increasing), each feature's
    adjacent in memory: the histogram kernels then sum them at their full pace."""
    d = codes.shape[0]
    m = rows.shape[0]
    out = np.empty((d, m), dtype=np.uint8)
    f = 0
    while f + 4 <= d:  # four features per pass: each row's index is read once for four
        r0, r1, r2, r3 = codes[f], codes[f + 1], codes[f + 2], codes[f + 3]
        g0, g1, g2, g3 = out[f], out[f + 1], out[f + 2], out[f + 3]
        for k in range(m):
            i = rows[k]
            g0[k] = r0[i]
            g1[k] = r1[i]
            g2[k] = r2[i]
            g3[k] = r3[i]
        f += 4
    for g in range(f, d):
        row, gathered = codes[g], out[g]
        for k in range(m):
            gathered[k] = row[rows[k]]
    return out


@numba.njit(cache=True, nogil=True)
def changed_class_weights(rows, cells, weights, is_pos, delta):
    """``(change, is_pos)`` of the gathered rows: delta[cells[k], y_k] D(rows[k]) and the
    row's class (uint8). ``weights`` ``(n,)`` float64 is D_t, ``is_pos`` ``(n,)`` uint8,
    ``delta`` ``(n_cells, 2)`` float64 the change of factor of each cell and sign."""
    m = rows.shape[0]
    change = np.empty(m)
    column = np.empty(m, dtype=np.uint8)
    for k in range(m):
        i = rows[k]
        c = is_pos[i]
        column[k] = c
        change[k] = delta[cells[k], c] * weights[i]
    return change, column


@numba.njit(cache=True, nogil=True)
def changed_pair_weights(rows, cells, weights, is_pos, delta):
    """:func:`changed_class_weights` over (example, class) pairs: ``weights`` and ``is_pos``
    ``(n, C)``, ``delta`` ``(n_cells, C, 2)``; both answers ``(m, C)``."""
    m = rows.shape[0]
    n_classes = weights.shape[1]
    change = np.empty((m, n_classes))
    column = np.empty((m, n_classes), dtype=np.uint8)
    for k in range(m):
        i = rows[k]
        for l in range(n_classes):
            c = is_pos[i, l]
            column[k, l] = c
            change[k, l] = delta[cells[k], l, c] * weights[i, l]
    return change, column

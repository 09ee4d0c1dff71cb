"""The kernels of a histogram carried across rounds: the rows off a term's largest cell, and
the change of their weights summed per feature and bin.

When a reweighting multiplies every row's weight by a factor g[cell, sign] of the last term's
cell and the row's sign, next round's histogram is g[O, .] H + sum_{j != O} (g[j, .] - g[O, .])
H_j, where O is the term's largest cell and H_j the histogram of cell j's rows: only the rows
off O are summed again, as LightGBM gets a leaf's histogram from its sibling's by subtraction.
:func:`rows_off_cell` finds them (once per round, from the split feature's codes) and
:func:`changed_class_weights` (:func:`changed_pair_weights` over (example, class) pairs) gives
each its change of weight (g[cell_i, y_i] - g[O, y_i]) D_t(i). :func:`changed_class_histogram`
sums those per feature and bin, reading each row's codes where they are (the row plane adds
g[O, .] H and normalises); :func:`carry_class_histogram`, for the compiled round batch
(:mod:`boostkit.kernels.rounds`), carries H itself from the same sums as they are added, in the
batch's arithmetic. Over pairs :func:`changed_pair_histogram` sums them per feature, bin, class
and sign from the rows' codes copied into adjacent memory (:func:`gather_codes`).
"""

from __future__ import annotations

import numba
import numpy as np

from .histogram import _class_hist_to_out, class_histogram_block

__all__ = ["rows_off_cell", "gather_codes", "changed_class_weights", "changed_class_histogram",
           "carry_class_histogram", "changed_pair_weights", "changed_pair_histogram"]


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


#: Bins per feature and class in :func:`changed_class_histogram`'s group: every uint8 code.
_CODES = 256
#: Features per pass over the gathered rows.
_GROUP = 4
#: Below this many gathered rows :func:`changed_class_histogram` adds the changes straight into
#: ``out``: the groups' own arrays (16 KB zeroed per four features, then copied out) cost more
#: than their locality saves on so few rows.
_DIRECT_ROWS = 512


@numba.njit(cache=True, nogil=True)
def changed_class_histogram(codes, rows, change, is_pos, out):
    """Overwrite ``out`` (``(d, n_bins, 2)``) with the sum of ``change[k]`` (float64) per
    feature, bin and class ``is_pos[k]`` (uint8) over the gathered ``rows`` (increasing, from
    :func:`rows_off_cell`), reading their codes in place from the ``(d, n)`` uint8 ``codes``.

    Below :data:`_DIRECT_ROWS` rows, four features per pass straight into ``out``
    (:func:`_changed_into_out`): at 1 000 x 10, 0.6 us for 50 rows and 1.5 us for 200 against
    1.8 and 2.6 us through the groups below, whose fixed cost is their arrays; 0.65-0.96x them
    up to 500 rows at 20 to 100 features, 0.87-1.21x from 1 000 rows on, where ``out`` (400 KB
    at 100 features) leaves the first-level cache (one thread, CPU time, medians of 11
    runs of many calls). From :data:`_DIRECT_ROWS` rows on, four features per pass into one
    flat (2, 4, 256) group (16 KB, in the first-level cache),
    indexed with unsigned offsets as :func:`boostkit.kernels.histogram.class_histogram` does:
    2.2 ms for 210 000 of 1 000 000 rows x 20 features, against 3.5 ms for gathering their codes
    and summing those with the class histogram (9.2 ms for all the rows). Every bin adds its rows
    in increasing order: the sums of the class histogram of the gathered rows, bit for bit.

    The codes are read where they are because no other layout paid here
    (``benchmarks/bench_histogram.py --gathered``: one thread, CPU time, medians of 61
    interleaved calls, the rows above a cut of one feature, 1 000 000 x 20 and 100 000 x 100):

    * four features of a row in one 32-bit word, a second copy ``(ceil(d / 4), n)`` uint32 (n d
      bytes more; 2.6-5.7 ms to build per fit): 0.43-0.81x this kernel with 2-40 % of the rows
      gathered. The same bytes come from memory, and the word's shifts cost more than the loads
      they save;
    * whole rows, ``(n, d)`` uint8, each gathered row read once into one (2, d, 256) histogram:
      1.45-1.61x below 1 % of the rows (0.10-0.15 ms a call, against 5.4-7.7 ms to build the
      copy), 1.03-1.13x at 2 %, 0.36-0.86x from 5 % on;
    * eight features per pass (a 32 KB group): 0.92-1.27x, 0.94-1.07x from 15 % on.

    With 15-40 % of the rows gathered the kernel takes 0.49-0.68 ns per (row, feature) against
    0.39-0.47 for the class histogram of every row: its floor is the scattered adds into the
    group, which no layout of the codes removes. With few rows it waits on memory, where whole
    rows would pay, but they save a tenth of a millisecond a round, on the rounds whose smaller
    side holds under 1.5 % of the rows (16 % of 200 adaboost rounds on adult, 8 % on mushroom, at
    most 1 % on spambase, musk, german credit, ionosphere and breast cancer), against the copy's
    build once per fit."""
    if rows.shape[0] < _DIRECT_ROWS:
        _changed_into_out(codes, rows, change, is_pos, out)
    else:
        _changed_by_groups(codes, rows, change, is_pos, out)


@numba.njit(cache=True, nogil=True)
def _changed_into_out(codes, rows, change, is_pos, out):
    # changed_class_histogram's sums added into ``out`` itself, zeroed first: four features
    # per pass (each row's index, change and class read once for four), every bin in row
    # order from +0.0, so the groups' sums bit for bit.
    d = codes.shape[0]
    m = rows.shape[0]
    out[:] = 0.0
    f = 0
    while f + 4 <= d:
        r0, r1, r2, r3 = codes[f], codes[f + 1], codes[f + 2], codes[f + 3]
        h0, h1, h2, h3 = out[f], out[f + 1], out[f + 2], out[f + 3]
        for k in range(m):
            i = rows[k]
            w = change[k]
            c = is_pos[k]
            h0[r0[i], c] += w
            h1[r1[i], c] += w
            h2[r2[i], c] += w
            h3[r3[i], c] += w
        f += 4
    for g in range(f, d):
        row, hist = codes[g], out[g]
        for k in range(m):
            hist[row[rows[k]], is_pos[k]] += change[k]


@numba.njit(cache=True, nogil=True, inline="always")
def _add_group(codes, first, rows, change, is_pos, group):
    # The changes of features first .. first + 3 (those up to the last) added into the flat
    # (4, 256, 2) ``group``, laid out as the histogram's bins, slot j for feature first + j:
    # four features per pass over the rows, else one.
    d = codes.shape[0]
    if first + _GROUP <= d:
        r0, r1, r2, r3 = codes[first], codes[first + 1], codes[first + 2], codes[first + 3]
        for k in range(rows.shape[0]):
            i = rows[k]
            w = change[k]
            column = np.uintp(is_pos[k])
            group[column + np.uintp(2) * np.uintp(r0[i])] += w
            group[column + np.uintp(2 * _CODES) + np.uintp(2) * np.uintp(r1[i])] += w
            group[column + np.uintp(4 * _CODES) + np.uintp(2) * np.uintp(r2[i])] += w
            group[column + np.uintp(6 * _CODES) + np.uintp(2) * np.uintp(r3[i])] += w
        return
    for f in range(first, d):
        row, slot = codes[f], np.uintp(2 * _CODES * (f - first))
        for k in range(rows.shape[0]):
            group[slot + np.uintp(is_pos[k]) + np.uintp(2) * np.uintp(row[rows[k]])] += change[k]


@numba.njit(cache=True, nogil=True)
def _changed_by_groups(codes, rows, change, is_pos, out):
    # changed_class_histogram's sums through one (4, 256, 2) group per four features.
    d, n_bins = codes.shape[0], out.shape[1]
    group = np.empty(_GROUP * _CODES * 2)
    for first in range(0, d, _GROUP):
        group[:] = 0.0
        _add_group(codes, first, rows, change, is_pos, group)
        for j in range(min(_GROUP, d - first)):
            sums, h = group[2 * j * _CODES:], out[first + j]
            for b in range(n_bins):
                h[b, 0] = sums[2 * b]
                h[b, 1] = sums[2 * b + 1]


@numba.njit(cache=True, nogil=True)
def carry_class_histogram(codes, rows, change, is_pos, kept_factors, hist):
    """Carry the ``(d, n_bins, 2)`` class histogram ``hist`` of D_t to D_{t+1}'s, in place:
    H_{t+1} = (g_O H_t + sum_{j != O} (g_j - g_O) H_j) / Z_t
    (:class:`boostkit.plane.CarriedHistogram`), ``kept_factors`` g_O per class and the sums
    over the gathered ``rows`` those of :func:`changed_class_histogram` (``change``, ``is_pos``
    as there). Each bin is (H g_O + its sum) times 1 / Z_t, Z_t the sum of feature 0's new bins
    (every row is in one of them), bin after bin, negatives' plus positives'.

    The sums never leave the (4, 256, 2) group of four features (16 KB, in the first-level
    cache) where they are added: each group's bins are carried from it, in the histogram's
    layout (a loop the compiler vectorises, with g_O per flat bin), then the group is zeroed
    for the next. So the histogram is read and written once, and no ``(d, n_bins, 2)`` array of
    sums is zeroed, written and read again: at 1 000 x 10 (255 bins, 225 rows a round off the
    kept cell on average) 3.1 us a round in the batch against 3.7 us
    (``benchmarks/bench_round_parts.py``), 3.0 against 4.6 us on synthetic rows (one thread,
    CPU time, medians). The sums are those of the groups of
    :func:`changed_class_histogram`, bit for bit, and so is the carried histogram the batch
    computed from them before.
    """
    d, n_bins = hist.shape[0], hist.shape[1]
    width = 2 * n_bins  # a feature's bins, flat
    flat = hist.reshape(d * width)
    factors = np.empty(width)  # g_O of each flat bin's class: no interleaved loads
    for b in range(n_bins):
        factors[2 * b] = kept_factors[0]
        factors[2 * b + 1] = kept_factors[1]
    group = np.zeros(_GROUP * _CODES * 2)
    scale = 0.0
    for first in range(0, d, _GROUP):
        _add_group(codes, first, rows, change, is_pos, group)
        if first == 0:
            total = 0.0
            for b in range(n_bins):
                total += ((flat[2 * b] * factors[2 * b] + group[2 * b])
                          + (flat[2 * b + 1] * factors[2 * b + 1] + group[2 * b + 1]))
            scale = 1.0 / total  # a product per bin, not a division (~4x slower)
        for j in range(min(_GROUP, d - first)):
            h = flat[(first + j) * width:(first + j + 1) * width]
            sums = group[2 * j * _CODES:2 * j * _CODES + width]
            for p in range(width):
                h[p] = (h[p] * factors[p] + sums[p]) * scale
        group[:] = 0.0


@numba.njit(cache=True, nogil=True)
def changed_pair_histogram(codes, rows, change, is_pos, out):
    """:func:`changed_class_histogram` over (example, class) pairs (Schapire & Singer 1999,
    section 7: every pair one more binary example): overwrite ``out`` (``(d, n_bins, C, 2)``)
    with the sum of ``change[k, l]`` (``(m, C)`` float64) per feature, bin, class l and sign
    ``is_pos[k, l]`` (``(m, C)`` uint8) over the gathered ``rows`` (increasing) of the
    ``(d, n)`` uint8 ``codes``. Every bin adds its rows in increasing order: the sums of
    :func:`boostkit.splits.histogram` of the gathered rows, bit for bit.

    Class by class, as :func:`boostkit.kernels.histogram.pair_histogram` sums C <= 16 classes:
    the rows' codes gathered (:func:`gather_codes`), their changes and signs copied class-major,
    and each class's binary histogram of the gathered codes. Without the engine's histogram's
    signed (m, C, 2) copy and its transposition: 0.68, 2.1 and 4.6 ms for 5 000, 20 000 and
    45 000 of 100 000 rows x 20 features x 10 classes, against 0.8, 2.5 and 6.6 ms. Reading the
    codes in place, one feature per pass into a class-major (C, 2, 256) group in the first-level
    cache, took 0.79, 3.0 and 6.9 ms: each row's C changes are read again for every feature
    (one thread, CPU time, medians of 40 calls on a busy machine)."""
    m, n_classes = change.shape[0], change.shape[1]
    d, n_bins = codes.shape[0], out.shape[1]
    gathered = gather_codes(codes, rows)
    weights_by_class = np.empty((n_classes, m))
    is_pos_by_class = np.empty((n_classes, m), dtype=np.uint8)
    for k in range(m):
        for l in range(n_classes):
            weights_by_class[l, k] = change[k, l]
            is_pos_by_class[l, k] = is_pos[k, l]
    by_class = np.empty((n_classes, d, n_bins, 2))
    for l in range(n_classes):
        class_histogram_block(gathered, weights_by_class[l], is_pos_by_class[l], by_class[l], 0,
                              m)
    _class_hist_to_out(by_class, out)

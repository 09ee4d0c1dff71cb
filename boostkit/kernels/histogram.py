"""Per-feature, per-bin weighted class histograms: the sufficient statistics of stumps.

For binned features ``codes[f, i]`` (feature-major, uint8) the histogram holds, for every feature
f and bin b, the total weight of the negative and of the positive examples that fall into b:
``out[f, b, 0] = sum_{i: codes[f,i]=b, y_i=-1} w_i`` and ``out[f, b, 1]`` likewise for y_i=+1.
A stump's two sides, a tree's children and RankBoost's r are all sums over these.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic, overload

from .blocks import SpareArrays, block_bounds, histogram_threads, run_blocks

#: Features summed per pass over the examples (see :func:`_accumulate_group`).
_GROUP = 4
#: Bins per feature and column in a group's histogram: every uint8 code, so that the offset of
#: each feature's bins is a constant of the loop.
_CODES = 256
#: Examples per tile: every group of features goes over a tile before the next tile, so its
#: weights and classes (16384 x 9 bytes, in the core's cache) come from memory once, not once per
#: group: 29 MB read per histogram at 1 000 000 x 20 instead of 65 MB. No faster alone on a quiet
#: core; it leaves memory bandwidth to a second thread or a busy neighbour (with one, 1.34x the
#: old kernel's speed against 1.21x untiled, CPU time, one run).
_TILE = 16384


def _eight_codes(row, i):
    """``row[i : i + 8]`` (uint8, adjacent in memory) as one little-endian uint64: byte j is
    ``row[i + j]``. This Python body runs without the JIT; compiled, it is one unaligned load."""
    return np.uint64(int.from_bytes(row[i:i + 8].tobytes(), "little"))


@intrinsic
def _load_unaligned_u64(typingctx, row, i):
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        address = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(64).as_pointer())
        return builder.load(address, align=1)

    return types.uint64(row, types.intp), codegen


@overload(_eight_codes)
def _eight_codes_jit(row, i):
    return lambda row, i: _load_unaligned_u64(row, i)


def add_pair(values, k, first, second):
    """``values[k] += first`` and ``values[k + 1] += second``: two adjacent float64 sums updated
    together, for histograms that keep two values per bin side by side (LogitBoost's w and
    w |z|, a tree node's weights and counts). This Python body runs without the JIT; compiled,
    it is one load, one addition and one store of a two-lane vector, each lane's sum the scalar
    one (LLVM's vectoriser leaves the two scalar updates apart). ``k`` is the first value's
    index, computed by the caller: an offset shared by several updates then stays one base
    address (a shift or multiply inside would hide it)."""
    values[k] += first
    values[k + 1] += second


@intrinsic
def _add_pair_vector(typingctx, values, k, first, second):
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        pair = ir.VectorType(ir.DoubleType(), 2)
        address = builder.bitcast(builder.gep(data, [args[1]]), pair.as_pointer())
        added = builder.insert_element(ir.Constant(pair, ir.Undefined), args[2],
                                       ir.Constant(ir.IntType(32), 0))
        added = builder.insert_element(added, args[3], ir.Constant(ir.IntType(32), 1))
        builder.store(builder.fadd(builder.load(address, align=8), added), address, align=8)
        return context.get_dummy_value()

    return types.none(values, k, types.float64, types.float64), codegen


@overload(add_pair)
def _add_pair_jit(values, k, first, second):
    return lambda values, k, first, second: _add_pair_vector(values, k, first, second)


@numba.njit(cache=True, nogil=True)
def _accumulate_group(codes, weights, is_pos, group, f, start, stop):
    # Adds examples [start, stop) of features f .. f + 3 to ``group``, a flat (n_columns, 4, 256)
    # histogram: column c, feature f + j, bin b at c * 1024 + j * 256 + b. Laid out so, the four
    # updates of an example share one address, that of its column, plus the code and a constant
    # offset (one x86 operand: no multiply per update), and the codes of eight examples of a
    # feature come in one load. The loop is bound by its loads and stores, not by memory: these
    # two cut the instructions per update from five to three or four and the loads per example
    # from six to three and a half (1.2x at 1 000 000 x 20 and 100 000 x 100). Every bin still
    # adds its examples in increasing order, so the sums are those of one loop over them.
    # Indices are unsigned, so numba adds no negative-index checks. Features past the last are
    # the last again (a group is always four; the caller drops their sums).
    last = codes.shape[0] - 1
    r0 = codes[f, start:stop]
    r1 = codes[min(f + 1, last), start:stop]
    r2 = codes[min(f + 2, last), start:stop]
    r3 = codes[min(f + 3, last), start:stop]
    weights = weights[start:stop]
    is_pos = is_pos[start:stop]
    m = stop - start
    i = 0
    while i + 8 <= m:
        q0 = _eight_codes(r0, i)
        q1 = _eight_codes(r1, i)
        q2 = _eight_codes(r2, i)
        q3 = _eight_codes(r3, i)
        for j in range(8):
            w = weights[i + j]
            column = np.uintp(is_pos[i + j]) * np.uintp(_GROUP * _CODES)
            shift = np.uint64(8 * j)
            group[column + np.uintp(np.uint8(q0 >> shift))] += w
            group[column + np.uintp(_CODES) + np.uintp(np.uint8(q1 >> shift))] += w
            group[column + np.uintp(2 * _CODES) + np.uintp(np.uint8(q2 >> shift))] += w
            group[column + np.uintp(3 * _CODES) + np.uintp(np.uint8(q3 >> shift))] += w
        i += 8
    for i in range(i, m):
        w = weights[i]
        column = np.uintp(is_pos[i]) * np.uintp(_GROUP * _CODES)
        group[column + np.uintp(r0[i])] += w
        group[column + np.uintp(_CODES) + np.uintp(r1[i])] += w
        group[column + np.uintp(2 * _CODES) + np.uintp(r2[i])] += w
        group[column + np.uintp(3 * _CODES) + np.uintp(r3[i])] += w


@numba.njit(cache=True, nogil=True, inline="always")
def _groups_shape(d, n_columns):
    # The shape of the group histograms of d features and n_columns columns (_fill_groups).
    return (d + _GROUP - 1) // _GROUP, n_columns * _GROUP * _CODES


def _adjacent_codes(codes, weights, is_pos, start, stop):
    """``(codes, weights, is_pos, start, stop)`` with each feature's codes of examples
    ``[start, stop)`` adjacent in memory, as one load per eight codes needs (_eight_codes): the
    arguments themselves if they are, else a copy of those codes, their examples' weights and
    classes, and ``0, stop - start``. This Python body runs without the JIT; compiled, codes of
    a C-contiguous type are the arguments themselves, so their kernels compile no copy (numba's
    ascontiguousarray, 0.2 to 0.3 s CPU at a cold start, for a branch they never take)."""
    if codes.strides[1] != 1:
        return (np.ascontiguousarray(codes[:, start:stop]), weights[start:stop],
                is_pos[start:stop], 0, stop - start)
    return codes, weights, is_pos, start, stop


@overload(_adjacent_codes)
def _adjacent_codes_jit(codes, weights, is_pos, start, stop):
    if codes.layout == "C":  # (d, n) uint8: strides[1] is 1 wherever n > 1
        return lambda codes, weights, is_pos, start, stop: (codes, weights, is_pos, start, stop)
    return _adjacent_codes


@numba.njit(cache=True, nogil=True, inline="always")
def _fill_groups(codes, weights, is_pos, groups, start, stop, first):
    # Overwrites ``groups`` (rows of _groups_shape: row r for the group of four features
    # first + r, laid out as in _accumulate_group) with the histogram of examples [start, stop);
    # returns it.
    codes, weights, is_pos, start, stop = _adjacent_codes(codes, weights, is_pos, start, stop)
    groups[:] = 0.0
    for lo in range(start, stop, _TILE):
        hi = min(lo + _TILE, stop)
        for g in range(groups.shape[0]):
            _accumulate_group(codes, weights, is_pos, groups[g], (first + g) * _GROUP, lo, hi)
    return groups


@numba.njit(cache=True, nogil=True)
def _fill_blocks_in_order(codes, weights, is_pos, total, scratch, bounds):
    # Overwrites ``total`` with what _fill_groups gives for each block (row k of ``bounds``:
    # start, stop) added in block order, as class_histogram_parallel combines them; returns it.
    # The blocks' serial form: each block's sums are added to the total as soon as they are
    # made, in ``scratch``, instead of one array per block combined afterwards. A block of one
    # tile is summed a group of features at a time into one 16 KB row of ``scratch``, which
    # stays in the core's first-level cache. At 100 000 x 100 this is within 0.3 ms of
    # class_histogram's single sum, where an array per block (eight of 400 KB) cost 0.8 to
    # 2.2 ms more (docs/performance.md).
    _fill_groups(codes, weights, is_pos, total, bounds[0, 0], bounds[0, 1], 0)
    for k in range(1, bounds.shape[0]):
        start, stop = bounds[k, 0], bounds[k, 1]
        if stop - start <= _TILE and codes.strides[1] == 1:  # as _fill_groups sums one tile
            row = scratch[0]
            for g in range(total.shape[0]):
                row[:] = 0.0
                _accumulate_group(codes, weights, is_pos, row, g * _GROUP, start, stop)
                _add_into(total[g], row)
        else:
            _add_into(total.reshape(-1),
                      _fill_groups(codes, weights, is_pos, scratch, start, stop, 0).reshape(-1))
    return total


@numba.njit(cache=True, nogil=True)
def _add_into(total, part):
    # total += part, element by element (np.add's numbers, without its dispatch in a loop).
    for i in range(total.shape[0]):
        total[i] += part[i]


@numba.njit(cache=True, nogil=True, inline="always")
def _groups_to_out(groups, out):
    # out[f, b, c] = the sum of feature f, bin b, column c in the group histograms.
    d, n_bins, n_columns = out.shape
    for f in range(d):
        g, j = divmod(f, _GROUP)
        for b in range(n_bins):
            for c in range(n_columns):
                out[f, b, c] = groups[g, (c * _GROUP + j) * _CODES + b] if b < _CODES else 0.0


@numba.njit(cache=True, nogil=True)
def class_histogram(codes, weights, is_pos, out):
    """Fill ``out`` (shape ``(d, n_bins, 2)``, float64) with the weighted class histogram.

    ``codes`` is ``(d, n)`` uint8, ``weights`` ``(n,)`` float64, ``is_pos`` ``(n,)`` uint8 (1 for
    a positive example). ``out`` is overwritten. One pass over ``d * n`` bytes; every bin adds
    its examples' weights in increasing order of the examples. C-contiguous ``codes`` (the
    binned data's, :mod:`boostkit.data`) are read in place; other layouts are copied a block
    at a time (``_adjacent_codes``), compiled only for such codes.
    """
    class_histogram_block(codes, weights, is_pos, out, 0, codes.shape[1])


#: Below this many examples a histogram is summed straight into ``out``: the group layout's
#: own arrays (zeroed, then copied out) cost more than it saves on so few rows (at 1 000 x 10,
#: 8 us against 6 us).
_DIRECT_ROWS = 4096


@numba.njit(cache=True, nogil=True, inline="always")
def _accumulate_direct(codes, weights, is_pos, out, start, stop):
    # out[f, code, column] += weight over examples [start, stop), four features per pass, in
    # the examples' order (the group layout's sums, bit for bit).
    weights = weights[start:stop]
    is_pos = is_pos[start:stop]
    m = stop - start
    d = codes.shape[0]
    out[:] = 0.0
    f = 0
    while f + 4 <= d:
        r0, r1 = codes[f, start:stop], codes[f + 1, start:stop]
        r2, r3 = codes[f + 2, start:stop], codes[f + 3, start:stop]
        h0, h1, h2, h3 = out[f], out[f + 1], out[f + 2], out[f + 3]
        for i in range(m):
            w = weights[i]
            c = is_pos[i]
            h0[r0[i], c] += w
            h1[r1[i], c] += w
            h2[r2[i], c] += w
            h3[r3[i], c] += w
        f += 4
    for g in range(f, d):
        row, hist = codes[g, start:stop], out[g]
        for i in range(m):
            hist[row[i], is_pos[i]] += weights[i]


@numba.njit(cache=True, nogil=True, inline="always")
def class_histogram_block(codes, weights, is_pos, out, start, stop):
    """Fill ``out`` (``(d, n_bins, n_columns)``) with the histogram of examples ``[start, stop)``:
    :func:`class_histogram` of one block of examples (``is_pos`` holds column indices below
    ``n_columns``: 2 for the class histogram). Returns ``out``."""
    if stop - start < _DIRECT_ROWS:
        _accumulate_direct(codes, weights, is_pos, out, start, stop)
        return out
    groups = np.empty(_groups_shape(codes.shape[0], out.shape[2]))
    _groups_to_out(_fill_groups(codes, weights, is_pos, groups, start, stop, 0), out)
    return out


#: Spare arrays for the blocks' group histograms (see
#: :class:`boostkit.kernels.blocks.SpareArrays`).
_SPARE = SpareArrays()


def class_histogram_parallel(codes, weights, is_pos, out, n_jobs):
    """:func:`class_histogram` on ``n_jobs`` threads (``run_blocks``): split by features
    (:func:`class_histogram_by_groups`) where :func:`by_feature_groups` says so, the serial
    histogram bit for bit; else by examples (:func:`class_histogram_by_blocks`), the same for
    every ``n_jobs > 1``. ``out`` (``(d, n_bins, n_columns)``) is overwritten."""
    if by_feature_groups(codes):
        class_histogram_by_groups(codes, weights, is_pos, out, n_jobs)
    else:
        class_histogram_by_blocks(codes, weights, is_pos, out, n_jobs)


def class_histogram_by_blocks(codes, weights, is_pos, out, n_jobs):
    """:func:`class_histogram` over the blocks of examples of
    :func:`boostkit.kernels.blocks.block_bounds`, on ``n_jobs`` threads.

    Each block's histogram is summed in example order and the blocks' histograms are added in
    block order, so the result depends on the number of examples only, not on ``n_jobs`` or on
    which thread ran which block; it differs from :func:`class_histogram`'s in the last bits
    (one sum per block, then their sum). Where the blocks run on the caller's thread (too few
    updates to repay threads, or threads slower, :class:`~boostkit.kernels.blocks.Pace`), each
    block's histogram is added to the total as soon as it is summed: the same numbers, without
    an array per block.
    """
    bounds = block_bounds(codes.shape[1])
    if len(bounds) == 1:  # one block: the serial histogram itself
        class_histogram_block(codes, weights, is_pos, out, 0, codes.shape[1])
        return
    shape = _groups_shape(codes.shape[0], out.shape[2])

    def in_order() -> list:  # the blocks on the caller's thread, one after another
        scratch = _SPARE.take(shape)
        total = _fill_blocks_in_order(codes, weights, is_pos, _SPARE.take(shape), scratch,
                                      np.array(bounds, dtype=np.intp))
        _SPARE.give([scratch])
        return [total]

    parts = run_blocks(
        lambda k: _fill_groups(codes, weights, is_pos, _SPARE.take(shape), *bounds[k], 0),
        len(bounds), histogram_threads(codes, n_jobs), codes.size, alone=in_order)
    total = parts[0]  # this call's own array: a late run of block 0 fills another
    for part in parts[1:]:
        np.add(total, part, out=total)
    _groups_to_out(total, out)
    _SPARE.give(parts)


#: Most examples for which a histogram on threads splits its features rather than its examples:
#: every task reads all the examples' weights and classes (9 bytes each, 2.3 MB at most), which
#: stay in the cache. Beyond it (500 000 x 40, 1 000 000 x 32) the two ways took the same time.
FEATURE_TASKS_MAX_ROWS = 1 << 18
#: Fewest groups of four features for which a histogram on threads splits its features: two
#: tasks per thread on two threads.
FEATURE_TASKS_MIN_GROUPS = 4


def by_feature_groups(codes: np.ndarray) -> bool:
    """Whether :func:`class_histogram_parallel` gives its threads groups of features of the
    ``(d, n)`` ``codes`` rather than blocks of examples: at most :data:`FEATURE_TASKS_MAX_ROWS`
    examples, at least :data:`FEATURE_TASKS_MIN_GROUPS` groups of four features, each feature's
    codes adjacent in memory (a task copies none). The shape and layout alone decide, so every
    ``n_jobs`` gives the same sums."""
    d, n = codes.shape
    return (n <= FEATURE_TASKS_MAX_ROWS and d > (FEATURE_TASKS_MIN_GROUPS - 1) * _GROUP
            and (n <= 1 or codes.strides[1] == 1))


def feature_tasks(d: int, n_jobs: int) -> list[tuple[int, int]]:
    """The features ``[(start, stop), ...]`` of the tasks of a histogram split by features:
    consecutive groups of four features, about four tasks per thread."""
    n_groups = (d + _GROUP - 1) // _GROUP
    per_task = _GROUP * -(-n_groups // min(n_groups, 4 * n_jobs))
    return [(f, min(f + per_task, d)) for f in range(0, d, per_task)]


def class_histogram_by_groups(codes, weights, is_pos, out, n_jobs):
    """:func:`class_histogram` on ``n_jobs`` threads, each task summing every example of a few
    groups of four features (:func:`feature_tasks`) into an array of its own: the serial
    histogram's sums, bit for bit, with nothing to add up afterwards."""
    # Blocks of examples each fill a histogram of all the features (400 KB at 100 000 x 100,
    # eight of them, added one by one): on two threads this way took 0.79x to 0.88x their time
    # there, 0.81x to 0.94x at 100 000 x 20 to 200 000 x 50 (docs/performance.md).
    n_groups, width = _groups_shape(codes.shape[0], out.shape[2])
    spans = feature_tasks(codes.shape[0], n_jobs)
    total = np.empty((n_groups, width))

    def alone() -> list:  # the serial histogram on the caller's thread
        return [_fill_groups(codes, weights, is_pos, total, 0, codes.shape[1], 0)]

    def task(k):
        start, stop = spans[k]
        part = np.empty(_groups_shape(stop - start, out.shape[2]))
        return _fill_groups(codes, weights, is_pos, part, 0, codes.shape[1], start // _GROUP)

    parts = run_blocks(task, len(spans), histogram_threads(codes, n_jobs), codes.size,
                       alone=alone)
    if parts[0] is not total:
        for (start, _), part in zip(spans, parts):
            total[start // _GROUP:start // _GROUP + part.shape[0]] = part
    _groups_to_out(total, out)


@numba.njit(cache=True, nogil=True)
def cell_class_sums(cells, weights, is_pos, n_cells):
    """Weight of the negative and positive examples in each cell: ``(wneg, wpos)``.

    ``cells`` is ``(n,)`` integer with values in ``[0, n_cells)``.
    """
    wneg = np.zeros(n_cells)
    wpos = np.zeros(n_cells)
    for i in range(cells.shape[0]):
        if is_pos[i]:
            wpos[cells[i]] += weights[i]
        else:
            wneg[cells[i]] += weights[i]
    return wneg, wpos


@numba.njit(cache=True, nogil=True)
def threshold_class_sums(hist, wneg, wpos):
    """Class weights on both sides of every bin edge, from a ``(d, B, 2)`` histogram.

    For the cut after bin b of feature f: ``wneg[f, b] = (left, right)`` weight of negatives and
    ``wpos[f, b]`` likewise for positives; both outputs are ``(d, B - 1, 2)``. Left sides are
    prefix sums and right sides suffix sums, so a light side is exact rather than the difference
    of two large totals.
    """
    d, n_bins, _ = hist.shape
    m = n_bins - 1
    f = 0
    # Four features at a time: a running sum is a chain of dependent additions, bound by their
    # latency, and eight independent chains overlap (1.6x faster at 10 features x 255 bins).
    # Each feature's sums are added in the same order as one at a time.
    while f + 4 <= d:
        h0, h1, h2, h3 = hist[f], hist[f + 1], hist[f + 2], hist[f + 3]
        n0, n1, n2, n3 = wneg[f], wneg[f + 1], wneg[f + 2], wneg[f + 3]
        p0, p1, p2, p3 = wpos[f], wpos[f + 1], wpos[f + 2], wpos[f + 3]
        sn0 = sn1 = sn2 = sn3 = sp0 = sp1 = sp2 = sp3 = 0.0
        for b in range(m):
            sn0 += h0[b, 0]
            sp0 += h0[b, 1]
            sn1 += h1[b, 0]
            sp1 += h1[b, 1]
            sn2 += h2[b, 0]
            sp2 += h2[b, 1]
            sn3 += h3[b, 0]
            sp3 += h3[b, 1]
            n0[b, 0], p0[b, 0], n1[b, 0], p1[b, 0] = sn0, sp0, sn1, sp1
            n2[b, 0], p2[b, 0], n3[b, 0], p3[b, 0] = sn2, sp2, sn3, sp3
        sn0 = sn1 = sn2 = sn3 = sp0 = sp1 = sp2 = sp3 = 0.0
        for k in range(m):
            b = m - k
            sn0 += h0[b, 0]
            sp0 += h0[b, 1]
            sn1 += h1[b, 0]
            sp1 += h1[b, 1]
            sn2 += h2[b, 0]
            sp2 += h2[b, 1]
            sn3 += h3[b, 0]
            sp3 += h3[b, 1]
            n0[b - 1, 1], p0[b - 1, 1], n1[b - 1, 1], p1[b - 1, 1] = sn0, sp0, sn1, sp1
            n2[b - 1, 1], p2[b - 1, 1], n3[b - 1, 1], p3[b - 1, 1] = sn2, sp2, sn3, sp3
        f += 4
    while f < d:
        left_neg = 0.0
        left_pos = 0.0
        for b in range(m):
            left_neg += hist[f, b, 0]
            left_pos += hist[f, b, 1]
            wneg[f, b, 0] = left_neg
            wpos[f, b, 0] = left_pos
        right_neg = 0.0
        right_pos = 0.0
        for b in range(m, 0, -1):
            right_neg += hist[f, b, 0]
            right_pos += hist[f, b, 1]
            wneg[f, b - 1, 1] = right_neg
            wpos[f, b - 1, 1] = right_pos
        f += 1


# -- Several classes: sums over (example, class) pairs ----------------------------------------
#
# With C > 1 margin columns (Schapire & Singer 1999, section 7-9: multi-class multi-label
# boosting as binary boosting over pairs), every example i carries a weight D(i, l) and a sign
# Y(i, l) for each class l. The sufficient statistics of a partition are then, per cell j and
# class l, the weight of the pairs with Y = -1 and with Y = +1: W-_{jl} and W+_{jl}.


@numba.njit(cache=True, nogil=True)
def split_pair_weights(weights, is_pos, out):
    """``out[i, l, 0] = D(i, l)`` where Y(i, l) = -1, else 0; ``out[i, l, 1]`` likewise for +1.

    ``weights`` and ``is_pos`` are ``(n, C)``; ``out`` is ``(n, C, 2)``. Laid out this way every
    example's 2C signed weights are contiguous, so a histogram adds them to a bin as one vector.
    """
    n, c = weights.shape
    for i in range(n):
        for l in range(c):
            w = weights[i, l]
            p = is_pos[i, l]
            out[i, l, 1] = w * p
            out[i, l, 0] = w - w * p


# Two ways to fill the (d, B, C, 2) histogram, chosen by C alone. Both add every pair's signed
# weight to its cell in example order and skip only additions of +0.0 (which change no sum that
# starts at +0.0), so they give the same numbers bit for bit: the choice is speed only (the loop
# before both, `hist[b] += signed[i]`, built a temporary array per update: 56 ms at C = 3, 97 ms
# at C = 10, at 100 000 x 20, 255 bins):
#
# * Class by class (C <= _CLASS_BY_CLASS_MAX_C): the pairs of class l are a binary problem, with
#   weight D(i, l) and sign Y(i, l), so the binary kernel above fills class l's histogram: one
#   scalar update per (example, feature, class), four features per pass. Needs ``signed`` to
#   have at most one non-zero sign per pair, as split_pair_weights makes it; otherwise the
#   second way is taken.
# * Row by row: each example's 2C signed weights are added to its bin as one vector. 2C updates
#   instead of C, but numba's loop vectorizer makes them 4-wide. Its cost is mostly a fixed one
#   per (example, feature): the vectorised loop's runtime length and aliasing checks.
#   Known-length vectors without those checks need LLVM's SLP vectorizer, which numba leaves
#   off (NUMBA_SLP_VECTORIZE=0, process-wide, so not a kernel's to change).
# Row by row won from C = 5 against the binary kernel's earlier loop; against the one above
# (eight codes per load, one address per example) class by class takes 0.53x row by row's time
# at C = 3, 0.8-0.9x at C = 10 and 0.97-0.99x from C = 16 to 50 (CPU time, one run on a busy
# machine, 100 000 x 20, 255 bins).
_CLASS_BY_CLASS_MAX_C = 16
# Row by row copies blocks of this many examples' signed weights into a zero-padded buffer and
# updates every feature from it, so ``signed`` (16 MB at C = 10) is read once rather than once per
# feature. No faster on a quiet machine, but less hurt by a busy neighbour: in one such run the
# unblocked loop took 5.8x its quiet time (median), this one 2.2x.
_ROW_BLOCK = 2048


@numba.njit(cache=True, nogil=True)
def _split_by_class(signed, weights_t, is_pos_t, start, stop):
    # Class-major copy of examples [start, stop): weights_t[l, i] = D(i, l), is_pos_t[l, i] = 1
    # if Y(i, l) = +1. Exact: one of the two signed weights is 0. Returns False if some pair has
    # two non-zero signed weights (not split_pair_weights' output): the caller goes row by row.
    ok = True
    c = signed.shape[1]
    rows = signed[start:stop]
    for i in range(stop - start):
        for l in range(c):
            neg = rows[i, l, 0]
            pos = rows[i, l, 1]
            if neg != 0.0 and pos != 0.0:
                ok = False
            weights_t[l, start + i] = neg + pos
            is_pos_t[l, start + i] = pos != 0.0
    return ok


@numba.njit(cache=True, nogil=True)
def _fill_class_rows(codes, weights_t, is_pos_t, hist, start, stop):
    # hist is (C, d, n_bins, 2): class l's binary histogram at hist[l] (overwritten).
    for l in range(weights_t.shape[0]):
        class_histogram_block(codes, weights_t[l], is_pos_t[l], hist[l], start, stop)


@numba.njit(cache=True, nogil=True)
def _class_hist_to_out(hist, out):
    c, d, n_bins, _ = hist.shape
    for f in range(d):
        for b in range(n_bins):
            for l in range(c):
                out[f, b, l, 0] = hist[l, f, b, 0]
                out[f, b, l, 1] = hist[l, f, b, 1]


@numba.njit(cache=True, nogil=True)
def _row_width(c):
    # Row by row: a bin's 2C sums padded to a multiple of 4 doubles, so that the vectorised loop
    # runs in whole 4-wide steps with no scalar remainder (1.1x at C = 3 and 5).
    return (2 * c + 3) // 4 * 4


@numba.njit(cache=True, nogil=True)
def _accumulate_signed_rows(codes, signed, hist, start, stop):
    # hist is (d, n_bins, width): bin b of feature f holds [W-_0, W+_0, W-_1, ...] then padding.
    c = signed.shape[1]
    width = hist.shape[2]
    d = codes.shape[0]
    buf = np.zeros((_ROW_BLOCK, width))
    for lo in range(start, stop, _ROW_BLOCK):
        hi = min(lo + _ROW_BLOCK, stop)
        m = hi - lo
        rows = signed[lo:hi]
        for i in range(m):
            for l in range(c):
                buf[i, 2 * l] = rows[i, l, 0]
                buf[i, 2 * l + 1] = rows[i, l, 1]
        # Two features per pass: each example's vector is loaded once for both, and the fixed
        # cost of the vectorised loop is paid once for two updates (1.1x over one feature at
        # C = 3 and 5, even at 10; three or four were slower: more aliasing checks).
        f = 0
        while f + 2 <= d:
            r0 = codes[f, lo:hi]
            r1 = codes[f + 1, lo:hi]
            h0, h1 = hist[f], hist[f + 1]
            for i in range(m):
                b0 = r0[i]
                b1 = r1[i]
                for j in range(width):
                    v = buf[i, j]
                    h0[b0, j] += v
                    h1[b1, j] += v
            f += 2
        if f < d:
            row = codes[f, lo:hi]
            h = hist[f]
            for i in range(m):
                b = row[i]
                for j in range(width):
                    h[b, j] += buf[i, j]


@numba.njit(cache=True, nogil=True)
def _signed_hist_to_out(hist, out):
    d, n_bins, c, _ = out.shape
    for f in range(d):
        for b in range(n_bins):
            for l in range(c):
                out[f, b, l, 0] = hist[f, b, 2 * l]
                out[f, b, l, 1] = hist[f, b, 2 * l + 1]


@numba.njit(cache=True, nogil=True)
def pair_histogram(codes, signed, out):
    """Fill ``out`` (``(d, n_bins, C, 2)``, float64) with the per-bin, per-class signed sums.

    ``codes`` is ``(d, n)`` uint8 and ``signed`` the ``(n, C, 2)`` output of
    :func:`split_pair_weights`: ``out[f, b, l, s]`` is the weight of the pairs (i, l) with
    ``codes[f, i] = b`` and sign s (0: Y = -1, 1: Y = +1). Each cell is summed in example order,
    whichever of the two loops above C selects. ``out`` is overwritten.
    """
    d, n = codes.shape
    n_bins = out.shape[1]
    c = signed.shape[1]
    if c <= _CLASS_BY_CLASS_MAX_C:
        weights_t = np.empty((c, n))
        is_pos_t = np.empty((c, n), dtype=np.uint8)
        if _split_by_class(signed, weights_t, is_pos_t, 0, n):
            hist = np.empty((c, d, n_bins, 2))
            _fill_class_rows(codes, weights_t, is_pos_t, hist, 0, n)
            _class_hist_to_out(hist, out)
            return
    rows_hist = np.zeros((d, n_bins, _row_width(c)))
    _accumulate_signed_rows(codes, signed, rows_hist, 0, n)
    _signed_hist_to_out(rows_hist, out)


@numba.njit(cache=True, nogil=True)
def pair_histogram_block(codes, signed, n_bins, start, stop):
    """:func:`pair_histogram` of examples ``[start, stop)`` in a new ``(d, n_bins, C, 2)``
    array."""
    out = np.empty((codes.shape[0], n_bins, signed.shape[1], 2))
    pair_histogram(codes[:, start:stop], signed[start:stop], out)
    return out


def pair_histogram_parallel(codes, signed, out, n_jobs):
    """:func:`pair_histogram` on ``n_jobs`` threads, split as :func:`class_histogram_parallel`
    splits (so the two agree bit for bit where both apply). ``out`` is overwritten.

    By features where :func:`by_feature_groups` says so (the tasks of :func:`feature_tasks`,
    each over every example): the serial sums. Else over the blocks of examples of
    :func:`boostkit.kernels.blocks.block_bounds`, the blocks' histograms added in block order;
    on the caller's thread, each block's histogram is added to the total as soon as it is
    summed, in one spare array instead of one per block."""
    if by_feature_groups(codes):
        spans = feature_tasks(codes.shape[0], n_jobs)
        parts = run_blocks(
            lambda k: pair_histogram_block(codes[spans[k][0]:spans[k][1]], signed, out.shape[1],
                                           0, codes.shape[1]),
            len(spans), histogram_threads(codes, n_jobs), codes.size * signed.shape[1],
            alone=lambda: [pair_histogram(codes, signed, out)])
        if parts[0] is not None:  # the tasks' arrays, not the serial histogram written in out
            for (start, stop), part in zip(spans, parts):
                out[start:stop] = part
        return
    bounds = block_bounds(codes.shape[1])
    n_bins = out.shape[1]

    def in_order() -> list:  # the blocks on the caller's thread, one after another
        total = pair_histogram_block(codes, signed, n_bins, *bounds[0])
        part = np.empty_like(total)
        for start, stop in bounds[1:]:
            pair_histogram(codes[:, start:stop], signed[start:stop], part)
            np.add(total, part, out=total)
        return [total]

    parts = run_blocks(lambda k: pair_histogram_block(codes, signed, n_bins, *bounds[k]),
                       len(bounds), histogram_threads(codes, n_jobs), codes.size * signed.shape[1],
                       alone=in_order)
    out[:] = parts[0]
    for part in parts[1:]:
        np.add(out, part, out=out)


@numba.njit(cache=True, nogil=True)
def cell_pair_sums(cells, weights, is_pos, n_cells):
    """``(wneg, wpos)``, each ``(n_cells, C)``: the weight of the pairs with Y = -1 (+1) of each
    class in each cell. ``cells`` is ``(n,)`` with values in ``[0, n_cells)``."""
    c = weights.shape[1]
    wneg = np.zeros((n_cells, c))
    wpos = np.zeros((n_cells, c))
    for i in range(cells.shape[0]):
        j = cells[i]
        for l in range(c):
            if is_pos[i, l]:
                wpos[j, l] += weights[i, l]
            else:
                wneg[j, l] += weights[i, l]
    return wneg, wpos


@numba.njit(cache=True, nogil=True)
def threshold_pair_sums(hist, wneg, wpos):
    """Per-class weights on both sides of every bin edge, from a ``(d, B, C, 2)`` histogram.

    For the cut after bin b of feature f: ``wneg[f, b, side, l]`` (side 0: left, 1: right) is the
    weight of class l's pairs with Y = -1 on that side, ``wpos`` likewise for Y = +1; both
    outputs are ``(d, B - 1, 2, C)``. Left sides are prefix sums and right sides suffix sums, as
    in :func:`threshold_class_sums`.
    """
    d, n_bins, c, _ = hist.shape
    for f in range(d):
        for l in range(c):
            left_neg = 0.0
            left_pos = 0.0
            for b in range(n_bins - 1):
                left_neg += hist[f, b, l, 0]
                left_pos += hist[f, b, l, 1]
                wneg[f, b, 0, l] = left_neg
                wpos[f, b, 0, l] = left_pos
            right_neg = 0.0
            right_pos = 0.0
            for b in range(n_bins - 1, 0, -1):
                right_neg += hist[f, b, l, 0]
                right_pos += hist[f, b, l, 1]
                wneg[f, b - 1, 1, l] = right_neg
                wpos[f, b - 1, 1, l] = right_pos


@numba.njit(cache=True, nogil=True)
def true_pair_weights(weights, labels, out):
    """Whether the ``(n, C)`` pair weights are zero off the true-label pairs (i, labels[i]).

    If so, ``out[i]`` receives D(i, labels[i]) and the per-class histogram of the pairs is one
    pass over the examples (:func:`class_histogram` with ``labels`` for ``is_pos`` and an
    ``(d, n_bins, C)`` output), as for SAMME's weights. Counting the non-zero weights in all
    and on the true pairs keeps both loops branch-free (vectorised).
    """
    n = weights.shape[0]
    flat = weights.ravel()
    nonzero = 0
    for k in range(flat.shape[0]):
        nonzero += flat[k] != 0.0
    on_labels = 0
    for i in range(n):
        w = weights[i, labels[i]]
        out[i] = w
        on_labels += w != 0.0
    return nonzero == on_labels

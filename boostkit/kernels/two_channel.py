"""Class histograms of two values per example in one pass over the bin codes.

LogitBoost's least-squares stump (Friedman, Hastie & Tibshirani 2000, Algorithm 3, step 2(b))
needs, in every bin of every feature, the sums of two values per example split by class: the
weights w and w |z|. Two calls of :func:`boostkit.kernels.histogram.class_histogram` read every
code twice and make two updates of a bin per example and feature; this kernel reads each code
once and keeps an example's two values side by side in memory, so that one vector addition
(both lanes, one load and one store) adds both to their bin, the same work per update as the
one-channel histogram. Otherwise in the layout of the engine's group histograms
(:mod:`boostkit.kernels.histogram`: four features per pass, eight codes per load, one address
per example and class). Every bin still adds its examples in increasing order, channel by
channel, so the sums are those of the two single-channel histograms, bit for bit.
"""

from __future__ import annotations

import numba
import numpy as np

from .histogram import _CODES, _DIRECT_ROWS, _GROUP, _TILE, _eight_codes, add_pair

__all__ = ["DIRECT_ROWS", "TILE_ROWS", "add_two_channel_tile", "two_channel_from_groups",
           "two_channel_groups", "two_channel_histogram"]

#: Below this many examples :func:`two_channel_histogram` sums straight into its output; from
#: it, into group histograms (:func:`two_channel_groups`), a tile of :data:`TILE_ROWS` examples
#: at a time (:func:`add_two_channel_tile`).
DIRECT_ROWS = _DIRECT_ROWS
TILE_ROWS = _TILE

#: One feature's bins of one class in a group's histogram: a (first, second) pair per code.
_PAIRS = 2 * _CODES
#: The offset of the positive class's four features in a group's histogram.
_POSITIVE = _GROUP * _PAIRS


@numba.njit(cache=True, nogil=True)
def _accumulate_two(codes, first, second, is_pos, group, f, start, stop):
    # Adds examples [start, stop) of features f .. f + 3 to ``group``, a flat (2, 4, 256, 2)
    # histogram: class s, feature f + j, bin b, channel c at s * 2048 + j * 512 + 2 b + c. An
    # example's two updates of a bin are adjacent (one vector load, add and store: 0.5x the
    # time of two scalar updates at 100 000 x 100); features past the last are the last
    # again (a group is always four; the caller drops their sums).
    last = codes.shape[0] - 1
    r0 = codes[f, start:stop]
    r1 = codes[min(f + 1, last), start:stop]
    r2 = codes[min(f + 2, last), start:stop]
    r3 = codes[min(f + 3, last), start:stop]
    first = first[start:stop]
    second = second[start:stop]
    is_pos = is_pos[start:stop]
    m = stop - start
    i = 0
    while i + 8 <= m:
        q0 = _eight_codes(r0, i)
        q1 = _eight_codes(r1, i)
        q2 = _eight_codes(r2, i)
        q3 = _eight_codes(r3, i)
        for j in range(8):
            shift = np.uint64(8 * j)
            _add_pairs(group, np.uintp(is_pos[i + j]) * np.uintp(_POSITIVE),
                       np.uint8(q0 >> shift), np.uint8(q1 >> shift), np.uint8(q2 >> shift),
                       np.uint8(q3 >> shift), first[i + j], second[i + j])
        i += 8
    for i in range(i, m):
        _add_pairs(group, np.uintp(is_pos[i]) * np.uintp(_POSITIVE), r0[i], r1[i], r2[i],
                   r3[i], first[i], second[i])


@numba.njit(cache=True, nogil=True, inline="always")
def _add_pairs(group, column, c0, c1, c2, c3, a, b):
    # (a, b) added to the pairs of codes c0 .. c3 of the group's four features in one class
    # (``column``); unsigned indices, so numba adds no negative-index checks.
    add_pair(group, column + np.uintp(2) * np.uintp(c0), a, b)
    add_pair(group, column + np.uintp(_PAIRS) + np.uintp(2) * np.uintp(c1), a, b)
    add_pair(group, column + np.uintp(2 * _PAIRS) + np.uintp(2) * np.uintp(c2), a, b)
    add_pair(group, column + np.uintp(3 * _PAIRS) + np.uintp(2) * np.uintp(c3), a, b)


@numba.njit(cache=True, nogil=True, inline="always")
def _accumulate_direct_two(codes, first, second, is_pos, out):
    # out[f, code, class, channel] += value, feature by feature in the examples' order (the
    # group layout's sums, bit for bit): below _DIRECT_ROWS examples the groups' own arrays
    # (zeroed, then copied out) cost more than they save, as for the engine's histogram. The
    # values are first put side by side (one load of a pair per update, not two and a
    # shuffle), and each feature's bins are zeroed just before its pass, so they are in the
    # first-level cache for it (7.8 -> 6.7 us at 1 000 x 10 with both).
    d, n_bins = out.shape[0], out.shape[1]
    n = codes.shape[1]
    pairs = np.empty(2 * n)
    for i in range(n):
        pairs[2 * i] = first[i]
        pairs[2 * i + 1] = second[i]
    flat = out.reshape(d * n_bins * 4)
    feature = np.uintp(4 * n_bins)  # one feature's bins, classes and channels
    for f in range(d):
        row = codes[f]
        base = np.uintp(f) * feature
        flat[base:base + feature] = 0.0
        for i in range(np.uintp(n)):
            k = base + np.uintp(4) * np.uintp(row[i]) + np.uintp(2) * np.uintp(is_pos[i])
            j = np.uintp(2) * i
            add_pair(flat, k, pairs[j], pairs[j + np.uintp(1)])


@numba.njit(cache=True, nogil=True, inline="always")
def two_channel_groups(d):
    """Zeroed group histograms of ``d`` features for :func:`add_two_channel_tile`."""
    return np.zeros(((d + _GROUP - 1) // _GROUP, 2 * _POSITIVE))


@numba.njit(cache=True, nogil=True)
def add_two_channel_tile(codes, first, second, is_pos, groups, start, stop):
    """Add examples ``[start, stop)`` (at most :data:`TILE_ROWS`) to ``groups``
    (:func:`two_channel_groups`), every group of four features in turn while the tile's values
    are in the cache; ``codes`` C-contiguous."""
    for g in range(groups.shape[0]):
        _accumulate_two(codes, first, second, is_pos, groups[g], g * _GROUP, start, stop)


@numba.njit(cache=True, nogil=True)
def two_channel_from_groups(groups, out):
    """``out`` (``(d, n_bins, 2, 2)``) from the group histograms, as
    :func:`two_channel_histogram` gives it."""
    d, n_bins = out.shape[0], out.shape[1]
    for f in range(d):
        g, j = divmod(f, _GROUP)
        for b in range(n_bins):
            for s in range(2):
                for c in range(2):
                    out[f, b, s, c] = (groups[g, s * _POSITIVE + j * _PAIRS + 2 * b + c]
                                       if b < _CODES else 0.0)


@numba.njit(cache=True, nogil=True)
def two_channel_histogram(codes, first, second, is_pos, out):
    """Fill ``out`` (``(d, n_bins, 2, 2)``, float64, C-contiguous) with the class histograms of
    two values.

    ``out[f, b, s, 0]`` is the sum of ``first`` over the examples with ``codes[f, i] = b`` and
    class s (``is_pos[i]``: 0 negative, 1 positive), ``out[f, b, s, 1]`` that of ``second``:
    :func:`boostkit.kernels.histogram.class_histogram` of each, bit for bit (every bin adds its
    examples in increasing order), in one pass over the ``(d, n)`` uint8 codes. ``out`` is
    overwritten; bins past 255 are 0.
    """
    d, n = codes.shape
    if n < DIRECT_ROWS:
        _accumulate_direct_two(codes, first, second, is_pos, out)
        return
    if n > 1 and codes.strides[1] != 1:  # one load per eight codes needs them adjacent
        codes = np.ascontiguousarray(codes)
    groups = two_channel_groups(d)
    for lo in range(0, n, TILE_ROWS):
        add_two_channel_tile(codes, first, second, is_pos, groups, lo, min(lo + TILE_ROWS, n))
    two_channel_from_groups(groups, out)

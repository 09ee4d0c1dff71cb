"""Class histograms of two values per example in one pass over the bin codes.

LogitBoost's least-squares stump (Friedman, Hastie & Tibshirani 2000, Algorithm 3, step 2(b))
needs, in every bin of every feature, the sums of two values per example split by class: the
weights w and w |z|. Two calls of :func:`boostkit.kernels.histogram.class_histogram` read every
code twice; this kernel reads each once and adds both values, in the layout of the engine's
group histograms (:mod:`boostkit.kernels.histogram`: four features per pass, eight codes per
load, one address per example and column): the codes are loaded once for the two channels,
and every bin still adds its examples in increasing order, so the sums are those of the two
single-channel histograms, bit for bit.
"""

from __future__ import annotations

import numba
import numpy as np

from .histogram import (_CODES, _DIRECT_ROWS, _GROUP, _TILE, _eight_codes, _groups_shape,
                        _groups_to_out)

__all__ = ["two_channel_histogram"]

#: The offset of the second channel's columns in a group's histogram (after the first's two).
_SECOND = 2 * _GROUP * _CODES


@numba.njit(cache=True, nogil=True)
def _accumulate_two(codes, first, second, is_pos, group, f, start, stop):
    # Adds examples [start, stop) of features f .. f + 3 to ``group``, a flat (4, 4, 256)
    # histogram: column c = 2 * channel + class, feature f + j, bin b at c * 1024 + j * 256 + b
    # (the engine's _accumulate_group with a second value per example, two columns further).
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
            a = first[i + j]
            b = second[i + j]
            column = np.uintp(is_pos[i + j]) * np.uintp(_GROUP * _CODES)
            shift = np.uint64(8 * j)
            k0 = column + np.uintp(np.uint8(q0 >> shift))
            k1 = column + np.uintp(_CODES) + np.uintp(np.uint8(q1 >> shift))
            k2 = column + np.uintp(2 * _CODES) + np.uintp(np.uint8(q2 >> shift))
            k3 = column + np.uintp(3 * _CODES) + np.uintp(np.uint8(q3 >> shift))
            group[k0] += a
            group[k1] += a
            group[k2] += a
            group[k3] += a
            group[k0 + np.uintp(_SECOND)] += b
            group[k1 + np.uintp(_SECOND)] += b
            group[k2 + np.uintp(_SECOND)] += b
            group[k3 + np.uintp(_SECOND)] += b
        i += 8
    for i in range(i, m):
        a = first[i]
        b = second[i]
        column = np.uintp(is_pos[i]) * np.uintp(_GROUP * _CODES)
        k0 = column + np.uintp(r0[i])
        k1 = column + np.uintp(_CODES) + np.uintp(r1[i])
        k2 = column + np.uintp(2 * _CODES) + np.uintp(r2[i])
        k3 = column + np.uintp(3 * _CODES) + np.uintp(r3[i])
        group[k0] += a
        group[k1] += a
        group[k2] += a
        group[k3] += a
        group[k0 + np.uintp(_SECOND)] += b
        group[k1 + np.uintp(_SECOND)] += b
        group[k2 + np.uintp(_SECOND)] += b
        group[k3 + np.uintp(_SECOND)] += b


@numba.njit(cache=True, nogil=True, inline="always")
def _accumulate_direct_two(codes, first, second, is_pos, out):
    # out[f, code, channel, class] += value, feature by feature in the examples' order (the
    # group layout's sums, bit for bit): below _DIRECT_ROWS examples the groups' own arrays
    # (zeroed, then copied out) cost more than they save, as for the engine's histogram.
    out[:] = 0.0
    for f in range(codes.shape[0]):
        row, hist = codes[f], out[f]
        for i in range(codes.shape[1]):
            c = is_pos[i]
            hist[row[i], 0, c] += first[i]
            hist[row[i], 1, c] += second[i]


@numba.njit(cache=True, nogil=True)
def two_channel_histogram(codes, first, second, is_pos, out):
    """Fill ``out`` (``(d, n_bins, 2, 2)``, float64) with the class histograms of two values.

    ``out[f, b, 0, s]`` is the sum of ``first`` over the examples with ``codes[f, i] = b`` and
    class s (``is_pos[i]``: 0 negative, 1 positive), ``out[f, b, 1, s]`` that of ``second``:
    :func:`boostkit.kernels.histogram.class_histogram` of each, bit for bit (every bin adds its
    examples in increasing order), in one pass over the ``(d, n)`` uint8 codes. ``out`` is
    overwritten; bins past 255 are 0.
    """
    d, n = codes.shape
    if n < _DIRECT_ROWS:
        _accumulate_direct_two(codes, first, second, is_pos, out)
        return
    if n > 1 and codes.strides[1] != 1:  # one load per eight codes needs them adjacent
        codes = np.ascontiguousarray(codes)
    groups = np.zeros(_groups_shape(d, 4))
    for lo in range(0, n, _TILE):
        hi = min(lo + _TILE, n)
        for g in range(groups.shape[0]):
            _accumulate_two(codes, first, second, is_pos, groups[g], g * _GROUP, lo, hi)
    _groups_to_out(groups, out.reshape(d, out.shape[1], 4))

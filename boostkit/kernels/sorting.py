"""Stable sorts of floating-point values by their IEEE-754 bits (LSD radix sorts).

A float's bit pattern, with every bit of a negative value flipped and the sign bit of the others
set (:func:`flip_keys`), orders as an unsigned integer exactly as the value orders among values;
an LSD radix sort of those keys (:func:`radix_sort`) is stable and linear in their number. The
binning of the engine (``boostkit.kernels.binning.sort_column``) and :func:`stable_argsort` both
sort this way.
"""

from __future__ import annotations

import numba
import numpy as np

# Keys are read in digits of 11 bits, 6 for 64-bit keys and 3 for 32-bit ones (2048 counters per
# digit: they stay in the L1 cache while the keys are scattered).
DIGIT_BITS = 11
N_DIGITS = 6
N_DIGITS32 = 3
_DIGIT_MASK = np.uint64((1 << DIGIT_BITS) - 1)
SIGN = np.uint64(1 << 63)
SIGN32 = np.uint32(1 << 31)
# The bits every NaN is sorted as: the largest positive NaN, whose key (0xFFFF...) is above
# +inf's (0xFFF0...), as np.sort puts NaN after +inf.
_NAN_BITS = np.uint64(0x7FFFFFFFFFFFFFFF)


@numba.njit(cache=True, nogil=True)
def radix_sort(keys, rows, keys_tmp, rows_tmp, n_digits):
    """``(keys, rows)`` ordered by the unsigned integer ``keys``, equal keys in their order (an
    LSD radix sort, stable): one counting pass for the ``n_digits`` 11-bit digits, then one
    scatter pass per digit that is not the same for every key (the low digits of float32
    values held as float64 are all zero). The answer is one of the two pairs of arrays."""
    m = keys.shape[0]
    digit_counts = np.zeros((n_digits, 1 << DIGIT_BITS), dtype=np.int64)
    for j in range(m):
        k = np.uint64(keys[j])
        for p in range(n_digits):
            digit_counts[p, (k >> np.uint64(p * DIGIT_BITS)) & _DIGIT_MASK] += 1
    for p in range(n_digits):
        shift = np.uint64(p * DIGIT_BITS)
        if m == 0 or digit_counts[p, (np.uint64(keys[0]) >> shift) & _DIGIT_MASK] == m:
            continue  # one digit value for all: the order stays
        start = 0
        for b in range(1 << DIGIT_BITS):  # counts become each digit value's first slot
            count = digit_counts[p, b]
            digit_counts[p, b] = start
            start += count
        for j in range(m):
            k = keys[j]
            b = (np.uint64(k) >> shift) & _DIGIT_MASK
            at = digit_counts[p, b]
            digit_counts[p, b] = at + 1
            keys_tmp[at] = k
            rows_tmp[at] = rows[j]
        keys, rows, keys_tmp, rows_tmp = keys_tmp, rows_tmp, keys, rows
    return keys, rows


@numba.njit(cache=True, nogil=True, inline="always")
def flip_keys(keys, sign):
    """IEEE-754 bits to keys ordered as the values, in place: every bit of a negative value
    flipped, the ``sign`` bit of the others."""
    for j in range(keys.shape[0]):
        k = keys[j]
        keys[j] = ~k if k & sign else k | sign


@numba.njit(cache=True, nogil=True, inline="always")
def unflip_keys(keys, sign):
    """The inverse of :func:`flip_keys`: keys back to IEEE-754 bits, in place."""
    for j in range(keys.shape[0]):
        k = keys[j]
        keys[j] = k ^ sign if k & sign else ~k


@numba.njit(cache=True, nogil=True)
def argsort_keys(values, keys, keys_tmp, order, order_tmp):
    """The indices that sort ``values`` (a contiguous 1-D float64 array), equal values in their
    order, written into ``order`` or ``order_tmp``, whichever is returned: integer arrays (int32
    when it holds every index: less to move in each pass, or intp); ``keys`` and ``keys_tmp``
    are uint64 scratch. All four are as long as ``values``.

    A :func:`radix_sort` of the values' keys (:func:`flip_keys`) with their bits made canonical
    first: -0.0 gets the bits of +0.0, the value it equals (so the two zeros keep their order,
    as numpy keeps them), and every NaN the largest positive NaN's, whose key is above +inf's
    (NaNs last, in their order, as numpy puts them).
    """
    bits = values.view(np.uint64)
    for i in range(values.shape[0]):
        x = values[i]
        if x != x:
            keys[i] = _NAN_BITS
        elif x == 0.0:
            keys[i] = 0  # +0.0 and -0.0
        else:
            keys[i] = bits[i]
        order[i] = i
    flip_keys(keys, SIGN)
    _, sorted_order = radix_sort(keys, order, keys_tmp, order_tmp, N_DIGITS)
    return sorted_order


def stable_argsort(values) -> np.ndarray:
    """``np.argsort(values, kind="stable")`` of a 1-D float64 array, in linear time
    (:func:`argsort_keys`).

    The scratch arrays are numpy's: it backs large arrays with huge pages, which a fresh array
    of millions of values first touches much faster than memory allocated inside a kernel.
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"values must be a 1-D array, got shape {values.shape}")
    n = values.shape[0]
    return argsort_keys(values, np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64),
                        np.empty(n, dtype=np.intp), np.empty(n, dtype=np.intp))

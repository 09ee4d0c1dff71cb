"""The radix sorts of boostkit.kernels.sorting against naive references: ``np.argsort(kind=
"stable")`` for :func:`stable_argsort` and :func:`argsort_keys`, Python's stable ``sorted`` on
the integer keys for :func:`radix_sort`, and the IEEE-754 order for the key flips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostkit.kernels.sorting import (N_DIGITS, N_DIGITS32, SIGN, SIGN32, argsort_keys,
                                      flip_keys, radix_sort, stable_argsort, unflip_keys)

# Values that trip a sort of bit patterns: both zeros, subnormals, the extremes, infinities,
# neighbours one ulp apart, and ties.
special = st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300,
                           -1e-300, 1.7976931348623157e308, -1.7976931348623157e308, 1e300,
                           np.inf, -np.inf, 1.0, 1.0 + 2**-52, -1.0, -1.0 - 2**-52, 3.0])
value_lists = st.lists(st.one_of(st.floats(allow_nan=False), special), max_size=300)


@settings(max_examples=400, deadline=None)
@given(value_lists)
def test_stable_argsort_is_numpys_stable_argsort(values):
    values = np.array(values, dtype=np.float64)
    assert np.array_equal(stable_argsort(values), np.argsort(values, kind="stable"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(special, st.just(np.nan), st.just(-np.nan)), max_size=100))
def test_nan_goes_last_in_its_order_as_numpy_puts_it(values):
    values = np.array(values, dtype=np.float64)
    assert np.array_equal(stable_argsort(values), np.argsort(values, kind="stable"))


@pytest.mark.parametrize("n", [0, 1, 2, 5000])
@pytest.mark.parametrize("kind", ["normal", "ties", "zeros", "integers"])
def test_stable_argsort_on_larger_arrays(n, kind):
    rng = np.random.default_rng(n)
    values = {"normal": rng.normal(size=n), "ties": np.round(rng.normal(size=n), 1),
              "zeros": rng.choice([0.0, -0.0], size=n),
              "integers": rng.integers(-3, 3, size=n).astype(np.float64)}[kind]
    assert np.array_equal(stable_argsort(values), np.argsort(values, kind="stable"))


@pytest.mark.parametrize("index", [np.int32, np.intp])
def test_argsort_keys_with_32_and_64_bit_indices(index):
    values = np.round(np.random.default_rng(1).normal(size=3000), 2)
    n = values.shape[0]
    order = argsort_keys(values, np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64),
                         np.empty(n, dtype=index), np.empty(n, dtype=index))
    assert order.dtype == index
    assert np.array_equal(order, np.argsort(values, kind="stable"))


def test_stable_argsort_takes_strided_input_and_rejects_other_shapes():
    values = np.random.default_rng(2).normal(size=(50, 2))
    assert np.array_equal(stable_argsort(values[:, 1]), np.argsort(values[:, 1], kind="stable"))
    with pytest.raises(ValueError, match=r"values must be a 1-D array, got shape \(50, 2\)"):
        stable_argsort(values)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=200))
def test_radix_sort_is_a_stable_sort_of_64_bit_keys(keys):
    keys = np.array(keys, dtype=np.uint64)
    rows = np.arange(keys.shape[0])
    sorted_keys, sorted_rows = radix_sort(keys.copy(), rows.copy(), np.empty_like(keys),
                                          np.empty_like(rows), N_DIGITS)
    expected = sorted(range(keys.shape[0]), key=lambda i: int(keys[i]))  # stable
    assert sorted_rows.tolist() == expected
    assert sorted_keys.tolist() == [int(keys[i]) for i in expected]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), max_size=200))
def test_radix_sort_of_32_bit_keys(keys):
    keys = np.array(keys, dtype=np.uint32)
    rows = np.arange(keys.shape[0], dtype=np.int32)
    _, sorted_rows = radix_sort(keys.copy(), rows.copy(), np.empty_like(keys),
                                np.empty_like(rows), N_DIGITS32)
    assert sorted_rows.tolist() == sorted(range(keys.shape[0]), key=lambda i: int(keys[i]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, width=32), min_size=1, max_size=100))
def test_flipped_keys_order_as_the_values_and_flip_back(values):
    for dtype, bits, sign in ((np.float64, np.uint64, SIGN), (np.float32, np.uint32, SIGN32)):
        array = np.array(values, dtype=dtype) + dtype(0.0)  # one zero, +0.0, as the sorts key it
        keys = array.view(bits).copy()
        flip_keys(keys, sign)
        order = np.argsort(keys, kind="stable")
        assert np.array_equal(array[order], np.sort(array))
        unflip_keys(keys, sign)
        assert keys.tobytes() == array.tobytes()

"""The kernels that keep the PAV paths from touching more than they need (Wilbur et al. 2005,
sections 2.1, 5): the quantile neighbours of a new hypothesis' scores, against a naive reference
over the fully sorted values, and PAV in the caller's scratch, against PAV allocating its own. Run
also with NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostkit_pav.kernels import pav_pools, pav_pools_scratch, quantile_neighbours

special = st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 5e-324,
                           3.0, 3.0 + 2**-51, 3.0 + 2**-50])
score_lists = st.lists(st.one_of(st.floats(-1e6, 1e6), special, st.integers(-3, 3).map(float)),
                       max_size=400)


def naive_neighbours(values: np.ndarray, max_bins: int):
    """The quantile rule read off the fully sorted values: all distinct values when there are
    at most ``max_bins``, else the pairs (v_q, next distinct value) of the distinct cuts."""
    ordered = np.sort(values[~np.isnan(values)]) + 0.0
    distinct = np.unique(ordered)
    n_distinct = distinct.shape[0]
    if n_distinct <= max_bins:  # every distinct value its own bin: a cut between each two
        return distinct.tolist(), [True] * (n_distinct - 1) + [False] * min(1, n_distinct)
    m = ordered.shape[0]
    points, cut_below, last_cut = [], [], None
    for q in range(1, max_bins):
        v = ordered[math.ceil((m * q) / max_bins) - 1]
        after = distinct[distinct > v]
        if v == last_cut or after.shape[0] == 0:
            continue  # cut after v already, or v is the largest value
        if points and points[-1] == v:
            cut_below[-1] = True
        else:
            points.append(float(v))
            cut_below.append(True)
        points.append(float(after[0]))
        cut_below.append(False)
        last_cut = v
    return points, cut_below


def run_neighbours(values: np.ndarray, max_bins: int):
    out = np.full(2 * max_bins, np.nan)
    cut_below = np.zeros(2 * max_bins, dtype=bool)
    k = quantile_neighbours(values, max_bins, out, cut_below)
    return out[:k].tolist(), cut_below[:k].tolist()


@settings(max_examples=300, deadline=None)
@given(score_lists, st.sampled_from([2, 3, 5, 17, 255]))
def test_quantile_neighbours_are_those_of_the_sorted_values(values, max_bins):
    values = np.array(values, dtype=np.float64)
    points, cut_below = run_neighbours(values, max_bins)
    expected_points, expected_cuts = naive_neighbours(values, max_bins)
    assert np.array(points).tobytes() == np.array(expected_points, dtype=np.float64).tobytes()
    assert cut_below == expected_cuts


@pytest.mark.parametrize("distribution", ["normal", "cubed", "lognormal", "one outlier", "ties"])
def test_quantile_neighbours_of_skewed_and_tied_scores(distribution):
    rng = np.random.default_rng(4)
    values = {"normal": rng.normal(size=20_000), "cubed": rng.normal(size=20_000) ** 3,
              "lognormal": np.exp(8 * rng.normal(size=20_000)),
              "one outlier": np.append(rng.normal(size=19_999), 1e12),
              "ties": np.round(rng.normal(size=20_000), 1)}[distribution]
    assert run_neighbours(values, 255) == naive_neighbours(values, 255)


weighted_points = st.integers(1, 80).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0]), min_size=n, max_size=n),
    st.lists(st.floats(0.01, 5.0), min_size=n, max_size=n),
))


@settings(max_examples=300, deadline=None)
@given(weighted_points, st.integers(0, 3))
def test_pav_in_the_callers_scratch_is_pav_bit_for_bit(points, spare):
    means, weights = (np.array(v, dtype=np.float64) for v in points)
    n = means.shape[0]
    starts, values = np.empty(n + 1, dtype=np.int64), np.empty(n)
    k = pav_pools(means, weights, starts, values)
    # Scratch and outputs longer than needed and full of garbage: nothing may be read from them.
    rng = np.random.default_rng(n)
    starts2 = rng.integers(-5, 5, size=n + 1 + spare)
    values2 = rng.normal(size=n + spare)
    links = rng.integers(-5, 5, size=3 * n + spare)
    sums = rng.normal(size=n + spare)
    k2 = pav_pools_scratch(means, weights, starts2, values2, links, sums)
    assert k2 == k
    assert starts2[: k + 1].tolist() == starts[: k + 1].tolist()
    assert values2[:k].tobytes() == values[:k].tobytes()


def queue_pav(means, weights):
    """Wilbur et al. 2005, section 2.1 step by step, in Python: pointers and sums initialised for
    every point, the first queue every interval in order, then the queues of the predecessors of the
    intervals that grew, each pass skipping the entries swallowed during it."""
    n = len(means)
    forward = list(range(1, n + 1))
    backward = list(range(-1, n - 1))
    sum_w = [float(w) for w in weights]
    sum_wp = [float(w) * float(m) for m, w in zip(means, weights)]
    queue = list(range(n))
    while queue:
        marker, next_queue = 0, []
        for k in queue:
            pooled = False
            if marker <= k:
                while forward[k] != n:
                    j = forward[k]
                    if sum_wp[k] * sum_w[j] < sum_wp[j] * sum_w[k]:
                        break
                    sum_w[k] += sum_w[j]
                    sum_wp[k] += sum_wp[j]
                    forward[k] = forward[j]
                    if forward[k] < n:
                        backward[forward[k]] = k
                    marker = forward[k]
                    pooled = True
            if pooled and backward[k] >= 0:
                next_queue.append(backward[k])
        queue = next_queue
    starts, values, k = [], [], 0
    while k < n:
        starts.append(k)
        values.append(sum_wp[k] / sum_w[k])
        k = forward[k]
    return starts + [n], values


@settings(max_examples=300, deadline=None)
@given(weighted_points)
def test_pav_kernel_is_the_queue_algorithm_of_section_2_1_bit_for_bit(points):
    # The kernel's first pass reads the inputs in one scan instead of initialising every
    # point's pointers and sums first: the same pools, the same sums in the same order.
    means, weights = (np.array(v, dtype=np.float64) for v in points)
    n = means.shape[0]
    starts, values = np.empty(n + 1, dtype=np.int64), np.empty(n)
    k = pav_pools(means, weights, starts, values)
    expected_starts, expected_values = queue_pav(means, weights)
    assert starts[: k + 1].tolist() == expected_starts
    assert values[:k].tobytes() == np.array(expected_values, dtype=np.float64).tobytes()


@pytest.mark.parametrize("shape", ["random", "decreasing", "sawtooth", "alternating"])
def test_pav_kernel_is_the_queue_algorithm_on_long_inputs(shape):
    rng = np.random.default_rng(11)
    n = 5_000 if shape != "alternating" else 5_001
    # "alternating": every first pair pools, so the first queue holds N / 2 - 1 entries, near
    # the N / 2 the kernel's scratch leaves each queue.
    means = {"random": (rng.random(n) < np.linspace(0.1, 0.9, n)).astype(np.float64),
             "decreasing": np.linspace(1.0, 0.0, n),
             "sawtooth": np.tile(np.linspace(0.0, 1.0, 50)[::-1], n // 50),
             "alternating": np.resize([1.0, 0.0], n)}[shape]
    weights = rng.exponential(size=n) + 0.01
    starts, values = np.empty(n + 1, dtype=np.int64), np.empty(n)
    k = pav_pools(means, weights, starts, values)
    expected_starts, expected_values = queue_pav(means, weights)
    assert starts[: k + 1].tolist() == expected_starts
    assert values[:k].tobytes() == np.array(expected_values, dtype=np.float64).tobytes()

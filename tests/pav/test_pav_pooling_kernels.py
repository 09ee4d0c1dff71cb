"""The sort-free kernels of the PAV plugin: input checks, hashed tie pooling, binned class sums.

Each is compared with a naive reference written here, bit for bit where the kernel promises the
same additions in the same order (ties summed in the examples' order, class sums per bin in the
examples' order). Run also with NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit_pav.isotonic as isotonic
from boostkit.kernels.binning import apply_bins
from boostkit.kernels.histogram import cell_class_sums
from boostkit_pav.calibrations import _score_bin_sums, score_thresholds
from boostkit_pav.kernels import bin_class_sums, check_regression_input, pool_ties_hashed
from pooling_reference import pool_ties


def naive_pooling(scores, weights, targets):
    """Distinct scores of positive weight, increasing, with their weight and mean target, each
    summed in the order of the examples."""
    pooled: dict[float, list] = {}
    for s, w, t in zip(scores.tolist(), weights.tolist(), targets.tolist()):
        if w <= 0.0:
            continue
        if s in pooled:  # 0.0 and -0.0 are one key, the first one seen kept
            pooled[s][1] += w
            pooled[s][2] += w * t
        else:
            pooled[s] = [s, w, w * t]
    rows = sorted(pooled.values(), key=lambda row: row[0])
    return (np.array([r[0] for r in rows]), np.array([r[1] for r in rows]),
            np.array([r[2] / r[1] for r in rows]))


def hashed(scores, weights, targets, max_points):
    out = [np.empty(max_points) for _ in range(3)]
    n = pool_ties_hashed(scores, scores.view(np.int64), weights, targets, max_points, *out)
    if n < 0:
        return None
    order = np.argsort(out[0][:n])
    return tuple(a[:n][order] for a in out)


tied_data = st.integers(1, 120).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([-2.5, -1.0, -0.0, 0.0, 0.1, 0.3, 1e300, 7.0]), min_size=n, max_size=n),
    st.lists(st.sampled_from([0.0, 0.1, 0.7, 1.3, 2.0 / 3.0]), min_size=n, max_size=n),
    st.lists(st.floats(-3.0, 3.0), min_size=n, max_size=n),
))


@settings(max_examples=150, deadline=None)
@given(tied_data)
def test_hashed_pooling_equals_the_naive_reference_bit_for_bit(data):
    scores, weights, targets = (np.array(a, dtype=np.float64) for a in data)
    expected = naive_pooling(scores, weights, targets)
    got = hashed(scores, weights, targets, scores.shape[0])
    assert got is not None
    for a, b in zip(got, expected):
        assert a.tobytes() == b.tobytes()


@settings(max_examples=150, deadline=None)
@given(tied_data)
def test_hashed_pooling_equals_pool_ties_after_a_stable_sort(data):
    scores, weights, targets = (np.array(a, dtype=np.float64) for a in data)
    n = scores.shape[0]
    out = [np.empty(n) for _ in range(3)]
    m = pool_ties(scores, weights, targets, np.argsort(scores, kind="stable"), *out)
    got = hashed(scores, weights, targets, n)
    for a, b in zip(got, out):
        assert a.tobytes() == b[:m].tobytes()


def test_hashed_pooling_gives_up_beyond_max_points():
    scores = np.array([3.0, 1.0, 3.0, 2.0, 1.0])
    ones = np.ones(5)
    assert hashed(scores, ones, ones, 3) is not None
    assert hashed(scores, ones, ones, 2) is None
    # a value carried only by examples of weight 0 is no point
    assert hashed(scores, np.array([1.0, 1.0, 1.0, 0.0, 1.0]), ones, 2) is not None


def test_the_hashed_and_the_sorted_path_give_one_fit(monkeypatch):
    rng = np.random.default_rng(4)
    scores = np.round(rng.normal(size=3000), 2)
    weights = rng.exponential(size=3000)
    weights[::9] = 0.0
    targets = (rng.random(3000) < 0.5).astype(np.float64)
    fast = isotonic.isotonic_regression(scores, weights, targets)
    monkeypatch.setattr(isotonic, "HASHED_POINTS", 5)  # too few: sort instead
    slow = isotonic.isotonic_regression(scores, weights, targets)
    for field in ("points", "weights", "means", "pool_starts", "pool_values"):
        assert getattr(fast, field).tobytes() == getattr(slow, field).tobytes()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", [0, 1, 2])
def test_check_regression_input_finds_what_numpy_finds(bad, where):
    rng = np.random.default_rng(where)
    arrays = [rng.normal(size=50), rng.random(50), rng.random(50)]
    assert check_regression_input(*arrays) == (True, False, True)
    arrays[where][17] = bad
    finite, _, _ = check_regression_input(*arrays)
    assert finite == all(np.isfinite(a).all() for a in arrays) == False  # noqa: E712
    weights = np.array([0.0, -1e-300, 0.0])
    assert check_regression_input(np.zeros(3), weights, np.zeros(3)) == (True, True, False)


def naive_bin_class_sums(scores, thresholds, weights, is_pos):
    cells = np.searchsorted(thresholds, scores, side="left")
    cells[np.isnan(scores)] = 0
    sums = np.zeros((thresholds.shape[0] + 1, 2))
    for c, w, label in zip(cells, weights, is_pos):
        sums[c, label] += w
    return cells, sums


@pytest.mark.parametrize("n_thresholds", [0, 1, 2, 3, 7, 64, 254])
def test_bin_class_sums_equals_the_naive_reference_bit_for_bit(n_thresholds):
    rng = np.random.default_rng(n_thresholds)
    thresholds = np.sort(rng.normal(size=n_thresholds))
    scores = np.concatenate((rng.normal(size=2000), thresholds, [np.nan, -np.inf, np.inf]))
    weights = rng.exponential(size=scores.shape[0])
    is_pos = (rng.random(scores.shape[0]) < 0.4).astype(np.uint8)
    cells = np.empty(scores.shape[0], dtype=np.uint8)
    sums = np.zeros((n_thresholds + 1, 2))
    bin_class_sums(scores, thresholds, weights, is_pos, cells, sums)
    expected_cells, expected_sums = naive_bin_class_sums(scores, thresholds, weights, is_pos)
    assert (cells == expected_cells).all()
    assert sums.tobytes() == expected_sums.tobytes()


@pytest.mark.parametrize("n, zero_weights", [(900, False), (900, True), (25_000, False)])
def test_score_bins_equal_the_engine_binning_and_cell_sums(n, zero_weights):
    """Both ways the calibration bins a new hypothesis (its sample's codes, or the fused kernel)
    give the engine's apply_bins cells and cell_class_sums sums, bit for bit."""
    rng = np.random.default_rng(n)
    scores = rng.normal(size=n) ** 3
    weights = rng.dirichlet(np.ones(n))
    is_pos = (rng.random(n) < 0.5).astype(np.uint8)
    sample_weight = np.ones(n)
    if zero_weights:
        sample_weight[::4] = 0.0
    thresholds, cells, wneg, wpos = _score_bin_sums(scores, weights, is_pos, sample_weight, 255,
                                                    np.random.default_rng(0))
    assert thresholds.tobytes() == score_thresholds(scores, sample_weight, 255,
                                                    np.random.default_rng(0)).tobytes()
    expected = np.empty((1, n), dtype=np.uint8)
    apply_bins(scores[:, None], thresholds, np.array([0, thresholds.shape[0]]), 0, expected)
    assert (cells == expected[0]).all()
    expected_neg, expected_pos = cell_class_sums(expected[0], weights, is_pos, thresholds.shape[0] + 1)
    assert wneg.tobytes() == expected_neg.tobytes() and wpos.tobytes() == expected_pos.tobytes()

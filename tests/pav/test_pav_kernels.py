"""PAV kernels (Wilbur et al. 2005, section 2): tie pooling, PAV, interpolation.

Each kernel is checked against a naive reference written here, against scikit-learn's
IsotonicRegression, and on the paper's own six-point example. Run also with NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression

from boostkit_pav.isotonic import isotonic_bins, isotonic_regression
from boostkit_pav.kernels import interpolate_points, pav_bins, pav_pools, split_weights
from pooling_reference import pool_ties


def naive_pav(means, weights):
    """Pool the first adjacent violator pair (mean left >= mean right) until none is left."""
    pools = [[float(w), float(w) * float(m), 1] for m, w in zip(means, weights)]
    changed = True
    while changed:
        changed = False
        for j in range(len(pools) - 1):
            left, right = pools[j], pools[j + 1]
            if left[1] / left[0] >= right[1] / right[0]:
                pools[j] = [left[0] + right[0], left[1] + right[1], left[2] + right[2]]
                del pools[j + 1]
                changed = True
                break
    sizes = [p[2] for p in pools]
    return np.concatenate(([0], np.cumsum(sizes))), np.array([p[1] / p[0] for p in pools])


def run_pav(means, weights):
    means = np.asarray(means, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    starts = np.empty(means.shape[0] + 1, dtype=np.int64)
    values = np.empty(means.shape[0])
    k = pav_pools(means, weights, starts, values)
    return starts[: k + 1], values[:k]


def test_the_six_point_example_of_section_2():
    # w = 1 each, p = 1/4, 1/3, 1/5, 1/4, 1, 1/2: pools {p0}, {p1, p2, p3}, {p4, p5}
    starts, values = run_pav([1 / 4, 1 / 3, 1 / 5, 1 / 4, 1, 1 / 2], np.ones(6))
    assert starts.tolist() == [0, 1, 4, 6]
    np.testing.assert_allclose(values, [1 / 4, 47 / 180, 3 / 4], rtol=0, atol=1e-15)


def test_the_first_pass_pools_the_two_violating_pairs():
    # {p1, p2} -> 4/15 and {p4, p5} -> 3/4 (the paper's intermediate values)
    starts, values = run_pav([1 / 3, 1 / 5], [1, 1])
    assert values.tolist() == pytest.approx([4 / 15])
    starts, values = run_pav([1, 1 / 2], [1, 1])
    assert values.tolist() == pytest.approx([3 / 4])


def test_equal_means_are_pooled_so_pools_are_maximal():
    starts, values = run_pav([0.5, 0.5, 0.2, 0.9], [1, 3, 1, 1])
    assert starts.tolist() == [0, 3, 4]
    np.testing.assert_allclose(values, [(0.5 + 1.5 + 0.2) / 5, 0.9])


def test_a_decreasing_sequence_becomes_one_pool_in_linear_passes():
    n = 10_000
    starts, values = run_pav(np.linspace(1, 0, n), np.ones(n))
    assert starts.tolist() == [0, n]
    assert values[0] == pytest.approx(0.5)


weighted_points = st.integers(1, 60).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0]), min_size=n, max_size=n),
    st.lists(st.floats(0.01, 5.0), min_size=n, max_size=n),
))


@settings(max_examples=120, deadline=None)
@given(weighted_points)
def test_pav_equals_the_naive_reference(points):
    # Compared point by point: where two pools have equal means up to rounding, the pooling
    # decision may differ between the two, but not the fitted values.
    means, weights = points
    starts, values = run_pav(means, weights)
    ref_starts, ref_values = naive_pav(means, weights)
    np.testing.assert_allclose(np.repeat(values, np.diff(starts)),
                               np.repeat(ref_values, np.diff(ref_starts)), rtol=1e-12, atol=1e-15)


@settings(max_examples=120, deadline=None)
@given(weighted_points)
def test_pools_are_irreducible_with_strictly_increasing_values(points):
    """Eq. 3-4: each pool's value is its weighted mean, every prefix of a pool has a mean at
    least as high as the pool (inequality 4), and successive pools increase (strictly, up to
    rounding: equal means are pooled)."""
    means, weights = (np.array(a) for a in points)
    starts, values = run_pav(means, weights)
    assert (np.diff(values) > -1e-12).all()
    for j in range(values.shape[0]):
        w, p = weights[starts[j]:starts[j + 1]], means[starts[j]:starts[j + 1]]
        assert values[j] == pytest.approx(np.dot(w, p) / w.sum(), rel=1e-12)
        prefix = np.cumsum(w * p) / np.cumsum(w)
        assert (prefix >= values[j] - 1e-12).all()


def test_pool_ties_merges_equal_scores_and_skips_zero_weights():
    scores = np.array([2.0, 1.0, 2.0, 3.0, 1.0, 5.0])
    weights = np.array([1.0, 2.0, 3.0, 1.0, 2.0, 0.0])
    targets = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    order = np.argsort(scores, kind="stable")
    out = [np.empty(6) for _ in range(3)]
    n = pool_ties(scores, weights, targets, order, *out)
    assert n == 3
    assert out[0][:n].tolist() == [1.0, 2.0, 3.0]
    assert out[1][:n].tolist() == [4.0, 4.0, 1.0]
    assert out[2][:n].tolist() == [0.5, 0.25, 1.0]


scored_data = st.integers(1, 80).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 12), min_size=n, max_size=n),
    st.lists(st.floats(0.01, 3.0), min_size=n, max_size=n),
    st.lists(st.integers(0, 1), min_size=n, max_size=n),
))


@settings(max_examples=100, deadline=None)
@given(scored_data)
def test_isotonic_regression_equals_scikit_learn_on_data_with_ties(data):
    scores, weights, labels = (np.array(a, dtype=np.float64) for a in data)
    fit = isotonic_regression(scores, weights, labels)
    ours = np.repeat(fit.pool_values, np.diff(fit.pool_starts))
    ref = IsotonicRegression(increasing=True).fit(scores, labels, sample_weight=weights)
    np.testing.assert_allclose(ours, ref.predict(fit.points), rtol=0, atol=1e-12)


def test_isotonic_regression_equals_scikit_learn_on_a_large_random_sample():
    rng = np.random.default_rng(0)
    scores = np.round(rng.normal(size=20_000), 2)  # many ties
    labels = (rng.random(20_000) < 1 / (1 + np.exp(-2 * scores))).astype(np.float64)
    weights = rng.exponential(size=20_000)
    weights[rng.random(20_000) < 0.05] = 0.0
    fit = isotonic_regression(scores, weights, labels)
    ref = IsotonicRegression(increasing=True).fit(scores, labels, sample_weight=weights)
    np.testing.assert_allclose(fit.fitted(), ref.predict(fit.points), rtol=0, atol=1e-12)
    assert fit.points.shape[0] == np.unique(scores[weights > 0]).shape[0]


@pytest.mark.parametrize("bad, message", [
    (dict(weights=-np.ones(3)), "non-negative"),
    (dict(weights=np.zeros(3)), "all 0"),
    (dict(scores=np.array([0.0, np.nan, 1.0])), "finite"),
    (dict(targets=np.zeros(2)), "one length"),
])
def test_isotonic_regression_refuses_bad_input(bad, message):
    args = dict(scores=np.arange(3.0), weights=np.ones(3), targets=np.zeros(3))
    args.update(bad)
    with pytest.raises(ValueError, match=message):
        isotonic_regression(**args)


def naive_interpolation(points, values, x, linear):
    """Section 2.2 cases 1-4 written out one by one."""
    if x in points:
        return values[list(points).index(x)]
    if x < points[0]:
        return values[0]
    if x > points[-1]:
        return values[-1]
    i = max(j for j in range(len(points)) if points[j] < x)
    if linear:
        return values[i] + (x - points[i]) / (points[i + 1] - points[i]) * (values[i + 1] - values[i])
    return (values[i] + values[i + 1]) / 2


@pytest.mark.parametrize("linear", [False, True])
def test_interpolation_cases_1_to_4(linear):
    points = np.array([0.0, 1.0, 3.0, 7.0])
    values = np.array([0.1, 0.2, 0.6, 0.9])
    s = np.array([-5.0, 0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 6.0, 7.0, 9.0])
    out = np.empty(s.shape[0])
    interpolate_points(points, values, s, linear, out)
    expected = [naive_interpolation(points, values, x, linear) for x in s]
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-15)
    if not linear:  # the midpoint rule, case 3
        assert out[2] == pytest.approx(0.15) and out[5] == pytest.approx(0.4)


def test_the_pools_end_points_interpolate_like_all_points():
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 40, 500).astype(np.float64)
    labels = (rng.random(500) < scores / 40).astype(np.float64)
    fit = isotonic_regression(scores, np.ones(500), labels)
    points, values = fit.support()
    assert points.shape[0] < fit.points.shape[0]
    s = np.linspace(-3, 45, 997)
    for linear in (False, True):
        full, compressed = np.empty(997), np.empty(997)
        interpolate_points(fit.points, fit.fitted(), s, linear, full)
        interpolate_points(points, values, s, linear, compressed)
        np.testing.assert_array_equal(full, compressed)


def test_binned_pav_fills_an_empty_bin_by_the_midpoint_rule():
    wpos = np.array([0.1, 0.0, 0.0, 0.3, 0.1])
    wneg = np.array([0.3, 0.0, 0.0, 0.1, 0.1])
    p = isotonic_bins(wpos, wneg)
    # bins 3 and 4 (3/4 then 1/2) violate and pool to 0.4/0.6 = 2/3; the empty bins 1 and 2
    # between 1/4 and 2/3 get the midpoint of their occupied neighbours (case 3)
    pooled = 2 / 3
    assert p.tolist() == pytest.approx([0.25, (0.25 + pooled) / 2, (0.25 + pooled) / 2, pooled, pooled])
    linear = isotonic_bins(wpos, wneg, "linear")
    step = (pooled - 0.25) / 3
    assert linear.tolist() == pytest.approx([0.25, 0.25 + step, 0.25 + 2 * step, pooled, pooled])


def test_binned_pav_equals_pav_on_the_occupied_bins_with_exact_fractions():
    wpos = [Fraction(3), Fraction(1), Fraction(2)]
    wneg = [Fraction(1), Fraction(3), Fraction(2)]
    p = isotonic_bins(np.array(wpos, dtype=float), np.array(wneg, dtype=float))
    # 3/4 > 1/4: pooled with the next until increasing: (3 + 1 + 2) / 12 = 1/2 for all three
    assert p.tolist() == [0.5, 0.5, 0.5]


def reference_bins(wpos, wneg, linear):
    """Binned PAV by numpy around :func:`pav_pools`: the occupied bins' points, PAV, the pool
    values repeated, and the empty bins interpolated over the bin index."""
    total = wpos + wneg
    occupied = np.flatnonzero(total > 0)
    starts, values = run_pav(wpos[occupied] / total[occupied], total[occupied])
    fitted = np.repeat(values, np.diff(starts))
    if occupied.shape[0] == total.shape[0]:
        return fitted
    out = np.empty(total.shape[0])
    interpolate_points(occupied.astype(np.float64), fitted, np.arange(total.shape[0], dtype=np.float64),
                       linear, out)
    return out


bin_weights = st.lists(st.tuples(st.sampled_from([0.0, 0.0, 0.1, 0.5, 1.0, 3.0]),
                                 st.sampled_from([0.0, 0.0, 0.2, 0.5, 1.0, 2.5])),
                       min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(bin_weights, st.booleans())
def test_pav_bins_equals_numpy_around_pav_pools_bit_for_bit(pairs, linear):
    wpos = np.array([p for p, _ in pairs])
    wneg = np.array([n for _, n in pairs])
    out = np.full(wpos.shape[0], np.nan)
    occupied = pav_bins(wpos, wneg, linear, out)
    assert occupied == np.count_nonzero(wpos + wneg > 0)
    if occupied == 0:
        assert np.isnan(out).all()  # untouched; isotonic_bins raises
        with pytest.raises(ValueError, match="every bin is empty"):
            isotonic_bins(wpos, wneg)
        return
    assert out.tobytes() == reference_bins(wpos, wneg, linear).tobytes()
    # and the pools are those of the naive PAV on the occupied bins
    total = wpos + wneg
    kept = total > 0
    starts, values = naive_pav(wpos[kept] / total[kept], total[kept])
    np.testing.assert_allclose(out[kept], np.repeat(values, np.diff(starts)), rtol=1e-12)


def test_pav_bins_reads_strided_class_sums():
    sums = np.array([[0.3, 0.1], [0.0, 0.0], [0.1, 0.3], [0.1, 0.1]])
    out = np.empty(4)
    pav_bins(sums[:, 1], sums[:, 0], False, out)
    assert out.tobytes() == reference_bins(sums[:, 1].copy(), sums[:, 0].copy(), False).tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.floats(0.0, 1e300), st.sampled_from([0.0, -0.0, 5e-324])),
                          st.integers(0, 1)), max_size=200))
def test_split_weights_is_numpy_multiply_and_subtract(rows):
    weights = np.array([w for w, _ in rows], dtype=np.float64)
    is_pos = np.array([c for _, c in rows], dtype=np.uint8)
    pos, neg = np.empty(weights.shape[0]), np.empty(weights.shape[0])
    split_weights(weights, is_pos, pos, neg)
    expected_pos = weights * is_pos
    assert pos.tobytes() == expected_pos.tobytes()
    assert neg.tobytes() == (weights - expected_pos).tobytes()

"""The PAV and sigmoid calibrations (Wilbur et al. 2005, eq. 13-18, 52-53; section 5).

Components are driven directly on a real BoostState; Theorem 2 and Corollary 1 are checked as
properties, the rest against hand-computed values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

import boostkit
from boostkit_pav.calibrations import PavCalibration, SigmoidCalibration, minimise_exponential_loss
from boostkit_pav.contributions import AffineScore, IsotonicSteps, ScoreBins
from boostkit_pav.learners import Projection


def candidate(scores, **info):
    scores = np.asarray(scores, dtype=np.float64)
    return boostkit.Candidate(Projection(np.ones(1)), scores=scores, info=info)


def z(state, values):
    return float(np.sum(state.weights * np.exp(-state.data.y * values)))


def six_point_data():
    """The example of Wilbur et al. 2005, section 2 as labelled data: at score i a fraction p_i of
    the examples is positive and every score carries the same total weight."""
    scores, labels, weights = [], [], []
    for score, (positives, total) in enumerate([(1, 4), (1, 3), (1, 5), (1, 4), (1, 1), (1, 2)]):
        scores += [score] * total
        labels += [1] * positives + [-1] * (total - positives)
        weights += [1.0 / total] * total
    weights = np.array(weights) / np.sum(weights)
    return np.array(scores, dtype=np.float64), np.array(labels), weights


def test_k_is_half_the_log_odds_of_the_pav_pools(make_state):
    scores, y, weights = six_point_data()
    state = make_state(scores[:, None], y, weights)
    out = PavCalibration(bins=None, epsilon=1e-9).boostkit_calibrate(state, candidate(scores))
    pools = {0: 1 / 4, 1: 47 / 180, 2: 47 / 180, 3: 47 / 180, 4: 3 / 4, 5: 3 / 4}
    expected = [0.5 * math.log(pools[s] / (1 - pools[s])) for s in scores]
    np.testing.assert_allclose(out.train_values, expected, rtol=1e-12)
    assert isinstance(out.contribution, IsotonicSteps)
    assert out.extra["pools"] == 3
    assert out.replaces is None
    # Eq. 16 on a finite set: Z_t = 2 sum over pools of sqrt(W+ W-)
    pos = (y > 0) * weights
    neg = (y < 0) * weights
    pool_of = np.array([0, 1, 1, 1, 2, 2])[scores.astype(int)]
    expected_z = 2 * sum(math.sqrt(pos[pool_of == j].sum() * neg[pool_of == j].sum()) for j in range(3))
    assert z(state, out.train_values) == pytest.approx(expected_z, rel=1e-12)


def test_epsilon_bounds_p_and_so_truncates_k(make_state):
    # a pure positive pool would have p = 1 and k = +inf; p <= 1 - eps gives k = 1/2 ln((1-eps)/eps)
    scores = np.array([0.0, 0.0, 1.0, 2.0, 2.0])
    y = np.array([-1, 1, -1, 1, 1])
    state = make_state(scores[:, None], y)
    out = PavCalibration(bins=None).boostkit_calibrate(state, candidate(scores))
    eps = 1 / 5  # the default is 1/m
    assert out.train_values.max() == pytest.approx(0.5 * math.log((1 - eps) / eps))
    # the pools: {0, 0, 1} with p = 1/3, and {2, 2} with p = 1, bounded to 1 - eps
    assert out.train_values[0] == pytest.approx(0.5 * math.log(0.5))


def test_binned_and_exact_forms_agree_when_every_score_has_its_own_bin(make_state):
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 30, 400).astype(np.float64)
    y = np.where(rng.random(400) < scores / 30, 1, -1)
    state = make_state(scores[:, None], y, rng.dirichlet(np.ones(400)))
    exact = PavCalibration(bins=None).boostkit_calibrate(state, candidate(scores))
    binned = PavCalibration(bins=255).boostkit_calibrate(state, candidate(scores))
    assert isinstance(binned.contribution, ScoreBins)
    np.testing.assert_allclose(binned.train_values, exact.train_values, rtol=1e-12)


def test_the_binned_form_has_at_most_bins_values_and_predicts_from_its_thresholds(make_state):
    rng = np.random.default_rng(1)
    scores = rng.normal(size=2000)
    y = np.where(rng.random(2000) < 1 / (1 + np.exp(-3 * scores)), 1, -1)
    state = make_state(scores[:, None], y)
    out = PavCalibration(bins=16).boostkit_calibrate(state, candidate(scores))
    assert np.unique(out.train_values).shape[0] <= 16
    assert (np.diff(out.train_values[np.argsort(scores)]) >= 0).all()
    # the contribution, evaluated like at prediction time, gives the training values back
    np.testing.assert_array_equal(out.contribution.values(candidate(scores), None), out.train_values)


@pytest.mark.parametrize("interpolation", ["midpoint", "linear"])
def test_new_scores_are_interpolated_by_section_2_2(make_state, interpolation):
    scores = np.array([0.0, 0.0, 2.0, 2.0, 4.0, 4.0])
    y = np.array([-1, -1, -1, 1, 1, 1])
    state = make_state(scores[:, None], y)
    out = PavCalibration(bins=None, epsilon=0.1, interpolation=interpolation).boostkit_calibrate(
        state, candidate(scores))
    k = lambda p: 0.5 * math.log(p / (1 - p))  # noqa: E731
    new = out.contribution.values(candidate([-1.0, 0.5, 2.0, 3.0, 9.0]), None)
    # p = 0.1 (bounded), 0.5, 0.9 (bounded) at 0, 2, 4
    between = [0.3, 0.7] if interpolation == "midpoint" else [0.1 + 0.4 / 4, 0.7]
    np.testing.assert_allclose(new, [k(0.1), k(between[0]), k(0.5), k(between[1]), k(0.9)])


labelled_scores = st.integers(3, 40).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 8), min_size=n, max_size=n),
    st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n),
    st.lists(st.floats(0.05, 2.0), min_size=n, max_size=n),
)).filter(lambda d: 0 < sum(v > 0 for v in d[1]) < len(d[1]))

monotone_steps = st.lists(st.floats(0.0, 3.0), min_size=9, max_size=9)


def monotone_function(scores, steps, offset):
    """A non-decreasing function of the integer scores 0..8 (cumulative non-negative steps)."""
    return (np.cumsum(steps) + offset)[scores.astype(int)]


@settings(max_examples=100, deadline=None)
@given(labelled_scores, monotone_steps, st.floats(-8, 2), st.floats(0.0, 1.0))
def test_theorem_2_no_monotone_function_of_h_has_a_smaller_z(make_state, data, steps, offset, mix):
    """Wilbur et al. 2005, Theorem 2: among non-decreasing functions g, k_t(h) minimises Z = sum D
    e^{-y g(h)}. g is a random non-decreasing function, a mixture (1 - mix) k_t + mix g, or k_t
    scaled or shifted a little (all non-decreasing). Every score also gets one light example of each
    label, so no pool is pure and k_t is finite (epsilon is then inactive)."""
    scores, y, w = (np.array(a, dtype=np.float64) for a in data)
    levels = np.unique(scores)
    scores = np.concatenate((scores, levels, levels))
    y = np.concatenate((y, np.ones_like(levels), -np.ones_like(levels)))
    w = np.concatenate((w, np.full(2 * levels.shape[0], 0.01)))
    state = make_state(scores[:, None], y, w / w.sum())
    k = PavCalibration(bins=None, epsilon=1e-12).boostkit_calibrate(state, candidate(scores)).train_values
    g = monotone_function(scores, steps, offset)
    for other in (g, (1 - mix) * k + mix * g, 0.9 * k, 1.1 * k, k - 0.05, k + 0.05):
        assert z(state, k) <= z(state, other) + 1e-12


@settings(max_examples=100, deadline=None)
@given(labelled_scores, monotone_steps, st.floats(-8, 2), st.floats(0.0, 1.0), st.floats(0.01, 0.4))
def test_corollary_1_with_the_bound_lambda(make_state, data, steps, offset, mix, epsilon):
    """Wilbur et al. 2005 Corollary 1: bounding p by epsilon truncates k at lambda = 1/2 ln((1 -
    eps)/eps), and no non-decreasing g bounded by lambda gives a smaller Z."""
    scores, y, w = (np.array(a, dtype=np.float64) for a in data)
    state = make_state(scores[:, None], y, w / w.sum())
    k = PavCalibration(bins=None, epsilon=epsilon).boostkit_calibrate(state, candidate(scores)).train_values
    bound = 0.5 * math.log((1 - epsilon) / epsilon)
    assert np.abs(k).max() <= bound * (1 + 1e-12)
    g = np.clip(monotone_function(scores, steps, offset), -bound, bound)
    assert z(state, k) <= z(state, g) + 1e-12
    assert z(state, k) <= z(state, (1 - mix) * k + mix * g) + 1e-12


def test_the_partition_loss_is_schapire_singer_z():
    wpos = np.array([[0.1, 0.4]])
    wneg = np.array([[0.3, 0.2]])
    expected = 2 * (math.sqrt(0.03) + math.sqrt(0.08))
    assert PavCalibration().boostkit_partition_loss(wpos, wneg) == pytest.approx([expected])


@pytest.mark.parametrize("params, message", [
    (dict(epsilon=0.5), "epsilon"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(bins=1), "bins"),
    (dict(bins=256), "bins"),
    (dict(interpolation="cubic"), "interpolation"),
    (dict(backfit="yes"), "backfit"),
])
def test_bad_parameters_are_refused(params, message):
    with pytest.raises((ValueError, TypeError), match=message):
        PavCalibration(**params)


def test_backfitting_needs_fixed_scoring_functions(make_state):
    state = make_state(np.zeros((4, 1)), [1, -1, 1, -1])
    with pytest.raises(ValueError, match="scoring_function"):
        PavCalibration(backfit=True).boostkit_calibrate(state, candidate(np.arange(4.0)))


# -- the sigmoid (Wilbur et al. 2005, eq. 52-53) ---------------------------------------------------


def test_linear_alpha_of_a_pm1_hypothesis_has_the_closed_form(make_state):
    # Z(a) = (1 - eps) e^-a + eps e^a + s (2 e^a + 2 e^-a): e^{2a} = (1 - eps + 2s) / (eps + 2s)
    y = np.array([1, 1, 1, -1, -1, 1, -1, -1])
    h = np.array([1.0, 1, 1, -1, -1, -1, 1, -1])
    state = make_state(h[:, None], y)
    out = SigmoidCalibration(intercept=False).boostkit_calibrate(state, candidate(h))
    eps, s = 2 / 8, 1 / 8
    assert out.coefficients[0] == pytest.approx(0.5 * math.log((1 - eps + 2 * s) / (eps + 2 * s)), rel=1e-10)
    assert isinstance(out.contribution, boostkit.LinearContribution)


def test_with_an_intercept_a_two_valued_score_gets_schapire_singer_cell_values(make_state):
    # k(h) = a h + c takes any two values on h = +-1: each is 1/2 ln((W+ + s)/(W- + s)) of its
    # cell, one phantom of each label (weight s) sitting at each end
    y = np.array([1, 1, 1, -1, -1, 1, -1, -1, -1, -1])
    h = np.array([1.0, 1, 1, 1, -1, -1, -1, -1, -1, -1])
    state = make_state(h[:, None], y)
    out = SigmoidCalibration().boostkit_calibrate(state, candidate(h))
    s = 1 / 10
    high = 0.5 * math.log((0.3 + s) / (0.1 + s))
    low = 0.5 * math.log((0.1 + s) / (0.5 + s))
    assert isinstance(out.contribution, AffineScore)
    np.testing.assert_allclose(out.train_values[[0, 4]], [high, low], rtol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_the_sigmoid_fit_is_the_minimum_of_z(seed, intercept):
    rng = np.random.default_rng(seed)
    s = rng.normal(1.0, 2.0, 60)
    y = np.where(rng.random(60) < 1 / (1 + np.exp(-s)), 1.0, -1.0)
    w = rng.dirichlet(np.ones(60))
    slope, offset = minimise_exponential_loss(s, y, w, 1 / 60, intercept)
    lo, hi = s.min(), s.max()
    points = np.concatenate((s, [lo, lo, hi, hi]))
    labels = np.concatenate((y, [1, -1, 1, -1]))
    weights = np.concatenate((w, np.full(4, 1 / 60)))

    def loss(theta):
        return np.sum(weights * np.exp(-labels * (theta[0] * points + (theta[1] if intercept else 0.0))))

    best = minimize(loss, np.zeros(2 if intercept else 1), method="BFGS", options={"gtol": 1e-12})
    assert loss([slope, offset]) <= best.fun + 1e-10
    assert slope == pytest.approx(best.x[0], abs=1e-4)


def test_a_constant_score_gets_only_an_intercept(make_state):
    y = np.array([1, 1, 1, -1])
    state = make_state(np.zeros((4, 1)), y)
    out = SigmoidCalibration().boostkit_calibrate(state, candidate(np.full(4, 2.0)))
    assert out.contribution.slope == 0.0
    assert out.contribution.intercept == pytest.approx(0.5 * math.log((0.75 + 0.5) / (0.25 + 0.5)))
    linear = SigmoidCalibration(intercept=False).boostkit_calibrate(state, candidate(np.zeros(4)))
    assert linear.coefficients == (0.0,)

"""WeightBoost's formulas (Jin et al. 2003) against values computed by hand.

The toy problem of most tests: x = 1, 2, 3, 4 with labels +1, +1, -1, +1, uniform D_1, stumps.
Round 1: every stump errs on one example (eps = 1/4); the first in the search order cuts
x <= 1.5 and labels both sides +1, so h_1 = +1 and alpha_1 = 1/2 ln 3, F_1 = alpha_1 everywhere.
Round 2: the factor g = e^{-beta alpha_1} is the same for every example, so eq. 7's weights are
AdaBoost's: 1/6 on each positive, 1/2 on the negative; the stump x <= 2.5 ? +1 : -1 errs on
x = 4 only (eps_2 = 1/6), alpha_2 = 1/2 ln 5, and eq. 4 gives
F_2(x) = 1/2 ln 3 + 3^{-beta/2} 1/2 ln 5 h_2(x).
"""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest

import boostkit
from boostkit.data import TrainingData
from boostkit_weightboost import WeightBoostWeights, WeightDecayWeights

X_TOY = np.array([[1.0], [2.0], [3.0], [4.0]])
Y_TOY = np.array([1.0, 1.0, -1.0, 1.0])


def toy_recipe(**params):
    recipe = attrs.evolve(boostkit.get_registry().algorithm("weightboost"), proposal="stump")
    recipe = recipe.with_params({"input_dependent": {"record_bound": True}})
    return recipe.with_params(params) if params else recipe


def state_for(margin, y, contributions=(), n_jobs=1):
    data = TrainingData(np.zeros((len(y), 1)), y)
    state = boostkit.BoostState(data=data, weights=data.sample_weight.copy(),
                                margin=np.asarray(margin, dtype=float), n_rounds=1,
                                rng=np.random.default_rng(0), hook=None, n_jobs=n_jobs)
    state.contributions.extend(contributions)
    return state


@pytest.mark.parametrize("beta", [0.5, 1.0])
def test_two_rounds_of_weightboost_by_hand(beta):
    recipe = toy_recipe(input_dependent={"beta": beta}, reweighting={"beta": beta})
    model = boostkit.Booster(recipe, n_rounds=2).fit(X_TOY, Y_TOY)
    alpha1, alpha2 = 0.5 * math.log(3), 0.5 * math.log(5)
    first, second = model.records
    assert first.weighted_error == pytest.approx(0.25) and first.coefficients == pytest.approx((alpha1,))
    assert second.weighted_error == pytest.approx(1 / 6) and second.coefficients == pytest.approx((alpha2,))
    factor = math.exp(-beta * alpha1)
    h2 = np.array([1.0, 1.0, -1.0, -1.0])
    np.testing.assert_allclose(model.decision_function(X_TOY), alpha1 + factor * alpha2 * h2, rtol=1e-13, atol=1e-14)
    # The potential is the exponential cost sum_i D_1(i) e^{-y_i F(x_i)} (eq. 5).
    p1 = math.sqrt(3) / 2  # (1/4)(3 e^{-alpha_1} + e^{alpha_1})
    assert first.error_bound == pytest.approx(p1, rel=1e-14)
    assert second.error_bound == pytest.approx(
        np.mean(np.exp(-Y_TOY * (alpha1 + factor * alpha2 * h2))), rel=1e-14)
    # Eq. 6: the cost after round 2 is at most P_1 (1 - rho (1 - 2 sqrt(eps (1 - eps)))), with
    # rho = g here (the factor is the same for every example) and 2 sqrt(5/36) = sqrt(5)/3.
    assert second.extra["eq6_bound"] == pytest.approx(p1 * (1 - factor * (1 - math.sqrt(5) / 3)), rel=1e-13)
    assert second.extra["mean_factor"] == pytest.approx(factor, rel=1e-14)
    assert first.extra["eq6_bound"] == pytest.approx(p1, rel=1e-14)  # g = 1 in round 1: tight


def test_eq7_weights_by_hand():
    margin, y = [0.0, 1.0, -2.0, 3.0], np.array([1.0, -1.0, 1.0, 1.0])
    weights = WeightBoostWeights(beta=0.5).boostkit_reweight(state_for(margin, y))
    # -y F - |beta F| = 0, 1 - 0.5, 2 - 1, -3 - 1.5
    expected = np.exp([0.0, 0.5, 1.0, -4.5])
    np.testing.assert_allclose(weights.weights, expected / expected.sum(), rtol=1e-14)
    assert weights.log_potential == pytest.approx(math.log((1 + math.e + math.e ** 2 + math.e ** -3) / 4), rel=1e-14)


def test_inverse_polynomial_weights_by_hand():
    margin, y = [0.0, 1.0, -2.0], np.array([1.0, -1.0, 1.0])
    rule = WeightBoostWeights(beta=0.5, regularizer="inverse-polynomial", power=2.0)
    weights = rule.boostkit_reweight(state_for(margin, y)).weights
    expected = np.exp([0.0, 1.0, 2.0]) * np.array([1.0, 1.5, 2.0]) ** -2.0  # e^{-yF} (1 + |F|/2)^-2
    np.testing.assert_allclose(weights, expected / expected.sum(), rtol=1e-14)


def test_weight_decay_weights_by_hand():
    margin, y = [0.0, 1.0, -2.0, 3.0], np.array([1.0, -1.0, 1.0, 1.0])
    weights = WeightDecayWeights(decay=0.1).boostkit_reweight(state_for(margin, y))
    expected = np.exp([0.0, 1.0 - 0.1, 2.0 - 0.4, -3.0 - 0.9])  # -y F - C F^2
    np.testing.assert_allclose(weights.weights, expected / expected.sum(), rtol=1e-14)
    assert weights.log_potential == pytest.approx(math.log((1 + math.e + math.e ** 2 + math.e ** -3) / 4), rel=1e-14)


def test_normalisation_keeps_the_mean_factor_at_m():
    # Section 3.3: the factor g / C_T with C_T = sum_i g_i / (m N) has mean m in every round.
    # Round 1: g = 1, so the term is m alpha_1 h_1. Round 2: g is constant again, so the term is
    # m alpha_2 h_2, with alpha_2 from eq. 7's weights at F_1 = m alpha_1.
    m = 0.1
    model = boostkit.Booster(toy_recipe(input_dependent={"normalization": m}), n_rounds=2).fit(X_TOY, Y_TOY)
    alpha1 = 0.5 * math.log(3)
    positive, negative = math.exp(-m * alpha1), math.exp(m * alpha1)
    eps2 = positive / (3 * positive + negative)  # the stump x <= 2.5 errs on x = 4 only
    alpha2 = 0.5 * math.log((1 - eps2) / eps2)
    assert model.records[1].coefficients == pytest.approx((alpha2,), rel=1e-13)
    h2 = np.array([1.0, 1.0, -1.0, -1.0])
    np.testing.assert_allclose(model.decision_function(X_TOY), m * alpha1 + m * alpha2 * h2, rtol=1e-13)
    assert [t.scale for t in model.contributions] == pytest.approx(
        [m, m / math.exp(-0.5 * m * alpha1)], rel=1e-14)
    assert all("eq6_bound" not in r.extra for r in model.records)  # g / C_T may exceed 1


def test_epsilon_boost_adds_the_same_step_every_round():
    recipe = attrs.evolve(boostkit.get_registry().algorithm("epsilon-boost"), proposal="stump")
    model = boostkit.Booster(recipe, n_rounds=3, params={"calibration": {"step": 0.05}}).fit(X_TOY, Y_TOY)
    assert [r.coefficients for r in model.records] == [(0.05,)] * 3
    stages = list(model.staged_decision_function(X_TOY))
    np.testing.assert_allclose(stages[0], 0.05)  # h_1 = +1, as in AdaBoost's first round
    for before, after in zip(stages, stages[1:]):
        np.testing.assert_allclose(np.abs(after - before), 0.05)


def test_a_beta_mismatch_between_wrapper_and_weights_is_refused():
    recipe = toy_recipe(input_dependent={"beta": 1.0})  # the reweighting keeps beta = 0.5
    # Refused before fitting (shared_params), naming both components and both values.
    with pytest.raises(boostkit.RecipeError, match=r"calibration-wrapper 'input-dependent' has "
                       r"beta=1.0 but reweighting 'weightboost-weights' has beta=0.5"):
        boostkit.Booster(recipe, n_rounds=3).fit(X_TOY, Y_TOY)
    with pytest.raises(boostkit.RecipeError, match=r"share 'regularizer'"):
        boostkit.Booster(toy_recipe(reweighting={"regularizer": "inverse-polynomial"}),
                         n_rounds=3).fit(X_TOY, Y_TOY)


@attrs.define
class _ReplaceFirstTerm(boostkit.Calibration):
    """Round 1: alpha = 1; later rounds re-fit term 0 with alpha = 1/2 (a back-fitting rule)."""

    name = "test-replace-first-term"

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return np.minimum(wpos, wneg).sum(axis=-1)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        h = candidate.scores
        if not state.contributions:
            return boostkit.Calibrated(boostkit.LinearContribution(1.0), h.copy(), (1.0,))
        return boostkit.Calibrated(boostkit.LinearContribution(0.5), 0.5 * h, (0.5,),
                                   replaces=0, removed_values=h.copy())


def test_back_fitting_calibrations_are_refused(in_process_plugin):
    in_process_plugin("replace-first", components=(_ReplaceFirstTerm,))
    recipe = attrs.evolve(toy_recipe(), calibration="test-replace-first-term")
    with pytest.raises(boostkit.HookError, match="cannot wrap a back-fitting calibration"):
        boostkit.Booster(recipe, n_rounds=2).fit(X_TOY, Y_TOY)


@pytest.mark.parametrize("params, message", [
    ({"input_dependent": {"beta": -1.0}}, "beta must be a finite number >= 0"),
    ({"input_dependent": {"regularizer": "gaussian"}}, "regularizer must be one of"),
    ({"input_dependent": {"normalization": 0.0}}, "normalization must be a finite number > 0"),
    ({"reweighting": {"power": math.inf}}, "power must be a finite number > 0"),
    ({"proposal": {"max_depth": 0}}, "max_depth must be an integer >= 1"),
    ({"proposal": {"criterion": "gain"}}, "criterion must be None"),
])
def test_bad_parameters_are_refused_before_fitting(params, message):
    with pytest.raises(boostkit.RecipeError, match=message):
        boostkit.Booster("weightboost", params=params).fit(X_TOY, Y_TOY)

"""The ``learning-rate`` wrapper: F_t = F_{t-1} + nu c_t for any calibration, saved and loaded.

Shrinkage as in Friedman (2001, section 5) and mboost's step length: the shrunk contribution is
the value component ``shrunk`` holding the inner one, so models save and load by name.
"""

from __future__ import annotations

import numpy as np
import pytest

import boostkit
from boostkit_additive import ShrunkContribution


def _binary(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n) > 0, 1, -1)
    return X, y


def _three(n=120, seed=1):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    return rng.normal(size=(n, 3)) + np.eye(3)[labels] * 2.0, labels


@pytest.mark.parametrize("calibration", ["constant-alpha", "domain-partition", "gentle-step"])
def test_the_first_round_is_the_inner_contribution_times_the_rate(calibration):
    X, y = _binary()
    plain = boostkit.Booster(calibration=calibration, proposal="stump",
                             reweighting="exponential", n_rounds=1).fit(X, y)
    shrunk = boostkit.Booster(
        proposal="stump", reweighting="exponential", n_rounds=1,
        calibration=[calibration, ("learning-rate", {"rate": 0.25})],
    ).fit(X, y)
    contribution = shrunk.contributions[0]
    assert isinstance(contribution, ShrunkContribution) and contribution.factor == 0.25
    np.testing.assert_allclose(shrunk.decision_function(X), 0.25 * plain.decision_function(X))
    np.testing.assert_allclose(shrunk.records[0].coefficients,
                               0.25 * np.array(plain.records[0].coefficients))


def test_rate_one_is_the_unshrunk_algorithm():
    X, y = _binary()
    # One by one, as the learning-rate wrapper runs (it has no compiled form): the same sums.
    plain = boostkit.Booster("gentle-adaboost", n_rounds=20, compiled_rounds=False).fit(X, y)
    same = boostkit.Booster("gentle-adaboost", n_rounds=20,
                            calibration=["gentle-step", ("learning-rate", {"rate": 1.0})]).fit(X, y)
    np.testing.assert_array_equal(same.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("algorithm, calibration", [
    ("logitboost", "logit-step"),
    ("real-adaboost", "domain-partition"),
    ("adaboost", "constant-alpha"),
])
def test_a_shrunk_model_saves_and_loads(tmp_path, algorithm, calibration):
    X, y = _binary()
    model = boostkit.Booster(algorithm, n_rounds=15,
                             calibration=[calibration, ("learning-rate", {"rate": 0.1})]).fit(X, y)
    path = model.save(tmp_path / "shrunk.npz")
    loaded = boostkit.load_model(path)
    assert all(isinstance(c, ShrunkContribution) for c in loaded.contributions)
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize("algorithm, calibration", [
    ("gentle-adaboost", "gentle-step"),
    ("logitboost", "logit-step"),
    ("adaboost-mh", "domain-partition"),
])
def test_shrinkage_with_three_classes_saves_and_loads(tmp_path, algorithm, calibration):
    X, labels = _three()
    model = boostkit.Booster(
        algorithm, n_rounds=15, calibration=[calibration, ("learning-rate", {"rate": 0.5})],
    ).fit(X, labels)
    assert model.multiclass_strategy == "native" and model.decision_function(X).shape == (120, 3)
    loaded = boostkit.load_model(model.save(tmp_path / "mc.npz"))
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


@pytest.mark.parametrize("rate", [0.0, -0.1, 1.5, float("nan")])
def test_a_rate_outside_zero_one_is_refused_naming_it(rate):
    X, y = _binary()
    with pytest.raises(boostkit.RecipeError, match="rate"):
        boostkit.Booster("gentle-adaboost",
                         calibration=["gentle-step", ("learning-rate", {"rate": rate})]).fit(X, y)


def test_shrinkage_takes_away_unit_coefficients():
    X, y = _binary()
    with pytest.raises(boostkit.RecipeError, match="'learning-rate' takes it away"):
        boostkit.Booster(proposal="stump", reweighting="boost-by-majority",
                         calibration=["unit-coefficient", "learning-rate"]).fit(X, y)


def test_booster_learning_rate_is_the_learning_rate_wrapper_outermost():
    data = boostkit.datasets.load("ionosphere")
    short = boostkit.Booster("gentle-adaboost", n_rounds=10, learning_rate=0.3).fit(data.X, data.y)
    long = boostkit.Booster("gentle-adaboost", n_rounds=10,
                            calibration=["gentle-step", ("learning-rate", {"rate": 0.3})]
                            ).fit(data.X, data.y)
    assert np.array_equal(short.decision_function(data.X), long.decision_function(data.X))
    with pytest.raises(ValueError, match=r"learning_rate must be None or a number in \(0, 1\]"):
        boostkit.Booster("adaboost", learning_rate=1.5)

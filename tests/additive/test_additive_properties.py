"""Invariants of gentle-adaboost and logitboost on random, weighted and degenerate data.

After every round D_t is a probability distribution and nothing is NaN or infinite; the
(sample-weighted) training error never exceeds the recorded bound: prod Z_t for Gentle AdaBoost
(AdaBoost's exponential potential), sum_i D_1(i) log2(1 + e^{-2 y_i F(x_i)}) for LogitBoost.
Gentle AdaBoost's Z_t <= 1 (its cell values are tanh of the Z-minimising ones).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import weighted_datasets

import boostkit
from boostkit.observers import WeightHistory

ALGORITHMS = ("gentle-adaboost", "logitboost")


def _check(algorithm, model, recorder, X, y, sample_weight):
    d1 = sample_weight / sample_weight.sum()
    assert len(recorder.weights) == model.n_rounds + 1
    for weights in recorder.weights:
        assert np.isfinite(weights).all() and (weights >= 0).all()
        assert abs(weights.sum() - 1.0) <= 1e-12
    for record, margin in zip(model.records, model.staged_decision_function(X)):
        values = [record.weighted_error, record.training_error, record.z, record.error_bound,
                  *record.coefficients]
        assert all(math.isfinite(v) for v in values)
        assert record.training_error <= record.error_bound + 1e-12
        assert abs(record.training_error - d1[y * margin <= 0].sum()) <= 1e-12
        if algorithm == "gentle-adaboost":
            assert record.z <= 1.0 + 1e-12
    assert np.isfinite(model.decision_function(X)).all()
    assert np.isfinite(model.predict_proba(X)).all()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=weighted_datasets(max_n=40, max_d=4))
def test_invariants_hold_after_every_round(algorithm, data):
    X, y, sample_weight = data
    recorder = WeightHistory()
    model = boostkit.Booster(algorithm, n_rounds=12, observers=[recorder]).fit(X, y, sample_weight)
    _check(algorithm, model, recorder, X, y, sample_weight)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=weighted_datasets(max_n=40, max_d=4), rate=st.floats(0.01, 1.0))
def test_invariants_hold_with_shrinkage(algorithm, data, rate):
    X, y, sample_weight = data
    recorder = WeightHistory()
    calibration = {"gentle-adaboost": "gentle-step", "logitboost": "logit-step"}[algorithm]
    model = boostkit.Booster(algorithm, n_rounds=8, observers=[recorder],
                             calibration=[calibration, ("learning-rate", {"rate": rate})]
                             ).fit(X, y, sample_weight)
    _check(algorithm, model, recorder, X, y, sample_weight)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_all_features_constant_gives_finite_constant_hypotheses(algorithm):
    X = np.ones((10, 2))
    y = np.array([1, -1] * 5, dtype=float)
    recorder = WeightHistory()
    model = boostkit.Booster(algorithm, n_rounds=5, observers=[recorder]).fit(X, y)
    assert all(h.describe().startswith("constant") for h in model.hypotheses)
    _check(algorithm, model, recorder, X, y, np.ones(10))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_same_random_state_gives_identical_fits(algorithm):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    a = boostkit.Booster(algorithm, n_rounds=20, random_state=1).fit(X, y)
    b = boostkit.Booster(algorithm, n_rounds=20, random_state=1).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))

"""Invariants of adaboost and real-adaboost on random and degenerate data.

After every round D_t is a probability distribution; the training error never exceeds
prod_s Z_s (Wilbur et al. 2005, Theorem 1) and is what the staged decision function gives; Z_t <= 1,
because the stump learner minimises the calibration's loss and alpha (or c_j) moves towards the
minimiser of Z; nothing is ever NaN or infinite (DESIGN.md, "Errors"); fits are reproducible and
survive save/load.
"""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import weighted_datasets

import boostkit
from boostkit.observers import WeightHistory

ALGORITHMS = ("adaboost", "real-adaboost")


def _float_fields(record: boostkit.RoundRecord) -> list[float]:
    values = [record.weighted_error, record.edge, record.training_error, *record.coefficients]
    values += [v for v in (record.z, record.error_bound) if v is not None]
    return values


def _contribution_values(model: boostkit.BoostModel) -> np.ndarray:
    return np.concatenate([
        [c.alpha] if isinstance(c, boostkit.LinearContribution) else c.cell_values
        for c in model.contributions
    ])


def _assert_finite(model: boostkit.BoostModel, X: np.ndarray) -> None:
    assert all(math.isfinite(v) for r in model.records for v in _float_fields(r))
    assert np.isfinite(_contribution_values(model)).all()
    assert np.isfinite(model.decision_function(X)).all()
    assert np.isfinite(model.predict_proba(X)).all()


def _check_invariants(model, recorder, X, y, sample_weight) -> None:
    d1 = sample_weight / sample_weight.sum()
    assert len(recorder.weights) == model.n_rounds + 1 == len(model.records) + 1  # D_1 first
    for weights in recorder.weights:
        assert (weights >= 0).all()
        assert abs(weights.sum() - 1.0) <= 1e-12
    staged = list(model.staged_decision_function(X))
    for record, margin in zip(model.records, staged):
        assert record.training_error <= record.error_bound + 1e-12
        assert abs(record.training_error - d1[y * margin <= 0].sum()) <= 1e-12
        assert record.z <= 1.0 + 1e-12
    assert np.array_equal(staged[-1], model.decision_function(X))
    _assert_finite(model, X)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=weighted_datasets())
def test_invariants_hold_after_every_round(algorithm, data):
    X, y, sample_weight = data
    recorder = WeightHistory()
    model = boostkit.Booster(algorithm, n_rounds=15, observers=[recorder]).fit(X, y, sample_weight)
    _check_invariants(model, recorder, X, y, sample_weight)


# -- degenerate data ----------------------------------------------------------------------------

def _noisy(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(scale=1.5, size=n) > 0, 1.0, -1.0)
    return X, y


def _fit(algorithm, X, y, sample_weight=None, n_rounds=30):
    recorder = WeightHistory()
    model = boostkit.Booster(algorithm, n_rounds=n_rounds, observers=[recorder]).fit(X, y, sample_weight)
    weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    _check_invariants(model, recorder, X, y, weights)
    return model


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_one_constant_feature_is_never_split(algorithm):
    X, y = _noisy(40, 3, seed=1)
    X[:, 1] = 2.5
    model = _fit(algorithm, X, y)
    assert all(h.feature != 1 for h in model.hypotheses)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_all_features_constant_gives_finite_constant_hypotheses(algorithm):
    X = np.full((12, 3), -1.0)
    _, y = _noisy(12, 2, seed=2)
    model = _fit(algorithm, X, y)
    assert all(np.isinf(h.threshold) for h in model.hypotheses)
    # F is the same for every example, so the ensemble says the weighted majority class.
    F = model.decision_function(X)
    assert np.all(F == F[0])
    assert np.sign(F[0]) == (1.0 if (y > 0).sum() > (y < 0).sum() else -1.0)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_separable_data_stops_with_perfect_fit(algorithm):
    X, _ = _noisy(30, 2, seed=3)
    y = np.where(X[:, 1] > 0.1, 1.0, -1.0)
    model = _fit(algorithm, X, y)
    assert model.n_rounds == 1
    assert model.stop_reason == "perfect-fit"
    assert model.records[0].training_error == 0.0
    assert np.array_equal(model.predict(X), y)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("index", [0, 7])
def test_all_weight_on_one_example(algorithm, index):
    X, y = _noisy(20, 3, seed=4)
    sample_weight = np.zeros(20)
    sample_weight[index] = 1.0
    # The other class then has no weight: that is a one-class fit, refused by name.
    other = -y[index]
    with pytest.raises(boostkit.DataError, match=rf"class\(es\) \[{other}\] have total sample_weight 0"):
        _fit(algorithm, X, y, sample_weight)
    # With one example of each class weighted, the stump separates them.
    sample_weight[np.flatnonzero(y == other)[0]] = 1.0
    model = _fit(algorithm, X, y, sample_weight)
    assert model.stop_reason == "perfect-fit"
    assert np.sign(model.decision_function(X[index:index + 1]))[0] == y[index]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_five_thousand_rounds_stay_finite(algorithm):
    # The stumps end up separating the noisy sample: margins reach hundreds and
    # prod Z_t falls below 1e-30, far outside what unnormalised weights would keep.
    X, y = _noisy(50, 3, seed=5)
    model = _fit(algorithm, X, y, n_rounds=5000)
    assert model.n_rounds == 5000 and model.stop_reason == "max-rounds"
    assert np.abs(model.decision_function(X)).max() > 100
    assert 0.0 < model.error_bound < 1e-30


# -- reproducibility and persistence ------------------------------------------------------------

def _records_as_tuples(model: boostkit.BoostModel) -> list[tuple]:
    return [attrs.astuple(r) for r in model.records]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_same_random_state_gives_bit_identical_fits(algorithm):
    X, y = _noisy(80, 4, seed=6)
    first = boostkit.Booster(algorithm, n_rounds=40, random_state=11).fit(X, y)
    second = boostkit.Booster(algorithm, n_rounds=40, random_state=11).fit(X, y)
    assert np.array_equal(first.decision_function(X), second.decision_function(X))
    assert _records_as_tuples(first) == _records_as_tuples(second)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_save_then_load_predicts_identically(algorithm, tmp_path):
    X, y = _noisy(80, 4, seed=7)
    X_new, _ = _noisy(200, 4, seed=8)
    model = boostkit.Booster(algorithm, n_rounds=25).fit(X, y)
    loaded = boostkit.load_model(model.save(tmp_path / "model.npz"))
    assert np.array_equal(loaded.decision_function(X_new), model.decision_function(X_new))
    assert np.array_equal(loaded.predict(X_new), model.predict(X_new))
    assert np.array_equal(loaded.predict_proba(X_new), model.predict_proba(X_new))
    assert _records_as_tuples(loaded) == _records_as_tuples(model)
    assert loaded.stop_reason == model.stop_reason

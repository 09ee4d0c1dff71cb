"""Weights and data that must not mislead: zero weight is removal, overflowing weights are
proportions, a class of weight 0 is named, huge features fit, complex features are refused."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import boostkit
from boostkit.datasets import load
from boostkit.errors import DataError

ALGORITHMS = sorted(boostkit.get_registry().algorithms())


@pytest.fixture(scope="module")
def spam():
    data = load("spambase")
    rows = np.random.default_rng(0).permutation(len(data.y))[:300]
    return data.X[rows], data.binary_target()[rows]


def _fit(name, X, y, sample_weight=None, n_rounds=15):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # one-pass pools that run out say so
        return boostkit.Booster(name, n_rounds=n_rounds, random_state=0).fit(X, y, sample_weight)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_zero_weight_is_the_same_as_removing_the_example(name, spam):
    """scikit-learn's AdaBoost tests check this: defaults such as the smoothing 1/m, score
    ranges and the phantom examples of Newton's alpha count only examples of positive weight."""
    X, y = spam
    weights = np.ones(len(y))
    weights[np.random.default_rng(1).choice(len(y), 30, replace=False)] = 0.0
    kept = weights > 0
    weighted = _fit(name, X, y, weights)
    removed = _fit(name, X[kept], y[kept])
    np.testing.assert_allclose(weighted.decision_function(X), removed.decision_function(X),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # an overflow handled is not the user's
@pytest.mark.parametrize("name", ["adaboost", "pav-adaboost", "popbm", "real-adaboost"])
def test_weights_whose_sum_overflows_are_proportions_like_any_others(name, spam):
    X, y = spam
    huge = _fit(name, X, y, np.full(len(y), 1e308))
    plain = _fit(name, X, y)
    assert huge.n_rounds == plain.n_rounds > 1
    np.testing.assert_allclose(huge.decision_function(X), plain.decision_function(X), rtol=1e-12)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_a_class_of_zero_weight_is_a_data_error_everywhere(name, spam):
    X, y = spam
    with pytest.raises(DataError, match=r"class\(es\) \[1\.0\] have total sample_weight 0"):
        _fit(name, X, y, np.where(y > 0, 0.0, 1.0))


def test_standardised_centroids_fit_features_beyond_1e154(spam):
    X, y = spam
    scaled = X.copy()
    scaled[:, :3] *= 1e200  # squares would overflow
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        huge = _fit("pav-adaboost", scaled, y)
    plain = _fit("pav-adaboost", X, y)
    assert huge.n_rounds == plain.n_rounds
    assert np.mean(huge.predict(scaled) == plain.predict(X)) > 0.99


def test_complex_features_are_refused():
    X = np.ones((10, 2), dtype=complex)
    with pytest.raises(DataError, match="X has complex values"):
        boostkit.Booster().fit(X, np.arange(10) % 2)


def test_a_data_error_raised_by_a_component_stays_a_value_error():
    X = np.random.default_rng(0).normal(size=(600, 2))
    relevance = np.tile([0, 1, 2], 200) > 0
    with pytest.raises(ValueError, match="preference-pairs.*max_pairs=100"):
        boostkit.Booster("rankboost-pairs", params={"reweighting": {"max_pairs": 100}}).fit(
            X, relevance)


@pytest.mark.parametrize("name", ["adaboost", "real-adaboost", "adaboost-mh", "weightboost"])
def test_the_determinism_promise_as_stated(name, spam):
    """Same seed and n_jobs: the same model bit for bit; another n_jobs: equal to rounding."""
    X, y = spam
    if name == "adaboost-mh":
        y = np.digitize(X[:, 0], np.quantile(X[:, 0], [0.5, 0.8]))  # three classes
    fits = [boostkit.Booster(name, n_rounds=20, random_state=3, n_jobs=n_jobs).fit(X, y)
            for n_jobs in (2, 2, 1)]
    margins = [m.decision_function(X) for m in fits]
    assert np.array_equal(margins[0], margins[1])
    np.testing.assert_allclose(margins[0], margins[2], rtol=1e-10, atol=1e-10)

"""Compiled prediction (boostkit.kernels.predict, BoostModel.decision_function): runs of threshold
terms flattened into arrays give the term-by-term margins bit for bit, NaN included, with one
margin column or several, on one thread or several."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
from boostkit.components import Candidate
from boostkit.kernels.predict import (
    threshold_margin_columns,
    threshold_margins,
    threshold_margins_parallel,
)
from boostkit.model import ThresholdRun, compile_terms


def naive_margins(X, features, thresholds, missing_left, values, margin):
    out = margin.copy()
    for t in range(features.shape[0]):
        x = X[:, features[t]]
        right = np.where(np.isnan(x), ~missing_left[t], x > thresholds[t]).astype(np.intp)
        out = out + values[t][right]
    return out


def term_by_term(model, X):
    margin = np.zeros(X.shape[0] if model.n_columns == 1 else (X.shape[0], model.n_columns))
    for h, c in zip(model.hypotheses, model.contributions):
        margin += c.values(Candidate(h, X), margin)
    return margin


def random_run(rng, n, d, n_terms, n_columns=1):
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.1] = np.nan
    features = rng.integers(0, d, n_terms).astype(np.int64)
    thresholds = rng.normal(size=n_terms)
    thresholds[0] = np.inf  # "all values | missing"
    missing_left = rng.random(n_terms) < 0.5
    shape = (n_terms, 2) if n_columns == 1 else (n_terms, 2, n_columns)
    return X, features, thresholds, missing_left, rng.normal(size=shape)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.integers(1, 5), st.integers(1, 12))
def test_the_kernels_add_the_terms_in_order_like_the_naive_sum(seed, n, d, n_terms):
    rng = np.random.default_rng(seed)
    X, features, thresholds, missing_left, values = random_run(rng, n, d, n_terms)
    start = rng.normal(size=n)
    expected = naive_margins(X, features, thresholds, missing_left, values, start)
    serial, parallel = start.copy(), start.copy()
    threshold_margins(X, features, thresholds, missing_left, values, serial)
    threshold_margins_parallel(X, features, thresholds, missing_left, values, parallel, 3)
    np.testing.assert_array_equal(serial, expected)
    np.testing.assert_array_equal(parallel, expected)


def test_the_column_kernel_adds_per_class_values():
    rng = np.random.default_rng(1)
    X, features, thresholds, missing_left, values = random_run(rng, 50, 4, 7, n_columns=3)
    start = rng.normal(size=(50, 3))
    expected = start.copy()
    for col in range(3):
        expected[:, col] = naive_margins(X, features, thresholds, missing_left, values[..., col],
                                         start[:, col])
    margin = start.copy()
    threshold_margin_columns(X, features, thresholds, missing_left, values, margin)
    np.testing.assert_array_equal(margin, expected)


def test_a_hand_computed_run():
    X = np.array([[0.5, np.nan], [2.0, 1.0], [np.nan, -1.0]])
    features = np.array([0, 1], dtype=np.int64)
    thresholds = np.array([1.0, 0.0])
    missing_left = np.array([False, True])
    values = np.array([[-1.0, 2.0], [10.0, 20.0]])
    margin = np.zeros(3)
    threshold_margins(X, features, thresholds, missing_left, values, margin)
    # row 0: 0.5 <= 1 -> -1; NaN goes left -> 10.  row 1: 2 > 1 -> 2; 1 > 0 -> 20.
    # row 2: NaN goes right -> 2; -1 <= 0 -> 10.
    np.testing.assert_array_equal(margin, [9.0, 22.0, 12.0])


@pytest.mark.parametrize("algorithm", ["adaboost", "real-adaboost", "gentle-adaboost",
                                       "logitboost", "adaboost-mh", "weightboost"])
def test_models_predict_the_term_by_term_margins_bit_for_bit(algorithm):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) > 0).astype(int)
    if algorithm == "adaboost-mh":
        y = y + (np.nan_to_num(X[:, 2]) > 0.5)
    model = boostkit.Booster(algorithm, n_rounds=30, learning_rate=0.5).fit(X, y)
    np.testing.assert_array_equal(model.decision_function(X), term_by_term(model, X))


def test_only_threshold_terms_with_per_cell_values_are_compiled():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + rng.normal(size=300) > 0  # noisy: no round fits it perfectly
    stumps = boostkit.Booster("adaboost", n_rounds=10).fit(X, y)
    (run,) = compile_terms(stumps.hypotheses, stumps.contributions, 1)
    assert isinstance(run, ThresholdRun) and run.features.shape == (len(stumps.hypotheses),)
    # WeightBoost's contribution reads the running margin: no cell table, term by term.
    weightboost = boostkit.Booster("weightboost", n_rounds=5).fit(X, y)
    runs = compile_terms(weightboost.hypotheses, weightboost.contributions, 1)
    assert not any(isinstance(r, ThresholdRun) for r in runs)

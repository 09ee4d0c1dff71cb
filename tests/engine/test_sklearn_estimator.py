"""The scikit-learn estimator (boostkit.sklearn.BoostClassifier): check_estimator, nested component
parameters in grid search and clone, failed fits, pickling, and cross-validation on real data
(DESIGN.md, "Models, I/O, interfaces").

A failed fit leaves the estimator as it was: an unfitted estimator stays unfitted (no fitted
attributes, ``NotFittedError`` on predict), and a fitted one keeps its previous, consistent fit
(``model_`` and ``n_features_in_`` from the same call), the scikit-learn convention that a failed
refit may leave the old attributes.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.utils.estimator_checks import check_estimator

from boostkit import datasets
from boostkit.errors import RecipeError
from boostkit.sklearn import BoostClassifier

BAD_SMOOTHING = {"calibration": {"smoothing": -1}}


def labelled_data(n=150, d=3, seed=0):
    """String labels from the first feature plus noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, "spam", "ham")
    return X, y


def failed_checks(estimator) -> list[str]:
    """Run scikit-learn's checks; print and return the names of the failed ones."""
    results = check_estimator(estimator, on_fail=None, on_skip=None)
    failures = [r for r in results if r["status"] == "failed"]
    for failure in failures:
        print(f"{failure['check_name']}: {failure['exception']!r}")
    return [failure["check_name"] for failure in failures]


# -- scikit-learn's estimator checks ------------------------------------------------------------


def test_adaboost_passes_check_estimator():
    assert failed_checks(BoostClassifier(n_rounds=20)) == []


def test_real_adaboost_passes_check_estimator():
    # The default smoothing 1/m counts weight, so integer sample weights are repetitions.
    assert failed_checks(BoostClassifier("real-adaboost", n_rounds=20)) == []


def test_real_adaboost_without_smoothing_passes_check_estimator():
    estimator = BoostClassifier(
        "real-adaboost", n_rounds=20, component_params={"calibration": {"smoothing": 0.0}}
    )
    assert failed_checks(estimator) == []


# -- nested component parameters ----------------------------------------------------------------


def test_nested_parameters_are_estimator_parameters():
    estimator = BoostClassifier(component_params={"calibration": {"smoothing": 0.01}})
    assert estimator.get_params()["calibration__smoothing"] == 0.01
    estimator.set_params(no_edge__min_edge=0.1, n_rounds=7)
    assert estimator.component_params == {
        "calibration": {"smoothing": 0.01}, "no_edge": {"min_edge": 0.1}
    }
    assert estimator.n_rounds == 7


def test_clone_keeps_component_params_as_a_copy():
    original = BoostClassifier(
        "real-adaboost", component_params={"calibration": {"smoothing": 0.0}}
    )
    copy = clone(original)
    assert copy.get_params() == original.get_params()
    copy.set_params(calibration__smoothing=0.5)
    assert original.component_params == {"calibration": {"smoothing": 0.0}}


def test_grid_search_over_a_nested_component_parameter():
    X, y = labelled_data()
    grid = {"calibration__smoothing": [0.0, 0.01], "n_rounds": [5, 10]}
    search = GridSearchCV(BoostClassifier(), grid, cv=3).fit(X, y)
    assert set(search.best_params_) == {"calibration__smoothing", "n_rounds"}
    assert len(search.cv_results_["params"]) == 4
    best = search.best_estimator_
    best_smoothing = search.best_params_["calibration__smoothing"]
    assert best.component_params == {"calibration": {"smoothing": best_smoothing}}
    assert best.model_.recipe.calibration.params == best.component_params["calibration"]


def test_component_params_reach_the_fitted_model():
    X, y = labelled_data()
    estimator = BoostClassifier(n_rounds=5).set_params(proposal__criterion="gini").fit(X, y)
    assert estimator.model_.recipe.proposal.params == {"criterion": "gini"}


# -- failed fits --------------------------------------------------------------------------------


def test_failed_fit_sets_no_model():
    X, y = labelled_data()
    estimator = BoostClassifier(component_params=BAD_SMOOTHING)
    with pytest.raises(RecipeError, match="smoothing"):
        estimator.fit(X, y)
    for attribute in ("model_", "classes_", "records_", "stop_reason_"):
        assert not hasattr(estimator, attribute)


def test_failed_fit_leaves_the_estimator_unfitted():
    X, y = labelled_data()
    estimator = BoostClassifier(component_params=BAD_SMOOTHING)
    with pytest.raises(RecipeError):
        estimator.fit(X, y)
    assert not hasattr(estimator, "n_features_in_")
    with pytest.raises(NotFittedError):
        estimator.predict(X)


def test_failed_refit_keeps_the_previous_model():
    X, y = labelled_data()
    estimator = BoostClassifier(n_rounds=5).fit(X, y)
    model, before = estimator.model_, estimator.decision_function(X)
    estimator.set_params(calibration__smoothing=-1)
    with pytest.raises(RecipeError):
        estimator.fit(X[:100], y[:100])
    assert estimator.model_ is model
    np.testing.assert_array_equal(estimator.decision_function(X), before)


def test_failed_refit_keeps_a_consistent_input_shape():
    X, y = labelled_data(d=3)
    estimator = BoostClassifier(n_rounds=5).fit(X, y)
    estimator.set_params(calibration__smoothing=-1)
    with pytest.raises(RecipeError):
        estimator.fit(X[:, :2], y)
    assert estimator.n_features_in_ == 3
    assert estimator.predict(X).shape == (len(X),)


# -- persistence and real data ------------------------------------------------------------------


def test_pickled_estimator_predicts_the_same():
    X, y = labelled_data()
    estimator = BoostClassifier("real-adaboost", n_rounds=10, random_state=0).fit(X, y)
    restored = pickle.loads(pickle.dumps(estimator))
    np.testing.assert_array_equal(restored.decision_function(X), estimator.decision_function(X))
    np.testing.assert_array_equal(restored.predict(X), estimator.predict(X))
    assert restored.get_params() == estimator.get_params()
    assert restored.records_ == estimator.records_


def test_cross_validated_accuracy_on_breast_cancer_wisconsin():
    data = datasets.load("breast_cancer_wisconsin", dropna=True)
    scores = cross_val_score(BoostClassifier(n_rounds=50, random_state=0), data.X, data.y, cv=5)
    print(f"5-fold accuracy: {scores.mean():.4f} ({scores.round(4).tolist()})")
    assert scores.mean() > 0.9
    assert scores.min() > 0.85

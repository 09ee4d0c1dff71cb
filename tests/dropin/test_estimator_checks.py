"""scikit-learn's ``check_estimator`` for BoostClassifier with every recipe that runs natively on
several classes, and for the drop-in AdaBoost estimators (about 2 s each, 20 s in all)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimator

import boostkit
from boostkit.capabilities import binary_only_components
from boostkit.sklearn import AdaBoostClassifier, AdaBoostRegressor, BoostClassifier

#: Recipes whose every component handles several classes (they run natively on the pairs).
NATIVE_MULTICLASS = ("adaboost-mh", "boostexter", "discrete-adaboost-mh", "gentle-adaboost",
                     "logitboost", "multinomial-logitboost", "real-adaboost", "samme",
                     "samme-error")

#: Checks a recipe fails, with the reason (docs/dropin.md, "check_estimator").
EXPECTED: dict[str, dict[str, str]] = {
    "boostexter": {
        "check_classifiers_train": (
            "term-presence stumps read only whether a feature is non-zero (term counts): in the "
            "check's dense Gaussian blobs every term is present, so nothing can be learnt"),
    },
}


def _failed(estimator, expected=None) -> list[str]:
    results = check_estimator(estimator, on_fail=None, on_skip=None,
                              expected_failed_checks=expected)
    failures = [r for r in results if r["status"] == "failed"]
    for failure in failures:
        print(f"{failure['check_name']}: {failure['exception']!r}")
    return sorted({failure["check_name"] for failure in failures})


def test_the_native_multiclass_recipes_are_the_registered_ones():
    registry = boostkit.get_registry()
    native = sorted(name for name in registry.algorithms()
                    if not binary_only_components(
                        registry.instantiate(boostkit.Booster(name).recipe())))
    assert native == sorted(NATIVE_MULTICLASS)


@pytest.mark.parametrize("algorithm", NATIVE_MULTICLASS)
def test_boost_classifier_passes_check_estimator(algorithm):
    assert _failed(BoostClassifier(algorithm, n_rounds=20), EXPECTED.get(algorithm)) == []


def test_integer_weights_are_repeated_rows_under_the_default_smoothing():
    """s = 1/m counts weight, not rows: weight 2 is a repeated row (it counted rows before, so
    adaboost-mh and real-adaboost failed scikit-learn's sample-weight equivalence)."""
    rng = np.random.RandomState(42)
    X, y = rng.rand(15, 30), rng.randint(0, 3, 15)
    w = rng.randint(0, 5, 15)
    for algorithm in ("adaboost-mh", "real-adaboost"):
        yy = y if algorithm == "adaboost-mh" else y % 2
        weighted = boostkit.Booster(algorithm, n_rounds=10).fit(X, yy, w)
        repeated = boostkit.Booster(algorithm, n_rounds=10).fit(X.repeat(w, axis=0),
                                                                 yy.repeat(w))
        np.testing.assert_allclose(weighted.decision_function(X),
                                   repeated.decision_function(X), rtol=1e-9, atol=1e-12)


def test_margins_tied_up_to_rounding_predict_the_first_class():
    """Three margins equal but for the last bits (multinomial-logitboost on scikit-learn's
    sample-weight check): the first class, as for an exact tie, not the rounding's choice."""
    from boostkit.model import margin_labels

    margin = np.array([[-0.34657359027997264, -0.346573590279973, -0.3465735902799723],
                       [-0.3465735902799717, -0.34657359027997287, -0.34657359027997336],
                       [-14.578241070652071, -2.1782575743140846e-13, -2.1715962361663336e-13],
                       [0.0, 1.0, 1.0 - 1e-9]])
    assert margin_labels(margin, np.array(["a", "b", "c"])).tolist() == ["a", "a", "b", "b"]


def test_drop_in_classifier_passes_check_estimator():
    assert _failed(AdaBoostClassifier(n_estimators=10)) == []


def test_drop_in_regressor_passes_check_estimator():
    assert _failed(AdaBoostRegressor(n_estimators=10)) == []


@pytest.mark.parametrize("algorithm", ["samme", "samme-error", "multinomial-logitboost"])
def test_single_label_recipes_that_declare_multi_label_fit_it(algorithm):
    """The tags promise multi-label y: a recipe of one class per example (SAMME's softmax-like
    coding) fits it one-vs-rest instead of refusing it from inside the fit."""
    rng = np.random.RandomState(0)
    X, Y = rng.normal(size=(60, 4)), (rng.rand(60, 3) > 0.5).astype(int)
    model = BoostClassifier(algorithm, n_rounds=5)
    assert model.__sklearn_tags__().classifier_tags.multi_label
    model.fit(X, Y)
    assert model.multiclass_strategy_ == "one-vs-rest"
    assert model.predict(X).shape == Y.shape

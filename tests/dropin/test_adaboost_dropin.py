"""boostkit.sklearn.AdaBoostClassifier / AdaBoostRegressor: drop-ins for scikit-learn's AdaBoost.

Behavioural checks in the spirit of scikit-learn's own AdaBoost tests, written afresh, and
agreement with scikit-learn on the same data, estimator and seed (docs/dropin.md).
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import ensemble
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_iris, load_wine
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import boostkit
from boostkit.sklearn import AdaBoostClassifier, AdaBoostRegressor
from boostkit.sklearn_order import BestSplitterTieOrder

TOY_X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float)
TOY_Y = np.array(["foo", "foo", "foo", 1, 1, 1], dtype=object).astype(str)
TOY_T = np.array([[-1, -1], [2, 2], [3, 2]], dtype=float)


def _learning_rate_supported() -> bool:
    return "learning_rate" in attrs.fields_dict(boostkit.get_registry().component("samme-alpha"))


def _split(load):
    X, y = load(return_X_y=True)
    return train_test_split(X, y, random_state=0)


# -- agreement with scikit-learn -------------------------------------------------------------------


@pytest.mark.parametrize("load", [load_digits, load_breast_cancer, load_iris])
def test_stumps_agree_with_scikit_learn(load):
    X_train, X_test, y_train, _ = _split(load)
    ours = AdaBoostClassifier(random_state=0).fit(X_train, y_train)
    theirs = ensemble.AdaBoostClassifier(random_state=0).fit(X_train, y_train)
    assert np.mean(ours.predict(X_test) == theirs.predict(X_test)) >= 0.99
    np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_, rtol=1e-9)
    np.testing.assert_allclose(ours.estimator_errors_, theirs.estimator_errors_, rtol=1e-9)
    np.testing.assert_allclose(ours.decision_function(X_test), theirs.decision_function(X_test),
                               atol=1e-9)
    np.testing.assert_allclose(ours.predict_proba(X_test), theirs.predict_proba(X_test),
                               atol=1e-9)
    assert ours.n_classes_ == theirs.n_classes_
    assert np.array_equal(ours.classes_, theirs.classes_)


@pytest.mark.parametrize("depth", [2, 3])
def test_trees_agree_with_scikit_learn_on_digits(depth):
    X_train, X_test, y_train, _ = _split(load_digits)
    tree = DecisionTreeClassifier(max_depth=depth)
    ours = AdaBoostClassifier(tree, random_state=0).fit(X_train, y_train)
    theirs = ensemble.AdaBoostClassifier(tree, random_state=0).fit(X_train, y_train)
    assert ours.model_.recipe.proposal.name == "tree"
    assert np.mean(ours.predict(X_test) == theirs.predict(X_test)) >= 0.99
    np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_, rtol=1e-9)
    # Same partition of the training rows every round, so the same estimators there.
    for a, b in zip(ours.estimators_, theirs.estimators_):
        assert np.array_equal(a.predict(X_train), b.predict(X_train))


@pytest.mark.parametrize("depth", [2, 3])
@pytest.mark.parametrize("load", [load_breast_cancer, load_wine])
def test_trees_agree_with_scikit_learn_over_five_splits(load, depth):
    """Exact ties between features go the way scikit-learn's random feature order sends them
    (boostkit.sklearn_order), so the test predictions agree on >= 99 % of the rows of five 25 %
    test splits (docs/dropin.md measures the same)."""
    X, y = load(return_X_y=True)
    tree = DecisionTreeClassifier(max_depth=depth)
    same = []
    for split in range(5):
        X_train, X_test, y_train, _ = train_test_split(X, y, random_state=split)
        ours = AdaBoostClassifier(tree, random_state=0).fit(X_train, y_train)
        theirs = ensemble.AdaBoostClassifier(tree, random_state=0).fit(X_train, y_train)
        same.append(np.mean(ours.predict(X_test) == theirs.predict(X_test)))
    assert np.mean(same) >= 0.99, same


@pytest.mark.parametrize("random_state", [3, None])
def test_native_trees_replay_the_seeds_scikit_learn_gives_its_trees(random_state, monkeypatch):
    """Round t's tie order is seeded as scikit-learn seeds its round-t tree, also from numpy's
    global generator when random_state is None; the saved recipe leaves the tie order out."""
    import boostkit.sklearn_dropin as dropin

    made = []

    def recorded(*args):
        made.append(BestSplitterTieOrder(*args))
        return made[-1]

    monkeypatch.setattr(dropin, "BestSplitterTieOrder", recorded)
    X_train, _, y_train, _ = _split(load_breast_cancer)
    tree = DecisionTreeClassifier(max_depth=2, random_state=11)  # overridden, as in sklearn
    np.random.seed(5)
    ours = AdaBoostClassifier(tree, n_estimators=8, random_state=random_state).fit(X_train, y_train)
    np.random.seed(5)
    theirs = ensemble.AdaBoostClassifier(tree, n_estimators=8, random_state=random_state).fit(
        X_train, y_train)
    assert len(made) == 1
    assert made[0].seeds == tuple(e.random_state for e in theirs.estimators_)
    assert "tie_order" not in ours.model_.recipe.proposal.params


def test_regressor_with_scikit_learn_trees_equals_scikit_learn_on_diabetes():
    X_train, X_test, y_train, y_test = _split(load_diabetes)
    tree = DecisionTreeRegressor(max_depth=3)
    ours = AdaBoostRegressor(tree, random_state=0, native_trees=False).fit(X_train, y_train)
    theirs = ensemble.AdaBoostRegressor(tree, random_state=0).fit(X_train, y_train)
    assert abs(ours.score(X_test, y_test) - theirs.score(X_test, y_test)) < 0.01
    np.testing.assert_allclose(ours.predict(X_test), theirs.predict(X_test))
    np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_)
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_)


def test_native_regressor_matches_scikit_learn_r2_on_diabetes():
    """Native trees break exact ties between features otherwise than scikit-learn's random
    feature order, so single seeds differ; the mean test R^2 over seeds agrees within 0.01."""
    X_train, X_test, y_train, y_test = _split(load_diabetes)
    ours, theirs = [], []
    for seed in range(8):
        model = AdaBoostRegressor(random_state=seed).fit(X_train, y_train)
        assert isinstance(model.estimators_[0], boostkit.sklearn_native.R2Tree)
        ours.append(model.score(X_test, y_test))
        theirs.append(ensemble.AdaBoostRegressor(random_state=seed).fit(X_train, y_train)
                      .score(X_test, y_test))
    assert abs(np.mean(ours) - np.mean(theirs)) < 0.01


def test_native_regression_tree_is_scikit_learn_tree_on_one_sample():
    X, y = load_diabetes(return_X_y=True)
    X = X.astype(np.float32).astype(np.float64)
    from boostkit.data import bin_features
    from boostkit_weightboost.regression_trees import fit_regression_tree

    counts = np.bincount(np.random.default_rng(0).integers(0, len(y), len(y)), minlength=len(y))
    X1 = X[:, [0, 1, 3]]  # <= 255 distinct values each, no exact ties between features
    tree = fit_regression_tree(bin_features(X1), y, counts.astype(float), max_depth=3,
                               values=np.ascontiguousarray(X1.T))
    reference = DecisionTreeRegressor(max_depth=3).fit(X1, y, sample_weight=counts)
    np.testing.assert_allclose(tree.scores(X1), reference.predict(X1))


@pytest.mark.skipif(not _learning_rate_supported(), reason="samme-alpha has no learning_rate yet")
def test_learning_rate_agrees_with_scikit_learn():
    X_train, X_test, y_train, _ = _split(load_digits)
    ours = AdaBoostClassifier(learning_rate=0.5).fit(X_train, y_train)
    theirs = ensemble.AdaBoostClassifier(learning_rate=0.5, random_state=0).fit(X_train, y_train)
    np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_, rtol=1e-9)
    assert np.mean(ours.predict(X_test) == theirs.predict(X_test)) >= 0.99


@pytest.mark.skipif(_learning_rate_supported(), reason="samme-alpha has learning_rate")
def test_learning_rate_without_support_is_refused_clearly():
    with pytest.raises(ValueError, match="learning_rate"):
        AdaBoostClassifier(learning_rate=0.5).fit(TOY_X, TOY_Y)


# -- behaviour ------------------------------------------------------------------------------------


def test_toy_classification():
    model = AdaBoostClassifier().fit(TOY_X, TOY_Y)
    assert list(model.predict(TOY_T)) == ["foo", "1", "1"]
    assert model.predict_proba(TOY_T).shape == (3, 2)
    assert model.decision_function(TOY_T).shape == (3,)


def test_iris_accuracy_probabilities_and_staged_outputs():
    X, y = load_iris(return_X_y=True)
    model = AdaBoostClassifier(DecisionTreeClassifier(max_depth=2)).fit(X, y)
    assert model.score(X, y) > 0.9
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(model.predict_log_proba(X)), proba)
    assert np.array_equal(np.argmax(proba, axis=1), np.searchsorted(model.classes_, model.predict(X)))
    staged = list(model.staged_predict(X))
    assert len(staged) == len(model.estimators_)
    assert np.array_equal(staged[-1], model.predict(X))
    np.testing.assert_allclose(list(model.staged_decision_function(X))[-1],
                               model.decision_function(X))
    np.testing.assert_allclose(list(model.staged_predict_proba(X))[-1], proba)
    assert list(model.staged_score(X, y))[-1] == pytest.approx(model.score(X, y))
    importances = model.feature_importances_
    assert importances.shape == (4,) and importances.sum() == pytest.approx(1.0)


def test_regressor_staged_predictions_end_at_predict():
    X, y = load_diabetes(return_X_y=True)
    model = AdaBoostRegressor(n_estimators=10, random_state=0).fit(X, y)
    staged = list(model.staged_predict(X))
    assert len(staged) == len(model.estimators_)
    np.testing.assert_allclose(staged[-1], model.predict(X))
    assert list(model.staged_score(X, y))[-1] == pytest.approx(model.score(X, y))


def test_zero_sample_weight_equals_removing_the_row():
    X, y = load_iris(return_X_y=True)
    X = np.round(X)  # few distinct values: the bins do not depend on the removed rows
    weights = np.ones(len(y))
    weights[::7] = 0.0
    keep = weights > 0
    zeroed = AdaBoostClassifier(n_estimators=20).fit(X, y, sample_weight=weights)
    removed = AdaBoostClassifier(n_estimators=20).fit(X[keep], y[keep])
    np.testing.assert_allclose(zeroed.estimator_weights_, removed.estimator_weights_, rtol=1e-9)
    assert np.array_equal(zeroed.predict(X[keep]), removed.predict(X[keep]))


def test_scaling_all_weights_changes_nothing():
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    w = rng.uniform(0.5, 2.0, len(y))
    a = AdaBoostClassifier(n_estimators=20).fit(X, y, sample_weight=w)
    b = AdaBoostClassifier(n_estimators=20).fit(X, y, sample_weight=1000.0 * w)
    np.testing.assert_allclose(a.estimator_weights_, b.estimator_weights_, rtol=1e-9)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-9)


def test_worse_than_random_first_estimator_raises_clearly():
    # Labels no feature can separate: every stump is the constant majority, error 1/2.
    X = np.zeros((8, 2))
    y = np.array([0, 1] * 4)
    with pytest.raises(ValueError, match="worse than random"):
        AdaBoostClassifier().fit(X, y)
    assert not hasattr(AdaBoostClassifier(), "estimators_")


def test_perfect_first_fit_stops_with_finite_weights():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    model = AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert len(model.estimators_) == 1
    assert np.isfinite(model.estimator_weights_).all()
    assert model.estimator_weights_[0] == 1.0 and model.estimator_errors_[0] == 0.0
    assert np.array_equal(model.predict(X), y)
    assert np.isfinite(model.predict_proba(X)).all()


def test_sparse_input_gives_the_dense_result():
    X, y = load_iris(return_X_y=True)
    dense = AdaBoostClassifier(n_estimators=10).fit(X, y)
    for convert in (sp.csr_matrix, sp.csc_matrix):
        sparse = AdaBoostClassifier(n_estimators=10).fit(convert(X), y)
        np.testing.assert_allclose(sparse.decision_function(convert(X)), dense.decision_function(X))


@pytest.mark.parametrize("bad", [-1.0, np.nan])
def test_bad_sample_weights_are_refused_naming_the_argument(bad):
    X, y = load_iris(return_X_y=True)
    w = np.ones(len(y))
    w[3] = bad
    for model in (AdaBoostClassifier(), AdaBoostRegressor()):
        with pytest.raises(ValueError, match="sample_weight"):
            model.fit(X, y, sample_weight=w)


def test_estimator_without_fit_is_refused():
    class NoFit:
        def predict(self, X):
            return np.zeros(len(X))

    with pytest.raises(ValueError, match="fit and predict"):
        AdaBoostClassifier(NoFit()).fit(TOY_X, TOY_Y)
    with pytest.raises(ValueError, match="fit and predict"):
        AdaBoostRegressor(NoFit()).fit(TOY_X, np.arange(6.0))


def test_regressor_given_to_the_classifier_is_refused():
    with pytest.raises(ValueError, match="must be a classifier.*LinearRegression"):
        AdaBoostClassifier(LinearRegression()).fit(TOY_X, TOY_Y)
    with pytest.raises(ValueError, match="must be a regressor"):
        AdaBoostRegressor(DecisionTreeClassifier()).fit(TOY_X, np.arange(6.0))


def test_early_stopping_keeps_the_best_round():
    X, y = load_breast_cancer(return_X_y=True)
    model = AdaBoostClassifier(n_estimators=400, n_iter_no_change=5, random_state=0).fit(X, y)
    assert model.model_.stop_reason in ("no-validation-improvement", "max-rounds")
    assert len(model.estimators_) == model.model_.best_round < 400
    assert (model.estimator_weights_[len(model.estimators_):] == 0).all()


# -- scikit-learn's estimator checks ------------------------------------------------------------


@pytest.mark.parametrize("skew", [0.0, 4.0, 40.0])
def test_bootstrap_counts_are_numpy_choice_counts(skew):
    """The kernel, given RandomState.choice's draws unsorted, counts the rows choice draws;
    weights from even to a few rows holding nearly all (long runs of rows in one bucket)."""
    from boostkit.kernels.sampling import bootstrap_counts

    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 3000))
        p = np.exp(skew * rng.standard_normal(n))
        p[rng.random(n) < 0.2] = 0.0
        p[: int(rng.integers(0, 3))] = 0.0  # zero weight at the ends too
        p[n - int(rng.integers(0, 3)):] = 0.0
        if p.sum() == 0:
            continue
        p /= p.sum()
        drawn = np.random.RandomState(seed).choice(np.arange(n), size=n, replace=True, p=p)
        cdf = p.cumsum()
        cdf /= cdf[-1]
        counts = np.full(n, np.nan)  # stale contents must be overwritten
        bootstrap_counts(cdf, np.random.RandomState(seed).random_sample(n), counts)
        assert np.array_equal(counts, np.bincount(drawn, minlength=n))


def test_bootstrap_counts_of_draws_at_bucket_edges():
    """Draws exactly on a cumulative weight, on a bucket edge k/n, at 0 and just below 1 go
    where searchsorted(side="right") sends them; the number of draws need not be n."""
    from boostkit.kernels.sampling import bootstrap_counts

    p = np.array([0.0, 0.25, 0.0, 0.125, 0.125, 0.5, 0.0])
    cdf = p.cumsum()
    draws = np.array([0.0, 0.25, 0.375, 0.5, 1 / 7, 2 / 7, 6 / 7, np.nextafter(1.0, 0.0),
                      np.nextafter(0.25, 0.0), 0.9, 0.1])
    counts = np.empty(p.shape[0])
    bootstrap_counts(cdf, draws, counts)
    expected = np.bincount(cdf.searchsorted(draws, side="right"), minlength=p.shape[0])
    assert np.array_equal(counts, expected)
    assert counts[[0, 2, 6]].sum() == 0  # rows of zero weight are never drawn


# -- other estimators, and the tree learner on several classes -------------------------------------


def test_other_classifiers_go_through_the_sklearn_estimator_proposal():
    from sklearn.tree import ExtraTreeClassifier

    X_train, X_test, y_train, _ = _split(load_digits)
    tree = ExtraTreeClassifier(max_depth=3)
    ours = AdaBoostClassifier(tree, n_estimators=20, random_state=0).fit(X_train, y_train)
    theirs = ensemble.AdaBoostClassifier(tree, n_estimators=20, random_state=0).fit(X_train,
                                                                                   y_train)
    assert all(isinstance(e, ExtraTreeClassifier) for e in ours.estimators_)
    assert [e.random_state for e in ours.estimators_] == [e.random_state
                                                          for e in theirs.estimators_]
    np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_, rtol=1e-9)
    np.testing.assert_allclose(ours.decision_function(X_test), theirs.decision_function(X_test),
                               atol=1e-9)


def test_classifier_without_sample_weight_is_refused_like_scikit_learn():
    from sklearn.neighbors import KNeighborsClassifier

    with pytest.raises(ValueError, match="KNeighborsClassifier doesn't support sample_weight"):
        AdaBoostClassifier(KNeighborsClassifier()).fit(TOY_X, TOY_Y)


def test_tree_learner_on_several_classes_matches_scikit_learn_tree():
    """One round of SAMME with a depth-3 tree: its training partition is scikit-learn's tree's
    on the same (uniform) weights, and its split gains are its impurity decreases."""
    X, y = load_iris(return_X_y=True)
    X = X.astype(np.float32).astype(np.float64)
    model = boostkit.Booster("samme", n_rounds=1, proposal=(
        "tree", {"max_depth": 3, "criterion": "gini", "midpoints": True})).fit(X, y)
    tree = model.hypotheses[0]
    reference = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    leaves = tree.cells(X)
    theirs = reference.apply(X)
    # The same partition: each of our leaves is one of theirs.
    assert len(set(zip(leaves, theirs))) == len(set(leaves)) == len(set(theirs))
    t = reference.tree_
    inner = t.children_left >= 0
    decrease = (t.impurity * t.weighted_n_node_samples)[inner] - sum(
        (t.impurity * t.weighted_n_node_samples)[child[inner]]
        for child in (t.children_left, t.children_right))
    np.testing.assert_allclose(np.sort(tree.split_gains * len(y)), np.sort(decrease), rtol=1e-9)
    assert "multiclass" in boostkit.get_registry().component("tree").capabilities().provides


def test_tree_midpoints_only_move_thresholds():
    X, y = load_breast_cancer(return_X_y=True)
    fits = [boostkit.Booster("adaboost", n_rounds=5, proposal=(
        "tree", {"max_depth": 2, "midpoints": m})).fit(X, y) for m in (False, True)]
    edges, mids = fits
    for a, b in zip(edges.hypotheses, mids.hypotheses):
        assert np.array_equal(a.feature, b.feature)
        assert np.array_equal(a.cells(X), b.cells(X))
    assert any(not np.array_equal(a.threshold, b.threshold)
               for a, b in zip(edges.hypotheses, mids.hypotheses))


def _samme_alpha_has(name: str) -> bool:
    return name in attrs.fields_dict(boostkit.get_registry().component("samme-alpha"))


@pytest.mark.skipif(not _samme_alpha_has("cell_labels"),
                    reason="samme-alpha labels cells by their heaviest class only")
def test_an_estimator_that_does_not_predict_its_majorities_agrees_with_scikit_learn():
    """GaussianNB's predicted class is not always the heaviest class of the examples it
    predicts it for: SAMME scores the predictions (samme-alpha(cell_labels='index'))."""
    from sklearn.naive_bayes import GaussianNB

    X_train, X_test, y_train, _ = _split(load_digits)
    ours = AdaBoostClassifier(GaussianNB(), n_estimators=20).fit(X_train, y_train)
    theirs = ensemble.AdaBoostClassifier(GaussianNB(), n_estimators=20).fit(X_train, y_train)
    assert len(ours.estimators_) == len(theirs.estimators_)
    np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_, rtol=1e-9)
    np.testing.assert_allclose(ours.decision_function(X_test), theirs.decision_function(X_test),
                               atol=1e-9)

"""The drop-in's native stumps and trees make scikit-learn's choices: the feature of exactly
tied cuts (its splitter's random order, stumps included), the class of a leaf whose heaviest
classes weigh the same, and thresholds at the midpoints of the node's training values."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import datasets
from sklearn.ensemble import AdaBoostClassifier as SkAdaBoostClassifier

from boostkit.sklearn import AdaBoostClassifier


def _twinned(n_features=4, n=200, seed=0):
    """Integer features and their exact copies (feature j + n_features is feature j)."""
    rng = np.random.RandomState(seed)
    base = rng.randint(0, 5, size=(n, n_features)).astype(np.float64)
    y = (base[:, 0] + base[:, 1] + 3 * rng.rand(n) > 5).astype(int)
    return np.column_stack([base, base]), y


def test_stumps_break_exact_feature_ties_in_scikit_learns_order():
    # With equal weights (the first round) scikit-learn's sums of twin features are equal bit
    # for bit, so only its random feature order decides which twin the stump splits.
    X, y = _twinned()
    ours, theirs = [], []
    for seed in range(30):
        ours.append(int(AdaBoostClassifier(n_estimators=1, random_state=seed).fit(X, y)
                        .estimators_[0].hypothesis.feature))
        theirs.append(int(SkAdaBoostClassifier(n_estimators=1, random_state=seed).fit(X, y)
                          .estimators_[0].tree_.feature[0]))
    assert ours == theirs
    assert sum(f >= 4 for f in theirs) >= 5  # the lowest feature would often be wrong


def test_a_leaf_of_equally_heavy_classes_takes_the_first_as_scikit_learn():
    # Iris' petal length alone: the root cut isolates setosa, and the other leaf holds 50
    # versicolor and 50 virginica, whose weights the histogram sums round apart.
    X, y = datasets.load_iris(return_X_y=True)
    X = X[:, [2]]
    ours = AdaBoostClassifier(n_estimators=5, random_state=0).fit(X, y)
    theirs = SkAdaBoostClassifier(n_estimators=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(ours.estimators_[0].predict(X), theirs.estimators_[0].predict(X))
    np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_, rtol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def _steps(seed=0):
    """One feature of 600 distinct integers (clipped into the columns [0, 254], [254, 508] and
    [508, 599]), a noisy step at 254.5, and test rows between the training values."""
    rng = np.random.RandomState(seed)
    x = np.arange(600.0)
    return x[:, None], 10.0 * (x >= 255) + rng.normal(size=600), (x - 0.5)[:, None]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regressor_trees_cut_many_valued_columns_where_scikit_learn_does(seed):
    # A bootstrap without the row 254 (an end of two columns) cuts between 253 and 255:
    # scikit-learn at 254, not at 253.5, the midpoint of 253 and the clipped end 254.
    from sklearn.ensemble import AdaBoostRegressor as SkAdaBoostRegressor
    from sklearn.tree import DecisionTreeRegressor

    from boostkit.sklearn import AdaBoostRegressor

    X, y, X_test = _steps()
    tree = DecisionTreeRegressor(max_depth=1)
    ours = AdaBoostRegressor(tree, n_estimators=5, random_state=seed).fit(X, y)
    theirs = SkAdaBoostRegressor(tree, n_estimators=5, random_state=seed).fit(X, y)
    assert len(ours.estimators_) == len(theirs.estimators_)
    # The leaf means agree to rounding (sums in another order).
    for a, b in zip(ours.estimators_, theirs.estimators_):
        np.testing.assert_allclose(a.predict(X_test), b.predict(X_test), rtol=1e-12)
    np.testing.assert_allclose(ours.predict(X_test), theirs.predict(X_test), rtol=1e-12)


def test_classifier_trees_cut_many_valued_columns_where_scikit_learn_does():
    # The root splits on z; the row x = 254 (an end of two columns) is on its right, so the
    # left node cuts between 253 and 255, at 254 as scikit-learn, not at 253.5.
    from sklearn.tree import DecisionTreeClassifier

    X, _, X_test = _steps()
    rng = np.random.RandomState(0)
    z = (rng.rand(600) < 0.5).astype(float)
    z[254] = 1.0
    X = np.column_stack([X[:, 0], z])
    y = np.where(z == 0, X[:, 0] >= 255, X[:, 0] >= 400)
    X_test = np.column_stack([X_test[:, 0], rng.rand(600) < 0.5])
    tree = DecisionTreeClassifier(max_depth=2)
    ours = AdaBoostClassifier(tree, n_estimators=3, random_state=0).fit(X, y)
    theirs = SkAdaBoostClassifier(tree, n_estimators=3, random_state=0).fit(X, y)
    for a, b in zip(ours.estimators_, theirs.estimators_):
        np.testing.assert_array_equal(a.predict(X_test), b.predict(X_test))
    np.testing.assert_array_equal(ours.predict(X_test), theirs.predict(X_test))


def test_regressor_breaks_exact_feature_ties_in_scikit_learns_order():
    # Linnerud: 15 training rows of three integer features; bootstraps of them make exact ties
    # between features in most nodes, which scikit-learn's tree breaks by its random feature
    # order (the lowest feature gave a mean test R^2 of -9.10 against scikit-learn's -0.57).
    from sklearn.ensemble import AdaBoostRegressor as SkAdaBoostRegressor
    from sklearn.model_selection import train_test_split

    from boostkit.sklearn import AdaBoostRegressor

    X, Y = datasets.load_linnerud(return_X_y=True)
    X_train, X_test, y_train, _ = train_test_split(X, Y[:, 0], test_size=0.25, random_state=0)
    for seed in range(10):
        ours = AdaBoostRegressor(random_state=seed).fit(X_train, y_train)
        theirs = SkAdaBoostRegressor(random_state=seed).fit(X_train, y_train)
        assert len(ours.estimators_) == len(theirs.estimators_), seed
        np.testing.assert_allclose(ours.predict(X_test), theirs.predict(X_test), rtol=1e-9,
                                   err_msg=f"random_state={seed}")


@pytest.mark.parametrize("seed", [1, 2])
def test_trees_follow_scikit_learns_visits_of_pure_nodes(seed):
    # Wine, depth 3: in round 6 a depth-2 child holding one class, found as its parent's sums
    # minus its sibling's, gets an impurity of 3.5e-12 > eps in scikit-learn, which tries to
    # split it and so draws from its generator; the nodes after it break ties in the order
    # those draws give.
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier

    X, y = datasets.load_wine(return_X_y=True)
    X_train, X_test, y_train, _ = train_test_split(X, y, test_size=0.25, random_state=2)
    tree = DecisionTreeClassifier(max_depth=3)
    ours = AdaBoostClassifier(tree, n_estimators=12, random_state=seed).fit(X_train, y_train)
    theirs = SkAdaBoostClassifier(tree, n_estimators=12, random_state=seed).fit(X_train, y_train)
    for a, b in zip(ours.estimators_, theirs.estimators_):
        np.testing.assert_array_equal(a.predict(X_train), b.predict(X_train))
    np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_, rtol=1e-9)
    np.testing.assert_array_equal(ours.predict(X_test), theirs.predict(X_test))

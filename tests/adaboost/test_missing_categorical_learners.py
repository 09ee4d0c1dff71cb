"""Learners on binned features with missing values and categorical columns.

The stump (``decision-stump``, ``category-stump``), the tree, the rank stump and LogitBoost's
stump: the hypotheses read NaN and categories as the search learnt them (their cells at predict
time are the training cells), save and load, and relabelling categories changes nothing; a
model whose labels depend on whether a value is missing finds it and beats mean imputation.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import boostkit
from boostkit.data import TrainingData, bin_features
from boostkit.errors import DataError
from boostkit.features import FeatureSchema
from boostkit_adaboost import CategoryStump, Stump, StumpLearner
from boostkit_additive import LogitStump
from boostkit_rankboost import RankStumpLearner, ThresholdRanker
from boostkit_weightboost import DecisionTree, TreeLearner

COLORS = np.array(["blue", "green", "red", "white", "yellow"])
# P(y = +1) per color: all distinct, so the order of the categories by class ratio is unique.
COLOR_RATIO = np.array([0.1, 0.9, 0.3, 0.75, 0.55])


def _colors(seed: int, n: int = 900, missing: float = 0.1):
    """Column 0: a color (category index, NaN when missing; missing rows are positive), column 1:
    a number (NaN when missing) that adds x > 1 to the positives; y in {0, 1}."""
    rng = np.random.default_rng(seed)
    color = rng.integers(0, COLORS.shape[0], n).astype(float)
    number = rng.normal(size=n)
    y = (rng.random(n) < COLOR_RATIO[color.astype(int)]) | (number > 1.0)
    gone = rng.random(n) < missing
    color[gone] = np.nan
    y[gone] = True
    number[rng.random(n) < missing] = np.nan
    return np.c_[color, number], y.astype(int)


SCHEMA = FeatureSchema(2, ("color", "number"), (COLORS, None))


def _state(X, y, features=SCHEMA, weights=None):
    data = TrainingData(X, y, allow_missing=True, features=features)
    return boostkit.BoostState(
        data=data,
        weights=data.initial_weights.copy() if weights is None else weights,
        margin=np.zeros(data.y.shape),
        n_rounds=1,
        rng=np.random.default_rng(0),
        hook=None,
        n_jobs=1,
    )


LEARNERS = {
    "stump": lambda: StumpLearner(criterion="z"),
    "tree": lambda: TreeLearner(max_depth=3, criterion="entropy"),
    "rank-stump": lambda: RankStumpLearner(criterion="error"),
    "logit-stump": lambda: LogitStump(),
}


# -- the hypotheses read what the search learnt -------------------------------------------------

@pytest.mark.parametrize("name", sorted(LEARNERS))
@pytest.mark.parametrize("seed", range(4))
def test_cells_at_predict_are_the_training_cells(name, seed):
    X, y = _colors(seed)
    learner = LEARNERS[name]()
    assert {"missing-values", "categorical-features"} <= learner.provides
    state = _state(X, y)
    if name == "logit-stump":
        state.weights = np.full(X.shape[0], 1.0 / X.shape[0])
    candidate = learner.boostkit_propose(state)
    assert np.array_equal(candidate.hypothesis.cells(X), candidate.cells)
    assert np.array_equal(candidate.hypothesis.scores(X), candidate.scores)


def test_a_categorical_stump_groups_the_colors_by_their_class_ratio():
    X, y = _colors(0, missing=0.0)
    candidate = StumpLearner(criterion="error").boostkit_propose(_state(X, y))
    stump = candidate.hypothesis
    assert isinstance(stump, CategoryStump) and stump.feature == 0
    # The colors of ratio < 1/2 (blue, red) against those above it: error = sum of minorities.
    assert np.array_equal(stump.left_categories, [0, 2])
    assert np.array_equal(stump.cell_scores, [-1.0, 1.0])
    assert stump.describe(SCHEMA) == "color in {blue, red} ? -1 : +1 (missing: +1)"
    assert stump.describe() == "x[0] in {0, 2} ? -1 : +1"


def test_category_stump_routes_missing_and_unknown_categories():
    stump = CategoryStump(0, [1, 3], [-2.0, 5.0], missing_left=True)
    X = np.array([[0.0], [1.0], [3.0], [np.nan], [7.0], [2.5], [-1.0]])
    assert np.array_equal(stump.cells(X), [1, 0, 0, 0, 1, 1, 1])
    right = CategoryStump(0, [1, 3], [-2.0, 5.0])
    assert np.array_equal(right.cells(X), [1, 0, 0, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="increasing category indices"):
        CategoryStump(0, [3, 1], [-1.0, 1.0])
    with pytest.raises(ValueError, match="non-empty"):
        CategoryStump(0, [], [-1.0, 1.0])


def test_threshold_stumps_send_missing_values_where_they_learnt():
    X = np.array([[0.0], [1.0], [np.nan], [np.inf]])
    assert np.array_equal(Stump(0, 0.5, [-1, 1]).cells(X), [0, 1, 0, 1])  # default: left
    assert np.array_equal(Stump(0, 0.5, [-1, 1], missing_left=False).cells(X), [0, 1, 1, 1])
    assert np.array_equal(ThresholdRanker(0, 0.5, [0, 1], missing_left=False).cells(X),
                          [0, 1, 1, 1])
    split_missing = Stump(0, np.inf, [-1, 1], missing_left=False)
    assert np.array_equal(split_missing.cells(X[:3]), [0, 0, 1])
    assert split_missing.describe(SCHEMA) == "color is missing ? +1 : -1"
    assert Stump(0, np.inf, [-1, 1]).describe() == "constant -1"
    with pytest.raises(TypeError, match="missing_left"):
        Stump(0, 0.5, [-1, 1], missing_left=1)


def test_a_numeric_stump_describes_its_column_by_name():
    stump = Stump(1, 7073.0, [-1.0, 1.0], missing_left=False)
    assert stump.describe(SCHEMA) == "number <= 7073 ? -1 : +1 (missing: +1)"
    assert stump.describe() == "x[1] <= 7073 ? -1 : +1"


# -- missing values that carry the signal --------------------------------------------------------

def _signal_in_missingness(seed: int, missing_label: int):
    """x in {0, ..., 4} (200 rows each, 60 of each missing, so the mean of the rest is 2 exactly);
    y = missing_label where x is missing, else 1 for the x of the other class' side of 2
    ([x >= 3] when missing values are positive, [x >= 2] when negative); a noise column."""
    rng = np.random.default_rng(seed)
    x = np.repeat(np.arange(5.0), 200)
    missing = np.zeros(x.shape[0], dtype=bool)
    for v in range(5):
        missing[rng.choice(np.flatnonzero(x == v), 60, replace=False)] = True
    y = np.where(missing, missing_label, (x >= 3 - (missing_label == 0)).astype(int))
    X = np.c_[np.where(missing, np.nan, x), rng.normal(size=x.shape[0])]
    order = rng.permutation(x.shape[0])
    return X[order], y[order]


@pytest.mark.parametrize("algorithm", ["adaboost", "real-adaboost", "weightboost"])
@pytest.mark.parametrize("missing_label", [0, 1])
def test_the_learnt_direction_finds_missing_values_that_carry_the_signal(algorithm,
                                                                          missing_label):
    X, y = _signal_in_missingness(0, missing_label)
    X_test, y_test = _signal_in_missingness(1, missing_label)
    model = boostkit.Booster(algorithm, n_rounds=10).fit(X, y)
    first = model.hypotheses[0]
    goes_left = first.missing_left if np.ndim(first.missing_left) == 0 else first.missing_left[0]
    assert first.feature == 0 or first.feature[0] == 0
    assert bool(goes_left) is (missing_label == 0)  # with the class it belongs to
    native = np.mean(model.predict(X_test) == y_test)
    # Mean imputation puts every missing value on x = 2, among the other class.
    mean = np.nanmean(X[:, 0])
    assert mean == 2.0

    def impute(A):
        return np.c_[np.where(np.isnan(A[:, 0]), mean, A[:, 0]), A[:, 1]]

    imputed = boostkit.Booster(algorithm, n_rounds=10).fit(impute(X), y)
    imputed_accuracy = np.mean(imputed.predict(impute(X_test)) == y_test)
    assert native == 1.0
    assert imputed_accuracy < 0.9 < native


def test_missing_values_follow_their_cell_in_domain_partitioning():
    X, y = _signal_in_missingness(0, 1)
    model = boostkit.Booster("real-adaboost", n_rounds=1).fit(X, y)
    stump = model.hypotheses[0]
    rows = np.array([[np.nan, 0.0], [4.0, 0.0], [0.0, 0.0]])
    margin = model.decision_function(rows)
    values = model.contributions[0].cell_values
    assert stump.missing_left is False
    assert margin[0] == margin[1] == pytest.approx(values[1])
    assert margin[2] == pytest.approx(values[0])


def test_missing_values_at_predict_go_to_the_heavier_side_when_training_had_none():
    # 3 of 4 weight units x <= 0 (negatives): a NaN met at predict is read as a negative.
    X = np.array([[-1.0], [-2.0], [-3.0], [1.0]] * 10)
    y = np.array([0, 0, 0, 1] * 10)
    model = boostkit.Booster("adaboost", n_rounds=1).fit(X, y)
    assert model.hypotheses[0].missing_left is True
    assert model.predict(np.array([[np.nan]]))[0] == 0


# -- relabelling categories ---------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["adaboost", "real-adaboost", "weightboost", "rankboost",
                                       "logitboost", "samme"])
def test_permuting_category_codes_does_not_change_predictions(algorithm):
    X, y = _colors(1)
    X_test, _ = _colors(2)
    permutation = np.array([3, 0, 4, 1, 2])  # category c becomes permutation[c]
    relabelled_schema = FeatureSchema(2, SCHEMA.names, (COLORS[np.argsort(permutation)], None))

    def relabel(A):
        out = A.copy()
        present = ~np.isnan(A[:, 0])
        out[present, 0] = permutation[A[present, 0].astype(int)]
        return out

    model = boostkit.Booster(algorithm, n_rounds=8).fit(X, y, features=SCHEMA)
    other = boostkit.Booster(algorithm, n_rounds=8).fit(relabel(X), y, features=relabelled_schema)
    assert any(isinstance(h, CategoryStump) or (isinstance(h, DecisionTree) and h.categorical[0])
               for h in model.hypotheses)
    assert np.array_equal(model.predict(X_test), other.predict(relabel(X_test)))
    np.testing.assert_allclose(model.decision_function(X_test),
                               other.decision_function(relabel(X_test)), rtol=1e-12, atol=1e-12)


# -- trees --------------------------------------------------------------------------------------

def test_trees_split_categories_and_route_missing_values():
    X, y = _colors(3, n=2000)
    candidate = TreeLearner(max_depth=3, criterion="entropy").boostkit_propose(_state(X, y))
    tree = candidate.hypothesis
    assert tree.categorical.any() and not tree.categorical.all()
    assert tree.category_left.shape[1] <= COLORS.shape[0]
    if tree.categorical[0]:
        names = ", ".join(COLORS[np.flatnonzero(tree.category_left[0])])
        root = f"{SCHEMA.label(tree.feature[0])} in {{{names}}}"
    else:
        root = f"{SCHEMA.label(tree.feature[0])} <= {tree.threshold[0]:.6g}"
    assert tree.describe(SCHEMA) == f"tree of {tree.n_cells} leaves, root {root}"
    X_new = np.array([[np.nan, 0.0], [0.0, np.nan], [1.0, 2.0], [4.0, -1.0]])
    # Each row's leaf, walked by hand from the tree's arrays.
    expected = []
    for row in X_new:
        k = 0
        while k >= 0:
            x = row[tree.feature[k]]
            if np.isnan(x):
                left = tree.missing_left[k]
            elif tree.categorical[k]:
                left = tree.category_left[k, int(x)]
            else:
                left = x <= tree.threshold[k]
            k = tree.left[k] if left else tree.right[k]
        expected.append(-1 - k)
    assert np.array_equal(tree.cells(X_new), expected)


def test_a_tree_without_the_new_fields_loads_as_before():
    # A tree of a model saved before missing values: NaN went right (x <= t is False).
    tree = DecisionTree([0], [0.5], [-1], [-2], [-1.0, 1.0])
    assert np.array_equal(tree.cells(np.array([[0.0], [1.0], [np.nan]])), [0, 1, 1])
    assert tree.describe() == "tree of 2 leaves, root x[0] <= 0.5"
    with pytest.raises(ValueError, match="must send some category left"):
        DecisionTree([0], [0.0], [-1], [-2], [-1.0, 1.0], categorical=[True],
                     category_left=[[False, False]])


def test_multiclass_trees_take_categorical_columns_and_missing_values():
    X, _ = _colors(4, n=1500)
    labels = np.where(np.isnan(X[:, 0]), 0, np.nan_to_num(X[:, 0]) % 3).astype(int)
    recipe = boostkit.Recipe(name="samme-trees",
                             proposal=boostkit.ComponentSpec("tree", {"max_depth": 2}),
                             calibration="samme-alpha", reweighting="samme-weights")
    model = boostkit.Booster(recipe, n_rounds=3).fit(X, labels, features=SCHEMA)
    assert np.isnan(X[:, 0]).any()
    assert np.mean(model.predict(X) == labels) == 1.0  # the missing rows (class 0) included
    assert model.hypotheses[0].categorical[0]


@pytest.mark.parametrize("midpoints", [False, True])
def test_tree_thresholds_at_midpoints_keep_missing_values_on_their_side(midpoints):
    X, y = _colors(10, n=1200, missing=0.2)
    X[:, 0] = np.where(np.isnan(X[:, 0]), np.nan, X[:, 0] * 1.5)  # a numeric column with NaN
    state = _state(X, y, features=FeatureSchema(2))
    learner = TreeLearner(max_depth=3, midpoints=midpoints, criterion="gini")
    candidate = learner.boostkit_propose(state)
    tree = candidate.hypothesis
    assert not tree.categorical.any() and tree.missing_left.shape == tree.feature.shape
    assert np.array_equal(tree.cells(X), candidate.cells)


def test_the_regression_tree_refuses_missing_values_and_categories():
    fit = TreeLearner.fit_regression_tree
    y = np.array([0.0, 1.0, 2.0])
    weight = np.ones(3)
    with pytest.raises(DataError, match="missing values"):
        fit(bin_features(np.array([[0.0], [np.nan], [1.0]])), y, weight, max_depth=1)
    with pytest.raises(DataError, match="categorical column 0"):
        fit(bin_features(np.array([[0.0], [1.0], [2.0]]), n_categories=np.array([3])), y,
            weight, max_depth=1)


# -- several classes ----------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["samme", "adaboost-mh", "logitboost"])
def test_three_classes_with_a_categorical_column_and_missing_values(algorithm):
    rng = np.random.default_rng(5)
    n = 1200
    color = rng.integers(0, 5, n).astype(float)
    labels = np.array([0, 1, 2, 1, 0])[color.astype(int)]  # the class is a function of the color
    color[rng.random(n) < 0.1] = np.nan
    labels[np.isnan(color)] = 2  # and a missing color is class 2
    X = np.c_[color, rng.normal(size=n)]
    model = boostkit.Booster(algorithm, n_rounds=10).fit(X, labels, features=SCHEMA)
    assert isinstance(model.hypotheses[0], CategoryStump)
    assert np.mean(model.predict(X) == labels) == 1.0


# -- the rank stump and LogitBoost's stump ------------------------------------------------------

def test_rank_stump_splits_categories_by_their_ratio():
    X, y = _colors(6, missing=0.0)
    model = boostkit.Booster("rankboost", n_rounds=1).fit(X, y, features=SCHEMA)
    ranker = model.hypotheses[0]
    assert isinstance(ranker, CategoryStump)
    # r = |TPR - FPR| is largest for the colors whose share of positives is above the overall
    # share (on the left, those below it).
    ratio = np.array([y[X[:, 0] == c].mean() for c in range(COLORS.shape[0])])
    assert np.array_equal(ranker.left_categories, np.flatnonzero(ratio < y.mean()))


def test_logit_stump_groups_categories_by_least_squares_like_brute_force():
    rng = np.random.default_rng(7)
    n, k = 400, 5
    color = rng.integers(0, k, n).astype(float)
    y = (rng.random(n) < COLOR_RATIO[color.astype(int)]).astype(int)
    X = color[:, None]
    schema = FeatureSchema(1, ("color",), (COLORS,))
    state = _state(X, y, features=schema)
    state.margin = rng.normal(scale=0.5, size=n)  # z and w differ per example
    from boostkit.losses import get_loss, margin_loss_distribution
    state.weights, _ = margin_loss_distribution(get_loss("logitboost"), state.margin,
                                                state.data.y, state.initial_weights, 1)
    stump = LogitStump(min_category_count=1)
    candidate = stump.boostkit_propose(state)
    from boostkit_additive.logit import response
    z = response(state, stump.z_max)

    def sse(left):
        total = 0.0
        for side in (left, ~left):
            w, zz = state.weights[side], z[side]
            total += np.sum(w * (zz - np.sum(w * zz) / np.sum(w)) ** 2)
        return total

    best = min(sse(np.isin(color, group)) for r in range(1, k)
               for group in itertools.combinations(range(k), r))
    assert isinstance(candidate.hypothesis, CategoryStump)
    assert sse(candidate.cells == 0) == pytest.approx(best, rel=1e-9)


# -- model files --------------------------------------------------------------------------------

def test_model_files_saved_before_missing_values_load_with_the_old_routing():
    from pathlib import Path

    reference = Path(__file__).resolve().parents[1] / "reference"
    stumps = boostkit.load_model(reference / "adaboost-v2.npz").hypotheses
    assert all(isinstance(h, Stump) and h.missing_left is True for h in stumps)
    trees = boostkit.load_model(reference / "weightboost-v2.npz").hypotheses
    assert all(not t.missing_left.any() and not t.categorical.any() for t in trees)
    assert all(t.category_left.shape == (t.feature.shape[0], 0) for t in trees)


@pytest.mark.parametrize("algorithm", ["adaboost", "weightboost", "rankboost", "logitboost"])
def test_models_with_missing_values_and_categories_save_and_load(tmp_path, algorithm):
    X, y = _colors(8)
    model = boostkit.Booster(algorithm, n_rounds=6).fit(X, y, features=SCHEMA)
    path = model.save(tmp_path / "model.npz")
    loaded = boostkit.load_model(path)
    X_test, _ = _colors(9)
    assert np.array_equal(loaded.decision_function(X_test), model.decision_function(X_test))
    for saved, back in zip(model.hypotheses, loaded.hypotheses):
        assert type(saved) is type(back)
        assert np.all(np.asarray(saved.missing_left) == np.asarray(back.missing_left))

"""Input validation and label mapping (boostkit.data, through Booster.fit and BoostModel.predict):
clear DataError messages naming the argument (DESIGN.md, "Errors")."""

from __future__ import annotations

import numpy as np
import pytest

import boostkit
from boostkit.data import TrainingData, bin_features, check_features
from boostkit.errors import DataError


def separable_data(n=120, seed=0):
    """Feature 0 decides the label (positive iff x0 > 0); feature 1 is noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, X[:, 0] > 0


def fit(X, y, sample_weight=None, **booster):
    return boostkit.Booster("adaboost", **{"n_rounds": 5, **booster}).fit(X, y, sample_weight)


X, POSITIVE = separable_data()
Y = np.where(POSITIVE, 1, -1)


# -- features -----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_features_are_refused_with_their_position(value):
    bad = X.copy()
    bad[7, 1] = value
    message = (r"X contains 1 infinite value\(s\), e.g. at row 7, column 1; infinity is not a "
               r"missing value \(NaN is\)")
    with pytest.raises(DataError, match=message):
        fit(bad, Y)
    with pytest.raises(DataError, match=message):
        fit(X, Y).predict(bad)


def test_missing_features_are_refused_by_a_proposal_that_cannot_read_them():
    bad = np.abs(X)
    bad[7, 1] = np.nan
    with pytest.raises(DataError, match=r"X contains 1 missing value\(s\) \(NaN\), e.g. at row 7, "
                                        r"column 1; recipe 'pav-adaboost': proposal 'cmass'"):
        boostkit.Booster("pav-adaboost", n_rounds=2).fit(bad, Y)


def test_empty_X_is_refused():
    with pytest.raises(DataError, match=r"X is empty: got 0 samples \(shape \(0, 2\)\)"):
        fit(np.empty((0, 2)), np.empty(0))


def test_X_without_features_is_refused():
    with pytest.raises(DataError, match="X has 0 features"):
        fit(np.empty((5, 0)), Y[:5])


def test_one_dimensional_X_is_refused():
    message = r"X must be 2-D \(n_samples, n_features\), got an array of shape \(120,\)"
    with pytest.raises(DataError, match=message):
        fit(X[:, 0], Y)


def test_non_numeric_X_is_refused_unless_declared_categorical():
    text = np.array([["a", "b"], ["c", "d"]])
    with pytest.raises(DataError, match=r"X column 0 holds values that are not numbers \(e.g. 'a'\); "
                                        "declare it categorical"):
        fit(text, [0, 1])
    with pytest.raises(DataError, match="X must be numeric"):
        TrainingData(text, [0, 1])
    model = boostkit.Booster("adaboost", n_rounds=2, categorical_features=[0, 1]).fit(text, [0, 1])
    assert model.features.categories[0].tolist() == ["a", "c"]


def test_sparse_X_stays_sparse_and_a_dense_only_learner_says_so():
    sparse = pytest.importorskip("scipy.sparse")
    data = TrainingData(sparse.coo_matrix(X), Y)
    assert data.is_sparse and data.X.format == "csr" and data.X.dtype == np.float64
    with pytest.raises(DataError, match=r"sparse.*X.toarray\(\)"):
        data.binned
    # The recipe's proposal does not declare "sparse-input": refused before the first round.
    with pytest.raises(boostkit.RecipeError, match=r"proposal 'stump' does not handle sparse.*X.toarray\(\)"):
        fit(sparse.csr_matrix(X), Y)


def test_sparse_X_with_nan_or_wrong_width_is_refused():
    sparse = pytest.importorskip("scipy.sparse")
    bad = sparse.csr_matrix(X)
    bad.data[0] = np.nan
    with pytest.raises(DataError, match="NaN or infinite stored values"):
        TrainingData(bad, Y)
    with pytest.raises(DataError, match="features, but the model was fitted with"):
        check_features(sparse.csr_matrix(X), n_features=X.shape[1] + 1, accept_sparse=True)


def test_wrong_number_of_features_at_predict():
    model = fit(X, Y)
    with pytest.raises(DataError, match="X has 3 features, but the model was fitted with 2"):
        model.predict(np.zeros((4, 3)))
    with pytest.raises(DataError, match="X contains 1 infinite value"):
        model.decision_function(np.array([[0.0, np.inf]]))


# -- labels -------------------------------------------------------------------------------------


def test_one_class_is_refused():
    with pytest.raises(DataError, match=r"y has only one class \(\[1\]\).*needs at least two"):
        fit(X, np.ones(len(X), dtype=int))


def test_three_classes_with_a_binary_only_recipe_name_the_ways_out():
    y = np.arange(len(X)) % 3
    with pytest.raises(boostkit.RecipeError,
                       match=r"y has 3 classes, and recipe 'adaboost' is binary-only: calibration "
                             r"'constant-alpha'.*adaboost-mh.*multiclass='one-vs-rest'"):
        fit(X, y)


def test_mismatched_lengths_are_refused():
    with pytest.raises(DataError, match="X has 120 samples but y has 119 labels"):
        fit(X, Y[:-1])


def test_nan_label_is_refused():
    y = Y.astype(float)
    y[3] = np.nan
    with pytest.raises(DataError, match="y contains NaN"):
        fit(X, y)


def test_column_vector_y_is_accepted():
    model = fit(X, Y.reshape(-1, 1))
    np.testing.assert_array_equal(model.predict(X), Y)


@pytest.mark.parametrize(
    "negative, positive",
    [("no", "yes"), (3, 7), (False, True), (-2.5, 0.5)],
)
def test_any_two_label_values_map_to_plus_minus_one_and_back(negative, positive):
    y = np.where(POSITIVE, positive, negative)
    data = TrainingData(X, y)
    np.testing.assert_array_equal(data.classes, [negative, positive])  # classes[0] is -1
    np.testing.assert_array_equal(data.y, np.where(POSITIVE, 1.0, -1.0))
    model = fit(X, y)
    np.testing.assert_array_equal(model.classes, [negative, positive])
    predicted = model.predict(X)
    assert predicted.dtype == np.asarray(y).dtype
    np.testing.assert_array_equal(predicted, y)
    np.testing.assert_array_equal(model.decision_function(X) > 0, POSITIVE)


# -- sample weights -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "weights, message",
    [
        (
            np.r_[-1.0, np.ones(119)],
            r"sample_weight must be non-negative, got 1 negative value\(s\) \(smallest -1\)",
        ),
        (np.r_[np.nan, np.ones(119)], "sample_weight contains NaN or infinite values"),
        (np.r_[np.inf, np.ones(119)], "sample_weight contains NaN or infinite values"),
        (np.zeros(120), "sample_weight sums to 0"),
        (np.ones(119), r"sample_weight must have shape \(120,\) to match X, got \(119,\)"),
    ],
)
def test_bad_sample_weights_are_refused(weights, message):
    with pytest.raises(DataError, match=message):
        fit(X, Y, weights)


def test_sample_weights_are_normalised_to_a_distribution():
    data = TrainingData(X, Y, np.arange(1, 121, dtype=float))
    assert data.sample_weight.sum() == pytest.approx(1.0)
    assert data.sample_weight[1] == pytest.approx(2 * data.sample_weight[0])


def test_zero_weight_examples_place_no_bin_thresholds():
    column = np.array([[0.0], [1.0], [2.0], [3.0], [50.0], [-20.0]])
    binned = bin_features(column, sample_weight=np.array([1.0, 1, 1, 1, 0, 0]))
    np.testing.assert_array_equal(binned.thresholds[0], [0.5, 1.5, 2.5])
    np.testing.assert_array_equal(binned.codes[0], [0, 1, 2, 3, 3, 0])
    # zero-weight rows are not counted either, so no split isolates them
    np.testing.assert_array_equal(binned.bin_counts[0, :4], [1, 1, 1, 1])


def test_zero_weight_examples_do_not_change_the_model():
    rng = np.random.default_rng(1)
    noisy = np.where(rng.random(len(X)) < 0.2, -Y, Y)  # so that boosting runs all its rounds
    outliers = rng.normal(scale=10.0, size=(30, 2))
    X_all = np.vstack([X, outliers])
    y_all = np.r_[noisy, rng.choice([-1, 1], size=30)]
    weights = np.r_[np.ones(len(X)), np.zeros(30)]
    X_test = rng.normal(scale=3.0, size=(200, 2))
    with_zeros = fit(X_all, y_all, weights, n_rounds=10)
    without = fit(X, noisy, n_rounds=10)
    assert without.n_rounds == 10
    assert [r.hypothesis for r in with_zeros.records] == [r.hypothesis for r in without.records]
    np.testing.assert_allclose(
        with_zeros.decision_function(X_test), without.decision_function(X_test),
        rtol=1e-12, atol=1e-12,
    )


def test_sparse_X_is_copied_into_canonical_form():
    sparse = pytest.importorskip("scipy.sparse")
    # Two stored entries at (0, 1): a non-canonical matrix the caller may well pass.
    given = sparse.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([1, 1, 0]), np.array([0, 2, 3])),
                              shape=(2, 2))
    checked = check_features(given, accept_sparse=True)
    assert checked.has_canonical_format and checked.nnz == 2
    np.testing.assert_array_equal(checked.toarray(), [[0.0, 3.0], [3.0, 0.0]])
    assert given.nnz == 3  # the caller's matrix is left as it was

"""Tables as they come (boostkit.features): DataFrames keep their column names and categorical
columns, from fit to records, importances, the model file and prediction; arrays can declare
categorical columns; missing values reach only the proposals that read them."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import boostkit
from boostkit.data import TrainingData, bin_features
from boostkit.errors import DataError, DataWarning, RecipeError
from boostkit.features import FeatureSchema

pd = pytest.importorskip("pandas")


def frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.normal(40, 10, n)
    job = rng.choice(["clerk", "nurse", "pilot"], n)
    hours = rng.integers(10, 60, n).astype(float)
    hours[rng.random(n) < 0.1] = np.nan
    # Additive in age and job (a sum of stumps can fit it), with some noise.
    score = (age - 40) / 5 + 3 * (job == "nurse") - 2 * (job == "pilot") + rng.normal(0, 0.5, n)
    y = np.where(score > 0, "yes", "no")
    return pd.DataFrame({"age": age, "job": pd.Categorical(job), "hours": hours}), y


# -- the schema ---------------------------------------------------------------------------------


def test_a_dataframe_gives_names_categories_and_codes():
    df, _ = frame(6)
    df["job"] = ["pilot", "clerk", None, "nurse", "clerk", "pilot"]  # object column
    schema, X = FeatureSchema.learn(df)
    assert schema.names == ("age", "job", "hours")
    assert schema.categorical.tolist() == [False, True, False]
    assert schema.categories[1].tolist() == ["clerk", "nurse", "pilot"]
    np.testing.assert_array_equal(X[:, 1], [2, 0, np.nan, 1, 0, 2])
    np.testing.assert_array_equal(X[:, 0], df["age"].to_numpy())


def test_an_array_declares_categorical_columns_by_index_or_mask():
    X = np.array([[1.0, 30.0], [2.0, 10.0], [np.nan, 30.0], [1.0, 20.0]])
    by_index, encoded = FeatureSchema.learn(X, [1])
    by_mask, _ = FeatureSchema.learn(X, [False, True])
    assert by_index.categorical.tolist() == by_mask.categorical.tolist() == [False, True]
    assert by_index.categories[1].tolist() == [10.0, 20.0, 30.0]
    np.testing.assert_array_equal(encoded[:, 1], [2, 0, 2, 1])
    # Unseen categories at prediction read as missing values, and are counted.
    with pytest.warns(DataWarning, match=r"X column 1: 1 row holds a category not seen in "
                                         r"training \(e.g. 25.0\)"):
        unseen = by_index.transform(np.array([[0.0, 25.0], [0.0, 10.0]]))
    np.testing.assert_array_equal(unseen[:, 1], [np.nan, 0])


@pytest.mark.parametrize("spec, message", [
    (["nope"], "categorical_features names column 'nope', but X has no column names"),
    ([5], "categorical_features has column index 5, but X has 2 columns"),
    ([True], "one entry per column"),
    ("job", "a single name"),
    ([1.5], "must be column indices or names"),
])
def test_bad_categorical_feature_specs_are_refused(spec, message):
    with pytest.raises(DataError, match=message):
        FeatureSchema.learn(np.zeros((3, 2)), spec)


def test_text_in_a_numeric_column_names_the_column_and_the_way_out():
    X = np.array([[1.0, "a"], [2.0, "b"]], dtype=object)
    with pytest.raises(DataError, match=r"X column 1 holds values that are not numbers \(e.g. 'a'\); "
                                        r"declare it categorical"):
        boostkit.Booster("adaboost", n_rounds=1, categorical_features=None).fit(X, [0, 1])


def test_encoded_input_is_checked_against_the_number_of_categories():
    schema = FeatureSchema(2, ("a", "b"), (None, np.array(["x", "y"])))
    with pytest.raises(DataError, match=r"column 1 \('b'\) holds 2, but the column is categorical "
                                        r"and encoded: expected category indices in \[0, 2\)"):
        boostkit.Booster("adaboost", n_rounds=1).fit(np.array([[0.0, 0], [1, 2]]), [0, 1],
                                                    features=schema)
    with pytest.raises(DataError, match="features must be a boostkit.FeatureSchema"):
        boostkit.Booster("adaboost", n_rounds=1).fit(np.zeros((2, 2)), [0, 1], features=["a"])


def test_more_categories_than_bins_is_refused_naming_the_column():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=400), "code": [f"c{i}" for i in range(400)]})
    y = np.arange(400) % 2
    with pytest.raises(DataError, match=r"categorical column 1 \('code'\) has 400 categories, more "
                                        r"than max_bins = 255"):
        boostkit.Booster("adaboost", n_rounds=1).fit(df, y)


def test_a_column_with_only_missing_values_is_kept_with_a_warning():
    df, y = frame()
    df["empty"] = np.nan
    with pytest.warns(DataWarning, match=r"X column 3 \('empty'\) has only missing values"):
        model = boostkit.Booster("adaboost", n_rounds=5).fit(df, y)
    assert model.feature_importances()[3] == 0.0
    assert np.isfinite(model.decision_function(df)).all()


# -- names and categories through fit and predict ---------------------------------------------


def test_names_travel_into_the_model_records_and_file(tmp_path):
    df, y = frame()
    model = boostkit.Booster("real-adaboost", n_rounds=8).fit(df, y)
    assert model.feature_names == ("age", "job", "hours")
    assert any(name in model.records[0].hypothesis for name in model.feature_names)
    assert not any("x[" in r.hypothesis for r in model.records)
    loaded = boostkit.load_model(model.save(tmp_path / "m.npz"))
    assert loaded.feature_names == model.feature_names
    assert loaded.features.categories[1].tolist() == ["clerk", "nurse", "pilot"]
    np.testing.assert_array_equal(loaded.decision_function(df), model.decision_function(df))


def test_predicting_with_other_columns_is_a_clear_error():
    df, y = frame()
    model = boostkit.Booster("adaboost", n_rounds=3).fit(df, y)
    with pytest.raises(DataError, match="X has no column 'job'"):
        model.predict(df[["age", "hours"]])
    with pytest.raises(DataError, match="column 0 is 'job', expected 'age'"):
        model.predict(df[["job", "age", "hours"]])
    with pytest.raises(DataError, match="X has the column 'extra', which the model was not fitted"):
        model.predict(df.assign(extra=1.0))


def test_a_category_seen_only_at_predict_time_goes_where_missing_values_go():
    df, y = frame()
    model = boostkit.Booster("adaboost", n_rounds=10).fit(df, y)
    unseen = df.head(20).copy()
    unseen["job"] = pd.Categorical(["astronaut"] * 20)
    missing = df.head(20).copy()
    missing["job"] = pd.Categorical([None] * 20, categories=["clerk"])
    with pytest.warns(DataWarning, match="20 rows hold a category not seen in training"):
        unseen_margins = model.decision_function(unseen)
    np.testing.assert_array_equal(unseen_margins, model.decision_function(missing))


def test_category_order_in_the_dtype_does_not_matter_at_predict():
    df, y = frame()
    model = boostkit.Booster("adaboost", n_rounds=10).fit(df, y)
    reordered = df.copy()
    reordered["job"] = df["job"].cat.reorder_categories(["pilot", "nurse", "clerk"])
    np.testing.assert_array_equal(model.decision_function(reordered), model.decision_function(df))


def test_categorical_columns_are_refused_by_a_proposal_that_reads_numbers():
    df, y = frame()
    with pytest.raises(RecipeError, match=r"column 1 \('job'\) is categorical, and proposal 'cmass' "
                                          r"does not handle categorical columns"):
        boostkit.Booster("pav-adaboost", n_rounds=2).fit(df, y)


def test_the_loader_form_fits_and_predicts_like_the_dataframe():
    df, y = frame()
    schema, X = FeatureSchema.learn(df)
    from_frame = boostkit.Booster("adaboost", n_rounds=10).fit(df, y)
    from_codes = boostkit.Booster("adaboost", n_rounds=10).fit(X, y, features=schema)
    # A schema learnt from a table keeps its names: arrays are read by position, with a warning.
    with pytest.warns(DataWarning, match="X does not have valid feature names"):
        codes_margins = from_codes.decision_function(X)
    np.testing.assert_array_equal(codes_margins, from_frame.decision_function(df))
    assert from_codes.feature_names == from_frame.feature_names


def test_multiclass_one_vs_rest_keeps_the_schema():
    df, _ = frame()
    y = np.asarray(df["job"].astype(str))
    X = df.assign(job=np.where(df["age"] > 40, "old", "young"))
    model = boostkit.Booster("weightboost", n_rounds=3, multiclass="one-vs-rest").fit(X, y)
    assert all(m.feature_names == ("age", "job", "hours") for m in model.models)
    assert set(model.predict(X)) <= {"clerk", "nurse", "pilot"}


# -- importances ----------------------------------------------------------------------------


def test_importances_are_a_distribution_over_the_columns_read():
    df, y = frame()
    model = boostkit.Booster("adaboost", n_rounds=20).fit(df, y)
    importances = model.feature_importances()
    assert importances.shape == (3,)
    assert importances.sum() == pytest.approx(1.0)
    assert importances[0] > 0 and importances[1] > 0  # age and job carry the labels


def test_importances_of_hand_made_records_follow_the_documented_formula():
    from boostkit.model import term_importances
    from boostkit_adaboost import Stump

    hypotheses = [Stump(0, 0.5, [-1, 1]), Stump(1, 0.5, [-1, 1]), Stump(0, 1.5, [-1, 1])]
    records = [boostkit.RoundRecord(round=t, hypothesis="", weighted_error=0.5 - edge,
                                    edge=edge, z=None, error_bound=None, training_error=0.0,
                                    coefficients=(alpha,))
               for t, (alpha, edge) in enumerate([(2.0, 0.25), (-1.0, 0.1), (0.5, 0.2)], 1)]
    expected = np.array([2.0 * 0.25 + 0.5 * 0.2, 1.0 * 0.1])
    np.testing.assert_allclose(term_importances(hypotheses, records, 2), expected / expected.sum())


def test_a_model_of_constant_rounds_has_zero_not_nan_importances():
    X = np.ones((10, 3))
    model = boostkit.Booster("adaboost", n_rounds=3).fit(X, np.arange(10) % 2)
    importances = model.feature_importances()
    assert np.isfinite(importances).all() and (importances == 0).all()


def test_back_fitted_terms_count_once():
    X = np.abs(np.random.default_rng(0).normal(size=(200, 4)))
    y = X[:, 0] + X[:, 1] > 1.5
    model = boostkit.Booster("pav-adaboost-finite", n_rounds=12).fit(X, y)
    assert len(model.records) >= len(model.hypotheses)
    importances = model.feature_importances()
    assert np.isfinite(importances).all() and importances.sum() == pytest.approx(1.0)


# -- the estimator ----------------------------------------------------------------------------


def test_the_estimator_takes_a_dataframe_with_categories_and_missing_values():
    from boostkit.sklearn import BoostClassifier

    df, y = frame()
    clf = BoostClassifier("adaboost", n_rounds=15).fit(df, y)
    assert clf.feature_names_in_.tolist() == ["age", "job", "hours"]
    assert clf.n_features_in_ == 3
    assert clf.feature_importances_.sum() == pytest.approx(1.0)
    assert clf.score(df, y) > 0.9
    assert clf.__sklearn_tags__().input_tags.allow_nan
    assert not BoostClassifier("pav-adaboost").__sklearn_tags__().input_tags.allow_nan


def test_pandas_is_not_imported_by_boostkit():
    code = ("import sys, numpy, boostkit; boostkit.get_registry(); "
            "boostkit.Booster(n_rounds=2).fit(numpy.eye(4), [0, 1, 0, 1]); "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- binning ----------------------------------------------------------------------------------


def test_nan_free_data_bin_exactly_as_before():
    X = np.random.default_rng(1).normal(size=(500, 4))
    binned = bin_features(X, max_bins=16)
    assert binned.missing_bin is None and binned.ordered
    assert binned.max_bins == 16 and binned.codes.max() < 16


def test_missing_values_get_the_last_bin_and_categories_their_own():
    X = np.array([[0.5, 2.0], [1.5, 0.0], [np.nan, 1.0], [2.5, np.nan]])
    binned = bin_features(X, max_bins=4, n_categories=np.array([0, 3]))
    assert binned.missing_bin == 4 and binned.max_bins == 5
    assert binned.codes.tolist() == [[0, 1, 4, 2], [2, 0, 1, 4]]
    assert binned.categorical.tolist() == [False, True]
    assert binned.bin_counts[:, 4].tolist() == [1, 1]


def test_training_data_warn_only_when_missing_values_are_allowed():
    X = np.array([[np.nan, 1.0], [np.nan, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DataError, match="missing value"):
            TrainingData(X, [0, 1])
    with pytest.warns(DataWarning):
        TrainingData(X, [0, 1], allow_missing=True)


@pytest.mark.filterwarnings("ignore:The Dataframe Interchange Protocol is deprecated")
def test_a_dataframe_interchange_object_is_read_through_pandas():
    df, _ = frame(8)
    schema, X = FeatureSchema.learn(df.__dataframe__())
    expected_schema, expected = FeatureSchema.learn(df)
    assert schema.names == expected_schema.names
    assert schema.categorical.tolist() == expected_schema.categorical.tolist()
    np.testing.assert_array_equal(X, expected)

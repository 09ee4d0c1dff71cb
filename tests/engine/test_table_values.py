"""Tables at predict time: categories are matched by value and type, never read as category
indices from a table; names, dates, complex numbers, unseen categories, empty tables and
pyarrow tables are each handled or refused clearly (boostkit.features)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
from boostkit.errors import DataError, DataWarning, ModelFormatError
from boostkit.features import FeatureSchema

pd = pytest.importorskip("pandas")


def coded(n=600, seed=0):
    """A table whose label depends on an integer code 1..4 (a pandas category column)."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(1, 5, n)
    y = np.where(np.isin(codes, [2, 4]) ^ (rng.random(n) < 0.05), "yes", "no")
    return pd.DataFrame({"x": rng.normal(size=n), "code": pd.Categorical(codes)}), codes, y


# -- categories by value ------------------------------------------------------------------------


def test_integer_categories_predicted_from_an_int_column_are_matched_by_value():
    d, codes, y = coded()
    model = boostkit.Booster("real-adaboost", n_rounds=30).fit(d, y)
    sub = d[codes < 4]
    as_int = sub.assign(code=sub["code"].astype(int))
    np.testing.assert_array_equal(model.predict(as_int), model.predict(sub))
    assert (model.predict(as_int) == y[codes < 4]).mean() > 0.9


def test_integer_categories_stay_numbers_in_the_schema():
    d, _, _ = coded(20)
    schema, _ = FeatureSchema.learn(d)
    assert schema.categories[1].dtype.kind == "f"
    assert schema.categories[1].tolist() == [1.0, 2.0, 3.0, 4.0]


def test_numbers_where_text_categories_were_fitted_are_refused_naming_the_column():
    d, codes, y = coded()
    text = d.assign(code=d["code"].astype(str))  # '1'..'4': text categories
    model = boostkit.Booster("real-adaboost", n_rounds=5).fit(text, y)
    assert model.features.categories[1].tolist() == ["1", "2", "3", "4"]
    with pytest.raises(DataError, match=r"X column 1 \('code'\) holds numbers \(e.g. 4.0\), but "
                                        r"the model was fitted with text categories there"):
        model.predict(d.assign(code=4))
    with pytest.raises(DataError, match=r"column 1 \('code'\) holds text \(e.g. '1'\), but the "
                                        r"model was fitted with number categories there"):
        boostkit.Booster("real-adaboost", n_rounds=5).fit(d, y).predict(d.assign(code="1"))


def test_encoded_arrays_still_hold_category_indices():
    d, _, y = coded(200)
    text = d.assign(code=d["code"].astype(str))
    schema, X = FeatureSchema.learn(text)
    model = boostkit.Booster("real-adaboost", n_rounds=5).fit(X, y, features=schema)
    with pytest.warns(DataWarning, match="X does not have valid feature names"):
        from_indices = model.predict(X)
    np.testing.assert_array_equal(from_indices, model.predict(text))


def test_one_vs_rest_matches_number_categories_by_value():
    d, codes, _ = coded(300)
    y = np.array(["a", "b", "c"])[codes % 3]
    model = boostkit.Booster("adaboost", n_rounds=5, multiclass="one-vs-rest").fit(d, y)
    assert all(m.features.categories[1].tolist() == [1.0, 2.0, 3.0, 4.0] for m in model.models)
    np.testing.assert_array_equal(model.predict(d.assign(code=codes)), model.predict(d))


def test_a_float_category_and_an_int_are_the_same_value():
    values = pd.DataFrame({"v": pd.Series([2.0, 3.5, 1, 2.0, None], dtype=object)})
    schema, X = FeatureSchema.learn(values)
    assert schema.categories[0].tolist() == [1.0, 2.0, 3.5]
    np.testing.assert_array_equal(X[:, 0], [1, 2, 0, 1, np.nan])
    again = schema.transform(pd.DataFrame({"v": pd.Series([2, 1.0, 3.5], dtype=object)}))
    np.testing.assert_array_equal(again[:, 0], [1, 0, 2])
    np.testing.assert_array_equal(schema.transform(pd.DataFrame({"v": [2, 1]}))[:, 0], [1, 0])


def test_numbers_and_text_in_one_column_are_refused_not_merged():
    mixed = pd.DataFrame({"v": pd.Series([1, "1", 2, "2"], dtype=object)})
    with pytest.raises(DataError, match=r"X column 0 \('v'\) mixes numbers and text \(e.g. 1 and "
                                        r"'1'\).*astype\(str\)"):
        boostkit.Booster("adaboost", n_rounds=2).fit(mixed, [0, 1, 0, 1])


def test_values_that_are_neither_numbers_nor_text_are_refused():
    odd = pd.DataFrame({"v": pd.Series([(1, 2), (3, 4), (1, 2), (3, 4)], dtype=object)})
    with pytest.raises(DataError, match=r"X column 0 \('v'\) holds tuple values \(e.g. \(1, 2\)\)"):
        FeatureSchema.learn(odd)


def test_parts_of_one_table_must_agree_on_a_column_s_type():
    numbers, _ = FeatureSchema.learn(pd.DataFrame({"v": pd.Categorical([1, 2])}))
    more, _ = FeatureSchema.learn(pd.DataFrame({"v": pd.Categorical([3, 2])}))
    text, _ = FeatureSchema.learn(pd.DataFrame({"v": pd.Categorical(["1", "2"])}))
    assert FeatureSchema.union([numbers, more]).categories[0].tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(DataError, match=r"column 0 \('v'\) holds numbers in some parts and text"):
        FeatureSchema.union([numbers, text])


# -- names --------------------------------------------------------------------------------------


def test_a_table_reaching_a_model_fitted_without_names_is_warned_about():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    model = boostkit.Booster("adaboost", n_rounds=5).fit(X, X[:, 0] > 0)
    with pytest.warns(DataWarning, match="X has feature names, but the model was fitted without "
                                         "feature names"):
        model.predict(pd.DataFrame(X[:, ::-1], columns=["c", "b", "a"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(X)


def test_an_array_reaching_a_model_fitted_on_a_table_is_warned_about(tmp_path):
    d, _, y = coded(200)
    model = boostkit.Booster("adaboost", n_rounds=5).fit(d, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = boostkit.load_model(model.save(tmp_path / "m.npz"))
    for fitted in (model, loaded):
        with pytest.warns(DataWarning, match="X does not have valid feature names, but the model "
                                             "was fitted with feature names"):
            fitted.predict(d.to_numpy(dtype=object))
    # The loader's schema is made for its encoded arrays: they are expected.
    schema, X = FeatureSchema.learn(d.assign(code=d["code"].astype(str)))
    loader = FeatureSchema(2, schema.names, schema.categories)
    encoded = boostkit.Booster("adaboost", n_rounds=5).fit(X, y, features=loader)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encoded.predict(X)


# -- dates, durations, complex numbers ------------------------------------------------------------


@pytest.mark.parametrize("column, what", [
    (pd.Series(pd.date_range("2020-01-01", periods=8, freq="D")), "dates"),
    (pd.Series(pd.date_range("2020-01-01", periods=8, freq="D", tz="UTC")), "dates"),
    (pd.Series(pd.to_timedelta(np.arange(8), "s")), "durations"),
])
def test_dates_and_durations_are_refused_naming_the_column(column, what):
    table = pd.DataFrame({"x": np.arange(8.0), "t": column})
    with pytest.raises(DataError, match=rf"X column 1 \('t'\) holds {what} .*convert"):
        boostkit.Booster("adaboost", n_rounds=2).fit(table, np.arange(8) % 2)
    model = boostkit.Booster("adaboost", n_rounds=2).fit(table.assign(t=np.arange(8.0)),
                                                         np.arange(8) % 2)
    with pytest.raises(DataError, match=rf"X column 1 \('t'\) holds {what}"):
        model.predict(table)


def test_complex_columns_are_refused_like_complex_arrays():
    table = pd.DataFrame({"x": np.arange(8.0), "z": np.arange(8) + 1j})
    with pytest.raises(DataError, match=r"X column 1 \('z'\) has complex values; boosting needs "
                                        r"real features"):
        boostkit.Booster("adaboost", n_rounds=2).fit(table, np.arange(8) % 2)
    objects = table.assign(z=pd.Series(list(np.arange(8) + 1j), dtype=object))
    with pytest.raises(DataError, match=r"X column 1 \('z'\) has complex values"):
        boostkit.Booster("adaboost", n_rounds=2).fit(objects, np.arange(8) % 2)


# -- unseen categories ----------------------------------------------------------------------------


def test_unseen_categories_are_counted_in_a_warning():
    d, codes, y = coded(200)
    model = boostkit.Booster("adaboost", n_rounds=5).fit(d.assign(code=d["code"].astype(str)), y)
    later = d.assign(code=np.where(codes == 4, "9", d["code"].astype(str)))
    with pytest.warns(DataWarning, match=rf"X column 1 \('code'\): {(codes == 4).sum()} rows hold "
                                         r"a category not seen in training \(e.g. '9'\)"):
        model.predict(later)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(d.assign(code=d["code"].astype(str)))
    # An array of values is counted too (its text is matched, its numbers are indices).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.predict(later.to_numpy(dtype=object))
    assert any(f"{(codes == 4).sum()} rows hold a category not seen" in str(w.message)
               for w in caught)


# -- empty tables and pyarrow ---------------------------------------------------------------------


def test_empty_tables_are_refused_clearly():
    d, _, y = coded(50)
    with pytest.raises(DataError, match=r"X has 0 features \(shape \(50, 0\)\)"):
        boostkit.Booster("adaboost", n_rounds=2).fit(d[[]], y)
    with pytest.raises(DataError, match=r"X is empty: got 0 samples \(shape \(0, 2\)\)"):
        boostkit.Booster("adaboost", n_rounds=2).fit(d.iloc[:0], y[:0])
    model = boostkit.Booster("adaboost", n_rounds=2).fit(d, y)
    with pytest.raises(DataError, match=r"X is empty: got 0 samples \(shape \(0, 2\)\)"):
        model.predict(d.iloc[:0])


def test_the_estimator_refuses_an_empty_table_clearly():
    from boostkit.sklearn import BoostClassifier

    d, _, y = coded(50)
    with pytest.raises(ValueError, match="0 samples"):
        BoostClassifier("adaboost", n_rounds=2).fit(d.iloc[:0], y[:0])


def test_a_pyarrow_table_is_read_with_its_categories():
    pa = pytest.importorskip("pyarrow")
    d, codes, y = coded(300)
    table = pa.Table.from_pandas(d.assign(code=d["code"].astype(str)), preserve_index=False)
    model = boostkit.Booster("real-adaboost", n_rounds=10).fit(table, y)
    assert model.feature_names == ("x", "code")
    assert model.features.categories[1].tolist() == ["1", "2", "3", "4"]
    np.testing.assert_array_equal(model.predict(table),
                                  model.predict(d.assign(code=d["code"].astype(str))))
    dictionary = pa.Table.from_pandas(d, preserve_index=False)  # a dictionary column of integers
    np.testing.assert_array_equal(model.predict(table), boostkit.Booster(
        "real-adaboost", n_rounds=10).fit(dictionary, y).predict(dictionary))


def test_the_estimator_reads_a_pyarrow_table_with_its_categories():
    pa = pytest.importorskip("pyarrow")
    from boostkit.sklearn import BoostClassifier

    d, _, y = coded(300)
    text = d.assign(code=d["code"].astype(str))
    clf = BoostClassifier("real-adaboost", n_rounds=10).fit(pa.Table.from_pandas(text), y)
    assert clf.feature_names_in_.tolist() == ["x", "code"]
    assert clf.model_.features.categories[1].tolist() == ["1", "2", "3", "4"]
    np.testing.assert_array_equal(clf.predict(pa.Table.from_pandas(text)), clf.predict(text))


@pytest.mark.parametrize("labels", [2, 3])  # 3: one-vs-rest, a model per class
def test_the_estimator_matches_an_object_arrays_text_as_the_booster_does(labels):
    from boostkit.sklearn import BoostClassifier

    d, codes, y = coded(300)
    y = y if labels == 2 else np.array(["a", "b", "c"])[(codes + (y == "yes")) % 3]
    text = d.assign(code=d["code"].astype(str))
    clf = BoostClassifier("adaboost", n_rounds=10).fit(text, y)
    booster = boostkit.Booster("adaboost", n_rounds=10, multiclass="auto").fit(text, y)
    # '1'..'3' are text categories; scikit-learn's check_array would make them 1.0..3.0, which
    # under text categories are category indices.
    rows = text[codes < 4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no feature names: said once, as the next test shows
        by_estimator = clf.predict(rows.to_numpy(dtype=object))
        by_booster = booster.predict(rows.to_numpy(dtype=object))
    np.testing.assert_array_equal(by_estimator, clf.predict(rows))
    np.testing.assert_array_equal(by_estimator, by_booster)


@pytest.mark.parametrize("labels", [2, 3])
@pytest.mark.parametrize("method", ["predict", "staged_predict"])
def test_the_estimator_says_once_that_feature_names_differ_from_the_fits(labels, method):
    from boostkit.sklearn import BoostClassifier

    d, codes, y = coded(120)
    y = y if labels == 2 else np.array(["a", "b", "c"])[codes % 3]
    d = d.assign(code=codes.astype(float))
    for fitted, given, said in [(d, d.to_numpy(), "X does not have valid feature names"),
                                (d.to_numpy(), d, "X has feature names")]:
        clf = BoostClassifier("adaboost", n_rounds=3).fit(fitted, y)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(clf, method)(given)
            list(out) if method.startswith("staged") else out
        assert [str(w.message) for w in caught if said in str(w.message)] == [
            f"{said}, but BoostClassifier was fitted {'with' if 'not' in said else 'without'} "
            "feature names"]


# -- the model file -------------------------------------------------------------------------------


def test_category_values_round_trip_through_the_file_with_their_types(tmp_path):
    d, codes, y = coded(300)
    table = d.assign(word=np.where(codes > 2, "high", "low"))
    model = boostkit.Booster("real-adaboost", n_rounds=10).fit(table, y)
    loaded = boostkit.load_model(model.save(tmp_path / "m.npz"))
    assert loaded.features.categories[1].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert loaded.features.categories[2].tolist() == ["high", "low"]
    as_int = table.assign(code=codes)
    np.testing.assert_array_equal(loaded.predict(as_int), model.predict(table))


def _rewrite(path, edit):
    with np.load(path, allow_pickle=False) as npz:
        arrays = {key: npz[key] for key in npz.files}
    structure = json.loads(arrays.pop("__model__").tobytes())
    edit(structure)
    blob = np.frombuffer(json.dumps(structure).encode("utf-8"), dtype=np.uint8)
    np.savez(path, __model__=blob, **arrays)


def test_a_version_4_schema_loads_as_not_from_a_table(tmp_path):
    d, _, y = coded(200)
    model = boostkit.Booster("adaboost", n_rounds=5).fit(d, y)
    path = model.save(tmp_path / "m.npz")
    _rewrite(path, lambda s: (s.update(version=4), s["features"].pop("table")))
    loaded = boostkit.load_model(path)
    assert loaded.feature_names == ("x", "code") and not loaded.features.table
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(loaded.predict(d), model.predict(d))
    _rewrite(path, lambda s: s["features"].update(table="yes"))
    with pytest.raises(ModelFormatError, match="the features' 'table' must be true or false, "
                                               "got 'yes'"):
        boostkit.load_model(path)


def _saved_schema(names, categories):
    schema = FeatureSchema(len(names), tuple(names), tuple(categories))
    arrays: dict = {}
    return schema.to_state(arrays, "features."), arrays


@pytest.mark.parametrize("categories, message", [
    (np.array(["b", "a"]), "not sorted"),
    (np.array(["a", "a", "b"]), "more than once"),
    (np.array([1.0, np.nan]), "NaN"),
    (np.array([f"c{i:03d}" for i in range(256)]), "256 categories, more than 255"),
])
def test_saved_category_arrays_are_checked_naming_the_feature(categories, message):
    state, arrays = _saved_schema(["x", "code"], [None, categories])
    with pytest.raises(ModelFormatError, match=rf"feature 1 \('code'\).*{message}"):
        FeatureSchema.from_state(state, arrays, 2)


def test_saved_feature_names_must_be_unique():
    state, arrays = _saved_schema(["x", "x"], [None, None])
    with pytest.raises(ModelFormatError, match="the feature names give 'x' twice"):
        FeatureSchema.from_state(state, arrays, 2)


# -- property: any representation of the same values ----------------------------------------------

#: One column of small integer codes, None where missing, in each representation a table may
#: give it.
REPRESENTATIONS = {
    "category": lambda v: pd.Categorical(v),
    "object": lambda v: pd.Series(v, dtype=object),
    "float-object": lambda v: pd.Series([None if x is None else float(x) for x in v],
                                        dtype=object),
    "int": lambda v: pd.Series(v, dtype="Int64"),
    "float": lambda v: pd.Series([np.nan if x is None else x for x in v], dtype=np.float64),
    "string": lambda v: pd.Series([None if x is None else str(x) for x in v], dtype="string"),
    "text-object": lambda v: pd.Series([None if x is None else str(x) for x in v], dtype=object),
    "text-category": lambda v: pd.Categorical([None if x is None else str(x) for x in v]),
}
TEXT = {"string", "text-object", "text-category"}
CODES = st.one_of(st.none(), st.integers(-3, 6))


@settings(max_examples=80, deadline=None)
@given(codes=st.lists(CODES, min_size=1, max_size=30).filter(lambda v: set(v) - {None}),
       later=st.lists(CODES, min_size=1, max_size=30),
       fitted=st.sampled_from(sorted(REPRESENTATIONS)),
       predicted=st.sampled_from(sorted(REPRESENTATIONS)))
def test_categories_are_matched_by_value_whatever_the_representation(codes, later, fitted,
                                                                    predicted):
    """Fitted on one representation and given another, a value reads as the index of the
    equal category (missing or unseen: NaN), or the column is refused when numbers meet text."""
    schema, _ = FeatureSchema.learn(pd.DataFrame({"c": REPRESENTATIONS[fitted](codes)}),
                                    categorical_features=["c"])
    table = pd.DataFrame({"c": REPRESENTATIONS[predicted](later)})
    present = [v for v in later if v is not None]
    if (fitted in TEXT) != (predicted in TEXT) and present:
        with pytest.raises(DataError, match=r"X column 0 \('c'\) holds (numbers|text)"):
            schema.transform(table)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # unseen values: counted, tested above
        got = schema.transform(table)[:, 0]
    seen = sorted(set(codes) - {None}, key=str if fitted in TEXT else None)
    expected = [seen.index(v) if v in seen else np.nan for v in later]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("fitted", sorted(REPRESENTATIONS))
def test_a_model_predicts_alike_on_every_representation_of_its_values(fitted):
    rng = np.random.default_rng(3)
    codes = [None if rng.random() < 0.1 else int(c) for c in rng.integers(1, 5, 300)]
    y = np.array([c in (2, 4) for c in codes])
    tables = {k: pd.DataFrame({"x": np.zeros(300), "c": make(codes)})
              for k, make in REPRESENTATIONS.items()}
    model = boostkit.Booster("real-adaboost", n_rounds=5,
                             categorical_features=["c"]).fit(tables[fitted], y)
    expected = model.predict(tables[fitted])
    for predicted, table in tables.items():
        if (fitted in TEXT) != (predicted in TEXT):
            with pytest.raises(DataError, match=r"X column 1 \('c'\) holds"):
                model.predict(table)
        else:
            np.testing.assert_array_equal(model.predict(table), expected, err_msg=predicted)


@pytest.mark.parametrize("dtype", ["datetime64[D]", "timedelta64[s]"])
def test_date_and_duration_arrays_are_refused_like_table_columns(dtype):
    X = np.arange(16).astype(dtype).reshape(8, 2)
    with pytest.raises(DataError, match=r"X holds dates or durations .*convert them to numbers"):
        boostkit.Booster("adaboost", n_rounds=2).fit(X, np.arange(8) % 2)
    model = boostkit.Booster("adaboost", n_rounds=2).fit(X.astype(np.int64), np.arange(8) % 2)
    with pytest.raises(DataError, match=r"holds dates or durations"):
        model.predict(X)

"""The skl2onnx converters of boostkit's scikit-learn estimators: ``skl2onnx.to_onnx(estimator,
X[:1])`` works once boostkit.onnx is imported, in pipelines too, and onnxruntime runs the graph
with the estimator's predictions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import skl2onnx
from onnx_checks import session
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from boostkit.datasets import load
from boostkit.onnx import ExportError
from boostkit.sklearn import AdaBoostClassifier, AdaBoostRegressor, BoostClassifier


@pytest.fixture(scope="module")
def wisconsin():
    data = load("breast_cancer_wisconsin", dropna=True)
    return data.X, data.y


@pytest.fixture(scope="module")
def contraceptive():
    data = load("contraceptive")
    return data.X, data.y.astype(int)


def run(estimator, X, dtype=np.float64, **options):
    graph = skl2onnx.to_onnx(estimator, X[:1].astype(dtype), options=options or None)
    return session(graph).run(None, {"X": X.astype(dtype)})


def assert_same_classifier(estimator, X, dtype=np.float64):
    """Labels identical, probabilities within 1e-12 (float64) or float32 rounding."""
    label, probabilities = run(estimator, X, dtype, zipmap=False)
    seen = X.astype(dtype)
    np.testing.assert_array_equal(label, estimator.predict(seen))
    np.testing.assert_allclose(probabilities, estimator.predict_proba(seen), rtol=0,
                               atol=1e-12 if dtype == np.float64 else 1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scaler_and_dropin_adaboost_pipeline(wisconsin, dtype):
    X, y = wisconsin
    pipeline = make_pipeline(StandardScaler(),
                             AdaBoostClassifier(n_estimators=50, random_state=0)).fit(X, y)
    assert_same_classifier(pipeline, X, dtype)


def test_dropin_trees_several_classes(contraceptive):
    X, y = contraceptive
    estimator = AdaBoostClassifier(DecisionTreeClassifier(max_depth=3), n_estimators=20,
                                   random_state=0).fit(X, y)
    assert_same_classifier(estimator, X)
    assert_same_classifier(estimator, X, np.float32)


def test_zipmap_and_nocl(contraceptive):
    X, y = contraceptive
    estimator = AdaBoostClassifier(n_estimators=10, random_state=0).fit(X, y)
    # zipmap (skl2onnx's default; ZipMap reads float32): one {class: probability} per row
    label, rows = run(estimator, X[:5], np.float32)
    np.testing.assert_array_equal(label, estimator.predict(X[:5].astype(np.float32)))
    assert list(rows[0]) == [1, 2, 3]
    np.testing.assert_allclose([list(r.values()) for r in rows], estimator.predict_proba(X[:5]),
                               atol=1e-6)
    indices, _ = run(estimator, X[:5], zipmap=False, nocl=True)
    np.testing.assert_array_equal(indices, np.searchsorted([1, 2, 3], estimator.predict(X[:5])))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dropin_regressor_weighted_median(contraceptive, dtype):
    X, y = contraceptive
    target = X[:, 0] + 3.0 * y
    estimator = AdaBoostRegressor(n_estimators=20, random_state=0).fit(X, target)
    (prediction,) = run(estimator, X, dtype)
    assert prediction.shape == (X.shape[0], 1)
    np.testing.assert_allclose(prediction[:, 0], estimator.predict(X.astype(dtype)), rtol=1e-7,
                               atol=0)


@pytest.mark.parametrize("algorithm, n_columns", [("real-adaboost", 1), ("samme", 3),
                                                  ("adaboost", 3)])
def test_boost_classifier_in_a_pipeline(wisconsin, contraceptive, algorithm, n_columns):
    X, y = wisconsin if n_columns == 1 else contraceptive
    pipeline = make_pipeline(StandardScaler(), BoostClassifier(algorithm, 20, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipeline.fit(X, y)
    assert_same_classifier(pipeline, X)


def test_boost_classifier_missing_values(wisconsin):
    X, y = wisconsin
    X = X.copy()
    X[::7, 1] = np.nan
    estimator = BoostClassifier("real-adaboost", 20, random_state=0).fit(X, y)
    assert_same_classifier(estimator, X)


def test_what_the_converters_refuse(wisconsin):
    X, y = wisconsin
    foreign = AdaBoostClassifier(LogisticRegression(max_iter=200), n_estimators=3,
                                 random_state=0).fit(X, y)
    with pytest.raises(ExportError, match="fitted by scikit-learn's own loop"):
        skl2onnx.to_onnx(foreign, X[:1])
    Y = np.column_stack([y == y[0], X[:, 0] > X[:, 0].mean()]).astype(int)
    multilabel = BoostClassifier("adaboost-mh", 5).fit(X, Y)
    with pytest.raises(ExportError, match="multi-label"):
        skl2onnx.to_onnx(multilabel, X[:1])
    # A split on a set of categories needs the opset 5 that skl2onnx does not write.
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 4, size=(300, 1)).astype(float)
    categorical = BoostClassifier("real-adaboost", 5, categorical_features=[0]).fit(
        codes, codes[:, 0] % 2)
    with pytest.raises(ExportError, match="set of categories"):
        skl2onnx.to_onnx(categorical, codes[:1])


def test_dropins_on_features_split_exactly_into_several_columns():
    """Features of more distinct values than bins are split exactly, through several clipped
    columns of one feature (boostkit.sklearn_native.exact_columns): the graph reads each
    column's feature."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(800, 3))
    y = X[:, 0] + np.sin(3 * X[:, 1]) > 0
    classifier = AdaBoostClassifier(DecisionTreeClassifier(max_depth=2), n_estimators=15,
                                    random_state=0).fit(X, y)
    assert classifier.estimators_[0].columns is not None
    assert_same_classifier(classifier, X)
    regressor = AdaBoostRegressor(n_estimators=15, random_state=0).fit(X, X[:, 0] * X[:, 2])
    assert regressor.estimators_[0].columns is not None
    (prediction,) = run(regressor, X)
    np.testing.assert_allclose(prediction[:, 0], regressor.predict(X), rtol=1e-12, atol=0)

"""boostkit.onnx.to_onnx: graphs run by onnxruntime give boostkit's labels, probabilities and
margins, for stumps and trees, every combination the issue names, several classes, multi-label
data, missing values and categories; other terms are refused, named."""

from __future__ import annotations

import os
import warnings

import attrs
import numpy as np
import onnx
import pandas as pd
import pytest
from onnx_checks import assert_serves_as_boostkit, session
from sklearn.tree import DecisionTreeClassifier

import boostkit
from boostkit.datasets import load
from boostkit.onnx import ExportError, export_file, graph_input, to_onnx, tree_form
from boostkit.study.sources import resolve_datasets


@pytest.fixture(scope="module")
def wisconsin():
    data = load("breast_cancer_wisconsin", dropna=True)
    return data.X, data.y


@pytest.fixture(scope="module")
def contraceptive():
    data = load("contraceptive")  # three classes
    return data.X, data.y


@pytest.fixture(scope="module")
def adult_sample():
    """3 000 rows of adult: eight categorical columns and missing values."""
    data = load("adult")
    rows = np.random.default_rng(0).choice(data.X.shape[0], 3000, replace=False)
    assert np.isnan(data.X[rows]).any() and data.features.categorical.sum() == 8
    return data.X[rows], data.y[rows], data.features


@pytest.fixture(scope="module")
def multilabel():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 5))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] + X[:, 2] > 0, X[:, 3] > 1]).astype(int)
    return X, Y


def fit(recipe, X, y, *, n_rounds=25, features=None, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return boostkit.Booster(recipe, n_rounds=n_rounds, random_state=0, **kwargs).fit(
            X, y, features=features)


TREE = {"proposal": ("tree", {"max_depth": 3})}


@pytest.mark.parametrize("recipe, options", [
    ("adaboost", {}),            # discrete: +-1 cells, constant alpha
    ("real-adaboost", {}),       # real cell values
    ("gentle-adaboost", {}),
    ("logitboost", {}),
    ("madaboost", {}),
    ("real-adaboost", TREE),     # trees of real leaf values
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_two_classes(wisconsin, recipe, options, dtype):
    X, y = wisconsin
    assert_serves_as_boostkit(fit(recipe, X, y, **options), X, dtype=dtype)


@pytest.mark.parametrize("recipe, options", [
    ("adaboost-mh", {}), ("discrete-adaboost-mh", {}), ("samme", {}),
    ("samme", {"proposal": ("tree", {"max_depth": 2})}), ("real-adaboost", TREE),
    ("adaboost", {"multiclass": "one-vs-rest"}),
])
def test_several_classes(contraceptive, recipe, options):
    X, y = contraceptive
    model = fit(recipe, X, y, **options)
    assert model.n_columns == 3
    assert_serves_as_boostkit(model, X)
    assert_serves_as_boostkit(model, X, dtype="float32")


@pytest.mark.parametrize("recipe, options", [
    ("adaboost-mh", {}), ("discrete-adaboost-mh", {}),
    ("adaboost", {"multiclass": "one-vs-rest"}),
])
def test_multilabel(multilabel, recipe, options):
    X, Y = multilabel
    model = fit(recipe, X, Y, **options)
    assert model.multilabel
    assert_serves_as_boostkit(model, X)


@pytest.mark.parametrize("recipe, options", [
    ("real-adaboost", {}), ("adaboost", {}), ("samme", TREE), ("real-adaboost", TREE),
])
def test_missing_values_and_categories(adult_sample, recipe, options):
    X, y, features = adult_sample
    model = fit(recipe, X, y, features=features, **options)
    forms = [tree_form(h) for h in model.hypotheses]
    # The terms split categories (set membership) and learnt where missing values go.
    assert any(m is not None for form in forms for m in form.members)
    assert any(form.missing_left.any() for form in forms)
    assert any(not form.missing_left.all() for form in forms)
    assert_serves_as_boostkit(model, X)
    assert_serves_as_boostkit(model, X, dtype="float32")


def test_keel_categories_and_classes():
    crx, iris = (source.load() for source in resolve_datasets(["keel/crx", "keel/iris"]))
    model = fit("real-adaboost", crx.X, crx.y, features=crx.features)
    assert "category-stump" in {h.name for h in model.hypotheses}
    assert_serves_as_boostkit(model, crx.X)
    assert_serves_as_boostkit(fit("samme", iris.X, iris.y), iris.X)


def test_a_table_is_given_as_category_indices():
    """The graph takes categorical columns as category indices (graph_input): a table's text
    categories, a missing value and a category unseen in training all predict as boostkit
    predicts the table."""
    rng = np.random.default_rng(2)
    colour = rng.choice(["red", "green", "blue", "grey"], 600)
    size = rng.normal(size=600)
    y = (colour == "red") ^ (size > 0.5)
    table = pd.DataFrame({"colour": pd.Categorical(colour), "size": size})
    model = fit("real-adaboost", table, y, n_rounds=10)
    new = pd.DataFrame({"colour": pd.Categorical(["red", "blue", None, "violet"]),
                        "size": [0.0, 1.0, np.nan, -1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        matrix = graph_input(model, new)
        want = model.predict(new), model.decision_function(new)
    categories = list(model.features.categories[0])
    np.testing.assert_array_equal(matrix[:2, 0], [categories.index("red"),
                                                  categories.index("blue")])
    assert np.isnan(matrix[2:, 0]).all()  # missing, and unseen in training
    label, _, margin = session(to_onnx(model)).run(None, {"X": matrix})
    np.testing.assert_array_equal(label, want[0])
    np.testing.assert_allclose(margin, want[1], rtol=0, atol=1e-12)


def test_best_round_and_labels_of_other_types(wisconsin):
    X, y = wisconsin
    model = attrs.evolve(fit("real-adaboost", X, y), best_round=3)
    assert not np.allclose(model.decision_function(X),
                           attrs.evolve(model, best_round=None).decision_function(X))
    assert_serves_as_boostkit(model, X)
    for labels in ((y == y[0]).astype(int) * 7, y == y[0], (y == y[0]) * 0.5):
        assert_serves_as_boostkit(fit("adaboost", X, labels, n_rounds=5), X)


def test_the_graph_is_one_tree_ensemble(contraceptive):
    X, y = contraceptive
    graph = to_onnx(fit("adaboost-mh", X, y, n_rounds=10))
    onnx.checker.check_model(graph, full_check=True)
    ml = [node for node in graph.graph.node if node.domain == "ai.onnx.ml"]
    assert [node.op_type for node in ml] == ["TreeEnsemble"]
    assert {o.domain: o.version for o in graph.opset_import} == {"": 21, "ai.onnx.ml": 5}
    assert [o.name for o in graph.graph.output] == ["label", "probabilities", "margin"]


def test_tree_forms_are_the_hypotheses_cells(adult_sample):
    """TreeForm.leaves (the meaning the graph is built from) is the hypothesis' own cells,
    missing values, unseen category codes and non-integer codes included."""
    X, y, features = adult_sample
    model = fit("real-adaboost", X, y, features=features, proposal=("tree", {"max_depth": 3}))
    odd = X.copy()
    categorical = np.flatnonzero(features.categorical)
    odd[:50, categorical] = 99.0  # no such category
    odd[50:100, categorical] = 0.5
    odd[100:150] = np.nan
    for h in model.hypotheses:
        np.testing.assert_array_equal(tree_form(h).leaves(odd), h.cells(odd))


@pytest.mark.parametrize("recipe, options, named", [
    ("pav-adaboost", {}, "weak hypothesis 'projection'"),  # PAV over a projection
    ("naive-bayes", {}, "weak hypothesis 'linear-votes'"),
    ("adaboost", {"proposal": ("sklearn-estimator",
                               {"estimator": DecisionTreeClassifier(max_depth=2)})},
     "weak hypothesis 'fitted-estimator'"),
    ("multinomial-logitboost", {}, "weak hypothesis 'class-stumps'"),
    ("popbm", {}, "weak hypothesis 'feature-sign'"),
    ("weightboost", {}, "contribution 'input-dependent-term' gives no value per cell"),
])
def test_terms_without_tree_form_are_refused_by_name(wisconsin, recipe, options, named):
    X, y = wisconsin
    with pytest.raises(ExportError, match=f"round 1: {named}"):
        to_onnx(fit(recipe, X, y, n_rounds=3, **options))


def test_a_ranker_one_vs_rest_is_refused_naming_the_class_model(contraceptive):
    X, y = contraceptive
    with pytest.raises(ExportError, match="round 1 of class 0's model: weak hypothesis "
                                          "'threshold-ranker'"):
        to_onnx(fit("rankboost", X, y, n_rounds=3, multiclass="one-vs-rest"))


def test_zero_rounds_and_bad_arguments(wisconsin):
    X, y = wisconsin
    model = fit("adaboost", X, y, n_rounds=3)
    empty = attrs.evolve(model, hypotheses=(), contributions=(), records=(), best_round=None)
    with pytest.raises(ExportError, match="0 rounds"):
        to_onnx(empty)
    with pytest.raises(ValueError, match="dtype must be 'float64' or 'float32', got 'int8'"):
        to_onnx(model, dtype="int8")
    with pytest.raises(ExportError, match="expected a boostkit.BoostModel"):
        to_onnx(object())


def test_export_file_writes_atomically(tmp_path, wisconsin):
    X, y = wisconsin
    saved = fit("real-adaboost", X, y, n_rounds=10).save(tmp_path / "model.npz")
    written = export_file(saved, tmp_path / "model.onnx")
    assert written == tmp_path / "model.onnx"
    label, _, _ = session(onnx.load(written)).run(None, {"X": X})
    np.testing.assert_array_equal(label, boostkit.load_model(saved).predict(X))
    with pytest.raises(ValueError, match="format must be one of 'onnx', got 'pmml'"):
        export_file(saved, tmp_path / "model.pmml", format="pmml")
    with pytest.raises(OSError):
        export_file(saved, tmp_path / "no such directory" / "model.onnx")
    refused = fit("pav-adaboost", X, y, n_rounds=2).save(tmp_path / "pav.npz")
    with pytest.raises(ExportError, match="projection"):
        export_file(refused, tmp_path / "pav.onnx")
    # A refusal, a bad format and a directory that cannot be written leave no file behind.
    assert sorted(os.listdir(tmp_path)) == ["model.npz", "model.onnx", "pav.npz"]


def test_a_failed_write_leaves_the_previous_file(tmp_path, wisconsin, monkeypatch):
    X, y = wisconsin
    saved = fit("adaboost", X, y, n_rounds=3).save(tmp_path / "model.npz")
    target = tmp_path / "model.onnx"
    target.write_bytes(b"previous")

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        export_file(saved, target)
    assert target.read_bytes() == b"previous"
    assert sorted(os.listdir(tmp_path)) == ["model.npz", "model.onnx"]

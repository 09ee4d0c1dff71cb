"""Targets a classifier cannot take are refused before fitting, with the reason.

A float y whose values are not whole numbers is "continuous" (scikit-learn's
``type_of_target``): it is refused, with more than two distinct values, rather than fitted as
one class per value. A multi-label indicator matrix given to a recipe that takes one class per
example (``"single-label"``) is a RecipeError, not a failure inside the fit; ``"auto"`` fits it
one-vs-rest. A sparse y is read as the dense one; ragged label lists are refused.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import boostkit
from boostkit.capabilities import SINGLE_LABEL, binary_only_components
from boostkit.data import encode_labels
from boostkit.errors import DataError, RecipeError

ALGORITHMS = sorted(boostkit.get_registry().algorithms())
rng = np.random.default_rng(0)
X = rng.normal(size=(90, 3))
Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0, X[:, 0] + X[:, 2] > 0]).astype(int)


def _fit(name, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return boostkit.Booster(name, n_rounds=3, random_state=0, **params).fit(X, y)


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("multiclass", ["native", "auto"])
def test_a_continuous_target_is_refused_by_every_recipe(name, multiclass):
    with pytest.raises(DataError, match=r"y looks continuous.*90 distinct values.*classif"):
        _fit(name, rng.normal(size=90), multiclass=multiclass)


@pytest.mark.parametrize("y", [
    np.tile([0.0, 1.0, 2.0], 30),         # whole numbers in a float array: classes
    np.tile([-2.5, 0.5], 45),             # two values: a binary target, whatever they are
    np.tile(["a", "b", "c"], 30),
    np.tile([0.5, 1.5, 2.5], 30).astype(object),  # objects are labels as given
])
def test_float_class_codes_and_two_values_are_still_classes(y):
    assert encode_labels(y, 90).classes.shape[0] == np.unique(y).shape[0]


def test_the_continuous_message_says_what_to_do():
    y = np.tile([0.25, 0.5, 0.75], 30)
    with pytest.raises(DataError) as error:
        encode_labels(y, 90)
    message = str(error.value)
    assert "'continuous'" in message and "e.g. 0.25" in message
    assert "integers or strings" in message


def test_binary_only_components_counts_single_label_needs_on_multilabel_data():
    registry = boostkit.get_registry()
    components = registry.instantiate(registry.resolve("samme"))
    assert binary_only_components(components) == []
    blockers = binary_only_components(components, multilabel=True)
    assert {c.name for _, c in blockers} == {"samme-alpha", "samme-weights"}
    assert all(SINGLE_LABEL in c.needs for _, c in blockers)


@pytest.mark.parametrize("name", ["samme", "multinomial-logitboost"])
def test_a_single_label_recipe_refuses_multilabel_y_before_fitting(name):
    with pytest.raises(RecipeError, match=rf"recipe '{name}' takes one class per example: "
                                          r".*needs single-label y \('single-label'\).*"
                                          r"adaboost-mh.*one-vs-rest"):
        _fit(name, Y)


@pytest.mark.parametrize("name", ["samme", "multinomial-logitboost"])
def test_auto_fits_multilabel_y_one_vs_rest_for_a_single_label_recipe(name):
    model = _fit(name, Y, multiclass="auto")
    assert model.multiclass_strategy == "one-vs-rest" and model.multilabel
    assert model.predict(X).shape == Y.shape


@pytest.mark.parametrize("name", ALGORITHMS)
def test_every_recipe_fits_multilabel_y_or_refuses_it_before_fitting(name):
    """No HookError from inside a fit: each recipe fits natively, or says why not."""
    try:
        model = _fit(name, Y)
    except RecipeError:
        model = _fit(name, Y, multiclass="auto")
        assert model.multiclass_strategy == "one-vs-rest"
    assert model.predict(X).shape == Y.shape


def test_a_sparse_indicator_matrix_is_read_as_the_dense_one():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    dense = _fit("adaboost-mh", Y)
    sparse = _fit("adaboost-mh", scipy_sparse.csr_matrix(Y))
    np.testing.assert_array_equal(sparse.decision_function(X), dense.decision_function(X))
    assert sparse.multilabel


def test_a_sparse_column_of_labels_is_read_as_the_dense_one():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    dense = _fit("adaboost", Y[:, 0])
    sparse = _fit("adaboost", scipy_sparse.csr_matrix(Y[:, :1]))
    np.testing.assert_array_equal(sparse.decision_function(X), dense.decision_function(X))


@pytest.mark.parametrize("y", [
    [[0, 2], [1]] * 45,
    [(0,), (1, 2)] * 45,
    [{0, 2}, {1}] * 45,
])
def test_ragged_label_lists_are_refused_naming_the_indicator_matrix(y):
    with pytest.raises(DataError, match=r"y holds lists of labels.*indicator matrix"
                                        r".*MultiLabelBinarizer"):
        _fit("adaboost-mh", y)


def test_equal_length_label_lists_are_not_taken_for_an_indicator_matrix():
    """[[0, 2], [1, 2]] is two labels per example, not an indicator row: 2 is not 0 or 1."""
    with pytest.raises(DataError, match="must hold only 0 and 1"):
        _fit("adaboost-mh", [[0, 2], [1, 2]] * 45)

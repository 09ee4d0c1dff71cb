"""The engine over several classes: the pair contract, one-vs-rest, model files, bad input.

Schapire & Singer (1999), sections 7-9: three or more classes, or a multi-label indicator
matrix, are boosted as binary problems over (example, class) pairs; a recipe whose components do
not handle that runs as one-vs-rest when asked to.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit.data import encode_labels
from boostkit.errors import DataError, HookError, ModelFormatError, RecipeError
from boostkit.model import read_model_file, write_model_file
from boostkit.multiclass import OneVsRestModel


def blobs(n=240, n_classes=4, seed=0, labels=("ant", "bee", "cat", "dog", "eel")):
    rng = np.random.default_rng(seed)
    codes = np.arange(n) % n_classes
    X = rng.normal(size=(n, 5)) + 2.0 * np.eye(n_classes, 5)[codes]
    return X, np.array(labels[:n_classes])[codes]


# -- labels ---------------------------------------------------------------------------------------


def test_labels_become_a_sign_matrix_over_pairs():
    coding = encode_labels(np.array(["b", "a", "c", "a"]), 4)
    assert coding.classes.tolist() == ["a", "b", "c"] and coding.n_columns == 3
    np.testing.assert_array_equal(coding.labels, [1, 0, 2, 0])
    np.testing.assert_array_equal(coding.y, [[-1, 1, -1], [1, -1, -1], [-1, -1, 1], [1, -1, -1]])
    assert not coding.multilabel


def test_two_classes_keep_one_column_and_an_indicator_matrix_is_multilabel():
    assert encode_labels(np.array([3, 7, 7]), 3).y.tolist() == [-1.0, 1.0, 1.0]
    coding = encode_labels(np.array([[1, 0], [1, 1], [0, 0]]), 3)
    assert coding.multilabel and coding.labels is None and coding.classes.tolist() == [0, 1]
    np.testing.assert_array_equal(coding.y, [[1, -1], [1, 1], [-1, -1]])


def test_an_indicator_matrix_must_hold_zeros_and_ones():
    with pytest.raises(DataError, match="multi-label indicator matrix and must hold only 0 and 1"):
        encode_labels(np.array([[0, 2], [1, 0]]), 2)


def test_the_default_start_is_uniform_over_pairs():
    X, y = blobs()
    data = boostkit.data.TrainingData(X, y, np.arange(1, len(y) + 1))
    assert data.initial_weights.shape == (len(y), 4)
    np.testing.assert_allclose(data.initial_weights.sum(axis=1), data.sample_weight)
    np.testing.assert_allclose(data.initial_weights[:, 0], data.initial_weights[:, 3])


# -- the recipe: native, refused, one-vs-rest -------------------------------------------------------


def test_a_binary_only_recipe_is_refused_naming_the_component_and_the_ways_out():
    X, y = blobs()
    with pytest.raises(RecipeError, match=r"y has 4 classes, and recipe 'pav-adaboost' is "
                                          r"binary-only: proposal 'cmass'.*one-vs-rest"):
        boostkit.Booster("pav-adaboost", n_rounds=3).fit(np.abs(X), y)


def test_an_unknown_multiclass_strategy_is_refused():
    with pytest.raises(ValueError, match="multiclass must be one of 'native', 'one-vs-rest'"):
        boostkit.Booster("adaboost", multiclass="ovr")


@pytest.mark.parametrize("strategy", ["auto", "one-vs-rest"])
def test_one_vs_rest_fits_one_binary_model_per_class(strategy):
    X, y = blobs()
    model = boostkit.Booster("adaboost", n_rounds=20, multiclass=strategy).fit(X, y)
    assert isinstance(model, OneVsRestModel) and model.multiclass_strategy == "one-vs-rest"
    assert len(model.models) == 4 and all(m.n_columns == 1 for m in model.models)
    # Model l separates class l (label 1) from the rest.
    positive = (y == model.classes[2]).astype(int)
    alone = boostkit.Booster("adaboost", n_rounds=20).fit(X, positive)
    np.testing.assert_array_equal(model.models[2].decision_function(X), alone.decision_function(X))
    F = model.decision_function(X)
    assert F.shape == (len(y), 4)
    np.testing.assert_array_equal(model.predict(X), model.classes[np.argmax(F, axis=1)])
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)
    assert np.mean(model.predict(X) == y) > 0.8


def test_auto_runs_a_native_recipe_natively_and_two_classes_stay_binary():
    X, y = blobs()
    assert boostkit.Booster("samme", multiclass="auto", n_rounds=5).fit(X, y).multiclass_strategy == "native"
    binary = boostkit.Booster("adaboost", multiclass="one-vs-rest", n_rounds=5).fit(X, y == "ant")
    assert binary.multiclass_strategy == "binary"


def test_one_vs_rest_in_parallel_gives_the_serial_model():
    X, y = blobs()
    serial = boostkit.Booster("real-adaboost", n_rounds=15, multiclass="one-vs-rest").fit(X, y)
    parallel = boostkit.Booster("real-adaboost", n_rounds=15, multiclass="one-vs-rest",
                                n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(serial.decision_function(X), parallel.decision_function(X))


def test_one_vs_rest_staged_margins_end_at_the_decision_function():
    X, y = blobs()
    model = boostkit.Booster("adaboost", n_rounds=200, multiclass="one-vs-rest").fit(X, y)
    stages = list(model.staged_decision_function(X))
    assert len(stages) == model.n_rounds
    np.testing.assert_array_equal(stages[-1], model.decision_function(X))


def test_one_vs_rest_with_an_eval_set_maps_its_labels_per_class():
    X, y = blobs(seed=1)
    X_val, y_val = blobs(seed=2)
    model = boostkit.Booster("adaboost", n_rounds=100, multiclass="one-vs-rest",
                             stopping=["no-edge", ("validation", {"patience": 5})]
                             ).fit(X, y, eval_set=(X_val, y_val))
    assert all(m.best_round is not None for m in model.models)


def test_multilabel_one_vs_rest_is_binary_relevance():
    X, _ = blobs()
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.5, X[:, 0] + X[:, 1] > 1]).astype(int)
    model = boostkit.Booster("adaboost", n_rounds=30, multiclass="auto").fit(X, Y)
    assert model.multilabel and model.predict(X).shape == Y.shape
    assert np.mean(model.predict(X) == Y) > 0.9
    proba = model.predict_proba(X)
    assert ((proba > 0) & (proba < 1)).all()


# -- D_1: boostkit_initial_weights ----------------------------------------------------------------


@attrs.define
class FixedStart(boostkit.Stopping):
    """A test component answering boostkit_initial_weights with a given array."""

    name = "fixed-start"
    provides = frozenset({"multiclass"})
    answer: object = None

    @boostkit.hookimpl
    def boostkit_initial_weights(self, data):
        return self.answer(data) if callable(self.answer) else self.answer

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        return None


@pytest.fixture
def fixed_start(in_process_plugin):
    in_process_plugin("fixed-start-test", components=(FixedStart,))


def _fit_with_start(answer, X, y):
    seen = []
    model = boostkit.Booster("adaboost-mh", n_rounds=3,
                             stopping=["no-edge", ("fixed-start", {"answer": answer})],
                             callbacks=[lambda state, record: seen.append(state.initial_weights)]
                             ).fit(X, y)
    return model, seen


def test_the_boostkit_initial_weights_answer_is_the_start(fixed_start):
    X, y = blobs()

    def first_class_only(data):
        d1 = np.zeros(data.y.shape)
        d1[:, 0] = data.sample_weight
        return d1

    _, seen = _fit_with_start(first_class_only, X, y)
    assert (seen[0][:, 1:] == 0).all() and seen[0][:, 0].sum() == pytest.approx(1.0)


@pytest.mark.parametrize("answer, message", [
    (lambda data: np.ones(data.y.shape), "not a distribution"),
    (lambda data: np.full(data.y.shape[0], 1.0 / data.y.shape[0]), "of shape"),
    (lambda data: np.full(data.y.shape, 1.0 / data.y.size, dtype=np.float32), "float64"),
    ("uniform", "expected a float64 array"),
])
def test_a_bad_initial_weights_answer_is_named(fixed_start, answer, message):
    X, y = blobs()
    with pytest.raises(HookError, match=f"boostkit_initial_weights.*{message}|{message}"):
        _fit_with_start(answer, X, y)


def test_samme_refuses_multilabel_data_before_fitting():
    X, _ = blobs()
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    with pytest.raises(RecipeError, match="'samme-alpha' needs single-label y"):
        boostkit.Booster("samme", n_rounds=3).fit(X, Y)


# -- bad input ------------------------------------------------------------------------------------


def test_a_class_with_one_example_is_learnt():
    X, y = blobs()
    y = y.copy()
    y[0] = "eel"  # one example of its class
    for algorithm in ("adaboost-mh", "samme"):
        model = boostkit.Booster(algorithm, n_rounds=30).fit(X, y)
        assert "eel" in model.classes and np.isfinite(model.decision_function(X)).all()
    held_out = boostkit.Booster("adaboost-mh", n_rounds=5, stopping=["validation"]).fit(X, y)
    assert np.isfinite(held_out.decision_function(X)).all()  # the lone example is kept for training


def test_an_eval_set_label_unseen_in_training_is_refused():
    X, y = blobs()
    X_val, y_val = blobs(n_classes=5)
    with pytest.raises(DataError, match=r"eval_set y has labels \['eel'\] that are not among"):
        boostkit.Booster("adaboost-mh", n_rounds=3).fit(X, y, eval_set=(X_val, y_val))


def test_a_multilabel_eval_set_must_have_the_training_columns():
    X, _ = blobs()
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    with pytest.raises(DataError, match=r"eval_set y must be a \(240, 2\) indicator matrix"):
        boostkit.Booster("adaboost-mh", n_rounds=3).fit(X, Y, eval_set=(X, Y[:, :1]))


def test_an_all_zero_label_column_is_learnt_as_never_present_or_refused_by_one_vs_rest():
    X, _ = blobs()
    Y = np.column_stack([X[:, 0] > 0, np.zeros(len(X)), X[:, 1] > 0]).astype(int)
    model = boostkit.Booster("adaboost-mh", n_rounds=20).fit(X, Y)
    F = model.decision_function(X)
    assert np.isfinite(F).all() and (F[:, 1] < 0).all() and (model.predict(X)[:, 1] == 0).all()
    with pytest.raises(DataError, match="y column 1 has no positive examples.*adaboost-mh"):
        boostkit.Booster("adaboost", n_rounds=3, multiclass="one-vs-rest").fit(X, Y)


def test_validation_with_a_metric_that_scores_one_column_only_is_refused():
    X, y = blobs()
    with pytest.raises(HookError, match="metric 'roc_auc' does not score several classes"):
        boostkit.Booster("adaboost-mh", n_rounds=5,
                         stopping=[("validation", {"metric": "roc_auc"})]).fit(X, y)


@pytest.mark.parametrize("metric", ["log_loss", "exponential_loss", "accuracy"])
def test_validation_early_stopping_scores_several_classes(metric):
    X, y = blobs(seed=3)
    model = boostkit.Booster("adaboost-mh", n_rounds=300,
                             stopping=[("validation", {"metric": metric, "patience": 5})]).fit(X, y)
    assert model.best_round is not None
    assert all(np.isfinite(r.extra[f"validation_{metric}"]) for r in model.records)


# -- model files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm, strategy", [("adaboost-mh", "native"),
                                                 ("samme", "native"),
                                                 ("adaboost", "one-vs-rest")])
def test_multiclass_models_round_trip_with_their_classes(tmp_path, algorithm, strategy):
    X, y = blobs()
    model = boostkit.Booster(algorithm, n_rounds=10, multiclass=strategy).fit(X, y)
    loaded = boostkit.load_model(model.save(tmp_path / "model.npz"))
    assert type(loaded) is type(model) and loaded.classes.tolist() == model.classes.tolist()
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_multilabel_model_round_trips(tmp_path):
    X, _ = blobs()
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    model = boostkit.Booster("adaboost-mh", n_rounds=10).fit(X, Y)
    loaded = boostkit.load_model(model.save(tmp_path / "model.npz"))
    assert loaded.multilabel and loaded.n_columns == 2
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_margin_shape_that_contradicts_the_classes_is_refused(tmp_path):
    X, y = blobs()
    path = boostkit.Booster("adaboost-mh", n_rounds=3).fit(X, y).save(tmp_path / "m.npz")
    structure, arrays, _ = read_model_file(path)
    structure["margin_columns"] = 1
    for key in ("format", "version"):
        del structure[key]
    write_model_file(tmp_path / "bad.npz", structure, arrays)
    with pytest.raises(ModelFormatError, match="1 margin columns do not match 4 classes"):
        boostkit.load_model(tmp_path / "bad.npz")

"""boostkit.study.measure: the test errors of the compiled staged pass are the ones
``staged_decision_function`` and ``margin_labels`` give, exactly, on every kind of model; the
training errors are the fit's records; the model size is the size of the file ``save``
writes."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit import ComponentSpec, get_registry
from boostkit.kernels.staged import staged_threshold_errors
from boostkit.model import margin_labels
from boostkit.multiclass import OneVsRestModel
from boostkit.study.measure import (errors_by_round, learning_curve, model_bytes,
                                    recorded_training_errors)


def staged_errors(model, X, targets):
    """The reference: every round's margins on every row, ``predict``'s rule, counted."""
    positions = np.arange(model.n_columns if model.n_columns > 1 else 2)
    per_row = model.n_columns if model.multilabel else 1
    return [np.count_nonzero(margin_labels(margin, positions, model.multilabel) != targets)
            / (X.shape[0] * per_row) for margin in model.staged_decision_function(X)]


def blobs(n=240, d=5, n_classes=2, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n_classes, d))[y] + 1.5 * rng.normal(size=(n, d))
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


def split(n, seed=0):
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[n // 4:]), np.sort(order[:n // 4])


def with_validation(algorithm, **params):
    recipe = get_registry().algorithm(algorithm)
    return attrs.evolve(recipe, stopping=(*recipe.stopping, ComponentSpec("validation", params)))


CASES = {
    # name: (recipe, Booster keywords, classes, multi-label)
    "binary stumps": ("adaboost", {}, 2, False),
    "binary real": ("real-adaboost", {}, 2, False),
    "one-vs-rest": ("adaboost", {"multiclass": "one-vs-rest"}, 4, False),
    "native multiclass": ("adaboost-mh", {}, 3, False),
    "samme": ("samme", {}, 3, False),
    "multi-label native": ("adaboost-mh", {}, 3, True),
    "multi-label one-vs-rest": ("adaboost", {"multiclass": "one-vs-rest"}, 3, True),
    # Calibrated.replaces: later rounds back-fit earlier terms (more records than terms)
    "back-fitting": ("pav-adaboost-finite", {}, 2, False),
    # terms whose contribution reads the running margin: evaluated by their values
    "margin-dependent terms": ("weightboost", {}, 2, False),
    "margin-dependent one-vs-rest": ("weightboost", {"multiclass": "one-vs-rest"}, 3, False),
    # several margin columns, terms evaluated by their values
    "multinomial": ("multinomial-logitboost", {}, 3, False),
    "boostexter": ("boostexter", {}, 3, False),
    "rankboost one-vs-rest (offsets)": ("rankboost", {"multiclass": "one-vs-rest"}, 3, False),
}


def fitted(case, n_rounds=25, missing=0.0):
    recipe, keywords, n_classes, multilabel = CASES[case]
    X, y = blobs(n_classes=n_classes, missing=missing)
    if multilabel:
        rng = np.random.default_rng(1)
        y = ((X[:, :n_classes] + rng.normal(size=(X.shape[0], n_classes))) > 0).astype(int)
    train, test = split(X.shape[0])
    model = boostkit.Booster(recipe, n_rounds=n_rounds, random_state=0,
                             **keywords).fit(X[train], y[train])
    targets = y if multilabel else np.searchsorted(np.asarray(model.classes), y)
    return model, X, targets, train, test


@pytest.mark.parametrize("case", list(CASES))
def test_the_compiled_test_errors_are_the_staged_ones(case):
    model, X, targets, train, test = fitted(case)
    errors = errors_by_round(model, X[test], targets[test])
    assert errors.tolist() == staged_errors(model, X[test], targets[test])
    assert len(errors) == model.n_rounds
    if case == "back-fitting":
        assert len(model.records) > model.n_rounds  # the recipe did replace terms
    if case.startswith("rankboost"):
        assert model.offsets is not None and np.any(model.offsets != 0)


def test_missing_values_follow_each_terms_side():
    X, y = blobs(missing=0.15)
    model = boostkit.Booster("adaboost", n_rounds=30, random_state=0).fit(X, y)
    assert errors_by_round(model, X, y).tolist() == staged_errors(model, X, y)


@pytest.mark.parametrize("case", ["binary stumps", "binary real"])
def test_the_recorded_training_errors_are_the_staged_ones_on_two_classes(case):
    """Uniform initial weights and no margin exactly 0: the fit's records count the training
    rows predict gets wrong."""
    model, X, targets, train, test = fitted(case)
    curve = learning_curve(model, X[test], targets[test])
    staged = staged_errors(model, X[train], targets[train])
    assert [train_error for _, train_error, _ in curve] == pytest.approx(staged, abs=1e-12)
    assert [test_error for _, _, test_error in curve] == staged_errors(model, X[test],
                                                                       targets[test])
    assert [t for t, _, _ in curve] == list(range(1, model.n_rounds + 1))


def test_one_vs_rest_training_errors_are_the_class_models_mean():
    model = fitted("one-vs-rest")[0]
    by_class = [[record.training_error for record in m.records] for m in model.models]
    assert recorded_training_errors(model) == pytest.approx(np.mean(by_class, axis=0), abs=1e-15)


def test_back_fitted_models_have_no_training_errors():
    model, X, targets, train, test = fitted("back-fitting")
    curve = learning_curve(model, X[test], targets[test])
    assert recorded_training_errors(model) is None
    assert [train_error for _, train_error, _ in curve] == [None] * model.n_rounds


def test_an_early_stopped_model_has_every_terms_curve():
    X, y = blobs(n=400, seed=3)
    y = np.where(np.random.default_rng(0).random(y.shape[0]) < 0.2, 1 - y, y)  # noisy labels
    train, test = split(X.shape[0])
    model = boostkit.Booster(with_validation("adaboost", patience=5), n_rounds=200,
                             random_state=0).fit(X[train], y[train])
    assert model.best_round is not None and model.best_round < model.n_rounds
    curve = learning_curve(model, X[test], y[test])
    assert [test_error for _, _, test_error in curve] == staged_errors(model, X[test], y[test])
    assert [train_error for _, train_error, _ in curve] == [
        record.training_error for record in model.records]


def test_one_vs_rest_class_models_of_different_lengths():
    X, y = blobs(n_classes=3)
    train, test = split(X.shape[0])
    model = boostkit.Booster("adaboost", n_rounds=20, random_state=0,
                             multiclass="one-vs-rest").fit(X[train], y[train])
    shorter = OneVsRestModel(model.classes, (model.models[0],) + tuple(
        attrs.evolve(m, hypotheses=m.hypotheses[:k], contributions=m.contributions[:k],
                     records=m.records[:k]) for m, k in zip(model.models[1:], (7, 1))))
    assert errors_by_round(shorter, X[test], y[test]).tolist() == staged_errors(shorter, X[test],
                                                                            y[test])
    last = [m.records[-1].training_error for m in shorter.models]
    assert recorded_training_errors(shorter)[-1] == pytest.approx(np.mean(last), abs=1e-15)


def test_the_errors_counted_by_hand():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    model = boostkit.Booster("adaboost", n_rounds=1).fit(X, y)  # one stump: no error
    assert learning_curve(model, X[2:], y[2:]) == [(1, 0.0, 0.0)]
    assert learning_curve(model, X[1:], np.array([1, 1, 0])) == [(1, 0.0, 2 / 3)]  # rows 1, 3


def test_a_model_without_terms_has_an_empty_curve():
    model, X, targets, train, test = fitted("binary stumps", n_rounds=3)
    empty = attrs.evolve(model, hypotheses=(), contributions=(), records=())
    assert learning_curve(empty, X[test], targets[test]) == []


def test_model_bytes_of_stumps_by_hand():
    # A stump: feature and threshold (8 bytes each), two cell scores (16), missing_left (8),
    # 40 bytes; its alpha, 8 more: 48 bytes a term.
    model = fitted("binary stumps", n_rounds=10)[0]
    assert model_bytes(model) == 48 * len(model.hypotheses)


@pytest.mark.parametrize("case", ["binary stumps", "one-vs-rest", "native multiclass",
                                  "multi-label native", "back-fitting",
                                  "margin-dependent terms", "rankboost one-vs-rest (offsets)"])
def test_model_bytes_counts_every_parameter_of_every_term(case):
    model = fitted(case, n_rounds=10)[0]
    parts = getattr(model, "models", (model,))
    arrays = sum(value.nbytes for part in parts
                 for term in (*part.hypotheses, *part.contributions)
                 for value in attrs.asdict(term, recurse=False).values()
                 if isinstance(value, np.ndarray))
    size = model_bytes(model)
    assert size > arrays > 0 or size > 0 == arrays
    # One more term is more bytes; the same model, the same bytes.
    assert model_bytes(model) == size
    if not hasattr(model, "models"):
        shorter = attrs.evolve(model, hypotheses=model.hypotheses[:-1],
                               contributions=model.contributions[:-1])
        assert model_bytes(shorter) < size


def test_a_term_of_a_foreign_kind_has_no_size():
    model = fitted("binary stumps", n_rounds=3)[0]

    class Foreign:
        pass

    @attrs.frozen
    class Wrapped:
        estimator: object

    foreign = attrs.evolve(model, hypotheses=(Wrapped(Foreign()), *model.hypotheses[1:]))
    assert model_bytes(foreign) is None


def test_bad_input_is_named():
    model, X, targets, train, test = fitted("binary stumps", n_rounds=3)
    with pytest.raises(ValueError, match=r"X must be a numeric array of shape \(m, 5\)"):
        errors_by_round(model, X[:, :3], targets)
    with pytest.raises(ValueError, match=r"X must be .*got float64 of shape \(0, 5\)"):
        errors_by_round(model, X[:0], targets[:0])
    with pytest.raises(ValueError, match="targets must have shape"):
        errors_by_round(model, X, targets[:-1])


def test_margins_equal_but_for_rounding_are_tied():
    """0.3 and 0.1 + 0.2 differ in the last bit: predict's rule takes the first class."""
    X_columns = np.zeros((1, 1))
    values = np.array([[[0.3, 0.1], [0.3, 0.1]], [[0.0, 0.2], [0.0, 0.2]]])
    margin = np.zeros((2, 1))
    assert margin_labels(np.array([[0.3, 0.1 + 0.2]]), np.arange(2)).tolist() == [0]
    for target, wrong in ((0, 0), (1, 1)):
        margin[:] = 0.0
        errors = np.zeros(1, dtype=np.int64)
        staged_threshold_errors(X_columns, np.zeros(2, dtype=np.int64), np.zeros(2),
                                np.zeros(2, dtype=np.bool_), values,
                                np.full(2, -1, dtype=np.int64), np.array([-1, 0]), np.zeros(2),
                                np.array([[target]]), False, margin, errors)
        assert margin[:, 0].tolist() == [0.3, 0.1 + 0.2] and errors.tolist() == [wrong]

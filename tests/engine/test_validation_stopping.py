"""Validation-based early stopping (boostkit.validation, the engine's ``validation`` stopping rule):
an explicit eval_set or a stratified, seeded holdout; the validation margins the engine keeps;
the best round the model reports and predicts with; refits and clones; saving and loading."""

from __future__ import annotations

import json
import math

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
from boostkit import ComponentSpec, datasets, get_registry
from boostkit.errors import DataError, HookError, ModelFormatError, RecipeError
from boostkit.metrics import METRICS, log_loss, stratified_folds
from boostkit.validation import ValidationStopping, stratified_holdout

PATIENCE = 10


def with_validation(algorithm="adaboost", **params):
    """The registered recipe with the validation rule added to its stopping rules."""
    recipe = get_registry().algorithm(algorithm)
    return attrs.evolve(recipe, stopping=(*recipe.stopping, ComponentSpec("validation", params)))


def flipped(y, fraction, seed):
    classes = np.unique(y)
    flip = np.random.default_rng(seed).random(y.shape[0]) < fraction
    return np.where(flip, np.where(y == classes[1], classes[0], classes[1]), y)


@pytest.fixture(scope="module")
def ionosphere():
    data = datasets.load("ionosphere")
    return data.X, data.y


@pytest.fixture(scope="module")
def noisy_split(ionosphere):
    """Ionosphere with 10% of the training labels flipped, and a clean validation quarter."""
    X, y = ionosphere
    train, val = stratified_folds(y, 4, seed=0)[0]
    return X[train], flipped(y[train], 0.1, seed=0), X[val], y[val]


@pytest.fixture(scope="module")
def early_stopped(noisy_split):
    X_train, y_train, X_val, y_val = noisy_split
    seen = {}

    def keep_validation(state, record):
        seen["margin"] = state.validation.margin.copy()

    model = boostkit.Booster(with_validation(patience=PATIENCE), n_rounds=400, random_state=0,
                             callbacks=[keep_validation]).fit(X_train, y_train,
                                                              eval_set=(X_val, y_val))
    return model, seen["margin"]


# -- the example: the validation loss falls, then rises -------------------------------


def test_early_stopping_returns_the_best_round_when_the_validation_loss_rises(early_stopped,
                                                                             noisy_split):
    model, _ = early_stopped
    _, _, X_val, y_val = noisy_split
    losses = np.array([record.extra["validation_log_loss"] for record in model.records])
    best = model.best_round
    assert best == 1 + int(np.argmin(losses))
    # It fell from the first round to the best one and rose again after it.
    assert 1 < best and losses[best - 1] < losses[0] and losses[best - 1] < losses[-1]
    # Stopped after `patience` rounds without improvement, keeping every round.
    assert model.stop_reason == model.records[-1].stop_reason == "no-validation-improvement"
    assert len(model.records) == model.n_rounds == best + PATIENCE
    # The recorded loss is the log loss of predict_proba's probabilities after each round.
    stages = list(model.staged_decision_function(X_val))
    assert len(stages) == model.n_rounds
    positive = y_val == model.classes[1]
    for t in (0, best - 1, model.n_rounds - 1):
        assert losses[t] == pytest.approx(log_loss(positive, stages[t]), rel=1e-12)
    # predict, decision_function and predict_proba use the best round, staged_* all rounds.
    np.testing.assert_array_equal(model.decision_function(X_val), stages[best - 1])
    labels = list(model.staged_predict(X_val))
    np.testing.assert_array_equal(model.predict(X_val), labels[best - 1])
    assert not np.array_equal(model.predict(X_val), labels[-1])
    probabilities = list(model.staged_predict_proba(X_val))
    np.testing.assert_array_equal(model.predict_proba(X_val), probabilities[best - 1])
    everything = attrs.evolve(model, best_round=None)
    np.testing.assert_array_equal(everything.decision_function(X_val), stages[-1])


def test_validation_margins_are_the_models_margins_bit_for_bit(early_stopped, noisy_split):
    model, last_margin = early_stopped
    _, _, X_val, _ = noisy_split
    final = list(model.staged_decision_function(X_val))[-1]
    assert last_margin.tobytes() == final.tobytes()


def test_validation_error_is_recorded_every_round(early_stopped, noisy_split):
    model, _ = early_stopped
    _, _, X_val, y_val = noisy_split
    for record, labels in zip(model.records, model.staged_predict(X_val)):
        assert record.extra["validation_error"] == pytest.approx(np.mean(labels != y_val))


@pytest.mark.parametrize("metric", ["accuracy", "roc_auc", "exponential_loss"])
def test_any_metric_of_boostkit_metrics_picks_its_best_round(noisy_split, metric):
    X_train, y_train, X_val, y_val = noisy_split
    model = boostkit.Booster(with_validation(metric=metric, patience=5), n_rounds=300,
                             random_state=0).fit(X_train, y_train, eval_set=(X_val, y_val))
    scores = np.array([record.extra[f"validation_{metric}"] for record in model.records])
    best = np.argmax(scores) if METRICS[metric].greater_is_better else np.argmin(scores)
    assert model.best_round == 1 + int(best)


def test_another_stopping_rule_ending_the_run_keeps_the_best_round(noisy_split):
    X_train, y_train, X_val, y_val = noisy_split
    model = boostkit.Booster(with_validation(patience=1000), n_rounds=30, random_state=0).fit(
        X_train, y_train, eval_set=(X_val, y_val))
    losses = [record.extra["validation_log_loss"] for record in model.records]
    assert model.stop_reason == "max-rounds" and model.n_rounds == 30
    assert model.best_round == 1 + int(np.argmin(losses))


def test_without_a_rule_no_round_is_named_and_eval_set_is_still_scored(noisy_split):
    X_train, y_train, X_val, y_val = noisy_split
    model = boostkit.Booster("adaboost", n_rounds=10).fit(X_train, y_train,
                                                          eval_set=(X_val, y_val))
    assert model.best_round is None
    assert [sorted(k for k in r.extra if k.startswith("validation")) for r in model.records] == (
        [["validation_error"]] * 10)


# -- the stopping rule on its own ------------------------------------------------------------


def record(t, **extra):
    return boostkit.RoundRecord(round=t, hypothesis="h", weighted_error=0.4, edge=0.1, z=None,
                                error_bound=None, training_error=0.3, coefficients=(1.0,),
                                extra=extra)


def run_rule(rule, scores):
    """Feed the rule one score per round; return (rounds run, stop reason, best round)."""
    rule.boostkit_fit_start(state=None)
    for t, score in enumerate(scores, start=1):
        reason = rule.boostkit_should_stop(state=None, record=record(t, **{
            f"validation_{rule.metric}": score}))
        if reason:
            return t, reason, rule.boostkit_best_round(state=None)
    return len(scores), None, rule.boostkit_best_round(state=None)


def test_patience_counts_rounds_since_the_best():
    rule = ValidationStopping(patience=3)
    assert run_rule(rule, [0.5, 0.4, 0.45, 0.41, 0.39, 0.40, 0.40, 0.40, 0.1]) == (
        8, "no-validation-improvement", 5)


def test_min_delta_asks_for_a_real_improvement():
    rule = ValidationStopping(patience=3, min_delta=0.02)
    assert run_rule(rule, [0.5, 0.4, 0.45, 0.41, 0.39, 0.1]) == (5, "no-validation-improvement", 2)


def test_greater_is_better_for_accuracy():
    rule = ValidationStopping(patience=2, metric="accuracy")
    assert run_rule(rule, [0.6, 0.7, 0.7, 0.65, 0.9]) == (4, "no-validation-improvement", 2)


@settings(max_examples=200, deadline=None)
@given(scores=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40),
       patience=st.integers(1, 8))
def test_rule_stops_exactly_patience_rounds_after_the_first_minimum(scores, patience):
    rounds, reason, best = run_rule(ValidationStopping(patience=patience), scores)
    seen = scores[:rounds]
    assert best == 1 + int(np.argmin(seen))  # the first of equal minima
    if reason is None:
        assert rounds == len(scores) and rounds - best < patience
    else:
        assert rounds - best == patience


def test_fit_start_resets_the_rule():
    rule = ValidationStopping(patience=2)
    run_rule(rule, [0.5, 0.4, 0.6, 0.7])
    rule.boostkit_fit_start(state=None)
    assert rule.boostkit_best_round(state=None) is None
    assert run_rule(rule, [0.9, 0.8]) == (2, None, 2)


# -- holding out rows ------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(n_neg=st.integers(2, 60), n_pos=st.integers(2, 60), fraction=st.floats(0.05, 0.95),
       seed=st.integers(0, 2**32 - 1))
def test_holdout_is_stratified_seeded_and_respects_the_fraction(n_neg, n_pos, fraction, seed):
    y = np.random.default_rng(seed).permutation(np.r_[-np.ones(n_neg), np.ones(n_pos)])
    n = y.shape[0]
    target = math.floor(fraction * n + 0.5)
    if target == 0:
        with pytest.raises(DataError, match="holds out none"):
            stratified_holdout(y, fraction, np.random.default_rng(seed))
        return
    train, held = stratified_holdout(y, fraction, np.random.default_rng(seed))
    assert np.array_equal(np.sort(np.r_[train, held]), np.arange(n))
    assert np.all(np.diff(train) > 0) and np.all(np.diff(held) > 0)
    # round(fraction * n), unless each class keeping one training example leaves fewer.
    assert held.shape[0] == min(target, n - 2)
    kept = [np.sum(y[train] == label) for label in (-1, 1)]
    assert min(kept) >= 1
    if min(kept) > 1:  # no class at its floor: each holds out its share, to rounding
        for label, count in ((-1, n_neg), (1, n_pos)):
            assert abs(np.sum(y[held] == label) - fraction * count) < 1
    again = stratified_holdout(y, fraction, np.random.default_rng(seed))
    assert np.array_equal(again[1], held)


def test_fit_holds_out_rows_before_training(ionosphere):
    X, y = ionosphere
    seen = {}

    def look(state, record):
        seen.update(data=state.data, validation=state.validation)

    model = boostkit.Booster(with_validation(validation_fraction=0.25), n_rounds=5,
                             random_state=3, callbacks=[look]).fit(X, y)
    data, validation = seen["data"], seen["validation"]
    rows = validation.rows
    train = np.setdiff1d(np.arange(len(y)), rows)
    assert len(rows) == round(0.25 * len(y)) and data.n_samples == len(train)
    np.testing.assert_array_equal(data.X, X[train])
    np.testing.assert_array_equal(validation.X, X[rows])
    np.testing.assert_array_equal(data.classes, model.classes)
    np.testing.assert_array_equal(validation.y, np.where(y[rows] == model.classes[1], 1.0, -1.0))
    np.testing.assert_array_equal(data.y, np.where(y[train] == model.classes[1], 1.0, -1.0))
    # Stratified: the validation rows hold the classes in proportion.
    assert abs(np.mean(validation.y > 0) - np.mean(y == model.classes[1])) < 0.01
    np.testing.assert_allclose(validation.sample_weight, 1.0 / len(rows))
    assert "validation_log_loss" in model.records[-1].extra

    def rows_of(seed):
        found = {}
        boostkit.Booster(with_validation(validation_fraction=0.25), n_rounds=1, random_state=seed,
                         callbacks=[lambda state, _: found.update(rows=state.validation.rows)]
                         ).fit(X, y)
        return found["rows"]

    np.testing.assert_array_equal(rows_of(3), rows)
    assert not np.array_equal(rows_of(4), rows)


def test_an_eval_set_replaces_the_holdout(noisy_split):
    X_train, y_train, X_val, y_val = noisy_split
    seen = {}
    boostkit.Booster(with_validation(validation_fraction=0.5), n_rounds=2,
                     callbacks=[lambda state, _: seen.update(n=state.data.n_samples,
                                                             rows=state.validation.rows)]
                     ).fit(X_train, y_train, eval_set=(X_val, y_val))
    assert seen == {"n": len(y_train), "rows": None}


def test_weighted_eval_set_weights_the_scores(noisy_split):
    X_train, y_train, X_val, y_val = noisy_split
    weights = np.where(y_val == y_val[0], 3.0, 1.0)
    model = boostkit.Booster(with_validation(), n_rounds=5, random_state=0).fit(
        X_train, y_train, eval_set=(X_val, y_val, weights))
    margin = list(model.staged_decision_function(X_val))[-1]
    expected = log_loss(y_val == model.classes[1], margin, weights)
    assert model.records[-1].extra["validation_log_loss"] == pytest.approx(expected, rel=1e-12)


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("params, message", [
    ({"validation_fraction": 1.5}, r"validation_fraction must be a number in \(0, 1\), got 1.5"),
    ({"validation_fraction": 0}, r"validation_fraction must be a number in \(0, 1\), got 0"),
    ({"validation_fraction": True}, r"validation_fraction must be a number in \(0, 1\), got True"),
    ({"patience": 0}, "patience must be a positive integer"),
    ({"min_delta": -0.1}, "min_delta must be a finite number >= 0"),
    ({"metric": "auc"}, "unknown metric 'auc'; boostkit.metrics has accuracy, average_precision, "
                        "average_precision_11pt, exponential_loss, f1_score, log_loss, "
                        "ranking_loss, roc_auc"),
])
def test_bad_parameters_are_refused_before_the_data(params, message):
    with pytest.raises(RecipeError, match=message):
        boostkit.Booster(with_validation(**params)).fit(np.zeros((4, 1)), [0, 1, 0, 1])


def test_a_fraction_that_holds_out_nothing_is_refused():
    X, y = np.arange(20.0)[:, None], np.arange(20) % 2
    with pytest.raises(DataError, match="validation_fraction 0.01 of 20 training examples holds "
                                        "out none; pass a larger fraction or an explicit eval_set"):
        boostkit.Booster(with_validation(validation_fraction=0.01)).fit(X, y)


@pytest.mark.parametrize("eval_set, message", [
    ("data", "eval_set must be a tuple .X_val, y_val. or .X_val, y_val, sample_weight_val., got str"),
    (([[0.0]],), "got tuple of length 1"),
    (([[0.0, 1.0]], [0]), "eval_set X has 2 features, but the model was fitted with 1"),
    (([[0.0], [1.0]], [0]), "eval_set X has 2 samples but eval_set y has 1 labels"),
    (([[0.0]], [[0, 1]]), r"eval_set y must be 1-D \(n_samples,\), got an array of shape \(1, 2\)"),
    (([[0.0], [1.0]], [0, 2]), r"eval_set y has labels \[2\] that are not among the training "
                               r"classes \[0, 1\]"),
    (([[0.0]], ["a"]), r"eval_set y has labels \['a'\] that are not among the training classes"),
    (([[0.0]], [0], [-1.0]), "eval_set sample weights: sample_weight must be non-negative"),
    (([[np.inf]], [0]), r"eval_set X contains 1 infinite value\(s\)"),
])
def test_bad_eval_sets_are_refused_clearly(eval_set, message):
    X, y = np.arange(20.0)[:, None], np.arange(20) % 2
    with pytest.raises(DataError, match=message):
        boostkit.Booster("adaboost", n_rounds=2).fit(X, y, eval_set=eval_set)


def test_a_back_fitting_recipe_cannot_take_the_validation_rule():
    with pytest.raises(RecipeError, match="stopping 'validation' needs.*running-margin"):
        boostkit.Booster(with_validation("pav-adaboost-finite")).fit(np.eye(4), [0, 1, 0, 1])


class NamesRound:
    """An unregistered observer answering boostkit_best_round (it declares no capabilities)."""

    def __init__(self, answer):
        self.answer = answer

    @boostkit.hookimpl
    def boostkit_best_round(self, state):
        return self.answer


def test_best_round_before_a_back_fitted_term_is_refused():
    X = np.random.default_rng(0).normal(size=(60, 2))
    y = (X.sum(axis=1) > 0).astype(int)
    booster = boostkit.Booster("pav-adaboost-finite", n_rounds=4, observers=[NamesRound(2)])
    with pytest.raises(HookError, match="boostkit_best_round named round 2, but round 3 re-fitted "
                                        "term 1 afterwards"):
        booster.fit(X, y)


def test_validation_margins_follow_back_fitting(noisy_split):
    """A back-fitting round replaces a term: the engine takes the old term off the validation
    margins too, so they stay the final model's."""
    X_train, y_train, X_val, y_val = noisy_split
    seen = {}
    model = boostkit.Booster("pav-adaboost-finite", n_rounds=80, callbacks=[
        lambda state, _: seen.update(margin=state.validation.margin.copy())]).fit(
        X_train[:, :5], y_train, eval_set=(X_val[:, :5], y_val))
    assert len(model.records) > model.n_rounds  # some rounds back-fitted a term
    np.testing.assert_allclose(seen["margin"], model.decision_function(X_val[:, :5]),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("answer, message", [
    (0, r"boostkit_best_round returned 0, expected a round in 1..3"),
    (4, r"boostkit_best_round returned 4, expected a round in 1..3"),
    ("2", r"boostkit_best_round returned '2'"),
])
def test_a_best_round_out_of_range_is_refused(answer, message):
    X, y = np.arange(20.0)[:, None], np.arange(20) % 2
    booster = boostkit.Booster("real-adaboost", n_rounds=3, observers=[NamesRound(answer)])
    with pytest.raises(HookError, match=message):
        booster.fit(X, y)


class BadValidation:
    def __init__(self, fraction=None, score=None):
        self.fraction, self.score = fraction, score

    @boostkit.hookimpl
    def boostkit_validation_fraction(self):
        return self.fraction

    @boostkit.hookimpl
    def boostkit_validation_score(self, state):
        return self.score


@pytest.mark.parametrize("observer, message", [
    (BadValidation(fraction=1.0), r"boostkit_validation_fraction returned 1.0, expected a number "
                                  r"in \(0, 1\)"),
    (BadValidation(0.5, {"auc": math.nan}), r"boostkit_validation_score returned \{'auc': nan\}, "
                                            "expected a name and a number"),
    (BadValidation(0.5, [0.5]), r"boostkit_validation_score returned \[0.5\], expected a dict"),
])
def test_bad_validation_answers_are_refused(observer, message):
    X, y = np.arange(20.0)[:, None], np.arange(20) % 2
    with pytest.raises(HookError, match=message):
        boostkit.Booster("adaboost", n_rounds=3, observers=[observer]).fit(X, y)


# -- refit, clone, save ----------------------------------------------------------------------


def test_refitting_the_same_booster_gives_the_same_model(ionosphere):
    X, y = ionosphere
    y_noisy = flipped(y, 0.1, seed=1)
    booster = boostkit.Booster(with_validation(patience=5), n_rounds=200, random_state=0)
    first = booster.fit(X, y_noisy)
    booster.fit(X[:150], y[:150])  # another fit in between must leave nothing behind
    second = booster.fit(X, y_noisy)
    assert first.best_round == second.best_round is not None
    assert first.records == second.records
    assert first.decision_function(X).tobytes() == second.decision_function(X).tobytes()


def test_estimator_refit_and_clone_give_the_same_fit(noisy_split):
    from sklearn.base import clone

    from boostkit.sklearn import BoostClassifier

    X_train, y_train, X_val, y_val = noisy_split
    estimator = BoostClassifier(with_validation(patience=5), n_rounds=200, random_state=0)
    first = estimator.fit(X_train, y_train, eval_set=(X_val, y_val)).decision_function(X_val)
    best = estimator.best_round_
    assert best == estimator.model_.best_round is not None
    assert best < len(estimator.records_)
    np.testing.assert_array_equal(
        estimator.predict(X_val), list(estimator.staged_predict(X_val))[best - 1])
    again = estimator.fit(X_train, y_train, eval_set=(X_val, y_val)).decision_function(X_val)
    cloned = clone(estimator)
    assert not hasattr(cloned, "best_round_")
    third = cloned.fit(X_train, y_train, eval_set=(X_val, y_val)).decision_function(X_val)
    assert first.tobytes() == again.tobytes() == third.tobytes()
    assert cloned.best_round_ == best


def test_estimator_holds_out_rows_without_an_eval_set(ionosphere):
    from boostkit.sklearn import BoostClassifier

    X, y = ionosphere
    estimator = BoostClassifier(with_validation(patience=5), n_rounds=200, random_state=0)
    assert estimator.fit(X, flipped(y, 0.1, seed=1)).best_round_ is not None
    assert BoostClassifier(n_rounds=5).fit(X, y).best_round_ is None


def test_best_round_survives_saving_and_loading(early_stopped, noisy_split, tmp_path):
    model, _ = early_stopped
    _, _, X_val, _ = noisy_split
    loaded = boostkit.load_model(model.save(tmp_path / "early.npz"))
    assert loaded.best_round == model.best_round
    assert loaded.records == model.records
    np.testing.assert_array_equal(loaded.decision_function(X_val), model.decision_function(X_val))


def read_structure(path):
    with np.load(path, allow_pickle=False) as npz:
        arrays = {key: npz[key] for key in npz.files}
    return json.loads(arrays.pop("__model__").tobytes()), arrays


def write_structure(path, structure, arrays):
    blob = np.frombuffer(json.dumps(structure).encode("utf-8"), dtype=np.uint8)
    np.savez(path, __model__=blob, **arrays)


def test_a_version_1_file_loads_without_a_best_round(early_stopped, noisy_split, tmp_path):
    model, _ = early_stopped
    _, _, X_val, _ = noisy_split
    structure, arrays = read_structure(model.save(tmp_path / "current.npz"))
    assert structure["version"] == boostkit.model.FORMAT_VERSION
    assert structure["best_round"] == model.best_round
    for key in ("best_round", "kind", "multilabel", "margin_columns", "features"):  # not in v1
        del structure[key]
    structure["version"] = 1
    write_structure(tmp_path / "v1.npz", structure, arrays)
    loaded = boostkit.load_model(tmp_path / "v1.npz")
    assert loaded.best_round is None and loaded.n_rounds == model.n_rounds
    np.testing.assert_array_equal(loaded.decision_function(X_val),
                                  list(model.staged_decision_function(X_val))[-1])


@pytest.mark.parametrize("value", [0, 10**6, "3", 2.5, True])
def test_an_invalid_saved_best_round_is_refused(early_stopped, tmp_path, value):
    model, _ = early_stopped
    structure, arrays = read_structure(model.save(tmp_path / "model.npz"))
    structure["best_round"] = value
    write_structure(tmp_path / "bad.npz", structure, arrays)
    with pytest.raises(ModelFormatError, match="invalid best round"):
        boostkit.load_model(tmp_path / "bad.npz")


def test_a_version_2_file_without_its_best_round_is_corrupt(early_stopped, tmp_path):
    model, _ = early_stopped
    structure, arrays = read_structure(model.save(tmp_path / "model.npz"))
    del structure["best_round"]
    write_structure(tmp_path / "bad.npz", structure, arrays)
    with pytest.raises(ModelFormatError, match="incomplete or corrupt"):
        boostkit.load_model(tmp_path / "bad.npz")


def test_the_model_checks_its_best_round(early_stopped):
    model, _ = early_stopped
    with pytest.raises(ValueError, match="best_round must be None or a round in 1.."):
        attrs.evolve(model, best_round=model.n_rounds + 1)

"""A round the row plane fuses (boostkit.plane.RowPlane) is calibrated from cell sums, as on a
shard: the candidate of a feature's bins has no rows, the calibration answers without training
values, and the plane binds the rows only where the round is not fused after all (the values
then come from the cell table). The models are those of rounds calibrated with rows."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit import plane
from boostkit.capabilities import DISTRIBUTED
from boostkit_adaboost.coefficients import ConstantAlpha


def _data(n_classes=None):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 5))
    if n_classes is None:
        y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.normal(size=400) > 0, 1, -1)
    else:
        y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=400), [-0.6, 0.0, 0.6][:n_classes - 1])
    return X, y


def _answers(monkeypatch):
    """The calibrations' training values per round (``None``: answered from cell sums)."""
    seen = []
    advance = plane.RowPlane.advance

    def spy(self, state, candidate, calibrated):
        seen.append(calibrated.train_values)
        return advance(self, state, candidate, calibrated)

    monkeypatch.setattr(plane.RowPlane, "advance", spy)
    return seen


def _with_rows(monkeypatch, recipe, X, y, **options):
    """The model of the same fit with every candidate calibrated on its rows."""
    with monkeypatch.context() as patched:
        patched.setattr(plane, "answers_from_cells", lambda component: False)
        return boostkit.Booster(recipe, n_rounds=12, compiled_rounds=False, **options).fit(X, y)


def _same_model(model, reference, X):
    assert [str(h) for h in model.hypotheses] == [str(h) for h in reference.hypotheses]
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(X),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("recipe, n_classes", [("adaboost", None), ("adaboost-mh", 3)])
def test_fused_rounds_are_calibrated_from_cell_sums_to_the_same_model(monkeypatch, recipe,
                                                                     n_classes):
    X, y = _data(n_classes)
    reference = _with_rows(monkeypatch, recipe, X, y)
    seen = _answers(monkeypatch)
    model = boostkit.Booster(recipe, n_rounds=12, compiled_rounds=False).fit(X, y)
    assert seen and all(values is None for values in seen)
    _same_model(model, reference, X)


def test_a_round_not_fused_after_all_binds_the_rows_and_takes_the_cell_table(monkeypatch):
    X, y = _data()
    reference = _with_rows(monkeypatch, "adaboost", X, y)
    seen = _answers(monkeypatch)
    monkeypatch.setattr(plane.RowPlane, "_cell_term", lambda self, *args: None)
    model = boostkit.Booster("adaboost", n_rounds=12, compiled_rounds=False).fit(X, y)
    assert seen and all(values is None for values in seen)
    _same_model(model, reference, X)


def test_an_exact_histogram_or_a_traced_fit_calibrates_on_the_rows(monkeypatch):
    X, y = _data()
    seen = _answers(monkeypatch)
    boostkit.Booster("adaboost", n_rounds=3, compiled_rounds=False, histogram="exact").fit(X, y)
    assert seen and all(values is not None for values in seen)


@attrs.define
class ReadsValues(ConstantAlpha):
    """A distributable calibration's subclass that reads the training values."""

    name = "reads-values-for-test"

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        answer = super().boostkit_calibrate(state=state, candidate=candidate)
        return attrs.evolve(answer, train_values=answer.train_values.copy())


@attrs.define
class InfiniteAlpha(ConstantAlpha):
    """Says it answers from cell sums, and gives alpha = inf from round 2."""

    name = "infinite-alpha-for-test"
    provides = frozenset({"running-margin", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        answer = super().boostkit_calibrate(state=state, candidate=candidate)
        if state.round < 2:
            return answer
        return boostkit.Calibrated(boostkit.LinearContribution(np.inf), answer.train_values,
                                   (np.inf,))


def test_a_subclass_that_overrides_the_calibration_is_given_rows(monkeypatch,
                                                                 in_process_plugin):
    in_process_plugin("reads-values-for-test", components=[ReadsValues])
    X, y = _data()
    seen = _answers(monkeypatch)
    boostkit.Booster("adaboost calibration=reads-values-for-test", n_rounds=3,
                     compiled_rounds=False).fit(X, y)
    assert seen and all(values is not None for values in seen)


def test_non_finite_cell_values_stop_the_fit_as_non_finite_training_values(in_process_plugin):
    in_process_plugin("infinite-alpha-for-test", components=[InfiniteAlpha])
    X, y = _data()
    with pytest.raises(boostkit.HookError, match=r"training contributions containing NaN or "
                       r"infinite values: 400 of 400 .*round 2, .*infinite-alpha-for-test"):
        boostkit.Booster("adaboost calibration=infinite-alpha-for-test", n_rounds=4,
                         compiled_rounds=False).fit(X, y)


def test_a_calibration_distributable_only_for_some_parameters_is_given_rows(monkeypatch):
    """PAV with bins provides "distributed" by a property (for hypotheses with ordered cells
    only): a stump's candidate keeps its rows, and the fit runs as before."""
    X, y = _data()
    seen = _answers(monkeypatch)
    boostkit.Booster("adaboost calibration=pav", n_rounds=3, compiled_rounds=False).fit(X, y)
    assert seen and all(values is not None for values in seen)


@attrs.define
class RefitsFirstTerm(ConstantAlpha):
    """Says it answers from cell sums; its round 3 replaces term 0 (back-fitting)."""

    name = "refits-first-term-for-test"
    provides = frozenset({"running-margin", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        answer = super().boostkit_calibrate(state=state, candidate=candidate)
        if state.round != 3:
            return answer
        removed = None
        if answer.train_values is not None:
            old = boostkit.Candidate(state.hypotheses[0], state.data.X)
            removed = state.contributions[0].values(old, state.margin)
        return attrs.evolve(answer, replaces=0, removed_values=removed)


def test_a_term_replacing_another_without_rows_takes_both_terms_values_on_the_rows(
        monkeypatch, in_process_plugin):
    in_process_plugin("refits-first-term-for-test", components=[RefitsFirstTerm])
    X, y = _data()
    recipe = "adaboost calibration=refits-first-term-for-test"
    reference = _with_rows(monkeypatch, recipe, X, y)
    seen = _answers(monkeypatch)
    model = boostkit.Booster(recipe, n_rounds=12, compiled_rounds=False).fit(X, y)
    assert seen[2] is None and model.records[2].extra["replaces"] == 0
    assert model.stop_reason == reference.stop_reason
    _same_model(model, reference, X)

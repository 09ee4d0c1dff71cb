"""boostkit.testing.check_component: a plugin author's check of one component in every recipe the
capability check accepts. A sound third-party component passes; a reweighting that does not
normalise, a hypothesis that does not save and a proposal that ignores the seed are each
reported, the failure naming the component."""

from __future__ import annotations

import re

import attrs
import numpy as np
import pytest

import boostkit
from boostkit.testing import check_component, component_names, enumerate_recipes

#: Small enough for a unit test: one dataset, few rows, rounds and recipes.
QUICK = dict(datasets=("ionosphere",), n_rows=80, n_rounds=5, max_recipes=4)


class Opaque:
    """A plain Python object, which a model file cannot hold without pickle."""

    def __init__(self, threshold):
        self.threshold = threshold


@attrs.frozen
class Cut(boostkit.WeakHypothesis):
    """+1 where x[feature] > threshold, else -1."""

    name = "checked-cut"
    n_cells = 2
    feature: int = boostkit.feature_field(converter=int)
    threshold: float = attrs.field(converter=float)

    def cells(self, X):
        return (X[:, self.feature] > self.threshold).astype(np.intp)

    def scores(self, X):
        return np.where(self.cells(X) == 1, 1.0, -1.0)


@attrs.frozen
class OpaqueCut(boostkit.WeakHypothesis):
    name = "checked-opaque-cut"
    n_cells = 2
    feature: int = boostkit.feature_field(converter=int)
    rule: Opaque = attrs.field(eq=False)

    def cells(self, X):
        return (X[:, self.feature] > self.rule.threshold).astype(np.intp)

    def scores(self, X):
        return np.where(self.cells(X) == 1, 1.0, -1.0)


def _median_cut(X, feature, make):
    threshold = float(np.median(X[:, feature]))
    hypothesis = make(feature, threshold)
    return boostkit.Candidate(hypothesis, cells=hypothesis.cells(X), scores=hypothesis.scores(X))


CUT_PROVIDES = frozenset({"real-scores", "sign-scores", "cells", "two-cells"})


@attrs.define
class RandomCuts(boostkit.Proposal):
    """A median cut of a feature drawn from state.rng: random, and reproducible."""

    name = "checked-random-cuts"
    provides = CUT_PROVIDES

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        return _median_cut(state.data.X, int(state.rng.integers(state.data.n_features)), Cut)


@attrs.define
class UnseededCuts(boostkit.Proposal):
    """Draws its feature from a generator of its own: another model on every fit."""

    name = "checked-unseeded-cuts"
    provides = CUT_PROVIDES

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        feature = int(np.random.default_rng().integers(state.data.n_features))
        return _median_cut(state.data.X, feature, Cut)


@attrs.define
class OpaqueCuts(boostkit.Proposal):
    """Its hypotheses hold a foreign object: they do not save without pickle."""

    name = "checked-opaque-cuts"
    provides = CUT_PROVIDES

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        return _median_cut(state.data.X, state.round % state.data.n_features,
                           lambda feature, threshold: OpaqueCut(feature, Opaque(threshold)))


@attrs.define
class UnnormalisedWeights(boostkit.Reweighting):
    """AdaBoost's weights e^{-yF}, not divided by their sum."""

    name = "checked-unnormalised"

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        return boostkit.Weights(state.initial_weights * np.exp(-state.data.y * state.margin))


@pytest.fixture(autouse=True)
def register(in_process_plugin):
    """The sound components are registered for every test; ``register(component)`` adds a
    broken one (with the values it makes) for one test, in a plugin of its own, so that no
    other recipe meets it."""
    in_process_plugin("check-component-test", components=(Cut, RandomCuts))
    return lambda *components: in_process_plugin(f"check-{components[0].name}",
                                                 components=components)


def test_a_sound_component_passes_in_every_recipe_tried():
    report = check_component("checked-random-cuts", **QUICK)
    assert report.passed, str(report)
    assert report.component == "proposal 'checked-random-cuts'"
    assert report.tried and all("proposal=checked-random-cuts" in r for r in report.tried)
    # Calibrations that need what a +-1 cut does not give are refused, with the reason.
    assert report.refused and all("cannot work" in r.reason for r in report.refused)
    assert check_component(RandomCuts, **QUICK).tried == report.tried  # the class works too


def test_an_unnormalised_reweighting_is_reported_naming_it(register):
    register(UnnormalisedWeights)
    report = check_component("checked-unnormalised", **QUICK)
    assert not report.passed and report.failures
    for failure in report.failures:
        assert failure.check == "fit"
        assert "reweighting 'checked-unnormalised'" in failure.message
        assert "summing to" in failure.message


def test_a_hypothesis_that_does_not_save_is_reported_naming_it(register):
    register(OpaqueCuts, OpaqueCut)
    report = check_component("checked-opaque-cuts", **QUICK)
    assert report.failures and {f.check for f in report.failures} == {"save"}
    assert all("hypothesis 'checked-opaque-cut'" in f.message and "allow_pickle=True" in f.message
               for f in report.failures)
    # Allowed to pickle, the round trip works and nothing else is wrong.
    assert check_component("checked-opaque-cuts", allow_pickle=True, **QUICK).passed


def test_a_proposal_that_ignores_the_seed_is_reported(register):
    register(UnseededCuts)
    report = check_component("checked-unseeded-cuts", **QUICK)
    assert report.failures and {f.check for f in report.failures} == {"refit"}
    assert all("proposal=checked-unseeded-cuts" in str(f) and "state.rng" in f.message
               for f in report.failures)
    # Named as the one whose draw it was, where the recipe holds no wrapper it could be.
    assert any("in proposal 'checked-unseeded-cuts')" in f.message for f in report.failures)


def test_raise_on_failure_lists_every_failure_with_the_component(register):
    register(UnnormalisedWeights)
    with pytest.raises(AssertionError) as raised:
        check_component("checked-unnormalised", raise_on_failure=True, **QUICK)
    text = str(raised.value)
    assert text.startswith("check_component(reweighting 'checked-unnormalised'): ")
    assert text.count("reweighting 'checked-unnormalised' (") >= 1


def test_value_components_and_unregistered_classes_are_refused_clearly():
    with pytest.raises(ValueError, match="hypothesis 'checked-cut' is a value component"):
        check_component("checked-cut")

    @attrs.define
    class Elsewhere(boostkit.Proposal):
        name = "checked-elsewhere"

    with pytest.raises(ValueError, match="'checked-elsewhere'.* is not registered"):
        check_component(Elsewhere)


def test_the_recipes_for_a_component_are_those_of_the_full_enumeration_using_it():
    full = enumerate_recipes()
    for name in ("checked-random-cuts", "picky"):
        mine = enumerate_recipes(name)
        expected = [r for r in full.accepted if name in component_names(r)]
        assert [r.to_string() for r in mine.accepted] == [r.to_string() for r in expected]
        assert all(name in component_names(r) for r, _ in mine.refused)


def test_a_partner_from_another_plugin_that_needs_pickle_is_not_the_components_failure():
    """Under ``gentle-step`` the first-party ``sklearn-estimator`` proposal's hypotheses hold
    fitted estimators: they are pickled for the round trip, and no failure is reported. One
    recipe per partner the sample misses brings it in (23 recipes, not all 532)."""
    report = check_component("gentle-step", datasets=("ionosphere",), n_rows=60, n_rounds=2,
                             max_recipes=1)
    assert any("proposal=sklearn-estimator " in recipe for recipe in report.tried)
    assert report.passed, str(report)


# -- the four planted bugs: each caught, naming the component and the rule it breaks ----------


@attrs.frozen
class ShiftedCut(Cut):
    """:class:`Cut` with a score per cell."""

    name = "checked-shifted-cut"

    def cell_score_table(self):
        return np.array([-1.0, 1.0])


@attrs.define
class ShiftedCuts(boostkit.Proposal):
    """Reports the cells of a cut above one value of a feature, but stores the cut one value
    lower: the rows holding that value change side at prediction (a bin's lower edge kept for
    its upper one)."""

    name = "checked-shifted-cuts"
    provides = CUT_PROVIDES

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        X = state.data.X
        feature = next(j for j in np.argsort(state.rng.random(X.shape[1]))
                       if np.unique(X[:, j]).size >= 3)
        values = np.unique(X[:, feature])
        cut = values.size // 2
        cells = (X[:, feature] > values[cut]).astype(np.intp)
        hypothesis = ShiftedCut(feature, values[cut - 1])
        return boostkit.Candidate(hypothesis, cells=cells, scores=np.where(cells == 1, 1.0, -1.0))


def _sign_alpha(state, h):
    eps = float(state.weights[h != state.data.y].sum())
    alpha = 0.5 * np.log((1.0 - eps + 1e-10) / (eps + 1e-10))
    return boostkit.Calibrated(boostkit.LinearContribution(alpha), alpha * h, (alpha,))


@attrs.define
class WorstCellError(boostkit.Calibration):
    """Discrete AdaBoost's alpha, but a partition scored by its worst cell's error: not a sum
    over cells, so a tree's split would not lower the tree's loss."""

    name = "checked-worst-cell"
    needs = frozenset({"sign-scores"})

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return np.minimum(wpos, wneg).max(axis=-1)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        return _sign_alpha(state, candidate.scores)


PLANTED = {
    # kind: (components to register, the component checked, the check, the rule's words)
    "unnormalised weights": ((UnnormalisedWeights,), "reweighting 'checked-unnormalised'", "fit",
                             "summing to"),
    "unseeded proposal": ((UnseededCuts,), "proposal 'checked-unseeded-cuts'", "refit",
                          "draw every random number from state.rng"),
    "cells that move at prediction": ((ShiftedCuts, ShiftedCut), "proposal 'checked-shifted-cuts'",
                                      "cells", "cells(X) must reproduce the training cells"),
    "a partition loss not additive over cells": (
        (WorstCellError,), "calibration 'checked-worst-cell'", "partition-loss",
        "must score a partition by the sum of its cells' losses"),
}


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_each_planted_bug_is_caught_naming_the_component_and_the_rule(register, kind):
    components, checked, check, rule = PLANTED[kind]
    register(*components)
    name = checked.split("'")[1]
    report = check_component(name, **QUICK)
    assert not report.passed and report.failures, str(report)
    assert report.component == checked
    assert {f.check for f in report.failures} == {check}, str(report)
    for failure in report.failures:
        assert rule in failure.message, failure
        # The message names the component, except a refit's: the recipe, which holds it, does.
        assert checked in failure.message or (check == "refit" and f"={name}" in failure.recipe)
    assert rule in str(report)  # what raise_on_failure=True raises


def test_cells_that_move_are_reported_with_the_row_and_both_cells(register):
    register(ShiftedCuts, ShiftedCut)
    report = check_component("checked-shifted-cuts", **QUICK)
    failure = report.failures[0]
    assert failure.culprit == "proposal 'checked-shifted-cuts'"
    assert "round 1:" in failure.message and "of 80 training rows" in failure.message
    assert "at prediction but in cell 0 in training" in failure.message


def test_the_models_predictions_really_differ_from_the_training_records(register):
    """What the check guards against: the records' training error is not the model's."""
    register(ShiftedCuts, ShiftedCut)
    from boostkit.datasets import load

    data = load("ionosphere", dropna=True)
    model = boostkit.Booster(proposal="checked-shifted-cuts", calibration="domain-partition",
                             reweighting="exponential", n_rounds=10).fit(data.X, data.y)
    assert np.mean(model.predict(data.X) != data.y) != model.records[-1].training_error


@attrs.define
class RaisingCalibration(boostkit.Calibration):
    """A broken calibration of another plugin, registered beside the component checked."""

    name = "checked-raising"
    needs = frozenset({"sign-scores"})

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return boostkit.criteria.weighted_error(wpos, wneg)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        raise ValueError("broken on purpose")


def test_a_broken_partner_is_named_and_does_not_fail_the_component(register):
    register(RaisingCalibration)
    register(UnnormalisedWeights)
    report = check_component("checked-random-cuts", **QUICK)
    assert report.passed, str(report)
    culprits = {f.culprit for f in report.partner_failures}
    assert culprits == {"calibration 'checked-raising'", "reweighting 'checked-unnormalised'"}
    text = str(report)
    assert ("failure(s) of other components, not proposal 'checked-random-cuts''s: "
            "calibration 'checked-raising', reweighting 'checked-unnormalised'") in text
    assert "boostkit_calibrate failed in component 'checked-raising'" in text


def test_the_report_groups_failures_alike_in_one_line_with_a_count(register):
    register(UnnormalisedWeights)
    report = check_component("checked-unnormalised", datasets=("ionosphere",), n_rows=80,
                             n_rounds=3, max_recipes=12)
    assert len(report.failures) >= 10
    lines = str(report).splitlines()[1:]
    assert len(lines) < len(report.failures) / 3, str(report)
    counted = sum(1 + int(line.rsplit("[and ", 1)[1].split()[0]) if "more like it]" in line else 1
                  for line in lines)
    assert counted == len(report.failures)


@attrs.define
class SignAlpha(boostkit.Calibration):
    """Discrete AdaBoost's alpha, with the weighted error as its partition loss: sound."""

    name = "checked-sign-alpha"
    needs = frozenset({"sign-scores"})

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return boostkit.criteria.weighted_error(wpos, wneg)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        return _sign_alpha(state, candidate.scores)


def test_an_unseeded_partner_proposal_is_named_not_the_calibration_checked(register):
    register(SignAlpha)
    register(UnseededCuts)
    report = check_component("checked-sign-alpha", **QUICK)
    assert report.passed, str(report)
    unseeded = [f for f in report.partner_failures if "checked-unseeded-cuts" in f.recipe]
    assert unseeded and all(f.check == "refit" for f in unseeded)
    assert {f.culprit for f in unseeded} == {"proposal 'checked-unseeded-cuts'"}
    assert all(re.search(r"\(from round \d+, in proposal 'checked-unseeded-cuts'\)", f.message)
               for f in unseeded)


# -- a broken proposal beside a sound calibration: the proposal's promise checked directly ----


@attrs.define
class ShiftedPlainCuts(boostkit.Proposal):
    """ShiftedCuts with a hypothesis that has no per-cell score table: a calibration scaling
    its scores (constant-alpha) gives a contribution with no per-cell values either, so the
    cells that move cannot be read off the margins' change."""

    name = "checked-shifted-plain-cuts"
    provides = CUT_PROVIDES

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        X = state.data.X
        feature = next(j for j in np.argsort(state.rng.random(X.shape[1]))
                       if np.unique(X[:, j]).size >= 3)
        values = np.unique(X[:, feature])
        cut = values.size // 2
        cells = (X[:, feature] > values[cut]).astype(np.intp)
        return boostkit.Candidate(Cut(feature, values[cut - 1]), cells=cells,
                                  scores=np.where(cells == 1, 1.0, -1.0))


@pytest.mark.parametrize("calibration", ["domain-partition", "constant-alpha"])
def test_a_sound_calibration_beside_a_proposal_whose_cells_move_passes_naming_the_proposal(
        register, calibration):
    """The candidate's training cells are compared with ``hypothesis.cells(X)`` every round,
    whatever the calibration: a proposal breaking the rule is a partner failure naming it, and
    the sound calibration checked beside it is not blamed."""
    register(ShiftedPlainCuts)
    report = check_component(calibration, **QUICK)
    assert report.passed, str(report)
    shifted = [f for f in report.partner_failures if "checked-shifted-plain-cuts" in f.recipe]
    assert shifted, str(report)
    assert {f.check for f in shifted} == {"cells"}
    assert {f.culprit for f in shifted} == {"proposal 'checked-shifted-plain-cuts'"}
    assert all("cells(X) must reproduce the training cells" in f.message for f in shifted)
    assert not any("either" in f.message for f in report.partner_failures)


def test_the_proposal_whose_cells_move_checked_beside_a_sound_calibration_fails_naming_itself(
        register):
    register(ShiftedPlainCuts)
    report = check_component("checked-shifted-plain-cuts", datasets=("ionosphere",), n_rows=80,
                             n_rounds=5, max_recipes=None)
    assert not report.passed
    for calibration in ("domain-partition", "constant-alpha"):
        beside = [f for f in report.failures if f"calibration={calibration} " in f.recipe]
        assert beside, (calibration, str(report))
        assert {f.check for f in beside} == {"cells"}
        assert {f.culprit for f in beside} == {"proposal 'checked-shifted-plain-cuts'"}
        assert all("proposal 'checked-shifted-plain-cuts'" in f.message
                   and "cells(X) must reproduce the training cells" in f.message
                   for f in beside)

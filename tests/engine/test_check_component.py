"""boostkit.testing.check_component: a plugin author's check of one component in every recipe the
capability check accepts. A sound third-party component passes; a reweighting that does not
normalise, a hypothesis that does not save and a proposal that ignores the seed are each
reported, the failure naming the component."""

from __future__ import annotations

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
    fitted estimators: they are pickled for the round trip, and no failure is reported."""
    report = check_component("gentle-step", datasets=("ionosphere",), n_rows=60, n_rounds=2,
                             max_recipes=None)
    assert any("proposal=sklearn-estimator " in recipe for recipe in report.tried)
    assert report.passed, str(report)

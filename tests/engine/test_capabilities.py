"""Capabilities (boostkit.capabilities): the check that refuses a recipe whose components clash."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit import Capability, RecipeError, RegistryError
from boostkit.capabilities import ENGINE_CAPABILITIES, check_capabilities, check_shared_params
from boostkit.registry import Registry

KNOWN = {c.name: c for c in ENGINE_CAPABILITIES}


@attrs.define
class Part:
    """A stand-in component: a name and its declared capabilities."""

    name: str
    needs: frozenset = frozenset()
    provides: frozenset = frozenset()
    withdraws: frozenset = frozenset()


def parts(*specs):
    return [(role, Part(name, frozenset(n), frozenset(p), frozenset(w)))
            for role, name, n, p, w in specs]


def test_a_need_met_by_any_component_passes():
    check_capabilities("ok", parts(
        ("proposal", "p", (), ("sign-scores",), ()),
        ("calibration", "c", ("sign-scores",), ("running-margin",), ()),
        ("reweighting", "r", (), ("potential",), ()),
        ("stopping", "s", ("potential",), (), ()),
        ("calibration-wrapper", "w", ("running-margin",), (), ()),
    ), KNOWN)


def test_a_missing_need_names_the_component_of_the_providing_role():
    with pytest.raises(RecipeError) as error:
        check_capabilities("mix", parts(
            ("proposal", "scorer", (), ("real-scores",), ()),
            ("calibration", "alpha", ("sign-scores",), (), ()),
            ("reweighting", "r", (), (), ()),
        ), KNOWN)
    assert str(error.value) == (
        "recipe 'mix' cannot work: calibration 'alpha' needs hypotheses with values in "
        "{-1, +1} ('sign-scores'), which proposal 'scorer' does not provide (it provides: "
        "real-scores)"
    )


def test_a_wrapper_withdraws_what_it_wraps_and_is_named():
    recipe = parts(
        ("proposal", "p", (), ("sign-scores",), ()),
        ("calibration", "unit", (), ("unit-coefficients", "running-margin"), ()),
        ("reweighting", "votes", ("unit-coefficients",), (), ()),
        ("calibration-wrapper", "scale", (), (), ("unit-coefficients",)),
    )
    with pytest.raises(RecipeError, match="reweighting 'votes' needs .* and calibration-wrapper "
                                          "'scale' takes it away"):
        check_capabilities("scaled", recipe, KNOWN)


def test_an_outer_wrapper_may_provide_again_what_an_inner_one_withdrew():
    # Recipe order lists wrappers outermost first: "restore" wraps "scale", which wraps "unit".
    check_capabilities("restored", parts(
        ("proposal", "p", (), (), ()),
        ("calibration", "unit", (), ("unit-coefficients",), ()),
        ("reweighting", "votes", ("unit-coefficients",), (), ()),
        ("calibration-wrapper", "restore", (), ("unit-coefficients",), ()),
        ("calibration-wrapper", "scale", (), (), ("unit-coefficients",)),
    ), KNOWN)
    with pytest.raises(RecipeError, match="'scale' takes it away"):
        check_capabilities("reversed", parts(
            ("proposal", "p", (), (), ()),
            ("calibration", "unit", (), ("unit-coefficients",), ()),
            ("reweighting", "votes", ("unit-coefficients",), (), ()),
            ("calibration-wrapper", "scale", (), (), ("unit-coefficients",)),
            ("calibration-wrapper", "restore", (), ("unit-coefficients",), ()),
        ), KNOWN)


def test_a_need_whose_provider_role_is_absent_says_so():
    known = {**KNOWN, "extra-data": Capability("extra-data", "side information", "observer")}
    with pytest.raises(RecipeError, match="the recipe has no observer that provides it"):
        check_capabilities("lonely", parts(("stopping", "s", ("extra-data",), (), ())), known)


def test_an_unknown_capability_is_refused_with_the_known_ones():
    with pytest.raises(RecipeError, match="declares the unknown capability 'sign-score'; known "
                                          "capabilities: .*cells, .*missing-values"):
        check_capabilities("typo", parts(("calibration", "c", ("sign-score",), (), ())), KNOWN)


@attrs.define
class Sharer:
    name: str
    beta: float = 0.5
    power: float = 1.0
    shared_params = ("beta", "power")


def test_shared_parameters_must_agree_across_the_recipe():
    check_shared_params("same", [("calibration-wrapper", Sharer("w")),
                                 ("reweighting", Sharer("r")), ("proposal", Part("p"))])
    with pytest.raises(RecipeError, match="reweighting 'r' has power=2.0 but "
                                          "calibration-wrapper 'w' has power=1.0; the two share "
                                          "'power', so give both the same value"):
        check_shared_params("differ", [("calibration-wrapper", Sharer("w")),
                                       ("reweighting", Sharer("r", power=2.0))])


def test_capability_values_are_validated():
    with pytest.raises(ValueError, match="provider must be one of"):
        Capability("x", "something", "weak-learner")


def test_registry_refuses_bad_and_conflicting_capabilities():
    registry = Registry()
    registry.add_capability(Capability("my-cap", "my capability", "proposal"))
    registry.add_capability(Capability("my-cap", "my capability", "proposal"))  # same: no-op
    with pytest.raises(RegistryError, match="capability 'my-cap' defined twice"):
        registry.add_capability(Capability("my-cap", "another meaning", "proposal"))
    with pytest.raises(RegistryError, match="capability name 'My Cap' is invalid"):
        registry.add_capability(Capability("My Cap", "x", "proposal"))
    with pytest.raises(RegistryError, match="expects a boostkit.Capability"):
        registry.add_capability("my-cap")


def test_capabilities_follow_parameters():
    registry = boostkit.get_registry()
    pav = registry.component("pav")
    assert "running-margin" in pav().provides and "scoring-functions" not in pav().needs
    assert "running-margin" not in pav(backfit=True).provides
    assert "scoring-functions" in pav(backfit=True).needs
    pool = registry.component("ordered-pool")
    assert "sign-scores" in pool(base="sign").provides
    assert "sign-scores" not in pool(base="auto").provides  # "auto" may choose counts
    alpha = registry.component("rankboost-alpha")
    assert "score-range" in alpha().needs and "score-range" not in alpha(score_range=(0, 1)).needs


def test_every_registered_algorithm_passes_the_check_and_every_capability_is_known():
    registry = boostkit.get_registry()
    for recipe in registry.algorithms().values():
        registry.instantiate(recipe)
    known = registry.capabilities()
    for name, cls in registry.components().items():
        for attr in ("needs", "provides", "withdraws"):
            value = getattr(cls, attr, frozenset())
            if isinstance(value, frozenset):
                assert value <= set(known), (name, attr, value - set(known))


def test_a_registered_algorithm_with_clashing_components_is_refused_at_registration():
    registry = Registry()
    for capability in ENGINE_CAPABILITIES:
        registry.add_capability(capability)
    source = boostkit.get_registry()
    for name in ("cmass", "constant-alpha", "exponential"):
        registry.add_component(source.component(name))
    with pytest.raises(RecipeError, match="'constant-alpha' needs hypotheses with values in"):
        registry.add_algorithm(boostkit.Recipe(
            name="clash", proposal="cmass", calibration="constant-alpha", reweighting="exponential"))
    assert "clash" not in registry.algorithms()


def test_nan_is_refused_unless_the_proposal_declares_missing_values():
    X = np.random.default_rng(0).normal(size=(30, 2))
    X[3, 1] = np.nan
    y = np.where(np.arange(30) % 2, 1, -1)
    with pytest.raises(boostkit.DataError, match=r"X contains 1 missing value\(s\) \(NaN\), e.g. at "
                       r"row 3, column 1; recipe 'pav-adaboost': proposal 'cmass' does not handle "
                       r"missing values \(it does not provide 'missing-values'\)"):
        boostkit.Booster("pav-adaboost", n_rounds=2).fit(np.abs(X), y)


@attrs.frozen
class NanStump(boostkit.WeakHypothesis):
    """x[0] <= threshold, x[0] > threshold, or x[0] missing: three cells."""

    name = "test-nan-stump"
    n_cells = 3
    threshold: float = 0.0

    def cells(self, X):
        x = np.asarray(X)[:, 0]
        return np.where(np.isnan(x), 2, (x > self.threshold).astype(np.intp))

    def scores(self, X):
        return np.array([-1.0, 1.0, 0.0])[self.cells(X)]


@attrs.define
class NanStumpLearner(boostkit.Proposal):
    name = "test-nan-stump-learner"
    provides = frozenset({"real-scores", "cells", "missing-values"})

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        hypothesis = NanStump()
        return boostkit.Candidate(hypothesis, state.data.X)


class NanPlugin:
    @boostkit.hookimpl
    def boostkit_register_components(self, registry):
        registry.add_component(NanStump)
        registry.add_component(NanStumpLearner)


@pytest.fixture
def nan_plugin():
    boostkit.register_plugin(NanPlugin(), name="test-nan")
    yield
    boostkit.unregister_plugin("test-nan")


def test_a_proposal_that_reads_missing_values_gets_them_in_fit_and_predict(nan_plugin, tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    X[::5, 0] = np.nan  # missing: the third cell, with both labels
    recipe = "proposal=test-nan-stump-learner calibration=domain-partition reweighting=exponential"
    model = boostkit.Booster(recipe, n_rounds=1).fit(X, y)
    cell_values = model.contributions[0].cell_values
    assert cell_values[2] == pytest.approx(0.0, abs=0.2)  # the missing cell barely votes
    F = model.decision_function(X)
    assert np.isfinite(F).all()
    assert (np.sign(F[~np.isnan(X[:, 0])]) == y[~np.isnan(X[:, 0])]).all()
    with pytest.raises(boostkit.DataError, match="infinite value"):
        model.decision_function(np.array([[np.inf, 0.0]]))
    # PAV-AdaBoost's cmass does not read NaN: the same data are refused for it, fit and predict.
    with pytest.raises(boostkit.DataError, match="proposal 'cmass' does not handle missing"):
        boostkit.Booster("pav-adaboost", n_rounds=1).fit(np.abs(X), y)
    clean = boostkit.Booster("pav-adaboost", n_rounds=1).fit(np.abs(np.nan_to_num(X)), y)
    with pytest.raises(boostkit.DataError, match="NaN"):
        clean.decision_function(X)

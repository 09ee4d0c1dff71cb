"""Every combination the capability check accepts works; the ones it refuses are named clearly.

The registered components of every installed plugin are enumerated: each proposal x calibration
x reweighting, then each accepted triple with each wrapper and each stopping rule added, fitted on
small real-valued count data (and the proposals that declare sparse input on the same data as a
CSR matrix). An accepted combination must fit without error and give a finite model; a refused one
must fail before any data is touched, with a RecipeError that names the clashing components.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import boostkit
from boostkit import ComponentSpec, Recipe, RecipeError
from boostkit.capabilities import SPARSE_INPUT, capabilities_of
from boostkit.testing import sample_recipes

REGISTRY = boostkit.get_registry()
N_ROUNDS = 4


def _data():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(60, 5)).astype(float)
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(0, 1, 60) > 0, 1, -1)
    return X, y


X, Y = _data()


def _accepted(recipe: Recipe) -> bool:
    try:
        REGISTRY.instantiate(recipe)
    except RecipeError as exc:
        assert "cannot work" in str(exc), exc
        return False
    return True


def _fit(recipe: Recipe, X=X):
    with warnings.catch_warnings():
        # A one-pass pool that runs out warns (Barutcuoglu et al. 2007, section 2, step 3): an
        # outcome, not an error.
        warnings.simplefilter("ignore", UserWarning)
        model = boostkit.Booster(recipe, n_rounds=N_ROUNDS, random_state=0).fit(X, Y)
    assert np.isfinite(model.decision_function(X)).all(), recipe.to_string()
    assert all(np.isfinite(r.weighted_error) for r in model.records), recipe.to_string()
    return model


TRIPLES = [
    Recipe(name=f"{p}/{c}/{r}", proposal=p, calibration=c, reweighting=r)
    for p, c, r in itertools.product(REGISTRY.components("proposal"),
                                     REGISTRY.components("calibration"),
                                     REGISTRY.components("reweighting"))
]
ACCEPTED = [recipe for recipe in TRIPLES if _accepted(recipe)]


def test_the_enumeration_covers_every_component_and_refuses_some():
    for role in ("proposal", "calibration", "reweighting"):
        used = {getattr(r, role).name for r in ACCEPTED}
        assert used == set(REGISTRY.components(role)), f"no accepted recipe uses some {role}"
    assert 0 < len(ACCEPTED) < len(TRIPLES)


def test_every_accepted_proposal_calibration_reweighting_fits():
    for recipe in ACCEPTED:
        _fit(recipe)


WRAPPERS_AND_STOPPING = [
    ("proposal-wrapper", "proposal_wrappers"),
    ("calibration-wrapper", "calibration_wrappers"),
    ("stopping", "stopping"),
]


def _with(attr: str, name: str) -> list[Recipe]:
    """Every accepted triple with the component ``name`` added as ``attr``, where the
    capability check accepts it."""
    import attrs

    added = (attrs.evolve(triple, **{attr: (ComponentSpec(name),)}) for triple in ACCEPTED)
    return [recipe for recipe in added if _accepted(recipe)]


@pytest.mark.parametrize("role, attr", WRAPPERS_AND_STOPPING)
def test_each_wrapper_and_stopping_rule_fits_with_every_component_it_accepts(role, attr):
    # The product below, sampled: each wrapper or stopping rule with every proposal,
    # calibration and reweighting of an accepted recipe (a few dozen fits, not over a thousand).
    for name in REGISTRY.components(role):
        recipes = _with(attr, name)
        assert recipes, name
        for recipe in sample_recipes(recipes, 10):
            _fit(recipe)


@pytest.mark.slow
@pytest.mark.parametrize("role, attr", WRAPPERS_AND_STOPPING)
def test_every_accepted_combination_with_each_wrapper_and_stopping_rule_fits(role, attr):
    n_fitted = 0
    for name in REGISTRY.components(role):
        for recipe in _with(attr, name):
            _fit(recipe)
            n_fitted += 1
    assert n_fitted > 0


def test_every_accepted_combination_of_a_sparse_proposal_fits_sparse_input():
    X_sparse = sp.csr_matrix(X)
    sparse = [r for r in ACCEPTED
              if SPARSE_INPUT in capabilities_of(REGISTRY.component(r.proposal.name)(
                  **r.proposal.params))[1]]
    assert sparse
    for recipe in sparse:
        model = _fit(recipe, X_sparse)
        np.testing.assert_allclose(model.decision_function(X_sparse), model.decision_function(X))


def test_a_dense_only_proposal_refuses_sparse_input_before_fitting():
    with pytest.raises(RecipeError, match="proposal 'stump' does not handle sparse input"):
        boostkit.Booster("adaboost").fit(sp.csr_matrix(X), Y)


@pytest.mark.parametrize("recipe, message", [
    ("proposal=cmass calibration=constant-alpha reweighting=exponential",
     "calibration 'constant-alpha' needs hypotheses with values in .* which proposal "
     "'cmass' does not provide"),
    ("proposal=stump calibration=unit-coefficient+input-dependent reweighting=boost-by-majority",
     "reweighting 'boost-by-majority' needs .*'unit-coefficients'.* and calibration-wrapper "
     "'input-dependent' takes it away"),
    ("proposal=score-columns calibration=pav(backfit=True)+input-dependent reweighting=exponential",
     "calibration-wrapper 'input-dependent' needs the running margin .* which calibration 'pav' "
     "does not provide"),
    ("proposal=cmass calibration=asymmetric-beta reweighting=stratification",
     "calibration 'asymmetric-beta' needs boolean hypotheses"),
    ("proposal=stump calibration=pav reweighting=initial-weights stopping=sum-converged",
     "stopping 'sum-converged' needs a potential .* which reweighting 'initial-weights' does not"),
])
def test_an_incompatible_pair_is_refused_naming_both_components(recipe, message):
    with pytest.raises(RecipeError, match=message):
        boostkit.Booster(recipe).fit(X, Y)


def _cookbook_recipes() -> list[str]:
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "cookbook.md"
    return re.findall(r'--recipe "([^"]+)"', page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("text", _cookbook_recipes())
def test_the_cookbook_recipes_are_accepted_and_fit(text):
    recipe = REGISTRY.resolve(text)
    assert recipe.name and "=" not in recipe.name
    _fit(recipe)


# -- several classes ------------------------------------------------------------------------------

Y3 = np.array(["a", "b", "c"])[(X[:, 0] > 1).astype(int) + (X[:, 2] > 1).astype(int)]
Y_LABELS = np.column_stack([X[:, 0] > 1, X[:, 1] > 0, X[:, 2] + X[:, 3] > 2]).astype(int)


def _native(recipe: Recipe) -> bool:
    from boostkit.capabilities import binary_only_components

    return not binary_only_components(REGISTRY.instantiate(recipe))


NATIVE = [recipe for recipe in ACCEPTED if _native(recipe)]


def _fit_classes(recipe: Recipe, y, **booster):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = boostkit.Booster(recipe, n_rounds=N_ROUNDS, random_state=0, **booster).fit(X, y)
    F = model.decision_function(X)
    assert F.shape == (len(X), model.n_columns) and np.isfinite(F).all(), recipe.to_string()
    return model


def test_every_accepted_multiclass_combination_fits_three_classes_and_labels():
    assert {r.proposal.name for r in NATIVE} >= {"stump"}
    for recipe in NATIVE:
        for stopping in [(), *((ComponentSpec(n),) for n in REGISTRY.components("stopping"))]:
            import attrs

            with_rule = attrs.evolve(recipe, stopping=stopping)
            if not (_accepted(with_rule) and _native(with_rule)):
                continue
            assert set(_fit_classes(with_rule, Y3).predict(X)) <= {"a", "b", "c"}
            from boostkit.capabilities import binary_only_components

            # SAMME's components need one true class per example: refused before fitting.
            if binary_only_components(REGISTRY.instantiate(with_rule), multilabel=True):
                with pytest.raises(boostkit.RecipeError, match="needs single-label y"):
                    _fit_classes(with_rule, Y_LABELS)
            else:
                _fit_classes(with_rule, Y_LABELS)


def test_every_proposal_runs_one_vs_rest_on_three_classes():
    first_per_proposal = {}
    for recipe in ACCEPTED:
        first_per_proposal.setdefault(recipe.proposal.name, recipe)
    for recipe in first_per_proposal.values():
        model = _fit_classes(recipe, Y3, multiclass="one-vs-rest")
        assert model.multiclass_strategy == "one-vs-rest" and len(model.models) == 3

"""Recipes by composition: Booster(proposal=..., calibration=[...]), recipe strings, to_string."""

from __future__ import annotations

import numpy as np
import pytest

import boostkit
from boostkit import ComponentSpec, Recipe, RecipeError
from boostkit.registry import compose, parse_recipe

REGISTRY = boostkit.get_registry()


def _parse(text: str) -> Recipe:
    return parse_recipe(text, REGISTRY.algorithm)


def test_compose_from_roles_puts_wrappers_innermost_first():
    recipe = compose(
        proposal=["stump", ("picky", {"gamma_bar": 0.05})],
        calibration=["constant-alpha", ("input-dependent", {"beta": 0.5})],
        reweighting="exponential",
        stopping=["no-edge"],
    )
    assert recipe.proposal == ComponentSpec("stump")
    assert recipe.proposal_wrappers == (ComponentSpec("picky", {"gamma_bar": 0.05}),)
    assert recipe.calibration_wrappers == (ComponentSpec("input-dependent", {"beta": 0.5}),)
    assert recipe.stopping == (ComponentSpec("no-edge"),)
    assert recipe.name == recipe.to_string()
    assert recipe.to_string() == (
        "proposal=stump+picky(gamma_bar=0.05) "
        "calibration=constant-alpha+input-dependent(beta=0.5) "
        "reweighting=exponential stopping=no-edge"
    )


def test_two_wrappers_chain_from_the_innermost_out():
    recipe = compose(proposal="stump", calibration=["pav", "a-wrapper", "b-wrapper"],
                     reweighting="exponential")
    # The recipe lists wrappers outermost first: b wraps (a wraps pav).
    assert [s.name for s in recipe.calibration_wrappers] == ["b-wrapper", "a-wrapper"]
    assert _parse(recipe.to_string()) == recipe


def test_compose_replaces_roles_of_a_base_and_renames_it():
    base = REGISTRY.algorithm("weightboost")
    recipe = compose(base, calibration=["pav", ("input-dependent", {"beta": 0.5})])
    assert recipe.proposal == base.proposal and recipe.reweighting == base.reweighting
    assert recipe.stopping == base.stopping
    assert recipe.calibration == ComponentSpec("pav")
    assert recipe.name != "weightboost" and recipe.paper == ""
    assert compose(base) is base
    assert compose(base, name="mine").name == "mine"


def test_compose_without_base_needs_every_single_role():
    with pytest.raises(RecipeError, match="needs a calibration and a reweighting"):
        compose(proposal="stump")
    with pytest.raises(RecipeError, match="empty list"):
        compose(proposal=[], calibration="pav", reweighting="exponential")


@pytest.mark.parametrize("text", [
    "proposal=stump+picky(gamma_bar=0.1) calibration=asymmetric-beta reweighting=stratification",
    "proposal=rank-stump calibration=rankboost-alpha(score_range=(-1.0, 1.0), smoothing=0.001) "
    "reweighting=bipartite stopping=no-rank-edge",
    "proposal=tree(max_depth=3, criterion='gini') calibration=pav(bins=None) "
    "reweighting=weightboost-weights(beta=0.5) stopping=no-edge+sum-converged",
])
def test_recipe_strings_round_trip(text):
    recipe = _parse(text)
    assert recipe.to_string() == _parse(recipe.to_string()).to_string()
    assert _parse(recipe.to_string()) == attrs_evolve_name(recipe)


def attrs_evolve_name(recipe):
    import attrs

    return attrs.evolve(recipe, name=recipe.to_string())


def test_recipe_string_reads_values_as_literals_or_words():
    recipe = _parse("proposal=tree(max_depth=3, criterion=gini) calibration=pav(bins=None, "
                    "epsilon=1e-3) reweighting=exponential")
    assert recipe.proposal.params == {"max_depth": 3, "criterion": "gini"}
    assert recipe.calibration.params == {"bins": None, "epsilon": 0.001}


def test_recipe_string_starts_from_an_algorithm_and_appends_stopping():
    recipe = _parse("adaboost stopping+=sum-converged(tol=0.01) name=adaboost-sum")
    assert recipe.name == "adaboost-sum"
    assert [s.name for s in recipe.stopping] == ["no-edge", "sum-converged"]
    assert _parse("adaboost stopping=").stopping == ()
    both = _parse("adaboost stopping=no-edge,validation(patience=5, metric=roc_auc)")
    assert both.stopping == _parse("adaboost stopping=no-edge+validation(patience=5, "
                                   "metric=roc_auc)").stopping
    assert both.stopping[1] == ComponentSpec("validation", {"patience": 5, "metric": "roc_auc"})


@pytest.mark.parametrize("text, message", [
    ("foo=bar", "expected slot=components"),
    ("proposal=stump( calibration=pav reweighting=exponential", "unbalanced"),
    ("proposal=Stump calibration=pav reweighting=exponential", "cannot read component 'Stump'"),
    ("adaboost calibration+=pav", "'\\+=' adds stopping rules or observers"),
    ("adaboost reweighting=exponential+bipartite", "reweighting takes one component"),
    ("proposal=stump(depth) calibration=pav reweighting=exponential", "expected key=value"),
    ("adaboost proposal=stump proposal=tree", "given twice"),
    ("no-such-algorithm calibration=pav", "unknown algorithm 'no-such-algorithm'"),
    ("   ", "non-empty string"),
])
def test_bad_recipe_strings_are_refused_clearly(text, message):
    with pytest.raises(RecipeError, match=message):
        REGISTRY.resolve(text)


def test_booster_composes_from_keywords_and_from_strings_alike():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=120) > 0, 1, -1)
    by_keywords = boostkit.Booster(
        proposal="stump", calibration=["pav", ("input-dependent", {"beta": 0.5})],
        reweighting=("weightboost-weights", {"beta": 0.5}), stopping=["no-edge"],
        n_rounds=15, random_state=1,
    ).fit(X, y)
    by_string = boostkit.Booster(
        "proposal=stump calibration=pav+input-dependent(beta=0.5) "
        "reweighting=weightboost-weights(beta=0.5) stopping=no-edge",
        n_rounds=15, random_state=1,
    ).fit(X, y)
    np.testing.assert_array_equal(by_keywords.decision_function(X), by_string.decision_function(X))
    assert by_keywords.recipe == by_string.recipe


def test_booster_replaces_roles_of_its_algorithm():
    booster = boostkit.Booster("weightboost", calibration=["pav", "input-dependent"])
    recipe = booster.recipe()
    assert recipe.proposal.name == "tree" and recipe.calibration.name == "pav"
    assert [s.name for s in recipe.calibration_wrappers] == ["input-dependent"]
    assert boostkit.Booster().recipe().name == "adaboost"


def test_booster_without_algorithm_needs_every_role():
    with pytest.raises(RecipeError, match="needs a reweighting"):
        boostkit.Booster(proposal="stump", calibration="pav").recipe()


def test_the_estimator_takes_a_recipe_string_and_grid_searches_its_parameters():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    from boostkit.sklearn import BoostClassifier

    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 3))
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=150) > 0, "spam", "ham")
    estimator = BoostClassifier("weightboost calibration=pav+input-dependent(beta=0.5)",
                                n_rounds=10, random_state=0)
    # The regularizer and WeightBoost's reweighting share beta (and check it): tie them.
    grid = [{"input_dependent__beta": [b], "reweighting__beta": [b]} for b in (0.0, 0.5)]
    search = GridSearchCV(estimator, grid, cv=3, error_score="raise").fit(X, y)
    assert search.best_params_["input_dependent__beta"] in (0.0, 0.5)
    fitted = clone(estimator).fit(X, y)
    assert fitted.model_.recipe.calibration.name == "pav"
    assert set(fitted.predict(X)) <= {"spam", "ham"}

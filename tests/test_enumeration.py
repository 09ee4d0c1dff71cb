"""Every combination the checks accept fits real data: a finite model and finite predictions.

The recipes are every proposal x calibration x reweighting of the installed plugins that the
capability check accepts (:func:`boostkit.testing.enumerate_recipes`, which plugin authors use too), and each of them with each proposal wrapper, calibration wrapper and
stopping rule added (when the check accepts that too). Each is fitted on real datasets, whose
features are negative, zero, large or heavy-tailed as they come. A recipe may still be refused
on the data, before fitting, by a data requirement (``nscore`` needs non-negative features): the
message must then name a component of the recipe and the column. Anything else, an exception
or a non-finite margin, is a failure.

The default run fits a deterministic sample of the recipes (every component in at least one)
for a few rounds on a few rows; the full enumeration, every recipe for 100 rounds on ionosphere
(all 351 rows) and on 1000 rows of spambase drawn at random (its large, heavy-tailed counts are
what overflowed; the whole of it takes hours over some 9000 recipes), is marked slow
(``pytest -m slow tests/test_enumeration.py``).
"""

from __future__ import annotations

import re
import warnings

import attrs
import numpy as np
import pytest

import boostkit
from boostkit import Recipe, RecipeError
from boostkit.datasets import load
from boostkit.testing import EXTRA_SLOTS, component_names, enumerate_recipes, sample_recipes

REGISTRY = boostkit.get_registry()
DATASETS = ("ionosphere", "spambase")
#: Rows of each dataset in the full (slow) enumeration: None for all of them.
FULL_ROWS = {"ionosphere": None, "spambase": 1000}
ENUMERATION = enumerate_recipes(registry=REGISTRY)
RECIPES = list(ENUMERATION.accepted)


def _rows(name: str, n_rows: int | None):
    data = load(name)
    X, y = data.X, data.binary_target()
    if n_rows is None:
        return X, y
    rows = np.random.default_rng(0).permutation(len(y))[:n_rows]
    return X[rows], y[rows]


def fit_all(recipes, X, y, n_rounds: int) -> tuple[int, list[str]]:
    """``(number refused on the data, failures)``: each failure names the recipe and the error."""
    refused, failures = 0, []
    for recipe in recipes:
        try:
            with warnings.catch_warnings():
                # A one-pass pool that runs out warns (Barutcuoglu et al. 2007, section 2, step 3):
                # an outcome.
                warnings.simplefilter("ignore")
                model = boostkit.Booster(recipe, n_rounds=n_rounds, random_state=0).fit(X, y)
        except RecipeError as exc:
            message = str(exc)
            named = re.search(r"(proposal|calibration|reweighting|stopping|wrapper) '([a-z0-9-]+)' "
                              r"needs .* column \d+", message)
            if "cannot work on this X" in message and named and named[2] in component_names(recipe):
                refused += 1
                continue
            failures.append(f"{recipe.to_string()}: refused unclearly: {message}")
            continue
        except Exception as exc:
            failures.append(f"{recipe.to_string()}: {type(exc).__name__}: {exc}")
            continue
        if not np.isfinite(model.decision_function(X)).all():
            failures.append(f"{recipe.to_string()}: non-finite predictions")
        elif not all(np.isfinite(r.weighted_error) and np.isfinite(r.coefficients).all()
                     for r in model.records):
            failures.append(f"{recipe.to_string()}: non-finite weighted error or coefficients")
    return refused, failures


def test_the_enumeration_covers_every_component_with_wrappers_and_stopping_rules():
    used = set().union(*map(component_names, RECIPES))
    for role in ("proposal", "calibration", "reweighting", *(role for role, _ in EXTRA_SLOTS)):
        assert set(REGISTRY.components(role)) <= used, f"no accepted recipe uses some {role}"
    assert set().union(*map(component_names, sample_recipes(RECIPES, 300))) == used


def test_every_refused_recipe_is_refused_by_the_capability_check():
    assert ENUMERATION.refused
    for recipe, reason in ENUMERATION.refused:
        assert "cannot work" in reason, f"{recipe.to_string()}: {reason}"


def test_fit_all_reports_a_component_that_breaks():
    """The harness can fail: a reweighting returning NaN weights is reported, not skipped."""

    @attrs.define
    class Broken(boostkit.Reweighting):
        name = "broken-weights-for-enumeration"

        @boostkit.hookimpl
        def boostkit_reweight(self, state):
            return boostkit.Weights(np.full(state.margin.shape, np.nan))

    class Plugin:
        @boostkit.hookimpl
        def boostkit_register_components(self, registry):
            registry.add_component(Broken)

    boostkit.register_plugin(Plugin(), name="broken-weights-for-enumeration")
    try:
        X, y = _rows("ionosphere", 40)
        recipe = Recipe(name="broken", proposal="stump", calibration="constant-alpha",
                        reweighting="broken-weights-for-enumeration")
        refused, failures = fit_all([recipe], X, y, n_rounds=2)
    finally:
        boostkit.unregister_plugin("broken-weights-for-enumeration")
    assert refused == 0 and len(failures) == 1
    assert "reweighting 'broken-weights-for-enumeration'" in failures[0]


@pytest.mark.parametrize("dataset", DATASETS)
def test_a_sample_of_the_accepted_recipes_fits_a_few_rows_of_real_data(dataset):
    X, y = _rows(dataset, 48)
    refused, failures = fit_all(sample_recipes(RECIPES, 150), X, y, n_rounds=6)
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:20])


@pytest.mark.slow
@pytest.mark.parametrize("dataset", DATASETS)
def test_every_accepted_recipe_fits_100_rounds_of_real_data(dataset):
    X, y = _rows(dataset, FULL_ROWS[dataset])
    refused, failures = fit_all(RECIPES, X, y, n_rounds=100)
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:20])
    assert refused < len(RECIPES)

"""Every registered recipe (and each with the ``tree`` learner) on bundled and KEEL datasets of
two classes, several classes, multi-label data, missing values and categories: its model either
exports and serves boostkit's predictions (labels identical, probabilities and margins to
rounding, float64 and float32 inputs) or is refused with an ExportError; never anything else.
The recipes that export on two classes are the ones docs/serving.md lists. Slow:
``pytest -m slow tests/onnx/test_onnx_sweep.py``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx_checks import assert_serves_as_boostkit

import boostkit
from boostkit import DataError, RecipeError
from boostkit.datasets import load
from boostkit.onnx import ExportError, to_onnx
from boostkit.study.sources import resolve_datasets

pytestmark = pytest.mark.slow

#: The registered recipes whose models export on two classes (docs/serving.md lists them).
EXPORTABLE = {
    "adaboost", "adaboost-mh", "boostexter", "discrete-adaboost-mh", "gentle-adaboost",
    "logitboost", "madaboost", "real-adaboost", "samme", "samme-error", "ada2boost",
}
TREE = ("tree", {"max_depth": 3})


def _datasets():
    """``{name: (X, y, features)}``: two classes (with missing values and categories too),
    several classes, multi-label."""
    out = {}
    for name in ("breast_cancer_wisconsin", "german_credit", "contraceptive"):
        data = load(name, dropna=name == "breast_cancer_wisconsin")
        out[name] = data.X, data.y, data.features
    adult = load("adult")
    rows = np.random.default_rng(0).choice(adult.X.shape[0], 2000, replace=False)
    out["adult (2000 rows)"] = adult.X[rows], adult.y[rows], adult.features
    for source in resolve_datasets(["keel/crx", "keel/iris", "keel/led7digit",
                                    "keel/housevotes"]):
        data = source.load()
        out[source.name] = data.X, data.y, data.features
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 6))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] + X[:, 2] > 0, X[:, 3] > 1]).astype(int)
    out["multi-label"] = X, Y, None
    return out


DATASETS = _datasets()
RECIPES = sorted(boostkit.get_registry().algorithms())


def _fit(recipe, X, y, features, proposal):
    options = {} if proposal is None else {"proposal": proposal}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return boostkit.Booster(recipe, n_rounds=20, random_state=0, multiclass="auto",
                                **options).fit(X, y, features=features)


@pytest.mark.parametrize("dataset", list(DATASETS))
@pytest.mark.parametrize("proposal", [None, TREE], ids=["own learner", "tree"])
def test_every_recipe_exports_exactly_or_is_refused(dataset, proposal):
    X, y, features = DATASETS[dataset]
    exported = set()
    for recipe in RECIPES:
        try:
            model = _fit(recipe, X, y, features, proposal)
        except (RecipeError, DataError, ValueError):
            continue  # the recipe does not fit these data (or this learner): nothing to export
        try:
            to_onnx(model)
        except ExportError as exc:
            assert str(exc).startswith(("round ", "the model has 0 rounds")), exc
            continue
        for dtype in ("float64", "float32"):
            assert_serves_as_boostkit(model, X, dtype=dtype)
        exported.add(recipe)
    if dataset == "breast_cancer_wisconsin" and proposal is None:
        assert exported == EXPORTABLE
    assert exported

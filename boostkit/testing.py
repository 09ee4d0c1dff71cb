"""Tools for plugin authors' tests: strict plugin loading, and a check of one component in
every recipe it can join.

Outside tests, a broken plugin is left out with a :class:`~boostkit.errors.PluginWarning` so that
every other plugin keeps working. In a plugin's own test suite that warning should fail the
run. Load this module as a pytest plugin, in the ``conftest.py`` at the root of your tests::

    pytest_plugins = ["boostkit.testing"]

and request :func:`strict_plugins` in the tests that load plugins, or make it apply to every
test::

    import pytest

    @pytest.fixture(autouse=True)
    def _strict(strict_plugins):
        pass

Equivalently, set ``BOOSTKIT_STRICT_PLUGINS=1`` in your CI's environment.

Then check each of your round components with :func:`check_component`: it fits the component in
the recipes the capability check accepts (:func:`enumerate_recipes`) on bundled real datasets
and checks the invariants every fit must keep::

    def test_my_calibration():
        boostkit.testing.check_component("my-calibration", raise_on_failure=True)
"""

from __future__ import annotations

import itertools
import json
import math
import tempfile
import warnings
from pathlib import Path
from typing import Sequence

import attrs
import numpy as np
import pytest

from . import plugins
from .components import ROUND_ROLES, Component
from .engine import WEIGHT_SUM_TOLERANCE, Booster
from .errors import ModelFormatError, RecipeError
from .model import _JSON_KEY as MODEL_KEY
from .model import _PICKLED as PICKLED
from .model import BoostModel
from .registry import ComponentSpec, Recipe, Registry

__all__ = [
    "ComponentReport",
    "Enumeration",
    "Failure",
    "Refusal",
    "check_component",
    "enumerate_recipes",
    "sample_recipes",
    "strict_plugins",
]


@pytest.fixture
def strict_plugins(monkeypatch):
    """Make a broken plugin an error for one test, as ``BOOSTKIT_STRICT_PLUGINS=1`` does.

    The registry is rebuilt on first use in the test (so a plugin that breaks raises there, with
    the error that names it: :class:`~boostkit.errors.PluginLoadError` or
    :class:`~boostkit.errors.RegistryError`) and again after it.
    """
    monkeypatch.setenv(plugins.STRICT_ENV_VAR, "1")
    plugins.reset()
    yield
    monkeypatch.delenv(plugins.STRICT_ENV_VAR, raising=False)
    plugins.reset()


# -- enumerating recipes -----------------------------------------------------------------------

#: The roles a recipe holds exactly one of.
CORE_ROLES = ("proposal", "calibration", "reweighting")
#: The roles added to a core triple one at a time, with the recipe attribute holding them.
EXTRA_SLOTS = (("proposal-wrapper", "proposal_wrappers"),
               ("calibration-wrapper", "calibration_wrappers"), ("stopping", "stopping"),
               ("observer", "observers"))


@attrs.frozen
class Enumeration:
    """The recipes of :func:`enumerate_recipes`: those the capability check accepts, and those
    it refuses with its message."""

    accepted: tuple[Recipe, ...]
    refused: tuple[tuple[Recipe, str], ...]


def _refusal(registry: Registry, recipe: Recipe) -> str | None:
    """The capability check's message refusing ``recipe``, or ``None`` if it accepts it."""
    try:
        registry.instantiate(recipe)
    except RecipeError as exc:
        return str(exc)
    return None


def enumerate_recipes(component=None, *, registry: Registry | None = None) -> Enumeration:
    """Every proposal x calibration x reweighting of the registry, then every accepted triple
    with one proposal wrapper, calibration wrapper, stopping rule or observer added, split into
    the recipes the capability check accepts and those it refuses.

    ``component`` (``"name"``, ``("name", {params})`` or a :class:`boostkit.ComponentSpec`)
    keeps the recipes that use it: a core component fills its slot in every triple (and the
    triples are extended with every other component); a wrapper, stopping rule or observer is
    added to every accepted triple. Recipes are named ``proposal/calibration/reweighting`` with
    ``+extra`` for the added component.
    """
    registry = registry or plugins.get_registry()
    spec = None if component is None else ComponentSpec.of(component)
    role = None if spec is None else registry.component(spec.name).role
    choices = {r: [ComponentSpec(n) for n in registry.components(r)] for r in CORE_ROLES}
    if role in CORE_ROLES:
        choices[role] = [spec]
    refused: list[tuple[Recipe, str]] = []

    def check(recipes):
        kept = []
        for recipe in recipes:
            reason = _refusal(registry, recipe)
            if reason is None:
                kept.append(recipe)
            else:
                refused.append((recipe, reason))
        return kept

    triples = check(
        Recipe(name=f"{p.name}/{c.name}/{r.name}", proposal=p, calibration=c, reweighting=r)
        for p, c, r in itertools.product(*(choices[r] for r in CORE_ROLES))
    )
    if role is None or role in CORE_ROLES:
        extras = [(attr, ComponentSpec(name)) for extra_role, attr in EXTRA_SLOTS
                  for name in registry.components(extra_role)]
    else:
        extras = [(dict(EXTRA_SLOTS)[role], spec)]
    extended = check(
        attrs.evolve(triple, name=f"{triple.name}+{extra.name}", **{attr: (extra,)})
        for attr, extra in extras
        for triple in triples
    )
    accepted = extended if role in dict(EXTRA_SLOTS) else triples + extended
    if spec is not None:  # a triple refused before the component was added is not its business
        refused = [(recipe, reason) for recipe, reason in refused
                   if spec.name in component_names(recipe)]
    return Enumeration(tuple(accepted), tuple(refused))


def component_names(recipe: Recipe) -> set[str]:
    """The names of the components of ``recipe``."""
    return {spec.name for _, _, spec in recipe.slots()}


def sample_recipes(recipes: Sequence[Recipe], size: int) -> list[Recipe]:
    """``size`` recipes, evenly spaced, plus the first recipe of every component not among them
    (so the sample may hold more than ``size``)."""
    step = max(1, len(recipes) // size)
    chosen = list(recipes[::step])
    covered = set().union(*map(component_names, chosen))
    for recipe in recipes:
        if not component_names(recipe) <= covered:
            chosen.append(recipe)
            covered |= component_names(recipe)
    return chosen


# -- checking a component ----------------------------------------------------------------------


@attrs.frozen
class Refusal:
    """A recipe refused before fitting: by the capability check (``dataset`` is ``None``) or on
    a dataset's values (a data requirement, several classes for a binary-only recipe)."""

    recipe: str
    dataset: str | None
    reason: str

    def __str__(self) -> str:
        where = "" if self.dataset is None else f" on {self.dataset}"
        return f"{self.recipe}{where}: {self.reason}"


@attrs.frozen
class Failure:
    """A broken invariant: ``check`` is ``"fit"``, ``"predictions"``, ``"save"``,
    ``"load"`` or ``"refit"``; ``message`` says what went wrong and, for errors raised in a hook,
    names the component that raised it."""

    recipe: str
    dataset: str
    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.recipe} on {self.dataset}, {self.check}: {self.message}"


@attrs.frozen
class ComponentReport:
    """What :func:`check_component` found for one component.

    ``tried`` are the recipes fitted (as recipe strings), ``refused`` the recipes refused before
    fitting with the reason, ``failures`` the broken invariants. ``passed`` is True when nothing
    failed and some recipe was tried.
    """

    component: str
    datasets: tuple[str, ...]
    tried: tuple[str, ...]
    refused: tuple[Refusal, ...]
    failures: tuple[Failure, ...]

    @property
    def passed(self) -> bool:
        return bool(self.tried) and not self.failures

    def __str__(self) -> str:
        lines = [f"check_component({self.component}): {len(self.tried)} recipe(s) tried on "
                 f"{', '.join(self.datasets)}, {len(self.refused)} refused, "
                 f"{len(self.failures)} failure(s)"]
        if not self.tried:
            lines.append("  no recipe the capability check accepts uses the component")
        lines += [f"  {failure}" for failure in self.failures]
        return "\n".join(lines)


def _resolve(component, registry: Registry) -> tuple[ComponentSpec, type[Component]]:
    """The spec and registered class of ``component`` (a name, ``(name, params)``, a
    ComponentSpec or a registered class), refusing what cannot be checked."""
    if isinstance(component, type) and issubclass(component, Component):
        name = getattr(component, "name", None)
        if registry.components().get(name) is not component:
            raise ValueError(
                f"check_component: component class {component.__qualname__} (name {name!r}) is "
                "not registered; register the plugin that adds it (boostkit.register_plugin) "
                "first, so that models holding it can be loaded"
            )
        component = name
    spec = ComponentSpec.of(component)
    cls = registry.component(spec.name)
    if cls.role not in ROUND_ROLES:
        raise ValueError(
            f"check_component: {cls.role} {spec.name!r} is a value component; check the proposal "
            "or calibration that makes it (its models are saved, loaded and compared there)"
        )
    try:
        cls(**spec.params)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"check_component: bad parameters for {spec.name!r}: {exc}") from exc
    return spec, cls


def _rows(name: str, n_rows: int | None, encode: str) -> tuple[np.ndarray, np.ndarray]:
    from .datasets import load

    data = load(name, encode=encode, dropna=True)
    if n_rows is None or n_rows >= len(data.y):
        return data.X, data.y
    rows = np.sort(np.random.default_rng(0).permutation(len(data.y))[:n_rows])
    return data.X[rows], data.y[rows]


def _check_round(state, record) -> None:
    """A fit callback: the distribution and the margins after each round are sound."""
    weights, margin = state.weights, state.margin
    if weights.dtype != np.float64:
        raise AssertionError(f"round {record.round}: the weights are {weights.dtype}, not float64")
    if not np.isfinite(weights).all() or weights.min() < 0.0:
        raise AssertionError(f"round {record.round}: weights that are negative, NaN or infinite")
    if not math.isclose(weights.sum(), 1.0, rel_tol=0.0, abs_tol=WEIGHT_SUM_TOLERANCE):
        raise AssertionError(f"round {record.round}: the weights sum to {weights.sum()!r}, not 1")
    if not np.isfinite(margin).all():
        raise AssertionError(f"round {record.round}: NaN or infinite training margins")


def _trace(model: BoostModel) -> list:
    """What two fits of the same recipe, data and seed must share, round by round."""
    return [(r.hypothesis, r.coefficients, r.stop_reason) for r in model.records]


def _pickled_values(path: Path, owner: tuple[str, str]) -> list[str]:
    """The values of a model file saved with ``allow_pickle=True`` that were pickled and belong
    to ``owner`` (``(component name, plugin)``): its own parameters, the round records, and
    every hypothesis and contribution that ``owner``'s plugin registered."""
    name, source = owner
    registry = plugins.get_registry()
    with np.load(path, allow_pickle=False) as archive:
        structure = json.loads(archive[MODEL_KEY].tobytes().decode("utf-8"))

    def holds_pickle(value) -> bool:
        if isinstance(value, dict):
            return PICKLED in value or any(map(holds_pickle, value.values()))
        return isinstance(value, list) and any(map(holds_pickle, value))

    found = []
    stack = [structure]
    while stack:
        value = stack.pop()
        if isinstance(value, list):
            stack += value
        elif isinstance(value, dict):
            if isinstance(value.get("component"), str) and holds_pickle(value.get("params")):
                component = value["component"]
                if registry.source_of(component) == source:
                    found.append(f"{registry.component(component).role} {component!r}")
            stack += [v for k, v in value.items() if k not in ("params", "recipe", "records")]
    recipe = structure["recipe"]
    for spec in (s for v in recipe.values() for s in (v if isinstance(v, list) else [v])):
        if isinstance(spec, dict) and spec.get("name") == name and holds_pickle(spec.get("params")):
            found.append(f"the parameters of {name!r}")
    if holds_pickle(structure["records"]):
        found.append("the round records")
    return list(dict.fromkeys(found))


def _check_recipe(recipe: Recipe, dataset: str, X, y, *, n_rounds: int, random_state: int,
                  allow_pickle: bool, directory: Path,
                  owner: tuple[str, str]) -> Refusal | Failure | None:
    """Fit ``recipe`` on ``(X, y)`` and check every invariant; the first one broken, a refusal
    before fitting, or ``None``."""
    name = recipe.to_string()

    def fit() -> BoostModel:
        booster = Booster(recipe, n_rounds=n_rounds, random_state=random_state,
                          callbacks=[_check_round])
        with warnings.catch_warnings():
            # Warnings are outcomes (a one-pass pool running out), not broken invariants.
            warnings.simplefilter("ignore")
            return booster.fit(X, y)

    def failed(check: str, message: str) -> Failure:
        return Failure(name, dataset, check, message)

    try:
        model = fit()
    except RecipeError as exc:
        # Refused on the data, before fitting: the message must name the component at fault.
        message = str(exc)
        if any(f"'{component}'" in message for component in component_names(recipe)):
            return Refusal(name, dataset, message)
        return failed("fit", f"refused without naming a component: {message}")
    except Exception as exc:
        return failed("fit", f"{type(exc).__name__}: {exc}")
    with np.errstate(all="ignore"):
        margin = model.decision_function(X)
        proba = model.predict_proba(X)
    if not (np.isfinite(margin).all() and np.isfinite(proba).all()):
        return failed("predictions", "NaN or infinite decision function or probabilities")
    path = directory / "model.npz"
    pickled = allow_pickle
    try:
        model.save(path, allow_pickle=allow_pickle)
    except ModelFormatError as exc:
        if allow_pickle:
            return failed("save", f"{type(exc).__name__}: {exc}")
        # A partner from another plugin may hold foreign objects (the sklearn-estimator
        # proposal's fitted estimators): pickling those is its business, not the component's.
        try:
            model.save(path, allow_pickle=True)
        except Exception as again:
            return failed("save", f"{type(again).__name__}: {again}")
        owned = _pickled_values(path, owner)
        if owned:
            return failed("save", f"{', '.join(owned)} cannot be saved without pickle: {exc}")
        pickled = True
    except Exception as exc:
        return failed("save", f"{type(exc).__name__}: {exc}")
    try:
        loaded = BoostModel.load(path, allow_pickle=pickled)
    except Exception as exc:
        return failed("load", f"{type(exc).__name__}: {exc}")
    if not np.array_equal(loaded.decision_function(X), margin):
        return failed("load", "the loaded model's decision function differs from the fitted one")
    try:
        again = fit()
    except Exception as exc:
        return failed("refit", f"the same fit raised the second time: {type(exc).__name__}: {exc}")
    if not (np.array_equal(again.decision_function(X), margin) and _trace(again) == _trace(model)):
        first = next((t for t, (a, b) in enumerate(zip(_trace(model), _trace(again)), 1) if a != b),
                     min(model.n_rounds, again.n_rounds) + 1)
        return failed("refit", f"refitting with random_state={random_state} gave another model "
                               f"(from round {first}); draw every random number from state.rng")
    return None


def check_component(component, *, datasets: Sequence[str] = ("ionosphere", "breast_cancer_wisconsin"),
                    n_rounds: int = 20, n_rows: int | None = 200, max_recipes: int | None = 30,
                    random_state: int = 0, encode: str = "onehot", allow_pickle: bool = False,
                    raise_on_failure: bool = False) -> ComponentReport:
    """Fit one round component in every recipe the capability check accepts, and check that
    each fit keeps the invariants of the extension contract.

    For each recipe of :func:`enumerate_recipes` that uses ``component`` (at most
    ``max_recipes`` of them, evenly spaced, plus one for every partner component the sample
    misses; ``None`` for all) and each dataset, it fits ``n_rounds`` rounds on ``n_rows`` rows
    drawn at random (``None`` for all) with ``random_state``, and checks:

    * after every round (a fit callback): the weights are a float64 distribution (finite,
      non-negative, summing to 1) and the training margins are finite;
    * the decision function and probabilities on the training rows are finite;
    * the model saves and loads and the loaded model gives the same decision function, bit for
      bit. Without ``allow_pickle``, a value that is no JSON value or array (see "Saving
      models" in ``docs/plugins.md``) is a failure when it is the component's parameter, a
      round record or a hypothesis or contribution its plugin registered; one from a partner
      of another plugin (the ``sklearn-estimator`` proposal's fitted estimators) is pickled
      and the round trip still checked;
    * fitting again with the same seed gives the same model (same rounds, same decision
      function).

    A recipe refused on a dataset before fitting (a data requirement, several classes for a
    binary-only recipe) is a refusal, provided the message names one of its components.

    Parameters
    ----------
    component:
        A registered round component: ``"name"``, ``("name", {params})``, a
        :class:`boostkit.ComponentSpec` or the registered class.
    datasets:
        Names for :func:`boostkit.datasets.load`, loaded with ``encode`` and ``dropna=True``.
    raise_on_failure:
        Raise an ``AssertionError`` listing every failure (the report's text) if any.

    Returns
    -------
    ComponentReport
        The recipes tried, those refused with the reason, and the failures.
    """
    registry = plugins.get_registry()
    spec, cls = _resolve(component, registry)
    enumeration = enumerate_recipes(spec, registry=registry)
    owner = (spec.name, registry.source_of(spec.name))
    recipes = list(enumeration.accepted)
    if max_recipes is not None and len(recipes) > max_recipes:
        recipes = sample_recipes(recipes, max_recipes)
    refused = [Refusal(recipe.to_string(), None, reason) for recipe, reason in enumeration.refused]
    failures: list[Failure] = []
    with tempfile.TemporaryDirectory(prefix="boostkit-check-") as directory:
        for dataset in datasets:
            X, y = _rows(dataset, n_rows, encode)
            for recipe in recipes:
                outcome = _check_recipe(recipe, dataset, X, y, n_rounds=n_rounds,
                                        random_state=random_state, allow_pickle=allow_pickle,
                                        directory=Path(directory), owner=owner)
                if isinstance(outcome, Refusal):
                    refused.append(outcome)
                elif outcome is not None:
                    failures.append(outcome)
    report = ComponentReport(
        component=f"{cls.role} {spec.to_string()!r}",
        datasets=tuple(datasets),
        tried=tuple(recipe.to_string() for recipe in recipes),
        refused=tuple(refused),
        failures=tuple(failures),
    )
    if raise_on_failure and not report.passed:
        raise AssertionError(str(report))
    return report

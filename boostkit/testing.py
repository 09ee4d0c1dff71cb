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
import re
import tempfile
import warnings
from pathlib import Path
from typing import Sequence
from unittest import mock

import attrs
import numpy as np
import pytest

from . import engine, plugins
from .capabilities import CELLS, TWO_CELLS
from .components import ROUND_ROLES, Candidate, Component
from .engine import Booster
from .plane import WEIGHT_SUM_TOLERANCE
from .errors import ModelFormatError, RecipeError
from .hookspecs import hookimpl
from .model import BoostModel
from .model_file import _JSON_KEY as MODEL_KEY
from .model_file import _PICKLED as PICKLED
from .registry import ComponentSpec, Recipe, Registry

__all__ = [
    "ComponentReport",
    "Enumeration",
    "Failure",
    "CompiledFormsReport",
    "Refusal",
    "check_compiled_forms",
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
    """A broken invariant: ``check`` is ``"fit"``, ``"cells"`` (a hypothesis' ``cells(X)`` on
    the training rows differ from the cells its candidate reported, or the model's term for a
    round differs on the training rows from what the fit added), ``"partition-loss"`` (a partition
    loss that does not add up over cells), ``"predictions"``, ``"save"``, ``"load"`` or
    ``"refit"``; ``message`` says what went wrong and names the component at fault where it can
    be told, which ``culprit`` gives as ``"role 'name'"`` (``None`` when it cannot be told)."""

    recipe: str
    dataset: str
    check: str
    message: str
    culprit: str | None = None

    def __str__(self) -> str:
        return f"{self.recipe} on {self.dataset}, {self.check}: {self.message}"


#: Numbers in a failure's message, masked to group failures that differ only in them.
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _grouped(failures: Sequence[Failure]) -> list[str]:
    """One line per kind of failure: the first example, and how many more are like it (the
    same check, culprit and message but for numbers)."""
    groups: dict[tuple, list[Failure]] = {}
    for failure in failures:
        key = (failure.check, failure.culprit, _NUMBER.sub("#", failure.message))
        groups.setdefault(key, []).append(failure)
    return [f"  {group[0]}" + (f" [and {len(group) - 1} more like it]" if len(group) > 1 else "")
            for group in groups.values()]


@attrs.frozen
class ComponentReport:
    """What :func:`check_component` found for one component.

    ``tried`` are the recipes fitted (as recipe strings), ``refused`` the recipes refused before
    fitting with the reason, ``failures`` the broken invariants that are the component's (or
    that no other component can be blamed for), ``partner_failures`` those a failure names
    another component of the recipe for (its ``culprit``): a broken component registered beside
    it. ``passed`` is True when the component failed nothing and some recipe was tried.
    """

    component: str
    datasets: tuple[str, ...]
    tried: tuple[str, ...]
    refused: tuple[Refusal, ...]
    failures: tuple[Failure, ...]
    partner_failures: tuple[Failure, ...] = ()

    @property
    def passed(self) -> bool:
        return bool(self.tried) and not self.failures

    def __str__(self) -> str:
        lines = [f"check_component({self.component}): {len(self.tried)} recipe(s) tried on "
                 f"{', '.join(self.datasets)}, {len(self.refused)} refused, "
                 f"{len(self.failures)} failure(s)"]
        if not self.tried:
            lines.append("  no recipe the capability check accepts uses the component")
        lines += _grouped(self.failures)
        if self.partner_failures:
            culprits = sorted({f.culprit for f in self.partner_failures})
            lines.append(f"{len(self.partner_failures)} failure(s) of other components, not "
                         f"{self.component}'s: {', '.join(culprits)}")
            lines += _grouped(self.partner_failures)
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


class _Broken(Exception):
    """An invariant a fit callback found broken: ``check`` names it, ``culprit`` is the recipe
    component at fault (``"role 'name'"``), or ``None`` when it cannot be told."""

    def __init__(self, check: str, message: str, culprit: str | None = None):
        super().__init__(message)
        self.check, self.message, self.culprit = check, message, culprit


#: Rounding the check of a round's term allows: the margins' change F_t - F_{t-1} is the term
#: itself only up to the subtraction's rounding.
TERM_TOLERANCE = 1e-9


def _labelled(registry: Registry, spec: ComponentSpec) -> str:
    return f"{registry.component(spec.name).role} {spec.name!r}"


class _CandidateTap:
    """An extra observer of the fit: the candidates handed to ``boostkit_calibrate`` (the
    proposal's, after its wrappers) in the current round, so that the round check can compare
    the cells the proposal reported with those its hypothesis gives."""

    def __init__(self):
        self.candidates: list[Candidate] = []

    @hookimpl(wrapper=True)
    def boostkit_calibrate(self, state, candidate):
        self.candidates.append(candidate)
        return (yield)


class _RoundCheck:
    """A fit callback checking, after every round, what the engine does not: the weights are a
    float64 distribution and the margins finite, the hypothesis' ``cells(X)`` on the training
    rows are the cells its proposal reported in the candidate (bit for bit), the round's term
    (hypothesis and contribution) evaluated on the training rows as a model evaluates it is
    what the fit added to the margins, and (once per fit) the calibration's partition loss adds
    up over cells. ``tap`` is the observer the fit needs for the candidates."""

    def __init__(self, recipe: Recipe, registry: Registry):
        self.recipe, self.registry = recipe, registry
        self.previous: np.ndarray | None = None
        self.terms: list = []  # (hypothesis, contribution) of the model so far
        self.tap = _CandidateTap()

    def __call__(self, state, record) -> None:
        if state.round == 1:
            self.previous = np.zeros_like(state.margin)
            self._check_partition_loss(state)
        candidates, self.tap.candidates = self.tap.candidates, []
        self._check_distribution(state, record)
        replaces = record.extra.get("replaces")
        index = len(state.contributions) - 1 if replaces is None else replaces
        hypothesis = state.hypotheses[index]
        candidate = next((c for c in reversed(candidates) if c.hypothesis is hypothesis), None)
        cells_agree = self._check_cells(state, record, candidate)
        self._check_term(state, record, candidate, cells_agree)
        self.previous = state.margin.copy()
        self.terms = list(zip(state.hypotheses, state.contributions))

    def _check_cells(self, state, record, candidate) -> bool:
        """The proposal's promise, whatever the calibration: ``hypothesis.cells(X)`` on the
        training rows reproduces bit for bit the cells its candidate reported ("Prediction must
        reproduce training" in docs/plugins.md). True when they were compared and agree, False
        when the candidate reported no cells to compare."""
        if candidate is None or candidate._cells is None:
            return False
        hypothesis = candidate.hypothesis
        proposal = self._proposal_of(hypothesis)
        try:
            predicted = np.asarray(hypothesis.cells(state.data.X))
        except Exception as exc:
            raise _Broken("predictions", f"round {record.round}: hypothesis {hypothesis.name!r} "
                          f"of {proposal}: cells(X) on the training rows raised "
                          f"{type(exc).__name__}: {exc}", proposal) from exc
        trained = np.asarray(candidate._cells)
        rule = ("cells(X) must reproduce the training cells of its Candidate bit for bit, "
                "whatever the calibration")
        if predicted.size != trained.size:
            raise _Broken("cells", (
                f"round {record.round}: hypothesis {hypothesis.name!r} of {proposal} gives "
                f"cells(X) of shape {predicted.shape} on the training rows, but its candidate "
                f"reported cells of shape {trained.shape}; {rule}"), proposal)
        predicted, trained = predicted.ravel(), trained.ravel()
        if np.array_equal(predicted, trained):
            return True
        rows = np.flatnonzero(~(predicted == trained))
        first = rows[0] if rows.size else 0
        raise _Broken("cells", (
            f"round {record.round}: on {rows.size} of {trained.size} training rows hypothesis "
            f"{hypothesis.name!r} of {proposal} puts the row in another cell than its candidate "
            f"reported: row {first} is in cell {predicted[first]} at prediction but in cell "
            f"{trained[first]} in training; {rule}"), proposal)

    def _check_distribution(self, state, record) -> None:
        weights, margin = state.weights, state.margin
        reweighting = _labelled(self.registry, self.recipe.reweighting)

        def broken(message):
            return _Broken("fit", f"round {record.round}: {message}", reweighting)

        if weights.dtype != np.float64:
            raise broken(f"{reweighting} gave weights of dtype {weights.dtype}, not float64")
        if not np.isfinite(weights).all() or weights.min() < 0.0:
            raise broken(f"{reweighting} gave weights that are negative, NaN or infinite")
        if not math.isclose(weights.sum(), 1.0, rel_tol=0.0, abs_tol=WEIGHT_SUM_TOLERANCE):
            raise broken(f"{reweighting} gave weights summing to {weights.sum()!r}, not 1")
        if not np.isfinite(margin).all():
            raise _Broken("fit", f"round {record.round}: NaN or infinite training margins")

    def _check_term(self, state, record, candidate=None, cells_agree=False) -> None:
        """The model's term for this round, on the training rows, is the change the fit made to
        the margins: prediction reproduces training ("The weak hypothesis" in
        docs/plugins.md). Where the hypothesis' cells were found to agree with its candidate's
        (``cells_agree``) and its scores too, a difference is the calibration's."""
        X, previous = state.data.X, self.previous
        replaces = record.extra.get("replaces")
        index = len(state.contributions) - 1 if replaces is None else replaces
        hypothesis, contribution = state.hypotheses[index], state.contributions[index]
        try:
            with np.errstate(all="ignore"):
                term = contribution.values(Candidate(hypothesis, X), previous)
                if replaces is not None:
                    old_hypothesis, old_contribution = self.terms[replaces]
                    term = term - old_contribution.values(Candidate(old_hypothesis, X), previous)
        except Exception as exc:
            raise _Broken("predictions", f"round {record.round}: evaluating the round's term on "
                          f"the training rows raised {type(exc).__name__}: {exc}",
                          self._proposal_of(hypothesis)) from exc
        change = state.margin - previous
        tolerance = TERM_TOLERANCE * (1.0 + np.abs(previous) + np.abs(term))
        with np.errstate(invalid="ignore"):
            wrong = ~(np.abs(np.asarray(term, dtype=np.float64) - change) <= tolerance)
        if wrong.ndim == 2:
            wrong = wrong.any(axis=1)
        if not wrong.any():
            return
        rows = np.flatnonzero(wrong)
        where = (f"round {record.round}: on {rows.size} of {wrong.size} training rows the model's "
                 f"term differs from what the fit added to the margins (row {rows[0]})")
        proposal, calibration = (self._proposal_of(hypothesis),
                                 self._calibration_of(contribution))
        if cells_agree:
            scores = candidate._scores
            if scores is not None:
                try:
                    predicted = np.asarray(hypothesis.scores(X))
                except Exception as exc:
                    raise _Broken("predictions", f"{where}: scores(X) of hypothesis "
                                  f"{hypothesis.name!r} of {proposal} raised "
                                  f"{type(exc).__name__}: {exc}", proposal) from exc
                scores = np.asarray(scores)
                if predicted.shape != scores.shape or not np.array_equal(predicted, scores):
                    raise _Broken("cells", (
                        f"{where}: hypothesis {hypothesis.name!r} of {proposal} gives scores(X) "
                        "other than the training scores of its Candidate; scores(X) must "
                        "reproduce them bit for bit"), proposal)
            raise _Broken("cells", (
                f"{where}: contribution {contribution.name!r} of {calibration} gives values() "
                "other than the training values its calibration returned (the hypothesis' "
                "cells(X) reproduce its candidate's training cells bit for bit); they must "
                "agree"), calibration)
        moved = self._moved_cells(hypothesis, contribution, X, change, tolerance, rows)
        if moved is not None:
            trained, predicted = moved
            raise _Broken("cells", (
                f"{where}: hypothesis {hypothesis.name!r} of {proposal} puts row {rows[0]} in "
                f"cell {predicted} at prediction but in cell {trained} in training; cells(X) must "
                "reproduce the training cells of its Candidate bit for bit"), proposal)
        if hypothesis.n_cells > 0 and contribution.cell_table(hypothesis) is not None:
            raise _Broken("cells", (
                f"{where}: contribution {contribution.name!r} of {calibration} gives values() "
                "other than the training values its calibration returned; they must agree"),
                calibration)
        raise _Broken("cells", (
            f"{where}: either hypothesis {hypothesis.name!r} of {proposal} breaks the rule that "
            "cells(X) must reproduce the training cells (and scores(X) the training scores) of "
            f"its Candidate bit for bit, or contribution {contribution.name!r} of {calibration} "
            "gives values() other than its calibration's training values"), None)

    @staticmethod
    def _moved_cells(hypothesis, contribution, X, change, tolerance, rows):
        """``(training cell, predicted cell)`` of the first wrong row when every wrong row took
        the value of another cell of the contribution's per-cell table, else ``None``."""
        if hypothesis.n_cells <= 0:
            return None
        table = contribution.cell_table(hypothesis)
        if table is None:
            return None
        table = np.asarray(table, dtype=np.float64).reshape(hypothesis.n_cells, -1)
        predicted = np.asarray(hypothesis.cells(X))[rows]
        got = change[rows].reshape(rows.size, -1)
        allowed = tolerance[rows].reshape(rows.size, -1)
        fits = (np.abs(got[:, None, :] - table[None, :, :]) <= allowed[:, None, :]).all(axis=2)
        if not fits.any(axis=1).all():
            return None
        return int(np.argmax(fits[0])), int(predicted[0])

    def _calibration_of(self, contribution) -> str:
        """The calibration (or calibration wrapper) of the recipe from the contribution's
        plugin, the calibration when none is."""
        try:
            source = self.registry.source_of(contribution.name)
        except (KeyError, AttributeError):
            source = None
        for spec in (self.recipe.calibration, *reversed(self.recipe.calibration_wrappers)):
            if source is not None and self.registry.source_of(spec.name) == source:
                return _labelled(self.registry, spec)
        return _labelled(self.registry, self.recipe.calibration)

    def _proposal_of(self, hypothesis) -> str:
        """The proposal (or proposal wrapper) of the recipe from the hypothesis' plugin."""
        try:
            source = self.registry.source_of(hypothesis.name)
        except KeyError:
            source = None
        for spec in (self.recipe.proposal, *self.recipe.proposal_wrappers):
            if self.registry.source_of(spec.name) == source:
                return _labelled(self.registry, spec)
        return _labelled(self.registry, self.recipe.proposal)

    def _check_partition_loss(self, state) -> None:
        """Where the proposal may give hypotheses of more than two cells (it provides
        ``"cells"`` but not ``"two-cells"``: a tree), the calibration scores a partition by the
        sum of its cells' losses (``boostkit_partition_loss``): trees rely on it."""
        proposal = self.recipe.proposal
        provides = self.registry.component(proposal.name).capabilities(**proposal.params).provides
        if CELLS not in provides or TWO_CELLS in provides:
            return
        spec = self.recipe.calibration
        ask = getattr(state.hook, "boostkit_partition_loss", None)
        if ask is None:
            return
        n_columns = state.data.n_columns
        shape = (4, 3) if n_columns == 1 else (4, 3, n_columns)
        # Sums of a distribution over three cells, some of them empty (trees' leaves can be).
        rng = np.random.default_rng(0)
        wpos, wneg = rng.random(shape) * (rng.random(shape) > 0.2), rng.random(shape)
        total = (wpos + wneg).sum(axis=tuple(range(1, len(shape))), keepdims=True)
        wpos, wneg = wpos / total, wneg / total
        whole = ask(wpos=wpos, wneg=wneg, n_columns=n_columns)
        if whole is None:
            return
        cells = [ask(wpos=np.ascontiguousarray(wpos[:, j:j + 1]),
                     wneg=np.ascontiguousarray(wneg[:, j:j + 1]), n_columns=n_columns)
                 for j in range(3)]
        summed = sum(np.asarray(cell, dtype=np.float64) for cell in cells)
        whole = np.asarray(whole, dtype=np.float64)
        calibration = _labelled(self.registry, spec)
        if whole.shape != summed.shape:
            raise _Broken("partition-loss", (
                f"{calibration}'s partition loss gave shape {whole.shape} for partitions of "
                f"shape {wpos.shape} (a loss per partition: {summed.shape} expected)"),
                calibration)
        apart = ~np.isclose(whole, summed, rtol=1e-9, atol=1e-12)
        if apart.any():
            first = np.flatnonzero(apart.ravel())[0]
            raise _Broken("partition-loss", (
                f"{calibration}'s partition loss does not add up over cells: on a partition "
                f"into 3 cells it gave {float(whole.ravel()[first])!r}, and the sum of the 3 "
                f"cells' losses is {float(summed.ravel()[first])!r}; a calibration combined "
                "with hypotheses of more than two cells must score a partition by the sum of "
                "its cells' losses (trees rely on it)"), calibration)


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


def _named_culprit(message: str, recipe: Recipe, registry: Registry,
                   checked: str) -> str | None:
    """The component of ``recipe`` an error message names (``"role 'name'"``), the checked one
    first; ``None`` if it names none."""
    named = [spec for _, _, spec in recipe.slots() if f"'{spec.name}'" in message]
    named.sort(key=lambda spec: spec.name != checked)
    return _labelled(registry, named[0]) if named else None


def _check_recipe(recipe: Recipe, dataset: str, X, y, *, n_rounds: int, random_state: int,
                  allow_pickle: bool, directory: Path, owner: tuple[str, str],
                  registry: Registry) -> Refusal | Failure | None:
    """Fit ``recipe`` on ``(X, y)`` and check every invariant; the first one broken, a refusal
    before fitting, or ``None``."""
    name = recipe.to_string()

    def fit() -> BoostModel:
        check = _RoundCheck(recipe, registry)
        booster = Booster(recipe, n_rounds=n_rounds, random_state=random_state,
                          callbacks=[check], observers=[check.tap])
        with warnings.catch_warnings():
            # Warnings are outcomes (a one-pass pool running out), not broken invariants.
            warnings.simplefilter("ignore")
            return booster.fit(X, y)

    def failed(check: str, message: str, culprit: str | None = None) -> Failure:
        return Failure(name, dataset, check, message, culprit)

    try:
        model = fit()
    except RecipeError as exc:
        # Refused on the data, before fitting: the message must name the component at fault.
        message = str(exc)
        if any(f"'{component}'" in message for component in component_names(recipe)):
            return Refusal(name, dataset, message)
        return failed("fit", f"refused without naming a component: {message}")
    except Exception as exc:
        broken = exc.__cause__
        if isinstance(broken, _Broken):
            return failed(broken.check, broken.message, broken.culprit)
        message = f"{type(exc).__name__}: {exc}"
        return failed("fit", message, _named_culprit(message, recipe, registry, owner[0]))
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
        side = _unseeded_side(recipe, model, again)
        culprit = _labelled(registry, side[0]) if len(side) == 1 else None
        return failed("refit", f"refitting with random_state={random_state} gave another model "
                               f"(from round {first}{'' if culprit is None else ', in ' + culprit}"
                               "); draw every random number from state.rng", culprit)
    return None


def _unseeded_side(recipe: Recipe, model: BoostModel, again: BoostModel) -> list:
    """The components that can have drawn the random numbers two fits of the same seed differ
    by: in the first round where they differ (hypotheses compared field by field, records in
    every value), the proposal and its wrappers when the hypotheses differ, the calibration and
    its wrappers when only the coefficients do. Empty when it cannot be told (a round's record
    differs in nothing else but its weights' statistics, or a round back-fitted a term)."""
    if (len(model.hypotheses) != len(model.records)
            or len(again.hypotheses) != len(again.records)):
        return []
    for h, other_h, record, other in zip(model.hypotheses, again.hypotheses, model.records,
                                         again.records):
        if repr(h) != repr(other_h):
            return [recipe.proposal, *recipe.proposal_wrappers]
        if repr(record) != repr(other):  # repr: extra may hold arrays, which == cannot
            if record.coefficients != other.coefficients:
                return [recipe.calibration, *recipe.calibration_wrappers]
            return []
    return []


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
    * after every round, whatever the calibration: the hypothesis' ``cells(X)`` on the
      training rows are, bit for bit, the cells its proposal reported in the candidate; where
      they differ the failure names the proposal, the first row and both cells;
    * after every round, the model's term for that round (its hypothesis and contribution, as
      a fitted model evaluates them) gives on the training rows what the fit added to the
      margins, up to rounding; where the cells (and scores) agree with the candidate's and the
      term still differs, the failure names the calibration;
    * once per fit, when the proposal may give hypotheses of more than two cells (it provides
      ``"cells"`` but not ``"two-cells"``: a tree): the calibration's partition loss
      (``boostkit_partition_loss``) adds up over cells, the loss of a partition being the sum
      of its cells' losses, on random class sums over three cells;
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
    binary-only recipe) is a refusal, provided the message names one of its components. A
    failure that names another component of the recipe as the one at fault (an error raised in
    its hook, its weights, its cells, its partition loss, or a refit that first differs in what
    it gives: the hypotheses for a proposal, the coefficients for a calibration) goes to the
    report's ``partner_failures``, not to ``failures``: a broken component registered beside
    yours does not fail your check, and the report says which one it is.

    Parameters
    ----------
    component:
        A registered round component: ``"name"``, ``("name", {params})``, a
        :class:`boostkit.ComponentSpec` or the registered class.
    datasets:
        Names for :func:`boostkit.datasets.load`, loaded with ``encode`` and ``dropna=True``.
    raise_on_failure:
        Raise an ``AssertionError`` with the report's text (failures grouped: the first of
        each kind, and how many more are like it) if the component failed anything.

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
                                        directory=Path(directory), owner=owner,
                                        registry=registry)
                if isinstance(outcome, Refusal):
                    refused.append(outcome)
                elif outcome is not None:
                    failures.append(outcome)
    mine = f"{cls.role} {spec.name!r}"
    report = ComponentReport(
        component=f"{cls.role} {spec.to_string()!r}",
        datasets=tuple(datasets),
        tried=tuple(recipe.to_string() for recipe in recipes),
        refused=tuple(refused),
        failures=tuple(f for f in failures if f.culprit in (None, mine)),
        partner_failures=tuple(f for f in failures if f.culprit not in (None, mine)),
    )
    if raise_on_failure and not report.passed:
        raise AssertionError(str(report))
    return report


#: How far a batch's model may be from the per-round path's (:func:`check_compiled_forms`):
#: coefficients relative to the largest of the model's (a round whose coefficient is rounding
#: noise, alpha ~1e-16 for eps ~1/2, differs by all of itself), decision functions relative to
#: the largest of the per-round path's.
COEFFICIENT_RTOL = 1e-10
DECISION_RTOL = 1e-9


@attrs.frozen
class CompiledFormsReport:
    """What :func:`check_compiled_forms` found: the rounds of each path, whether the fit took
    the compiled batch (else ``why`` not), and the differences beyond the tolerances."""

    recipe: str
    rounds: tuple[int, int]
    batched: bool
    why: str
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return self.batched and not self.failures

    def __str__(self) -> str:
        head = (f"check_compiled_forms({self.recipe}): {self.rounds[0]} rounds batched, "
                f"{self.rounds[1]} one by one")
        if not self.batched:
            return f"{head}; the fit did not take the compiled batch: {self.why}"
        return "\n".join([head + f", {len(self.failures)} difference(s)",
                          *(f"  {f}" for f in self.failures)])


def _relative_gap(a: np.ndarray, b: np.ndarray, scale: float = 0.0) -> float:
    """The largest difference of ``a`` and ``b`` over the largest of their magnitudes and
    ``scale``."""
    scale = max(float(np.abs(a).max(initial=0.0)), float(np.abs(b).max(initial=0.0)), scale,
                1e-300)
    return float(np.abs(a - b).max(initial=0.0)) / scale


def check_compiled_forms(algorithm=None, X=None, y=None, *, n_rounds: int = 50,
                         raise_on_failure: bool = False, **options) -> CompiledFormsReport:
    """Check that a recipe's compiled forms (``boostkit_compiled_form``,
    :mod:`boostkit.compiled`) give the model its round hooks give.

    Fits ``Booster(algorithm, n_rounds=n_rounds, **options)`` on ``(X, y)`` twice, in a
    compiled batch and one round at a time (``compiled_rounds=False``), and compares: the fit
    must take the batch (else the report says why not, from the engine), the two models must
    have the same rounds, stop reason and terms (each hypothesis described the same, the same
    kind of contribution), the coefficients of every round within :data:`COEFFICIENT_RTOL` of
    the model's largest, and the decision functions on ``X`` within :data:`DECISION_RTOL` of
    the largest. ``options`` go to :class:`boostkit.Booster`
    (``proposal=``, ``calibration=``, ``params=``, ``histogram=``, ...), so a component can be
    checked in a recipe of one's own::

        check_compiled_forms(proposal="stump", calibration="clipped-alpha",
                             reweighting="exponential", stopping=["no-edge"],
                             X=X, y=y, raise_on_failure=True)

    Raise an ``AssertionError`` with the report's text when ``raise_on_failure`` and the check
    failed.
    """
    seen = {"batches": 0, "why": ""}
    run_batch_rounds, say_per_round = engine.run_batch_rounds, engine._say_per_round

    def counted(*args, **kwargs):
        seen["batches"] += 1
        return run_batch_rounds(*args, **kwargs)

    def heard(why, components):
        seen["why"] = why
        say_per_round(why, components)

    with mock.patch.object(engine, "run_batch_rounds", counted), \
            mock.patch.object(engine, "_say_per_round", heard):
        batched = Booster(algorithm, n_rounds=n_rounds, **options).fit(X, y)
    one_by_one = Booster(algorithm, n_rounds=n_rounds, compiled_rounds=False, **options).fit(X, y)
    failures = []
    if (batched.n_rounds, batched.stop_reason) != (one_by_one.n_rounds, one_by_one.stop_reason):
        failures.append(f"{batched.n_rounds} rounds batched (stop: {batched.stop_reason}), "
                        f"{one_by_one.n_rounds} one by one (stop: {one_by_one.stop_reason})")
    scale = max((abs(c) for r in one_by_one.records for c in r.coefficients), default=0.0)
    for t, (a, b) in enumerate(zip(batched.records, one_by_one.records), start=1):
        if a.hypothesis != b.hypothesis:
            failures.append(f"round {t}: term {a.hypothesis!r} batched, {b.hypothesis!r} one by "
                            "one")
            break
        ours, theirs = np.array(a.coefficients), np.array(b.coefficients)
        gap = _relative_gap(ours, theirs, scale)
        if len(a.coefficients) != len(b.coefficients) or gap > COEFFICIENT_RTOL:
            failures.append(f"round {t}: coefficients {a.coefficients} batched, "
                            f"{b.coefficients} one by one (relative gap {gap:.3g})")
    for t, (a, b) in enumerate(zip(batched.contributions, one_by_one.contributions), start=1):
        if type(a) is not type(b):
            failures.append(f"round {t}: contribution {type(a).__name__} batched, "
                            f"{type(b).__name__} one by one")
    if not failures:
        gap = _relative_gap(batched.decision_function(X), one_by_one.decision_function(X))
        if gap > DECISION_RTOL:
            failures.append(f"decision functions differ by {gap:.3g} of their largest value")
    name = algorithm if isinstance(algorithm, str) else getattr(algorithm, "name", None)
    report = CompiledFormsReport(
        recipe=repr(name or {k: v for k, v in options.items()
                             if k in ("proposal", "calibration", "reweighting", "stopping")}),
        rounds=(batched.n_rounds, one_by_one.n_rounds), batched=seen["batches"] > 0,
        why=seen["why"], failures=tuple(failures))
    if raise_on_failure and not report.passed:
        raise AssertionError(str(report))
    return report

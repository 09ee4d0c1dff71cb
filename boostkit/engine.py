"""The boosting loop.

:class:`Booster` resolves a recipe to component instances (checking names, roles and parameters
before any data is touched), validates the data, builds a plugin manager for this fit alone, and
runs the rounds: propose, calibrate, add the contribution to the margins, reweight from the
margins, record, ask the stopping rules, tell the observers. The loop owns no algorithm: every
decision is a hook answered by the recipe's components.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import attrs
import numba
import numpy as np
import pluggy

from . import hookspecs
from .components import Calibrated, Candidate, RoundRecord, Weights
from .data import MAX_BINS, TrainingData
from .errors import HookError, RecipeError
from .kernels.boosting import add_contribution, add_contribution_parallel
from .kernels.histogram import cell_class_sums
from .model import BoostModel
from .plugins import enable_tracing, get_registry, tracing_enabled
from .registry import Recipe

__all__ = ["Booster", "BoostState"]

# Hooks answered by exactly one (non-wrapper) implementation in every fit.
_FIRSTRESULT_ROLES = {
    "boostkit_propose": "proposal",
    "boostkit_calibrate": "calibration",
    "boostkit_reweight": "reweighting",
}


@attrs.define(eq=False)
class BoostState:
    """The state of one fit, as every round hook sees it.

    Components read it; only the engine writes it.

    Attributes
    ----------
    data:
        The :class:`boostkit.data.TrainingData` (``X``, ``y`` in {-1,+1}, ``sample_weight`` D_1,
        lazily ``binned``).
    weights:
        The current distribution D_t over training examples.
    margin:
        The running margins F_{t-1}(x_i) (F_t inside ``boostkit_reweight`` and later hooks).
    round:
        The 1-based number t of the round in progress.
    n_rounds:
        The round budget T of this fit.
    rng:
        The fit's only source of randomness (seeded from ``random_state``).
    hook:
        This fit's hook relay, for a component that asks another one something
        (``state.hook.boostkit_partition_loss(wpos=..., wneg=...)``).
    n_jobs:
        Threads that kernels may use.
    records:
        The :class:`boostkit.RoundRecord` of every finished round.
    hypotheses, contributions:
        The model's terms so far (a back-fitting calibration finds the term it re-fits here).
    log_potential:
        log sum_i D_1(i) L(y_i, F(x_i)) reported by the reweighting, or ``None``.
    """

    data: TrainingData
    weights: np.ndarray
    margin: np.ndarray
    n_rounds: int
    rng: np.random.Generator
    hook: Any
    n_jobs: int
    round: int = 0
    records: list = attrs.Factory(list)
    hypotheses: list = attrs.Factory(list)
    contributions: list = attrs.Factory(list)
    log_potential: float | None = 0.0

    def cell_weights(self, candidate: Candidate) -> tuple[np.ndarray, np.ndarray]:
        """``(wneg, wpos)``: the current weight of negative and positive examples per cell.

        Uses the sums the proposal attached to the candidate if any, else one pass over the
        examples.
        """
        if candidate.cell_wneg is not None and candidate.cell_wpos is not None:
            return candidate.cell_wneg, candidate.cell_wpos
        n_cells = candidate.hypothesis.n_cells
        if n_cells <= 0:
            raise TypeError(f"weak hypothesis {candidate.hypothesis.name!r} has no cells")
        return cell_class_sums(candidate.cells, self.weights, self.data.is_pos, n_cells)


def _positive_int(instance, attribute, value):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{attribute.name} must be a positive integer, got {value!r}")


def _n_jobs(instance, attribute, value):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value == 0 or value < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1 (all cores), got {value!r}")


@attrs.define
class Booster:
    """Fit a boosting algorithm given by name or :class:`boostkit.Recipe`.

    Parameters
    ----------
    algorithm:
        A registered algorithm name (see ``boostkit plugins``) or a :class:`boostkit.Recipe`.
    n_rounds:
        The round budget T; the run stops earlier if a stopping rule says so.
    params:
        Extra component parameters, keyed by slot: ``{"calibration": {"smoothing": 0.0},
        "proposal": {"criterion": "gini"}, "no_edge": {"min_edge": 0.01}}``.
    max_bins:
        Quantile bins per feature (2..255) for learners that work on binned features.
    n_jobs:
        Threads for the kernels (``-1``: all cores).
    random_state:
        Seed of the fit's random generator: the same seed gives the same model, bit for bit.
    observers:
        Extra observer objects (anything with ``boostkit_round_end`` / ``boostkit_fit_start``
        hookimpls, e.g. a progress bar), registered on this fit only.

    Example
    -------
    >>> model = Booster("adaboost", n_rounds=50).fit(X, y)   # doctest: +SKIP
    >>> model.predict(X_test)                                  # doctest: +SKIP
    """

    algorithm: str | Recipe = "adaboost"
    n_rounds: int = attrs.field(default=100, validator=_positive_int)
    params: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    max_bins: int = MAX_BINS
    n_jobs: int = attrs.field(default=1, validator=_n_jobs)
    random_state: int | None = None
    observers: Sequence[Any] = ()

    def recipe(self) -> Recipe:
        """The resolved recipe, with ``params`` applied."""
        if isinstance(self.algorithm, Recipe):
            recipe = self.algorithm
        elif isinstance(self.algorithm, str):
            recipe = get_registry().algorithm(self.algorithm)
        else:
            raise RecipeError(
                f"algorithm must be a registered name or a boostkit.Recipe, got {self.algorithm!r}"
            )
        return recipe.with_params(self.params) if self.params else recipe

    def fit(self, X, y, sample_weight=None) -> BoostModel:
        """Run the boosting loop on ``(X, y)`` and return the fitted :class:`BoostModel`."""
        recipe = self.recipe()
        # The whole recipe (parameters, roles, hook implementations) is checked before the data.
        components = get_registry().instantiate(recipe)
        pm = _round_manager(recipe, components, self.observers)
        rng = np.random.default_rng(self.random_state)
        data = TrainingData(X, y, sample_weight, max_bins=self.max_bins, rng=rng)
        n_jobs = min(
            self.n_jobs if self.n_jobs > 0 else numba.config.NUMBA_NUM_THREADS,
            numba.config.NUMBA_NUM_THREADS,
        )
        previous_threads = numba.get_num_threads()
        numba.set_num_threads(n_jobs)
        try:
            # Extra observers are named in errors too, like the recipe's components.
            owners = [*components, *(("observer", o) for o in self.observers)]
            return _run(pm, recipe, owners, data, self.n_rounds, rng, n_jobs)
        finally:
            numba.set_num_threads(previous_threads)


def _round_manager(recipe: Recipe, components, observers) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs.RoundSpecs)
    if tracing_enabled():
        enable_tracing(pm)
    # pluggy calls the last registered implementation first, and the last registered wrapper
    # outermost: register in reverse so the recipe's first wrapper/stopper/observer comes first.
    for i, (role, component) in reversed(list(enumerate(components))):
        try:
            pm.register(component, name=f"{role}:{component.name}:{i}")
        except pluggy.PluginValidationError as exc:
            raise RecipeError(f"component {component.name!r} has an invalid hook implementation: {exc}") from exc
    for i, observer in enumerate(reversed(list(observers))):
        pm.register(observer, name=f"observer:extra:{i}")
    try:
        pm.check_pending()  # a misspelled hook (boostkit_should_stopp) would never be called
    except pluggy.PluginValidationError as exc:
        raise RecipeError(f"recipe {recipe.name!r}: {exc}") from exc
    for hook_name, role in _FIRSTRESULT_ROLES.items():
        impls = [
            impl for impl in getattr(pm.hook, hook_name).get_hookimpls()
            if not (impl.hookwrapper or impl.wrapper)
        ]
        if len(impls) != 1:
            owners = [impl.plugin_name for impl in impls] or ["none"]
            raise RecipeError(
                f"recipe {recipe.name!r}: exactly one component must implement {hook_name} "
                f"(the {role}), found {len(impls)}: {', '.join(owners)}"
            )
    return pm


def _culprit(exc: BaseException, components) -> str:
    """The innermost recipe component on the traceback of ``exc``."""
    found = None
    ids = {id(c) for _, c in components}
    tb = exc.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if id(owner) in ids:
            found = owner
        tb = tb.tb_next
    if found is None:
        return "a component"
    name = getattr(found, "name", type(found).__qualname__)
    return f"component {name!r} ({type(found).__module__})"


def _call(hook, name: str, components, **kwargs):
    try:
        return getattr(hook, name)(**kwargs)
    except HookError:
        raise
    except Exception as exc:
        raise HookError(
            f"{name} failed in {_culprit(exc, components)}: {type(exc).__name__}: {exc}"
        ) from exc


def _exp(x: float) -> float:
    # A potential can exceed e^709 (huge count features under an unsmoothed loss): the bound is
    # then vacuous, recorded as inf rather than raising OverflowError.
    return math.exp(x) if x < 709.0 else math.inf


def _check_array(values, n: int, what: str, owner: str) -> None:
    if values.shape != (n,):
        raise HookError(f"{owner} returned {what} of shape {values.shape}, expected ({n},)")
    if not np.isfinite(values).all():
        raise HookError(f"{owner} returned {what} containing NaN or infinite values")


def _run(pm, recipe, components, data: TrainingData, n_rounds: int, rng, n_jobs) -> BoostModel:
    hook = pm.hook
    n = data.n_samples
    state = BoostState(
        data=data, weights=data.sample_weight.copy(), margin=np.zeros(n), n_rounds=n_rounds,
        rng=rng, hook=hook, n_jobs=n_jobs,
    )
    hypotheses, contributions = state.hypotheses, state.contributions
    stop_reason = "max-rounds"
    _call(hook, "boostkit_fit_start", components, state=state)
    for t in range(1, n_rounds + 1):
        state.round = t
        candidate = _call(hook, "boostkit_propose", components, state=state)
        if candidate is None:
            stop_reason = "pool-exhausted"
            if state.records:
                state.records[-1] = attrs.evolve(state.records[-1], stop_reason=stop_reason)
            break
        if not isinstance(candidate, Candidate):
            raise HookError(f"boostkit_propose returned {type(candidate).__name__}, expected a boostkit.Candidate")
        calibrated = _call(hook, "boostkit_calibrate", components, state=state, candidate=candidate)
        if not isinstance(calibrated, Calibrated):
            raise HookError(f"boostkit_calibrate returned {type(calibrated).__name__}, expected a boostkit.Calibrated")
        _check_array(calibrated.train_values, n, "training contributions", "boostkit_calibrate")
        change = calibrated.train_values
        if calibrated.replaces is not None:
            if not 0 <= calibrated.replaces < len(contributions):
                raise HookError(
                    f"boostkit_calibrate asked to replace term {calibrated.replaces}, but the model "
                    f"has {len(contributions)} terms"
                )
            _check_array(calibrated.removed_values, n, "removed values", "boostkit_calibrate")
            change = calibrated.train_values - calibrated.removed_values
        if n_jobs > 1:
            training_error, weighted_error = add_contribution_parallel(
                state.margin, change, data.y, data.sample_weight, state.weights, n_jobs
            )
        else:
            training_error, weighted_error = add_contribution(
                state.margin, change, data.y, data.sample_weight, state.weights
            )
        weights = _call(hook, "boostkit_reweight", components, state=state)
        if not isinstance(weights, Weights):
            raise HookError(f"boostkit_reweight returned {type(weights).__name__}, expected boostkit.Weights")
        _check_array(weights.weights, n, "weights", "boostkit_reweight")
        z = bound = None
        if weights.log_potential is not None:
            bound = _exp(weights.log_potential)
            if state.log_potential is not None:
                z = _exp(weights.log_potential - state.log_potential)
        state.weights = weights.weights
        state.log_potential = weights.log_potential
        record = RoundRecord(
            round=t,
            hypothesis=candidate.hypothesis.describe(),
            weighted_error=weighted_error,
            edge=0.5 - weighted_error,
            z=z,
            error_bound=bound,
            training_error=training_error,
            coefficients=calibrated.coefficients,
            extra={**calibrated.extra, **weights.extra},
        )
        reasons = [r for r in _call(hook, "boostkit_should_stop", components, state=state, record=record) if r]
        if reasons:
            stop_reason = reasons[0]  # results come in recipe order (see _round_manager)
        if reasons or t == n_rounds:
            record = attrs.evolve(record, stop_reason=stop_reason)
        state.records.append(record)
        if calibrated.replaces is None:
            hypotheses.append(candidate.hypothesis)
            contributions.append(calibrated.contribution)
        else:
            hypotheses[calibrated.replaces] = candidate.hypothesis
            contributions[calibrated.replaces] = calibrated.contribution
        _call(hook, "boostkit_round_end", components, state=state, record=record)
        if reasons:
            break
    model = BoostModel(
        classes=data.classes,
        n_features=data.n_features,
        hypotheses=tuple(hypotheses),
        contributions=tuple(contributions),
        records=tuple(state.records),
        recipe=recipe,
        stop_reason=stop_reason,
    )
    _call(hook, "boostkit_fit_end", components, state=state, model=model)
    return model

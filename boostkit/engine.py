"""The boosting loop.

:class:`Booster` resolves a recipe to component instances (checking names, roles and parameters
before any data is touched), validates the data, builds a plugin manager for this fit alone, and
runs the rounds (:func:`run_rounds`): propose, calibrate, add the contribution to the margins
(and to the margins on the validation data, if any), reweight from the margins, record, ask the
stopping rules, tell the observers and the callbacks; at the end it asks which round the model
should predict with. The loop owns no algorithm: every decision is a hook answered by the
recipe's components.

There is one loop for every fit. Where the rows live is the fit's *data plane*
(:mod:`boostkit.plane`): :class:`boostkit.plane.RowPlane` for rows in this process,
:class:`boostkit.distributed.ShardPlane` for rows split into shards on other machines. The
plane adds each term to the margins, computes the next weights and the reductions the
proposal reads (``state.class_histogram()``); the loop does the rest, the same for both.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Mapping, Sequence

import attrs
import numba
import numpy as np
import pluggy

from . import hookspecs
from .capabilities import (
    SINGLE_LABEL,
    binary_only_components,
    capabilities_of,
    check_categorical_input,
    check_sparse_input,
    handles_missing_values,
)
from .compiled import batch_plan, run_batch_rounds
from .components import Calibrated, Candidate, RoundRecord, describe_hypothesis
from .data import MAX_BINS, TrainingData
from .errors import DataError, HookError, RecipeError
from .features import CATEGORICAL_FROM_DTYPE, FeatureSchema
from .kernels.histogram import cell_class_sums, cell_pair_sums
from .model import BoostModel
from .observers import RoundLog
from .plane import RowPlane, check_distribution, histogram_option
from .plugins import enable_tracing, get_registry, tracing_enabled
from .registry import ComponentSpec, Recipe, compose
from .relay import DirectRelay
from .round_plugins import RoundPluginManager
from .validation import eval_set_data, holdout_data

__all__ = ["Booster", "BoostState"]

# Hooks answered by exactly one (non-wrapper) implementation in every fit: a role's hooks in
# the order they are looked for (the whole-rows and row forms of a reweighting; the deprecated
# names, for one release).
_FIRSTRESULT_ROLES = {
    ("boostkit_propose", "boostkit_propose_from_histogram"): "proposal",
    ("boostkit_calibrate",): "calibration",
    ("boostkit_reweight", "boostkit_row_weights", "boostkit_shard_weights"): "reweighting",
}


@attrs.define(eq=False)
class BoostState:
    """The state of one fit, as every round hook sees it.

    Components read it; only the engine writes it.

    Attributes
    ----------
    data:
        The :class:`boostkit.data.TrainingData` (``X``, ``y`` in {-1,+1} or the ``(n, C)`` sign
        matrix, ``sample_weight`` D_1 over examples, lazily ``binned``).
    weights:
        The current distribution D_t over training examples, ``(n,)``, or over (example, class)
        pairs, ``(n, C)``, when the fit has C > 1 margin columns.
    margin:
        The running margins F_{t-1}(x_i) (F_t inside ``boostkit_reweight`` and later hooks),
        ``(n,)`` or ``(n, C)``.
    initial_weights:
        D_1, of the weights' shape: ``data.initial_weights`` or the answer of
        ``boostkit_initial_weights``. The training error and the potential are weighted by it.
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
    least_margin:
        min_i y_i F_t(x_i) over the examples (or pairs) of positive initial weight (inf if
        none), measured by the engine as it adds round t's contribution, so from
        ``boostkit_reweight`` on in round t; ``None`` before the first round and in a
        distributed fit. An exponential reweighting subtracts its negation before
        exponentiating (:func:`boostkit.kernels.boosting.exponential_distribution`) without a
        pass of its own to find it.
    validation:
        The fit's validation rows (the ``eval_set``, or the rows held out for
        ``boostkit_validation_fraction``) with the model's running margins on them, or
        ``None``: a :class:`boostkit.validation.ValidationData` in this process, a
        :class:`boostkit.distributed.ShardValidation` on shards. Both give ``error`` and
        ``score(metric)`` and add each round's term (``add_term``).
    plane:
        The fit's data plane (:mod:`boostkit.plane`): where the rows live (by default, for a
        state made by hand, ``data``'s rows in this process). In a distributed fit
        (:class:`boostkit.distributed.ShardPlane`) ``data`` is a
        :class:`boostkit.distributed.ShardedData` and ``weights``, ``margin`` and
        ``initial_weights`` are ``None``: the rows stay on the shards.
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
    least_margin: float | None = None
    validation: Any = None
    initial_weights: np.ndarray | None = None
    plane: Any = None

    def __attrs_post_init__(self):
        # A state made by hand (a component's unit test) holds its rows in this process.
        if self.initial_weights is None:
            self.initial_weights = self.data.initial_weights
        if self.plane is None:
            self.plane = RowPlane(self.data, (), recipe_name="")

    def class_histogram(self) -> np.ndarray:
        """The ``(d, B, 2)`` weight of the negative (``[..., 0]``) and positive (``[..., 1]``)
        examples in every bin of every feature under D_t, over all the fit's rows, or
        ``(d, B, C, 2)`` over (example, class) pairs with C > 1 margin columns: what
        :func:`boostkit.splits.histogram` gives on ``data.binned``. Computed by the fit's data
        plane (summed over the shards in a distributed fit), once per round however many
        components ask. A proposal that chooses from it, and returns a candidate with
        ``bin_cells``, works on every plane."""
        return self.plane.class_histogram(self)

    def reduce(self, reduction):
        """``reduction(rows)`` summed over all the fit's rows, where they live: ``reduction`` is
        a picklable callable taking a :class:`boostkit.plane.Rows` (some rows: their bin codes,
        signs, D_1, D_t normalised over all rows, margins) and returning an array or a tuple of
        arrays, which the data plane adds over the parts of the rows (over the shards of a
        distributed fit, in shard order). How a component that needs more than the class
        histogram (a tree's per-level histograms, a score histogram) works on every plane."""
        return self.plane.reduce(self, reduction)

    def cell_weights(self, candidate: Candidate) -> tuple[np.ndarray, np.ndarray]:
        """``(wneg, wpos)``: the current weight of negative and positive examples per cell.

        Each is ``(n_cells,)``, or ``(n_cells, C)`` per class (the pairs with Y(i, l) = -1 and
        +1) when the fit has C > 1 margin columns. Uses the sums the proposal attached to the
        candidate if any, else one pass over the examples. A per-cell calibration needs nothing
        else: ``docs/hooks.md`` (``boostkit_calibrate``) works one through.
        """
        if candidate.cell_wneg is not None and candidate.cell_wpos is not None:
            return candidate.cell_wneg, candidate.cell_wpos
        n_cells = candidate.hypothesis.n_cells
        if n_cells <= 0:
            raise TypeError(f"weak hypothesis {candidate.hypothesis.name!r} has no cells")
        if self.weights.ndim == 2:
            return cell_pair_sums(candidate.cells, self.weights, self.data.is_pos, n_cells)
        return cell_class_sums(candidate.cells, self.weights, self.data.is_pos, n_cells)


def _positive_int(instance, attribute, value):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{attribute.name} must be a positive integer, got {value!r}")


def _n_jobs(instance, attribute, value):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value == 0 or value < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1 (all cores), got {value!r}")


def _callbacks(instance, attribute, value):
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"callbacks must be a list of functions fn(state, record), got {value!r}")
    for fn in value:
        if not callable(fn):
            raise ValueError(f"callbacks must be functions fn(state, record), got {fn!r}")


MULTICLASS_STRATEGIES = ("native", "one-vs-rest", "auto")

#: The engine's learning-rate contract: ``Booster(learning_rate=nu)`` adds the calibration wrapper
#: registered under this name, with parameter ``rate`` = nu, outermost. The engine reaches it only
#: through the registry (the first-party ``boostkit_additive`` plugin provides it); without it the
#: recipe is refused as naming an unknown calibration wrapper.
LEARNING_RATE_WRAPPER = "learning-rate"


def _learning_rate(instance, attribute, value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or not 0.0 < value <= 1.0):
        raise ValueError(f"learning_rate must be None or a number in (0, 1], got {value!r}")


def _histogram(instance, attribute, value):
    histogram_option(value)  # refuses any other value, naming the accepted ones


def _multiclass(instance, attribute, value):
    if value not in MULTICLASS_STRATEGIES:
        raise ValueError(
            f"multiclass must be one of {', '.join(map(repr, MULTICLASS_STRATEGIES))}, got {value!r}"
        )


def _verbose(instance, attribute, value):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise ValueError(
            f"verbose must be 0 (silent) or a positive integer k (a line every k rounds), got {value!r}"
        )


@attrs.define
class Booster:
    """Fit a boosting algorithm given by name, recipe string, :class:`boostkit.Recipe`, or by
    its components.

    Parameters
    ----------
    algorithm:
        A registered algorithm name (``boostkit recipes`` lists them), a recipe string
        (``"weightboost calibration=pav+input-dependent(beta=0.5)"``, see
        :func:`boostkit.registry.parse_recipe`) or a :class:`boostkit.Recipe`. ``None``
        (default): ``"adaboost"``, unless the components are given by role below.
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
        Seed of the fit's random generator: the same seed and ``n_jobs`` give the same model,
        bit for bit. Parallel kernels sum their blocks of examples in a fixed order, but another
        ``n_jobs`` means other blocks, so models agree across thread counts to rounding
        (~1e-13), which can decide between two splits tied to that precision.
    observers:
        Extra observer objects (anything with ``boostkit_round_end`` / ``boostkit_fit_start``
        hookimpls, e.g. a progress bar), registered on this fit only.
    callbacks:
        Plain functions ``fn(state, record)`` called after every round, in the order given,
        after the stopping rules and the observers (``record.stop_reason`` is set on the last
        round). A callback that raises ends the fit with a :class:`boostkit.HookError` naming it.
    verbose:
        0 (default) prints nothing; k > 0 prints one line every k rounds and on the last round
        (:class:`boostkit.observers.RoundLog`): eps_t, Z_t, prod Z_t, the training error and the
        validation scores.
    multiclass:
        What to do with three or more classes or a multi-label indicator matrix (C > 1 margin
        columns). ``"native"`` (default): run the recipe on the (example, class) pairs, and
        refuse a recipe with a component that does not handle them (provide ``"multiclass"``),
        naming it and the ways out. ``"one-vs-rest"``: fit one binary model per class (per label
        column) with the recipe and predict by the argmax of their margins
        (:class:`boostkit.multiclass.OneVsRestModel`); ``n_jobs`` then fits classes in parallel.
        ``"auto"``: native when the recipe handles several columns, else one-vs-rest. Two
        classes are always the binary fit.
    learning_rate:
        Shrinkage nu in (0, 1]: every round's contribution is multiplied by nu,
        F_t = F_{t-1} + nu c_t (Friedman 2001, section 5; epsilon-Boost's small steps), by adding
        the ``learning-rate`` calibration wrapper (:data:`LEARNING_RATE_WRAPPER`) outermost.
        ``None`` (default) leaves the recipe as it is.
    categorical_features:
        Which columns of ``X`` are categorical: ``"from_dtype"`` (default: a DataFrame's
        ``category``, string and object columns; no column of an array), ``None`` (none), or
        column indices, names or a boolean mask. A categorical column is binned by category and
        split into two groups of categories; its values may be any numbers or strings, and a
        category unseen in training is read as a missing value
        (:class:`boostkit.features.FeatureSchema`).
    histogram:
        How the rows' class histogram is found each round: ``"carried"`` (default; or a
        :class:`boostkit.plane.CarriedHistogram` with its drift limits) updates last round's
        histogram from the rows off the last term's largest cell, where the reweighting
        multiplies weights per (cell, sign) (``exponential``) and the term is constant per
        cell; such a round also adds the term, measures it and reweighs the rows in one fused
        pass (D_{t+1} = D_t g / Z_t, :mod:`boostkit.kernels.fused`; on one thread whatever
        ``n_jobs``: it beat the threaded passes it replaces). Elsewhere, and whenever the drift
        bound would pass its limit, it sums every row. ``"exact"`` sums every row under D_t
        each round and computes the weights from the margins. Both agree to rounding (within
        the stated bounds, ``docs/performance.md``), so a tie between stumps within that may go
        the other way.
    compiled_rounds:
        ``True`` (default): when every component of the recipe has a compiled form
        (``boostkit_compiled_form``, :mod:`boostkit.compiled`) and the fit has no observer of
        every round (one of the fit's start and end only keeps the batch), callback,
        ``verbose``, tracing or validation data, its rounds run in one compiled call
        (binary fits on ordered binned data, one thread: ``adaboost``, ``real-adaboost``,
        ``gentle-adaboost``), to the same model as one by one (coefficients within 1e-10
        relative); ``verbose`` and tracing say why a fit does not. ``False``: always one by
        one, every round hook called.
    proposal, calibration, reweighting, stopping:
        Components by role, replacing those of ``algorithm``, or making the whole recipe when
        ``algorithm`` is ``None`` (:func:`boostkit.registry.compose`). A component is
        ``"name"`` or ``("name", {params})``; ``proposal`` and ``calibration`` also take a
        list, the component first and then its wrappers, each wrapping what comes before it
        (``calibration=["pav", ("input-dependent", {"beta": 0.5})]``); ``stopping`` a list.

    Example
    -------
    >>> model = Booster("adaboost", n_rounds=50).fit(X, y)   # doctest: +SKIP
    >>> model.predict(X_test)                                  # doctest: +SKIP
    >>> Booster(proposal="stump", calibration="pav", reweighting="exponential")  # doctest: +SKIP
    """

    algorithm: str | Recipe | None = None
    n_rounds: int = attrs.field(default=100, validator=_positive_int)
    params: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    max_bins: int = MAX_BINS
    n_jobs: int = attrs.field(default=1, validator=_n_jobs)
    random_state: int | None = None
    observers: Sequence[Any] = ()
    callbacks: Sequence[Any] = attrs.field(default=(), validator=_callbacks)
    verbose: int = attrs.field(default=0, validator=_verbose)
    multiclass: str = attrs.field(default="native", validator=_multiclass)
    proposal: Any = attrs.field(default=None, kw_only=True)
    calibration: Any = attrs.field(default=None, kw_only=True)
    reweighting: Any = attrs.field(default=None, kw_only=True)
    stopping: Any = attrs.field(default=None, kw_only=True)
    learning_rate: float | None = attrs.field(default=None, kw_only=True, validator=_learning_rate)
    categorical_features: Any = attrs.field(default=CATEGORICAL_FROM_DTYPE, kw_only=True)
    histogram: Any = attrs.field(default="carried", kw_only=True, validator=_histogram)
    compiled_rounds: bool = attrs.field(default=True, kw_only=True,
                                        validator=attrs.validators.instance_of(bool))

    def recipe(self) -> Recipe:
        """The resolved recipe, with the components given by role and ``params`` applied."""
        registry = get_registry()
        roles = {"proposal": self.proposal, "calibration": self.calibration,
                 "reweighting": self.reweighting, "stopping": self.stopping}
        given = any(value is not None for value in roles.values())
        if self.algorithm is None:
            recipe = compose(**roles) if given else registry.algorithm("adaboost")
        else:
            recipe = registry.resolve(self.algorithm)
            if given:
                recipe = compose(recipe, **roles)
        if self.params:
            recipe = recipe.with_params(self.params)
        if self.learning_rate is not None:
            shrink = ComponentSpec(LEARNING_RATE_WRAPPER, {"rate": float(self.learning_rate)})
            recipe = attrs.evolve(recipe, calibration_wrappers=(shrink, *recipe.calibration_wrappers))
        return recipe

    def _one_vs_rest(self, recipe: Recipe, components, data: TrainingData) -> bool:
        """Whether a fit with C > 1 margin columns runs as one-vs-rest (or is refused)."""
        if self.multiclass == "one-vs-rest":
            return True
        blockers = binary_only_components(components, data.multilabel)
        if not blockers:
            return False
        if self.multiclass == "auto":
            return True
        native = ("adaboost-mh, discrete-adaboost-mh, real-adaboost, gentle-adaboost" if
                  data.multilabel else
                  "adaboost-mh, discrete-adaboost-mh, samme, real-adaboost, gentle-adaboost")
        raise RecipeError(
            _one_vs_rest_reason(recipe.name, blockers, data) + f". Either use a recipe that "
            f"does ({native}; `boostkit components` lists each component's capabilities), or "
            "fit one binary model per class: Booster(..., multiclass='one-vs-rest') (or 'auto')"
        )

    def fit(self, X, y, sample_weight=None, *, eval_set=None, features=None) -> BoostModel:
        """Run the boosting loop on ``(X, y)`` and return the fitted :class:`BoostModel`.

        ``X`` is an array, a scipy.sparse matrix or a DataFrame (pandas, or any dataframe with
        the interchange protocol): its column names and categorical columns are kept in the
        model (``model.features``), NaN is a missing value for recipes whose proposal handles
        them. ``features`` (a :class:`boostkit.FeatureSchema`) says ``X`` is encoded already,
        as :func:`boostkit.datasets.load` gives it (categorical columns holding category
        indices); then ``categorical_features`` is not consulted. Examples of ``sample_weight`` 0
        are removed, values and all, before any component sees them: the fit is the fit without
        them.

        ``eval_set`` is validation data, ``(X_val, y_val)`` or ``(X_val, y_val,
        sample_weight_val)``, checked like the training data (``y_val`` in the training classes).
        Without it, a component answering ``boostkit_validation_fraction`` (the ``validation``
        stopping rule) makes the engine hold out a stratified share of ``(X, y)`` instead. The
        engine keeps the model's margins on the validation data and records the validation
        error and scores of every round (``record.extra["validation_..."]``).
        """
        recipe = self.recipe()
        # The whole recipe (parameters, roles, hook implementations) is checked before the data.
        components = get_registry().instantiate(recipe)
        encoded = features is not None
        features, X = _features(X, features, self.categorical_features)
        if eval_set is not None and isinstance(eval_set, (tuple, list)) and eval_set:
            eval_set = (features.transform(eval_set[0], name="eval_set X", encoded=encoded),
                        *eval_set[1:])
        check_categorical_input(recipe.name, components, features)
        observers = [*self.observers, *([RoundLog(self.verbose)] if self.verbose else [])]
        pm = _round_manager(recipe, components, observers)
        # Extra observers are named in errors too, like the recipe's components.
        owners = [*components, *(("observer", o) for o in observers)]
        rng = np.random.default_rng(self.random_state)
        data, validation = _fit_data(
            pm.hook, owners, X, y, sample_weight, eval_set, max_bins=self.max_bins, rng=rng,
            allow_missing=handles_missing_values(components), features=features,
            missing_hint=_missing_hint(recipe.name, components),
        )
        if data.is_sparse:
            check_sparse_input(recipe.name, components)
        if data.n_columns > 1 and self._one_vs_rest(recipe, components, data):
            from .multiclass import fit_one_vs_rest

            return fit_one_vs_rest(self, sample_weight, eval_set, data)
        n_jobs = min(
            self.n_jobs if self.n_jobs > 0 else numba.config.NUMBA_NUM_THREADS,
            numba.config.NUMBA_NUM_THREADS,
        )
        previous_threads = numba.get_num_threads()
        numba.set_num_threads(n_jobs)
        try:
            plane = RowPlane(data, owners, recipe_name=recipe.name, histogram=self.histogram)
            return run_rounds(pm, recipe, owners, plane, validation, self.n_rounds, rng, n_jobs,
                              self.callbacks, self.compiled_rounds)
        finally:
            numba.set_num_threads(previous_threads)


def _one_vs_rest_reason(recipe_name: str, blockers, data: TrainingData) -> str:
    role, component = blockers[0]
    what = (f"a multi-label indicator matrix of {data.n_columns} labels" if data.multilabel
            else f"{data.n_columns} classes")
    if SINGLE_LABEL in capabilities_of(component)[0] and data.multilabel:
        return (
            f"y has {what}, and recipe {recipe_name!r} takes one class per example: {role} "
            f"{component.name!r} needs single-label y ({SINGLE_LABEL!r}), not several labels "
            "per example"
        )
    return (
        f"y has {what}, and recipe {recipe_name!r} is binary-only: {role} {component.name!r} "
        "does not handle several classes (it does not provide 'multiclass')"
    )


def _features(X, features, categorical_features) -> tuple[FeatureSchema, Any]:
    """The fit's feature schema and ``X`` as components see it."""
    if features is None:
        return FeatureSchema.learn(X, categorical_features)
    if not isinstance(features, FeatureSchema):
        raise DataError(
            f"features must be a boostkit.FeatureSchema (e.g. boostkit.datasets.load(...).features) "
            f"or None, got {type(features).__name__}"
        )
    return features, features.transform(X, encoded=True)


def _missing_hint(recipe_name: str, components) -> str:
    """Why a NaN is refused: the proposal that cannot take missing values, and the ways out."""
    for role, component in components:
        if role == "proposal":
            return (
                f"; recipe {recipe_name!r}: {role} {component.name!r} does not handle missing "
                "values (it does not provide 'missing-values'). Impute them first, or use a "
                "proposal that does (stump, tree: `boostkit components` lists capabilities)"
            )
    return ""


def _fit_data(hook, owners, X, y, sample_weight, eval_set, *, max_bins, rng, allow_missing,
              features=None, missing_hint=""):
    """``(TrainingData, ValidationData or None)``: the examples of one fit.

    Rows are held out (by the fit's generator, before anything else draws from it) only when no
    ``eval_set`` is given and a component asks for them.
    """
    if eval_set is None:
        fraction = validation_fraction(hook, owners)
        if fraction is not None:
            return holdout_data(X, y, sample_weight, fraction, max_bins=max_bins, rng=rng,
                                allow_missing=allow_missing, features=features,
                                missing_hint=missing_hint)
    data = TrainingData(X, y, sample_weight, max_bins=max_bins, rng=rng,
                        allow_missing=allow_missing, features=features, missing_hint=missing_hint,
                        remove_unweighted=True)
    if eval_set is None:
        return data, None
    return data, eval_set_data(eval_set, data, allow_missing=allow_missing)


def validation_fraction(hook, owners) -> float | None:
    """The share of the training rows a component asks to hold out for validation
    (``boostkit_validation_fraction``), checked, or ``None``."""
    fraction = _call(hook, "boostkit_validation_fraction", owners)
    if fraction is None:
        return None
    if (isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.floating))
            or not 0.0 < fraction < 1.0):
        raise HookError(
            f"boostkit_validation_fraction returned {fraction!r}, expected a number in "
            f"(0, 1) (from {_implementers(owners, 'boostkit_validation_fraction')})"
        )
    return float(fraction)


def _round_manager(recipe: Recipe, components, observers) -> pluggy.PluginManager:
    pm = RoundPluginManager()
    if tracing_enabled():
        enable_tracing(pm)
    # pluggy calls the last registered implementation first, and the last registered wrapper
    # outermost: register in reverse so the recipe's first wrapper/stopper/observer comes first.
    for i, (role, component) in reversed(list(enumerate(components))):
        try:
            pm.register(component, name=f"{role}:{component.name}:{i}")
        except pluggy.PluginValidationError as exc:
            raise RecipeError(f"component {component.name!r} has an invalid hook implementation: {exc}") from exc
    for observer in observers:
        unmarked = hookspecs.unmarked_hooks(observer)
        if unmarked:
            raise RecipeError(hookspecs.unmarked_hooks_message(f"observer {observer!r}", unmarked))
    for i, observer in enumerate(reversed(list(observers))):
        pm.register(observer, name=f"observer:extra:{i}")
    try:
        pm.check_pending()  # a misspelled hook (boostkit_should_stopp) would never be called
    except pluggy.PluginValidationError as exc:
        raise RecipeError(f"recipe {recipe.name!r}: {exc}") from exc
    _check_partition_hooks(pm, recipe)
    for hook_names, role in _FIRSTRESULT_ROLES.items():
        # The first hook of the role that any component implements is the role's hook.
        for hook_name in hook_names:
            impls = [
                impl for impl in getattr(pm.hook, hook_name).get_hookimpls()
                if not (impl.hookwrapper or impl.wrapper)
            ]
            if impls:
                break
        if len(impls) != 1:
            owners = [impl.plugin_name for impl in impls] or ["none"]
            raise RecipeError(
                f"recipe {recipe.name!r}: exactly one component must implement "
                f"{' or '.join(hook_names)} (the {role}), found {len(impls)}: {', '.join(owners)}"
            )
    return pm


def _check_partition_hooks(pm: pluggy.PluginManager, recipe: Recipe) -> None:
    """Refuse a recipe where one component names the partition criterion and another answers
    ``boostkit_partition_loss``: learners given the criterion would never see the other loss."""
    def owners(hook_name):
        return {impl.plugin_name for impl in getattr(pm.hook, hook_name).get_hookimpls()
                if not (impl.hookwrapper or impl.wrapper)}

    naming, scoring = owners("boostkit_partition_criterion"), owners("boostkit_partition_loss")
    if naming and naming != scoring:
        raise RecipeError(
            f"recipe {recipe.name!r}: boostkit_partition_criterion is answered by "
            f"{', '.join(sorted(naming))} but boostkit_partition_loss by "
            f"{', '.join(sorted(scoring)) or 'none'}; the component that names its partition "
            "loss must also compute it, and be the only one that does"
        )


def _culprit(exc: BaseException, components, hook_name: str | None = None) -> str:
    """The innermost recipe component on the traceback of ``exc``; else (an error raised where
    no method of a component is on the traceback) the components implementing ``hook_name``."""
    found = None
    ids = {id(c) for _, c in components}
    tb = exc.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if id(owner) in ids:
            found = owner
        tb = tb.tb_next
    if found is None:
        return _implementers(components, hook_name) if hook_name else "a component"
    name = getattr(found, "name", type(found).__qualname__)
    return f"component {name!r} ({type(found).__module__})"


def _call(hook, name: str, components, **kwargs):
    try:
        return getattr(hook, name)(**kwargs)
    except HookError:
        raise
    except DataError as exc:  # the data, not the component, are at fault: keep the ValueError
        raise DataError(f"{name} in {_culprit(exc, components, name)}: {exc}") from exc
    except Exception as exc:
        raise HookError(
            f"{name} failed in {_culprit(exc, components, name)}: {type(exc).__name__}: {exc}"
        ) from exc


def _implementers(components, hook_name: str) -> str:
    """The recipe's components (and the fit's observers) with a ``hook_name`` method, as error
    messages name them."""
    found = [f"{role} {getattr(c, 'name', type(c).__qualname__)!r} ({type(c).__module__})"
             for role, c in components if callable(getattr(c, hook_name, None))]
    return ", ".join(found) or "no component of the recipe"


def _exp(x: float) -> float:
    # A potential can exceed e^709 (huge count features under an unsmoothed loss): the bound is
    # then vacuous, recorded as inf rather than raising OverflowError.
    return math.exp(x) if x < 709.0 else math.inf


def potential_factors(log_potential: float | None, previous: float | None
                      ) -> tuple[float | None, float | None]:
    """``(Z_t, prod_s Z_s)`` of a round from the log-potentials after it and before it."""
    if log_potential is None:
        return None, None
    z = None if previous is None else _exp(log_potential - previous)
    return z, _exp(log_potential)


def _validation_scores(hook, components, state) -> dict[str, float]:
    """The round's validation error and the scores of ``boostkit_validation_score``."""
    scores = {"validation_error": state.validation.error}
    owner = f"(from {_implementers(components, 'boostkit_validation_score')})"
    for answer in _call(hook, "boostkit_validation_score", components, state=state):
        if not isinstance(answer, Mapping):
            raise HookError(f"boostkit_validation_score returned {answer!r}, expected a dict "
                            f"{{name: score}} {owner}")
        for name, value in answer.items():
            if (not isinstance(name, str) or isinstance(value, bool)
                    or not isinstance(value, (int, float, np.integer, np.floating))
                    or math.isnan(value)):
                raise HookError(
                    f"boostkit_validation_score returned {{{name!r}: {value!r}}}, expected a "
                    f"name and a number {owner}"
                )
            scores.setdefault(f"validation_{name}", float(value))  # the first answer wins
    return scores


def _callback_name(fn) -> str:
    return f"{getattr(fn, '__qualname__', repr(fn))!r} ({getattr(fn, '__module__', '?')})"


def _best_round(hook, components, state, terms_after: list[int], backfits) -> int | None:
    """The number of leading terms the model predicts with, from ``boostkit_best_round``."""
    best = _call(hook, "boostkit_best_round", components, state=state)
    if best is None:
        return None
    n_records = len(state.records)
    if isinstance(best, bool) or not isinstance(best, (int, np.integer)) or not 1 <= best <= n_records:
        raise HookError(f"boostkit_best_round returned {best!r}, expected a round in "
                        f"1..{n_records} (from {_implementers(components, 'boostkit_best_round')})")
    n_terms = terms_after[best - 1]
    for t, j in backfits:
        if t > best and j < n_terms:
            raise HookError(
                f"boostkit_best_round named round {best}, but round {t} re-fitted term {j + 1} "
                f"afterwards, so the model after round {best} is not the first {n_terms} terms of "
                "the final one (a back-fitting calibration does not provide 'running-margin'); "
                f"from {_implementers(components, 'boostkit_best_round')}"
            )
    return n_terms


def _owner(components, role: str, hook_name: str) -> str:
    """``hook_name`` of the recipe's component in ``role``, as error messages name it."""
    return f"{hook_name} of {_component(components, role)}"


def _component(components, role: str) -> str:
    """The recipe's component in ``role`` (and its wrappers), as error messages name it."""
    component = next(c for r, c in components if r == role)
    wrappers = [repr(c.name) for r, c in components if r == f"{role}-wrapper"]
    wrapped = f", wrapped by {', '.join(wrappers)}" if wrappers else ""
    return f"{role} {component.name!r} ({type(component).__module__}){wrapped}"


def _initial_weights(hook, components, data: TrainingData) -> np.ndarray:
    """D_1: the answer of ``boostkit_initial_weights``, checked, or ``data.initial_weights``."""
    answer = _call(hook, "boostkit_initial_weights", components, data=data)
    if answer is None:
        return data.initial_weights
    owner = _implementers(components, "boostkit_initial_weights")
    if (not isinstance(answer, np.ndarray) or answer.dtype != np.float64
            or answer.shape != data.y.shape):
        raise HookError(
            f"boostkit_initial_weights returned {type(answer).__name__} "
            f"{getattr(answer, 'dtype', '')} of shape {getattr(answer, 'shape', None)}, "
            f"expected a float64 array of shape {data.y.shape} (from {owner})"
        )
    check_distribution(answer, data.y.shape, f"boostkit_initial_weights of {owner}")
    return np.ascontiguousarray(answer)


def _propose(hook, components, state, from_histogram: bool):
    """Round t's candidate: ``boostkit_propose``, or for a proposal that still implements the
    deprecated ``boostkit_propose_from_histogram`` only, that hook on the plane's histogram."""
    if from_histogram:
        return _call(hook, "boostkit_propose_from_histogram", components, state=state,
                     histogram=state.class_histogram())
    return _call(hook, "boostkit_propose", components, state=state)


def _say_per_round(why: str, components) -> None:
    """Tell a ``verbose`` or traced fit, once, why its rounds run one by one."""
    line = f"boostkit: rounds run one by one, not in a compiled batch: {why}"
    for role, observer in components:
        if isinstance(observer, RoundLog):
            print(line, file=observer.stream or sys.stdout, flush=True)
    if tracing_enabled():
        sys.stderr.write(line + "\n")


def run_rounds(pm, recipe, components, plane, validation, n_rounds: int, rng, n_jobs,
               callbacks=(), compiled_rounds: bool = True) -> BoostModel:
    """The boosting loop: up to ``n_rounds`` rounds of the recipe's components over ``plane``
    (:mod:`boostkit.plane`: where the rows live), and the model they make.

    ``validation`` (``None``, or validation rows where the plane keeps them: see
    ``BoostState.validation``) gets every term and scores the model after every round.

    Every fit runs here, in this process or over shards: the plane adds each term to the
    margins, computes the next weights and the reductions the proposal reads; this loop runs
    proposal, calibration, records, stopping, observers and callbacks. When every component
    has a compiled form and nothing needs a Python call per round (``compiled_rounds``, and
    :func:`boostkit.compiled.batch_plan`), the rounds run in one compiled call instead
    (:func:`boostkit.compiled.run_batch_rounds`), to the same model.
    """
    # Every plugin is registered: plain hooks are called directly from here on (a traced fit
    # keeps pluggy's calls, which the trace reports).
    hook = DirectRelay(pm, direct=not tracing_enabled())
    data = plane.data
    state = BoostState(data=data, weights=None, margin=None, n_rounds=n_rounds, rng=rng,
                       hook=hook, n_jobs=n_jobs, validation=validation, plane=plane)
    plane.start(state)
    terms_after: list[int] = []  # the number of terms after each round
    backfits: list[tuple[int, int]] = []  # (round, index of the term it re-fitted)
    _call(hook, "boostkit_fit_start", components, state=state)
    plan, why = (batch_plan(components, state, callbacks=callbacks, tracing=tracing_enabled())
                 if compiled_rounds else (None, "compiled_rounds=False"))
    if plan is not None:
        stop_reason = run_batch_rounds(plan, state, n_rounds, getattr(plane, "carried", None))
        terms_after = list(range(1, len(state.contributions) + 1))
    else:
        _say_per_round(why, components)
        stop_reason = _round_by_round(hook, components, state, plane, validation, n_rounds,
                                      callbacks, terms_after, backfits)
    best_round = _best_round(hook, components, state, terms_after, backfits)
    model = BoostModel(
        classes=data.classes,
        multilabel=data.multilabel,
        n_features=data.n_features,
        features=None if data.features.is_default else data.features,
        hypotheses=tuple(state.hypotheses),
        contributions=tuple(state.contributions),
        records=tuple(state.records),
        recipe=recipe,
        stop_reason=stop_reason,
        best_round=best_round,
    )
    _call(hook, "boostkit_fit_end", components, state=state, model=model)
    return model


def _round_by_round(hook, components, state, plane, validation, n_rounds, callbacks,
                    terms_after, backfits) -> str:
    """The rounds one by one, every hook called: the loop of every fit without a compiled
    batch. Fills ``state``, ``terms_after`` and ``backfits``; returns the stop reason."""
    data = state.data
    proposal = _component(components, "proposal")
    calibration = _component(components, "calibration")
    from_histogram = not hook.boostkit_propose.get_hookimpls()
    hypotheses, contributions = state.hypotheses, state.contributions
    stop_reason = "max-rounds"
    for t in range(1, n_rounds + 1):
        state.round = t
        candidate = _propose(hook, components, state, from_histogram)
        if candidate is None:
            stop_reason = "pool-exhausted"
            if state.records:
                state.records[-1] = attrs.evolve(state.records[-1], stop_reason=stop_reason)
            break
        if not isinstance(candidate, Candidate):
            raise HookError(f"boostkit_propose returned {type(candidate).__name__}, expected a "
                            f"boostkit.Candidate (round {t}, {proposal})")
        plane.bind(state, candidate)
        calibrated = _call(hook, "boostkit_calibrate", components, state=state, candidate=candidate)
        if not isinstance(calibrated, Calibrated):
            raise HookError(f"boostkit_calibrate returned {type(calibrated).__name__}, expected "
                            f"a boostkit.Calibrated (round {t}, {calibration})")
        step = plane.advance(state, candidate, calibrated)
        if validation is not None:
            validation.add_term(state, candidate, calibrated)
        z, bound = potential_factors(step.log_potential, state.log_potential)
        state.log_potential = step.log_potential
        extra = {**calibrated.extra, **step.extra}
        if calibrated.replaces is not None:
            extra["replaces"] = calibrated.replaces  # which term this round re-fitted
        if validation is not None:
            extra.update(_validation_scores(hook, components, state))
        record = RoundRecord(
            round=t,
            hypothesis=describe_hypothesis(candidate.hypothesis, data.features),
            weighted_error=step.weighted_error,
            edge=0.5 - step.weighted_error,
            z=z,
            error_bound=bound,
            training_error=step.training_error,
            coefficients=calibrated.coefficients,
            extra=extra,
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
            backfits.append((t, calibrated.replaces))
        terms_after.append(len(contributions))
        _call(hook, "boostkit_round_end", components, state=state, record=record)
        for fn in callbacks:
            try:
                fn(state, record)
            except Exception as exc:
                raise HookError(
                    f"callback {_callback_name(fn)} failed in round {t}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
        if reasons:
            break
    return stop_reason

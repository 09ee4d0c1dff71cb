"""Compiled forms of round components: how a fit runs many rounds in one compiled call.

A component may answer ``boostkit_compiled_form(state)`` (:mod:`boostkit.hookspecs`) with one
of the values below: its round's work as a numba function of plain arrays and numbers, with
the signature of its role, plus what the engine needs to build the round's Python values
(hypothesis, contribution, record) from the arrays afterwards. When every component of a fit
answers, and nothing in the fit needs a Python call per round (observers, callbacks,
``verbose``, tracing, validation data), :func:`boostkit.engine.run_rounds` runs the rounds in
one call of :func:`boostkit.kernels.rounds.run_batch`; otherwise it runs them one by one, the
hooks as always, and says why when ``verbose`` or tracing is on. Both paths give the same model
to rounding (:func:`boostkit.testing.check_compiled_forms` checks a recipe).

The batch covers binary fits (one margin column) on ordered binned data, whose terms are
threshold cuts of one feature into two cells:

- :class:`CompiledProposal`: a search of the class histogram for the cut of lowest loss under
  a named partition criterion (:data:`SEARCH`), and optionally the histogram it searches, when
  that is not the class histogram of D_t (:data:`HISTOGRAM`: LogitBoost's sums of w and w |z|);
- :class:`CompiledCalibration`: the values of the two cells from their class weights
  (:data:`CALIBRATION`), and the partition criterion its proposal should minimise;
- :class:`CompiledReweighting`: the log of the factor each (cell, sign) multiplies a row's
  weight by (:data:`REWEIGHTING`): D_{t+1}(i) = D_t(i) g[cell_i, y_i] / Z_t; or the weights
  from the margins (:data:`MARGIN_WEIGHTS`), D_{t+1}(i) proportional to D_1(i) w(y_i F_t(x_i)),
  for a rule that is not multiplicative per cell (a margin loss's);
- :class:`CompiledStopping`: a reason code from the round's numbers (:data:`STOPPING`).

Each function takes a ``params`` float64 array (its component's numbers: a smoothing, a clip)
and is called once per round, as a first-class function (``numba.types.FunctionType``): the
batch kernel is compiled once for every recipe, and a plugin's compiled form does not
recompile it (the measurements are in :mod:`boostkit.kernels.rounds`). Work per bin or per row
stays inside one function: a search scores every cut in its own loop, and weights from the
margins loop over the rows in theirs (a call per row would cost ~11 ns a row).

A plugin builds its functions with :func:`compile_form`, from plain Python functions at module
level, compiled on first use and cached on disk (``docs/hooks.md`` works one through).
"""

from __future__ import annotations

import functools
import gc
import math
from typing import Any, Callable

import attrs
import numba
import numpy as np
from numba import types

from .components import RoundRecord, describe_hypothesis
from .errors import DataError, HookError
from .kernels.blocks import histogram_threads, row_threads

__all__ = ["CALIBRATION", "HISTOGRAM", "MARGIN_WEIGHTS", "REWEIGHTING", "SEARCH", "STOPPING",
           "BatchPlan",
           "CompiledCalibration", "CompiledProposal", "CompiledReweighting", "CompiledStopping",
           "batch_plan", "check_form", "compile_form", "run_batch_rounds"]

_hist = types.float64[:, :, ::1]
_mask = types.boolean[:, ::1]
_matrix = types.float64[:, ::1]
_vector = types.float64[::1]

#: A proposal's search: ``search(hist, valid, scores, sides, cell_scores, params) -> k``.
#: ``hist`` is the ``(d, B, 2)`` class histogram of D_t (``[..., 0]`` negatives), ``valid`` the
#: ``(d, B - 1)`` cuts that leave rows on both sides (``BinnedData.split_mask``), ``scores`` a
#: ``(d, B - 1)`` scratch array. Return the flat index ``f * (B - 1) + b`` of the chosen cut
#: after bin b of feature f, having written ``sides`` (``(2, 2)``: row 0 the negatives' weight
#: left and right, row 1 the positives') and ``cell_scores`` (``(2,)``, the hypothesis' score
#: on each side); or -1 when no cut is valid, having written the constant hypothesis' (every row
#: in cell 0: ``sides[:, 1]`` zero). A proposal with its own histogram (:data:`HISTOGRAM`) is
#: given that one, ``(d, B, width)``; ``sides`` are still the sides' class weights under D_t.
SEARCH = types.int64(_hist, _mask, _matrix, _matrix, _vector, _vector)
#: A proposal's own histogram: ``histogram(codes, is_pos, margin, y, weights, params, scratch,
#: out)`` fills ``out`` (``(d, B, width)``, :attr:`CompiledProposal.histogram_width`) from the
#: rows' ``(d, n)`` bin codes, signs (uint8, 1 positive), margins F_{t-1}, labels ``y``
#: (+-1.0) and D_t; ``scratch`` is an ``(n,)`` array to use freely. One call a round, looping
#: over the rows itself; the batch then never carries a histogram.
HISTOGRAM = types.none(types.uint8[:, ::1], types.uint8[::1], _vector, _vector, _vector, _vector,
                       _vector, _hist)
#: A calibration's values: ``calibrate(wneg, wpos, cell_scores, params, values, coefficients)``
#: writes the ``(2,)`` value of each cell (what the term adds to a row's margin) and the round
#: record's ``coefficients`` from the cells' class weights under D_t (``wneg``, ``wpos``,
#: ``(2,)``) and the hypothesis' ``cell_scores``.
CALIBRATION = types.none(_vector, _vector, _vector, _vector, _vector, _vector)
#: A reweighting's factors: ``log_factors(values, params, out)`` writes log g[cell, sign]
#: (``(2, 2)``: column 0 for negative rows, 1 for positive) for a term of ``values`` per cell.
REWEIGHTING = types.none(_vector, _vector, _matrix)
#: A reweighting's weights from the margins: ``weights(margin, y, d1, out, scratch, params,
#: sums)`` writes D_{t+1} up to a common factor into ``out`` from the margins F_t, the labels
#: ``y`` (+-1.0) and D_1 (``(n,)`` each; ``scratch`` an ``(n,)`` array to use freely), and
#: ``sums`` (``(2,)``): the sum of ``out`` and the log of the rule's potential after the round
#: (its value itself, not its factor Z_t; anything when the rule has none). One call a round,
#: looping over the rows itself.
MARGIN_WEIGHTS = types.none(_vector, _vector, _vector, _vector, _vector, _vector, _vector)
#: A stopping rule: ``stop(round, weighted_error, z, training_error, params) -> code``, 0 to go
#: on, else k for the rule's k-th reason (:attr:`CompiledStopping.reasons`). ``z`` is Z_t, NaN
#: when the reweighting has no potential.
STOPPING = types.int64(types.int64, types.float64, types.float64, types.float64, _vector)

_NO_PARAMS = np.zeros(0)


def compile_form(function: Callable, signature) -> Any:
    """``function`` compiled by numba for ``signature`` (one of :data:`SEARCH`,
    :data:`HISTOGRAM`, :data:`CALIBRATION`, :data:`REWEIGHTING`, :data:`MARGIN_WEIGHTS`,
    :data:`STOPPING`), on first use, cached in this
    process and, for a function of a module file, on disk: call it in
    ``boostkit_compiled_form``, not at import (an import compiles nothing). ``function`` must
    be defined at a module's top level (numba's cache is keyed by it); it may call other
    ``numba.njit`` functions."""
    return _compiled(function, signature)


@functools.cache
def _compiled(function, signature):
    # numba caches a function of a module file next to it; one defined elsewhere (a notebook,
    # exec'd code) is compiled in each process.
    cache = function.__code__.co_filename.endswith(".py")
    return numba.njit(signature, cache=cache, nogil=True)(function)


def _params(value) -> np.ndarray:
    return np.ascontiguousarray(np.atleast_1d(np.asarray(value, dtype=np.float64)))


def check_form(function, signature, owner: str) -> None:
    """Refuse a compiled form's ``function`` that numba did not compile for ``signature``."""
    signatures = getattr(function, "signatures", None)
    if not isinstance(function, numba.core.registry.CPUDispatcher) or not signatures or (
            signature.args not in [tuple(s) for s in signatures]):
        raise HookError(
            f"{owner}: expected a numba function compiled for {signature} (build it with "
            f"boostkit.compiled.compile_form(fn, signature)), got {function!r}")


@attrs.frozen
class CompiledProposal:
    """A proposal's compiled form: a search of the class histogram per partition criterion.

    ``search_for(criterion)`` gives the search (signature :data:`SEARCH`) minimising the
    partition criterion of that name (the calibration's :attr:`CompiledCalibration.criterion`,
    or the proposal's own ``criterion`` when it has one), or ``None`` when it has none for it.
    ``hypothesis(feature, bin, wneg, wpos, cell_scores)`` builds the round's weak hypothesis
    afterwards from the chosen cut (``bin`` -1: the constant hypothesis, every row in cell 0),
    the sides' class weights and the cell scores (lists of two Python floats each); on the
    training rows it must give the cells ``codes[feature] > bin``. ``histogram``: ``None``
    (the searches read the class histogram of D_t), or the function that fills the
    ``(d, B, histogram_width)`` histogram they read (:data:`HISTOGRAM`). ``params`` go to the
    searches and the histogram.
    """

    search_for: Callable
    hypothesis: Callable
    criterion: str | None = None
    params: np.ndarray = attrs.field(default=_NO_PARAMS, converter=_params, eq=False)
    histogram: Any = attrs.field(default=None, kw_only=True)
    histogram_width: int = attrs.field(default=2, kw_only=True)

    def search(self, criterion: str):
        """The search for ``criterion`` (the proposal's own, when it has one), or ``None``."""
        return self.search_for(self.criterion or criterion)


@attrs.frozen
class CompiledCalibration:
    """A calibration's compiled form: the cells' values (:data:`CALIBRATION`), the partition
    criterion its proposal minimises (a name the proposal's searches know: ``"error"``,
    ``"z"``, ``"squared-error"``, ...), ``n_coefficients`` (the round record's
    ``coefficients``), and ``contribution(values, coefficients)``, the term's
    :class:`boostkit.Contribution` built afterwards from the cells' values (a ``(2,)`` array)
    and the coefficients (a list of Python floats)."""

    criterion: str
    values: Any
    n_coefficients: int
    contribution: Callable
    params: np.ndarray = attrs.field(default=_NO_PARAMS, converter=_params, eq=False)


def _one_rule(form, attribute, value) -> None:
    if (form.log_factors is None) == (form.from_margins is None):
        raise TypeError("CompiledReweighting: expected one of log_factors and from_margins, "
                        f"got {'both' if form.log_factors is not None else 'neither'}")


@attrs.frozen
class CompiledReweighting:
    """A reweighting's compiled form, one of:

    - ``log_factors``: log g[cell, sign] of a term (:data:`REWEIGHTING`), for a rule
      multiplicative per (cell, sign): D_{t+1}(i) = D_t(i) g[cell_i, y_i] / Z_t. The batch may
      carry the class histogram across rounds (:class:`boostkit.plane.CarriedHistogram`);
    - ``from_margins``: the weights from the margins (:data:`MARGIN_WEIGHTS`), for any other
      rule (a margin loss's, D_1(i) w(y_i F_t(x_i)): :func:`boostkit.losses.compiled_weights`).
      Every row's weight changes, so every histogram is summed over the rows.

    ``potential``: whether the rule has a potential, recorded as Z_t and prod Z_t (else they
    are ``None``): for ``log_factors``, sum_i D_t(i) g[cell_i, y_i] is Z_t (the exponential
    rule, g = e^{-y c}); for ``from_margins``, the function gives the potential's log.

    ``exact``: ``None``, or for ``from_margins`` a Python function ``exact(margin, y, d1) ->
    (weights, log_potential)`` giving D_{t+1} (normalised) and the potential's log for a round
    whose compiled function wrote NaN as the weights' sum: a pass it leaves out, so as not to
    compile what few fits need (``margin-loss``'s log-space pass, taken only when the sums
    leave [1e-150, 1e150]). The batch computes that round's weights with it and goes on."""

    log_factors: Any = attrs.field(default=None, validator=_one_rule)
    potential: bool = True
    params: np.ndarray = attrs.field(default=_NO_PARAMS, converter=_params, eq=False)
    from_margins: Any = attrs.field(default=None, kw_only=True)
    exact: Callable | None = attrs.field(default=None, kw_only=True)


@attrs.frozen
class CompiledStopping:
    """A stopping rule's compiled form: ``stop`` (:data:`STOPPING`) and the names of its
    reasons, code k naming ``reasons[k - 1]``."""

    stop: Any
    reasons: tuple[str, ...] = attrs.field(converter=tuple)
    params: np.ndarray = attrs.field(default=_NO_PARAMS, converter=_params, eq=False)


#: The compiled form each role answers with.
FORMS = {"proposal": CompiledProposal, "calibration": CompiledCalibration,
         "reweighting": CompiledReweighting, "stopping": CompiledStopping}
#: Hooks a component may implement beside its role's and still run in a batch: called once per
#: fit, on both paths (the initial weights before the rounds; the rest around them).
_ONCE_PER_FIT = frozenset({"boostkit_fit_start", "boostkit_fit_end", "boostkit_best_round",
                           "boostkit_initial_weights", "boostkit_row_initial_weights",
                           "boostkit_validation_fraction", "boostkit_compiled_form",
                           "boostkit_partition_loss", "boostkit_partition_criterion",
                           "boostkit_propose", "boostkit_propose_from_histogram",
                           "boostkit_calibrate", "boostkit_reweight", "boostkit_row_weights",
                           "boostkit_shard_weights", "boostkit_should_stop"})

#: Hooks an observer may implement and still watch a batched fit (a compare's final weights):
#: called once per fit, after the batch as after the rounds one by one.
_OBSERVED_ONCE = frozenset({"boostkit_fit_start", "boostkit_fit_end"})


@attrs.frozen(eq=False)
class BatchPlan:
    """A fit's compiled forms, checked: what :func:`run_batch_rounds` runs."""

    proposal: CompiledProposal
    search: Any
    calibration: CompiledCalibration
    reweighting: CompiledReweighting
    stopping: tuple
    owners: dict = attrs.field(factory=dict)  # role: the component, as errors name it


def _label(role: str, component) -> str:
    return f"{role} {getattr(component, 'name', type(component).__qualname__)!r}"


def _hook_names(component) -> frozenset[str]:
    return _class_hooks(type(component))


@functools.cache
def _class_hooks(cls) -> frozenset[str]:
    # The hooks a component class implements (dir() of a class costs ~30 us: once per class).
    return frozenset(name for name in dir(cls) if name.startswith("boostkit_")
                     and hasattr(getattr(cls, name, None), "boostkit_impl"))


#: The hooks a compiled form stands for: a subclass that overrides one of them below the class
#: whose compiled form it inherits computes something else, and keeps the per-round path.
_STANDS_FOR = frozenset({"boostkit_propose", "boostkit_propose_from_histogram",
                         "boostkit_calibrate", "boostkit_reweight", "boostkit_row_weights",
                         "boostkit_should_stop", "boostkit_partition_loss",
                         "boostkit_partition_criterion"})


def _defined_in(cls, name: str):
    return next(klass for klass in cls.__mro__ if name in vars(klass))


def _stale_hooks(component, hooks) -> list[str]:
    """The round hooks ``component``'s class overrides below the class of its compiled form."""
    cls = type(component)
    form_class = _defined_in(cls, "boostkit_compiled_form")
    return sorted(name for name in hooks & _STANDS_FOR
                  if _defined_in(cls, name) is not form_class
                  and issubclass(_defined_in(cls, name), form_class))


def batch_plan(components, state, *, callbacks=(), tracing: bool = False):
    """``(plan, why)``: the fit's :class:`BatchPlan`, or ``None`` and why its rounds run one
    by one (which component or condition; for ``verbose`` and tracing to say).

    ``components`` are the fit's ``(role, component)`` pairs, its observers included; ``state``
    its :class:`boostkit.BoostState` after ``boostkit_fit_start``. Hooks are asked only once
    nothing else rules the batch out: a compiled form may compile its functions."""
    from .kernels.rounds import MAX_STOPPING

    plane, data = state.plane, state.data
    for role, component in components:
        if role == "observer":
            hooks = frozenset(name for name in dir(component) if name.startswith("boostkit_")
                              and hasattr(getattr(component, name, None), "boostkit_impl"))
            if hooks <= _OBSERVED_ONCE:
                continue  # it watches the fit's start and end, which a batch has as well
            return None, (f"{_label(role, component)} ({type(component).__module__}) observes "
                          "every round" + (" (verbose)" if type(component).__name__ == "RoundLog"
                                           else ""))
        if role not in FORMS:
            return None, f"{_label(role, component)} has no compiled form (no {role} in a batch)"
        hooks = _hook_names(component)
        if "boostkit_compiled_form" not in hooks:
            return None, f"{_label(role, component)} has no compiled form (boostkit_compiled_form)"
        per_round = sorted(hooks - _ONCE_PER_FIT)
        if per_round:
            return None, f"{_label(role, component)} implements {', '.join(per_round)}"
        stale = _stale_hooks(component, hooks)
        if stale:
            return None, (f"{_label(role, component)} overrides {', '.join(stale)} of the "
                          "class whose compiled form it inherits")
    if callbacks:
        return None, f"{len(callbacks)} callback(s) run after every round"
    if numba.config.DISABLE_JIT:  # the forms are plain Python: no code addresses to pass
        return None, "numba's compiler is off (NUMBA_DISABLE_JIT)"
    if tracing:
        return None, "tracing (BOOSTKIT_TRACE) reports every hook call"
    if state.validation is not None:
        return None, "the fit scores validation data every round"
    if not plane.has_rows:
        return None, "the rows are not in this process"
    if data.n_columns != 1:
        return None, f"{data.n_columns} margin columns (a batch fits one)"
    n_stopping = sum(role == "stopping" for role, _ in components)
    if n_stopping > MAX_STOPPING:
        return None, f"{n_stopping} stopping rules (a batch runs at most {MAX_STOPPING})"
    forms = {}
    for role, component in components:
        if role == "observer":
            continue
        try:
            form = component.boostkit_compiled_form(state=state)
        except HookError:
            raise
        except DataError as exc:  # the data, not the component, are at fault (as engine._call)
            raise DataError(f"boostkit_compiled_form in {_label(role, component)} "
                            f"({type(component).__module__}): {exc}") from exc
        except Exception as exc:
            raise HookError(f"boostkit_compiled_form failed in {_label(role, component)} "
                            f"({type(component).__module__}): {type(exc).__name__}: {exc}") from exc
        if form is None:
            return None, f"{_label(role, component)} has no compiled form for this fit"
        if not isinstance(form, FORMS[role]):
            raise HookError(f"boostkit_compiled_form of {_label(role, component)} returned "
                            f"{type(form).__name__}, expected boostkit.compiled."
                            f"{FORMS[role].__name__} or None")
        forms.setdefault(role, []).append((component, form))
    binned = data.binned
    if not binned.ordered:
        return None, "the data have missing values or categorical columns"
    if histogram_threads(binned.codes, state.n_jobs) > 1 or row_threads(
            data.n_samples, state.n_jobs) > 1:
        return None, f"n_jobs={state.n_jobs}: the rounds' kernels run on threads"
    (proposer, proposal), = forms["proposal"]
    (calibrator, calibration), = forms["calibration"]
    search = proposal.search(calibration.criterion)
    if search is None:
        return None, (f"{_label('proposal', proposer)} has no compiled search for the partition "
                      f"criterion {proposal.criterion or calibration.criterion!r}")
    (reweighter, reweighting), = forms["reweighting"]
    stops = tuple(form for _, form in forms.get("stopping", ()))
    checks = [("proposal", proposer, search, SEARCH),
              *([("proposal", proposer, proposal.histogram, HISTOGRAM)]
                if proposal.histogram is not None else []),
              ("calibration", calibrator, calibration.values, CALIBRATION),
              ("reweighting", reweighter, reweighting.log_factors, REWEIGHTING)
              if reweighting.from_margins is None else
              ("reweighting", reweighter, reweighting.from_margins, MARGIN_WEIGHTS),
              *(("stopping", c, f.stop, STOPPING) for c, f in forms.get("stopping", ()))]
    for role, component, function, signature in checks:
        check_form(function, signature, f"boostkit_compiled_form of {_label(role, component)}")
    owners = {role: f"{_label(role, component)} ({type(component).__module__})"
              for role, component, _, _ in checks}
    return BatchPlan(proposal, search, calibration, reweighting, stops, owners), ""


def _exact_round(plan: BatchPlan, state, t: int, previous: float, numbers) -> tuple[int, int]:
    """Finish round ``t`` of a batch whose weights from the margins asked for the exact form:
    D_{t+1} into ``state.weights``, the potential's log into ``numbers[2]`` (``numbers`` the
    round's weighted error, training error and potential; ``previous`` the potential before
    the round) and the stopping rules, as the kernel runs them; returns ``(slot, code)`` of
    the rule that stopped, ``(0, 0)`` if none did."""
    reweighting = plan.reweighting
    try:
        weights, log_potential = reweighting.exact(state.margin, state.data.y,
                                                   state.initial_weights)
    except ValueError as exc:
        raise HookError(f"round {t} of a compiled batch: the exact form of "
                        f"{plan.owners['reweighting']}: {exc}") from exc
    state.weights[:] = weights
    numbers[2] = log_potential if reweighting.potential else math.nan
    z = math.exp(log_potential - previous) if reweighting.potential else math.nan
    for slot, form in enumerate(plan.stopping, start=1):
        code = int(form.stop(t, float(numbers[0]), z, float(numbers[1]), form.params))
        if code != 0:
            return slot, code
    return 0, 0


def _round_values(plan: BatchPlan, features, cuts, sides, cell_scores, values, coefficients,
                  numbers, zs, bounds) -> tuple[list, list, list]:
    """The hypotheses, contributions and records of a batch's rounds, from its arrays (a row a
    round, as :func:`boostkit.kernels.rounds.run_batch` writes them) and the rounds' Z_t and
    prod Z_t (``zs``, ``bounds``). Python numbers are made a column at a time (``tolist``),
    and the records are built from them without RoundRecord's converters
    (:meth:`RoundRecord.unchecked`); the lists made on the way are freed on return."""
    hypotheses = list(map(plan.proposal.hypothesis, cuts[:, 0].tolist(), cuts[:, 1].tolist(),
                          sides[:, 0].tolist(), sides[:, 1].tolist(), cell_scores.tolist()))
    # A hypothesis chosen again is described once (by identity: a hypothesis may compare equal
    # to another of other scores).
    distinct = {id(h): h for h in hypotheses}
    described = {key: describe_hypothesis(h, features) for key, h in distinct.items()}
    coefficient_lists = coefficients.tolist()
    contributions = list(map(plan.calibration.contribution, values, coefficient_lists))
    weighted_errors = numbers[:, 0]
    records = list(map(RoundRecord.unchecked, range(1, len(hypotheses) + 1),
                       [described[id(h)] for h in hypotheses], weighted_errors.tolist(),
                       (0.5 - weighted_errors).tolist(), zs, bounds, numbers[:, 1].tolist(),
                       map(tuple, coefficient_lists)))
    return hypotheses, contributions, records


def run_batch_rounds(plan: BatchPlan, state, n_rounds: int, carried) -> str:
    """Run up to ``n_rounds`` rounds of ``plan`` in one compiled call
    (:func:`boostkit.kernels.rounds.run_batch`) and fill ``state``'s records, hypotheses and
    contributions, weights, margins and potential as the per-round loop leaves them; return
    the stop reason. ``carried`` is the plane's :class:`boostkit.plane.CarriedHistogram` or
    ``None`` (every histogram summed over the rows)."""
    from .engine import _exp
    from .kernels.rounds import (NEEDS_EXACT, NON_FINITE, batch_kernel, first_class,
                                 never_stop, no_factors, no_histogram, no_margin_weights)

    data = state.data
    binned = data.binned
    n_coefficients = plan.calibration.n_coefficients
    cuts = np.empty((n_rounds, 2), dtype=np.int64)
    sides = np.empty((n_rounds, 2, 2))
    cell_scores = np.empty((n_rounds, 2))
    values = np.empty((n_rounds, 2))
    coefficients = np.empty((n_rounds, n_coefficients))
    numbers = np.empty((n_rounds, 3))
    stop = np.zeros(2, dtype=np.int64)
    never = first_class(never_stop(), STOPPING)
    slots = [(first_class(f.stop, STOPPING), f.params) for f in plan.stopping]
    slots += [(never, _NO_PARAMS)] * (3 - len(slots))
    weights, margin = state.weights, state.margin
    proposal, reweighting = plan.proposal, plan.reweighting
    # The width of the proposal's own histogram, 0 for the class histogram of D_t.
    own_width = 0 if proposal.histogram is None else int(proposal.histogram_width)
    from_margins = reweighting.from_margins is not None
    potential = bool(reweighting.potential)
    # A potential from the margins starts from the fit's (log sum_i D_1(i) L(0) = 0).
    start_potential = state.log_potential if potential and from_margins else 0.0
    arguments = (
        binned.codes, data.is_pos, data.y, state.initial_weights, weights, margin,
        binned.split_mask, binned.bin_counts, first_class(plan.search, SEARCH),
        first_class(proposal.histogram or no_histogram(), HISTOGRAM), proposal.params,
        first_class(plan.calibration.values, CALIBRATION),
        plan.calibration.params,
        first_class(no_factors() if from_margins else reweighting.log_factors, REWEIGHTING),
        first_class(reweighting.from_margins if from_margins else no_margin_weights(),
                    MARGIN_WEIGHTS), reweighting.params,
        *slots[0], *slots[1], *slots[2],
        0.0 if carried is None else float(carried.max_growth),
        0 if carried is None or carried.refresh_every is None else int(carried.refresh_every),
        potential, from_margins, own_width)
    kernel = batch_kernel()
    ran, log_potential = 0, float(start_potential)
    while True:  # again after each round whose weights the reweighting's exact form gives
        done = ran
        ran += kernel(*arguments, log_potential, cuts[done:], sides[done:], cell_scores[done:],
                      values[done:], coefficients[done:], numbers[done:], stop)
        if stop[0] != NEEDS_EXACT or reweighting.exact is None:
            break
        stop[:] = _exact_round(plan, state, ran, log_potential, numbers[ran - 1])
        log_potential = float(numbers[ran - 1, 2])
        if stop[0] != 0 or ran == n_rounds:
            break
    if stop[0] < 0:
        what = (f"cell values that are not finite from the compiled form of "
                f"{plan.owners['calibration']}" if stop[0] == NON_FINITE else
                f"weights summing to 0 or overflowing under the compiled form of "
                f"{plan.owners['reweighting']}")
        raise HookError(f"round {done + int(stop[1])} of a compiled batch: {what}")
    # The records, hypotheses and contributions, from the arrays: the potential's running sum
    # and its exponentials for all the rounds at once.
    if potential:
        # Z_t and prod Z_t from log Z_t, or (from the margins) from the potentials, as
        # engine.potential_factors makes them.
        if from_margins:
            log_potentials = numbers[:ran, 2]
            log_z = np.diff(np.concatenate([[state.log_potential], log_potentials]))
        else:
            log_z = numbers[:ran, 2]
            log_potentials = np.cumsum(np.concatenate([[state.log_potential], log_z]))[1:]
        zs = list(map(_exp, log_z.tolist()))  # math.exp, bit for bit the per-round values
        bounds = list(map(_exp, log_potentials.tolist()))
        log_potential = float(log_potentials[-1]) if ran else state.log_potential
    else:
        zs = bounds = [None] * ran
        log_potential = None
    # The garbage collector is paused while the values are made: they hold no cycle, and its
    # full passes over the process's objects, every ~70 000 new ones, cost more than the
    # values themselves (3.7 against 14.7 us a round over 1 000 rounds at 1 000 x 10).
    collecting = gc.isenabled()
    gc.disable()
    try:
        hypotheses, contributions, records = _round_values(
            plan, data.features, cuts[:ran], sides[:ran], cell_scores[:ran], values[:ran],
            coefficients[:ran], numbers[:ran], zs, bounds)
    finally:
        if collecting:
            gc.enable()
    state.hypotheses.extend(hypotheses)
    state.contributions.extend(contributions)
    state.records.extend(records)
    state.round, state.log_potential = ran, log_potential
    positive = state.initial_weights > 0
    state.least_margin = (float((data.y * margin)[positive].min()) if positive.any()
                          else math.inf)
    if stop[0] > 0:
        reasons = plan.stopping[stop[0] - 1].reasons
        if not 1 <= stop[1] <= len(reasons):
            raise HookError(f"a compiled stopping rule returned reason code {int(stop[1])}, "
                            f"expected 0 or 1..{len(reasons)} ({reasons})")
        reason = reasons[stop[1] - 1]
    else:
        reason = "max-rounds"
    if state.records:
        state.records[-1] = attrs.evolve(state.records[-1], stop_reason=reason)
    return reason

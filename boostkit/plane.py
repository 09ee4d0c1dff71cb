"""Data planes: where the rows of a fit live, and what a boosting round asks of them.

The engine runs one boosting round (:func:`boostkit.engine.run_rounds`) whatever holds the
examples. What depends on where they are goes through the fit's *data plane*:

- :meth:`DataPlane.start` sets up the state of round 0 (D_1, the margins F_0 = 0);
- :meth:`DataPlane.class_histogram` is the reduction a histogram-based proposal chooses from:
  the weight of each class in every bin of every feature under D_t, summed over all the rows
  (``state.class_histogram()`` asks for it), or on a :class:`RowPlane` with
  ``histogram="carried"`` updated from last round's (:class:`CarriedHistogram`);
- :meth:`DataPlane.bind` gives a candidate chosen from reductions (one with ``bin_cells``) the
  rows' bin codes, where there are rows and the proposal did not pass them; a :class:`RowPlane`
  whose rounds are fused leaves a candidate of a feature's bins without rows, calibrated from
  its cell sums as on a shard, when every calibration component answers so (``"distributed"``)
  and binds the codes in :meth:`DataPlane.advance` only for a round not fused after all;
- :meth:`DataPlane.advance` adds the round's term to the margins, computes the next weights
  (the reweighting's row form, or its whole-rows form where the rows are in this process) and
  reports the round's training error, weighted error and potential (:class:`Advance`);
- :meth:`DataPlane.reduce` runs any other sum over the rows a component needs (per-node
  histograms of a tree's level, a score histogram, stratum totals): ``state.reduce(fn)`` calls
  ``fn(rows)`` on every part of the rows where it lives (:class:`Rows`) and adds the answers.

Two planes exist: :class:`RowPlane`, the rows in this process (``Booster.fit``), and
:class:`boostkit.distributed.ShardPlane`, rows split into shards that live elsewhere (Dask
workers, or :class:`boostkit.distributed.LocalShards` in tests), where a round is a map over the
shards and a reduce on the driver. Proposal, calibration, records, stopping, observers and
callbacks run on the driver, the same code for both.

A component written against the planes' contract works on every plane: a proposal that chooses
from ``state.class_histogram()`` and returns a candidate with ``bin_cells``, a calibration that
reads only cell sums, and a reweighting with a row form (``boostkit_row_weights``).
"""

from __future__ import annotations

import math
import sys
from typing import Any, Mapping

import attrs
import numpy as np

from .capabilities import DISTRIBUTED, capabilities_of, check_data_requirements
from .components import BinCells, Candidate, RowWeights, Weights, describe_hypothesis
from .errors import HookError
from .kernels.blocks import row_threads
from .kernels.boosting import (add_contribution, add_contribution_blocks, all_finite,
                               all_finite_parallel, sum_and_min_parallel)
from .kernels.carried import (changed_class_histogram, changed_class_weights,
                              changed_pair_histogram, changed_pair_weights, rows_off_cell)
from .kernels.fused import carry_factors, cell_term_pass_into, factor_scale, pair_term_pass_into
from .plugins import get_registry, tracing_enabled
from .splits import histogram

__all__ = ["Advance", "CarriedHistogram", "DataPlane", "HISTOGRAM_MODES", "RowPlane", "Rows",
           "WEIGHT_SUM_TOLERANCE", "add_reductions", "combine_reductions", "histogram_option",
           "check_array", "check_distribution", "check_row_weights", "check_sign_totals",
           "row_weights", "sign_potential"]


@attrs.frozen(eq=False)
class Rows:
    """Some rows of a fit, where they live, as a reduction sees them: all the rows in this
    process, or one shard's on its worker.

    ``codes`` are the ``(d, n)`` bin codes (``data.binned``'s bins), ``y`` the signs (``(n,)``,
    or ``(n, C)`` over (example, class) pairs), ``is_pos`` their ``y > 0`` as bytes, ``labels``
    the class index of single-label rows (or ``None``), ``initial_weights`` D_1 and ``weights``
    D_t, both normalised over *all* the fit's rows, and ``margin`` F_{t-1} (F_t after the
    round's term was added). ``X`` holds the raw float64 values where the rows are in this
    process; a shard keeps only the bin codes (``None``) unless a component of the fit reads
    the values there (``reads_values = True``: ``boostkit.distributed.ShardPlan.keep_values``).
    """

    codes: np.ndarray
    y: np.ndarray
    is_pos: np.ndarray
    labels: np.ndarray | None
    initial_weights: np.ndarray
    weights: np.ndarray
    margin: np.ndarray
    n_jobs: int = 1
    X: np.ndarray | None = None


def add_reductions(answers):
    """The sum of reductions' answers (arrays, or tuples of arrays) in the order given, in
    float64: the driver adds the shards' answers in shard order, so a fit is deterministic."""
    answers = list(answers)
    first = answers[0]
    if isinstance(first, tuple):
        return tuple(add_reductions([a[i] for a in answers]) for i in range(len(first)))
    total = np.array(first, dtype=np.float64, copy=True)
    for answer in answers[1:]:
        total += answer
    return total


def combine_reductions(reduction, answers):
    """The answers of ``reduction`` over the parts of the rows, in order, made one: by the
    reduction's own ``combine`` (a function of the list of answers) when it has one, for what
    is not a sum (a least or greatest value over all rows), else summed
    (:func:`add_reductions`)."""
    combine = getattr(reduction, "combine", None)
    return add_reductions(answers) if combine is None else combine(list(answers))


@attrs.frozen
class Advance:
    """What a plane reports after adding round t's term and reweighting.

    ``training_error`` is sum_i D_1(i) [y_i F_t(x_i) <= 0]; ``weighted_error`` the term's error
    under D_t; ``log_potential`` log sum_i D_1(i) L(y_i F_t(x_i)) of the reweighting's loss, or
    ``None``; ``extra`` what the reweighting adds to the round record.
    """

    training_error: float
    weighted_error: float
    log_potential: float | None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


class DataPlane:
    """Where a fit's rows live (see the module notes). Subclasses implement every method."""

    #: Whether the rows are in this process: ``state.data.X``, ``state.weights`` and
    #: ``state.margin`` are then arrays, else ``None``.
    has_rows: bool = False
    #: The fit's data as the hooks see them (``state.data``).
    data: Any = None

    def start(self, state) -> None:
        """Set ``state`` up for round 1 (D_1 and F_0, where there are rows)."""
        raise NotImplementedError

    def class_histogram(self, state) -> np.ndarray:
        """The ``(d, B, 2)`` class histogram of D_t over all rows (``(d, B, C, 2)`` over
        (example, class) pairs): what :func:`boostkit.splits.histogram` gives on one machine."""
        raise NotImplementedError

    def bind(self, state, candidate: Candidate) -> None:
        """Make ``candidate`` usable by the calibration and :meth:`advance` on this plane."""
        raise NotImplementedError

    def advance(self, state, candidate: Candidate, calibrated) -> Advance:
        """Add the round's term to the margins and compute D_{t+1} (see :class:`Advance`)."""
        raise NotImplementedError

    def reduce(self, state, reduction):
        """``reduction(rows)`` (a picklable callable: it may run on other machines) on every
        part of the rows (:class:`Rows`), summed (:func:`add_reductions`), or combined by the
        reduction's ``combine`` (:func:`combine_reductions`)."""
        raise NotImplementedError


def row_weights(hook, margin: np.ndarray, y: np.ndarray, initial_weights: np.ndarray,
                n_jobs: int, owner: str) -> RowWeights:
    """The reweighting's row form on flat arrays of rows (``boostkit_row_weights``, or the
    deprecated ``boostkit_shard_weights`` of a plugin written before it), checked; any error
    is a :class:`boostkit.HookError` naming ``owner``."""
    call = hook.boostkit_row_weights
    if not call.get_hookimpls():
        call = hook.boostkit_shard_weights
    try:
        answer = call(margin=margin, y=y, initial_weights=initial_weights, n_jobs=n_jobs)
    except HookError:
        raise
    except Exception as exc:
        raise HookError(f"{owner} failed: {type(exc).__name__}: {exc}") from exc
    return check_row_weights(answer, margin.size, owner)


def check_sign_totals(totals, owner: str) -> None:
    """Refuse weights normalised by sign (``RowWeights(by_sign=True)``) that leave the
    negative or the positive rows (``totals``: their weights) without weight."""
    if not (totals[0] > 0 and totals[1] > 0):
        side = "negative" if not totals[0] > 0 else "positive"
        raise HookError(f"{owner} left the {side} rows without weight: weights normalised by "
                        "sign (RowWeights(by_sign=True)) need weight on both signs")


def sign_potential(log_totals, initial_totals) -> float:
    """The potential of weights normalised by sign (``RowWeights(by_sign=True)``): the pairs'
    log(W_- / D1_-) + log(W_+ / D1_+), from the log of each sign's total weight (negative,
    positive) and its total initial weight."""
    return float(log_totals[0] + log_totals[1] - math.log(initial_totals[0])
                 - math.log(initial_totals[1]))


def check_row_weights(answer, n: int, owner: str) -> RowWeights:
    """Refuse a row form's answer that is not ``n`` finite non-negative weights."""
    if not isinstance(answer, RowWeights):
        raise HookError(f"{owner} returned {type(answer).__name__}, expected boostkit.RowWeights")
    weights = answer.weights
    if weights.shape != (n,) or not np.isfinite(weights).all() or (weights < 0).any():
        raise HookError(f"{owner} returned weights of shape {weights.shape} with values in "
                        f"[{weights.min(initial=0):g}, {weights.max(initial=0):g}], expected "
                        f"{n} finite non-negative values")
    return answer


def check_array(values, shape: tuple, what: str, owner: str, n_jobs: int = 1, *,
                 finite: bool = True) -> None:
    """Refuse ``values`` that are missing or not of ``shape``, or (if ``finite``) not finite."""
    if values is None:
        raise HookError(f"{owner} returned no {what} (None) for a candidate with rows")
    if values.shape != shape:
        raise HookError(f"{owner} returned {what} of shape {values.shape}, expected {shape}")
    if finite and not (all_finite_parallel(values.ravel(), n_jobs) if values.dtype == np.float64
                       else np.isfinite(values).all()):
        raise HookError(f"{owner} returned {what} containing NaN or infinite values")


def non_finite_message(values: np.ndarray, hypothesis: str, where: str) -> str:
    """Which of a calibration's training values are NaN or infinite, for what, and where."""
    flat = values.ravel()
    bad = ~np.isfinite(flat)
    i = int(np.argmax(bad))
    return (
        "boostkit_calibrate returned training contributions containing NaN or infinite values: "
        f"{int(bad.sum())} of {flat.shape[0]} (the first at flat index {i}: {float(flat[i])!r}) "
        f"for {hypothesis}, so a coefficient or a value overflowed ({where})"
    )


#: How far from 1 the weights a hook returns may sum: the rounding of a sum of many terms, far
#: below any real normalisation mistake.
WEIGHT_SUM_TOLERANCE = 1e-9


def check_distribution(weights: np.ndarray, shape: tuple, owner: str, n_jobs: int = 1) -> None:
    """Refuse float64 ``weights`` that are not a distribution of the fit's ``shape``.

    The engine does not normalise them: a rule that forgot to is wrong about its potential too.
    One pass in the common case (:func:`boostkit.kernels.boosting.sum_and_min`, in blocks on
    ``n_jobs`` threads for large fits; a NaN makes the sum NaN, which fails the comparison); the
    details only on error.
    """
    if weights.shape != shape:
        raise HookError(
            f"{owner} returned weights of shape {weights.shape}, expected {shape} (one per "
            "training example, or per (example, class) pair)"
        )
    total, smallest = sum_and_min_parallel(weights.ravel(), n_jobs)  # one pass, no temporary
    if abs(total - 1.0) <= WEIGHT_SUM_TOLERANCE and smallest >= 0.0:
        return
    flat = weights.ravel()
    expected = "not a distribution (finite, non-negative, summing to 1)"
    bad = ~np.isfinite(flat)
    if bad.any():
        i = int(np.argmax(bad))
        raise HookError(
            f"{owner} returned {int(bad.sum())} NaN or infinite weight(s) (the first at flat "
            f"index {i}: {float(flat[i])!r}): {expected}. Compute them in log space (subtract "
            "the largest exponent before exponentiating)"
        )
    if weights.min() < 0.0:
        i = int(np.argmin(flat))
        raise HookError(
            f"{owner} returned {int((flat < 0).sum())} negative weight(s) (the smallest at flat "
            f"index {i}: {float(flat[i])!r}): {expected}"
        )
    raise HookError(
        f"{owner} returned weights summing to {float(weights.sum())!r}: {expected[:-1]} within "
        f"{WEIGHT_SUM_TOLERANCE:g}). Divide them by their sum, and give log_potential for the "
        "unnormalised weights"
    )


def answers_from_cells(component) -> bool:
    """Whether a calibration component answers any candidate without rows from its cell sums:
    it provides ``"distributed"`` whatever its parameters (a class attribute, not a property:
    PAV with bins is distributable for hypotheses with ordered cells only, and refuses a
    stump's without rows), declared in the class that calibrates or below it (a subclass that
    overrides ``boostkit_calibrate`` of a distributable class may read the training values,
    and is given rows)."""
    if DISTRIBUTED not in capabilities_of(component)[1]:
        return False
    cls = type(component)
    declared = next((klass for klass in cls.__mro__ if "provides" in vars(klass)), None)
    calibrates = next((klass for klass in cls.__mro__ if "boostkit_calibrate" in vars(klass)),
                      None)
    return (declared is not None and not isinstance(vars(declared)["provides"], property)
            and (calibrates is None or issubclass(declared, calibrates)))


def cell_log_factors(reweighting):
    """The reweighting's ``cell_log_factors`` (log g[cell, sign] of a term's values per cell:
    D_{t+1}(i) = D_t(i) g[cell_i, y_i] / Z_t), or ``None`` when it declares none, or when a
    subclass overrides its weights (``boostkit_reweight``, ``boostkit_row_weights``) below the
    class that declared the factors: that subclass changed the rule without saying it is still
    multiplicative per cell (SAMME's weights floored after normalising are not)."""
    owners = type(reweighting).__mro__

    def owner(name):
        return next((cls for cls in owners if name in vars(cls)), None)

    declared = owner("cell_log_factors")
    if declared is None:
        return None
    for hook in ("boostkit_reweight", "boostkit_row_weights"):
        rule = owner(hook)
        if rule is not None and rule is not declared and issubclass(rule, declared):
            return None
    return reweighting.cell_log_factors


#: The ways a :class:`RowPlane` gets each round's class histogram (``Booster(histogram=...)``):
#: ``"exact"`` sums every row under D_t; ``"carried"`` updates the last histogram
#: (:class:`CarriedHistogram` with its defaults).
HISTOGRAM_MODES = ("exact", "carried")


def _growth_limit(instance, attribute, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 1.0:
        raise ValueError(f"CarriedHistogram: max_growth must be a number >= 1, got {value!r}")


def _refresh_every(instance, attribute, value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                              or value < 1):
        raise ValueError(f"CarriedHistogram: refresh_every must be None or a positive integer, "
                         f"got {value!r}")


@attrs.frozen
class CarriedHistogram:
    """A class histogram carried across rounds instead of summed over every row each round.

    When the reweighting multiplies each row's weight by a factor of the last term's cell and
    the row's sign (it has ``cell_log_factors``: ``exponential``), and the term's contribution
    is a value per cell (``Contribution.cell_table``) of a hypothesis that reads one binned
    feature (``BinCells``), next round's histogram is
    H_{t+1} = (g_O H_t + sum_{j != O} (g_j - g_O) H_j) / Z_t, with g_j the factor of cell j
    (per sign, and class over (example, class) pairs), O the cell with the most rows and H_j
    the histogram of cell j's rows under D_t: only the rows off O are summed again
    (:mod:`boostkit.kernels.carried`), as LightGBM gets a leaf's histogram from its sibling's by
    subtraction. Z_t is the new histogram's total, as the weights are normalised.

    Drift. A bin's relative rounding error is multiplied by at most
    rho_t = max(1, max_{j != O, y} g_O[y] / g_j[y]) in round t (the bin's old weight is scaled
    by g_O, its true weight by at least min(g_O, g_j)), plus the round's own roundings: the
    sum over the rows off O (at most (n - 1) u, relatively, for n rows or pairs) and four
    operations. After k carried rounds since an exact histogram of relative error e_0
    <= (n - 1) u, every bin of the carried histogram is within
    (prod_t rho_t) (e_0 + k (n + 4) u) of its exact weight, relatively (u = 2^-53); an empty bin
    stays exactly empty. (The bound is a worst case: on spambase, adult, ionosphere and
    contraceptive the carried bins stayed within 4e-11 of the exact ones over 200 rounds, on
    mushroom within 2.7e-9.) The plane sums every row again when that product would pass
    ``max_growth`` (default 1e6), or (``refresh_every`` = K) when K - 1 rounds in a row were
    carried. On separable data (mushroom) alpha grows and rho_t = e^{2 alpha} passes 1e6 at
    once, so the histogram is summed anew in those rounds; without the limit it loses every
    digit (its bins 3e-3 off after 50 rounds, 1.2e3 after 200).
    """

    max_growth: float = attrs.field(default=1e6, validator=_growth_limit)
    refresh_every: int | None = attrs.field(default=None, validator=_refresh_every)


def histogram_option(value) -> CarriedHistogram | None:
    """The :class:`CarriedHistogram` of ``Booster(histogram=value)``, or ``None`` for the exact
    histogram; a value that is none of :data:`HISTOGRAM_MODES` or a ``CarriedHistogram`` is
    refused (``ValueError``)."""
    if isinstance(value, CarriedHistogram):
        return value
    if isinstance(value, str) and value in HISTOGRAM_MODES:
        return CarriedHistogram() if value == "carried" else None
    raise ValueError(f"histogram must be one of {', '.join(map(repr, HISTOGRAM_MODES))} or a "
                     f"boostkit.plane.CarriedHistogram, got {value!r}")


@attrs.frozen(eq=False)
class _Carry:
    """What round t leaves for the next histogram, that of ``weights`` (D_{t+1}): H_t
    (``previous``) scaled by g_O (``kept_factors``) plus the change of weight of the rows off
    the kept cell, summed. The fused pass wrote those rows, their change and their sign
    (``off``); else they are found from ``old_weights`` (D_t), feature ``feature``'s codes,
    ``table``, the ``kept`` cell and ``delta`` (g_j - g_O per cell). ``growth`` is rho_t."""

    weights: np.ndarray
    previous: np.ndarray
    kept_factors: np.ndarray
    growth: float
    feature: int
    off: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    old_weights: np.ndarray | None = None
    table: np.ndarray | None = None
    kept: int = -1
    delta: np.ndarray | None = None


class RowPlane(DataPlane):
    """The rows in this process: a :class:`boostkit.data.TrainingData`, the running margins
    and weights as arrays on ``state``, and the whole-rows hooks (``boostkit_reweight``,
    ``boostkit_initial_weights``) available."""

    has_rows = True

    def __init__(self, data, components, *, recipe_name: str, histogram="exact"):
        self.data = data
        self.components = components
        self.recipe_name = recipe_name
        #: ``None`` (every histogram summed over all the rows) or the :class:`CarriedHistogram`.
        self.carried = histogram_option(histogram)
        self._histogram: tuple[Any, np.ndarray] | None = None  # (weights it was summed under, H)
        self._carry: _Carry | None = None
        # The fused pass's rows off the kept cell, their change of weight and sign: reused.
        self._off_rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._spare_weights: np.ndarray | None = None  # D_{t-1}'s array, for D_{t+1}
        #: prod rho_t over the rounds carried since the last exact histogram, and their number.
        self.histogram_growth = 1.0
        self.rounds_carried = 0
        #: The rounds that took the fused pass (:meth:`advance`), for tests and benchmarks.
        self.rounds_fused = 0

    def start(self, state) -> None:
        from .engine import _call, _component, _initial_weights, _owner

        # Names for errors and the hook caller, found once per fit: a round costs microseconds.
        self._call = _call
        self._calibration = _component(self.components, "calibration")
        self._reweighting = _owner(self.components, "reweighting", "boostkit_reweight")
        self._row_form = _owner(self.components, "reweighting", "boostkit_row_weights")
        data = self.data
        check_data_requirements(self.recipe_name, self.components, data.X,
                                get_registry().capabilities(), data.features)
        d1 = _initial_weights(state.hook, self.components, data)
        state.weights, state.margin, state.initial_weights = d1.copy(), np.zeros(data.y.shape), d1
        # Whole-rows reweighting when the component has one (it may use state.least_margin,
        # found in the pass that adds the contribution); else its row form.
        self._whole_rows = bool(state.hook.boostkit_reweight.get_hookimpls())
        # A carried histogram and the fused pass need a reweighting that says how it
        # multiplies a cell's weights.
        reweighting = next(c for role, c in self.components if role == "reweighting")
        self._cell_log_factors = (cell_log_factors(reweighting) if self.carried is not None
                                  else None)
        # A traced fit calls every round hook, so the trace shows each (no fused pass).
        self._fused = self._cell_log_factors is not None and not tracing_enabled()
        # A fused round reads the term's values per cell, never per row: where every
        # calibration component answers from cell sums alone (as on shards), a candidate of a
        # feature's bins is calibrated without rows (train_values None, 1.7 ms of values[cells]
        # and 1 ms of their check a round at 100 000 x 20 x 10 classes, saved).
        self._cells_answer = self._fused and all(
            answers_from_cells(component) for role, component in self.components
            if role in ("calibration", "calibration-wrapper"))

    def class_histogram(self, state) -> np.ndarray:
        # One histogram per distribution: several components may ask within a round.
        if self._histogram is None or self._histogram[0] is not state.weights:
            carry, self._carry = self._carry, None
            if carry is not None and carry.weights is state.weights and self._may_carry(
                    carry.growth):
                self._histogram = (state.weights, self._carried(carry))
                self.histogram_growth *= carry.growth
                self.rounds_carried += 1
            else:
                binned = self.data.binned
                self._histogram = (state.weights, histogram(
                    binned.codes, state.weights, self.data.is_pos, binned.max_bins,
                    state.n_jobs, labels=self.data.labels))
                self.histogram_growth, self.rounds_carried = 1.0, 0
        return self._histogram[1]

    def _may_carry(self, growth: float) -> bool:
        """Whether the drift bound allows one more carried round of drift factor ``growth``
        (:class:`CarriedHistogram`)."""
        limits = self.carried
        return (self.histogram_growth * growth <= limits.max_growth
                and (limits.refresh_every is None
                     or self.rounds_carried + 1 < limits.refresh_every))

    def _carried(self, carry: _Carry) -> np.ndarray:
        """H_{t+1} from H_t and the rows off the last term's largest cell, normalised."""
        binned, previous = self.data.binned, carry.previous
        if carry.off is not None:
            rows, change, is_pos = carry.off
        else:
            rows, cells = rows_off_cell(binned.codes[carry.feature], carry.table, carry.kept)
            weigh = changed_pair_weights if previous.ndim == 4 else changed_class_weights
            change, is_pos = weigh(rows, cells, carry.old_weights, self.data.is_pos,
                                   carry.delta)
        summed = np.empty_like(previous)  # over (example, class) pairs: (d, B, C, 2)
        add_changes = changed_pair_histogram if previous.ndim == 4 else changed_class_histogram
        add_changes(binned.codes, rows, change, is_pos, summed)
        carried = previous * carry.kept_factors
        carried += summed
        carried /= carried[0].sum()  # every row is in one bin of feature 0: the total, Z_t
        return carried

    def _cell_term(self, state, candidate: Candidate, calibrated):
        """``(values, log_factors, rows_per_cell)`` of a round whose term is a value per cell
        of one binned feature's bins and whose reweighting multiplies weights per (cell, sign),
        or ``None``: a term that replaces another, cells that are not a table of one feature's
        bins (or a table that misses a code), values not constant per cell or not finite, log
        factors ``None`` (a reweighting multiplicative per cell only for some parameters says
        so) or of another shape."""
        bin_cells = candidate.bin_cells
        if calibrated.replaces is not None or not isinstance(bin_cells, BinCells):
            return None
        values = calibrated.contribution.cell_table(candidate.hypothesis)
        if values is None:
            return None
        values = np.ascontiguousarray(values, dtype=np.float64)
        counts, table = self.data.binned.bin_counts[bin_cells.feature], bin_cells.table
        if (table.shape[0] < counts.shape[0] or int(table.max()) >= values.shape[0]
                or not np.isfinite(values).all()):
            return None
        log_factors = self._cell_log_factors(values)
        if log_factors is None:  # the rule is not multiplicative per cell with its parameters
            return None
        log_factors = np.ascontiguousarray(log_factors, dtype=np.float64)
        if log_factors.shape != values.shape + (2,):
            return None
        rows_per_cell = np.bincount(table[:counts.shape[0]], weights=counts,
                                    minlength=values.shape[0])
        return values, log_factors, rows_per_cell

    def _next_carry(self, state, candidate: Candidate, calibrated, weights) -> _Carry | None:
        """What round t leaves for a carried histogram of ``weights`` (D_{t+1}) after the
        whole-rows path, or ``None`` where it cannot be carried (no histogram of D_t, a term
        that is not a value per cell of one feature's bins, a factor that underflowed)."""
        previous = self._histogram
        if previous is None or previous[0] is not state.weights:
            return None
        term = self._cell_term(state, candidate, calibrated)
        if term is None:
            return None
        factors, kept, growth = carry_factors(term[1], term[2])
        if not math.isfinite(growth):
            return None
        return _Carry(weights, previous[1], factors[kept], growth, candidate.bin_cells.feature,
                      old_weights=state.weights, table=candidate.bin_cells.table, kept=kept,
                      delta=factors - factors[kept])

    def reduce(self, state, reduction):
        data = self.data
        return combine_reductions(reduction, [reduction(Rows(
            codes=data.binned.codes, y=data.y, is_pos=data.is_pos, labels=data.labels,
            initial_weights=state.initial_weights, weights=state.weights, margin=state.margin,
            n_jobs=state.n_jobs, X=data.X))])

    def bind(self, state, candidate: Candidate) -> None:
        if self._cells_answer and isinstance(candidate.bin_cells, BinCells):
            # Calibrated from cell sums; advance binds the codes if the round needs the rows.
            candidate.release_codes()
            if not candidate.has_rows:
                return
        if candidate.has_rows:
            return
        if candidate.bin_cells is None:
            raise HookError("boostkit_propose returned a candidate without rows (X, cells or "
                            "scores) or bin_cells")
        candidate.bind_codes(self.data.binned.codes)

    def advance(self, state, candidate: Candidate, calibrated) -> Advance:
        t, n_jobs, shape = state.round, state.n_jobs, self.data.y.shape
        calibration = self._calibration
        # On any number of threads: the fused pass on one (10.3 ms a round at 1 000 000 x 20,
        # n_jobs=2) beat the margins' and weights' passes on two (17.5 ms; wall clock, a
        # shared two-core machine), as those run at the memory's pace.
        if self._fused:
            term = self._cell_term(state, candidate, calibrated)
            if term is not None:
                fused = self._fused_advance(state, candidate, calibrated, *term)
                if fused is not None:
                    return fused
        if calibrated.replaces is not None and not (
                0 <= calibrated.replaces < len(state.contributions)):
            raise HookError(
                f"boostkit_calibrate asked to replace term {calibrated.replaces}, but the "
                f"model has {len(state.contributions)} terms (round {t}, {calibration})"
            )
        if not candidate.has_rows:  # left unbound by bind, and the round not fused after all
            candidate.bind_codes(self.data.binned.codes)
            calibrated = self._row_values(state, candidate, calibrated)
        # The values' finiteness is counted in the pass that adds them to the margins (one pass
        # fewer); the fit stops there if any is not.
        check_array(calibrated.train_values, shape, "training contributions",
                     f"boostkit_calibrate of {calibration} in round {t}", n_jobs,
                     finite=calibrated.replaces is not None)
        change = calibrated.train_values
        if calibrated.replaces is not None:
            check_array(calibrated.removed_values, shape, "removed values",
                         f"boostkit_calibrate of {calibration} in round {t}", n_jobs)
            change = calibrated.train_values - calibrated.removed_values
        # Over (example, class) pairs the kernels see the C-contiguous arrays flattened: every
        # pair is one more binary example (Schapire & Singer 1999, section 7). The margins are
        # updated in place on one thread; on several, a round's margins may be a new array.
        flat_margin, flat_y = state.margin.ravel(), self.data.y.ravel()
        flat_d1 = state.initial_weights.ravel()
        if row_threads(flat_margin.shape[0], n_jobs) > 1:  # blocks on threads: F_t, a new array
            new_margin, training_error, weighted_error, least_margin, finite = (
                add_contribution_blocks(flat_margin, change.ravel(), flat_y, flat_d1,
                                        state.weights.ravel(), n_jobs))
            if new_margin is not flat_margin:
                state.margin, flat_margin = new_margin.reshape(shape), new_margin
        else:
            training_error, weighted_error, least_margin, finite = add_contribution(
                flat_margin, change.ravel(), flat_y, flat_d1, state.weights.ravel())
        if not finite:
            raise HookError(non_finite_message(
                calibrated.train_values, describe_hypothesis(candidate.hypothesis,
                                                             self.data.features),
                f"round {t}, {calibration}"))
        state.least_margin = least_margin
        reweighting = self._reweighting
        if self._whole_rows:
            weights = self._call(state.hook, "boostkit_reweight", self.components, state=state)
            if not isinstance(weights, Weights):
                raise HookError(f"boostkit_reweight returned {type(weights).__name__}, expected "
                                f"boostkit.Weights (round {t}, {reweighting})")
        else:
            weights = self._from_row_form(state, flat_margin, flat_y, flat_d1)
        check_distribution(weights.weights, shape, reweighting, n_jobs)
        if weights.log_potential is not None and math.isnan(weights.log_potential):
            raise HookError(f"{reweighting} returned log_potential NaN, expected a number or None")
        if self._cell_log_factors is not None:
            self._carry = self._next_carry(state, candidate, calibrated, weights.weights)
        state.weights = weights.weights
        return Advance(training_error, weighted_error, weights.log_potential, weights.extra)

    def _fused_advance(self, state, candidate, calibrated, values, log_factors,
                       rows_per_cell) -> Advance | None:
        """Round t in one pass over the rows (:mod:`boostkit.kernels.fused`): F_t, the errors,
        D_{t+1}(i) = D_t(i) g[cell_i, y_i] / Z_t and the rows off the kept cell for the carried
        histogram; ``None`` (the whole-rows path) when a factor of a cell with rows underflowed.

        The potential is log_potential_{t-1} + log Z_t, Z_t = total e^{scale} the round's true
        factor sum (``total`` of the factors up to the common scale that
        :func:`~boostkit.kernels.fused.carry_factors` divides out): log sum_i D_1(i) L(y_i F_t)
        for the multiplicative rule, as the whole-rows reweighting reports it."""
        factors, kept, growth = carry_factors(log_factors, rows_per_cell)
        if not math.isfinite(growth):
            return None
        t, shape = state.round, self.data.y.shape
        where = f"boostkit_calibrate of {self._calibration} in round {t}"
        if candidate.has_rows:  # else calibrated from cell sums (bind): no values per row
            check_array(calibrated.train_values, shape, "training contributions", where,
                        finite=False)
            # The calibration's own values are not added (the cell values are), but a
            # non-finite one is the calibration's error all the same: one read (0.35 ms at
            # 10^6 rows).
            if not all_finite(calibrated.train_values.ravel()):
                raise HookError(non_finite_message(
                    calibrated.train_values, describe_hypothesis(candidate.hypothesis,
                                                                 self.data.features),
                    f"round {t}, {self._calibration}"))
        previous = self._histogram
        carry = (previous is not None and previous[0] is state.weights
                 and self._may_carry(growth))
        buffers = self._off_rows
        if buffers is None or buffers[1].shape != shape:
            buffers = self._off_rows = (np.empty(shape[0], dtype=np.uintp), np.empty(shape),
                                        np.empty(shape, dtype=np.uint8))
        rows, row_change, row_pos = buffers
        # D_{t+1} goes to D_{t-1}'s array when nothing but the plane holds it any more (a new
        # array's pages are faulted in by the pass: 0.4 ms more at 10^6 rows).
        weights, self._spare_weights = self._spare_weights, None
        if weights is None or weights.shape != shape or sys.getrefcount(weights) > 2:
            weights = np.empty(shape)
        bin_cells = candidate.bin_cells
        term_pass = cell_term_pass_into if len(shape) == 1 else pair_term_pass_into
        n_off, total, training_error, weighted_error = term_pass(
            self.data.binned.codes[bin_cells.feature], bin_cells.table, values, factors,
            kept if carry else -1, self.data.is_pos, state.initial_weights, state.weights,
            weights, state.margin, rows, row_change, row_pos)
        if not total > 0.0:
            raise HookError(f"{self._reweighting} left no example with positive weight (round "
                            f"{t})")
        weights /= total
        scale = factor_scale(log_factors, rows_per_cell)
        log_potential = (None if state.log_potential is None
                         else state.log_potential + math.log(total) + scale)
        state.least_margin = None  # not measured by the fused pass
        self.rounds_fused += 1
        self._carry = (_Carry(weights, previous[1], factors[kept], growth, bin_cells.feature,
                              off=(rows[:n_off], row_change[:n_off], row_pos[:n_off]))
                       if carry else None)
        # The carry holds H_t: the plane keeps no other reference to D_t, which is the next
        # round's spare array.
        self._histogram = None
        self._spare_weights, state.weights = state.weights, weights
        return Advance(training_error, weighted_error, log_potential)

    def _row_values(self, state, candidate: Candidate, calibrated):
        """``calibrated`` with the training values of a candidate calibrated without rows
        (:meth:`bind`) whose round was not fused: its cell table on the rows' cells (as
        :func:`boostkit.contributions.cell_values` gives them), else the contribution on the
        rows; for a term that replaces another, the old term's values on the rows too."""
        if calibrated.train_values is not None:
            return calibrated
        contribution, hypothesis = calibrated.contribution, candidate.hypothesis
        table = contribution.cell_table(hypothesis)
        values = (contribution.values(candidate, state.margin) if table is None
                  else np.asarray(table, dtype=np.float64)[candidate.cells])
        removed = None
        if calibrated.replaces is not None:  # an index of the model's terms (advance checked)
            j = calibrated.replaces
            removed = state.contributions[j].values(
                Candidate(state.hypotheses[j], self.data.X), state.margin)
        return attrs.evolve(calibrated, train_values=values, removed_values=removed)

    def _from_row_form(self, state, margin, y, d1) -> Weights:
        """D_{t+1} of a reweighting that has only a row form: its weights normalised here."""
        owner = f"{self._row_form} in round {state.round}"
        answer = row_weights(state.hook, margin, y, d1, state.n_jobs, owner)
        if answer.by_sign:
            positive = y > 0
            totals = np.array([answer.weights[~positive].sum(), answer.weights[positive].sum()])
            check_sign_totals(totals, owner)
            weights = answer.weights / (2.0 * np.where(positive, totals[1], totals[0]))
            return Weights(weights.reshape(state.margin.shape), sign_potential(
                np.log(totals) + answer.log_scale, (d1[~positive].sum(), d1[positive].sum())))
        total = float(answer.weights.sum())
        if not total > 0.0:
            raise HookError(f"{owner} left no example with positive weight (round {state.round})")
        return Weights((answer.weights / total).reshape(state.margin.shape), answer.log_potential)


"""Coefficient rules: constant alpha, Newton alpha, and Schapire-Singer's domain partition."""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.compiled import CALIBRATION, CompiledCalibration, compile_form
from boostkit.contributions import CellContribution, LinearContribution, cell_values
from boostkit.criteria import weighted_error, z_loss
from boostkit.smoothing import check_smoothing, n_examples, resolve_smoothing
from boostkit.kernels.blocks import row_threads
from boostkit.kernels.boosting import (cell_sign_error, cell_sign_error_parallel, exp_loss_alpha,
                                      sign_error, take_cells)


def _require_pm1(scores: np.ndarray, n_not_pm1: int, name: str) -> None:
    if n_not_pm1:
        raise ValueError(
            f"{name} needs hypotheses with values in {{-1, +1}}, got scores in "
            f"[{scores.min():g}, {scores.max():g}]; use newton-alpha for real-valued hypotheses"
        )


@attrs.define
class ConstantAlpha(boostkit.Calibration):
    """Discrete AdaBoost's coefficient alpha = 1/2 ln((1 - eps + s) / (eps + s)).

    eps = sum_i D_t(i) [h(x_i) != y_i] for h in {-1, +1} (Scholz 2006, Fig. 2; Wilbur et al. 2005,
    section 3.1; Yoder 2011's slides print "2 ln", a slip for 1/2 ln). The default ``smoothing=0``
    is the textbook formula (floored at 1e-15, so a perfect hypothesis gets alpha ~ 17.3, not
    infinity); ``smoothing=None`` uses Schapire & Singer's s = 1/m. Contribution: alpha h(x). Its
    partition loss is the weighted error, so a stump learner picks the lowest-error stump.
    """

    name = "constant-alpha"
    needs = frozenset({"sign-scores"})
    provides = frozenset({"running-margin", DISTRIBUTED})
    smoothing: float | None = attrs.field(default=0.0, validator=check_smoothing)

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return weighted_error(wpos, wneg)

    @boostkit.hookimpl
    def boostkit_partition_criterion(self):
        return "error"

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        if not candidate.has_rows:  # a distributed fit: eps from the cells' class weights
            return self._from_cells(state, candidate)
        table = candidate.hypothesis.cell_score_table()
        if table is not None and candidate.has_cells:
            if candidate.cell_wneg is not None and candidate.cell_wpos is not None:
                # eps from the cell sums the proposal found: no pass over the rows for it
                alpha = self._alpha(state, self._cell_error(state, candidate, table))
                return boostkit.Calibrated(boostkit.LinearContribution(alpha),
                                           take_cells(alpha * table, candidate.cells), (alpha,))
            return self._on_cells(state, candidate, table)
        h = candidate.scores
        eps, n_not_pm1 = sign_error(h, state.data.y, state.weights)
        _require_pm1(h, n_not_pm1, self.name)
        alpha = self._alpha(state, eps)
        return boostkit.Calibrated(boostkit.LinearContribution(alpha), alpha * h, (alpha,))

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        return CompiledCalibration(
            "error", compile_form(constant_alpha_values, CALIBRATION), 1, _linear,
            params=resolve_smoothing(self.smoothing, n_examples(state.data)))

    def _alpha(self, state, eps: float) -> float:
        s = resolve_smoothing(self.smoothing, n_examples(state.data))
        return 0.5 * math.log((1.0 - eps + s) / (eps + s))

    def _on_cells(self, state, candidate, table):
        """The same eps and values from the examples' cells and the hypothesis's score per cell
        (a byte per example instead of a score): bit for bit the scores' path on one thread."""
        cells = candidate.cells
        if row_threads(cells.shape[0], state.n_jobs) > 1:  # blocks on threads: eps to rounding
            eps, n_not_pm1, n_outside = cell_sign_error_parallel(
                cells, table, state.data.y, state.weights, state.n_jobs)
        else:
            eps, n_not_pm1, n_outside = cell_sign_error(cells, table, state.data.y,
                                                        state.weights)
        if n_outside:
            raise ValueError(f"{candidate.hypothesis.name!r} gave {n_outside} cell(s) outside its "
                             f"{table.shape[0]} cells")
        if n_not_pm1:
            _require_pm1(candidate.scores, n_not_pm1, self.name)
        alpha = self._alpha(state, eps)
        return boostkit.Calibrated(boostkit.LinearContribution(alpha),
                                   take_cells(alpha * table, cells), (alpha,))

    def _from_cells(self, state, candidate):
        """eps = sum_j (W-_j if h_j = +1 else W+_j), the weight on the wrong side of each cell
        of a hypothesis constant on its cells (the same eps, summed per cell)."""
        h = candidate.hypothesis.cell_score_table()
        if h is None:
            raise ValueError(f"{self.name} in a distributed fit needs a hypothesis with one "
                             f"score per cell, and {candidate.hypothesis.name!r} has none")
        alpha = self._alpha(state, self._cell_error(state, candidate, h))
        return boostkit.Calibrated(boostkit.LinearContribution(alpha), None, (alpha,))

    def _cell_error(self, state, candidate, h) -> float:
        """eps = sum_j (W-_j if h_j = +1 else W+_j) from the cells' class weights."""
        _require_pm1(h, int(np.count_nonzero(np.abs(h) != 1.0)), self.name)
        wneg, wpos = state.cell_weights(candidate)
        return float(np.where(h > 0, wneg, wpos).sum())


def constant_alpha_values(wneg, wpos, cell_scores, params, values, coefficients):
    """``constant-alpha``'s compiled form (signature :data:`boostkit.compiled.CALIBRATION`):
    eps = sum_j (W-_j if h_j = +1 else W+_j), alpha = 1/2 ln((1 - eps + s) / (eps + s)) with
    s = ``params[0]``, values alpha h_j; NaN values for a score not in {-1, +1}."""
    s = params[0]
    eps = ((wneg[0] if cell_scores[0] > 0 else wpos[0])
           + (wneg[1] if cell_scores[1] > 0 else wpos[1]))
    alpha = 0.5 * math.log((1.0 - eps + s) / (eps + s))
    for j in range(2):
        values[j] = alpha * cell_scores[j] if abs(cell_scores[j]) == 1.0 else np.nan
    coefficients[0] = alpha


def _linear(values, coefficients):
    return LinearContribution.unchecked(coefficients[0])  # a Python float


def domain_partition_values(wneg, wpos, cell_scores, params, values, coefficients):
    """``domain-partition``'s compiled form (:data:`boostkit.compiled.CALIBRATION`):
    c_j = 1/2 ln((W+_j + s) / (W-_j + s)), s = ``params[0]`` (Wilbur et al. 2005, eq. 10-11)."""
    s = params[0]
    for j in range(2):
        value = 0.5 * math.log((wpos[j] + s) / (wneg[j] + s))
        values[j] = value
        coefficients[j] = value


def cell_contribution(values, coefficients):
    """The :class:`boostkit.CellContribution` of a batch round's cell ``values``."""
    return CellContribution.unchecked(values.copy())  # a (2,) float64 row


def newton_alpha(margins: np.ndarray, weights: np.ndarray, smoothing: float,
                 tol: float = 1e-12, max_iter: int = 100) -> float:
    """alpha minimising Z(alpha) = sum_i D(i) exp(-alpha u_i) + s (e^{alpha M} + e^{-alpha M}).

    ``u_i = y_i h(x_i)`` and M = max |u_i|: the engine's safeguarded Newton kernel
    (:func:`boostkit.kernels.boosting.exp_loss_alpha`); for h in {-1, +1} it gives exactly
    alpha = 1/2 ln((1 - eps + s)/(eps + s)).
    """
    return float(exp_loss_alpha(np.ascontiguousarray(margins, dtype=np.float64),
                                np.ascontiguousarray(weights, dtype=np.float64), smoothing, tol,
                                max_iter))


@attrs.define
class NewtonAlpha(boostkit.Calibration):
    """Linear CR-AdaBoost: the alpha minimising Z = sum_i D_t(i) exp(-alpha y_i h(x_i)).

    For real-valued h (Wilbur et al. 2005, section 3.1, "the linear form of AdaBoost", eq. 6 and 9;
    Schapire & Singer 1999), found by safeguarded Newton iterations (:func:`newton_alpha`). With
    smoothing s (default 1/m) the optimum stays finite; for h in {-1, +1} it equals
    ``constant-alpha``.
    """

    name = "newton-alpha"
    needs = frozenset({"real-scores"})
    smoothing: float | None = attrs.field(default=None, validator=check_smoothing)
    tol: float = attrs.field(default=1e-12, converter=float)
    max_iter: int = attrs.field(default=100, converter=int)

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return weighted_error(wpos, wneg)

    @boostkit.hookimpl
    def boostkit_partition_criterion(self):
        return "error"

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        h = candidate.scores
        s = resolve_smoothing(self.smoothing, n_examples(state.data))
        alpha = newton_alpha(state.data.y * h, state.weights, s, self.tol, self.max_iter)
        return boostkit.Calibrated(boostkit.LinearContribution(alpha), alpha * h, (alpha,))


@attrs.define
class DomainPartition(boostkit.Calibration):
    """Schapire-Singer's per-cell values c_j = 1/2 ln((W+_j + s) / (W-_j + s)).

    For a hypothesis that partitions the input into cells X_j with class weights W+_j, W-_j under
    D_t (Wilbur et al. 2005, eq. 10-11), these values minimise Z = 2 sum_j sqrt(W+_j W-_j) (eq. 12),
    which is also the partition loss offered to the weak learner. ``smoothing`` s defaults to 1/m,
    the order Schapire & Singer recommend, so a pure cell gets a finite value.

    With C > 1 margin columns this is real AdaBoost.MH with domain partitioning (Schapire &
    Singer 1999, sections 7-8): one value c_jl = 1/2 ln((W+_jl + s) / (W-_jl + s)) per cell j and
    class l, over the weights of the (example, class) pairs, minimising
    Z = 2 sum_{j,l} sqrt(W+_jl W-_jl); m is then the number of pairs n C, so s = 1/(nC).
    """

    name = "domain-partition"
    needs = frozenset({"cells"})
    provides = frozenset({"running-margin", "multiclass", DISTRIBUTED})
    smoothing: float | None = attrs.field(default=None, validator=check_smoothing)

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg, n_columns):
        loss = z_loss(wpos, wneg)
        return loss if n_columns == 1 else loss.sum(axis=-1)

    @boostkit.hookimpl
    def boostkit_partition_criterion(self):
        # Z by name: the stump's search then scores every cut of the (example, class) pairs'
        # histogram in one compiled call (boostkit.splits.best_split).
        return "z"

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        if candidate.hypothesis.n_cells <= 0:
            raise ValueError(
                f"{self.name} needs a hypothesis that partitions its input, and "
                f"{candidate.hypothesis.name!r} gives only scores"
            )
        wneg, wpos = state.cell_weights(candidate)
        s = resolve_smoothing(self.smoothing, n_examples(state.data) * state.data.n_columns)
        values = 0.5 * np.log((wpos + s) / (wneg + s))
        return boostkit.Calibrated(
            boostkit.CellContribution(values), cell_values(values, candidate), values.ravel()
        )

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        if state.data.n_columns != 1:
            return None
        return CompiledCalibration(
            "z", compile_form(domain_partition_values, CALIBRATION), 2, cell_contribution,
            params=resolve_smoothing(self.smoothing, n_examples(state.data)))

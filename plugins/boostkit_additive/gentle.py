"""Gentle AdaBoost's step: the weighted least-squares fit of the labels on each cell.

FHT Algorithm 4: fit f_m by weighted least squares of y_i in {-1, +1} on x_i with weights w_i,
F <- F + f_m, w_i <- w_i e^{-y_i f_m(x_i)} (renormalised). On a partition the least-squares fit is
the weighted mean of y in each cell, c_j = (W+_j - W-_j) / (W+_j + W-_j), and the squared error it
leaves, sum_j (W_j - (W+_j - W-_j)^2 / W_j) with W_j = W+_j + W-_j, is what the weak learner
minimises. With C > 1 margin columns it is Gentle AdaBoost.MH: the same per cell and class, over
the (example, class) pairs (Schapire & Singer's AdaBoost.MH pairs, as FHT treat several classes,
with Gentle AdaBoost's step).
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.compiled import CALIBRATION, CompiledCalibration, compile_form
from boostkit.contributions import cell_values
from boostkit_adaboost.coefficients import cell_contribution


def gentle_values(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
    """c = (W+ - W-) / (W+ + W-) elementwise, 0 where a cell carries no weight."""
    total = wpos + wneg
    return np.divide(wpos - wneg, total, out=np.zeros_like(total), where=total > 0)


def gentle_step_values(wneg, wpos, cell_scores, params, values, coefficients):
    """``gentle-step``'s compiled form (signature :data:`boostkit.compiled.CALIBRATION`):
    c_j = (W+_j - W-_j) / (W+_j + W-_j), 0 for a cell without weight."""
    for j in range(2):
        total = wpos[j] + wneg[j]
        value = (wpos[j] - wneg[j]) / total if total > 0.0 else 0.0
        values[j] = value
        coefficients[j] = value


@attrs.define
class GentleStep(boostkit.Calibration):
    """Gentle AdaBoost (FHT Algorithm 4, step 2(a)): c_j = (W+_j - W-_j) / (W+_j + W-_j).

    On each cell of the hypothesis' partition, the weighted mean of the labels under D_t (per class
    with several margin columns), so every term lies in [-1, +1]: a Newton step on the
    exponential loss from F (FHT's derivation of Algorithm 4), never the infinite log-ratio of
    ``domain-partition`` on a pure cell. Partition loss: the weighted squared error of that fit,
    sum_{j(,l)} (W_j - (W+_j - W-_j)^2 / W_j) (the ``(..., K)`` or ``(..., K, C)`` sums).
    """

    name = "gentle-step"
    needs = frozenset({"cells"})
    provides = frozenset({"running-margin", "multiclass", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg, n_columns):
        total = wpos + wneg
        left = total - (wpos - wneg) * gentle_values(wpos, wneg)
        return left.sum(axis=-1) if n_columns == 1 else left.sum(axis=(-2, -1))

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        # Its partition loss is the stump's "squared-error" search.
        if state.data.n_columns != 1:
            return None
        return CompiledCalibration("squared-error", compile_form(gentle_step_values, CALIBRATION),
                                   2, cell_contribution)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        if candidate.hypothesis.n_cells <= 0:
            raise ValueError(
                f"{self.name} needs a hypothesis that partitions its input, and "
                f"{candidate.hypothesis.name!r} gives only scores"
            )
        wneg, wpos = state.cell_weights(candidate)  # (K,) or (K, C)
        values = gentle_values(wpos, wneg)
        return boostkit.Calibrated(boostkit.CellContribution(values),
                                   cell_values(values, candidate), values.ravel())

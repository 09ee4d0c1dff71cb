"""boostkit_example: boosting thresholded class-centroid directions, as a third-party plugin.

Components: the proposal ``centroid-direction`` and its weak hypothesis
``thresholded-projection``. Algorithm: ``centroid-boost``, which combines them with the
first-party ``constant-alpha`` calibration, ``exponential`` reweighting and ``no-edge`` stopping,
named like any other component.

The weak learner is the Cmass learner of Wilbur et al. 2005, section 7.1 (w = c_P - c_N,
the difference of the D-weighted class centroids), cut at a threshold so that it gives +-1.
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.criteria import check_criterion, partition_loss
from boostkit.data import bin_features
from boostkit.splits import best_split, histogram

from .kernels import class_weighted_sums

__all__ = ["CentroidDirection", "ThresholdedProjection"]


def _float_vector(value) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"direction must be 1-D, got shape {arr.shape}")
    return arr


def _cell_scores(value) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.float64)
    if arr.shape != (2,):
        raise ValueError(f"cell_scores must have shape (2,), got {arr.shape}")
    return arr


@attrs.frozen
class ThresholdedProjection(boostkit.WeakHypothesis):
    """h(x) = cell_scores[0] if w.x <= offset else cell_scores[1], with w = ``direction``.

    Two cells (the two sides of the hyperplane), so both the +-1 calibrations and the per-cell
    ones (``domain-partition``) apply. Every field is a JSON scalar or a numpy array, so a model
    made of these saves and loads by name.
    """

    name = "thresholded-projection"
    n_cells = 2

    direction: np.ndarray = attrs.field(converter=_float_vector, eq=False)
    offset: float = attrs.field(converter=float)
    cell_scores: np.ndarray = attrs.field(converter=_cell_scores, eq=False)

    def cells(self, X: np.ndarray) -> np.ndarray:
        return (X @ self.direction > self.offset).astype(np.intp)

    def scores(self, X: np.ndarray) -> np.ndarray:
        return self.cell_scores[self.cells(X)]

    def describe(self) -> str:
        lo, hi = self.cell_scores
        return f"w.x <= {self.offset:.6g} ? {lo:+g} : {hi:+g} (|w| = {np.linalg.norm(self.direction):.3g})"


@attrs.define
class CentroidDirection(boostkit.Proposal):
    """Propose the thresholded projection on the difference of the weighted class centroids.

    Cmass (Wilbur et al. 2005, section 7.1): weight the positive and the negative examples by D_t,
    take their centroids c_P and c_N, and project on w = c_P - c_N. Cmass scores h(x) = w.x; here
    the projection is quantile-binned like a feature and cut where the partition loss is smallest,
    each side labelled by its weighted majority, so h(x) is +-1.

    Parameters
    ----------
    criterion:
        ``None`` (default) asks the calibration (``boostkit_partition_loss``): the weighted error
        under ``constant-alpha``, Z under ``domain-partition``. Or one of ``"error"``, ``"z"``,
        ``"gini"``, ``"entropy"`` (:mod:`boostkit.criteria`).

    Proposes nothing (ending the run as ``"pool-exhausted"``) when one class carries no weight
    or the centroids coincide, since there is then no direction to cut.
    """

    name = "centroid-direction"
    # What its hypotheses guarantee (boostkit.capabilities): +-1 scores on two cells, so the
    # +-1 and per-cell calibrations accept it. Dense X only: no "sparse-input".
    provides = frozenset({"real-scores", "sign-scores", "cells", "two-cells"})
    criterion: str | None = attrs.field(default=None, validator=check_criterion)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        data = state.data
        sums, totals = np.empty((2, data.n_features)), np.empty(2)
        class_weighted_sums(data.X, state.weights, data.is_pos, sums, totals)
        if totals.min() <= 0.0:
            return None
        direction = sums[1] / totals[1] - sums[0] / totals[0]
        projection = data.X @ direction
        # One "feature", binned like the engine bins features, so the cut is searched over the
        # same histogram sums (and the same loss) as a stump's.
        binned = bin_features(projection[:, None], data.max_bins, data.sample_weight)
        hist = histogram(binned.codes, state.weights, data.is_pos, binned.max_bins)
        split = best_split(hist, binned.split_mask, partition_loss(state, self.criterion))
        if split is None:  # the projection is constant on the training set
            return None
        cells = (binned.codes[0] > split.bin).astype(np.intp)
        cell_scores = np.where(split.wpos > split.wneg, 1.0, -1.0)
        return boostkit.Candidate(
            ThresholdedProjection(direction, binned.thresholds[0][split.bin], cell_scores),
            cells=cells,
            scores=cell_scores[cells],
            cell_wneg=split.wneg,
            cell_wpos=split.wpos,
        )


@boostkit.hookimpl
def boostkit_register_components(registry):
    registry.add_component(CentroidDirection)
    registry.add_component(ThresholdedProjection)


@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    # The calibration, reweighting and stopping rule come from another plugin (boostkit_adaboost),
    # by name: components are registered before any recipe is checked.
    registry.add_algorithm(boostkit.Recipe(
        name="centroid-boost",
        proposal="centroid-direction",
        calibration="constant-alpha",
        reweighting="exponential",
        stopping=("no-edge",),
        paper="Cmass weak learner (Wilbur et al. 2005, section 7.1), thresholded; AdaBoost (Wilbur et al. 2005, section 3.1)",
        description="Discrete AdaBoost over thresholded weighted class-centroid directions.",
    ))

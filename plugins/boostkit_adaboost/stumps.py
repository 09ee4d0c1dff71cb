"""Decision stumps: the best single-feature threshold under the calibration's criterion.

003 ("create an ROC curve using each dimension of the data alone. Take the best point"): for every
feature and every bin edge the class weights on both sides come from one histogram pass
(:func:`boostkit.splits.histogram`), and the split minimising the partition loss wins. The loss is
the calibration's (``boostkit_partition_loss``): the weighted error for discrete AdaBoost, Z for
confidence-rated cells; or an explicit ``criterion``.
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.criteria import check_criterion, partition_loss
from boostkit.splits import best_split, histogram


def _scores_array(value) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.float64)
    if arr.shape != (2,):
        raise ValueError(f"cell_scores must have shape (2,), got {arr.shape}")
    return arr


@attrs.frozen
class Stump(boostkit.WeakHypothesis):
    """h(x) = cell_scores[0] if x[feature] <= threshold else cell_scores[1].

    Two cells: 0 (left, x <= threshold) and 1 (right). A stump with ``threshold = inf`` puts
    every example in cell 0: the constant hypothesis, proposed when no feature can be split.
    """

    name = "decision-stump"
    n_cells = 2

    feature: int = boostkit.feature_field(converter=int)
    threshold: float = attrs.field(converter=float)
    cell_scores: np.ndarray = attrs.field(converter=_scores_array, eq=False)

    def cells(self, X: np.ndarray) -> np.ndarray:
        return (X[:, self.feature] > self.threshold).astype(np.intp)

    def scores(self, X: np.ndarray) -> np.ndarray:
        return self.cell_scores[self.cells(X)]

    def describe(self) -> str:
        if np.isinf(self.threshold):
            return f"constant {self.cell_scores[0]:+g}"
        lo, hi = self.cell_scores
        return f"x[{self.feature}] <= {self.threshold:.6g} ? {lo:+g} : {hi:+g}"


_PHI = np.array([-1.0, 1.0])  # phi(x) of a factorised multi-class stump: left -1, right +1


@attrs.define
class StumpLearner(boostkit.Proposal):
    """Propose the stump minimising the partition loss over all features and bin edges.

    Parameters
    ----------
    criterion:
        ``None`` (default) asks the calibration (``boostkit_partition_loss``): weighted error
        under ``constant-alpha``, Z = 2 sum_j sqrt(W+_j W-_j) under ``domain-partition``. Or one
        of ``"error"``, ``"z"``, ``"gini"``, ``"entropy"`` (:mod:`boostkit.criteria`); ``"gini"``
        makes the same choices as scikit-learn's depth-1 ``DecisionTreeClassifier``.

    Each cell is labelled by its weighted majority (ties: -1), as a depth-1 classification tree
    does, so ``cell_scores`` may be equal on both sides.

    With C > 1 margin columns the histogram holds per-class sums over the (example, class)
    pairs, the loss scores the ``(..., 2, C)`` side sums, and the stump is the phi(x) of
    Kégl's factorised hypotheses h(x, l) = alpha v_l phi(x) (2013): ``cell_scores`` = (-1, +1),
    the calibration giving each side its per-class values.
    """

    name = "stump"
    provides = frozenset({"real-scores", "sign-scores", "cells", "two-cells", "multiclass"})
    criterion: str | None = attrs.field(default=None, validator=check_criterion)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        binned = state.data.binned
        hist = histogram(binned.codes, state.weights, state.data.is_pos, binned.max_bins,
                         state.n_jobs, labels=state.data.labels)
        split = best_split(hist, binned.split_mask, partition_loss(state, self.criterion))
        if split is None:  # every feature is constant: propose the constant hypothesis
            totals = hist[0].sum(axis=0)  # (2,) or, per class, (C, 2)
            wneg = np.stack([totals[..., 0], np.zeros_like(totals[..., 0])])
            wpos = np.stack([totals[..., 1], np.zeros_like(totals[..., 1])])
            feature, threshold = 0, np.inf
            cells = np.zeros(state.data.n_samples, dtype=np.uint8)
        else:
            wneg, wpos = split.wneg, split.wpos
            feature, threshold = split.feature, binned.thresholds[split.feature][split.bin]
            cells = np.greater(binned.codes[feature], split.bin).view(np.uint8)
        cell_scores = np.where(wpos > wneg, 1.0, -1.0) if wpos.ndim == 1 else _PHI
        return boostkit.Candidate(
            Stump(feature, threshold, cell_scores),
            cells=cells,
            scores=cell_scores[cells],
            cell_wneg=wneg,
            cell_wpos=wpos,
        )

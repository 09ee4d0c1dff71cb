"""Partition losses: how good a partition of the (weighted) training set is.

Each function takes ``wpos`` and ``wneg`` of shape ``(..., K)`` (the weight of positive and
negative examples in each of K cells of every candidate partition) and returns the loss of every
candidate, shape ``(...)``; smaller is better. Calibrations answer ``boostkit_partition_loss``
with one of these, and weak learners may also be given one explicitly.
"""

from __future__ import annotations

import numpy as np

__all__ = ["weighted_error", "z_loss", "gini", "entropy", "CRITERIA", "check_criterion", "partition_loss"]


def weighted_error(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
    """Weighted error of the best +-1 labelling of the cells: sum_j min(W+_j, W-_j).

    This is discrete AdaBoost's eps_t (000 section 3.1; 004 Fig. 2) for a hypothesis that labels
    every cell by its weighted majority.
    """
    return np.minimum(wpos, wneg).sum(axis=-1)


def z_loss(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
    """Schapire-Singer's normaliser for per-cell values: Z = 2 sum_j sqrt(W+_j W-_j) (000 eq. 12)."""
    return 2.0 * np.sqrt(wpos * wneg).sum(axis=-1)


def gini(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
    """Weight times Gini impurity, summed over cells: sum_j 2 W+_j W-_j / (W+_j + W-_j).

    CART's criterion (scikit-learn's ``criterion="gini"``); offered so boostkit's stumps can be
    compared split for split with scikit-learn's.
    """
    total = wpos + wneg
    with np.errstate(invalid="ignore", divide="ignore"):
        cell = np.where(total > 0, 2.0 * wpos * wneg / total, 0.0)
    return cell.sum(axis=-1)


def entropy(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
    """Weight times binary entropy (nats), summed over cells (C4.5's information criterion)."""
    total = wpos + wneg
    with np.errstate(invalid="ignore", divide="ignore"):
        plogp = np.where(wpos > 0, wpos * np.log(wpos / total), 0.0)
        nlogn = np.where(wneg > 0, wneg * np.log(wneg / total), 0.0)
    return -(plogp + nlogn).sum(axis=-1)


CRITERIA = {"error": weighted_error, "z": z_loss, "gini": gini, "entropy": entropy}


def check_criterion(instance, attribute, value) -> None:
    """attrs validator for a weak learner's ``criterion`` parameter: ``None`` or a CRITERIA key."""
    if value is not None and value not in CRITERIA:
        raise ValueError(
            f"{attribute.name} must be None (the calibration's loss) or one of {sorted(CRITERIA)}, "
            f"got {value!r}"
        )


def partition_loss(state, criterion: str | None = None):
    """The partition loss a weak learner should minimise in this fit.

    An explicit ``criterion`` (a :data:`CRITERIA` key) wins; ``None`` asks the fit's calibration
    through ``boostkit_partition_loss``, so the learner's choice follows the coefficient rule it
    is combined with. The returned function raises a clear error if the calibration does not
    score partitions.
    """
    if criterion is not None:
        return CRITERIA[criterion]

    def calibration_loss(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
        loss = state.hook.boostkit_partition_loss(wpos=wpos, wneg=wneg)
        if loss is None:
            raise ValueError(
                "the calibration does not score partitions (no boostkit_partition_loss); give the "
                f"weak learner an explicit criterion, one of {sorted(CRITERIA)}"
            )
        return loss

    return calibration_loss

"""Best threshold splits from weighted class histograms.

Stumps, the children of tree nodes and any learner that cuts one feature at a bin edge share this
search: cumulative sums over the bins of :func:`boostkit.kernels.histogram.class_histogram` give
the class weights on both sides of every threshold of every feature at once, and a partition loss
(:mod:`boostkit.criteria`, or the calibration's answer to ``boostkit_partition_loss``) scores them.
"""

from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from .kernels.histogram import class_histogram, class_histogram_parallel

__all__ = ["Split", "best_split", "histogram"]

PartitionLoss = Callable[[np.ndarray, np.ndarray], np.ndarray]


@attrs.frozen
class Split:
    """The best split found: cut ``feature`` after bin ``bin`` (left: codes <= bin).

    ``wneg``/``wpos`` are the class weights of the (left, right) sides; ``loss`` the criterion.
    """

    feature: int
    bin: int
    loss: float
    wneg: np.ndarray = attrs.field(eq=False)
    wpos: np.ndarray = attrs.field(eq=False)


def histogram(codes: np.ndarray, weights: np.ndarray, is_pos: np.ndarray, n_bins: int,
              n_jobs: int = 1) -> np.ndarray:
    """The ``(d, n_bins, 2)`` weighted class histogram of binned features (0: neg, 1: pos)."""
    out = np.empty((codes.shape[0], n_bins, 2))
    kernel = class_histogram_parallel if n_jobs != 1 else class_histogram
    kernel(codes, weights, is_pos, out)
    return out


def best_split(hist: np.ndarray, counts: np.ndarray, loss: PartitionLoss) -> Split | None:
    """The split minimising ``loss`` over all features and bin edges, or ``None``.

    ``hist`` is ``(d, B, 2)`` (class weights per bin), ``counts`` ``(d, B)`` (examples per bin):
    a split is valid only if both sides hold at least one example. Ties go to the lowest feature,
    then the lowest threshold.
    """
    left = np.cumsum(hist, axis=1)[:, :-1, :]
    right = hist.sum(axis=1, keepdims=True) - left
    n_left = np.cumsum(counts, axis=1)[:, :-1]
    valid = (n_left > 0) & (n_left < counts.sum(axis=1, keepdims=True))
    if not valid.any():
        return None
    wneg = np.stack((left[..., 0], right[..., 0]), axis=-1)
    wpos = np.stack((left[..., 1], right[..., 1]), axis=-1)
    np.maximum(wneg, 0.0, out=wneg)  # cumulative sums may leave -1e-17 where a side is empty
    np.maximum(wpos, 0.0, out=wpos)
    scores = np.where(valid, loss(wpos, wneg), np.inf)
    feature, b = np.unravel_index(int(np.argmin(scores)), scores.shape)
    return Split(int(feature), int(b), float(scores[feature, b]), wneg[feature, b].copy(),
                 wpos[feature, b].copy())

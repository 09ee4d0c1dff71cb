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

from .kernels.histogram import (
    class_histogram,
    class_histogram_parallel,
    pair_histogram,
    pair_histogram_parallel,
    split_pair_weights,
    threshold_class_sums,
    threshold_pair_sums,
    true_pair_weights,
)

__all__ = ["Split", "best_split", "histogram", "valid_splits"]

PartitionLoss = Callable[[np.ndarray, np.ndarray], np.ndarray]
_TIE_TOLERANCE = 1e-12


@attrs.frozen
class Split:
    """The best split found: cut ``feature`` after bin ``bin`` (left: codes <= bin).

    ``wneg``/``wpos`` are the class weights of the (left, right) sides, shape ``(2,)``, or
    ``(2, C)`` per class with C > 1 margin columns; ``loss`` the criterion.
    """

    feature: int
    bin: int
    loss: float
    wneg: np.ndarray = attrs.field(eq=False)
    wpos: np.ndarray = attrs.field(eq=False)


def histogram(codes: np.ndarray, weights: np.ndarray, is_pos: np.ndarray, n_bins: int,
              n_jobs: int = 1, labels: np.ndarray | None = None) -> np.ndarray:
    """The ``(d, n_bins, 2)`` weighted class histogram of binned features (0: neg, 1: pos).

    With ``(n, C)`` pair weights and signs (C > 1 margin columns) it is the ``(d, n_bins, C, 2)``
    histogram of the (example, class) pairs. Given the class index ``labels`` of single-label
    data, pair weights that are zero off the true-label pairs (SAMME's) are summed in one pass
    over the examples instead of C, with the same result. With ``n_jobs > 1`` the examples are
    split into ``n_jobs`` blocks summed on numba's threads.
    """
    if weights.ndim == 2 and labels is not None:
        on_labels = np.empty(weights.shape[0])
        if true_pair_weights(weights, labels, on_labels):
            # The binary kernels with the class index in place of the sign: out[f, b, label].
            per_class = np.empty((codes.shape[0], n_bins, weights.shape[1]))
            if n_jobs > 1:
                class_histogram_parallel(codes, on_labels, labels, per_class, n_jobs)
            else:
                class_histogram(codes, on_labels, labels, per_class)
            out = np.zeros(per_class.shape + (2,))
            out[..., 1] = per_class
            return out
    if weights.ndim == 2:
        signed = np.empty(weights.shape + (2,))
        split_pair_weights(weights, is_pos, signed)
        out = np.empty((codes.shape[0], n_bins, weights.shape[1], 2))
        if n_jobs > 1:
            pair_histogram_parallel(codes, signed, out, n_jobs)
        else:
            pair_histogram(codes, signed, out)
        return out
    out = np.empty((codes.shape[0], n_bins, 2))
    if n_jobs > 1:
        class_histogram_parallel(codes, weights, is_pos, out, n_jobs)
    else:
        class_histogram(codes, weights, is_pos, out)
    return out


def valid_splits(counts: np.ndarray) -> np.ndarray:
    """``(d, B - 1)`` mask of the bin edges that leave at least one example on each side.

    ``counts`` is ``(d, B)``, the number of examples per bin (``BinnedData.bin_counts`` for the
    whole training set, or a tree node's own counts).
    """
    n_left = np.cumsum(counts, axis=1)[:, :-1]
    return (n_left > 0) & (n_left < counts.sum(axis=1, keepdims=True))


def best_split(hist: np.ndarray, valid: np.ndarray, loss: PartitionLoss) -> Split | None:
    """The split minimising ``loss`` over all features and valid bin edges, or ``None``.

    ``hist`` is ``(d, B, 2)`` (class weights per bin), or ``(d, B, C, 2)`` per class (the loss
    then gets ``(d, B - 1, 2, C)`` sums), and ``valid`` the ``(d, B - 1)`` mask of
    :func:`valid_splits`. Ties (losses within 1e-12, relative, of the minimum) go to the lowest
    feature, then the lowest threshold.
    """
    if not valid.any():
        return None
    d, n_bins = hist.shape[:2]
    if hist.ndim == 4:
        wneg = np.empty((d, n_bins - 1, 2, hist.shape[2]))
        wpos = np.empty_like(wneg)
        threshold_pair_sums(hist, wneg, wpos)
    else:
        wneg = np.empty((d, n_bins - 1, 2))
        wpos = np.empty((d, n_bins - 1, 2))
        threshold_class_sums(hist, wneg, wpos)
    scores = np.where(valid, loss(wpos, wneg), np.inf)
    # Losses within 1e-12 (relative) of the minimum are ties: summation order (threads, blocks)
    # must not decide between two equally good splits, so the lowest index always wins.
    lowest = scores.min()
    tied = scores <= lowest + _TIE_TOLERANCE * abs(lowest)
    feature, b = np.unravel_index(int(np.argmax(tied)), scores.shape)
    return Split(int(feature), int(b), float(scores[feature, b]), wneg[feature, b].copy(),
                 wpos[feature, b].copy())

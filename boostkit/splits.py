"""Best splits from weighted class histograms.

Stumps, the children of tree nodes and any learner that cuts one feature at a bin edge share this
search: cumulative sums over the bins of :func:`boostkit.kernels.histogram.class_histogram` give
the class weights on both sides of every threshold of every feature at once, and a partition loss
(:mod:`boostkit.criteria`, or the calibration's answer to ``boostkit_partition_loss``) scores them.

Binned data with missing values or categorical columns (``BinnedData.ordered`` False) are searched
by :func:`best_binned_split`: a missing value is one more bin, whose sums the scan puts on either
side of every cut, and a categorical column's categories are sorted by their class ratio and cut
like an ordered feature (Fisher 1958). :func:`best_split` is the threshold search of ordered data.
"""

from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from .components import BinCells
from .criteria import MULTICLASS_CRITERIA, weighted_error
from .kernels.blocks import histogram_threads
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
from .kernels.splits import (binned_split_candidates, first_near_minimum, lowest_error_cut,
                             pair_z_scores)

__all__ = [
    "Split",
    "best_split",
    "best_binned_split",
    "lowest_two_losses",
    "class_ratio_keys",
    "histogram",
    "valid_splits",
    "MIN_CATEGORY_COUNT",
    "TIE_TOLERANCE",
    "check_min_category_count",
]

PartitionLoss = Callable[[np.ndarray, np.ndarray], np.ndarray]
CategoryKeys = Callable[[np.ndarray, np.ndarray], np.ndarray]
#: Relative tolerance within which two sums of example weights are equal: losses (or class
#: weights) this close are ties, decided by index, never by the order of the summation (threads,
#: blocks, shards of a distributed fit).
TIE_TOLERANCE = 1e-12

#: Default of ``min_category_count``: a category needs this many examples in the node searched to
#: be sorted into either group of a categorical split; rarer ones always go right. Its class ratio
#: is too noisy to place it, and boosting piles weight on a few hard examples, which would make a
#: category of one or two of them worth its own side (LightGBM guards the same way with
#: ``min_data_per_group``, default 100, and ``cat_smooth``, 10; small tables need the smaller).
MIN_CATEGORY_COUNT = 10


@attrs.frozen
class Split:
    """The best split found: cut ``feature`` after bin ``bin`` (left: codes <= bin).

    ``wneg``/``wpos`` are the class weights of the (left, right) sides, shape ``(2,)``, or
    ``(2, C)`` per class with C > 1 margin columns; ``loss`` the criterion.

    ``missing_left``: whether missing values (the missing-value bin) go left. Learnt by the
    search when the examples searched hold missing values of ``feature``; otherwise it is the
    side with more of the weights searched, where a missing value met at prediction goes.
    ``categories``: for a split of a categorical column, the (sorted) categories going left,
    and ``bin`` is -1; ``None`` for a cut at a threshold.
    """

    feature: int
    bin: int
    loss: float
    wneg: np.ndarray = attrs.field(eq=False)
    wpos: np.ndarray = attrs.field(eq=False)
    missing_left: bool = False
    categories: np.ndarray | None = attrs.field(default=None, eq=False)

    @classmethod
    def at_cut(cls, feature: int, bin: int, loss: float, wneg: np.ndarray, wpos: np.ndarray, *,
               weight_columns: int | None = None) -> Split:
        """The split of a threshold cut of ordered data, found by a search of one's own: its
        ``missing_left`` the heavier side (over the first ``weight_columns`` per-class
        columns, when given), as :func:`best_split` sets it. ``wneg``/``wpos`` are the sides'
        class weights, ``(2,)`` or ``(2, C)``, and are kept, not copied."""
        return cls(int(feature), int(bin), float(loss), wneg, wpos,
                   _more_weight_left(wneg, wpos, weight_columns))

    def threshold(self, thresholds: tuple[np.ndarray, ...]) -> float:
        """The raw-value threshold of a cut (``BinnedData.thresholds``): values ``<=`` it go
        left; ``inf`` for the cut after a feature's last bin of values (all values | missing)."""
        edges = thresholds[self.feature]
        return float(edges[self.bin]) if self.bin < edges.shape[0] else np.inf

    def left_bins(self, n_bins: int, missing_bin: int | None) -> np.ndarray:
        """``(n_bins,)`` bool: the bin codes that go left (the categories, or the bins up to
        ``bin``; the ``missing_bin``, if any, as ``missing_left`` says)."""
        if self.categories is None:
            left = np.arange(n_bins) <= self.bin
        else:
            left = np.zeros(n_bins, dtype=bool)
            left[self.categories] = True
        if missing_bin is not None:
            left[missing_bin] = self.missing_left
        return left

    def bin_cells(self, n_bins: int, missing_bin: int | None) -> BinCells:
        """The split as a :class:`boostkit.BinCells`: cell 0 for the bins going left, 1 for the
        others (what the rows apply to their codes, wherever they live)."""
        if self.categories is None and (missing_bin is None or not self.missing_left):
            # Every bin above the cut goes right, the missing-value bin (the last) included.
            return BinCells.cut_after(self.feature, self.bin, n_bins)
        return BinCells(self.feature, (~self.left_bins(n_bins, missing_bin)).view(np.uint8))


def check_min_category_count(instance, attribute, value) -> None:
    """attrs validator of a learner's ``min_category_count``: an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{attribute.name} must be an integer >= 1, got {value!r}")


def _more_weight_left(wneg: np.ndarray, wpos: np.ndarray, weight_columns: int | None) -> bool:
    """Whether the left side carries at least the weight of the right one (sides on axis 0;
    only the first ``weight_columns`` per-class columns count, when given)."""
    if wneg.ndim == 1:  # the two sides' totals as Python floats: the same sums, no temporaries
        (n0, n1), (p0, p1) = wneg.tolist(), wpos.tolist()
        left, right = n0 + p0, n1 + p1
    else:
        left, right = (wneg + wpos)[:, :weight_columns].sum(axis=1).tolist()
    return left >= right - TIE_TOLERANCE * (left + right)  # a tie goes left


def histogram(codes: np.ndarray, weights: np.ndarray, is_pos: np.ndarray, n_bins: int,
              n_jobs: int = 1, labels: np.ndarray | None = None) -> np.ndarray:
    """The ``(d, n_bins, 2)`` weighted class histogram of binned features (0: neg, 1: pos).

    With ``(n, C)`` pair weights and signs (C > 1 margin columns) it is the ``(d, n_bins, C, 2)``
    histogram of the (example, class) pairs. Given the class index ``labels`` of single-label
    data, pair weights that are zero off the true-label pairs (SAMME's) are summed in one pass
    over the examples instead of C, with the same result. With ``n_jobs > 1``, and enough
    updates to repay the threads (:func:`boostkit.kernels.blocks.histogram_threads`), the
    examples are split into blocks summed on ``n_jobs`` threads (the blocks depend on the number
    of examples only, :func:`boostkit.kernels.blocks.block_bounds`); below that, the serial
    histogram.
    """
    if histogram_threads(codes, n_jobs) == 1:  # too small for threads: the serial histogram
        n_jobs = 1
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


def best_split(hist: np.ndarray, valid: np.ndarray, loss: PartitionLoss, *,
               weight_columns: int | None = None,
               priority: np.ndarray | None = None) -> Split | None:
    """The split minimising ``loss`` over all features and valid bin edges, or ``None``.

    ``hist`` is ``(d, B, 2)`` (class weights per bin), or ``(d, B, C, 2)`` per class (the loss
    then gets ``(d, B - 1, 2, C)`` sums), and ``valid`` the ``(d, B - 1)`` mask of
    :func:`valid_splits`. Ties (losses within 1e-12, relative, of the minimum) go to the lowest
    feature, then the lowest threshold; given ``priority``, a ``(d,)`` rank of the features,
    to the tied feature of the lowest rank (then the lowest threshold). Every bin is a value:
    the search of ordered data (``BinnedData.ordered``); the split's ``missing_left`` is the
    heavier side (over the first ``weight_columns`` per-class columns, when given), where a
    missing value met at prediction goes.
    """
    d, n_bins = hist.shape[:2]
    if valid.size == 0 or (priority is not None and not valid.any()):
        return None
    if (loss is weighted_error and priority is None and hist.ndim == 3
            and valid.shape == (d, n_bins - 1)):
        # The weighted error (discrete AdaBoost's eps_t): sums, errors and the choice in one
        # compiled call, the same split as below without the four arrays of sides.
        scores = np.empty((d, n_bins - 1))
        sides = np.empty((2, 2))  # (neg, pos) x (left, right)
        k = lowest_error_cut(hist, valid, TIE_TOLERANCE, scores, sides)
        if k < 0:
            return None
        feature, b = divmod(k, n_bins - 1)
        return Split.at_cut(feature, b, scores[feature, b], sides[0], sides[1],
                            weight_columns=weight_columns)
    if (loss is MULTICLASS_CRITERIA["z"] and priority is None and hist.ndim == 4
            and valid.shape == (d, n_bins - 1)):
        # AdaBoost.MH's Z over (example, class) pairs: every cut's loss from one compiled
        # call, the sides of the chosen cut's feature only (0.1 against 1.3 ms at 20 features
        # x 255 bins x 10 classes).
        scores = np.empty((d, n_bins - 1))
        pair_z_scores(hist, scores)
        k = first_near_minimum(scores, valid, TIE_TOLERANCE)
        if k < 0:
            return None
        feature, b = divmod(k, n_bins - 1)
        wneg, wpos = _threshold_sides(hist[feature:feature + 1])
        return Split.at_cut(feature, b, scores[feature, b], wneg[0, b], wpos[0, b],
                            weight_columns=weight_columns)
    wneg, wpos = _threshold_sides(hist)
    # Losses within 1e-12 (relative) of the minimum are ties: summation order (threads, blocks)
    # must not decide between two equally good splits, so the lowest index (or rank) wins.
    if priority is None:
        scores = np.asarray(loss(wpos, wneg), dtype=np.float64)
        if scores.shape != valid.shape:
            scores = np.broadcast_to(scores, valid.shape)
        k = first_near_minimum(scores, valid, TIE_TOLERANCE)
        if k < 0:  # no cut leaves an example on both sides
            return None
        feature, b = divmod(k, n_bins - 1)
    else:
        scores = np.where(valid, loss(wpos, wneg), np.inf)
        lowest = scores.min()
        tied = scores <= lowest + TIE_TOLERANCE * abs(lowest)
        priority = np.asarray(priority)
        if priority.shape != (d,):
            raise ValueError(f"priority must rank the {d} features of hist, got shape "
                             f"{priority.shape}")
        candidates = np.flatnonzero(tied.any(axis=1))
        feature = candidates[np.argmin(priority[candidates])]
        b = int(np.argmax(tied[feature]))
    return Split.at_cut(feature, b, scores[feature, b], wneg[feature, b].copy(),
                        wpos[feature, b].copy(), weight_columns=weight_columns)


def _threshold_sides(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(wneg, wpos)``: the class weights on the (left, right) sides of every cut of ``hist``,
    ``(d, B - 1, 2)``, or ``(d, B - 1, 2, C)`` per class."""
    d, n_bins = hist.shape[:2]
    if hist.ndim == 4:
        wneg = np.empty((d, n_bins - 1, 2, hist.shape[2]))
        wpos = np.empty_like(wneg)
        threshold_pair_sums(hist, wneg, wpos)
    else:
        wneg = np.empty((d, n_bins - 1, 2))
        wpos = np.empty((d, n_bins - 1, 2))
        threshold_class_sums(hist, wneg, wpos)
    return wneg, wpos


def class_ratio_keys(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
    """Fisher's sort keys of K categories: ``(n_orders, K)``, one ordering per row.

    ``wpos``/``wneg`` are the per-category class weights, ``(K,)``, or ``(K, C)`` per class.
    Two classes: the class ratio W+_k / (W+_k + W-_k), the order in which the best two-group
    partition under a loss concave in the ratio (weighted error, Z, Gini, entropy) is a prefix
    (Fisher 1958; Breiman et al. 1984, Theorem 4.5). C > 1 classes: one ordering per class l, by
    W+_kl / (W+_kl + W-_kl) (class l's binary problem over the pairs, AdaBoost.MH's); when no
    pair is negative (SAMME's weights, on the true labels only) by W+_kl / sum_l W+_kl, class
    l's share of the category (one class against the rest). The search takes the best of them:
    no ordering is optimal for several classes at once. A category without weight gets 1/2.
    """
    if wpos.ndim == 1:
        wpos, wneg = wpos[:, None], wneg[:, None]
    total = wpos + wneg if wneg.any() else wpos.sum(axis=1, keepdims=True)
    ratio = np.divide(wpos, total, out=np.full(wpos.shape, 0.5), where=total > 0)
    return ratio.T


def lowest_two_losses(hist: np.ndarray, loss: PartitionLoss, binned, *,
                      min_category_count: int = MIN_CATEGORY_COUNT,
                      category_keys: CategoryKeys = class_ratio_keys) -> tuple[float, float]:
    """The lowest and the second-lowest ``loss`` over the candidates a stump search scores.

    The candidates are those of :func:`best_split` over ``binned.split_mask`` when the data are
    ordered (``binned.ordered``), else those of :func:`best_binned_split` (``hist``, ``loss``,
    ``min_category_count`` and ``category_keys`` as there; ``binned.bin_counts`` the counts).
    When the two are within :data:`TIE_TOLERANCE` (relative) of each other, the search chose
    between them by index, not by loss: a change of summation order may change its choice.
    ``inf`` stands for a candidate that does not exist (fewer than two).
    """
    if binned.ordered:
        wneg, wpos = _threshold_sides(hist)
        valid = binned.split_mask
        scores = np.broadcast_to(np.asarray(loss(wpos, wneg), dtype=np.float64), valid.shape)
        scores = scores[valid]
    else:
        neg, pos, _, _ = _binned_candidates(hist, binned.bin_counts, binned, 1,
                                            min_category_count, category_keys)
        scores = np.asarray(loss(pos, neg), dtype=np.float64)
    lowest = np.sort(scores)[:2].tolist() + [np.inf, np.inf]
    return lowest[0], lowest[1]


def best_binned_split(hist: np.ndarray, counts: np.ndarray, loss: PartitionLoss, binned, *,
                      min_leaf: int = 1, min_category_count: int = MIN_CATEGORY_COUNT,
                      category_keys: CategoryKeys = class_ratio_keys,
                      weight_columns: int | None = None) -> Split | None:
    """The split minimising ``loss`` over binned features with missing values and categories.

    ``hist`` is ``(d, B, 2)`` or ``(d, B, C, 2)`` (as for :func:`best_split`), ``counts`` the
    ``(d, B)`` examples (of positive initial weight) per bin of the node searched, and
    ``binned`` the fit's :class:`boostkit.data.BinnedData`: its ``missing_bin`` (the last bin,
    or ``None``), ``categorical`` columns and ``n_bins``. Candidates, each side holding at least
    ``min_leaf`` examples:

    * a numeric feature is cut after every non-empty bin of values, with the missing bin
      (its sums, the node's total minus its values') on the right, and, when the node holds
      missing values of the feature, on the left; the cut after the last bin of values with
      missing values right is "all values | missing";
    * a categorical feature's categories holding at least ``min_category_count`` examples are
      sorted by ``category_keys`` (:func:`class_ratio_keys`: W+/(W+ + W-), Fisher 1958, as
      LightGBM does; one ordering per row it returns) and every prefix goes left, with the
      missing bin on either side; rarer categories (and those absent from the node) go right.

    Ties (losses within 1e-12, relative, of the minimum) go to the lowest feature, then the
    lowest cut (the shortest prefix of the first ordering), missing values right before left.
    When the node holds no missing value of the chosen feature, ``missing_left`` is the side
    with more weight (the first ``weight_columns`` per-class columns only, when given). On data
    without missing values or categorical columns this is :func:`best_split` over the cuts that
    leave ``min_leaf`` examples on each side. ``loss`` is called once, on the ``(N, 2)`` (or
    ``(N, 2, C)``) sums of all N candidates, which
    :func:`boostkit.kernels.splits.binned_split_candidates` lists.
    """
    neg, pos, meta, orders = _binned_candidates(hist, counts, binned, min_leaf,
                                                min_category_count, category_keys)
    if neg.shape[0] == 0:
        return None
    missing = -1 if binned.missing_bin is None else int(binned.missing_bin)
    categorical = np.flatnonzero(binned.categorical)
    scores = np.asarray(loss(pos, neg), dtype=np.float64)
    # The candidates are in the order of the ties: the first within the tolerance wins.
    lowest = scores.min()
    k = int(np.argmax(scores <= lowest + TIE_TOLERANCE * abs(lowest)))
    feature, cut, ordering, direction = (int(v) for v in meta[:, k])
    if ordering < 0:
        b, categories = cut, None
    else:
        row = int(np.searchsorted(categorical, feature))
        b, categories = -1, np.sort(orders[row, ordering, :cut])
    side_neg, side_pos = neg[k].copy(), pos[k].copy()
    missing_left = (direction == 1 if missing >= 0 and counts[feature, missing] > 0
                    else _more_weight_left(side_neg, side_pos, weight_columns))
    return Split(feature, b, float(scores[k]), side_neg, side_pos, missing_left, categories)


def _binned_candidates(hist, counts, binned, min_leaf, min_category_count, category_keys):
    """``(neg, pos, meta, orders)``: the side sums of every candidate of
    :func:`best_binned_split` (``(N, 2)``, or ``(N, 2, C)`` per class), their ``(4, N)``
    feature, cut, ordering and direction, and the categories' orderings."""
    per_class = hist.ndim == 4
    h = np.ascontiguousarray(hist if per_class else hist[:, :, None, :], dtype=np.float64)
    d, n_hist, n_columns = h.shape[:3]
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    n_bins = np.ascontiguousarray(binned.n_bins, dtype=np.int64)
    missing = -1 if binned.missing_bin is None else int(binned.missing_bin)
    at_most = max(int(min_category_count), 1)
    categorical = np.flatnonzero(binned.categorical)
    orders = _category_orders(categorical, h, counts, n_bins, at_most, category_keys, per_class)
    n_max = 2 * d * max(n_hist - 1, orders.shape[1] * orders.shape[2])  # room for every candidate
    sides = np.empty((2, n_max, 2, n_columns))  # neg, pos
    meta = np.empty((4, n_max), dtype=np.int64)  # feature, cut, ordering, direction
    n = binned_split_candidates(h, counts, missing, n_bins, binned.categorical, orders,
                                max(int(min_leaf), 1), at_most, sides[0], sides[1], meta)
    neg, pos = sides[:, :n] if per_class else sides[:, :n, :, 0]
    return neg, pos, meta[:, :n], orders


def _category_orders(features, h, counts, n_bins, at_most, category_keys, per_class):
    """``(k, n_orders, K)`` int64: the orderings by ``category_keys`` of the categories of the
    categorical ``features`` (see :func:`best_binned_split`), K the most categories of any;
    those with at least ``at_most`` examples come first, stably sorted by key. ``(k, 1, 1)``
    zeros when no category has that many (``category_keys`` is then not asked)."""
    k = features.shape[0]
    n_cat = int(n_bins[features].max()) if k else 1
    # The bins past a feature's categories are empty: no key of theirs is sorted.
    sorted_ = counts[features, :n_cat] >= at_most  # (k, K)
    if not sorted_.any():
        return np.zeros((k, 1, 1), dtype=np.int64)
    sums = h[features, :n_cat]  # (k, K, C', 2)
    flat = (lambda a: a.reshape(k * n_cat, -1)) if per_class else (lambda a: a.reshape(-1))
    keys = np.atleast_2d(category_keys(flat(sums[..., 1]), flat(sums[..., 0])))
    keys = np.where(sorted_[None], keys.reshape(-1, k, n_cat), np.inf).transpose(1, 0, 2)
    return np.ascontiguousarray(np.argsort(keys, axis=2, kind="stable"), dtype=np.int64)

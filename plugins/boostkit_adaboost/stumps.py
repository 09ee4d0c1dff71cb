"""Decision stumps: the best single-feature threshold under the calibration's criterion.

Yoder 2011 ("create an ROC curve using each dimension of the data alone. Take the best point"): for
every feature and every bin edge the class weights on both sides come from one histogram pass
(:func:`boostkit.splits.histogram`), and the split minimising the partition loss wins. The loss is
the calibration's (``boostkit_partition_loss``): the weighted error for discrete AdaBoost, Z for
confidence-rated cells; or an explicit ``criterion``.

Missing values and categorical columns (:func:`boostkit.splits.best_binned_split`): a stump
learns on which side missing values go, and a categorical column is split into two groups of
categories (a ``category-stump``), found by sorting the categories by their class ratio.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numba
import numpy as np

import boostkit
from boostkit.capabilities import CATEGORICAL_FEATURES, DISTRIBUTED, MISSING_VALUES
from boostkit.compiled import SEARCH, CompiledProposal, compile_form
from boostkit.criteria import check_criterion, partition_loss
from boostkit.splits import (MIN_CATEGORY_COUNT, TIE_TOLERANCE, best_binned_split, best_split,
                             check_min_category_count, class_ratio_keys, lowest_two_losses)
from boostkit_adaboost.search_kernels import (lowest_squared_error_cut, lowest_weighted_error_cut,
                                             lowest_z_cut)


def _scores_array(value) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.float64)
    if arr.shape != (2,):
        raise ValueError(f"cell_scores must have shape (2,), got {arr.shape}")
    return arr


def _side_scores(scores: np.ndarray, missing_left: bool, features) -> str:
    lo, hi = scores.tolist()  # Python floats format several times faster than numpy's
    return _side_text(lo, hi, missing_left, features is not None)


def _side_text(lo: float, hi: float, missing_left: bool, named: bool) -> str:
    # %-formatting: the same text as f"{lo:+g}", in a fifth of the time (the sign flag of a
    # format spec takes a slow path), and a batch of continuous scores describes every stump.
    text = "%+g : %+g" % (lo, hi)
    if named:  # where a missing value goes, when the columns are named
        text += " (missing: %+g)" % (lo if missing_left else hi)
    return text


@attrs.frozen
class Stump(boostkit.WeakHypothesis):
    """h(x) = cell_scores[0] if x[feature] <= threshold else cell_scores[1].

    Two cells: 0 (left, x <= threshold) and 1 (right). A missing value (NaN) goes left when
    ``missing_left``, else right; the default (True) is where the comparison always put NaN, so
    a model saved before stumps learnt it loads unchanged. A stump with ``threshold = inf``
    puts every value in cell 0: with ``missing_left`` it is the constant hypothesis, proposed when
    no feature can be split; without, it splits missing values (cell 1) from the others.
    """

    name = "decision-stump"
    n_cells = 2

    feature: int = boostkit.feature_field(converter=int)
    threshold: float = attrs.field(converter=float)
    cell_scores: np.ndarray = attrs.field(converter=_scores_array, eq=False)
    missing_left: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))

    @classmethod
    def unchecked(cls, feature: int, threshold: float, cell_scores: np.ndarray,
                  missing_left: bool) -> Stump:
        """The stump ``Stump(...)`` makes of these, built without the converters and the
        validator, for a Python int, float and bool and a C-contiguous ``(2,)`` float64 array
        (:class:`CutStump`'s, from a compiled batch's ``tolist()``). Nothing is checked."""
        stump = object.__new__(cls)
        set_field = object.__setattr__  # the class is frozen
        set_field(stump, "feature", feature)
        set_field(stump, "threshold", threshold)
        set_field(stump, "cell_scores", cell_scores)
        set_field(stump, "missing_left", missing_left)
        return stump

    def cells(self, X: np.ndarray) -> np.ndarray:
        x = X[:, self.feature]
        right = x > self.threshold  # NaN > t is False: left
        if not self.missing_left:
            right |= np.isnan(x)
        return right.astype(np.intp)

    def scores(self, X: np.ndarray) -> np.ndarray:
        return self.cell_scores[self.cells(X)]

    def threshold_split(self) -> tuple[int, float, bool]:
        return self.feature, self.threshold, self.missing_left

    def cell_score_table(self) -> np.ndarray:
        return self.cell_scores

    def describe(self, features=None) -> str:
        label = boostkit.feature_label(features, self.feature)
        lo, hi = self.cell_scores.tolist()
        if math.isinf(self.threshold):
            if self.missing_left:
                return "constant %+g" % lo
            return "%s is missing ? %+g : %+g" % (label, hi, lo)
        return (f"{label} <= {self.threshold:.6g} ? "
                f"{_side_text(lo, hi, self.missing_left, features is not None)}")


def _codes_array(value) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.shape[0] == 0 or (arr.dtype.kind not in "iu" and not (
            arr.dtype.kind == "f" and np.array_equal(arr, np.round(arr)))):
        raise ValueError(f"left_categories must be a non-empty 1-D array of category indices, "
                         f"got {arr!r}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    if (arr < 0).any() or (np.diff(arr) <= 0).any():
        raise ValueError(f"left_categories must be increasing category indices >= 0, got {arr}")
    return arr


@attrs.frozen
class CategoryStump(boostkit.WeakHypothesis):
    """h(x) = cell_scores[0] if x[feature] is one of ``left_categories`` else cell_scores[1].

    A stump on a categorical column (its values are category indices 0..K-1, NaN when missing):
    cell 0 holds the categories of ``left_categories``, cell 1 every other one (categories too
    rare to place in training included). Missing values, and with them categories unseen in
    training, go left when ``missing_left``, else right.
    """

    name = "category-stump"
    n_cells = 2

    feature: int = boostkit.feature_field(converter=int)
    left_categories: np.ndarray = attrs.field(converter=_codes_array, eq=False)
    cell_scores: np.ndarray = attrs.field(converter=_scores_array, eq=False)
    missing_left: bool = attrs.field(default=False,
                                      validator=attrs.validators.instance_of(bool))

    def cells(self, X: np.ndarray) -> np.ndarray:
        x = X[:, self.feature]
        missing = np.isnan(x)
        left = np.isin(np.where(missing, -1.0, x), self.left_categories)
        left[missing] = self.missing_left
        return (~left).astype(np.intp)

    def scores(self, X: np.ndarray) -> np.ndarray:
        return self.cell_scores[self.cells(X)]

    def cell_score_table(self) -> np.ndarray:
        return self.cell_scores

    def tree_form(self):
        """The stump as a :class:`boostkit.tree_form.TreeForm` (set membership)."""
        from boostkit.tree_form import TreeForm

        return TreeForm.member_stump(self.feature, self.left_categories, self.missing_left)

    def describe(self, features=None) -> str:
        label = boostkit.feature_label(features, self.feature)
        if features is not None and features.categories[self.feature] is not None:
            names = [features.category(self.feature, c) for c in self.left_categories]
        else:
            names = [str(c) for c in self.left_categories]
        return (f"{label} in {{{', '.join(names)}}} ? "
                f"{_side_scores(self.cell_scores, self.missing_left, features)}")


_PHI = np.array([-1.0, 1.0])  # phi(x) of a factorised multi-class stump: left -1, right +1


def majority_scores(wneg: np.ndarray, wpos: np.ndarray) -> np.ndarray:
    """Each cell's weighted majority label, -1 on a tie; ``_PHI`` for per-class sums (C > 1).

    Class weights within 1e-12 (relative) of each other are a tie: the order in which the
    examples' weights were summed (threads, shards) must not decide a cell's label.
    """
    if wpos.ndim != 1:
        return _PHI
    if wpos.shape == (2,):  # a stump's two cells, in Python floats: the same comparisons, faster
        (p0, p1), (n0, n1) = wpos.tolist(), wneg.tolist()
        return np.array([1.0 if p0 - n0 > TIE_TOLERANCE * (p0 + n0) else -1.0,
                         1.0 if p1 - n1 > TIE_TOLERANCE * (p1 + n1) else -1.0])
    return np.where(wpos - wneg > TIE_TOLERANCE * (wpos + wneg), 1.0, -1.0)


def search_binned(state, hist, loss, min_category_count: int, *,
                  category_keys=class_ratio_keys, weight_columns: int | None = None,
                  priority: np.ndarray | None = None):
    """The best split of the fit's binned features: :func:`boostkit.splits.best_split` on
    ordered data (bit for bit the threshold search; ``priority`` ranks the features of equal
    cuts), else :func:`boostkit.splits.best_binned_split` (missing values, categories sorted by
    ``category_keys``). ``weight_columns``: see :func:`boostkit.splits.best_binned_split`."""
    binned = state.data.binned
    if binned.ordered:
        return best_split(hist, binned.split_mask, loss, weight_columns=weight_columns,
                          priority=priority)
    return best_binned_split(hist, binned.bin_counts, loss, binned,
                             min_category_count=min_category_count,
                             category_keys=category_keys, weight_columns=weight_columns)


def split_cells(binned, split) -> np.ndarray:
    """The cell (uint8: 0 left, 1 right) of every training example under ``split``."""
    codes = binned.codes[split.feature]
    if binned.ordered:  # the threshold path, exactly as it always was
        return np.greater(codes, split.bin).view(np.uint8)
    return np.logical_not(split.left_bins(binned.max_bins, binned.missing_bin))[codes].view(
        np.uint8)


def two_cell_hypothesis(binned, split, cell_scores, threshold_hypothesis=None):
    """The hypothesis of a split: a ``threshold_hypothesis`` (default :class:`Stump`; any class
    taking ``(feature, threshold, cell_scores, missing_left)``) for a cut at a threshold, a
    :class:`CategoryStump` for a split of a categorical column."""
    if split.categories is not None:
        return CategoryStump(split.feature, split.categories, cell_scores, split.missing_left)
    return (threshold_hypothesis or Stump)(split.feature, split.threshold(binned.thresholds),
                                           cell_scores, split.missing_left)


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
    min_category_count:
        Fewest training examples a category of a categorical column needs to be sorted into
        either group of a split; rarer ones go right
        (:data:`boostkit.splits.MIN_CATEGORY_COUNT`).
    tie_order:
        ``None`` (default): cuts of equal loss (within 1e-12, relative) go to the lowest
        feature, then the lowest threshold. Or a callable ``tie_order(state)`` called once per
        round, returning ``priority(counts, depth)``, as the ``tree`` learner's ``tie_order``:
        the stump calls it once, with the ``(d, B)`` examples (of positive initial weight) per
        bin and depth 0, and among equal cuts the feature of the lowest priority wins, then the
        lowest threshold (how the drop-in ``AdaBoostClassifier`` replays scikit-learn's random
        feature order). Ordered data only (no missing values, no categorical columns).

    Each cell is labelled by its weighted majority (ties: -1), as a depth-1 classification tree
    does, so ``cell_scores`` may be equal on both sides.

    Missing values (NaN) and categorical columns: the search
    (:func:`boostkit.splits.best_binned_split`) learns the side of missing values per stump
    (the heavier side when the feature had none in training), and splits a categorical column
    into two groups of categories (a ``category-stump``).

    With C > 1 margin columns the histogram holds per-class sums over the (example, class)
    pairs, the loss scores the ``(..., 2, C)`` side sums, and the stump is the phi(x) of
    Kégl's factorised hypotheses h(x, l) = alpha v_l phi(x) (2013): ``cell_scores`` = (-1, +1),
    the calibration giving each side its per-class values.

    Every data plane (``"distributed"``): the search reads ``state.class_histogram()``, summed
    over the shards in a distributed fit, and the stump's sides go to the rows as a bin-to-cell
    table (:class:`boostkit.BinCells`).
    """

    name = "stump"
    provides = frozenset({"real-scores", "sign-scores", "cells", "two-cells", "multiclass",
                          MISSING_VALUES, CATEGORICAL_FEATURES, DISTRIBUTED})
    criterion: str | None = attrs.field(default=None, validator=check_criterion)
    min_category_count: int = attrs.field(default=MIN_CATEGORY_COUNT,
                                          validator=check_min_category_count)
    tie_order: Callable | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.is_callable()))

    def choose(self, state, hist):
        """``(stump, wneg, wpos, split)``: the best stump under the histogram ``hist`` of the
        fit's binned features (``split`` is ``None`` for the constant stump, proposed when no
        feature can be split)."""
        binned = state.data.binned
        split = search_binned(state, hist, partition_loss(state, self.criterion),
                              self.min_category_count, priority=self._priority(state))
        if split is None:  # every feature is constant: propose the constant hypothesis
            totals = hist[0].sum(axis=0)  # (2,) or, per class, (C, 2)
            wneg = np.stack([totals[..., 0], np.zeros_like(totals[..., 0])])
            wpos = np.stack([totals[..., 1], np.zeros_like(totals[..., 1])])
            return Stump(0, np.inf, majority_scores(wneg, wpos)), wneg, wpos, None
        wneg, wpos = split.wneg, split.wpos
        return two_cell_hypothesis(binned, split, majority_scores(wneg, wpos)), wneg, wpos, split

    def _priority(self, state) -> np.ndarray | None:
        """The ``(d,)`` rank of the features among equal cuts, from ``tie_order``."""
        if self.tie_order is None:
            return None
        binned = state.data.binned
        if not binned.ordered:
            raise boostkit.DataError(
                "the stump learner's tie_order breaks ties between the cuts of numeric features "
                "only, and the data have missing values or categorical columns"
            )
        return self.tie_order(state)(binned.bin_counts, 0)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        # Chosen from the class histogram, which the fit's data plane sums over every row
        # (over the shards, in a distributed fit, where there are no codes here). The cells
        # (bin_cells over the codes) and scores (cell_scores[cells]) are computed only when
        # asked for.
        binned = state.data.binned
        stump, wneg, wpos, split = self.choose(state, state.class_histogram())
        # The constant stump sends every bin, the missing-value bin included, to cell 0.
        bin_cells = (boostkit.BinCells(0, np.zeros(binned.max_bins + 1, dtype=np.uint8))
                     if split is None else split.bin_cells(binned.max_bins, binned.missing_bin))
        return boostkit.Candidate(stump, bin_cells=bin_cells, codes=binned.codes,
                                  cell_wneg=wneg, cell_wpos=wpos)

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        # The compiled search covers threshold cuts of ordered data (no missing values, no
        # categorical columns) of one margin column, ties to the lowest index.
        binned = state.data.binned
        if not binned.ordered or self.tie_order is not None or state.data.n_columns != 1:
            return None
        return CompiledProposal(compiled_search, CutStump(binned.thresholds).hypothesis,
                                criterion=self.criterion)

    def lowest_two_losses(self, state) -> tuple[float, float]:
        """The lowest and the second-lowest partition loss over the stumps this learner's search
        scores under ``state``'s current weights (:func:`boostkit.splits.lowest_two_losses`):
        within :data:`boostkit.splits.TIE_TOLERANCE` of each other, its choice went by index."""
        return lowest_two_losses(state.class_histogram(), partition_loss(state, self.criterion),
                                 state.data.binned, min_category_count=self.min_category_count)


# -- The compiled form (boostkit.compiled): the stump's search per criterion ----------------------


@numba.njit(cache=True, nogil=True, inline="always")
def _majority(sides, cell_scores):
    # majority_scores of the two sides (row 0 negatives, row 1 positives), ties -1.
    for j in range(2):
        n, p = sides[0, j], sides[1, j]
        cell_scores[j] = 1.0 if p - n > TIE_TOLERANCE * (p + n) else -1.0


@numba.njit(cache=True, nogil=True)
def _constant_sides(hist, sides):
    # The constant stump's sides: every row left (the per-class totals of feature 0's bins).
    neg = pos = 0.0
    for b in range(hist.shape[1]):
        neg += hist[0, b, 0]
        pos += hist[0, b, 1]
    sides[0, 0], sides[0, 1], sides[1, 0], sides[1, 1] = neg, 0.0, pos, 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def _scored_cut(hist, k, sides, cell_scores):
    # The cell scores of the chosen cut, its sides written (k < 0: the constant stump's).
    if k < 0:
        _constant_sides(hist, sides)
    _majority(sides, cell_scores)
    return k


def error_search(hist, valid, scores, sides, cell_scores, params):
    """The cut of lowest weighted error (discrete AdaBoost's eps_t): signature
    :data:`boostkit.compiled.SEARCH`:
    :func:`boostkit_adaboost.search_kernels.lowest_weighted_error_cut`, the cut and sides of
    :func:`boostkit.kernels.splits.lowest_error_cut` bit for bit, only the features that can hold
    it scored exactly. ``scores`` is scratch."""
    return _scored_cut(hist, lowest_weighted_error_cut(hist, valid, scores, sides), sides,
                       cell_scores)


def z_search(hist, valid, scores, sides, cell_scores, params):
    """The cut of lowest Z = 2 sum_j sqrt(W+_j W-_j) (Wilbur et al. 2005, eq. 12):
    :func:`boostkit_adaboost.search_kernels.lowest_z_cut`, the cuts that cannot win set aside
    without their square roots. ``scores`` is left unwritten."""
    return _scored_cut(hist, lowest_z_cut(hist, valid, sides), sides, cell_scores)


def squared_error_search(hist, valid, scores, sides, cell_scores, params):
    """The cut of lowest weighted squared error of a per-cell mean of y (FHT Algorithm 4):
    :func:`boostkit_adaboost.search_kernels.lowest_squared_error_cut`, the cuts that cannot win
    set aside without their divisions. ``scores`` is left unwritten."""
    return _scored_cut(hist, lowest_squared_error_cut(hist, valid, sides), sides, cell_scores)


#: The stump's compiled searches, by partition criterion.
COMPILED_SEARCHES = {"error": error_search, "z": z_search, "squared-error": squared_error_search}


def compiled_search(criterion: str):
    """The stump's compiled search for ``criterion`` (:data:`COMPILED_SEARCHES`), compiled on
    first use, or ``None``."""
    function = COMPILED_SEARCHES.get(criterion)
    return None if function is None else compile_form(function, SEARCH)


class CutStump:
    """Builds a batch's stumps from their cuts (:attr:`CompiledProposal.hypothesis`): what
    :meth:`StumpLearner.choose` makes of the same split. A stump chosen again is the same
    object (AdaBoost returns to its stumps often): the engine then describes it once."""

    def __init__(self, thresholds):
        self.thresholds = thresholds
        self.made = {}
        self.scores = {}  # one array per pair of cell scores, shared by the stumps

    def hypothesis(self, feature: int, bin: int, wneg, wpos, cell_scores) -> Stump:
        (n0, n1), (p0, p1), (lo, hi) = wneg, wpos, cell_scores
        left, right = n0 + p0, n1 + p1  # as Split.at_cut: the heavier side takes missing values
        missing_left = left >= right - TIE_TOLERANCE * (left + right)
        key = (feature, bin, lo, hi, missing_left)
        stump = self.made.get(key)
        if stump is None:
            pair = (lo, hi)
            scores = self.scores.get(pair)
            if scores is None:
                scores = self.scores[pair] = np.array(pair)  # from a tuple: faster than a list
            stump = self.made[key] = self._stump(feature, bin, scores, missing_left)
        return stump

    def _stump(self, feature: int, bin: int, scores: np.ndarray, missing_left: bool) -> Stump:
        if bin < 0:  # no valid cut: the constant stump
            return Stump.unchecked(0, math.inf, scores, True)
        edges = self.thresholds[feature]
        return Stump.unchecked(feature, float(edges[bin]) if bin < edges.shape[0] else math.inf,
                               scores, missing_left)

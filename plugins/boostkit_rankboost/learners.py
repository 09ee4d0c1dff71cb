"""Weak rankers: threshold stumps chosen by |r| from the class histogram, and scaled features.

Yoder 2011: "Selection of weak classifier also needs to be redone. Turns out we
need to maximize r". Both learners orient their ranker so that r >= 0 and tell the calibration
the range of their scores (``Candidate.info["score_range"]``).

``rank-stump`` reads missing values and categorical columns
(:func:`boostkit.splits.best_binned_split`): a threshold ranker learns where missing values go,
and a categorical column is split into two groups of categories (a ``category-stump``).
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import CATEGORICAL_FEATURES, DISTRIBUTED, MISSING_VALUES
from boostkit.criteria import check_criterion, partition_loss
from boostkit.splits import MIN_CATEGORY_COUNT, check_min_category_count
from boostkit_adaboost import search_binned, two_cell_hypothesis

_STUMP_OUTPUTS = {"sign": (-1.0, 1.0), "binary": (0.0, 1.0)}
_FEATURE_OUTPUTS = {"unit": (0.0, 1.0), "symmetric": (-1.0, 1.0)}


def _choice(options):
    def check(instance, attribute, value):
        if value not in options:
            raise ValueError(f"{attribute.name} must be one of {sorted(options)}, got {value!r}")

    return check


def _cell_scores(value) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.float64)
    if arr.shape != (2,):
        raise ValueError(f"cell_scores must have shape (2,), got {arr.shape}")
    return arr


@attrs.frozen
class ThresholdRanker(boostkit.WeakHypothesis):
    """h(x) = cell_scores[0] if x[feature] <= threshold else cell_scores[1].

    Freund et al.'s weak ranker [x_f > theta] (or its reverse), with the low and high values of
    the learner's ``output``: {0, 1} or {-1, +1}. Two cells, so per-cell calibrations apply too.
    A missing value (NaN) goes to cell 0 when ``missing_left`` (the default, where the comparison
    always put it, so rankers saved before it load unchanged), else to cell 1.
    """

    name = "threshold-ranker"
    n_cells = 2

    feature: int = boostkit.feature_field(converter=int)
    threshold: float = attrs.field(converter=float)
    cell_scores: np.ndarray = attrs.field(converter=_cell_scores, eq=False)
    missing_left: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))

    def cells(self, X: np.ndarray) -> np.ndarray:
        x = X[:, self.feature]
        right = x > self.threshold  # NaN > t is False: left
        if not self.missing_left:
            right |= np.isnan(x)
        return right.astype(np.intp)

    def scores(self, X: np.ndarray) -> np.ndarray:
        return self.cell_scores[self.cells(X)]

    def cell_score_table(self) -> np.ndarray:
        return self.cell_scores

    def describe(self, features=None) -> str:
        lo, hi = self.cell_scores
        label = boostkit.feature_label(features, self.feature)
        if np.isinf(self.threshold):
            return f"{label} is missing ? {hi:+g} : {lo:+g}"
        text = f"{label} <= {self.threshold:.6g} ? {lo:+g} : {hi:+g}"
        if features is not None:  # where a missing value goes, when the columns are named
            text += f" (missing: {lo if self.missing_left else hi:+g})"
        return text


@attrs.define
class RankStumpLearner(boostkit.Proposal):
    """Propose the threshold ranker with the largest |r| over all features and bin edges.

    The class histogram of D_t (``state.class_histogram()``) gives
    the weights of the x0 (negative) and x1 (positive) examples on both sides of every cut; the
    calibration's partition loss (``rankboost-alpha``: -r of the best labelling,
    :func:`boostkit_rankboost.calibration.rank_advantage`) scores them all at once. The side where
    the class-normalised weight of the x1 exceeds that of the x0 gets the high value, so r >= 0.

    Parameters
    ----------
    criterion:
        ``None`` (default) asks the calibration (``boostkit_partition_loss``), or one of
        :data:`boostkit.criteria.CRITERIA`.
    output:
        ``"sign"`` (default): h in {-1, +1}, as the slides' weak classifiers; ``"binary"``:
        h in {0, 1}, Freund et al.'s [x_f > theta]. Either way the calibration works on
        h~ in {0, 1}, so both give the same ranking.
    min_category_count:
        Fewest training examples a category of a categorical column needs to be sorted into
        either group of a split; rarer ones go right
        (:data:`boostkit.splits.MIN_CATEGORY_COUNT`). Sorting the categories by their class
        ratio finds the best |r| too: r is largest for the group of categories whose ratio
        exceeds the overall one.

    Proposes nothing (ending the run as ``"pool-exhausted"``) when no feature can be cut.

    Every data plane (``"distributed"``): the search reads ``state.class_histogram()`` (summed
    over the shards in a distributed fit) and the ranker's sides go to the rows as a bin-to-cell
    table (:class:`boostkit.BinCells`); the class-normalised weights make the choice the same
    under any scaling of either class's weights.
    """

    name = "rank-stump"
    criterion: str | None = attrs.field(default=None, validator=check_criterion)
    output: str = attrs.field(default="sign", validator=_choice(_STUMP_OUTPUTS))
    min_category_count: int = attrs.field(default=MIN_CATEGORY_COUNT,
                                          validator=check_min_category_count)

    @property
    def provides(self) -> frozenset[str]:
        given = {"real-scores", "cells", "two-cells", "score-range", MISSING_VALUES,
                 CATEGORICAL_FEATURES, DISTRIBUTED}
        return frozenset(given | {"sign-scores"} if self.output == "sign" else given)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        binned = state.data.binned
        split = search_binned(state, state.class_histogram(),
                              partition_loss(state, self.criterion), self.min_category_count)
        if split is None:
            return None
        low, high = _STUMP_OUTPUTS[self.output]
        # Class-normalised weights: D_1 need not be balanced, and r compares the classes' shares.
        neg_share = split.wneg / max(split.wneg.sum(), np.finfo(float).tiny)
        pos_share = split.wpos / max(split.wpos.sum(), np.finfo(float).tiny)
        cell_scores = np.where(pos_share > neg_share, high, low)
        ranker = two_cell_hypothesis(binned, split, cell_scores, ThresholdRanker)
        return boostkit.Candidate(
            ranker,
            bin_cells=split.bin_cells(binned.max_bins, binned.missing_bin),
            codes=binned.codes,
            cell_wneg=split.wneg,
            cell_wpos=split.wpos,
            info={"score_range": (low, high)},
        )


@attrs.frozen
class ScaledFeature(boostkit.WeakHypothesis):
    """A real-valued weak ranker: one feature scaled to [0, 1] by its training range.

    u(x) = clip((x[feature] - low) / (high - low), 0, 1), reversed (1 - u) if ``reverse``, and
    mapped to [-1, 1] (2u - 1) if ``symmetric``.
    """

    name = "scaled-feature"

    feature: int = boostkit.feature_field(converter=int)
    low: float = attrs.field(converter=float)
    high: float = attrs.field(converter=float)
    reverse: bool = attrs.field(converter=bool)
    symmetric: bool = attrs.field(converter=bool)

    def scores(self, X: np.ndarray) -> np.ndarray:
        u = np.clip((X[:, self.feature] - self.low) / (self.high - self.low), 0.0, 1.0)
        if self.reverse:
            u = 1.0 - u
        return 2.0 * u - 1.0 if self.symmetric else u

    def describe(self) -> str:
        direction = "-" if self.reverse else "+"
        return f"{direction}x[{self.feature}] scaled from [{self.low:.6g}, {self.high:.6g}]"


@attrs.define
class FeatureRanker(boostkit.Proposal):
    """Propose the scaled feature with the largest |r| (real-valued weak rankers in [0, 1]).

    With v the class-normalised weights, r_f = sum_x g(x) u_f(x) for
    g(x) = v(x1) on the x1 and -v(x0) on the x0; since sum_x g(x) = 0 the offset of the scaling
    drops out and r_f = (X^T g)_f / (high_f - low_f): one O(n d) product per round. The feature
    is reversed when r_f < 0. ``output``: ``"unit"`` (default, [0, 1]) or ``"symmetric"``
    ([-1, 1]). Constant features are never proposed; with no other feature the run ends
    (``"pool-exhausted"``).
    """

    name = "feature-ranker"
    provides = frozenset({"real-scores", "score-range"})
    output: str = attrs.field(default="unit", validator=_choice(_FEATURE_OUTPUTS))
    _low: np.ndarray | None = attrs.field(default=None, init=False)
    _high: np.ndarray | None = attrs.field(default=None, init=False)

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        # The range of the examples of positive weight: one of weight 0 is no example.
        X = state.data.X[state.data.sample_weight > 0]
        self._low = X.min(axis=0)
        self._high = X.max(axis=0)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        data = state.data
        pos = data.is_pos.astype(bool)
        weights = state.weights
        g = np.where(pos, weights / weights[pos].sum(), -weights / weights[~pos].sum())
        width = self._high - self._low
        varying = width > 0
        if not varying.any():
            return None
        r = np.zeros(data.n_features)
        r[varying] = (data.X[:, varying].T @ g) / width[varying]
        feature = int(np.argmax(np.where(varying, np.abs(r), -1.0)))
        hypothesis = ScaledFeature(feature, self._low[feature], self._high[feature],
                                   reverse=r[feature] < 0, symmetric=self.output == "symmetric")
        return boostkit.Candidate(
            hypothesis, scores=hypothesis.scores(data.X),
            info={"score_range": _FEATURE_OUTPUTS[self.output]},
        )

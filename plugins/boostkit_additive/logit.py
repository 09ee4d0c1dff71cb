"""LogitBoost (FHT Algorithm 3): Newton steps on the binomial log-likelihood.

With p(x) = 1 / (1 + e^{-2F(x)}) and y* = (y + 1) / 2 in {0, 1}, every round

1. computes the working response z_i = (y*_i - p(x_i)) / (p(x_i)(1 - p(x_i))) and the weights
   w_i = p(x_i)(1 - p(x_i)) (:mod:`boostkit_additive.kernels`, z clipped to |z| <= z_max);
2. fits f_m by weighted least squares of z_i on x_i with weights w_i;
3. updates F <- F + f_m / 2 (the 1/2 because p is the logistic of 2F).

In boostkit's contract the weights are a reweighting, ``logit-weights`` (D_{t+1} proportional to
D_1 p (1 - p), from the margins F_t), and the half Newton step per cell is a calibration,
``logit-step`` (the weighted mean of z on each cell, halved). The split search cannot be the
calibration's ``boostkit_partition_loss``: that hook sees only the class weights W+_j, W-_j of
every candidate cell, and the least-squares fit of z needs sum_j w z as well, which no single
distribution over the examples carries in its two class sums (z_i depends on each example's own
p_i). So the weak learner is ``logit-stump``, a regression stump that histograms both w and w|z|
(z has the sign of y) and picks the cut with the smallest weighted squared error of z; it
declares ``"logit-response"``, which ``logit-step`` needs.

With C > 1 margin columns every (example, class) pair is one more binomial example: one logistic
model per class fitted jointly, each round one stump with a Newton step per cell and class. FHT's
multinomial Algorithm 6 (symmetric softmax probabilities, centred steps) is
:mod:`boostkit_additive.multinomial` (``multinomial-logitboost``).
"""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import CATEGORICAL_FEATURES, MISSING_VALUES
from boostkit.splits import MIN_CATEGORY_COUNT, check_min_category_count, histogram
from boostkit_adaboost import Stump, search_binned, split_cells, two_cell_hypothesis

from .kernels import logistic_weights, working_response

#: A plugin capability: the weak learner chose its cells by the weighted least-squares fit of
#: LogitBoost's working response, the criterion ``logit-step``'s values are optimal for.
LOGIT_RESPONSE = boostkit.Capability(
    "logit-response",
    "weak learners whose cells minimise the weighted squared error of LogitBoost's working "
    "response z (FHT Algorithm 3, step 2(b))",
    "proposal",
)

_PHI = np.array([-1.0, 1.0])  # phi(x) of a stump shared by all classes: left -1, right +1


def _z_max(instance, attribute, value):
    if not (math.isfinite(value) and value > 1.0):
        raise ValueError(
            f"{attribute.name} must be a finite number > 1 (|z| >= 1 always; FHT use 2 to 4), "
            f"got {value!r}"
        )


def response(state, z_max: float) -> np.ndarray:
    """The clipped working response z of every example (or pair), shaped like the margins."""
    z = np.empty(state.margin.size)
    working_response(state.margin.ravel(), state.data.y.ravel(), z_max, z)
    return z.reshape(state.margin.shape)


def _squared_error_gain(n_columns: int):
    """The split loss over stacked sums: columns [0, C) are w per class, [C, 2C) are w |z|.

    The weighted squared error of the per-cell fit is sum w z^2 - sum_{j,l} S_jl^2 / W_jl, with
    W_jl = sum w and S_jl = sum w z = (w|z| of the positives) - (w|z| of the negatives); the first
    term is the same for every cut, so the loss is -sum_{j,l} S_jl^2 / W_jl.
    """

    def loss(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
        total = wpos[..., :n_columns] + wneg[..., :n_columns]
        net = wpos[..., n_columns:] - wneg[..., n_columns:]
        explained = np.divide(net * net, total, out=np.zeros_like(total), where=total > 0)
        return -explained.sum(axis=(-2, -1))

    return loss


def _mean_response_keys(n_columns: int):
    """Sort keys of the categories for the least-squares fit: the weighted mean of z per
    category and class, S_kl / W_kl (Fisher 1958: sorted by their means, the best two groups of
    categories under squared error are a prefix). Stacked columns as in
    :func:`_squared_error_gain`; one ordering per class, 0 for a category without weight."""

    def keys(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
        total = wpos[:, :n_columns] + wneg[:, :n_columns]
        net = wpos[:, n_columns:] - wneg[:, n_columns:]
        return np.divide(net, total, out=np.zeros_like(total), where=total > 0).T

    return keys


@attrs.define
class LogitStump(boostkit.Proposal):
    """Regression stump fitted by weighted least squares to LogitBoost's working response.

    FHT Algorithm 3, step 2(b), with stumps: among every feature and bin edge, the cut whose
    two-cell fit of z (weights ``state.weights``, the w = p(1 - p) of ``logit-weights``) leaves the
    smallest weighted squared error. The sums come from two passes of the engine's class
    histogram, of w and of w|z| (``boostkit.splits.histogram``), searched by
    ``boostkit.splits.best_split`` as 2C columns. The hypothesis is a ``decision-stump`` whose cell
    scores are the fitted f_m (the weighted mean of z per side); with C > 1 margin columns it is
    phi(x) in {-1, +1}, the calibration giving each side its per-class values. The calibration's
    partition loss is not asked (see the module docstring). ``z_max`` must equal ``logit-step``'s.

    Missing values and categorical columns (:func:`boostkit.splits.best_binned_split`): the
    stump learns the side of missing values (the side of more weight w when the feature had none
    in training), and a categorical column's categories are sorted by their mean z, which puts
    the least-squares grouping among the prefixes (a ``category-stump``); categories with fewer
    than ``min_category_count`` training examples go right.
    """

    name = "logit-stump"
    provides = frozenset({"real-scores", "cells", "two-cells", "multiclass", "logit-response",
                          MISSING_VALUES, CATEGORICAL_FEATURES})
    shared_params = ("z_max",)
    z_max: float = attrs.field(default=4.0, converter=float, validator=_z_max)
    min_category_count: int = attrs.field(default=MIN_CATEGORY_COUNT,
                                          validator=check_min_category_count)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        data, binned = state.data, state.data.binned
        n_columns = data.n_columns
        z = response(state, self.z_max)
        stacked = [histogram(binned.codes, values, data.is_pos, binned.max_bins, state.n_jobs)
                   for values in (state.weights, state.weights * np.abs(z))]
        if n_columns == 1:  # (d, B, 2) each: one column of w, one of w|z|
            stacked = [h[:, :, None, :] for h in stacked]
        hist = np.concatenate(stacked, axis=2)  # (d, B, 2C, 2)
        split = search_binned(state, hist, _squared_error_gain(n_columns), self.min_category_count,
                              category_keys=_mean_response_keys(n_columns),
                              weight_columns=n_columns)
        if split is None:  # every feature is constant: the constant hypothesis
            sums = hist[0].sum(axis=0)  # (2C, 2)
            wneg = np.stack([sums[:n_columns, 0], np.zeros(n_columns)])
            wpos = np.stack([sums[:n_columns, 1], np.zeros(n_columns)])
            cells = np.zeros(data.n_samples, dtype=np.uint8)
        else:
            wneg, wpos = split.wneg[:, :n_columns], split.wpos[:, :n_columns]
            cells = split_cells(binned, split)
        if n_columns == 1:
            wneg, wpos = wneg[:, 0], wpos[:, 0]
            cell_scores = _cell_means(cells, state.weights, z, 2)
        else:
            cell_scores = _PHI
        stump = (Stump(0, np.inf, cell_scores) if split is None
                 else two_cell_hypothesis(binned, split, cell_scores))
        return boostkit.Candidate(stump, cells=cells, scores=cell_scores[cells], cell_wneg=wneg,
                                  cell_wpos=wpos)


def _cell_means(cells: np.ndarray, weights: np.ndarray, z: np.ndarray, n_cells: int) -> np.ndarray:
    """sum_{i in j} w_i z_i / sum_{i in j} w_i per cell j (and class): ``(K,)`` or ``(K, C)``.

    0 where a cell carries no weight.
    """
    w2, z2 = weights.reshape(len(cells), -1), z.reshape(len(cells), -1)
    den = np.stack([np.bincount(cells, w2[:, l], n_cells) for l in range(w2.shape[1])], axis=1)
    num = np.stack([np.bincount(cells, w2[:, l] * z2[:, l], n_cells) for l in range(w2.shape[1])],
                   axis=1)
    means = np.divide(num, den, out=np.zeros_like(den), where=den > 0)
    return means[:, 0] if weights.ndim == 1 else means


@attrs.define
class LogitStep(boostkit.Calibration):
    """LogitBoost's half Newton step per cell: c_j = 1/2 sum_{i in j} w_i z_i / sum_{i in j} w_i.

    FHT Algorithm 3, steps 2(b)-(c) on a partition: the weighted least-squares fit of the working
    response z (clipped to |z| <= ``z_max``) on each cell, with w the current weights, halved
    because p(x) = 1 / (1 + e^{-2F}). z is computed from ``state.margin`` F_{t-1} and the labels
    (:func:`boostkit_additive.kernels.working_response`), so |c_j| <= z_max / 2 whatever the
    margins. With C > 1 margin columns, per cell and class over the pairs (one binomial model per
    class). Needs cells chosen by the least-squares fit of z (``"logit-response"``, from
    ``logit-stump``); ``z_max`` must equal the proposal's.
    """

    name = "logit-step"
    needs = frozenset({"cells", "logit-response"})
    provides = frozenset({"running-margin", "multiclass"})
    shared_params = ("z_max",)
    z_max: float = attrs.field(default=4.0, converter=float, validator=_z_max)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        z = response(state, self.z_max)
        cells = np.asarray(candidate.cells, dtype=np.intp)
        values = 0.5 * _cell_means(cells, state.weights, z, candidate.hypothesis.n_cells)
        return boostkit.Calibrated(boostkit.CellContribution(values), values[cells],
                                   values.ravel())


@attrs.define
class LogitWeights(boostkit.Reweighting):
    """LogitBoost's weights D_{t+1}(i) proportional to D_1(i) p_i (1 - p_i), p = 1/(1 + e^{-2F_t}).

    FHT Algorithm 3, step 2(a), from the margins in log space
    (:func:`boostkit_additive.kernels.logistic_weights`), so they stay a distribution however
    large |F| grows. The potential is sum_i D_1(i) log2(1 + e^{-2 y_i F_t(x_i)}), the negative
    binomial log-likelihood (FHT eq. 19-20) in bits: each term is >= 1 where y_i F_t(x_i) <= 0,
    so it bounds the D_1-weighted training error, and it is 1 at F = 0, as prod Z_t starts. With
    C > 1 margin columns the same over the (example, class) pairs, bounding the Hamming loss.
    """

    name = "logit-weights"
    provides = frozenset({"potential", "multiclass"})

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        out = np.empty(state.margin.size)
        log_potential = logistic_weights(state.margin.ravel(),
                                         state.data.y.ravel(),
                                         state.initial_weights.ravel(), out)
        return boostkit.Weights(out.reshape(state.margin.shape), float(log_potential))

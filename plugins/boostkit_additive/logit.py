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

import functools
import math

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import CATEGORICAL_FEATURES, DISTRIBUTED, MISSING_VALUES
from boostkit.compiled import (CALIBRATION, HISTOGRAM, SEARCH, CompiledCalibration,
                               CompiledProposal, CompiledReweighting, compile_form)
from boostkit.kernels.blocks import histogram_threads
from boostkit.kernels.boosting import take_cells
from boostkit.kernels.two_channel import two_channel_histogram
from boostkit.losses import compiled_weights, get_loss, margin_loss_distribution, shard_weights
from boostkit.splits import (MIN_CATEGORY_COUNT, TIE_TOLERANCE, Split, check_min_category_count,
                             histogram)
from boostkit_adaboost import Stump, search_binned, two_cell_hypothesis
from boostkit_adaboost.coefficients import cell_contribution
from boostkit_adaboost.stumps import CutStump

from .kernels import (class_major, explained_squares, least_squares_cut, least_squares_search,
                      response_histogram, response_weights, working_response)

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
    term is the same for every cut, so the loss is -sum_{j,l} S_jl^2 / W_jl
    (:func:`boostkit_additive.kernels.explained_squares`, one compiled pass over the sums).
    """

    def loss(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
        candidates = wpos.shape[:-2]
        explained = np.empty(int(np.prod(candidates)))
        explained_squares(np.ascontiguousarray(wpos).reshape(-1, *wpos.shape[-2:]),
                          np.ascontiguousarray(wneg).reshape(-1, *wneg.shape[-2:]),
                          n_columns, explained)
        return -explained.reshape(candidates)

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


@attrs.frozen
class ResponseHistograms:
    """The reduction of ``logit-stump``: the class histograms of w and of w |z| over some rows.

    ``(d, B, 2C, 2)`` for C margin columns: in every bin of every feature, columns [0, C) hold
    the weight w (D_t) of the negative and of the positive examples (pairs) of each class,
    columns [C, 2C) their sums of w |z|, z the clipped working response from the rows' margins
    F_{t-1} (:func:`boostkit_additive.kernels.response_weights`, one pass). The positive side
    less the negative one of the second is sum w z, FHT Algorithm 3's least-squares numerator.
    Summed by :func:`stacked_histograms`. Picklable: it runs where the rows are
    (``state.reduce``).
    """

    z_max: float
    n_bins: int

    def __call__(self, rows) -> np.ndarray:
        values = np.empty(rows.margin.size)
        response_weights(rows.margin.ravel(), rows.y.ravel(), rows.weights.ravel(), self.z_max,
                         values)
        return stacked_histograms(rows.codes, rows.weights, values.reshape(rows.margin.shape),
                                  rows.is_pos, self.n_bins, rows.n_jobs)


def class_histograms(codes: np.ndarray, weights: np.ndarray, values: np.ndarray,
                     is_pos: np.ndarray, n_bins: int) -> np.ndarray:
    """``(C, d, B, 2, 2)`` on one thread: class by class, the class histograms of ``weights``
    and of ``values`` over its pairs, both ``(n,)`` (one class) or ``(n, C)`` over (example,
    class) pairs.

    ``[l, f, b, s, channel]``: in bin b of feature f, the sum of ``weights`` (channel 0) and of
    ``values`` (channel 1) over class l's negative (s = 0) and positive (s = 1) pairs, the
    layout :func:`boostkit_additive.kernels.least_squares_cut` reads, one class at a time. One
    :func:`boostkit.kernels.two_channel.two_channel_histogram` per class into its own slice: the
    sums of the engine's class-histogram kernel, bit for bit, as the pair histogram sums each
    class.
    """
    d, n = codes.shape
    pairs = (weights, values, is_pos)
    if weights.ndim == 1:  # one class: its pairs are the examples, already adjacent
        by_class = [a[None, :] for a in pairs]
    else:
        # Class-major copies: class l's pairs, a binary problem of their own, adjacent in memory.
        n_columns = weights.shape[1]
        by_class = [np.empty((n_columns, n)), np.empty((n_columns, n)),
                    np.empty((n_columns, n), dtype=np.uint8)]
        for a, out in zip(pairs, by_class):
            class_major(np.ascontiguousarray(a), out)
    weights_t, values_t, is_pos_t = by_class
    hists = np.empty((len(weights_t), d, n_bins, 2, 2))
    for l in range(len(hists)):
        two_channel_histogram(codes, weights_t[l], values_t[l], is_pos_t[l], hists[l])
    return hists


def stacked_histograms(codes: np.ndarray, weights: np.ndarray, values: np.ndarray,
                       is_pos: np.ndarray, n_bins: int, n_jobs: int = 1) -> np.ndarray:
    """``(d, B, 2C, 2)``: the class histograms of ``weights`` (columns [0, C)) and of
    ``values`` (columns [C, 2C)), both ``(n,)`` or ``(n, C)`` over (example, class) pairs.

    On one thread, :func:`class_histograms` rearranged; on threads, the engine's histogram of
    each (:func:`boostkit.splits.histogram`).
    """
    if histogram_threads(codes, n_jobs) > 1:
        stacked = [histogram(codes, w, is_pos, n_bins, n_jobs) for w in (weights, values)]
        if weights.ndim == 1:  # (d, B, 2) each: one column of each
            stacked = [h[:, :, None, :] for h in stacked]
        return np.concatenate(stacked, axis=2)
    hists = class_histograms(codes, weights, values, is_pos, n_bins)
    n_columns, d = hists.shape[:2]
    # [l, f, b, s, channel] -> [f, b, channel, l, s]: every class's weights, then its values.
    # One copy per side and channel: numpy's copy of the whole transposed array loops over the
    # two sides innermost (1.5-1.7x as long at 1 000 x 10 with one to five classes, 0.8x with 20).
    stacked = np.empty((d, n_bins, 2, n_columns, 2))
    for side in range(2):
        for channel in range(2):
            stacked[:, :, channel, :, side] = hists[:, :, :, side, channel].transpose(1, 2, 0)
    return stacked.reshape(d, n_bins, 2 * n_columns, 2)


def response_histograms(state, z_max: float) -> np.ndarray:
    """``(d, B, 2C, 2)``: the class histograms of w and of w |z| (:class:`ResponseHistograms`)
    over all the fit's rows, where they live (``state.reduce``). Every cut's weighted
    least-squares fit of z is in these sums (:func:`_squared_error_gain`)."""
    return state.reduce(ResponseHistograms(z_max, state.data.binned.max_bins))


def least_squares_split(hist: np.ndarray, valid: np.ndarray) -> Split | None:
    """``boostkit.splits.best_split``'s split of a one-column response histogram
    (``(d, B, 2, 2)``, :func:`response_histograms`) under :func:`_squared_error_gain` on
    ordered data, or ``None``: the same losses, choice and sides' sums, from one compiled call
    (:func:`boostkit_additive.kernels.least_squares_cut`)."""
    d, n_bins = hist.shape[:2]
    if valid.size == 0:
        return None
    scores = np.empty((d, n_bins - 1))
    wneg, wpos = np.empty((2, 2)), np.empty((2, 2))
    # The kernel reads [feature, bin, class, channel] in C order.
    k = least_squares_cut(np.ascontiguousarray(hist.transpose(0, 1, 3, 2)), valid, TIE_TOLERANCE,
                          scores, wneg, wpos)
    if k < 0:
        return None
    feature, cut = divmod(k, n_bins - 1)
    return Split.at_cut(feature, cut, scores[feature, cut], wneg, wpos, weight_columns=1)


def cell_response_means(wneg: np.ndarray, wpos: np.ndarray, n_columns: int) -> np.ndarray:
    """sum_{i in j} w_i z_i / sum_{i in j} w_i per cell j (and class) from the cells' stacked
    sums (columns as in :func:`response_histograms`): ``(K,)`` with one margin column, else
    ``(K, C)``; 0 where a cell carries no weight."""
    total = wneg[:, :n_columns] + wpos[:, :n_columns]
    net = wpos[:, n_columns:] - wneg[:, n_columns:]
    means = np.divide(net, total, out=np.zeros_like(total), where=total > 0)
    return means[:, 0] if n_columns == 1 else means


@attrs.define
class LogitStump(boostkit.Proposal):
    """Regression stump fitted by weighted least squares to LogitBoost's working response.

    FHT Algorithm 3, step 2(b), with stumps: among every feature and bin edge, the cut whose
    two-cell fit of z (weights ``state.weights``, the w = p(1 - p) of ``logit-weights``) leaves the
    smallest weighted squared error. The sums are the class histograms of w and of w|z|
    (``state.reduce``, :class:`ResponseHistograms`), searched as 2C columns by
    ``boostkit.splits.best_split`` (by :func:`least_squares_split`, the same split in one
    compiled call, with one column on ordered data); the fitted values come from the chosen
    cut's sums, with no pass over the rows. The hypothesis is a ``decision-stump`` whose
    cell scores are the fitted f_m (the weighted mean of z per side); with C > 1 margin columns
    it is phi(x) in {-1, +1}, the calibration giving each side its per-class values. The
    candidate carries each cell's sum of w z (``info["response_sums"]``, ``(2, C)``) for
    ``logit-step``. The calibration's partition loss is not asked (see the module docstring).
    ``z_max`` must equal ``logit-step``'s.

    Missing values and categorical columns (:func:`boostkit.splits.best_binned_split`): the
    stump learns the side of missing values (the side of more weight w when the feature had none
    in training), and a categorical column's categories are sorted by their mean z, which puts
    the least-squares grouping among the prefixes (a ``category-stump``); categories with fewer
    than ``min_category_count`` training examples go right.

    Every data plane (``"distributed"``): both histograms are sums over the rows wherever they
    live, and the stump goes to the rows as a bin-to-cell table (:class:`boostkit.BinCells`).
    """

    name = "logit-stump"
    provides = frozenset({"real-scores", "cells", "two-cells", "multiclass", "logit-response",
                          MISSING_VALUES, CATEGORICAL_FEATURES, DISTRIBUTED})
    shared_params = ("z_max",)
    z_max: float = attrs.field(default=4.0, converter=float, validator=_z_max)
    min_category_count: int = attrs.field(default=MIN_CATEGORY_COUNT,
                                          validator=check_min_category_count)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        binned, n_columns = state.data.binned, state.data.n_columns
        hist = response_histograms(state, self.z_max)
        if binned.ordered and n_columns == 1:
            split = least_squares_split(hist, binned.split_mask)
        else:
            split = search_binned(state, hist, _squared_error_gain(n_columns),
                                  self.min_category_count,
                                  category_keys=_mean_response_keys(n_columns),
                                  weight_columns=n_columns)
        if split is None:  # every feature is constant: the constant hypothesis
            sums = hist[0].sum(axis=0)  # (2C, 2): every row in cell 0
            wneg = np.stack([sums[:, 0], np.zeros(2 * n_columns)])
            wpos = np.stack([sums[:, 1], np.zeros(2 * n_columns)])
            # The constant stump sends every bin, the missing-value bin included, to cell 0.
            bin_cells = boostkit.BinCells(0, np.zeros(binned.max_bins + 1, dtype=np.uint8))
        else:
            wneg, wpos = split.wneg, split.wpos
            bin_cells = split.bin_cells(binned.max_bins, binned.missing_bin)
        response_sums = wpos[:, n_columns:] - wneg[:, n_columns:]  # (2, C): sum w z per cell
        cell_scores = cell_response_means(wneg, wpos, n_columns) if n_columns == 1 else _PHI
        stump = (Stump(0, np.inf, cell_scores) if split is None
                 else two_cell_hypothesis(binned, split, cell_scores))
        wneg, wpos = wneg[:, :n_columns], wpos[:, :n_columns]
        if n_columns == 1:
            wneg, wpos = wneg[:, 0], wpos[:, 0]
        return boostkit.Candidate(stump, bin_cells=bin_cells, codes=binned.codes,
                                  cell_wneg=wneg, cell_wpos=wpos,
                                  info={"response_sums": response_sums})

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        # Threshold cuts of ordered data, one margin column: the search of
        # least_squares_split on the histograms of w and w |z|, summed each round.
        binned = state.data.binned
        if not binned.ordered or state.data.n_columns != 1:
            return None
        return CompiledProposal(_compiled_search, CutStump(binned.thresholds).hypothesis,
                                criterion=LOGIT_RESPONSE.name, params=[self.z_max, TIE_TOLERANCE],
                                histogram=compile_form(response_histogram, HISTOGRAM),
                                histogram_width=4)


def _compiled_search(criterion: str):
    """``logit-stump``'s compiled search: the least-squares fit of z, its only criterion."""
    return compile_form(least_squares_search, SEARCH) if criterion == LOGIT_RESPONSE.name else None


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
    because p(x) = 1 / (1 + e^{-2F}). With C > 1 margin columns, per cell and class over the
    pairs (one binomial model per class). Needs cells chosen by the least-squares fit of z
    (``"logit-response"``, from ``logit-stump``); ``z_max`` must equal the proposal's.

    The sums come from the candidate: its cells' weights (``state.cell_weights``) and the sums of
    w z that ``logit-stump`` attaches (``info["response_sums"]``), so the step needs no pass over
    the rows and runs on every data plane. For a candidate without them, z is computed from
    ``state.margin`` F_{t-1} and the labels (:func:`boostkit_additive.kernels.working_response`)
    and summed per cell. Either way |c_j| <= z_max / 2 whatever the margins.
    """

    name = "logit-step"
    needs = frozenset({"cells", "logit-response"})
    provides = frozenset({"running-margin", "multiclass", DISTRIBUTED})
    shared_params = ("z_max",)
    z_max: float = attrs.field(default=4.0, converter=float, validator=_z_max)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        sums = candidate.info.get("response_sums")
        if sums is None:
            z = response(state, self.z_max)
            cells = np.asarray(candidate.cells, dtype=np.intp)
            values = 0.5 * _cell_means(cells, state.weights, z, candidate.hypothesis.n_cells)
        else:
            wneg, wpos = state.cell_weights(candidate)
            total = (wneg + wpos).reshape(sums.shape)
            values = 0.5 * np.divide(sums, total, out=np.zeros_like(total), where=total > 0)
            if state.data.n_columns == 1:
                values = values[:, 0]
        train_values = None
        if candidate.has_rows:
            train_values = (take_cells(values, candidate.cells) if values.ndim == 1
                            else values[candidate.cells])
        return boostkit.Calibrated(boostkit.CellContribution(values), train_values,
                                   values.ravel())

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        # The cells' means of z are logit-stump's compiled cell scores.
        if state.data.n_columns != 1:
            return None
        return CompiledCalibration(LOGIT_RESPONSE.name, compile_form(logit_step_values,
                                                                     CALIBRATION),
                                   2, cell_contribution)


def logit_step_values(wneg, wpos, cell_scores, params, values, coefficients):
    """``logit-step``'s compiled form (signature :data:`boostkit.compiled.CALIBRATION`): half
    of each cell's weighted mean of z, which ``logit-stump``'s compiled search gives as the
    cell scores (sum w z / sum w, 0 without weight)."""
    for j in range(2):
        values[j] = 0.5 * cell_scores[j]
        coefficients[j] = values[j]


@attrs.define
class LogitWeights(boostkit.Reweighting):
    """LogitBoost's weights D_{t+1}(i) proportional to D_1(i) p_i (1 - p_i), p = 1/(1 + e^{-2F_t}).

    FHT Algorithm 3, step 2(a). The potential is sum_i D_1(i) log2(1 + e^{-2 y_i F_t(x_i)}), the
    negative binomial log-likelihood (FHT eq. 19-20) in bits: each term is >= 1 where
    y_i F_t(x_i) <= 0, so it bounds the D_1-weighted training error, and it is 1 at F = 0, as
    prod Z_t starts. Both are the engine's margin loss ``logitboost``
    (:func:`boostkit.losses.margin_loss_distribution`: one vectorised pass, in log space where
    the weights could underflow, so they stay a distribution however large |F| grows). With
    C > 1 margin columns the same over the (example, class) pairs, bounding the Hamming loss.
    The row form (``boostkit_row_weights``) gives the same weights unnormalised, for rows in
    several places.
    """

    name = "logit-weights"
    provides = frozenset({"potential", "multiclass", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        weights, log_potential = margin_loss_distribution(
            get_loss("logitboost"), state.margin.ravel(), state.data.y.ravel(),
            state.initial_weights.ravel(), state.n_jobs)
        return boostkit.Weights(weights.reshape(state.margin.shape), log_potential)

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        loss = get_loss("logitboost")
        return CompiledReweighting(from_margins=compiled_weights(loss),
                                   exact=functools.partial(margin_loss_distribution, loss))

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        return shard_weights(get_loss("logitboost"), margin, y, initial_weights, n_jobs)

"""Voting weights of one-pass boosting: AdaBoost's alpha (exact or by Newton), and unit votes."""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.smoothing import check_smoothing, n_examples, resolve_smoothing
from boostkit.criteria import weighted_error

from .kernels import all_plus_minus_one, exp_loss_alpha

def sign_alpha(eps: float, smoothing: float) -> float:
    """alpha = 1/2 ln((1 - eps + s) / (eps + s)) (Barutcuoglu et al. 2007, Fig. 1 and eq. 3,
    smoothed by s)."""
    return 0.5 * math.log((1.0 - eps + smoothing) / (eps + smoothing))


def cell_outputs(state, candidate, owner: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(scores, y, weights)`` of a candidate without rows, one entry per cell and class:
    the cell's score h_j (the hypothesis's ``cell_score_table``, or the proposal's
    ``info["cell_scores"]`` where h is constant on each cell of the training rows only, a
    count feature's bins), the class's sign and its weight in the cell
    (``state.cell_weights``). Sums over them are the sums over the rows that the cells hold."""
    table = candidate.info.get("cell_scores", candidate.hypothesis.cell_score_table())
    if table is None:
        raise ValueError(f"{owner}: a candidate without rows needs a base classifier with a "
                         f"score per cell (cell_score_table, or info['cell_scores']), and "
                         f"{candidate.hypothesis.name!r} has none")
    table = np.asarray(table, dtype=np.float64)
    wneg, wpos = state.cell_weights(candidate)
    return (np.concatenate([table, table]),
            np.concatenate([np.full(table.shape[0], -1.0), np.ones(table.shape[0])]),
            np.concatenate([wneg, wpos]).astype(np.float64))


def potential_alpha(scores, y, weights, smoothing: float, tol: float = 1e-12,
                    max_iter: int = 100) -> float:
    """The alpha minimising sum_i D(i) exp(-alpha y_i h(x_i)) (+ smoothing phantoms).

    Closed form for h in {-1, +1}; otherwise Newton's method over the examples where h != 0
    (:func:`boostkit_onepass.kernels.exp_loss_alpha`): the others only add a constant.
    """
    if all_plus_minus_one(scores):
        return sign_alpha(float(weights @ (scores != y)), smoothing)
    rows = np.flatnonzero(scores)
    return float(exp_loss_alpha(y[rows] * scores[rows], weights[rows], smoothing, tol, max_iter))


@attrs.define
class OnePassAlpha(boostkit.Calibration):
    """AdaBoost's voting weight for +-1 and for confidence-rated base classifiers.

    Barutcuoglu et al. 2007, section 3 (Fig. 1): alpha_t = 1/2 ln((1 - eps_t) / eps_t) for h in
    {-1, +1}; section 4: for confidence-rated classifiers with unbounded confidence (term counts),
    "choose each voting weight alpha_t in order to maximize the reduction in potential [Schapire &
    Singer 1999, section 3.2] ... using Newton's method". Both minimise Z(alpha) = sum_i D_t(i)
    exp(-alpha y_i h(x_i)), so one component covers both, with ``smoothing`` s added as in
    ``boostkit_adaboost``'s constant-alpha and newton-alpha (two phantom examples of weight s at the
    extreme margins; s = 1/m by default, which keeps the weight of a term seen only in one class
    finite). The minimiser is theirs; this one only visits the examples where h != 0, so a round
    costs O(nnz) Newton work instead of O(m), and it is the same kernel as the fused pass
    (:func:`boostkit_onepass.one_pass`), so both paths give the same weights. Contribution: alpha
    h(x).

    Every data plane (``"distributed"``): on a candidate without rows (a distributed fit's) the
    sum runs over its cells, each class's weight in a cell counting as one example with the
    cell's score (:func:`cell_outputs`), by Newton's method over the cells for counts.
    """

    name = "onepass-alpha"
    needs = frozenset({"real-scores"})
    provides = frozenset({DISTRIBUTED})
    smoothing: float | None = attrs.field(default=None, validator=check_smoothing)
    tol: float = attrs.field(default=1e-12, converter=float)
    max_iter: int = attrs.field(default=100, converter=int)

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return weighted_error(wpos, wneg)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        s = resolve_smoothing(self.smoothing, n_examples(state.data))
        if not candidate.has_rows:
            alpha = potential_alpha(*cell_outputs(state, candidate, self.name), s, self.tol,
                                    self.max_iter)
            return boostkit.Calibrated(boostkit.LinearContribution(alpha), None, (alpha,))
        h = candidate.scores
        alpha = potential_alpha(h, state.data.y, state.weights, s, self.tol, self.max_iter)
        return boostkit.Calibrated(boostkit.LinearContribution(alpha), alpha * h, (alpha,))


@attrs.define
class UnitCoefficient(boostkit.Calibration):
    """c_t(x) = h_t(x): every term votes with weight 1.

    POPBM's output is the unweighted majority Maj(h_1(x), ..., h_T(x)) (Barutcuoglu et al. 2007,
    section 2, step 3), so F_T counts votes and its sign is the majority (a tie, possible for even
    T, predicts the negative class and counts as an error, as in Freund's analysis). The naive Bayes
    baseline uses it too: its single term is already the (half) log-odds.
    """

    name = "unit-coefficient"
    needs = frozenset({"real-scores"})
    provides = frozenset({"running-margin", "unit-coefficients"})

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return weighted_error(wpos, wneg)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        h = np.array(candidate.scores, dtype=np.float64)
        return boostkit.Calibrated(boostkit.LinearContribution(1.0), h, (1.0,))

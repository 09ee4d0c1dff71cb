"""Reweightings computed from the margins: WeightBoost's eq. 7 / eq. 11 and Weight Decay's.

Both are D_{t+1}(i) proportional to D_1(i) exp(-y_i F_t(x_i) - penalty(F_t(x_i))), computed in log
space by one kernel (:func:`boostkit_weightboost.kernels.penalized_distribution`). Both report
the exponential cost sum_i D_1(i) e^{-y_i F_t(x_i)} as their potential: it bounds the training
error whatever the combination (Jin et al. 2003, eq. 5), so the round records' ``error_bound`` is a
true bound and ``z`` the factor by which the round changed it.

Both also give their row form (``boostkit_row_weights``: the same weights on some rows,
unnormalised, with those rows' share of the cost), so they run on every data plane; where the
rows are in this process the whole-rows form above computes them, as it always did.
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED

from .kernels import SQUARED, penalized_distribution, penalized_row_weights
from .regularizer import check_regularizer, regularizer_kind
from .validators import finite_non_negative, finite_positive


def _penalized_weights(state, beta: float, kind: int, power: float) -> boostkit.Weights:
    data = state.data
    weights, log_cost = penalized_distribution(
        state.margin, data.y, data.sample_weight, beta, kind, power, state.n_jobs
    )
    return boostkit.Weights(weights, log_cost)


def _penalized_row_weights(margin, y, d1, beta: float, kind: int,
                           power: float) -> boostkit.RowWeights:
    """The same weights on some rows, unnormalised (the row form, boostkit_row_weights): the
    data plane normalises them over all rows, wherever they live."""
    weights = np.empty(margin.shape[0])
    log_scale, log_cost = penalized_row_weights(margin, y, d1, beta, kind, power, weights)
    return boostkit.RowWeights(weights, log_scale, log_cost)


@attrs.define
class WeightBoostWeights(boostkit.Reweighting):
    """W_i proportional to D_1(i) e^{-y_i H(x_i)} g(H(x_i)) (Jin et al. 2003, eq. 7; eq. 11 in
    general).

    With the ``exponential`` regularizer g = e^{-|beta H|}: W_i ~ e^{-y_i H(x_i) - |beta H(x_i)|}.
    Besides the examples H misclassifies, those near its decision boundary (small |H|) gain
    weight, and an example's weight grows at most polynomially in T (Appendix), where AdaBoost's
    grows exponentially. With beta = 0 this is AdaBoost's ``exponential`` reweighting, bit for bit.

    ``beta``, ``regularizer`` and ``power`` must match the ``input-dependent`` wrapper of the same
    recipe (``shared_params``: a mismatch is refused before fitting): eq. 8's alpha minimises
    eq. 6's bound only under these weights.

    Potential: the exponential cost sum_i D_1(i) e^{-y_i H_T(x_i)}, which bounds the training error
    (eq. 5). With eq. 8's alpha, eq. 6 multiplies it by at most 1 - rho_T (1 - 2 sqrt(eps_T (1 -
    eps_T))) per round, where rho_T <= 1 is the cost-weighted mean of g: Z_t <= 1 and the
    record's ``error_bound`` falls every round, more slowly than AdaBoost's where g is small.
    """

    name = "weightboost-weights"
    provides = frozenset({"potential", DISTRIBUTED})
    shared_params = ("beta", "regularizer", "power")
    beta: float = attrs.field(default=0.5, converter=float, validator=finite_non_negative)
    regularizer: str = attrs.field(default="exponential", validator=check_regularizer)
    power: float = attrs.field(default=1.0, converter=float, validator=finite_positive)

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        return _penalized_weights(state, self.beta, regularizer_kind(self.regularizer), self.power)

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        return _penalized_row_weights(margin, y, initial_weights, self.beta,
                                      regularizer_kind(self.regularizer), self.power)


@attrs.define
class WeightDecayWeights(boostkit.Reweighting):
    """Weight Decay (Raetsch et al. 1998, as Jin et al. 2003, section 2 states it): D ~ e^{-y F - C
    zeta}.

    Jin et al. 2003, section 2 defines zeta_i^t = (sum_{s<=t} alpha_s h_s(x_i))^2 = F_t(x_i)^2 and
    the cost sum_i e^{-y_i F(x_i) - C zeta_i^t}, zeta acting as a slack variable: the weights are
    D_{t+1}(i) proportional to D_1(i) exp(-y_i F_t(x_i) - C F_t(x_i)^2) (``decay`` is C). Patterns
    the ensemble is confident about, rightly or wrongly, lose weight, the more so the larger |F|, as
    in WeightBoost's eq. 7 with a squared instead of an absolute penalty (the similarity section 3.4
    points out). The combination stays AdaBoost's (section 3.4, point 2).

    The printed formula is what is implemented. The text calls the inner sum "the cumulative
    weight of the pattern in the previous iterations", which would rather be Raetsch's influence
    sum_s alpha_s D_s(i); that reading needs the weight history rather than the margins and is
    not what Jin et al. 2003 prints, so it is not offered.

    Jin et al. 2003 does not give C. The default 0.003 had the lowest 5-fold error without label
    noise among 0.003, 0.01, 0.03, 0.1 and 0.3 (``weight-decay`` with its depth-2 trees on
    ionosphere, pima_diabetes, german_credit and breast_cancer_wisconsin; chosen before any
    WeightBoost run).

    Potential: the exponential cost sum_i D_1(i) e^{-y_i F_t(x_i)} (a bound on the training
    error); it need not fall every round, since alpha is not chosen for it (Z_t may exceed 1).
    """

    name = "weight-decay-weights"
    provides = frozenset({"potential", DISTRIBUTED})
    decay: float = attrs.field(default=0.003, converter=float, validator=finite_non_negative)

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        return _penalized_weights(state, self.decay, SQUARED, 1.0)

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        return _penalized_row_weights(margin, y, initial_weights, self.decay, SQUARED, 1.0)

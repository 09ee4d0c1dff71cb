"""AdaBoost's exponential reweighting, computed from the margins."""

from __future__ import annotations

import attrs

import boostkit
from boostkit.kernels.boosting import exponential_distribution


@attrs.define
class ExponentialReweighting(boostkit.Reweighting):
    """D_{t+1}(i) = D_1(i) exp(-y_i F_t(x_i)) / prod_{s<=t} Z_s (000 eq. 6; 003).

    Equivalent to the multiplicative update D_{t+1}(i) = D_t(i) exp(-y_i c_t(x_i)) / Z_t, but
    computed from the margins in log space, so it never overflows and a round can be replaced by
    removing its contribution. The potential log sum_i D_1(i) exp(-y_i F_t(x_i)) gives
    prod_s Z_s, which bounds the training error (000 Theorem 1).

    With C > 1 margin columns the same rule runs over the (example, class) pairs:
    D_{t+1}(i, l) proportional to D_1(i, l) exp(-Y(i, l) F_t(x_i, l)), AdaBoost.MH's update
    (Schapire & Singer 1999, Fig. 5), whose potential prod_s Z_s bounds the Hamming loss.
    """

    name = "exponential"
    provides = frozenset({"potential", "multiclass"})

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        # Pairs are examples of one binary problem: the kernel sees the flattened arrays.
        weights, log_potential = exponential_distribution(
            state.margin.ravel(), state.data.y.ravel(), state.initial_weights.ravel(),
            state.n_jobs
        )
        return boostkit.Weights(weights.reshape(state.margin.shape), log_potential)

"""AdaBoost's exponential reweighting, computed from the margins."""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.kernels.boosting import exponential_weights, exponential_weights_parallel


@attrs.define
class ExponentialReweighting(boostkit.Reweighting):
    """D_{t+1}(i) = D_1(i) exp(-y_i F_t(x_i)) / prod_{s<=t} Z_s (000 eq. 6; 003).

    Equivalent to the multiplicative update D_{t+1}(i) = D_t(i) exp(-y_i c_t(x_i)) / Z_t, but
    computed from the margins in log space, so it never overflows and a round can be replaced by
    removing its contribution. The potential log sum_i D_1(i) exp(-y_i F_t(x_i)) gives
    prod_s Z_s, which bounds the training error (000 Theorem 1).
    """

    name = "exponential"

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        data = state.data
        out = np.empty(data.n_samples)
        if state.n_jobs > 1:
            log_potential = exponential_weights_parallel(
                state.margin, data.y, data.sample_weight, out, state.n_jobs
            )
        else:
            log_potential = exponential_weights(state.margin, data.y, data.sample_weight, out)
        return boostkit.Weights(out, float(log_potential))

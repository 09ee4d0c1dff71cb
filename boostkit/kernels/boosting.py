"""Margin and weight updates, fused into single passes over the examples."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def add_contribution(margin, contribution, y, d1, weights):
    """Add this round's contribution to the margins and measure the round, in one pass.

    ``margin`` (F_{t-1} -> F_t) is updated in place. Returns ``(training_error, weighted_error)``:
    sum_i D_1(i) [y_i F_t(x_i) <= 0], and sum_i D_t(i) [y_i c_t(x_i) < 0] plus half the
    D_t-weight of the examples where c_t(x_i) = 0 (an abstention is a coin flip).
    """
    train_err = 0.0
    werr = 0.0
    for i in range(margin.shape[0]):
        c = contribution[i]
        m = margin[i] + c
        margin[i] = m
        if y[i] * m <= 0.0:
            train_err += d1[i]
        yc = y[i] * c
        if yc < 0.0:
            werr += weights[i]
        elif yc == 0.0:
            werr += 0.5 * weights[i]
    return train_err, werr


@numba.njit(cache=True, nogil=True)
def exponential_weights(margin, y, d1, out):
    """AdaBoost's distribution D_{t+1}(i) proportional to D_1(i) exp(-y_i F_t(x_i)).

    Computed in log space (the largest exponent among examples of positive initial weight is
    subtracted before exponentiating), so thousands of rounds never overflow. ``out`` receives
    the normalised weights; returns log sum_i D_1(i) exp(-y_i F_t(x_i)), the log of prod_s Z_s.
    """
    n = margin.shape[0]
    top = -np.inf
    for i in range(n):
        if d1[i] > 0.0:
            e = -y[i] * margin[i]
            if e > top:
                top = e
    total = 0.0
    for i in range(n):
        w = d1[i] * np.exp(-y[i] * margin[i] - top) if d1[i] > 0.0 else 0.0
        out[i] = w
        total += w
    for i in range(n):
        out[i] /= total
    return top + np.log(total)

"""LogitBoost's per-example quantities, from the margins, in single passes.

Friedman, Hastie & Tibshirani (2000), "Additive logistic regression: a statistical view of
boosting" (FHT), Algorithm 3, with p(x) = 1 / (1 + e^{-2F(x)}) (their eq. 19) and y* = (y + 1)/2:

* the working response z = (y* - p) / (p (1 - p)), which is y (1 + e^{-2yF}) written without a
  division, clipped to |z| <= z_max: FHT stabilise the response where p(1 - p) is close to 0
  (the technical-report version, FHT98 p. 18, as Friedman 2001 section 4.5 cites it), with z_max
  in [2, 4];
* the weights w = p (1 - p) = e^{-2|F|} / (1 + e^{-2|F|})^2, normalised in log space like the
  engine's exponential weights, so they never underflow to an all-zero vector or overflow;
* the potential, sum_i D_1(i) log2(1 + e^{-2 y_i F(x_i)}), also in log space;
* for Algorithm 6 (several classes, :mod:`boostkit_additive.multinomial`), the half log-odds of
  each class against the rest under the softmax of the class logits, on which the two quantities
  above are Algorithm 6's per class.

Plain module-level functions over arrays and scalars (boostkit's kernel conventions).
"""

from __future__ import annotations

import math

import numba
import numpy as np

_LOG_LOG2 = math.log(math.log(2.0))


@numba.njit(cache=True, nogil=True, inline="always")
def _log_softplus(x):
    """log(log(1 + e^x)) without overflow: softplus(x) = max(x, 0) + log1p(e^{-|x|}), and
    below x = -30 log softplus(x) = x - e^x/2 + ... = x to within 1e-13."""
    if x < -30.0:
        return x
    return math.log(max(x, 0.0) + math.log1p(math.exp(-abs(x))))


@numba.njit(cache=True, nogil=True)
def working_response(margin, y, z_max, out):
    """z_i = y_i min(1 + e^{-2 y_i F_i}, z_max): FHT Algorithm 3's (y* - p) / (p (1 - p)), clipped.

    With p = 1 / (1 + e^{-2F}): for y = +1, z = 1/p = 1 + e^{-2F}; for y = -1,
    z = -1/(1 - p) = -(1 + e^{2F}). So |z| >= 1 always, and the exponent is capped at
    ln(z_max) before exponentiating, so a margin of any size gives a finite z. ``out`` receives z.
    """
    cap = math.log(z_max)
    for i in range(margin.shape[0]):
        e = min(-2.0 * y[i] * margin[i], cap)
        out[i] = y[i] * min(1.0 + math.exp(e), z_max)


@numba.njit(cache=True, nogil=True)
def logistic_weights(margin, y, d1, out):
    """w_i proportional to D_1(i) p_i (1 - p_i), normalised; returns the log potential.

    log w_i = log D_1(i) - 2|F_i| - 2 log(1 + e^{-2|F_i|}); the largest among the examples of
    positive D_1 is subtracted before exponentiating (as the engine's exponential weights do), so
    the weights sum to 1 whatever the margins. Returns
    log sum_i D_1(i) log2(1 + e^{-2 y_i F_i}), the log of the D_1-weighted logistic loss in bits,
    computed as a log-sum-exp of log D_1(i) + log(softplus(-2 y_i F_i)) - log log 2.
    """
    n = margin.shape[0]
    top = -np.inf
    for i in range(n):
        if d1[i] > 0.0:
            a = 2.0 * abs(margin[i])
            e = math.log(d1[i]) - a - 2.0 * math.log1p(math.exp(-a))
            out[i] = e
            top = max(top, e)
    total = 0.0
    for i in range(n):
        if d1[i] > 0.0:
            out[i] = math.exp(out[i] - top)
            total += out[i]
        else:
            out[i] = 0.0
    for i in range(n):
        out[i] /= total
    # log of the potential: log-sum-exp over log D_1(i) + log softplus(-2 y_i F_i).
    top = -np.inf
    for i in range(n):
        if d1[i] > 0.0:
            top = max(top, math.log(d1[i]) + _log_softplus(-2.0 * y[i] * margin[i]))
    acc = 0.0
    for i in range(n):
        if d1[i] > 0.0:
            acc += math.exp(math.log(d1[i]) + _log_softplus(-2.0 * y[i] * margin[i]) - top)
    return top + math.log(acc) - _LOG_LOG2


@numba.njit(cache=True, nogil=True)
def class_half_log_odds(logits, out):
    """G_il = 1/2 log(p_il / (1 - p_il)) of the softmax p_il = e^{s_il} / sum_k e^{s_ik}.

    FHT Algorithm 6's symmetric multinomial probabilities written as the half log-odds of each
    class against the rest: the margins from which ``boostkit.model.margin_probabilities`` gives
    back sigma(2 G_il) / sum_k sigma(2 G_ik) = p_il.
    ``logits`` is ``(n, C)``, C >= 2, any row shift (a row constant cancels);
    G_il = 1/2 (s_il - log sum_{k != l} e^{s_ik}). The row's largest logit s_top is subtracted
    before exponentiating, and the top class's sum over the others is taken about the second
    largest, so however far apart the logits grow the sum neither overflows nor underflows to 0,
    and for every other class the sum 1 + sum_{k != top, l} e^{s_k - s_top} is at least 1.
    ``out`` (``(n, C)``) receives G.
    """
    n, c = logits.shape
    for i in range(n):
        top = 0
        for l in range(1, c):
            if logits[i, l] > logits[i, top]:
                top = l
        second = -np.inf
        for l in range(c):
            if l != top:
                second = max(second, logits[i, l])
        near = 0.0  # sum_{k != top} e^{s_k - second} >= 1
        for l in range(c):
            if l != top:
                near += math.exp(logits[i, l] - second)
        rest = math.exp(second - logits[i, top]) * near  # sum_{k != top} e^{s_k - s_top}
        for l in range(c):
            if l == top:
                out[i, l] = 0.5 * (logits[i, l] - second - math.log(near))
            else:
                others = 1.0 + (rest - math.exp(logits[i, l] - logits[i, top]))
                out[i, l] = 0.5 * (logits[i, l] - logits[i, top] - math.log(others))

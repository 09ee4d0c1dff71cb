"""Boost-by-majority weights (Freund 1995) as POPBM uses them (Barutcuoglu et al. 2007, sec. 2).

POPBM step 2.a: r_t(x, y) is the number of the chosen h_1, ..., h_{t-1} that are correct on
(x, y), and the weight of (x, y) in round t is the probability that, if each of the votes still
to come after this round were correct independently with probability 1/2 + alpha, the vote of
round t would decide the majority of all T:

    w_t(r) = C(T - t, k) (1/2 + alpha)^k (1/2 - alpha)^(T - t - k),   k = floor(T/2) - r,

and 0 when k < 0 or k > T - t (the majority is already decided either way). This is Freund's
weight alpha_r^i with i = t - 1 hypotheses chosen so far. Step 2.a.ii as printed,
C(T - t - 1, k) (1/2 + alpha)^k (1/2 - alpha)^(ceil(T/2) - t - 1 + r), is the same expression with
t counting the hypotheses chosen *before* the round (0-based); read with the 1-based round t of
step 2 it would use C(-1, k) in round T, so the papers' README asks for Freund's indexing, used
here. Either way w_t is a binomial probability, in [0, 1], which the proof of Claim 6 needs
("w_t(x, y) can be interpreted as a probability, and so w_t(x, y) <= 1").

Z_t = E_D[w_t(x, y)] and D_t(x, y) = w_t(x, y) D(x, y) / Z_t (step 2.a.ii).

With majority-vote terms (``unit-coefficient``: c_t = h_t in {-1, +1}) the margins count votes:
y F_t(x) = r - (t - r), so r is read from the margins and the weights stay functions of F, as
the engine's design asks.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit

from .validators import below_half


def bbm_weight_table(t: int, T: int, alpha: float) -> np.ndarray:
    """``table[r] = w_t(r)`` for r = 0 .. t - 1 correct among h_1 .. h_{t-1} (t is 1-based)."""
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 1/2), got {alpha!r}")
    remaining = T - t
    table = np.zeros(t)
    if remaining < 0:
        return table
    log_p, log_q = math.log(0.5 + alpha), math.log(0.5 - alpha)
    for r in range(table.shape[0]):
        k = T // 2 - r
        if 0 <= k <= remaining:
            table[r] = math.exp(
                math.lgamma(remaining + 1) - math.lgamma(k + 1) - math.lgamma(remaining - k + 1)
                + k * log_p + (remaining - k) * log_q
            )
    return np.minimum(table, 1.0)  # lgamma rounding must not push a probability above 1


def correct_votes(margin: np.ndarray, y: np.ndarray, n_votes: int) -> np.ndarray:
    """r = (y F + n_votes) / 2: how many of ``n_votes`` +-1 votes agree with y, from F."""
    r = 0.5 * (y * margin + n_votes)
    counts = np.rint(r)
    if n_votes and (np.abs(r - counts).max() > 1e-6 or counts.min() < 0 or counts.max() > n_votes):
        raise ValueError(
            "boost-by-majority needs every term to be a +-1 vote with coefficient 1 (calibration "
            "'unit-coefficient' over +-1 hypotheses); the margins are not vote counts"
        )
    return counts.astype(np.intp)


def bbm_weights(margin, y, t: int, T: int, alpha: float) -> np.ndarray:
    """w_t(x_i, y_i) for every training example, before the margins of round t are added."""
    table = bbm_weight_table(t, T, alpha)
    return table[correct_votes(margin, y, t - 1)]


def bbm_normaliser(margin, y, d1, t: int, T: int, alpha: float) -> float:
    """Z_t = sum_i D(i) w_t(x_i, y_i) (Barutcuoglu et al. 2007, step 2.a.ii)."""
    return float(d1 @ bbm_weights(margin, y, t, T, alpha))


@attrs.define
class BoostByMajority(boostkit.Reweighting):
    """D_{t+1}(x, y) = w_{t+1}(x, y) D(x, y) / Z_{t+1} (Barutcuoglu et al. 2007, section 2,
    step 2.a; Freund 1995).

    T is the fit's round budget ``n_rounds``. The next round's normaliser Z_{t+1} and ``alpha``
    are recorded (``record.extra["bbm_z_next"]``, ``["bbm_alpha"]``); when Z_{t+1} = 0 (every
    majority is decided, or t = T) the distribution falls back to D, which POPBM never uses
    then (Z < epsilon / T gives the constant hypothesis). There is no exponential-style
    potential, so ``log_potential`` is ``None``.
    """

    name = "boost-by-majority"
    shared_params = ("alpha",)
    needs = frozenset({"sign-scores", "unit-coefficients"})
    alpha: float = attrs.field(default=0.05, converter=float, validator=below_half)

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        data = state.data
        w = bbm_weights(state.margin, data.y, state.round + 1, state.n_rounds, self.alpha)
        weights = data.sample_weight * w
        z = float(weights.sum())
        weights = weights / z if z > 0.0 else data.sample_weight.copy()
        return boostkit.Weights(weights, None, {"bbm_alpha": self.alpha, "bbm_z_next": z})

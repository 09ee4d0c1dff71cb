"""PickyAdaBoost's abstention as a proposal wrapper (Barutcuoglu et al. 2007, section 3)."""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED

from .coefficients import cell_outputs
from .kernels import all_plus_minus_one, potential_advantage


def advantage(scores: np.ndarray, y: np.ndarray, weights: np.ndarray) -> float:
    """|gamma|: the magnitude of the advantage of h under the distribution ``weights``.

    For h in {-1, +1}: |1/2 - eps| with eps = sum_i D(i) [h(x_i) != y_i] (Barutcuoglu et al. 2007,
    section 3). For a confidence-rated h (term counts), whose advantage the paper does not define:
    1/2 sqrt(1 - Z*^2) with Z* the smallest potential alpha h can reach
    (:func:`boostkit_onepass.kernels.potential_advantage`), which is the same number for +-1
    classifiers, does not change when h is rescaled, and is 0 when h abstains everywhere.
    """
    if all_plus_minus_one(scores):
        return abs(0.5 - float(weights @ (scores != y)))
    rows = np.flatnonzero(scores)
    return float(potential_advantage(y[rows] * scores[rows], weights[rows], 1e-12, 100))


def _gamma_bar(instance, attribute, value):
    if not 0.0 <= value <= 0.5:
        raise ValueError(f"gamma_bar must be in [0, 1/2], got {value!r}")


@attrs.define
class Picky(boostkit.ProposalWrapper):
    """Skip every proposed base classifier whose advantage has magnitude below ``gamma_bar``.

    PickyAdaBoost(gamma_bar) (Barutcuoglu et al. 2007, section 3): "if the current base classifier
    has advantage gamma under D' where |gamma| < gamma_bar, PickyAdaBoost abstains in that round ...
    (the distribution for the next round of boosting will also be D')". Only the magnitude counts: a
    classifier and its negation get the same use (the voting weight takes the sign). The advantage
    is :func:`advantage` under the current distribution ``state.weights`` (for confidence-rated
    classifiers, the advantage of the +-1 classifier that would lower the potential as much).

    As a wrapper it composes with any proposal and calibration: a skipped classifier adds no
    term and leaves the distribution unchanged, and the wrapper asks the proposal for the next
    one by calling the hook again (its own nested call passes the answer straight through), so
    the engine's round count is the number of classifiers *used*. If the proposal comes back to
    the first hypothesis it skipped this round (a deterministic learner under an unchanged
    distribution repeats itself, like ``stump``, or cycles, like ``nscore``), nothing better will
    come and the wrapper proposes ``None``, ending the run.

    Every data plane (``"distributed"``): a candidate without rows (a distributed fit's) is
    measured on its cells' sums (:func:`boostkit_onepass.coefficients.cell_outputs`).
    """

    name = "picky"
    needs = frozenset({"real-scores"})
    provides = frozenset({DISTRIBUTED})
    gamma_bar: float = attrs.field(default=0.1, converter=float, validator=_gamma_bar)
    _passing_through: bool = attrs.field(init=False, default=False)

    @boostkit.hookimpl(wrapper=True)
    def boostkit_propose(self, state):
        candidate = yield
        if self._passing_through:
            return candidate
        self._passing_through = True
        try:
            first_skipped = None
            while candidate is not None and self._advantage(state, candidate) < self.gamma_bar:
                if first_skipped is None:
                    first_skipped = candidate.hypothesis
                candidate = state.hook.boostkit_propose(state=state)
                if candidate is not None and candidate.hypothesis == first_skipped:
                    return None
        finally:
            self._passing_through = False
        return candidate

    def _advantage(self, state, candidate) -> float:
        if candidate.has_rows:
            return advantage(candidate.scores, state.data.y, state.weights)
        return advantage(*cell_outputs(state, candidate, self.name))

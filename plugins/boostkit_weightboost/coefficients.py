"""epsilon-Boost's coefficient: the same small step every round (Jin et al. 2003, section 4.1)."""

from __future__ import annotations

import attrs

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.criteria import weighted_error

from .validators import finite_positive


@attrs.define
class EpsilonStep(boostkit.Calibration):
    """c_t(x) = step * h_t(x): a small constant coefficient instead of eq. 3's alpha_t.

    epsilon-Boost (Friedman et al., cited by Jin et al. 2003, section 4.1) combined with AdaBoost's
    weights (``exponential``) is forward stagewise fitting of the exponential loss with a fixed
    small step: every weak classifier gets the same small weight, so |F| stays small. The paper uses
    it to ask whether WeightBoost's gain comes from the input dependence or merely from keeping H
    small. It does not give the step; the default 0.1 had the lowest 5-fold error without label
    noise among 0.05, 0.1, 0.2 and 0.5 (``epsilon-boost`` with its depth-2 trees on ionosphere,
    pima_diabetes, german_credit and breast_cancer_wisconsin). The weak learner minimises the
    weighted error, as under ``constant-alpha``.

    Every data plane: the coefficient reads nothing of the rows, so a candidate without rows
    (a distributed fit) gets ``train_values=None`` and each shard applies step * h per cell
    (``LinearContribution.cell_table``: hypotheses with one score per cell, stumps and trees).
    """

    name = "epsilon-step"
    needs = frozenset({"real-scores"})
    provides = frozenset({DISTRIBUTED})
    step: float = attrs.field(default=0.1, converter=float, validator=finite_positive)

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return weighted_error(wpos, wneg)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        if not candidate.has_rows:
            return boostkit.Calibrated(boostkit.LinearContribution(self.step), None, (self.step,))
        h = candidate.scores
        return boostkit.Calibrated(boostkit.LinearContribution(self.step), self.step * h, (self.step,))

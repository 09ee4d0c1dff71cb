"""Shrinkage: every round's contribution multiplied by a learning rate nu in (0, 1].

Friedman (2001), "Greedy function approximation: a gradient boosting machine", section 5
(shrinkage of every step by 0 < nu <= 1, applied there to LogitBoost too) and the step length of
mboost (Buehlmann & Hothorn 2007, default nu = 0.1): F_t = F_{t-1} + nu c_t. It trades
more rounds for a smoother path; epsilon-Boost (``epsilon-step``) is the limit of small fixed
steps on +-1 hypotheses. ``learning-rate`` is also the engine-facing contract of
``Booster(learning_rate=nu)``: the wrapper registered under this name with one parameter ``rate``.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit


def _rate(instance, attribute, value):
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise ValueError(f"{attribute.name} must be a number in (0, 1], got {value!r}")


@attrs.frozen
class ShrunkContribution(boostkit.Contribution):
    """c(x) = factor * inner(x): a contribution shrunk by the learning rate.

    ``inner`` is the wrapped calibration's own contribution, saved nested by name, so a model
    fitted with any calibration and shrinkage saves and loads.
    """

    name = "shrunk"
    inner: boostkit.Contribution
    factor: float = attrs.field(converter=float)

    def values(self, output, margin: np.ndarray) -> np.ndarray:
        return self.factor * self.inner.values(output, margin)

    def cell_table(self, hypothesis) -> np.ndarray | None:
        inner = self.inner.cell_table(hypothesis)
        return None if inner is None else self.factor * inner


@attrs.define
class LearningRate(boostkit.CalibrationWrapper):
    """Multiply every round's contribution (and its training values) by ``rate`` nu in (0, 1].

    Shrinkage (Friedman 2001, section 5; mboost's step length nu): F_t = F_{t-1} +
    nu c_t, for any calibration, with one margin column or several. The shrunk terms no longer
    have coefficient 1 (it withdraws ``"unit-coefficients"``). It needs the running margin: a
    back-fitting calibration would re-fit a term it finds shrunk, a contribution it did not make.
    """

    name = "learning-rate"
    needs = frozenset({"running-margin"})
    provides = frozenset({"multiclass"})
    withdraws = frozenset({"unit-coefficients"})
    rate: float = attrs.field(default=0.1, converter=float, validator=_rate)

    @boostkit.hookimpl(wrapper=True)
    def boostkit_calibrate(self, state, candidate):
        calibrated = yield
        return boostkit.Calibrated(
            ShrunkContribution(calibrated.contribution, self.rate),
            self.rate * calibrated.train_values,
            tuple(self.rate * c for c in calibrated.coefficients),
            {**calibrated.extra, "learning_rate": self.rate},
        )

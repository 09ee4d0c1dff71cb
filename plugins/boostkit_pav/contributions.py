"""The contributions c_t(x) = k_t(h_t(x)) this plugin's calibrations produce.

* :class:`IsotonicSteps`: pure PAV-AdaBoost (Wilbur et al. 2005, eq. 14-15): p_t known on
  the pools' end points and interpolated by 2.2 to any score, k = 1/2 ln(p / (1 - p)).
* :class:`ScoreBins`: approximate PAV-AdaBoost (Wilbur et al. 2005, section 5): one k per bin of a fixed partition
  of the score's range (eq. 39).
* :class:`AffineScore`: the sigmoid calibration of Wilbur et al. 2005, eq. 52-53, k(s) = 1/2 (w s - b).

(Cells that the hypothesis itself orders, like a score column's bins, use the engine's
``boostkit.CellContribution``.)
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit

from .isotonic import INTERPOLATIONS, half_log_odds, interpolate

__all__ = ["IsotonicSteps", "ScoreBins", "AffineScore"]


def _float_vector(value) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.float64)
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"expected a non-empty 1-D array, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("expected finite values")
    return arr


def _increasing(instance, attribute, value):
    if (np.diff(value) <= 0).any():
        raise ValueError(f"{attribute.name} must be strictly increasing")


def _interpolation(instance, attribute, value):
    if value not in INTERPOLATIONS:
        raise ValueError(f"{attribute.name} must be one of {INTERPOLATIONS}, got {value!r}")


@attrs.frozen
class IsotonicSteps(boostkit.Contribution):
    """c(x) = 1/2 ln(p / (1 - p)), p = the PAV estimate p_t interpolated at s = h_t(x).

    ``points`` are increasing scores where p_t is known (the end points of the pools), and
    ``probabilities`` its values there, already bounded away from 0 and 1 by epsilon. Scores
    between two points get the midpoint of their values (Wilbur et al. 2005, section 2.2, case 3)
    or, with ``interpolation="linear"``, the linear interpolation; scores outside take the nearest
    end.
    """

    name = "isotonic-steps"
    points: np.ndarray = attrs.field(converter=_float_vector, validator=_increasing, eq=False)
    probabilities: np.ndarray = attrs.field(converter=_float_vector, eq=False)
    interpolation: str = attrs.field(default="midpoint", validator=_interpolation)

    @probabilities.validator
    def _check_probabilities(self, attribute, value):
        if value.shape != self.points.shape:
            raise ValueError(
                f"probabilities has {value.shape[0]} values for {self.points.shape[0]} points"
            )
        if ((value <= 0.0) | (value >= 1.0)).any():
            raise ValueError("probabilities must lie strictly between 0 and 1")

    def values(self, output, margin):
        return half_log_odds(interpolate(self.points, self.probabilities, output.scores,
                                         self.interpolation))


@attrs.frozen
class ScoreBins(boostkit.Contribution):
    """c(x) = bin_values[j] for the bin j of s = h_t(x) (Wilbur et al. 2005, eq. 39): t_{j-1} < s <=
    t_j.

    ``thresholds`` (increasing, B - 1 of them) cut the real line into B bins, and
    ``bin_values`` holds k for each, from PAV over the bins (:func:`boostkit_pav.isotonic.isotonic_bins`).
    """

    name = "score-bins"
    thresholds: np.ndarray = attrs.field(
        converter=lambda v: np.ascontiguousarray(v, dtype=np.float64), validator=_increasing, eq=False
    )
    bin_values: np.ndarray = attrs.field(converter=_float_vector, eq=False)

    @bin_values.validator
    def _check_bins(self, attribute, value):
        if value.shape[0] != self.thresholds.shape[0] + 1:
            raise ValueError(
                f"bin_values needs one value per bin ({self.thresholds.shape[0] + 1}), "
                f"got {value.shape[0]}"
            )

    def values(self, output, margin):
        return self.bin_values[np.searchsorted(self.thresholds, output.scores, side="left")]


@attrs.frozen
class AffineScore(boostkit.Contribution):
    """c(x) = slope * h_t(x) + intercept: k(s) = 1/2 (w s - b) of Wilbur et al. 2005, eq. 53
    (slope = w/2, intercept = -b/2)."""

    name = "affine-score"
    slope: float = attrs.field(converter=float)
    intercept: float = attrs.field(converter=float)

    def values(self, output, margin):
        return self.slope * output.scores + self.intercept

"""Isotonic regression by PAV, its interpolation, and the confidence k = 1/2 ln(p / (1 - p)).

Array-level API over the kernels of :mod:`boostkit_pav.kernels`
(Wilbur et al. 2005, sections 2.1, 2.2, 3.2 and 5).
"""

from __future__ import annotations

import attrs
import numpy as np

from .kernels import (check_regression_input, interpolate_points, pav_bins, pav_pools_scratch,
                      pool_ties_hashed, sort_pool_ties)

__all__ = [
    "IsotonicFit",
    "isotonic_regression",
    "isotonic_bins",
    "interpolate",
    "bound_probabilities",
    "half_log_odds",
    "INTERPOLATIONS",
]

INTERPOLATIONS = ("midpoint", "linear")

# Scores with at most this many distinct values are pooled by hashing, with no sort of the n
# examples; the hash table of more would no longer stay in cache, and a sort is then cheaper.
HASHED_POINTS = 1 << 16


@attrs.frozen
class IsotonicFit:
    """The result of PAV on weighted data: the pools and their values.

    Attributes
    ----------
    points:
        The N distinct parameter values s_1 < ... < s_N that carry weight.
    weights, means:
        The pooled weight of each distinct value and its weighted mean target p_i.
    pool_starts:
        K + 1 indices into ``points``: pool j covers ``points[pool_starts[j]:pool_starts[j+1]]``.
    pool_values:
        The K pool values q (eq. 3), strictly increasing.
    """

    points: np.ndarray = attrs.field(eq=False)
    weights: np.ndarray = attrs.field(eq=False)
    means: np.ndarray = attrs.field(eq=False)
    pool_starts: np.ndarray = attrs.field(eq=False)
    pool_values: np.ndarray = attrs.field(eq=False)

    @property
    def n_pools(self) -> int:
        return self.pool_values.shape[0]

    def fitted(self) -> np.ndarray:
        """p(s_i) for every distinct value s_i (the pool value of its pool)."""
        return np.repeat(self.pool_values, np.diff(self.pool_starts))

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """The lowest and highest point of every pool, with the pool's value.

        Interpolating (:func:`interpolate`) from these points gives the same function as from all
        N points: inside a pool both neighbours carry the pool's value, and between pools the
        neighbours are the same. So a model stores 2K numbers per round instead of 2N.
        """
        lows = self.points[self.pool_starts[:-1]]
        highs = self.points[self.pool_starts[1:] - 1]
        both = np.column_stack((lows, highs)).ravel()
        values = np.repeat(self.pool_values, 2)
        keep = np.ones(both.shape[0], dtype=bool)
        keep[1::2] = highs > lows  # a one-point pool needs its point once
        return both[keep], values[keep]


def isotonic_regression(scores, weights, targets) -> IsotonicFit:
    """The weighted non-decreasing isotonic regression of ``targets`` on ``scores``.

    Pools tied scores into N points, then runs the O(N) PAV of Wilbur et al. 2005, section 2.1
    (:func:`~boostkit_pav.kernels.pav_pools`). Scores with at most :data:`HASHED_POINTS`
    distinct values are pooled in one pass by hashing
    (:func:`~boostkit_pav.kernels.pool_ties_hashed`) and only the N points are sorted; others
    are sorted once, stably, by an MSD radix sort of their bits that carries the weights and
    targets along, and pooled bucket by bucket (:func:`~boostkit_pav.kernels.sort_pool_ties`).
    Both sum tied examples in their order, so both give the same fit. Examples of weight 0 are
    ignored.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    targets = np.ascontiguousarray(targets, dtype=np.float64)
    if not scores.shape == weights.shape == targets.shape or scores.ndim != 1:
        raise ValueError(
            "scores, weights and targets must be 1-D arrays of one length, got shapes "
            f"{scores.shape}, {weights.shape}, {targets.shape}"
        )
    finite, negative, positive = check_regression_input(scores, weights, targets)
    if not finite:
        raise ValueError("scores, weights and targets must be finite")
    if negative:
        raise ValueError("weights must be non-negative")
    if not positive:
        raise ValueError("weights are all 0: there is nothing to regress")
    n = scores.shape[0]
    capacity = min(n, HASHED_POINTS)
    points, pooled_weights, means = np.empty(capacity), np.empty(capacity), np.empty(capacity)
    n_points = pool_ties_hashed(scores, scores.view(np.int64), weights, targets, capacity,
                                points, pooled_weights, means)
    if n_points >= 0:
        order = np.argsort(points[:n_points])  # distinct values: every sort gives this order
        points, pooled_weights, means = points[order], pooled_weights[order], means[order]
    else:
        # Ties in the examples' order, as hashed.
        points, pooled_weights, means = np.empty(n), np.empty(n), np.empty(n)
        n_points = sort_pool_ties(scores, weights, targets, np.empty(n, dtype=np.uint64),
                                  np.empty(n, dtype=np.uint64), np.empty(n), np.empty(n),
                                  points, pooled_weights, means)
        points, pooled_weights, means = points[:n_points], pooled_weights[:n_points], means[:n_points]
    pool_starts = np.empty(n_points + 1, dtype=np.int64)
    pool_values = np.empty(n_points)
    n_pools = pav_pools_scratch(means, pooled_weights, pool_starts, pool_values,
                                np.empty(3 * n_points, dtype=np.int64), np.empty(n_points))
    return IsotonicFit(points, pooled_weights, means, pool_starts[: n_pools + 1], pool_values[:n_pools])


def interpolate(points, values, s, interpolation: str = "midpoint") -> np.ndarray:
    """Values at ``s`` of the function known at increasing ``points`` (Wilbur et al. 2005,
    section 2.2).

    ``interpolation="midpoint"`` is case 3 of the paper (the mean of the two neighbours);
    ``"linear"`` the linear interpolation the paper suggests for sparse real-valued data.
    """
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}")
    s = np.ascontiguousarray(s, dtype=np.float64)
    out = np.empty(s.shape[0])
    interpolate_points(points, values, s, interpolation == "linear", out)
    return out


def isotonic_bins(wpos: np.ndarray, wneg: np.ndarray, interpolation: str = "midpoint") -> np.ndarray:
    """p per bin of an ordered partition (approximate PAV-AdaBoost, Wilbur et al. 2005, section 5,
    eq. 39).

    Bin j holds the weight ``wpos[j]`` of positive and ``wneg[j]`` of negative examples; PAV runs
    on the bins that hold weight, with the bin index as the parameter, and a bin without weight
    gets its value by the interpolation of 2.2 over the bin index. O(number of bins), in one
    kernel call (:func:`~boostkit_pav.kernels.pav_bins`).
    """
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}")
    wpos, wneg = np.asarray(wpos, dtype=np.float64), np.asarray(wneg, dtype=np.float64)
    if wpos.ndim != 1 or wpos.shape != wneg.shape:
        raise ValueError(f"wpos and wneg must be 1-D arrays of one length, got shapes {wpos.shape}, "
                         f"{wneg.shape}")
    out = np.empty(wpos.shape[0])
    if pav_bins(wpos, wneg, interpolation == "linear", out) == 0:
        raise ValueError("every bin is empty: there is no weight to calibrate on")
    return out


def bound_probabilities(p: np.ndarray, epsilon: float) -> np.ndarray:
    """p bounded away from 0 and 1 by epsilon (Wilbur et al. 2005, section 3.2, before eq. 18)."""
    return np.clip(p, epsilon, 1.0 - epsilon)


def half_log_odds(p: np.ndarray) -> np.ndarray:
    """k = 1/2 ln(p / (1 - p)) (Wilbur et al. 2005, eq. 14); finite for p in (0, 1)."""
    return 0.5 * np.log(p / (1.0 - p))

"""RankBoost's coefficient alpha = 1/2 ln((1 + r) / (1 - r)) and its partition loss -|r|.

Yoder 2011, slide "Bounds and alpha": r = sum_{x0,x1} D(x0,x1) (h(x1) - h(x0)),
alpha = 1/2 ln((1+r)/(1-r)); the weak ranker is chosen to maximise r. The slides write h in
{-1, 1}, but their algebra (r = W_- - W_+, |r| <= 1, and the convexity bound
e^{alpha z} <= (1+z)/2 e^alpha + (1-z)/2 e^{-alpha} behind alpha) needs h(x1) - h(x0) in [-1, 1],
i.e. h in [0, 1] as in Freund, Iyer, Schapire & Singer (2003) section 3.2. Trusting the algebra
(the papers' README), a weak ranker with scores in [lo, hi] is read as h~ = (h - lo) / (hi - lo)
in [0, 1]; for +-1 stumps that halves the slides' r and their coefficient.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED

from .kernels import class_score_sums

# Only stops a perfect ranker (r = 1) from getting an infinite coefficient:
# alpha <= 1/2 ln(2 / 1e-15) ~ 17.6.
_SMOOTHING_FLOOR = 1e-15
# Scores may exceed the declared range by rounding only.
_RANGE_TOLERANCE = 1e-12


def rank_advantage(wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
    """r of the best {0, 1} labelling of the cells of every candidate partition.

    ``wpos``/``wneg`` (shape ``(..., K)``) are the weights of the positive (x1) and negative (x0)
    examples per cell. With the pair distribution factorised as v(x0) v(x1) (each class's weights
    normalised to sum to 1, V+_j and V-_j per cell), a ranker that is 1 on a set S of cells has
    r = sum_{j in S} (V+_j - V-_j); the best S takes the cells where V+_j > V-_j, so
    r = 1/2 sum_j |V+_j - V-_j| (the sum of V+_j - V-_j over all cells is 0). For a stump this is
    |TPR - FPR| at its threshold: the ROC point farthest from the diagonal (Yoder 2011, "take the best
    point on the ROC curve"). A class without weight gives r = 0.
    """
    # Sums over the short last axis as products with ones: numpy's reduction over a length-2
    # axis of a (features, cuts, 2) array is ~20x slower than the matrix-vector product.
    ones = np.ones(wpos.shape[-1])
    pos_total = (wpos @ ones)[..., None]
    neg_total = (wneg @ ones)[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = 0.5 * (np.abs(wpos / pos_total - wneg / neg_total) @ ones)
    return np.where((pos_total[..., 0] > 0) & (neg_total[..., 0] > 0), r, 0.0)


def _score_range(value):
    if value is None:
        return None
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"score_range must be None or a pair (low, high), got {value!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"score_range must be two finite numbers low < high, got {value!r}")
    return (low, high)


def _smoothing(instance, attribute, value):
    if not (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0):
        raise ValueError(f"smoothing must be a finite number >= 0, got {value!r}")


def rankboost_alpha(r: float, smoothing: float = 0.0) -> float:
    """alpha = 1/2 ln((1 + r + s) / (1 - r + s)), s = max(smoothing, 1e-15) (Yoder 2011; s = 0
    there).

    Minimises the bound Z <= (1-r)/2 e^alpha + (1+r)/2 e^{-alpha} of Freund et al. (2003), which
    then gives Z <= sqrt(1 - r^2).
    """
    s = max(float(smoothing), _SMOOTHING_FLOOR)
    return 0.5 * math.log((1.0 + r + s) / (1.0 - r + s))


@attrs.define
class RankBoostAlpha(boostkit.Calibration):
    """RankBoost's alpha_t = 1/2 ln((1 + r_t) / (1 - r_t)) (Yoder 2011, "Bounds and alpha").

    r_t = sum_{x0,x1} D_t(x0,x1) (h~(x1) - h~(x0)) with h~ = (h - lo)/(hi - lo) in [0, 1], computed
    in O(n) from the per-class weighted sums of h (the factorised pair distribution: the
    reweighting gives each example the total D_t-weight of its pairs, class by class, see
    :func:`boostkit_rankboost.kernels.bipartite_weights`). The contribution is
    alpha_t h~(x) = alpha_t h(x) / (hi - lo) + const; the constant moves every score alike, so it
    is dropped: it changes neither the ranking nor D. Hence c_t(x) = alpha_t h(x) for rankers in
    [0, 1] and alpha_t h(x) / 2 for +-1 stumps.

    Parameters
    ----------
    score_range:
        ``(lo, hi)``, the range of the weak ranker's scores. ``None`` (default): the range the
        proposal declares in ``Candidate.info["score_range"]`` (this plugin's learners do). Scores
        outside the range are refused.
    smoothing:
        s in 1/2 ln((1 + r + s)/(1 - r + s)); 0 (default) is the slides' formula, floored at 1e-15
        so that a perfect ranker (r = 1) gets a finite coefficient.

    The partition loss offered to weak learners is -r of the best labelling of each partition
    (:func:`rank_advantage`), so a stump learner picks the stump with the largest |r|. The record
    keeps ``coefficients = (alpha_t / (hi - lo),)`` and ``extra = {"r": r_t, "alpha": alpha_t}``.

    Every data plane (``"distributed"``): on a candidate without rows (a distributed fit's) the
    per-class sums of h are those of its cells, sum_j W_j h_j, from the cell sums and the
    ranker's score per cell (``cell_score_table``), and each shard applies alpha h per cell.
    """

    name = "rankboost-alpha"
    score_range: tuple[float, float] | None = attrs.field(default=None, converter=_score_range)
    smoothing: float = attrs.field(default=0.0, validator=_smoothing)

    @property
    def needs(self) -> frozenset[str]:
        return frozenset({"real-scores"} if self.score_range else {"real-scores", "score-range"})

    provides = frozenset({"running-margin", "rank-advantage", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return -rank_advantage(wpos, wneg)

    def _range(self, candidate) -> tuple[float, float]:
        if self.score_range is not None:
            return self.score_range
        declared = candidate.info.get("score_range")
        if declared is None:
            raise ValueError(
                f"{self.name} needs the range of the weak ranker's scores, and the proposal of "
                f"{candidate.hypothesis.name!r} declares none (Candidate.info['score_range']); "
                "set the calibration's score_range, e.g. (-1, 1) for +-1 stumps or (0, 1)"
            )
        return _score_range(declared)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        low, high = self._range(candidate)
        if candidate.has_rows:
            h = np.ascontiguousarray(candidate.scores, dtype=np.float64)
            neg_sum, neg_total, pos_sum, pos_total, h_min, h_max = class_score_sums(
                h, state.weights, state.data.is_pos
            )
        else:
            h = None
            neg_sum, neg_total, pos_sum, pos_total, h_min, h_max = _cell_score_sums(
                state, candidate, self.name)
        width = high - low
        if h_min < low - _RANGE_TOLERANCE * width or h_max > high + _RANGE_TOLERANCE * width:
            raise ValueError(
                f"{self.name}: the weak ranker's scores span [{h_min:g}, {h_max:g}], outside its "
                f"score_range [{low:g}, {high:g}]"
            )
        if neg_total <= 0 or pos_total <= 0:
            raise ValueError(f"{self.name}: r needs weight on both classes (x0 and x1)")
        # sum_{x0,x1} v(x0) v(x1) (h(x1) - h(x0)) = E_v[h | x1] - E_v[h | x0]: O(n), no pairs.
        r = (pos_sum / pos_total - neg_sum / neg_total) / width
        r = min(max(r, -1.0), 1.0)  # rounding only
        alpha = rankboost_alpha(r, self.smoothing)
        coefficient = alpha / width
        return boostkit.Calibrated(
            boostkit.LinearContribution(coefficient), None if h is None else coefficient * h,
            (coefficient,), extra={"r": r, "alpha": alpha},
        )


def _cell_score_sums(state, candidate, name: str) -> tuple[float, ...]:
    """What :func:`boostkit_rankboost.kernels.class_score_sums` gives over the rows, from the
    candidate's cell sums: ``(sum_neg w h, W_neg, sum_pos w h, W_pos, min h, max h)``, the
    range over the cells that hold weight."""
    scores = candidate.hypothesis.cell_score_table()
    if scores is None:
        raise ValueError(
            f"{name}: a candidate without rows needs a weak ranker with a score per cell "
            f"(cell_score_table), and {candidate.hypothesis.name!r} has none"
        )
    scores = np.asarray(scores, dtype=np.float64)
    wneg, wpos = state.cell_weights(candidate)
    held = scores[(wneg + wpos) > 0]
    return (float(wneg @ scores), float(wneg.sum()), float(wpos @ scores), float(wpos.sum()),
            float(held.min(initial=np.inf)), float(held.max(initial=-np.inf)))

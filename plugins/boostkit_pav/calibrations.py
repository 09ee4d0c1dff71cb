"""Calibrations: PAV (Wilbur et al. 2005, section 3.2, 5) and the sigmoid (eq. 52-53).

Both can *back-fit* (Wilbur et al. 2005, section 3.3, PAV-AdaBoost.finite): when the proposal cycles
through a fixed set of scoring functions (it names each in ``candidate.info["scoring_function"]``),
the term of a function seen before is re-fitted from the weights of all the other terms (eq. 22-23)
and replaces the old one (``boostkit.Calibrated(replaces=..., removed_values=...)``).
"""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.criteria import weighted_error, z_loss
from boostkit.kernels.boosting import exponential_weights, take_cells
from boostkit.kernels.histogram import cell_class_sums
from boostkit.smoothing import n_examples

from .contributions import AffineScore, IsotonicSteps, ScoreBins
from .isotonic import INTERPOLATIONS, bound_probabilities, half_log_odds, isotonic_bins, isotonic_regression
from .kernels import partition_scores, quantile_edges

__all__ = ["ExponentialLossSums", "PavCalibration", "ScoreRange", "SigmoidCalibration",
           "TargetClassSums", "TargetRows", "TermExcludedCellSums", "minimise_exponential_loss",
           "minimise_exponential_loss_by_reductions", "resolve_epsilon", "score_thresholds"]

# Bin edges of a new hypothesis' scores come from at most this many training examples.
THRESHOLD_SAMPLE = 20_000


def _epsilon(instance, attribute, value):
    if value is not None and not (
        isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 < value < 0.5
    ):
        raise ValueError(f"{attribute.name} must be None (1/m) or a number in (0, 1/2), got {value!r}")


def _bins(instance, attribute, value):
    if value is not None and not (
        isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 2 <= value <= 255
    ):
        raise ValueError(f"bins must be None (exact PAV) or an integer in [2, 255], got {value!r}")


def _interpolation(instance, attribute, value):
    if value not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got {value!r}")


def resolve_epsilon(epsilon: float | None, n_samples: float) -> float:
    """The epsilon actually used: 1/m for ``None`` (Wilbur et al. 2005, section 3.2, after Schapire
    & Singer).

    m = ``n_samples`` counts examples by weight (:func:`boostkit.smoothing.n_examples`), so that
    an example of weight 2 is two examples. With one example (m = 1) 1/m is not below 1/2, so it
    is capped just under 1/2.
    """
    return min(1.0 / n_samples, 0.5 - 1e-12) if epsilon is None else float(epsilon)


def _threshold_sample(scores: np.ndarray, sample_weight: np.ndarray,
                      rng: np.random.Generator) -> np.ndarray | None:
    """The rows of the threshold sample of :func:`score_thresholds`; ``None`` when that is every
    row (all of positive initial weight, at most ``THRESHOLD_SAMPLE``)."""
    if scores.shape[0] <= THRESHOLD_SAMPLE and (scores.shape[0] == 0 or sample_weight.min() > 0):
        return None  # the common case, known without listing the rows
    rows = np.flatnonzero(sample_weight > 0)
    if rows.shape[0] > THRESHOLD_SAMPLE:
        return rng.choice(rows, THRESHOLD_SAMPLE, replace=False)
    return None if rows.shape[0] == scores.shape[0] else rows


def score_thresholds(scores: np.ndarray, sample_weight: np.ndarray, bins: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Quantile bin edges for a hypothesis' scores: its partition B_t (Wilbur et al. 2005,
    section 5, eq. 39).

    The paper asks for partitions fixed independently of the sample's weights D_t; these are cut
    at quantiles of the scores of the examples of positive initial weight D_1 (every distinct
    score its own bin when there are at most ``bins``), found on a seeded sample of at most
    ``THRESHOLD_SAMPLE`` of them: the edges ``boostkit.data.bin_features`` gives that sample
    (NaN scores left out; the engine's rule, ``boostkit.kernels.binning.quantile_thresholds``),
    from the few sample values the cuts fall between
    (:func:`~boostkit_pav.kernels.quantile_neighbours`, a bucket sort of only the buckets that
    hold them), so that binning costs O(n) and never a sort of all n.
    """
    rows = _threshold_sample(scores, sample_weight, rng)
    out = np.empty(bins - 1)
    return out[: quantile_edges(scores if rows is None else scores[rows], bins, out)]


def _score_bin_sums(scores, weights, is_pos, sample_weight, bins, rng):
    """``(thresholds, cells, wneg, wpos)``: a new hypothesis' partition (:func:`score_thresholds`),
    the bin of every example (a missing score in bin 0) and the weight of each class per bin,
    all from one call of :func:`~boostkit_pav.kernels.partition_scores`."""
    rows = _threshold_sample(scores, sample_weight, rng)
    thresholds = np.empty(bins - 1)
    cells = np.empty(scores.shape[0], dtype=np.uint8)
    sums = np.zeros((bins, 2))
    n = partition_scores(scores if rows is None else scores[rows], bins, scores, weights, is_pos,
                         thresholds, cells, sums)
    return thresholds[:n], cells, sums[: n + 1, 0], sums[: n + 1, 1]


class _TermIndex:
    """Which term of the model each fixed scoring function owns (for back-fitting)."""

    def __init__(self) -> None:
        self._terms: dict = {}

    def index(self, state, candidate) -> int | None:
        """The term the candidate's scoring function owns, or ``None`` for a function not seen
        before (which then owns the term this round adds)."""
        key = candidate.info.get("scoring_function")
        if key is None:
            raise ValueError(
                "back-fitting needs a proposal that cycles through fixed scoring functions and "
                "names each in candidate.info['scoring_function'] (e.g. 'score-columns')"
            )
        index = self._terms.get(key)
        if index is None:
            self._terms[key] = len(state.contributions)
        return index

    def target(self, state, candidate):
        """``(replaces, removed_values, weights)`` for fitting the candidate's term.

        A function seen before is re-fitted from D_i = q_i exp(y_i k_j(h_j(x_i))) / Z_0
        (Wilbur et al. 2005, eq. 22-23), the exponential weights of the margins without its current
        term; a new one from the current weights D_t. Either way the fitted term minimises the sum
        (20) given the others.
        """
        index = self.index(state, candidate)
        if index is None:
            return None, None, state.weights
        removed = state.contributions[index].values(candidate, state.margin)
        weights = np.empty(state.data.n_samples)
        exponential_weights(state.margin - removed, state.data.y, state.data.sample_weight, weights)
        return index, removed, weights


@attrs.frozen
class TermExcludedCellSums:
    """A reduction over rows (``state.reduce``): the weight of the negative and of the positive
    examples in each cell of ``bin_cells`` under D_t(i) exp(y_i c_j(x_i)), c_j the term being
    re-fitted (its value ``old_values`` per cell of the same cells): the distribution of the
    margins without that term (Wilbur et al. 2005, eq. 22-23) up to its normaliser, which PAV
    does not read. |c_j| is bounded by the calibration's epsilon, so nothing overflows."""

    bin_cells: boostkit.BinCells
    old_values: np.ndarray = attrs.field(eq=False)

    def __call__(self, rows):
        cells = self.bin_cells.cells(rows.codes)
        weights = rows.weights * np.exp(rows.y * self.old_values[cells])
        return cell_class_sums(cells, weights, rows.is_pos, self.old_values.shape[0])


class _BackFitting:
    """What the PAV and sigmoid calibrations share for ``backfit`` (Wilbur et al. 2005,
    section 3.3): the index of the term each scoring function owns, reset every fit, and the
    capabilities it changes."""

    __slots__ = ()

    @property
    def needs(self) -> frozenset[str]:
        return frozenset({"real-scores", "scoring-functions"} if self.backfit else {"real-scores"})

    @property
    def provides(self) -> frozenset[str]:
        # Back-fitting re-fits earlier terms, so the running margin of terms added in order is gone.
        return frozenset() if self.backfit else frozenset({"running-margin"})

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        self._terms = _TermIndex()

    def _target(self, state, candidate):
        """``(replaces, removed_values, weights)`` of this round's term (see :class:`_TermIndex`)."""
        return self._terms.target(state, candidate) if self.backfit else (None, None, state.weights)

    def _cell_target(self, state, candidate):
        """``(replaces, (wneg, wpos))`` of this round's term on a candidate without rows: the
        class sums per cell that fit it, the candidate's own (D_t) for a new term, or those of
        the distribution without the term it re-fits (:class:`TermExcludedCellSums`)."""
        index = self._terms.index(state, candidate) if self.backfit else None
        if index is None:
            return None, state.cell_weights(candidate)
        old_values = state.contributions[index].cell_table(state.hypotheses[index])
        if old_values is None:
            raise ValueError(f"the term {index} to re-fit ({state.contributions[index].name!r}) "
                             "has no value per cell, which a fit without rows needs")
        sums = state.reduce(TermExcludedCellSums(candidate.bin_cells,
                                                 np.asarray(old_values, dtype=np.float64)))
        return index, sums


@attrs.define
class PavCalibration(_BackFitting, boostkit.Calibration):
    """PAV-AdaBoost's calibration k_t = 1/2 ln(p_t / (1 - p_t)) (Wilbur et al. 2005, eq. 13-18,
    section 5).

    PAV turns the tuples (s_i = h_t(x_i), D_t(i), (1 + y_i)/2) (eq. 13) into the non-decreasing
    p_t of maximal likelihood; among all non-decreasing functions of h_t, k_t gives the smallest
    Z_t (Theorem 2). p_t is bounded away from 0 and 1 by epsilon, which truncates k_t at
    1/2 ln((1 - epsilon)/epsilon); among non-decreasing functions bounded so, it is again the
    best (eq. 18, Corollary 1). (The paper writes the bound as lambda = ln((1 - eps)/eps): with
    the 1/2 of eq. 14, bounding p by epsilon bounds k by lambda/2. We keep the paper's practice,
    bounding p, and state the bound it implies.)

    Parameters
    ----------
    epsilon:
        The bound on p_t; ``None`` (default) is 1/m, the reciprocal of the training set size.
    bins:
        The approximate form of section 5 (default, as in the paper's experiments): PAV over an
        ordered partition of the score's range, O(n + bins) per round with no sort. A hypothesis
        with ``ordered_cells`` (its cells are bins of its score, e.g. ``score-column``) brings its
        own partition; any other hypothesis' training scores are cut into at most ``bins``
        quantile bins (:func:`score_thresholds`). ``None``: the pure form, PAV over every
        distinct training score (one sort per round), interpolated by 2.2 between them.
    interpolation:
        ``"midpoint"`` (Wilbur et al. 2005, section 2.2, case 3) or ``"linear"``, for scores between
        training scores (pure form) or for bins that hold no weight (approximate form).
    backfit:
        Re-fit the term of a scoring function seen before instead of adding one (Wilbur et al. 2005,
        section 3.3, PAV-AdaBoost.finite).

    The binned form runs on every data plane for hypotheses whose cells are bins of their score
    (``ordered_cells``): without rows (a distributed fit) it reads the class sums of the cells
    (``state.cell_weights``, or for a term it re-fits, the reduction
    :class:`TermExcludedCellSums`) and gives a value per cell. Quantile bins of another
    hypothesis' scores, and the pure form, need every training score at once, and are refused
    there.

    The round record's ``coefficients`` are the lowest and highest k_t on the training examples,
    and ``extra["pools"]`` the number of steps of k_t.
    """

    name = "pav"
    epsilon: float | None = attrs.field(default=None, validator=_epsilon)
    bins: int | None = attrs.field(default=255, validator=_bins)
    interpolation: str = attrs.field(default="midpoint", validator=_interpolation)
    backfit: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    _terms: _TermIndex = attrs.field(init=False, factory=_TermIndex)

    @property
    def provides(self) -> frozenset[str]:
        # The binned form works from cell sums on ordered cells: on every data plane.
        return super().provides | ({DISTRIBUTED} if self.bins is not None else frozenset())

    @property
    def distributed_refusal(self) -> str | None:
        if self.bins is not None:
            return None
        return ("in its pure form (bins=None) pools every distinct training score, a sort of "
                "all the rows' scores every round; its binned form (bins, the default) runs from "
                "the cells' sums")

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        # On a partition whose cells the hypothesis orders consistently with their values, PAV
        # reaches Schapire-Singer's per-cell optimum (eq. 12).
        return z_loss(wpos, wneg)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        if not candidate.has_rows:
            return self._calibrate_cells(state, candidate)
        replaces, removed, weights = self._target(state, candidate)
        epsilon = resolve_epsilon(self.epsilon, n_examples(state.data))
        hypothesis = candidate.hypothesis
        if self.bins is None:
            fit = isotonic_regression(candidate.scores, weights, state.data.is_pos)
            points, p = fit.support()
            contribution = IsotonicSteps(points, bound_probabilities(p, epsilon), self.interpolation)
            train_values = contribution.values(candidate, state.margin)
            n_pools = fit.n_pools
        else:
            if getattr(hypothesis, "ordered_cells", False):
                cells, thresholds = candidate.cells, None
                wneg, wpos = cell_class_sums(cells, weights, state.data.is_pos, hypothesis.n_cells)
            else:
                thresholds, cells, wneg, wpos = _score_bin_sums(
                    candidate.scores, weights, state.data.is_pos, state.data.sample_weight,
                    self.bins, state.rng)
            p = bound_probabilities(isotonic_bins(wpos, wneg, self.interpolation), epsilon)
            k = half_log_odds(p)
            contribution = (boostkit.CellContribution(k) if thresholds is None
                            else ScoreBins(thresholds, k))
            train_values = take_cells(k, cells)
            n_pools = int(np.count_nonzero(np.diff(k))) + 1
        return boostkit.Calibrated(
            contribution, train_values, (float(train_values.min()), float(train_values.max())),
            extra={"pools": n_pools}, replaces=replaces, removed_values=removed,
        )

    def _calibrate_cells(self, state, candidate):
        """The binned form on a candidate without rows (a distributed fit): PAV over the class
        sums of its ordered cells, k_t per cell (each shard applies the table)."""
        hypothesis = candidate.hypothesis
        if self.bins is None or not getattr(hypothesis, "ordered_cells", False):
            raise ValueError(
                f"pav (bins={self.bins!r}) got {hypothesis.name!r}, whose "
                + ("cells are not bins of its score" if self.bins is not None else "scores")
                + ", without rows: its PAV needs "
                + ("quantile bins of every training score" if self.bins is not None
                   else "every distinct training score")
                + " (an order statistic of all the rows, not a sum over them); a fit without "
                "rows needs a hypothesis with ordered cells (e.g. 'score-columns') and bins")
        replaces, (wneg, wpos) = self._cell_target(state, candidate)
        epsilon = resolve_epsilon(self.epsilon, n_examples(state.data))
        k = half_log_odds(bound_probabilities(isotonic_bins(wpos, wneg, self.interpolation),
                                              epsilon))
        # The lowest and highest k_t on the training examples: over the cells holding one.
        table = candidate.bin_cells.table
        counts = state.data.binned.bin_counts[candidate.bin_cells.feature, :table.shape[0]]
        held = k[np.unique(table[counts > 0])]
        return boostkit.Calibrated(
            boostkit.CellContribution(k), None, (float(held.min()), float(held.max())),
            extra={"pools": int(np.count_nonzero(np.diff(k))) + 1}, replaces=replaces)


def minimise_exponential_loss(scores: np.ndarray, y: np.ndarray, weights: np.ndarray,
                              smoothing: float, intercept: bool = True, tol: float = 1e-12,
                              max_iter: int = 100) -> tuple[float, float]:
    """``(slope, intercept)`` minimising Z = sum_i D(i) exp(-y_i (slope s_i + intercept)).

    This is the sigmoid fit of Wilbur et al. 2005, eq. 52-53: p(s) = 1 / (1 + e^{-(w s - b)}) used
    as p in eq. 14 gives k(s) = 1/2 (w s - b), so slope = w/2 and intercept = -b/2. With
    ``intercept=False`` (b = 0) it is linear AdaBoost's alpha = w/2 (eq. 9). Four phantom examples
    of weight ``smoothing``, one of each label at the lowest and at the highest score, keep the
    optimum finite when the data are separable (the role of Schapire & Singer's smoothing). Z is
    then strictly convex; damped Newton steps (Armijo backtracking) on the scores rescaled to
    [-1, 1] converge; they stop when the next step would move the coefficients by at most ``tol``
    (so an optimum at 0, as in Wilbur et al. 2005, Table 2, stays exactly 0).
    """
    # The score range of the examples of positive weight: one of weight 0 is no example.
    weighted = scores[weights > 0]
    lo, hi = float(weighted.min()), float(weighted.max())
    center, scale = _score_frame(lo, hi, intercept)
    if scale == 0.0:
        return _constant_score_fit(weights[y > 0].sum(), weights[y < 0].sum(), smoothing,
                                   intercept)
    u = (np.concatenate((scores, [lo, lo, hi, hi])) - center) / scale
    labels = np.concatenate((y, [1.0, -1.0, 1.0, -1.0]))
    w = np.concatenate((weights, np.full(4, smoothing)))
    design = np.column_stack((u, np.ones_like(u))) if intercept else u[:, None]
    signed = design * labels[:, None]

    def loss(theta):
        with np.errstate(over="ignore"):
            return float(w @ np.exp(-(signed @ theta)))

    def moments(theta):
        e = w * np.exp(-(signed @ theta))
        return float(e.sum()), -(signed.T @ e), (design * e[:, None]).T @ design

    theta = _damped_newton(moments, loss, design.shape[1], tol, max_iter)
    slope = theta[0] / scale
    return slope, (theta[1] - slope * center) if intercept else 0.0


def _score_frame(lo: float, hi: float, intercept: bool) -> tuple[float, float]:
    """``(center, scale)`` that map the score range [lo, hi] onto [-1, 1] (center 0 without an
    intercept, so the slope alone scales)."""
    center = 0.5 * (lo + hi) if intercept else 0.0
    return center, max(abs(hi - center), abs(lo - center))


def _constant_score_fit(wpos, wneg, smoothing: float, intercept: bool) -> tuple[float, float]:
    """The fit on a constant score, whose classes weigh ``wpos`` and ``wneg``: only the
    intercept can move (with the phantom examples' weight)."""
    if not intercept:
        return 0.0, 0.0
    return 0.0, 0.5 * math.log((float(wpos) + 2.0 * smoothing) / (float(wneg) + 2.0 * smoothing))


def _damped_newton(moments, loss, n_params: int, tol: float, max_iter: int) -> np.ndarray:
    """The Newton iteration of :func:`minimise_exponential_loss` from theta = 0, given
    ``moments(theta)`` = (Z, its gradient, its Hessian) and ``loss(theta)`` = Z."""
    theta = np.zeros(n_params)
    for _ in range(max_iter):
        value, gradient, hessian = moments(theta)
        step = np.linalg.solve(hessian, -gradient)
        if np.abs(step).max() <= tol:  # converged; a rounding-sized step would only add noise
            break
        decrease = float(-(gradient @ step))  # the Newton decrement squared
        t = 1.0
        # Near the optimum the loss no longer resolves the decrease: take the full Newton step
        # (quadratic convergence), else backtrack until the decrease is sufficient (Armijo).
        if decrease > 1e-12 * value:
            while loss(theta + t * step) > value - 0.25 * t * decrease and t > 1e-12:
                t *= 0.5
        theta = theta + t * step
    return theta


@attrs.frozen
class TargetRows:
    """The scores and the weights a calibration fits a term to, on some rows, for fits from
    reductions: ``hypothesis``'s scores of the rows' raw values, and D_t, or for a term it
    re-fits (``removed_hypothesis`` and ``removed_contribution``), D_t(i) exp(y_i c_j(x_i)), the
    weights of the margins without it (Wilbur et al. 2005, eq. 22-23). In log scale: the
    weights are exp(log w - ``top``) / ``total``, normalised once ``top`` and ``total`` are known.
    """

    hypothesis: boostkit.WeakHypothesis
    removed_hypothesis: boostkit.WeakHypothesis | None = None
    removed_contribution: boostkit.Contribution | None = None
    top: float = 0.0
    total: float = 1.0

    def scores(self, rows) -> np.ndarray:
        return np.asarray(self.hypothesis.scores(rows.X), dtype=np.float64)

    def log_weights(self, rows) -> np.ndarray:
        with np.errstate(divide="ignore"):
            log_w = np.log(rows.weights)
        if self.removed_contribution is None:
            return log_w
        old = self.removed_contribution.values(
            boostkit.Candidate(self.removed_hypothesis, rows.X), rows.margin)
        return log_w + rows.y * old

    def weights(self, rows) -> np.ndarray:
        return np.exp(self.log_weights(rows) - self.top) / self.total


@attrs.frozen
class ScoreRange:
    """A reduction: ``(-lo, hi, top)``, the least and greatest score and the greatest log
    weight over the rows of positive weight, combined over the parts of the rows by their
    maximum (``-inf`` for rows without weight)."""

    target: TargetRows

    def __call__(self, rows):
        scores, log_w = self.target.scores(rows), self.target.log_weights(rows)
        kept = log_w > -np.inf
        if not kept.any():
            return np.full(3, -np.inf)
        return np.array([-scores[kept].min(), scores[kept].max(), log_w[kept].max()])

    @staticmethod
    def combine(answers):
        return np.max(answers, axis=0)


@attrs.frozen
class TargetClassSums:
    """A reduction: the target weights of the negative and of the positive examples."""

    target: TargetRows

    def __call__(self, rows):
        w = self.target.weights(rows)
        return np.array([w[rows.y < 0].sum(), w[rows.y > 0].sum()])


@attrs.frozen
class ExponentialLossSums:
    """A reduction: the sums over the rows of e_i = w_i exp(-y_i (theta_0 u_i + theta_1)), u the
    scores mapped by ``center`` and ``scale``, that make Z, its gradient and its Hessian:
    ``(sum e, sum y u e, sum y e, sum u^2 e, sum u e)``."""

    target: TargetRows
    center: float
    scale: float
    theta: tuple

    def __call__(self, rows):
        u = (self.target.scores(rows) - self.center) / self.scale
        y = rows.y
        offset = self.theta[1] if len(self.theta) > 1 else 0.0
        with np.errstate(over="ignore"):
            e = self.target.weights(rows) * np.exp(-y * (self.theta[0] * u + offset))
        return np.array([e.sum(), (y * u * e).sum(), (y * e).sum(), (u * u * e).sum(),
                         (u * e).sum()])


def minimise_exponential_loss_by_reductions(reduce, target: TargetRows, smoothing: float,
                                            intercept: bool = True, tol: float = 1e-12,
                                            max_iter: int = 100) -> tuple[float, float]:
    """:func:`minimise_exponential_loss` on rows that live elsewhere: the score range, the
    weights' normaliser and every Newton step's sums from reductions (``reduce``, a data
    plane's ``state.reduce``) over ``target``'s rows, the four phantom examples added here."""
    neg_lo, hi, top = reduce(ScoreRange(target))
    wneg, wpos = reduce(TargetClassSums(attrs.evolve(target, top=top)))
    target = attrs.evolve(target, top=top, total=wneg + wpos)
    lo = -neg_lo
    center, scale = _score_frame(lo, hi, intercept)
    if scale == 0.0:
        return _constant_score_fit(wpos / (wneg + wpos), wneg / (wneg + wpos), smoothing,
                                   intercept)
    u = (np.array([lo, lo, hi, hi]) - center) / scale
    labels = np.array([1.0, -1.0, 1.0, -1.0])

    def moments(theta):
        offset = theta[1] if intercept else 0.0
        with np.errstate(over="ignore"):
            e = smoothing * np.exp(-labels * (theta[0] * u + offset))
        sums = reduce(ExponentialLossSums(target, center, scale, tuple(map(float, theta))))
        value = float(sums[0] + e.sum())
        g_slope, h_slope = sums[1] + (labels * u * e).sum(), sums[3] + (u * u * e).sum()
        if not intercept:
            return value, -np.array([g_slope]), np.array([[h_slope]])
        cross = sums[4] + (u * e).sum()
        return (value, -np.array([g_slope, sums[2] + (labels * e).sum()]),
                np.array([[h_slope, cross], [cross, value]]))

    theta = _damped_newton(moments, lambda theta: moments(theta)[0], 2 if intercept else 1,
                           tol, max_iter)
    slope = theta[0] / scale
    return slope, (theta[1] - slope * center) if intercept else 0.0


@attrs.define
class SigmoidCalibration(_BackFitting, boostkit.Calibration):
    """Optimal linear AdaBoost: k(s) = 1/2 (w s - b) with w and b minimising Z (Wilbur et al. 2005,
    eq. 52-53).

    With ``intercept=False`` (b = 0) this is the linear form of AdaBoost, alpha = w/2
    (eq. 9, Wilbur et al. 2005, section 3.1), and the contribution is the engine's
    ``boostkit.LinearContribution``. ``smoothing`` is the weight of four phantom examples that keep
    the optimum finite (:func:`minimise_exponential_loss`); ``None`` is 1/m. ``backfit`` re-fits the
    term of a fixed scoring function seen before (Wilbur et al. 2005, section 3.3; section 4's
    linear comparison, "repeated application of the algorithm to the same limited set of scores
    until convergence").
    """

    name = "sigmoid"
    #: Without rows (a distributed fit) the scores are found from the rows' raw values.
    reads_values = True
    intercept: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    smoothing: float | None = attrs.field(default=None, validator=_epsilon)
    backfit: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    _terms: _TermIndex = attrs.field(init=False, factory=_TermIndex)

    @property
    def provides(self) -> frozenset[str]:
        # Without rows, the fit's sums come from reductions over the rows' raw values.
        return super().provides | {DISTRIBUTED}

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return z_loss(wpos, wneg) if self.intercept else weighted_error(wpos, wneg)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        if not candidate.has_rows:
            return self._calibrate_by_reductions(state, candidate)
        replaces, removed, weights = self._target(state, candidate)
        smoothing = resolve_epsilon(self.smoothing, n_examples(state.data))
        slope, intercept = minimise_exponential_loss(
            candidate.scores, state.data.y, weights, smoothing, self.intercept
        )
        contribution, coefficients = self._contribution(slope, intercept)
        return boostkit.Calibrated(
            contribution, contribution.values(candidate, state.margin), coefficients,
            replaces=replaces, removed_values=removed,
        )

    def _contribution(self, slope: float, intercept: float):
        if self.intercept:
            return AffineScore(slope, intercept), (slope, intercept)
        return boostkit.LinearContribution(slope), (slope,)

    def _calibrate_by_reductions(self, state, candidate):
        """The fit on a candidate without rows (a distributed fit): its sums from reductions
        over the rows' raw values (:func:`minimise_exponential_loss_by_reductions`), the shards
        evaluating the contribution on them."""
        index = self._terms.index(state, candidate) if self.backfit else None
        target = (TargetRows(candidate.hypothesis) if index is None else
                  TargetRows(candidate.hypothesis, state.hypotheses[index],
                             state.contributions[index]))
        smoothing = resolve_epsilon(self.smoothing, n_examples(state.data))
        contribution, coefficients = self._contribution(*minimise_exponential_loss_by_reductions(
            state.reduce, target, smoothing, self.intercept))
        return boostkit.Calibrated(contribution, None, coefficients, replaces=index)

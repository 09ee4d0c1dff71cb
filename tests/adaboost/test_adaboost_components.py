"""Hand-computed tests of the math of every boostkit_adaboost component and of the split search.

Components are driven directly on a real :class:`boostkit.BoostState` (what the engine hands
them) or through :class:`boostkit.Booster` with one or two rounds. Expected values are worked out
by hand in the comments. Papers: Wilbur et al. 2005, section 3.1 (eq. 6-12), Scholz 2006, Fig. 2.
"""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest

import boostkit
from boostkit.criteria import CRITERIA, entropy, gini, weighted_error, z_loss
from boostkit.data import TrainingData
from boostkit.splits import best_split, histogram, valid_splits
from boostkit_adaboost import (
    ConstantAlpha,
    DomainPartition,
    ExponentialReweighting,
    NewtonAlpha,
    NoEdge,
    Stump,
    StumpLearner,
)


def _state(X, y, *, weights=None, margin=None, sample_weight=None) -> boostkit.BoostState:
    """A BoostState as the engine builds it (no hook relay: components under test need none)."""
    data = TrainingData(np.asarray(X, dtype=np.float64), np.asarray(y), sample_weight)
    n = data.n_samples
    return boostkit.BoostState(
        data=data,
        weights=data.sample_weight.copy() if weights is None else np.asarray(weights, dtype=np.float64),
        margin=np.zeros(n) if margin is None else np.asarray(margin, dtype=np.float64),
        n_rounds=1,
        rng=np.random.default_rng(0),
        hook=None,
        n_jobs=1,
    )


def _candidate(scores, cells=None) -> boostkit.Candidate:
    """A two-cell stump candidate carrying the given training output."""
    stump = Stump(0, 0.5, [-1.0, 1.0])
    return boostkit.Candidate(
        stump,
        scores=np.asarray(scores, dtype=np.float64),
        cells=None if cells is None else np.asarray(cells, dtype=np.intp),
    )


@attrs.frozen
class _RealScore(boostkit.WeakHypothesis):
    """h(x) = x[0]: real scores, no partition (n_cells = 0)."""

    name = "test-real-score"

    def scores(self, X):
        return X[:, 0].copy()


# Four examples, y = (+1, +1, +1, -1), D_t = (0.1, 0.2, 0.3, 0.4).
Y4 = np.array([1.0, 1.0, 1.0, -1.0])
D4 = np.array([0.1, 0.2, 0.3, 0.4])
X4 = np.zeros((4, 1))


# -- ConstantAlpha (Scholz 2006, Fig. 2; Wilbur et al. 2005, section 3.1) --------------------------

def test_constant_alpha_is_half_log_odds_of_the_weighted_error():
    # h wrong only on example 2 (weight 0.3): eps = 0.3, alpha = 1/2 ln(0.7/0.3) = 1/2 ln(7/3).
    h = np.array([1.0, 1.0, -1.0, -1.0])
    out = ConstantAlpha().boostkit_calibrate(state=_state(X4, Y4, weights=D4), candidate=_candidate(h))
    alpha = 0.5 * math.log(7.0 / 3.0)
    assert out.coefficients == pytest.approx((alpha,), rel=1e-14)
    assert np.allclose(out.train_values, alpha * h, rtol=1e-14, atol=0)
    assert out.contribution.alpha == pytest.approx(alpha, rel=1e-14)


def test_constant_alpha_default_smoothing_none_is_one_over_m():
    # s = 1/m = 1/4: alpha = 1/2 ln((1 - 0.3 + 0.25)/(0.3 + 0.25)) = 1/2 ln(0.95/0.55) = 1/2 ln(19/11).
    h = np.array([1.0, 1.0, -1.0, -1.0])
    out = ConstantAlpha(smoothing=None).boostkit_calibrate(
        state=_state(X4, Y4, weights=D4), candidate=_candidate(h)
    )
    assert out.coefficients[0] == pytest.approx(0.5 * math.log(19.0 / 11.0), rel=1e-14)


def test_constant_alpha_of_a_perfect_hypothesis_is_finite():
    # eps = 0 and s = 0 is floored at 1e-15: alpha = 1/2 ln((1 + 1e-15)/1e-15) ~ 17.269.
    out = ConstantAlpha(smoothing=0.0).boostkit_calibrate(
        state=_state(X4, Y4, weights=D4), candidate=_candidate(Y4)
    )
    assert out.coefficients[0] == pytest.approx(0.5 * math.log(1e15), rel=1e-12)
    assert 17.26 < out.coefficients[0] < 17.28


def test_constant_alpha_refuses_scores_other_than_plus_minus_one():
    with pytest.raises(ValueError, match=r"values in \{-1, \+1\}.*newton-alpha"):
        ConstantAlpha().boostkit_calibrate(
            state=_state(X4, Y4, weights=D4), candidate=_candidate([1.0, 0.5, -1.0, -1.0])
        )


def test_constant_alpha_from_the_cells_is_the_scores_path_bit_for_bit():
    # The stump's cells (1, 1, 0, 0) with cell scores (-1, +1) are h = (+1, +1, -1, -1): eps = 0.3.
    state = _state(X4, Y4, weights=D4)
    stump = Stump(0, 0.5, [-1.0, 1.0])
    on_cells = boostkit.Candidate(stump, cells=np.array([1, 1, 0, 0], dtype=np.uint8))
    on_scores = boostkit.Candidate(stump, scores=np.array([1.0, 1.0, -1.0, -1.0]))
    from_cells = ConstantAlpha().boostkit_calibrate(state=state, candidate=on_cells)
    from_scores = ConstantAlpha().boostkit_calibrate(state=state, candidate=on_scores)
    assert from_cells.coefficients == from_scores.coefficients
    assert from_cells.coefficients[0] == pytest.approx(0.5 * math.log(7.0 / 3.0), rel=1e-14)
    assert from_cells.train_values.tobytes() == from_scores.train_values.tobytes()


def test_constant_alpha_from_the_cells_refuses_cells_outside_the_hypothesis():
    state = _state(X4, Y4, weights=D4)
    candidate = boostkit.Candidate(Stump(0, 0.5, [-1.0, 1.0]), cells=np.array([0, 1, 2, 0]))
    with pytest.raises(ValueError, match=r"1 cell\(s\) outside its 2 cells"):
        ConstantAlpha().boostkit_calibrate(state=state, candidate=candidate)
    half = boostkit.Candidate(Stump(0, 0.5, [-1.0, 0.5]), cells=np.array([0, 1, 1, 0]))
    with pytest.raises(ValueError, match=r"values in \{-1, \+1\}"):
        ConstantAlpha().boostkit_calibrate(state=state, candidate=half)


# -- NewtonAlpha (Wilbur et al. 2005, section 3.1, eq. 6 and 9) ------------------------------------

# For a perfect (or all-wrong) hypothesis with s = 0 (floored at 1e-15) the curvature at the
# optimum is only Z'' ~ 6e-8, so these cases check that newton_alpha stops on the Newton step, not
# on |Z'|, and lands on the closed form.
def _newton_versus_constant_cases():
    for smoothing in (None, 0.0, 0.05):
        # y = (+1, +1, +1, -1), D = (0.1, 0.2, 0.3, 0.4): eps = 0.3, 0.6, 0 (perfect), 1 (all wrong)
        for h, eps in (
            ((1.0, 1.0, -1.0, -1.0), 0.3),
            ((1.0, -1.0, 1.0, 1.0), 0.6),
            ((1.0, 1.0, 1.0, -1.0), 0.0),
            ((-1.0, -1.0, -1.0, 1.0), 1.0),
        ):
            yield pytest.param(smoothing, h, id=f"s={smoothing}-eps={eps}")


@pytest.mark.parametrize(("smoothing", "h"), list(_newton_versus_constant_cases()))
def test_newton_alpha_equals_constant_alpha_on_plus_minus_one_hypotheses(smoothing, h):
    # With h in {-1, +1} the phantom examples of weight s give e^{2 alpha} = (1 - eps + s)/(eps + s).
    state = _state(X4, Y4, weights=D4)
    newton = NewtonAlpha(smoothing=smoothing).boostkit_calibrate(state=state, candidate=_candidate(h))
    constant = ConstantAlpha(smoothing=smoothing).boostkit_calibrate(state=state, candidate=_candidate(h))
    assert abs(newton.coefficients[0] - constant.coefficients[0]) <= 1e-10


def test_newton_alpha_minimises_z_for_a_real_valued_hypothesis():
    # u = y h = (0.5, 2, -1, -0.3); Z(alpha) = sum_i D(i) exp(-alpha u_i) is strictly convex with
    # Z'(0) = -sum D u = -(0.05 + 0.4 - 0.3 - 0.12) = -0.03 < 0, so its minimiser is positive.
    h = np.array([0.5, 2.0, -1.0, 0.3])
    u = Y4 * h
    alpha = NewtonAlpha(smoothing=0.0).boostkit_calibrate(
        state=_state(X4, Y4, weights=D4), candidate=_candidate(h)
    ).coefficients[0]

    def z(a):
        return np.exp(-np.multiply.outer(a, u)) @ D4

    derivative = -np.dot(D4 * u, np.exp(-alpha * u))
    assert abs(derivative) < 1e-12
    grid = np.linspace(-3.0, 3.0, 60_001)  # spacing 1e-4
    assert abs(alpha - grid[np.argmin(z(grid))]) <= 1e-4
    assert z(alpha) <= z(grid).min() + 1e-15
    assert alpha > 0


@pytest.mark.parametrize("smoothing", [None, 0.0])
def test_newton_alpha_is_finite_when_every_margin_is_positive(smoothing):
    # Unsmoothed, Z(alpha) = sum D exp(-alpha u) decreases forever when all u > 0; the phantom
    # examples of weight s (floored at 1e-15) keep the minimiser finite.
    h = np.array([0.5, 2.0, 1.0, -0.3])  # u = (0.5, 2, 1, 0.3): all positive
    alpha = NewtonAlpha(smoothing=smoothing).boostkit_calibrate(
        state=_state(X4, Y4, weights=D4), candidate=_candidate(h)
    ).coefficients[0]
    assert math.isfinite(alpha) and alpha > 0
    # beta = alpha M (M = max |u| = 2) lies in the bracket (0, ln(2/s) + 1) of newton_alpha.
    s = 0.25 if smoothing is None else 1e-15
    assert alpha * 2.0 < math.log(2.0 / s) + 1.0


# -- DomainPartition (Wilbur et al. 2005, eq. 10-12) -----------------------------------------------

# Five examples in two cells: cell 0 = {0, 1}, cell 1 = {2, 3, 4}.
Y5 = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
D5 = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
CELLS5 = np.array([0, 0, 1, 1, 1])
X5 = np.zeros((5, 1))
# W+_0 = 0.1, W-_0 = 0.2; W+_1 = 0.3 + 0.25 = 0.55, W-_1 = 0.15.


@pytest.mark.parametrize(
    ("smoothing", "expected"),
    [
        # s = 0 (floored at 1e-15): c_0 = 1/2 ln(0.1/0.2), c_1 = 1/2 ln(0.55/0.15) = 1/2 ln(11/3).
        (0.0, (0.5 * math.log(0.5), 0.5 * math.log(11.0 / 3.0))),
        # s = 1/m = 0.2: c_0 = 1/2 ln(0.3/0.4), c_1 = 1/2 ln(0.75/0.35) = 1/2 ln(15/7).
        (None, (0.5 * math.log(0.75), 0.5 * math.log(15.0 / 7.0))),
    ],
)
def test_domain_partition_cell_values_are_half_log_weight_ratios(smoothing, expected):
    out = DomainPartition(smoothing=smoothing).boostkit_calibrate(
        state=_state(X5, Y5, weights=D5), candidate=_candidate(np.where(CELLS5, 1.0, -1.0), CELLS5)
    )
    assert np.allclose(out.coefficients, expected, rtol=1e-12, atol=0)
    assert np.allclose(out.contribution.cell_values, expected, rtol=1e-12, atol=0)
    assert np.array_equal(out.train_values, out.contribution.cell_values[CELLS5])


def test_domain_partition_refuses_a_hypothesis_without_cells():
    candidate = boostkit.Candidate(_RealScore(), X5)
    with pytest.raises(ValueError, match="needs a hypothesis that partitions its input"):
        DomainPartition().boostkit_calibrate(state=_state(X5, Y5, weights=D5), candidate=candidate)


# -- ExponentialReweighting (Wilbur et al. 2005, eq. 6) --------------------------------------------

def test_exponential_weights_from_margins_and_log_potential():
    # y = (+1, -1, +1, -1), D_1 = 1/4, F = (ln 2, ln 2, 0, -ln 3):
    # exp(-y F) = (1/2, 2, 1, 1/3), sum = 23/6; weights = (3, 12, 6, 2)/23;
    # log_potential = log(1/4 * 23/6) = log(23/24).
    y = np.array([1.0, -1.0, 1.0, -1.0])
    margin = np.array([math.log(2.0), math.log(2.0), 0.0, -math.log(3.0)])
    out = ExponentialReweighting().boostkit_reweight(state=_state(np.zeros((4, 1)), y, margin=margin))
    assert np.allclose(out.weights, np.array([3.0, 12.0, 6.0, 2.0]) / 23.0, rtol=1e-14, atol=0)
    assert out.weights.sum() == pytest.approx(1.0, abs=1e-15)
    assert out.log_potential == pytest.approx(math.log(23.0 / 24.0), rel=1e-13)


def test_exponential_weights_respect_initial_weights():
    # D_1 = (1, 3)/4, y F = (0, 0): the weights stay D_1 and the potential is log 1 = 0.
    out = ExponentialReweighting().boostkit_reweight(
        state=_state(np.zeros((2, 1)), [1.0, -1.0], sample_weight=[1.0, 3.0])
    )
    assert np.allclose(out.weights, [0.25, 0.75], rtol=1e-15, atol=0)
    assert out.log_potential == pytest.approx(0.0, abs=1e-15)


def test_exponential_weights_stay_finite_for_huge_margins():
    # -y F = (-1e4, 1e4, 2e4): exp overflows in float64 unless the largest exponent (2e4) is
    # factored out: weights ~ (e^{-3e4}, e^{-1e4}, 1) = (0, 0, 1) and
    # log_potential = 2e4 + log(1/3 (1 + e^{-1e4} + e^{-3e4})) = 2e4 - ln 3.
    y = np.array([1.0, -1.0, 1.0])
    margin = np.array([1e4, 1e4, -2e4])
    out = ExponentialReweighting().boostkit_reweight(state=_state(np.zeros((3, 1)), y, margin=margin))
    assert np.isfinite(out.weights).all()
    assert np.array_equal(out.weights, [0.0, 0.0, 1.0])
    assert out.log_potential == pytest.approx(2e4 - math.log(3.0), rel=1e-15)


# -- NoEdge ---------------------------------------------------------------------------------

def _record(weighted_error: float) -> boostkit.RoundRecord:
    return boostkit.RoundRecord(
        round=1, hypothesis="h", weighted_error=weighted_error, edge=0.5 - weighted_error,
        z=None, error_bound=None, training_error=0.0, coefficients=(),
    )


@pytest.mark.parametrize(
    ("min_edge", "weighted_error", "reason"),
    [
        (0.0, 0.5, "no-edge"),        # edge 0: a coin flip
        (0.0, 0.6, "no-edge"),        # negative edge
        (0.0, 0.3, None),
        (0.1, 0.45, "no-edge"),       # edge 0.05 <= min_edge 0.1
        (0.1, 0.4, "no-edge"),        # edge exactly min_edge
        (0.1, 0.35, None),
        (0.0, 0.0, "perfect-fit"),
        (0.1, 0.0, "perfect-fit"),
    ],
)
def test_no_edge_reasons(min_edge, weighted_error, reason):
    assert NoEdge(min_edge=min_edge).boostkit_should_stop(state=None, record=_record(weighted_error)) == reason


def test_no_edge_ends_a_separable_run_with_perfect_fit():
    X = np.arange(6.0)[:, None]
    y = np.array([0, 0, 0, 1, 1, 1])
    model = boostkit.Booster("adaboost", n_rounds=10).fit(X, y)
    assert model.n_rounds == 1
    assert model.stop_reason == "perfect-fit" == model.records[-1].stop_reason
    assert model.hypotheses[0].threshold == 2.5


# -- StumpLearner -------------------------------------------------------------------------------

# Ten examples, uniform weights 0.1; positives are 0..4, negatives 5..9.
Y10 = np.array([1.0] * 5 + [-1.0] * 5)
# Feature 0 (values 1 / 3, midpoint 2): left (x <= 2) = {4, 6, 7, 8, 9}: 1 pos, 4 neg;
#   right = {0, 1, 2, 3, 5}: 4 pos, 1 neg.
#   error = 0.1 + 0.1 = 0.2; Z = 2 (sqrt(0.1 * 0.4) + sqrt(0.4 * 0.1)) = 0.8;
#   gini = 2 * 0.1 * 0.4 / 0.5 * 2 = 0.32; entropy = H(0.2) = 0.5004 nats.
# Feature 1 (values -2 / 0.5, midpoint -0.75): left = {5, 6}: 0 pos, 2 neg;
#   right = the other 8: 5 pos, 3 neg.
#   error = 0 + 0.3 = 0.3; Z = 2 sqrt(0.5 * 0.3) = 0.7746; gini = 2 * 0.5 * 0.3 / 0.8 = 0.375;
#   entropy = 0.8 H(5/8) = 0.5293.
# So "error", "gini" and "entropy" choose feature 0, "z" chooses feature 1.
X10 = np.column_stack([
    np.where(np.isin(np.arange(10), [0, 1, 2, 3, 5]), 3.0, 1.0),
    np.where(np.isin(np.arange(10), [5, 6]), -2.0, 0.5),
])


@pytest.mark.parametrize(
    ("criterion", "feature", "threshold", "wneg", "wpos"),
    [
        ("error", 0, 2.0, (0.4, 0.1), (0.1, 0.4)),
        ("gini", 0, 2.0, (0.4, 0.1), (0.1, 0.4)),
        ("entropy", 0, 2.0, (0.4, 0.1), (0.1, 0.4)),
        ("z", 1, -0.75, (0.2, 0.3), (0.0, 0.5)),
    ],
)
def test_stump_learner_picks_the_hand_computed_split(criterion, feature, threshold, wneg, wpos):
    candidate = StumpLearner(criterion=criterion).boostkit_propose(state=_state(X10, Y10))
    stump = candidate.hypothesis
    assert (stump.feature, stump.threshold) == (feature, threshold)  # the midpoint
    assert np.array_equal(stump.cell_scores, [-1.0, 1.0])  # majority of each side
    assert np.allclose(candidate.cell_wneg, wneg, rtol=1e-14, atol=1e-16)
    assert np.allclose(candidate.cell_wpos, wpos, rtol=1e-14, atol=1e-16)
    expected_cells = (X10[:, feature] > threshold).astype(np.intp)
    assert np.array_equal(candidate.cells, expected_cells)
    assert np.array_equal(stump.cells(X10), expected_cells)
    assert np.array_equal(candidate.scores, stump.scores(X10))


def test_stump_threshold_is_the_midpoint_of_neighbouring_values():
    # Sorted values 0.25, 1, 7: the split between the labels falls between 1 and 7 -> 4.0.
    X = np.array([[7.0], [0.25], [1.0], [7.0]])
    y = np.array([1.0, -1.0, -1.0, 1.0])
    stump = StumpLearner(criterion="error").boostkit_propose(state=_state(X, y)).hypothesis
    assert stump.threshold == 4.0


def test_stump_learner_proposes_the_constant_stump_when_every_feature_is_constant():
    # 3 positives and 2 negatives of weight 0.2: the constant hypothesis says +1 (W+ 0.6 > W- 0.4).
    X = np.full((5, 2), 4.0)
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0])
    candidate = StumpLearner(criterion="error").boostkit_propose(state=_state(X, y))
    stump = candidate.hypothesis
    assert np.isinf(stump.threshold)
    assert stump.cell_scores[0] == 1.0
    assert np.array_equal(candidate.cells, np.zeros(5, dtype=np.intp))
    assert np.array_equal(stump.scores(X), np.ones(5))
    assert stump.describe() == "constant +1"


@pytest.mark.parametrize(("algorithm", "feature"), [("adaboost", 0), ("real-adaboost", 1)])
def test_default_criterion_follows_the_calibration(algorithm, feature):
    # adaboost's constant-alpha scores partitions by weighted error, real-adaboost's
    # domain-partition by Z: on X10 they disagree (see the table above).
    model = boostkit.Booster(algorithm, n_rounds=1).fit(X10, Y10)
    assert model.hypotheses[0].feature == feature


def test_one_round_of_discrete_adaboost_on_the_hand_example():
    # Feature 0: eps = 0.2, alpha = 1/2 ln(0.8/0.2) = ln 2, Z = 2 sqrt(0.2 * 0.8) = 0.8;
    # the margin is +-ln 2, wrong on examples 4 and 5, so the training error is 0.2 = eps.
    record = boostkit.Booster("adaboost", n_rounds=1).fit(X10, Y10).records[0]
    assert record.coefficients == pytest.approx((math.log(2.0),), rel=1e-14)
    assert record.weighted_error == pytest.approx(0.2, abs=1e-15)
    assert record.z == pytest.approx(0.8, rel=1e-13)
    assert record.error_bound == pytest.approx(0.8, rel=1e-13)
    assert record.training_error == pytest.approx(0.2, abs=1e-15)


def test_one_round_of_real_adaboost_on_the_hand_example():
    # Feature 1 with s = 1/10: c_0 = 1/2 ln((0 + 0.1)/(0.2 + 0.1)) = -1/2 ln 3,
    # c_1 = 1/2 ln((0.5 + 0.1)/(0.3 + 0.1)) = 1/2 ln 1.5.
    # Z = 0.2 e^{c_0} + 0.5 e^{-c_1} + 0.3 e^{c_1} = 0.2/sqrt(3) + 0.5/sqrt(1.5) + 0.3 sqrt(1.5).
    model = boostkit.Booster("real-adaboost", n_rounds=1).fit(X10, Y10)
    expected = (-0.5 * math.log(3.0), 0.5 * math.log(1.5))
    assert np.allclose(model.contributions[0].cell_values, expected, rtol=1e-14, atol=0)
    z = 0.2 / math.sqrt(3.0) + 0.5 / math.sqrt(1.5) + 0.3 * math.sqrt(1.5)
    assert model.records[0].z == pytest.approx(z, rel=1e-13)


# -- Partition losses (boostkit.criteria) -------------------------------------------------------

# Two cells: W+ = (0.1, 0.4), W- = (0.3, 0.2).
WPOS = np.array([0.1, 0.4])
WNEG = np.array([0.3, 0.2])


def test_criteria_on_hand_values():
    # error: min(0.1, 0.3) + min(0.4, 0.2) = 0.3
    assert weighted_error(WPOS, WNEG) == pytest.approx(0.3, abs=1e-16)
    # Z: 2 (sqrt(0.03) + sqrt(0.08))
    assert z_loss(WPOS, WNEG) == pytest.approx(2 * (math.sqrt(0.03) + math.sqrt(0.08)), rel=1e-15)
    # gini: 2 * 0.1 * 0.3 / 0.4 + 2 * 0.4 * 0.2 / 0.6 = 0.15 + 0.8/3
    assert gini(WPOS, WNEG) == pytest.approx(0.15 + 0.8 / 3, rel=1e-15)
    # entropy: -(0.1 ln 1/4 + 0.3 ln 3/4 + 0.4 ln 2/3 + 0.2 ln 1/3)
    expected = -(0.1 * math.log(0.25) + 0.3 * math.log(0.75) + 0.4 * math.log(2 / 3) + 0.2 * math.log(1 / 3))
    assert entropy(WPOS, WNEG) == pytest.approx(expected, rel=1e-15)


def test_criteria_treat_empty_and_pure_cells_as_loss_free():
    # Cell 0 empty, cell 1 balanced (0.5 / 0.5): error 0.5, Z 1, gini 0.5, entropy ln 2.
    wpos, wneg = np.array([0.0, 0.5]), np.array([0.0, 0.5])
    with np.errstate(all="raise"):
        values = [f(wpos, wneg) for f in (weighted_error, z_loss, gini, entropy)]
    assert np.allclose(values, [0.5, 1.0, 0.5, math.log(2.0)], rtol=1e-15, atol=0)
    # A pure partition has no loss under any criterion.
    pure = [f(np.array([0.0, 0.6]), np.array([0.4, 0.0])) for f in (weighted_error, z_loss, gini, entropy)]
    assert np.array_equal(pure, [0.0, 0.0, 0.0, 0.0])


def test_criteria_reduce_only_the_last_axis():
    rng = np.random.default_rng(0)
    wpos, wneg = rng.random((4, 3, 2)), rng.random((4, 3, 2))
    for f in (weighted_error, z_loss, gini, entropy):
        out = f(wpos, wneg)
        assert out.shape == (4, 3)
        assert out[2, 1] == pytest.approx(float(f(wpos[2, 1], wneg[2, 1])), rel=1e-15)


# -- best_split against a naive loop ------------------------------------------------------------

def _naive_best_split(codes, weights, is_pos, n_bins, loss):
    """Every feature, every bin edge b (left: code <= b), both sides non-empty; strict < keeps
    the lowest feature, then the lowest edge, among equal losses."""
    best = None
    for f in range(codes.shape[0]):
        for b in range(n_bins - 1):
            left = codes[f] <= b
            if left.all() or not left.any():
                continue
            wneg = np.array([weights[left & ~is_pos].sum(), weights[~left & ~is_pos].sum()])
            wpos = np.array([weights[left & is_pos].sum(), weights[~left & is_pos].sum()])
            value = float(loss(wpos, wneg))
            if best is None or value < best[2]:
                best = (f, b, value, wneg, wpos)
    return best


@pytest.mark.parametrize("criterion", ["error", "z", "gini", "entropy"])
@pytest.mark.parametrize("seed", range(5))
def test_best_split_matches_a_naive_search(criterion, seed):
    rng = np.random.default_rng(seed)
    d, n, n_bins = 4, 40, 8
    codes = rng.integers(0, n_bins, size=(d, n)).astype(np.uint8)
    codes[1] = rng.choice([0, 3, 7], size=n)  # empty bins: equal splits, the lowest edge wins
    codes[3] = 5 if seed % 2 else codes[0]    # a constant feature, or a copy of feature 0
    weights = rng.dirichlet(np.ones(n))
    is_pos = rng.random(n) < 0.4
    loss = CRITERIA[criterion]
    hist = histogram(codes, weights, is_pos.astype(np.uint8), n_bins)
    counts = np.stack([np.bincount(row, minlength=n_bins) for row in codes])
    split = best_split(hist, valid_splits(counts), loss)
    f, b, value, wneg, wpos = _naive_best_split(codes, weights, is_pos, n_bins, loss)
    assert (split.feature, split.bin) == (f, b)
    assert split.loss == pytest.approx(value, rel=1e-12, abs=1e-15)
    assert np.allclose(split.wneg, wneg, rtol=1e-12, atol=1e-15)
    assert np.allclose(split.wpos, wpos, rtol=1e-12, atol=1e-15)


def test_best_split_breaks_exact_ties_by_lowest_feature_then_lowest_threshold():
    # Features 0 and 1 are identical; within them, edges 1 and 2 give the same partition
    # (bin 2 is empty). Every tie must go to feature 0, edge 1.
    codes = np.array([[0, 1, 3, 3], [0, 1, 3, 3], [3, 0, 1, 0]], dtype=np.uint8)
    weights = np.full(4, 0.25)
    is_pos = np.array([0, 0, 1, 1], dtype=np.uint8)
    hist = histogram(codes, weights, is_pos, 4)
    counts = np.stack([np.bincount(row, minlength=4) for row in codes])
    split = best_split(hist, valid_splits(counts), weighted_error)
    assert (split.feature, split.bin, split.loss) == (0, 1, 0.0)


def test_best_split_is_none_when_no_feature_can_be_split():
    codes = np.array([[2, 2, 2], [0, 0, 0]], dtype=np.uint8)
    hist = histogram(codes, np.full(3, 1 / 3), np.array([0, 1, 1], dtype=np.uint8), 4)
    counts = np.stack([np.bincount(row, minlength=4) for row in codes])
    assert best_split(hist, valid_splits(counts), gini) is None


# -- Five rounds of discrete AdaBoost against a naive transcription of Scholz 2006, Fig. 2 ---------

def _naive_discrete_adaboost(X, y, d1, n_rounds):
    """Scholz 2006, Fig. 2 with exhaustive stumps: lowest weighted error, majority label per side
    (ties
    -1), ties between stumps to the lowest feature then the lowest threshold (strict <)."""
    w = d1 / d1.sum()
    stumps, alphas = [], []
    for _ in range(n_rounds):
        best = None
        for j in range(X.shape[1]):
            values = np.unique(X[:, j])
            for threshold in values[:-1] / 2.0 + values[1:] / 2.0:
                left = X[:, j] <= threshold
                labels = []
                for side in (left, ~left):
                    labels.append(1.0 if w[side & (y > 0)].sum() > w[side & (y < 0)].sum() else -1.0)
                h = np.where(left, labels[0], labels[1])
                eps = w[h != y].sum()
                if best is None or eps < best[0]:
                    best = (eps, j, threshold, labels, h)
        eps, j, threshold, labels, h = best
        alpha = 0.5 * math.log((1.0 - eps) / eps)
        w = w * np.exp(-y * alpha * h)
        w = w / w.sum()
        stumps.append((j, threshold, labels))
        alphas.append(alpha)
    return stumps, np.array(alphas)


def test_five_rounds_of_discrete_adaboost_match_004_fig_2():
    rng = np.random.default_rng(7)
    n = 14
    X = rng.normal(size=(n, 3))
    X[:, 2] = X[:, 0]  # a duplicate feature: every stump on it ties with feature 0 and loses
    y = np.where(X[:, 0] + 0.8 * X[:, 1] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    d1 = rng.uniform(0.5, 2.0, size=n)  # continuous weights: no accidental ties between stumps
    model = boostkit.Booster("adaboost", n_rounds=5).fit(X, y, sample_weight=d1)
    stumps, alphas = _naive_discrete_adaboost(X, y, d1, 5)
    assert model.n_rounds == 5 and model.stop_reason == "max-rounds"
    for hypothesis, (j, threshold, labels) in zip(model.hypotheses, stumps):
        assert hypothesis.feature == j
        assert hypothesis.threshold == pytest.approx(threshold, rel=0, abs=1e-12)
        assert np.array_equal(hypothesis.cell_scores, labels)
    assert len({h.feature for h in model.hypotheses}) > 1  # the run is not one repeated stump
    assert np.allclose([c.alpha for c in model.contributions], alphas, rtol=0, atol=1e-12)
    X_new = np.vstack([X, rng.normal(size=(50, 3))])
    naive_F = sum(a * np.where(X_new[:, j] <= t, lab[0], lab[1]) for a, (j, t, lab) in zip(alphas, stumps))
    assert np.allclose(model.decision_function(X_new), naive_F, rtol=0, atol=1e-12)

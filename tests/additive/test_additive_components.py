"""Hand-computed tests of boostkit_additive: Gentle AdaBoost, LogitBoost and shrinkage.

Friedman, Hastie & Tibshirani (2000), Algorithms 3 (LogitBoost) and 4 (Gentle AdaBoost); the
components are driven directly on a :class:`boostkit.BoostState` as the engine builds it, or
through :class:`boostkit.Booster`. Expected values are worked out in the comments.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import boostkit
from boostkit.data import TrainingData
from boostkit_adaboost import Stump
from boostkit_additive import GentleStep, LogitStep, LogitStump, LogitWeights
from boostkit_additive.kernels import response_weights, working_response


def _state(X, y, *, weights=None, margin=None) -> boostkit.BoostState:
    data = TrainingData(np.asarray(X, dtype=np.float64), np.asarray(y))
    return boostkit.BoostState(
        data=data,
        weights=data.initial_weights.copy() if weights is None else np.asarray(weights, float),
        margin=np.zeros(data.y.shape) if margin is None else np.asarray(margin, float),
        n_rounds=1, rng=np.random.default_rng(0), hook=None, n_jobs=1,
    )


def _candidate(cells) -> boostkit.Candidate:
    cells = np.asarray(cells, dtype=np.intp)
    return boostkit.Candidate(Stump(0, 0.5, [-1.0, 1.0]), cells=cells,
                              scores=np.where(cells == 1, 1.0, -1.0))


# -- Gentle AdaBoost -----------------------------------------------------------------------------

def test_gentle_values_are_weighted_means_of_the_labels_per_cell():
    # Weights 0.1, 0.2, 0.3, 0.4 on labels +1, -1, +1, +1; cells 0, 0, 1, 1.
    # Cell 0: W+ = 0.1, W- = 0.2 -> c = -0.1/0.3 = -1/3. Cell 1: W+ = 0.7, W- = 0 -> c = 1.
    y, cells = [1, -1, 1, 1], [0, 0, 1, 1]
    state = _state(np.c_[cells], y, weights=[0.1, 0.2, 0.3, 0.4])
    calibrated = GentleStep().boostkit_calibrate(state, _candidate(cells))
    np.testing.assert_allclose(calibrated.contribution.cell_values, [-1 / 3, 1.0])
    np.testing.assert_allclose(calibrated.train_values, [-1 / 3, -1 / 3, 1.0, 1.0])
    assert calibrated.coefficients == pytest.approx((-1 / 3, 1.0))


def test_gentle_partition_loss_is_the_weighted_squared_error_left():
    # Cell (W+, W-) = (0.1, 0.2): c = -1/3, error 0.1 (1 + 1/3)^2 + 0.2 (1 - 1/3)^2 = 0.2667
    # = W - (W+ - W-)^2 / W = 0.3 - 0.01/0.3. Cell (0.7, 0): error 0. An empty cell adds 0.
    wpos = np.array([[0.1, 0.7], [0.0, 0.5]])
    wneg = np.array([[0.2, 0.0], [0.0, 0.5]])
    loss = GentleStep().boostkit_partition_loss(wpos, wneg, 1)
    expected0 = 0.1 * (1 + 1 / 3) ** 2 + 0.2 * (1 - 1 / 3) ** 2
    np.testing.assert_allclose(loss, [expected0, 1.0 - 0.0])
    # Several columns: the same per class, summed over cells and classes.
    wpos3, wneg3 = np.stack([wpos, wpos], -1), np.stack([wneg, wneg], -1)
    np.testing.assert_allclose(GentleStep().boostkit_partition_loss(wpos3, wneg3, 2), 2 * loss)


def test_gentle_per_class_values_with_three_classes():
    # Classes 0, 0, 1, 2, 2, 1 in cells 0, 0, 0, 1, 1, 1; every pair weighs 1/18.
    # Cell 0, class 0: W+ = 2/18, W- = 1/18 -> 1/3; class 2: W+ = 0, W- = 3/18 -> -1.
    labels, cells = np.array([0, 0, 1, 2, 2, 1]), np.array([0, 0, 0, 1, 1, 1])
    state = _state(np.c_[cells], labels)
    values = GentleStep().boostkit_calibrate(state, _candidate(cells)).contribution.cell_values
    assert values.shape == (2, 3)
    np.testing.assert_allclose(values, [[1 / 3, -1 / 3, -1.0], [-1.0, -1 / 3, 1 / 3]])


def test_gentle_adaboost_first_round_is_the_least_squares_stump():
    # Uniform weights 1/6, x = 1..6, y = -, -, -, +, +, -. Squared error W - (W+ - W-)^2 / W
    # summed over both sides, for the cuts after x = 1..5: 4/5, 2/3, 4/9, 5/6, 4/5. The cut
    # x <= 3 wins: left all negative (c = -1, error 0), right W+ = 2/6, W- = 1/6 (c = 1/3).
    X = np.arange(1.0, 7.0)[:, None]
    y = np.array([-1, -1, -1, 1, 1, -1])
    model = boostkit.Booster("gentle-adaboost", n_rounds=1).fit(X, y)
    assert model.hypotheses[0].threshold == pytest.approx(3.5)
    np.testing.assert_allclose(model.records[0].coefficients, [-1.0, 1 / 3])


# -- LogitBoost kernels ---------------------------------------------------------------------------

def _numpy_z(F, y, z_max):
    p = 1.0 / (1.0 + np.exp(-2.0 * F))
    z = ((y + 1) / 2 - p) / (p * (1 - p))
    return np.clip(z, -z_max, z_max)


def test_working_response_is_fhts_newton_response_clipped():
    F = np.array([0.0, 0.3, -0.4, 2.0, -3.0, 1e6, -1e6, 0.2])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0])
    out = np.empty_like(F)
    working_response(F, y, 4.0, out)
    np.testing.assert_allclose(out[:5], _numpy_z(F[:5], y[:5], 4.0))
    # F = 0: p = 1/2, z = +-2. F = 1e6, y = +1: p = 1, z = 1/p = 1. F = -1e6, y = +1: p = 0,
    # z = 1/p = inf, clipped to 4.
    assert out[0] == 2.0 and out[5] == 1.0 and out[6] == 4.0
    assert out[7] == pytest.approx(1 + math.exp(-0.4))


def test_response_weights_are_the_weights_times_the_clipped_response():
    F = np.array([0.0, 0.3, -0.4, 2.0, -3.0, 1e6, -1e6, 0.2, 0.69, -0.7, 400.0, -400.0])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 1.0, -1.0, 1.0])
    w = np.linspace(0.5, 1.5, F.shape[0])
    out = np.empty_like(F)
    response_weights(F, y, w, 4.0, out)
    z = np.empty_like(F)
    working_response(F, y, 4.0, z)
    np.testing.assert_allclose(out, w * np.abs(z), rtol=1e-15)
    moderate = np.abs(F) < 10
    np.testing.assert_allclose(out[moderate],
                               w[moderate] * np.abs(_numpy_z(F[moderate], y[moderate], 4.0)),
                               rtol=1e-14)


def _logit_potential(F, y, d1):
    return math.log((d1 * np.log2(1 + np.exp(-2 * y * F))).sum())


def test_logit_weights_are_p_times_one_minus_p_and_the_potential_bounds_the_error():
    F = np.array([0.0, 0.5, -1.0, 3.0])
    y = np.array([1.0, -1.0, -1.0, 1.0])
    d1 = np.array([0.1, 0.2, 0.3, 0.4])
    state = _state(np.zeros((4, 1)), y, margin=F)
    state.initial_weights = d1
    found = LogitWeights().boostkit_reweight(state)
    p = 1 / (1 + np.exp(-2 * F))
    np.testing.assert_allclose(found.weights, d1 * p * (1 - p) / (d1 * p * (1 - p)).sum(),
                               rtol=1e-13)
    assert found.log_potential == pytest.approx(_logit_potential(F, y, d1), rel=1e-14)
    assert math.exp(found.log_potential) >= d1[y * F <= 0].sum()  # log2(1 + e^{-2yF}) >= 1 there
    # At F = 0 the weights are D_1 and the potential is 1 (log 0), as prod Z_t starts.
    state.margin = np.zeros(4)
    found = LogitWeights().boostkit_reweight(state)
    assert found.log_potential == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(found.weights, d1)


def test_logit_weights_never_underflow_or_overflow():
    F = np.array([800.0, -900.0, 5e5, 0.1])
    y = np.array([1.0, 1.0, -1.0, 1.0])
    state = _state(np.zeros((4, 1)), y, margin=F)
    found = LogitWeights().boostkit_reweight(state)
    assert np.isfinite(found.weights).all() and found.weights.sum() == pytest.approx(1.0)
    assert found.weights[3] == pytest.approx(1.0)
    # Where y F = -5e5 and -900 the loss is linear, -2 y F / ln 2 bits; where y F = 800, ~0.
    bits = (1e6 + 1800.0) / math.log(2) + math.log2(1 + math.exp(-0.2))
    assert found.log_potential == pytest.approx(math.log(0.25 * bits), rel=1e-12)
    # Every margin far out: the weights are still a distribution (log space).
    state.margin = np.array([400.0, 420.0, -450.0, 500.0])
    found = LogitWeights().boostkit_reweight(state)
    assert math.isfinite(found.log_potential) and found.weights.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(found.weights, np.exp(-2 * np.abs(state.margin) + 800)
                               / np.exp(-2 * np.abs(state.margin) + 800).sum())


def test_logit_row_weights_normalised_over_parts_are_the_distribution():
    rng = np.random.default_rng(5)
    F, y = 3.0 * rng.normal(size=30), np.where(rng.random(30) < 0.5, -1.0, 1.0)
    d1 = rng.uniform(size=30)
    d1 /= d1.sum()
    state = _state(np.zeros((30, 1)), y, margin=F)
    state.initial_weights = d1
    whole = LogitWeights().boostkit_reweight(state)
    parts = [LogitWeights().boostkit_row_weights(F[a:b], y[a:b], d1[a:b], 1)
             for a, b in ((0, 7), (7, 30))]
    scaled = np.concatenate([p.weights * math.exp(p.log_scale) for p in parts])
    np.testing.assert_allclose(scaled / scaled.sum(), whole.weights, rtol=1e-13)
    total = sum(math.exp(p.log_potential) for p in parts)
    assert math.log(total) == pytest.approx(whole.log_potential, rel=1e-13)


# -- LogitBoost components ------------------------------------------------------------------------

def test_logit_step_is_half_the_weighted_mean_of_z_per_cell():
    # F = 0: z = 2y, so c_j = (W+_j - W-_j)/W_j (Gentle AdaBoost's step).
    y, cells = [1, -1, 1, 1], [0, 0, 1, 1]
    state = _state(np.c_[cells], y)
    values = LogitStep().boostkit_calibrate(state, _candidate(cells)).contribution.cell_values
    np.testing.assert_allclose(values, [0.0, 1.0])
    # F = (0.5, 0, -1, 0.2) with weights (1, 1, 2, 2)/6: z = (1 + e^-1, -2, 1 + e^2 -> 4 clipped,
    # 1 + e^-0.4). Cell 0: (1.3679 - 2)/2 / 2; cell 1: (4 + 1.6703)/2 / 2.
    state = _state(np.c_[cells], y, weights=np.array([1, 1, 2, 2]) / 6, margin=[0.5, 0, -1, 0.2])
    values = LogitStep().boostkit_calibrate(state, _candidate(cells)).contribution.cell_values
    z = [1 + math.exp(-1), -2.0, 4.0, 1 + math.exp(-0.4)]
    np.testing.assert_allclose(values, [(z[0] + z[1]) / 4, (z[2] + z[3]) / 4])


def test_logit_stump_minimises_the_weighted_squared_error_of_z_over_every_cut():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 1] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    margin = rng.normal(scale=0.8, size=40)
    weights = rng.uniform(0.1, 1.0, 40)
    weights /= weights.sum()
    state = _state(X, y, weights=weights, margin=margin)
    candidate = LogitStump(z_max=3.0).boostkit_propose(state)
    z = _numpy_z(margin, y, 3.0)

    def sse(cells):
        total = 0.0
        for j in (0, 1):
            w, zz = weights[cells == j], z[cells == j]
            if w.sum() > 0:
                total += (w * (zz - (w * zz).sum() / w.sum()) ** 2).sum()
        return total

    best = min(sse((X[:, f] > t).astype(int)) for f in range(3)
               for t in np.unique(X[:, f])[:-1])
    stump = candidate.hypothesis
    assert sse(candidate.cells.astype(int)) == pytest.approx(best, rel=1e-9)
    assert sse((X[:, stump.feature] > stump.threshold).astype(int)) == pytest.approx(best, rel=1e-9)
    # Its cell scores are the fitted f_m: the weighted means of z.
    cells = candidate.cells.astype(int)
    for j in (0, 1):
        w = weights[cells == j]
        assert stump.cell_scores[j] == pytest.approx((w * z[cells == j]).sum() / w.sum())


def test_logit_stump_with_three_classes_minimises_the_error_summed_over_classes():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 3, 45)
    X = rng.normal(size=(45, 2)) + np.eye(3, 2)[labels]
    state = _state(X, labels)
    state.margin = rng.normal(scale=0.5, size=(45, 3))
    weights = rng.uniform(0.1, 1.0, (45, 3))
    state.weights = weights / weights.sum()
    candidate = LogitStump().boostkit_propose(state)
    z = _numpy_z(state.margin, state.data.y, 4.0)

    def sse(cells):
        total = 0.0
        for j in (0, 1):
            w, zz = state.weights[cells == j], z[cells == j]
            mean = (w * zz).sum(axis=0) / w.sum(axis=0)
            total += (w * (zz - mean) ** 2).sum()
        return total

    best = min(sse((X[:, f] > t).astype(int)) for f in range(2) for t in np.unique(X[:, f])[:-1])
    assert sse(candidate.cells.astype(int)) == pytest.approx(best, rel=1e-9)
    np.testing.assert_array_equal(candidate.hypothesis.cell_scores, [-1.0, 1.0])  # phi(x)
    # logit-step gives each side and class half its weighted mean of z.
    values = LogitStep().boostkit_calibrate(state, candidate).contribution.cell_values
    cells = candidate.cells.astype(int)
    for j in (0, 1):
        w, zz = state.weights[cells == j], z[cells == j]
        np.testing.assert_allclose(values[j], 0.5 * (w * zz).sum(axis=0) / w.sum(axis=0))


def test_at_zero_margins_logit_step_is_gentle_step():
    # F = 0: p = 1/2, z = 2y, so 1/2 (weighted mean of z) = (W+ - W-)/W.
    labels, cells = np.array([0, 0, 1, 2, 2, 1]), np.array([0, 0, 0, 1, 1, 1])
    state = _state(np.c_[cells], labels)
    logit = LogitStep().boostkit_calibrate(state, _candidate(cells)).contribution.cell_values
    gentle = GentleStep().boostkit_calibrate(state, _candidate(cells)).contribution.cell_values
    np.testing.assert_allclose(logit, gentle)


def test_logitboost_on_separable_data_stays_finite_for_500_rounds():
    X = np.r_[np.linspace(-2, -1, 20), np.linspace(1, 2, 20)][:, None]
    y = np.r_[-np.ones(20), np.ones(20)]
    model = boostkit.Booster("logitboost", n_rounds=500).fit(X, y)
    assert model.n_rounds == 500
    assert all(np.isfinite([r.z, r.error_bound, *r.coefficients]).all() for r in model.records)
    assert model.records[-1].training_error == 0.0
    assert model.records[-1].error_bound < 1e-6
    margin = model.decision_function(X)
    assert np.isfinite(margin).all() and np.isfinite(model.predict_proba(X)).all()
    # Each step is at most z_max / 2 = 2 per round.
    assert np.abs(margin).max() <= 2.0 * 500


@pytest.mark.parametrize("n_columns", [1, 3])
def test_response_histograms_are_the_class_histograms_of_w_and_w_abs_z(n_columns):
    from boostkit.plane import Rows
    from boostkit_additive.logit import ResponseHistograms

    rng = np.random.default_rng(6)
    n, d, n_bins = 500, 3, 8
    codes = rng.integers(0, n_bins, size=(d, n)).astype(np.uint8)
    shape = (n,) if n_columns == 1 else (n, n_columns)
    y = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    margin, weights = rng.normal(size=shape), rng.random(shape)
    rows = Rows(codes=codes, y=y, is_pos=(y > 0).astype(np.uint8), labels=None,
                initial_weights=weights, weights=weights, margin=margin)
    found = ResponseHistograms(3.0, n_bins)(rows)
    z = np.abs(_numpy_z(margin, y, 3.0))
    expected = np.zeros((d, n_bins, 2 * n_columns, 2))
    w2, v2 = weights.reshape(n, -1), (weights * z).reshape(n, -1)
    pos = (y > 0).reshape(n, -1).astype(int)
    for f in range(d):
        for l in range(n_columns):
            np.add.at(expected[f, :, l], (codes[f], pos[:, l]), w2[:, l])
            np.add.at(expected[f, :, n_columns + l], (codes[f], pos[:, l]), v2[:, l])
    np.testing.assert_allclose(found, expected, rtol=1e-12)


@pytest.mark.parametrize("categorical", [False, True])
def test_logit_step_from_the_stumps_sums_is_the_step_from_the_rows(categorical):
    # Missing values (and a categorical column): the chosen cut's sums give each cell the
    # weighted mean of z that the rows give.
    rng = np.random.default_rng(8)
    n = 600
    X = np.c_[rng.integers(0, 4, n).astype(float), rng.normal(size=n)]
    y = np.where(X[:, 1] + (X[:, 0] == 2) + 0.5 * rng.normal(size=n) > 0.5, 1, -1)
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.1, 1] = np.nan
    weights = rng.uniform(0.2, 1.0, n)
    margin = rng.normal(scale=0.7, size=n)
    for column, categories in ((0, np.arange(4.0) if categorical else None), (1, None)):
        data = TrainingData(X[:, [column]], y, allow_missing=True,
                            features=boostkit.FeatureSchema(1, ("x",), (categories,)))
        state = boostkit.BoostState(data=data, weights=weights / weights.sum(), margin=margin,
                                    n_rounds=1, rng=np.random.default_rng(0), hook=None,
                                    n_jobs=1)
        candidate = LogitStump(min_category_count=1).boostkit_propose(state)
        from_sums = LogitStep().boostkit_calibrate(state, candidate)
        rows = boostkit.Candidate(candidate.hypothesis, cells=candidate.cells)
        from_rows = LogitStep().boostkit_calibrate(state, rows)
        np.testing.assert_allclose(from_sums.contribution.cell_values,
                                   from_rows.contribution.cell_values, rtol=1e-12)
        np.testing.assert_allclose(candidate.hypothesis.cell_scores,
                                   2.0 * from_rows.contribution.cell_values, rtol=1e-12)
        np.testing.assert_allclose(from_sums.train_values, from_rows.train_values, rtol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_the_compiled_least_squares_cut_is_best_splits(seed):
    from boostkit.splits import best_split
    from boostkit_additive.logit import _squared_error_gain, least_squares_split

    rng = np.random.default_rng(seed)
    d, n_bins = 6, 12
    hist = rng.exponential(size=(d, n_bins, 2, 2)) * (rng.random((d, n_bins, 1, 1)) < 0.8)
    if seed == 1:  # every cut of feature 2 equal to feature 4's: the tie goes to feature 2
        hist[4] = hist[2]
    valid = rng.random((d, n_bins - 1)) < 0.9
    ours = least_squares_split(hist, valid)
    theirs = best_split(hist, valid, _squared_error_gain(1), weight_columns=1)
    assert (ours.feature, ours.bin, ours.missing_left) == (theirs.feature, theirs.bin,
                                                            theirs.missing_left)
    assert ours.loss == theirs.loss  # the same sums in the same order
    np.testing.assert_array_equal(ours.wneg, theirs.wneg)
    np.testing.assert_array_equal(ours.wpos, theirs.wpos)
    assert least_squares_split(hist, np.zeros_like(valid)) is None


@pytest.mark.parametrize("n_columns", [1, 4])
def test_stacked_histograms_are_the_engines_histograms_bit_for_bit(n_columns):
    from boostkit.splits import histogram
    from boostkit_additive.kernels import class_major
    from boostkit_additive.logit import class_histograms, stacked_histograms

    rng = np.random.default_rng(9)
    n, d, n_bins = 5000, 5, 30
    codes = rng.integers(0, n_bins, size=(d, n)).astype(np.uint8)
    shape = (n,) if n_columns == 1 else (n, n_columns)
    weights, values = rng.random(shape), rng.random(shape)
    is_pos = (rng.random(shape) < 0.5).astype(np.uint8)
    found = stacked_histograms(codes, weights, values, is_pos, n_bins)
    engine = [histogram(codes, w, is_pos, n_bins) for w in (weights, values)]
    if n_columns == 1:
        engine = [h[:, :, None, :] for h in engine]
    np.testing.assert_array_equal(found, np.concatenate(engine, axis=2))
    # class by class: [class, feature, bin, side, channel], the engine's histogram of each
    by_class = class_histograms(codes, weights, values, is_pos, n_bins)
    assert by_class.shape == (n_columns, d, n_bins, 2, 2)
    pairs = [a.reshape(n, n_columns) for a in (weights, values, is_pos)]
    for l in range(n_columns):
        w, v, pos = (np.ascontiguousarray(a[:, l]) for a in pairs)
        for channel, summed in enumerate((w, v)):
            np.testing.assert_array_equal(by_class[l, ..., channel],
                                          histogram(codes, summed, pos, n_bins))
    if n_columns > 1:
        out = np.empty((n_columns, n))
        class_major(weights, out)
        np.testing.assert_array_equal(out, weights.T)


def test_logit_step_needs_the_logit_stump_and_the_same_z_max():
    X, y = np.arange(6.0)[:, None], np.array([-1, -1, 1, -1, 1, 1])
    refusal = "calibration 'logit-step' needs .*'logit-response'"
    with pytest.raises(boostkit.RecipeError, match=refusal):
        boostkit.Booster(proposal="stump", calibration="logit-step",
                         reweighting="logit-weights").fit(X, y)
    with pytest.raises(boostkit.RecipeError, match="z_max"):
        boostkit.Booster("logitboost", params={"calibration": {"z_max": 3.0}}).fit(X, y)
    with pytest.raises(boostkit.RecipeError, match="z_max"):
        boostkit.Booster("logitboost", params={"proposal": {"z_max": 0.5},
                                               "calibration": {"z_max": 0.5}}).fit(X, y)


def test_logit_weights_component_reports_the_logistic_potential():
    y = np.array([1, -1, 1, 1])
    state = _state(np.zeros((4, 1)), y, margin=[0.2, 0.2, -0.3, 1.0])
    weights = LogitWeights().boostkit_reweight(state)
    F, yy = np.array([0.2, 0.2, -0.3, 1.0]), y.astype(float)
    assert weights.log_potential == pytest.approx(
        math.log((0.25 * np.log2(1 + np.exp(-2 * yy * F))).sum()))
    assert weights.weights.sum() == pytest.approx(1.0)


# -- several classes ------------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["gentle-adaboost", "logitboost"])
def test_runs_natively_on_three_classes(algorithm):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, 150)
    X = rng.normal(size=(150, 4)) + np.eye(3, 4)[labels] * 2.0
    classes = np.array(["red", "green", "blue"])
    model = boostkit.Booster(algorithm, n_rounds=30).fit(X, classes[labels])
    assert model.multiclass_strategy == "native"
    assert model.decision_function(X).shape == (150, 3)
    assert np.isfinite(model.predict_proba(X)).all()
    assert np.mean(model.predict(X) == classes[labels]) > 0.8
    for record in model.records:
        assert record.training_error <= record.error_bound + 1e-12

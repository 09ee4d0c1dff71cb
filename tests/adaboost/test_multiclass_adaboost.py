"""AdaBoost.MH (real and discrete) and SAMME: the math by hand, the invariants, the references.

Schapire & Singer (1999), sections 7-9: multi-class multi-label boosting over (example, class)
pairs; Kégl (2013): discrete AdaBoost.MH with factorised stumps; Zhu, Zou, Rosset & Hastie
(2009): SAMME, which scikit-learn's ``AdaBoostClassifier`` runs.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

import boostkit
from boostkit.data import TrainingData
from boostkit.metrics import stratified_folds
from boostkit_adaboost import DomainPartition, SammeAlpha, VoteAlpha

MULTICLASS = ("adaboost-mh", "discrete-adaboost-mh", "samme")

# With NUMBA_DISABLE_JIT=1 (run to cover the kernels' Python) the reproductions on real data
# would take minutes, and add no kernel coverage.
needs_jit = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="a reproduction; slow without the JIT")


def three_classes(n=150, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) + np.eye(3, 4)[y] * 1.5
    return X, np.array(["red", "green", "blue"])[y]


def state_with(y, cells, weights=None):
    """A fit state on one feature whose two cells are ``cells``, for calibrations by hand."""
    data = TrainingData(np.asarray(cells, dtype=float)[:, None], y)
    weights = data.initial_weights.copy() if weights is None else np.asarray(weights, float)
    return boostkit.BoostState(data=data, weights=weights, margin=np.zeros(data.y.shape),
                               n_rounds=1, rng=np.random.default_rng(0), hook=None, n_jobs=1)


def candidate(cells):
    from boostkit_adaboost import Stump

    cells = np.asarray(cells, dtype=np.intp)
    return boostkit.Candidate(Stump(0, 0.5, [-1.0, 1.0]), cells=cells,
                              scores=np.where(cells == 1, 1.0, -1.0))


# -- the math, by hand ----------------------------------------------------------------------------

Y3 = np.array([0, 0, 1, 2, 2, 1])  # three classes, two examples each
CELLS = np.array([0, 0, 0, 1, 1, 1])


def test_real_adaboost_mh_values_are_half_log_ratios_per_cell_and_class():
    state = state_with(Y3, CELLS)
    calibrated = DomainPartition(smoothing=0.0).boostkit_calibrate(state, candidate(CELLS))
    # Uniform start: every pair weighs 1/18. Cell 0 holds examples of classes 0, 0, 1; cell 1 of
    # classes 2, 2, 1. W+_{0,0} = 2/18, W-_{0,0} = 1/18; W+_{0,2} = 0 (floored smoothing).
    values = calibrated.contribution.cell_values
    assert values.shape == (2, 3)
    assert values[0, 0] == pytest.approx(0.5 * math.log(2.0))
    assert values[0, 1] == pytest.approx(0.5 * math.log(1.0 / 2.0))
    assert values[1, 2] == pytest.approx(0.5 * math.log(2.0))
    assert values[1, 0] < -15 and np.isfinite(values).all()  # a pure side, kept finite
    np.testing.assert_array_equal(calibrated.train_values, values[CELLS])


def test_real_adaboost_mh_default_smoothing_is_one_over_the_number_of_pairs():
    state = state_with(Y3, CELLS)
    values = DomainPartition().boostkit_calibrate(state, candidate(CELLS)).contribution.cell_values
    s = 1.0 / 18
    assert values[1, 0] == pytest.approx(0.5 * math.log(s / (3 / 18 + s)))


def test_adaboost_mh_z_is_twice_the_sum_of_root_products_over_cells_and_classes():
    wpos = np.array([[2.0, 1.0, 0.0], [0.0, 1.0, 2.0]]) / 18
    wneg = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]) / 18
    loss = DomainPartition().boostkit_partition_loss(wpos=wpos, wneg=wneg, n_columns=3)
    assert loss == pytest.approx(2 * np.sqrt(wpos * wneg).sum())


def test_discrete_adaboost_mh_votes_and_alpha_by_hand():
    state = state_with(Y3, CELLS)
    calibrated = VoteAlpha().boostkit_calibrate(state, candidate(CELLS))
    # mu_l = (W+_1l - W-_1l) - (W+_0l - W-_0l): class 0: (0 - 3) - (2 - 1) = -4;
    # class 1: (1 - 2) - (1 - 2) = 0; class 2: (2 - 1) - (0 - 3) = 4, all over 18.
    alpha, *votes = calibrated.coefficients
    assert votes == [-1.0, 1.0, 1.0]  # mu = 0 votes +1
    gamma = 8 / 18
    assert alpha == pytest.approx(0.5 * math.log((1 + gamma) / (1 - gamma)))
    np.testing.assert_allclose(calibrated.contribution.cell_values,
                               alpha * np.outer([-1.0, 1.0], votes))
    loss = VoteAlpha().boostkit_partition_loss(
        wpos=np.array([[2.0, 1.0, 0.0], [0.0, 1.0, 2.0]]) / 18,
        wneg=np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]) / 18, n_columns=3)
    assert loss == pytest.approx((1 - gamma) / 2)


def test_samme_alpha_and_coding_by_hand():
    # SAMME weights: all on the true-label pairs. Cell 0 is labelled 0 (2 of its 3 examples),
    # cell 1 is labelled 2: eps = 2/6, alpha = ln(2) + ln(2).
    state = state_with(Y3, CELLS)
    d1 = np.zeros((6, 3))
    d1[np.arange(6), Y3] = 1 / 6
    state.weights = d1
    calibrated = SammeAlpha().boostkit_calibrate(state, candidate(CELLS))
    alpha = math.log(2.0) + math.log(2.0)
    assert calibrated.coefficients == pytest.approx((alpha,))
    assert calibrated.extra == {"class_error": pytest.approx(1 / 3), "n_classes": 3}
    expected = np.full((2, 3), -alpha / 3)
    expected[0, 0] = expected[1, 2] = alpha * 2 / 3
    np.testing.assert_allclose(calibrated.contribution.cell_values, expected)
    assert np.allclose(calibrated.contribution.cell_values.sum(axis=1), 0.0)  # sum-to-zero coding


def test_samme_no_better_than_chance_adds_nothing_and_stops():
    # No feature splits: one label for all, eps = 3/4 = 1 - 1/K, exactly (weights 1/64: eps is
    # summed over the examples, and 40 weights of 1/60 would sum to 2/3 less one rounding).
    y = np.repeat(["red", "green", "blue", "gold"], 16)
    constant = np.zeros((len(y), 2))
    model = boostkit.Booster("samme", n_rounds=10).fit(constant, y)
    assert model.stop_reason == "no-edge" and model.n_rounds == 1
    assert model.records[0].coefficients == (0.0,)
    assert model.records[0].extra["class_error"] == 3 / 4
    assert np.all(model.decision_function(constant) == 0.0)


# -- the references -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:1400], y[:1400], X[1400:], y[1400:]


@needs_jit
def test_samme_agrees_with_scikit_learn_on_digits(digits):
    """scikit-learn's AdaBoostClassifier(DecisionTreeClassifier(max_depth=1)) is SAMME with
    Gini stumps; digits' features take at most 17 values, so every value has its own bin."""
    X_train, y_train, X_test, y_test = digits
    ours = boostkit.Booster("samme", n_rounds=50, params={"proposal": {"criterion": "gini"}}
                            ).fit(X_train, y_train)
    theirs = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=50,
                                random_state=0).fit(X_train, y_train)
    agree = np.mean(ours.predict(X_test) == theirs.predict(X_test))
    assert agree >= 0.99
    np.testing.assert_allclose([r.coefficients[0] for r in ours.records],
                               theirs.estimator_weights_, rtol=1e-9)
    # Ours: F(x, l) = sum_t alpha_t ([h_t(x) = l] - 1/K); scikit-learn's codes a vote as alpha_t
    # for h_t(x) = l and -alpha_t / (K - 1) otherwise, and divides by sum_t alpha_t: the same
    # margins up to the factor (K - 1) / K.
    alphas = theirs.estimator_weights_.sum()
    np.testing.assert_allclose(ours.decision_function(X_test) / alphas,
                               0.9 * theirs.decision_function(X_test), atol=1e-9)


@needs_jit
def test_adaboost_mh_reaches_096_on_digits_in_5_fold_cv():
    X, y = load_digits(return_X_y=True)
    accuracies = []
    for train, test in stratified_folds(y, 5, seed=0):
        model = boostkit.Booster("adaboost-mh", n_rounds=250).fit(X[train], y[train])
        accuracies.append(np.mean(model.predict(X[test]) == y[test]))
    assert np.mean(accuracies) >= 0.96


@needs_jit
def test_two_classes_through_the_multiclass_path_predict_as_the_binary_path():
    """A two-column one-hot indicator matrix runs AdaBoost.MH over pairs; it must predict
    what real AdaBoost predicts on the binary labels (the second column mirrors the first)."""
    data = boostkit.datasets.load("breast_cancer_wisconsin", dropna=True)
    positive = (data.y == data.positive).astype(int)
    binary = boostkit.Booster("adaboost-mh", n_rounds=40).fit(data.X, positive)
    pairs = boostkit.Booster("adaboost-mh", n_rounds=40).fit(
        data.X, np.column_stack([1 - positive, positive]))
    assert pairs.n_columns == 2 and binary.n_columns == 1
    F = pairs.decision_function(data.X)
    np.testing.assert_allclose(F[:, 1], -F[:, 0], atol=1e-9)
    np.testing.assert_allclose(F[:, 1], binary.decision_function(data.X), atol=1e-9)
    assert np.array_equal(np.argmax(F, axis=1), binary.predict(data.X))


# -- invariants -----------------------------------------------------------------------------------


class PairChecks:
    """Checks, every round, that the weights are a distribution over the pairs and that the
    potential prod Z_t bounds the training Hamming loss."""

    def __init__(self):
        self.rounds = 0

    def __call__(self, state, record):
        assert state.weights.shape == state.data.y.shape
        assert (state.weights >= 0).all() and state.weights.sum() == pytest.approx(1.0)
        hamming = float(np.sum(state.initial_weights * (state.data.y * state.margin <= 0)))
        assert record.training_error == pytest.approx(hamming)
        assert record.error_bound >= record.training_error - 1e-12
        self.rounds += 1


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_classes=st.integers(3, 6),
       algorithm=st.sampled_from(MULTICLASS), multilabel=st.booleans())
def test_weights_stay_a_pair_distribution_and_the_bound_holds(seed, n_classes, algorithm,
                                                               multilabel):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    if multilabel and algorithm != "samme":
        y = (rng.random((60, n_classes)) < 0.4).astype(int)
        y[:, 0] = X[:, 0] > 0
    else:
        y = rng.integers(0, n_classes, 60)
    checks = PairChecks()
    model = boostkit.Booster(algorithm, n_rounds=15, callbacks=[checks]).fit(X, y)
    assert checks.rounds == len(model.records) >= 1
    assert np.isfinite(model.decision_function(X)).all()


def test_samme_potential_decreases_whenever_the_labelling_beats_chance():
    X, y = three_classes(300)
    model = boostkit.Booster("samme", n_rounds=30).fit(X, y)
    for record in model.records:
        if record.extra["class_error"] < 2 / 3:
            assert record.z < 1.0


@pytest.mark.parametrize("algorithm", MULTICLASS)
def test_predictions_are_the_original_labels_and_probabilities_agree(algorithm):
    X, y = three_classes()
    model = boostkit.Booster(algorithm, n_rounds=20).fit(X, y)
    assert list(model.classes) == ["blue", "green", "red"]
    F = model.decision_function(X)
    proba = model.predict_proba(X)
    assert F.shape == proba.shape == (len(y), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(model.classes[np.argmax(proba, axis=1)], model.predict(X))
    assert np.mean(model.predict(X) == y) > 0.6
    stages = list(model.staged_predict(X))
    assert len(stages) == model.n_rounds and np.array_equal(stages[-1], model.predict(X))
    assert np.allclose(list(model.staged_predict_proba(X))[-1], proba)

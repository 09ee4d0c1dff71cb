"""The four algorithms of boostkit_pav through the engine (Wilbur et al. 2005, sections 3.2,
3.3, 4 and eq. 52-53): real data, save/load, back-fitting, convergence."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

import boostkit
from boostkit.data import TrainingData
from boostkit.metrics import roc_auc
from boostkit_pav.isotonic import half_log_odds, isotonic_bins
from boostkit_pav.reproduce import four_subsets
from boostkit_pav.stopping import SumConverged

ALGORITHMS = ("pav-adaboost", "pav-adaboost-finite", "linear-adaboost-finite", "optimal-linear-adaboost")


@pytest.fixture(scope="module")
def spambase():
    data = boostkit.datasets.load("spambase")
    order = np.random.default_rng(0).permutation(data.y.shape[0])
    train, test = order[:1500], order[1500:2500]
    return data.X[train], data.y[train], data.X[test], data.y[test]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_each_algorithm_learns_spambase_and_survives_save_and_load(algorithm, spambase, tmp_path):
    X, y, X_test, y_test = spambase
    model = boostkit.Booster(algorithm, n_rounds=40).fit(X, y)
    scores = model.decision_function(X_test)
    assert roc_auc(np.where(y_test == model.classes[1], 1, -1), scores) > 0.9
    reloaded = boostkit.load_model(model.save(tmp_path / "model.npz"))
    np.testing.assert_array_equal(reloaded.decision_function(X_test), scores)


def test_the_exact_form_saves_its_steps_and_interpolates_new_scores(spambase, tmp_path):
    X, y, X_test, _ = spambase
    model = boostkit.Booster("pav-adaboost", n_rounds=5, params={"calibration": {"bins": None}}).fit(X, y)
    assert {type(c).__name__ for c in model.contributions} == {"IsotonicSteps"}
    reloaded = boostkit.load_model(model.save(tmp_path / "exact.npz"))
    np.testing.assert_array_equal(reloaded.decision_function(X_test), model.decision_function(X_test))


@pytest.mark.parametrize("algorithm, params", [
    ("pav-adaboost-finite", {}),
    # the sigmoid's phantom examples (smoothing) add a penalty to what each step minimises;
    # without them each step minimises the sum (20) itself
    ("linear-adaboost-finite", {"calibration": {"smoothing": 1e-12}}),
])
def test_back_fitting_keeps_one_term_per_column_and_never_raises_the_sum(algorithm, params, spambase):
    X, y, _, _ = spambase
    X = X[:, :6]
    model = boostkit.Booster(algorithm, n_rounds=40, params=params).fit(X, y)
    assert model.n_rounds == 6 and len(model.records) > 6
    assert [h.feature for h in model.hypotheses] == list(range(6))
    sums = [r.error_bound for r in model.records]  # the sum (20) over m
    assert all(b <= a * (1 + 1e-12) for a, b in zip(sums, sums[1:]))
    # the engine's margins equal the model's: its training error is the model's
    y_signed = np.where(y == model.classes[1], 1.0, -1.0)
    assert model.records[-1].training_error == pytest.approx(
        np.mean(y_signed * model.decision_function(X) <= 0), abs=1e-12)


def test_a_back_fitted_term_is_pav_under_the_weights_of_the_other_terms(spambase):
    """Wilbur et al. 2005, eq. 22-23: D_i proportional to exp(-y_i sum_{j' != j}
    k_j'(h_j'(x_i)))."""
    X, y, _, _ = spambase
    X = X[:, :3]
    model = boostkit.Booster("pav-adaboost-finite", n_rounds=4).fit(X, y)  # round 4 re-fits x[0]
    data = TrainingData(X, y)
    others = sum(c.values(boostkit.Candidate(h, X), None)
                 for h, c in zip(model.hypotheses[1:], model.contributions[1:]))
    d = np.exp(-data.y * others)
    d /= d.sum()
    h = model.hypotheses[0]
    cells = h.cells(X)
    wpos = np.bincount(cells, d * (data.y > 0), minlength=h.n_cells)
    wneg = np.bincount(cells, d * (data.y < 0), minlength=h.n_cells)
    epsilon = 1 / X.shape[0]
    expected = half_log_odds(np.clip(isotonic_bins(wpos, wneg), epsilon, 1 - epsilon))
    np.testing.assert_allclose(model.contributions[0].cell_values, expected, rtol=1e-9, atol=1e-12)


def test_linear_back_fitting_converges_to_the_minimum_of_the_sum_20():
    X, y = four_subsets([1, 50, 51, 99], [3, 1, 4, 5], [1, 2, 4, 3])
    model = boostkit.Booster(
        "linear-adaboost-finite", n_rounds=2000,
        params={"proposal": {"orient": False}, "calibration": {"smoothing": 1e-12},
                "sum_converged": {"tol": 1e-14}},
    ).fit(X, y)
    assert model.stop_reason == "converged"
    alphas = [c.alpha for c in model.contributions]
    best = minimize(lambda a: np.exp(-y * (X @ a)).mean(), np.zeros(2), method="BFGS",
                    options={"gtol": 1e-12}).x
    np.testing.assert_allclose(alphas, best, atol=1e-5)


def test_pav_finite_converges_on_table_2_and_stops():
    X, y = four_subsets([0, 20, 20, 80], [0, 1, 0, 1], [0, 0, 1, 1])
    model = boostkit.Booster("pav-adaboost-finite", n_rounds=500,
                             params={"proposal": {"orient": False}}).fit(X, y)
    assert model.stop_reason == "converged" and len(model.records) < 500


def test_plain_pav_adaboost_stops_when_pav_finds_no_edge():
    # a score unrelated to the labels: one pool at the overall rate, k = 0 after round 1
    X = np.repeat(np.array([[0.0], [1.0]]), 50, axis=0)
    y = np.tile([1, -1], 50)
    recipe = boostkit.Recipe(name="t", proposal="score-columns", calibration="pav",
                             reweighting="exponential", stopping=("no-edge",))
    model = boostkit.Booster(recipe, n_rounds=10).fit(X, y)
    assert model.stop_reason == "no-edge" and model.n_rounds == 1


class _Records:
    """Stand-in state for the stopping rule: the finished rounds and the model's terms."""

    def __init__(self, bounds, n_terms):
        self.records = [boostkit.RoundRecord(round=t + 1, hypothesis="h", weighted_error=0.3, edge=0.2,
                                             z=None, error_bound=b, training_error=0.1, coefficients=())
                        for t, b in enumerate(bounds)]
        self.hypotheses = [None] * n_terms


def record(t, bound):
    return boostkit.RoundRecord(round=t, hypothesis="h", weighted_error=0.3, edge=0.2, z=None,
                                error_bound=bound, training_error=0.1, coefficients=())


def test_sum_converged_compares_the_sum_with_its_value_one_cycle_ago():
    rule = SumConverged(tol=1e-3)
    # three terms, rounds 1-3 add them, rounds 4-6 re-fit them: compare round 6 with round 3
    state = _Records([0.9, 0.8, 0.7, 0.69, 0.6995], n_terms=3)
    assert rule.boostkit_should_stop(state=state, record=record(6, 0.69931)) == "converged"
    assert rule.boostkit_should_stop(state=state, record=record(6, 0.69)) is None
    # before a full cycle of re-fitting there is nothing to compare
    assert rule.boostkit_should_stop(state=_Records([0.9, 0.8, 0.7, 0.7], 3), record=record(5, 0.7)) is None
    # a run that adds a term every round never stops by it
    assert rule.boostkit_should_stop(state=_Records([0.9], 1), record=record(2, 0.9)) is None


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_weight_of_two_is_a_repeated_example(algorithm):
    # epsilon = 1/m (Wilbur et al. 2005, section 3.2) and the smoothings' 1/m count examples
    # by weight (boostkit.smoothing.n_examples), so weight 2 is the example twice.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    X[:, 3] = np.sign(X[:, 3])
    y = np.where(X[:, 0] + 0.7 * X[:, 1] + 0.5 * rng.normal(size=60) > 0, 1, -1)
    weights, repeated = np.ones(60), [3, 10, 41]
    weights[repeated] = 2.0
    rows = np.r_[np.arange(60), repeated]
    booster = boostkit.Booster(algorithm, n_rounds=10, random_state=0)
    weighted = booster.fit(X, y, sample_weight=weights)
    copies = booster.fit(X[rows], y[rows])
    assert weighted.n_rounds == copies.n_rounds
    np.testing.assert_allclose(weighted.decision_function(X), copies.decision_function(X),
                               rtol=1e-12, atol=1e-12)

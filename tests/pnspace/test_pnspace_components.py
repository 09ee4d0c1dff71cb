"""Ada2Boost's components against hand-computed values (Scholz 2006, eq. 2-3, Fig. 3).

The running example: ten examples, a stump x > 5.5 covering 3 positives and 1 negative and
leaving 1 positive and 5 negatives uncovered, so with w_1 = 1 per example p = 3, n = 1,
p_bar = 1, n_bar = 5 (fractions .3, .1, .1, .5): beta(+1) = p/n = 3, beta(-1) = n_bar/p_bar = 5,
eps+ = 1/4, eps- = 1/6. Ada2Boost leaves 2 (sqrt(3) + sqrt(5)) = 7.9362 of the weight 10;
AdaBoost (eps = 0.2) leaves 2 * 10 * sqrt(0.2 * 0.8) = 8.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import boostkit
from boostkit.datasets import load
from boostkit.observers import WeightHistory
from boostkit_pnspace import (
    AsymmetricBeta,
    auc_lower_bound,
    cell_odds,
    pn_spaces,
    stratify,
    total_weight_after,
)

X10 = np.arange(10.0)[:, None]
Y10 = np.array([1, -1, -1, -1, -1, -1, 1, 1, 1, -1])  # x = 0 positive, x = 9 negative


def test_asymmetric_beta_on_the_running_example(fixed_stump):
    model = fixed_stump("fixed-ada2", X10, Y10, threshold=5.5)
    record = model.records[0]
    # cell 0 (x <= 5.5) is uncovered: c = 1/2 ln(p_bar/n_bar); cell 1: 1/2 ln(p/n)
    assert record.coefficients == pytest.approx((0.5 * math.log(1 / 5), 0.5 * math.log(3)))
    extra = record.extra
    assert extra["covered_cell"] == 1
    assert (extra["p"], extra["n"], extra["p_bar"], extra["n_bar"]) == pytest.approx((.3, .1, .1, .5))
    assert extra["eps_covered"] == pytest.approx(0.25)
    assert extra["eps_uncovered"] == pytest.approx(1 / 6)
    assert extra["beta_covered"] == pytest.approx(3.0)
    assert extra["beta_uncovered"] == pytest.approx(5.0)
    # Theorem 1's proof: W_2 = 2 W_1 (sqrt(p n) + sqrt(p_bar n_bar)), both classes sqrt(3) + sqrt(5)
    assert extra["total_weight"] == pytest.approx(2 * (math.sqrt(3) + math.sqrt(5)))
    assert extra["positive_weight"] == pytest.approx(math.sqrt(3) + math.sqrt(5))
    assert extra["negative_weight"] == pytest.approx(math.sqrt(3) + math.sqrt(5))
    assert extra["pn_area"] == pytest.approx((math.sqrt(3) + math.sqrt(5)) ** 2)
    assert record.z == pytest.approx(0.2 * (math.sqrt(3) + math.sqrt(5)))
    adaboost = fixed_stump("fixed-ada", X10, Y10, threshold=5.5).records[0]
    assert adaboost.extra["total_weight"] == pytest.approx(8.0)


def test_pn_records_of_the_running_example(fixed_stump):
    extra = fixed_stump("fixed-ada2", X10, Y10, threshold=5.5).records[0].extra
    # F = +c on x > 5.5 (3 pos, 1 neg), -c' below (1 pos, 5 neg): misranked pairs are the
    # positive at x = 0 against the covered negative; ties: 3*1 covered + 1*5 uncovered pairs.
    assert extra["aoc_train"] == pytest.approx(1 + 0.5 * (3 * 1 + 1 * 5))
    assert extra["train_auc"] == pytest.approx(1 - 5 / 24)
    # reweighted: each side stratified, so ties there are half of sqrt(pn)^2 and the misranked
    # pair (w+ = sqrt(5), w- = sqrt(3)) counts sqrt(15)
    assert extra["aoc_weighted"] == pytest.approx(0.5 * (3 + 5) + math.sqrt(15))
    W = 2 * (math.sqrt(3) + math.sqrt(5))
    assert extra["auc_bound"] == pytest.approx(1 - W ** 2 / (8 * 4 * 6))
    assert extra["auc_bound_theorem2"] == pytest.approx(1 - (4 + math.sqrt(15)) / 24)
    assert extra["weighted_auc"] == pytest.approx(1 - (4 + math.sqrt(15)) / (W / 2) ** 2)


def test_smoothing_counts_pseudo_examples(fixed_stump):
    laplace = fixed_stump("fixed-ada2", X10, Y10, threshold=5.5, smoothing="laplace").records[0]
    # counts (w_1 = 1): (1 + 1)/(5 + 1) uncovered, (3 + 1)/(1 + 1) covered
    assert laplace.coefficients == pytest.approx((0.5 * math.log(2 / 6), 0.5 * math.log(4 / 2)))
    # the total weight is that of the smoothed update, which the partition loss reports
    expected_z = (0.1 * math.sqrt(3) + 0.5 / math.sqrt(3)) + (0.3 / math.sqrt(2) + 0.1 * math.sqrt(2))
    assert laplace.z == pytest.approx(expected_z)
    m_estimate = fixed_stump("fixed-ada2", X10, Y10, threshold=5.5, smoothing="m-estimate",
                             m=2.0).records[0]
    # prior pi = 4/10: pseudo-counts 0.8 positive, 1.2 negative
    assert m_estimate.coefficients == pytest.approx(
        (0.5 * math.log(1.8 / 6.2), 0.5 * math.log(3.8 / 2.2)))


def test_cell_odds_rescale_the_weights_to_examples():
    # the same set with weights summing to 1 or to 10 gives the same smoothed odds
    wpos, wneg = np.array([0.1, 0.3]), np.array([0.5, 0.1])
    assert cell_odds(wpos, wneg, "laplace", n_examples=10) == pytest.approx([2 / 6, 4 / 2])
    assert cell_odds(10 * wpos, 10 * wneg, "laplace", n_examples=10) == pytest.approx([2 / 6, 4 / 2])
    assert cell_odds(wpos, wneg) == pytest.approx([1 / 5, 3])


def test_pure_and_empty_cells_stay_finite():
    odds = cell_odds(np.array([0.4, 0.0]), np.array([0.0, 0.0]))
    assert odds[1] == 1.0  # empty cell: no evidence either way
    # a pure cell's odds: its weight over the floor, 1e-15 of the total (here the same weight)
    assert odds[0] == pytest.approx(1e15)
    # a pure cell keeps (almost) none of its weight: sqrt(W+ * 1e-15 * total)
    assert total_weight_after(np.array([0.4, 0.0]), np.array([0.0, 0.0])) == pytest.approx(
        math.sqrt(0.4 * 0.4e-15))


def test_partition_loss_is_two_sum_sqrt_unsmoothed():
    rng = np.random.default_rng(1)
    wpos, wneg = rng.random((5, 7, 2)), rng.random((5, 7, 2))
    calibration = AsymmetricBeta()
    assert calibration.boostkit_partition_loss(wpos, wneg) == pytest.approx(
        2 * np.sqrt(wpos * wneg).sum(axis=-1), rel=1e-12)


def test_stratify_by_hand():
    w = np.ones(6)
    y = np.array([1, 1, -1, -1, -1, -1])
    out = stratify(w, y)  # c = N/P = 2
    assert out == pytest.approx([math.sqrt(2)] * 2 + [1 / math.sqrt(2)] * 4)
    assert out[:2].sum() == pytest.approx(out[2:].sum()) == pytest.approx(math.sqrt(8))
    assert stratify(w, y, 4.0) == pytest.approx([2, 2, 0.5, 0.5, 0.5, 0.5])
    assert stratify(w, y == 1, 4.0) == pytest.approx(stratify(w, y, 4.0))


@pytest.mark.parametrize("weights, y, c, message", [
    (np.ones(3), np.array([1, -1]), None, "same length"),
    (np.array([1.0, -1.0]), np.array([1, -1]), None, "non-negative"),
    (np.ones(2), np.array([1, 2]), None, "labels"),
    (np.array([0.0, 1.0]), np.array([1, -1]), None, "no weight"),
    (np.ones(2), np.array([1, -1]), 0.0, "c must be"),
])
def test_stratify_refuses_bad_input(weights, y, c, message):
    with pytest.raises(ValueError, match=message):
        stratify(weights, y, c)


def test_auc_lower_bound_by_hand():
    assert auc_lower_bound(10.0, 5, 5) == 0.5  # no reweighting yet: random guessing
    assert auc_lower_bound(2.0, 5, 5) == pytest.approx(1 - 4 / 200)


def test_bad_parameters_are_refused_before_fitting():
    with pytest.raises(boostkit.RecipeError, match="smoothing"):
        boostkit.Booster("ada2boost", params={"calibration": {"smoothing": "add-one"}}).fit(X10, Y10)
    with pytest.raises(boostkit.RecipeError, match="m must be"):
        boostkit.Booster("ada2boost", params={"calibration": {"m": 0}}).fit(X10, Y10)


def test_a_hypothesis_without_two_cells_is_refused():
    from boostkit_pnspace.adaboost_form import ConstantHypothesis

    candidate = boostkit.Candidate(ConstantHypothesis(), cells=np.zeros(10, dtype=np.intp))
    with pytest.raises(ValueError, match="two cells"):
        AsymmetricBeta().boostkit_calibrate(state=None, candidate=candidate)


# -- Fig. 3 replayed against the margin-based reweighting -------------------------------------


@pytest.fixture(scope="module")
def ionosphere():
    data = load("ionosphere")
    return data.X, np.where(data.y == data.positive, 1, -1)


def test_stratification_equals_fig3_round_by_round(ionosphere):
    """w_{t+1} = w_t / sqrt(beta'_t(h_t(x))^y) from the recorded beta' gives the engine's D_{t+1}."""
    X, y = ionosphere
    history = WeightHistory()
    model = boostkit.Booster("ada2boost", n_rounds=15, observers=[history]).fit(X, y)
    w = np.ones(y.shape[0])  # Fig. 3: w_1 = 1
    for t, (record, hypothesis) in enumerate(zip(model.records, model.hypotheses), start=1):
        covered = hypothesis.cells(X) == record.extra["covered_cell"]
        # beta'(+1) = p/n on the covered side, beta'(-1) = p_bar/n_bar = 1/beta(-1) elsewhere
        beta = np.where(covered, record.extra["beta_covered"], 1.0 / record.extra["beta_uncovered"])
        w = w / np.sqrt(beta) ** y
        assert w.sum() == pytest.approx(record.extra["total_weight"], rel=1e-9)
        assert w / w.sum() == pytest.approx(history.weights[t], rel=1e-9, abs=1e-300)


def test_probabilities_are_beta_hat_over_one_plus_beta_hat(ionosphere):
    """Fig. 3's output beta_hat/(1 + beta_hat), beta_hat = prod_t beta'_t(h_t(x)), is predict_proba."""
    X, y = ionosphere
    model = boostkit.Booster("ada2boost", n_rounds=8).fit(X[:250], y[:250])
    X_test = X[250:]
    beta_hat = np.ones(X_test.shape[0])
    for record, hypothesis in zip(model.records, model.hypotheses):
        covered = hypothesis.cells(X_test) == record.extra["covered_cell"]
        beta_hat *= np.where(covered, record.extra["beta_covered"], 1.0 / record.extra["beta_uncovered"])
    assert np.isfinite(beta_hat).all() and beta_hat.max() > 1e10  # a pure side is in the product
    assert model.predict_proba(X_test)[:, 1] == pytest.approx(beta_hat / (1 + beta_hat), abs=1e-12)


def test_pn_space_replay_agrees_with_the_records(ionosphere):
    X, y = ionosphere
    model = boostkit.Booster("ada2boost", n_rounds=10).fit(X, y)
    spaces = pn_spaces(model, X, y)
    assert spaces[0].positives == (y == 1).sum() and spaces[0].negatives == (y == -1).sum()
    for space, record in zip(spaces, model.records):
        total = space.positives + space.negatives
        fractions = np.array([space.p, space.n, space.p_bar, space.n_bar]) / total
        extra = record.extra
        assert fractions == pytest.approx([extra["p"], extra["n"], extra["p_bar"], extra["n_bar"]],
                                          abs=1e-12)
        assert space.positives_after == pytest.approx(extra["positive_weight"], rel=1e-9)
        assert space.negatives_after == pytest.approx(extra["negative_weight"], rel=1e-9)
        # Fig. 5: the next space is the two stratified squares side by side
        assert space.positives_after == pytest.approx(
            space.covered_side + space.uncovered_side, rel=1e-6, abs=1e-6)


def test_adaboost_with_stratification_reweighting_is_adaboost(ionosphere):
    """The study swaps AdaBoost's reweighting for ``stratification``: same weights, same model."""
    from boostkit_pnspace.study import study_recipe

    X, y = ionosphere
    # Round by round, the weights from the margins: as the stratification rule computes them.
    plain = boostkit.Booster("adaboost", n_rounds=30, histogram="exact",
                             compiled_rounds=False).fit(X, y)
    recorded = boostkit.Booster(study_recipe("adaboost"), n_rounds=30).fit(X, y)
    assert [h.describe() for h in plain.hypotheses] == [h.describe() for h in recorded.hypotheses]
    assert np.array_equal(plain.decision_function(X), recorded.decision_function(X))
    assert [r.z for r in plain.records] == [r.z for r in recorded.records]
    assert "total_weight" in recorded.records[-1].extra


def test_ada2boost_model_saves_and_loads(ionosphere, tmp_path):
    X, y = ionosphere
    model = boostkit.Booster("ada2boost", n_rounds=10).fit(X, y)
    reloaded = boostkit.load_model(model.save(tmp_path / "ada2.npz"))
    assert np.array_equal(reloaded.decision_function(X), model.decision_function(X))
    assert reloaded.records == model.records


def test_sklearn_estimator_runs_ada2boost(ionosphere):
    pytest.importorskip("sklearn")
    from boostkit.sklearn import BoostClassifier

    X, y = ionosphere
    clf = BoostClassifier("ada2boost", n_rounds=20).set_params(calibration__smoothing="laplace")
    clf.fit(X, y)
    assert clf.score(X, y) > 0.9
    assert clf.records_[0].extra["covered_cell"] in (0, 1)


def test_unsmoothed_ada2boost_is_real_adaboost_with_stumps():
    """Scholz 2006, section 4: Real AdaBoost with "reasonable" confidences per stump predicts as
    Ada2Boost.

    Both minimise 2 sum_j sqrt(W+_j W-_j) over stumps and give c_j = 1/2 ln(W+_j / W-_j); on
    credit-g no side is pure, so only rounding separates them.
    """
    data = load("german_credit", encode="onehot")
    X, y = data.X, data.binary_target()
    ada2 = boostkit.Booster("ada2boost", n_rounds=40).fit(X, y)
    real = boostkit.Booster("real-adaboost", n_rounds=40,
                            params={"calibration": {"smoothing": 0.0}}).fit(X, y)
    assert [h.describe() for h in ada2.hypotheses] == [h.describe() for h in real.hypotheses]
    assert ada2.decision_function(X) == pytest.approx(real.decision_function(X), abs=1e-10)

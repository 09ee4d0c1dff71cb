"""The theorems of Scholz 2006 as properties of random data and random stumps.

* Theorem 1: after one round with the same base classifier, Ada2Boost's total weight is at
  most AdaBoost's, with (W_ada/2)^2 - (W_ada2/2)^2 = (sqrt(p p_bar) - sqrt(n n_bar))^2, which is
  0 exactly when eps+ = eps-.
* Prop. 4: after each Ada2Boost round both sides of h_t are stratified (P' = N' on each) and
  h_t's local errors are exactly 1/2 under w_{t+1}.
* Prop. 1-2: ``stratify`` preserves P N and reaches the smallest total weight 2 sqrt(P N).
* Theorem 2 / Corollary 1: AOC*(training set) <= AOC*(reweighted set) every round, so the
  training AUC is at least 1 - AOC*(reweighted)/(P N), and at least 1 - W^2/(8 P N) whenever
  the reweighted AUC is >= 1/2.
* Prop. 3: the AdaBoost-form model predicts as the Ada2Boost model.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import boostkit
from boostkit.metrics import roc_auc
from boostkit.observers import WeightHistory
from boostkit_pnspace import stratify, to_adaboost_form

FIXTURE_SETTINGS = settings(max_examples=40, deadline=None,
                            suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def weighted_sets(draw, min_n=4, max_n=60):
    """(X with 1..3 integer features, y in {-1, +1} with both classes, positive weights)."""
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(1, 3))
    X = draw(arrays(np.float64, (n, d), elements=st.integers(-4, 4).map(float)))
    y = draw(arrays(np.int64, n, elements=st.sampled_from([-1, 1])))
    y[:2] = (-1, 1)
    weights = draw(arrays(np.float64, n, elements=st.floats(0.05, 10.0)))
    return X, y, weights


def _sides(X, y, weights, threshold):
    """p, n (x > threshold, h = +1) and p_bar, n_bar, in the paper's units (w_1 sums to |E|)."""
    w = weights * len(y) / weights.sum()
    right = X[:, 0] > threshold
    return (w[right & (y == 1)].sum(), w[right & (y == -1)].sum(),
            w[~right & (y == 1)].sum(), w[~right & (y == -1)].sum())


@given(weighted_sets(), st.integers(-5, 4))
@FIXTURE_SETTINGS
def test_theorem1_ada2boost_reduces_the_weight_at_least_as_much(fixed_stump, data, cut):
    X, y, weights = data
    threshold = cut + 0.5
    p, n, p_bar, n_bar = _sides(X, y, weights, threshold)
    ada2 = fixed_stump("fixed-ada2", X, y, threshold, sample_weight=weights).records[0].extra
    ada = fixed_stump("fixed-ada", X, y, threshold, sample_weight=weights).records[0].extra
    # the floors that keep pure sides finite move both totals by at most ~sqrt(1e-15) |E|
    slack = 1e-6 * len(y)
    assert ada2["total_weight"] <= ada["total_weight"] + slack
    if min(p, n, p_bar, n_bar) > 1e-6:
        gap = (ada["total_weight"] / 2) ** 2 - (ada2["total_weight"] / 2) ** 2
        assert gap == pytest.approx((math.sqrt(p * p_bar) - math.sqrt(n * n_bar)) ** 2,
                                    rel=1e-7, abs=1e-9 * len(y) ** 2)


@given(weighted_sets(), st.integers(-5, 4), st.floats(0.05, 20.0))
@FIXTURE_SETTINGS
def test_theorem1_equal_weight_exactly_when_local_errors_agree(fixed_stump, data, cut, ratio):
    X, y, weights = data
    threshold = cut + 0.5
    right = X[:, 0] > threshold
    groups = [right & (y == 1), right & (y == -1), ~right & (y == 1), ~right & (y == -1)]
    assume(all(g.any() for g in groups))
    # rescale the four groups so that p/n = n_bar/p_bar = ratio, i.e. eps+ = eps-
    w = weights.copy()
    for group, target in zip(groups, (ratio, 1.0, 1.0, ratio)):
        w[group] *= target / w[group].sum()
    ada2 = fixed_stump("fixed-ada2", X, y, threshold, sample_weight=w).records[0].extra
    ada = fixed_stump("fixed-ada", X, y, threshold, sample_weight=w).records[0].extra
    assert ada2["eps_covered"] == pytest.approx(ada2["eps_uncovered"], rel=1e-12)
    assert ada2["total_weight"] == pytest.approx(ada["total_weight"], rel=1e-12)


@given(weighted_sets(min_n=10))
@settings(max_examples=40, deadline=None)
def test_prop4_both_sides_are_stratified_after_each_round(data):
    X, y, weights = data
    history = WeightHistory()
    model = boostkit.Booster("ada2boost", n_rounds=8, observers=[history]).fit(X, y, weights)
    for t, hypothesis in enumerate(model.hypotheses):
        cells = hypothesis.cells(X)
        before, after = history.weights[t], history.weights[t + 1]
        mixed = []
        for cell in (0, 1):
            side = cells == cell
            pos, neg = before[side & (y == 1)].sum(), before[side & (y == -1)].sum()
            if min(pos, neg) <= 1e-9:  # a pure side: Prop. 4 needs errors bounded away from 0
                continue
            mixed.append(cell)
            pos_after, neg_after = after[side & (y == 1)].sum(), after[side & (y == -1)].sum()
            assert pos_after == pytest.approx(neg_after, rel=1e-9)
            # the local error of h_t on this side is 1/2 under w_{t+1}
            assert min(pos_after, neg_after) / (pos_after + neg_after) == pytest.approx(0.5, rel=1e-9)
        if len(mixed) == 2:
            assert after[y == 1].sum() == pytest.approx(0.5, rel=1e-9)  # P' = N'
            extra = model.records[t].extra
            assert extra["positive_weight"] == pytest.approx(extra["negative_weight"], rel=1e-9)


@st.composite
def classes_and_weights(draw):
    n = draw(st.integers(2, 50))
    y = draw(arrays(np.int64, n, elements=st.sampled_from([-1, 1])))
    y[:2] = (-1, 1)
    return draw(arrays(np.float64, n, elements=st.floats(0.01, 100.0))), y


@given(classes_and_weights(), st.floats(1e-3, 1e3))
@settings(max_examples=100, deadline=None)
def test_prop1_and_prop2_stratification_minimises_the_weight(data, c):
    weights, y = data
    P, N = weights[y == 1].sum(), weights[y == -1].sum()
    skewed = stratify(weights, y, c)
    P_c, N_c = skewed[y == 1].sum(), skewed[y == -1].sum()
    assert P_c * N_c == pytest.approx(P * N, rel=1e-12)  # Prop. 1: P N preserved
    assert (P_c / N_c) == pytest.approx(c * P / N, rel=1e-12)
    stratified = stratify(weights, y)
    assert stratified[y == 1].sum() == pytest.approx(stratified[y == -1].sum(), rel=1e-12)
    assert stratified.sum() == pytest.approx(2 * math.sqrt(P * N), rel=1e-12)
    assert stratified.sum() <= skewed.sum() * (1 + 1e-12)  # Prop. 2


@pytest.mark.parametrize("algorithm", ["ada2boost", "adaboost-recorded"])
@given(data=weighted_sets(min_n=8))
@settings(max_examples=30, deadline=None)
def test_theorem2_and_corollary1_bound_the_training_auc(algorithm, data):
    from boostkit_pnspace.study import study_recipe

    X, y, weights = data
    recipe = "ada2boost" if algorithm == "ada2boost" else study_recipe("adaboost")
    model = boostkit.Booster(recipe, n_rounds=12).fit(X, y, weights)
    area = len(y) ** 2 * weights[y == 1].sum() * weights[y == -1].sum() / weights.sum() ** 2
    for record, margin in zip(model.records, model.staged_decision_function(X)):
        extra = record.extra
        assert extra["train_auc"] == pytest.approx(roc_auc(y, margin, sample_weight=weights), abs=1e-9)
        # Theorem 2: every misranked pair has w+ w- > w_1+ w_1-
        assert extra["aoc_train"] <= extra["aoc_weighted"] * (1 + 1e-9) + 1e-12 * area
        assert extra["train_auc"] >= extra["auc_bound_theorem2"] - 1e-9
        if extra["weighted_auc"] is not None and extra["weighted_auc"] >= 0.5:
            assert extra["train_auc"] >= extra["auc_bound"] - 1e-9  # Corollary 1
        # P' + N' = W, so P'N' <= W^2 / 4
        assert extra["pn_area"] <= extra["total_weight"] ** 2 / 4 * (1 + 1e-12)


@given(weighted_sets(min_n=6))
@settings(max_examples=30, deadline=None)
def test_prop3_adaboost_form_predicts_the_same(data):
    X, y, weights = data
    model = boostkit.Booster("ada2boost", n_rounds=10).fit(X, y, weights)
    converted = to_adaboost_form(model)
    margin, converted_margin = model.decision_function(X), converted.decision_function(X)
    assert converted_margin == pytest.approx(margin, rel=1e-9, abs=1e-9)
    clear = np.abs(margin) > 1e-9  # rounding may flip an exact tie at F = 0
    assert np.array_equal(model.predict(X)[clear], converted.predict(X)[clear])
    alphas = [c.alpha for c in converted.contributions[1:]]
    assert all(alpha >= 0 for alpha in alphas)  # h_t = +1 on the side with the larger value
    assert {float(v) for h in converted.hypotheses[1:] for v in h.scores(X)} <= {-1.0, 1.0}

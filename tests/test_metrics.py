"""boostkit.metrics: ROC and precision-recall from scores with ties (Yoder 2011), weighted AUC,
average precision, F1, ranking loss, prod Z_t, accuracy, stratified folds."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest

from boostkit.metrics import accuracy, roc_auc, roc_curve, stratified_folds
from boostkit.metrics import (
    average_precision,
    error_bound,
    f1_score,
    precision_recall_curve,
    ranking_loss,
)

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def pairwise_auc(y01, scores, weights):
    """Naive O(n^2) reference: weighted fraction of (positive, negative) pairs ranked right,
    ties counting half."""
    pos, neg = y01 == 1, y01 == 0
    diff = scores[pos][:, None] - scores[neg][None, :]
    pair_w = weights[pos][:, None] * weights[neg][None, :]
    right = (diff > 0) + 0.5 * (diff == 0)
    return (pair_w * right).sum() / pair_w.sum()


# -- the slides' examples (Yoder 2011, "ROC & precision-recall", discrete classifiers) -------------


def test_roc_points_of_the_slides_five_item_example():
    gt = np.array([1, 0, 1, 0, 1])
    feat = np.array([0.9, 0.7, 0.6, 0.5, 0.2])
    fpr, tpr, thresholds = roc_curve(gt, feat)
    # Sweeping the threshold down: +, -, +, -, + over P = 3 positives and N = 2 negatives.
    np.testing.assert_allclose(fpr, [0, 0, 1 / 2, 1 / 2, 1, 1])
    np.testing.assert_allclose(tpr, [0, 1 / 3, 1 / 3, 2 / 3, 2 / 3, 1])
    np.testing.assert_array_equal(thresholds, [np.inf, 0.9, 0.7, 0.6, 0.5, 0.2])
    # Pairs ranked right: 0.9 > 0.7, 0.9 > 0.5, 0.6 > 0.5: 3 of 6.
    assert roc_auc(gt, feat) == pytest.approx(0.5)


def test_roc_points_of_the_slides_tied_example():
    gt = np.array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1])
    feat = np.array([0.9, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.5, 0.5, 0.5, 0.2])
    fpr, tpr, thresholds = roc_curve(gt, feat)
    # Each run of four tied negatives is one step of 4/8 along the false-positive axis.
    np.testing.assert_allclose(fpr, [0, 0, 1 / 2, 1 / 2, 1, 1])
    np.testing.assert_allclose(tpr, [0, 1 / 3, 1 / 3, 2 / 3, 2 / 3, 1])
    np.testing.assert_array_equal(thresholds, [np.inf, 0.9, 0.7, 0.6, 0.5, 0.2])
    assert roc_auc(gt, feat) == pytest.approx(12 / 24)


def test_a_tie_between_classes_is_one_diagonal_segment_counted_half():
    fpr, tpr, _ = roc_curve([1, 1, 0], [0.8, 0.5, 0.5])
    np.testing.assert_allclose(fpr, [0, 0, 1])
    np.testing.assert_allclose(tpr, [0, 1 / 2, 1])
    # 0.8 beats the negative, 0.5 ties it: (1 + 1/2) / 2.
    assert roc_auc([1, 1, 0], [0.8, 0.5, 0.5]) == pytest.approx(0.75)
    assert roc_auc([1, 0, 1, 0], np.zeros(4)) == pytest.approx(0.5)


# -- against scikit-learn and the pairwise definition, with ties and weights --------------------


@pytest.mark.parametrize("seed", range(8))
def test_roc_curve_and_auc_match_scikit_learn_with_ties_and_weights(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    y01 = rng.integers(0, 2, n)
    y01[:2] = (0, 1)
    scores = rng.integers(0, 12, n) + 0.3 * y01  # few distinct values: many ties, some mixed
    weights = rng.exponential(size=n)
    weights[rng.random(n) < 0.1] = 0.0
    labels = 2 * y01 - 1 if seed % 2 else y01  # both label conventions

    for w in (None, weights):
        fpr, tpr, thresholds = roc_curve(labels, scores, w)
        ref_fpr, ref_tpr, ref_thresholds = sklearn_metrics.roc_curve(
            y01, scores, sample_weight=w, drop_intermediate=False
        )
        np.testing.assert_allclose(fpr, ref_fpr, atol=1e-12)
        np.testing.assert_allclose(tpr, ref_tpr, atol=1e-12)
        np.testing.assert_array_equal(thresholds[1:], ref_thresholds[1:])
        assert roc_auc(labels, scores, w) == pytest.approx(
            sklearn_metrics.roc_auc_score(y01, scores, sample_weight=w), abs=1e-12
        )
    assert roc_auc(labels, scores, weights) == pytest.approx(
        pairwise_auc(y01, scores, weights), abs=1e-12
    )


def test_integer_weights_count_as_repeated_examples():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 60)
    scores = rng.integers(0, 5, 60).astype(float)
    counts = rng.integers(0, 4, 60)
    counts[:2], y[:2] = 1, (0, 1)
    assert roc_auc(y, scores, counts) == pytest.approx(
        roc_auc(np.repeat(y, counts), np.repeat(scores, counts))
    )


def test_auc_of_reversed_scores_is_one_minus_auc():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 200)
    scores = rng.normal(size=200).round(1) + y
    assert roc_auc(y, -scores) == pytest.approx(1 - roc_auc(y, scores))
    assert roc_auc(y, scores) > 0.7


@pytest.mark.parametrize(
    "y, scores, message",
    [
        ([1, 1, 1], [0.1, 0.2, 0.3], "no negatives"),
        ([0, 0], [0.1, 0.2], "no positives"),
        ([1, 2, 1], [0.1, 0.2, 0.3], r"\{0, 1\} or \{-1, \+1\}"),
        ([1, 0], [0.1], "2 labels but scores has 1"),
        ([1, 0], [0.1, np.nan], "NaN"),
    ],
)
def test_roc_errors_say_what_is_wrong(y, scores, message):
    with pytest.raises(ValueError, match=message):
        roc_auc(y, scores)


def test_accuracy_plain_and_weighted():
    y_true = np.array([1, -1, 1, 1])
    y_pred = np.array([1, 1, 1, -1])
    assert accuracy(y_true, y_pred) == pytest.approx(0.5)
    assert accuracy(y_true, y_pred, [1, 0, 1, 0]) == pytest.approx(1.0)
    assert accuracy(y_true, y_pred, [0, 1, 0, 3]) == pytest.approx(0.0)
    assert accuracy(y_true, y_pred, [1, 1, 2, 0]) == pytest.approx(sklearn_metrics.accuracy_score(
        y_true, y_pred, sample_weight=[1, 1, 2, 0]))
    with pytest.raises(ValueError, match="4 labels but y_pred has 3"):
        accuracy(y_true, y_pred[:3])


# -- stratified folds ---------------------------------------------------------------------------


def test_stratified_folds_partition_the_examples_and_keep_class_proportions():
    y = np.array(["a"] * 37 + ["b"] * 13 + ["c"] * 6)
    folds = stratified_folds(y, 5, seed=1)
    assert len(folds) == 5
    tests = np.concatenate([test for _, test in folds])
    np.testing.assert_array_equal(np.sort(tests), np.arange(y.size))  # each example once
    for train, test in folds:
        np.testing.assert_array_equal(np.union1d(train, test), np.arange(y.size))
        assert np.intersect1d(train, test).size == 0
    sizes = [test.size for _, test in folds]
    assert max(sizes) - min(sizes) <= 1
    for label, total in (("a", 37), ("b", 13), ("c", 6)):
        per_fold = [int((y[test] == label).sum()) for _, test in folds]
        assert max(per_fold) - min(per_fold) <= 1
        assert sum(per_fold) == total


def test_stratified_folds_are_seeded():
    y = np.repeat([0, 1], [40, 20])
    first = stratified_folds(y, 4, seed=7)
    again = stratified_folds(y, 4, seed=7)
    other = stratified_folds(y, 4, seed=8)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(first, again))
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(first, other))


def test_stratified_folds_refuse_a_class_smaller_than_the_folds():
    with pytest.raises(ValueError, match="class 'rare' has only 2 example"):
        stratified_folds(["common"] * 20 + ["rare"] * 2, 3, seed=0)
    with pytest.raises(ValueError, match="n_folds must be an integer >= 2"):
        stratified_folds([0, 1, 0, 1], 1, seed=0)


# -- precision-recall, average precision, F1, ranking loss, prod Z_t ---------------------------


def test_precision_recall_points_of_the_slides_tables():
    # Yoder 2011, "Discrete classifiers": five items (P = 3, N = 2), then eleven (P = 3, N = 8).
    precision, recall, thresholds = precision_recall_curve([1, 0, 1, 0, 1], [0.9, 0.7, 0.6, 0.5, 0.2])
    np.testing.assert_allclose(recall, [0, 1 / 3, 1 / 3, 2 / 3, 2 / 3, 1])
    np.testing.assert_allclose(precision, [1, 1, 1 / 2, 2 / 3, 1 / 2, 3 / 5])
    np.testing.assert_array_equal(thresholds, [np.inf, 0.9, 0.7, 0.6, 0.5, 0.2])
    gt = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    feat = [0.9, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.5, 0.5, 0.5, 0.2]
    precision, recall, _ = precision_recall_curve(gt, feat)
    # One point per distinct score: each run of four tied negatives is a single step.
    np.testing.assert_allclose(recall, [0, 1 / 3, 1 / 3, 2 / 3, 2 / 3, 1])
    np.testing.assert_allclose(precision, [1, 1, 1 / 5, 1 / 3, 1 / 5, 3 / 11])
    assert average_precision(gt, feat) == pytest.approx((1 + 1 / 3 + 3 / 11) / 3)


def test_a_tie_between_classes_is_one_precision_recall_step():
    precision, recall, _ = precision_recall_curve([1, 1, 0], [0.8, 0.5, 0.5])
    np.testing.assert_allclose(recall, [0, 1 / 2, 1])
    np.testing.assert_allclose(precision, [1, 1, 2 / 3])
    assert average_precision([1, 1, 0], [0.8, 0.5, 0.5]) == pytest.approx(1 / 2 + 1 / 2 * 2 / 3)
    with pytest.raises(ValueError, match="needs positives"):
        precision_recall_curve([0, 0], [0.1, 0.2])


@pytest.mark.parametrize("seed", range(8))
def test_precision_recall_and_average_precision_match_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    y01 = rng.integers(0, 2, n)
    y01[:2] = (0, 1)
    scores = rng.integers(0, 12, n) + 0.3 * y01  # many ties, some mixed
    weights = rng.exponential(size=n)
    weights[rng.random(n) < 0.1] = 0.0
    weights[1] = 1.0
    labels = 2 * y01 - 1 if seed % 2 else y01
    for w in (None, weights):
        precision, recall, thresholds = precision_recall_curve(labels, scores, w)
        ref_precision, ref_recall, ref_thresholds = sklearn_metrics.precision_recall_curve(
            y01, scores, sample_weight=w)
        np.testing.assert_allclose(precision, ref_precision[::-1], atol=1e-12)
        np.testing.assert_allclose(recall, ref_recall[::-1], atol=1e-12)
        np.testing.assert_array_equal(thresholds[1:], ref_thresholds[::-1])
        assert average_precision(labels, scores, w) == pytest.approx(
            sklearn_metrics.average_precision_score(y01, scores, sample_weight=w), abs=1e-12)


def test_f1_matches_scikit_learn():
    rng = np.random.default_rng(1)
    y_true = rng.integers(0, 2, 100)
    y_pred = np.where(rng.random(100) < 0.7, y_true, 1 - y_true)
    weights = rng.exponential(size=100)
    assert f1_score(y_true, y_pred) == pytest.approx(sklearn_metrics.f1_score(y_true, y_pred))
    assert f1_score(2 * y_true - 1, 2 * y_pred - 1, weights) == pytest.approx(
        sklearn_metrics.f1_score(y_true, y_pred, sample_weight=weights))
    # 2 TP / (2 TP + FP + FN) = 2 / (2 + 1 + 1); no positives at all: 0.
    assert f1_score([1, 1, 0, 0], [1, 0, 1, 0]) == pytest.approx(0.5)
    assert f1_score([0, 0], [0, 0]) == 0.0
    with pytest.raises(ValueError, match="3 labels but y_pred has 2"):
        f1_score([1, 0, 1], [1, 0])


def naive_ranking_loss(y, scores, weights, group, tie_weight):
    """Straight from the definition: every pair (i, j) of one group with y_i > y_j."""
    misordered = total = 0.0
    for i in range(y.size):
        for j in range(y.size):
            if group[i] == group[j] and y[i] > y[j]:
                pair = weights[i] * weights[j]
                total += pair
                misordered += pair * ((scores[i] < scores[j]) + tie_weight * (scores[i] == scores[j]))
    return misordered / total


@pytest.mark.parametrize("seed", range(6))
def test_ranking_loss_counts_misordered_pairs_within_groups(seed):
    rng = np.random.default_rng(seed)
    n = 60
    relevance = rng.integers(0, 4, n)
    scores = rng.integers(0, 6, n) + 0.5 * relevance
    weights = rng.exponential(size=n)
    group = rng.integers(0, 4, n)
    for tie_weight in (1.0, 0.5, 0.0):
        assert ranking_loss(relevance, scores, weights, group, tie_weight=tie_weight) == pytest.approx(
            naive_ranking_loss(relevance, scores, weights, group, tie_weight), abs=1e-12)
    assert ranking_loss(relevance, scores) == pytest.approx(
        naive_ranking_loss(relevance, scores, np.ones(n), np.zeros(n), 1.0), abs=1e-12)
    # Two labels, one group, ties counted half: 1 - AUC.
    y = relevance > 1
    assert ranking_loss(y, scores, weights, tie_weight=0.5) == pytest.approx(
        1 - roc_auc(y, scores, weights), abs=1e-12)


def test_ranking_loss_errors():
    with pytest.raises(ValueError, match="needs a pair"):
        ranking_loss([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="needs a pair"):
        ranking_loss([0, 1], [0.1, 0.2], group=["a", "b"])
    with pytest.raises(ValueError, match="tie_weight"):
        ranking_loss([0, 1], [0.1, 0.2], tie_weight=2.0)
    with pytest.raises(ValueError, match="numeric relevance"):
        ranking_loss(["x", "y"], [0.1, 0.2])


def test_error_bound_is_the_product_of_the_recorded_z():
    import boostkit

    data = boostkit.datasets.load("ionosphere")
    model = boostkit.Booster("adaboost", n_rounds=30).fit(data.X, data.y)
    bound = error_bound(model.records)
    assert bound == pytest.approx(np.prod([r.z for r in model.records]), rel=1e-12)
    assert bound == pytest.approx(model.error_bound, rel=1e-9)
    assert model.records[-1].training_error <= bound  # Yoder 2011: err_train <= prod Z_t
    no_potential = attrs.evolve(model.records[3], z=None)
    with pytest.raises(ValueError, match=r"round\(s\) \[4\] recorded no Z_t"):
        error_bound([*model.records[:3], no_potential])
    with pytest.raises(ValueError, match="at least one round"):
        error_bound([])


# -- margin losses and the metric table (validation-based early stopping) ----------------------


def test_log_loss_is_the_cross_entropy_of_predict_proba():
    from boostkit.metrics import log_loss

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    margin = rng.normal(scale=3.0, size=50)
    weights = rng.random(50)
    p = 1.0 / (1.0 + np.exp(-2.0 * margin))  # BoostModel.predict_proba
    expected = sklearn_metrics.log_loss(y, p, sample_weight=weights)
    assert log_loss(y, margin, weights) == pytest.approx(expected, rel=1e-12)
    assert log_loss(2 * y - 1, margin, weights) == pytest.approx(expected, rel=1e-12)
    # Huge margins neither overflow nor lose the loss of a confident mistake.
    assert log_loss([1, 0], [-1000.0, 0.0]) == pytest.approx((2000.0 + np.log(2.0)) / 2.0)


def test_exponential_loss_is_the_weighted_mean_of_exp_minus_yf():
    from boostkit.metrics import exponential_loss

    y = np.array([1, -1, 1, -1])
    margin = np.array([0.5, 0.5, -2.0, -1.0])
    weights = np.array([1.0, 2.0, 3.0, 0.0])
    expected = np.dot(weights, np.exp(-y * margin)) / weights.sum()
    assert exponential_loss(y, margin, weights) == pytest.approx(expected, rel=1e-12)
    assert exponential_loss([1], [-800.0]) == math.inf
    assert exponential_loss([1, 1], [-700.0, 700.0]) == pytest.approx(math.exp(700.0) / 2.0)
    with pytest.raises(ValueError, match="sample_weight sums to 0"):
        exponential_loss([1], [0.0], [0.0])


def test_every_metric_scores_margins_by_name():
    from boostkit.metrics import METRICS, get_metric

    y = np.array([1, 1, 0, 0, 1])
    margin = np.array([2.0, -0.5, -1.0, 0.3, 0.1])
    assert get_metric("accuracy")(y, margin) == pytest.approx(0.6)  # predicted [1, 0, 0, 1, 1]
    assert get_metric("f1_score")(y, margin) == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    assert get_metric("roc_auc")(y, margin) == roc_auc(y, margin)
    for name, metric in METRICS.items():
        assert metric.name == name
        assert math.isfinite(metric(y, margin))
    assert {n for n, m in METRICS.items() if m.greater_is_better} == {
        "accuracy", "f1_score", "roc_auc", "average_precision", "average_precision_11pt"}


def test_an_unknown_metric_lists_the_names():
    from boostkit.metrics import get_metric

    with pytest.raises(ValueError, match="unknown metric 'auc'; boostkit.metrics has accuracy, "
                                         "average_precision, average_precision_11pt, "
                                         "exponential_loss, f1_score, log_loss, ranking_loss, "
                                         "roc_auc"):
        get_metric("auc")

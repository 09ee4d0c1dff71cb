"""boostkit.metrics for several classes: accuracy of any labels, Hamming loss, the confusion
matrix, macro one-vs-rest ROC AUC and the multiclass log loss, by hand and against scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostkit.metrics import (
    accuracy,
    confusion_matrix,
    hamming_loss,
    macro_roc_auc,
    multiclass_log_loss,
    roc_auc,
)

sklearn_metrics = pytest.importorskip("sklearn.metrics")
preprocessing = pytest.importorskip("sklearn.preprocessing")

CLASSES = np.array(["1", "2", "3"])


@pytest.fixture(params=[0, 1, 2])
def three_classes(request):
    """60 string labels of three classes, (60, 3) margins with ties, weights with zeros."""
    rng = np.random.default_rng(request.param)
    y = rng.choice(CLASSES, size=60)
    margin = np.round(rng.normal(size=(60, 3)) + 1.5 * (y[:, None] == CLASSES), 1)
    weights = rng.integers(0, 4, size=60).astype(np.float64)
    return y, margin, weights


def _probabilities(margin):
    """p_l proportional to sigma(2 F_l), what a multiclass model's predict_proba returns."""
    sigma = 1.0 / (1.0 + np.exp(-2.0 * margin))
    return sigma / sigma.sum(axis=1, keepdims=True)


# -- accuracy -----------------------------------------------------------------------------------


def test_accuracy_of_string_labels_of_three_classes(three_classes):
    y, margin, weights = three_classes
    predicted = CLASSES[np.argmax(margin, axis=1)]
    assert accuracy(["a", "b", "c", "c"], ["a", "c", "c", "b"]) == pytest.approx(0.5)
    assert accuracy(["a", "b", "c", "c"], ["a", "c", "c", "b"], [1, 0, 2, 1]) == pytest.approx(0.75)
    assert accuracy(y, predicted, weights) == pytest.approx(
        sklearn_metrics.accuracy_score(y, predicted, sample_weight=weights))


def test_accuracy_refuses_labels_of_different_kinds_and_indicator_matrices():
    with pytest.raises(ValueError, match="y_true holds text but y_pred holds numbers"):
        accuracy(np.array(["1", "2"]), np.array([1, 2]))
    with pytest.raises(ValueError, match="y_pred must hold one label per example.*hamming_loss"):
        accuracy([0, 1], [[0, 1], [1, 0]])


# -- Hamming loss -------------------------------------------------------------------------------


def test_hamming_loss_of_indicator_matrices_by_hand():
    truth = np.array([[1, 0, 1], [0, 1, 0]])
    predicted = np.array([[1, 1, 1], [1, 0, 0]])  # one wrong pair, then two
    assert hamming_loss(truth, predicted) == pytest.approx(3 / 6)
    assert hamming_loss(truth, predicted, [3, 1]) == pytest.approx((3 * 1 / 3 + 1 * 2 / 3) / 4)
    assert hamming_loss(truth.astype(bool), predicted == 1) == pytest.approx(0.5)
    assert hamming_loss(truth, truth) == 0.0


@pytest.mark.parametrize("seed", [0, 1])
def test_hamming_loss_matches_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    truth, predicted = rng.integers(0, 2, (40, 5)), rng.integers(0, 2, (40, 5))
    weights = rng.random(40)
    assert hamming_loss(truth, predicted, weights) == pytest.approx(
        sklearn_metrics.hamming_loss(truth, predicted, sample_weight=weights), rel=1e-12)
    # One label per example: the error rate, as scikit-learn's hamming_loss.
    labels, guesses = rng.choice(CLASSES, 40), rng.choice(CLASSES, 40)
    assert hamming_loss(labels, guesses, weights) == pytest.approx(
        1.0 - accuracy(labels, guesses, weights))
    assert hamming_loss(labels, guesses, weights) == pytest.approx(
        sklearn_metrics.hamming_loss(labels, guesses, sample_weight=weights))


@pytest.mark.parametrize("truth, predicted, message", [
    ([[0, 2], [1, 0]], [[0, 1], [1, 0]], "y_true must be a multi-label indicator matrix of 0"),
    ([[0, 1], [1, 0]], [["a", "b"], ["a", "b"]], "y_pred must be a multi-label indicator"),
    ([[0, 1], [1, 0]], [[0, 1, 0], [1, 0, 0]], r"shape \(2, 2\) but y_pred has shape \(2, 3\)"),
    ([[0, 1], [1, 0]], [1, 0], "must both be 1-D labels or both"),
])
def test_hamming_loss_errors(truth, predicted, message):
    with pytest.raises(ValueError, match=message):
        hamming_loss(truth, predicted)


# -- confusion matrix ---------------------------------------------------------------------------


def test_confusion_matrix_by_hand():
    y_true = ["cat", "cat", "dog", "fish", "fish", "fish"]
    y_pred = ["cat", "dog", "dog", "fish", "cat", "fish"]
    matrix = confusion_matrix(y_true, y_pred)  # rows true, columns predicted: cat, dog, fish
    np.testing.assert_array_equal(matrix, [[1, 1, 0], [0, 1, 0], [1, 0, 2]])
    assert matrix.dtype == np.int64
    reordered = confusion_matrix(y_true, y_pred, labels=["fish", "dog", "cat"])
    np.testing.assert_array_equal(reordered, [[2, 0, 1], [0, 1, 0], [0, 1, 1]])
    weighted = confusion_matrix(y_true, y_pred, sample_weight=[1, 2, 0.5, 1, 1, 3])
    np.testing.assert_allclose(weighted, [[1, 2, 0], [0, 0.5, 0], [1, 0, 4]])
    # A label seen only among the predictions has a row of zeros.
    np.testing.assert_array_equal(confusion_matrix([1, 1], [1, 3]), [[1, 1], [0, 0]])


def test_confusion_matrix_matches_scikit_learn(three_classes):
    y, margin, weights = three_classes
    predicted = CLASSES[np.argmax(margin, axis=1)]
    labels = ["3", "1", "2"]
    np.testing.assert_array_equal(confusion_matrix(y, predicted, labels=labels),
                                  sklearn_metrics.confusion_matrix(y, predicted, labels=labels))
    np.testing.assert_allclose(
        confusion_matrix(y, predicted, sample_weight=weights),
        sklearn_metrics.confusion_matrix(y, predicted, sample_weight=weights))
    assert confusion_matrix(y, predicted).trace() / y.shape[0] == pytest.approx(
        accuracy(y, predicted))


@pytest.mark.parametrize("kwargs, message", [
    ({"labels": ["a", "b"]},
     r"y_pred holds labels that are not in the classes \['a', 'b'\]: \['c'\]"),
    ({"labels": ["a", "b", "a", "c"]}, "labels names a class more than once"),
    ({"labels": []}, "labels is empty"),
    ({"sample_weight": [1, -1, 1]}, "sample_weight must be finite and non-negative"),
])
def test_confusion_matrix_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        confusion_matrix(["a", "b", "b"], ["a", "c", "b"], **kwargs)
    with pytest.raises(ValueError, match="y_true has 3 labels but y_pred has 2"):
        confusion_matrix([1, 2, 3], [1, 2])


# -- macro one-vs-rest ROC AUC ------------------------------------------------------------------


def test_macro_roc_auc_by_hand_with_a_tie():
    y = np.array(["a", "a", "b", "c"])
    scores = np.array([
        [0.9, 0.1, 0.0],
        [0.5, 0.2, 0.3],
        [0.5, 0.7, 0.1],  # ties the second example's score for "a"
        [0.1, 0.3, 0.6],
    ])
    # a: positives 0.9, 0.5 vs negatives 0.5, 0.1: pairs right 1, 1, tie 1/2, 1 -> 3.5 / 4.
    # b: positive 0.7 beats 0.1, 0.2, 0.3 -> 1. c: positive 0.6 beats 0.0, 0.3, 0.1 -> 1.
    assert macro_roc_auc(y, scores, ["a", "b", "c"]) == pytest.approx((3.5 / 4 + 1 + 1) / 3)
    # The columns follow classes, not the sorted labels.
    assert macro_roc_auc(y, scores[:, ::-1], ["c", "b", "a"]) == pytest.approx(
        (3.5 / 4 + 1 + 1) / 3)
    assert macro_roc_auc(y, scores, ["a", "b", "c"]) == pytest.approx(np.mean(
        [roc_auc(y == c, scores[:, k]) for k, c in enumerate("abc")]))


def test_macro_roc_auc_matches_scikit_learn(three_classes):
    y, margin, weights = three_classes
    indicator = preprocessing.label_binarize(y, classes=CLASSES)
    assert macro_roc_auc(y, margin, CLASSES, weights) == pytest.approx(
        sklearn_metrics.roc_auc_score(indicator, margin, average="macro", sample_weight=weights),
        rel=1e-12)
    probabilities = _probabilities(margin)
    assert macro_roc_auc(y, probabilities, CLASSES) == pytest.approx(
        sklearn_metrics.roc_auc_score(y, probabilities, multi_class="ovr", average="macro",
                                      labels=CLASSES), rel=1e-12)
    # Multi-label: the indicator matrix itself, columns in order.
    assert macro_roc_auc(indicator, margin, sample_weight=weights) == pytest.approx(
        sklearn_metrics.roc_auc_score(indicator, margin, average="macro", sample_weight=weights),
        rel=1e-12)


@pytest.mark.parametrize("y, scores, classes, message", [
    (["a", "b"], np.eye(2), None, "classes .* is required"),
    (["a", "b"], [0.1, 0.2], ["a", "b"], r"shape \(2,\); for one score column use roc_auc"),
    (["a", "b"], np.eye(2), ["a", "b", "c"], "classes has 3 labels but scores has 2 columns"),
    (["a", "d"], np.eye(2), ["a", "b"], r"y_true holds labels that are not in the classes"),
    (["a", "a", "b"], np.ones((3, 3)), ["a", "b", "c"],
     "class 'c' against the rest: .*no positives"),
    (["a", "b", "c"], np.full((3, 3), np.nan), ["a", "b", "c"], "NaN"),
    ([[0, 1], [1, 0]], np.eye(3), None, r"y_true has shape \(2, 2\) but scores has \(3, 3\)"),
])
def test_macro_roc_auc_errors(y, scores, classes, message):
    with pytest.raises(ValueError, match=message):
        macro_roc_auc(y, scores, classes)


# -- multiclass log loss ------------------------------------------------------------------------


def test_multiclass_log_loss_is_the_cross_entropy_of_predict_proba(three_classes):
    y, margin, weights = three_classes
    index = np.searchsorted(CLASSES, y)
    expected = sklearn_metrics.log_loss(y, _probabilities(margin), sample_weight=weights,
                                        labels=CLASSES)
    assert multiclass_log_loss(index, margin, weights) == pytest.approx(expected, rel=1e-12)
    unweighted = -np.mean(np.log(_probabilities(margin)[np.arange(60), index]))
    assert multiclass_log_loss(index, margin) == pytest.approx(unweighted, rel=1e-12)


def test_multiclass_log_loss_by_hand_and_with_huge_margins():
    assert multiclass_log_loss([2], [[0.0, 0.0, 0.0]]) == pytest.approx(math.log(3.0))
    # sigma(2F) = 1/2 for F = 0 and 1 / (1 + e^{-2}) for F = 1.
    s0, s1 = 0.5, 1.0 / (1.0 + math.exp(-2.0))
    assert multiclass_log_loss([0, 1], [[0.0, 1.0, 0.0]] * 2) == pytest.approx(
        (-math.log(s0 / (2 * s0 + s1)) - math.log(s1 / (2 * s0 + s1))) / 2)
    # Neither overflow nor underflow: a confident mistake costs about 2 |F|.
    assert multiclass_log_loss([1], [[1000.0, -1000.0, -1000.0]]) == pytest.approx(2000.0)
    assert multiclass_log_loss([0], [[1000.0, -1000.0, -1000.0]]) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("y, margin, weights, message", [
    ([0, 1], [0.5, -0.5], None, r"shape \(2,\); for one margin column use log_loss"),
    ([0, 3], np.zeros((2, 3)), None, r"class indices 0..2 \(the columns of margin\), got \[0, 3\]"),
    (["a", "b"], np.zeros((2, 3)), None, "y_index must hold class indices"),
    ([0, 1, 2], np.zeros((2, 3)), None, "y_index has 3 labels but margin has 2 rows"),
    ([0, 1], [[0.0, np.inf, 0.0]] * 2, None, "NaN or infinite"),
    ([0, 1], np.zeros((2, 3)), [0, 0], "sample_weight sums to 0"),
    ([], np.zeros((0, 3)), None, "empty set"),
])
def test_multiclass_log_loss_errors(y, margin, weights, message):
    with pytest.raises(ValueError, match=message):
        multiclass_log_loss(y, margin, weights)

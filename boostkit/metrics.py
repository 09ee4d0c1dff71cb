"""Evaluation metrics and cross-validation folds, with numpy only (no scikit-learn needed).

ROC curves follow Yoder 2011 ("ROC & precision-recall", "numeric classifiers"):
sweeping a threshold over the scores from +inf to -inf traces the curve, one point per distinct
score, and a group of tied scores holding both classes moves true and false positives at once,
so it draws one diagonal segment. The area under that curve is the rank statistic
P(score of a positive > score of a negative) with ties counted half, as in AOC*
(Scholz 2006, weighted misranked pairs, ties count half). Precision-recall curves
are swept the same way; RankBoost's ranking loss counts misordered pairs within query groups and
is bounded by prod_t Z_t (``error_bound``). ``average_precision_11pt`` is the 11-point
interpolated average precision of Wilbur et al. 2005 (eq. 37-38), with its rule for ties.

Several classes: :func:`accuracy` and :func:`confusion_matrix` compare labels of any kind
(strings included); :func:`hamming_loss` is the fraction of wrong (example, label) pairs of a
multi-label indicator matrix, the loss AdaBoost.MH minimises (Schapire & Singer 1999, section
7); :func:`macro_roc_auc` averages the one-vs-rest AUCs of a score matrix's columns;
:func:`multiclass_log_loss` is the cross-entropy of the class probabilities p_l proportional to
1 / (1 + e^{-2 F_l}) that a multiclass model predicts from its (n, K) margins.

:data:`METRICS` names every metric that scores a model's margins F(x) on labelled data (what
validation-based early stopping and ``get_metric`` look up), with whether greater is better.
"""

from __future__ import annotations

import math
from typing import Callable

import attrs
import numpy as np

__all__ = [
    "accuracy",
    "average_precision",
    "average_precision_11pt",
    "confusion_matrix",
    "error_bound",
    "exponential_loss",
    "f1_score",
    "get_metric",
    "hamming_loss",
    "log_loss",
    "macro_roc_auc",
    "METRICS",
    "Metric",
    "multiclass_log_loss",
    "precision_recall_curve",
    "ranking_loss",
    "roc_auc",
    "roc_curve",
    "stratified_folds",
]


def _vector(values, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    return arr


def _sample_weight(sample_weight, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    w = _vector(sample_weight, "sample_weight").astype(np.float64)
    if w.shape[0] != n:
        raise ValueError(f"sample_weight has {w.shape[0]} values, expected {n}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("sample_weight must be finite and non-negative")
    return w


def _positive_mask(y_true) -> np.ndarray:
    """``y_true == 1`` for labels in {0, 1}, {-1, +1} or booleans; anything else is refused."""
    y = _vector(y_true, "y_true")
    if y.dtype == bool:
        return y
    values = np.unique(y)
    if not (np.isin(values, (0, 1)).all() or np.isin(values, (-1, 1)).all()):
        raise ValueError(
            "y_true must hold labels in {0, 1} or {-1, +1} (1 is the positive class), "
            f"got the values {values[:10].tolist()}"
        )
    return y == 1


def _label_pair(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    """``y_true`` and ``y_pred`` as 1-D arrays of one length whose labels can be compared.

    Text labels never equal numbers (``"1" != 1``), so a mix of the two, which would silently
    count every prediction wrong, is refused.
    """
    for values, name in ((y_true, "y_true"), (y_pred, "y_pred")):
        if np.ndim(values) == 2:
            raise ValueError(
                f"{name} must hold one label per example (1-D), got an array of shape "
                f"{np.shape(values)}; for multi-label indicator matrices use hamming_loss"
            )
    y_true = _vector(y_true, "y_true")
    y_pred = _vector(y_pred, "y_pred")
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true has {y_true.shape[0]} labels but y_pred has {y_pred.shape[0]}")
    text = [values.dtype.kind in "US" for values in (y_true, y_pred)]
    if text[0] != text[1] and object not in (y_true.dtype, y_pred.dtype):
        raise ValueError(
            f"y_true holds {'text' if text[0] else 'numbers'} but y_pred holds "
            f"{'text' if text[1] else 'numbers'}: labels of different kinds never compare equal"
        )
    return y_true, y_pred


def accuracy(y_true, y_pred, sample_weight=None) -> float:
    """The (weighted) fraction of predictions equal to the true labels.

    Labels of any kind and any number of classes (numbers, strings), one per example: a model's
    ``predict`` against the labels it was fitted on. For multi-label indicator matrices use
    :func:`hamming_loss` (1 - Hamming loss is the fraction of right (example, label) pairs).
    """
    y_true, y_pred = _label_pair(y_true, y_pred)
    if y_true.shape[0] == 0:
        raise ValueError("accuracy of an empty set is undefined")
    w = _sample_weight(sample_weight, y_true.shape[0])
    total = w.sum()
    if total <= 0:
        raise ValueError("sample_weight sums to 0")
    return float(w[y_true == y_pred].sum() / total)


def _indicator(values, name: str) -> np.ndarray:
    """A 2-D array of 0/1 (or booleans) as booleans; anything else is refused."""
    arr = np.asarray(values)
    if arr.dtype != bool:
        if arr.dtype.kind not in "iuf" or not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} must be a multi-label indicator matrix of 0 and 1 only")
        arr = arr == 1
    return arr


def hamming_loss(y_true, y_pred, sample_weight=None) -> float:
    """The (weighted) fraction of wrong (example, label) pairs (Schapire & Singer 1999, section 7).

    For multi-label data, ``y_true`` and ``y_pred`` are ``(n, K)`` indicator matrices of 0 and 1
    (or booleans), such as a multi-label model's ``predict``: the loss is
    sum_i w_i |Y_i xor h(x_i)| / (K sum_i w_i), the Hamming loss AdaBoost.MH minimises. For
    one label per example (1-D arrays of any labels) a prediction is wrong or right as a whole,
    so the loss is the error rate 1 - :func:`accuracy`. Both are scikit-learn's
    ``hamming_loss``.
    """
    if np.ndim(y_true) != 2 and np.ndim(y_pred) != 2:
        return 1.0 - accuracy(y_true, y_pred, sample_weight)
    if np.ndim(y_true) != 2 or np.ndim(y_pred) != 2:
        raise ValueError(
            f"y_true (shape {np.shape(y_true)}) and y_pred (shape {np.shape(y_pred)}) must both "
            "be 1-D labels or both (n, K) indicator matrices"
        )
    truth, predicted = _indicator(y_true, "y_true"), _indicator(y_pred, "y_pred")
    if truth.shape != predicted.shape:
        raise ValueError(f"y_true has shape {truth.shape} but y_pred has shape {predicted.shape}")
    if truth.size == 0:
        raise ValueError("the Hamming loss of an empty matrix is undefined")
    w = _sample_weight(sample_weight, truth.shape[0])
    if w.sum() <= 0:
        raise ValueError("sample_weight sums to 0")
    wrong = (truth != predicted).mean(axis=1)
    return float(np.dot(w, wrong) / w.sum())


def _class_index(values: np.ndarray, classes: np.ndarray, name: str) -> np.ndarray:
    """The position in ``classes`` of each of ``values``; a value not among them is refused."""
    order = np.argsort(classes, kind="stable")
    ordered = classes[order]
    at = np.clip(np.searchsorted(ordered, values), 0, ordered.shape[0] - 1)
    unknown = ordered[at] != values
    if unknown.any():
        raise ValueError(
            f"{name} holds labels that are not in the classes {classes[:20].tolist()}: "
            f"{np.unique(values[unknown])[:10].tolist()}"
        )
    return order[at]


def _classes(classes, name: str) -> np.ndarray:
    """``classes`` as a 1-D array of at least one label, each given once."""
    classes = _vector(classes, name)
    if classes.shape[0] == 0:
        raise ValueError(f"{name} is empty")
    if np.unique(classes).shape[0] != classes.shape[0]:
        raise ValueError(f"{name} names a class more than once: {classes[:20].tolist()}")
    return classes


def confusion_matrix(y_true, y_pred, labels=None, sample_weight=None) -> np.ndarray:
    """The confusion matrix: entry (i, j) counts the examples of class i predicted as class j.

    Rows are true classes and columns predicted classes, in the order of ``labels`` (default:
    the sorted labels seen in ``y_true`` or ``y_pred``), as scikit-learn's
    ``confusion_matrix``; the diagonal holds the right predictions. Without ``sample_weight``
    the entries are int64 counts, with it float64 sums of weights. Unlike scikit-learn, a label
    of ``y_true`` or ``y_pred`` missing from ``labels`` is refused rather than dropped.

    Returns
    -------
    numpy.ndarray
        ``(K, K)`` for the K ``labels``.
    """
    y_true, y_pred = _label_pair(y_true, y_pred)
    if labels is None:
        labels = np.unique(np.concatenate((y_true, y_pred)))
        if labels.shape[0] == 0:
            raise ValueError("y_true and y_pred are empty: there is no class to count")
    labels = _classes(labels, "labels")
    k = labels.shape[0]
    cells = _class_index(y_true, labels, "y_true") * k + _class_index(y_pred, labels, "y_pred")
    if sample_weight is None:
        return np.bincount(cells, minlength=k * k).astype(np.int64).reshape(k, k)
    w = _sample_weight(sample_weight, y_true.shape[0])
    return np.bincount(cells, weights=w, minlength=k * k).reshape(k, k)


def _signed_margins(y_true, margin, sample_weight):
    """``(y in {-1, +1}, margin, weights)`` checked for the margin losses."""
    is_pos, margin = _labels_and_scores(y_true, margin)
    if margin.shape[0] == 0:
        raise ValueError("the loss of an empty set is undefined")
    w = _sample_weight(sample_weight, margin.shape[0])
    if w.sum() <= 0:
        raise ValueError("sample_weight sums to 0")
    return np.where(is_pos, 1.0, -1.0), margin, w


def log_loss(y_true, margin, sample_weight=None) -> float:
    """Mean (weighted) log loss of the probabilities p = 1 / (1 + e^{-2F}) a boosted model predicts.

    ``margin`` holds the model's F(x) (``decision_function``), not probabilities: with
    p(y=+1|x) = 1 / (1 + e^{-2F}) (``BoostModel.predict_proba``, Friedman, Hastie & Tibshirani
    2000) the binary cross-entropy of an example is log(1 + e^{-2 y F}), computed as
    ``logaddexp(0, -2yF)`` so it never overflows.
    """
    y, margin, w = _signed_margins(y_true, margin, sample_weight)
    return float(np.dot(w, np.logaddexp(0.0, -2.0 * y * margin)) / w.sum())


def multiclass_log_loss(y_index, margin, sample_weight=None) -> float:
    """Mean (weighted) log loss of the class probabilities a multiclass boosted model predicts.

    ``margin`` is the ``(n, K)`` decision function F(x) of a single-label model with K >= 3
    classes, and ``y_index`` the index 0..K-1 of each example's class among its columns (the
    position of the label in ``model.classes``). Each F_l is half the log-odds of class l
    against the rest (Friedman, Hastie & Tibshirani 2000), so the model predicts
    p_l = sigma(2 F_l) / sum_k sigma(2 F_k) with sigma(z) = 1 / (1 + e^{-z})
    (``predict_proba``), and the loss of an example of class y is
    -log p_y = log(1 + e^{-2 F_y}) + log sum_k sigma(2 F_k), computed in log space so that it
    never overflows. For K = 2 the model has one margin column: use :func:`log_loss`.
    """
    margin = np.asarray(margin, dtype=np.float64)
    if margin.ndim != 2 or margin.shape[1] < 2:
        raise ValueError(
            f"margin must be an (n, K) matrix with a column per class, got shape {margin.shape}"
            + ("; for one margin column use log_loss" if margin.ndim == 1 else "")
        )
    if not np.isfinite(margin).all():
        raise ValueError("margin contains NaN or infinite values")
    y = _vector(y_index, "y_index")
    if y.shape[0] != margin.shape[0]:
        raise ValueError(f"y_index has {y.shape[0]} labels but margin has {margin.shape[0]} rows")
    if y.shape[0] == 0:
        raise ValueError("the loss of an empty set is undefined")
    n_classes = margin.shape[1]
    if y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= n_classes:
        raise ValueError(
            f"y_index must hold class indices 0..{n_classes - 1} (the columns of margin), "
            f"got {np.unique(y)[:10].tolist()}"
        )
    w = _sample_weight(sample_weight, y.shape[0])
    if w.sum() <= 0:
        raise ValueError("sample_weight sums to 0")
    log_sigma = -np.logaddexp(0.0, -2.0 * margin)  # log sigma(2 F_l), <= 0
    top = log_sigma.max(axis=1)
    log_total = top + np.log(np.exp(log_sigma - top[:, None]).sum(axis=1))
    losses = log_total - log_sigma[np.arange(y.shape[0]), y]
    return float(np.dot(w, losses) / w.sum())


def exponential_loss(y_true, margin, sample_weight=None) -> float:
    """Mean (weighted) exponential loss sum_i w_i exp(-y_i F(x_i)) / sum_i w_i: AdaBoost's loss.

    On the training set with weights D_1 this is prod_t Z_t (Wilbur et al. 2005, Theorem 1).
    Computed in log space; ``inf`` only when the mean itself exceeds the float range.
    """
    y, margin, w = _signed_margins(y_true, margin, sample_weight)
    kept = w > 0
    exponents = -y[kept] * margin[kept] + np.log(w[kept] / w.sum())
    top = exponents.max()
    log_mean = top + math.log(np.exp(exponents - top).sum())
    return math.exp(log_mean) if log_mean < 709.0 else math.inf


def _labels_and_scores(y_true, scores):
    """The positive mask of ``y_true`` and ``scores`` as finite float64 of the same length."""
    is_pos = _positive_mask(y_true)
    scores = _vector(scores, "scores").astype(np.float64)
    if scores.shape[0] != is_pos.shape[0]:
        raise ValueError(f"y_true has {is_pos.shape[0]} labels but scores has {scores.shape[0]}")
    if not np.isfinite(scores).all():
        raise ValueError("scores contain NaN or infinite values")
    return is_pos, scores


def _cumulative_counts(y_true, scores, sample_weight):
    """Weighted false and true positives at every distinct score, highest score first.

    Returns ``(fps, tps, thresholds)``: predicting positive for ``score >= thresholds[k]`` gives
    ``fps[k]`` false and ``tps[k]`` true positives. One sort: O(n log n).
    """
    is_pos, scores = _labels_and_scores(y_true, scores)
    w = _sample_weight(sample_weight, scores.shape[0])
    if sample_weight is not None:
        # An example of weight 0 is not there: it must not add a threshold (nor a point).
        kept = w > 0
        scores, is_pos, w = scores[kept], is_pos[kept], w[kept]
        if scores.shape[0] == 0:
            raise ValueError("sample_weight is 0 for every example")
    order = np.argsort(-scores, kind="stable")
    scores, is_pos, w = scores[order], is_pos[order], w[order]
    # The last index of each run of equal scores: the curve only moves between distinct scores.
    group_end = np.flatnonzero(np.diff(scores) != 0)
    group_end = np.append(group_end, scores.shape[0] - 1)
    tps = np.cumsum(w * is_pos)[group_end]
    fps = np.cumsum(w * ~is_pos)[group_end]
    return fps, tps, scores[group_end]


def roc_curve(y_true, scores, sample_weight=None):
    """The ROC curve of real scores (Yoder 2011, "numeric classifiers": sweep the threshold).

    Parameters
    ----------
    y_true:
        Labels in {0, 1} or {-1, +1}; 1 is the positive class.
    scores:
        Real scores, higher meaning more positive.
    sample_weight:
        Optional non-negative example weights.

    Returns
    -------
    fpr, tpr, thresholds:
        One point per distinct score plus the origin, in order of decreasing threshold:
        predicting positive for ``score >= thresholds[k]`` gives the point
        ``(fpr[k], tpr[k])``; ``thresholds[0] = +inf`` gives (0, 0). Tied scores give a single
        step, so a tie between classes is one diagonal segment. Examples of weight 0 add no
        point. The points equal scikit-learn's ``roc_curve(..., drop_intermediate=False)``.
    """
    fps, tps, thresholds = _cumulative_counts(y_true, scores, sample_weight)
    if tps[-1] <= 0 or fps[-1] <= 0:
        raise ValueError(
            "the ROC curve needs both classes with positive weight in y_true, got "
            f"{'no positives' if tps[-1] <= 0 else 'no negatives'}"
        )
    fpr = np.concatenate(([0.0], fps / fps[-1]))
    tpr = np.concatenate(([0.0], tps / tps[-1]))
    return fpr, tpr, np.concatenate(([np.inf], thresholds))


def roc_auc(y_true, scores, sample_weight=None) -> float:
    """Area under the ROC curve: the weighted fraction of (positive, negative) pairs ranked right.

    AUC = sum over pairs w_i w_j ([s_i > s_j] + 1/2 [s_i = s_j]) / (W+ W-) for positives i and
    negatives j: the trapezoids under :func:`roc_curve`, whose tied-score diagonals count each
    tied pair half (Yoder 2011; Scholz 2006, AOC* = 1 - AUC). O(n log n) by one sort, never over
    pairs.
    """
    fpr, tpr, _ = roc_curve(y_true, scores, sample_weight)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2.0)


def macro_roc_auc(y_true, scores, classes=None, sample_weight=None) -> float:
    """Macro one-vs-rest ROC AUC: the mean over classes of :func:`roc_auc` of class l against
    the rest, scored by column l of ``scores``.

    Each class's AUC ranks the examples by their score for that class (Fawcett 2006, "An
    introduction to ROC analysis", section 9: one ROC curve per class against all others), with
    ties counted half as in :func:`roc_auc`; the mean is unweighted (scikit-learn's
    ``roc_auc_score(..., average="macro")``), so a rare class counts as much as a common one.

    Parameters
    ----------
    y_true:
        One label per example (1-D, any labels), or for multi-label data an ``(n, K)``
        indicator matrix of 0 and 1 whose column l marks the examples with label l.
    scores:
        ``(n, K)`` scores, column l higher meaning more of class l: a model's
        ``decision_function`` or ``predict_proba``.
    classes:
        The K labels of the columns of ``scores`` (``model.classes``); required for 1-D
        ``y_true``, and every label of ``y_true`` must be among them. Not used with an
        indicator matrix.
    sample_weight:
        Optional non-negative example weights.

    Raises
    ------
    ValueError
        If a class has no example, or every example, in ``y_true``: its AUC is undefined.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError(
            f"scores must be an (n, K) matrix with a column per class, got shape {scores.shape}"
            + ("; for one score column use roc_auc" if scores.ndim == 1 else "")
        )
    if np.ndim(y_true) == 2:
        members = _indicator(y_true, "y_true")
        if members.shape != scores.shape:
            raise ValueError(f"y_true has shape {members.shape} but scores has {scores.shape}")
        names = list(range(members.shape[1]))
    else:
        if classes is None:
            raise ValueError("classes (the labels of the columns of scores) is required "
                             "when y_true holds one label per example")
        classes = _classes(classes, "classes")
        if classes.shape[0] != scores.shape[1]:
            raise ValueError(f"classes has {classes.shape[0]} labels but scores has "
                             f"{scores.shape[1]} columns")
        labels = _vector(y_true, "y_true")
        if labels.shape[0] != scores.shape[0]:
            raise ValueError(f"y_true has {labels.shape[0]} labels but scores has "
                             f"{scores.shape[0]} rows")
        index = _class_index(labels, classes, "y_true")
        members = index[:, None] == np.arange(classes.shape[0])
        names = classes.tolist()
    aucs = []
    for column, name in enumerate(names):
        try:
            aucs.append(roc_auc(members[:, column], scores[:, column], sample_weight))
        except ValueError as exc:
            raise ValueError(f"class {name!r} against the rest: {exc}") from None
    return float(np.mean(aucs))


def precision_recall_curve(y_true, scores, sample_weight=None):
    """The precision-recall curve of real scores (Yoder 2011, "ROC & precision-recall").

    Sweeping the threshold from +inf down, predicting positive for ``score >= thresholds[k]``
    gives recall TP/P and precision TP/(TP + FP); the curve is parametric in the threshold,
    like the ROC curve (Yoder 2011, acknowledgements). Tied scores move TP and FP at once, so a tie
    between classes is one segment, as on the ROC curve.

    Returns
    -------
    precision, recall, thresholds:
        One point per distinct score, in order of decreasing threshold, after a first point
        (recall 0, precision 1) at ``thresholds[0] = +inf``, where nothing is predicted positive
        (precision 0/0, taken as 1 as scikit-learn does). Examples of weight 0 add no point. The
        points are scikit-learn's ``precision_recall_curve`` in reverse order.
    """
    fps, tps, thresholds = _cumulative_counts(y_true, scores, sample_weight)
    if tps[-1] <= 0:
        raise ValueError("the precision-recall curve needs positives with positive weight in y_true")
    precision = np.concatenate(([1.0], tps / (tps + fps)))
    recall = np.concatenate(([0.0], tps / tps[-1]))
    return precision, recall, np.concatenate(([np.inf], thresholds))


def average_precision(y_true, scores, sample_weight=None) -> float:
    """Average precision: sum_k (R_k - R_{k-1}) P_k over the points of the precision-recall curve.

    The precision at each distinct threshold weighted by the recall it adds (no interpolation),
    so a group of tied scores counts once at its precision. Equals scikit-learn's
    ``average_precision_score``, with ties and weights.
    """
    precision, recall, _ = precision_recall_curve(y_true, scores, sample_weight)
    return float(np.sum(np.diff(recall) * precision[1:]))


def average_precision_11pt(y_true, scores) -> float:
    """11-point interpolated average precision, tied scores sharing their positives
    (Wilbur et al. 2005, eq. 37-38).

    From Wilbur et al. 2005, section 3.3: rank the examples by decreasing score; with A
    positives in all and a_r among the top r, the precision and recall at rank r are
    P_r = a_r / r and R_r = a_r / A (eq. 37); the interpolated precision at recall level R is
    IP_R = max {P_r : R_r >= R} (eq. 38); the 11-point average precision is the mean of IP_R over
    R = 0, 0.1, ..., 1. A run of g tied scores holding p positives does not decide the ranks
    within it: the paper spreads the positives evenly, p/g of one at each of the g ranks, so the
    result never depends on how ties are broken (three positives over ten tied ranks give 0.3 at
    each).

    ``y_true`` holds labels in {0, 1} or {-1, +1} (1 is positive), unweighted as in the paper.
    Inside a run precision is monotone in r, so each maximum is taken at the ends of runs; the
    comparisons R_r >= k/10 are done in integers, so the result is exact up to the final
    division. O(n log n) for the sort, O(n) after it.
    """
    is_pos, scores = _labels_and_scores(y_true, scores)
    n_pos = int(is_pos.sum())
    if n_pos == 0:
        raise ValueError("the 11-point average precision needs at least one positive in y_true")
    order = np.argsort(-scores, kind="stable")
    run_end = np.append(np.flatnonzero(np.diff(scores[order]) != 0) + 1, scores.shape[0])
    ranks_before = np.concatenate(([0], run_end[:-1])).astype(np.int64)  # r0 of each run
    size = run_end - ranks_before  # g
    positives_to_end = np.cumsum(is_pos[order])[run_end - 1].astype(np.int64)
    positives = np.diff(np.concatenate(([0], positives_to_end)))  # p of each run
    positives_before = positives_to_end - positives  # a0

    def precision(run, j):
        # P at rank r0 + j of a run: (a0 + j p / g) / (r0 + j)
        g = size[run]
        return (positives_before[run] * g + j * positives[run]) / (g * (ranks_before[run] + j))

    runs = np.arange(size.shape[0])
    best_in_run = np.maximum(precision(runs, 1), precision(runs, size))
    best_from = np.maximum.accumulate(best_in_run[::-1])[::-1]  # max over this run and later
    total = 0.0
    for k in range(11):
        # the first run reaching recall k/10, i.e. 10 a_r >= k A, and the first rank in it
        run = int(np.searchsorted(10 * positives_to_end, k * n_pos, side="left"))
        shortfall = k * n_pos - 10 * positives_before[run]
        if shortfall <= 0:
            j = 1
        else:  # smallest j with 10 j p / g >= shortfall
            j = -(-shortfall * size[run] // (10 * positives[run]))
        value = max(precision(run, j), precision(run, size[run]))
        if run + 1 < size.shape[0]:
            value = max(value, best_from[run + 1])
        total += value
    return float(total / 11.0)

def f1_score(y_true, y_pred, sample_weight=None) -> float:
    """F1 = 2 TP / (2 TP + FP + FN) of predicted labels (1 is the positive class).

    Labels in {0, 1} or {-1, +1}, weighted by ``sample_weight``. 0 when there are neither true
    nor predicted positives (scikit-learn's ``zero_division=0``).
    """
    truth = _positive_mask(y_true)
    predicted = _positive_mask(y_pred)
    if truth.shape != predicted.shape:
        raise ValueError(f"y_true has {truth.shape[0]} labels but y_pred has {predicted.shape[0]}")
    w = _sample_weight(sample_weight, truth.shape[0])
    tp = w[truth & predicted].sum()
    denominator = 2.0 * tp + w[truth != predicted].sum()
    return float(2.0 * tp / denominator) if denominator > 0 else 0.0


def error_bound(records) -> float:
    """prod_t Z_t over a model's round records (``model.records``).

    Yoder 2011: err_train <= prod_t Z_t for AdaBoost (D_{T+1} sums to 1, so prod Z_t is the mean
    exponential loss), and the same for RankBoost's ranking loss ("as before"): see
    :func:`ranking_loss`. Computed as exp(sum_t ln Z_t), which equals the engine's running
    ``records[-1].error_bound`` up to rounding. Raises if a round recorded no Z_t (its
    reweighting rule has no potential).
    """
    records = list(records)
    if not records:
        raise ValueError("error_bound needs at least one round record")
    missing = [r.round for r in records if r.z is None]
    if missing:
        raise ValueError(
            f"round(s) {missing[:5]} recorded no Z_t: the reweighting rule reports no potential"
        )
    return math.exp(math.fsum(math.log(r.z) if r.z > 0 else -math.inf for r in records))


def ranking_loss(y_true, scores, sample_weight=None, group=None, *, tie_weight: float = 1.0) -> float:
    """The weighted fraction of misordered pairs (RankBoost's ranking loss, Yoder 2011,
    "RankBoost").

    The pairs are (i, j) of one group with y_i > y_j (``y_true``: graded relevance or two labels,
    larger = ranked higher; ``group``: a query id per example, ``None`` for one group), weighted
    w_i w_j (``sample_weight``, 1 by default). A pair is misordered when s_i < s_j; a tie
    s_i = s_j counts ``tie_weight``: 1 (default) is RankBoost's rloss = sum D [H(x1) <= H(x0)],
    which is at most prod_t Z_t (:func:`error_bound`); 1/2 gives 1 - AUC for two labels.
    O(L n log n) for L relevance levels, never over pairs.
    """
    y = _vector(y_true, "y_true")
    try:
        y = y.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("y_true must be numeric relevance (larger = ranked higher)") from None
    s = _vector(scores, "scores").astype(np.float64)
    if s.shape != y.shape:
        raise ValueError(f"y_true has {y.shape[0]} labels but scores has {s.shape[0]}")
    if not (np.isfinite(y).all() and np.isfinite(s).all()):
        raise ValueError("y_true and scores must be finite")
    if not 0.0 <= tie_weight <= 1.0:
        raise ValueError(f"tie_weight must be in [0, 1], got {tie_weight!r}")
    w = _sample_weight(sample_weight, y.shape[0])
    if w.max() > 0:
        w = w / w.max()  # the loss is scale-free; tiny weights must not underflow in w_i w_j
    codes = np.zeros(y.shape[0], dtype=np.intp)
    if group is not None:
        groups = _vector(group, "group")
        if groups.shape != y.shape:
            raise ValueError(f"group has {groups.shape[0]} values, expected {y.shape[0]}")
        codes = np.unique(groups, return_inverse=True)[1].ravel()
    misordered = total = 0.0
    by_group = np.argsort(codes, kind="stable")
    for members in np.split(by_group, np.flatnonzero(np.diff(codes[by_group])) + 1):
        gy, gs, gw = y[members], s[members], w[members]
        for level in np.unique(gy)[1:]:
            # Upper items at this level against every lower level: a bipartite count by sorting.
            upper, lower = gy == level, gy < level
            lower_scores = gs[lower]
            order = np.argsort(lower_scores, kind="stable")
            sorted_scores = lower_scores[order]
            weight_at_or_below = np.concatenate(([0.0], np.cumsum(gw[lower][order])))
            lower_total = weight_at_or_below[-1]
            below = weight_at_or_below[np.searchsorted(sorted_scores, gs[upper], side="left")]
            at_or_below = weight_at_or_below[np.searchsorted(sorted_scores, gs[upper], side="right")]
            above = lower_total - at_or_below
            misordered += np.sum(gw[upper] * (above + tie_weight * (at_or_below - below)))
            total += gw[upper].sum() * lower_total
    if total <= 0:
        raise ValueError("ranking_loss needs a pair (y_i > y_j in one group) of positive weight")
    return float(misordered / total)


def stratified_folds(y, n_folds: int, seed: int | None = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split example indices into ``n_folds`` seeded folds that keep the class proportions.

    The examples of each class are shuffled (one seeded generator) and dealt round-robin to the
    folds, one class after the other, so every fold holds each class in proportion (counts differ
    by at most one) and fold sizes differ by at most one.

    Returns
    -------
    list of (train_idx, test_idx):
        Sorted int arrays; every example is in exactly one ``test_idx``.
    """
    y = _vector(y, "y")
    if not isinstance(n_folds, (int, np.integer)) or isinstance(n_folds, bool) or n_folds < 2:
        raise ValueError(f"n_folds must be an integer >= 2, got {n_folds!r}")
    classes, codes = np.unique(y, return_inverse=True)
    if classes.shape[0] == 0:
        raise ValueError("y is empty: there is nothing to split into folds")
    counts = np.bincount(codes.ravel(), minlength=classes.shape[0])
    if counts.min() < n_folds:
        smallest = int(np.argmin(counts))
        raise ValueError(
            f"cannot make {n_folds} stratified folds: class {classes[smallest].item()!r} has only "
            f"{counts[smallest]} example(s); every fold needs at least one of each class"
        )
    rng = np.random.default_rng(seed)
    dealt = np.concatenate(
        [rng.permutation(np.flatnonzero(codes == c)) for c in range(classes.shape[0])]
    )
    fold_of = np.empty(y.shape[0], dtype=np.intp)
    fold_of[dealt] = np.arange(y.shape[0]) % n_folds
    return [
        (np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)) for k in range(n_folds)
    ]


@attrs.frozen
class Metric:
    """A metric of :mod:`boostkit.metrics` as a score of margins F(x) on labelled examples.

    Attributes
    ----------
    name:
        The function's name in :mod:`boostkit.metrics`.
    function:
        ``function(y_true, values[, sample_weight])``.
    takes:
        What ``values`` is: ``"margins"`` (F itself: the losses), ``"scores"`` (any ranking of
        the examples: F works as is) or ``"labels"`` (the predicted labels, +1 where F > 0).
    greater_is_better:
        ``True`` for accuracy-like metrics, ``False`` for losses.
    weighted:
        Whether ``function`` takes ``sample_weight`` (the 11-point average precision does not).
    """

    name: str
    function: Callable = attrs.field(eq=False)
    takes: str = attrs.field(validator=attrs.validators.in_(("margins", "scores", "labels")))
    greater_is_better: bool
    weighted: bool = True

    def __call__(self, y_true, margin, sample_weight=None) -> float:
        """The metric of margins ``margin`` for labels ``y_true`` (in {0, 1} or {-1, +1})."""
        values = np.asarray(margin, dtype=np.float64)
        if self.takes == "labels":
            # Both in {-1, +1}, so that labels given in {0, 1} compare right with predictions.
            y_true = np.where(_positive_mask(y_true), 1, -1)
            values = np.where(values > 0, 1, -1)
        if not self.weighted:
            return float(self.function(y_true, values))
        return float(self.function(y_true, values, sample_weight))


METRICS: dict[str, Metric] = {
    metric.name: metric
    for metric in (
        Metric("log_loss", log_loss, "margins", greater_is_better=False),
        Metric("exponential_loss", exponential_loss, "margins", greater_is_better=False),
        Metric("accuracy", accuracy, "labels", greater_is_better=True),
        Metric("f1_score", f1_score, "labels", greater_is_better=True),
        Metric("roc_auc", roc_auc, "scores", greater_is_better=True),
        Metric("average_precision", average_precision, "scores", greater_is_better=True),
        Metric("average_precision_11pt", average_precision_11pt, "scores",
               greater_is_better=True, weighted=False),
        Metric("ranking_loss", ranking_loss, "scores", greater_is_better=False),
    )
}


def get_metric(name: str) -> Metric:
    """The :class:`Metric` called ``name``; an unknown name is refused with the list of names."""
    try:
        return METRICS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown metric {name!r}; boostkit.metrics has {', '.join(sorted(METRICS))}"
        ) from None

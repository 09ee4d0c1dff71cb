"""Evaluation metrics and cross-validation folds, with numpy only (no scikit-learn needed).

ROC curves follow 003_e8f9baceaf668295.txt ("ROC & precision-recall", "numeric classifiers"):
sweeping a threshold over the scores from +inf to -inf traces the curve, one point per distinct
score, and a group of tied scores holding both classes moves true and false positives at once,
so it draws one diagonal segment. The area under that curve is the rank statistic
P(score of a positive > score of a negative) with ties counted half, as in AOC*
(004_0d8ee714c410b779.txt, weighted misranked pairs, ties count half).
"""

from __future__ import annotations

import numpy as np

__all__ = ["accuracy", "roc_auc", "roc_curve", "stratified_folds"]


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


def accuracy(y_true, y_pred, sample_weight=None) -> float:
    """The (weighted) fraction of predictions equal to the true labels."""
    y_true = _vector(y_true, "y_true")
    y_pred = _vector(y_pred, "y_pred")
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true has {y_true.shape[0]} labels but y_pred has {y_pred.shape[0]}")
    if y_true.shape[0] == 0:
        raise ValueError("accuracy of an empty set is undefined")
    w = _sample_weight(sample_weight, y_true.shape[0])
    total = w.sum()
    if total <= 0:
        raise ValueError("sample_weight sums to 0")
    return float(w[y_true == y_pred].sum() / total)


def _cumulative_counts(y_true, scores, sample_weight):
    """Weighted false and true positives at every distinct score, highest score first.

    Returns ``(fps, tps, thresholds)``: predicting positive for ``score >= thresholds[k]`` gives
    ``fps[k]`` false and ``tps[k]`` true positives. One sort: O(n log n).
    """
    is_pos = _positive_mask(y_true)
    scores = _vector(scores, "scores").astype(np.float64)
    if scores.shape[0] != is_pos.shape[0]:
        raise ValueError(f"y_true has {is_pos.shape[0]} labels but scores has {scores.shape[0]}")
    if not np.isfinite(scores).all():
        raise ValueError("scores contain NaN or infinite values")
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
    """The ROC curve of real scores (003, "numeric classifiers": sweep the threshold).

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
    tied pair half (003; 004, AOC* = 1 - AUC). O(n log n) by one sort, never over pairs.
    """
    fpr, tpr, _ = roc_curve(y_true, scores, sample_weight)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2.0)


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

"""The native learners' view of scikit-learn's decision trees, for the drop-in estimators of
:mod:`boostkit.sklearn`.

Which ``DecisionTreeClassifier`` / ``DecisionTreeRegressor`` settings the native ``stump`` and
``tree`` learners reproduce; the columns they see (features with more distinct values than bins
split exactly, cut at the midpoints of the node's unclipped values as scikit-learn cuts); and the
lightweight fitted estimators (:class:`SammeEstimator`, :class:`R2Tree`) that stand in
``estimators_`` for scikit-learn's trees (docs/dropin.md).
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_NATIVE_DEPTH", "R2Tree", "SammeEstimator", "as_tree_input", "at_midpoints",
           "clip_columns", "exact_columns", "expand", "grown_by_tree_learner",
           "native_regression_tree", "native_tree", "term_importances"]

_NATIVE_TREE_PARAMS = {
    # DecisionTreeClassifier parameters the native tree learner reproduces, at these values.
    "splitter": ("best",),
    "min_samples_split": (2,),
    "min_weight_fraction_leaf": (0.0,),
    "max_features": (None,),
    "max_leaf_nodes": (None,),
    "min_impurity_decrease": (0.0,),
    "class_weight": (None,),
    "ccp_alpha": (0.0,),
    "monotonic_cst": (None,),
}
_NATIVE_CRITERIA = {"gini": "gini", "entropy": "entropy", "log_loss": "entropy"}
#: Deepest tree grown natively (node by node in Python above the histogram kernels).
MAX_NATIVE_DEPTH = 8


def as_tree_input(X):
    """X as scikit-learn's trees see it: float32 values (in float64), dense."""
    if hasattr(X, "toarray"):
        X = X.toarray()
    return np.asarray(X, dtype=np.float32).astype(np.float64)


#: Features with more distinct values than bins, up to this many (and at most _EXACT_COLUMNS
#: columns each), are split exactly (see :func:`exact_columns`); only for training sets of at
#: most _EXACT_ROWS rows.
_EXACT_VALUES = 2048
_EXACT_COLUMNS = 8
_EXACT_ROWS = 20_000


def exact_columns(X, weighted, max_bins: int):
    """The columns the native learners see, as ``[(feature, low, high), ...]``, or ``None``
    when they are the features themselves.

    A feature with more than ``max_bins`` distinct values (up to ``_EXACT_VALUES``) among the
    rows of positive weight (the mask ``weighted``) becomes several columns, each the feature
    clipped to a range of ``max_bins`` consecutive distinct values, consecutive ranges sharing
    an end: each column gives every value its own bin, and a cut between two consecutive values
    of the feature is a cut of one column with the same partition. So the native learners
    search every threshold scikit-learn's trees search.
    """
    if np.count_nonzero(weighted) > _EXACT_ROWS:
        return None
    X = X[weighted]
    largest = min(_EXACT_VALUES, _EXACT_COLUMNS * (max_bins - 1) + 1)
    columns, expanded = [], False
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        if values.shape[0] <= max_bins or values.shape[0] > largest:
            columns.append((j, -np.inf, np.inf))
            continue
        expanded = True
        start = 0
        while start < values.shape[0] - 1:
            stop = min(start + max_bins - 1, values.shape[0] - 1)
            columns.append((j, values[start], values[stop]))
            start = stop
    return columns if expanded else None


def clip_columns(X, columns):
    """The columns of :func:`exact_columns` that the native learners bin: each the feature
    clipped to its range."""
    if columns is None:
        return X
    return np.column_stack([np.clip(X[:, j], low, high) for j, low, high in columns])


def expand(X, columns):
    """The columns the fitted native learners read: each column's feature, unclipped.

    Every threshold of a column lies in its range [low, high) (a cut between two of its
    consecutive values), where a clipped and an unclipped value go the same way; so the model
    partitions the training rows as it did while fitting, and thresholds placed at the
    midpoints of the unclipped values (:func:`at_midpoints`) send values beyond the range
    where scikit-learn's tree sends them.
    """
    if columns is None:
        return X
    return X[:, [j for j, _, _ in columns]]


def at_midpoints(tree, X, rows):
    """``tree`` (a ``decision-tree`` fitted on :func:`clip_columns`) with every threshold at
    the midpoint of its node's largest value left of the cut and smallest value right of it,
    among the training ``rows`` (the rows of positive weight) of ``X`` (:func:`expand`'s
    unclipped columns): where scikit-learn's best splitter places it, the left value when the
    midpoint rounds to the right one (``sklearn/tree/_splitter.pyx``, ``node_split_best``).
    Clipped values put the neighbour of a cut at the end of its column's range when the node's
    true neighbour lies beyond it. The training partition is unchanged."""
    import attrs

    threshold = tree.threshold.copy()
    node_rows = {0: rows}  # split node -> its training rows; children come after parents
    for k in range(threshold.shape[0]):
        at = node_rows.pop(k)
        x = X[at, tree.feature[k]]
        left = x <= tree.threshold[k]
        lo, hi = x[left].max(), x[~left].min()
        mid = lo / 2.0 + hi / 2.0
        threshold[k] = lo if mid >= hi else mid
        for child, side in ((tree.left[k], left), (tree.right[k], ~left)):
            if child >= 0:
                node_rows[child] = at[side]
    moved = attrs.evolve(tree, threshold=threshold)
    # split_gains (feature importances) is set once a tree is grown, not by its constructor.
    object.__setattr__(moved, "split_gains", tree.split_gains)
    return moved


def _native_shape(estimator, estimator_class, allowed) -> tuple[dict, int, int] | None:
    """``(params, max_depth, min_samples_leaf)`` of an ``estimator`` of exactly
    ``estimator_class`` whose other parameters all have the values of ``allowed`` (the ones the
    native learners reproduce) and whose depth the native learners grow; else ``None``."""
    if type(estimator) is not estimator_class:
        return None
    params = estimator.get_params(deep=False)
    for name, values in allowed.items():
        if name in params and not any(params[name] is a or params[name] == a for a in values):
            return None
    depth, leaf = params.get("max_depth"), params.get("min_samples_leaf", 1)
    if (isinstance(depth, bool) or not isinstance(depth, (int, np.integer))
            or not 1 <= depth <= MAX_NATIVE_DEPTH):
        return None
    if isinstance(leaf, bool) or not isinstance(leaf, (int, np.integer)) or leaf < 1:
        return None
    return params, int(depth), int(leaf)


def native_tree(estimator):
    """``(max_depth, criterion, min_samples_leaf)`` when ``estimator`` is a
    DecisionTreeClassifier the native learners reproduce, else ``None``."""
    from sklearn.tree import DecisionTreeClassifier

    shape = _native_shape(estimator, DecisionTreeClassifier, _NATIVE_TREE_PARAMS)
    if shape is None:
        return None
    params, depth, leaf = shape
    criterion = _NATIVE_CRITERIA.get(params.get("criterion"))
    return None if criterion is None else (depth, criterion, leaf)


def grown_by_tree_learner(native) -> bool:
    """Whether :func:`native_tree`'s answer is fitted by the ``tree`` learner (a tree deeper
    than a stump, or a stump with ``min_samples_leaf`` > 1) rather than by ``stump``."""
    return native is not None and not (native[0] == 1 and native[2] == 1)


_NATIVE_REGRESSION_PARAMS = {
    "criterion": ("squared_error",),
    "splitter": ("best",),
    "min_samples_split": (2,),
    "min_weight_fraction_leaf": (0.0,),
    "max_features": (None,),
    "max_leaf_nodes": (None,),
    "min_impurity_decrease": (0.0,),
    "ccp_alpha": (0.0,),
    "monotonic_cst": (None,),
}


def native_regression_tree(estimator):
    """``(max_depth, min_samples_leaf)`` when ``estimator`` is a DecisionTreeRegressor the
    native regression trees reproduce, else ``None``."""
    from sklearn.tree import DecisionTreeRegressor

    shape = _native_shape(estimator, DecisionTreeRegressor, _NATIVE_REGRESSION_PARAMS)
    return None if shape is None else shape[1:]


class R2Tree:
    """One fitted regression tree of :class:`AdaBoostRegressor`'s native path (lightweight:
    ``predict``, ``feature_importances_`` and the boostkit ``hypothesis``, a
    ``decision-tree`` whose leaf scores are the leaf means). ``random_state`` is the seed
    scikit-learn's ensemble gives the tree of the same round."""

    def __init__(self, hypothesis, n_features, feature_importances, columns=None,
                 random_state=None):
        self.hypothesis = hypothesis
        self.columns = columns
        self.random_state = random_state
        self.n_features_in_ = n_features
        self.feature_importances_ = feature_importances

    def predict(self, X) -> np.ndarray:
        return self.hypothesis.scores(expand(as_tree_input(X), self.columns))

    def __repr__(self) -> str:
        return f"R2Tree({self.hypothesis.describe()})"


class SammeEstimator:
    """One fitted term of :class:`AdaBoostClassifier`, as a lightweight classifier.

    ``hypothesis`` is the boostkit weak hypothesis (``decision-stump`` or ``decision-tree``),
    ``cell_classes`` the class index each of its cells predicts. ``predict(X)`` gives class
    labels as scikit-learn's fitted tree would (features compared as float32 values);
    ``feature_importances_`` are the tree's normalised Gini (or entropy) decreases;
    ``random_state`` is the seed scikit-learn's ensemble gives the tree of the same round.
    """

    def __init__(self, hypothesis, cell_classes, classes, n_features, feature_importances,
                 columns=None, random_state=None):
        self.hypothesis = hypothesis
        self.columns = columns
        self.random_state = random_state
        self.cell_classes = np.asarray(cell_classes, dtype=np.intp)
        self.classes_ = classes
        self.n_classes_ = classes.shape[0]
        self.n_features_in_ = n_features
        self.feature_importances_ = feature_importances

    def class_index(self, X) -> np.ndarray:
        """The index into ``classes_`` of the class predicted for each row of ``X`` (already
        converted by :func:`as_tree_input` and :func:`expand`)."""
        return self.cell_classes[np.asarray(self.hypothesis.cells(X), dtype=np.intp)]

    def predict(self, X) -> np.ndarray:
        return self.classes_[self.class_index(expand(as_tree_input(X), self.columns))]

    def __repr__(self) -> str:
        return f"SammeEstimator({self.hypothesis.describe()})"


def term_importances(hypothesis, n_features: int, columns=None) -> np.ndarray:
    out = np.zeros(n_features)
    source = (np.arange(n_features) if columns is None
              else np.array([j for j, _, _ in columns], dtype=np.intp))
    gains = getattr(hypothesis, "split_gains", None)
    if gains is not None and gains.shape[0]:
        np.add.at(out, source[hypothesis.feature], np.maximum(gains, 0.0))
    elif hasattr(hypothesis, "threshold") and np.ndim(hypothesis.threshold) == 0:
        if np.isfinite(hypothesis.threshold):  # a stump that splits
            out[source[hypothesis.feature]] = 1.0
    total = out.sum()
    return out / total if total > 0 else out

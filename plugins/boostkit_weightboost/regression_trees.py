"""Least-squares regression trees on binned features: AdaBoost.R2's weak learner (Drucker 1997),
as the drop-in ``boostkit.sklearn.AdaBoostRegressor`` fits it beside the engine.

:func:`fit_regression_tree` grows scikit-learn's ``DecisionTreeRegressor`` (squared error,
best splitter) on the binned features: each node's per-bin sums of w, w y and w y^2 come from
:func:`regression_histogram` (the larger child's as its parent's minus the smaller child's), and
thresholds are CART's midpoints between the two sides' values. Hosts find it through the
registry, on the ``tree`` component (:meth:`~boostkit_weightboost.trees.TreeLearner.fit_regression_tree`).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numba
import numpy as np

import boostkit
from boostkit.splits import TIE_TOLERANCE

from .trees import DecisionTree, _midpoint, split_rows

@numba.njit(cache=True, nogil=True)
def regression_histogram(codes, rows, weight, target, out):
    """``out[f, b]`` = (sum w, sum w y, sum w y^2) over the ``rows`` whose feature f is in bin b.

    ``codes`` is the ``(d, n)`` uint8 bin codes, ``out`` a zeroed ``(d, B, 3)`` array.
    """
    for f in range(codes.shape[0]):
        for k in range(rows.shape[0]):
            i = rows[k]
            b = codes[f, i]
            w = weight[i]
            wy = w * target[i]
            out[f, b, 0] += w
            out[f, b, 1] += wy
            out[f, b, 2] += wy * target[i]


# scikit-learn's trees: a node of impurity at most this is a leaf (sklearn/tree/_tree.pyx).
_PURE = np.finfo(np.float64).eps


@attrs.define
class _RegressionNode:
    rows: np.ndarray
    depth: int
    totals: np.ndarray  # (3,): sum w, sum w y, sum w y^2
    parent: int
    is_left: bool
    hist: np.ndarray | None = None


def fit_regression_tree(binned, y: np.ndarray, weight: np.ndarray, *, max_depth: int,
                        min_samples_leaf: int = 1, values: np.ndarray | None = None,
                        node_priority: Callable | None = None) -> DecisionTree:
    """A least-squares regression tree on binned features, grown as scikit-learn's
    ``DecisionTreeRegressor(max_depth=..., min_samples_leaf=...)`` grows one.

    ``weight`` holds integer multiplicities (a bootstrap sample's counts: rows of weight 0 are
    not in the sample) or any non-negative weights. A node is split at the cut maximising
    ``S_L^2 / W_L + S_R^2 / W_R`` (S the weighted sum of y, W the weight on each side; CART's
    proxy of the squared-error decrease) whenever its impurity exceeds float64 eps and a cut
    leaves ``min_samples_leaf`` weight on each side; ties go to the lowest feature and bin.
    Given ``node_priority(counts, depth)`` (the ``priority`` of the ``tree`` learner's
    ``tie_order``), called for every node the tree tries to split, depth first and the left
    child first, with the node's ``(d, B)`` weight per bin and its depth, cuts within 1e-12
    (relative) of the best are ties, and the tied feature of the lowest priority wins, then
    the lowest bin (how the drop-in ``AdaBoostRegressor`` replays scikit-learn's random feature
    order). The leaves' scores are the weighted means of y; ``split_gains`` holds the
    squared-error decrease of every split (feature importances). Given the binned features'
    ``values`` (feature-major, ``(d, n)`` like ``binned.codes``), each threshold is the
    midpoint of the node's own neighbouring values on either side of the cut, as scikit-learn
    places it (rows outside the sample then go where its tree sends them); else the bin edge.
    """
    if not binned.ordered:
        raise boostkit.DataError(
            "the regression tree (tree.fit_regression_tree, AdaBoost.R2's weak learner) cuts "
            "numeric features at thresholds only, and got "
            + ("missing values (NaN)" if binned.missing_bin is not None else
               f"categorical column {int(np.argmax(binned.categorical))}")
            + ": impute missing values and encode categorical columns first"
        )
    codes, n_bins = binned.codes, binned.max_bins
    weight = np.ascontiguousarray(weight, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)

    def node_hist(rows):
        out = np.zeros((codes.shape[0], n_bins, 3))
        regression_histogram(codes, rows, weight, y, out)
        return out

    def splittable(node):
        w, s, ss = node.totals
        return (node.depth < max_depth and w >= 2 * min_samples_leaf and w > 0
                and ss / w - (s / w) ** 2 > _PURE)

    root_rows = np.flatnonzero(weight > 0)
    root_hist = node_hist(root_rows)
    root = _RegressionNode(root_rows, 0, root_hist[0].sum(axis=0), -1, True)
    if splittable(root):
        root.hist = root_hist
    feature, threshold, left, right, gains, leaf_scores = [], [], [], [], [], []
    stack = [root]
    while stack:
        node = stack.pop()
        split = None
        if node.hist is not None:
            priority = (None if node_priority is None
                        else node_priority(node.hist[..., 0], node.depth))
            split = _best_regression_split(node, min_samples_leaf, priority)
        if split is None:
            index = -1 - len(leaf_scores)
            w, s, _ = node.totals
            leaf_scores.append(s / w if w > 0 else 0.0)
        else:
            f, b, gain, left_totals = split
            index = len(feature)
            left_rows, right_rows = split_rows(codes[f], node.rows, b)
            feature.append(f)
            threshold.append(binned.thresholds[f][b] if values is None
                             else _midpoint(values[f], left_rows, right_rows, weight))
            gains.append(gain)
            left.append(0)
            right.append(0)
            children = [
                _RegressionNode(left_rows, node.depth + 1, left_totals, index, True),
                _RegressionNode(right_rows, node.depth + 1, node.totals - left_totals, index,
                                False),
            ]
            wanted = [splittable(c) for c in children]
            if all(wanted):
                small = 0 if children[0].rows.shape[0] <= children[1].rows.shape[0] else 1
                children[small].hist = node_hist(children[small].rows)
                children[1 - small].hist = node.hist - children[small].hist
            else:
                for child, want in zip(children, wanted):
                    if want:
                        child.hist = node_hist(child.rows)
            stack.extend(reversed(children))
        if node.parent >= 0:
            (left if node.is_left else right)[node.parent] = index
    tree = DecisionTree(feature, threshold, left, right, leaf_scores)
    object.__setattr__(tree, "split_gains", np.array(gains, dtype=np.float64))
    return tree


def _best_regression_split(node: _RegressionNode, min_samples_leaf: int, priority=None):
    """``(feature, bin, gain, left totals)`` of the node's best cut, or ``None``; ``priority``
    ranks the features of cuts within TIE_TOLERANCE of the best (else: the exact maximum, the
    lowest feature and bin first)."""
    hist = node.hist
    cum = np.cumsum(hist, axis=1)[:, :-1, :]  # (d, B - 1, 3): the left side of every cut
    w, s, _ = node.totals
    wl, sl = cum[..., 0], cum[..., 1]
    wr, sr = w - wl, s - sl
    # A cut after an empty bin repeats the cut before it (which wins the tie): left out.
    valid = (wl >= min_samples_leaf) & (wr >= min_samples_leaf) & (hist[:, :-1, 0] > 0)
    if not valid.any():
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        proxy = np.where(valid, sl * sl / wl + sr * sr / wr, -np.inf)
    if priority is None:
        f, b = np.unravel_index(int(np.argmax(proxy)), proxy.shape)
    else:
        best = proxy.max()
        tied = proxy >= best - TIE_TOLERANCE * abs(best)
        candidates = np.flatnonzero(tied.any(axis=1))
        f = candidates[np.argmin(np.asarray(priority)[candidates])]
        b = int(np.argmax(tied[f]))
    gain = float(proxy[f, b] - s * s / w)
    return int(f), int(b), gain, cum[f, b].copy()

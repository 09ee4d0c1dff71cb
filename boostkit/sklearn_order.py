"""The order in which scikit-learn's best splitter visits features, for breaking exact ties.

scikit-learn's ``DecisionTreeClassifier(splitter="best")`` searches each node's features in a
random order and keeps the first of equally good splits (it replaces the best split only on a
strictly larger improvement). The order comes from a Fisher-Yates draw over one ``features``
array that every node of the tree permutes in place, driven by a xorshift generator seeded once
per tree, with features found constant in a node set aside for its descendants
(``sklearn/tree/_splitter.pyx``, ``node_split_best``; ``sklearn/utils/_random.pxd``,
``our_rand_r``; ``sklearn/tree/_tree.pyx``, ``DepthFirstTreeBuilder``). This module replays that
draw so the drop-in :class:`boostkit.sklearn.AdaBoostClassifier` can break ties between features
as scikit-learn does (docs/dropin.md). It reproduces scikit-learn 1.x with ``max_features=None``
(every feature is visited in every node).
"""

from __future__ import annotations

import attrs
import numpy as np

__all__ = ["RAND_R_MAX", "FEATURE_THRESHOLD", "EPSILON", "TreeRandom", "BestSplitterOrder",
           "BestSplitterTieOrder", "children_impurity", "column_priority"]

#: Largest value of scikit-learn's tree generator (``sklearn.utils._random.RAND_R_MAX``).
RAND_R_MAX = 2**31 - 1
#: A feature whose values in a node span at most this is constant there
#: (``sklearn/tree/_splitter.pyx``, ``FEATURE_THRESHOLD``).
FEATURE_THRESHOLD = 1e-7
_UINT32 = 0xFFFFFFFF
_ZERO_STATE = 1  # the generator replaces a state of 0 by this (``DEFAULT_SEED``)


class TreeRandom:
    """scikit-learn's tree generator: a 32-bit xorshift (13, 17, 5), its outputs taken modulo
    ``RAND_R_MAX + 1`` (``our_rand_r``), and ``rand_int(low, high)`` = low + output mod
    (high - low)."""

    def __init__(self, state: int):
        self.state = int(state) & _UINT32

    def next(self) -> int:
        s = self.state or _ZERO_STATE
        s ^= (s << 13) & _UINT32
        s ^= s >> 17
        s ^= (s << 5) & _UINT32
        self.state = s
        return s % (RAND_R_MAX + 1)

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high)``, as ``rand_int``."""
        return low + self.next() % (high - low)


class BestSplitterOrder:
    """The features of every node of one scikit-learn tree, in the order its best splitter
    visits them.

    ``seed`` is the tree's integer ``random_state``: its splitter seeds the generator with
    ``RandomState(seed).randint(0, RAND_R_MAX)``. Call :meth:`visit` for every node the tree
    tries to split (scikit-learn: a node below ``max_depth``, of two examples or more and
    impurity above float64 eps), in the order the tree builds them: depth first, the left child
    before the right.
    """

    def __init__(self, seed: int, n_features: int):
        self._random = TreeRandom(np.random.RandomState(seed).randint(0, RAND_R_MAX))
        self._features = list(range(n_features))  # permuted in place by every node
        self._constant_features = [0] * n_features  # known constants, in their found order
        # Constant features known below each depth: the count after the last node visited at
        # that depth, which in depth-first order is the parent of the next node one deeper.
        self._known_after = {}

    def visit(self, constant: np.ndarray, depth: int) -> list[int]:
        """The non-constant features of a node in visiting order; ``constant`` is the node's
        ``(n_features,)`` mask of features constant over its examples (max - min at most
        :data:`FEATURE_THRESHOLD`), ``depth`` its depth (0: the root)."""
        features, constant_features, random = self._features, self._constant_features, self._random
        n_known = self._known_after.get(depth - 1, 0) if depth > 0 else 0
        n_drawn = n_found = 0
        n_total = n_known
        f_i = len(features)
        visited = []
        # Every feature is visited (max_features is the number of features), so the loop ends
        # once the unvisited part [n_total, f_i) is empty.
        while f_i > n_total:
            f_j = random.integer(n_drawn, f_i - n_found)
            if f_j < n_known:  # a constant known from an ancestor: set aside, not searched
                features[n_drawn], features[f_j] = features[f_j], features[n_drawn]
                n_drawn += 1
                continue
            f_j += n_found
            if constant[features[f_j]]:  # newly found constant: kept for the descendants
                features[f_j], features[n_total] = features[n_total], features[f_j]
                n_found += 1
                n_total += 1
                continue
            f_i -= 1
            features[f_i], features[f_j] = features[f_j], features[f_i]
            visited.append(features[f_i])
        # Ancestors' constants keep their order for siblings and children; the new ones follow.
        features[:n_known] = constant_features[:n_known]
        constant_features[n_known:n_total] = features[n_known:n_total]
        self._known_after[depth] = n_total
        return visited


#: scikit-learn's trees: a node of impurity at most this is a leaf (``sklearn/tree/_tree.pyx``).
EPSILON = float(np.finfo(np.float64).eps)


def children_impurity(criterion: str, totals: np.ndarray, left: np.ndarray, n_left: int,
                      n_right: int) -> tuple[float, float]:
    """The impurities scikit-learn's classification criterion records for the two children of
    a cut (``ClassificationCriterion.update`` and ``children_impurity``,
    ``sklearn/tree/_criterion.pyx``), from the node's class sums ``totals`` and the left
    side's ``left``.

    scikit-learn sums the side of fewer examples (``n_left`` <= ``n_right``: the left one)
    and finds the other as the node's sums minus it, and the node's weight minus its weight;
    so a pure child found by subtraction gets an impurity of rounding, from 0 to 1e-9 when it
    weighs far less than its parent, which is above float64 eps as often as not. The tree then
    tries to split it (and the visit draws from its generator). These are the same formulas
    on boostkit's sums, which round like scikit-learn's where the difference is large and may
    round otherwise where it is a few units in the last place.
    """
    totals = np.asarray(totals, dtype=np.float64)
    weight = float(totals.sum())
    if n_left <= n_right:
        left = np.asarray(left, dtype=np.float64)
        weight_left = float(left.sum())
    else:
        right = totals - np.asarray(left, dtype=np.float64)
        left = totals - right
        weight_left = weight - float(right.sum())
    right, weight_right = totals - left, weight - weight_left
    return _impurity(criterion, left, weight_left), _impurity(criterion, right, weight_right)


def _impurity(criterion: str, sums: np.ndarray, weight: float) -> float:
    if not weight > 0:
        return 0.0
    if criterion == "gini":  # Gini.children_impurity
        return 1.0 - float((sums * sums).sum()) / (weight * weight)
    share = sums[sums > 0.0] / weight  # Entropy.children_impurity
    return float(-(share * np.log2(share)).sum())


def column_priority(seed: int, column_features: np.ndarray, criterion: str = "gini"):
    """``priority(counts, depth)`` of one tree: the rank of every column among equal cuts, in
    the order scikit-learn's tree seeded with ``seed`` visits the node's features (the
    ``tie_order`` protocol of the ``stump`` and ``tree`` learners, and ``tie_order`` of
    ``fit_regression_tree``).

    ``column_features[k]`` is the feature of column k (several columns may clip one feature to
    consecutive ranges of its values; columns of one feature keep their order); ``counts`` the
    node's ``(n_columns, B)`` examples per bin. A feature is constant in a node when each of
    its columns has examples in one bin only: exactly scikit-learn's test where every value
    has its own bin (its tolerance of :data:`FEATURE_THRESHOLD` aside), an approximation on
    quantile bins. Call it for every node scikit-learn's tree tries to split, in its order.

    ``priority.visits_pure(totals, left, n_left, n_right, is_left)`` tells whether the
    classification tree of ``criterion`` (``"gini"`` or ``"entropy"``) tries to split a pure
    child of a cut, from the parent's class sums (:func:`children_impurity`): the ``tree``
    learner then calls ``priority`` for it too, so that the draws that follow stay
    scikit-learn's.
    """
    column_features = _feature_indices(column_features)
    n_columns = column_features.shape[0]
    n_features = int(column_features.max()) + 1
    order = BestSplitterOrder(seed, n_features)

    def priority(counts: np.ndarray, depth: int) -> np.ndarray:
        varied = np.count_nonzero(counts, axis=1) > 1  # columns of two values or more
        constant = np.bincount(column_features, weights=varied, minlength=n_features) == 0
        visited = order.visit(constant, depth)
        rank = np.full(n_features, n_features, dtype=np.int64)  # constants: last
        rank[visited] = np.arange(len(visited))
        return rank[column_features] * n_columns + np.arange(n_columns)

    def visits_pure(totals, left, n_left: int, n_right: int, is_left: bool) -> bool:
        impurity = children_impurity(criterion, totals, left, n_left, n_right)
        return impurity[0 if is_left else 1] > EPSILON

    priority.visits_pure = visits_pure
    return priority


def _int_tuple(value) -> tuple[int, ...]:
    return tuple(int(v) for v in value)


def _feature_indices(value) -> np.ndarray:
    return np.ascontiguousarray(value, dtype=np.intp)


@attrs.frozen
class BestSplitterTieOrder:
    """The ``tie_order`` of the ``tree`` learner that breaks exact ties as the scikit-learn tree
    of the same boosting round would: among equal cuts, the feature its best splitter visits
    first in that node.

    ``seeds[t - 1]`` is round t's tree seed (scikit-learn's AdaBoost draws it with
    ``RandomState(random_state).randint(2**31 - 1)`` per round,
    ``sklearn.ensemble._base._set_random_states``). ``column_features[k]`` is the original
    feature of column k of the data the learner sees (:func:`column_priority`).
    """

    seeds: tuple[int, ...] = attrs.field(converter=_int_tuple)
    column_features: np.ndarray = attrs.field(converter=_feature_indices, eq=False)
    #: The scikit-learn tree's criterion (``"gini"`` or ``"entropy"``): which pure nodes it
    #: tries to split (:func:`children_impurity`).
    criterion: str = attrs.field(default="gini",
                                 validator=attrs.validators.in_(("gini", "entropy")))

    def __call__(self, state):
        if not 1 <= state.round <= len(self.seeds):
            raise ValueError(
                f"BestSplitterTieOrder holds tree seeds for rounds 1..{len(self.seeds)}, and "
                f"round {state.round} asked for one"
            )
        n_columns = self.column_features.shape[0]
        if state.data.n_features != n_columns:
            raise ValueError(
                f"BestSplitterTieOrder maps {n_columns} columns to features, and the data have "
                f"{state.data.n_features}"
            )
        return column_priority(self.seeds[state.round - 1], self.column_features,
                               self.criterion)

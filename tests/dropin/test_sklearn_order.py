"""boostkit.sklearn_order: scikit-learn's feature visiting order, and ties broken by a priority.

The emulator is checked against scikit-learn itself: on data whose informative features each
have an exact copy, every split of a fitted ``DecisionTreeClassifier`` ties with its copy, and
scikit-learn keeps the one its splitter visits first.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

import boostkit
from boostkit.sklearn_order import FEATURE_THRESHOLD, BestSplitterOrder, TreeRandom
from boostkit.splits import best_split, valid_splits


def _twinned_data():
    """Features 0..3 informative-ish, 4 constant, 5..8 exact copies of 0..3; integer values so
    many nodes find constants of their own; unit weights so equal cuts are exactly equal."""
    rng = np.random.RandomState(0)
    base = rng.randint(0, 5, size=(200, 5)).astype(np.float64)
    base[:, 4] = 1.0
    X = np.column_stack([base, base[:, :4]])
    y = (base[:, 0] + base[:, 1] + 3 * rng.rand(200) > 5).astype(int)
    twin = {j: j + 5 for j in range(4)} | {j + 5: j for j in range(4)}
    return X, y, twin


def _visits(tree, X, depth):
    """``(node, visiting order)`` for every node scikit-learn's builder tries to split, in its
    order (depth first, left child first), from the emulator seeded like the tree."""
    t = tree.tree_
    order = BestSplitterOrder(tree.random_state, X.shape[1])
    paths = tree.decision_path(X).tocsc()
    stack, out = [(0, 0)], []
    while stack:
        node, d = stack.pop()
        values = X[paths[:, node].nonzero()[0]].astype(np.float32).astype(np.float64)
        if d >= depth or values.shape[0] < 2 or t.impurity[node] <= np.finfo(np.float64).eps:
            continue
        constant = values.max(axis=0) <= values.min(axis=0) + FEATURE_THRESHOLD
        out.append((node, order.visit(constant, d)))
        if t.feature[node] >= 0:
            stack += [(t.children_right[node], d + 1), (t.children_left[node], d + 1)]
    return out


@pytest.mark.parametrize("depth", [2, 4])
def test_visiting_order_picks_scikit_learns_feature_among_exact_copies(depth):
    X, y, twin = _twinned_data()
    checked = lowest_index_wrong = 0
    for seed in range(25):
        tree = DecisionTreeClassifier(max_depth=depth, random_state=seed).fit(X, y)
        for node, visited in _visits(tree, X, depth):
            f = int(tree.tree_.feature[node])
            if f < 0:
                continue
            tied = {f, twin[f]}
            assert next(v for v in visited if v in tied) == f, (seed, node, visited)
            assert sorted(visited) == sorted(set(visited))  # each feature at most once
            checked += 1
            lowest_index_wrong += f != min(tied)
    # The data exercise the order: the lowest feature would often be the wrong choice.
    assert checked >= 50 and lowest_index_wrong > checked // 4


def test_constant_features_are_never_visited_and_stay_known_below():
    order = BestSplitterOrder(7, 6)
    root = order.visit(np.array([False, False, True, False, False, False]), 0)
    assert sorted(root) == [0, 1, 3, 4, 5]
    child = order.visit(np.array([False, True, True, False, False, False]), 1)
    assert sorted(child) == [0, 3, 4, 5]


def test_tree_random_is_a_xorshift_below_rand_r_max():
    random = TreeRandom(0)  # a zero state is replaced, as scikit-learn does
    draws = [random.next() for _ in range(1000)]
    assert all(0 <= v <= 2**31 - 1 for v in draws) and len(set(draws)) == 1000
    assert TreeRandom(1).next() == draws[0]
    assert all(3 <= TreeRandom(s).integer(3, 5) < 5 for s in range(1, 50))


def test_best_split_priority_chooses_among_equal_cuts_only():
    hist = np.zeros((3, 4, 2))
    hist[:, :, 0] = [[3, 0, 1, 0], [3, 0, 1, 0], [2, 1, 1, 0]]  # features 0 and 1 identical
    hist[:, :, 1] = [[0, 0, 2, 2], [0, 0, 2, 2], [0, 1, 1, 2]]
    valid = valid_splits(hist.sum(axis=2).astype(np.int64))

    def error(wpos, wneg):
        return np.minimum(wpos, wneg).sum(axis=-1)

    assert best_split(hist, valid, error).feature == 0
    assert best_split(hist, valid, error, priority=np.array([2, 1, 0])).feature == 1
    # Feature 2 is worse: no priority makes it win.
    assert best_split(hist, valid, error, priority=np.array([1, 2, 0])).feature == 0
    with pytest.raises(ValueError, match="priority must rank the 3 features"):
        best_split(hist, valid, error, priority=np.array([0, 1]))


def test_tree_learner_tie_order_reorders_only_equal_cuts():
    X, y, _ = _twinned_data()
    calls = []

    def reversed_columns(state):
        def priority(counts, depth):
            calls.append(depth)
            return -np.arange(counts.shape[0])  # the highest column first
        return priority

    def fit(tie_order):
        return boostkit.Booster("adaboost", n_rounds=3, proposal=(
            "tree", {"max_depth": 2, "criterion": "gini", "tie_order": tie_order})).fit(X, y)

    default, reordered = fit(None), fit(reversed_columns)
    assert calls and calls[0] == 0 and set(calls) <= {0, 1}
    for a, b in zip(default.hypotheses, reordered.hypotheses):
        # The same cuts on the copies (features j and j + 5) of the same features.
        assert [f % 5 for f in a.feature] == [f % 5 for f in b.feature]
        assert (a.feature < 5).all() and (b.feature >= 5).all()
        np.testing.assert_array_equal(a.cells(X), b.cells(X))


def test_tree_learner_tie_order_refuses_missing_values_clearly():
    X, y, _ = _twinned_data()
    X[0, 0] = np.nan
    booster = boostkit.Booster("adaboost", n_rounds=1, proposal=(
        "tree", {"max_depth": 2, "tie_order": lambda state: None}))
    with pytest.raises(boostkit.DataError, match="tie_order breaks ties between the cuts of "
                                                 "numeric features only"):
        booster.fit(X, y)


def test_children_impurity_is_exact_on_the_summed_side_and_rounding_on_the_other():
    from boostkit.sklearn_order import EPSILON, children_impurity

    # The left side (fewer examples) is summed: pure, its impurity is exactly 0, as in
    # scikit-learn. The right one is the node minus it.
    totals = np.array([0.1, 0.3, 0.2])
    for criterion in ("gini", "entropy"):
        left_impurity, right_impurity = children_impurity(criterion, totals, [0.1, 0.0, 0.0],
                                                          3, 9)
        assert left_impurity == 0.0 and right_impurity > 0.1
    # Found by subtraction, a pure side keeps the rounding of the node's sums minus the
    # other's (here 1 - (0.3 - 0.1)^2 / 0.2^2 computed in floats): not necessarily 0.
    pure_right = children_impurity("gini", np.array([0.1, 0.2]), [0.1, 0.0], 3, 2)[1]
    assert abs(pure_right) <= 1e-15 and pure_right == 1.0 - (0.2 - 0.0) ** 2 / (
        (0.1 + 0.2) - ((0.1 + 0.2) - (0.2 - 0.0))) ** 2


def test_stump_learner_tie_order_reorders_only_equal_cuts():
    X, y, _ = _twinned_data()
    calls = []

    def reversed_columns(state):
        def priority(counts, depth):
            calls.append((depth, counts.shape))
            return -np.arange(counts.shape[0])  # the highest column first
        return priority

    def fit(tie_order):
        return boostkit.Booster("adaboost", n_rounds=4, proposal=(
            "stump", {"criterion": "gini", "tie_order": tie_order})).fit(X, y)

    default, reordered = fit(None), fit(reversed_columns)
    assert calls == [(0, (X.shape[1], calls[0][1][1]))] * 4  # once per round, at the root
    for a, b in zip(default.hypotheses, reordered.hypotheses):
        assert a.feature < 5 and b.feature == a.feature + 5 and a.threshold == b.threshold
    X[0, 0] = np.nan
    with pytest.raises(boostkit.DataError, match="stump learner's tie_order breaks ties"):
        fit(reversed_columns)

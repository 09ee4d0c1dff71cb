"""Depth-limited decision trees (the ``tree`` proposal and ``decision-tree`` hypothesis).

Checked against a brute-force greedy tree written from the definition (every cut of every
feature scored on raw values), against scikit-learn's entropy trees, and against the stump
learner at depth 1.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
from boostkit.criteria import CRITERIA
from boostkit_weightboost import DecisionTree

ADABOOST = boostkit.get_registry().algorithm("adaboost")


def tree_recipe(calibration="constant-alpha", **tree):
    return attrs.evolve(ADABOOST, proposal=("tree", tree), calibration=calibration)


def first_tree(X, y, sample_weight=None, calibration="constant-alpha", **tree):
    model = boostkit.Booster(tree_recipe(calibration, **tree), n_rounds=1).fit(X, y, sample_weight)
    return model, model.hypotheses[0]


def reference_tree(X, y, w, loss, max_depth, min_leaf):
    """Greedy tree from the definition: list of leaves as boolean masks, grown depth first."""

    def grow(mask, depth):
        wpos, wneg = w[mask & (y > 0)].sum(), w[mask & (y < 0)].sum()
        node_loss = loss(np.array([[wpos]]), np.array([[wneg]]))[0]
        if depth == max_depth or mask.sum() < 2 * min_leaf or wpos == 0 or wneg == 0:
            return [mask]
        best = None
        for f in range(X.shape[1]):
            values = np.unique(X[mask, f])
            for lo, hi in zip(values, values[1:]):
                left = mask & (X[:, f] <= (lo + hi) / 2)
                right = mask & ~left
                if left.sum() < min_leaf or right.sum() < min_leaf:
                    continue
                cells_pos = np.array([[w[left & (y > 0)].sum(), w[right & (y > 0)].sum()]])
                cells_neg = np.array([[w[left & (y < 0)].sum(), w[right & (y < 0)].sum()]])
                value = loss(cells_pos, cells_neg)[0]
                if best is None or value < best[0] - 1e-12 * abs(best[0]):
                    best = (value, left, right)
        if best is None or not best[0] < node_loss * (1 - 1e-12):
            return [mask]
        return grow(best[1], depth + 1) + grow(best[2], depth + 1)

    return grow(np.ones(len(y), dtype=bool), 0)


@given(st.integers(0, 2**32 - 1), st.sampled_from(["entropy", "gini", "error", "z"]),
       st.integers(1, 3), st.integers(1, 4))
@settings(max_examples=40, deadline=None)
def test_the_tree_is_the_greedy_tree_of_the_definition(seed, criterion, max_depth, min_leaf):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 40))
    X = rng.normal(size=(n, 3)).round(1)  # ties within features, few enough bins
    y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = (-1.0, 1.0)
    w = rng.random(n) + 0.1
    model, tree = first_tree(X, y, w, max_depth=max_depth, min_samples_leaf=min_leaf,
                             criterion=criterion)
    leaves = reference_tree(X, y, w / w.sum(), CRITERIA[criterion], max_depth, min_leaf)
    cells = tree.cells(X)
    # Same partition of the training set, leaf for leaf in depth-first order.
    assert tree.n_cells == len(leaves)
    for leaf, mask in enumerate(leaves):
        assert np.array_equal(cells == leaf, mask)
        assert mask.sum() >= min_leaf
        wpos, wneg = w[mask & (y > 0)].sum(), w[mask & (y < 0)].sum()
        assert tree.leaf_scores[leaf] == (1.0 if wpos > wneg else -1.0)


def test_training_cells_are_the_cells_of_the_raw_features():
    data = boostkit.datasets.load("spambase")
    recipe = tree_recipe(max_depth=4, min_samples_leaf=5, criterion="entropy")
    model = boostkit.Booster(recipe, n_rounds=10).fit(data.X, data.y)
    # The training margins come from the binned data, the decision function from the raw
    # thresholds: the recorded training error must be the error of the decision function.
    y = np.where(data.y == model.classes[1], 1.0, -1.0)
    assert model.records[-1].training_error == pytest.approx(np.mean(y * model.decision_function(data.X) <= 0))
    for tree in model.hypotheses:
        counts = np.bincount(tree.cells(data.X), minlength=tree.n_cells)
        assert counts.min() >= 5 and tree.n_cells <= 2 ** 4


def test_depth_one_trees_are_the_stump_learners_stumps():
    data = boostkit.datasets.load("ionosphere")
    # Round by round, the weights from the margins: as a fit of trees computes them.
    stumps = boostkit.Booster("adaboost", n_rounds=40, histogram="exact",
                              compiled_rounds=False).fit(data.X, data.y)
    trees = boostkit.Booster(tree_recipe(max_depth=1), n_rounds=40).fit(data.X, data.y)
    assert np.array_equal(stumps.decision_function(data.X), trees.decision_function(data.X))
    split = 0
    for stump, tree in zip(stumps.hypotheses, trees.hypotheses):
        if tree.n_cells == 2:
            assert (stump.feature, stump.threshold) == (tree.feature[0], tree.threshold[0])
            split += 1
        else:  # the best stump did not lower the error: it labels both sides alike
            assert stump.cell_scores[0] == stump.cell_scores[1] == tree.leaf_scores[0]
    assert split >= 30


def test_entropy_trees_agree_with_scikit_learn():
    sklearn_tree = pytest.importorskip("sklearn.tree")
    # At most 255 distinct values per feature, so that every value has its own bin and the
    # cuts are scikit-learn's midpoints; large nodes, so that no two cuts have exactly the same
    # loss (scikit-learn breaks such ties at random, boostkit by the lowest feature index).
    rng = np.random.default_rng(3)
    X = rng.integers(-125, 125, size=(1000, 4)) / 50.0
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=1000) > 0, 1.0, -1.0)
    _, tree = first_tree(X, y, max_depth=3, min_samples_leaf=30, criterion="entropy")
    reference = sklearn_tree.DecisionTreeClassifier(
        criterion="entropy", max_depth=3, min_samples_leaf=30, random_state=0).fit(X, y)
    X_test = rng.normal(size=(2000, 4))
    assert np.array_equal(tree.scores(X_test), reference.predict(X_test))
    assert tree.n_cells == reference.get_n_leaves()


def test_domain_partition_gives_real_adaboost_over_leaves():
    data = boostkit.datasets.load("german_credit", encode="onehot")
    recipe = tree_recipe("domain-partition", max_depth=3, criterion="entropy")
    model = boostkit.Booster(recipe, n_rounds=5).fit(data.X, data.y)
    first = model.hypotheses[0]
    y = np.where(data.y == model.classes[1], 1.0, -1.0)
    cells, s = first.cells(data.X), 1.0 / len(y)  # Schapire-Singer's smoothing 1/m
    wpos = np.bincount(cells, weights=(y > 0) / len(y), minlength=first.n_cells)
    wneg = np.bincount(cells, weights=(y < 0) / len(y), minlength=first.n_cells)
    np.testing.assert_allclose(model.contributions[0].cell_values, 0.5 * np.log((wpos + s) / (wneg + s)),
                               rtol=1e-12)
    assert first.n_cells > 2


def test_a_pure_or_constant_training_set_gives_one_leaf():
    X = np.ones((6, 2))
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0, 1.0])
    model, tree = first_tree(X, y, max_depth=3)
    assert tree.n_cells == 1 and tree.describe() == "constant +1"
    assert np.array_equal(model.decision_function(X), np.full(6, model.contributions[0].alpha))


def test_zero_weight_examples_do_not_count_towards_min_samples_leaf():
    X = np.arange(8.0)[:, None]
    y = np.array([-1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0])
    w = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0])
    _, tree = first_tree(X, y, w, max_depth=2, min_samples_leaf=2)
    assert tree.n_cells == 2  # two examples of positive weight per side: one cut, no deeper


@pytest.mark.parametrize("fields, message", [
    (dict(left=[1], right=[-2]), "do not describe a tree"),  # points back to itself... as node 1
    (dict(left=[-1], right=[-1]), "do not describe a tree"),  # leaf 0 twice, leaf 1 never
    (dict(leaf_scores=[1.0]), "has 2 leaves"),
    (dict(threshold=[0.0, 1.0]), "one entry per split node"),
    (dict(feature=[-1]), "feature indices"),
])
def test_malformed_trees_are_refused(fields, message):
    valid = dict(feature=[0], threshold=[0.5], left=[-1], right=[-2], leaf_scores=[-1.0, 1.0])
    DecisionTree(**valid)
    with pytest.raises(ValueError, match=message):
        DecisionTree(**{**valid, **fields})


def test_tree_models_save_and_load(tmp_path):
    data = boostkit.datasets.load("ionosphere")
    model = boostkit.Booster("weightboost", n_rounds=15).fit(data.X, data.y)
    assert all(isinstance(h, DecisionTree) for h in model.hypotheses)
    reloaded = boostkit.load_model(model.save(tmp_path / "weightboost.npz"))
    assert np.array_equal(reloaded.decision_function(data.X), model.decision_function(data.X))
    assert [h.describe() for h in reloaded.hypotheses] == [h.describe() for h in model.hypotheses]

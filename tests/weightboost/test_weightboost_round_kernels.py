"""The kernels that shorten a WeightBoost round against naive references (also run with
NUMBA_DISABLE_JIT=1): a node's whole entropy search in one call (against the engine's
best_split with the criterion on every cut, with and without a priority among tied features),
a child's histogram from its parent's and its sibling's, the cells of a split into two leaves,
and whole trees grown with and without the two-leaf shortcut (bit for bit)."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
import boostkit_weightboost.trees as trees
from boostkit.criteria import entropy
from boostkit.splits import TIE_TOLERANCE, best_split
from boostkit_weightboost.kernels import (entropy_split, fill_split_leaves, sibling_sums,
                                          valid_cuts)


def libm_entropy(wpos, wneg):
    """criteria.entropy of one partition's cells, term by term in its order, with the C
    library's ln (Python's math.log), which the kernel uses."""
    cells = [(p * math.log(p / (p + q)) if p > 0 else 0.0)
             + (q * math.log(q / (p + q)) if q > 0 else 0.0) for p, q in zip(wpos, wneg)]
    return -(cells[0] + cells[1])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.floats(0.0, 0.9),
       st.sampled_from([1.0, 1e-160, 1e150, 0.0]), st.booleans())
def test_entropy_split_is_best_split_with_the_criterion(seed, duplicate, empty, scale,
                                                        prioritised):
    # Bins without weight of one class or of both (no weight at all with scale 0), weights
    # whose products leave the normal range, and cuts of exactly equal entropy (a duplicated
    # feature), with the lowest feature or a priority deciding among ties.
    rng = np.random.default_rng(seed)
    hist = scale * rng.exponential(size=(4, 30, 2)) * (rng.random((4, 30, 2)) >= empty)
    if duplicate:
        hist[2] = hist[0]
    valid = np.empty((4, 29), dtype=bool)
    valid_cuts(rng.integers(0, 3, size=(4, 30)), 1, valid)
    priority = rng.permutation(4).astype(np.float64) if prioritised else None
    node_neg, node_pos = hist[0].sum(axis=0)
    sides = np.empty((2, 2))
    cut, loss, node_loss = entropy_split(hist, valid, np.empty(0) if priority is None
                                         else priority, TIE_TOLERANCE, trees._SCREEN,
                                         node_pos, node_neg, sides)

    expected = best_split(hist, valid, trees._on_cuts(entropy, valid), priority=priority)
    assert node_loss == libm_entropy([node_pos, 0.0], [node_neg, 0.0])
    assert node_loss == pytest.approx(float(entropy(np.array([node_pos, 0.0]),
                                                    np.array([node_neg, 0.0]))), rel=1e-14)
    if expected is None:
        assert cut == -1
        return
    assert divmod(cut, 29) == (expected.feature, expected.bin)
    assert sides[0].tolist() == expected.wneg.tolist()
    assert sides[1].tolist() == expected.wpos.tolist()
    assert loss == libm_entropy(sides[1], sides[0])
    assert loss == pytest.approx(expected.loss, rel=1e-14)


def test_entropy_split_of_a_node_without_cuts():
    sides = np.empty((2, 2))
    for hist in (np.ones((3, 1, 2)), np.zeros((0, 5, 2))):
        valid = np.ones((hist.shape[0], hist.shape[1] - 1), dtype=bool)
        cut, loss, node_loss = entropy_split(hist, valid, np.empty(0), TIE_TOLERANCE,
                                             trees._SCREEN, 1.0, 1.0, sides)
        assert (cut, loss) == (-1, np.inf)
        assert node_loss == pytest.approx(2.0 * math.log(2.0))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_sibling_sums_equal_numpys_difference(seed, per_class):
    # The parent's histogram minus the child's, clipped at 0 in place (rounding may leave
    # -1e-17; NaN is kept and -0.0 made 0.0, as by np.maximum), and the counts' difference.
    rng = np.random.default_rng(seed)
    shape = (3, 6, 2, 2) if per_class else (3, 6, 2)
    child = rng.random(shape) * (rng.random(shape) < 0.7)
    hist = child + rng.random(shape) * (rng.random(shape) < 0.5)
    hist.reshape(-1)[:3] = [child.reshape(-1)[0] - 1e-17, -0.0, np.nan]
    child.reshape(-1)[1] = 0.0
    counts = rng.integers(5, 9, size=(3, 6))
    child_counts = rng.integers(0, 5, size=(3, 6))
    expected = np.maximum(hist - child, 0.0)
    sibling = np.empty_like(counts)
    sibling_sums(hist, child, counts, child_counts, sibling)
    assert hist.tobytes() == expected.tobytes()
    assert sibling.tolist() == (counts - child_counts).tolist()


def reference_split_leaves(out, codes, rows, cut, left_leaf):
    out[rows] = np.where(codes[rows] <= cut, left_leaf, left_leaf + 1)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 6), st.integers(0, 5))
def test_fill_split_leaves_equals_the_reference(seed, cut, left_leaf):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 6, size=200).astype(np.uint8)
    rows = np.flatnonzero(rng.random(200) < 0.7)
    out, expected = np.full(200, -1, dtype=np.intp), np.full(200, -1, dtype=np.intp)
    fill_split_leaves(out, codes, rows, cut, left_leaf)
    reference_split_leaves(expected, codes, rows, cut, left_leaf)
    assert out.tolist() == expected.tolist()


def tree_arrays(model):
    return [[np.asarray(a).tobytes() for a in (h.feature, h.threshold, h.left, h.right,
                                               h.leaf_scores, h.missing_left, h.split_gains)]
            for h in model.hypotheses]


@pytest.mark.parametrize("max_depth", [1, 2, 3])
@pytest.mark.parametrize("algorithm", ["weightboost", "samme"])
def test_the_two_leaf_shortcut_grows_the_same_trees(monkeypatch, max_depth, algorithm):
    # Whole fits with the shortcut and with every child grown as a node (its rows listed, then
    # made a leaf): the same trees and margins, bit for bit, with examples of initial weight 0.
    rng = np.random.default_rng(max_depth)
    X = np.round(rng.normal(size=(600, 5)), 1)
    noise = rng.normal(size=600)
    y = (np.argmax(X[:, :3] + noise[:, None], axis=1) if algorithm == "samme"
         else np.where(X[:, 0] + X[:, 1] ** 2 + noise > 1.0, 1, -1))
    sample_weight = rng.exponential(size=600) * (rng.random(600) > 0.1)
    recipe = attrs.evolve(boostkit.get_registry().algorithm(algorithm), stopping=(), proposal=(
        "tree", {"max_depth": max_depth, "min_samples_leaf": 2, "criterion": "entropy"}))

    def fit():
        model = boostkit.Booster(recipe, n_rounds=10).fit(X, y, sample_weight=sample_weight)
        return tree_arrays(model), model.decision_function(X).tobytes()

    shortcut = fit()
    monkeypatch.setattr(trees.TreeLearner, "_children_are_leaves",
                        lambda self, node, binned: False)
    assert fit() == shortcut

"""The kernels that shorten a WeightBoost round against naive references (also run with
NUMBA_DISABLE_JIT=1): the screened entropy and its near cuts in one call (against the exact
entropy and against its two steps), the cells of a split into two leaves, and whole trees grown
with and without the two-leaf shortcut (bit for bit)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
import boostkit_weightboost.trees as trees
from boostkit.kernels.histogram import threshold_class_sums
from boostkit_weightboost.kernels import (fill_split_leaves, near_cuts, screened_cut_entropy,
                                          screened_near_cuts, valid_cuts)


def reference_screened_near_cuts(wpos, wneg, valid, screen, node_pos, node_neg):
    """The cuts whose exact-enough entropy (every valid cut scored by the naive formula, no
    screening) is near the minimum, with their sides' weights and the node's row after them."""
    total = wpos + wneg
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = (np.where(wpos > 0, wpos * np.log(wpos / total), 0.0)
                 + np.where(wneg > 0, wneg * np.log(wneg / total), 0.0))
    exact = np.where(valid, -terms.sum(axis=-1), np.inf).reshape(-1)
    lowest = exact.min()
    near = np.flatnonzero(exact <= lowest + screen * abs(lowest) + 1e-11 * wpos.sum(axis=-1).max()
                          + 1e-11 * wneg.sum(axis=-1).max())
    return near, exact


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.floats(0.0, 0.9))
def test_screened_near_cuts_hold_the_minimum_and_its_ties(seed, duplicate, empty):
    rng = np.random.default_rng(seed)
    hist = rng.exponential(size=(4, 20, 2)) * (rng.random((4, 20, 2)) >= empty)
    if duplicate:
        hist[3] = hist[1]  # cuts of exactly equal entropy: both must be near
    wneg = np.empty((4, 19, 2))
    wpos = np.empty_like(wneg)
    threshold_class_sums(hist, wneg, wpos)
    valid = np.empty((4, 19), dtype=bool)
    valid_cuts(rng.integers(0, 3, size=(4, 20)), 1, valid)
    out = np.empty((4, 19))
    cuts, pos, neg = screened_near_cuts(wpos, wneg, valid, out, 1e-9, 0.25, 0.5)

    if not valid.any():
        assert cuts.shape == (0,)
        return
    near, exact = reference_screened_near_cuts(wpos, wneg, valid, 1e-9, 0.25, 0.5)
    best = exact.min()
    ties = np.flatnonzero(exact <= best + 1e-12 * abs(best))
    # Every cut of the minimum (and its ties) is near; nothing far from it is.
    assert set(ties.tolist()) <= set(cuts.tolist()) <= set(near.tolist())
    assert cuts.tolist() == sorted(cuts.tolist())
    assert pos.tolist() == wpos.reshape(-1, 2)[cuts].tolist() + [[0.25, 0.0]]
    assert neg.tolist() == wneg.reshape(-1, 2)[cuts].tolist() + [[0.5, 0.0]]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.floats(0.0, 0.9),
       st.sampled_from([1.0, 1e-160, 1e150, 0.0]))
def test_screened_near_cuts_are_the_screen_then_near_cuts(seed, duplicate, empty, scale):
    # The one call against its two steps, on weights so small or large that products leave the
    # normal range (or no weight at all), where the limit may reach past the scored cuts.
    rng = np.random.default_rng(seed)
    hist = scale * rng.exponential(size=(4, 30, 2)) * (rng.random((4, 30, 2)) >= empty)
    if duplicate:
        hist[2] = hist[0]
    wneg = np.empty((4, 29, 2))
    wpos = np.empty_like(wneg)
    threshold_class_sums(hist, wneg, wpos)
    valid = np.empty((4, 29), dtype=bool)
    valid_cuts(rng.integers(0, 3, size=(4, 30)), 1, valid)
    out, expected_out = np.empty((4, 29)), np.empty((4, 29))
    cuts, pos, neg = screened_near_cuts(wpos, wneg, valid, out, 1e-9, 0.25, 0.5)
    lowest, bound = screened_cut_entropy(wpos, wneg, valid, expected_out)
    expected = near_cuts(wpos, wneg, expected_out, lowest + 2.0 * bound + 1e-9 * abs(lowest),
                         0.25, 0.5)
    assert out.tobytes() == expected_out.tobytes()
    for got, want in zip((cuts, pos, neg), expected):
        assert got.tobytes() == want.tobytes()


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

"""The split search over missing values and categories (:func:`boostkit.splits.best_binned_split`).

Hand-computed splits with a missing bin on either side, Fisher's grouping of categories against a
brute force over every grouping, and the property that data without missing values or categorical
columns get exactly the threshold search's split (:func:`boostkit.splits.best_split`).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostkit.criteria import MULTICLASS_CRITERIA, gini, weighted_error, z_loss
from boostkit.data import bin_features
from boostkit.splits import (
    best_binned_split,
    best_split,
    class_ratio_keys,
    histogram,
)


def _search(X, y, w=None, *, n_categories=None, loss=weighted_error, **kwargs):
    """``(split, binned)`` of two-class data: y in {0, 1}, w the round's weights."""
    X = np.asarray(X, dtype=np.float64)
    w = np.full(X.shape[0], 1.0 / X.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    binned = bin_features(X, 16, n_categories=None if n_categories is None
                          else np.asarray(n_categories, dtype=np.int64))
    hist = histogram(binned.codes, w, np.asarray(y, dtype=np.uint8), binned.max_bins)
    return best_binned_split(hist, binned.bin_counts, loss, binned, **kwargs), binned


def _side_of(split, binned, X):
    """0 (left) or 1 (right) for every row, from the split's bins."""
    left = split.left_bins(binned.max_bins, binned.missing_bin)
    return np.logical_not(left[binned.codes[split.feature]]).astype(int)


# -- hand-computed splits -------------------------------------------------------------------

def test_missing_values_go_left_when_that_separates_the_classes():
    # x = (1, 2, 3, NaN), y = (+, -, -, +), weights 1/4. Missing right, the best cut x <= 1 errs
    # on the missing + (1/4); missing left, x <= 1 puts {1, NaN} (both +) left: error 0.
    split, binned = _search([[1.0], [2.0], [3.0], [np.nan]], [1, 0, 0, 1])
    assert (split.feature, split.bin, split.missing_left, split.categories) == (0, 0, True, None)
    assert split.loss == 0.0
    assert split.threshold(binned.thresholds) == 1.5
    assert np.array_equal(split.wpos, [0.5, 0.0]) and np.array_equal(split.wneg, [0.0, 0.5])


def test_missing_values_go_right_when_that_separates_the_classes():
    # y = (-, -, +, +): x <= 2 with missing right is exact; missing left errs on NaN (1/4).
    split, binned = _search([[1.0], [2.0], [3.0], [np.nan]], [0, 0, 1, 1])
    assert (split.bin, split.missing_left, split.loss) == (1, False, 0.0)
    assert split.threshold(binned.thresholds) == 2.5
    assert np.array_equal(split.wneg, [0.5, 0.0]) and np.array_equal(split.wpos, [0.0, 0.5])


def test_all_values_against_missing_values_is_a_split():
    # y = + exactly where x is missing: the cut after the last bin of values, missing right.
    X = [[1.0], [2.0], [3.0], [np.nan], [np.nan]]
    split, binned = _search(X, [0, 0, 0, 1, 1])
    assert (split.bin, split.missing_left, split.loss) == (2, False, 0.0)
    assert split.threshold(binned.thresholds) == np.inf
    assert np.array_equal(_side_of(split, binned, X), [0, 0, 0, 1, 1])


def test_missing_values_go_to_the_heavier_side_when_the_feature_has_none():
    # Feature 0 has no missing value (feature 1 has, so the data have a missing bin): its cut
    # x <= 1 is exact; missing values met later go where more of this round's weight went.
    X = [[1.0, np.nan], [1.0, 0.0], [1.0, 1.0], [2.0, 0.0]]
    y = [0, 0, 0, 1]
    light_right, _ = _search(X, y)
    assert (light_right.feature, light_right.missing_left) == (0, True)
    heavy_right, _ = _search(X, y, [0.1, 0.1, 0.1, 0.7])
    assert (heavy_right.feature, heavy_right.missing_left) == (0, False)


def test_best_split_sends_missing_values_to_the_heavier_side():
    X = np.array([[1.0], [1.0], [2.0]])
    binned = bin_features(X, 16)
    for w, left in (([0.3, 0.3, 0.4], True), ([0.2, 0.2, 0.6], False)):
        hist = histogram(binned.codes, np.array(w), np.array([0, 0, 1], dtype=np.uint8),
                         binned.max_bins)
        assert best_split(hist, binned.split_mask, weighted_error).missing_left is left


def test_missing_values_right_win_a_tie():
    # The missing example has weight 0 this round: both directions give the same loss.
    split, _ = _search([[1.0], [2.0], [np.nan]], [0, 1, 1], [0.5, 0.5, 0.0], loss=gini)
    assert (split.bin, split.missing_left) == (0, False)


def test_the_lowest_feature_wins_a_tie_across_numeric_and_categorical_features():
    # Column 1 (categorical) and column 0 (numeric) make the same exact split: column 0 wins,
    # and so does column 0 when it is the categorical one.
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0]])
    y = [0, 0, 1, 1]
    for n_categories in ([0, 2], [2, 0]):
        split, _ = _search(X, y, n_categories=n_categories, min_category_count=1)
        assert (split.feature, split.loss) == (0, 0.0)


def test_min_leaf_counts_missing_values_on_their_side():
    # x = (1, 2, NaN, NaN), y = (-, +, +, +): missing left with x <= 1 leaves 3 | 1 ...
    X = [[1.0], [2.0], [np.nan], [np.nan]]
    y = [0, 1, 1, 1]
    split, _ = _search(X, y, min_leaf=1)
    assert (split.bin, split.missing_left, split.loss) == (0, False, 0.0)
    # ... with 2 examples per side, only "all values | missing" (2 | 2) is left: error 1/4.
    split, binned = _search(X, y, min_leaf=2)
    assert (split.bin, split.missing_left, split.loss) == (1, False, 0.25)
    assert split.threshold(binned.thresholds) == np.inf
    assert _search(X, y, min_leaf=3)[0] is None


def test_a_feature_of_only_missing_values_is_never_split():
    split, _ = _search([[np.nan, 0.0], [np.nan, 1.0], [np.nan, 1.0]], [0, 1, 1])
    assert split.feature == 1
    assert _search([[np.nan], [np.nan]], [0, 1])[0] is None


# -- brute force: every cut and both sides for missing values -----------------------------------

def _two_class_loss(loss, wpos, wneg):
    return float(loss(np.asarray(wpos)[None], np.asarray(wneg)[None])[0])


def _partition_loss(loss, left, y, w):
    wpos = [w[left & (y == 1)].sum(), w[~left & (y == 1)].sum()]
    wneg = [w[left & (y == 0)].sum(), w[~left & (y == 0)].sum()]
    return _two_class_loss(loss, wpos, wneg)


@pytest.mark.parametrize("loss", [weighted_error, z_loss, gini], ids=["error", "z", "gini"])
@pytest.mark.parametrize("seed", range(8))
def test_numeric_search_with_missing_values_matches_brute_force(loss, seed):
    rng = np.random.default_rng(seed)
    n = 40
    X = rng.integers(0, 5, (n, 3)).astype(float)
    X[rng.random((n, 3)) < 0.25] = np.nan
    y = (rng.random(n) < 0.3 + 0.1 * np.nan_to_num(X[:, 0], nan=4.0)).astype(int)
    w = rng.random(n)
    w /= w.sum()
    split, binned = _search(X, y, w, loss=loss)
    best = np.inf
    for f in range(3):
        x = X[:, f]
        for t in list(np.unique(x[~np.isnan(x)])):
            for missing_left in (False, True):
                left = np.where(np.isnan(x), missing_left, x <= t)
                if left.all() or not left.any():
                    continue
                best = min(best, _partition_loss(loss, left, y, w))
    assert split.loss == pytest.approx(best, rel=1e-12, abs=1e-15)
    left = _side_of(split, binned, X) == 0
    assert _partition_loss(loss, left, y, w) == pytest.approx(split.loss, rel=1e-12, abs=1e-15)


# -- Fisher's grouping of categories against every grouping -------------------------------------

@pytest.mark.parametrize("loss", [weighted_error, z_loss], ids=["error", "z"])
@pytest.mark.parametrize("with_missing", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_category_grouping_matches_brute_force_over_all_groupings(loss, with_missing, seed):
    rng = np.random.default_rng(seed)
    k, n = 6, 120
    codes = rng.integers(0, k, n).astype(float)
    ratio = rng.random(k)
    y = (rng.random(n) < ratio[codes.astype(int)]).astype(int)
    if with_missing:
        codes[rng.random(n) < 0.15] = np.nan
    w = rng.random(n)
    w /= w.sum()
    X = codes[:, None]
    split, binned = _search(X, y, w, n_categories=[k], loss=loss, min_category_count=1)
    present = np.unique(codes[~np.isnan(codes)]).astype(int)
    best = np.inf
    for r in range(1, present.shape[0] + 1):
        for group in itertools.combinations(present, r):
            for missing_left in (False, True):
                left = np.where(np.isnan(codes), missing_left, np.isin(codes, group))
                if left.all() or not left.any():
                    continue
                best = min(best, _partition_loss(loss, left, y, w))
    assert split.categories is not None and split.bin == -1
    assert split.loss == pytest.approx(best, rel=1e-12, abs=1e-15)
    left = _side_of(split, binned, X) == 0
    assert np.array_equal(left[~np.isnan(codes)], np.isin(codes[~np.isnan(codes)],
                                                          split.categories))
    assert _partition_loss(loss, left, y, w) == pytest.approx(split.loss, rel=1e-12, abs=1e-15)


def test_rare_categories_go_right():
    # Negative categories 0 and 1 (10 examples each) and 2 (2 examples), positive category 3.
    # With 2 >= min_category_count, category 2 joins 0 and 1: error 0. Below it, category 2
    # stays right with category 3: the best is {0, 1} | {2, 3}, error 2/32.
    codes = np.array([0] * 10 + [1] * 10 + [2] * 2 + [3] * 10, dtype=float)
    y = np.array([0] * 20 + [0, 0] + [1] * 10)
    free, _ = _search(codes[:, None], y, n_categories=[4], min_category_count=2)
    assert np.array_equal(free.categories, [0, 1, 2]) and free.loss == 0.0
    held, _ = _search(codes[:, None], y, n_categories=[4], min_category_count=3)
    assert np.array_equal(held.categories, [0, 1])
    assert held.loss == pytest.approx(2 / 32)


def test_categories_absent_from_the_data_go_right():
    codes = np.array([0.0, 0.0, 2.0, 2.0])  # category 1 of 3 never occurs
    split, _ = _search(codes[:, None], [1, 1, 0, 0], n_categories=[3], min_category_count=1)
    assert np.array_equal(split.categories, [0]) or np.array_equal(split.categories, [2])
    assert not np.isin(1, split.categories)


# -- several classes: the best of one ordering per class ----------------------------------------

def _pair_search(codes, labels, n_classes, k, loss, **kwargs):
    X = codes[:, None]
    binned = bin_features(X, 16, n_categories=np.array([k]))
    n = codes.shape[0]
    weights = np.zeros((n, n_classes))
    weights[np.arange(n), labels] = 1.0 / n  # SAMME's weights: on the true labels only
    signs = np.zeros((n, n_classes), dtype=np.uint8)
    signs[np.arange(n), labels] = 1
    hist = histogram(binned.codes, weights, signs, binned.max_bins, labels=labels)
    return best_binned_split(hist, binned.bin_counts, loss, binned, **kwargs), hist


def test_three_classes_take_the_best_of_the_per_class_orderings():
    rng = np.random.default_rng(3)
    k, n = 5, 300
    codes = rng.integers(0, k, n).astype(float)
    share = rng.dirichlet(np.ones(3), size=k)  # each category's class probabilities
    labels = np.array([rng.choice(3, p=share[int(c)]) for c in codes])
    loss = MULTICLASS_CRITERIA["error"]
    split, hist = _pair_search(codes, labels, 3, k, loss, min_category_count=1)
    # The naive search over the same candidates: each class's ordering, every prefix.
    per_cat = hist[0, :k]  # (K, C, 2)
    keys = class_ratio_keys(per_cat[..., 1], per_cat[..., 0])
    assert keys.shape == (3, k)
    shares = per_cat[..., 1] / per_cat[..., 1].sum(axis=1, keepdims=True)
    assert np.allclose(keys, shares.T)  # no negative pair: the class's share of the category
    best = np.inf
    for row in keys:
        order = np.argsort(row, kind="stable")
        for i in range(1, k):
            left = np.isin(codes, order[:i])
            wpos = np.stack([np.bincount(labels[left], minlength=3),
                             np.bincount(labels[~left], minlength=3)]) / n
            best = min(best, float(loss(wpos[None], np.zeros_like(wpos)[None])[0]))
    assert split.loss == pytest.approx(best, rel=1e-12)
    assert split.wpos.shape == (2, 3)


def test_class_ratio_keys_of_two_classes_are_the_positive_share():
    keys = class_ratio_keys(np.array([1.0, 3.0, 0.0]), np.array([3.0, 1.0, 0.0]))
    assert np.array_equal(keys, [[0.25, 0.75, 0.5]])


# -- the property: no missing value, no category -> exactly the threshold search ---------------

@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 60),
    d=st.integers(1, 4),
    levels=st.integers(1, 8),
    criterion=st.sampled_from([weighted_error, z_loss, gini]),
)
def test_without_missing_values_or_categories_the_search_is_the_threshold_search(
        seed, n, d, levels, criterion):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, d)).astype(float)
    y = rng.integers(0, 2, n).astype(np.uint8)
    w = rng.random(n)
    w /= w.sum()
    binned = bin_features(X, 8)
    assert binned.ordered
    hist = histogram(binned.codes, w, y, binned.max_bins)
    ordered = best_split(hist, binned.split_mask, criterion)
    searched = best_binned_split(hist, binned.bin_counts, criterion, binned)
    if ordered is None:
        assert searched is None
        return
    assert (searched.feature, searched.bin, searched.loss, searched.missing_left,
            searched.categories) == (ordered.feature, ordered.bin, ordered.loss,
                                     ordered.missing_left, None)
    assert np.array_equal(searched.wneg, ordered.wneg)
    assert np.array_equal(searched.wpos, ordered.wpos)


def test_without_missing_values_or_categories_per_class_sums_match_the_threshold_search():
    rng = np.random.default_rng(0)
    n, c = 80, 3
    X = rng.integers(0, 6, (n, 3)).astype(float)
    labels = rng.integers(0, c, n)
    weights = rng.random((n, c))
    weights /= weights.sum()
    signs = (labels[:, None] == np.arange(c)).astype(np.uint8)
    binned = bin_features(X, 8)
    hist = histogram(binned.codes, weights, signs, binned.max_bins)
    loss = MULTICLASS_CRITERIA["z"]
    ordered = best_split(hist, binned.split_mask, loss)
    searched = best_binned_split(hist, binned.bin_counts, loss, binned)
    assert (searched.feature, searched.bin, searched.loss) == (ordered.feature, ordered.bin,
                                                               ordered.loss)
    assert np.array_equal(searched.wpos, ordered.wpos)

"""The stump's compiled searches under the weighted error, Z and the squared error
(boostkit_adaboost.search_kernels), which score exactly only the cuts that can win, against the
search scoring every cut (boostkit.splits.best_split with the numpy losses): the same cut, and
the same sides, on histograms of rows with weights over many orders of magnitude, of ties, of
extreme scales, and of real boosting rounds (adult)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
from boostkit.criteria import weighted_error, z_loss
from boostkit.data import TrainingData
from boostkit.splits import best_split, histogram, valid_splits
from boostkit_adaboost.search_kernels import (lowest_squared_error_cut, lowest_weighted_error_cut,
                                             lowest_z_cut)
from boostkit_adaboost.stumps import compiled_search
from boostkit_additive.gentle import gentle_values


def squared_error(wpos, wneg):
    # gentle-step's partition loss (boostkit_partition_loss, one margin column).
    return (wpos + wneg - (wpos - wneg) * gentle_values(wpos, wneg)).sum(axis=-1)


def lowest_error_kernel(hist, valid, sides):
    # lowest_weighted_error_cut with its scratch scores, as the other kernels are called.
    return lowest_weighted_error_cut(hist, valid, np.empty((hist.shape[0], hist.shape[1] - 1)),
                                     sides)


SEARCHES = [("z", lowest_z_cut, z_loss), ("squared-error", lowest_squared_error_cut,
                                          squared_error),
            ("error", lowest_error_kernel, weighted_error)]


def _check_same_cut(criterion, kernel, loss, hist, valid):
    hist = np.ascontiguousarray(hist)
    valid = np.ascontiguousarray(valid)
    expected = best_split(hist, valid, loss)
    m = hist.shape[1] - 1
    kernel_sides, sides, cell_scores = np.empty((2, 2)), np.empty((2, 2)), np.empty(2)
    k = kernel(hist, valid, kernel_sides)
    assert k == (-1 if expected is None else expected.feature * m + expected.bin)
    assert compiled_search(criterion)(hist, valid, np.empty((hist.shape[0], m)), sides,
                                      cell_scores, np.zeros(0)) == k
    if expected is not None:
        np.testing.assert_array_equal(kernel_sides, [expected.wneg, expected.wpos])
        np.testing.assert_array_equal(sides, [expected.wneg, expected.wpos])


def _rows_histogram(rng, d, n_bins, n, spread, sparse, scale=1.0):
    codes = rng.integers(0, n_bins, (d, n)).astype(np.uint8)
    weights = rng.random(n) ** spread  # spread over orders of magnitude, as boosting's weights
    if sparse:
        weights[rng.random(n) < 0.5] = 0.0
    weights[0] = 1.0
    weights *= scale / weights.sum()
    is_pos = rng.integers(0, 2, n).astype(np.uint8)
    hist = histogram(codes, weights, is_pos, n_bins)
    counts = np.stack([np.bincount(row, minlength=n_bins) for row in codes]).astype(np.int64)
    return hist, valid_splits(counts)


@pytest.mark.parametrize("criterion, kernel, loss", SEARCHES)
@settings(max_examples=150, deadline=None)
@given(st.integers(1, 11), st.integers(2, 60), st.integers(2, 300), st.integers(0, 2**32 - 1),
       st.sampled_from([1, 4, 30]), st.booleans(), st.sampled_from([1.0, 1e-150, 1e150]))
def test_the_search_chooses_the_cut_of_the_search_scoring_every_cut(
        criterion, kernel, loss, d, n_bins, n, seed, spread, sparse, scale):
    hist, valid = _rows_histogram(np.random.default_rng(seed), d, n_bins, n, spread, sparse,
                                  scale)
    _check_same_cut(criterion, kernel, loss, hist, valid)


@pytest.mark.parametrize("criterion, kernel, loss", SEARCHES)
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(3, 40), st.integers(5, 200), st.integers(0, 2**32 - 1))
def test_equal_cuts_go_to_the_lowest_feature_then_the_lowest_cut(criterion, kernel, loss, d,
                                                                n_bins, n, seed):
    # Every feature repeated (the same losses) and the cuts mirrored: ties everywhere.
    hist, valid = _rows_histogram(np.random.default_rng(seed), d, n_bins, n, 4, False)
    hist = np.concatenate([hist, hist, hist[:, ::-1, ::-1]])
    valid = np.concatenate([valid, valid, valid[:, ::-1]])
    _check_same_cut(criterion, kernel, loss, hist, valid)


@pytest.mark.parametrize("criterion, kernel, loss", SEARCHES)
def test_a_separable_feature_and_no_valid_cut(criterion, kernel, loss):
    # Losses of 0 (pure cells) tie; without a valid cut the answer is -1.
    hist = np.zeros((3, 5, 2))
    hist[:, :2, 0] = 0.25
    hist[:, 2:4, 1] = 0.25
    valid = np.ones((3, 4), dtype=bool)
    _check_same_cut(criterion, kernel, loss, hist, valid)
    assert kernel(hist, valid, np.empty((2, 2))) == 1
    assert kernel(hist, np.zeros((3, 4), dtype=bool), np.empty((2, 2))) == -1
    one_bin = np.full((3, 1, 2), 0.5)  # no cut at all
    _check_same_cut(criterion, kernel, loss, one_bin, np.ones((3, 0), dtype=bool))
    assert kernel(one_bin, np.ones((3, 0), dtype=bool), np.empty((2, 2))) == -1


@pytest.mark.parametrize("criterion, kernel, loss", SEARCHES)
def test_a_nan_weight_gives_the_first_cut_as_first_near_minimum(criterion, kernel, loss):
    hist, valid = _rows_histogram(np.random.default_rng(3), 5, 20, 200, 4, False)
    hist[2, 7, 1] = np.nan
    _check_same_cut(criterion, kernel, loss, hist, valid)


@pytest.mark.parametrize("recipe, criterion, kernel, loss", [
    ("real-adaboost", *SEARCHES[0]), ("gentle-adaboost", *SEARCHES[1]),
    ("adaboost", *SEARCHES[2])])
def test_the_rounds_of_a_fit_on_adult_choose_the_same_cuts(recipe, criterion, kernel, loss):
    # The histograms of D_t of 60 rounds on a real data set (numeric and one-hot columns).
    dataset = boostkit.datasets.load("adult", encode="onehot", dropna=True)
    X, y = dataset.X[:3000], dataset.y[:3000]
    data = TrainingData(X, y, None, max_bins=255, rng=np.random.default_rng(0))
    model = boostkit.Booster(recipe, n_rounds=60).fit(X, y)
    sign = np.where(data.is_pos.astype(bool), 1.0, -1.0)
    for t, margin in enumerate(model.staged_decision_function(X)):
        if t % 5 == 0:
            exponent = -sign * np.asarray(margin).reshape(-1)
            weights = np.exp(exponent - exponent.max())
            hist = histogram(data.binned.codes, weights / weights.sum(), data.is_pos,
                             data.binned.max_bins)
            _check_same_cut(criterion, kernel, loss, hist, data.binned.split_mask)


@pytest.mark.parametrize("criterion, kernel, loss", SEARCHES)
def test_a_cut_within_the_tolerance_of_a_later_features_lower_loss_is_kept(criterion, kernel,
                                                                          loss):
    # Feature 1 is feature 0 scaled by 1 - 1e-13: its losses are lower, within the tie
    # tolerance, and its cuts are scored first for the first bound; feature 0's must not be set
    # aside by it: the first cut of feature 0 wins.
    hist = np.zeros((4, 64, 2))
    hist[:, 0] = [0.3, 0.1]
    hist[:, 40] = [0.1, 0.3]
    hist[1] *= 1.0 - 1e-13
    hist[2:] = hist[0, :, ::-1] * 0.5 + 0.25 / 64  # worse features
    valid = np.ones((4, 63), dtype=bool)
    _check_same_cut(criterion, kernel, loss, hist, valid)
    assert kernel(hist, valid, np.empty((2, 2))) == 0

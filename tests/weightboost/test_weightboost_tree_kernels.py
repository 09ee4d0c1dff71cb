"""The kernels of the tree learner against naive references (also run with NUMBA_DISABLE_JIT=1):
a node's histogram and counts, the cuts worth scoring, the approximate logarithm and the entropy
of every cut, and the one-call entropy search, which must pick the split the exact loss picks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
import boostkit_weightboost.trees as trees
from boostkit.criteria import entropy
from boostkit.kernels.histogram import threshold_class_sums
from boostkit.splits import best_split, histogram
from boostkit_weightboost.kernels import (LOG_ERROR, approximate_log, cut_entropy, node_histogram,
                                          valid_cuts)


def reference_node_histogram(codes, rows, weights, is_pos, counted, n_bins):
    """Every row of the node added in turn, one feature at a time."""
    hist = np.zeros((codes.shape[0], n_bins, 2))
    counts = np.zeros((codes.shape[0], n_bins), dtype=np.int64)
    for f in range(codes.shape[0]):
        for i in rows:
            hist[f, codes[f, i], is_pos[i]] += weights[i]
            counts[f, codes[f, i]] += int(counted[i])
    return hist, counts


@pytest.mark.parametrize("n, d, n_bins", [(1, 1, 2), (50, 3, 4), (3000, 9, 255)])
def test_node_histogram_equals_the_references_bit_for_bit(n, d, n_bins):
    rng = np.random.default_rng(n)
    codes = rng.integers(0, n_bins, size=(d, n)).astype(np.uint8)
    weights = rng.exponential(size=n)
    is_pos = (rng.random(n) < 0.4).astype(np.uint8)
    counted = (rng.random(n) < 0.9).astype(np.uint8)
    rows = np.flatnonzero(rng.random(n) < 0.6)
    hist = np.zeros((d, n_bins, 2))
    counts = np.zeros((d, n_bins), dtype=np.int64)
    node_histogram(codes, rows, weights, is_pos, counted, hist, counts)
    expected_hist, expected_counts = reference_node_histogram(codes, rows, weights, is_pos,
                                                              counted, n_bins)
    assert hist.tobytes() == expected_hist.tobytes()
    assert (counts == expected_counts).all()
    # and the engine's histogram over a copy of the node's columns, as the learner summed before
    engine = histogram(np.take(codes, rows, axis=1), weights[rows], is_pos[rows], n_bins)
    assert hist.tobytes() == engine.tobytes()


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4))
def test_valid_cuts_equal_the_reference(seed, min_leaf):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, size=(3, 12)) * (rng.random((3, 12)) < 0.6)
    valid = np.empty((3, 11), dtype=bool)
    valid_cuts(counts, min_leaf, valid)
    n_left = np.cumsum(counts, axis=1)[:, :-1]
    n_right = counts.sum(axis=1, keepdims=True) - n_left
    expected = (counts[:, :-1] > 0) & (n_left >= min_leaf) & (n_right >= min_leaf)
    assert (valid == expected).all()


def test_approximate_log_is_within_its_bound_of_the_logarithm():
    rng = np.random.default_rng(0)
    x = np.concatenate((
        rng.random(200_000), np.exp(-700 * rng.random(200_000)), 1.0 - 1e-9 * rng.random(1000),
        [1.0, 0.5, np.sqrt(0.5), np.nextafter(np.sqrt(0.5), 1.0), 2.0 ** -1022,
         np.nextafter(2.0 ** -1022, 0.0), 5e-324],  # the last two subnormal
    ))
    out = np.empty_like(x)
    approximate_log(x, out, np.empty_like(x))
    assert np.abs(out - np.log(x)).max() <= LOG_ERROR
    assert out[np.flatnonzero(x == 1.0)].tolist() == [0.0] * int((x == 1.0).sum())


def side_sums(hist):
    wneg = np.empty((hist.shape[0], hist.shape[1] - 1, 2))
    wpos = np.empty_like(wneg)
    threshold_class_sums(hist, wneg, wpos)
    return wpos, wneg


def random_hist(rng, d, n_bins, duplicate):
    hist = rng.exponential(size=(d, n_bins, 2)) * (rng.random((d, n_bins, 2)) < 0.7)
    if duplicate:  # equal features: cuts of exactly equal loss
        hist[1:] = hist[0]
    return hist


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_cut_entropy_is_within_its_bound_of_the_criterion(seed, duplicate):
    rng = np.random.default_rng(seed)
    hist = random_hist(rng, 4, 20, duplicate)
    wpos, wneg = side_sums(hist)
    valid = rng.random((4, 19)) < 0.8
    out = np.empty((4, 19))
    lowest, bound = cut_entropy(wpos, wneg, valid, out)
    exact = np.where(valid, entropy(wpos, wneg), np.inf)
    assert (out[~valid] == np.inf).all()
    error = np.abs(out[valid] - exact[valid]).max(initial=0.0)
    assert error <= bound + 1e-14 * exact[valid].max(initial=0.0)  # the bound, and rounding
    assert lowest == out.min()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.sampled_from([1e-13, 1e-11, 1e-9, 0.0]))
def test_the_screened_search_picks_the_split_of_the_exact_loss(seed, duplicate, nudge):
    rng = np.random.default_rng(seed)
    hist = random_hist(rng, 5, 16, duplicate)
    if nudge:  # a near-tie just inside or outside best_split's tolerance
        hist[2] = hist[0] * (1.0 + nudge)
    counts = np.rint(10 * (hist[..., 0] + hist[..., 1])).astype(np.int64)
    valid = np.empty((5, 15), dtype=bool)
    valid_cuts(counts, 1, valid)
    node_neg, node_pos = hist[0].sum(axis=0)
    screened, _ = trees._entropy_split(hist, valid, None, node_pos, node_neg)
    exact = best_split(hist, valid, trees._on_cuts(entropy, valid))
    assert (screened is None) == (exact is None)
    if exact is not None:
        assert (screened.feature, screened.bin) == (exact.feature, exact.bin)
        assert screened.wneg.tolist() == exact.wneg.tolist()
        assert screened.wpos.tolist() == exact.wpos.tolist()
        assert screened.missing_left == exact.missing_left
        # The kernel's ln is the C library's: numpy's too unless it runs its own SIMD ln.
        assert screened.loss == pytest.approx(exact.loss, rel=1e-14)


def test_entropy_trees_are_the_trees_of_the_unscreened_search(monkeypatch):
    # Whole WeightBoost fits (depth-2 entropy trees) with and without the kernel: the same model.
    rng = np.random.default_rng(4)
    X = np.round(rng.normal(size=(1500, 6)), 1)  # ties: many cuts of equal loss
    X[:, 5] = X[:, 4]  # a duplicated feature
    y = np.where(X[:, 0] + X[:, 1] ** 2 + rng.normal(size=1500) > 1, 1, -1)

    def fit():
        model = boostkit.Booster("weightboost", n_rounds=15, random_state=0).fit(X, y)
        return [(h.feature.tobytes(), h.threshold.tobytes(), h.leaf_scores.tobytes())
                for h in model.hypotheses], model.decision_function(X).tobytes()

    screened = fit()
    monkeypatch.setattr(trees, "_SPLIT_SEARCHES", {})
    assert fit() == screened

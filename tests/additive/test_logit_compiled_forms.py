"""LogitBoost's compiled forms (logit-stump's least-squares search and histogram,
logit-step's values, logit-weights' weights from the margins): by hand, against the per-round
components' own numbers, and in a round batch."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from boostkit.compiled import CALIBRATION, HISTOGRAM, SEARCH, compile_form
from boostkit.splits import TIE_TOLERANCE
from boostkit_additive.kernels import (explained_squares, least_squares_cut, least_squares_search,
                                       response_histogram, response_weights)
from boostkit_additive.logit import (cell_response_means, least_squares_split, logit_step_values,
                                     stacked_histograms)

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT,
                                reason="compiled forms are compiled numba functions")

PARAMS = np.array([4.0, TIE_TOLERANCE])  # z_max, ties


def search(hist, valid):
    """``(k, sides, cell_scores)`` of the compiled search on a ``(d, B, 2, 2)`` histogram
    [feature, bin, channel, class] (as ``stacked_histograms`` gives it; the search reads
    [feature, bin, class, channel])."""
    d, n_bins = hist.shape[:2]
    sides, cell_scores = np.empty((2, 2)), np.empty(2)
    k = compile_form(least_squares_search, SEARCH)(
        np.ascontiguousarray(hist.transpose(0, 1, 3, 2)).reshape(d, n_bins, 4), valid,
        np.empty((d, n_bins - 1)),
        sides, cell_scores, PARAMS)
    return k, sides, cell_scores


def test_the_least_squares_search_by_hand():
    # One feature, three bins; [bin, channel (w, w|z|), class (neg, pos)]. Cut after bin 0:
    # left W = 3, S = 2 - 1 = 1; right W = 3, S = 4 - 0 = 4: explained 1/3 + 16/3 = 17/3.
    # Cut after bin 1: left W = 4, S = 1; right W = 2, S = 4: 1/4 + 8 = 33/4, the larger.
    hist = np.array([[[[1.0, 2.0], [1.0, 2.0]],
                      [[1.0, 0.0], [0.0, 0.0]],
                      [[0.0, 2.0], [0.0, 4.0]]]])
    valid = np.ones((1, 2), dtype=bool)
    k, sides, cell_scores = search(hist, valid)
    assert k == 1
    np.testing.assert_array_equal(sides, [[2.0, 0.0], [2.0, 2.0]])  # negatives, positives
    np.testing.assert_array_equal(cell_scores, [1.0 / 4.0, 4.0 / 2.0])  # S / W per side
    values, coefficients = np.empty(2), np.empty(2)
    compile_form(logit_step_values, CALIBRATION)(sides[0], sides[1], cell_scores, PARAMS,
                                                 values, coefficients)
    np.testing.assert_array_equal(values, [1.0 / 8.0, 1.0])  # half Newton steps
    np.testing.assert_array_equal(coefficients, values)


def test_no_valid_cut_gives_the_constant_stumps_sums():
    hist = np.array([[[[1.0, 2.0], [1.0, 2.0]], [[3.0, 0.0], [0.5, 0.0]]]])
    k, sides, cell_scores = search(hist, np.zeros((1, 1), dtype=bool))
    assert k == -1
    np.testing.assert_array_equal(sides, [[4.0, 0.0], [2.0, 0.0]])
    np.testing.assert_array_equal(cell_scores, [(2.0 - 1.5) / 6.0, 0.0])


@pytest.mark.parametrize("seed", range(4))
def test_the_search_is_least_squares_splits(seed):
    rng = np.random.default_rng(seed)
    d, n_bins = 5, 9
    hist = rng.exponential(size=(d, n_bins, 2, 2)) * (rng.random((d, n_bins, 1, 1)) < 0.8)
    valid = rng.random((d, n_bins - 1)) < 0.9
    k, sides, cell_scores = search(hist, valid)
    split = least_squares_split(hist, valid)
    assert divmod(k, n_bins - 1) == (split.feature, split.bin)
    np.testing.assert_array_equal(sides, [split.wneg[:, 0], split.wpos[:, 0]])
    np.testing.assert_array_equal(cell_scores, cell_response_means(split.wneg, split.wpos, 1))


def test_every_cuts_score_is_explained_squares_bit_for_bit():
    # Sparse bins, and sides without weight (the select's other branch) at both ends.
    rng = np.random.default_rng(5)
    d, n_bins = 4, 40
    hist = rng.exponential(size=(d, n_bins, 2, 2)) * (rng.random((d, n_bins, 1, 1)) < 0.3)
    hist[0, :3] = hist[1, -3:] = hist[3] = 0.0
    scores = np.empty((d, n_bins - 1))
    least_squares_cut(hist, np.ones((d, n_bins - 1), dtype=bool), TIE_TOLERANCE, scores,
                      np.empty((2, 2)), np.empty((2, 2)))
    for f in range(d):
        for cut in range(n_bins - 1):
            # [side, stacked column (w, w|z|)] of each class, sums as the cut adds them
            # (hist[f, b] is [class, channel]).
            sides = np.zeros((2, 2, 2))  # class, side, column
            for b in range(cut + 1):
                sides[:, 0] += hist[f, b]
            for b in range(n_bins - 1, cut, -1):
                sides[:, 1] += hist[f, b]
            explained = np.empty(1)
            explained_squares(sides[1][None], sides[0][None], 1, explained)
            assert scores[f, cut] == -explained[0], (f, cut)


def own_histogram(codes, is_pos, margin, y, weights):
    d, n = codes.shape
    out = np.empty((d, 256, 4))
    compile_form(response_histogram, HISTOGRAM)(codes, is_pos, margin, y, weights, PARAMS,
                                                np.empty(n), out)
    return out.reshape(d, 256, 2, 2).transpose(0, 1, 3, 2)  # [feature, bin, channel, class]


@pytest.mark.parametrize("n", [700, 16_384 + 4_000])  # summed directly; by tiles of w |z|
def test_the_histogram_is_logit_stumps_bit_for_bit(n):
    rng = np.random.default_rng(1)
    d = 6
    codes = rng.integers(0, 256, size=(d, n)).astype(np.uint8)
    margin, y = 3.0 * rng.standard_normal(n), rng.choice([-1.0, 1.0], n)
    is_pos, weights = (y > 0).astype(np.uint8), rng.random(n)
    ours = own_histogram(codes, is_pos, margin, y, weights)
    values = np.empty(n)
    response_weights(margin, y, weights, 4.0, values)
    np.testing.assert_array_equal(ours, stacked_histograms(codes, weights, values, is_pos, 256))


def test_the_histogram_by_hand():
    # |z| = min(1 + e^{-2yF}, z_max): 2 at F = 0, z_max far on the wrong side.
    codes = np.array([[0, 0, 1]], dtype=np.uint8)
    margin, y = np.array([0.0, -10.0, 0.0]), np.array([1.0, 1.0, -1.0])
    hist = own_histogram(codes, (y > 0).astype(np.uint8), margin, y, np.array([0.5, 0.25, 1.0]))
    np.testing.assert_array_equal(hist[0, 0], [[0.0, 0.75], [0.0, 0.5 * 2.0 + 0.25 * 4.0]])
    np.testing.assert_array_equal(hist[0, 1], [[1.0, 0.0], [2.0, 0.0]])
    assert not hist[0, 2:].any() and math.isfinite(hist.sum())

"""LogitBoost's compiled forms (logit-stump's least-squares search and w |z| channel,
logit-step's values, logit-weights' weights from the margins): by hand, against the per-round
components' own numbers, and in a round batch."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from boostkit.compiled import CALIBRATION, CHANNEL, SEARCH, compile_form
from boostkit.splits import TIE_TOLERANCE
from boostkit_additive.kernels import least_squares_search, response_channel, response_weights
from boostkit_additive.logit import cell_response_means, least_squares_split, logit_step_values

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT,
                                reason="compiled forms are compiled numba functions")

PARAMS = np.array([4.0, TIE_TOLERANCE])  # z_max, ties


def search(hist, valid):
    """``(k, sides, cell_scores)`` of the compiled search on a ``(d, B, 2, 2)`` histogram."""
    d, n_bins = hist.shape[:2]
    sides, cell_scores = np.empty((2, 2)), np.empty(2)
    k = compile_form(least_squares_search, SEARCH)(
        np.ascontiguousarray(hist).reshape(d, n_bins, 4), valid, np.empty((d, n_bins - 1)),
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


def test_the_channel_is_w_times_the_clipped_response():
    rng = np.random.default_rng(1)
    margin, y = 3.0 * rng.standard_normal(50), rng.choice([-1.0, 1.0], 50)
    weights = rng.random(50)
    out, expected = np.empty(50), np.empty(50)
    compile_form(response_channel, CHANNEL)(margin, y, weights, PARAMS, out)
    response_weights(margin, y, weights, 4.0, expected)
    np.testing.assert_array_equal(out, expected)
    # |z| = min(1 + e^{-2yF}, z_max): by hand at F = 0 (2) and far on the wrong side (z_max).
    compile_form(response_channel, CHANNEL)(np.array([0.0, -10.0]), np.ones(2), np.ones(2),
                                            PARAMS, out[:2])
    assert out[0] == 2.0 and out[1] == 4.0 and math.isfinite(out[1])

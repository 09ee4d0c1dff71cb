"""Pair weights on the true-label pairs only (SAMME's) are summed in one pass over the examples;
the histogram must equal the general pair histogram exactly."""

from __future__ import annotations

import numpy as np
import pytest

from boostkit.kernels.histogram import true_pair_weights
from boostkit.splits import histogram


def _data(n=500, d=4, c=5, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 12, size=(d, n)).astype(np.uint8)
    labels = rng.integers(0, c, n).astype(np.intp)
    is_pos = np.zeros((n, c), dtype=np.uint8)
    is_pos[np.arange(n), labels] = 1
    return codes, labels, is_pos, rng


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_true_label_weights_give_the_pair_histogram_exactly(n_jobs):
    codes, labels, is_pos, rng = _data()
    weights = np.zeros(is_pos.shape)
    weights[np.arange(len(labels)), labels] = rng.random(len(labels))
    weights[::7, :] = 0.0  # rows of zero weight too
    fast = histogram(codes, weights, is_pos, 12, n_jobs, labels=labels)
    general = histogram(codes, weights, is_pos, 12, n_jobs)
    assert fast.shape == general.shape == (4, 12, 5, 2)
    np.testing.assert_array_equal(fast, general)
    assert (fast[..., 0] == 0).all()


def test_weights_off_the_true_pairs_take_the_general_path():
    codes, labels, is_pos, rng = _data(seed=1)
    weights = rng.random(is_pos.shape)
    weights[3, (labels[3] + 1) % 5] = 1e-300  # one tiny weight off a true pair is enough
    out = np.empty(len(labels))
    assert not true_pair_weights(weights * (is_pos | (np.arange(5) == (labels[:, None] + 1) % 5)),
                                 labels, out)
    np.testing.assert_array_equal(histogram(codes, weights, is_pos, 12, labels=labels),
                                  histogram(codes, weights, is_pos, 12))


def test_true_pair_weights_reads_the_true_pairs():
    weights = np.array([[0.0, 0.25], [0.5, 0.0], [0.0, 0.0]])
    out = np.empty(3)
    assert true_pair_weights(weights, np.array([1, 0, 1]), out)
    np.testing.assert_array_equal(out, [0.25, 0.5, 0.0])
    assert not true_pair_weights(weights, np.array([0, 0, 1]), out)

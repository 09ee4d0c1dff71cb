"""The two-channel class histogram against numpy, and against two single-channel histograms."""

from __future__ import annotations

import numpy as np
import pytest

from boostkit.kernels.histogram import class_histogram
from boostkit.kernels.two_channel import two_channel_histogram


def _numpy_histograms(codes, first, second, is_pos, n_bins):
    d = codes.shape[0]
    out = np.zeros((d, n_bins, 2, 2))  # [feature, bin, class, channel]
    for f in range(d):
        for channel, values in enumerate((first, second)):
            np.add.at(out[f, :, :, channel], (codes[f], is_pos), values)
    return out


@pytest.mark.parametrize("n, d", [(0, 3), (1, 1), (13, 5), (1000, 4), (20_000, 7), (16_384 + 9, 9)])
def test_two_channel_histogram_is_both_class_histograms(n, d):
    rng = np.random.default_rng(n + d)
    n_bins = 256
    codes = rng.integers(0, n_bins, size=(d, n)).astype(np.uint8)
    first, second = rng.exponential(size=n), rng.normal(size=n)
    is_pos = (rng.random(n) < 0.4).astype(np.uint8)
    out = np.full((d, n_bins, 2, 2), np.nan)
    two_channel_histogram(codes, first, second, is_pos, out)
    np.testing.assert_allclose(out, _numpy_histograms(codes, first, second, is_pos, n_bins),
                               rtol=1e-12, atol=1e-12)
    # Bit for bit the engine's histogram of each value: every bin in the examples' order.
    for channel, values in enumerate((first, second)):
        single = np.empty((d, n_bins, 2))
        class_histogram(codes, values, is_pos, single)
        np.testing.assert_array_equal(out[..., channel], single)


def test_fewer_bins_and_codes_not_adjacent_in_memory():
    rng = np.random.default_rng(1)
    n, d, n_bins = 3001, 6, 17
    wide = rng.integers(0, n_bins, size=(n, d)).astype(np.uint8)
    codes = wide.T  # (d, n) with a stride of d bytes along the examples
    first, second = rng.random(n), rng.random(n)
    is_pos = (rng.random(n) < 0.5).astype(np.uint8)
    out = np.empty((d, n_bins, 2, 2))
    two_channel_histogram(codes, first, second, is_pos, out)
    np.testing.assert_allclose(out, _numpy_histograms(codes, first, second, is_pos, n_bins),
                               rtol=1e-12)

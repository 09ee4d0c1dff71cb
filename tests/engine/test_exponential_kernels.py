"""The engine's vectorisable exponential (boostkit.kernels.exponential) against numpy's."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from boostkit.kernels.boosting import _exp_block
from boostkit.kernels.exponential import exp_nonpositive


def exp_by_the_kernel(x):
    """exp_nonpositive(x) for every x <= 0, through the vectorised loop of the engine's
    exponential weights (margin -x, label +1, initial weight 1, largest exponent taken as 0)."""
    out = np.empty_like(x)
    _exp_block(-x, np.ones_like(x), np.ones_like(x), 0.0, out, 0, x.shape[0])
    return out


def test_exp_nonpositive_is_within_one_ulp_of_numpy_over_its_range():
    # The arguments the kernels exponentiate are <= 0; e^x is subnormal below -708.4 and rounds
    # to 0 below -745.13. Without the JIT a sample keeps the test quick.
    rng = np.random.default_rng(0)
    n = 20_000 if numba.config.DISABLE_JIT else 2_000_000
    x = np.concatenate([
        -rng.uniform(0.0, 750.0, n), -rng.uniform(0.0, 1.0, n // 10),
        -rng.uniform(700.0, 750.0, n // 10), -rng.uniform(0.0, 1e-6, n // 10),
        -np.arange(0.0, 746.0, 0.5),
        # k ln 2 (where e^x is a power of 2) and (k + 1/2) ln 2 (where the rounding of k flips)
        -(np.arange(1, 1077) * np.log(2.0)), -(np.arange(1, 1077) + 0.5) * np.log(2.0),
        [0.0, -0.0, -5e-324, -1e-300, -1e-17, -708.3964185322641, -708.4, -745.1332191019411,
         -745.14, -746.0, -1e6, -1e300, -np.inf],
    ])
    ours, expected = exp_by_the_kernel(x), np.exp(x)
    assert (np.abs(ours - expected) <= np.spacing(expected)).all()
    assert (ours[:n] == expected[:n]).mean() > 0.85  # mostly the same number, not just close


def test_exp_nonpositive_special_values():
    assert exp_nonpositive(0.0) == 1.0 and exp_nonpositive(-0.0) == 1.0
    assert exp_nonpositive(-746.0) == 0.0 and exp_nonpositive(-np.inf) == 0.0
    assert exp_nonpositive(-745.0) == np.exp(-745.0) == 5e-324  # the smallest subnormal
    assert exp_nonpositive(3.0) == 1.0  # outside its domain: taken as 0
    assert exp_nonpositive(-1.0) == pytest.approx(np.exp(-1.0), rel=2.3e-16)

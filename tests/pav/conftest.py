"""Fixtures of the PAV plugin's tests (Wilbur et al. 2005)."""

from __future__ import annotations

import numpy as np
import pytest

import boostkit
from boostkit.data import TrainingData


@pytest.fixture(scope="session")
def make_state():
    """``make_state(X, y, weights=None)``: a BoostState as the engine builds it for round 1,
    for driving components directly (no hook relay: the components under test need none). A
    scipy.sparse X stays sparse, as in the engine."""

    def build(X, y, weights=None):
        sparse = hasattr(X, "tocsr") and hasattr(X, "nnz")
        data = TrainingData(X if sparse else np.asarray(X, dtype=np.float64), np.asarray(y))
        return boostkit.BoostState(
            data=data,
            weights=data.sample_weight.copy() if weights is None else np.asarray(weights, dtype=np.float64),
            margin=np.zeros(data.n_samples),
            n_rounds=1,
            rng=np.random.default_rng(0),
            hook=None,
            n_jobs=1,
        )

    return build

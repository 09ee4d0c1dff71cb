"""The bundled datasets the sharding tests fit on one machine and on shards."""

from __future__ import annotations

import pytest

from boostkit.datasets import load


@pytest.fixture(scope="session")
def cancer():
    """breast_cancer_wisconsin (with its missing values), as arrays."""
    data = load("breast_cancer_wisconsin")
    return data.X, data.y


@pytest.fixture(scope="session")
def contraceptive():
    """contraceptive (three classes), as arrays."""
    data = load("contraceptive")
    return data.X, data.y

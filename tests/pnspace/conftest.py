"""Fixtures of the PN-space tests: a proposal that always returns one given stump.

Theorem 1 of Scholz 2006 compares AdaBoost and Ada2Boost on the *same* base
classifier, so the tests fix the stump instead of letting a learner choose it.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit_adaboost.stumps import Stump


@attrs.define
class FixedStump(boostkit.Proposal):
    """Propose h(x) = -1 if x[feature] <= threshold else +1, every round."""

    name = "fixed-stump"
    provides = frozenset({"real-scores", "sign-scores", "cells", "two-cells"})
    feature: int = 0
    threshold: float = 0.0

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        cells = (state.data.X[:, self.feature] > self.threshold).astype(np.intp)
        stump = Stump(self.feature, self.threshold, np.array([-1.0, 1.0]))
        return boostkit.Candidate(stump, cells=cells, scores=stump.cell_scores[cells])


class FixedStumpPlugin:
    @boostkit.hookimpl
    def boostkit_register_components(self, registry):
        registry.add_component(FixedStump)

    @boostkit.hookimpl
    def boostkit_register_algorithms(self, registry):
        for name, calibration in (("fixed-ada2", "asymmetric-beta"),
                                  ("fixed-ada", ("constant-alpha", {"smoothing": 0.0}))):
            registry.add_algorithm(boostkit.Recipe(
                name=name, proposal="fixed-stump", calibration=calibration,
                reweighting="stratification",
            ))


@pytest.fixture(scope="module")
def fixed_stump():
    """Registers ``fixed-stump`` and the recipes ``fixed-ada2`` / ``fixed-ada`` for a module.

    ``fit(algorithm, X, y, threshold, feature=0, sample_weight=None, **calibration)`` runs one
    round with the stump x[feature] > threshold and returns the model.
    """
    boostkit.register_plugin(FixedStumpPlugin(), name="pnspace-fixed-stump")

    def fit(algorithm, X, y, threshold, feature=0, sample_weight=None, **calibration):
        params = {"proposal": {"feature": feature, "threshold": float(threshold)}}
        if calibration:
            params["calibration"] = calibration
        return boostkit.Booster(algorithm, n_rounds=1, params=params).fit(X, y, sample_weight)

    yield fit
    boostkit.unregister_plugin("pnspace-fixed-stump")

"""One boosting loop over every data plane (boostkit.plane): a component written once (a
proposal reading state.class_histogram(), a reweighting with a row form) fits the same model on
the rows in this process and on shards, and plugins written to the former hooks
(boostkit_propose_from_histogram, boostkit_shard_weights) still work, with a DeprecationWarning.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.distributed import LocalShards, fit_on_shards
from boostkit.losses import get_loss, shard_weights


@pytest.fixture(scope="module")
def cancer():
    data = boostkit.datasets.load("breast_cancer_wisconsin")
    return data.X, data.y


def _parts(X, y, size):
    return [(X[a:a + size], y[a:a + size]) for a in range(0, len(y), size)]


@attrs.define
class RowFormExponential(boostkit.Reweighting):
    """AdaBoost's reweighting written as its row form alone."""

    name = "test-row-form-exponential"
    provides = frozenset({"potential", "multiclass", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        return shard_weights(get_loss("exponential"), margin, y, initial_weights, n_jobs)


@attrs.define
class OldHistogramStump(boostkit.Proposal):
    """The stump search, written to the deprecated boostkit_propose_from_histogram."""

    name = "test-old-histogram-stump"
    provides = frozenset({"real-scores", "sign-scores", "cells", "two-cells", "missing-values",
                          DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_propose_from_histogram(self, state, histogram):
        from boostkit_adaboost import StumpLearner

        stump, wneg, wpos, split = StumpLearner().choose(state, histogram)
        binned = state.data.binned
        return boostkit.Candidate(stump, bin_cells=split.bin_cells(binned.max_bins,
                                                                   binned.missing_bin),
                                  cell_wneg=wneg, cell_wpos=wpos)


@attrs.define
class OldShardExponential(boostkit.Reweighting):
    """AdaBoost's reweighting written to the deprecated boostkit_shard_weights."""

    name = "test-old-shard-exponential"
    provides = frozenset({"potential", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_shard_weights(self, margin, y, initial_weights, n_jobs):
        return shard_weights(get_loss("exponential"), margin, y, initial_weights, n_jobs)


@attrs.define
class NegativeRowWeights(boostkit.Reweighting):
    name = "test-negative-row-weights"

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        return boostkit.RowWeights(-initial_weights, 0.0, None)


@attrs.define
class ZeroRowWeights(boostkit.Reweighting):
    name = "test-zero-row-weights"

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        return boostkit.RowWeights(np.zeros_like(initial_weights), 0.0, None)


class ComponentsPlugin:
    @boostkit.hookimpl
    def boostkit_register_components(self, registry):
        for cls in (RowFormExponential, OldHistogramStump, OldShardExponential,
                    NegativeRowWeights, ZeroRowWeights):
            registry.add_component(cls)


@pytest.fixture(scope="module", autouse=True)
def components():
    boostkit.register_plugin(ComponentsPlugin(), name="test-one-loop")
    yield
    boostkit.unregister_plugin("test-one-loop")


def _same_model(model, reference, rtol):
    assert [str(h) for h in model.hypotheses] == [str(h) for h in reference.hypotheses]
    np.testing.assert_allclose([r.coefficients[0] for r in model.records],
                               [r.coefficients[0] for r in reference.records], rtol=rtol)


def test_a_reweighting_written_as_its_row_form_fits_adaboosts_model_on_every_plane(cancer):
    X, y = cancer
    booster = boostkit.Booster(proposal="stump", calibration="constant-alpha",
                               reweighting="test-row-form-exponential", n_rounds=25)
    adaboost = boostkit.Booster("adaboost", n_rounds=25).fit(X, y)
    local = booster.fit(X, y)
    _same_model(local, adaboost, 1e-12)
    # The potential is the rule's: prod Z_t bounds the training error, as AdaBoost's does.
    np.testing.assert_allclose([r.error_bound for r in local.records],
                               [r.error_bound for r in adaboost.records], rtol=1e-12)
    sharded, stats = fit_on_shards(booster, LocalShards(_parts(X, y, 150)))
    _same_model(sharded, local, 1e-12)
    assert stats.rounds == 25


def test_plugins_written_to_the_former_hooks_still_fit_with_a_deprecation_warning(cancer):
    X, y = cancer
    booster = boostkit.Booster(proposal="test-old-histogram-stump",
                               calibration="constant-alpha",
                               reweighting="test-old-shard-exponential", n_rounds=15)
    with pytest.warns(DeprecationWarning) as caught:
        local = booster.fit(X, y)
    messages = " ".join(str(w.message) for w in caught)
    assert "boostkit_propose_from_histogram is deprecated" in messages
    assert "boostkit_shard_weights is deprecated" in messages
    _same_model(local, boostkit.Booster("adaboost", n_rounds=15).fit(X, y), 1e-12)
    with pytest.warns(DeprecationWarning):
        sharded, _ = fit_on_shards(booster, LocalShards(_parts(X, y, 200)))
    _same_model(sharded, local, 1e-12)


@pytest.mark.parametrize("rule, message", [
    ("test-negative-row-weights", "finite non-negative values"),
    ("test-zero-row-weights", "left no example with positive weight"),
])
def test_a_bad_row_form_is_refused_naming_the_component(cancer, rule, message):
    X, y = cancer
    booster = boostkit.Booster(proposal="stump", calibration="constant-alpha",
                               reweighting=rule, n_rounds=3)
    with pytest.raises(boostkit.HookError, match=message) as raised:
        booster.fit(X, y)
    assert rule in str(raised.value)


"""One boosting loop over every data plane (boostkit.plane): a component written once (a
proposal reading state.class_histogram(), a reweighting with a row form) fits the same model on
the rows in this process and on shards, and plugins written to the former hooks
(boostkit_propose_from_histogram, boostkit_shard_weights) still work, with a DeprecationWarning.
"""

from __future__ import annotations

import attrs
import hypothesis
import hypothesis.strategies as st
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
                    NegativeRowWeights, ZeroRowWeights, MarginShrunkContribution,
                    MarginShrunkAlpha, ReductionRecorder):
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
    # Where the time went: in this process the wait for the shards is their work and more.
    assert stats.step_seconds >= stats.shard_seconds > 0


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



class WeightedMarginTotals:
    """A reduction: the D_t-weighted margin total per bin of feature 0, and the rows counted."""

    def __call__(self, rows):
        n_bins = 256
        per_bin = np.bincount(rows.codes[0], weights=rows.weights * rows.margin,
                              minlength=n_bins)
        return per_bin, np.array([rows.y.shape[0]], dtype=np.float64)


@attrs.define
class ReductionRecorder(boostkit.Observer):
    """Records state.reduce(WeightedMarginTotals()) after every round."""

    name = "test-reduction-recorder"
    provides = frozenset({DISTRIBUTED})
    seen: list = attrs.field(factory=list)

    @boostkit.hookimpl
    def boostkit_round_end(self, state, record):
        self.seen.append(state.reduce(WeightedMarginTotals()))


def test_a_reduction_gives_the_same_sums_on_every_plane(cancer):
    X, y = cancer
    local_seen, sharded_seen = ReductionRecorder(), ReductionRecorder()
    boostkit.Booster("adaboost", n_rounds=6, observers=[local_seen]).fit(X, y)
    shards = LocalShards(_parts(X, y, 120))
    fit_on_shards(boostkit.Booster("adaboost", n_rounds=6, observers=[sharded_seen]), shards)
    assert len(local_seen.seen) == len(sharded_seen.seen) == 6
    for (local, n_local), (sharded, n_sharded) in zip(local_seen.seen, sharded_seen.seen):
        np.testing.assert_allclose(sharded, local, rtol=1e-10, atol=1e-15)
        assert n_local[0] == n_sharded[0] == len(y)
    # A shard lost between rounds is rebuilt and replayed before it answers a reduction.
    lossy = ReductionRecorder()
    shards = LocalShards(_parts(X, y, 120))

    def lose_one(state, record):
        shards.lose(record.round % shards.n_shards)

    fit_on_shards(boostkit.Booster("adaboost", n_rounds=6, observers=[lossy],
                                   callbacks=[lose_one]), shards)
    for (sharded, _), (again, _) in zip(sharded_seen.seen, lossy.seen):
        np.testing.assert_array_equal(again, sharded)


@attrs.frozen
class MarginShrunkContribution(boostkit.Contribution):
    """c(x) = alpha h(x) / (1 + |F_{t-1}(x)|): depends on the running margin, not the cell."""

    name = "test-margin-shrunk"
    alpha: float = 0.0

    def values(self, output, margin):
        return self.alpha * output.scores / (1.0 + np.abs(margin))


@attrs.define
class MarginShrunkAlpha(boostkit.Calibration):
    """AdaBoost's alpha from the cell sums, shrunk where the margin is already large."""

    name = "test-margin-shrunk-alpha"
    needs = frozenset({"cells"})
    provides = frozenset({DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return np.minimum(wpos, wneg).sum(axis=-1)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        wneg, wpos = state.cell_weights(candidate)
        scores = candidate.hypothesis.cell_scores
        eps = float(np.where(scores > 0, wneg, wpos).sum())
        alpha = 0.5 * np.log((1.0 - eps) / eps)
        contribution = MarginShrunkContribution(alpha)
        values = (contribution.values(candidate, state.margin) if candidate.has_rows else None)
        return boostkit.Calibrated(contribution, values, (alpha,))


def test_a_margin_dependent_contribution_is_evaluated_on_the_shards(cancer):
    X, y = cancer
    booster = boostkit.Booster(proposal="stump", calibration="test-margin-shrunk-alpha",
                               reweighting="exponential", n_rounds=12)
    local = booster.fit(X, y)
    sharded, stats = fit_on_shards(booster, LocalShards(_parts(X, y, 150)))
    _same_model(sharded, local, 1e-12)
    np.testing.assert_allclose(sharded.decision_function(X), local.decision_function(X),
                               rtol=1e-10, atol=1e-12)
    assert stats.bytes_out > 0


@hypothesis.given(table=st.lists(st.integers(0, 1), min_size=1, max_size=20),
                  seed=st.integers(0, 2**32 - 1))
def test_bin_cells_give_every_row_its_table_cell(table, seed):
    codes = np.random.default_rng(seed).integers(0, len(table), (2, 64)).astype(np.uint8)
    cells = boostkit.BinCells(1, np.array(table)).cells(codes)
    assert cells.dtype == np.uint8
    np.testing.assert_array_equal(cells, np.array(table, dtype=np.uint8)[codes[1]])

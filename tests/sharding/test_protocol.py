"""The distributed round (boostkit.distributed) without a cluster: shards in this process.

The model of a distributed fit must be the single-machine model: the same terms, coefficients
within 1e-12, on any split of the rows into shards (empty, label-sorted, skewed), and after a
shard is lost and rebuilt mid-fit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
from boostkit import distributed as dist
from boostkit.datasets import load
from boostkit.errors import DataError, RecipeError
from boostkit.losses import get_loss, margin_loss_distribution, shard_weights
from strategies import weighted_datasets

RECIPES = ["adaboost", "real-adaboost", "madaboost", "gentle-adaboost"]


def _parts(X, y, bounds, w=None):
    return [(X[a:b], y[a:b]) if w is None else (X[a:b], y[a:b], w[a:b])
            for a, b in zip(bounds[:-1], bounds[1:])]


def _even(n, k):
    return np.linspace(0, n, k + 1).astype(int)


def assert_same_model(ref, model, tol=1e-12):
    """Same terms (hypotheses compared field by field), coefficients within ``tol``."""
    assert len(model.hypotheses) == len(ref.hypotheses)
    for a, b in zip(ref.hypotheses, model.hypotheses):
        assert a == b
        np.testing.assert_array_equal(getattr(a, "cell_scores", None),
                                      getattr(b, "cell_scores", None))
    for r, m in zip(ref.records, model.records):
        np.testing.assert_allclose(m.coefficients, r.coefficients, rtol=0, atol=tol)
        assert m.weighted_error == pytest.approx(r.weighted_error, abs=tol)
        assert m.training_error == pytest.approx(r.training_error, abs=tol)
        assert m.hypothesis == r.hypothesis
    assert model.stop_reason == ref.stop_reason


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("n_shards", [1, 2, 4])
def test_the_distributed_model_is_the_single_machine_model(cancer, recipe, n_shards):
    X, y = cancer
    booster = boostkit.Booster(recipe, n_rounds=40)
    ref = booster.fit(X, y)
    model, stats = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y), n_shards))))
    assert_same_model(ref, model)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), atol=1e-12)
    assert stats.rounds == len(model.records) and stats.replays == 0


@pytest.mark.parametrize("recipe", ["adaboost-mh", "discrete-adaboost-mh"])
def test_several_classes_run_on_the_pairs_as_on_one_machine(contraceptive, recipe):
    X, y = contraceptive
    booster = boostkit.Booster(recipe, n_rounds=30)
    ref = booster.fit(X, y)
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y), 3))))
    assert_same_model(ref, model)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))


def test_uneven_shards_empty_label_sorted_and_skewed(cancer):
    X, y = cancer
    order = np.argsort(y, kind="stable")  # all of one class first: shards of a single class
    Xs, ys = X[order], y[order]
    n = len(y)
    bounds = np.array([0, 0, 3, 3, n // 2, n - 1, n, n])  # empty, tiny, skewed shards
    booster = boostkit.Booster("real-adaboost", n_rounds=30)
    ref = booster.fit(Xs, ys)
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(Xs, ys, bounds)))
    assert_same_model(ref, model)
    assert {len(np.unique(ys[a:b])) for a, b in zip(bounds[:-1], bounds[1:]) if b > a} == {1, 2}


def test_sample_weights_and_zero_weight_rows(cancer):
    X, y = cancer
    w = np.random.default_rng(1).exponential(size=len(y))
    w[::7] = 0.0
    booster = boostkit.Booster("adaboost", n_rounds=30)
    ref = booster.fit(X, y, w)
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y), 3), w)))
    assert_same_model(ref, model)


def test_missing_values_and_categories_in_dataframe_partitions():
    data = load("adult")
    frame, y = data.frame().iloc[:3000], data.y[:3000]
    booster = boostkit.Booster("real-adaboost", n_rounds=25)
    ref = booster.fit(frame, y)
    bounds = _even(len(y), 3)
    parts = [(frame.iloc[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(parts))
    assert ref.features.categorical.any() and model.features == ref.features
    for j in np.flatnonzero(ref.features.categorical):
        np.testing.assert_array_equal(model.features.categories[j], ref.features.categories[j])
    assert_same_model(ref, model)
    np.testing.assert_array_equal(model.predict(frame), ref.predict(frame))


def test_a_lost_shard_is_rebuilt_and_replayed(cancer):
    X, y = cancer
    shards = dist.LocalShards(_parts(X, y, _even(len(y), 3)))

    def lose(state, record):
        if record.round in (5, 17):
            shards.lose(record.round % 3)

    booster = boostkit.Booster("adaboost", n_rounds=30)
    ref = booster.fit(X, y)
    model, stats = dist.fit_on_shards(
        boostkit.Booster("adaboost", n_rounds=30, callbacks=[lose]), shards)
    assert_same_model(ref, model)
    # lost after rounds 5 and 17: the next rounds replay those terms and their own
    assert stats.replays == 2 and stats.replayed_terms == (5 + 1) + (17 + 1)


def test_a_repeated_step_reports_again_without_applying_twice(cancer):
    X, y = cancer
    shards = dist.LocalShards(_parts(X, y, [0, len(y)]))
    model, _ = dist.fit_on_shards(boostkit.Booster("adaboost", n_rounds=3), shards)
    shard = shards.shards[0]
    margin = shard.margin.copy()
    term = dist.ShardTerm(boostkit.BinCells(0, np.zeros(shard.plan.n_bins, np.uint8)),
                          np.array([0.5, -0.5]))
    first = dist.step_shard(shard, 3, [term])
    again = dist.step_shard(shard, 3, [term])
    assert shard.n_applied == 4
    np.testing.assert_array_equal(first.histogram, again.histogram)
    np.testing.assert_allclose(shard.margin, margin + 0.5)
    behind = dist.step_shard(shard, 5, [term])
    assert behind == dist.ShardBehind(0, 4, 5)


def test_bin_edges_come_from_a_size_proportional_sample(cancer, monkeypatch):
    X, y = cancer
    monkeypatch.setattr(dist, "BIN_SAMPLE", 300)
    shards = dist.LocalShards(_parts(X, y, [0, 100, len(y)]))
    model, _ = dist.fit_on_shards(boostkit.Booster("adaboost", n_rounds=5, random_state=3),
                                    shards)
    assert shards.plan is not None
    counts = dist.sample_sizes([100, len(y) - 100], 300)
    assert counts.sum() == 300 and abs(counts[0] - 300 * 100 / len(y)) < 1
    again, _ = dist.fit_on_shards(boostkit.Booster("adaboost", n_rounds=5, random_state=3),
                                    dist.LocalShards(_parts(X, y, [0, 100, len(y)])))
    assert again.hypotheses == model.hypotheses  # the seed decides the sample


@settings(max_examples=60, deadline=None)
@given(weighted_datasets(max_n=80, max_d=4), st.sampled_from(RECIPES),
       st.lists(st.integers(0, 100), min_size=1, max_size=5))
def test_any_split_into_shards_gives_the_single_machine_model(dataset, recipe, cuts):
    """Ties, constant columns, zero weights, empty shards: the same terms, coefficients to
    1e-12 (relative to the largest, as huge coefficients of pure cells carry its rounding).
    Shards sum every histogram and compute the weights from the margins, as the single machine
    does with ``histogram="exact"`` one round at a time: the data's exact ties then fall alike."""
    X, y, w = dataset
    bounds = np.unique(np.clip(np.concatenate([[0], np.sort(cuts), [len(y)]]), 0, len(y)))
    booster = boostkit.Booster(recipe, n_rounds=8, histogram="exact", compiled_rounds=False)
    ref = booster.fit(X, y, w)
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, bounds, w)))
    assert [str(h) for h in model.hypotheses] == [str(h) for h in ref.hypotheses]
    for r, m in zip(ref.records, model.records):
        scale = max(1.0, np.abs(r.coefficients).max())
        np.testing.assert_allclose(m.coefficients, r.coefficients, rtol=0, atol=1e-12 * scale)
    assert model.stop_reason == ref.stop_reason


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=12), st.integers(1, 50_000))
def test_sample_sizes_split_the_budget_in_proportion(counts, total):
    sizes = dist.sample_sizes(counts, total)
    assert (sizes <= np.asarray(counts)).all() and (sizes >= 0).all()
    if sum(counts) <= total:
        np.testing.assert_array_equal(sizes, counts)
    else:
        assert sizes.sum() == total
        np.testing.assert_array_less(np.abs(sizes - np.asarray(counts) * total / sum(counts)), 1.0 + 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["exponential", "logistic", "madaboost", "logitboost"]),
       st.lists(st.integers(0, 40), min_size=1, max_size=5), st.integers(0, 2**31))
def test_shard_weights_normalised_over_shards_are_the_distribution(loss_name, sizes, seed):
    n = sum(sizes)
    if n == 0:
        return
    rng = np.random.default_rng(seed)
    margin, y = 40.0 * rng.standard_normal(n), np.where(rng.random(n) < 0.5, -1.0, 1.0)
    d1 = rng.exponential(size=n) * (rng.random(n) < 0.8)
    if d1.sum() == 0:
        return
    d1 /= d1.sum()
    loss = get_loss(loss_name)
    weights, log_potential = margin_loss_distribution(loss, margin, y, d1)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    parts = [shard_weights(loss, margin[a:b], y[a:b], d1[a:b])
             for a, b in zip(bounds[:-1], bounds[1:])]
    totals = [p.log_scale + math.log(p.weights.sum()) if p.weights.sum() > 0 else -math.inf
              for p in parts]
    log_total = dist._logsumexp(totals)
    ours = np.concatenate([p.weights * math.exp(p.log_scale - log_total) for p in parts])
    np.testing.assert_allclose(ours, weights, rtol=1e-12, atol=1e-300)
    assert dist._logsumexp([p.log_potential for p in parts]) == pytest.approx(log_potential,
                                                                              rel=1e-12, abs=1e-12)


def test_reduce_reports_by_hand():
    """Two shards with weights 1*e^0 + 3*e^0 and 2*e^{ln 2}: D = (1, 3, 4) / 8."""
    plan = dist.ShardPlan(thresholds=(np.array([0.5]),), missing_bin=None, max_bins=2,
                          classes=np.array([0, 1]), weight_total=3.0,
                          features=boostkit.FeatureSchema(1), allow_missing=False,
                          reweighting=None)
    h1 = np.array([[[1.0, 0.0], [0.0, 3.0]]])  # feature 0: bin 0 one negative, bin 1 a positive
    h2 = np.array([[[0.0, 0.0], [2.0, 0.0]]])
    r1 = dist.ShardReport(index=0, n_applied=1, n_rows=2, training_error=0.25, weighted_error=1.0,
                          previous_scale=0.0, weight_total=4.0, log_scale=0.0,
                          log_potential=math.log(0.5), histogram=h1)
    r2 = dist.ShardReport(index=1, n_applied=1, n_rows=1, training_error=0.0, weighted_error=0.5,
                          previous_scale=math.log(2.0), weight_total=2.0, log_scale=math.log(2.0),
                          log_potential=math.log(0.25), histogram=h2)
    sums = dist.reduce_reports([r2, r1], math.log(4.0), plan)
    assert sums.log_total == pytest.approx(math.log(8.0))
    np.testing.assert_allclose(sums.histogram, np.array([[[1, 0], [4, 3]]]) / 8.0)
    assert sums.weighted_error == pytest.approx(1.0 / 4.0 + 0.5 * 2.0 / 4.0)
    assert sums.training_error == 0.25
    assert sums.log_potential == pytest.approx(math.log(0.75))


@pytest.mark.parametrize("with_missing", [False, True])
def test_split_bin_cells_are_the_split_cells_of_the_binned_data(cancer, with_missing):
    from boostkit_adaboost.stumps import split_cells

    from boostkit.criteria import CRITERIA
    from boostkit.data import TrainingData
    from boostkit.splits import best_binned_split, best_split, histogram

    X, y = cancer
    if not with_missing:
        X, y = X[~np.isnan(X).any(axis=1)], y[~np.isnan(X).any(axis=1)]
    data = TrainingData(X, y, allow_missing=True)
    binned = data.binned
    assert binned.ordered != with_missing
    hist = histogram(binned.codes, data.sample_weight, data.is_pos, binned.max_bins)
    split = (best_binned_split(hist, binned.bin_counts, CRITERIA["error"], binned) if with_missing
             else best_split(hist, binned.split_mask, CRITERIA["error"]))
    cells = split.bin_cells(binned.max_bins, binned.missing_bin)
    np.testing.assert_array_equal(cells.cells(binned.codes), split_cells(binned, split))


@pytest.mark.parametrize("table", [np.array([], dtype=np.uint8), np.array([0, 256]),
                                   np.array([[0, 1]]), np.array([0.5, 1.0])])
def test_bin_cells_refuse_what_is_not_a_cell_table(table):
    with pytest.raises(ValueError, match="table must"):
        boostkit.BinCells(0, table)


@pytest.mark.parametrize("recipe, culprit", [("pav-adaboost", "proposal 'cmass'"),
                                             ("rankboost-pairs",
                                              "reweighting 'preference-pairs'")])
def test_a_recipe_that_cannot_distribute_is_refused_naming_the_component(cancer, recipe, culprit):
    X, y = cancer
    with pytest.raises(RecipeError, match=f"cannot run distributed: {culprit}"):
        dist.fit_on_shards(boostkit.Booster(recipe, n_rounds=3),
                             dist.LocalShards(_parts(X, y, [0, len(y)])))


def test_bad_partitions_are_named(cancer):
    X, y = cancer
    with pytest.raises(DataError, match="partition 1: X has 100 rows but y has 99"):
        dist.fit_on_shards(boostkit.Booster("adaboost", n_rounds=3),
                             dist.LocalShards([(X[:100], y[:100]), (X[100:200], y[100:199])]))
    with pytest.raises(DataError, match="only one class"):
        dist.fit_on_shards(boostkit.Booster("adaboost", n_rounds=3),
                             dist.LocalShards([(X[:10], np.zeros(10)), (X[10:20], np.zeros(10))]))
    bad = X[:50].copy()
    bad[3, 2] = np.inf
    with pytest.raises(DataError, match="partition 0"):
        dist.fit_on_shards(boostkit.Booster("adaboost", n_rounds=3),
                             dist.LocalShards([(bad, y[:50])]))


def test_the_stump_proposes_the_same_stump_from_the_summed_histogram(cancer):
    from boostkit_adaboost import StumpLearner
    from boostkit_adaboost.stumps import split_cells

    from boostkit.engine import BoostState
    from boostkit.data import TrainingData
    from boostkit.splits import histogram

    X, y = cancer
    data = TrainingData(X, y, allow_missing=True)
    w = np.random.default_rng(0).exponential(size=len(y))
    w /= w.sum()

    class Hook:  # the weighted error, as constant-alpha would answer
        @staticmethod
        def boostkit_partition_loss(wpos, wneg, n_columns):
            return np.minimum(wpos, wneg).sum(axis=-1)

    class SummedHalves:  # a plane whose histogram is the sum of two shards' histograms
        @staticmethod
        def class_histogram(state):
            binned, half = data.binned, len(y) // 2
            return sum(histogram(np.ascontiguousarray(binned.codes[:, s]), w[s],
                                 data.is_pos[s], binned.max_bins)
                       for s in (slice(0, half), slice(half, None)))

    def state(plane=None):
        return BoostState(data=data, weights=w, margin=np.zeros(len(y)), n_rounds=1,
                          rng=np.random.default_rng(0), hook=Hook, n_jobs=1, plane=plane)

    learner = StumpLearner()
    on_rows = learner.boostkit_propose(state())
    summed = learner.boostkit_propose(state(SummedHalves()))
    assert summed.hypothesis == on_rows.hypothesis
    np.testing.assert_allclose(summed.cell_wpos, on_rows.cell_wpos, rtol=1e-12)
    # The bin-to-cell table gives every row the cell of the split the search found.
    _, _, _, split = learner.choose(state(), histogram(data.binned.codes, w, data.is_pos,
                                                        data.binned.max_bins))
    np.testing.assert_array_equal(on_rows.bin_cells.cells(data.binned.codes),
                                  split_cells(data.binned, split))


@pytest.mark.parametrize("loss", ["exponential", "madaboost"])
def test_shard_weights_of_a_reweighting_normalise_to_its_weights(loss):
    from boostkit_adaboost import ExponentialReweighting, MarginLossReweighting

    rule = ExponentialReweighting() if loss == "exponential" else MarginLossReweighting(loss)
    rng = np.random.default_rng(5)
    margin, y = rng.standard_normal(200) * 5, np.where(rng.random(200) < 0.4, 1.0, -1.0)
    d1 = np.full(200, 1 / 200)

    class State:
        pass

    state = State()
    state.margin, state.initial_weights, state.n_jobs = margin, d1, 1
    state.least_margin = None  # not measured: the rule finds its largest exponent itself
    state.data = State()
    state.data.y = y
    whole = rule.boostkit_reweight(state)
    halves = [rule.boostkit_row_weights(margin[s], y[s], d1[s], 1)
              for s in (slice(0, 120), slice(120, 200))]
    log_total = dist._logsumexp([h.log_scale + math.log(h.weights.sum()) for h in halves])
    ours = np.concatenate([h.weights * math.exp(h.log_scale - log_total) for h in halves])
    np.testing.assert_allclose(ours, whole.weights, rtol=1e-13)
    assert dist._logsumexp([h.log_potential for h in halves]) == pytest.approx(
        whole.log_potential, rel=1e-13)


def test_the_docs_list_exactly_the_distributed_components():
    from pathlib import Path

    from boostkit.capabilities import DISTRIBUTED
    from boostkit.plugins import get_registry

    registry = get_registry()
    distributed = {name for name, cls in registry.components().items()
                   if DISTRIBUTED in cls.capabilities().provides}
    page = (Path(__file__).resolve().parents[2] / "docs" / "distributed.md").read_text()
    table = page.split("## Which recipes distribute")[1].split("##")[0]
    listed = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    assert listed == distributed


def test_a_component_answering_a_row_hook_is_refused(cancer):
    class Watcher:  # an observer that also asks for its own D_1
        @boostkit.hookimpl
        def boostkit_initial_weights(self, data):
            return None

    X, y = cancer
    with pytest.raises(RecipeError, match="implements boostkit_initial_weights"):
        dist.fit_on_shards(boostkit.Booster("adaboost", n_rounds=2, observers=[Watcher()]),
                             dist.LocalShards([(X, y)]))

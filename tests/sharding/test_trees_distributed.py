"""Trees and WeightBoost on shards (boostkit.distributed, in this process).

The ``tree`` proposal grows a tree level by level from sums over the shards (one reduction per
level), and the WeightBoost plugin's recipes (``weightboost``, ``epsilon-boost``,
``weight-decay``) run on any split of the rows into shards with the model of one machine: the
same trees, coefficients within 1e-12; or are refused, naming the option that keeps them off
the shards, before any shard is built.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import boostkit
from boostkit import distributed as dist
from boostkit.datasets import load
from boostkit.errors import RecipeError
from boostkit_weightboost.reweighting import WeightBoostWeights, WeightDecayWeights
from boostkit_weightboost.trees import TreeCells

from test_protocol import _even, _parts, assert_same_model

WEIGHTBOOST_RECIPES = ["weightboost", "epsilon-boost", "weight-decay"]
TREE_FIELDS = ("feature", "threshold", "left", "right", "leaf_scores", "missing_left",
               "categorical", "category_left")


def assert_same_trees(ref, model, tol=1e-12):
    """The single-machine model: every tree node for node, coefficients within ``tol``."""
    assert_same_model(ref, model, tol)
    for a, b in zip(ref.hypotheses, model.hypotheses):
        for field in TREE_FIELDS:
            np.testing.assert_array_equal(getattr(b, field), getattr(a, field), err_msg=field)


@pytest.mark.parametrize("recipe", WEIGHTBOOST_RECIPES)
@pytest.mark.parametrize("n_shards", [1, 2, 4])
def test_the_weightboost_recipes_on_shards_give_the_single_machine_model(cancer, recipe,
                                                                        n_shards):
    X, y = cancer
    booster = boostkit.Booster(recipe, n_rounds=25)
    ref = booster.fit(X, y)
    model, stats = dist.fit_on_shards(booster,
                                      dist.LocalShards(_parts(X, y, _even(len(y), n_shards))))
    assert_same_trees(ref, model)
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), atol=1e-12)
    assert stats.rounds == 25 and stats.replays == 0
    for r, m in zip(ref.records, model.records):
        assert m.z == pytest.approx(r.z, abs=1e-12)
        if "mean_factor" in r.extra:  # weightboost's input-dependent factor, one reduction
            assert m.extra["mean_factor"] == pytest.approx(r.extra["mean_factor"], abs=1e-12)
    assert any(h.feature.shape[0] == 3 for h in model.hypotheses)  # depth-2 trees were grown


def test_uneven_shards_empty_label_sorted_and_skewed(cancer):
    X, y = cancer
    order = np.argsort(y, kind="stable")  # all of one class first: shards of a single class
    Xs, ys = X[order], y[order]
    n = len(y)
    bounds = np.array([0, 0, 3, 3, n // 2, n - 1, n, n])  # empty, tiny, skewed shards
    booster = boostkit.Booster("weightboost", n_rounds=20)
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(Xs, ys, bounds)))
    assert_same_trees(booster.fit(Xs, ys), model)


def test_a_lost_shard_is_rebuilt_and_replayed_between_levels(cancer):
    X, y = cancer
    shards = dist.LocalShards(_parts(X, y, _even(len(y), 3)))

    def lose(state, record):
        if record.round in (4, 11):
            shards.lose(record.round % 3)

    booster = boostkit.Booster("weightboost", n_rounds=20)
    model, stats = dist.fit_on_shards(
        boostkit.Booster("weightboost", n_rounds=20, callbacks=[lose]), shards)
    assert_same_trees(booster.fit(X, y), model)
    assert stats.replays == 2 and stats.replayed_terms == 4 + 11


def test_deeper_trees_real_values_and_sample_weights(cancer):
    X, y = cancer
    w = np.random.default_rng(3).exponential(size=len(y))
    w[::9] = 0.0
    booster = boostkit.Booster(proposal=("tree", {"max_depth": 4, "min_samples_leaf": 3}),
                               calibration="domain-partition", reweighting="exponential",
                               n_rounds=15)
    model, stats = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y), 3),
                                                                       w)))
    assert_same_trees(booster.fit(X, y, w), model)
    assert max(h.n_cells for h in model.hypotheses) > 4  # below depth 2: several reductions
    # A level's sums cover only the bins that hold examples (10 values here), not all 256, of
    # one child of each pair (its sibling's are the parent's minus its): at most 1 + 2 + 4
    # nodes below the root, per shard, (weight, count) per class and bin.
    assert stats.bytes_in / stats.rounds < 3 * 7 * 9 * 16 * 3 * 8


def test_several_classes_on_the_pairs():
    data = load("contraceptive")
    booster = boostkit.Booster(proposal=("tree", {"max_depth": 2}),
                               calibration="domain-partition", reweighting="exponential",
                               n_rounds=10)
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(data.X, data.y,
                                                                   _even(len(data.y), 3))))
    assert_same_trees(booster.fit(data.X, data.y), model)


def test_missing_values_and_categories_route_on_the_shards():
    data = load("adult")
    frame, y = data.frame().iloc[:2000], data.y[:2000]
    booster = boostkit.Booster("weightboost", n_rounds=8)
    ref = booster.fit(frame, y)
    bounds = _even(len(y), 3)
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(
        [(frame.iloc[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]))
    assert any(h.categorical.any() for h in ref.hypotheses)
    assert_same_trees(ref, model)
    np.testing.assert_array_equal(model.predict(frame), ref.predict(frame))


def test_tree_cells_from_the_codes_are_the_trees_cells_from_the_values():
    data = load("adult")
    frame, y = data.frame().iloc[:2000], data.y[:2000]
    booster = boostkit.Booster(proposal=("tree", {"max_depth": 3}), calibration="constant-alpha",
                               reweighting="exponential", n_rounds=5)
    shards = dist.LocalShards([(frame, y)])
    model, _ = dist.fit_on_shards(booster, shards)
    shard, plan = shards.shards[0], shards.plan
    assert plan.missing_bin is not None and plan.features.categorical.any()
    X = np.asarray(plan.features.transform(frame, name="X"), dtype=np.float64)
    for term in model.hypotheses:
        cells = TreeCells(term.feature, _left_bins(term, plan), term.left, term.right)
        np.testing.assert_array_equal(cells.cells(shard.codes), term.cells(X))


def _left_bins(tree, plan):
    """The bins going left at every split node of ``tree``, from its thresholds."""
    table = np.zeros((tree.feature.shape[0], plan.n_bins), dtype=np.uint8)
    for k, f in enumerate(tree.feature):
        edges = plan.thresholds[f]
        if tree.categorical[k]:
            table[k, :tree.category_left.shape[1]] = tree.category_left[k]
        else:
            table[k, :edges.shape[0] + 1] = np.append(edges, np.inf) <= tree.threshold[k]
        table[k, plan.missing_bin] = tree.missing_left[k]
    return table


@pytest.mark.parametrize("rule", [WeightBoostWeights(beta=0.5),
                                  WeightBoostWeights(beta=0.7, regularizer="inverse-polynomial",
                                                     power=2.0),
                                  WeightDecayWeights(decay=0.01)])
def test_the_row_form_is_the_whole_rows_distribution_split_anywhere(rule):
    rng = np.random.default_rng(0)
    n = 1000
    margin, y = 6.0 * rng.normal(size=n), rng.choice([-1.0, 1.0], size=n)
    d1 = rng.exponential(size=n)
    d1[::5] = 0.0
    d1 /= d1.sum()

    state = SimpleNamespace(data=SimpleNamespace(y=y, sample_weight=d1), margin=margin,
                            n_jobs=1)  # what the whole-rows form reads
    whole = rule.boostkit_reweight(state)
    parts = [rule.boostkit_row_weights(margin[a:b], y[a:b], d1[a:b], 1)
             for a, b in zip([0, 0, 3, 500], [0, 3, 500, n])]
    top = max(p.log_scale for p in parts)
    total = sum(p.weights.sum() * np.exp(p.log_scale - top) for p in parts)
    joined = np.concatenate([p.weights * np.exp(p.log_scale - top) for p in parts]) / total
    np.testing.assert_allclose(joined, whole.weights, rtol=1e-12, atol=1e-300)
    potential = np.logaddexp.reduce([p.log_potential for p in parts])
    assert potential == pytest.approx(whole.log_potential, abs=1e-12)
    assert parts[0].log_scale == -np.inf and parts[0].weights.shape == (0,)


@pytest.mark.parametrize("options, refusal", [
    ({"proposal": ("tree", {"midpoints": True})},
     "proposal 'tree' with midpoints=True places each threshold between the raw values"),
    ({"proposal": ("tree", {"tie_order": lambda state: None})},
     "proposal 'tree' with a tie_order replays a tree grown node by node"),
    ({"calibration": ["constant-alpha", ("input-dependent", {"record_bound": True})]},
     "calibration-wrapper 'input-dependent' with record_bound=True computes eq. 6's bound"),
])
def test_options_that_read_the_rows_are_refused_before_any_shard_is_built(cancer, options,
                                                                        refusal):
    X, y = cancer

    class Untouched(dist.LocalShards):
        def summaries(self, **kwargs):
            raise AssertionError("a refused recipe read its partitions")

    with pytest.raises(RecipeError, match=f"cannot run distributed: {refusal}"):
        dist.fit_on_shards(boostkit.Booster("weightboost", n_rounds=3, **options),
                           Untouched(_parts(X, y, [0, len(y)])))


@pytest.mark.slow
def test_weightboost_on_a_dask_cluster_of_two_worker_processes(cancer):
    pytest.importorskip("distributed")
    import dask.array as da
    from distributed import Client, LocalCluster

    import boostkit.dask

    X, y = cancer
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as c:
        booster = boostkit.dask.Booster("weightboost", n_rounds=15)
        model = booster.fit(da.from_array(X, chunks=(120, 9)), da.from_array(y, chunks=120),
                            client=c)
    assert_same_trees(boostkit.Booster("weightboost", n_rounds=15).fit(X, y), model)
    assert booster.fit_stats_.rounds == 15 and booster.fit_stats_.replays == 0

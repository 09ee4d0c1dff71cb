"""One-vs-rest, multi-label y and eval_set validation on shards (boostkit.distributed).

Each gives the single-machine model: the same terms, coefficients within 1e-12, the same best
round and stop reason, on 1, 2 and 4 shards, uneven shards, and after a training or a
validation shard is lost mid-fit; what cannot run on shards is refused before any row is read.

Shards sum every round's class histogram; where a test's model has several classes or labels,
its single-machine fit does too (``histogram="exact"``), rather than carry it across rounds,
whose rounding decides near-ties (a missing-value side of equal weight) otherwise.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit import distributed as dist
from boostkit.capabilities import PAIRWISE_LOSS
from boostkit.errors import DataError, RecipeError
from boostkit.multiclass import OneVsRestModel
from boostkit.validation import MEAN_METRICS

from test_protocol import _even, _parts, assert_same_model

TOL = 1e-12
#: Shard boundaries over n rows: one, two, four shards, and uneven (empty, tiny, skewed).
SPLITS = {
    "1": lambda n: _even(n, 1),
    "2": lambda n: _even(n, 2),
    "4": lambda n: _even(n, 4),
    "uneven": lambda n: np.array([0, 0, 3, n // 2, n - 1, n, n]),
}


def _validation_stopping(metric="log_loss", patience=5):
    return [("validation", {"patience": patience, "metric": metric})]


def _shards(X, y, split, w=None):
    return dist.LocalShards(_parts(X, y, SPLITS[split](len(y)), w))


def assert_same_validation(ref, model):
    """The same best round, and every round's validation error and scores within TOL."""
    assert model.best_round == ref.best_round
    for r, m in zip(ref.records, model.records):
        names = {k for k in r.extra if k.startswith("validation_")}
        assert names and names == {k for k in m.extra if k.startswith("validation_")}
        for name in names:
            assert m.extra[name] == pytest.approx(r.extra[name], rel=0, abs=TOL), name


# -- eval_set -------------------------------------------------------------------------------------
@pytest.mark.parametrize("split", list(SPLITS))
def test_eval_set_on_shards_stops_at_the_single_machine_round(cancer, split):
    X, y = cancer
    Xt, yt, Xv, yv = X[:400], y[:400], X[400:], y[400:]
    booster = boostkit.Booster("adaboost", n_rounds=80, stopping=_validation_stopping())
    ref = booster.fit(Xt, yt, eval_set=(Xv, yv))
    assert ref.stop_reason == "no-validation-improvement" and ref.best_round < len(ref.records)
    model, stats = dist.fit_on_shards(booster, _shards(Xt, yt, split), _shards(Xv, yv, split))
    assert_same_model(ref, model)
    assert_same_validation(ref, model)
    np.testing.assert_allclose(model.decision_function(Xv), ref.decision_function(Xv),
                               rtol=0, atol=TOL)
    assert stats.rounds == len(model.records) and stats.replays == 0


@pytest.mark.parametrize("metric", MEAN_METRICS)
def test_every_mean_metric_scores_weighted_validation_rows_as_on_one_machine(cancer, metric):
    X, y = cancer
    w = np.random.default_rng(3).exponential(size=len(y))
    w[::9] = 0.0
    Xt, yt, wt, Xv, yv, wv = X[:350], y[:350], w[:350], X[350:], y[350:], w[350:]
    booster = boostkit.Booster("real-adaboost", n_rounds=40,
                               stopping=_validation_stopping(metric, patience=8))
    ref = booster.fit(Xt, yt, wt, eval_set=(Xv, yv, wv))
    model, _ = dist.fit_on_shards(booster, _shards(Xt, yt, "2", wt), _shards(Xv, yv, "4", wv))
    assert_same_model(ref, model)
    assert_same_validation(ref, model)


def test_a_lost_training_shard_and_a_lost_validation_shard_are_replayed(cancer):
    X, y = cancer
    Xt, yt, Xv, yv = X[:400], y[:400], X[400:], y[400:]
    train, held = _shards(Xt, yt, "4"), _shards(Xv, yv, "2")

    def lose(state, record):
        if record.round == 4:
            train.lose(1)
        if record.round == 7:
            held.lose(0)

    booster = boostkit.Booster("adaboost", n_rounds=80, stopping=_validation_stopping())
    ref = booster.fit(Xt, yt, eval_set=(Xv, yv))
    model, stats = dist.fit_on_shards(attrs.evolve(booster, callbacks=[lose]), train, held)
    assert_same_model(ref, model)
    assert_same_validation(ref, model)
    # the training shard replays rounds 1-4 before round 5, the validation shard 1-7 before 8
    assert stats.replays == 2 and stats.replayed_terms == (4 + 1) + (7 + 1)


def test_several_classes_scored_on_validation_shards(contraceptive):
    X, y = contraceptive
    Xt, yt, Xv, yv = X[:1100], y[:1100], X[1100:], y[1100:]
    for metric in MEAN_METRICS:
        booster = boostkit.Booster("adaboost-mh", n_rounds=25,
                                   stopping=_validation_stopping(metric, patience=4))
        ref = booster.fit(Xt, yt, eval_set=(Xv, yv))
        model, _ = dist.fit_on_shards(booster, _shards(Xt, yt, "2"), _shards(Xv, yv, "uneven"))
        assert_same_model(ref, model)
        assert_same_validation(ref, model)


class _Untouchable(dist.Shards):
    """A transport whose partitions must not be read."""

    n_shards = 1

    def summaries(self, **kwargs):
        raise AssertionError("the partitions were read")


def test_a_metric_over_all_validation_rows_is_refused_before_any_work():
    booster = boostkit.Booster("adaboost", n_rounds=5, stopping=_validation_stopping("roc_auc"))
    with pytest.raises(RecipeError, match="stopping 'validation' scores the validation rows "
                                          "with 'roc_auc', which compares or counts rows"):
        dist.fit_on_shards(booster, _Untouchable(), _Untouchable())


def test_held_out_rows_on_a_transport_that_cannot_hold_out_are_refused_before_any_work():
    booster = boostkit.Booster("adaboost", n_rounds=5, stopping=_validation_stopping())
    with pytest.raises(RecipeError, match="holds out a share of the training rows.* "
                                          "_Untouchable cannot hold rows out.*eval_set"):
        dist.fit_on_shards(booster, _Untouchable())


def test_an_observer_scoring_the_validation_rows_is_refused_before_any_work():
    class ValidationAUC:
        @boostkit.hookimpl
        def boostkit_validation_score(self, state):
            return {"roc_auc": 0.5}

    booster = boostkit.Booster("adaboost", n_rounds=5, observers=[ValidationAUC()])
    with pytest.raises(RecipeError, match="observer .*ValidationAUC implements "
                                          "boostkit_validation_score"):
        dist.fit_on_shards(booster, _Untouchable(), _Untouchable())


# -- validation rows held out of the training partitions ------------------------------------------
def _holdout(fraction=0.25, patience=5, metric="log_loss"):
    return [("validation", {"patience": patience, "metric": metric,
                            "validation_fraction": fraction})]


@pytest.mark.parametrize("split", list(SPLITS))
def test_held_out_rows_are_those_one_machine_holds_out(cancer, split):
    X, y = cancer
    w = np.random.default_rng(1).exponential(size=len(y))
    w[::7] = 0.0
    booster = boostkit.Booster("real-adaboost", n_rounds=80, random_state=5,
                               stopping=_holdout())
    ref = booster.fit(X, y, w)
    assert ref.stop_reason == "no-validation-improvement"
    model, _ = dist.fit_on_shards(booster, _shards(X, y, split, w))
    assert_same_model(ref, model)
    assert_same_validation(ref, model)
    again, _ = dist.fit_on_shards(booster, _shards(X, y, split, w))
    assert [r.extra for r in again.records] == [r.extra for r in model.records]


def test_the_held_out_rows_of_a_partition_follow_from_the_counts(contraceptive):
    X, y = contraceptive
    classes = np.unique(y)
    rng = np.random.default_rng(7)
    parts = _parts(X, y, np.array([0, 0, 10, 600, 1473]))
    summaries = [dist.partition_summary(k, *p, None, categorical_features=None,
                                        allow_missing=False) for k, p in enumerate(parts)]
    strata = dist._strata_counts(summaries, classes, False)
    positions = boostkit.validation.holdout_positions(strata.sum(axis=0), 0.2,
                                                      np.random.default_rng(7))
    held = dist._split_positions(positions, strata, classes)
    rows = np.concatenate([h.rows(p[1], np.ones(len(p[1]))) + a
                           for h, p, a in zip(held, parts, [0, 0, 10, 600])])
    labels = np.searchsorted(classes, y)
    signs = np.where(labels[:, None] == np.arange(3), 1.0, -1.0)
    _, expected = boostkit.validation.stratified_holdout(signs, 0.2, rng, labels)
    np.testing.assert_array_equal(np.sort(rows), expected)


def test_held_out_rows_of_several_classes_and_labels_with_a_lost_shard(contraceptive):
    X, y = contraceptive
    train = _shards(X, y, "uneven")

    def lose(state, record):
        if record.round == 3:
            train.lose(3)

    booster = boostkit.Booster("adaboost-mh", histogram="exact", n_rounds=60, random_state=2,
                               stopping=_holdout(0.2, 4, "accuracy"))
    ref = booster.fit(X, y)
    model, stats = dist.fit_on_shards(attrs.evolve(booster, callbacks=[lose]), train)
    assert_same_model(ref, model)
    assert_same_validation(ref, model)
    assert stats.replays == 1
    Y = _indicator(X, y)
    ref = booster.fit(X, Y)
    model, _ = dist.fit_on_shards(booster, _shards(X, Y, "4"))
    assert_same_model(ref, model)
    assert_same_validation(ref, model)


@pytest.mark.parametrize("weighted", [False, True])
def test_one_vs_rest_holds_out_rows_twice_as_one_machine_does(contraceptive, weighted):
    # Of all classes first, then of the rows left for every class's binary fit.
    X, y = contraceptive
    w = None
    if weighted:
        w = np.random.default_rng(2).exponential(size=len(y))
        w[::11] = 0.0
    booster = boostkit.Booster("real-adaboost", n_rounds=60, random_state=4,
                               multiclass="one-vs-rest", stopping=_holdout(0.2, 4))
    ref = booster.fit(X, y, w)
    assert {m.stop_reason for m in ref.models} == {"no-validation-improvement"}
    model, _ = dist.fit_on_shards(booster, _shards(X, y, "uneven", w))
    assert_same_one_vs_rest(ref, model)
    for r, m in zip(ref.models, model.models):
        assert_same_validation(r, m)


@pytest.mark.parametrize("weighted", [False, True])
def test_one_vs_rest_of_labels_holds_out_rows_twice_as_one_machine_does(contraceptive,
                                                                         weighted):
    # The first holdout's rows of each label counted on its shards, then each label's own.
    X, y = contraceptive
    Y = _indicator(X, y)
    w = np.random.default_rng(2).exponential(size=len(y)) if weighted else None
    booster = boostkit.Booster("real-adaboost", histogram="exact", n_rounds=40, random_state=4,
                               multiclass="one-vs-rest", stopping=_holdout(0.2, 4))
    ref = booster.fit(X, Y, w)
    model, _ = dist.fit_on_shards(booster, _shards(X, Y, "uneven", w))
    assert_same_one_vs_rest(ref, model)
    for r, m in zip(ref.models, model.models):
        assert_same_validation(r, m)


def test_eval_set_rows_of_another_kind_or_class_are_named(cancer, contraceptive):
    X, y = cancer
    booster = boostkit.Booster("adaboost", n_rounds=3)
    with pytest.raises(DataError, match="not among the training classes"):
        dist.fit_on_shards(booster, _shards(X, y, "2"),
                           dist.LocalShards([(X[:50], np.full(50, 7))]))
    indicator = np.column_stack([y == y[0], y != y[0]]).astype(int)
    with pytest.raises(DataError, match="eval_set y must be of the training y's kind"):
        dist.fit_on_shards(booster, _shards(X, y, "2"), dist.LocalShards([(X, indicator)]))
    with pytest.raises(DataError, match="weights sum to 0"):
        dist.fit_on_shards(booster, _shards(X, y, "2"),
                           dist.LocalShards([(X[:9], y[:9], np.zeros(9))]))


# -- one-vs-rest ----------------------------------------------------------------------------------
def assert_same_one_vs_rest(ref, model):
    assert isinstance(model, OneVsRestModel) and len(model.models) == len(ref.models)
    np.testing.assert_array_equal(model.classes, ref.classes)
    assert model.multilabel == ref.multilabel and model.offsets is None
    for r, m in zip(ref.models, model.models):
        assert_same_model(r, m)
        np.testing.assert_array_equal(m.classes, r.classes)
        assert m.best_round == r.best_round


@pytest.mark.parametrize("split", list(SPLITS))
def test_one_vs_rest_on_shards_is_the_local_one_vs_rest(contraceptive, split):
    X, y = contraceptive
    booster = boostkit.Booster("real-adaboost", n_rounds=15, multiclass="one-vs-rest")
    ref = booster.fit(X, y)
    model, stats = dist.fit_on_shards(booster, _shards(X, y, split))
    assert_same_one_vs_rest(ref, model)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))
    assert stats.rounds == sum(len(m.records) for m in model.models) == 3 * 15


def test_auto_runs_a_binary_only_recipe_one_vs_rest_and_native_refuses_it(contraceptive):
    X, y = contraceptive
    booster = boostkit.Booster("adaboost", n_rounds=10, multiclass="auto")
    model, _ = dist.fit_on_shards(booster, _shards(X, y, "2"))
    assert_same_one_vs_rest(booster.fit(X, y), model)
    native = attrs.evolve(booster, multiclass="native")
    with pytest.raises(RecipeError) as local:
        native.fit(X, y)
    with pytest.raises(RecipeError) as sharded:
        dist.fit_on_shards(native, _shards(X, y, "2"))
    assert str(sharded.value) == str(local.value)


def test_one_vs_rest_with_validation_shards_and_a_lost_shard(contraceptive):
    X, y = contraceptive
    Xt, yt, Xv, yv = X[:1100], y[:1100], X[1100:], y[1100:]
    train = _shards(Xt, yt, "4")

    def lose(state, record):
        if record.round == 3:
            train.lose(2)

    booster = boostkit.Booster("adaboost", n_rounds=40, multiclass="one-vs-rest",
                               stopping=_validation_stopping(patience=3))
    ref = booster.fit(Xt, yt, eval_set=(Xv, yv))
    assert {m.stop_reason for m in ref.models} == {"no-validation-improvement"}
    model, stats = dist.fit_on_shards(attrs.evolve(booster, callbacks=[lose]), train,
                                      _shards(Xv, yv, "2"))
    assert_same_one_vs_rest(ref, model)
    for r, m in zip(ref.models, model.models):
        assert_same_validation(r, m)
    assert stats.replays == 3  # once in every class's fit


def _ranking_exponential():
    """The exponential reweighting's class, declared a ranker's (a pairwise loss)."""
    exponential = boostkit.plugins.get_registry().component("exponential")
    return type("RankingExponential", (exponential,),
                {"name": "ranking-exponential-test",
                 "provides": exponential.provides | {PAIRWISE_LOSS}})


@pytest.fixture
def ranking_exponential():
    ranking = _ranking_exponential()

    class Plugin:
        @boostkit.hookimpl
        def boostkit_register_components(self, registry):
            registry.add_component(ranking)

    boostkit.register_plugin(Plugin(), name="ranking-exponential-test")
    yield ranking.name
    boostkit.unregister_plugin("ranking-exponential-test")


@pytest.mark.parametrize("split", ["1", "uneven"])
def test_one_vs_rest_over_a_ranker_has_the_single_machine_offsets(contraceptive,
                                                                  ranking_exponential, split):
    X, y = contraceptive
    booster = boostkit.Booster("adaboost", n_rounds=12, multiclass="one-vs-rest",
                               reweighting=ranking_exponential)
    ref = booster.fit(X, y)
    assert ref.offsets is not None
    model, _ = dist.fit_on_shards(booster, _shards(X, y, split))
    for r, m in zip(ref.models, model.models):
        assert_same_model(r, m)
    np.testing.assert_allclose(model.offsets, ref.offsets, rtol=0, atol=TOL)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))


def test_one_vs_rest_over_a_ranker_with_a_best_round_is_refused(contraceptive,
                                                                 ranking_exponential):
    X, y = contraceptive
    booster = boostkit.Booster("adaboost", n_rounds=3, multiclass="one-vs-rest",
                               reweighting=ranking_exponential, stopping=_validation_stopping())
    with pytest.raises(RecipeError, match="names a best round.*not of the best one"):
        dist.fit_on_shards(booster, _shards(X, y, "2"), _shards(X, y, "1"))


# -- multi-label y --------------------------------------------------------------------------------
def _indicator(X, y):
    """Three labels: two from the classes, one from a feature."""
    classes = np.unique(y)
    return np.column_stack([y == classes[0], y != classes[1],
                            X[:, 0] > np.median(X[:, 0])]).astype(np.int8)


@pytest.mark.parametrize("split", list(SPLITS))
def test_multi_label_y_natively_on_the_pairs(contraceptive, split):
    X, y = contraceptive
    Y = _indicator(X, y)
    booster = boostkit.Booster("adaboost-mh", histogram="exact", n_rounds=20)
    ref = booster.fit(X, Y)
    model, _ = dist.fit_on_shards(booster, _shards(X, Y, split))
    assert model.multilabel and model.n_columns == 3
    assert_same_model(ref, model)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))


def test_multi_label_y_one_vs_rest_with_validation_shards(contraceptive):
    X, y = contraceptive
    Y = _indicator(X, y)
    Xt, Yt, Xv, Yv = X[:1100], Y[:1100], X[1100:], Y[1100:]
    booster = boostkit.Booster("gentle-adaboost", histogram="exact", n_rounds=30, multiclass="one-vs-rest",
                               stopping=_validation_stopping("accuracy", patience=4))
    ref = booster.fit(Xt, Yt, eval_set=(Xv, Yv))
    model, _ = dist.fit_on_shards(booster, _shards(Xt, Yt, "uneven"), _shards(Xv, Yv, "2"))
    assert_same_one_vs_rest(ref, model)
    native = attrs.evolve(booster, algorithm="adaboost-mh", multiclass="native")
    ref = native.fit(Xt, Yt, eval_set=(Xv, Yv))
    model, _ = dist.fit_on_shards(native, _shards(Xt, Yt, "4"), _shards(Xv, Yv, "1"))
    assert_same_model(ref, model)
    assert_same_validation(ref, model)


def test_one_vs_rest_refuses_a_label_without_positive_examples_as_one_machine_does(contraceptive):
    X, y = contraceptive
    Y = _indicator(X, y)
    for column, value, kind in [(1, 0, "no"), (2, 1, "only")]:
        Z = Y.copy()
        Z[:, column] = value
        booster = boostkit.Booster("adaboost", n_rounds=3, multiclass="one-vs-rest")
        with pytest.raises(DataError) as local:
            booster.fit(X, Z)
        with pytest.raises(DataError) as sharded:
            dist.fit_on_shards(booster, _shards(X, Z, "2"))
        assert str(sharded.value) == str(local.value)
        assert f"column {column} has {kind} positive" in str(local.value)


def test_partitions_with_y_of_different_kinds_are_named(contraceptive):
    X, y = contraceptive
    Y = _indicator(X, y)
    with pytest.raises(DataError, match="partition 0: 1-D labels, partition 1: an indicator "
                                        "matrix of 3 labels"):
        dist.fit_on_shards(boostkit.Booster("adaboost-mh", n_rounds=2),
                           dist.LocalShards([(X[:100], y[:100]), (X[100:], Y[100:])]))


class _StaleShards(dist.LocalShards):
    """A transport whose later builds hand back its first build's shards (as a transport
    reusing one key per shard would)."""

    def build(self, plan):
        if self.shards:
            return [dist.initial_report(shard) for shard in self.shards]
        return super().build(plan)


def test_shards_of_an_earlier_class_are_refused_not_replayed(contraceptive):
    X, y = contraceptive
    booster = boostkit.Booster("adaboost", n_rounds=5, multiclass="one-vs-rest")
    with pytest.raises(boostkit.HookError, match="holds 5 terms, more than the fit's 1: it is "
                                                 "not this fit's shard"):
        dist.fit_on_shards(booster, _StaleShards(_parts(X, y, _even(len(y), 2))))

"""The PAV family (Wilbur et al. 2005) on shards: what distributes gives the single-machine
model (same terms, coefficients within 1e-12) on any split of the rows and after a lost shard;
what does not is refused, naming the component and why, before any shard is built."""

from __future__ import annotations

import numpy as np
import pytest

import boostkit
from boostkit import distributed as dist
from boostkit.datasets import load
from boostkit.errors import RecipeError

N_ROUNDS = 30  # three cycles over the nine columns: two of them back-fit every term


@pytest.fixture(scope="module")
def cancer():
    data = load("breast_cancer_wisconsin", dropna=True)
    return data.X, data.y


@pytest.fixture(scope="module")
def reference(cancer):
    X, y = cancer
    return {name: boostkit.Booster(name, n_rounds=N_ROUNDS).fit(X, y)
            for name in ("pav-adaboost-finite",)}


def _parts(X, y, bounds):
    return [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def _even(n, k):
    return np.linspace(0, n, k + 1).astype(int)


def assert_same_model(ref, model, X, tol=1e-12):
    """The same terms (hypotheses field by field, their arrays exactly), the contributions'
    values and the records' numbers within ``tol``, the same decision function."""
    assert len(model.hypotheses) == len(ref.hypotheses) and len(model.records) == len(ref.records)
    for a, b in zip(ref.hypotheses, model.hypotheses):
        assert a == b
        np.testing.assert_array_equal(a.thresholds, b.thresholds)
    for a, b in zip(ref.contributions, model.contributions):
        assert type(a) is type(b)
        np.testing.assert_allclose(b.cell_values, a.cell_values, rtol=0, atol=tol)
    for r, m in zip(ref.records, model.records):
        assert m.hypothesis == r.hypothesis
        assert m.extra.get("replaces") == r.extra.get("replaces")
        assert m.extra["pools"] == r.extra["pools"]
        np.testing.assert_allclose(m.coefficients, r.coefficients, rtol=0, atol=tol)
        assert m.weighted_error == pytest.approx(r.weighted_error, abs=tol)
        assert m.training_error == pytest.approx(r.training_error, abs=tol)
        assert m.error_bound == pytest.approx(r.error_bound, rel=tol)
    assert model.stop_reason == ref.stop_reason
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), rtol=0,
                               atol=tol)


@pytest.mark.parametrize("n_shards", [1, 2, 4])
def test_pav_finite_on_shards_is_the_single_machine_model(cancer, reference, n_shards):
    X, y = cancer
    model, stats = dist.fit_on_shards(boostkit.Booster("pav-adaboost-finite", n_rounds=N_ROUNDS),
                                      dist.LocalShards(_parts(X, y, _even(len(y), n_shards))))
    ref = reference["pav-adaboost-finite"]
    assert sum("replaces" in r.extra for r in ref.records) == N_ROUNDS - X.shape[1]
    assert_same_model(ref, model, X)
    assert stats.rounds == N_ROUNDS and stats.replays == 0


def test_pav_finite_on_uneven_shards(cancer, reference):
    X, y = cancer
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    n = len(y)
    bounds = [0, 0, 5, 300, 300, n]  # empty, tiny, one class only, empty, skewed
    model, _ = dist.fit_on_shards(boostkit.Booster("pav-adaboost-finite", n_rounds=N_ROUNDS),
                                  dist.LocalShards(_parts(X, y, bounds)))
    assert_same_model(reference["pav-adaboost-finite"], model, X)


def test_a_shard_lost_after_back_fitting_replays_the_replacements(cancer, reference):
    X, y = cancer
    shards = dist.LocalShards(_parts(X, y, _even(len(y), 3)))

    def lose(state, record):
        if record.round in (12, 21):  # after rounds that replaced a term
            shards.lose(record.round % 3)

    booster = boostkit.Booster("pav-adaboost-finite", n_rounds=N_ROUNDS, callbacks=[lose])
    model, stats = dist.fit_on_shards(booster, shards)
    assert stats.replays == 2 and stats.replayed_terms == 12 + 21
    assert_same_model(reference["pav-adaboost-finite"], model, X)


def test_the_shards_keep_raw_values_only_for_a_component_that_reads_them(cancer):
    X, y = cancer
    for recipe, params, kept in [("pav-adaboost-finite", {}, True),
                                 ("pav-adaboost-finite", {"proposal": {"orient": False}}, False),
                                 ("adaboost", {}, False)]:
        shards = dist.LocalShards(_parts(X, y, _even(len(y), 2)))
        dist.fit_on_shards(boostkit.Booster(recipe, n_rounds=2, params=params), shards)
        assert all((s.values is not None) == kept for s in shards.shards)
        if kept:
            np.testing.assert_array_equal(np.concatenate([s.values for s in shards.shards]), X)


def test_pav_finite_without_orientation_on_shards(cancer):
    X, y = cancer
    booster = boostkit.Booster("pav-adaboost-finite", n_rounds=12,
                               params={"proposal": {"orient": False}})
    model, _ = dist.fit_on_shards(booster, dist.LocalShards(_parts(X, y, _even(len(y), 2))))
    assert_same_model(booster.fit(X, y), model, X)


@pytest.mark.parametrize("recipe, params, culprit", [
    ("pav-adaboost", {}, "proposal 'cmass'"),
    ("pav-adaboost-finite", {"calibration": {"bins": None}}, "calibration 'pav'"),
])
def test_what_needs_every_row_is_refused_naming_it(cancer, recipe, params, culprit):
    X, y = cancer
    shards = dist.LocalShards(_parts(X, y, _even(len(y), 2)))
    with pytest.raises(RecipeError, match=f"cannot run distributed: {culprit}"):
        dist.fit_on_shards(boostkit.Booster(recipe, n_rounds=3, params=params), shards)
    assert shards.plan is None  # refused before any shard was built


def test_pav_without_ordered_cells_is_refused_on_a_candidate_without_rows():
    from boostkit_pav import PavCalibration, Projection

    candidate = boostkit.Candidate(Projection(np.ones(2)),
                                   bin_cells=boostkit.BinCells(0, np.zeros(4, dtype=np.uint8)))
    with pytest.raises(ValueError, match="quantile bins of every training score"):
        PavCalibration().boostkit_calibrate(state=None, candidate=candidate)

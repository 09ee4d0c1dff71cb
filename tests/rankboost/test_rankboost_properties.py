"""Invariants of RankBoost on random data (hypothesis).

After every round each class holds half of the weight (the factorised pair distribution); the
ranking loss sum D_1 [F(x1) <= F(x0)] never exceeds prod_s Z_s (Yoder 2011, "as before,
err_train <= prod Z_t"); Z_t <= sqrt(1 - r_t^2) (Freund et al. 2003, the bound alpha minimises);
nothing is NaN or infinite; fits are reproducible and survive save/load.
"""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from strategies import weighted_datasets

import boostkit
from boostkit.metrics import error_bound, ranking_loss
from boostkit.observers import WeightHistory
from boostkit_rankboost import count_pairs, fit_preferences, preference_pairs

BIPARTITE = ("rankboost", "rankboost-features", "rankboost-pairs")
# Zero or at least 1e-3: a subnormal weight vanishes when D_1 is normalised.
NONZERO_WEIGHTS = st.one_of(st.just(0.0), st.floats(1e-3, 10.0))


def check_rounds(model, margins, y, sample_weight, group=None):
    """Per round: the ranking loss of F_t under D_1 <= prod Z_s; Z_t is at most the convexity
    bound (1-r)/2 e^alpha + (1+r)/2 e^-alpha, which is sqrt(1 - r^2) at alpha's formula (a
    perfect ranker's alpha is floored, so there Z_t = e^-alpha > 0 = sqrt(1 - 1))."""
    assert len(margins) == model.n_rounds
    for t, (record, margin) in enumerate(zip(model.records, margins), start=1):
        r, alpha = record.extra["r"], record.extra["alpha"]
        assert -1.0 <= r <= 1.0
        assert record.z <= (1 - r) / 2 * math.exp(alpha) + (1 + r) / 2 * math.exp(-alpha) + 1e-12
        if r < 1 - 1e-9:
            assert record.z <= math.sqrt(1.0 - r * r) + 1e-12
        assert ranking_loss(y, margin, sample_weight, group) <= record.error_bound + 1e-12
        assert error_bound(model.records[:t]) == pytest.approx(record.error_bound, rel=1e-9)
        values = [record.z, record.error_bound, r, *record.coefficients]
        assert all(math.isfinite(v) for v in values)
    assert np.isfinite(model.decision_function(np.zeros((1, model.n_features)))).all()


@pytest.mark.parametrize("algorithm", BIPARTITE)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=weighted_datasets(max_n=50, max_d=4, weights=NONZERO_WEIGHTS))
def test_bipartite_invariants_hold_after_every_round(algorithm, data):
    X, y, sample_weight = data
    recorder = WeightHistory()
    model = boostkit.Booster(algorithm, n_rounds=10, observers=[recorder]).fit(X, y, sample_weight)
    check_rounds(model, list(model.staged_decision_function(X)), y, sample_weight)
    kept = y[sample_weight > 0]  # the fit removes examples of weight 0 before any round
    for weights in recorder.weights[1:]:
        assert (weights >= 0).all()
        assert weights[kept < 0].sum() == pytest.approx(0.5, abs=1e-12)
        assert weights[kept > 0].sum() == pytest.approx(0.5, abs=1e-12)


@st.composite
def graded_groups(draw):
    """(X, relevance 0..3, group ids) with at least one pair."""
    n = draw(st.integers(4, 40))
    X = draw(arrays(np.float64, (n, draw(st.integers(1, 3))), elements=st.integers(-4, 4).map(float)))
    relevance = draw(arrays(np.int64, n, elements=st.integers(0, 3)))
    group = draw(arrays(np.int64, n, elements=st.integers(0, 3)))
    assume(count_pairs(relevance, group) > 0)
    return X, relevance, group


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=graded_groups())
def test_general_rankboost_bounds_its_ranking_loss(data):
    X, relevance, group = data
    model = fit_preferences(X, relevance, group, n_rounds=10)
    # D_1 is uniform over the pairs of the groups: the ranking loss of boostkit.metrics.
    check_rounds(model, list(model.staged_decision_function(X)), relevance, None, group)


@settings(max_examples=50, deadline=None)
@given(data=graded_groups())
def test_preference_pairs_are_exactly_the_ordered_pairs_of_each_group(data):
    _, relevance, group = data
    lower, upper, weight = preference_pairs(relevance, group)
    expected = {(i, j) for i in range(relevance.size) for j in range(relevance.size)
                if group[i] == group[j] and relevance[i] < relevance[j]}
    assert set(zip(lower.tolist(), upper.tolist())) == expected
    assert lower.size == len(expected) == count_pairs(relevance, group)
    assert weight.sum() == pytest.approx(1.0)


def _noisy(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X[:, 0] - X[:, 1] + rng.normal(scale=1.5, size=n) > 0, 1.0, -1.0)


@pytest.mark.parametrize("algorithm", BIPARTITE)
def test_two_thousand_rounds_stay_finite(algorithm):
    X, y = _noisy(60, 3, seed=5)
    model = boostkit.Booster(algorithm, n_rounds=2000).fit(X, y)
    assert np.isfinite(model.decision_function(X)).all()
    assert all(math.isfinite(r.z) and r.error_bound >= 0 for r in model.records)
    F = model.decision_function(X)
    assert ranking_loss(y, F) <= model.error_bound + 1e-12


@pytest.mark.parametrize("algorithm", BIPARTITE)
def test_same_seed_bit_identical_and_save_load(algorithm, tmp_path):
    X, y = _noisy(80, 4, seed=6)
    X_new, _ = _noisy(100, 4, seed=7)
    first = boostkit.Booster(algorithm, n_rounds=25, random_state=3).fit(X, y)
    second = boostkit.Booster(algorithm, n_rounds=25, random_state=3).fit(X, y)
    assert [attrs.astuple(r) for r in first.records] == [attrs.astuple(r) for r in second.records]
    loaded = boostkit.load_model(first.save(tmp_path / "ranker.npz"))
    assert np.array_equal(loaded.decision_function(X_new), first.decision_function(X_new))
    assert loaded.recipe == first.recipe

"""Bipartite and general RankBoost against naive all-pairs RankBoost, and the bipartite form at
200 000 examples without a single pair.

The naive reference follows the slides (Yoder 2011, "Basic RankBoost algorithm",
"Bounds and alpha") literally: an explicit distribution D over the pairs (x0, x1), every
threshold ranker [x_f > theta] and its reverse scored by r = sum D (h(x1) - h(x0)), the largest r
chosen, alpha = 1/2 ln((1+r)/(1-r)), D <- D exp(alpha (h(x0) - h(x1))) / Z.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import boostkit
from boostkit.data import bin_features
from boostkit.metrics import roc_curve
from boostkit_rankboost import fit_preferences, rankboost_alpha

TIE = 1e-12


def naive_rankboost(X, lower, upper, d1, n_rounds, rankers="stumps"):
    """All-pairs RankBoost over explicit pairs (lower[p] below upper[p]) with D_1 = ``d1``.

    ``rankers``: ``"stumps"`` (h = [x_f > theta] or its reverse, theta over boostkit's bin
    thresholds of the examples in some pair) or ``"features"`` (x_f scaled to [0, 1] by its range
    over those examples, or its reverse). Returns one dict per round and the final F on X.
    """
    members = np.union1d(lower, upper)
    candidates = []
    if rankers == "stumps":
        thresholds = bin_features(X[members]).thresholds
        for f, cuts in enumerate(thresholds):
            candidates += [(f, theta, (X[:, f] > theta).astype(float)) for theta in cuts]
    else:
        low, high = X[members].min(axis=0), X[members].max(axis=0)
        for f in range(X.shape[1]):
            if high[f] > low[f]:
                candidates.append((f, None, np.clip((X[:, f] - low[f]) / (high[f] - low[f]), 0, 1)))
    D = d1.copy()
    F = np.zeros(X.shape[0])
    rounds = []
    for _ in range(n_rounds):
        rs = np.array([np.sum(D * (h[upper] - h[lower])) for _, _, h in candidates])
        best = np.abs(rs).max()
        k = int(np.argmax(np.abs(rs) >= best - TIE * best))  # lowest index among ties
        feature, theta, h = candidates[k]
        if rs[k] < 0:
            h = 1.0 - h
        r = abs(rs[k])
        alpha = 0.5 * np.log((1 + r + 1e-15) / (1 - r + 1e-15))
        D = D * np.exp(alpha * (h[lower] - h[upper]))
        z = D.sum()
        D /= z
        F += alpha * h
        rounds.append({"feature": feature, "threshold": theta, "r": r, "alpha": alpha, "z": z,
                       "reverse": rs[k] < 0})
    return rounds, F


def all_pairs(y, sample_weight=None):
    w = np.ones(y.shape[0]) if sample_weight is None else sample_weight
    neg, pos = np.flatnonzero(y < 0), np.flatnonzero(y > 0)
    lower, upper = np.repeat(neg, pos.size), np.tile(pos, neg.size)
    d1 = w[lower] * w[upper]
    return lower, upper, d1 / d1.sum()


def noisy_integers(seed, n=60, d=4, levels=9):
    """Integer features (few distinct values: every cut is a candidate), a noisy label."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, d)).astype(float)
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(scale=3.0, size=n) > 0, 1.0, -1.0)
    return X, y, rng


def assert_same_run(model, rounds, F_naive, X):
    assert model.n_rounds == len(rounds)
    for record, hypothesis, expected in zip(model.records, model.hypotheses, rounds):
        assert hypothesis.feature == expected["feature"]
        if expected["threshold"] is not None:
            assert hypothesis.threshold == expected["threshold"]
        assert record.extra["r"] == pytest.approx(expected["r"], abs=1e-12)
        assert record.extra["alpha"] == pytest.approx(expected["alpha"], rel=1e-10)
        assert record.z == pytest.approx(expected["z"], rel=1e-10)
    # The same ranking: F differs from the naive sum of alpha h~ by a constant only.
    difference = model.decision_function(X) - F_naive
    assert np.ptp(difference) < 1e-9


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("output", ["sign", "binary"])
def test_bipartite_rankboost_equals_naive_all_pairs_rankboost(seed, output):
    X, y, rng = noisy_integers(seed)
    weights = rng.uniform(0.2, 3.0, y.shape[0])
    model = boostkit.Booster("rankboost", n_rounds=8, params={"proposal": {"output": output}}).fit(
        X, y, weights)
    rounds, F = naive_rankboost(X, *all_pairs(y, weights), n_rounds=8)
    assert_same_run(model, rounds, F, X)


@pytest.mark.parametrize("seed", range(3))
def test_real_valued_rankers_equal_naive_all_pairs_rankboost(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(50, 5))
    y = np.where(X[:, 2] + 0.5 * X[:, 4] + rng.normal(size=50) > 0, 1.0, -1.0)
    for output in ("unit", "symmetric"):
        model = boostkit.Booster("rankboost-features", n_rounds=6,
                                 params={"proposal": {"output": output}}).fit(X, y)
        rounds, F = naive_rankboost(X, *all_pairs(y), n_rounds=6, rankers="features")
        assert_same_run(model, rounds, F, X)
        assert [h.reverse for h in model.hypotheses] == [r["reverse"] for r in rounds]


@pytest.mark.parametrize("seed", range(3))
def test_explicit_pairs_give_the_bipartite_fit(seed):
    X, y, rng = noisy_integers(seed, n=80)
    weights = rng.uniform(0.5, 2.0, y.shape[0])
    bipartite = boostkit.Booster("rankboost", n_rounds=15).fit(X, y, weights)
    pairs = boostkit.Booster("rankboost-pairs", n_rounds=15).fit(X, y, weights)
    assert [h.feature for h in pairs.hypotheses] == [h.feature for h in bipartite.hypotheses]
    np.testing.assert_allclose([r.extra["r"] for r in pairs.records],
                               [r.extra["r"] for r in bipartite.records], atol=1e-12)
    np.testing.assert_allclose(pairs.decision_function(X), bipartite.decision_function(X),
                               rtol=1e-10, atol=1e-12)
    # Through fit_preferences with one group and two relevance levels: the same pairs again.
    general = fit_preferences(X, y, n_rounds=15, sample_weight=weights)
    np.testing.assert_allclose(general.decision_function(X), bipartite.decision_function(X),
                               rtol=1e-10, atol=1e-12)


def graded_in_groups(seed, n=70):
    X, _, rng = noisy_integers(seed, n=n)
    relevance = np.clip(np.round((X[:, 0] - X[:, 1]) / 3 + rng.normal(scale=0.8, size=n)), -2, 2) + 2
    group = rng.integers(0, 5, n)
    return X, relevance, group


def naive_preference_set(relevance, group, normalize):
    pairs = [(i, j) for i in range(relevance.size) for j in range(relevance.size)
             if group[i] == group[j] and relevance[i] < relevance[j]]
    lower, upper = map(np.array, zip(*pairs))
    if normalize == "pairs":
        d1 = np.full(lower.size, 1.0 / lower.size)
    else:
        per_group = np.bincount(group[lower])
        d1 = 1.0 / per_group[group[lower]] / np.count_nonzero(per_group)
    return lower, upper, d1


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("normalize", ["pairs", "groups"])
def test_general_rankboost_equals_naive_rankboost_over_the_preference_set(seed, normalize):
    X, relevance, group = graded_in_groups(seed)
    model = fit_preferences(X, relevance, group, n_rounds=8, normalize=normalize)
    lower, upper, d1 = naive_preference_set(relevance, group, normalize)
    rounds, F = naive_rankboost(X, lower, upper, d1, n_rounds=8)
    assert_same_run(model, rounds, F, X)


def test_one_bipartite_round_on_200_000_examples_materialises_no_pair():
    """The naive form would need n- x n+ = 10^10 pairs (240 GB at 24 bytes a pair)."""
    rng = np.random.default_rng(0)
    n = 200_000
    X = rng.integers(0, 40, size=(n, 4)).astype(float)  # 40 values: every cut is a candidate
    y = np.where(X[:, 1] + rng.normal(scale=15.0, size=n) > 20, 1.0, -1.0)
    n_pos = int((y > 0).sum())
    assert n_pos * (n - n_pos) > 0.99e10
    boostkit.Booster("rankboost", n_rounds=1).fit(X[:1000], y[:1000])  # kernels compiled
    tracemalloc.start()
    try:
        model = boostkit.Booster("rankboost", n_rounds=1).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # X itself is 6.4 MB; the bins, margins and weights are O(n). Pairs would be 10^10 entries.
    assert peak < 40 * n * 8
    # Round 1 (uniform D over pairs): r of a stump is |TPR - FPR| at its threshold, and the
    # stump chosen by |r| is the largest such gap over every feature's ROC curve (Yoder 2011: "take
    # the best point on the ROC curve"), found here by boostkit.metrics instead.
    best_gap = max(np.max(np.abs(tpr - fpr)) for fpr, tpr, _ in
                   (roc_curve(y, X[:, f]) for f in range(X.shape[1])))
    record = model.records[0]
    assert record.extra["r"] == pytest.approx(best_gap, abs=1e-10)  # sums of 200 000 weights
    assert record.extra["alpha"] == pytest.approx(rankboost_alpha(best_gap))
    assert model.hypotheses[0].feature == 1

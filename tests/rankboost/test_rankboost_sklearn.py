"""BoostRanker (scikit-learn style) and NDCG, on real data where the slides' claims are about
real data, synthetic groups for graded relevance."""

from __future__ import annotations

import numpy as np
import pytest

import boostkit
from boostkit.metrics import ranking_loss, roc_auc
from boostkit_rankboost import fit_preferences, ndcg_score

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.metrics import ndcg_score as sklearn_ndcg  # noqa: E402
from sklearn.model_selection import cross_val_score  # noqa: E402

from boostkit_rankboost import BoostRanker  # noqa: E402


def graded(seed, n=120, n_groups=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    relevance = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n) + 1.5), 0, 3)
    return X, relevance, rng.integers(0, n_groups, n)


@pytest.mark.parametrize("seed", range(4))
def test_ndcg_matches_scikit_learn_with_ties(seed):
    rng = np.random.default_rng(seed)
    relevance = rng.integers(0, 4, size=(3, 12)).astype(float)
    scores = rng.integers(0, 5, size=(3, 12)).astype(float)  # many ties
    group = np.repeat(np.arange(3), 12)
    for k in (None, 5):
        ours = ndcg_score(relevance.ravel(), scores.ravel(), group, k=k)
        assert ours == pytest.approx(sklearn_ndcg(relevance, scores, k=k), abs=1e-12)
    # A perfect ranking scores 1, the reverse of a strictly graded list less.
    assert ndcg_score([0, 1, 2, 3], [0, 1, 2, 3]) == pytest.approx(1.0)
    assert ndcg_score([0, 1, 2, 3], [3, 2, 1, 0]) < 0.7


def test_ndcg_errors():
    with pytest.raises(boostkit.DataError, match="non-negative relevance"):
        ndcg_score([-1, 1], [0.2, 0.3])
    with pytest.raises(boostkit.DataError, match="equal length"):
        ndcg_score([0, 1], [0.2])


def test_bipartite_ranker_on_real_data():
    data = boostkit.datasets.load("breast_cancer_wisconsin", dropna=True)
    y = data.binary_target()
    ranker = BoostRanker(n_rounds=60).fit(data.X, y)
    assert not ranker.pairwise_ and ranker.n_features_in_ == data.X.shape[1]
    scores = ranker.decision_function(data.X)
    assert ranker.score(data.X, y) == pytest.approx(roc_auc(y, scores))
    assert np.array_equal(ranker.predict(data.X), scores)
    assert np.array_equal(scores, boostkit.Booster("rankboost", n_rounds=60).fit(
        data.X, y).decision_function(data.X))
    # Cross-validated AUC (scikit-learn's machinery: clone, fit, score).
    assert cross_val_score(BoostRanker(n_rounds=60), data.X, y, cv=3).mean() > 0.97


def test_groups_and_graded_relevance_use_the_preference_set():
    X, relevance, group = graded(0)
    ranker = BoostRanker(n_rounds=30).fit(X, relevance, group=group)
    assert ranker.pairwise_
    expected = fit_preferences(X, relevance, group, n_rounds=30)
    np.testing.assert_array_equal(ranker.decision_function(X), expected.decision_function(X))
    assert ranker.score(X, relevance, group=group) == pytest.approx(
        ndcg_score(relevance, ranker.decision_function(X), group))
    # On new groups it orders most pairs (a random order misorders half) and beats a random
    # order's NDCG.
    X_new, relevance_new, group_new = graded(1)
    assert ranking_loss(relevance_new, ranker.decision_function(X_new), group=group_new) < 0.2
    random_scores = np.random.default_rng(2).normal(size=relevance_new.size)
    assert ranker.score(X_new, relevance_new, group=group_new) > ndcg_score(
        relevance_new, random_scores, group_new) + 0.05
    # Graded relevance without groups: one group; real-valued rankers too.
    features = BoostRanker("rankboost-features", n_rounds=30).fit(X, relevance)
    assert features.pairwise_ and features.model_.recipe.reweighting.name == "preference-pairs"
    assert features.score(X, relevance) > 0.8


def test_parameters_clone_and_component_params():
    ranker = BoostRanker(n_rounds=5, component_params={"calibration": {"smoothing": 0.1}})
    assert clone(ranker).get_params() == ranker.get_params()
    X, relevance, group = graded(3, n=60)
    fitted = ranker.fit(X, relevance > 1)
    assert fitted.model_.recipe.calibration.params == {"smoothing": 0.1}


def test_ranker_errors():
    X, relevance, group = graded(4, n=40)
    with pytest.raises(ValueError, match="scoring must be one of"):
        BoostRanker(scoring="map").fit(X, relevance > 1)
    ranker = BoostRanker(n_rounds=3, scoring="auc").fit(X, relevance > 1)
    with pytest.raises(ValueError, match="use scoring='ndcg' with group="):
        ranker.score(X, relevance > 1, group=group)
    with pytest.raises(boostkit.DataError, match="more than max_pairs"):
        BoostRanker(max_pairs=10).fit(X, relevance, group=group)
    with pytest.raises(sklearn.exceptions.NotFittedError):
        BoostRanker().decision_function(X)

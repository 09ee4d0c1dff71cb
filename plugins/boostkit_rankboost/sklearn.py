"""A scikit-learn style ranker (needs the ``sklearn`` extra): :class:`BoostRanker`.

``BoostRanker().fit(X, y)`` with two labels runs bipartite RankBoost (O(n) per round); with
``group=`` (a query id per example) or graded relevance it runs general RankBoost over the
preference set of each group (:func:`boostkit_rankboost.fit_preferences`). ``score`` is the AUC
for two labels without groups and the mean NDCG over groups otherwise.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

import boostkit
from boostkit.data import MAX_BINS
from boostkit.metrics import roc_auc

from .ndcg import ndcg_score
from .preferences import DEFAULT_MAX_PAIRS, fit_preferences

__all__ = ["BoostRanker"]

_SCORINGS = ("auto", "auc", "ndcg")


class BoostRanker(BaseEstimator):
    """Rank examples with RankBoost (Yoder 2011; Freund et al. 2003).

    Parameters
    ----------
    algorithm:
        A registered RankBoost recipe (``"rankboost"``, ``"rankboost-features"``,
        ``"rankboost-pairs"``) or a :class:`boostkit.Recipe`. With groups or graded relevance
        its reweighting is replaced by ``preference-pairs``.
    n_rounds:
        Round budget T.
    component_params:
        ``{slot: {param: value}}`` overrides of the recipe's component parameters.
    normalize:
        D_1 over the preference set: ``"pairs"`` (uniform over pairs) or ``"groups"`` (each query
        group weighs the same). Used with groups or graded relevance.
    max_pairs:
        Memory budget of the preference set (an error beyond it points to the bipartite form).
    scoring:
        What :meth:`score` reports: ``"auto"`` (AUC for two labels without groups, else NDCG),
        ``"auc"`` or ``"ndcg"``.
    max_bins, n_jobs, random_state:
        As for :class:`boostkit.Booster`.

    Attributes
    ----------
    model_:
        The fitted :class:`boostkit.BoostModel`; ``decision_function`` is its F_T.
    records_, stop_reason_, n_features_in_:
        The round records, why boosting stopped, the number of features.
    pairwise_:
        Whether the fit used an explicit preference set (groups or graded relevance).
    """

    def __init__(self, algorithm="rankboost", n_rounds=100, *, component_params=None,
                 normalize="pairs", max_pairs=DEFAULT_MAX_PAIRS, scoring="auto",
                 max_bins=MAX_BINS, n_jobs=1, random_state=None):
        self.algorithm = algorithm
        self.n_rounds = n_rounds
        self.component_params = component_params
        self.normalize = normalize
        self.max_pairs = max_pairs
        self.scoring = scoring
        self.max_bins = max_bins
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, y, group=None, sample_weight=None):
        """Fit on ``X`` with relevance ``y`` (larger = ranked higher) and optional query ids.

        Two distinct values of ``y`` and no ``group``: bipartite RankBoost, ``sample_weight``
        giving D_1(x0, x1) ~ w(x0) w(x1). Otherwise every pair of one group with different
        relevance is a preference, weighted by ``normalize`` and ``sample_weight``.
        """
        X, y = validate_data(self, X, y, y_numeric=True)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
        if self.scoring not in _SCORINGS:
            raise ValueError(f"scoring must be one of {_SCORINGS}, got {self.scoring!r}")
        params = self.component_params or {}
        pairwise = group is not None or np.unique(y).shape[0] != 2
        if pairwise:
            model = fit_preferences(
                X, y, group, algorithm=self.algorithm, n_rounds=self.n_rounds,
                sample_weight=sample_weight, normalize=self.normalize, max_pairs=self.max_pairs,
                params=params, max_bins=self.max_bins, n_jobs=self.n_jobs,
                random_state=self.random_state,
            )
        else:
            model = boostkit.Booster(
                self.algorithm, n_rounds=self.n_rounds, params=params, max_bins=self.max_bins,
                n_jobs=self.n_jobs, random_state=self.random_state,
            ).fit(X, y, sample_weight)
        self.model_ = model
        self.records_ = model.records
        self.stop_reason_ = model.stop_reason
        self.pairwise_ = pairwise
        return self

    def decision_function(self, X):
        """The ranking score F_T(x): higher = ranked higher."""
        check_is_fitted(self)
        return self.model_.decision_function(validate_data(self, X, reset=False))

    def predict(self, X):
        """The ranking scores, as :meth:`decision_function` (LightGBM's ``LGBMRanker.predict``)."""
        return self.decision_function(X)

    def score(self, X, y, group=None, sample_weight=None):
        """AUC (two labels, no groups) or mean NDCG over groups, by ``scoring``."""
        scores = self.decision_function(X)
        y = np.asarray(y)
        scoring = self.scoring
        if scoring == "auto":
            scoring = "auc" if group is None and np.unique(y).shape[0] == 2 else "ndcg"
        if scoring == "auc":
            if group is not None:
                raise ValueError("scoring='auc' ranks one group; use scoring='ndcg' with group=")
            return roc_auc(np.where(y == np.unique(y)[-1], 1, 0), scores, sample_weight)
        if sample_weight is not None:
            raise ValueError("NDCG is not weighted: pass no sample_weight with scoring='ndcg'")
        return ndcg_score(y, scores, group)

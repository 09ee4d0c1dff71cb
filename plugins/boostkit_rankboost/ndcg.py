"""Normalised discounted cumulative gain, per query group, with tied scores averaged.

The score :class:`boostkit_rankboost.sklearn.BoostRanker` reports for graded relevance.
DCG = sum_k rel_(k) / log2(k + 1) over the examples ranked by decreasing score; a group of tied
scores gets the mean gain of its members at each of its positions (every order of the tie
equally likely), as scikit-learn's ``ndcg_score`` does. NDCG = DCG / DCG of the ideal order.
"""

from __future__ import annotations

import numpy as np

import boostkit

__all__ = ["ndcg_score"]


def _dcg(relevance: np.ndarray, scores: np.ndarray, k: int | None) -> float:
    order = np.argsort(-scores, kind="stable")
    relevance, scores = relevance[order], scores[order]
    discount = 1.0 / np.log2(np.arange(relevance.shape[0]) + 2.0)
    if k is not None:
        discount[k:] = 0.0
    tie_start = np.flatnonzero(np.r_[True, scores[1:] != scores[:-1]])
    mean_gain = np.add.reduceat(relevance, tie_start) / np.diff(np.r_[tie_start, scores.shape[0]])
    return float(np.sum(mean_gain * np.add.reduceat(discount, tie_start)))


def ndcg_score(relevance, scores, group=None, k: int | None = None) -> float:
    """Mean NDCG(@k) over the query groups.

    ``relevance`` holds non-negative graded relevance (the gains), ``scores`` the ranker's
    scores, ``group`` a query id per example (``None``: one group). A group whose relevance is
    all 0 has no ideal DCG and scores 0, as in scikit-learn.
    """
    relevance = np.asarray(relevance, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    if relevance.ndim != 1 or relevance.shape != scores.shape:
        raise boostkit.DataError(
            f"relevance and scores must be 1-D of equal length, got {relevance.shape} and "
            f"{scores.shape}"
        )
    if not (np.isfinite(relevance).all() and np.isfinite(scores).all()):
        raise boostkit.DataError("relevance and scores must be finite")
    if (relevance < 0).any():
        raise boostkit.DataError("NDCG needs non-negative relevance (the gains)")
    if k is not None and (not isinstance(k, (int, np.integer)) or k < 1):
        raise ValueError(f"k must be None or a positive integer, got {k!r}")
    codes = (np.zeros(relevance.shape[0], dtype=np.intp) if group is None
             else np.unique(np.asarray(group), return_inverse=True)[1].ravel())
    if codes.shape != relevance.shape:
        raise boostkit.DataError(f"group must give a query id for each of the {relevance.shape[0]} examples")
    by_group = np.argsort(codes, kind="stable")
    values = []
    for members in np.split(by_group, np.flatnonzero(np.diff(codes[by_group])) + 1):
        ideal = _dcg(relevance[members], relevance[members], k)
        values.append(_dcg(relevance[members], scores[members], k) / ideal if ideal > 0 else 0.0)
    return float(np.mean(values))

"""boostkit_rankboost: RankBoost, bipartite (O(n) per round) and over explicit preference sets.

Paper: Yoder 2011 (*AdaBoost and RankBoost*, seminar slides), after Freund,
Iyer, Schapire & Singer (2003).

Components: the proposals ``rank-stump`` (threshold rankers chosen by |r| from the class
histogram; hypothesis ``threshold-ranker``) and ``feature-ranker`` (real-valued rankers in [0, 1]
or [-1, 1]; hypothesis ``scaled-feature``); the calibration ``rankboost-alpha``
(alpha = 1/2 ln((1+r)/(1-r)), partition loss -|r|); the reweightings ``bipartite`` (factorised
pair distribution v(x0) v(x1)) and ``preference-pairs`` (explicit pairs); the stopping rule
``no-rank-edge``.

Algorithms: ``rankboost`` (bipartite, stumps), ``rankboost-features`` (bipartite, scaled
features), ``rankboost-pairs`` (the same stumps over an explicit preference set).

Beyond recipes: :func:`fit_preferences` (graded relevance within groups) and, with the
``sklearn`` extra, :class:`boostkit_rankboost.sklearn.BoostRanker`.
"""

from __future__ import annotations

import boostkit

from .calibration import RankBoostAlpha, rank_advantage, rankboost_alpha
from .learners import FeatureRanker, RankStumpLearner, ScaledFeature, ThresholdRanker
from .ndcg import ndcg_score
from .preferences import (
    PairBudgetError,
    PreferenceSet,
    count_pairs,
    fit_preferences,
    preference_pairs,
    using_preferences,
)
from .reweighting import BipartiteReweighting, PreferencePairs
from .stopping import NoRankEdge

__all__ = [
    "BipartiteReweighting",
    "BoostRanker",
    "FeatureRanker",
    "NoRankEdge",
    "PairBudgetError",
    "PreferencePairs",
    "PreferenceSet",
    "RankBoostAlpha",
    "RankStumpLearner",
    "ScaledFeature",
    "ThresholdRanker",
    "count_pairs",
    "fit_preferences",
    "ndcg_score",
    "preference_pairs",
    "rank_advantage",
    "rankboost_alpha",
    "using_preferences",
]

PAPER = "Freund et al. (2003) RankBoost; Yoder 2011, slides"


def __getattr__(name):
    # BoostRanker needs scikit-learn (an optional extra): import it only when asked for.
    if name == "BoostRanker":
        from .sklearn import BoostRanker

        return BoostRanker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@boostkit.hookimpl
def boostkit_register_components(registry):
    registry.add_capability(boostkit.Capability(
        "score-range", "weak rankers that declare the range of their scores "
        "(Candidate.info['score_range'])", "proposal"))
    registry.add_capability(boostkit.Capability(
        "rank-advantage", "the weak ranker's advantage r_t in the round record "
        "(record.extra['r'])", "calibration"))
    for component in (RankStumpLearner, ThresholdRanker, FeatureRanker, ScaledFeature,
                      RankBoostAlpha, BipartiteReweighting, PreferencePairs, NoRankEdge):
        registry.add_component(component)


@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    registry.add_algorithm(boostkit.Recipe(
        name="rankboost",
        proposal="rank-stump",
        calibration="rankboost-alpha",
        reweighting="bipartite",
        stopping=("no-rank-edge",),
        paper=PAPER,
        description="Bipartite RankBoost: +-1 stumps by |r|, alpha = 1/2 ln((1+r)/(1-r)), "
                    "factorised pair weights, O(n) per round.",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="rankboost-features",
        proposal="feature-ranker",
        calibration="rankboost-alpha",
        reweighting="bipartite",
        stopping=("no-rank-edge",),
        paper=PAPER,
        description="Bipartite RankBoost over real-valued weak rankers: features scaled to [0, 1].",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="rankboost-pairs",
        proposal="rank-stump",
        calibration="rankboost-alpha",
        reweighting="preference-pairs",
        stopping=("no-rank-edge",),
        paper=PAPER,
        description="General RankBoost over an explicit preference set (fit_preferences); on "
                    "plain data, all (negative, positive) pairs.",
    ))

"""boostkit_pav: PAV-AdaBoost (Wilbur et al., *The Synergy Between PAV and AdaBoost*, 2005).

Paper: Wilbur et al. 2005. The O(N) Pool Adjacent Violators algorithm (section 2.1) with
the interpolation of 2.2 turns any real-valued weak hypothesis into the optimal monotone
confidence-rated one, k_t = 1/2 ln(p_t / (1 - p_t)) (section 3.2, Theorem 2).

Components
    proposals: ``score-columns`` (each column one given score), ``cmass`` (7.1), ``nscore``
    (7.2), ``binary-naive-bayes``; hypotheses: ``score-column``, ``projection``,
    ``neighbor-similarity``, ``naive-bayes-score``; calibrations: ``pav`` (eq. 13-18, binned as
    in section 5 by default, back-fitting as in 3.3 on request), ``sigmoid`` (eq. 52-53, or linear
    AdaBoost's alpha without intercept); contributions: ``isotonic-steps``, ``score-bins``,
    ``affine-score``; stopping: ``sum-converged``.
Algorithms
    ``pav-adaboost``, ``pav-adaboost-finite``, ``linear-adaboost-finite``,
    ``optimal-linear-adaboost``.

Reproductions of the paper's tables: ``python -m boostkit_pav.reproduce all``.
"""

from __future__ import annotations

import boostkit

from .calibrations import PavCalibration, SigmoidCalibration
from .contributions import AffineScore, IsotonicSteps, ScoreBins
from .learners import (
    BinaryNaiveBayes,
    Cmass,
    NaiveBayesScore,
    NeighborSimilarity,
    Nscore,
    Projection,
    ScoreColumn,
    ScoreColumns,
)
from .stopping import SumConverged

__all__ = [
    "AffineScore",
    "BinaryNaiveBayes",
    "Cmass",
    "IsotonicSteps",
    "NaiveBayesScore",
    "NeighborSimilarity",
    "Nscore",
    "PavCalibration",
    "Projection",
    "ScoreBins",
    "ScoreColumn",
    "ScoreColumns",
    "SigmoidCalibration",
    "SumConverged",
]

PAPER = "Wilbur et al. 2005"


@boostkit.hookimpl
def boostkit_register_components(registry):
    registry.add_capability(boostkit.Capability(
        "scoring-functions",
        "candidates that name the fixed scoring function they come from "
        "(Candidate.info['scoring_function']), so that its earlier term can be re-fitted",
        "proposal",
    ))
    for component in (ScoreColumns, ScoreColumn, Cmass, Projection, Nscore, NeighborSimilarity,
                      BinaryNaiveBayes, NaiveBayesScore, PavCalibration, SigmoidCalibration,
                      IsotonicSteps, ScoreBins, AffineScore, SumConverged):
        registry.add_component(component)


@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    # reweighting "exponential" and stopping "no-edge" come from boostkit_adaboost, by name.
    registry.add_algorithm(boostkit.Recipe(
        name="pav-adaboost",
        proposal=("cmass", {"standardize": True}),
        calibration="pav",
        reweighting="exponential",
        stopping=("no-edge",),
        paper=f"{PAPER}, sections 3.2, 5, 7.1",
        description="PAV-AdaBoost: a new Cmass direction per round, k_t = 1/2 ln(p/(1-p)) from "
                    "binned PAV of its scores.",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="pav-adaboost-finite",
        proposal="score-columns",
        calibration=("pav", {"backfit": True}),
        reweighting="exponential",
        stopping=("sum-converged",),
        paper=f"{PAPER}, section 3.3",
        description="PAV-AdaBoost.finite: each column is a score; back-fit one PAV term per "
                    "column in turn until the sum (20) stops decreasing.",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="linear-adaboost-finite",
        proposal="score-columns",
        calibration=("sigmoid", {"intercept": False, "backfit": True}),
        reweighting="exponential",
        stopping=("sum-converged",),
        paper=f"{PAPER}, section 4",
        description="Linear AdaBoost on a fixed set of scores: back-fit alpha_j per column "
                    "until the sum (20) stops decreasing.",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="optimal-linear-adaboost",
        proposal="binary-naive-bayes",
        calibration="sigmoid",
        reweighting="exponential",
        stopping=("no-edge",),
        paper=f"{PAPER}, eq. 52-53",
        description="Optimal linear AdaBoost: naive Bayes scores, k(s) = 1/2 (w s - b) with w "
                    "and b minimising Z.",
    ))

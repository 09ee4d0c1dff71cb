"""boostkit_additive: the additive-logistic-regression view of boosting.

Friedman, Hastie & Tibshirani (2000), "Additive logistic regression: a statistical view of
boosting", Annals of Statistics 28(2) (FHT). Components:

* ``gentle-step`` (calibration): Gentle AdaBoost's weighted least-squares step on a partition,
  c_j = (W+_j - W-_j) / (W+_j + W-_j) (Algorithm 4), per class with several (Gentle AdaBoost.MH);
* ``logit-weights`` (reweighting): LogitBoost's weights D_1 p (1 - p) and the logistic potential;
* ``logit-stump`` (proposal): the regression stump fitted to LogitBoost's working response;
* ``logit-step`` (calibration): the half Newton step per cell (Algorithm 3);
* ``learning-rate`` (calibration wrapper) and its value ``shrunk``: shrinkage by nu in (0, 1];
* ``multinomial-stumps`` (proposal, values ``class-stumps``), ``multinomial-step`` (calibration,
  value ``softmax-step``), ``multinomial-weights`` (reweighting): multinomial LogitBoost with
  softmax probabilities (Algorithm 6, :mod:`boostkit_additive.multinomial`).

Algorithms: ``gentle-adaboost``, ``logitboost`` and ``multinomial-logitboost``. The comparison
on ESL's simulated data runs with ``python -m boostkit_additive.reproduce hastie``.
"""

from __future__ import annotations

import boostkit

from .gentle import GentleStep
from .logit import LOGIT_RESPONSE, LogitStep, LogitStump, LogitWeights
from .multinomial import (MULTINOMIAL_RESPONSE, ClassStumps, MultinomialStep, MultinomialStumps,
                          MultinomialWeights, SoftmaxStep)
from .shrinkage import LearningRate, ShrunkContribution

__all__ = ["ClassStumps", "GentleStep", "LearningRate", "LogitStep", "LogitStump", "LogitWeights",
           "MultinomialStep", "MultinomialStumps", "MultinomialWeights", "ShrunkContribution",
           "SoftmaxStep"]

PAPER = "Friedman, Hastie & Tibshirani (2000), Additive logistic regression"


@boostkit.hookimpl
def boostkit_register_components(registry):
    registry.add_capability(LOGIT_RESPONSE)
    registry.add_capability(MULTINOMIAL_RESPONSE)
    for component in (GentleStep, LogitStump, LogitStep, LogitWeights, LearningRate,
                      ShrunkContribution, MultinomialStumps, ClassStumps, MultinomialStep,
                      SoftmaxStep, MultinomialWeights):
        registry.add_component(component)


@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    registry.add_algorithm(boostkit.Recipe(
        name="gentle-adaboost",
        proposal="stump",
        calibration="gentle-step",
        reweighting="exponential",
        stopping=("no-edge",),
        paper=f"{PAPER}, Algorithm 4",
        description="Gentle AdaBoost: stumps fitted by weighted least squares of y, "
                    "c_j = (W+_j - W-_j)/(W+_j + W-_j), AdaBoost's weights; Gentle AdaBoost.MH "
                    "on several classes.",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="logitboost",
        proposal="logit-stump",
        calibration="logit-step",
        reweighting="logit-weights",
        paper=f"{PAPER}, Algorithm 3",
        description="LogitBoost: Newton steps on the binomial log-likelihood, regression stumps "
                    "fitted to the working response z (|z| <= 4), weights p(1-p).",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="multinomial-logitboost",
        proposal="multinomial-stumps",
        calibration="multinomial-step",
        reweighting="multinomial-weights",
        paper=f"{PAPER}, Algorithm 6",
        description="Multinomial LogitBoost: each round one regression stump per class fitted to "
                    "z_ij = (y*_ij - p_ij)/(p_ij(1-p_ij)) (|z| <= 4) with weights p_ij(1-p_ij), "
                    "centred steps (J-1)/J (f_j - mean_k f_k), softmax probabilities; "
                    "logitboost on two classes.",
    ))

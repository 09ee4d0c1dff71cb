"""boostkit_weightboost: WeightBoost, its baselines, and depth-limited trees (Jin et al. 2003).

Jin, Liu, Si, Carbonell & Hauptmann, *A New Boosting Algorithm Using Input-Dependent
Regularizer*, ICML 2003. Components:

* ``input-dependent`` (calibration wrapper) and its value ``input-dependent-term``: the term
  alpha_T e^{-|beta H_{T-1}(x)|} h_T(x) of eq. 4 around any coefficient rule (general form
  eq. 9-12, C_T normalisation of section 3.3 as an option);
* ``weightboost-weights`` (reweighting): W_i ~ e^{-y_i H(x_i) - |beta H(x_i)|}, eq. 7 / eq. 11;
* ``weight-decay-weights`` (reweighting): Weight Decay's e^{-y F - C F^2} (section 2);
* ``epsilon-step`` (calibration): epsilon-Boost's small constant coefficient (section 4.1);
* ``tree`` (proposal) and its value ``decision-tree``: depth-limited decision trees on the
  binned features, standing in for the paper's C4.5.

Algorithms: ``weightboost``, ``epsilon-boost``, ``weight-decay``, all boosting trees of depth 2
grown with C4.5's entropy criterion (:data:`TREE`). The label-noise study of section 4.2 runs with
``python -m boostkit_weightboost.study``.
"""

from __future__ import annotations

import boostkit

from .coefficients import EpsilonStep
from .regularizer import InputDependentRegularizer, InputDependentTerm
from .reweighting import WeightBoostWeights, WeightDecayWeights
from .trees import DecisionTree, TreeLearner

__all__ = [
    "DecisionTree",
    "EpsilonStep",
    "InputDependentRegularizer",
    "InputDependentTerm",
    "TREE",
    "TreeLearner",
    "WeightBoostWeights",
    "WeightDecayWeights",
]

#: The weak learner of the three recipes. The paper boosts C4.5 (section 4.1), which grows
#: trees with an entropy criterion (gain ratio) and at least 2 examples per leaf, then prunes.
#: Boosting unpruned trees fits noisy training labels within a few rounds, so depth-limited
#: trees with C4.5's criterion and leaf size stand in for it. Depth 2 was chosen before any
#: WeightBoost run, by AdaBoost's 5-fold error without label noise on ionosphere, pima,
#: german_credit and breast_cancer_wisconsin (mean 15.2 % at depth 2; 16.1 % at 1, 16.2 % at 3,
#: 15.5 % at 5; the weighted error or Gini as criterion did no better).
TREE = ("tree", {"max_depth": 2, "min_samples_leaf": 2, "criterion": "entropy"})
PAPER = "Jin et al. 2003"


@boostkit.hookimpl
def boostkit_register_components(registry):
    for component in (InputDependentRegularizer, InputDependentTerm, WeightBoostWeights,
                      WeightDecayWeights, EpsilonStep, TreeLearner, DecisionTree):
        registry.add_component(component)


@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    registry.add_algorithm(boostkit.Recipe(
        name="weightboost",
        proposal=TREE,
        calibration="constant-alpha",
        calibration_wrappers=(("input-dependent", {"beta": 0.5}),),
        reweighting=("weightboost-weights", {"beta": 0.5}),
        stopping=("no-edge",),
        paper=f"{PAPER}, eq. 4, 7, 8",
        description="WeightBoost: H_T = H_{T-1} + alpha_T e^{-|beta H_{T-1}(x)|} h_T(x), "
                    "weights e^{-yH - |beta H|}, beta = 0.5; depth-2 entropy trees.",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="epsilon-boost",
        proposal=TREE,
        calibration=("epsilon-step", {"step": 0.1}),
        reweighting="exponential",
        paper=f"Friedman et al. (1998), the baseline of {PAPER}, section 4.1",
        description="epsilon-Boost: AdaBoost's weights, every tree weighted by the same small "
                    "step 0.1; depth-2 entropy trees.",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="weight-decay",
        proposal=TREE,
        calibration="constant-alpha",
        reweighting=("weight-decay-weights", {"decay": 0.003}),
        paper=f"Raetsch et al. (1998), as {PAPER}, section 2 states it",
        description="Weight Decay: weights e^{-yF - C F^2} (C = 0.003), AdaBoost's alpha and "
                    "combination; depth-2 entropy trees.",
    ))

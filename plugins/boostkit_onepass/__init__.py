"""boostkit_onepass: one-pass boosting (Barutcuoglu et al. 2007).

Algorithms:

* ``opab``: one-pass AdaBoost: every base classifier of a fixed random order, once, weighted by
  AdaBoost's alpha (exact for +-1 classifiers, by Newton's method on the potential for term
  counts; sections 1, 3 and 4).
* ``picky-adaboost``: PickyAdaBoost(gamma_bar): the same pass, skipping classifiers whose
  advantage has magnitude below gamma_bar (section 3); the ``picky`` proposal wrapper composes
  with any proposal.
* ``popbm``: Picky-One-Pass Boost-by-Majority (section 2, parameters alpha, T = n_rounds,
  epsilon).
* ``naive-bayes``: the multinomial (or Bernoulli) naive Bayes baseline, as a one-term booster.

Components: proposals ``ordered-pool``, ``popbm-pool``, ``naive-bayes``; proposal wrapper
``picky``; calibrations ``onepass-alpha``, ``unit-coefficient``; reweightings
``boost-by-majority``, ``initial-weights``; hypotheses ``feature-sign``, ``feature-count``,
``constant-vote``, ``linear-votes``. The reweighting of ``opab`` and ``picky-adaboost`` is
``exponential``, from boostkit_adaboost, by name.

Beyond the engine: :func:`one_pass` (the same pass fused into one O(nnz) kernel),
:func:`collapse` (a fitted one-pass model as one linear term), :class:`TermCounts` (a small
term-count vectoriser for text), and ``python -m boostkit_onepass.reproduce`` (the construction
of section 3.2, Table 2, and the Reuters comparison).
"""

from __future__ import annotations

import boostkit

from .coefficients import OnePassAlpha, UnitCoefficient
from .fast import OnePass, collapse, one_pass
from .hypotheses import ConstantVote, FeatureCount, FeatureSign, LinearVotes
from .majority import BoostByMajority, bbm_weight_table
from .naive_bayes import InitialWeights, NaiveBayes, fit_naive_bayes
from .picky import Picky, advantage
from .pool import OrderedPool, PopbmAborted, PopbmAbortWarning, PopbmPool
from .text import TermCounts

__all__ = [
    "BoostByMajority",
    "ConstantVote",
    "FeatureCount",
    "FeatureSign",
    "InitialWeights",
    "LinearVotes",
    "NaiveBayes",
    "OnePass",
    "OnePassAlpha",
    "OrderedPool",
    "Picky",
    "PopbmAborted",
    "PopbmAbortWarning",
    "PopbmPool",
    "TermCounts",
    "UnitCoefficient",
    "advantage",
    "bbm_weight_table",
    "collapse",
    "fit_naive_bayes",
    "one_pass",
]

PAPER = "Barutcuoglu et al. 2007"


@boostkit.hookimpl
def boostkit_register_components(registry):
    for component in (OrderedPool, PopbmPool, NaiveBayes, Picky, OnePassAlpha, UnitCoefficient,
                      BoostByMajority, InitialWeights, FeatureSign, FeatureCount, ConstantVote,
                      LinearVotes):
        registry.add_component(component)


@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    registry.add_algorithm(boostkit.Recipe(
        name="opab",
        proposal="ordered-pool",
        calibration="onepass-alpha",
        reweighting="exponential",
        paper=f"{PAPER}, sections 1, 3, 4",
        description="One-pass AdaBoost: each feature's base classifier once, in a random order.",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="picky-adaboost",
        proposal="ordered-pool",
        calibration="onepass-alpha",
        reweighting="exponential",
        proposal_wrappers=(("picky", {"gamma_bar": 0.1}),),
        paper=f"{PAPER}, section 3",
        description="PickyAdaBoost: one pass, skipping classifiers with |advantage| < gamma_bar.",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="popbm",
        proposal=("popbm-pool", {"alpha": 0.05, "epsilon": 0.01}),
        calibration="unit-coefficient",
        reweighting=("boost-by-majority", {"alpha": 0.05}),
        paper=f"{PAPER}, section 2",
        description="Picky-One-Pass Boost-by-Majority: a majority of T = n_rounds votes.",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="naive-bayes",
        proposal="naive-bayes",
        calibration="unit-coefficient",
        reweighting="initial-weights",
        paper=f"{PAPER}, section 4 (McCallum & Nigam 1998)",
        description="Naive Bayes (multinomial for counts, Bernoulli for +-1), as one term.",
    ))

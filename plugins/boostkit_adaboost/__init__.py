"""boostkit_adaboost: discrete AdaBoost and confidence-rated (real) AdaBoost with stumps.

Components: ``stump`` (proposal) and its hypothesis ``decision-stump``; the calibrations
``constant-alpha``, ``newton-alpha`` and ``domain-partition``; the ``exponential`` reweighting;
the ``no-edge`` stopping rule. Algorithms: ``adaboost`` and ``real-adaboost``.

Papers: 000_ea597104f195fc85.txt section 3.1 (AdaBoost after Schapire & Singer, eq. 6-12),
004_0d8ee714c410b779.txt Fig. 2 (AdaBoost), 003_e8f9baceaf668295.txt (slides: stumps from the
best ROC point of one feature; err <= prod Z_t).
"""

from __future__ import annotations

import boostkit

from .coefficients import ConstantAlpha, DomainPartition, NewtonAlpha
from .reweighting import ExponentialReweighting
from .stopping import NoEdge
from .stumps import Stump, StumpLearner

__all__ = [
    "ConstantAlpha",
    "DomainPartition",
    "ExponentialReweighting",
    "NewtonAlpha",
    "NoEdge",
    "Stump",
    "StumpLearner",
]


@boostkit.hookimpl
def boostkit_register_components(registry):
    for component in (StumpLearner, Stump, ConstantAlpha, NewtonAlpha, DomainPartition,
                      ExponentialReweighting, NoEdge):
        registry.add_component(component)


@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    registry.add_algorithm(boostkit.Recipe(
        name="adaboost",
        proposal="stump",
        calibration="constant-alpha",
        reweighting="exponential",
        stopping=("no-edge",),
        paper="Freund & Schapire (1997); 000 section 3.1, 004 Fig. 2",
        description="Discrete AdaBoost: lowest-error stumps, alpha = 1/2 ln((1-eps)/eps).",
    ))
    registry.add_algorithm(boostkit.Recipe(
        name="real-adaboost",
        proposal="stump",
        calibration="domain-partition",
        reweighting="exponential",
        stopping=("no-edge",),
        paper="Schapire & Singer (1999); 000 eq. 10-12",
        description="Confidence-rated AdaBoost: stumps minimising Z, c_j = 1/2 ln(W+_j/W-_j).",
    ))

"""boostkit_pnspace: Ada2Boost and boosting in PN spaces (Scholz 2006).

Components: the calibration ``asymmetric-beta`` (eq. 2-3: beta(+1) = p/n, beta(-1) =
n_bar/p_bar, optional Laplace / m-estimate smoothing), the reweighting ``stratification``
(Prop. 1, Fig. 3, with the PN-space records: total weight W, P'N', AOC*, the AUC bound of
Corollary 1), and the hypotheses ``cover-indicator`` and ``constant-one`` of the AdaBoost form
(Prop. 3). Algorithm: ``ada2boost`` (Fig. 3) with the ``stump`` learner and the ``no-edge``
stopping rule of boostkit_adaboost, by name.

Functions: :func:`stratify` (Prop. 1-2 as preprocessing), :func:`to_adaboost_form` (Prop. 3),
:func:`pn_spaces` and :func:`plot_pn_spaces` (the nested PN spaces of Fig. 1 / Fig. 5),
:func:`auc_lower_bound` (Corollary 1). The learning-curve study of section 4 (Fig. 6) runs with
``python -m boostkit_pnspace.study``.

Probabilities: the model's ``predict_proba`` is 1/(1 + e^{-2F}); Ada2Boost's margin is
F = 1/2 ln beta_hat, so it equals Fig. 3's beta_hat/(1 + beta_hat).
"""

from __future__ import annotations

import boostkit

from .adaboost_form import ConstantHypothesis, CoverIndicator, to_adaboost_form
from .calibration import AsymmetricBeta, cell_odds, total_weight_after
from .pnspace import PNSpace, auc_lower_bound, pn_space_quantities, pn_spaces
from .reweighting import Stratification, stratify

__all__ = [
    "AsymmetricBeta",
    "ConstantHypothesis",
    "CoverIndicator",
    "PNSpace",
    "Stratification",
    "auc_lower_bound",
    "cell_odds",
    "plot_pn_spaces",
    "pn_space_quantities",
    "pn_spaces",
    "stratify",
    "to_adaboost_form",
    "total_weight_after",
]


def __getattr__(name):
    # matplotlib is an optional extra: the plotting module is imported on first use only.
    if name == "plot_pn_spaces":
        from .plot import plot_pn_spaces

        return plot_pn_spaces
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@boostkit.hookimpl
def boostkit_register_components(registry):
    for component in (AsymmetricBeta, Stratification, CoverIndicator, ConstantHypothesis):
        registry.add_component(component)


@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    registry.add_algorithm(boostkit.Recipe(
        name="ada2boost",
        proposal="stump",
        calibration="asymmetric-beta",
        reweighting="stratification",
        stopping=("no-edge",),
        paper="Scholz 2006, eq. 2-3, Fig. 3",
        description="Ada2Boost: stumps minimising the total weight, beta(+1) = p/n and "
                    "beta(-1) = n_bar/p_bar, each side stratified; PN-space records.",
    ))

"""boostkit_estimators: any scikit-learn estimator as a weak learner.

Components: the proposal ``sklearn-estimator`` and its hypothesis ``fitted-estimator``. No
algorithm of its own: put the proposal in any recipe whose calibration it can serve, for example
``Booster("samme", proposal=("sklearn-estimator", {"estimator": DecisionTreeClassifier(max_depth=3)}))``,
scikit-learn's ``AdaBoostClassifier`` with that estimator.

scikit-learn is the optional ``sklearn`` extra: this module imports without it, and it is
imported only when a fit (or the check of a given estimator) needs it.
"""

from __future__ import annotations

import boostkit

from .adapter import EstimatorProposal, FittedEstimator

__all__ = ["EstimatorProposal", "FittedEstimator"]


@boostkit.hookimpl
def boostkit_register_components(registry):
    registry.add_component(EstimatorProposal)
    registry.add_component(FittedEstimator)

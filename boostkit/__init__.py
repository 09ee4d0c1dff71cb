"""boostkit: a plugin-based boosting framework.

Every algorithm is a recipe of components contributed by plugins (entry-point group
``boostkit``); the engine runs the loop and owns no paper. Start with::

    import boostkit
    model = boostkit.Booster("adaboost", n_rounds=100).fit(X, y)
    model.predict(X_test)

or, with scikit-learn installed, ``boostkit.sklearn.BoostClassifier``. Plugin authors: see
:mod:`boostkit.hookspecs` and ``docs/plugins.md``.
"""

from __future__ import annotations

from . import compiled, datasets, losses
from .capabilities import Capability
from .components import (
    BinCells,
    Calibrated,
    Calibration,
    CalibrationWrapper,
    Candidate,
    Component,
    Contribution,
    Observer,
    Proposal,
    ProposalWrapper,
    Reweighting,
    RoundRecord,
    RowWeights,
    ShardWeights,
    Stopping,
    WeakHypothesis,
    Weights,
    feature_field,
    float_vector,
)
from .contributions import CellContribution, LinearContribution
from .engine import Booster, BoostState
from .errors import (
    BoostkitError,
    DataError,
    DataWarning,
    HookError,
    ModelFormatError,
    NotFittedError,
    PluginLoadError,
    PluginWarning,
    RecipeError,
    RegistryError,
)
from .features import FeatureSchema, feature_label
from .hookspecs import hookimpl
from .losses import MarginLoss
from .model import BoostModel
from .plugins import get_registry, register_plugin, unregister_plugin
from .registry import ComponentSpec, Recipe, Registry

load_model = BoostModel.load

__all__ = [
    "Booster",
    "BoostModel",
    "BoostState",
    "BoostkitError",
    "BinCells",
    "Calibrated",
    "Calibration",
    "CalibrationWrapper",
    "Candidate",
    "Capability",
    "CellContribution",
    "Component",
    "ComponentSpec",
    "Contribution",
    "DataError",
    "DataWarning",
    "FeatureSchema",
    "HookError",
    "LinearContribution",
    "MarginLoss",
    "ModelFormatError",
    "NotFittedError",
    "Observer",
    "PluginLoadError",
    "PluginWarning",
    "Proposal",
    "ProposalWrapper",
    "Recipe",
    "RecipeError",
    "Registry",
    "RegistryError",
    "Reweighting",
    "RoundRecord",
    "RowWeights",
    "ShardWeights",
    "Stopping",
    "WeakHypothesis",
    "Weights",
    "compiled",
    "datasets",
    "feature_field",
    "feature_label",
    "float_vector",
    "get_registry",
    "hookimpl",
    "load_model",
    "losses",
    "register_plugin",
    "unregister_plugin",
]

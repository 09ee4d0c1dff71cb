"""Exceptions raised by boostkit.

Every error says which argument (or plugin, or file) is at fault, what was expected and what was
got, so that a user can fix the call without reading boostkit's source.
"""

from __future__ import annotations

__all__ = [
    "BoostkitError",
    "DataError",
    "PluginLoadError",
    "RegistryError",
    "RecipeError",
    "HookError",
    "ModelFormatError",
    "NotFittedError",
    "PluginWarning",
    "DataWarning",
]


class BoostkitError(Exception):
    """Base class of every error boostkit raises on purpose."""


class DataError(BoostkitError, ValueError):
    """Training or prediction data that boostkit cannot use (NaN, one class, wrong shapes...)."""


class PluginLoadError(BoostkitError, ImportError):
    """An entry point of the ``boostkit`` group failed to import or to validate."""


class RegistryError(BoostkitError, ValueError):
    """A component or algorithm registration was refused (duplicate or invalid name, wrong type)."""


class RecipeError(BoostkitError, ValueError):
    """A recipe names an unknown component, misses a role, or gives a component bad parameters."""


class HookError(BoostkitError, RuntimeError):
    """A component raised, or returned something invalid, inside a round hook."""


class ModelFormatError(BoostkitError, ValueError):
    """A saved model file is corrupt, from a newer format version, or names unknown components."""


class NotFittedError(BoostkitError, AttributeError):
    """A model or estimator was used for prediction before it was fitted."""


class PluginWarning(UserWarning):
    """A plugin was left out because it failed to load or its registrations were refused.

    Every other plugin keeps working. ``BOOSTKIT_STRICT_PLUGINS=1`` (or the
    ``boostkit.testing.strict_plugins`` fixture) turns it back into the error it reports.
    """


class DataWarning(UserWarning):
    """The data are usable but something in them is probably not what was meant (a column with
    no value at all)."""

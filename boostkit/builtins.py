"""The engine's own components, registered like any plugin's (as pytest does with its own).

Only paper-neutral building blocks live here: the capability vocabulary every plugin shares
(:mod:`boostkit.capabilities`), the two generic contribution forms of
:mod:`boostkit.contributions` and validation-based early stopping (``validation``,
:mod:`boostkit.validation`), which any recipe can add to its stopping rules. Every algorithm comes
from a plugin.
"""

from __future__ import annotations

from .capabilities import ENGINE_CAPABILITIES
from .contributions import CellContribution, LinearContribution
from .hookspecs import hookimpl
from .validation import ValidationStopping


@hookimpl
def boostkit_register_components(registry):
    for capability in ENGINE_CAPABILITIES:
        registry.add_capability(capability)
    registry.add_component(LinearContribution)
    registry.add_component(CellContribution)
    registry.add_component(ValidationStopping)

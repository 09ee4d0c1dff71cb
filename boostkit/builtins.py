"""The engine's own components, registered like any plugin's (as pytest does with its own).

Only paper-neutral building blocks live here: the two generic contribution forms of
:mod:`boostkit.contributions`. Every algorithm comes from a plugin.
"""

from __future__ import annotations

from .contributions import CellContribution, LinearContribution
from .hookspecs import hookimpl


@hookimpl
def boostkit_register_components(registry):
    registry.add_component(LinearContribution)
    registry.add_component(CellContribution)

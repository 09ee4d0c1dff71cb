"""The plugin manager of one fit's round hooks, with pluggy's hook discovery made cheap.

Every fit registers its recipe's components (and observers) in a plugin manager of its own
(:func:`boostkit.engine.run_rounds`; a shard builds one for its reweighting). pluggy finds a
plugin's hook implementations by looking up every name of ``dir(plugin)`` with
:func:`inspect.getattr_static`, ~15 us a name and ~2 ms a component: two thirds of a 10-round
``adaboost`` fit on 200 rows (measured with ``cProfile``), which cross-validation, studies and
:func:`boostkit.testing.check_component` pay in every fit.

:class:`RoundPluginManager` finds a name that the instance does not hold itself by walking the
class's ``__mro__`` dictionaries, and reads the hook marker from the function found, as pluggy
does; a name held by the instance (its ``__dict__`` or a slot), found nowhere on the class, or
bound to a method object, is left to pluggy. So what is registered is exactly what
:class:`pluggy.PluginManager` registers, a class changed after a first registration included.
"""

from __future__ import annotations

import types

import pluggy

from . import hookspecs

__all__ = ["RoundPluginManager"]

_ABSENT = object()
#: The class attributes whose marker is read here (what else pluggy binds, a bound method or a
#: slot's value, it looks up itself).
_FUNCTIONS = (types.FunctionType, staticmethod, classmethod)


def _marker(holder, attribute: str) -> dict | None:
    # Where pluggy reads a hook marker: on the function, or under a staticmethod/classmethod
    # marked below it.
    options = getattr(holder, attribute, None)
    if options is None:
        options = getattr(getattr(holder, "__func__", None), attribute, None)
    return options if isinstance(options, dict) else None


class RoundPluginManager(pluggy.PluginManager):
    """A :class:`pluggy.PluginManager` of the :class:`boostkit.hookspecs.RoundSpecs` whose
    registration looks hook implementations up on the plugin's class directly."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT)
        self.add_hookspecs(hookspecs.RoundSpecs)

    def parse_hookspec_opts(self, module_or_class, name):
        static = vars(module_or_class).get(name, _ABSENT)
        if isinstance(static, _FUNCTIONS):
            return _marker(static, f"{self.project_name}_spec")
        return super().parse_hookspec_opts(module_or_class, name)

    def parse_hookimpl_opts(self, plugin, name):
        if isinstance(plugin, (type, types.ModuleType)):
            return super().parse_hookimpl_opts(plugin, name)
        try:
            held = name in object.__getattribute__(plugin, "__dict__")
        except AttributeError:  # a slotted instance
            held = False
        static = _ABSENT
        if not held:
            for klass in type(plugin).__mro__:
                static = vars(klass).get(name, _ABSENT)
                if static is not _ABSENT:
                    break
        if isinstance(static, _FUNCTIONS):
            return _marker(static, f"{self.project_name}_impl")
        if static is _ABSENT or isinstance(static, (types.MemberDescriptorType,
                                                    types.MethodType)):
            # Held by the instance (its __dict__ or a slot), not on the class (a metaclass's, a
            # __dir__'s) or a bound method: pluggy decides, as for any plugin.
            return super().parse_hookimpl_opts(plugin, name)
        return None  # a property, a plain value: never a hook implementation

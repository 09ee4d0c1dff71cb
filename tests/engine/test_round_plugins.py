"""RoundPluginManager registers exactly what pluggy's PluginManager registers, for plugins of
every shape pluggy binds, and sees a class changed after its first registration."""

from __future__ import annotations

import types

import attrs
import pluggy

import boostkit
from boostkit import hookspecs
from boostkit.round_plugins import RoundPluginManager


def _registered(pm, plugin) -> dict[str, tuple]:
    """hook name -> (function, wrapper flags) of ``plugin``'s implementations in ``pm``."""
    name = pm.register(plugin)
    found = {}
    for hook_name in dir(pm.hook):
        caller = getattr(pm.hook, hook_name)
        if not isinstance(caller, pluggy.HookCaller):
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin_name == name:
                found[hook_name] = (getattr(impl.function, "__func__", impl.function),
                                    impl.hookwrapper, impl.wrapper, impl.tryfirst)
    return found


def _pluggy_manager():
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs.RoundSpecs)
    return pm


def _same_as_pluggy(plugin) -> dict:
    ours, theirs = _registered(RoundPluginManager(), plugin), _registered(_pluggy_manager(), plugin)
    assert ours == theirs
    return ours


def _reweight(self, state):
    return None


class Plain:
    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        return None

    @boostkit.hookimpl(tryfirst=True)
    def boostkit_round_end(self, state, record):
        return None

    @property
    def boostkit_calibrate(self):  # a property is not a hook implementation
        return None

    not_a_hook = 3


class Child(Plain):
    @boostkit.hookimpl(wrapper=True)
    def boostkit_should_stop(self, state, record):
        return (yield)


@attrs.frozen
class Slotted:
    hook: object = None

    @boostkit.hookimpl
    def boostkit_round_end(self, state, record):
        return None


def test_the_same_hooks_as_pluggy_for_classes_subclasses_and_slotted_instances():
    assert set(_same_as_pluggy(Plain())) == {"boostkit_should_stop", "boostkit_round_end"}
    found = _same_as_pluggy(Child())
    assert found["boostkit_should_stop"][2] is True  # the subclass's wrapper, not the base's
    assert set(_same_as_pluggy(Slotted())) == {"boostkit_round_end"}


def test_a_hook_held_by_the_instance_is_looked_up_per_instance():
    marked = boostkit.hookimpl(_reweight)
    holder = Plain()
    holder.boostkit_reweight = types.MethodType(marked, holder)
    assert "boostkit_reweight" in _same_as_pluggy(holder)
    assert "boostkit_reweight" not in _same_as_pluggy(Plain())


def test_a_method_replaced_on_the_class_after_a_registration_is_seen():
    class Changing:
        @boostkit.hookimpl
        def boostkit_round_end(self, state, record):
            return None

    assert set(_same_as_pluggy(Changing())) == {"boostkit_round_end"}

    def unmarked(self, state, record):
        return None

    Changing.boostkit_round_end = unmarked
    assert _same_as_pluggy(Changing()) == {}
    Changing.boostkit_round_end = boostkit.hookimpl(tryfirst=True)(unmarked)
    assert _same_as_pluggy(Changing())["boostkit_round_end"][3] is True


def test_every_registered_component_registers_as_with_pluggy():
    for component in boostkit.get_registry().components().values():
        try:
            instance = component()
        except TypeError:  # a component with required parameters
            continue
        _same_as_pluggy(instance)

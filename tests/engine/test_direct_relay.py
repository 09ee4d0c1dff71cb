"""boostkit.relay: a fit's plain hooks called directly give what pluggy's calls give."""

from __future__ import annotations

import pluggy
import pytest

from boostkit.relay import DirectCaller, DirectRelay

spec = pluggy.HookspecMarker("relaytest")
impl = pluggy.HookimplMarker("relaytest")


class Specs:
    @spec(firstresult=True)
    def first(self, state, value):
        """The first answer that is not None."""

    @spec
    def every(self, state):
        """Every answer that is not None."""

    @spec
    def wrapped(self, state):
        """A hook with a wrapper."""


class Answers:
    def __init__(self, name, answer):
        self.name, self.answer = name, answer

    @impl
    def first(self, value):
        return None if self.answer is None else (self.name, value)

    @impl
    def every(self, state):
        return None if self.answer is None else (self.name, state)

    @impl
    def wrapped(self, state):
        return self.name


class Wrapper:
    @impl(wrapper=True)
    def wrapped(self, state):
        result = yield
        return [*result, "wrapped"]


class Raising:
    @impl
    def every(self, state):
        return {}["missing key"]


def manager(*plugins):
    pm = pluggy.PluginManager("relaytest")
    pm.add_hookspecs(Specs)
    for i, plugin in enumerate(plugins):
        pm.register(plugin, name=f"p{i}")
    return pm


def test_direct_calls_give_pluggys_answers_in_pluggys_order():
    pm = manager(Answers("a", 1), Answers("b", None), Answers("c", 1), Wrapper())
    relay = DirectRelay(pm)
    assert isinstance(relay.first, DirectCaller) and isinstance(relay.every, DirectCaller)
    # The last registered answers first; None is skipped by both hooks.
    assert relay.first(state=0, value=7) == pm.hook.first(state=0, value=7) == ("c", 7)
    assert relay.every(state=3) == pm.hook.every(state=3) == [("c", 3), ("a", 3)]
    # Introspection goes to pluggy's caller.
    assert relay.first.get_hookimpls() == pm.hook.first.get_hookimpls()
    assert relay.first.name == "first"


def test_a_hook_with_a_wrapper_keeps_pluggys_caller():
    pm = manager(Answers("a", 1), Wrapper())
    relay = DirectRelay(pm)
    assert relay.wrapped is pm.hook.wrapped
    assert relay.wrapped(state=0) == ["a", "wrapped"]


def test_no_direct_calls_when_asked():
    pm = manager(Answers("a", 1))
    assert DirectRelay(pm, direct=False).first is pm.hook.first


def test_no_answer_is_none_or_an_empty_list():
    pm = manager(Answers("a", None))
    relay = DirectRelay(pm)
    assert relay.first(state=0, value=1) is None
    assert relay.every(state=0) == []


def test_a_missing_argument_is_pluggys_error_and_a_hooks_key_error_is_its_own():
    relay = DirectRelay(manager(Answers("a", 1), Raising()))
    with pytest.raises(pluggy.HookCallError, match="must provide argument 'value'"):
        relay.first(state=0)
    with pytest.raises(KeyError, match="missing key"):
        relay.every(state=0)

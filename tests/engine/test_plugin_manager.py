"""Plugin discovery (boostkit.plugins): entry points, environment variables, in-process plugins,
and the errors that name a misbehaving plugin (DESIGN.md, "Two levels of hooks")."""

from __future__ import annotations

import sys
import types
from importlib import metadata

import attrs
import pytest

import boostkit
from boostkit import plugins
from boostkit.errors import PluginLoadError, PluginWarning, RecipeError
from boostkit.testing import strict_plugins  # noqa: F401  (a fixture)

BUILTIN_COMPONENTS = {"linear", "cell-values", "validation"}
ADABOOST_COMPONENTS = {
    "stump", "decision-stump", "constant-alpha", "newton-alpha", "domain-partition",
    "exponential", "no-edge",
}


@pytest.fixture
def entry_point_plugin(tmp_path, monkeypatch, fresh_plugins):
    """Make ``importlib.metadata.entry_points`` (as boostkit.plugins calls it) list a fake plugin.

    Returns ``install(name, source, distribution)``: writes ``source`` as a module on a temporary
    ``sys.path`` entry and exposes it as entry point ``name`` of the ``boostkit`` group, with a
    fake distribution. Only the fake entry point is listed.
    """
    monkeypatch.syspath_prepend(str(tmp_path))
    modules: list[str] = []

    def install(name, source, distribution="boostkit-fake-plugin"):
        module = f"boostkit_test_ep_{name}"
        (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
        modules.append(module)
        dist = types.SimpleNamespace(name=distribution, version="9.9.9")
        entry_point = metadata.EntryPoint(name=name, value=module, group="boostkit")._for(dist)

        def entry_points(**selection):
            return [entry_point] if selection.get("group") == "boostkit" else []

        monkeypatch.setattr(plugins.metadata, "entry_points", entry_points)

    yield install
    for module in modules:
        sys.modules.pop(module, None)


# -- discovery ----------------------------------------------------------------------------------


def test_adaboost_is_found_through_the_entry_point_group():
    by_name = {ep.name: ep for ep in metadata.entry_points(group=plugins.ENTRY_POINT_GROUP)}
    assert by_name["adaboost"].dist.name == "boostkit"
    registry = boostkit.get_registry()
    assert registry.source_of("adaboost") == "plugin 'adaboost' (distribution boostkit)"
    assert ADABOOST_COMPONENTS <= set(registry.components())


def test_registry_is_built_once_and_reused():
    assert boostkit.get_registry() is boostkit.get_registry()
    assert plugins.get_plugin_manager() is plugins.get_plugin_manager()


def test_plugin_info_lists_name_distribution_version_hooks_components_algorithms():
    info = {entry["name"]: entry for entry in plugins.plugin_info()}
    adaboost = info["adaboost"]
    assert adaboost["distribution"] == "boostkit"
    assert adaboost["version"] == metadata.version("boostkit")
    assert adaboost["entry_point"] == "boostkit_adaboost"
    assert adaboost["hooks"] == ["boostkit_register_algorithms", "boostkit_register_components"]
    assert ADABOOST_COMPONENTS <= set(adaboost["components"])
    assert adaboost["components"]["stump"] == "proposal"
    assert {"adaboost", "real-adaboost"} <= set(adaboost["algorithms"])
    assert "Schapire & Singer" in adaboost["algorithms"]["real-adaboost"]
    builtin = info["boostkit"]
    assert builtin["entry_point"] == "built-in"
    assert set(builtin["components"]) == BUILTIN_COMPONENTS
    assert builtin["algorithms"] == {}


# -- plugins that fail to load, in strict mode (tests/engine/test_plugin_isolation.py: without) --


@pytest.mark.usefixtures("strict_plugins")
def test_plugin_failing_to_import_is_named_with_its_distribution_and_cause(entry_point_plugin):
    entry_point_plugin(
        "broken", "raise RuntimeError('libfoo.so: cannot open shared object file')\n",
        distribution="boostkit-broken",
    )
    with pytest.raises(PluginLoadError) as excinfo:
        boostkit.get_registry()
    message = str(excinfo.value)
    assert "plugin 'broken'" in message
    assert "boostkit_test_ep_broken" in message  # the entry point's value
    assert "distribution boostkit-broken" in message
    assert "RuntimeError: libfoo.so: cannot open shared object file" in message
    assert isinstance(excinfo.value.__cause__, RuntimeError)


@pytest.mark.usefixtures("strict_plugins")
def test_entry_point_with_invalid_hook_implementation_is_named(entry_point_plugin):
    entry_point_plugin(
        "typo",
        "import boostkit\n"
        "@boostkit.hookimpl\n"
        "def boostkit_register_components(registy):\n"
        "    pass\n",
        distribution="boostkit-typo",
    )
    with pytest.raises(PluginLoadError) as excinfo:
        boostkit.get_registry()
    message = str(excinfo.value)
    assert "plugin 'typo'" in message and "distribution boostkit-typo" in message
    assert "invalid hook implementation" in message
    assert "registy" in message


@pytest.mark.usefixtures("strict_plugins")
def test_in_process_plugin_with_invalid_hook_implementation_is_named(in_process_plugin):
    @boostkit.hookimpl
    def boostkit_register_components(registy):
        pass

    in_process_plugin("test-typo", boostkit_register_components=boostkit_register_components)
    with pytest.raises(PluginLoadError, match="(?s)test-typo.*registy"):
        boostkit.get_registry()


@pytest.mark.usefixtures("strict_plugins")
def test_misspelled_hook_name_is_reported(in_process_plugin):
    @boostkit.hookimpl
    def boostkit_register_component(registry):
        pass

    in_process_plugin("test-misspelled", boostkit_register_component=boostkit_register_component)
    message = "unknown hook 'boostkit_register_component'.*test-misspelled"
    with pytest.raises(PluginLoadError, match=message):
        boostkit.get_registry()


@pytest.mark.usefixtures("strict_plugins")
def test_plugin_raising_while_registering_is_named(in_process_plugin):
    @boostkit.hookimpl
    def boostkit_register_components(registry):
        raise KeyError("missing configuration")

    in_process_plugin("test-raising", boostkit_register_components=boostkit_register_components)
    with pytest.raises(PluginLoadError) as excinfo:
        boostkit.get_registry()
    message = str(excinfo.value)
    assert "plugin 'test-raising'" in message
    assert "boostkit_register_components" in message
    assert "KeyError" in message and "missing configuration" in message


# -- environment variables ----------------------------------------------------------------------


def test_disabled_autoload_loads_no_entry_point(monkeypatch, fresh_plugins):
    monkeypatch.setenv("BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD", "1")
    registry = boostkit.get_registry()
    assert set(registry.components()) == BUILTIN_COMPONENTS
    assert registry.algorithms() == {}
    assert [entry["name"] for entry in plugins.plugin_info()] == ["boostkit"]
    with pytest.raises(RecipeError, match="unknown algorithm 'adaboost'"):
        boostkit.Booster("adaboost").recipe()


def test_autoload_flag_zero_means_enabled(monkeypatch, fresh_plugins):
    monkeypatch.setenv("BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD", "0")
    assert "adaboost" in boostkit.get_registry().algorithms()


def test_allow_list_loads_named_plugin_with_autoload_disabled(monkeypatch, fresh_plugins):
    monkeypatch.setenv("BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("BOOSTKIT_PLUGINS", "adaboost")
    registry = boostkit.get_registry()
    assert {"adaboost", "real-adaboost"} <= set(registry.algorithms())
    assert ADABOOST_COMPONENTS <= set(registry.components())


def test_allow_list_with_autoload_loads_only_listed_plugins(monkeypatch, fresh_plugins):
    monkeypatch.setenv("BOOSTKIT_PLUGINS", "nonexistent")
    with pytest.warns(PluginWarning, match="BOOSTKIT_PLUGINS names 'nonexistent'"):
        registry = boostkit.get_registry()
    assert set(registry.components()) == BUILTIN_COMPONENTS
    assert registry.algorithms() == {}


def test_trace_prints_round_hook_calls_during_fit(monkeypatch, capsys, noisy_data):
    X, y = noisy_data
    boostkit.Booster("adaboost", n_rounds=2).fit(X, y)
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("BOOSTKIT_TRACE", "1")
    boostkit.Booster("adaboost", n_rounds=2).fit(X, y)
    err = capsys.readouterr().err
    for hook in ("boostkit_fit_start", "boostkit_propose", "boostkit_partition_criterion",
                 "boostkit_calibrate", "boostkit_reweight", "boostkit_should_stop",
                 "boostkit_round_end", "boostkit_fit_end"):
        assert hook in err
    assert err.count("finish boostkit_propose") == 2


# -- in-process plugins -------------------------------------------------------------------------


@attrs.define
class StopAfter(boostkit.Stopping):
    """Stop after a fixed number of rounds, with its own reason."""

    name = "test-stop-after"
    rounds: int = 3

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        return "test-budget" if record.round >= self.rounds else None


SHORT_ADABOOST = boostkit.Recipe(
    name="test-short-adaboost", proposal="stump", calibration="constant-alpha",
    reweighting="exponential", stopping=("test-stop-after",), paper="test fixture",
)


def test_register_plugin_adds_a_usable_component_and_algorithm(in_process_plugin, noisy_data):
    in_process_plugin("test-short", components=[StopAfter], algorithms=[SHORT_ADABOOST])
    X, y = noisy_data
    model = boostkit.Booster("test-short-adaboost", n_rounds=50).fit(X, y)
    assert model.n_rounds == 3
    assert model.stop_reason == "test-budget"
    info = {entry["name"]: entry for entry in plugins.plugin_info()}["test-short"]
    assert info["distribution"] == "<in-process>"
    assert info["components"] == {"test-stop-after": "stopping"}
    assert info["algorithms"] == {"test-short-adaboost": "test fixture"}
    # components from different plugins combine: adaboost's learner with this stopping rule
    params = {"test_stop_after": {"rounds": 2}}
    shorter = boostkit.Booster("test-short-adaboost", n_rounds=50, params=params).fit(X, y)
    assert shorter.n_rounds == 2


def test_unregister_plugin_removes_its_components_and_algorithms(in_process_plugin, noisy_data):
    in_process_plugin("test-short", components=[StopAfter], algorithms=[SHORT_ADABOOST])
    assert "test-stop-after" in boostkit.get_registry().components()
    boostkit.unregister_plugin("test-short")
    registry = boostkit.get_registry()
    assert "test-stop-after" not in registry.components()
    assert "test-short-adaboost" not in registry.algorithms()
    assert "adaboost" in registry.algorithms()
    X, y = noisy_data
    with pytest.raises(RecipeError, match="unknown algorithm 'test-short-adaboost'"):
        boostkit.Booster("test-short-adaboost").fit(X, y)


def test_an_in_process_recipe_named_like_another_plugins_is_left_out_alone(in_process_plugin,
                                                                           noisy_data):
    """Two in-process plugins register the same algorithm name: the later loses that recipe
    only, with a warning naming both; its other recipe and its component work."""
    in_process_plugin("test-short", components=[StopAfter], algorithms=[SHORT_ADABOOST])
    again = attrs.evolve(SHORT_ADABOOST, paper="another paper")
    other = attrs.evolve(SHORT_ADABOOST, name="test-later-adaboost", paper="later")
    in_process_plugin("test-later", algorithms=[again, other])
    with pytest.warns(PluginWarning, match="left out algorithm 'test-short-adaboost' of plugin "
                                           "'test-later': .* by plugin 'test-short' .* and by "
                                           "plugin 'test-later'"):
        registry = boostkit.get_registry()
    assert registry.algorithm("test-short-adaboost").paper == "test fixture"
    assert registry.algorithm("test-later-adaboost").paper == "later"
    info = {entry["name"]: entry for entry in plugins.plugin_info()}["test-later"]
    assert info["status"] == "ok" and list(info["left_out"]) == ["test-short-adaboost"]
    X, y = noisy_data
    assert boostkit.Booster("test-later-adaboost", n_rounds=50).fit(X, y).n_rounds == 3

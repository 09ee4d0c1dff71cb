"""One broken plugin never takes the rest down (boostkit.plugins, ``boostkit plugins``).

A plugin that fails to import, declares an invalid hook implementation, or registers a recipe
failing its capability check is left out whole, with one :class:`boostkit.errors.PluginWarning`;
every other plugin, first-party ones included, works. A name another plugin already took leaves
out only that name (and, for a component, the plugin's recipes using it), with a warning.
``BOOSTKIT_STRICT_PLUGINS=1`` (the ``boostkit.testing.strict_plugins`` fixture) restores the error.

Most tests add fake entry points next to the real ones (a monkeypatched
``importlib.metadata.entry_points``); one installs a real temporary distribution (a hand-written
dist-info directory on ``PYTHONPATH``) and runs the console command in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import boostkit
from boostkit import plugins
from boostkit.cli import main
from boostkit.errors import PluginLoadError, PluginWarning, RegistryError
from boostkit.testing import strict_plugins  # noqa: F401  (a fixture)

FIRST_PARTY = "boostkit"

# Every broken plugin first registers something valid, to show that nothing of it stays.
PRELUDE = """
import attrs
import boostkit

@attrs.define
class Extra(boostkit.Stopping):
    name = "test-iso-extra-{name}"

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        return None
"""

BROKEN_SOURCES = {
    "import-error": "import boostkit_iso_libfoo_missing  # no such module\n",
    "invalid-hookimpl": PRELUDE + """
@boostkit.hookimpl
def boostkit_register_components(registy):  # misspelled argument
    registry.add_component(Extra)
""",
    "capability-check": PRELUDE + """
@boostkit.hookimpl
def boostkit_register_components(registry):
    registry.add_component(Extra)

@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    registry.add_algorithm(boostkit.Recipe(
        name="test-iso-fine-{name}", proposal="stump", calibration="constant-alpha",
        reweighting="exponential", stopping=("test-iso-extra-{name}",)))
    # no-rank-edge needs the rank advantage, which constant-alpha does not provide
    registry.add_algorithm(boostkit.Recipe(
        name="test-iso-refused-{name}", proposal="stump", calibration="constant-alpha",
        reweighting="exponential", stopping=("no-rank-edge",)))
""",
}

EXPECTED_ERROR = {
    "import-error": "failed to import: ModuleNotFoundError: No module named "
                    "'boostkit_iso_libfoo_missing'",
    "invalid-hookimpl": "invalid hook implementation",
    "capability-check": "recipe 'test-iso-refused-{name}' cannot work: stopping 'no-rank-edge'",
}
STRICT_ERROR = {
    "import-error": PluginLoadError,
    "invalid-hookimpl": PluginLoadError,
    "capability-check": PluginLoadError,
}
KINDS = sorted(BROKEN_SOURCES)


@pytest.fixture
def extra_entry_points(tmp_path, monkeypatch, fresh_plugins):
    """Add fake plugins to the installed ones.

    Returns ``install(name, source, distribution)``: writes ``source`` as a module on a temporary
    ``sys.path`` entry and lists it as entry point ``name`` of the ``boostkit`` group, from a fake
    distribution, next to the real entry points.
    """
    monkeypatch.syspath_prepend(str(tmp_path))
    real = metadata.entry_points
    extra: list[metadata.EntryPoint] = []
    modules: list[str] = []

    def entry_points(**selection):
        if selection.get("group") != "boostkit":
            return real(**selection)  # other callers (numba) see what is installed
        return [*real(**selection), *extra]

    monkeypatch.setattr(plugins.metadata, "entry_points", entry_points)

    def install(name, source, distribution="boostkit-iso-broken"):
        module = f"boostkit_iso_{name.replace('-', '_')}"
        (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
        modules.append(module)
        dist = types.SimpleNamespace(name=distribution, version="6.6.6")
        extra.append(metadata.EntryPoint(name=name, value=module, group="boostkit")._for(dist))
        plugins.reset()

    yield install
    for module in modules:
        sys.modules.pop(module, None)


def _install_broken(install, kind: str) -> None:
    install(kind, BROKEN_SOURCES[kind].replace("{name}", kind), distribution=f"boostkit-{kind}")


def _cli_json(capsys, *argv):
    status = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, json.loads(out), err


def _fit_adaboost():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    return boostkit.Booster("adaboost", n_rounds=3).fit(X, y)


# -- each kind of breakage: left out whole, one warning, everything else works ---------------


@pytest.mark.parametrize("kind", KINDS)
def test_broken_plugin_is_left_out_with_one_warning_and_adaboost_fits(
    extra_entry_points, capsys, kind
):
    _install_broken(extra_entry_points, kind)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = boostkit.get_registry()
    plugin_warnings = [w for w in caught if issubclass(w.category, PluginWarning)]
    assert len(plugin_warnings) == 1, [str(w.message) for w in plugin_warnings]
    message = str(plugin_warnings[0].message)
    assert f"plugin {kind!r} (distribution boostkit-{kind})" in message
    assert EXPECTED_ERROR[kind].replace("{name}", kind) in message
    assert f"pip uninstall boostkit-{kind}" in message and "BOOSTKIT_PLUGINS=adaboost," in message
    assert "BOOSTKIT_STRICT_PLUGINS=1" in message

    # Nothing of it stays half-registered; every first-party plugin is there.
    assert not any(name.startswith("test-iso") for name in registry.components())
    assert not any(name.startswith("test-iso") for name in registry.algorithms())
    assert registry.source_of("stump") == "plugin 'adaboost' (distribution boostkit)"
    assert not plugins.get_plugin_manager().has_plugin(kind)
    assert _fit_adaboost().n_rounds >= 1

    status, listed, _ = _cli_json(capsys, "plugins")
    assert status == 0
    by_name = {p["name"]: p for p in listed}
    assert by_name[kind]["status"] == "broken"
    assert by_name[kind]["distribution"] == f"boostkit-{kind}"
    assert EXPECTED_ERROR[kind].replace("{name}", kind) in by_name[kind]["error"]
    assert by_name[kind]["components"] == {} and by_name[kind]["algorithms"] == {}
    assert by_name["adaboost"]["status"] == "ok" and by_name["adaboost"]["error"] == ""

    assert main(["plugins"]) == 0
    out, err = capsys.readouterr()
    assert "BROKEN, left out: " in out and f"1 broken plugin(s) left out: {kind}" in out
    assert err == ""  # the listing says it; no warning on top

    plugins.reset()  # the warning comes when the registry is built
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(["recipes"]) == 0
    out, err = capsys.readouterr()
    assert "adaboost" in out
    assert err.count("boostkit recipes: warning: boostkit left out") == 1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.usefixtures("strict_plugins")
def test_strict_mode_raises_the_error(extra_entry_points, capsys, kind):
    _install_broken(extra_entry_points, kind)
    with pytest.raises(STRICT_ERROR[kind]) as excinfo:
        boostkit.get_registry()
    assert EXPECTED_ERROR[kind].replace("{name}", kind) in str(excinfo.value)
    # `boostkit plugins` still lists everything, and fails the run.
    status, listed, _ = _cli_json(capsys, "plugins")
    assert status == 1
    assert {p["name"]: p["status"] for p in listed}[kind] == "broken"
    assert main(["recipes"]) == 1
    assert STRICT_ERROR[kind].__name__ in capsys.readouterr().err


def test_strict_mode_by_environment_variable(extra_entry_points, monkeypatch):
    _install_broken(extra_entry_points, "import-error")
    monkeypatch.setenv("BOOSTKIT_STRICT_PLUGINS", "1")
    plugins.reset()
    with pytest.raises(PluginLoadError, match="distribution boostkit-import-error"):
        boostkit.get_registry()
    monkeypatch.setenv("BOOSTKIT_STRICT_PLUGINS", "0")
    plugins.reset()
    with pytest.warns(PluginWarning):
        assert "adaboost" in boostkit.get_registry().algorithms()


def test_warning_as_error_filter_raises_on_every_use(extra_entry_points):
    _install_broken(extra_entry_points, "import-error")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginWarning)
        for _ in range(2):
            with pytest.raises(PluginWarning, match="boostkit-import-error"):
                boostkit.get_registry()


def test_plugin_needing_a_broken_plugins_component_is_left_out_too(extra_entry_points):
    extra_entry_points("zz-base", BROKEN_SOURCES["capability-check"].replace("{name}", "zz-base"))
    extra_entry_points("zz-user", """
import boostkit

@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    registry.add_algorithm(boostkit.Recipe(
        name="test-iso-user", proposal="stump", calibration="constant-alpha",
        reweighting="exponential", stopping=("test-iso-extra-zz-base",)))
""", distribution="boostkit-iso-user")
    with pytest.warns(PluginWarning) as record:
        registry = boostkit.get_registry()
    assert len(record) == 2
    assert "'test-iso-extra-zz-base'" in str(record[1].message)
    assert set(plugins.broken_plugins()) == {"zz-base", "zz-user"}
    assert not any(name.startswith("test-iso") for name in registry.algorithms())


# -- who is left out of a duplicate name ---------------------------------------------------------


CLASH = """
import attrs
import boostkit

@attrs.define
class Clash(boostkit.Observer):
    name = "test-iso-clash"

@boostkit.hookimpl
def boostkit_register_components(registry):
    registry.add_component(Clash)
"""


def test_first_party_wins_a_clash_whatever_the_names(extra_entry_points):
    # "aaa" sorts before "adaboost", but first-party plugins load first.
    extra_entry_points("aaa", COMPONENT_CLASH, distribution="boostkit-aaa")
    with pytest.warns(PluginWarning, match="left out component 'stump' of plugin 'aaa'"):
        registry = boostkit.get_registry()
    assert registry.source_of("stump") == "plugin 'adaboost' (distribution boostkit)"
    assert registry.source_of("test-iso-own") == "plugin 'aaa' (distribution boostkit-aaa)"
    assert plugins.broken_plugins() == {}


def test_clash_between_third_party_plugins_leaves_out_the_later_name(extra_entry_points):
    extra_entry_points("zeta", CLASH, distribution="boostkit-zeta")  # listed first
    extra_entry_points("alpha", CLASH.replace("Clash", "OtherClash"), distribution="boostkit-alpha")
    with pytest.warns(PluginWarning, match="left out component 'test-iso-clash' of plugin 'zeta'"):
        registry = boostkit.get_registry()
    assert registry.source_of("test-iso-clash") == "plugin 'alpha' (distribution boostkit-alpha)"
    assert plugins.broken_plugins() == {}


def test_third_party_entry_point_named_like_a_first_party_one_is_left_out(extra_entry_points):
    extra_entry_points("adaboost", CLASH, distribution="boostkit-squatter")
    with pytest.warns(PluginWarning, match="has the name of plugin 'adaboost' from distribution "
                                           "boostkit, which loads first"):
        registry = boostkit.get_registry()
    assert registry.source_of("adaboost") == "plugin 'adaboost' (distribution boostkit)"
    assert "test-iso-clash" not in registry.components()
    assert set(plugins.broken_plugins()) == {"adaboost (boostkit-squatter)"}


def test_in_process_plugin_loses_a_clashing_component(in_process_plugin, fresh_plugins):
    import attrs

    @attrs.define
    class Impostor(boostkit.Calibration):
        name = "constant-alpha"

    in_process_plugin("test-iso-impostor", components=[Impostor])
    with pytest.warns(PluginWarning, match="left out component 'constant-alpha' of plugin "
                                           "'test-iso-impostor'"):
        registry = boostkit.get_registry()
    assert registry.source_of("constant-alpha") == "plugin 'adaboost' (distribution boostkit)"
    assert plugins.broken_plugins() == {}


# A plugin with a component named like a first-party one (stump, a proposal), a component of its
# own, a recipe using the clashing name and one not using it.
COMPONENT_CLASH = """
import attrs
import boostkit

@attrs.define
class Impostor(boostkit.Proposal):
    name = "stump"  # adaboost's

@attrs.define
class Own(boostkit.Stopping):
    name = "test-iso-own"

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        return None

@boostkit.hookimpl
def boostkit_register_components(registry):
    registry.add_component(Impostor)
    registry.add_component(Own)

@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    registry.add_algorithm(boostkit.Recipe(
        name="test-iso-uses-stump", proposal="stump", calibration="domain-partition",
        reweighting="exponential", stopping=("test-iso-own",)))
    registry.add_algorithm(boostkit.Recipe(
        name="test-iso-no-stump", proposal="tree", calibration="domain-partition",
        reweighting="exponential", stopping=("test-iso-own",)))
"""


def test_a_component_name_taken_first_leaves_out_that_component_and_its_recipes(
        extra_entry_points, capsys):
    extra_entry_points("late", COMPONENT_CLASH, distribution="boostkit-late")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = boostkit.get_registry()
    messages = [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]
    assert len(messages) == 1, messages
    assert ("boostkit left out component 'stump' of plugin 'late': component name 'stump' "
            "registered twice: by plugin 'adaboost' (distribution boostkit)") in messages[0]
    assert "and by plugin 'late' (distribution boostkit-late)" in messages[0]
    assert "Left out with it: algorithm 'test-iso-uses-stump'" in messages[0]
    assert "test-iso-no-stump" not in messages[0]
    assert "prefix" in messages[0] and "'late-stump'" in messages[0]
    assert "BOOSTKIT_STRICT_PLUGINS=1" in messages[0]

    late = "plugin 'late' (distribution boostkit-late)"
    assert registry.source_of("stump") == "plugin 'adaboost' (distribution boostkit)"
    assert registry.source_of("test-iso-own") == late
    assert registry.source_of("test-iso-no-stump") == late
    assert "test-iso-uses-stump" not in registry.algorithms()
    assert plugins.broken_plugins() == {}
    assert boostkit.Booster("test-iso-no-stump", n_rounds=2).fit(
        np.arange(20.0)[:, None], np.repeat([-1, 1], 10)).n_rounds >= 1

    status, listed, _ = _cli_json(capsys, "plugins")
    entry = {p["name"]: p for p in listed}["late"]
    assert status == 0 and entry["status"] == "ok"
    assert entry["components"] == {"test-iso-own": "stopping"}
    assert set(entry["algorithms"]) == {"test-iso-no-stump"}
    assert set(entry["left_out"]) == {"component stump", "test-iso-uses-stump"}
    assert "registered twice" in entry["left_out"]["component stump"]
    assert "uses component 'stump'" in entry["left_out"]["test-iso-uses-stump"]
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "  component stump LEFT OUT: component name 'stump' registered twice" in out
    assert "  algorithm test-iso-uses-stump LEFT OUT: " in out


@pytest.mark.usefixtures("strict_plugins")
def test_strict_mode_makes_a_component_name_taken_first_an_error(extra_entry_points):
    extra_entry_points("late", COMPONENT_CLASH, distribution="boostkit-late")
    with pytest.raises(RegistryError, match="component name 'stump' registered twice: by plugin "
                                            "'adaboost' .* and by plugin 'late'"):
        boostkit.get_registry()


# A plugin one of whose recipe names a first-party recipe took (as a release may add one later).
RECIPE_CLASH = """
import attrs
import boostkit

@attrs.define
class Mine(boostkit.Stopping):
    name = "test-iso-mine"

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        return None

@boostkit.hookimpl
def boostkit_register_components(registry):
    registry.add_component(Mine)

@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    for name in ("test-iso-mine-boost", "adaboost", "test-iso-other-boost"):
        registry.add_algorithm(boostkit.Recipe(
            name=name, proposal="stump", calibration="domain-partition",
            reweighting="exponential", stopping=("test-iso-mine",)))
"""


def test_a_recipe_name_taken_first_leaves_out_that_recipe_alone(extra_entry_points, capsys):
    extra_entry_points("late", RECIPE_CLASH, distribution="boostkit-late")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = boostkit.get_registry()
    messages = [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]
    assert len(messages) == 1, messages
    assert ("boostkit left out algorithm 'adaboost' of plugin 'late': algorithm name 'adaboost' "
            "registered twice: by plugin 'adaboost' (distribution boostkit) and by plugin 'late' "
            "(distribution boostkit-late)") in messages[0]
    assert ("The plugin that loads first keeps the name, so 'adaboost' is its algorithm; the "
            "other components and algorithms of plugin 'late' work") in messages[0]
    assert "prefix" in messages[0] and "BOOSTKIT_STRICT_PLUGINS=1" in messages[0]

    # The name stays the first-party recipe's; everything else of the plugin is there.
    late = "plugin 'late' (distribution boostkit-late)"
    assert registry.source_of("adaboost") == "plugin 'adaboost' (distribution boostkit)"
    assert registry.algorithm("adaboost").stopping[0].name == "no-edge"
    assert registry.source_of("test-iso-mine") == late
    assert registry.source_of("test-iso-mine-boost") == late
    assert registry.source_of("test-iso-other-boost") == late
    assert plugins.broken_plugins() == {}
    assert boostkit.Booster("test-iso-other-boost", n_rounds=2).fit(
        np.arange(20.0)[:, None], np.repeat([-1, 1], 10)).n_rounds >= 1

    status, listed, _ = _cli_json(capsys, "plugins")
    entry = {p["name"]: p for p in listed}["late"]
    assert status == 0 and entry["status"] == "ok"
    assert set(entry["algorithms"]) == {"test-iso-mine-boost", "test-iso-other-boost"}
    assert list(entry["left_out"]) == ["adaboost"]
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert ("  algorithm adaboost LEFT OUT: algorithm name 'adaboost' registered twice: by plugin "
            "'adaboost' (distribution boostkit) and by plugin 'late'") in out


@pytest.mark.usefixtures("strict_plugins")
def test_strict_mode_makes_a_recipe_name_taken_first_an_error(extra_entry_points):
    extra_entry_points("late", RECIPE_CLASH, distribution="boostkit-late")
    with pytest.raises(RegistryError, match="algorithm name 'adaboost' registered twice: by plugin "
                                            "'adaboost' .* and by plugin 'late'"):
        boostkit.get_registry()


# -- allow-lists and the command line ------------------------------------------------------------


def test_unknown_allow_list_name_is_a_clear_cli_error(monkeypatch, fresh_plugins, capsys):
    monkeypatch.setenv("BOOSTKIT_PLUGINS", "adaboost,nosuch")
    for command in ("recipes", "components", "compare"):
        assert main([command]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert f"boostkit {command}: error: BOOSTKIT_PLUGINS names 'nosuch'" in err
        assert "installed plugins: adaboost," in err and "weightboost" in err
    # `boostkit plugins` still lists what is loaded, and says what is wrong.
    assert main(["plugins"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("adaboost ") and "BOOSTKIT_PLUGINS names 'nosuch'" in err


def test_autoload_off_recipes_says_how_to_enable(monkeypatch, fresh_plugins, capsys, tmp_path):
    monkeypatch.setenv("BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert main(["recipes"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "no algorithm is registered: plugin autoload is off" in err
    assert "Unset BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD" in err and "installed: adaboost" in err
    assert main(["recipes", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    output = tmp_path / "out"
    assert main(["compare", "--no-progress", "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert "boostkit compare: error: nothing to compare: no algorithm is registered" in err
    assert not output.exists()


def test_bare_boostkit_prints_the_help(capsys):
    assert main([]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: boostkit") and "plugins" in out and "compare" in out
    assert err == ""


# -- a real installed distribution ---------------------------------------------------------------


def _write_distribution(site: Path, name: str, module: str, source: str) -> None:
    """A minimal installed distribution: a module and a dist-info with a boostkit entry point."""
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[boostkit]\nbroken = {module}\n", encoding="utf-8")


def test_installed_broken_distribution_leaves_the_cli_working(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _write_distribution(site, "boostkit-iso-installed", "boostkit_iso_installed",
                        "raise ImportError('libfoo.so: cannot open shared object file')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOSTKIT_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))

    def cli(*argv, **extra):
        return subprocess.run([sys.executable, "-m", "boostkit.cli", *argv], capture_output=True,
                              text=True, env={**env, **extra}, timeout=300)

    listed = cli("plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    broken = {p["name"]: p for p in json.loads(listed.stdout)}["broken"]
    assert broken["status"] == "broken"
    assert broken["distribution"] == "boostkit-iso-installed" and broken["version"] == "1.0"
    assert "ImportError: libfoo.so: cannot open shared object file" in broken["error"]

    recipes = cli("recipes")
    assert recipes.returncode == 0 and "adaboost" in recipes.stdout
    assert recipes.stderr.count("warning: boostkit left out plugin 'broken'") == 1
    assert "pip uninstall boostkit-iso-installed" in recipes.stderr
    assert "Traceback" not in recipes.stderr

    strict = cli("recipes", BOOSTKIT_STRICT_PLUGINS="1")
    assert strict.returncode == 1
    assert "PluginLoadError" in strict.stderr and "Traceback" not in strict.stderr


def test_strict_plugins_fixture_fails_a_plugin_authors_test(tmp_path):
    """The documented set-up: ``pytest_plugins = ["boostkit.testing"]`` and ``strict_plugins``."""
    (tmp_path / "conftest.py").write_text(
        "import pytest\n"
        "pytest_plugins = ['boostkit.testing']\n\n\n"
        "@pytest.fixture(autouse=True)\n"
        "def _strict(strict_plugins):\n"
        "    pass\n",
        encoding="utf-8",
    )
    (tmp_path / "test_my_plugin.py").write_text(
        "import types\n"
        "import boostkit\n\n\n"
        "def test_registry():\n"
        "    module = types.ModuleType('my-plugin')\n"
        "    @boostkit.hookimpl\n"
        "    def boostkit_register_components(registy):\n"
        "        pass\n"
        "    module.boostkit_register_components = boostkit_register_components\n"
        "    boostkit.register_plugin(module, name='my-plugin')\n"
        "    boostkit.get_registry()\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOSTKIT_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "PluginLoadError" in done.stdout and "'my-plugin'" in done.stdout
    assert "1 failed" in done.stdout

"""A third-party plugin, built and installed like any published one, works like a first-party one.

The distribution ``boostkit-example`` (``example_plugin/``) is built by pip into a target
directory; subprocesses with that directory on ``PYTHONPATH`` see its dist-info, so
``importlib.metadata`` finds its ``boostkit`` entry point exactly as it would after
``pip install boostkit-example``. Nothing in this process imports the plugin.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import boostkit
from boostkit.errors import ModelFormatError
from plugin_install import install_distribution

EXAMPLE_DISTRIBUTION = Path(__file__).parent / "example_plugin"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A directory holding the installed ``boostkit-example`` (package and dist-info)."""
    target = install_distribution(EXAMPLE_DISTRIBUTION, tmp_path_factory.mktemp("third_party"))
    assert (target / "boostkit_example" / "__init__.py").is_file()
    assert list(target.glob("boostkit_example-0.1.0.dist-info/entry_points.txt"))
    return target


def _run(site: Path, args: list[str], **env_vars: str) -> subprocess.CompletedProcess:
    """Run ``python <args>`` with the plugin installed and only the given BOOSTKIT_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOSTKIT_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env.update(env_vars)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env)


def _json_output(completed: subprocess.CompletedProcess):
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


FIT_SCRIPT = r"""
import json
import sys

import numpy as np
from sklearn.base import clone

import boostkit
import boostkit.datasets
import boostkit.plugins
from boostkit.sklearn import BoostClassifier

model_path = sys.argv[1]
data = boostkit.datasets.load("breast_cancer_wisconsin", dropna=True)
order = np.random.default_rng(0).permutation(data.y.shape[0])
train, test = order[: 2 * order.shape[0] // 3], order[2 * order.shape[0] // 3 :]


def accuracy(predict):
    return float(np.mean(predict(data.X[test]) == data.y[test]))


out = {"plugins": {p["name"]: p for p in boostkit.plugins.plugin_info()}}

model = boostkit.Booster("centroid-boost", n_rounds=20).fit(data.X[train], data.y[train])
model.save(model_path)
reloaded = boostkit.load_model(model_path)
out["booster"] = {
    "accuracy": accuracy(model.predict),
    "n_rounds": model.n_rounds,
    "hypotheses": sorted({h.name for h in model.hypotheses}),
    "contributions": sorted({c.name for c in model.contributions}),
    "reloaded_same_margins": bool(
        np.array_equal(reloaded.decision_function(data.X), model.decision_function(data.X))
    ),
    "reloaded_hypotheses": sorted({type(h).__module__ for h in reloaded.hypotheses}),
}

classifier = BoostClassifier("centroid-boost", n_rounds=20).fit(data.X[train], data.y[train])
out["classifier"] = {"accuracy": accuracy(classifier.predict)}
try:
    clone(classifier).set_params(proposal__criterion="purity").fit(data.X[train], data.y[train])
except boostkit.RecipeError as exc:
    out["classifier"]["bad_parameter_error"] = str(exc)

# The third-party learner in a user-built recipe, with first-party calibrations.
out["recipes"] = {}
for calibration in ("newton-alpha", "domain-partition"):
    recipe = boostkit.Recipe(
        name="centroid-" + calibration, proposal="centroid-direction", calibration=calibration,
        reweighting="exponential", stopping=("no-edge",),
    )
    fitted = boostkit.Booster(recipe, n_rounds=20).fit(data.X[train], data.y[train])
    out["recipes"][calibration] = {
        "accuracy": accuracy(fitted.predict),
        "contributions": sorted({c.name for c in fitted.contributions}),
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def fitted(site, tmp_path_factory):
    """What the fit script reports, and the model file it saved."""
    model_path = tmp_path_factory.mktemp("model") / "centroid-boost.npz"
    return _json_output(_run(site, ["-c", FIT_SCRIPT, str(model_path)])), model_path


def test_installed_plugin_is_listed_with_its_distribution(fitted):
    plugins = fitted[0]["plugins"]
    example = plugins["example"]
    assert example["distribution"] == "boostkit-example"
    assert example["version"] == "0.1.0"
    assert example["entry_point"] == "boostkit_example"
    assert example["hooks"] == ["boostkit_register_algorithms", "boostkit_register_components"]
    assert example["components"] == {
        "centroid-direction": "proposal",
        "thresholded-projection": "hypothesis",
    }
    assert list(example["algorithms"]) == ["centroid-boost"]
    # The components it borrows by name stay credited to the plugin that registered them.
    assert "constant-alpha" in plugins["adaboost"]["components"]


def test_third_party_recipe_fits_real_data_and_round_trips(fitted):
    booster = fitted[0]["booster"]
    assert booster["accuracy"] > 0.9
    assert booster["n_rounds"] == 20
    assert booster["hypotheses"] == ["thresholded-projection"]
    assert booster["contributions"] == ["linear"]  # constant-alpha, from boostkit_adaboost
    assert booster["reloaded_same_margins"]
    assert booster["reloaded_hypotheses"] == ["boostkit_example"]


def test_scikit_learn_estimator_uses_the_third_party_recipe(fitted):
    classifier = fitted[0]["classifier"]
    assert classifier["accuracy"] > 0.9
    # The plugin's attrs validator runs before any data is touched, and the error names it.
    message = classifier["bad_parameter_error"]
    assert "'centroid-direction'" in message and "criterion" in message and "'purity'" in message


@pytest.mark.parametrize(
    ("calibration", "contribution"),
    [("newton-alpha", "linear"), ("domain-partition", "cell-values")],
)
def test_third_party_learner_mixes_with_first_party_calibrations(fitted, calibration, contribution):
    result = fitted[0]["recipes"][calibration]
    assert result["accuracy"] > 0.9
    assert result["contributions"] == [contribution]


def test_model_names_the_missing_plugin_component_where_it_is_not_installed(fitted):
    _, model_path = fitted
    with pytest.raises(ModelFormatError, match="'thresholded-projection'.*install the plugin"):
        boostkit.load_model(model_path)


LIST_SCRIPT = r"""
import json
import boostkit.plugins

registry = boostkit.plugins.get_registry()
print(json.dumps({
    "plugins": sorted(p["name"] for p in boostkit.plugins.plugin_info()),
    "algorithms": sorted(registry.algorithms()),
}))
"""


@pytest.mark.parametrize(
    ("env_vars", "plugins"),
    [
        ({}, ["adaboost", "boostkit", "example"]),
        ({"BOOSTKIT_PLUGINS": "adaboost"}, ["adaboost", "boostkit"]),
        ({"BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD": "1"}, ["boostkit"]),
        ({"BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD": "1", "BOOSTKIT_PLUGINS": "adaboost, example"},
         ["adaboost", "boostkit", "example"]),
    ],
    ids=["autoload", "allow-list", "autoload-off", "autoload-off-named"],
)
def test_environment_selects_the_plugins(site, env_vars, plugins):
    listed = _json_output(_run(site, ["-c", LIST_SCRIPT], **env_vars))
    assert [p for p in listed["plugins"] if p in ("adaboost", "boostkit", "example")] == plugins
    assert ("centroid-boost" in listed["algorithms"]) == ("example" in plugins)


def test_plugin_whose_recipe_lacks_its_components_is_named(site):
    # Allowing only the example leaves its recipe without constant-alpha & co: the example is
    # left out with a warning naming it and the missing component (an error in strict mode).
    completed = _run(site, ["-c", LIST_SCRIPT], BOOSTKIT_PLUGINS="example")
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["algorithms"] == []  # plugin_info lists it, as broken
    assert "PluginWarning" in completed.stderr
    assert "plugin 'example' (distribution boostkit-example)" in completed.stderr
    assert "'constant-alpha'" in completed.stderr
    strict = _run(site, ["-c", LIST_SCRIPT], BOOSTKIT_PLUGINS="example",
                  BOOSTKIT_STRICT_PLUGINS="1")
    assert strict.returncode != 0
    assert "PluginLoadError" in strict.stderr
    assert "plugin 'example' (distribution boostkit-example)" in strict.stderr
    assert "'constant-alpha'" in strict.stderr


def test_cli_lists_the_installed_plugin(site):
    if importlib.util.find_spec("boostkit.cli") is None:
        pytest.skip("boostkit.cli does not exist yet, so there is no `boostkit plugins` to run")
    listed = _json_output(_run(site, ["-m", "boostkit.cli", "plugins", "--json"]))
    example = next(p for p in listed if p["name"] == "example")
    assert example["distribution"] == "boostkit-example"
    assert example["components"]["centroid-direction"] == "proposal"
    assert "centroid-boost" in example["algorithms"]

"""The ``boostkit`` command line: ``plugins`` and ``compare``, in-process and as a console script."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import boostkit
from boostkit.progress import RoundProgress
from boostkit.study import compare
from boostkit.study.sources import read_csv
from cli_helpers import read_results, run


@pytest.fixture
def small_csv(tmp_path) -> Path:
    """150 rows: a numeric and a categorical feature that both carry the label, a noise column,
    the label (yes/no) last; one empty numeric field and one empty categorical field."""
    rng = np.random.default_rng(0)
    n = 150
    x = rng.normal(size=n)
    colour = rng.choice(["red", "green", "blue"], size=n)
    label = np.where(x + 1.5 * (colour == "red") + 0.3 * rng.normal(size=n) > 0.5, "yes", "no")
    rows = [[f"{v:.4f}", c, f"{z:.3f}", l] for v, c, z, l in zip(x, colour, rng.normal(size=n), label)]
    rows[3][0] = ""
    rows[7][1] = ""
    path = tmp_path / "small.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["x", "colour", "noise", "label"])
        writer.writerows(rows)
    return path


# -- plugins ------------------------------------------------------------------------------------


def test_plugins_lists_components_with_roles_and_algorithms_with_papers(capsys):
    status, out, _ = run(capsys, "plugins")
    assert status == 0
    assert "adaboost 0.1.0" in out or "adaboost" in out.splitlines()[0]
    assert "hooks: boostkit_register_algorithms, boostkit_register_components" in out
    lines = [line.split() for line in out.splitlines()]
    assert ["stump", "proposal"] in lines
    assert ["constant-alpha", "calibration"] in lines
    assert any(line[:1] == ["real-adaboost"] and "Schapire" in line for line in lines)


def test_plugins_json_lists_adaboost_with_its_components(capsys):
    status, out, _ = run(capsys, "plugins", "--json")
    assert status == 0
    plugins = {p["name"]: p for p in json.loads(out)}
    adaboost = plugins["adaboost"]
    assert adaboost["distribution"] == "boostkit"
    assert adaboost["components"]["stump"] == "proposal"
    assert adaboost["components"]["no-edge"] == "stopping"
    assert set(adaboost["algorithms"]) == {"adaboost", "madaboost", "real-adaboost", "adaboost-mh",
                                           "discrete-adaboost-mh", "samme", "samme-error",
                                           "boostexter"}
    assert "boostkit_register_components" in adaboost["hooks"]
    assert plugins["boostkit"]["entry_point"] == "built-in"


# -- compare ------------------------------------------------------------------------------------


def _input_of(algorithm: str, data) -> str:
    """What compare should give ``algorithm`` on ``data``, from its proposal's capabilities."""
    from boostkit.capabilities import CATEGORICAL_FEATURES, MISSING_VALUES, capabilities_of

    registry = boostkit.get_registry()
    provided = set().union(*(capabilities_of(component)[1] for role, component
                             in registry.instantiate(registry.resolve(algorithm))
                             if role == "proposal"))
    done = [name for name, needed, capability in (
        ("one-hot", data.features.categorical.any(), CATEGORICAL_FEATURES),
        ("imputed", np.isnan(data.X).any(), MISSING_VALUES))
        if needed and capability not in provided]
    return ", ".join(done) or "as given"


def test_compare_on_a_csv_with_a_categorical_column_and_missing_values(capsys, tmp_path, small_csv):
    output = tmp_path / "out"
    status, out, err = run(
        capsys, "compare", str(small_csv), "--rounds", "15", "--folds", "3",
        "--algorithms", "adaboost,pav-adaboost", "--output", str(output), "--no-progress",
        "--no-plots",
    )
    assert status == 0, err
    assert "dropped" not in err  # every row is used, by every algorithm
    assert "read the non-numeric column(s) 'colour' (3 values) as categorical" in err
    # x, colour (blue, green, red), noise; one empty x, one empty colour; 'yes' > 'no'.
    assert ("small.csv: 150 rows, 3 features (1 categorical, 2 missing values), target 'label', "
            "positive class 'yes'") in out
    row = next(line for line in out.splitlines() if line.startswith("adaboost "))
    assert "max-rounds" in row or "no-edge" in row
    results = read_results(output)
    assert list(results) == ["adaboost", "pav-adaboost"]
    assert float(results["adaboost"]["accuracy_mean"]) > 0.75
    data = compare.load_data(str(small_csv), None, None, None)
    for name, result in results.items():
        assert result["input"] == _input_of(name, data)
    assert "input, on the same rows for all" in out or set(
        r["input"] for r in results.values()) == {"as given"}
    roc = json.loads((output / "roc.json").read_text())
    pooled = roc["algorithms"]["adaboost"]["pooled"]
    assert (pooled["fpr"][0], pooled["tpr"][0], pooled["fpr"][-1], pooled["tpr"][-1]) == (0, 0, 1, 1)
    assert len(roc["algorithms"]["adaboost"]["folds"]) == 3
    assert "| adaboost |" in (output / "results.md").read_text()


def test_read_csv_keeps_text_columns_as_categories_and_empty_fields_as_missing(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text("size,colour,label\n1.5,red,yes\n,blue,no\n-2,,no\n40,red,\n3,green,yes\n",
                    encoding="utf-8")
    X, labels, features, target, n_dropped = read_csv(path)
    assert (target, n_dropped) == ("label", 1)  # the row without a label only
    assert labels.tolist() == ["yes", "no", "no", "yes"]
    assert features.names == ("size", "colour")
    assert features.categories[0] is None
    assert features.categories[1].tolist() == ["blue", "green", "red"]
    np.testing.assert_array_equal(X, [[1.5, 2.0], [np.nan, 0.0], [-2.0, np.nan], [3.0, 1.0]])


def test_compare_dataset_adult_on_a_row_sample(capsys, tmp_path):
    output = tmp_path / "out"
    algorithms = ["adaboost", "real-adaboost", "weightboost", "pav-adaboost"]
    status, out, err = run(
        capsys, "compare", "--dataset", "adult", "--max-rows", "600", "--rounds", "8",
        "--folds", "2", "--algorithms", ",".join(algorithms), "--output", str(output),
        "--no-progress", "--no-plots",
    )
    assert status == 0, err
    assert "a random sample of 600 of the 48842 rows (--max-rows, seed 0)" in err
    described = next(line for line in out.splitlines() if line.startswith("adult: 600 rows"))
    assert "14 features (8 categorical, " in described and "positive class '>50K'" in described
    data = compare.load_data(None, None, "adult", None, max_rows=600)
    assert data.X.shape == (600, 14) and np.isnan(data.X).any()
    again = compare.load_data(None, None, "adult", None, max_rows=600)
    np.testing.assert_array_equal(again.X, data.X)  # the sample is seeded
    results = read_results(output)
    assert list(results) == algorithms
    for name, result in results.items():
        assert result["input"] == _input_of(name, data)
        assert float(result["accuracy_mean"]) > 0.76  # above the 76 % of the majority class
    roc = json.loads((output / "roc.json").read_text())
    assert {name: len(entry["folds"]) for name, entry in roc["algorithms"].items()} == {
        name: 2 for name in algorithms}


def test_input_form_fallback_is_fitted_on_the_training_rows():
    from boostkit.study.compare import InputForm
    from boostkit.features import FeatureSchema

    X = np.array([[1.0, 0.0, 2.0], [np.nan, 1.0, 3.0], [3.0, np.nan, 4.0], [100.0, 1.0, np.nan]])
    schema = FeatureSchema(3, ("age", "colour", "size"),
                           (None, np.array(["blue", "red"]), None))
    train = np.array([0, 1, 2])
    as_given, same = InputForm().apply(X, schema, train)
    assert as_given is X and same is schema
    assert InputForm().describe() == "as given"

    full, features = InputForm(one_hot=True, impute=True).apply(X, schema, train)
    assert InputForm(one_hot=True, impute=True).describe() == "one-hot, imputed"
    assert features.names == ("age", "age is missing", "colour=blue", "colour=red",
                              "colour is missing", "size", "size is missing")
    assert not features.categorical.any()
    # The mean of age over the training rows 0-2 is 2 (row 3's 100 is not seen); size's is 3.
    np.testing.assert_array_equal(full, [
        [1.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0],
        [2.0, 1.0, 0.0, 1.0, 0.0, 3.0, 0.0],
        [3.0, 0.0, 0.0, 0.0, 1.0, 4.0, 0.0],
        [100.0, 0.0, 0.0, 1.0, 0.0, 3.0, 1.0],
    ])

    onehot, features = InputForm(one_hot=True).apply(X, schema, train)
    assert features.names == ("age", "colour=blue", "colour=red", "size")
    np.testing.assert_array_equal(onehot[:, 1:3], [[1, 0], [0, 1], [np.nan, np.nan], [0, 1]])
    np.testing.assert_array_equal(onehot[:, [0, 3]], X[:, [0, 2]])  # NaN kept

    imputed, features = InputForm(impute=True).apply(X, schema, train)
    assert features.names == ("age", "age is missing", "colour", "size", "size is missing")
    assert features.categories[2].tolist() == ["(missing)", "blue", "red"]
    np.testing.assert_array_equal(imputed[:, 2], [1.0, 2.0, 0.0, 2.0])
    assert not np.isnan(imputed).any()


def test_compare_on_ionosphere_writes_both_rows(capsys, tmp_path):
    output = tmp_path / "out"
    status, out, err = run(
        capsys, "compare", "--dataset", "ionosphere", "--rounds", "10", "--folds", "3",
        "--algorithms", "adaboost,real-adaboost", "--output", str(output), "--no-progress",
        "--no-plots",
    )
    assert status == 0, err
    table = [line.split() for line in out.splitlines()]
    assert [line[0] for line in table if line and line[0] in ("adaboost", "real-adaboost")] == [
        "adaboost", "real-adaboost"]
    results = read_results(output)
    assert set(results) == {"adaboost", "real-adaboost"}
    for row in results.values():
        assert float(row["accuracy_mean"]) > 0.8
        assert 0.8 < float(row["roc_auc_mean"]) <= 1.0
        assert row["n_folds"] == "3"
        assert 1 <= float(row["rounds_mean"]) <= 10
    for name in ("results.csv", "results.md", "roc.json"):
        assert (output / name).stat().st_size > 0
    assert not list(output.glob("*.png"))  # --no-plots
    # The table's ROC AUC is the mean of the per-fold AUCs saved for plotting.
    roc = json.loads((output / "roc.json").read_text())
    fold_aucs = [f["auc"] for f in roc["algorithms"]["adaboost"]["folds"]]
    assert np.mean(fold_aucs) == pytest.approx(float(results["adaboost"]["roc_auc_mean"]))


def test_compare_draws_the_figures_next_to_the_table(capsys, tmp_path, small_csv):
    image = pytest.importorskip("matplotlib.image")
    output = tmp_path / "out"
    status, out, err = run(
        capsys, "compare", str(small_csv), "--rounds", "12", "--folds", "3",
        "--algorithms", "adaboost,real-adaboost", "--output", str(output), "--no-progress",
    )
    assert status == 0, err
    # PR: one panel; ROC (full scale and log false-positive rate), learning curves, margins and
    # weights: two panels side by side;
    # each with a legend column (320 pixels) to the right of the axes.
    expected = {"roc.png": (480, 1600), "pr.png": (480, 960),
                "learning_curves.png": (480, 1600), "margins.png": (480, 1600)}
    for name, shape in expected.items():
        path = output / name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        pixels = image.imread(path)
        assert pixels.shape[:2] == shape
        assert pixels[..., :3].std() > 0.05  # something is drawn, not a blank canvas
        assert str(path) in out


def test_compare_without_matplotlib_skips_the_figures_and_says_why(capsys, tmp_path, small_csv,
                                                                    monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    output = tmp_path / "out"
    status, _, err = run(
        capsys, "compare", str(small_csv), "--rounds", "5", "--folds", "2",
        "--algorithms", "adaboost", "--output", str(output), "--no-progress",
    )
    assert status == 0
    assert "pip install 'boostkit[plot]'" in err and "figures were not drawn" in err
    assert (output / "results.sqlite").is_file()  # the results database and its exports
    assert sorted(p.name for p in output.iterdir() if not p.name.startswith("results.sqlite")) == [
        "cells.csv", "curves.csv", "results.csv", "results.md", "roc.json"]


def test_compare_one_vs_rest_with_positive(capsys, tmp_path, small_csv):
    rows = list(csv.reader(small_csv.open()))
    for i, row in enumerate(rows[1:]):
        row[-1] = ("a", "b", "c")[i % 3] if row[-1] == "no" else row[-1]
    three = tmp_path / "three.csv"
    with open(three, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    # Without --positive the four classes are compared as multiclass (tests/test_cli_multiclass.py).
    status, out, err = run(
        capsys, "compare", str(three), "--rounds", "5", "--folds", "2", "--algorithms", "adaboost",
        "--no-progress", "--output", str(tmp_path / "multiclass"), "--no-plots",
    )
    assert status == 0, err
    assert "4 classes ('a': " in out and "one-vs-rest" in out
    status, out, err = run(
        capsys, "compare", str(three), "--positive", "yes", "--rounds", "5", "--folds", "2",
        "--algorithms", "adaboost", "--no-progress", "--output", str(tmp_path / "ovr"),
        "--no-plots",
    )
    assert status == 0, err
    assert "positive class 'yes'" in out and "'rest'" in out


def test_compare_prints_one_line_per_fit_without_tqdm(capsys, tmp_path, small_csv, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `import tqdm` now raises ImportError
    status, _, err = run(
        capsys, "compare", str(small_csv), "--rounds", "5", "--folds", "2",
        "--algorithms", "adaboost,real-adaboost", "--output", str(tmp_path), "--no-plots",
    )
    assert status == 0
    assert "pip install 'boostkit[progress]'" in err
    progress = [line for line in err.splitlines() if line.startswith("[")]
    # The study's cells, algorithm by algorithm: dataset, algorithm, resample, repeat, fold, seed.
    assert progress == [
        "[1/4] small.csv adaboost 2-fold repeat 0 fold 0 seed 0: done",
        "[2/4] small.csv adaboost 2-fold repeat 0 fold 1 seed 0: done",
        "[3/4] small.csv real-adaboost 2-fold repeat 0 fold 0 seed 0: done",
        "[4/4] small.csv real-adaboost 2-fold repeat 0 fold 1 seed 0: done",
    ]


def test_round_progress_follows_the_rounds_of_a_fit():
    class Bar:
        postfix = []

        def set_postfix_str(self, text):
            self.postfix.append(text)

    ds = boostkit.datasets.load("ionosphere")
    bar = Bar()
    boostkit.Booster("adaboost", n_rounds=7, observers=[RoundProgress(bar, "fit")]).fit(ds.X, ds.y)
    assert bar.postfix[0] == "fit round 1/7"
    assert bar.postfix[-1] == "fit round 7/7"  # the last round is always shown
    pytest.importorskip("tqdm")
    stream = io.StringIO()
    boostkit.Booster("adaboost", n_rounds=7, observers=[RoundProgress(stream=stream)]).fit(ds.X, ds.y)
    assert "rounds:   0%" in stream.getvalue() and "0/7" in stream.getvalue()  # its own bar


def test_round_progress_without_a_bar_needs_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    ds = boostkit.datasets.load("ionosphere")
    with pytest.raises(boostkit.HookError, match=r"pip install 'boostkit\[progress\]'"):
        boostkit.Booster("adaboost", n_rounds=2, observers=[RoundProgress()]).fit(ds.X, ds.y)


def test_recipes_lists_every_named_recipe_with_its_components_and_paper(capsys):
    status, out, _ = run(capsys, "recipes")
    assert status == 0
    lines = out.splitlines()
    registry = boostkit.get_registry()
    for name, recipe in registry.algorithms().items():
        (index,) = [i for i, line in enumerate(lines) if line.split()[:1] == [name]]
        assert recipe.paper in lines[index]
        assert lines[index + 1].strip() == recipe.to_string()
    status, out, _ = run(capsys, "recipes", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["weightboost"]["recipe"].startswith("proposal=tree")
    assert rows["weightboost"]["calibration_wrappers"][0]["name"] == "input-dependent"
    # Each listed recipe string reads back as the same recipe.
    for name, row in rows.items():
        assert registry.resolve(row["recipe"]).to_string() == row["recipe"]


def test_components_lists_roles_and_capabilities(capsys):
    status, out, _ = run(capsys, "components", "--role", "calibration")
    assert status == 0
    table = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert set(table) == set(boostkit.get_registry().components("calibration"))
    assert "sign-scores" in table["constant-alpha"].split("calibration")[1]
    status, out, _ = run(capsys, "components", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["stump"]["provides"] == ("categorical-features, cells, distributed, missing-values, "
                                         "multiclass, real-scores, sign-scores, two-cells")
    assert rows["input-dependent"]["needs"] == "running-margin"
    status, _, err = run(capsys, "components", "--role", "nothing")
    assert status == 2 and "no component has role 'nothing'" in err


def test_compare_runs_composed_recipes_next_to_named_algorithms(capsys, tmp_path):
    output = tmp_path / "out"
    status, out, err = run(
        capsys, "compare", "--dataset", "ionosphere", "--rounds", "10", "--folds", "3",
        "--algorithms", "weightboost",
        "--recipe", "weightboost calibration=pav+input-dependent(beta=0.5) name=pav-weightboost",
        "--recipe", "proposal=stump+picky(gamma_bar=0.05) calibration=asymmetric-beta "
                    "reweighting=stratification name=picky-ada2boost",
        "--output", str(output), "--no-progress", "--no-plots",
    )
    assert status == 0, err
    results = read_results(output)
    assert list(results) == ["weightboost", "pav-weightboost", "picky-ada2boost"]
    assert results["pav-weightboost"]["paper"] == ""
    for row in results.values():
        assert float(row["accuracy_mean"]) > 0.8


@pytest.mark.parametrize("recipe, message", [
    ("proposal=cmass calibration=constant-alpha reweighting=exponential",
     "calibration 'constant-alpha' needs hypotheses with values in {-1, +1}"),
    ("proposal=stump calibration=pav(bins=-3) reweighting=exponential", "bad parameters for 'pav'"),
    ("proposal=stump calibration=pav", "needs a reweighting"),
])
def test_compare_refuses_a_bad_recipe_before_reading_data(capsys, tmp_path, recipe, message):
    status, _, err = run(capsys, "compare", "{tmp}/absent.csv".format(tmp=tmp_path), "--recipe",
                         recipe, "--no-progress", "--output", str(tmp_path / "o"))
    assert status == 2
    assert message in err  # not the missing file: the recipe is checked first
    assert not (tmp_path / "o").exists()


def test_compare_refuses_two_recipes_with_one_name(capsys, tmp_path):
    status, _, err = run(capsys, "compare", "--recipe", "adaboost stopping= name=a",
                         "--recipe", "real-adaboost name=a", "--output", str(tmp_path / "o"))
    assert status == 2 and "same name" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--algorithms", "adaboost,nope"], "unknown algorithm(s) nope; registered: "),
        (["--dataset", "no-such-data"], "unknown dataset 'no-such-data'; available:"),
        (["{csv}", "--target", "missing"], "target column 'missing' is not in"),
        (["{tmp}/absent.csv"], "absent.csv: no such file"),
        (["{tmp}/binary.csv.gz"], "cannot read"),
        (["{csv}", "--positive", "maybe"], "--positive 'maybe' is not a label"),
        (["{csv}", "--folds", "100"], "pass a smaller --folds"),
        (["{csv}", "--dataset", "ionosphere"], "either a CSV file or --dataset"),
    ],
)
def test_compare_user_errors_exit_2_with_a_message(capsys, tmp_path, small_csv, argv, message):
    (tmp_path / "binary.csv.gz").write_bytes(b"\x00\x01not gzip")
    argv = [a.format(csv=small_csv, tmp=tmp_path) for a in argv]
    status, _, err = run(capsys, "compare", *argv, "--no-progress", "--output", str(tmp_path / "o"))
    assert status == 2
    last_line = err.strip().splitlines()[-1]
    assert last_line.startswith("boostkit compare: error:")
    assert message in last_line
    if "registered:" in message:  # the list of registered names includes the first-party ones
        assert "adaboost" in last_line.split("registered:")[1]
    assert not (tmp_path / "o").exists()


def test_unknown_algorithm_with_autoload_off_says_autoload_is_off_and_how_to_load(
        capsys, monkeypatch, fresh_plugins, tmp_path):
    monkeypatch.setenv("BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD", "1")
    status, _, err = run(capsys, "compare", "--algorithms", "adaboost", "--no-progress",
                         "--output", str(tmp_path / "o"))
    assert status == 2
    assert "unknown algorithm(s) adaboost" in err
    assert "registered: ," not in err and not err.rstrip().endswith("registered:")
    assert "autoload is off" in err and "BOOSTKIT_PLUGINS" in err
    with pytest.raises(boostkit.RecipeError) as caught:
        boostkit.Booster("adaboost").fit(np.zeros((4, 1)), [0, 1, 0, 1])
    message = str(caught.value)
    assert "unknown algorithm 'adaboost'" in message
    assert "autoload is off" in message and "BOOSTKIT_PLUGINS" in message
    assert "installed: adaboost" in message


def test_bad_option_values_are_usage_errors(capsys):
    status, _, err = run(capsys, "compare", "--folds", "1")
    assert status == 2
    assert "--folds: expected an integer >= 2, got 1" in err


# -- the installed console script ---------------------------------------------------------------


def _console_script() -> str | None:
    beside_python = Path(sys.executable).parent / "boostkit"
    return str(beside_python) if beside_python.exists() else shutil.which("boostkit")


def test_console_script_entry_point(tmp_path):
    script = _console_script()
    if script is None:
        pytest.skip("the boostkit console script is not installed")
    done = subprocess.run([script, "plugins", "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "adaboost" in {p["name"] for p in json.loads(done.stdout)}
    failed = subprocess.run(
        [script, "compare", "--algorithms", "nope", "--output", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert failed.returncode == 2
    assert "unknown algorithm(s) nope" in failed.stderr and "Traceback" not in failed.stderr


def test_the_cli_does_not_import_optional_extras_at_start():
    """`boostkit plugins` must start fast: tqdm, scikit-learn, matplotlib load only when used."""
    code = (
        "import sys, boostkit.cli; "
        "print(','.join(m for m in ('tqdm', 'sklearn', 'matplotlib') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


# -- export -------------------------------------------------------------------------------------


@pytest.fixture
def fake_onnx(monkeypatch):
    """A stand-in ``boostkit.onnx`` whose ``export_file`` writes its call to the output, or
    raises the error set in ``calls["raise"]``."""
    import types

    calls: dict = {}

    def export_file(model_path, output, *, format="onnx"):
        if "raise" in calls:
            raise calls["raise"]
        calls["args"] = (model_path, output, format)
        Path(output).write_text("graph", encoding="utf-8")

    module = types.ModuleType("boostkit.onnx")
    module.export_file = export_file
    monkeypatch.setitem(sys.modules, "boostkit.onnx", module)
    return calls


def test_export_calls_export_file_and_prints_the_path_written(capsys, tmp_path, fake_onnx):
    output = tmp_path / "model.onnx"
    status, out, _ = run(capsys, "export", "model.bkm", "--format", "onnx", "-o", str(output))
    assert status == 0
    assert fake_onnx["args"] == ("model.bkm", str(output), "onnx")
    assert out.strip() == str(output) and output.read_text() == "graph"


@pytest.mark.parametrize("error", [
    ValueError("the term 3 (pav over a projection) has no tree form"),
    boostkit.errors.DataError("the term 3 (pav over a projection) has no tree form"),
    OSError("the term 3 (pav over a projection) has no tree form"),
])
def test_export_errors_are_one_line_and_status_2(capsys, tmp_path, fake_onnx, error):
    fake_onnx["raise"] = error
    status, out, err = run(capsys, "export", "m.bkm", "-o", str(tmp_path / "m.onnx"))
    assert status == 2 and out == ""
    assert err.strip().splitlines() == [
        f"boostkit export: error: cannot export m.bkm to onnx: {type(error).__name__}: "
        "the term 3 (pav over a projection) has no tree form"]


def test_export_needs_an_output_and_knows_its_formats(capsys):
    assert run(capsys, "export", "m.bkm")[0] == 2
    status, _, err = run(capsys, "export", "m.bkm", "--format", "pmml", "-o", "m.pmml")
    assert status == 2 and "invalid choice: 'pmml'" in err

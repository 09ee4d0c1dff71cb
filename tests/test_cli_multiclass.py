"""``boostkit compare`` on three or more classes: native and one-vs-rest algorithms side by side,
stratified folds over every class, accuracy and macro ROC AUC, confusion matrices."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from boostkit.study.compare import MulticlassData, cross_validate, load_data
from boostkit.metrics import accuracy, confusion_matrix, macro_roc_auc
from cli_helpers import read_results, run


@pytest.fixture
def species_csv(tmp_path) -> Path:
    """120 rows of three string classes that two features separate, the label column first."""
    rng = np.random.default_rng(0)
    species = np.repeat(["setosa", "versicolor", "virginica"], 40)
    centre = {"setosa": (0.0, 0.0), "versicolor": (2.0, 0.0), "virginica": (1.0, 2.0)}
    points = np.array([centre[s] for s in species]) + 0.6 * rng.normal(size=(120, 2))
    path = tmp_path / "species.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["species", "width", "length", "noise"])
        for s, (w, l), z in zip(species, points, rng.normal(size=120)):
            writer.writerow([s, f"{w:.3f}", f"{l:.3f}", f"{z:.3f}"])
    return path


def test_compare_contraceptive_runs_native_and_one_vs_rest_with_confusion_matrices(capsys,
                                                                                     tmp_path):
    image = pytest.importorskip("matplotlib.image")
    output = tmp_path / "out"
    status, out, err = run(
        capsys, "compare", "--dataset", "contraceptive", "--algorithms", "adaboost-mh,adaboost",
        "--rounds", "8", "--folds", "3", "--output", str(output), "--no-progress",
    )
    assert status == 0, err
    assert "contraceptive: 1473 rows, 9 features, target 'label', 3 classes " \
           "('1': 629, '2': 333, '3': 511)" in out
    header = next(line for line in out.splitlines() if line.startswith("algorithm"))
    assert header.split()[:3] == ["algorithm", "paper", "multiclass"]
    assert "macro ROC AUC" in header
    table = {line.split()[0]: line for line in out.splitlines() if line.startswith("adaboost")}
    assert "  native  " in table["adaboost-mh"] and "  one-vs-rest  " in table["adaboost"]
    assert "one-vs-rest = one binary model per class" in out  # the legend under the table

    results = read_results(output)
    assert list(results) == ["adaboost-mh", "adaboost"]
    assert [results[name]["multiclass"] for name in results] == ["native", "one-vs-rest"]
    for row in results.values():
        assert 0.45 < float(row["accuracy_mean"]) < 1.0  # the largest class is 629/1473 = 0.43
        assert 0.6 < float(row["macro_roc_auc_mean"]) < 1.0
        assert "roc_auc_mean" not in row
    assert "| multiclass |" in (output / "results.md").read_text()

    confusion = json.loads((output / "confusion.json").read_text())
    assert confusion["classes"] == ["1", "2", "3"]
    for name in results:
        matrix = np.array(confusion["algorithms"][name]["matrix"])
        assert matrix.sum(axis=1).tolist() == [629, 333, 511]  # every example once, by class
        assert np.trace(matrix) / matrix.sum() == pytest.approx(
            float(results[name]["accuracy_mean"]), abs=0.01)  # folds differ in size by one
    roc = json.loads((output / "roc.json").read_text())
    pooled = roc["algorithms"]["adaboost-mh"]["pooled"]
    assert list(pooled["classes"]) == ["1", "2", "3"]
    class_aucs = [curve["auc"] for curve in pooled["classes"].values()]
    assert pooled["macro_auc"] == pytest.approx(np.mean(class_aucs))
    fold_aucs = [f["macro_auc"] for f in roc["algorithms"]["adaboost-mh"]["folds"]]
    assert np.mean(fold_aucs) == pytest.approx(float(results["adaboost-mh"]["macro_roc_auc_mean"]))

    # One confusion matrix per algorithm; the two-class figures are skipped with a note.
    assert sorted(p.name for p in output.glob("*.png")) == [
        "confusion_adaboost-mh.png", "confusion_adaboost.png"]
    assert "drawn for two classes only" in err
    for path in output.glob("*.png"):
        pixels = image.imread(path)
        assert pixels.shape[:2] == (480, 640)
        assert pixels[..., :3].std() > 0.05
        assert str(path) in out


def test_cross_validate_a_multiclass_csv_by_the_function_api(species_csv):
    data = load_data(str(species_csv), "species", None, None)
    assert isinstance(data, MulticlassData)
    assert data.classes == ("setosa", "versicolor", "virginica")
    assert data.features.names == ("width", "length", "noise")
    results = cross_validate(data, ["samme", "real-adaboost", "rankboost"], n_rounds=6, n_folds=4,
                             seed=0, max_bins=32, n_jobs=1, progress=False)
    assert [r.multiclass for r in results] == ["native", "native", "one-vs-rest"]
    classes = np.array(data.classes)
    for result in results:
        test_labels = [Counter(fold.y_test.tolist()) for fold in result.folds]
        assert all(counts == {c: 10 for c in classes} for counts in test_labels)  # stratified
        for fold in result.folds:
            assert fold.scores.shape == (30, 3) and fold.predictions.shape == (30,)
            assert fold.accuracy == accuracy(fold.y_test, fold.predictions)
            assert fold.roc_auc == macro_roc_auc(fold.y_test, fold.scores, classes)
            assert fold.train_curve is None and fold.final_weights is None
        matrix = confusion_matrix(result.pooled("y_test"), result.pooled("predictions"))
        assert matrix.sum(axis=1).tolist() == [40, 40, 40]
        assert result.summary()["accuracy_mean"] > 0.7


def test_compare_a_multiclass_csv_by_target_column(capsys, tmp_path, species_csv):
    output = tmp_path / "out"
    status, out, err = run(
        capsys, "compare", str(species_csv), "--target", "species", "--algorithms", "samme",
        "--rounds", "5", "--folds", "3", "--output", str(output), "--no-progress", "--no-plots",
    )
    assert status == 0, err
    assert "species.csv: 120 rows, 3 features, target 'species', 3 classes" in out
    assert sorted(p.name for p in output.iterdir() if not p.name.startswith("results.sqlite")) == [
        "cells.csv", "confusion.json", "curves.csv", "results.csv", "results.md", "roc.json"]


def test_positive_turns_multiclass_data_into_one_label_against_the_rest(capsys, tmp_path):
    status, out, err = run(
        capsys, "compare", "--dataset", "contraceptive", "--positive", "2", "--algorithms",
        "adaboost", "--rounds", "3", "--folds", "2", "--output", str(tmp_path), "--no-progress",
        "--no-plots",
    )
    assert status == 0, err
    assert "positive class '2' (333 positive, 1140 'rest')" in out
    assert "multiclass" not in read_results(tmp_path)["adaboost"]


def test_multiclass_user_errors(capsys, tmp_path, species_csv):
    rows = list(csv.reader(species_csv.open()))
    one = tmp_path / "one.csv"
    with open(one, "w", newline="") as fh:
        csv.writer(fh).writerows([rows[0]] + [["setosa", *row[1:]] for row in rows[1:]])
    status, _, err = run(capsys, "compare", str(one), "--target", "species", "--no-progress",
                         "--output", str(tmp_path / "o"))
    assert status == 2
    assert "has a single class ['setosa']: a comparison needs two or more" in err
    status, _, err = run(capsys, "compare", str(species_csv), "--target", "species",
                         "--folds", "41", "--no-progress", "--output", str(tmp_path / "o"))
    assert status == 2
    assert "class 'setosa' has only 40 example(s)" in err and "pass a smaller --folds" in err
    assert not (tmp_path / "o").exists()

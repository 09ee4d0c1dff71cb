"""``boostkit compare`` is the one-dataset study: its fits are the cells of a results database in
its output directory (the study's folds, what the figures need kept beside each cell), a rerun
computes only the cells missing, and the database's exports are written as a study's are."""

from __future__ import annotations

import sys

import attrs
import numpy as np
import pandas as pd
import pytest

import boostkit
from boostkit.study import ResultStore, StudySpec
from boostkit.study.compare import load_data
from boostkit.study.spec import Resampling
from cli_helpers import read_results, run

FAST = ("--dataset", "ionosphere", "--rounds", "5", "--folds", "2", "--no-plots")


def progress_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("[")]


def test_a_rerun_computes_only_the_cells_missing(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # one line per cell computed
    output = tmp_path / "out"
    status, _, err = run(capsys, "compare", *FAST, "--algorithms", "adaboost,real-adaboost",
                         "--output", str(output))
    assert status == 0, err
    assert len(progress_lines(err)) == 4
    first = read_results(output)
    status, _, err = run(capsys, "compare", *FAST, "--output", str(output),
                         "--algorithms", "adaboost,real-adaboost,gentle-adaboost")
    assert status == 0, err
    assert [line.split(":")[0] for line in progress_lines(err)] == [
        "[1/2] ionosphere gentle-adaboost 2-fold repeat 0 fold 0 seed 0",
        "[2/2] ionosphere gentle-adaboost 2-fold repeat 0 fold 1 seed 0"]
    again = read_results(output)
    assert again["adaboost"] == first["adaboost"]  # read back from the database, not refitted
    cells = pd.read_csv(output / "cells.csv")
    assert sorted(set(cells["algorithm"])) == ["adaboost", "gentle-adaboost", "real-adaboost"]
    assert len(cells) == 6 and (cells["status"] == "done").all()
    for name, row in again.items():  # the table's means are those of the cells
        mine = cells[cells["algorithm"] == name]
        assert float(row["accuracy_mean"]) == pytest.approx(mine["accuracy"].mean())
        assert float(row["roc_auc_mean"]) == pytest.approx(mine["roc_auc"].mean())
    assert len(pd.read_csv(output / "curves.csv")) > 0


def test_the_cells_keep_what_the_figures_need_on_the_studys_folds(capsys, tmp_path):
    output = tmp_path / "out"
    status, _, err = run(capsys, "compare", *FAST, "--algorithms", "adaboost",
                         "--output", str(output))
    assert status == 0, err
    data = load_data(None, None, "ionosphere", None).study_data()
    folds = Resampling("k-fold", 2).split(data.y, "ionosphere", data.data_hash, 0, 0)
    with ResultStore(output / "results.sqlite", readonly=True) as store:
        rows, kept = store.rows(), store.kept()
    assert [(row["algorithm"], row["fold"], row["status"]) for row in rows] == [
        ("adaboost", 0, "done"), ("adaboost", 1, "done")]
    for row, (train, test) in zip(rows, folds):
        values = kept[("ionosphere", "adaboost", "2-fold", 0, row["fold"], 0)]
        np.testing.assert_array_equal(values["y_test"], data.y[test])
        assert values["scores"].shape == test.shape
        assert values["train_error"].shape == values["test_auc"].shape == (row["rounds"],)
        assert values["train_margins"].shape == train.shape
        assert values["final_weights"].shape == train.shape
        assert values["final_weights"].sum() == pytest.approx(train.shape[0])  # n D(i)
        accuracy = np.mean(np.where(values["scores"] > 0, 1.0, -1.0) == data.y[test])
        assert row["accuracy"] == pytest.approx(accuracy)


def test_other_settings_start_the_database_anew(capsys, tmp_path):
    output = tmp_path / "out"
    assert run(capsys, "compare", *FAST, "--algorithms", "adaboost",
               "--output", str(output))[0] == 0
    status, _, err = run(capsys, "compare", "--dataset", "ionosphere", "--rounds", "3",
                         "--folds", "2", "--no-plots", "--algorithms", "adaboost",
                         "--output", str(output))
    assert status == 0, err
    assert "held the cells of another comparison (other rounds)" in " ".join(err.split())
    with ResultStore(output / "results.sqlite", readonly=True) as store:
        assert [row["rounds"] for row in store.rows()] == [3, 3]


@attrs.define
class FailsWhileBroken(boostkit.Stopping):
    """A stopping rule that raises in round 2 while ``broken``: a plugin bug, then its fix."""

    name = "fails-while-broken"
    broken = True

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        if record.round == 2 and FailsWhileBroken.broken:
            raise ZeroDivisionError("planted failure")
        return None


def test_a_rerun_fits_the_failed_cells_again(capsys, tmp_path, monkeypatch, in_process_plugin):
    in_process_plugin("fails-while-broken", components=[FailsWhileBroken])
    monkeypatch.setitem(sys.modules, "tqdm", None)
    argv = ("compare", *FAST, "--algorithms", "adaboost", "--recipe",
            "adaboost stopping+=fails-while-broken name=mine", "--output", str(tmp_path))
    status, _, err = run(capsys, *argv)
    assert status == 1 and read_results(tmp_path)["mine"]["status"] == "failed"
    monkeypatch.setattr(FailsWhileBroken, "broken", False)  # the plugin's author fixes it
    status, _, err = run(capsys, *argv)
    assert status == 0, err
    assert [line.split(":")[0] for line in progress_lines(err)] == [
        "[1/2] ionosphere mine 2-fold repeat 0 fold 0 seed 0",
        "[2/2] ionosphere mine 2-fold repeat 0 fold 1 seed 0"]  # adaboost's cells are kept
    assert read_results(tmp_path)["mine"]["status"] == "done"


def test_keep_scores_is_a_study_key_of_its_own_type(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text('datasets = ["iris"]\nalgorithms = ["adaboost"]\nkeep_scores = true\n')
    assert StudySpec.from_toml(path).keep_scores is True
    assert StudySpec(datasets=["a"], algorithms=["adaboost"]).keep_scores is False
    with pytest.raises(TypeError, match="keep_scores"):
        StudySpec(datasets=["a"], algorithms=["adaboost"], keep_scores="yes")


def test_kept_arrays_round_trip_with_their_cell(tmp_path):
    import sqlite3

    row = {"dataset": "d", "algorithm": "a", "resample": "2-fold", "repeat": 0, "fold": 0,
           "seed": 0, "recipe": "r", "status": "done", "data_hash": "h"}
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        store.write_cell(row)  # a cell without kept arrays, as a study writes
        store.write_cell({**row, "fold": 1}, kept={"scores": np.array([0.5, -1.0]),
                                                   "y_test": np.array(["b", "g"])})
    with ResultStore(path, readonly=True) as store:
        kept = store.kept()
    assert list(kept) == [("d", "a", "2-fold", 0, 1, 0)]
    values = kept[("d", "a", "2-fold", 0, 1, 0)]
    np.testing.assert_array_equal(values["scores"], [0.5, -1.0])
    assert values["y_test"].tolist() == ["b", "g"]
    # A database written before the kept table: read as keeping nothing, given one on writing.
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE kept")
    with ResultStore(path, readonly=True) as store:
        assert store.kept() == {} and len(store.rows()) == 2
    with ResultStore(path) as store:
        store.write_cell({**row, "fold": 2}, kept={"n_terms": np.array(3)})
        assert int(store.kept()[("d", "a", "2-fold", 0, 2, 0)]["n_terms"]) == 3


@pytest.mark.slow
def test_worker_processes_give_the_serial_cells(capsys, tmp_path):
    columns = ["algorithm", "fold", "accuracy", "roc_auc", "rounds", "prediction_hash"]
    frames = []
    for jobs in ("1", "2"):
        output = tmp_path / jobs
        status, _, err = run(capsys, "compare", *FAST, "--algorithms", "adaboost,samme",
                             "--n-jobs", jobs, "--output", str(output))
        assert status == 0, err
        frames.append(pd.read_csv(output / "cells.csv")[columns])
        assert read_results(output)["adaboost"]["status"] == "done"
    pd.testing.assert_frame_equal(frames[0], frames[1])

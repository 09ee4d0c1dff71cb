"""``boostkit study``: a thin layer over the study API, with one-line errors for bad input."""

from __future__ import annotations

import csv

import attrs
import numpy as np
import pandas as pd
import pytest

import boostkit
from boostkit.cli import main
from boostkit.errors import DataError
from boostkit.study import ResultStore

FAST = ("--folds", "2", "--rounds", "3", "--no-progress")


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def write_csv(path, n_classes, seed, target="label"):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(40, 2))
    label = np.array([f"k{i % n_classes}" for i in range(40)])
    x[:, 0] += np.arange(40) % n_classes
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["a", "b", target])
        writer.writerows([f"{u:.4f}", f"{v:.4f}", l] for (u, v), l in zip(x, label))


@pytest.fixture
def csv_dir(tmp_path):
    directory = tmp_path / "data"
    directory.mkdir()
    write_csv(directory / "two.csv", 2, 0)
    write_csv(directory / "three.csv", 3, 1)
    return directory


def test_a_study_of_a_directory_of_csv_files_writes_and_resumes(capsys, csv_dir, tmp_path):
    out_dir = tmp_path / "out"
    argv = ("study", "--datasets", str(csv_dir), "--algorithms", "adaboost,real-adaboost",
            *FAST, "--output", str(out_dir))
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    assert "8 cells computed now, 0 finished before" in " ".join(out.split())
    cells = pd.read_csv(out_dir / "cells.csv")
    assert set(cells["dataset"]) == {"csv/two", "csv/three"}
    assert len(cells) == 8 and (cells["status"] == "done").all()
    with ResultStore(out_dir / "study.sqlite", readonly=True) as store:
        assert len(store.rows()) == 8
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    assert "0 cells computed now, 8 finished before" in " ".join(out.split())


def test_a_study_file_with_flags_over_it(capsys, csv_dir, tmp_path):
    config = tmp_path / "study.toml"
    config.write_text(f'datasets = ["{csv_dir / "two.csv"}"]\nalgorithms = ["adaboost"]\n'
                      'folds = 3\nrounds = 2\noutput = "from-file"\n', encoding="utf-8")
    status, out, err = run(capsys, "study", "--config", str(config), "--folds", "2",
                           "--no-progress")
    assert status == 0, err
    cells = pd.read_csv(tmp_path / "from-file" / "cells.csv")
    assert cells["resample"].unique().tolist() == ["2-fold"] and len(cells) == 2


@pytest.mark.parametrize("argv, words", [
    (("--algorithms", "adaboost,no-such-boost"), "no-such-boost"),
    (("--algorithms", "adaboost", "--suite", "no-such-suite"), "dataset 'no-such-suite'"),
    (("--algorithms", "adaboost", "--datasets", "no-such-dataset"), "dataset 'no-such-dataset'"),
    (("--algorithms", "adaboost", "--target", "class"), "target column 'class' is not in"),
    (("--algorithms", "adaboost", "--baseline", "samme"), "baseline 'samme' is not among"),
])
def test_bad_input_is_one_line_and_status_2(capsys, csv_dir, tmp_path, argv, words):
    status, out, err = run(capsys, "study", "--datasets", str(csv_dir / "two.csv"), *argv,
                           *FAST, "--output", str(tmp_path / "out"))
    assert status == 2
    assert err.startswith("boostkit study: error:") and words in err
    assert len(err.strip().splitlines()) == 1


def test_a_study_file_with_an_unknown_key(capsys, tmp_path):
    config = tmp_path / "study.toml"
    config.write_text('datasets = ["keel"]\nalgorithms = ["adaboost"]\nfold = 3\n',
                      encoding="utf-8")
    status, out, err = run(capsys, "study", "--config", str(config))
    assert status == 2
    assert "unknown key(s) ['fold']; valid keys: datasets, algorithms" in err


def test_a_database_another_study_writes_is_refused(capsys, csv_dir, tmp_path):
    database = tmp_path / "busy.sqlite"
    with ResultStore(database):
        status, out, err = run(capsys, "study", "--datasets", str(csv_dir), "--algorithms",
                               "adaboost", *FAST, "--db", str(database), "--output",
                               str(tmp_path / "out"))
    assert status == 2
    assert "is being written by process" in err


def test_a_cell_that_fails_is_recorded_and_the_status_says_so(capsys, csv_dir, tmp_path,
                                                              in_process_plugin):
    from test_runner import FailsOnFiveFeatures

    in_process_plugin("fails-on-five", components=[FailsOnFiveFeatures])
    write_csv(csv_dir / "five.csv", 2, 3)
    frame = pd.read_csv(csv_dir / "five.csv")
    for name in ("c", "d", "e"):
        frame.insert(0, name, np.arange(len(frame)) % 7)
    frame.to_csv(csv_dir / "five.csv", index=False)
    out_dir = tmp_path / "out"
    status, out, err = run(capsys, "study", "--datasets", str(csv_dir), "--algorithms",
                           "adaboost,adaboost stopping+=fails-on-five-features name=breaks",
                           *FAST, "--output", str(out_dir))
    assert status == 1
    assert "2 cell(s) failed" in err
    cells = pd.read_csv(out_dir / "cells.csv")
    failed = cells[cells["status"] == "failed"]
    assert set(failed["dataset"]) == {"csv/five"} and set(failed["algorithm"]) == {"breaks"}
    assert failed["error"].str.contains("planted failure").all()
    assert (cells[cells["dataset"] != "csv/five"]["status"] == "done").all()


@attrs.define
class RefusesFiveFeatures(boostkit.Stopping):
    """A recipe that refuses data of five features (a DataError): its cells ``cannot run``."""

    name = "refuses-five-features"

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        if state.data.X.shape[1] == 5:
            raise DataError("five features are more than this recipe takes")
        return None


def _five_feature_csv(path):
    write_csv(path, 2, 3)
    frame = pd.read_csv(path)
    for name in ("c", "d", "e"):
        frame.insert(0, name, np.arange(len(frame)) % 7)
    frame.to_csv(path, index=False)


def test_cells_that_cannot_run_are_an_outcome_not_an_error(capsys, csv_dir, tmp_path,
                                                           in_process_plugin):
    # As `boostkit compare`: "cannot run" (with its reason) exits 0, only "failed" exits 1.
    in_process_plugin("refuses-five", components=[RefusesFiveFeatures])
    _five_feature_csv(csv_dir / "five.csv")
    out_dir = tmp_path / "out"
    status, out, err = run(capsys, "study", "--datasets", str(csv_dir), "--algorithms",
                           "adaboost,adaboost stopping+=refuses-five-features name=picky",
                           *FAST, "--output", str(out_dir))
    assert status == 0, err
    assert "2 cell(s) cannot run" in " ".join(out.split())
    cells = pd.read_csv(out_dir / "cells.csv")
    refused = cells[cells["status"] == "cannot run"]
    assert set(refused["dataset"]) == {"csv/five"} and set(refused["algorithm"]) == {"picky"}
    assert refused["error"].str.contains("five features are more than this recipe takes").all()
    assert (cells[cells["status"] != "cannot run"]["status"] == "done").all()


def test_a_study_in_which_no_cell_can_run_exits_1(capsys, tmp_path, in_process_plugin):
    in_process_plugin("refuses-five", components=[RefusesFiveFeatures])
    _five_feature_csv(tmp_path / "five.csv")
    status, out, err = run(capsys, "study", "--datasets", str(tmp_path / "five.csv"),
                           "--algorithms", "adaboost stopping+=refuses-five-features name=picky",
                           *FAST, "--output", str(tmp_path / "out"))
    assert status == 1
    assert "no cell could run" in err

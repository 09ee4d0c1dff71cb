"""``boostkit compare`` keeps finished work: an algorithm that cannot run on the data is found
before the fits start, one that fails during its fits is recorded as failed with its error, an
interrupted run writes what finished, and a continuous target is refused for what it is."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import attrs
import numpy as np
import pytest

import boostkit
import boostkit.plot
from cli_helpers import read_results, run

# RankBoost over explicit pairs with a budget too small for the CSV's 90 x 60 pairs: the same
# refusal as rankboost-pairs on adult (277 889 676 pairs), in a second.
TINY_PAIRS = "rankboost-pairs reweighting=preference-pairs(max_pairs=10) name=tiny-pairs"
FAST = ("--rounds", "3", "--folds", "2", "--no-progress", "--no-plots")


@pytest.fixture
def two_class_csv(tmp_path) -> Path:
    rng = np.random.default_rng(1)
    n = 150
    x = rng.normal(size=(n, 2))
    label = np.where(x[:, 0] + 0.3 * rng.normal(size=n) > 0.2, "yes", "no")
    path = tmp_path / "two.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["a", "b", "label"])
        writer.writerows([f"{u:.4f}", f"{v:.4f}", l] for (u, v), l in zip(x, label))
    return path


def test_an_algorithm_that_cannot_run_is_found_before_the_fits_and_the_others_are_written(
        capsys, two_class_csv, tmp_path):
    out_dir = tmp_path / "out"
    status, out, err = run(capsys, "compare", str(two_class_csv), "--algorithms", "adaboost",
                           "--recipe", TINY_PAIRS, *FAST, "--output", str(out_dir))
    assert status == 0, err
    # Said before the fits start (the settings line), not after them (the table).
    said = out.index("tiny-pairs cannot run")
    assert said < out.index("stratified folds") or said < out.index("algorithm ")
    assert "max_pairs=10" in out
    rows = read_results(out_dir)
    assert float(rows["adaboost"]["accuracy_mean"]) > 0.7
    assert rows["tiny-pairs"]["status"] == "cannot run"
    assert "max_pairs=10" in rows["tiny-pairs"]["error"]
    assert rows["tiny-pairs"]["accuracy_mean"] == ""
    table = out[out.index("algorithm "):]
    assert any(line.startswith("tiny-pairs") and "cannot run" in line
               for line in table.splitlines())
    markdown = (out_dir / "results.md").read_text(encoding="utf-8")
    assert "tiny-pairs" in markdown and "max_pairs=10" in markdown
    roc = json.loads((out_dir / "roc.json").read_text(encoding="utf-8"))
    assert "pooled" in roc["algorithms"]["adaboost"]
    assert "max_pairs=10" in roc["algorithms"]["tiny-pairs"]["error"]


def test_when_no_algorithm_can_run_the_tables_say_why_and_no_figure_is_drawn(
        capsys, two_class_csv, tmp_path):
    out_dir = tmp_path / "out"
    status, out, err = run(capsys, "compare", str(two_class_csv), "--recipe", TINY_PAIRS,
                           "--rounds", "3", "--folds", "2", "--no-progress",
                           "--output", str(out_dir))
    assert status == 1 and "no algorithm could run" in err
    assert read_results(out_dir)["tiny-pairs"]["status"] == "cannot run"
    assert not (out_dir / "roc.png").exists()


def test_a_figure_that_cannot_be_drawn_loses_no_table(capsys, two_class_csv, tmp_path,
                                                       monkeypatch):
    pytest.importorskip("matplotlib")

    def broken(*args, **kwargs):
        raise ValueError("planted drawing error")

    monkeypatch.setattr(boostkit.plot, "margin_figure", broken)
    out_dir = tmp_path / "out"
    status, out, err = run(capsys, "compare", str(two_class_csv), "--algorithms", "adaboost",
                           "--rounds", "3", "--folds", "2", "--no-progress",
                           "--output", str(out_dir))
    assert status == 0
    assert "the figures were not drawn: ValueError: planted drawing error" in err
    assert float(read_results(out_dir)["adaboost"]["accuracy_mean"]) > 0.7
    assert not (out_dir / "roc.png").exists()


def test_the_input_note_names_only_algorithms_that_ran(capsys, tmp_path):
    rng = np.random.default_rng(2)
    path = tmp_path / "colours.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["x", "colour", "label"])
        writer.writerows([f"{v:.3f}", c, "yes" if v > 0 else "no"]
                         for v, c in zip(rng.normal(size=120), rng.choice(["red", "blue"], 120)))
    status, out, _ = run(capsys, "compare", str(path), "--algorithms", "adaboost,naive-bayes",
                         "--recipe", TINY_PAIRS, *FAST, "--output", str(tmp_path / "out"))
    assert status == 0
    note = " ".join(out.split()).split("input, on the same rows for all: ")[1].split(".")[0]
    assert "adaboost" in note and "naive-bayes" in note and "tiny-pairs" not in note


@attrs.define
class FailsInRoundTwo(boostkit.Stopping):
    """A stopping rule that raises in round 2 of every fit: a component bug met mid-fit."""

    name = "fails-in-round-two"

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        if record.round == 2:
            raise ZeroDivisionError("planted failure")
        return None


@attrs.define
class InterruptsInRoundTwo(boostkit.Stopping):
    """Ctrl-C pressed during a fit of the algorithm that uses it."""

    name = "interrupts-in-round-two"

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        if record.round == 2:
            raise KeyboardInterrupt
        return None


def test_a_fit_that_fails_is_recorded_as_failed_and_the_others_go_on(
        capsys, two_class_csv, tmp_path, in_process_plugin):
    in_process_plugin("fails-in-round-two", components=[FailsInRoundTwo])
    out_dir = tmp_path / "out"
    status, out, err = run(capsys, "compare", str(two_class_csv), "--recipe",
                           "adaboost stopping+=fails-in-round-two name=breaks", "--algorithms",
                           "adaboost,real-adaboost", *FAST, "--output", str(out_dir))
    assert status == 1  # a component failed: not a clean run, but its results are written
    rows = read_results(out_dir)
    assert rows["breaks"]["status"] == "failed"
    assert "ZeroDivisionError: planted failure" in rows["breaks"]["error"]
    assert "fails-in-round-two" in rows["breaks"]["error"]
    assert float(rows["adaboost"]["accuracy_mean"]) > 0.7
    assert float(rows["real-adaboost"]["accuracy_mean"]) > 0.7
    assert "breaks: failed" in " ".join(out.split())  # the note under the table, wrapped
    assert "planted failure" in " ".join(out.split())
    assert "failed" in err  # the error line says some algorithm failed


def test_ctrl_c_writes_the_algorithms_that_finished(capsys, two_class_csv, tmp_path,
                                                     in_process_plugin):
    in_process_plugin("interrupts-in-round-two", components=[InterruptsInRoundTwo])
    out_dir = tmp_path / "out"
    status, out, err = run(capsys, "compare", str(two_class_csv), "--algorithms", "adaboost",
                           "--recipe", "adaboost stopping+=interrupts-in-round-two name=ctrl-c",
                           "--recipe", "real-adaboost name=never-started",
                           *FAST, "--output", str(out_dir))
    assert status == 130
    assert "interrupted" in err
    rows = read_results(out_dir)
    assert float(rows["adaboost"]["accuracy_mean"]) > 0.7
    assert rows["ctrl-c"]["status"] == "interrupted"
    assert rows["never-started"]["status"] == "not run"


def test_a_continuous_target_is_refused_as_continuous_not_as_hundreds_of_classes(capsys,
                                                                                   tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "regression.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["a", "b", "price"])
        writer.writerows([f"{u:.4f}", f"{v:.4f}", f"{u * 3 + v:.6f}"]
                         for u, v in rng.normal(size=(545, 2)))
    status, out, err = run(capsys, "compare", str(path), *FAST,
                           "--output", str(tmp_path / "out"))
    assert status == 2
    assert "classif" in err and "continuous" in err and "'price'" in err
    assert len(err) < 1000  # not a line listing 545 "classes"
    assert "--folds" not in err


def test_the_data_line_names_at_most_twenty_classes():
    from boostkit.study.compare import MulticlassData
    from boostkit.features import FeatureSchema

    labels = np.array([f"{k:03d}" for k in range(545)] * 2)
    data = MulticlassData(name="many", X=np.zeros((1090, 1)), y=labels,
                          classes=tuple(np.unique(labels).tolist()), features=FeatureSchema(1),
                          target="code")
    line = data.describe()
    assert "545 classes" in line and "'019': 2, and 525 more" in line
    assert "'020'" not in line and len(line) < 600

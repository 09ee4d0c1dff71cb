"""``boostkit export MODEL --format onnx -o FILE``: in a subprocess, it writes the graph and
prints its path, or refuses a model it cannot convert; a refused model, an unknown format, a
missing model file or an unwritable output is one line on standard error, status 2, and no
file (those in-process, through ``boostkit.cli.main``)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx_checks import session

import boostkit
from boostkit.cli import main
from boostkit.datasets import load


def export(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "boostkit", "export", *map(str, argv)],
                          capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    data = load("breast_cancer_wisconsin", dropna=True)
    directory = tmp_path_factory.mktemp("export")
    fitted = {recipe: boostkit.Booster(recipe, n_rounds=5, random_state=0).fit(data.X, data.y)
              for recipe in ("real-adaboost", "pav-adaboost")}
    return directory, data.X, {recipe: model.save(directory / f"{recipe}.npz")
                               for recipe, model in fitted.items()}


def test_export_writes_the_graph(saved):
    directory, X, paths = saved
    done = export(paths["real-adaboost"], "--format", "onnx", "-o", "model.onnx",
                  cwd=directory)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "model.onnx"
    label, _, _ = session(onnx.load(directory / "model.onnx")).run(None, {"X": X})
    np.testing.assert_array_equal(
        label, boostkit.load_model(paths["real-adaboost"]).predict(X))


def test_export_refuses_a_model_without_tree_form(saved):
    directory, _, _ = saved
    before = sorted(os.listdir(directory))
    done = export("pav-adaboost.npz", "-o", "pav.onnx", cwd=directory)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "round 1: weak hypothesis 'projection'" in done.stderr
    assert sorted(os.listdir(directory)) == before


@pytest.mark.parametrize("argv, says", [
    (["real-adaboost.npz", "-o", os.path.join("missing", "m.onnx")], "No such file"),
    (["real-adaboost.npz", "--format", "pmml", "-o", "m.pmml"], "invalid choice: 'pmml'"),
    (["nothing.npz", "-o", "m.onnx"], "nothing.npz"),
])
def test_export_refusals_are_one_line(saved, argv, says, capsys, monkeypatch):
    directory, _, _ = saved
    monkeypatch.chdir(directory)
    before = sorted(os.listdir(directory))
    assert main(["export", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert sorted(os.listdir(directory)) == before

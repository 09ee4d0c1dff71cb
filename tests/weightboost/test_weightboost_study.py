"""The label-noise study (``python -m boostkit_weightboost.study``, Jin et al. 2003,
section 4.2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import boostkit
from boostkit_weightboost import study


def test_flip_labels_flips_exactly_the_requested_share():
    y = np.where(np.arange(200) % 3 == 0, 1.0, -1.0)
    flipped = study.flip_labels(y, 30, np.random.default_rng(0))
    assert np.sum(flipped != y) == 60 and set(np.unique(flipped)) <= {-1.0, 1.0}
    assert np.array_equal(y, np.where(np.arange(200) % 3 == 0, 1.0, -1.0))  # the input is kept
    assert np.array_equal(study.flip_labels(y, 0, np.random.default_rng(0)), y)


def test_folds_keep_bags_together():
    groups = np.repeat(np.arange(30), 4)
    y = np.where(groups % 2 == 0, 1.0, -1.0)
    data = study.StudyData("bags", np.zeros((120, 1)), y, groups)
    folds = study.study_folds(data, 5, seed=0)
    tested = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(tested), np.arange(120))
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])
        assert set(y[test]) == {-1.0, 1.0}


def test_the_test_labels_stay_clean():
    """With every training label flipped, a tree that learns anything errs on most of the
    clean test labels; were the test labels flipped too, it would err on few."""
    data = study.load_study_data("breast_cancer_wisconsin")
    results = study.run_study([data], algorithms=["Tree"], noise=[0, 100], n_folds=3,
                              progress=lambda message: None)
    errors = results["breast_cancer_wisconsin"]
    assert np.mean(errors[0]["Tree"]) < 10 and np.mean(errors[100]["Tree"]) > 90


def test_a_small_study_runs_and_prints_the_papers_table_layout(tmp_path, capsys):
    output = tmp_path / "ionosphere.json"
    assert study.main(["--datasets", "ionosphere", "--folds", "2", "--rounds", "3",
                       "--noise", "0,20", "--output", str(output)]) == 0
    printed = capsys.readouterr().out
    assert "2-fold cross-validation, 3 rounds, seed 0" in printed
    for rate in (0, 20):
        assert f"{rate} % of the training labels flipped" in printed
    assert printed.count("WeightBoost: lowest mean error") == printed.count("WB C_T: lowest mean error") == 2
    header = next(line for line in printed.splitlines() if "AdaBoost" in line and "Tree" in line)
    assert header.split() == ["Tree", "AdaBoost", "WeightBoost", "WB", "C_T", "eps-Boost", "WeightDecay"]
    # The paper's Table 2 row for ionosphere is printed under the results.
    assert any(line.split()[:3] == ["ionosphere", "9.1", "6.8"] for line in printed.splitlines())
    saved = json.loads(output.read_text())
    errors = saved["results"]["ionosphere"]
    assert set(errors) == {"0.0", "20.0"} and set(errors["0.0"]) == set(study.ALGORITHMS)
    assert all(len(v) == 2 and all(0 <= e <= 100 for e in v) for v in errors["20.0"].values())
    # --tables prints the same tables from the saved file without running anything.
    assert study.main(["--tables", str(output)]) == 0
    assert capsys.readouterr().out.split("\n", 1)[1] == printed.split("\n", 1)[1]


def test_unknown_algorithms_are_refused():
    with pytest.raises(ValueError, match="unknown algorithms"):
        study.run_study([], algorithms=["LogitBoost"])


needs_data_dir = pytest.mark.skipif(boostkit.datasets.data_dir() is None,
                                    reason="needs the data directory (BOOSTKIT_DATA)")


@needs_data_dir
def test_multi_class_and_text_datasets_are_skipped_unless_a_label_is_given(capsys):
    assert study.load_study_data("contraceptive") is None
    assert study.load_study_data("reuters_corn_train") is None
    assert "contraceptive:LABEL" in capsys.readouterr().err
    binary = study.load_study_data("contraceptive:1")
    assert binary.note == "1 vs rest" and set(binary.y) == {-1.0, 1.0}
    assert np.sum(binary.y > 0) == 629  # "no use" against the two methods of contraception
    with pytest.raises(ValueError, match="no label '9'"):
        study.load_study_data("contraceptive:9")


def test_a_noise_level_flips_the_same_labels_whatever_else_is_run():
    """The noise is seeded by the level itself, not by its place in --noise: a subset run
    gives exactly the rows of a larger run."""
    data = study.load_study_data("ionosphere")
    kwargs = dict(algorithms=["Tree", "AdaBoost"], n_folds=2, n_rounds=3, progress=lambda m: None)
    full = study.run_study([data], noise=[0, 10, 20, 30], **kwargs)["ionosphere"]
    for subset in ([20], [30, 10]):
        alone = study.run_study([data], noise=subset, **kwargs)["ionosphere"]
        assert alone == {rate: full[rate] for rate in subset}
    assert study.noise_seed(0, 1, 20) == study.noise_seed(0, 1, 20.0) != study.noise_seed(0, 1, 10)
    with pytest.raises(ValueError, match="percentages"):
        study.noise_seed(0, 0, -5)


def test_a_subset_run_prints_the_rows_of_the_full_run(tmp_path, capsys):
    common = ["--datasets", "ionosphere", "--folds", "2", "--rounds", "2", "--algorithms", "Tree,WB C_T"]
    full, alone = tmp_path / "full.json", tmp_path / "alone.json"
    assert study.main(common + ["--noise", "0,10,20,30", "--output", str(full)]) == 0
    assert study.main(common + ["--noise", "20", "--output", str(alone)]) == 0
    capsys.readouterr()
    full_errors = json.loads(full.read_text())["results"]["ionosphere"]
    assert json.loads(alone.read_text())["results"]["ionosphere"] == {"20.0": full_errors["20.0"]}


def test_the_help_gives_the_recipes_depth(capsys):
    from boostkit_weightboost import TREE

    depth = TREE[1]["max_depth"]
    assert study.recipe_depth() == depth
    with pytest.raises(SystemExit):
        study.main(["--help"])
    assert f"(default: the recipes', {depth})" in " ".join(capsys.readouterr().out.split())

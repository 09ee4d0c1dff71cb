"""StudySpec from flags and TOML files, and cells seeded by their key, not their place."""

from __future__ import annotations

import numpy as np
import pytest

from boostkit.study import Cell, Resampling, SpecError, StudySpec
from boostkit.study.spec import cell_seed


def spec(**changes):
    return StudySpec(**{"datasets": ["a"], "algorithms": ["adaboost"], **changes})


def test_resampling_names():
    assert Resampling.of("k-fold", 10).name == "10-fold"
    assert Resampling.of("k-fold", 10, 3).name == "3x10-fold"
    assert Resampling.of("repeated k-fold", 5, 2).name == "2x5-fold"
    fivetwo = Resampling.of("5x2cv")
    assert (fivetwo.name, fivetwo.folds, fivetwo.repeats) == ("5x2cv", 2, 5)


@pytest.mark.parametrize("changes, words", [
    (dict(datasets=[]), "at least one entry in datasets"),
    (dict(algorithms="adaboost,adaboost"), "distinct"),
    (dict(seeds=[1, 1]), "distinct"),
    (dict(seeds="1,x"), "integers"),
    (dict(n_rounds=0), "n_rounds must be an integer >= 1, got 0"),
    (dict(metric="f1"), "metric must be one of"),
    (dict(baseline="samme"), "baseline 'samme' is not among the algorithms"),
])
def test_bad_specs_name_the_argument(changes, words):
    with pytest.raises(SpecError, match=words.replace("(", r"\(")):
        spec(**changes)


def test_bad_resampling():
    with pytest.raises(SpecError, match=r"resampling must be one of \['k-fold'"):
        Resampling("leave-one-out")
    with pytest.raises(SpecError, match="folds must be an integer >= 2, got 1"):
        Resampling("k-fold", 1)
    with pytest.raises(SpecError, match="five repeats of two folds"):
        Resampling("5x2cv", 10, 5)


def test_flags_split_on_commas():
    s = spec(datasets="keel, spambase", algorithms="adaboost,real-adaboost", seeds="3,4")
    assert s.datasets == ("keel", "spambase")
    assert s.algorithms == ("adaboost", "real-adaboost")
    assert s.seeds == (3, 4)
    assert s.database_path.name == "study.sqlite"


def test_toml_study_file(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text(
        '[study]\ndatasets = ["keel"]\nalgorithms = ["adaboost", "real-adaboost"]\n'
        'resampling = "repeated k-fold"\nfolds = 5\nrepeats = 2\nseeds = [0, 1]\nrounds = 50\n'
        'baseline = "adaboost"\noutput = "out"\n', encoding="utf-8")
    s = StudySpec.from_toml(path)
    assert s.resampling.name == "2x5-fold"
    assert (s.seeds, s.n_rounds, s.baseline) == ((0, 1), 50, "adaboost")
    assert s.database_path == tmp_path / "out" / "study.sqlite"  # relative to the file
    assert StudySpec.from_toml(path, {"rounds": 7}).n_rounds == 7


def test_a_study_file_with_an_unknown_key_names_it_and_the_valid_keys(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text('datasets = ["keel"]\nalgorithms = ["adaboost"]\nfold = 5\n',
                    encoding="utf-8")
    with pytest.raises(SpecError, match=r"unknown key\(s\) \['fold'\]; valid keys: datasets, "
                                        r"algorithms, resampling, folds"):
        StudySpec.from_toml(path)


def test_a_study_file_that_is_not_toml_or_missing(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text("datasets = [keel\n", encoding="utf-8")
    with pytest.raises(SpecError, match="cannot read study file .* as TOML"):
        StudySpec.from_toml(path)
    with pytest.raises(SpecError, match="does not exist"):
        StudySpec.from_toml(tmp_path / "nope.toml")
    path.write_text('datasets = ["keel"]\n', encoding="utf-8")
    with pytest.raises(SpecError, match="gives no algorithms"):
        StudySpec.from_toml(path)


def test_cell_seeds_are_stable_hashes_of_the_key():
    assert cell_seed("folds", "a", "h", "10-fold", 0, 0) == cell_seed("folds", "a", "h",
                                                                      "10-fold", 0, 0)
    assert cell_seed("folds", "a", "h", "10-fold", 0, 0) != cell_seed("folds", "a", "h",
                                                                      "10-fold", 0, 1)
    # A fixed value: the seed must not change between Python processes or versions.
    assert cell_seed("x") == int.from_bytes(
        __import__("hashlib").sha256(b"x").digest()[:8], "little") >> 1


def test_cells_do_not_depend_on_the_rest_of_the_grid():
    """Adding datasets or algorithms adds cells and changes none: a cell's folds and its fit's
    random_state come from its key."""
    small = spec(datasets=["b"], algorithms=["adaboost"], seeds=[1])
    large = spec(datasets=["a", "b", "c"], algorithms=["samme", "adaboost"], seeds=[0, 1])
    small_cells = small.cells(["b"], [("adaboost", "r")])
    large_cells = large.cells(["a", "b", "c"], [("samme", "s"), ("adaboost", "r")])
    assert set(small_cells) <= set(large_cells)
    y = np.array(["x", "y"] * 20)
    for cell in small_cells:
        twin = next(c for c in large_cells if c.key == cell.key)
        assert cell.random_state("h") == twin.random_state("h")
    folds_small = small.resampling.split(y, "b", "h", 0, 1)
    folds_large = large.resampling.split(y, "b", "h", 0, 1)
    for (train_a, test_a), (train_b, test_b) in zip(folds_small, folds_large):
        np.testing.assert_array_equal(test_a, test_b)


def test_every_algorithm_of_a_fold_draws_the_same_randomness():
    a = Cell("d", "adaboost", "10-fold", 0, 3, 0)
    b = Cell("d", "samme", "10-fold", 0, 3, 0)
    assert a.random_state("h") == b.random_state("h")
    assert a.random_state("h") != Cell("d", "adaboost", "10-fold", 0, 4, 0).random_state("h")
    assert a.random_state("h") != a.random_state("other data")


def test_repeats_and_seeds_give_other_folds():
    r = Resampling.of("k-fold", 4, 2)
    y = np.array(["x", "y"] * 20)
    first = [test.tolist() for _, test in r.split(y, "d", "h", 0, 0)]
    assert first != [test.tolist() for _, test in r.split(y, "d", "h", 1, 0)]
    assert first != [test.tolist() for _, test in r.split(y, "d", "h", 0, 1)]


def test_flags_over_a_study_file(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text('datasets = ["keel"]\nalgorithms = ["adaboost"]\nfolds = 5\n',
                    encoding="utf-8")
    s = StudySpec.from_flags(path, folds=3, rounds=None, algorithms="adaboost,samme")
    assert (s.resampling.folds, s.algorithms, s.n_rounds) == (3, ("adaboost", "samme"), 100)
    s = StudySpec.from_flags(None, datasets="keel", algorithms="adaboost", repeats=2, folds=None)
    assert s.resampling.name == "2x10-fold"
    with pytest.raises(SpecError, match="the command line gives no algorithms"):
        StudySpec.from_flags(None, datasets="keel")


def test_a_recipe_strings_parameters_are_not_split():
    s = spec(algorithms="adaboost, proposal=stump calibration=pav+input-dependent(beta=0.5, "
                        "gamma=1) reweighting=exponential,real-adaboost")
    assert s.algorithms == ("adaboost", "proposal=stump calibration=pav+input-dependent("
                                        "beta=0.5, gamma=1) reweighting=exponential",
                            "real-adaboost")

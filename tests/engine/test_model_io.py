"""Saving and loading fitted models (boostkit.model): a versioned, non-executable format that
never unpickles, fails clearly on bad files and never leaves a broken file behind
(DESIGN.md, "Models, I/O, interfaces")."""

from __future__ import annotations

import json
import re
import os
from pathlib import Path

import attrs
import numpy as np
import pandas as pd
import pytest

import boostkit
from boostkit import datasets
from boostkit import model as model_module
from boostkit.errors import ModelFormatError


@pytest.fixture(scope="module")
def ionosphere():
    data = datasets.load("ionosphere")
    return data.X, data.y


@pytest.fixture(scope="module")
def models(ionosphere):
    X, y = ionosphere
    return {name: boostkit.Booster(name, n_rounds=15, random_state=0).fit(X, y)
            for name in ("adaboost", "real-adaboost")}


@pytest.fixture
def fitted(models):
    """A model with arrays in both its hypotheses and its contributions (per-cell values)."""
    return models["real-adaboost"]


def read_structure(path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    with np.load(path, allow_pickle=False) as npz:
        arrays = {key: npz[key] for key in npz.files}
    return json.loads(arrays.pop("__model__").tobytes()), arrays


def write_structure(path: Path, structure: dict, arrays: dict[str, np.ndarray]) -> None:
    blob = np.frombuffer(json.dumps(structure).encode("utf-8"), dtype=np.uint8)
    np.savez(path, __model__=blob, **arrays)


def directory_listing(path: Path) -> list[str]:
    return sorted(os.listdir(path))


# -- round trip ---------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["adaboost", "real-adaboost"])
def test_round_trip_keeps_everything(models, algorithm, ionosphere, tmp_path):
    X, _ = ionosphere
    fitted = models[algorithm]
    assert fitted.n_rounds == 15
    loaded = boostkit.load_model(fitted.save(tmp_path / "model.npz"))
    np.testing.assert_array_equal(loaded.decision_function(X), fitted.decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
    assert loaded.records == fitted.records
    assert loaded.recipe == fitted.recipe
    assert loaded.stop_reason == fitted.stop_reason
    assert loaded.n_features == fitted.n_features
    assert loaded.hypotheses == fitted.hypotheses
    np.testing.assert_array_equal(loaded.classes, fitted.classes)


@pytest.mark.parametrize("labels", [("bad", "good"), (3, 7), (-1.5, 2.0)])
def test_round_trip_keeps_class_labels(labels, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = np.where(X[:, 1] + 0.3 * rng.normal(size=80) > 0, labels[1], labels[0])
    model = boostkit.Booster("adaboost", n_rounds=5).fit(X, y)
    loaded = boostkit.load_model(model.save(tmp_path / "labels.npz"))
    np.testing.assert_array_equal(loaded.classes, list(labels))
    assert loaded.classes.dtype.kind == np.asarray(y).dtype.kind
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_round_trip_keeps_component_parameters(ionosphere, tmp_path):
    X, y = ionosphere
    params = {"calibration": {"smoothing": 0.01}, "no_edge": {"min_edge": 0.05}}
    model = boostkit.Booster("real-adaboost", n_rounds=5, params=params).fit(X, y)
    loaded = boostkit.load_model(model.save(tmp_path / "params.npz"))
    assert loaded.recipe.calibration.params == {"smoothing": 0.01}
    assert loaded.recipe.stopping[0].params == {"min_edge": 0.05}


def test_save_writes_the_documented_structure(fitted, tmp_path):
    path = fitted.save(tmp_path / "model.npz")
    structure, arrays = read_structure(path)
    assert structure["format"] == "boostkit-model"
    assert structure["version"] == model_module.FORMAT_VERSION
    assert len(structure["rounds"]) == fitted.n_rounds == len(structure["records"])
    assert structure["rounds"][0]["hypothesis"]["component"] == "decision-stump"
    assert all(array.dtype != object for array in arrays.values())


# -- loading never unpickles; bad files fail clearly --------------------------------------------


class WritesSentinelWhenUnpickled:
    """Unpickling this object creates a file: proof that a loader executed the archive."""

    def __init__(self, sentinel: Path):
        self.sentinel = sentinel

    def __reduce__(self):
        return (Path.touch, (self.sentinel,))


def test_loading_never_unpickles(fitted, tmp_path):
    path = fitted.save(tmp_path / "model.npz")
    structure, arrays = read_structure(path)
    sentinel = tmp_path / "executed"
    arrays["classes"] = np.array([WritesSentinelWhenUnpickled(sentinel), "b"], dtype=object)
    write_structure(path, structure, arrays)  # np.savez pickles object arrays
    with pytest.raises(ModelFormatError, match="array 'classes' is corrupt: Object arrays"):
        boostkit.load_model(path)
    assert not sentinel.exists()


def test_truncated_file_is_refused(fitted, tmp_path):
    path = fitted.save(tmp_path / "model.npz")
    content = path.read_bytes()
    path.write_bytes(content[: len(content) // 2])
    with pytest.raises(ModelFormatError, match="corrupt or not an .npz archive"):
        boostkit.load_model(path)


def test_corrupted_bytes_are_refused(fitted, tmp_path):
    path = fitted.save(tmp_path / "model.npz")
    content = bytearray(path.read_bytes())
    middle = len(content) // 2
    content[middle:middle + 64] = bytes(64)  # the CRC of the member no longer matches
    path.write_bytes(bytes(content))
    with pytest.raises(ModelFormatError, match=re.escape(str(path))):
        boostkit.load_model(path)


def test_random_bytes_are_refused(tmp_path):
    path = tmp_path / "noise.npz"
    path.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(ModelFormatError, match="not a boostkit model file"):
        boostkit.load_model(path)


def test_npz_without_model_structure_is_refused(tmp_path):
    path = tmp_path / "arrays.npz"
    np.savez(path, weights=np.arange(3.0))
    with pytest.raises(ModelFormatError, match="an .npz archive but not a boostkit model"):
        boostkit.load_model(path)


def test_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        boostkit.load_model(tmp_path / "absent.npz")


def test_newer_format_version_asks_to_upgrade(fitted, tmp_path):
    path = fitted.save(tmp_path / "model.npz")
    structure, arrays = read_structure(path)
    structure["version"] = 999
    write_structure(path, structure, arrays)
    message = "format version 999, newer than this boostkit reads.*upgrade boostkit"
    with pytest.raises(ModelFormatError, match=message):
        boostkit.load_model(path)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda s: s.update(format="other-model"), "not a boostkit model file"),
        (lambda s: s.update(version="1"), "invalid format version '1'"),
        (lambda s: s.pop("rounds"), "incomplete or corrupt"),
        (lambda s: s["records"][0].pop("edge"), "record 1 has the fields"),
    ],
)
def test_malformed_structure_is_refused(fitted, tmp_path, edit, message):
    path = fitted.save(tmp_path / "model.npz")
    structure, arrays = read_structure(path)
    edit(structure)
    write_structure(path, structure, arrays)
    with pytest.raises(ModelFormatError, match=message):
        boostkit.load_model(path)


def test_missing_array_is_refused(fitted, tmp_path):
    path = fitted.save(tmp_path / "model.npz")
    structure, arrays = read_structure(path)
    del arrays[next(key for key in arrays if key.startswith("r0.h."))]
    write_structure(path, structure, arrays)
    with pytest.raises(ModelFormatError, match=r"field .*its array .r0\.h\..* is missing"):
        boostkit.load_model(path)


def test_component_no_plugin_provides_is_named(fitted, tmp_path):
    path = fitted.save(tmp_path / "model.npz")
    structure, arrays = read_structure(path)
    structure["rounds"][0]["hypothesis"]["component"] = "oblique-stump"
    write_structure(path, structure, arrays)
    message = "hypothesis 'oblique-stump', which no installed plugin provides"
    with pytest.raises(ModelFormatError, match=message):
        boostkit.load_model(path)


def test_model_needs_the_plugins_that_fitted_it(fitted, tmp_path, monkeypatch, fresh_plugins):
    path = fitted.save(tmp_path / "model.npz")
    monkeypatch.setenv("BOOSTKIT_DISABLE_PLUGIN_AUTOLOAD", "1")
    message = "'decision-stump', which no installed plugin provides.*install the plugin"
    with pytest.raises(ModelFormatError, match=message):
        boostkit.load_model(path)


# -- failed saves leave nothing behind ----------------------------------------------------------


def test_failed_write_leaves_no_file_and_no_temp_file(fitted, tmp_path, monkeypatch):
    def savez_then_fail(file, **arrays):
        file.write(b"PK\x03\x04 half an archive")
        raise OSError("No space left on device")

    monkeypatch.setattr(model_module.np, "savez", savez_then_fail)
    with pytest.raises(OSError, match="No space left"):
        fitted.save(tmp_path / "model.npz")
    assert directory_listing(tmp_path) == []


def test_failed_write_keeps_the_previous_file(fitted, ionosphere, tmp_path, monkeypatch):
    X, _ = ionosphere
    path = fitted.save(tmp_path / "model.npz")
    good = path.read_bytes()

    def savez_then_fail(file, **arrays):
        file.write(b"garbage")
        raise KeyboardInterrupt

    monkeypatch.setattr(model_module.np, "savez", savez_then_fail)
    with pytest.raises(KeyboardInterrupt):
        fitted.save(path)
    assert directory_listing(tmp_path) == ["model.npz"]
    assert path.read_bytes() == good
    monkeypatch.undo()
    reloaded = boostkit.load_model(path)
    np.testing.assert_array_equal(reloaded.decision_function(X), fitted.decision_function(X))


@pytest.mark.parametrize(
    "spoil, message",
    [
        (
            lambda m: attrs.evolve(m, classes=np.array([None, 1], dtype=object)),
            "class labels are not numbers or strings",
        ),
        (
            lambda m: attrs.evolve(m, records=(attrs.evolve(m.records[0], extra={"hook": print}),)),
            "round record: builtin_function_or_method is not a JSON value",
        ),
    ],
)
def test_unsavable_model_is_refused_without_touching_the_file(fitted, tmp_path, spoil, message):
    path = fitted.save(tmp_path / "model.npz")
    good = path.read_bytes()
    with pytest.raises(ModelFormatError, match=message):
        spoil(fitted).save(path)
    assert directory_listing(tmp_path) == ["model.npz"]
    assert path.read_bytes() == good


# -- content no fitted model has is refused, naming the field ---------------------------------


@pytest.fixture(scope="module")
def three_classes(ionosphere):
    """A native three-class model whose labels are text (so they are not column indices)."""
    X, _ = ionosphere
    labels = np.array(["high", "low", "mid"])[np.digitize(X[:, 2], [0.0, 0.7])]
    return boostkit.Booster("samme", n_rounds=6).fit(X, labels)


def _set(field, value):
    return lambda s, a: s.update({field: value})


def _record(t, **fields):
    return lambda s, a: s["records"][t].update(fields)


def _classes(values):
    return lambda s, a: a.update(classes=np.asarray(values))


def _refused_after(model, tmp_path, edit, message):
    """Save ``model``, ``edit`` its JSON structure and arrays, and expect loading to name
    ``message``."""
    path = model.save(tmp_path / "model.npz")
    structure, arrays = read_structure(path)
    edit(structure, arrays)
    write_structure(path, structure, arrays)
    with pytest.raises(ModelFormatError, match=re.escape(str(path)) + ".*" + message):
        boostkit.load_model(path)


@pytest.mark.parametrize(
    "edit, message",
    [
        (_classes(["b", "b"]), r"classes \['b', 'b'\] repeat a label"),
        (_classes([1.0, np.nan]), r"classes \[1\.0, nan\] hold NaN"),
        (_classes(["g", "b"]), r"classes \['g', 'b'\] are not in increasing order"),
        (_classes([[0, 1], [2, 3]]), r"classes of shape \(2, 2\)"),
        (_classes([1 + 1j, 2 + 0j]), "classes of complex128"),
        (_set("multilabel", "yes"), "'multilabel' must be true or false, got 'yes'"),
        (_set("multilabel", 1), "'multilabel' must be true or false, got 1"),
        (lambda s, a: s.pop("multilabel"), "'multilabel' is missing"),
        (_set("margin_columns", True), "'margin_columns' must be an integer, got True"),
        (_set("rounds", []), "0 terms but 15 records"),
        (_set("records", []), "15 terms but 0 records"),
        (lambda s, a: s["rounds"].pop(), "14 terms but 15 records"),
        (_record(1, round=5), "record 2 is numbered 5"),
        (_record(1, round=True), "record 2 is numbered True"),
        (_record(0, weighted_error="0.1"),
         "record 1, field 'weighted_error': '0.1' is not a number"),
        (_record(0, coefficients=["1"]), "record 1, field 'coefficients'"),
        (_record(0, z=False), "record 1, field 'z': False is not a number"),
        (_record(0, hypothesis=3), "record 1, field 'hypothesis': 3 is not a string"),
        (_record(0, extra={"replaces": 0}), "record 1 replaces term 0, but the model has 0 terms"),
        (_record(3, extra={"replaces": 9}), "record 4 replaces term 9, but the model has 3 terms"),
        (_record(0, extra={"replaces": None}), "record 1 replaces term None"),
        (_set("stop_reason", 5), "'stop_reason' must be a string, got 5"),
        (_set("pickled", []), r"'pickled' must list the file's pickled entries, got \[\]"),
        (_set("pickled", ["classes"]), "'pickled' must list the file's pickled entries"),
        (lambda s, a: s["recipe"].update(name=5), "the recipe's name must be a string, got 5"),
        (lambda s, a: s["recipe"].update(paper=None), "the recipe's paper must be a string"),
        (lambda s, a: s.pop("features"), "'features' is missing"),
        (lambda s, a: s["recipe"]["proposal"].update(name="nosuch"), "recipe 'real-adaboost'"),
        (_set("junk", {"arrays": {"x": "r0.h.cell_scores"}}), "unknown entry 'junk'"),
    ],
)
def test_content_no_fitted_model_has_is_refused(fitted, tmp_path, edit, message):
    _refused_after(fitted, tmp_path, edit, message)


def test_a_back_fitting_record_loads(fitted, ionosphere, tmp_path):
    # The contrary of the last two refusals: a record may replace a term made before it.
    X, _ = ionosphere
    path = fitted.save(tmp_path / "model.npz")
    structure, arrays = read_structure(path)
    structure["records"].append({**structure["records"][-1], "round": 16,
                                 "extra": {"replaces": 14}})
    write_structure(path, structure, arrays)
    loaded = boostkit.load_model(path)
    assert len(loaded.records) == 16
    np.testing.assert_array_equal(loaded.decision_function(X), fitted.decision_function(X))


def test_multilabel_on_labels_that_are_not_column_indices_is_refused(three_classes, tmp_path):
    path = three_classes.save(tmp_path / "model.npz")
    structure, arrays = read_structure(path)
    structure["multilabel"] = True
    write_structure(path, structure, arrays)
    with pytest.raises(ModelFormatError,
                       match=r"multi-label .* classes must be the column indices 0\.\.2"):
        boostkit.load_model(path)


@pytest.mark.parametrize(
    "edit, message",
    [
        (_set("multilabel", "yes"), "'multilabel' must be true or false, got 'yes'"),
        (_set("multilabel", True), r"multi-label .* column indices 0\.\.2"),
        (_classes(["high", "high", "mid"]), "repeat a label"),
        (lambda s, a: s["models"][1].update(junk=[{"arrays": {"x": "m0.classes"}}]),
         "unknown entry 'junk'"),
    ],
)
def test_one_vs_rest_content_no_fitted_model_has_is_refused(ionosphere, tmp_path, edit, message):
    X, _ = ionosphere
    labels = np.array(["high", "low", "mid"])[np.digitize(X[:, 2], [0.0, 0.7])]
    model = boostkit.Booster("adaboost", n_rounds=3, multiclass="one-vs-rest").fit(X, labels)
    _refused_after(model, tmp_path, edit, message)


def test_models_derived_from_a_fit_load(tmp_path):
    # Their terms are not one per record: one term folding every round, or an offset ahead of
    # the rounds' terms. Both are models the public API gives, and load as saved.
    from boostkit_onepass import collapse
    from boostkit_pnspace import to_adaboost_form

    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(200, 6)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(size=200) > 2, 1, -1)
    for model in (collapse(boostkit.Booster("opab").fit(X, y)),
                  to_adaboost_form(boostkit.Booster("ada2boost", n_rounds=5).fit(X, y))):
        assert model.n_rounds != len(model.records)
        loaded = boostkit.load_model(model.save(tmp_path / "derived.npz"))
        np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def _swap_names(s, a):
    names = s["models"][1]["features"]["names"]
    names[0], names[1] = names[1], names[0]


@pytest.mark.parametrize("edit", [
    _swap_names,
    lambda s, a: a.update({"m1.features.categories.2": np.array(["high", "low", "max"])}),
    lambda s, a: s["models"][2].update(features=None),
], ids=["names", "categories", "no schema"])
def test_one_vs_rest_class_models_share_one_feature_schema(ionosphere, tmp_path, edit):
    # Every class model reads X through its own schema: one that differs would read another
    # column, or another category, for its class alone.
    X, _ = ionosphere
    labels = np.array(["high", "low", "mid"])[np.digitize(X[:, 2], [0.0, 0.7])]
    frame = pd.DataFrame({"a": X[:, 4], "b": X[:, 5], "grade": pd.Categorical(labels)})
    model = boostkit.Booster("real-adaboost", n_rounds=4, multiclass="one-vs-rest").fit(
        frame, labels)
    path = model.save(tmp_path / "model.npz")
    structure, arrays = read_structure(path)
    assert "m1.features.categories.2" in arrays
    edit(structure, arrays)
    write_structure(path, structure, arrays)
    with pytest.raises(ModelFormatError, match="feature schema of class [12]'s model differs"):
        boostkit.load_model(path)


@pytest.mark.parametrize("name", ["adaboost", "real-adaboost"])
def test_model_file_size_is_the_size_save_writes(models, tmp_path, name):
    from boostkit.model_file import model_file_size

    path = models[name].save(tmp_path / f"{name}.npz")
    assert model_file_size(models[name]) == path.stat().st_size


def test_model_file_size_of_a_one_vs_rest_model(tmp_path):
    from boostkit.model_file import model_file_size

    data = datasets.load("contraceptive")  # three classes
    model = boostkit.Booster("adaboost", n_rounds=5, multiclass="one-vs-rest").fit(data.X, data.y)
    path = model.save(tmp_path / "ovr.npz")
    assert model_file_size(model) == path.stat().st_size

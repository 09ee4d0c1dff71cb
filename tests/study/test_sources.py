"""Study datasets: the suites, the bundled KEEL files, the data directory, CSV files and
directories, OpenML (through a stand-in of the openml functions used, never the network), and
the errors naming what is valid or where a file was looked for."""

from __future__ import annotations

import gzip
import hashlib
import json
import pickle
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import weighted_datasets

from boostkit import datasets
from boostkit.errors import DataError
from boostkit.features import FeatureSchema
from boostkit.study import sources
from boostkit.study.sources import (KEEL_BUDGET_BYTES, OpenMLSource, SourceError,
                                    StudyData, resolve_datasets, suites)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
KEEL_DIR = Path(datasets.__file__).resolve().parent / "keel"
KEEL_MANIFEST = {e["name"]: e for e in
                 json.loads((KEEL_DIR / "manifest.json").read_text(encoding="utf-8"))["datasets"]}


@pytest.fixture
def no_data_dir(monkeypatch, tmp_path):
    """No BOOSTKIT_DATA and no shared/datasets above the working directory."""
    monkeypatch.delenv("BOOSTKIT_DATA", raising=False)
    monkeypatch.chdir(tmp_path)


# -- suites ------------------------------------------------------------------------------------


def test_every_suite_resolves(no_data_dir):
    sizes = {name: len(resolve_datasets([name])) for name in suites() if ":" not in name}
    bundled = json.loads((KEEL_DIR.parent / "data" / "manifest.json").read_text())["datasets"]
    assert sizes == {"bundled": len(bundled), "keel": 34, "keel-binary": 20,
                     "keel-multiclass": 14}


def test_keel_suites_split_by_number_of_classes(no_data_dir):
    binary = {s.name for s in resolve_datasets(["keel-binary"])}
    multi = {s.name for s in resolve_datasets(["keel-multiclass"])}
    assert binary.isdisjoint(multi)
    assert binary | multi == {s.name for s in resolve_datasets(["keel"])}
    assert all(KEEL_MANIFEST[n.removeprefix("keel/")]["n_classes"] == 2 for n in binary)
    assert "keel/iris" in multi and "keel/pima" in binary


def test_bundled_keel_files_match_the_manifest_sha256_and_budget():
    files = sorted(KEEL_DIR.glob("*.csv.gz"))
    assert {f.name for f in files} == {e["file"] for e in KEEL_MANIFEST.values()}
    for path in files:
        entry = KEEL_MANIFEST[path.name.removesuffix(".csv.gz")]
        raw = gzip.decompress(path.read_bytes())
        assert hashlib.sha256(raw).hexdigest() == entry["sha256_csv"], path.name
    assert sum(f.stat().st_size for f in files) <= KEEL_BUDGET_BYTES


def test_every_keel_dataset_loads_as_its_manifest_says(no_data_dir):
    for source in resolve_datasets(["keel"]):
        data = source.load()
        entry = KEEL_MANIFEST[source.name.removeprefix("keel/")]
        assert "Alcalá-Fdez" in data.origin and data.X.dtype == np.float64
        assert data.X.shape == (entry["rows"], entry["n_features"]), source.name
        assert len(data.classes) == entry["n_classes"], source.name
        names = data.features.names
        assert [names[j] for j in np.flatnonzero(data.features.categorical)] == \
            entry["categorical_columns"], source.name


def test_keel_text_attributes_are_categorical_and_integer_codes_numbers(no_data_dir):
    breast = resolve_datasets(["keel/breast"])[0].load()
    assert breast.features.categorical.tolist() == [True] * 5 + [False] + [True] * 3
    assert "premeno" in breast.features.categories[1].tolist()
    australian = resolve_datasets(["keel/australian"])[0].load()
    assert not australian.features.categorical.any()  # integer-coded attributes stay numbers


def test_keel_labels_keep_their_text(no_data_dir):
    vehicle = resolve_datasets(["keel/vehicle"])[0].load()
    assert vehicle.classes == ("bus ", "opel", "saab", "van ")
    assert set(vehicle.y.tolist()) == set(vehicle.classes)


def test_keel_file_missing_from_the_package_is_read_from_the_data_dir(monkeypatch, tmp_path):
    package = tmp_path / "package"
    package.mkdir()
    shutil.copy(KEEL_DIR / "manifest.json", package)
    for name in ("iris", "wine"):
        shutil.copy(KEEL_DIR / f"{name}.csv.gz", package)
    monkeypatch.setattr(sources, "_KEEL_DIR", package)
    data_dir = tmp_path / "data"
    (data_dir / "keel").mkdir(parents=True)
    shutil.copy(KEEL_DIR / "tae.csv.gz", data_dir / "keel")
    found = resolve_datasets(["keel/iris", "keel/tae"], data_dir=data_dir)
    assert [Path(s.path).parent for s in found] == [package, data_dir / "keel"]
    assert found[1].load().X.shape == (151, 5)
    with pytest.raises(SourceError) as info:
        resolve_datasets(["keel-multiclass"], data_dir=data_dir)
    message = str(info.value)
    assert "'contraceptive'" in message and "'iris'" not in message and "'tae'" not in message
    assert str(package) in message and str(data_dir / "keel") in message


def test_keel_file_missing_without_a_data_dir_says_how_to_give_one(monkeypatch, tmp_path,
                                                                   no_data_dir):
    monkeypatch.setattr(sources, "_KEEL_DIR", tmp_path)
    shutil.copy(KEEL_DIR / "manifest.json", tmp_path)
    with pytest.raises(SourceError, match=r"\['iris'\] not found.*BOOSTKIT_DATA"):
        resolve_datasets(["keel/iris"])


def test_keel_file_that_differs_from_the_manifest_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(sources, "_KEEL_DIR", tmp_path)
    shutil.copy(KEEL_DIR / "manifest.json", tmp_path)
    text = gzip.decompress((KEEL_DIR / "iris.csv.gz").read_bytes()).replace(b"5.1", b"5.2", 1)
    (tmp_path / "iris.csv.gz").write_bytes(gzip.compress(text))
    source = resolve_datasets(["keel/iris"])[0]
    with pytest.raises(SourceError, match="SHA-256.*not the one listed"):
        source.load()


def test_bundled_files_are_found_in_the_loading_process_own_package(monkeypatch, no_data_dir):
    """A Dask worker may have boostkit installed elsewhere than the driver: a bundled source
    names its file relative to the package, and the worker's copy of the package is read."""
    found = resolve_datasets(["keel/iris", "spambase"])
    assert [s.path for s in found] == ["keel/iris.csv.gz", "data/spambase.csv.gz"]
    shipped = pickle.dumps(found[0])
    elsewhere = Path(sources.__file__).parent / "nowhere"
    monkeypatch.setattr(sources, "_DATASETS_DIR", elsewhere)
    with pytest.raises(SourceError, match="nowhere"):
        pickle.loads(shipped).load()
    monkeypatch.undo()
    assert pickle.loads(shipped).load().X.shape == (150, 4)


# -- named datasets and the data directory -------------------------------------------------------


def test_bundled_dataset_by_name(no_data_dir):
    data = resolve_datasets(["german_credit"])[0].load()
    reference = datasets.load("german_credit")
    np.testing.assert_array_equal(data.X, reference.X)
    assert data.origin == "bundled" and data.classes == ("bad", "good")


def test_data_dir_dataset_by_name(tmp_path, no_data_dir):
    shutil.copy(FIXTURES / "csvs" / "points.csv.gz", tmp_path / "pts.csv.gz")
    (tmp_path / "manifest.json").write_text(json.dumps(
        {"datasets": [{"name": "pts", "file": "pts.csv.gz", "target_column": "label"}]}))
    source = resolve_datasets(["pts"], data_dir=tmp_path)[0]
    assert source.origin == str(tmp_path)
    assert source.load().X.shape == (6, 2)


def test_relative_paths_are_kept_absolute(monkeypatch, tmp_path, no_data_dir):
    """A worker may run in another directory: relative CSV and data-directory paths are
    stored resolved."""
    (tmp_path / "data").mkdir()
    shutil.copy(FIXTURES / "csvs" / "points.csv.gz", tmp_path / "data" / "pts.csv.gz")
    (tmp_path / "data" / "manifest.json").write_text(json.dumps(
        {"datasets": [{"name": "pts", "file": "pts.csv.gz", "target_column": "label"}]}))
    found = resolve_datasets(["pts", "data/pts.csv.gz"], data_dir="data")
    monkeypatch.chdir(tmp_path.parent)
    assert [s.load().X.shape for s in found] == [(6, 2), (6, 2)]


def test_unknown_dataset_names_the_valid_choices(no_data_dir):
    with pytest.raises(SourceError) as info:
        resolve_datasets(["spambas"])
    message = str(info.value)
    for choice in ("'spambas'", "keel-binary", "spambase", "keel/NAME", "openml:ID", "vehicle",
                   "no data directory"):
        assert choice in message
    assert isinstance(info.value, DataError)


def test_unknown_suite_names_the_suites(no_data_dir):
    with pytest.raises(SourceError, match=r"'keel-multi'.*a suite \(bundled, keel, keel-binary, "
                                          r"keel-multiclass, openml-suite:ID\)"):
        resolve_datasets(["keel-multi"])
    with pytest.raises(SourceError, match="expected an OpenML suite id or alias after"):
        resolve_datasets(["openml-suite:"])


def test_unknown_keel_dataset_names_the_keel_datasets(no_data_dir):
    with pytest.raises(SourceError, match=r"keel/irs.*'iris'"):
        resolve_datasets(["keel/irs"])


def test_missing_file_says_so(no_data_dir, tmp_path):
    with pytest.raises(SourceError, match="no such file"):
        resolve_datasets([str(tmp_path / "absent.csv")])


def test_data_dir_that_is_not_a_directory(tmp_path):
    with pytest.raises(SourceError, match="data_dir: expected a directory"):
        resolve_datasets(["spambase"], data_dir=tmp_path / "nowhere")


def test_malformed_data_dir_manifest_is_a_source_error(tmp_path, no_data_dir):
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(SourceError, match="manifest.json: expected valid JSON"):
        resolve_datasets(["pts"], data_dir=tmp_path)


def test_multiple_instance_and_text_datasets_are_refused(tmp_path, no_data_dir):
    (tmp_path / "bags.csv.gz").write_bytes(gzip.compress(b"a,bag,label\n1,1,x\n2,1,y\n"))
    (tmp_path / "docs.csv.gz").write_bytes(gzip.compress(b"text,label\nhi,x\nho,y\n"))
    (tmp_path / "manifest.json").write_text(json.dumps({"datasets": [
        {"name": "bags", "file": "bags.csv.gz", "extra_columns": ["bag"]},
        {"name": "docs", "file": "docs.csv.gz", "feature_kind": "text"}]}))
    with pytest.raises(SourceError, match="'bags' is a multiple-instance dataset"):
        resolve_datasets(["bags"], data_dir=tmp_path)
    with pytest.raises(SourceError, match="'docs' is a text dataset"):
        resolve_datasets(["docs"], data_dir=tmp_path)


def test_two_sources_of_one_name_are_refused(no_data_dir):
    with pytest.raises(SourceError, match="two datasets of the study are named 'keel/iris'"):
        resolve_datasets(["keel", "keel/iris"])


# -- CSV files and directories ---------------------------------------------------------------------


def test_directory_of_csvs_gives_one_dataset_per_csv_file(no_data_dir):
    found = resolve_datasets([str(FIXTURES / "csvs")])
    assert [s.name for s in found] == ["csv/points", "csv/weather"]  # notes.txt is not a CSV
    points, weather = (s.load() for s in found)
    assert points.X.shape == (6, 2) and points.classes == ("a", "b")
    assert weather.classes == ("no", "yes")  # the last column
    assert weather.features.categorical.tolist() == [True, False, False, True]
    assert weather.origin == str(FIXTURES / "csvs" / "weather.csv")


def test_csv_target_by_name(no_data_dir):
    data = resolve_datasets([str(FIXTURES / "csvs" / "weather.csv")], target="outlook")[0].load()
    assert data.classes == ("overcast", "rainy", "sunny")
    assert data.features.names == ("temperature", "humidity", "windy", "play")


def test_csv_without_the_target_column_names_its_columns(no_data_dir):
    source = resolve_datasets([str(FIXTURES / "csvs" / "weather.csv")], target="class")[0]
    with pytest.raises(SourceError, match=r"'class' is not in .*weather.csv.*'outlook'"):
        source.load()


def test_csv_with_a_continuous_target_is_refused(tmp_path, no_data_dir):
    """Numbers that are not whole, read as text, would be one class per value: refused as the
    engine refuses a continuous target; whole numbers are class labels."""
    path = tmp_path / "prices.csv"
    path.write_text("x,price\n1,0.5\n2,1.25\n3,2.75\n4,0.5\n")
    with pytest.raises(SourceError, match=r"csv/prices.*3 labels are all numbers.*continuous"):
        resolve_datasets([str(path)])[0].load()
    path.write_text("x,grade\n1,1\n2,2\n3,3\n4,1\n")
    assert resolve_datasets([str(path)])[0].load().classes == ("1", "2", "3")


def test_empty_directory_is_refused(tmp_path, no_data_dir):
    with pytest.raises(SourceError, match="holds no .csv"):
        resolve_datasets([str(tmp_path)])


# -- StudyData and DataSource -----------------------------------------------------------------------


def test_data_hash_is_stable_and_tells_data_apart(no_data_dir):
    source = resolve_datasets(["keel/vehicle"])[0]
    first = source.load()
    # A different process loads the same hash: it depends on the data alone.
    assert pickle.loads(pickle.dumps(source)).load().data_hash == first.data_hash
    y = np.char.strip(first.y.astype(str))  # "bus " and "bus" are different labels
    assert StudyData.of("v", first.X, y, first.features, "x").data_hash != first.data_hash
    X = first.X.copy()
    X[0, 0] += 1
    assert StudyData.of("v", X, first.y, first.features, "x").data_hash != first.data_hash
    assert StudyData.of("v", first.X, first.y, first.features, "y").data_hash == first.data_hash


@settings(max_examples=50, deadline=None)
@given(weighted_datasets(), st.data())
def test_data_hash_changes_with_any_value_or_label(dataset, data):
    X, y, _ = dataset
    labels = np.where(y > 0, "a", "b")
    schema = FeatureSchema(X.shape[1])
    reference = StudyData.of("d", X, labels, schema, "x").data_hash
    assert StudyData.of("e", X.copy(), labels.copy(), schema, "y").data_hash == reference
    i = data.draw(st.integers(0, X.shape[0] - 1))
    j = data.draw(st.integers(0, X.shape[1] - 1))
    changed = X.copy()
    changed[i, j] = np.nextafter(changed[i, j], np.inf)
    assert StudyData.of("d", changed, labels, schema, "x").data_hash != reference
    relabelled = labels.copy()
    relabelled[i] = "c"
    assert StudyData.of("d", X, relabelled, schema, "x").data_hash != reference
    named = FeatureSchema(X.shape[1], tuple(f"f{k}" for k in range(X.shape[1])))
    assert StudyData.of("d", X, labels, named, "x").data_hash != reference


def test_a_dataset_of_one_class_is_refused():
    with pytest.raises(SourceError, match="at least two classes"):
        StudyData.of("one", np.zeros((3, 1)), np.array(["a"] * 3), FeatureSchema(1),
                     "x")


# -- OpenML, through a stand-in of the openml package ------------------------------------------------


class _Dataset:
    name = "tiny"
    default_target_attribute = "class"

    def get_data(self, target=None, include_row_id=False, include_ignore_attribute=False,
                 dataset_format="dataframe"):
        frame = pd.DataFrame({"colour": pd.Categorical(["red", "blue", "red", "green", "blue"]),
                              "size": [1.0, 2.5, np.nan, 4.0, 5.0],
                              "class": pd.Categorical([None, "n", "p", "p", "n"])})
        assert target == "class"
        return frame.drop(columns=target), frame[target], [True, False], ["colour", "size"]


def _standin(get_dataset, get_suite=None):
    """A module with the openml functions that sources.py calls, as openml 0.15 names them."""
    module = types.ModuleType("openml")
    exceptions = types.SimpleNamespace(PyOpenMLError=type("PyOpenMLError", (Exception,), {}))
    module.exceptions = exceptions
    module.datasets = types.SimpleNamespace(get_dataset=get_dataset)
    module.study = types.SimpleNamespace(get_suite=get_suite)
    module.config = types.SimpleNamespace(get_cache_directory=lambda: "/cache/openml")
    return module


def _get_dataset(dataset_id, download_data=False, download_qualities=False,
                 download_features_meta_data=False):
    assert download_data
    if dataset_id != 42:
        raise sys.modules["openml"].exceptions.PyOpenMLError(f"Unknown dataset {dataset_id}")
    return _Dataset()


def test_openml_dataset_through_the_openml_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "openml", _standin(_get_dataset))
    source = resolve_datasets(["openml:42"])[0]
    assert source == OpenMLSource("openml/42", "https://www.openml.org/d/42", 42)
    # target= names the column of CSV files: an OpenML dataset keeps its default target.
    assert resolve_datasets(["openml:42"], target="label") == [source]
    data = source.load()
    assert data.X.shape == (4, 2) and data.classes == ("n", "p")  # the unlabelled row left out
    assert data.features.categorical.tolist() == [True, False]
    assert data.features.categories[0].tolist() == ["blue", "green", "red"]
    assert np.isnan(data.X[1, 1]) and not data.features.table


def test_openml_suite_expands_to_its_datasets(monkeypatch):
    suite = types.SimpleNamespace(data=[42, 7])
    monkeypatch.setitem(sys.modules, "openml", _standin(_get_dataset, {99: suite}.__getitem__))
    assert [s.name for s in resolve_datasets(["openml-suite:99"])] == ["openml/42", "openml/7"]
    suite.data = None  # what openml gives for a suite without datasets
    with pytest.raises(SourceError, match="OpenML suite 99 lists no dataset"):
        resolve_datasets(["openml-suite:99"])
    suite.data = [42, 7]
    with pytest.raises(SourceError, match="OpenML cannot give dataset 7: Unknown dataset 7"):
        resolve_datasets(["openml-suite:99"])[1].load()


def test_openml_offline_gives_a_clear_message(monkeypatch):
    def offline(*args, **kwargs):
        raise ConnectionError("Failed to establish a new connection")  # what requests raises
    monkeypatch.setitem(sys.modules, "openml", _standin(offline, offline))
    with pytest.raises(SourceError, match=r"cannot reach OpenML for suite 99 \(offline\?\)"):
        resolve_datasets(["openml-suite:99"])
    with pytest.raises(SourceError, match=r"dataset 31 \(offline\?\).*cache \(/cache/openml\)"):
        resolve_datasets(["openml:31"])[0].load()


def test_openml_not_installed_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openml", None)  # import openml raises ImportError
    with pytest.raises(SourceError, match=r"pip install 'boostkit\[openml\]'"):
        resolve_datasets(["openml-suite:99"])
    with pytest.raises(SourceError, match=r"pip install 'boostkit\[openml\]'"):
        resolve_datasets(["openml:31"])[0].load()


def test_openml_id_must_be_an_integer():
    with pytest.raises(SourceError, match="integer OpenML dataset id after 'openml:'"):
        resolve_datasets(["openml:iris"])


def test_openml_dataset_from_openmls_cache_with_the_network_cut(monkeypatch, tmp_path):
    """The real openml package, its cache laid out as openml writes it (dataset 1234 of
    fixtures/openml-cache), and every request refused: the dataset loads from the cache, and a
    dataset or suite not in it gives the offline message."""
    openml = pytest.importorskip("openml")
    cache = tmp_path / "cache"
    shutil.copytree(FIXTURES / "openml-cache", cache)  # openml deletes a cache dir it fails in

    def no_network(*args, **kwargs):
        raise ConnectionError("the tests never use the network")

    monkeypatch.setattr(openml._api_calls, "_send_request", no_network)
    previous = openml.config._root_cache_directory
    openml.config.set_root_cache_directory(str(cache))
    try:
        data = resolve_datasets(["openml:1234"])[0].load()
        assert data.classes == ("n", "p") and data.y.tolist() == list("pnppnn")
        assert data.features.names == ("colour", "size")
        assert data.features.categories[0].tolist() == ["blue", "green", "red"]
        np.testing.assert_array_equal(data.X, [[2, 1], [0, 2.5], [2, np.nan], [1, 4], [0, 5],
                                               [1, 0.5]])
        with pytest.raises(SourceError, match=r"cannot reach OpenML for dataset 31 \(offline"):
            resolve_datasets(["openml:31"])[0].load()
        with pytest.raises(SourceError, match=r"cannot reach OpenML for suite 99 \(offline"):
            resolve_datasets(["openml-suite:99"])
    finally:
        openml.config.set_root_cache_directory(str(previous))

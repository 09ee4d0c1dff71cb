"""Tests of boostkit.datasets: bundled files, encodings, the data directory and the errors."""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from boostkit import datasets

BUNDLED_DIR = Path(datasets.__file__).resolve().parent / "data"
BUNDLED = [
    "ionosphere",
    "german_credit",
    "breast_cancer_wisconsin",
    "breast_cancer_recurrence",
    "spambase",
    "mushroom",
    "contraceptive",
    "adult",
]
# Tabular datasets expected in the shared data directory besides the bundled ones.
DATA_DIR_TABULAR = ["pima_diabetes", "musk1", "musk2"]
# The compressed size the bundled data files must stay within (see data/README.md).
BUNDLED_BUDGET_BYTES = 1_000_000


def _manifest_entries(directory: Path) -> dict[str, dict]:
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    return {entry["name"]: entry for entry in manifest["datasets"]}


BUNDLED_MANIFEST = _manifest_entries(BUNDLED_DIR)


def _read_raw(path: Path) -> tuple[list[str], list[list[str]]]:
    with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        return header, list(reader)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@functools.cache
def _load_once(name: str, encode: str) -> datasets.Dataset:
    """Load a dataset once per test session (adult and the data directory's are large)."""
    return datasets.load(name, encode=encode)


def _require_data_dir() -> Path:
    directory = datasets.data_dir()
    if directory is None:
        pytest.skip("no data directory (set BOOSTKIT_DATA or run beside shared/datasets)")
    return directory


def _check_against_manifest(ordinal: datasets.Dataset, onehot: datasets.Dataset, entry: dict):
    """Rows, widths, class counts and missing values of both encodings against the manifest."""
    rows = entry["rows"]
    categorical = entry["categorical_columns"]
    for ds in (ordinal, onehot):
        assert ds.X.dtype == np.float64 and ds.X.ndim == 2 and ds.X.flags.c_contiguous
        assert ds.X.shape[0] == rows
        assert ds.y.shape == (rows,) and ds.y.dtype.kind == "U"
        assert dict(Counter(ds.y.tolist())) == entry["class_counts"]
        assert isinstance(ds.feature_names, tuple)
        assert len(ds.feature_names) == ds.X.shape[1]
        assert all(isinstance(feature, str) for feature in ds.feature_names)
        assert ds.positive == entry["positive_class_suggested"]
    assert ordinal.X.shape[1] == entry["n_features"]
    assert int(np.isnan(ordinal.X).sum()) == entry["n_missing_values"]
    missing = dict(zip(ordinal.feature_names, np.isnan(ordinal.X).sum(axis=0).tolist()))
    assert {column: n for column, n in missing.items() if n} == entry["missing_by_column"]
    for column in categorical:
        codes = ordinal.X[:, ordinal.feature_names.index(column)]
        seen = codes[~np.isnan(codes)]
        assert np.array_equal(np.unique(seen), np.arange(np.unique(seen).size))
    numeric = [name for name in ordinal.feature_names if name not in categorical]
    for name in numeric:
        np.testing.assert_array_equal(
            onehot.X[:, onehot.feature_names.index(name)],
            ordinal.X[:, ordinal.feature_names.index(name)],
        )


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_dataset_matches_file_and_manifest(name):
    entry = BUNDLED_MANIFEST[name]
    header, rows = _read_raw(BUNDLED_DIR / entry["file"])
    ordinal = _load_once(name, "ordinal")
    onehot = _load_once(name, "onehot")
    _check_against_manifest(ordinal, onehot, entry)

    assert ordinal.y.tolist() == [row[-1] for row in rows]
    extra = entry["extra_columns"]
    features = [column for column in header[:-1] if column not in extra]
    raw_columns = {column: [row[header.index(column)] for row in rows] for column in features}
    categorical = entry["categorical_columns"]
    distinct = {
        column: sorted(set(raw_columns[column]) - {""})
        for column in features
        if column in categorical
    }
    expected_names = []
    for column in features:
        if column in distinct:
            expected_names += [f"{column}={value}" for value in distinct[column]]
        else:
            expected_names.append(column)
    assert onehot.feature_names == tuple(expected_names)
    assert ordinal.feature_names == tuple(features)

    for i, column in enumerate(features):
        raw = raw_columns[column]
        is_missing = np.array([value == "" for value in raw])
        if column in distinct:
            codes = ordinal.X[:, i]
            expected_codes = [distinct[column].index(v) if v else np.nan for v in raw]
            np.testing.assert_array_equal(codes, expected_codes)
            indices = [onehot.feature_names.index(f"{column}={v}") for v in distinct[column]]
            block = onehot.X[:, indices]
            assert np.isnan(block[is_missing]).all()
            present = block[~is_missing]
            assert np.isin(present, [0.0, 1.0]).all()
            np.testing.assert_array_equal(present.sum(axis=1), 1.0)
        else:
            expected_values = [float(v) if v else np.nan for v in raw]
            np.testing.assert_array_equal(ordinal.X[:, i], expected_values)

    assert onehot.groups is None
    assert (onehot.split is None) == ("split" not in extra)
    assert onehot.title == entry["title"]
    assert "CC BY 4.0" in onehot.licence
    assert entry["origin"] in onehot.source
    assert entry["source"]["path_in_package"] in onehot.source
    if entry["positive_class_suggested"] is None:  # several classes, none of them positive
        with pytest.raises(ValueError, match="at most two classes"):
            onehot.binary_target()
        return
    target = onehot.binary_target()
    assert target.dtype == np.float64
    assert set(np.unique(target).tolist()) == {-1.0, 1.0}
    assert int((target == 1.0).sum()) == entry["class_counts"][entry["positive_class_suggested"]]


def test_bundled_files_and_sha256():
    files = {path.name for path in BUNDLED_DIR.glob("*.csv.gz")}
    assert sum((BUNDLED_DIR / file).stat().st_size for file in files) <= BUNDLED_BUDGET_BYTES
    assert sorted(BUNDLED_MANIFEST) == sorted(BUNDLED)
    assert files == {entry["file"] for entry in BUNDLED_MANIFEST.values()}
    for entry in BUNDLED_MANIFEST.values():
        assert _sha256(BUNDLED_DIR / entry["file"]) == entry["sha256"], entry["file"]
    readme = (BUNDLED_DIR / "README.md").read_text(encoding="utf-8")
    for entry in BUNDLED_MANIFEST.values():
        assert entry["sha256"] in readme and entry["title"] in readme


def test_bundled_manifest_agrees_with_data_dir():
    directory = _require_data_dir()
    shared = _manifest_entries(directory)
    for name, entry in BUNDLED_MANIFEST.items():
        if name not in shared:
            continue
        for key, value in entry.items():
            if key == "used_in_papers":  # the bundled copy cites by author and year (bibliography)
                continue
            if key == "source":
                assert value.items() <= shared[name]["source"].items()
            else:
                assert value == shared[name][key], (name, key)
        shared_file = directory / entry["file"]
        if shared_file.is_file():
            assert shared_file.read_bytes() == (BUNDLED_DIR / entry["file"]).read_bytes()


def test_available_lists_bundled():
    assert set(BUNDLED) <= set(datasets.available())
    assert datasets.available() == sorted(datasets.available())


def test_dropna_keeps_complete_rows():
    wisconsin = datasets.load("breast_cancer_wisconsin", dropna=True)
    assert wisconsin.X.shape == (683, 9)
    assert not np.isnan(wisconsin.X).any()
    assert wisconsin.y.shape == (683,)
    assert wisconsin.X.flags.c_contiguous
    recurrence = datasets.load("breast_cancer_recurrence", dropna=True)
    assert recurrence.X.shape[0] == recurrence.y.shape[0] == 277
    assert not np.isnan(recurrence.X).any()


def test_positive_override():
    ds = datasets.load("ionosphere", positive="g")
    assert ds.positive == "g"
    assert int((ds.binary_target() == 1.0).sum()) == 225


def test_dataset_is_frozen():
    ds = datasets.load("ionosphere")
    with pytest.raises(AttributeError):
        ds.name = "other"  # type: ignore[misc]


def test_unknown_name_error_lists_available_and_env_var():
    with pytest.raises(ValueError) as info:
        datasets.load("no_such_dataset")
    message = str(info.value)
    assert "'no_such_dataset'" in message
    assert "ionosphere" in message and "mushroom" in message
    assert "BOOSTKIT_DATA" in message
    with pytest.raises(ValueError, match="no_such_dataset"):
        datasets.load_text("no_such_dataset")


def test_bad_positive_error():
    with pytest.raises(ValueError) as info:
        datasets.load("ionosphere", positive="x")
    message = str(info.value)
    assert message.startswith("positive:")
    assert "'x'" in message and "'b'" in message and "'g'" in message


def test_bad_encode_error():
    expected = r"encode: expected one of \['categorical', 'onehot', 'ordinal'\]; got 'dummy'"
    with pytest.raises(ValueError, match=expected):
        datasets.load("ionosphere", encode="dummy")


def test_load_text_refuses_tabular_dataset():
    with pytest.raises(ValueError, match=r"load\('ionosphere'\)"):
        datasets.load_text("ionosphere")


def test_env_var_must_be_a_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOSTKIT_DATA", str(tmp_path / "missing"))
    with pytest.raises(NotADirectoryError, match="BOOSTKIT_DATA"):
        datasets.data_dir()
    with pytest.raises(NotADirectoryError, match="BOOSTKIT_DATA"):
        datasets.available()


def test_bad_data_dir_manifest_does_not_block_bundled(tmp_path, monkeypatch):
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    monkeypatch.setenv("BOOSTKIT_DATA", str(tmp_path))
    assert datasets.load("ionosphere").X.shape == (351, 34)
    with pytest.raises(ValueError, match="manifest.json: expected valid JSON"):
        datasets.available()
    (tmp_path / "manifest.json").write_text('{"datasets": [{"name": "x"}]}', encoding="utf-8")
    with pytest.raises(ValueError, match="each have 'name' and 'file'"):
        datasets.load("x")


def test_data_dir_found_beside_an_ancestor(tmp_path, monkeypatch):
    monkeypatch.delenv("BOOSTKIT_DATA", raising=False)
    shared = tmp_path / "shared" / "datasets"
    shared.mkdir(parents=True)
    work = tmp_path / "main" / "sub"
    work.mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "main")
    assert datasets.data_dir() == shared
    monkeypatch.chdir(work)
    assert datasets.data_dir() == shared


def _write_csv_gz(path: Path, rows: list[list[str]]) -> None:
    with gzip.open(path, "wt", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)


@pytest.fixture
def toy_data_dir(tmp_path, monkeypatch):
    """A hand-written data directory, named by BOOSTKIT_DATA."""
    _write_csv_gz(
        tmp_path / "toy.csv.gz",
        [
            ["size", "colour", "bag", "split", "label"],
            ["1.5", "red", "1", "train", "yes"],
            ["", "blue", "1", "train", "no"],
            ["-2", "", "2", "test", "no"],
            ["4e1", "red", "2", "test", "yes"],
        ],
    )
    _write_csv_gz(
        tmp_path / "three.csv.gz",
        [["a", "label"], ["1", "x"], ["2", "y"], ["3", "z"]],
    )
    _write_csv_gz(
        tmp_path / "docs.csv.gz",
        [["text", "label"], ["first, with a comma\nand a newline", "1"], ["second", "0"]],
    )
    _write_csv_gz(tmp_path / "broken.csv.gz", [["a", "label"], ["1", "x"], ["oops", "y"]])
    _write_csv_gz(tmp_path / "fake_ionosphere.csv.gz", [["a", "label"], ["1", "g"]])
    manifest = {
        "datasets": [
            {
                "name": "toy",
                "file": "toy.csv.gz",
                "title": "Toy",
                "licence": "CC0",
                "origin": "hand-written",
                "categorical_columns": ["colour"],
                "extra_columns": ["bag", "split"],
                "positive_class_suggested": "yes",
            },
            {"name": "three", "file": "three.csv.gz"},
            {"name": "docs", "file": "docs.csv.gz", "feature_kind": "text"},
            {"name": "broken", "file": "broken.csv.gz"},
            {"name": "ionosphere", "file": "fake_ionosphere.csv.gz"},
            {"name": "absent", "file": "absent.csv.gz"},
        ]
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.setenv("BOOSTKIT_DATA", str(tmp_path))
    return tmp_path


def test_env_var_data_dir_is_used(toy_data_dir):
    assert datasets.data_dir() == toy_data_dir
    names = datasets.available()
    assert {"toy", "three", "docs", "broken"} <= set(names)
    assert set(BUNDLED) <= set(names)
    assert "absent" not in names


def test_hand_written_dataset_loads(toy_data_dir):
    ds = datasets.load("toy", encode="onehot")
    assert ds.feature_names == ("size", "colour=blue", "colour=red")
    np.testing.assert_array_equal(
        ds.X,
        [[1.5, 0.0, 1.0], [np.nan, 1.0, 0.0], [-2.0, np.nan, np.nan], [40.0, 0.0, 1.0]],
    )
    assert ds.y.tolist() == ["yes", "no", "no", "yes"]
    assert ds.groups.dtype == np.int64 and ds.groups.tolist() == [1, 1, 2, 2]
    assert ds.split.tolist() == ["train", "train", "test", "test"]
    assert (ds.positive, ds.title, ds.licence, ds.source) == ("yes", "Toy", "CC0", "hand-written")
    np.testing.assert_array_equal(ds.binary_target(), [1.0, -1.0, -1.0, 1.0])

    ordinal = datasets.load("toy", encode="ordinal", positive="no")
    assert ordinal.feature_names == ("size", "colour")
    np.testing.assert_array_equal(ordinal.X[:, 1], [1.0, 0.0, np.nan, 1.0])
    np.testing.assert_array_equal(ordinal.binary_target(), [-1.0, 1.0, 1.0, -1.0])

    complete = datasets.load("toy", encode="onehot", dropna=True)
    assert complete.y.tolist() == ["yes", "yes"]
    assert complete.groups.tolist() == [1, 2]
    assert complete.split.tolist() == ["train", "test"]


def test_loads_of_one_file_share_its_parse_but_no_array_and_see_a_rewrite(toy_data_dir):
    first = datasets.load("toy", encode="categorical")
    first.X[:] = 7.0
    first.y[:] = "spoilt"
    first.groups[:] = 9
    first.features.categories[1][:] = "spoilt"
    again = datasets.load("toy", encode="categorical")
    np.testing.assert_array_equal(again.X, [[1.5, 1.0], [np.nan, 0.0], [-2.0, np.nan],
                                            [40.0, 1.0]])
    assert again.y.tolist() == ["yes", "no", "no", "yes"] and again.groups.tolist() == [1, 1, 2, 2]
    assert again.features.categories[1].tolist() == ["blue", "red"]
    # A file written again (another size and modification time) is read again.
    _write_csv_gz(toy_data_dir / "toy.csv.gz", [["size", "colour", "bag", "split", "label"],
                                                ["2.5", "green", "3", "train", "yes"]])
    rewritten = datasets.load("toy", encode="categorical")
    assert rewritten.X.tolist() == [[2.5, 0.0]] and rewritten.groups.tolist() == [3]
    assert rewritten.features.categories[1].tolist() == ["green"]


def test_bundled_file_wins_over_data_dir(toy_data_dir):
    assert datasets.load("ionosphere").X.shape == (351, 34)


def test_text_dataset_needs_load_text(toy_data_dir):
    with pytest.raises(ValueError, match=r"text datasets need load_text\('docs'\)"):
        datasets.load("docs")
    texts, y = datasets.load_text("docs")
    assert texts == ["first, with a comma\nand a newline", "second"]
    assert y.tolist() == ["1", "0"]


def test_multiclass_loads_but_has_no_binary_target(toy_data_dir):
    ds = datasets.load("three")
    assert ds.positive is None
    assert ds.y.tolist() == ["x", "y", "z"]
    with pytest.raises(ValueError, match=r"at most two classes.*'three' has 3: \['x', 'y', 'z'\]"):
        ds.binary_target()
    with pytest.raises(ValueError, match="at most two classes"):
        datasets.load("three", positive="x").binary_target()


def test_non_numeric_value_error_names_column(toy_data_dir):
    with pytest.raises(ValueError, match=r"dataset 'broken', column 'a': expected numbers.*'oops'"):
        datasets.load("broken")


@pytest.mark.parametrize("name", DATA_DIR_TABULAR)
def test_data_dir_dataset_matches_manifest(name):
    directory = _require_data_dir()
    if name not in datasets.available():
        pytest.skip(f"{name} is not in the data directory {directory}")
    entry = _manifest_entries(directory)[name]
    _check_against_manifest(_load_once(name, "ordinal"), _load_once(name, "onehot"), entry)


def test_adult_split_and_missing_values():
    ds = _load_once("adult", "ordinal")
    assert dict(Counter(ds.split.tolist())) == {"train": 32561, "test": 16281}
    assert ds.groups is None
    assert ds.positive == ">50K"
    onehot = _load_once("adult", "onehot")
    assert "workclass=Private" in onehot.feature_names
    assert "sex=Female" in onehot.feature_names and "sex=Male" in onehot.feature_names


def test_musk2_groups_are_bags():
    _require_data_dir()
    if "musk2" not in datasets.available():
        pytest.skip("musk2 is not in the data directory")
    ds = _load_once("musk2", "onehot")
    assert ds.groups.dtype == np.int64 and ds.groups.shape == (6598,)
    bags = np.unique(ds.groups)
    assert bags.size == 102
    bag_labels = {int(bag): set(ds.y[ds.groups == bag].tolist()) for bag in bags}
    assert all(len(labels) == 1 for labels in bag_labels.values())
    assert Counter(labels.pop() for labels in bag_labels.values()) == {"0": 63, "1": 39}


def test_contraceptive_is_bundled_with_three_string_classes():
    ds = datasets.load("contraceptive")
    assert ds.positive is None
    assert ds.X.shape == (1473, 9) and ds.y.dtype.kind == "U"
    assert np.unique(ds.y).tolist() == ["1", "2", "3"]
    assert ds.feature_names[0] == "wife_age" and ds.feature_names[-1] == "media_exposure"


def test_reuters_text_datasets():
    directory = _require_data_dir()
    names = [name for name in datasets.available() if name.startswith("reuters_")]
    if not names:
        pytest.skip(f"no reuters_* dataset in the data directory {directory}")
    entries = _manifest_entries(directory)
    for name in names:
        with pytest.raises(ValueError, match=r"load_text\("):
            datasets.load(name)
        texts, y = datasets.load_text(name)
        assert len(texts) == y.size == entries[name]["rows"]
        assert all(isinstance(text, str) and text for text in texts)
        assert dict(Counter(y.tolist())) == entries[name]["class_counts"]


# -- the categorical encoding (the default) ------------------------------------------------------


@pytest.mark.parametrize("name", BUNDLED)
def test_categorical_encoding_is_the_default_and_describes_the_columns(name):
    entry = BUNDLED_MANIFEST[name]
    header, rows = _read_raw(BUNDLED_DIR / entry["file"])
    ds = _load_once(name, "categorical")
    assert datasets.load.__kwdefaults__["encode"] == "categorical"
    ordinal = _load_once(name, "ordinal")
    np.testing.assert_array_equal(ds.X, ordinal.X)  # same indices, NaN where missing
    assert ds.X.dtype == np.float64 and ds.X.flags.c_contiguous
    schema = ds.features
    assert schema.n_features == ds.X.shape[1] and schema.names == ds.feature_names
    assert [schema.names[j] for j in np.flatnonzero(schema.categorical)] == [
        column for column in schema.names if column in entry["categorical_columns"]]
    for j, column in enumerate(schema.names):
        categories = schema.categories[j]
        if categories is None:
            continue
        raw = np.array([row[header.index(column)] for row in rows])
        assert categories.tolist() == sorted(set(raw.tolist()) - {""})
        codes = ds.X[:, j]
        missing = np.isnan(codes)
        np.testing.assert_array_equal(missing, raw == "")
        assert (categories[codes[~missing].astype(np.int64)] == raw[~missing]).all()
    assert not ordinal.features.categorical.any()
    assert not _load_once(name, "onehot").features.categorical.any()


def test_categorical_encoding_of_a_hand_written_dataset(toy_data_dir):
    ds = datasets.load("toy")
    assert ds.feature_names == ds.features.names == ("size", "colour")
    np.testing.assert_array_equal(
        ds.X, [[1.5, 1.0], [np.nan, 0.0], [-2.0, np.nan], [40.0, 1.0]])
    assert ds.features.categories[0] is None
    assert ds.features.categories[1].tolist() == ["blue", "red"]
    assert ds.features.category(1, 1) == "red"
    complete = datasets.load("toy", dropna=True)
    np.testing.assert_array_equal(complete.X, [[1.5, 1.0], [40.0, 1.0]])
    assert complete.features.categories[1].tolist() == ["blue", "red"]


def test_frame_has_category_columns_with_the_strings():
    pd = pytest.importorskip("pandas")
    ds = datasets.load("breast_cancer_recurrence")
    header, rows = _read_raw(BUNDLED_DIR / "breast_cancer_recurrence.csv.gz")
    frame = ds.frame()
    assert tuple(frame.columns) == ds.feature_names and len(frame) == len(rows)
    for j, column in enumerate(ds.feature_names):
        series = frame[column]
        assert isinstance(series.dtype, pd.CategoricalDtype)
        assert series.cat.categories.tolist() == ds.features.categories[j].tolist()
        raw = [row[header.index(column)] for row in rows]
        assert [None if pd.isna(v) else v for v in series.tolist()] == [v or None for v in raw]
    numeric = datasets.load("breast_cancer_wisconsin").frame()
    assert all(dtype == np.float64 for dtype in numeric.dtypes)
    assert int(numeric.isna().sum().sum()) == 16


def test_adult_is_bundled_and_loads_without_a_data_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOSTKIT_DATA", str(tmp_path))  # an empty data directory
    monkeypatch.chdir(tmp_path)
    assert "adult" in datasets.available()
    ds = datasets.load("adult")
    assert ds.X.shape == (48842, 14)
    assert int(np.isnan(ds.X).sum()) == 6465
    assert int(ds.features.categorical.sum()) == 8
    assert ds.features.categories[ds.feature_names.index("sex")].tolist() == ["Female", "Male"]
    assert "Becker & Kohavi" in ds.source and "CC BY 4.0" in ds.licence

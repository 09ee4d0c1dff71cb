"""Where a study's datasets come from: suites, bundled and KEEL datasets, CSV files and
directories, and OpenML.

:func:`resolve_datasets` turns each name of a study into :class:`DataSource` objects, which
load lazily (and pickle, so that worker processes load their own copy) into :class:`StudyData`.
A name is

* a suite (:func:`suites`): ``"bundled"`` (the tabular datasets shipped in
  ``boostkit/datasets/data``), ``"keel"``, ``"keel-binary"``, ``"keel-multiclass"`` (the 34
  KEEL datasets of Alcalá-Fdez et al. 2011, 20 binary and 14 multi-class), or
  ``"openml-suite:ID"`` (an OpenML benchmark suite by id or alias);
* a dataset: a name of :func:`boostkit.datasets.available` (``"spambase"``), ``"keel/NAME"``,
  or ``"openml:ID"``;
* a CSV file (``.csv`` or ``.csv.gz``), or a directory whose CSV files are each a dataset; the
  target is the column named by ``target=``, else the last column.

KEEL files are bundled under a data budget of 2 MB of compressed files
(:data:`KEEL_BUDGET_BYTES`): all 34 fit (1 875 548 bytes), so the ``keel`` suite runs with no
download. A KEEL file missing from the package (a build that leaves package data out) is read
from ``keel/NAME.csv.gz`` in the data directory (``data_dir=``, else
:func:`boostkit.datasets.data_dir`: ``BOOSTKIT_DATA`` or a ``shared/datasets`` directory beside
an ancestor of the working directory). Every KEEL file is checked against the SHA-256 of its
uncompressed CSV in the manifest. KEEL's text attributes are categorical; its integer-coded
ones stay numbers; labels keep their text (vehicle's ``"bus "`` included).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import Sequence

import attrs
import numpy as np

from .. import datasets
from ..data import encode_labels
from ..datasets import _load_entry, _read_manifest
from ..errors import DataError
from ..features import FeatureSchema

__all__ = ["CsvSource", "DataSource", "KEEL_BUDGET_BYTES", "ManifestSource", "OpenMLSource",
           "SourceError", "StudyData", "read_csv", "resolve_datasets", "suites"]

#: The compressed size the bundled KEEL files stay within (tests/study/test_sources.py checks).
KEEL_BUDGET_BYTES = 2_000_000

_DATASETS_DIR = Path(datasets.__file__).resolve().parent
_KEEL_DIR = _DATASETS_DIR / "keel"
_BUNDLED_DIR = _DATASETS_DIR / "data"
_KEEL_ORIGIN = "KEEL (Alcalá-Fdez et al. 2011)"
_OPENML_HINT = "pip install 'boostkit[openml]'"

_SUITES = {
    "bundled": "the tabular datasets shipped with boostkit (boostkit/datasets/data)",
    "keel": "the 34 KEEL datasets (Alcalá-Fdez et al. 2011): 20 binary, 14 multi-class",
    "keel-binary": "the 20 two-class KEEL datasets",
    "keel-multiclass": "the 14 KEEL datasets with three classes or more",
}
_OPENML_SUITE = ("openml-suite:ID", "an OpenML benchmark suite by id or alias (needs the openml "
                 "package and a connection, or openml's cache)")


class SourceError(DataError):
    """A study dataset that cannot be resolved or read: an unknown name, a missing file, a CSV
    without its target column, OpenML not installed or not reachable."""


def suites() -> dict[str, str]:
    """Suite name -> one-line description, for ``--help`` and the docs."""
    return {**_SUITES, _OPENML_SUITE[0]: _OPENML_SUITE[1]}


def _schema_json(features: FeatureSchema) -> str:
    categories = [None if c is None else [str(v) for v in c.tolist()]
                  for c in features.categories]
    return json.dumps({"names": features.names, "categories": categories})


def _data_hash(X: np.ndarray, y: np.ndarray, features: FeatureSchema) -> str:
    digest = hashlib.sha256()
    digest.update(repr(X.shape).encode())
    digest.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    # Labels as text, each length-prefixed, so that "bus " and "bus" differ and no join is ambiguous.
    digest.update("".join(f"{len(s)}:{s}" for s in map(str, y.tolist())).encode())
    digest.update(_schema_json(features).encode())
    return digest.hexdigest()


def _refuse_continuous(name: str, origin: str, classes: tuple[str, ...]) -> None:
    """Labels read as text that are all numbers, more than two and not all whole, are a
    regression target: refused as the engine refuses a continuous float ``y``
    (:func:`boostkit.data.encode_labels`), rather than compared as one class per value."""
    if len(classes) <= 2:
        return
    try:
        numbers = np.array([float(label) for label in classes])
    except ValueError:
        return
    try:
        encode_labels(numbers, numbers.shape[0])
    except DataError as exc:
        raise SourceError(f"dataset {name!r} ({origin}): a study compares classifiers, and its "
                          f"{len(classes)} labels are all numbers: {exc}") from None


@attrs.frozen
class StudyData:
    """What a study's cells of one dataset are fitted on.

    ``X``: float64 ``(n, d)``, categorical columns as category indices described by
    ``features``; ``y``: the labels as given; ``classes``: the distinct labels as text, sorted;
    ``data_hash``: SHA-256 over ``X``, ``y`` as text and the schema, so that it identifies the
    data a result was computed on; ``origin``: where the data came from, for people.
    """

    name: str
    X: np.ndarray = attrs.field(eq=False, repr=False)
    y: np.ndarray = attrs.field(eq=False, repr=False)
    features: FeatureSchema = attrs.field(eq=False, repr=False)
    classes: tuple[str, ...]
    data_hash: str
    origin: str

    @classmethod
    def of(cls, name: str, X: np.ndarray, y: np.ndarray, features: FeatureSchema,
           origin: str) -> StudyData:
        """``StudyData`` with its classes and hash computed from the arrays."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(y)
        classes = tuple(sorted({str(label) for label in y.tolist()}))
        if len(classes) < 2:
            raise SourceError(f"dataset {name!r} ({origin}): expected at least two classes in "
                              f"its target; got {list(classes)}")
        _refuse_continuous(name, origin, classes)
        return cls(name, X, y, features, classes, _data_hash(X, y, features), origin)


@attrs.frozen
class DataSource:
    """A dataset of a study, not read yet: :meth:`load` reads it (in whichever process runs
    its cells)."""

    name: str
    origin: str

    def load(self) -> StudyData:
        raise NotImplementedError


@attrs.frozen
class ManifestSource(DataSource):
    """A dataset file described by a manifest entry (boostkit's bundled datasets, the data
    directory's, KEEL's), read by :mod:`boostkit.datasets`' loader. ``path`` is relative to
    the package's ``boostkit/datasets`` for a bundled file, so that a process with boostkit
    installed elsewhere (a Dask worker) reads its own copy. With ``sha256_csv`` in the entry, the
    uncompressed file must have that SHA-256."""

    path: str = ""
    entry: dict = attrs.field(factory=dict, eq=False, hash=False, repr=False)

    @classmethod
    def of(cls, name: str, origin: str, path: Path, entry: dict) -> ManifestSource:
        stored = path.relative_to(_DATASETS_DIR) if path.is_relative_to(_DATASETS_DIR) else path
        return cls(name, origin, stored.as_posix(), entry)

    def load(self) -> StudyData:
        path = _DATASETS_DIR / self.path  # an absolute path stays as it is
        if not path.is_file():
            raise SourceError(f"dataset {self.name!r}: its file {str(path)!r} does not exist "
                              "in this process (another installation, or a data directory not "
                              "shared with it)")
        expected = self.entry.get("sha256_csv")
        if expected is not None:
            with gzip.open(path, "rb") as fh:
                got = hashlib.sha256(fh.read()).hexdigest()
            if got != expected:
                raise SourceError(f"dataset {self.name!r}: {path} has SHA-256 {got}, but the "
                                  f"manifest gives {expected}: the file is not the one listed")
        try:
            ds = _load_entry(self.name, path, self.entry)
        except ValueError as exc:
            raise SourceError(f"dataset {self.name!r}: {exc}") from None
        return StudyData.of(self.name, ds.X, ds.y, ds.features, self.origin)


@attrs.frozen
class CsvSource(DataSource):
    """A CSV file (``.gz`` decompressed), read by :func:`read_csv`: the target is the column
    ``target``, else the last; non-numeric feature columns are categorical."""

    path: str = ""
    target: str | None = None

    def load(self) -> StudyData:
        try:
            X, y, features, _, _ = read_csv(self.path, self.target)
        except SourceError as exc:
            raise SourceError(f"dataset {self.name!r}: {exc}") from None
        return StudyData.of(self.name, X, y, features, self.origin)


def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def parse_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def read_csv(path: str | Path, target: str | None = None):
    """Read a CSV file with a header row into features and labels (a study's CSV datasets,
    and ``boostkit compare``'s CSV file).

    The ``target`` column (default: the last) holds the labels, kept as text. A feature column is
    numeric when every non-empty field parses as a number; otherwise it is categorical: its
    values are the indices of its distinct non-empty texts in sorted order, as
    :func:`boostkit.datasets.load` gives them. Empty fields (and numbers that read as NaN) are
    missing values, NaN in ``X``; only rows with an empty label are dropped. ``.gz`` files are
    decompressed.

    A file that cannot be read as such raises :class:`SourceError`, saying why.

    Returns
    -------
    X, labels, features (a :class:`boostkit.FeatureSchema`: the column names and the categories
    of the categorical columns), target, n_dropped (rows without a label)
    """
    path = Path(path)
    try:
        with _open_text(path) as fh:
            rows = [row for row in csv.reader(fh) if row]
    except FileNotFoundError:
        raise SourceError(f"cannot read {path}: no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error, EOFError) as exc:
        raise SourceError(f"cannot read {path} as a UTF-8 CSV file: {exc}") from None
    if not rows:
        raise SourceError(f"{path} is empty: expected a header row and data rows")
    header = [name.strip() for name in rows[0]]
    body = [[field.strip() for field in row] for row in rows[1:]]
    if len(set(header)) != len(header):
        repeated = sorted(name for name, count in Counter(header).items() if count > 1)
        raise SourceError(f"{path}: the header names a column more than once: {repeated}")
    for line, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise SourceError(
                f"{path}: a row has {len(row)} fields but the header has {len(header)} "
                f"(row {line} counting the header, blank lines skipped)"
            )
    if not body:
        raise SourceError(f"{path} has a header but no data rows")
    target = header[-1] if target is None else target
    if target not in header:
        raise SourceError(f"target column {target!r} is not in {path}; its columns are {header}")
    if len(header) < 2:
        raise SourceError(f"{path} has only the target column {target!r}: no features")
    columns = dict(zip(header, zip(*body)))
    labels = np.array(columns[target], dtype=str)
    keep = labels != ""
    if not keep.any():
        raise SourceError(f"{path}: every row has an empty label (column {target!r})")
    names = tuple(name for name in header if name != target)
    X = np.empty((int(keep.sum()), len(names)))
    categories: list[np.ndarray | None] = []
    for j, name in enumerate(names):
        values = np.array(columns[name], dtype=str)[keep]
        parsed = [math.nan if v == "" else parse_float(v) for v in values]
        if None in parsed:
            present = values != ""
            categories.append(np.unique(values[present]))
            X[:, j] = np.where(present, np.searchsorted(categories[-1], values), np.nan)
        else:
            categories.append(None)
            X[:, j] = parsed
    features = FeatureSchema(len(names), names, tuple(categories))
    return X, labels[keep], features, target, int((~keep).sum())


def _openml():
    try:
        import openml
    except ImportError:
        raise SourceError(f"OpenML datasets need the openml package ({_OPENML_HINT}); "
                          "it is not installed") from None
    return openml


def _openml_call(what: str, call, *args, **kwargs):
    """Call openml; a network failure or a server refusal becomes a :class:`SourceError`."""
    openml = _openml()
    try:
        return call(*args, **kwargs)
    except OSError as exc:  # requests' errors are OSErrors: no connection, DNS, timeout
        raise SourceError(
            f"cannot reach OpenML for {what} (offline?): {exc}. OpenML data load offline only "
            f"from openml's cache ({openml.config.get_cache_directory()}) of an earlier "
            "online run") from None
    except openml.exceptions.PyOpenMLError as exc:
        raise SourceError(f"OpenML cannot give {what}: {exc}") from None


@attrs.frozen
class OpenMLSource(DataSource):
    """OpenML dataset ``dataset_id`` through the openml package (its cache first), the target
    its default target attribute unless ``target`` is given."""

    dataset_id: int = 0
    target: str | None = None

    def load(self) -> StudyData:
        openml = _openml()
        what = f"dataset {self.dataset_id}"
        ds = _openml_call(what, openml.datasets.get_dataset, self.dataset_id,
                          download_data=True, download_qualities=False,
                          download_features_meta_data=False)
        target = self.target or ds.default_target_attribute
        if not target or "," in target:
            raise SourceError(f"OpenML {what} ({ds.name}): expected one default target "
                              f"attribute; got {target!r}. Give the target column by name")
        frame, y, categorical, _ = _openml_call(what, ds.get_data, target=target)
        # A row without a label has no class to learn or score: left out, as read_csv does.
        labelled = y.notna().to_numpy()
        frame, y = frame[labelled], y[labelled]
        features, X = FeatureSchema.learn(frame, categorical_features=list(categorical))
        # The arrays are what the cells see: a schema for encoded arrays, not a table's.
        features = FeatureSchema(features.n_features, features.names, features.categories)
        labels = np.asarray(y).astype(str)
        return StudyData.of(self.name, X, labels, features, self.origin)


def _openml_id(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise SourceError(f"dataset {name!r}: expected an integer OpenML dataset id after "
                          f"'openml:'; got {text!r}") from None


def _openml_dataset(dataset_id: int) -> OpenMLSource:
    return OpenMLSource(f"openml/{dataset_id}", f"https://www.openml.org/d/{dataset_id}",
                        dataset_id)


def _openml_suite(suite: str) -> list[DataSource]:
    if not suite:
        raise SourceError("dataset 'openml-suite:': expected an OpenML suite id or alias after "
                          "'openml-suite:', e.g. openml-suite:99 or openml-suite:OpenML-CC18")
    openml = _openml()
    key = int(suite) if suite.isdigit() else suite
    found = _openml_call(f"suite {suite}", openml.study.get_suite, key)
    if not found.data:
        raise SourceError(f"OpenML suite {suite} lists no dataset")
    return [_openml_dataset(int(d)) for d in found.data]


def _data_dir(data_dir: str | os.PathLike | None) -> Path | None:
    """The data directory, resolved: a worker may run in another working directory."""
    if data_dir is None:
        try:
            found = datasets.data_dir()
        except NotADirectoryError as exc:
            raise SourceError(str(exc)) from None
        return None if found is None else found.resolve()
    path = Path(data_dir).expanduser()
    if not path.is_dir():
        raise SourceError(f"data_dir: expected a directory of datasets; got {str(path)!r}, "
                          "which is not a directory")
    return path.resolve()


def _manifest(directory: Path) -> dict[str, dict]:
    """A directory's manifest entries by name; a malformed manifest is a :class:`SourceError`."""
    try:
        return _read_manifest(directory)
    except ValueError as exc:
        raise SourceError(str(exc)) from None


def _keel_entries() -> dict[str, dict]:
    return _manifest(_KEEL_DIR)


def _keel(names: Sequence[str], directory: Path | None) -> list[DataSource]:
    """The KEEL datasets ``names``: bundled files first, then ``<data dir>/keel``; every missing
    one is named at once, with the places looked in."""
    entries = _keel_entries()
    places = [_KEEL_DIR] + ([directory / "keel"] if directory is not None else [])
    found, missing = [], []
    for name in names:
        entry = entries[name]
        path = next((p / entry["file"] for p in places if (p / entry["file"]).is_file()), None)
        if path is None:
            missing.append(name)
        else:
            found.append(ManifestSource.of(f"keel/{name}", _KEEL_ORIGIN, path, entry))
    if missing:
        looked = " and ".join(repr(str(p)) for p in places)
        hint = ("" if directory is not None else "; no data directory was found (set "
                "BOOSTKIT_DATA or give --data-dir / data_dir=)")
        raise SourceError(f"KEEL dataset(s) {missing} not found: looked for NAME.csv.gz in "
                          f"{looked}{hint}")
    return found


def _suite(name: str, directory: Path | None) -> list[DataSource]:
    if name == "bundled":
        return [ManifestSource.of(n, "bundled", _BUNDLED_DIR / e["file"], e)
                for n, e in sorted(_manifest(_BUNDLED_DIR).items())
                if _tabular_problem(e) is None]
    entries = _keel_entries()
    keep = {"keel": lambda e: True, "keel-binary": lambda e: e["n_classes"] == 2,
            "keel-multiclass": lambda e: e["n_classes"] > 2}[name]
    return _keel(sorted(n for n, e in entries.items() if keep(e)), directory)


def _tabular_problem(entry: dict) -> str | None:
    """Why a manifest entry cannot be a study dataset, or None."""
    if entry.get("feature_kind") == "text":
        return "is a text dataset (boostkit.datasets.load_text), not a table of features"
    if "bag" in entry.get("extra_columns", []):
        return ("is a multiple-instance dataset: its rows come in bags, which a study's row "
                "folds would split")
    return None


def _named(name: str, directory: Path | None) -> DataSource | None:
    """A dataset of the bundled manifest or of the data directory's, else None."""
    for where in (_BUNDLED_DIR, directory):
        entry = None if where is None else _manifest(where).get(name)
        if entry is not None and (where / entry["file"]).is_file():
            problem = _tabular_problem(entry)
            if problem is not None:
                raise SourceError(f"dataset {name!r} {problem}")
            origin = "bundled" if where == _BUNDLED_DIR else str(where)
            return ManifestSource.of(name, origin, where / entry["file"], entry)
    return None


def _is_csv(path: Path) -> bool:
    return path.name.lower().endswith((".csv", ".csv.gz"))


def _csv_name(path: Path) -> str:
    stem = path.name[: -len(".gz")] if path.name.lower().endswith(".gz") else path.name
    return f"csv/{stem[: -len('.csv')]}"


def _csv(path: Path, target: str | None) -> list[DataSource]:
    path = path.resolve()  # a worker may run in another working directory
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and _is_csv(p))
        if not files:
            raise SourceError(f"directory {str(path)!r} holds no .csv or .csv.gz file")
        return [CsvSource(_csv_name(p), str(p), str(p), target) for p in files]
    return [CsvSource(_csv_name(path), str(path), str(path), target)]


def _unknown(name: str, directory: Path | None) -> SourceError:
    where = (f"the data directory {str(directory)!r}" if directory is not None
             else "no data directory (BOOSTKIT_DATA or --data-dir)")
    known = sorted(set(_manifest(_BUNDLED_DIR))
                   | set(_manifest(directory) if directory is not None else ()))
    if _is_csv(Path(name)) or os.sep in name:
        return SourceError(f"dataset {name!r}: no such file or directory")
    return SourceError(
        f"dataset {name!r}: expected a suite ({', '.join(suites())}), a dataset ({known}, "
        f"from the package and {where}), 'keel/NAME' (NAME one of {sorted(_keel_entries())}), "
        "'openml:ID', or a CSV file or directory")


def resolve_datasets(names: Sequence[str], *, data_dir: str | os.PathLike | None = None,
                     target: str | None = None) -> list[DataSource]:
    """The data sources of a study's dataset ``names`` (suites expanded, in order).

    ``data_dir``: where datasets not bundled are read from (default
    :func:`boostkit.datasets.data_dir`). ``target``: the target column of CSV files (default:
    the last column); OpenML datasets have their default target attribute, as OpenML's tasks
    do (an :class:`OpenMLSource` made directly may name another).

    Raises :class:`SourceError` (a :class:`boostkit.errors.DataError`) for an unknown name,
    with the valid choices; for missing data files, with where they were looked for; for two
    sources of one name; and for OpenML when the package is missing or OpenML cannot be
    reached. Files are read only by :meth:`DataSource.load`.
    """
    if isinstance(names, (str, os.PathLike)):
        names = [names]
    directory = _data_dir(data_dir)
    sources: list[DataSource] = []
    for raw in names:
        name = os.fspath(raw)
        if name in _SUITES:
            sources += _suite(name, directory)
        elif name.startswith("openml-suite:"):
            sources += _openml_suite(name.partition(":")[2])
        elif name.startswith("openml:"):
            sources.append(_openml_dataset(_openml_id(name.partition(":")[2], name)))
        elif name.startswith("keel/"):
            short = name.partition("/")[2]
            if short not in _keel_entries():
                raise SourceError(f"dataset {name!r}: expected 'keel/NAME' with NAME one of "
                                  f"{sorted(_keel_entries())}; got {short!r}")
            sources += _keel([short], directory)
        elif (found := _named(name, directory)) is not None:
            sources.append(found)
        elif Path(name).expanduser().exists():
            sources += _csv(Path(name).expanduser(), target)
        else:
            raise _unknown(name, directory)
    seen: dict[str, str] = {}
    for source in sources:
        if source.name in seen:
            raise SourceError(f"two datasets of the study are named {source.name!r} "
                              f"({seen[source.name]} and {source.origin}); give each once")
        seen[source.name] = source.origin
    return sources

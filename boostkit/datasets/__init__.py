"""Real datasets for boostkit's tests, examples and benchmarks.

Eight UCI datasets (CC BY 4.0) ship with the package in ``boostkit/datasets/data``, adult among
them (the bundled files stay under 1 MB); see the ``README.md`` there for their attribution.
Larger or differently licensed datasets load from a data directory laid out the same way
(``NAME.csv.gz`` files described by a ``manifest.json``): the directory named by the environment
variable ``BOOSTKIT_DATA``, or else a ``shared/datasets`` directory beside the current working
directory or beside one of its ancestors. The 34 KEEL datasets ship in ``boostkit/datasets/keel``
with a manifest of the same format; studies read them (``keel/NAME``, the ``keel`` suites of
:mod:`boostkit.study.sources`).

Each ``NAME.csv.gz`` is a gzip-compressed UTF-8 CSV with a header row: the feature columns, then
the extra columns listed in the manifest entry's ``extra_columns`` (``bag``, ``split``), then the
target column ``label``. Missing values are empty fields. A manifest entry needs ``name`` and
``file``; it may give ``title``, ``licence``, ``origin``, ``source``, ``categorical_columns``,
``extra_columns``, ``positive_class_suggested`` and ``feature_kind`` (``"text"`` marks a dataset
for :func:`load_text`).

Categorical columns load as such by default (``encode="categorical"``): category indices in a
float64 matrix, described by :attr:`Dataset.features`, which ``Booster.fit(X, y,
features=ds.features)`` takes as it is. Only the standard library and numpy are used to read the
files; :meth:`Dataset.frame` imports pandas. A process parses each file once while it is
unchanged (the last eight files read): every load returns arrays of its own.
"""

from __future__ import annotations

import csv
import functools
import gzip
import json
import os
from pathlib import Path

import attrs
import numpy as np

from ..features import FeatureSchema

__all__ = ["Dataset", "available", "data_dir", "load", "load_text"]

_BUNDLED_DIR = Path(__file__).resolve().parent / "data"
_MANIFEST = "manifest.json"
_ENV_VAR = "BOOSTKIT_DATA"
_ENCODINGS = ("categorical", "onehot", "ordinal")
_KNOWN_EXTRA_COLUMNS = ("bag", "split")


def _array_repr(value: np.ndarray | None) -> str:
    if value is None:
        return "None"
    return f"array(shape={value.shape}, dtype={value.dtype})"


@attrs.frozen
class Dataset:
    """A tabular dataset loaded by :func:`load`.

    Attributes
    ----------
    name : str
        The dataset's name, as passed to :func:`load`.
    X : numpy.ndarray
        Features, float64, shape ``(n_samples, n_features)``, C-contiguous. Missing values are NaN;
        a categorical column holds category indices (see ``features``) unless one-hot encoded.
    y : numpy.ndarray
        Labels, 1-D array of str, exactly as written in the file.
    feature_names : tuple of str
        One name per column of ``X``; a one-hot column is named ``"column=value"``.
    positive : str or None
        The positive label: the ``positive`` argument of :func:`load`, else the manifest's
        suggested positive class; None for multi-class data without either.
    groups : numpy.ndarray or None
        The ``bag`` column (multiple-instance datasets such as musk): int64 when every value is an
        integer, else str. None when the dataset has no ``bag`` column.
    split : numpy.ndarray or None
        The ``split`` column as str (``"train"``/``"test"`` for adult), or None.
    title : str
        Human-readable title.
    licence : str
        Licence of the data.
    source : str
        Citation: where the data originate and which file they were taken from.
    features : boostkit.FeatureSchema
        What the columns of ``X`` are: ``names`` is ``feature_names``; with
        ``encode="categorical"``, ``categories[j]`` is the sorted array of category strings of a
        categorical column (its values in ``X`` index it) and None for a numeric column. With
        ``"onehot"`` or ``"ordinal"`` every column is numeric (None).
    """

    name: str
    X: np.ndarray = attrs.field(eq=False, repr=_array_repr)
    y: np.ndarray = attrs.field(eq=False, repr=_array_repr)
    feature_names: tuple[str, ...]
    positive: str | None
    groups: np.ndarray | None = attrs.field(eq=False, repr=_array_repr)
    split: np.ndarray | None = attrs.field(eq=False, repr=_array_repr)
    title: str
    licence: str
    source: str
    features: FeatureSchema = attrs.field(eq=False, repr=False)

    def frame(self):
        """Return ``X`` as a pandas DataFrame: one column per feature, named as in
        ``feature_names``; a categorical column is a pandas ``category`` column of its category
        strings (missing values NaN), a numeric one float64. Needs pandas.

        ``Booster(...).fit(ds.frame(), y)`` reads the categorical columns from their dtype, as
        scikit-learn's ``HistGradientBoostingClassifier(categorical_features="from_dtype")`` and
        LightGBM do.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "Dataset.frame() needs pandas (pip install pandas); the arrays X and features "
                "need nothing more"
            ) from None
        columns = {}
        for j, name in enumerate(self.feature_names):
            categories = self.features.categories[j]
            if categories is None:
                columns[name] = self.X[:, j]
            else:
                codes = np.where(np.isnan(self.X[:, j]), -1, self.X[:, j]).astype(np.int64)
                columns[name] = pd.Categorical.from_codes(codes, categories=categories)
        return pd.DataFrame(columns)

    def binary_target(self) -> np.ndarray:
        """Return the labels as +1 (positive class) and -1 (any other class).

        Returns
        -------
        numpy.ndarray
            float64 array of shape ``(n_samples,)`` holding +1.0 where ``y == positive`` and -1.0
            elsewhere.

        Raises
        ------
        ValueError
            If the dataset has more than two classes (use ``np.where(ds.y == label, 1.0, -1.0)``
            for a one-vs-rest target), or if it has no positive class.
        """
        classes = np.unique(self.y)
        if classes.size > 2:
            raise ValueError(
                f"binary_target() needs at most two classes; dataset {self.name!r} has "
                f"{classes.size}: {classes.tolist()}. For a one-vs-rest target use "
                "np.where(dataset.y == label, 1.0, -1.0)."
            )
        if self.positive is None:
            raise ValueError(
                f"binary_target() needs a positive class; dataset {self.name!r} has none. "
                f"Pass one of {classes.tolist()} as load({self.name!r}, positive=...)."
            )
        return np.where(self.y == self.positive, 1.0, -1.0)


def data_dir() -> Path | None:
    """Return the directory that holds the datasets not bundled with boostkit.

    Returns
    -------
    pathlib.Path or None
        The directory named by the environment variable ``BOOSTKIT_DATA`` if it is set (and not
        empty); otherwise the first ``shared/datasets`` directory found beside the current working
        directory or beside one of its ancestors (nearest first), so that running inside
        ``/work/main`` finds ``/work/shared/datasets``; None if there is none.

    Raises
    ------
    NotADirectoryError
        If ``BOOSTKIT_DATA`` is set but does not name a directory.
    """
    configured = os.environ.get(_ENV_VAR)
    if configured:
        path = Path(configured).expanduser()
        if not path.is_dir():
            raise NotADirectoryError(
                f"environment variable {_ENV_VAR}: expected a directory holding NAME.csv.gz files "
                f"and a {_MANIFEST}; got {configured!r}, which is not a directory"
            )
        return path
    for ancestor in Path.cwd().parents:
        candidate = ancestor / "shared" / "datasets"
        if candidate.is_dir():
            return candidate
    return None


def _read_manifest(directory: Path) -> dict[str, dict]:
    """Map each dataset name of ``directory/manifest.json`` to its entry ({} if no manifest)."""
    path = directory / _MANIFEST
    if not path.is_file():
        return {}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: expected valid JSON; got a parse error ({exc})") from None
    entries = manifest.get("datasets") if isinstance(manifest, dict) else None
    if not isinstance(entries, list) or not all(
        isinstance(entry, dict) and "name" in entry and "file" in entry for entry in entries
    ):
        raise ValueError(
            f"{path}: expected a JSON object with a 'datasets' list of objects that each have "
            "'name' and 'file'; got a document that does not match"
        )
    return {str(entry["name"]): entry for entry in entries}


def _loadable(directory: Path) -> dict[str, tuple[Path, dict]]:
    """Map each dataset of ``directory``'s manifest whose file exists to its file and entry."""
    found = {}
    for name, entry in _read_manifest(directory).items():
        path = directory / entry["file"]
        if path.is_file():
            found[name] = (path, entry)
    return found


def available() -> list[str]:
    """List the datasets that can be loaded right now.

    Returns
    -------
    list of str
        Sorted names: the bundled datasets, plus every dataset of the data directory's
        ``manifest.json`` (see :func:`data_dir`) whose file exists there. Text datasets are
        included; load them with :func:`load_text`.

    Raises
    ------
    NotADirectoryError
        If ``BOOSTKIT_DATA`` is set but does not name a directory.
    ValueError
        If the data directory's ``manifest.json`` is malformed.
    """
    directory = data_dir()
    names = set(_loadable(_BUNDLED_DIR))
    if directory is not None:
        names.update(_loadable(directory))
    return sorted(names)


def _lookup(name: str) -> tuple[Path, dict]:
    """Find a dataset's file and manifest entry; the data directory is read only if needed."""
    bundled = _loadable(_BUNDLED_DIR)
    if name in bundled:
        return bundled[name]
    directory = data_dir()
    shared = {} if directory is None else _loadable(directory)
    if name in shared:
        return shared[name]
    where = (
        f"the data directory {str(directory)!r} does not list it in a {_MANIFEST} with its file"
        if directory is not None
        else "no data directory was found"
    )
    raise ValueError(
        f"name: expected one of the available datasets {sorted(bundled.keys() | shared.keys())}; "
        f"got {name!r}. Larger datasets (musk1, musk2, pima_diabetes, reuters_*) "
        f"load from the directory named by the environment variable {_ENV_VAR} (or a "
        f"shared/datasets directory beside an ancestor of the working directory); {where}."
    )


def _read_columns(path: Path, entry: dict) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """Read a dataset file; return its feature column names, every column, and the labels."""
    with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        rows = list(reader)
    if not header:
        raise ValueError(f"{path}: expected a CSV header row; got an empty file")
    if len(set(header)) != len(header):
        raise ValueError(f"{path}: expected distinct column names; got {header}")
    for line, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise ValueError(
                f"{path}, line {line}: expected {len(header)} fields (as in the header); "
                f"got {len(row)}"
            )
    extra = list(entry.get("extra_columns", []))
    target = entry.get("target_column", "label")
    needed = [*extra, target, *entry.get("categorical_columns", [])]
    absent = [column for column in needed if column not in header]
    if absent:
        raise ValueError(
            f"{path}: expected the columns {needed} named by the manifest entry "
            f"{entry['name']!r}; got a header without {absent}"
        )
    unknown = [column for column in extra if column not in _KNOWN_EXTRA_COLUMNS]
    if unknown:
        raise ValueError(
            f"manifest entry {entry['name']!r}: expected extra_columns among "
            f"{list(_KNOWN_EXTRA_COLUMNS)}; got {unknown}"
        )
    transposed = zip(*rows) if rows else ([] for _ in header)
    columns = {column: list(values) for column, values in zip(header, transposed)}
    features = [column for column in header if column != target and column not in extra]
    return features, columns, columns[target]


def _parse_numbers(dataset: str, column: str, values: list[str]) -> np.ndarray:
    try:
        filled = [value or "nan" for value in values]
        return np.fromiter(map(float, filled), dtype=np.float64, count=len(filled))
    except ValueError as exc:
        raise ValueError(
            f"dataset {dataset!r}, column {column!r}: expected numbers or empty fields; got a "
            f"value that is neither ({exc}). If the column is categorical, list it in the "
            "manifest's categorical_columns."
        ) from None


def _category_codes(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """A categorical column's codes (index in the sorted category strings, -1 where missing)
    and its categories."""
    values = np.array(values, dtype=str)
    missing = values == ""
    categories = np.unique(values[~missing])
    codes = np.searchsorted(categories, values)
    codes[missing] = -1
    return codes, categories


def _encode_categorical(
    column: str, codes: np.ndarray, categories: np.ndarray, encode: str
) -> tuple[np.ndarray, list[str], list[np.ndarray | None]]:
    """The block of columns of one categorical column, their names and their categories."""
    missing = codes < 0
    indices = codes.astype(np.float64)
    indices[missing] = np.nan
    if encode == "categorical":
        return indices[:, None], [column], [categories.copy()]
    if encode == "ordinal":
        return indices[:, None], [column], [None]
    indicators = (codes[:, None] == np.arange(categories.size)).astype(np.float64)
    indicators[missing] = np.nan
    names = [f"{column}={category}" for category in categories.tolist()]
    return indicators, names, [None] * len(names)


def _groups(values: np.ndarray) -> np.ndarray:
    try:
        return values.astype(np.int64)
    except ValueError:
        return values


def _citation(entry: dict) -> str:
    source = entry.get("source", "")
    if isinstance(source, dict):
        source = (
            f"file {source.get('path_in_package', '?')} from "
            f"{source.get('package', '?')} {source.get('version', '')}".rstrip()
        )
    return "; ".join(part for part in (entry.get("origin", ""), source) if part)


def load(
    name: str, *, encode: str = "categorical", positive: str | None = None, dropna: bool = False
) -> Dataset:
    """Load a tabular dataset by name.

    Bundled datasets are preferred over a file of the same name in the data directory.

    Parameters
    ----------
    name : str
        One of :func:`available` (except the text datasets, see :func:`load_text`).
    encode : {"categorical", "onehot", "ordinal"}, default "categorical"
        How categorical columns (the manifest's ``categorical_columns``) become numbers.
        ``"categorical"``: one column of category indices 0..k-1 in sorted order of the category
        strings, NaN for a missing value, declared categorical in ``Dataset.features`` (whose
        ``categories`` hold the strings), so that learners split them by category.
        ``"onehot"``: one 0/1 column per category value seen, named ``"column=value"``, in sorted
        order of the values; a missing value gives NaN in all of that column's indicators.
        ``"ordinal"``: the codes of ``"categorical"``, declared numeric (ordered).
        Numeric columns parse to float; empty fields become NaN.
    positive : str, optional
        The positive label; defaults to the manifest's suggested positive class.
    dropna : bool, default False
        Drop every row with a NaN feature.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        If ``name`` is unknown or names a text dataset, if ``encode`` is not one of the choices,
        if ``positive`` is not a label value of the dataset, or if the file or the manifest
        entry is malformed (for example a non-numeric value in a non-categorical column).
    NotADirectoryError
        If ``name`` is not bundled and ``BOOSTKIT_DATA`` is set but does not name a directory.
    """
    if encode not in _ENCODINGS:
        raise ValueError(f"encode: expected one of {list(_ENCODINGS)}; got {encode!r}")
    path, entry = _lookup(name)
    return _load_entry(name, path, entry, encode=encode, positive=positive, dropna=dropna)


@attrs.frozen
class _Table:
    """A dataset file parsed: its feature columns, each numeric one as float64 (NaN where
    empty), each categorical one as codes and categories, the labels, the extra columns."""

    features: tuple[str, ...]
    numeric: dict
    categorical: dict
    labels: np.ndarray
    groups: np.ndarray | None
    split: np.ndarray | None


def _table(name: str, path: Path, entry: dict) -> _Table:
    """The parsed table of ``path``, remembered for the last few files (by path, modification
    time, size and manifest entry): parsing adult's CSV takes ~0.6 s, its arrays ~4 MB, and
    studies, tests and examples load the same file many times."""
    stat = path.stat()
    return _parsed_table(name, str(path), stat.st_mtime_ns, stat.st_size,
                         json.dumps(entry, sort_keys=True))


@functools.lru_cache(maxsize=8)
def _parsed_table(name: str, path: str, mtime_ns: int, size: int, entry_json: str) -> _Table:
    entry = json.loads(entry_json)
    features, columns, labels = _read_columns(Path(path), entry)
    categorical = set(entry.get("categorical_columns", []))
    extra = entry.get("extra_columns", [])
    table = _Table(
        features=tuple(features),
        numeric={column: _parse_numbers(name, column, columns[column])
                 for column in features if column not in categorical},
        categorical={column: _category_codes(columns[column])
                     for column in features if column in categorical},
        labels=np.array(labels, dtype=str),
        groups=_groups(np.array(columns["bag"], dtype=str)) if "bag" in extra else None,
        split=np.array(columns["split"], dtype=str) if "split" in extra else None,
    )
    for array in (*table.numeric.values(), *(a for pair in table.categorical.values()
                                             for a in pair), table.labels, table.groups,
                  table.split):
        if array is not None:
            array.flags.writeable = False
    return table


def _load_entry(name: str, path: Path, entry: dict, *, encode: str = "categorical",
                positive: str | None = None, dropna: bool = False) -> Dataset:
    """:func:`load` of the file ``path`` described by the manifest entry ``entry`` (also used for
    the KEEL collection of :mod:`boostkit.study.sources`, whose manifest has this format)."""
    if entry.get("feature_kind") == "text":
        raise ValueError(
            f"name: dataset {name!r} is a text dataset (one column of raw text), which load() "
            f"cannot turn into a feature matrix; text datasets need load_text({name!r})"
        )
    table = _table(name, path, entry)
    blocks: list[np.ndarray] = []
    feature_names: list[str] = []
    feature_categories: list[np.ndarray | None] = []
    for column in table.features:
        if column in table.categorical:
            block, names, categories = _encode_categorical(
                column, *table.categorical[column], encode)
        else:
            block, names, categories = table.numeric[column][:, None], [column], [None]
        blocks.append(block)
        feature_names.extend(names)
        feature_categories.extend(categories)
    # New arrays every call: the parsed table is shared by the loads of the same file.
    y = table.labels.copy()
    X = np.concatenate(blocks, axis=1) if blocks else np.empty((y.size, 0))
    groups = None if table.groups is None else table.groups.copy()
    split = None if table.split is None else table.split.copy()
    if positive is None:
        positive = entry.get("positive_class_suggested")
    label_values = np.unique(y).tolist()
    if positive is not None and positive not in label_values:
        raise ValueError(
            f"positive: expected one of the label values of {name!r}, {label_values}; "
            f"got {positive!r}"
        )
    if dropna:
        keep = ~np.isnan(X).any(axis=1)
        X, y = X[keep], y[keep]
        groups = None if groups is None else groups[keep]
        split = None if split is None else split[keep]
    return Dataset(
        name=name,
        X=np.ascontiguousarray(X, dtype=np.float64),
        y=y,
        feature_names=tuple(feature_names),
        positive=positive,
        groups=groups,
        split=split,
        title=entry.get("title", name),
        licence=entry.get("licence", "not stated"),
        source=_citation(entry),
        features=FeatureSchema(len(feature_names), tuple(feature_names),
                               tuple(feature_categories)),
    )


def load_text(name: str) -> tuple[list[str], np.ndarray]:
    """Load a text dataset (such as ``reuters_r8_train``) by name.

    Parameters
    ----------
    name : str
        One of :func:`available` whose manifest entry has ``"feature_kind": "text"``.

    Returns
    -------
    texts : list of str
        One document per row, exactly as in the file.
    y : numpy.ndarray
        Labels, 1-D array of str, exactly as in the file.

    Raises
    ------
    ValueError
        If ``name`` is unknown or is not a text dataset.
    NotADirectoryError
        If ``name`` is not bundled and ``BOOSTKIT_DATA`` is set but does not name a directory.
    """
    path, entry = _lookup(name)
    if entry.get("feature_kind") != "text":
        raise ValueError(
            f"name: expected a text dataset; {name!r} is tabular, load it with load({name!r})"
        )
    features, columns, labels = _read_columns(path, entry)
    if len(features) != 1:
        raise ValueError(
            f"{path}: expected exactly one text column besides the label; got {features}"
        )
    return columns[features[0]], np.array(labels, dtype=str)

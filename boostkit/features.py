"""What the columns of X are: their names and which of them are categorical.

Real tables come as DataFrames with named columns, missing values and words. A
:class:`FeatureSchema` is learnt from the training ``X`` once, kept in the model (and its file),
and applied to every later ``X`` (validation, prediction), so that components always see one
thing: a float64 matrix where a numeric column holds its values, a categorical column holds the
index of its category in ``schema.categories[j]`` (0, 1, ..., K - 1), and NaN is a missing value
(a category unseen in training is missing too, and counted in a warning). Feature names travel
with it into round records, ``describe()``, plots and the model file.

A categorical column's categories keep their type, numbers (float64) or text, and a table's
values are matched to them by value and type, never read as category indices; only an array
holds indices, under text categories (the loader's encoding). Dates, durations and complex
numbers are refused, naming the column (docs/tabular.md, "What is matched how").

Accepted ``X``: a numpy array or anything ``np.asarray`` reads, a scipy.sparse matrix (passed
through: sparse data are numeric and unnamed), a pandas DataFrame, a dataframe with
``to_pandas()`` (polars, pyarrow tables) or any object with the dataframe interchange protocol
(``__dataframe__``, read through pandas). pandas is needed only when such an object is given.
"""

from __future__ import annotations

import numbers
import sys
import warnings
from typing import Any, Sequence

import attrs
import numpy as np

from .errors import DataError, DataWarning, ModelFormatError

__all__ = ["FeatureSchema", "feature_label", "is_table", "CATEGORICAL_FROM_DTYPE"]

#: ``categorical_features`` default: a DataFrame's ``category``, string and object columns are
#: categorical, every other column (and every column of an array) numeric.
CATEGORICAL_FROM_DTYPE = "from_dtype"


def feature_label(features: FeatureSchema | None, j: int) -> str:
    """How column ``j`` is named in descriptions: its name, or ``x[j]`` for unnamed data."""
    if features is None or features.names is None:
        return f"x[{j}]"
    return features.names[j]


def is_sparse(X) -> bool:
    """Whether ``X`` is a scipy.sparse matrix or array, recognised without importing scipy."""
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def _is_dataframe(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def is_table(X) -> bool:
    """Whether ``X`` is read as a table, by column and name (a pandas DataFrame, a dataframe
    with ``to_pandas()`` such as polars or a ``pyarrow.Table``, or one with the dataframe
    interchange protocol), rather than as an array; a table is to reach
    :meth:`FeatureSchema.learn` and :meth:`FeatureSchema.transform` as it is."""
    if _is_dataframe(X):
        return True
    if isinstance(X, np.ndarray) or is_sparse(X):
        return False
    return hasattr(X, "to_pandas") and hasattr(X, "columns") or hasattr(X, "__dataframe__")


def _as_dataframe(X):
    """A pandas DataFrame of ``X`` when it is one, converts to one (``to_pandas()``: polars,
    pyarrow), or speaks the dataframe interchange protocol; else None."""
    if not is_table(X):
        return None
    if _is_dataframe(X):
        return X
    if hasattr(X, "to_pandas") and hasattr(X, "columns"):
        return X.to_pandas()
    try:
        import pandas as pd
    except ImportError:
        raise DataError(
            f"X is a {type(X).__name__} dataframe; reading it needs pandas "
            "(pip install 'boostkit[pandas]'), or pass X.to_numpy()"
        ) from None
    return pd.api.interchange.from_dataframe(X)


def _category_array(values: np.ndarray, column: str, name: str) -> np.ndarray | None:
    """The sorted distinct non-missing values of one categorical column, as a saveable array of
    their type: numbers (float64, so that 2 and 2.0 are one category) or text; ``None`` when the
    column has no value."""
    present = values[~_missing_mask(values)]
    kind = _value_kind(present, column, name)
    if kind is None:
        return None
    return np.unique(present.astype(np.float64 if kind == _NUMBERS else str))


_NUMBERS, _TEXT = "numbers", "text"


def _shown(value) -> str:
    return repr(value.item() if isinstance(value, np.generic) else value)


def _value_kind(present: np.ndarray, column: str, name: str) -> str | None:
    """Whether a categorical column's non-missing values are numbers or text (``None``: no
    value). A column holding both is refused rather than merged by their text (1 and '1'), as
    scikit-learn's encoders do; so is anything else (dates, tuples...), which has no saveable
    value to match by."""
    if present.shape[0] == 0:
        return None
    if present.dtype.kind in "biuf":
        return _NUMBERS
    if present.dtype.kind in "US":
        return _TEXT
    if present.dtype.kind == "c":
        raise DataError(f"{name} column {column} has complex values; boosting needs real features")
    kinds = {t: _NUMBERS if issubclass(t, (numbers.Real, np.bool_)) else
             _TEXT if issubclass(t, str) else None for t in set(map(type, present))}
    if None in kinds.values():
        example = next(v for v in present if kinds[type(v)] is None)
        if isinstance(example, numbers.Complex):
            raise DataError(f"{name} column {column} has complex values; boosting needs real "
                            "features")
        raise DataError(
            f"{name} column {column} holds {type(example).__name__} values (e.g. "
            f"{_shown(example)}); a categorical column holds numbers or text: convert them (dates "
            "and durations to numbers)"
        )
    if len(set(kinds.values())) > 1:
        number = next(v for v in present if kinds[type(v)] == _NUMBERS)
        text = next(v for v in present if kinds[type(v)] == _TEXT)
        raise DataError(
            f"{name} column {column} mixes numbers and text (e.g. {_shown(number)} and "
            f"{_shown(text)}); a categorical column's values must be all numbers or all text, "
            "so that each is matched by its value: convert it, e.g. X[column].astype(str)"
        )
    return next(iter(kinds.values()))


def _missing_mask(values: np.ndarray) -> np.ndarray:
    """Where a column (of any dtype) is missing: NaN, None or pandas' NA."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind in "biuUS":
        return np.zeros(values.shape, dtype=bool)
    pandas = sys.modules.get("pandas")  # loaded when X came as a table; never imported here
    if pandas is not None:
        return np.asarray(pandas.isna(values), dtype=bool)  # the same test, vectorised
    out = np.empty(values.shape, dtype=bool)
    for i, v in enumerate(values):
        out[i] = v is None or (isinstance(v, (float, np.floating)) and v != v) or type(
            v).__name__ in ("NAType", "NaTType")
    return out


def _preview(categories: np.ndarray) -> str:
    shown = ", ".join(_shown(v) for v in categories[:3])
    return shown + (", ..." if categories.shape[0] > 3 else "")


def _encode_categories(values: np.ndarray, categories: np.ndarray, column: str, name: str,
                       indices: bool) -> tuple[np.ndarray, int, Any]:
    """Category index of every value (float), NaN where missing or not among ``categories``;
    with the number of values not among them and one of those.

    Values are matched by value and type: a number is never a text category nor the reverse.
    ``indices``: ``X`` is an array, whose numbers under text categories are category indices
    already (``X`` encoded with this schema, as :func:`boostkit.datasets.load` gives it); each
    must be an integer in ``[0, K)`` or NaN. A table's numbers are always values.
    """
    missing = _missing_mask(values)
    present = values[~missing]
    out = np.full(values.shape, np.nan)
    kind = _value_kind(present, column, name)
    text = categories.dtype.kind == "U"
    if kind is None:
        return out, 0, None
    if text and kind == _NUMBERS and indices:
        codes = present.astype(np.float64)
        bad = (codes < 0) | (codes >= categories.shape[0]) | (codes != np.floor(codes))
        if bad.any():
            raise DataError(
                f"{name} column {column} holds the number {codes[bad][0]:g}, but the column is "
                f"categorical with {categories.shape[0]} categories: numbers there are category "
                f"indices in [0, {categories.shape[0]}) (or pass the category values themselves)"
            )
        out[~missing] = codes
        return out, 0, None
    if text != (kind == _TEXT):
        raise DataError(
            f"{name} column {column} holds {kind} (e.g. {_shown(present[0])}), but the model was "
            f"fitted with {'text' if text else 'number'} categories there "
            f"({_preview(categories)}); "
            "a category is matched by its value and type: pass the values as at fit"
            + (", e.g. X[column].astype(str)" if text else "")
        )
    keys = present.astype(str if text else np.float64)
    at = np.searchsorted(categories, keys).clip(0, categories.shape[0] - 1)
    known = categories[at] == keys
    out[~missing] = np.where(known, at.astype(np.float64), np.nan)
    unseen = int((~known).sum())
    return out, unseen, present[np.argmin(known)] if unseen else None


def _numeric_column(values: np.ndarray, column: str, name: str) -> np.ndarray:
    if values.dtype.kind in "biuf":
        return values.astype(np.float64)
    if np.iscomplexobj(values):
        raise DataError(f"{name} column {column} has complex values; boosting needs real features")
    missing = _missing_mask(values)
    out = np.full(values.shape, np.nan)
    try:
        out[~missing] = values[~missing].astype(np.float64)
    except (TypeError, ValueError):
        example = next(v for v in values[~missing].tolist() if not _is_number(v))
        raise DataError(
            f"{name} column {column} holds values that are not numbers (e.g. {example!r}); "
            "declare it categorical (categorical_features=[...]) or encode it"
        ) from None
    return out


def _is_number(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _check_categorical_spec(spec, n_features: int, names: tuple[str, ...] | None) -> np.ndarray | None:
    """``categorical_features`` as a ``(d,)`` bool mask, or None for "from the dtypes"."""
    if isinstance(spec, str) and spec == CATEGORICAL_FROM_DTYPE:
        return None
    if spec is None:
        return np.zeros(n_features, dtype=bool)
    if isinstance(spec, str):
        raise DataError(
            f"categorical_features must be {CATEGORICAL_FROM_DTYPE!r}, None, or a list of column "
            f"indices, names or a boolean mask, got the string {spec!r} (a single name? use [{spec!r}])"
        )
    items = list(spec)
    mask = np.zeros(n_features, dtype=bool)
    if items and all(isinstance(v, (bool, np.bool_)) for v in items):
        if len(items) != n_features:
            raise DataError(
                f"categorical_features as a boolean mask must have one entry per column "
                f"({n_features}), got {len(items)}"
            )
        return np.asarray(items, dtype=bool)
    for v in items:
        if isinstance(v, str):
            if names is None or v not in names:
                where = "X has no column names" if names is None else f"X has no column {v!r}"
                raise DataError(f"categorical_features names column {v!r}, but {where}")
            mask[names.index(v)] = True
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            if not -n_features <= v < n_features:
                raise DataError(
                    f"categorical_features has column index {v}, but X has {n_features} columns"
                )
            mask[v] = True
        else:
            raise DataError(
                f"categorical_features entries must be column indices or names, got {v!r}"
            )
    return mask


@attrs.frozen
class FeatureSchema:
    """The columns of a fit's ``X``: names, and the categories of the categorical ones.

    Attributes
    ----------
    n_features:
        d, the number of columns.
    names:
        The column names (strings) when ``X`` came with them (a DataFrame), else ``None``.
    categories:
        One entry per column: ``None`` for a numeric column; for a categorical one, the array of
        its categories seen in training: sorted float64 numbers, or sorted text. The column's
        values in the matrix components see are indices into this array.
    table:
        Whether the schema was learnt from a table: an array given to its model is then warned
        about, as scikit-learn does, for its columns cannot be checked by name (nor its numbers
        under number categories told from category indices). The loader's schema, made for its
        encoded arrays, is not.
    """

    n_features: int
    names: tuple[str, ...] | None = None
    categories: tuple[np.ndarray | None, ...] = attrs.field(eq=False, default=None)
    table: bool = attrs.field(default=False, eq=False, kw_only=True)
    # Asked every round (descriptions): computed once.
    _default: bool = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self):
        if self.categories is None:
            object.__setattr__(self, "categories", (None,) * self.n_features)
        object.__setattr__(self, "_default",
                           self.names is None and all(c is None for c in self.categories))
        if len(self.categories) != self.n_features or (
                self.names is not None and len(self.names) != self.n_features):
            raise ValueError("a FeatureSchema needs one name and one category entry per column")

    @property
    def categorical(self) -> np.ndarray:
        """``(d,)`` bool: which columns are categorical."""
        return np.array([c is not None for c in self.categories], dtype=bool)

    @property
    def n_categories(self) -> np.ndarray:
        """``(d,)`` int: K, the number of categories of each categorical column; 0 if numeric."""
        return np.array([0 if c is None else c.shape[0] for c in self.categories], dtype=np.int64)

    @property
    def is_default(self) -> bool:
        """Unnamed and all numeric: the schema of a plain array, which changes nothing."""
        return self._default

    def label(self, j: int) -> str:
        """The name of column ``j``, or ``x[j]``."""
        return feature_label(self, j)

    def category(self, j: int, code: int) -> str:
        """The category of index ``code`` in column ``j``, as text."""
        value = self.categories[j][int(code)]
        return f"{value:g}" if isinstance(value, (float, np.floating)) else str(value)

    def column(self, j: int) -> str:
        """Column ``j`` as error messages name it."""
        return f"{j} ({self.names[j]!r})" if self.names is not None else str(j)

    # -- learning and applying --------------------------------------------------------------
    @classmethod
    def learn(cls, X, categorical_features: Any = CATEGORICAL_FROM_DTYPE, *, name: str = "X"
              ) -> tuple[FeatureSchema, Any]:
        """The schema of training ``X`` and ``X`` as components see it (float64 or sparse).

        ``categorical_features``: ``"from_dtype"`` (default: a DataFrame's category, string,
        object and boolean-free non-numeric columns), ``None`` (none), or column indices, names
        or a boolean mask.
        """
        frame = _as_dataframe(X)
        if frame is None:
            if is_sparse(X):
                declared = _check_categorical_spec(categorical_features, X.shape[1], None)
                if declared is not None and declared.any():
                    raise DataError("categorical_features cannot be declared on sparse X")
                return cls(X.shape[1]), X
            arr = np.asarray(X)
            if arr.ndim != 2:
                return cls(arr.shape[-1] if arr.ndim else 0), X  # check_features names the shape
            declared = _check_categorical_spec(categorical_features, arr.shape[1], None)
            if (declared is None or not declared.any()) and arr.dtype.kind not in "OSU":
                return cls(arr.shape[1]), X
            if declared is None:
                declared = np.zeros(arr.shape[1], dtype=bool)
            columns = [arr[:, j] for j in range(arr.shape[1])]
            return cls._from_columns(columns, None, declared, name)
        names = tuple(str(c) for c in frame.columns)
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise DataError(f"{name} has the column name {dup!r} more than once")
        declared = _check_categorical_spec(categorical_features, len(names), names)
        columns, from_dtype = [], []
        for j in range(len(names)):
            values, categorical = _table_column(frame.iloc[:, j], _column_name(names, j), name)
            from_dtype.append(categorical)
            columns.append(values)
        mask = np.array(from_dtype, dtype=bool) if declared is None else declared
        return cls._from_columns(columns, names, mask, name, len(frame))

    @classmethod
    def _from_columns(cls, columns, names, mask, name, n_rows=None):
        categories = []
        for j, values in enumerate(columns):
            # A categorical column with no value at all stays numeric (all NaN): nothing to bin.
            categories.append(_category_array(values, _column_name(names, j), name)
                              if mask[j] else None)
        schema = cls(len(columns), names, tuple(categories), table=names is not None)
        return schema, schema._matrix(columns, name, n_rows, table=schema.table)

    @classmethod
    def union(cls, schemas) -> FeatureSchema:
        """One schema from those of several parts of the same data (a distributed fit's
        partitions): the same columns in each, a categorical column's categories the union of
        those the parts saw (sorted, as the whole data would give them)."""
        first = schemas[0]
        for k, other in enumerate(schemas[1:], 1):
            if other.n_features != first.n_features or other.names != first.names:
                raise DataError(f"part {k} has the columns {other.names or other.n_features}, "
                                f"but part 0 has {first.names or first.n_features}")
        categories = []
        for j in range(first.n_features):
            seen = [s.categories[j] for s in schemas if s.categories[j] is not None]
            if len({c.dtype.kind for c in seen}) > 1:
                raise DataError(f"column {first.column(j)} holds numbers in some parts and text "
                                "in others; a categorical column's values must be of one type")
            categories.append(np.unique(np.concatenate(seen)) if seen else None)
        return cls(first.n_features, first.names, tuple(categories), table=first.table)

    def transform(self, X, *, name: str = "X", encoded: bool = False):
        """``X`` (validation or prediction data) as components see it, with this schema's
        columns: a DataFrame must have the training columns, by name and in order; categories
        map to their training indices, and unseen ones (like missing values) to NaN.

        ``encoded``: an array (not a DataFrame) holds category indices already, as components
        see them; they are only checked.
        """
        frame = _as_dataframe(X)
        if frame is None:
            if self.table and not encoded:
                warnings.warn(f"{name} does not have valid feature names, but the model was fitted "
                              "with feature names; its columns are read by position",
                              DataWarning, stacklevel=3)
            if self.is_default or is_sparse(X):
                return X
            if encoded:
                return self._check_encoded(X, name)
            arr = np.asarray(X)
            if arr.ndim != 2 or arr.shape[1] != self.n_features:
                return X  # check_features names the shape or the number of columns
            return self._matrix([arr[:, j] for j in range(arr.shape[1])], name, arr.shape[0],
                                table=False)
        given = tuple(str(c) for c in frame.columns)
        if self.names is None:
            # scikit-learn's rule: columns are read by position, which their names may contradict.
            warnings.warn(f"{name} has feature names, but the model was fitted without feature "
                          "names; its columns are read by position", DataWarning, stacklevel=3)
        elif given != self.names:
            self._check_columns(given, name)
        if len(given) != self.n_features:
            raise DataError(
                f"{name} has {len(given)} columns, but the model was fitted with {self.n_features}"
            )
        columns = [_table_column(frame.iloc[:, j], _column_name(self.names, j), name)[0]
                   for j in range(self.n_features)]
        return self._matrix(columns, name, len(frame), table=True)

    def _check_encoded(self, X, name: str):
        try:
            arr = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            return X  # check_features says what is wrong
        if arr.ndim != 2 or arr.shape[1] != self.n_features:
            return X
        for j in np.flatnonzero(self.categorical):
            codes = arr[:, j][~np.isnan(arr[:, j])]
            k = self.categories[j].shape[0]
            bad = (codes < 0) | (codes >= k) | (codes != np.floor(codes))
            if bad.any():
                raise DataError(
                    f"{name} column {_column_name(self.names, j)} holds {codes[bad][0]:g}, but "
                    f"the column is categorical and encoded: expected category indices in [0, {k})"
                )
        return arr

    def _check_columns(self, given: tuple[str, ...], name: str) -> None:
        missing = [c for c in self.names if c not in given]
        if missing:
            raise DataError(
                f"{name} has no column {missing[0]!r}, which the model was fitted with "
                f"({len(missing)} missing in all)"
            )
        extra = [c for c in given if c not in self.names]
        if extra:
            raise DataError(
                f"{name} has the column {extra[0]!r}, which the model was not fitted with; "
                "select the training columns"
            )
        j = next(j for j, (a, b) in enumerate(zip(given, self.names)) if a != b)
        raise DataError(
            f"{name} has its columns in another order than at fit: column {j} is {given[j]!r}, "
            f"expected {self.names[j]!r}; reorder them with X[model_feature_names]"
        )

    def _matrix(self, columns, name: str, n_rows: int | None, *, table: bool) -> np.ndarray:
        """The float64 matrix of ``columns`` (numpy arrays of a table's or an array's columns);
        ``table``: numbers in a text-category column are values, not category indices. Values
        not among the categories (at prediction) are counted in a warning."""
        out = np.empty((columns[0].shape[0] if columns else n_rows or 0, len(columns)))
        unseen = []
        for j, values in enumerate(columns):
            column = _column_name(self.names, j)
            if self.categories[j] is None:
                out[:, j] = _numeric_column(values, column, name)
                continue
            out[:, j], count, example = _encode_categories(values, self.categories[j], column,
                                                           name, indices=not table)
            if count:
                unseen.append(f"{name} column {column}: {count} row"
                              f"{'s hold' if count > 1 else ' holds'} a category not seen in "
                              f"training (e.g. {_shown(example)})")
        if unseen:
            warnings.warn("; ".join(unseen) + "; they are read as missing values", DataWarning,
                          stacklevel=4)
        return out

    # -- the model file ---------------------------------------------------------------------
    def to_state(self, arrays: dict[str, np.ndarray], prefix: str) -> dict:
        """The JSON part of the schema; the category arrays go into ``arrays``."""
        named = {}
        for j in np.flatnonzero(self.categorical):
            named[str(j)] = key = f"{prefix}categories.{j}"
            arrays[key] = self.categories[j]
        return {"names": None if self.names is None else list(self.names), "arrays": named,
                "table": self.table}

    @classmethod
    def from_state(cls, state, arrays, n_features: int) -> FeatureSchema:
        """Rebuild a saved schema, checking it as untrusted input: a
        :class:`boostkit.ModelFormatError` naming the feature unless it is what a fit gives
        (unique names; categories sorted, distinct, not NaN, at most ``MAX_BINS`` of them), so
        that no category is silently read as another."""
        from .data import MAX_BINS  # data imports this module

        # "table" is written from format version 5 on.
        if not isinstance(state, dict) or set(state) - {"table"} != {"names", "arrays"}:
            raise ModelFormatError("the 'features' entry is not a feature schema")
        names, named, table = state["names"], state["arrays"], state.get("table", False)
        if not isinstance(table, bool):
            raise ModelFormatError(f"the features' 'table' must be true or false, got {table!r}")
        if names is not None and (not isinstance(names, list) or len(names) != n_features
                                  or not all(isinstance(n, str) for n in names)):
            raise ModelFormatError(f"the feature names are not {n_features} strings")
        if names is not None and len(set(names)) != n_features:
            dup = next(n for n in names if names.count(n) > 1)
            raise ModelFormatError(f"the feature names give {dup!r} twice")
        categories: list[np.ndarray | None] = [None] * n_features
        for j, key in named.items():
            if not (j.isdigit() and int(j) < n_features and isinstance(key, str)):
                raise ModelFormatError(f"categories of a column {j!r} the model does not have")
            values, feature = arrays[key], f"feature {_column_name(names, int(j))}"
            if values.ndim != 1 or values.shape[0] == 0 or values.dtype.kind not in "fU":
                raise ModelFormatError(
                    f"{feature}: its categories are not a 1-D array of numbers or text")
            if values.dtype.kind == "f" and np.isnan(values).any():
                raise ModelFormatError(f"{feature}: a category is NaN (a missing value)")
            if values.shape[0] > MAX_BINS:
                raise ModelFormatError(f"{feature} has {values.shape[0]} categories, more than "
                                       f"{MAX_BINS} (one bin each)")
            repeated = values[1:] == values[:-1]
            if repeated.any():
                raise ModelFormatError(f"{feature}: the category "
                                       f"{_shown(values[1:][repeated][0])} is given more than once")
            if not (values[1:] > values[:-1]).all():
                raise ModelFormatError(f"{feature}: the categories are not sorted")
            categories[int(j)] = values
        return cls(n_features, None if names is None else tuple(names), tuple(categories),
                   table=table)


def _column_name(names, j: int) -> str:
    return f"{j} ({names[j]!r})" if names is not None else str(j)


def _table_column(series, column: str, name: str) -> tuple[np.ndarray, bool]:
    """A table column's values as numpy (float with NaN for numeric and boolean columns, objects
    for the others, missing as None/NaN/NA), and whether its dtype makes it categorical
    (pandas category, string or object). Dates, durations and complex numbers are refused: as
    categories every later date would be unseen, and boosting splits real numbers."""
    dtype = series.dtype
    kind = getattr(dtype, "kind", "O")
    if kind in "mM":
        raise DataError(
            f"{name} column {column} holds {'dates' if kind == 'M' else 'durations'} ({dtype}), "
            "which boostkit does not read: convert them to numbers first, e.g. days since a "
            "fixed date, (X[column] - start).dt.days, or X[column].dt.total_seconds()"
        )
    if kind == "c":
        raise DataError(f"{name} column {column} has complex values; boosting needs real features")
    if str(dtype) != "category" and (
            kind in "biuf" or str(dtype) in ("boolean", "Int8", "Int16", "Int32", "Int64", "UInt8",
                                            "UInt16", "UInt32", "UInt64", "Float32", "Float64")):
        return np.asarray(series.to_numpy(dtype=np.float64, na_value=np.nan)), False
    return np.asarray(series.astype(object).to_numpy()), True

"""Input validation, label mapping and feature binning.

Every check raises :class:`boostkit.errors.DataError` naming the argument, what was expected and
what was got. Labels of any two values are mapped to -1 (the smaller, ``classes[0]``) and +1 (the
larger, ``classes[1]``) and back. Features are binned once per fit into at most ``max_bins``
quantile bins (uint8 codes); the thresholds are kept, so weak hypotheses found on bins predict on
raw feature values.
"""

from __future__ import annotations

import functools
import warnings

import attrs
import numba
import numpy as np

from .errors import DataError, DataWarning
from .features import FeatureSchema, is_sparse
from .kernels.binning import (SEARCH_WIDTH, code_bins, code_bins_parallel, column_thresholds,
                              quantile_bins, quantile_bins_parallel)
from .splits import valid_splits

__all__ = [
    "check_features",
    "is_sparse",
    "check_labels",
    "encode_labels",
    "encode_like",
    "LabelCoding",
    "label_array",
    "check_sample_weight",
    "BinnedData",
    "bin_features",
    "TrainingData",
    "MAX_BINS",
]

MAX_BINS = 255
# Bin edges are found on at most this many rows (seeded), as LightGBM does, so that binning a
# million rows costs a fraction of the boosting; below it every distinct value is seen.
BIN_SAMPLE = 200_000
# Values binned per fit above which the features are binned on numba's threads.
PARALLEL_BINNING = 1 << 20


def _check_sparse(X, name: str, n_features: int | None):
    """A finite float64 CSR matrix in canonical form (sorted indices, no duplicate entries),
    never densified. The caller's matrix is returned as it is when it is one already (boostkit
    never writes to X), else converted into a copy, so it is never changed in place."""
    import scipy.sparse  # X is a scipy.sparse object, so scipy is installed

    # Always a csr_matrix: components use matrix semantics (a csr_array's * is elementwise).
    if (isinstance(X, scipy.sparse.csr_matrix) and X.dtype == np.float64
            and X.has_canonical_format):
        csr = X
    else:
        csr = scipy.sparse.csr_matrix(X, dtype=np.float64, copy=True)
    if csr.ndim != 2 or 0 in csr.shape:
        raise DataError(f"{name} is an empty or non-2-D sparse matrix (shape {csr.shape})")
    if n_features is not None and csr.shape[1] != n_features:
        raise DataError(
            f"{name} has {csr.shape[1]} features, but the model was fitted with {n_features}"
        )
    if not np.isfinite(csr.data).all():
        raise DataError(f"{name} contains NaN or infinite stored values")
    if csr is not X:
        csr.sum_duplicates()  # also sorts the indices
    return csr


def check_features(X, *, name: str = "X", n_features: int | None = None, accept_sparse: bool = False,
                   allow_missing: bool = False, missing_hint: str = "",
                   features: FeatureSchema | None = None, allow_empty: bool = False):
    """Return ``X`` as a finite 2-D float64 array, or raise a clear :class:`DataError`.

    ``allow_empty``: 0 rows are fine (a partition of a distributed fit may hold none).

    With ``accept_sparse``, a scipy.sparse matrix is returned as a finite float64 CSR matrix
    (sorted indices) without densifying it. With ``allow_missing`` (the recipe's proposal
    declares the ``"missing-values"`` capability), NaN passes as a missing value; infinities
    never do. Otherwise a NaN is refused with ``missing_hint`` (who cannot take it) appended;
    ``features`` names the columns in messages.
    """
    if is_sparse(X):
        if accept_sparse:
            return _check_sparse(X, name, n_features)
        raise DataError(
            f"{name} is a sparse matrix, which this path does not accept; convert it with "
            "X.toarray() or use components that support sparse input"
        )
    if np.iscomplexobj(X):
        raise DataError(f"{name} has complex values; boosting needs real features")
    if getattr(getattr(X, "dtype", None), "kind", None) in ("m", "M"):
        # float64 would silently turn dates into nanoseconds since 1970: refused like a table's.
        raise DataError(f"{name} holds dates or durations (dtype {X.dtype}); convert them to "
                        "numbers (e.g. days since a reference date) before fitting")
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} must be numeric, got values that are not: {exc}") from None
    if arr.ndim != 2:
        raise DataError(
            f"{name} must be 2-D (n_samples, n_features), got an array of shape {arr.shape}"
        )
    if arr.shape[0] == 0 and not allow_empty:
        raise DataError(f"{name} is empty: got 0 samples (shape {arr.shape})")
    if arr.shape[1] == 0:
        raise DataError(f"{name} has 0 features (shape {arr.shape})")
    if n_features is not None and arr.shape[1] != n_features:
        raise DataError(
            f"{name} has {arr.shape[1]} features, but the model was fitted with {n_features}"
        )
    finite = np.isfinite(arr)
    if allow_missing:
        finite |= np.isnan(arr)
    if not finite.all():
        bad = np.argwhere(~finite)
        i, j = bad[0]
        column = str(j) if features is None else features.column(int(j))
        infinite = np.isinf(arr[~finite])
        if infinite.any():
            i, j = bad[int(np.argmax(infinite))]
            column = str(j) if features is None else features.column(int(j))
            raise DataError(
                f"{name} contains {int(infinite.sum())} infinite value(s), e.g. at row {i}, "
                f"column {column}; infinity is not a missing value (NaN is): replace them"
            )
        raise DataError(
            f"{name} contains {len(bad)} missing value(s) (NaN), e.g. at row {i}, column "
            f"{column}" + (missing_hint or "; impute them first (NaN passes as a missing value "
                           "only when the recipe's proposal declares the 'missing-values' "
                           "capability)")
        )
    return np.ascontiguousarray(arr)


_LABEL_SETS = (list, tuple, set, frozenset, np.ndarray)


def _as_labels(y, name: str = "y") -> np.ndarray:
    """``y`` as an array: a scipy.sparse matrix (an indicator matrix, usually) densified, lists
    of labels per example refused (they are not an indicator matrix)."""
    if is_sparse(y):
        return y.toarray()  # (n, C) labels: no larger than the (n, C) signs boosting needs
    try:
        arr = np.asarray(y)
    except ValueError:  # numpy refuses ragged nested sequences
        arr = None
    if arr is None or (arr.dtype == object and arr.ndim == 1
                       and any(isinstance(v, _LABEL_SETS) for v in arr)):
        raise DataError(
            f"{name} holds lists of labels (several labels per example); a multi-label {name} "
            "must be an (n_samples, C) 0/1 indicator matrix, one column per label: e.g. "
            f"sklearn.preprocessing.MultiLabelBinarizer().fit_transform({name})"
        )
    return arr


def label_array(y, n_samples: int, *, name: str = "y", x_name: str = "X") -> np.ndarray:
    """``y`` as a 1-D array of ``n_samples`` labels (a column vector is accepted), or a clear
    :class:`DataError`."""
    arr = _as_labels(y, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise DataError(f"{name} must be 1-D (n_samples,), got an array of shape {arr.shape}")
    if arr.shape[0] != n_samples:
        raise DataError(f"{x_name} has {n_samples} samples but {name} has {arr.shape[0]} labels")
    return arr


def check_labels(y, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Map labels of exactly two values to -1/+1.

    Returns ``(classes, y_signed)`` with ``classes`` sorted (``classes[0]`` is -1).
    """
    target = encode_labels(y, n_samples)
    if target.n_columns != 1:
        raise DataError(
            f"y has {target.classes.shape[0]} classes; this path needs exactly two"
        )
    return target.classes, target.y


@attrs.frozen
class LabelCoding:
    """Labels mapped to the signs boosting works with (Schapire & Singer 1999, sections 7-9).

    Two classes keep one margin column: ``y`` is ``(n,)`` in {-1, +1}, ``classes[1]`` being +1.
    Three or more classes, or a multi-label indicator matrix, become binary problems over
    (example, class) pairs: ``y`` is the ``(n, C)`` sign matrix Y(i, l) = +1 if example i has
    label l, else -1.

    Attributes
    ----------
    classes:
        The original label values, sorted (single-label), or the column indices 0..C-1 of a
        multi-label indicator matrix.
    y:
        ``(n,)`` or ``(n, C)`` float64 signs.
    labels:
        ``(n,)`` intp: the index into ``classes`` of each example's label, or ``None`` for
        multi-label data (an example may have several labels, or none).
    multilabel:
        Whether ``y`` came as an indicator matrix.
    """

    classes: np.ndarray = attrs.field(eq=False)
    y: np.ndarray = attrs.field(eq=False)
    labels: np.ndarray | None = attrs.field(eq=False)
    multilabel: bool

    @property
    def n_columns(self) -> int:
        """C, the number of margin columns: 1 for two classes."""
        return 1 if self.y.ndim == 1 else self.y.shape[1]


def encode_like(coding: LabelCoding, y, n_samples: int, *, name: str = "y",
                x_name: str = "X") -> LabelCoding:
    """Map the labels ``y`` of other examples (an ``eval_set``) with the classes of ``coding``.

    Labels must be among ``coding.classes``; a multi-label matrix must have the same columns.
    """
    if coding.multilabel:
        arr = _as_labels(y, name)
        if arr.ndim != 2 or arr.shape != (n_samples, coding.classes.shape[0]):
            raise DataError(
                f"{name} must be a ({n_samples}, {coding.classes.shape[0]}) indicator matrix like "
                f"the training labels, got shape {arr.shape}"
            )
        return _indicator_matrix(arr, n_samples)
    labels = label_array(y, n_samples, name=name, x_name=x_name)
    unknown = ~np.isin(labels, coding.classes)
    if unknown.any():
        raise DataError(
            f"{name} has labels {np.unique(labels[unknown])[:10].tolist()} that are not among the "
            f"training classes {coding.classes.tolist()}"
        )
    codes = np.searchsorted(coding.classes, labels).astype(np.intp)
    if coding.n_columns == 1:
        return LabelCoding(coding.classes, np.where(codes == 1, 1.0, -1.0), codes, False)
    signs = np.full((n_samples, coding.classes.shape[0]), -1.0)
    signs[np.arange(n_samples), codes] = 1.0
    return LabelCoding(coding.classes, signs, codes, False)


def _indicator_matrix(arr: np.ndarray, n_samples: int) -> LabelCoding:
    if arr.shape[0] != n_samples:
        raise DataError(f"X has {n_samples} samples but y has {arr.shape[0]} rows")
    if arr.dtype == bool:
        values = arr
    else:
        try:
            numeric = arr.astype(np.float64)
        except (TypeError, ValueError):
            numeric = None
        if numeric is None or not np.isin(numeric, (0.0, 1.0)).all():
            raise DataError(
                f"y of shape {arr.shape} is read as a multi-label indicator matrix and must hold "
                "only 0 and 1 (or booleans); for single-label classes pass a 1-D array"
            )
        values = numeric > 0
    return LabelCoding(classes=np.arange(arr.shape[1]), y=np.where(values, 1.0, -1.0),
                       labels=None, multilabel=True)


def encode_labels(y, n_samples: int) -> LabelCoding:
    """Validate ``y`` and map it to signs (:class:`LabelCoding`), or raise a clear DataError.

    A 1-D array (or a column vector) holds one label per example, of any orderable values
    (numbers, strings): two classes give the binary coding, three or more the (n, C) sign
    matrix. A 2-D array of C >= 2 columns of 0/1 is a multi-label indicator matrix (dense or
    scipy.sparse); a column with no 1 (or no 0) is allowed: that label is learnt as never
    (always) present.

    A float ``y`` with values that are not whole numbers and more than two distinct values is
    refused as continuous, the target scikit-learn's ``type_of_target`` calls
    ``"continuous"``, rather than fitted as one class per value. (Two values are a binary target
    however they are coded.)
    """
    arr = _as_labels(y)
    if arr.ndim == 2 and arr.shape[1] >= 2:
        return _indicator_matrix(arr, n_samples)
    arr = label_array(arr, n_samples)
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise DataError("y contains NaN or infinite labels")
    if arr.dtype == object and any(v is None for v in arr):
        raise DataError("y contains missing labels (None)")
    try:
        classes, codes = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise DataError(f"y has labels of mixed, unorderable types: {exc}") from None
    codes = codes.ravel().astype(np.intp)
    if arr.dtype.kind == "f" and classes.shape[0] > 2:
        fractional = classes[classes != np.floor(classes)]
        if fractional.size:
            raise DataError(
                f"y looks continuous: float labels that are not whole numbers (e.g. "
                f"{fractional[0]:g}), {classes.shape[0]} distinct values among {n_samples} "
                "examples (the target scikit-learn's type_of_target calls 'continuous'). "
                "boostkit fits classifiers: bin the values into classes first, or, if they are "
                "class labels, pass them as integers or strings"
            )
    if classes.shape[0] < 2:
        raise DataError(
            f"y has only one class ({classes.tolist()}); a classifier needs at least two classes"
        )
    if classes.shape[0] == 2:
        return LabelCoding(classes=classes, y=np.where(codes == 1, 1.0, -1.0), labels=codes,
                           multilabel=False)
    signs = np.full((n_samples, classes.shape[0]), -1.0)
    signs[np.arange(n_samples), codes] = 1.0
    return LabelCoding(classes=classes, y=signs, labels=codes, multilabel=False)


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray:
    """Return the initial distribution D_1 (non-negative, summing to 1)."""
    if sample_weight is None:
        return np.full(n_samples, 1.0 / n_samples)
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"sample_weight must be numeric: {exc}") from None
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise DataError(
            f"sample_weight must have shape ({n_samples},) to match X, got {w.shape}"
        )
    if not np.isfinite(w).all():
        raise DataError("sample_weight contains NaN or infinite values")
    if (w < 0).any():
        raise DataError(
            f"sample_weight must be non-negative, got {int((w < 0).sum())} negative value(s) "
            f"(smallest {w.min():g})"
        )
    with np.errstate(over="ignore"):  # an overflowing sum is handled below
        total = w.sum()
    if total <= 0:
        raise DataError("sample_weight sums to 0: at least one example needs positive weight")
    if not np.isfinite(total):
        # The sum overflowed (weights near 1e308 are proportions like any others): scale by the
        # largest first, rather than return a distribution of zeros.
        w = w / w.max()
        total = w.sum()
    return w / total


def _feature_thresholds(values: np.ndarray, max_bins: int) -> np.ndarray:
    """Increasing thresholds cutting one feature's values into at most ``max_bins`` bins.

    With at most ``max_bins`` distinct values every value gets its own bin and each threshold is
    the midpoint of two neighbours (the lower neighbour if rounding makes the midpoint equal the
    upper one), the rule CART uses. Otherwise the cuts fall at count quantiles
    (:func:`boostkit.kernels.binning.quantile_thresholds`, the rule :func:`bin_features` applies).
    """
    out = np.empty(max_bins - 1)
    return out[:column_thresholds(np.ascontiguousarray(values, dtype=np.float64), max_bins, out)]


@attrs.frozen
class BinnedData:
    """Features binned once per fit.

    Attributes
    ----------
    codes:
        ``(n_features, n_samples)`` uint8 bin codes, feature-major.
    thresholds:
        One increasing float64 array per feature; bin b holds t_{b-1} < x <= t_b. A categorical
        column's thresholds are 0.5, 1.5, ..., so bin b is category b.
    n_bins:
        ``(n_features,)`` number of bins of values per feature (``len(thresholds[f]) + 1``),
        not counting the missing-value bin.
    bin_counts:
        ``(n_features, max_bins)`` number of examples of positive initial weight per bin.
    split_mask:
        ``(n_features, max_bins - 1)``: the bin edges that leave examples on both sides
        (:func:`boostkit.splits.valid_splits` of ``bin_counts``), computed once per fit.
    missing_bin:
        The code of missing values (NaN), ``max_bins - 1``, the last bin of every feature,
        when any training value is missing; ``None`` when none is (then no bin is reserved,
        and NaN-free data bin exactly as they always did).
    categorical:
        ``(n_features,)`` bool: which columns are categorical (their bins are categories,
        unordered).
    """

    codes: np.ndarray = attrs.field(eq=False)
    thresholds: tuple[np.ndarray, ...] = attrs.field(eq=False)
    n_bins: np.ndarray = attrs.field(eq=False)
    bin_counts: np.ndarray = attrs.field(eq=False)
    split_mask: np.ndarray = attrs.field(eq=False)
    missing_bin: int | None = None
    categorical: np.ndarray = attrs.field(eq=False, default=None)
    _ordered: bool = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self):
        if self.categorical is None:
            object.__setattr__(self, "categorical", np.zeros(self.codes.shape[0], dtype=bool))
        # Asked by every round's split search: decided once.
        object.__setattr__(self, "_ordered",
                           self.missing_bin is None and not self.categorical.any())

    @property
    def max_bins(self) -> int:
        """B, the number of bins of the histograms (the missing-value bin included)."""
        return self.bin_counts.shape[1]

    @property
    def ordered(self) -> bool:
        """Every feature numeric and no value missing: thresholds are the only splits."""
        return self._ordered


def bin_features(
    X: np.ndarray,
    max_bins: int = MAX_BINS,
    sample_weight: np.ndarray | None = None,
    rng: np.random.Generator | None = None,
    n_categories: np.ndarray | None = None,
) -> BinnedData:
    """Quantile-bin the columns of ``X`` (rows of zero weight do not place thresholds).

    ``n_categories[f] > 0`` marks a categorical column holding category indices 0..K-1: each
    category gets its own bin. NaN is a missing value: when there is one, every feature gets
    one more bin, code ``max_bins`` (the histograms then have ``max_bins + 1`` bins).
    """
    if not (isinstance(max_bins, (int, np.integer)) and 2 <= max_bins <= MAX_BINS):
        raise DataError(f"max_bins must be an integer in [2, {MAX_BINS}], got {max_bins!r}")
    n, d = X.shape
    n_categories = np.zeros(d, dtype=np.int64) if n_categories is None else n_categories
    if (n_categories > max_bins).any():
        f = int(np.argmax(n_categories > max_bins))
        raise DataError(
            f"categorical column {f} has {n_categories[f]} categories, more than max_bins = "
            f"{max_bins} (each category is a bin; at most {MAX_BINS}): group rare categories, "
            "or treat the column as numeric"
        )
    weighted = sample_weight > 0 if sample_weight is not None else np.ones(n, dtype=bool)
    if np.count_nonzero(weighted) > BIN_SAMPLE:
        # Large data: thresholds from a seeded sample of the rows, every row coded against them
        # (a search per value, but the memory of the sample rather than of sorting every row).
        rng = rng if rng is not None else np.random.default_rng(0)
        sample = X[np.sort(rng.choice(np.flatnonzero(weighted), BIN_SAMPLE, replace=False))]
        # Column-major: each column's thresholds then read it contiguously, not strided.
        sample = np.asfortranarray(sample)
        # NaN never places a threshold: the sample's NaNs only say which columns to filter.
        thresholds = bin_thresholds(sample, max_bins, n_categories, np.isnan(sample).any(axis=0))
        # One pass codes the rows, counts the bins and finds the NaNs, coded max_bins: the
        # missing-value bin if there is one, a code never written if not.
        codes, bin_counts, n_missing = _code_and_count(X, thresholds, weighted, int(max_bins))
        missing_bin = int(max_bins) if n_missing.any() else None
        if missing_bin is None:
            bin_counts = np.ascontiguousarray(bin_counts[:, :max_bins])
        n_bins = np.array([t.shape[0] + 1 for t in thresholds], dtype=np.int64)
    else:  # one sort of each column gives its thresholds and its codes
        missing_bin = int(max_bins) if np.isnan(X).any() else None
        n_hist = max_bins + (missing_bin is not None)
        table = np.empty((d, max_bins - 1))
        n_thresholds = np.empty(d, dtype=np.int64)
        codes = np.empty((d, n), dtype=np.uint8)
        bin_counts = np.empty((d, n_hist), dtype=np.int64)
        # Columns on threads only when the fit has threads: at one thread the serial kernel does
        # the same work, and the parallel one would cost its compile (seconds, cold) for nothing.
        binning = (quantile_bins_parallel
                   if d > 1 and n * d >= PARALLEL_BINNING and numba.get_num_threads() > 1
                   else quantile_bins)
        binning(X, weighted, int(max_bins), np.asarray(n_categories, dtype=np.int64), n_hist - 1,
                table, n_thresholds, codes, bin_counts)
        thresholds = tuple(table[f, :n_thresholds[f]].copy() for f in range(d))
        n_bins = n_thresholds + 1
    return BinnedData(codes=codes, thresholds=thresholds, n_bins=n_bins, bin_counts=bin_counts,
                      split_mask=valid_splits(bin_counts), missing_bin=missing_bin,
                      categorical=n_categories > 0)


def bin_thresholds(sample: np.ndarray, max_bins: int, n_categories: np.ndarray,
                   missing: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every feature's thresholds, from a ``sample`` of rows (of positive weight): a numeric
    column's quantile cuts (of its values present where ``missing``), a categorical column's
    0.5, 1.5, ... (``n_categories[f] > 0``). What :func:`bin_features` and the driver of a
    distributed fit (from a sample of every shard) compute."""
    return tuple(
        np.arange(n_categories[f] - 1) + 0.5 if n_categories[f] else
        _feature_thresholds(sample[:, f][~np.isnan(sample[:, f])] if missing[f] else sample[:, f],
                            max_bins)
        for f in range(sample.shape[1])
    )


def encode_bins(X: np.ndarray, thresholds: tuple[np.ndarray, ...], missing_bin: int | None,
                max_bins: int) -> np.ndarray:
    """The ``(d, n)`` uint8 bin codes of ``X`` under ``thresholds`` (missing values get
    ``missing_bin``): the codes :func:`bin_features` gives, for rows binned elsewhere."""
    n_hist = max_bins + (missing_bin is not None)
    return _code_and_count(X, thresholds, np.ones(X.shape[0], dtype=bool), n_hist - 1)[0]


def _code_and_count(X: np.ndarray, thresholds: tuple[np.ndarray, ...], weighted: np.ndarray,
                    missing_code: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, bin_counts, n_missing)``: the ``(d, n)`` uint8 bin codes of ``X`` under
    ``thresholds`` (NaN coded ``missing_code``), the ``(d, missing_code + 1)`` counts of the
    ``weighted`` rows in each bin, and the number of NaNs of each feature
    (:func:`boostkit.kernels.binning.code_bins`)."""
    n, d = X.shape
    table = np.full((d, SEARCH_WIDTH), np.inf)  # each feature's thresholds, +inf-padded
    for f, feature_thresholds in enumerate(thresholds):
        if feature_thresholds.shape[0] >= SEARCH_WIDTH:
            raise DataError(
                f"thresholds of feature {f} must number at most {SEARCH_WIDTH - 1} (uint8 codes), "
                f"got {feature_thresholds.shape[0]}"
            )
        table[f, :feature_thresholds.shape[0]] = feature_thresholds
    codes = np.empty((d, n), dtype=np.uint8)
    bin_counts = np.empty((d, missing_code + 1), dtype=np.int64)
    n_missing = np.empty(d, dtype=np.int64)
    coding = code_bins_parallel if n * d >= PARALLEL_BINNING else code_bins
    coding(np.ascontiguousarray(X, dtype=np.float64), table, weighted, missing_code, codes,
           bin_counts, n_missing)
    return codes, bin_counts, n_missing


def count_bins(codes: np.ndarray, sample_weight: np.ndarray | None, n_hist: int) -> np.ndarray:
    """``(d, n_hist)``: the examples of positive weight in every bin of every feature."""
    counted = codes if sample_weight is None else codes[:, sample_weight > 0]
    counts = np.empty((codes.shape[0], n_hist), dtype=np.int64)
    for f in range(codes.shape[0]):
        counts[f] = np.bincount(counted[f], minlength=n_hist)
    return counts


class TrainingData:
    """The validated training set of one fit, as components see it (``state.data``).

    Attributes: ``X`` (float64, ``(n, d)``, finite or NaN where the recipe handles missing
    values: a dense array, or a scipy.sparse CSR matrix
    when the data came sparse, e.g. term counts, which is never densified), ``y`` (float64 signs:
    ``(n,)`` in {-1, +1} for two classes, the ``(n, C)`` sign matrix Y(i, l) for three or more
    classes or multi-label data, see :class:`LabelCoding`), ``is_pos`` (uint8 of ``y``'s shape, 1
    where y = +1), ``labels`` (``(n,)`` class index of each example, ``None`` for multi-label
    data), ``multilabel``, ``n_columns`` (C: 1 for two classes), ``sample_weight`` (the initial
    distribution D_1 over examples, ``(n,)``), ``initial_weights`` (the engine's default D_1 over
    what the weights range over: ``sample_weight`` itself for one margin column, D_1(i) / C over
    the (example, class) pairs otherwise, Schapire & Singer's uniform start), ``classes`` (the
    original label values), ``features`` (:class:`boostkit.features.FeatureSchema`: column
    names, and which columns are categorical, holding category indices), ``binned``
    (:class:`BinnedData`, computed on first use so components that never look at bins never
    pay for them; dense data only), and ``rows`` (the indices, in the ``X`` given, of the
    examples kept, or ``None`` when all are).

    With ``remove_unweighted`` (as every fit builds them) the examples of ``sample_weight`` 0
    are removed, their feature values with them, so that a fit with them is the fit without
    them, bit for bit. Their labels still name classes (a class whose examples all have weight
    0 is refused), and their values are still checked (NaN, infinities).
    """

    def __init__(self, X, y, sample_weight=None, *, max_bins: int = MAX_BINS, rng=None,
                 allow_missing: bool = False, features: FeatureSchema | None = None,
                 missing_hint: str = "", remove_unweighted: bool = False):
        self.X = check_features(X, accept_sparse=True, allow_missing=allow_missing,
                                missing_hint=missing_hint, features=features)
        self.features = FeatureSchema(self.X.shape[1]) if features is None else features
        n = self.X.shape[0]
        self._set_labels(encode_labels(y, n))
        self.sample_weight = check_sample_weight(sample_weight, n)
        self._check_class_weights()
        # An example of weight 0 is no example, values included: its 1e300 must not move a
        # standardisation, a pool or a score range. Taken out here, no component sees it, and
        # the fit is the one without it, bit for bit (D_1 normalised over the rows kept).
        given = None if sample_weight is None else np.broadcast_to(
            np.asarray(sample_weight, dtype=np.float64), (n,))
        kept = np.flatnonzero(self.sample_weight)
        self.rows = None if kept.shape[0] == n or not remove_unweighted else kept
        if self.rows is not None:
            self.X = self.X[kept]
            labels = None if self.labels is None else self.labels[kept]
            self._set_labels(LabelCoding(self.classes, self.y[kept], labels, self.multilabel))
            given = given[kept]  # totals summed without the zeros round as the data's own
            self.sample_weight = check_sample_weight(given, kept.shape[0])
        # The weights' total, in examples (boostkit.smoothing.n_examples): n for None; inf when
        # the sum overflows (weights near 1e308 are proportions: n_examples then counts rows).
        with np.errstate(over="ignore"):
            self.weight_total = float(n if given is None else given.sum())
        if allow_missing and not self.is_sparse:
            self._warn_empty_columns()
        if not (isinstance(max_bins, (int, np.integer)) and 2 <= max_bins <= MAX_BINS):
            raise DataError(f"max_bins must be an integer in [2, {MAX_BINS}], got {max_bins!r}")
        self.max_bins = int(max_bins)
        self._rng = rng

    def _warn_empty_columns(self) -> None:
        """A column with no value at all is kept (no split can use it), but said."""
        empty = np.flatnonzero(np.isnan(self.X).all(axis=0))
        if empty.size:
            warnings.warn(
                f"X column {self.features.column(int(empty[0]))} has only missing values"
                + (f" ({empty.size} such columns)" if empty.size > 1 else "")
                + ": no weak hypothesis can use it; drop it if that was not meant",
                DataWarning, stacklevel=4,
            )

    def _check_class_weights(self) -> None:
        """Every class (of single-label data) needs positive weight: a class of weight 0 is a
        class with no example, and the fit would silently learn one class fewer."""
        if self.labels is None:
            return
        weight = np.bincount(self.labels, weights=self.sample_weight,
                             minlength=self.classes.shape[0])
        if (weight <= 0).any():
            missing = self.classes[weight <= 0].tolist()
            raise DataError(
                f"class(es) {missing} have total sample_weight 0: give them positive weight, or "
                "remove their examples"
            )

    def _set_labels(self, coding: LabelCoding) -> None:
        self.classes, self.y = coding.classes, coding.y
        self.labels, self.multilabel = coding.labels, coding.multilabel
        self.is_pos = (self.y > 0).astype(np.uint8)

    @property
    def coding(self) -> LabelCoding:
        """The labels as a :class:`LabelCoding`."""
        return LabelCoding(self.classes, self.y, self.labels, self.multilabel)

    def subset(self, rows: np.ndarray) -> TrainingData:
        """The examples ``rows`` of these already validated data, with the same classes and their
        initial weights renormalised, without checking every value again."""
        weights = self.sample_weight[rows]
        total = weights.sum()
        if total <= 0:
            raise DataError("sample_weight sums to 0 on the examples kept for training")
        out = object.__new__(TrainingData)
        out.X = self.X[rows]
        out.rows = rows if self.rows is None else self.rows[rows]
        labels = None if self.labels is None else self.labels[rows]
        out._set_labels(LabelCoding(self.classes, self.y[rows], labels, self.multilabel))
        out.sample_weight = weights / total
        out.weight_total = self.weight_total * total
        out.max_bins, out._rng, out.features = self.max_bins, self._rng, self.features
        return out

    @property
    def n_columns(self) -> int:
        """C, the number of margin columns: 1 for two classes, else the number of classes."""
        return 1 if self.y.ndim == 1 else self.y.shape[1]

    @functools.cached_property
    def n_weighted(self) -> int:
        """m, the number of examples of positive initial weight: what smoothing defaults such as
        1/m count, so that an example of weight 0 is the same as no example."""
        return int(np.count_nonzero(self.sample_weight))

    @functools.cached_property
    def initial_weights(self) -> np.ndarray:
        """The default D_1 of the fit's weights: ``sample_weight`` (C = 1), or D_1(i) / C over
        the ``(n, C)`` (example, class) pairs (Schapire & Singer 1999, section 7)."""
        if self.y.ndim == 1:
            return self.sample_weight
        c = self.y.shape[1]
        return np.ascontiguousarray(np.repeat(self.sample_weight[:, None] / c, c, axis=1))

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def is_sparse(self) -> bool:
        return is_sparse(self.X)

    @functools.cached_property
    def binned(self) -> BinnedData:
        if self.is_sparse:
            raise DataError(
                "the training data are sparse, and binning them would densify every feature: "
                "this weak learner needs dense X (convert with X.toarray()), or use a learner "
                "that works on sparse input"
            )
        try:
            return bin_features(self.X, self.max_bins, self.sample_weight, self._rng,
                                self.features.n_categories)
        except DataError as exc:
            if not self.features.categorical.any():
                raise
            # Name the column as the user knows it.
            f = int(np.argmax(self.features.n_categories > self.max_bins))
            raise DataError(str(exc).replace(f"column {f} ", f"column {self.features.column(f)} ",
                                             1)) from None

"""The ``boostkit`` command line.

``boostkit plugins [--json]``
    List the installed plugins: distribution, version, hooks, components (with their role) and
    algorithms (with their paper); a broken plugin, left out, with its error. Always runs; exit
    status 1 only in strict mode (``BOOSTKIT_STRICT_PLUGINS=1``) with a broken plugin.
``boostkit recipes [--json]``
    List the named recipes (registered algorithms): their components as a recipe string, their
    paper and the plugin that registered them.
``boostkit components [--role ROLE] [--json]``
    List the registered components with their role and capabilities (needs / provides).
``boostkit compare [CSV] [--dataset NAME] [--algorithms a,b] [--recipe '...'] ...``
    Cross-validate registered algorithms and recipes composed on the command line
    (``--recipe 'proposal=stump calibration=pav+input-dependent(beta=0.5) reweighting=exponential'``)
    on a CSV file or a bundled dataset (``spambase`` by
    default) with seeded stratified folds, print a results table and write ``results.csv``,
    ``results.md`` and ``roc.json`` into ``--output``, and with the ``plot`` extra the figures
    ``roc.png``, ``pr.png``, ``learning_curves.png`` and ``margins.png``. Labels of three or
    more classes (and no ``--positive``) are compared as multiclass data: every algorithm runs
    with ``Booster(..., multiclass="auto")`` (natively if its recipe handles several classes,
    else one-vs-rest), the table reports accuracy and macro one-vs-rest ROC AUC, and
    ``confusion.json`` and one ``confusion_<algorithm>.png`` per algorithm are written instead
    of the two-class figures.

    The data are read as they come: text columns are categorical, empty fields missing values,
    and no row is dropped (``--max-rows`` takes a seeded random sample of a large table). Every
    algorithm is fitted on the same rows; those whose proposal handles categorical columns or
    missing values (capabilities ``"categorical-features"``, ``"missing-values"``) get them
    unchanged, the others a fallback, fitted on each training fold (:class:`InputForm`): one-hot
    encoded categories, and missing numbers replaced by the training mean next to a 0/1
    "is missing" column. The ``input`` entry of ``results.csv`` and a note under the table say
    which algorithm got what.

    The table fits 120 columns (the paper column is a short citation; results.md has the full
    references) and notes under it say what each number is: accuracy and AUC are mean ± std
    over folds, while the figures' legends give the AUC of the pooled out-of-fold scores; a
    ranker (:func:`is_ranker`: a recipe whose loss is over pairs, blind to the offset of F)
    reports accuracy at a threshold chosen on the training folds, marked ``*``; rounds count
    the rounds run,
    terms are reported apart. Warnings raised during the fits are printed after the progress
    bar, once per distinct message with a count. With many algorithms the ROC and
    precision-recall figures are small multiples, one panel per plugin, and the other figures
    colour the best of each plugin. ``roc.json`` keeps exact AUCs and curves thinned to what
    the figures draw. Files are written into a hidden folder and moved into ``--output`` only
    when all are done: an interrupted run leaves the earlier results whole.

    No algorithm's error loses the others' results. Before the fits start, each algorithm runs
    one round on the first training fold; one that refuses the data there (a DataError or
    RecipeError: RankBoost over more preference pairs than its ``max_pairs``, say) is left out
    with a line saying why. A fit that fails later is recorded as failed with its error, and the
    comparison goes on. Ctrl-C stops it and writes the algorithms that finished. The table,
    ``results.csv`` (``status``, ``error``), ``results.md`` and ``roc.json`` show the others as
    ``cannot run``, ``failed``, ``interrupted`` or ``not run``, with the reason. Exit status 1
    when a fit failed or no algorithm could run (then no figure is drawn), 130 when
    interrupted, else 0.

``boostkit export MODEL --format onnx -o FILE``
    Write a saved model as ONNX with :func:`boostkit.onnx.export_file` (the ``onnx`` extra) and
    print the path written; a model that cannot be converted, an unreadable model file or an
    unwritable output is one line on standard error and exit status 2.

``boostkit study --suite keel --algorithms a,b [--folds K] [--config study.toml] ...``
    Compare algorithms across datasets (:mod:`boostkit.study`, docs/studies.md): build a
    :class:`boostkit.study.StudySpec` from the flags (over a TOML study file), run it with
    :func:`boostkit.study.run_study` (``--n-jobs`` worker processes or a Dask ``--scheduler``),
    each cell written to the results database as it finishes, so a rerun resumes, and write
    the exports, statistics and report with :func:`boostkit.study.write_outputs`. Exit status
    1 when a cell failed or no cell could run (``cannot run`` cells, a recipe refusing the
    data, are recorded with the reason and are not an error, as in ``compare``), 2 for bad
    input (unknown dataset, suite or algorithm, a study file's unknown key, a database another
    study writes), 130 when interrupted by Ctrl-C, 143 on SIGTERM (the worker processes are
    terminated and every finished cell stays in the database).

Only the core dependencies are needed: folds and metrics come from :mod:`boostkit.metrics`;
tqdm (the ``progress`` extra) draws a progress bar and matplotlib (the ``plot`` extra) the
figures, each imported only when used; without them compare says so and goes on.
User errors (unknown algorithm or dataset, unreadable CSV, missing target column, a single class,
a target that looks continuous: compare compares classifiers) print one line on standard error
and exit with status 2; no traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gzip
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Sequence

import attrs
import numpy as np

from . import datasets
from .capabilities import CATEGORICAL_FEATURES, MISSING_VALUES, capabilities_of
from .capabilities import is_ranker as recipe_ranks
from .data import encode_labels
from .engine import Booster
from .errors import BoostkitError, DataError, RecipeError
from .features import FeatureSchema
from .hookspecs import hookimpl
from .metrics import (
    accuracy,
    confusion_matrix,
    macro_roc_auc,
    roc_auc,
    roc_curve,
    stratified_folds,
)
from .plot import StagedEvaluation, staged_evaluation
from .plugins import get_registry, plugin_info
from .progress import FitProgress, WarningLog
from .references import REFERENCES, cited
from .registry import Recipe

__all__ = [
    "AlgorithmResult",
    "BinaryData",
    "FoldResult",
    "InputForm",
    "MulticlassData",
    "UsageError",
    "cross_validate",
    "main",
    "read_csv",
    "write_outputs",
    "write_plots",
]

DEFAULT_DATASET = "spambase"
RESULT_FILES = ("results.csv", "results.md", "roc.json")
MULTICLASS_RESULT_FILES = (*RESULT_FILES, "confusion.json")
PLOT_FILES = ("roc.png", "pr.png", "learning_curves.png", "margins.png")


class UsageError(Exception):
    """A mistake in the command line or its input; reported in one line, exit status 2."""


# -- data ---------------------------------------------------------------------------------------


def _features_text(X: np.ndarray, features: FeatureSchema) -> str:
    """``"14 features (8 categorical, 6465 missing values)"``: the columns, and what in them
    needs a learner that handles categories or missing values."""
    details = []
    n_categorical = int(features.categorical.sum())
    if n_categorical:
        details.append(f"{n_categorical} categorical")
    n_missing = int(np.isnan(X).sum())
    if n_missing:
        details.append(f"{n_missing} missing values")
    return f"{X.shape[1]} features" + (f" ({', '.join(details)})" if details else "")


@attrs.frozen
class BinaryData:
    """A two-class problem ready for cross-validation.

    ``y`` is +1 for the ``positive`` label and -1 for the rest (``negative`` names them: the other
    label of two-class data, ``"rest"`` for one-vs-rest). ``X`` is as it came: NaN for a missing
    value, category indices in the categorical columns, which ``features`` names and describes.
    """

    name: str
    X: np.ndarray = attrs.field(eq=False)
    y: np.ndarray = attrs.field(eq=False)
    features: FeatureSchema
    target: str
    positive: str
    negative: str

    def describe(self) -> str:
        n_pos = int((self.y > 0).sum())
        return (
            f"{self.name}: {self.y.shape[0]} rows, {_features_text(self.X, self.features)}, "
            f"target {self.target!r}, positive class {self.positive!r} ({n_pos} positive, "
            f"{self.y.shape[0] - n_pos} {self.negative!r})"
        )


#: The classes (with their counts) that :meth:`MulticlassData.describe` names.
_CLASSES_SHOWN = 20


@attrs.frozen
class MulticlassData:
    """A problem of three or more classes ready for cross-validation.

    ``y`` holds the labels as text and ``classes`` the distinct labels, sorted: the order of the
    columns of a fitted model's margins (``model.classes``). ``X`` and ``features`` are as in
    :class:`BinaryData`.
    """

    name: str
    X: np.ndarray = attrs.field(eq=False)
    y: np.ndarray = attrs.field(eq=False)
    classes: tuple[str, ...]
    features: FeatureSchema
    target: str

    def describe(self) -> str:
        shown = self.classes[:_CLASSES_SHOWN]
        counts = ", ".join(f"{label!r}: {int((self.y == label).sum())}" for label in shown)
        if len(self.classes) > len(shown):
            counts += f", and {len(self.classes) - len(shown)} more"
        return (
            f"{self.name}: {self.y.shape[0]} rows, {_features_text(self.X, self.features)}, "
            f"target {self.target!r}, {len(self.classes)} classes ({counts})"
        )


def _note(message: str) -> None:
    print(f"note: {message}", file=sys.stderr)


def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _parse_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def read_csv(path: str | Path, target: str | None = None):
    """Read a CSV file with a header row into features and labels.

    The ``target`` column (default: the last) holds the labels, kept as text. A feature column is
    numeric when every non-empty field parses as a number; otherwise it is categorical: its
    values are the indices of its distinct non-empty texts in sorted order, as
    :func:`boostkit.datasets.load` gives them. Empty fields (and numbers that read as NaN) are
    missing values, NaN in ``X``; only rows with an empty label are dropped. ``.gz`` files are
    decompressed.

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
        raise UsageError(f"cannot read {path}: no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error, EOFError) as exc:
        raise UsageError(f"cannot read {path} as a UTF-8 CSV file: {exc}") from None
    if not rows:
        raise UsageError(f"{path} is empty: expected a header row and data rows")
    header = [name.strip() for name in rows[0]]
    body = [[field.strip() for field in row] for row in rows[1:]]
    if len(set(header)) != len(header):
        repeated = sorted(name for name, count in Counter(header).items() if count > 1)
        raise UsageError(f"{path}: the header names a column more than once: {repeated}")
    for line, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise UsageError(
                f"{path}: a row has {len(row)} fields but the header has {len(header)} "
                f"(row {line} counting the header, blank lines skipped)"
            )
    if not body:
        raise UsageError(f"{path} has a header but no data rows")
    target = header[-1] if target is None else target
    if target not in header:
        raise UsageError(f"target column {target!r} is not in {path}; its columns are {header}")
    if len(header) < 2:
        raise UsageError(f"{path} has only the target column {target!r}: no features")
    columns = dict(zip(header, zip(*body)))
    labels = np.array(columns[target], dtype=str)
    keep = labels != ""
    if not keep.any():
        raise UsageError(f"{path}: every row has an empty label (column {target!r})")
    names = tuple(name for name in header if name != target)
    X = np.empty((int(keep.sum()), len(names)))
    categories: list[np.ndarray | None] = []
    for j, name in enumerate(names):
        values = np.array(columns[name], dtype=str)[keep]
        parsed = [math.nan if v == "" else _parse_float(v) for v in values]
        if None in parsed:
            present = values != ""
            categories.append(np.unique(values[present]))
            X[:, j] = np.where(present, np.searchsorted(categories[-1], values), np.nan)
        else:
            categories.append(None)
            X[:, j] = parsed
    features = FeatureSchema(len(names), names, tuple(categories))
    if features.categorical.any():
        _note(
            "read the non-numeric column(s) "
            + ", ".join(f"{names[j]!r} ({features.n_categories[j]} values)"
                        for j in np.flatnonzero(features.categorical))
            + " as categorical"
        )
    return X, labels[keep], features, target, int((~keep).sum())


def _problem(name, X, labels, features, target, positive,
             suggested) -> BinaryData | MulticlassData:
    """Two classes, or one label against the rest (``positive``), as a :class:`BinaryData` (+1
    for the positive label, -1 for the rest); three or more classes without ``positive`` as a
    :class:`MulticlassData`; a single class is refused."""
    classes = np.unique(labels).tolist()
    _refuse_continuous(name, target, labels, classes)
    if positive is not None:
        if positive not in classes:
            raise UsageError(
                f"--positive {positive!r} is not a label of {name}; its labels are {classes}"
            )
    elif len(classes) > 2:
        return MulticlassData(name=name, X=X, y=labels, classes=tuple(classes),
                              features=features, target=target)
    else:
        # The engine's convention: the larger of two labels is the positive class.
        positive = suggested if suggested in classes else classes[-1]
    if len(classes) < 2:
        raise UsageError(f"{name} has a single class {classes}: a comparison needs two or more")
    negative = next(c for c in classes if c != positive) if len(classes) == 2 else "rest"
    return BinaryData(
        name=name, X=X, y=np.where(labels == positive, 1.0, -1.0), features=features,
        target=target, positive=positive, negative=negative,
    )


def _refuse_continuous(name: str, target: str, labels: np.ndarray, classes: list[str]) -> None:
    """Refuse a target of more than two distinct labels that are all numbers when the engine
    would refuse them as continuous (:func:`boostkit.data.encode_labels`: some not whole, as
    scikit-learn's ``type_of_target`` says "continuous"): compare cross-validates classifiers,
    and each distinct value would be a class of its own."""
    if len(classes) <= 2:
        return
    numbers = {label: _parse_float(label) for label in classes}
    if None in numbers.values():
        return
    try:
        encode_labels(np.array([numbers[label] for label in labels]), labels.shape[0])
    except DataError as exc:
        raise UsageError(
            f"compare cross-validates classifiers, and the target column {target!r} of {name} "
            f"holds {len(classes)} distinct numbers: {exc}"
        ) from None


def load_data(csv_path: str | None, target: str | None, dataset: str | None,
              positive: str | None, max_rows: int | None = None,
              seed: int = 0) -> BinaryData | MulticlassData:
    """The comparison's data: a CSV file, a named dataset, or the default ``spambase``, with
    its categorical columns and missing values as they come.

    Two classes, or ``positive`` against the rest, give a :class:`BinaryData`; three or more
    classes without ``positive`` a :class:`MulticlassData`. ``max_rows``: keep a random sample
    of that many rows (seeded by ``seed``, in their original order) when there are more.
    """
    if csv_path is not None and dataset is not None:
        raise UsageError("give either a CSV file or --dataset, not both")
    if csv_path is not None:
        X, labels, features, target, n_dropped = read_csv(csv_path, target)
        name = Path(csv_path).name
        suggested = None
        if n_dropped:
            _note(f"dropped {n_dropped} of {n_dropped + labels.shape[0]} rows with an empty "
                  f"label ({target!r})")
    else:
        if target is not None:
            raise UsageError("--target applies to a CSV file; bundled datasets have their own")
        name = dataset or DEFAULT_DATASET
        known = datasets.available()
        if name not in known:
            raise UsageError(f"unknown dataset {name!r}; available: {', '.join(known)}")
        try:
            loaded = datasets.load(name)
        except (ValueError, OSError) as exc:
            raise UsageError(f"cannot load dataset {name!r}: {exc}") from None
        X, labels, features = loaded.X, loaded.y, loaded.features
        target, suggested = "label", loaded.positive
    if max_rows is not None and max_rows < labels.shape[0]:
        rows = np.sort(np.random.default_rng(seed).choice(labels.shape[0], max_rows,
                                                          replace=False))
        _note(f"a random sample of {max_rows} of the {labels.shape[0]} rows (--max-rows, "
              f"seed {seed})")
        X, labels = np.ascontiguousarray(X[rows]), labels[rows]
    return _problem(name, X, labels, features, target, positive, suggested)


# -- what each algorithm is given ---------------------------------------------------------------

#: What the ``input`` of a result means, by value.
INPUT_MEANINGS = {
    "as given": "categorical columns by category and missing values as NaN, as they come",
    "one-hot": "categorical columns one-hot encoded (one 0/1 column per category; a missing "
               "category is NaN in all of them)",
    "imputed": "missing values replaced by the mean of the training fold, plus one 0/1 column "
               "per column with missing values marking them (a missing category becomes a "
               "category of its own)",
    "one-hot, imputed": "categorical columns one-hot encoded (a missing category gives 0 in "
                        "every indicator), missing numbers replaced by the mean of the training "
                        "fold, plus one 0/1 column per column with missing values marking them",
}


@attrs.frozen
class InputForm:
    """How an algorithm is given the comparison's data: as they come where its proposal
    handles them, else a fallback, so that every algorithm is fitted on the same rows.

    ``one_hot``: the proposal does not provide ``"categorical-features"`` (it would read
    category indices as numbers) and the data have categorical columns: each becomes one 0/1
    column per category. ``impute``: the proposal does not provide ``"missing-values"`` and the
    data have missing values: a missing number becomes the mean of the column over the training
    fold and a missing category a category of its own (or, one-hot, 0 in every indicator), and
    each column with missing values gets a 0/1 column ``"<name> is missing"``.
    """

    one_hot: bool = False
    impute: bool = False

    @classmethod
    def of(cls, recipe: Recipe, data: BinaryData | MulticlassData) -> InputForm:
        """The form for ``recipe``'s proposal on ``data``."""
        provided = set()
        for role, component in get_registry().instantiate(recipe):
            if role == "proposal":
                provided |= capabilities_of(component)[1]
        return cls(
            one_hot=bool(data.features.categorical.any()) and CATEGORICAL_FEATURES not in provided,
            impute=bool(np.isnan(data.X).any()) and MISSING_VALUES not in provided,
        )

    def describe(self) -> str:
        """``"as given"``, ``"one-hot"``, ``"imputed"`` or ``"one-hot, imputed"``
        (:data:`INPUT_MEANINGS`)."""
        done = [name for name, on in (("one-hot", self.one_hot), ("imputed", self.impute)) if on]
        return ", ".join(done) or "as given"

    def apply(self, X: np.ndarray, features: FeatureSchema,
              train: np.ndarray) -> tuple[np.ndarray, FeatureSchema]:
        """``X`` (every row) in this form, and the schema of the result; the means come from
        the rows ``train`` only."""
        if not (self.one_hot or self.impute):
            return X, features
        blocks, names, categories = [], [], []
        for j in range(features.n_features):
            column, name, kinds = X[:, j], features.label(j), features.categories[j]
            missing = np.isnan(column)
            mark = self.impute and bool(missing.any())
            if kinds is not None and self.one_hot:
                block = (column[:, None] == np.arange(kinds.shape[0])).astype(np.float64)
                if missing.any() and not self.impute:
                    block[missing] = np.nan
                blocks.append(block)
                names += [f"{name}={features.category(j, k)}" for k in range(kinds.shape[0])]
                categories += [None] * kinds.shape[0]
            elif kinds is not None and mark:
                # A missing category is a category of its own, kept in sorted order.
                texts = np.full(column.shape, "(missing)", dtype=object)
                texts[~missing] = kinds.astype(str)[column[~missing].astype(np.int64)]
                texts = texts.astype(str)
                kinds = np.unique(texts)
                blocks.append(np.searchsorted(kinds, texts).astype(np.float64)[:, None])
                names.append(name)
                categories.append(kinds)
                mark = False  # the category says it
            elif mark:
                seen = column[train][~missing[train]]
                blocks.append(np.where(missing, seen.mean() if seen.size else 0.0, column)[:, None])
                names.append(name)
                categories.append(None)
            else:
                blocks.append(column[:, None])
                names.append(name)
                categories.append(kinds)
            if mark:
                blocks.append(missing.astype(np.float64)[:, None])
                names.append(f"{name} is missing")
                categories.append(None)
        out = np.ascontiguousarray(np.concatenate(blocks, axis=1))
        return out, FeatureSchema(out.shape[1], tuple(names), tuple(categories))


# -- cross-validation ---------------------------------------------------------------------------

#: What ``AlgorithmResult.status`` means, by value. Only ``"done"`` has results.
STATUS_MEANINGS = {
    "done": "every fold was fitted and evaluated",
    "cannot run": "refused these data before the fits started (a one-round fit on the first "
                  "training fold raised a DataError or RecipeError); left out",
    "failed": "a fit raised an error; the algorithm's other folds are not reported",
    "interrupted": "stopped by Ctrl-C during its fits",
    "not run": "not started: the comparison was interrupted (Ctrl-C) before",
}


@attrs.frozen
class FoldResult:
    """One fit and its evaluation on the held-out fold.

    ``y_test`` (+1/-1) and ``scores`` (the decision function F_T(x) on the fold) are kept so ROC
    curves and plots can be drawn afterwards; so are the staged evaluations on the training and
    test examples (error and AUC after every round, normalised training margins) and
    ``final_weights``, n D_{T+1}(i) over the n training examples.

    ``n_rounds`` counts the boosting rounds run (the round records), ``n_terms`` the model's
    terms: fewer when a back-fitting calibration re-fitted earlier terms. ``threshold`` is the
    value of F above which ``accuracy`` counts a positive prediction: 0, or for a ranker (see
    :func:`is_ranker`) the threshold that maximises accuracy on the training examples.

    For multiclass data ``y_test`` holds the labels, ``scores`` the ``(n, K)`` margins,
    ``predictions`` the predicted labels (for the confusion matrix) and ``roc_auc`` the macro
    one-vs-rest AUC (:func:`boostkit.metrics.macro_roc_auc`); the staged evaluations and the
    final weights, which are two-class quantities, are ``None``.
    """

    fold: int
    accuracy: float
    roc_auc: float
    fit_seconds: float
    n_rounds: int
    stop_reason: str
    y_test: np.ndarray = attrs.field(eq=False, repr=False)
    scores: np.ndarray = attrs.field(eq=False, repr=False)
    train_curve: StagedEvaluation | None = attrs.field(default=None, eq=False, repr=False)
    test_curve: StagedEvaluation | None = attrs.field(default=None, eq=False, repr=False)
    final_weights: np.ndarray | None = attrs.field(default=None, eq=False, repr=False)
    predictions: np.ndarray | None = attrs.field(default=None, eq=False, repr=False)
    n_terms: int | None = None
    threshold: float = 0.0


@attrs.frozen
class AlgorithmResult:
    """The folds of one algorithm, and their summary (mean ± std over folds).

    ``multiclass`` is ``None`` for two-class data, else how the recipe ran on the classes:
    ``"native"`` or ``"one-vs-rest"`` (``model.multiclass_strategy``; ``"-"`` without
    results); the summary then has a ``multiclass`` entry and its AUC is the macro one-vs-rest
    AUC (``macro_roc_auc_*``).
    ``ranker``: the recipe ranks (:func:`is_ranker`), so its accuracy is taken at a threshold
    chosen on the training folds. ``warnings``: the distinct warnings its fits raised, as text.
    ``input``: how it was given the data (:meth:`InputForm.describe`, :data:`INPUT_MEANINGS`).
    ``status``: ``"done"``, or why there are no results (:data:`STATUS_MEANINGS`), with the
    ``error`` that says why; such a result has no folds (a failure in a later fold drops the
    earlier ones too, so that every row of the table averages the same folds).
    """

    algorithm: str
    paper: str
    folds: tuple[FoldResult, ...]
    multiclass: str | None = None
    ranker: bool = False
    warnings: tuple[str, ...] = ()
    input: str = "as given"
    status: str = attrs.field(default="done")
    error: str = ""

    @status.validator
    def _check_status(self, attribute, value):
        if value not in STATUS_MEANINGS:
            raise ValueError(f"status must be one of {sorted(STATUS_MEANINGS)}, got {value!r}")
        if (value == "done") != bool(self.folds):
            raise ValueError(f"a result of status {value!r} has {len(self.folds)} folds")

    @property
    def done(self) -> bool:
        return self.status == "done"

    def pooled(self, field: str) -> np.ndarray:
        """A per-fold array (``y_test``, ``scores``, ``predictions``) of every fold together."""
        return np.concatenate([getattr(fold, field) for fold in self.folds])

    def _values(self, field: str) -> np.ndarray:
        return np.array([getattr(fold, field) for fold in self.folds], dtype=np.float64)

    def summary(self) -> dict:
        """One table row. Standard deviations are over folds (ddof=0, as numpy's default).

        Without results (``status`` other than ``"done"``): the algorithm, its paper, status and
        error only."""
        if not self.done:
            return {
                "algorithm": self.algorithm,
                "paper": self.paper,
                "citation": citation(self.paper),
                **({} if self.multiclass is None else {"multiclass": self.multiclass}),
                "input": self.input,
                "status": self.status,
                "error": self.error,
            }
        stops = Counter(fold.stop_reason for fold in self.folds)
        stop_reason, stop_count = stops.most_common(1)[0]
        auc = "roc_auc" if self.multiclass is None else "macro_roc_auc"
        terms = [fold.n_rounds if fold.n_terms is None else fold.n_terms for fold in self.folds]
        return {
            "algorithm": self.algorithm,
            "paper": self.paper,
            "citation": citation(self.paper),
            **({} if self.multiclass is None else {"multiclass": self.multiclass}),
            "accuracy_mean": float(self._values("accuracy").mean()),
            "accuracy_std": float(self._values("accuracy").std()),
            # "0": the sign of F; "training folds": a ranker's threshold chosen on them.
            "accuracy_threshold": "training folds" if self.ranker else "0",
            f"{auc}_mean": float(self._values("roc_auc").mean()),
            f"{auc}_std": float(self._values("roc_auc").std()),
            "fit_seconds_median": float(np.median(self._values("fit_seconds"))),
            "rounds_mean": float(self._values("n_rounds").mean()),
            "terms_mean": float(np.mean(terms)),
            "stop_reason": stop_reason,
            "stop_reason_folds": stop_count,
            "n_folds": len(self.folds),
            "input": self.input,
            "status": self.status,
            "error": self.error,
        }


_AUTHORS = re.compile(
    r"(?P<authors>[A-Z][^\s,;:()&]*(?:(?:, | & |, & | and )[A-Z][^\s,;:()&]*)*(?: et al\.)?)"
    # Names end at punctuation, a parenthesis ("Jin et al. (2003)") or a year ("Jin et al. 2003").
    r"(?=$|[,;:]| \(| (?:19|20)\d\d\b)"
)


def citation(paper: str) -> str:
    """A short citation, "authors year", from a recipe's ``paper`` text.

    The leading names (up to "et al.") and the first year (19xx or 20xx) of the text; three or
    more authors are shortened to "First et al.". ``"Zhu, Zou, Rosset & Hastie (2009), ..."``
    gives ``"Zhu et al. 2009"``; a text without leading names gives its first words.
    """
    paper = paper.strip()
    if not paper:
        return "-"
    match = _AUTHORS.match(paper)
    # The year of the leading names: before any later names ("as Jin et al.", "(McCallum &
    # Nigam 1998)") that cite another paper.
    rest = re.split(r" & | et al| as ", paper[match.end():] if match else paper)[0]
    year = re.search(r"\b(19|20)\d\d\b", rest)
    if match:
        authors = match["authors"]
        names = re.split(r", & |, | & | and ", authors.removesuffix(" et al."))
        if len(names) >= 3 or authors.endswith(" et al."):
            authors = f"{names[0]} et al."
    else:
        authors = " ".join(re.split(r"[;:(]", paper)[0].split()[:3])
    return f"{authors} {year[0]}" if year else authors


def is_ranker(recipe: Recipe) -> bool:
    """Whether a recipe ranks rather than classifies: a component provides ``"pairwise-loss"``
    (:data:`boostkit.capabilities.PAIRWISE_LOSS`), a loss over pairs of examples that ignores
    the offset of the margins F(x), so that thresholding F at 0 gives a meaningless accuracy.
    No recipe is named: a plugin's own ranker declares the capability like RankBoost's
    reweightings do (:func:`boostkit.capabilities.is_ranker`)."""
    return recipe_ranks(get_registry().instantiate(recipe))


def training_threshold(y, scores) -> float:
    """The threshold c for which predicting +1 where F(x) > c has the largest accuracy on
    ``(y, scores)``: midway between two distinct scores, or below or above all of them."""
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(scores, kind="stable")
    s, positive = scores[order], np.asarray(y)[order] > 0
    n_pos = int(positive.sum())
    # Predicting +1 above s[i]: the negatives up to i and the positives after i are right.
    correct = np.cumsum(~positive) + (n_pos - np.cumsum(positive))
    boundary = np.r_[s[1:] != s[:-1], True]
    correct = np.where(boundary, correct, -1)
    i = int(np.argmax(correct))
    if correct[i] < n_pos:  # every example positive is best
        return float(s[0] - 1.0)
    return float((s[i] + s[i + 1]) / 2) if i + 1 < s.shape[0] else float(s[-1] + 1.0)


class _FinalWeights:
    """Observer keeping n D_{T+1}(i), the distribution after the last round times n."""

    weights: np.ndarray | None = None

    @hookimpl
    def boostkit_fit_end(self, state, model):
        self.weights = state.weights * state.data.n_samples


def _rounds_run(model) -> int:
    """The boosting rounds a fit ran: its round records (a back-fitting round re-fits a term
    instead of adding one), else, for a one-vs-rest model, its longest class model's terms."""
    records = getattr(model, "records", None)
    return len(records) if records else model.n_rounds


def _binary_fold(k: int, model, X: np.ndarray, data: BinaryData, train, test,
                 fit_seconds: float, final_weights: _FinalWeights,
                 ranker: bool = False) -> FoldResult:
    scores = model.decision_function(X[test])
    y_test = data.y[test]
    threshold = 0.0
    if ranker:  # F has no meaningful 0: choose the threshold on the training examples
        threshold = training_threshold(data.y[train], model.decision_function(X[train]))
    return FoldResult(
        fold=k,
        accuracy=accuracy(y_test, np.where(scores > threshold, 1.0, -1.0)),
        roc_auc=roc_auc(y_test, scores),
        fit_seconds=fit_seconds,
        n_rounds=_rounds_run(model),
        n_terms=model.n_rounds,
        threshold=threshold,
        stop_reason=model.stop_reason,
        y_test=y_test,
        scores=scores,
        train_curve=staged_evaluation(model, X[train], data.y[train]),
        test_curve=staged_evaluation(model, X[test], y_test),
        final_weights=final_weights.weights,
    )


def _multiclass_fold(k: int, model, X: np.ndarray, data: MulticlassData, test,
                     fit_seconds: float) -> FoldResult:
    scores = model.decision_function(X[test])
    predictions = model.predict(X[test])
    y_test = data.y[test]
    return FoldResult(
        fold=k,
        accuracy=accuracy(y_test, predictions),
        roc_auc=macro_roc_auc(y_test, scores, model.classes),
        fit_seconds=fit_seconds,
        n_rounds=_rounds_run(model),
        n_terms=model.n_rounds,
        stop_reason=model.stop_reason,
        y_test=y_test,
        scores=scores,
        predictions=predictions,
    )


def cross_validate(data: BinaryData | MulticlassData, algorithms: Sequence[str | Recipe], *,
                   n_rounds: int, n_folds: int, seed: int, max_bins: int, n_jobs: int,
                   progress: bool) -> list[AlgorithmResult]:
    """Fit every algorithm (a registered name, a recipe string or a :class:`Recipe`) on the same
    seeded stratified folds and evaluate on the held-out fold.

    Multiclass data are fitted with ``Booster(..., multiclass="auto")``: natively when the
    recipe handles several classes, else one binary model per class (one-vs-rest), which
    ``AlgorithmResult.multiclass`` records. A one-vs-rest model's rounds are those of its
    longest class model and its stop reason lists its class models' reasons.

    Every algorithm gets the same rows: as they come where its proposal handles categorical
    columns and missing values, else in the fallback :class:`InputForm` (fitted on each
    training fold), which ``AlgorithmResult.input`` records.

    On two classes a ranker (:func:`is_ranker`) is scored at a threshold chosen on each
    training fold. Warnings raised during the fits do not interrupt the progress bar: they are
    collected and printed on standard error after it, once per distinct message with a count,
    and kept in ``AlgorithmResult.warnings``.

    No error of one algorithm loses the others' results (``AlgorithmResult.status``,
    :data:`STATUS_MEANINGS`). Before the fits start, each algorithm is fitted for one round on
    the first training fold: one that refuses the data there (a :class:`boostkit.DataError` or
    :class:`boostkit.RecipeError`, e.g. more preference pairs than its ``max_pairs``) is left
    out as ``"cannot run"``, with a line on standard output saying why. A fit that raises later
    marks its algorithm ``"failed"`` with the error, and the next algorithm goes on. Ctrl-C
    marks the algorithm being fitted ``"interrupted"`` and the rest ``"not run"``, and returns
    what finished.
    """
    multiclass = isinstance(data, MulticlassData)
    class_names = data.y if multiclass else np.where(data.y > 0, data.positive, data.negative)
    try:
        folds = stratified_folds(class_names, n_folds, seed)
    except ValueError as exc:
        raise UsageError(f"{exc}; pass a smaller --folds") from None
    registry = get_registry()
    recipes = [registry.resolve(algorithm) for algorithm in algorithms]
    auc_name = "macro ROC AUC" if multiclass else "ROC AUC"
    settings = dict(n_rounds=n_rounds, max_bins=max_bins, n_jobs=n_jobs, random_state=seed,
                    multiclass="auto")

    def unfinished(recipe, status, error, form="as given"):
        return AlgorithmResult(recipe.name, recipe.paper, (), "-" if multiclass else None,
                               input=form, status=status, error=error)

    results: dict[int, AlgorithmResult] = {}  # by position: two recipes may share a name
    runnable = []
    try:
        for j, recipe in enumerate(recipes):
            refused = _trial(recipe, data, folds[0][0], settings)
            if refused is None:
                runnable.append((j, recipe))
                continue
            results[j] = unfinished(recipe, *refused)
            print(_wrap(f"{recipe.name} {refused[0]} on these data and is left out: "
                        f"{refused[1]}"), flush=True)
    except KeyboardInterrupt:
        return [results.get(j) or unfinished(r, "not run", _NOT_STARTED)
                for j, r in enumerate(recipes)]
    log = WarningLog()
    with FitProgress(len(runnable) * n_folds, enabled=progress, description="compare") as bar:
        for i, (j, recipe) in enumerate(runnable):
            name = recipe.name
            ranker = not multiclass and is_ranker(recipe)
            form = InputForm.of(recipe, data)
            own = WarningLog()
            fold_results = []
            label = name
            try:
                for k, (train, test) in enumerate(folds, start=1):
                    X, features = form.apply(data.X, data.features, train)
                    label = f"{name} fold {k}/{n_folds}"
                    observer = bar.observer(label)
                    # n D_{T+1}(i) is drawn for two classes only (the margins figure).
                    final_weights = None if multiclass else _FinalWeights()
                    booster = Booster(
                        recipe, **settings,
                        observers=[o for o in (final_weights, observer) if o is not None],
                    )
                    with own.collect(label):
                        started = time.perf_counter()
                        model = booster.fit(X[train], data.y[train], features=features)
                        fit_seconds = time.perf_counter() - started
                        if multiclass:
                            fold = _multiclass_fold(k, model, X, data, test, fit_seconds)
                        else:
                            fold = _binary_fold(k, model, X, data, train, test, fit_seconds,
                                                final_weights, ranker)
                    fold_results.append(fold)
                    terms = ("" if fold.n_terms in (None, fold.n_rounds)
                             else f" ({fold.n_terms} terms)")
                    at = f" at F > {fold.threshold:.3g}" if ranker else ""
                    bar.fit_done(
                        f"{label}: {fold.n_rounds} rounds{terms} in {fit_seconds:.2f} s "
                        f"({fold.stop_reason}), accuracy{at} {fold.accuracy:.4f}, "
                        f"{auc_name} {fold.roc_auc:.4f}"
                    )
            except KeyboardInterrupt:
                results[j] = unfinished(recipe, "interrupted", f"Ctrl-C during {label}",
                                           form.describe())
                for k, rest in runnable[i + 1:]:
                    results[k] = unfinished(rest, "not run", _NOT_STARTED)
                break
            except Exception as exc:  # noqa: BLE001 - any error of one algorithm is its own
                error = f"{type(exc).__name__}: {exc} (in {label})"
                results[j] = unfinished(recipe, "failed", error, form.describe())
                bar.fit_done(f"{label}: failed, {type(exc).__name__}")
                log.extend(own)
                continue
            strategy = model.multiclass_strategy if multiclass else None
            results[j] = AlgorithmResult(name, recipe.paper, tuple(fold_results), strategy,
                                         ranker=ranker, warnings=tuple(own.lines()),
                                         input=form.describe())
            log.extend(own)
    for line in log.lines():  # after the bar has closed
        print(_wrap(line), file=sys.stderr)
    return [results[j] for j in range(len(recipes))]


_NOT_STARTED = "the comparison was interrupted (Ctrl-C) before its fits started"


def _trial(recipe: Recipe, data: BinaryData | MulticlassData, train: np.ndarray,
           settings: dict) -> tuple[str, str] | None:
    """``(status, error)`` if ``recipe`` cannot run on ``data``, else ``None``: a one-round fit
    on the rows ``train`` (the first training fold) that raises.

    The fit starts as every fold's will: a component that refuses the data when the fit starts
    (a RankBoost preference set over ``max_pairs``, a data requirement) does so here, whatever
    the component, in a fraction of one fold's time. A DataError or RecipeError is the data's
    or the recipe's limit (``"cannot run"``); any other error a fault (``"failed"``).
    """
    import warnings

    try:
        form = InputForm.of(recipe, data)
        X, features = form.apply(data.X, data.features, train)
        with warnings.catch_warnings():  # the fits that follow report them
            warnings.simplefilter("ignore")
            Booster(recipe, **{**settings, "n_rounds": 1}).fit(X[train], data.y[train],
                                                                features=features)
    except (DataError, RecipeError) as exc:
        return "cannot run", f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - reported as this algorithm's failure
        return "failed", f"{type(exc).__name__}: {exc}"
    return None


# -- tables and files ---------------------------------------------------------------------------

_COLUMNS = ("algorithm", "paper", "accuracy", "ROC AUC", "fit s", "rounds", "stop reason")
_MULTICLASS_COLUMNS = ("algorithm", "paper", "multiclass", "accuracy", "macro ROC AUC",
                       "fit s", "rounds", "stop reason")
_MULTICLASS_LEGEND = (
    "multiclass: native = the recipe boosts over (example, class) pairs; one-vs-rest = one "
    "binary model per class, predicting the class of the largest margin. macro ROC AUC: the "
    "mean over classes of the AUC of each class against the rest."
)
# The plain-text table fits a terminal of this many columns; the paper column gives way.
TABLE_WIDTH = 120
RANKER_MARK = "*"


def _columns(rows: Sequence[dict]) -> tuple[str, ...]:
    return _MULTICLASS_COLUMNS if rows and "multiclass" in rows[0] else _COLUMNS


#: The length of an error in the table's stop-reason column; the notes give it whole.
TABLE_ERROR_LENGTH = 40


def _cells(row: dict, full_paper: bool = False) -> list[str]:
    if row.get("status", "done") != "done":  # no results: the status, and why
        error = row["error"]
        if len(error) > TABLE_ERROR_LENGTH and not full_paper:
            error = error[: TABLE_ERROR_LENGTH - 3] + "..."
        return [
            row["algorithm"],
            row["paper"] if full_paper else row.get("citation", row["paper"]),
            *([row["multiclass"]] if "multiclass" in row else []),
            row["status"], "-", "-", "-", error,
        ]
    stop = row["stop_reason"]
    if row["stop_reason_folds"] < row["n_folds"]:
        stop += f" ({row['stop_reason_folds']}/{row['n_folds']})"
    auc = "roc_auc" if "multiclass" not in row else "macro_roc_auc"
    mark = RANKER_MARK if row.get("accuracy_threshold", "0") != "0" else ""
    return [
        row["algorithm"],
        row["paper"] if full_paper else row.get("citation", row["paper"]),
        *([row["multiclass"]] if "multiclass" in row else []),
        f"{row['accuracy_mean']:.4f} ± {row['accuracy_std']:.4f}{mark}",
        f"{row[f'{auc}_mean']:.4f} ± {row[f'{auc}_std']:.4f}",
        f"{row['fit_seconds_median']:.3f}",
        _rounds_text(row["rounds_mean"]),
        stop,
    ]


def _rounds_text(rounds: float) -> str:
    return f"{rounds:g}" if rounds == round(rounds) else f"{rounds:.1f}"


def format_table(rows: Sequence[dict], width: int = TABLE_WIDTH) -> str:
    """The results as a plain-text table with aligned columns, at most ``width`` characters
    wide: the paper column (a short citation) is cut with "..." if needed. :func:`table_notes`
    explains it."""
    columns = _columns(rows)
    lines = [list(columns)] + [_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(columns))]
    # Too wide: the paper column gives the first author and year only ("Freund 1997"), then the
    # stop reason (one-vs-rest lists its class models' reasons) is cut, then the paper.
    paper = columns.index("paper")
    if sum(widths) + 2 * (len(widths) - 1) > width:
        for line in lines[1:]:
            line[paper] = _first_author(line[paper])
        widths[paper] = max(len(line[paper]) for line in lines)
    for name, floor in (("stop reason", len("stop reason")), ("paper", 5)):
        excess = sum(widths) + 2 * (len(widths) - 1) - width
        if excess <= 0:
            break
        i = columns.index(name)
        widths[i] = max(min(floor, widths[i]), widths[i] - excess)
        for line in lines:
            if len(line[i]) > widths[i]:
                line[i] = line[i][: widths[i] - 3] + "..."
    text = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    text.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(text)


def _first_author(citation_text: str) -> str:
    """``"Freund & Schapire 1997"`` -> ``"Freund 1997"``, ``"Barutcuoglu et al."`` ->
    ``"Barutcuoglu"``: the first name and the year of a :func:`citation`."""
    words = citation_text.split()
    if not words:
        return citation_text
    year = words[-1] if re.fullmatch(r"(19|20)\d\d", words[-1]) and len(words) > 1 else ""
    return f"{words[0].rstrip(',')} {year}".strip()


def table_notes(rows: Sequence[dict], n_folds: int | None = None) -> list[str]:
    """What the table's columns mean, one paragraph each: accuracy (and a ranker's threshold),
    which AUC it is (mean ± std over folds; the figures' legends give the pooled AUC), fit
    time, rounds against terms, stop reasons."""
    if not rows:
        return []
    multiclass = "multiclass" in rows[0]
    folds = f"the {n_folds} folds" if n_folds else "the folds"
    auc = "macro ROC AUC" if multiclass else "ROC AUC"
    notes = [
        f"accuracy and {auc}: mean ± std over {folds}, each fold's value on its held-out "
        "examples" + ("." if multiclass else "; accuracy predicts the positive class where "
                      "F(x) > 0."),
    ]
    rankers = [row["algorithm"] for row in rows if row.get("accuracy_threshold", "0") != "0"]
    if rankers:
        notes.append(
            f"{RANKER_MARK} ranker ({', '.join(rankers)}): its loss compares pairs of examples "
            "and ignores the offset of F, so the sign of F is no class decision; its accuracy "
            "is taken where F(x) exceeds the threshold that maximises accuracy on each training "
            f"fold. Judge a ranker by its ROC AUC (1 - the fraction of misordered "
            "positive-negative pairs)."
        )
    if not multiclass:
        notes.append(
            f"The ROC and precision-recall figures pool the out-of-fold scores of {folds}: "
            "their legends give that pooled AUC, which differs from the table's mean of "
            "per-fold AUCs when the scale of F changes between folds (most for rankers)."
        )
    notes.append("paper: a short citation (full references in results.md); "
                 "fit s: median seconds per fit; rounds: boosting rounds run, mean over folds.")
    backfit = [f"{row['algorithm']} ({row['terms_mean']:g})" for row in rows
               if "terms_mean" in row and row["terms_mean"] != row["rounds_mean"]]
    if backfit:
        notes.append(
            "Fewer terms than rounds: a back-fitting round re-fits an earlier term instead of "
            f"adding one; terms, mean over folds: {', '.join(backfit)}. Their 'max-rounds' means "
            "every round of the budget was run."
        )
    forms: dict[str, list[str]] = {}
    for row in rows:
        if row.get("status", "done") == "done":  # the others were given nothing to fit
            forms.setdefault(row.get("input", "as given"), []).append(row["algorithm"])
    if set(forms) != {"as given"}:
        notes.append("input, on the same rows for all: " + "; ".join(
            f"{', '.join(names)}: {INPUT_MEANINGS[form]}" for form, names in forms.items()) + ".")
    reasons = {row["stop_reason"] for row in rows if "stop_reason" in row}
    meaning = {"max-rounds": "the round budget (--rounds) was used up",
               "pool-exhausted": "the proposal had no weak hypothesis left to offer"}
    said = [f"{r}: {meaning[r]}" for r in sorted(reasons) if r in meaning]
    if said:
        notes.append("stop reason: that of most folds ((k/n): of k of the n folds); "
                     + "; ".join(said) + "; others are the recipe's stopping rule "
                     "(boostkit components).")
    for row in rows:
        status = row.get("status", "done")
        if status != "done":
            notes.append(f"{row['algorithm']}: {status}, {STATUS_MEANINGS[status]}: "
                         f"{row['error']}")
    return notes


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*")


def _wrap(text: str, width: int = TABLE_WIDTH) -> str:
    import textwrap

    return textwrap.fill(text, width=width, subsequent_indent="  ", break_on_hyphens=False)


def _markdown(rows: Sequence[dict], run: dict,
              results: Sequence[AlgorithmResult] = ()) -> str:
    def line(cells):
        return "| " + " | ".join(_md_escape(cell) for cell in cells) + " |"

    columns = _columns(rows)
    header = (
        f"# boostkit compare: {run['data']}\n\n"
        f"{run['n_folds']} stratified folds (seed {run['seed']}), at most {run['n_rounds']} "
        f"rounds, {run['max_bins']} bins per feature; mean ± std over folds.\n\n"
    )
    if "multiclass" in columns:
        header += _MULTICLASS_LEGEND + "\n\n"
    table = [line(columns), line(["---"] * len(columns))] + [line(_cells(row)) for row in rows]
    notes = "".join(f"- {_md_escape(note)}\n" for note in table_notes(rows, run.get("n_folds")))
    references = "".join(
        f"- `{row['algorithm']}` ({row.get('citation', '-')}): {row['paper'] or 'no paper (a recipe composed on the command line)'}\n"
        for row in rows
    )
    # The papers those texts cite, in full (docs/bibliography.md).
    keys = {key: None for row in rows for key in cited(row["paper"])}
    if keys:
        references += "\n" + "".join(
            f"- {REFERENCES[key].short}: {REFERENCES[key].text()}\n" for key in keys)
    text = header + "\n".join(table) + "\n\n" + notes + "\n## References\n\n" + references
    warned = [(r.algorithm, w) for r in results for w in r.warnings]
    if warned:
        text += "\n## Warnings during the fits\n\n" + "".join(
            f"- `{name}`: {w}\n" for name, w in warned)
    return text


# roc.json keeps at most about this many points per curve: enough to redraw it at the size of
# the figures (a step of 1/200 of either axis is under 2 pixels); the AUCs are exact.
CURVE_POINTS = 200


def thin_curve(x: np.ndarray, y: np.ndarray, points: int = CURVE_POINTS) -> np.ndarray:
    """Indices of the points of a monotone curve (ROC) to keep: the first and last, and one
    wherever the path has moved another 1/``points`` of its length (|dx| + |dy|). The thinned
    curve is within 1/``points`` of the original everywhere."""
    step = np.abs(np.diff(x)) + np.abs(np.diff(y))
    length = np.r_[0.0, np.cumsum(step)]
    total = length[-1]
    if x.shape[0] <= points or total <= 0:
        return np.arange(x.shape[0])
    bucket = np.floor(length / total * points)
    keep = np.r_[True, bucket[1:] != bucket[:-1]]
    keep[-1] = True
    return np.flatnonzero(keep)


def _curve(y, scores, points: int = CURVE_POINTS) -> dict:
    fpr, tpr, _ = roc_curve(y, scores)
    keep = thin_curve(fpr, tpr, points)
    return {"auc": roc_auc(y, scores), "fpr": np.round(fpr[keep], 5).tolist(),
            "tpr": np.round(tpr[keep], 5).tolist()}


def _is_multiclass(results: Sequence[AlgorithmResult]) -> bool:
    return bool(results) and results[0].multiclass is not None


def _classes(result: AlgorithmResult) -> np.ndarray:
    # Stratified folds put every class in every test fold: these are the model's classes.
    return np.unique(result.pooled("y_test"))


def _confusion(result: AlgorithmResult) -> np.ndarray:
    """The confusion matrix of the out-of-fold predictions of every fold together."""
    return confusion_matrix(result.pooled("y_test"), result.pooled("predictions"),
                            labels=_classes(result))


def _roc_entry(result: AlgorithmResult) -> dict:
    """``roc.json``'s entry for one algorithm: the exact AUC of every fold (the table's mean ±
    std) and the pooled ROC curve, thinned to what the figure draws, with its exact AUC (the
    figure's legend) (two classes); or per-fold macro AUCs and pooled one-vs-rest curves per
    class (multiclass)."""
    if not result.done:
        return {"paper": result.paper, "status": result.status, "error": result.error}
    y, scores = result.pooled("y_test"), result.pooled("scores")
    if result.multiclass is None:
        return {
            "paper": result.paper,
            "ranker": result.ranker,
            "folds": [{"fold": f.fold, "auc": f.roc_auc, "threshold": f.threshold}
                      for f in result.folds],
            "pooled": _curve(y, scores),
        }
    classes = _classes(result)
    return {
        "paper": result.paper,
        "multiclass": result.multiclass,
        "folds": [{"fold": f.fold, "macro_auc": f.roc_auc} for f in result.folds],
        "pooled": {
            "macro_auc": macro_roc_auc(y, scores, classes),
            "classes": {str(label): _curve(y == label, scores[:, l])
                        for l, label in enumerate(classes.tolist())},
        },
    }


_ROC_JSON_NOTE = (
    "folds[].auc: each fold's exact AUC on its held-out examples (the table shows their mean "
    "and std); pooled.auc: the exact AUC of all out-of-fold scores together (the figures' "
    f"legends); pooled.fpr/tpr: the pooled ROC curve thinned to about {CURVE_POINTS} points "
    "(within 1/{CURVE_POINTS} of the full curve)".replace("{CURVE_POINTS}", str(CURVE_POINTS))
)


def _file_name(algorithm: str) -> str:
    return re.sub(r"[^\w.-]+", "_", algorithm)


def write_plots(
    directory: str | Path, results: Sequence[AlgorithmResult], run: dict
) -> list[Path]:
    """Draw the comparison's figures into ``directory`` and return their paths.

    Two classes (:data:`PLOT_FILES`, all algorithms together in each): ``roc.png`` and
    ``pr.png``, the ROC and precision-recall curves of the pooled out-of-fold scores (the
    ``pooled`` curves of ``roc.json``; the ROC curves also on a log false-positive axis, where
    curves that coincide at full scale part); ``learning_curves.png``: training and test error
    (on a log axis) and AUC against rounds, means over folds; ``margins.png``: the
    distributions of the normalised training margins and of the final weights, pooled over
    folds (:mod:`boostkit.plot`).

    Multiclass: ``confusion_<algorithm>.png`` for each algorithm, its confusion matrix of the
    out-of-fold predictions pooled over folds (:func:`boostkit.plot.confusion_matrix_figure`);
    the two-class figures are not drawn, and a note says so. Raises ImportError naming the
    ``plot`` extra without matplotlib.
    """
    from . import plot

    plot.require_matplotlib()
    results = [result for result in results if result.done]
    data = run.get("data", "").split(":")[0]
    folds = f"{run.get('n_folds', '?')}-fold out-of-fold"
    if _is_multiclass(results):
        _note("ROC, precision-recall, learning-curve and margin figures are drawn for two "
              "classes only; for several classes compare draws a confusion matrix per algorithm")
        figures = {
            f"confusion_{_file_name(r.algorithm)}.png": plot.confusion_matrix_figure(
                _confusion(r), _classes(r).tolist(),
                title=f"{r.algorithm} ({r.multiclass})\n{data}, {folds} predictions")
            for r in results
        }
    else:
        figures = _binary_figures(plot, results, data, run.get("n_folds", "?"))
    return [plot.save(figure, Path(directory) / name) for name, figure in figures.items()]


def families(results: Sequence[AlgorithmResult]) -> dict[str, list[str]]:
    """The algorithms grouped by the plugin that registered them (``"plugin adaboost"``), in
    order of first appearance; recipes composed with ``--recipe`` form the group
    ``"--recipe"``. The ROC and precision-recall figures draw one panel per group."""
    registry = get_registry()
    groups: dict[str, list[str]] = {}
    for result in results:
        try:
            source = registry.source_of(result.algorithm)
            match = re.search(r"plugin '([^']+)'", source)
            group = f"plugin {match[1]}" if match else source
        except KeyError:
            group = "--recipe"
        groups.setdefault(group, []).append(result.algorithm)
    return groups


def highlighted(results: Sequence[AlgorithmResult], count: int | None = None) -> list[str]:
    """The algorithms the learning-curve and margin figures draw in colour: all of them up to
    ``count`` (:data:`boostkit.plot.MAX_HIGHLIGHTED`); else the best of each family
    (:func:`families`) by the table's ROC AUC (mean over folds), then the next best, up to
    ``count``. The others are drawn grey."""
    from .plot import MAX_HIGHLIGHTED

    count = MAX_HIGHLIGHTED if count is None else count
    mean_auc = {r.algorithm: float(np.nan_to_num(np.mean([f.roc_auc for f in r.folds]), nan=-1))
                for r in results}
    if len(results) <= count:
        return [r.algorithm for r in results]
    best_of = [max(names, key=mean_auc.get) for names in families(results).values()]
    ranked = sorted(best_of, key=lambda n: -mean_auc[n])[:count]
    ranked += sorted((n for n in mean_auc if n not in ranked), key=lambda n: -mean_auc[n])
    chosen = set(ranked[:count])
    return [r.algorithm for r in results if r.algorithm in chosen]


def _binary_figures(plot, results: Sequence[AlgorithmResult], data: str, n_folds) -> dict:
    highlight = highlighted(results)
    best = (f", the best of each plugin in colour ({len(highlight)} of {len(results)})"
            if len(highlight) < len(results) else "")
    groups = families(results) if len(results) > plot.MAX_HIGHLIGHTED else None
    pooled = {r.algorithm: (r.pooled("y_test"), r.pooled("scores")) for r in results}

    def staged(result, curve):
        # A ranker's sign of F is no decision: its error curve is not drawn (AUC is).
        if curve is None or not result.ranker:
            return curve
        return attrs.evolve(curve, error=np.full_like(curve.error, np.nan))

    train = {r.algorithm: [staged(r, f.train_curve) for f in r.folds if f.train_curve]
             for r in results}
    test = {r.algorithm: [staged(r, f.test_curve) for f in r.folds if f.test_curve]
            for r in results}
    margins = {name: np.concatenate([c.margins for c in curves]) for name, curves in train.items()
               if curves}
    weights = {
        r.algorithm: np.concatenate([f.final_weights for f in r.folds])
        for r in results if all(f.final_weights is not None for f in r.folds)
    }
    scores = f"out-of-fold scores of {n_folds} folds pooled"
    panels = "; one panel per plugin, the others grey" if groups else ""
    return {
        "roc.png": plot.roc_figure(
            pooled, title=f"ROC, {data}: {scores}{panels}\n(legend: AUC of the pooled scores; "
                          "the table gives the mean of per-fold AUCs)",
            highlight=highlight, groups=groups),
        "pr.png": plot.pr_figure(
            pooled, title=f"Precision-recall, {data}: {scores}{panels}\n"
                          "(legend: average precision of the pooled scores)",
            highlight=highlight, groups=groups),
        "learning_curves.png": plot.learning_curve_figure(
            train, test, title=f"{data}{best}", highlight=highlight),
        "margins.png": plot.margin_figure(margins, weights, title=f"{data}{best}",
                                          highlight=highlight),
    }


def write_outputs(
    directory: str | Path, results: Sequence[AlgorithmResult], run: dict, *, plots: bool = True
) -> list[Path]:
    """Write ``results.csv``, ``results.md``, ``roc.json`` and the figures into ``directory``.

    ``run`` describes the comparison (``data``, ``positive`` or ``classes``, ``n_folds``,
    ``n_rounds``, ``seed``, ``max_bins``). ``roc.json`` holds, per algorithm, the ROC points
    (``fpr``, ``tpr``) and AUC of every fold, and ``pooled``: the curve of all out-of-fold
    scores together; for multiclass results, the macro AUC of every fold, and pooled, the macro
    AUC and each class's one-vs-rest curve. Multiclass results also get ``confusion.json``: the
    pooled confusion matrix of each algorithm (rows true classes, columns predicted, in the
    order of ``classes``). With ``plots`` the figures (:func:`write_plots`) follow; they need
    the ``plot`` extra; without it, or when drawing fails, a note says so and they are skipped
    (the tables are written all the same). Returns the paths
    written.

    Every file is first written into a hidden folder inside ``directory`` and moved into place
    only when all are done, so an interrupted run (Ctrl-C while plotting) or a failed one
    leaves the previous results whole; a result file of an earlier run that this run did not
    write again (a figure, with ``--no-plots``) is then removed, so the folder never mixes
    two runs.
    """
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=directory))
    except OSError as exc:
        raise UsageError(f"cannot create the output directory {directory}: {exc}") from None
    try:
        written = _write_outputs(staging, results, run, plots=plots)
        try:
            for path in written:
                os.replace(path, directory / path.name)
            names = {path.name for path in written}
            for old in directory.iterdir():
                if old.is_file() and old.name not in names and _is_result_file(old.name):
                    old.unlink()
        except OSError as exc:
            raise UsageError(f"cannot write the results into {directory}: {exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [directory / path.name for path in written]


def _figures(directory: Path, results: Sequence[AlgorithmResult], run: dict) -> list[Path]:
    """The figures' paths, or none with a note when they cannot be drawn: no figure's fault
    (matplotlib missing, a drawing error) loses the tables."""
    try:
        return write_plots(directory, results, run)
    except ImportError as exc:
        _note(f"{exc}; the figures were not drawn")
    except Exception as exc:  # noqa: BLE001 - said, and the tables are written
        _note(f"the figures were not drawn: {type(exc).__name__}: {exc}")
    return []


def _is_result_file(name: str) -> bool:
    return (name in MULTICLASS_RESULT_FILES or name in PLOT_FILES
            or re.fullmatch(r"confusion_.+\.png", name) is not None)


def _write_outputs(directory: Path, results: Sequence[AlgorithmResult], run: dict, *,
                   plots: bool) -> list[Path]:
    multiclass = _is_multiclass(results)
    rows = [result.summary() for result in results]
    paths = [directory / name for name in (MULTICLASS_RESULT_FILES if multiclass else RESULT_FILES)]
    roc = {**run, "auc": _ROC_JSON_NOTE,
           "algorithms": {result.algorithm: _roc_entry(result) for result in results}}
    try:
        with open(paths[0], "w", newline="", encoding="utf-8") as fh:
            # Rows without results (a failed algorithm) lack the numbers: empty fields.
            fields = list(dict.fromkeys(key for row in rows for key in row))
            writer = csv.DictWriter(fh, fieldnames=fields, restval="")
            writer.writeheader()
            writer.writerows(rows)
        paths[1].write_text(_markdown(rows, run, results), encoding="utf-8")
        paths[2].write_text(json.dumps(roc), encoding="utf-8")
        if multiclass:
            confusion = {
                **run, "rows": "true class", "columns": "predicted class",
                "algorithms": {r.algorithm: {"classes": _classes(r).tolist(),
                                             "matrix": _confusion(r).tolist()}
                               for r in results if r.done},
            }
            paths[3].write_text(json.dumps(confusion), encoding="utf-8")
        if plots:
            paths += _figures(directory, results, run)
    except OSError as exc:
        raise UsageError(f"cannot write the results into {directory}: {exc}") from None
    return paths


# -- commands -----------------------------------------------------------------------------------


def _cmd_plugins(args) -> int:
    """List every plugin, broken ones with their error; runs whatever state the plugins are in.

    Exit status 0, or 1 in strict mode (``BOOSTKIT_STRICT_PLUGINS``) when a plugin is broken.
    """
    from . import plugins

    info = plugin_info()
    broken = [plugin for plugin in info if plugin.get("status") == "broken"]
    status = 1 if broken and plugins.strict_mode() else 0
    problem = plugins.allow_list_problem() if not plugins.strict_mode() else None
    if problem is not None:
        print(f"boostkit plugins: warning: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps(info, indent=2))
        return status
    for plugin in info:
        entry_point = plugin["entry_point"]
        if entry_point in ("", "built-in"):
            where = entry_point or "registered in-process"
        else:
            where = f"entry point {plugin['name'].split(' (')[0]} = {entry_point}"
        print(f"{plugin['name']} {plugin['version']}".rstrip()
              + f"  (distribution {plugin['distribution']}, {where})")
        if plugin.get("status") == "broken":
            print(f"  BROKEN, left out: {plugin['error']}")
            continue
        print(f"  hooks: {', '.join(plugin['hooks']) or 'none'}")
        for title in ("components", "algorithms"):
            table = plugin[title]
            if table:
                print(f"  {title}:")
                width = max(len(name) for name in table)
                for name, detail in table.items():
                    print(f"    {name.ljust(width)}  {detail}".rstrip())
        for name, why in plugin.get("left_out", {}).items():
            # plugin_info() keys a left-out component "component NAME", an algorithm by its name.
            label = name if name.startswith("component ") else f"algorithm {name}"
            print(f"  {label} LEFT OUT: {why}")
    if broken:
        names = ", ".join(plugin["name"] for plugin in broken)
        print(f"\n{len(broken)} broken plugin(s) left out: {names}. Fix or uninstall them, or "
              "choose the plugins to load with BOOSTKIT_PLUGINS=name,name,...")
    return status


def _capability_text(cls) -> tuple[str, str]:
    """``(needs, provides)`` of a component class with its default parameters, as text."""
    try:
        needs, provides, _ = capabilities_of(cls())
    except (TypeError, ValueError):  # a component without defaults for every parameter
        needs, provides = getattr(cls, "needs", ()), getattr(cls, "provides", ())
        if not isinstance(needs, frozenset) or not isinstance(provides, frozenset):
            return "depends on parameters", "depends on parameters"
    return ", ".join(sorted(needs)) or "-", ", ".join(sorted(provides)) or "-"


def _cmd_recipes(args) -> int:
    registry = get_registry()
    rows = [
        {"name": name, "recipe": recipe.to_string(), "paper": recipe.paper,
         "plugin": registry.source_of(name), **recipe.to_json()}
        for name, recipe in registry.algorithms().items()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        from .plugins import no_algorithms_message

        print(f"boostkit recipes: {no_algorithms_message()}", file=sys.stderr)
        return 0
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        print(f"{row['name'].ljust(width)}  {row['paper']}".rstrip())
        print(f"{''.ljust(width)}  {row['recipe']}")
    return 0


def _cmd_components(args) -> int:
    registry = get_registry()
    components = registry.components(args.role)
    if args.role is not None and not components:
        raise UsageError(f"no component has role {args.role!r}")
    rows = []
    for name, cls in components.items():
        needs, provides = _capability_text(cls)
        rows.append({"name": name, "role": cls.role, "needs": needs, "provides": provides,
                     "plugin": registry.source_of(name)})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    headers = ("name", "role", "needs", "provides")
    widths = [max(len(h), *(len(row[h]) for row in rows)) for h in headers]
    for line in (dict(zip(headers, headers)), *rows):
        print("  ".join(str(line[h]).ljust(w) for h, w in zip(headers, widths)).rstrip())
    return 0


def _algorithm_names(text: str | None, recipes: Sequence[str] = ()) -> list[str]:
    known = list(get_registry().algorithms())
    if text is None:
        return [] if recipes else known
    names = list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    if not names:
        raise UsageError("--algorithms is empty; give names separated by commas")
    unknown = [name for name in names if name not in known]
    if unknown and not known:  # an empty list would say nothing: why, and how to load some
        from .plugins import no_algorithms_message

        raise UsageError(f"unknown algorithm(s) {', '.join(unknown)}: {no_algorithms_message()}")
    if unknown:
        raise UsageError(
            f"unknown algorithm(s) {', '.join(unknown)}; registered: {', '.join(known)} "
            "(see `boostkit plugins`)"
        )
    return names


def _recipes(texts: Sequence[str]) -> list[Recipe]:
    """The ``--recipe`` strings as recipes, each checked (components, parameters, capabilities)
    before any data is read."""
    registry = get_registry()
    recipes = []
    for text in texts:
        recipe = registry.resolve(text)
        registry.instantiate(recipe)
        recipes.append(recipe)
    names = [recipe.name for recipe in recipes]
    if len(set(names)) != len(names):
        raise UsageError("two --recipe options have the same name; give each a distinct name=...")
    return recipes


def _cmd_compare(args) -> int:
    recipes = _recipes(args.recipe or ())
    algorithms = [*_algorithm_names(args.algorithms, recipes), *recipes]
    data = load_data(args.csv, args.target, args.dataset, args.positive, args.max_rows, args.seed)
    print(data.describe())
    print(
        _wrap(f"{args.folds} stratified folds (seed {args.seed}), at most {args.rounds} rounds, "
              f"algorithms: {', '.join(a if isinstance(a, str) else a.name for a in algorithms)}"),
        flush=True,  # before the progress bar starts drawing on standard error
    )
    results = cross_validate(
        data, algorithms, n_rounds=args.rounds, n_folds=args.folds, seed=args.seed,
        max_bins=args.max_bins, n_jobs=args.n_jobs, progress=not args.no_progress,
    )
    statuses = Counter(result.status for result in results)
    interrupted = statuses["interrupted"] + statuses["not run"] > 0
    if interrupted and not statuses["done"]:
        raise KeyboardInterrupt  # nothing finished: the previous results stay as they are
    rows = [result.summary() for result in results]
    print()
    print(format_table(rows))
    print()
    for note in table_notes(rows, args.folds):
        print(_wrap(note))
    if isinstance(data, MulticlassData):
        print(f"\n{_wrap(_MULTICLASS_LEGEND)}")
        labels = {"classes": list(data.classes)}
    else:
        labels = {"positive": data.positive}
    run = {"data": data.describe(), **labels, "n_folds": args.folds, "n_rounds": args.rounds,
           "seed": args.seed, "max_bins": args.max_bins}
    # No figures of nothing: the tables say why no algorithm ran.
    paths = write_outputs(args.output, results, run,
                          plots=not args.no_plots and statuses["done"] > 0)
    print(f"\n{_wrap('wrote ' + ', '.join(str(p) for p in paths))}")
    if interrupted:
        print(f"boostkit compare: interrupted; wrote the {statuses['done']} algorithm(s) that "
              "finished", file=sys.stderr)
        return 130
    if not statuses["done"]:
        print("boostkit compare: error: no algorithm could run on these data (the reasons are "
              "under the table and in results.md)", file=sys.stderr)
        return 1
    failed = [result.algorithm for result in results if result.status == "failed"]
    if failed:
        print(f"boostkit compare: error: {len(failed)} algorithm(s) failed: {', '.join(failed)} "
              "(their errors are under the table and in results.md); the others' results are "
              "written", file=sys.stderr)
        return 1
    return 0


def _cmd_study(args) -> int:
    from .study import SpecError, StoreError, StudySpec, run_study, write_outputs
    from .study.spec import split_names

    datasets = [name for text in (*(args.suite or ()), *(args.datasets or ()))
                for name in split_names(text)]
    try:
        spec = StudySpec.from_flags(
            args.config, datasets=datasets or None, algorithms=args.algorithms,
            resampling=args.resampling, folds=args.folds, repeats=args.repeats,
            seeds=args.seeds, rounds=args.rounds, max_bins=args.max_bins,
            baseline=args.baseline, metric=args.metric, output=args.output, database=args.db,
            data_dir=args.data_dir, target=args.target)
        print(_wrap(f"study: {', '.join(spec.datasets)} x {', '.join(spec.algorithms)}; "
                    f"{spec.resampling.name}, seeds {list(spec.seeds)}, at most "
                    f"{spec.n_rounds} rounds; results database {spec.database_path}"), flush=True)
        with _terminate_as_interrupt():
            run = run_study(spec, n_jobs=args.n_jobs, scheduler=args.scheduler,
                            progress=not args.no_progress)
        paths, notes = write_outputs(spec, run)
    except (SpecError, StoreError) as exc:
        raise UsageError(str(exc)) from None
    print(_wrap(f"{len(run.datasets)} datasets x {len(run.algorithms)} algorithms: "
                f"{run.computed} cells computed now, {run.skipped} finished before"))
    print(_wrap("wrote " + ", ".join(str(path) for path in paths)))
    for note in notes:
        _note(note)
    # As compare: "cannot run" (a recipe refusing these data, with its reason) is an outcome,
    # "failed" an error; and a study in which nothing could run has nothing to compare.
    if run.not_done > run.failed:
        print(_wrap(f"{run.not_done - run.failed} cell(s) cannot run: their recipe refuses "
                    f"those data (the reasons are in {spec.database_path} and cells.csv)"))
    if run.failed:
        print(f"boostkit study: error: {run.failed} cell(s) failed (status 'failed', with the "
              f"error, in {spec.database_path} and cells.csv); the others are written",
              file=sys.stderr)
        return 1
    if not run.done:
        print("boostkit study: error: no cell could run (status 'cannot run', the reasons in "
              f"{spec.database_path} and cells.csv)", file=sys.stderr)
        return 1
    return 0


def _cmd_export(args) -> int:
    """Write ``args.model`` (a saved model file) as ``args.format`` to ``args.output`` with
    :func:`boostkit.onnx.export_file`; its refusals and file errors are one line, status 2."""
    try:
        from .onnx import export_file

        export_file(args.model, args.output, format=args.format)
    except ImportError as exc:
        raise UsageError(f"cannot export to {args.format}: {exc}") from None
    except (ValueError, BoostkitError, OSError) as exc:
        raise UsageError(f"cannot export {args.model} to {args.format}: "
                         f"{type(exc).__name__}: {exc}") from None
    print(args.output)
    return 0


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C is so that the same clean-up runs (a
    study's worker processes terminated, its database closed); :func:`main` returns 143
    (128 + SIGTERM) for it, 130 for Ctrl-C."""

    status = 128 + 15


@contextlib.contextmanager
def _terminate_as_interrupt():
    """While inside: SIGTERM raises :class:`Terminated` in the main thread (elsewhere, and
    where the platform has no SIGTERM handler to set, nothing changes)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends it outright
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _int_at_least(minimum: int, maximum: int | None = None):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            bounds = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
            raise argparse.ArgumentTypeError(f"expected an integer {bounds}, got {value}")
        return value

    return parse


def _n_jobs(text: str) -> int:
    value = _int_at_least(-1)(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected a positive integer or -1 (all cores), got 0")
    return value


def _version() -> str:
    try:
        return metadata.version("boostkit")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="boostkit",
        description="Plugin-based boosting: list plugins, compare algorithms on a CSV or a "
                    "bundled dataset.",
    )
    parser.add_argument("--version", action="version", version=f"boostkit {_version()}")
    # Optional: bare `boostkit` prints this help (main does) rather than a usage error.
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def listing(name, run, help, description):
        """A subcommand that lists something, as text or (``--json``) as JSON."""
        command = commands.add_parser(name, help=help, description=description)
        command.add_argument("--json", action="store_true", help="print JSON instead of text")
        command.set_defaults(run=run)
        return command

    listing("plugins", _cmd_plugins, "list installed plugins, their components and algorithms",
            "List installed plugins: name, distribution, version, hooks, components (with role) "
            "and algorithms (with paper).")
    listing("recipes", _cmd_recipes,
            "list the named recipes (algorithms) with their components and paper",
            "List the named recipes: each registered algorithm's components as a recipe string "
            "(usable with compare --recipe and Booster), its paper and plugin.")
    components = listing(
        "components", _cmd_components, "list components with their role and capabilities",
        "List registered components: role, and the capabilities each needs from the rest of a "
        "recipe and provides to it (with default parameters).")
    components.add_argument("--role", help="only components of this role (e.g. calibration)")

    compare = commands.add_parser(
        "compare", help="cross-validate algorithms and print a results table",
        description="Cross-validate registered algorithms with seeded stratified folds; print "
                    "accuracy and ROC AUC (mean ± std over folds; rankers' accuracy at a "
                    "threshold chosen on the training folds, marked *), a short citation, fit "
                    "time, rounds and stop reason, with notes on what each column means; write "
                    "results.csv, results.md (with full references), roc.json and (with "
                    "matplotlib) "
                    "roc.png, pr.png, learning_curves.png and margins.png into --output. Data "
                    "of three or more classes (without --positive) are compared as multiclass: "
                    "each algorithm runs natively if its recipe handles several classes, else "
                    "one-vs-rest; the table shows accuracy and macro one-vs-rest ROC AUC, and "
                    "confusion.json and one confusion_<algorithm>.png per algorithm are written. "
                    "Text columns are categorical and empty fields missing values; algorithms "
                    "whose proposal cannot take them get one-hot categories and mean-imputed "
                    "values with 'is missing' columns, on the same rows.",
    )
    compare.add_argument("csv", nargs="?", metavar="CSV",
                         help="a CSV file with a header row (.csv or .csv.gz); default: a bundled "
                              f"dataset ({DEFAULT_DATASET} unless --dataset is given)")
    compare.add_argument("--target", metavar="COLUMN",
                         help="the CSV's label column (default: the last column)")
    compare.add_argument("--dataset", metavar="NAME",
                         help=f"a bundled dataset (default {DEFAULT_DATASET}); "
                              "names: boostkit.datasets.available()")
    compare.add_argument("--algorithms", metavar="A,B,...",
                         help="comma-separated algorithm names (default: all registered, or "
                              "none when --recipe is given)")
    compare.add_argument("--recipe", action="append", metavar="RECIPE",
                         help="a recipe composed of components, e.g. 'proposal=stump "
                              "calibration=pav+input-dependent(beta=0.5) reweighting=exponential "
                              "name=my-mix', or 'weightboost calibration=pav+input-dependent' to "
                              "start from an algorithm; repeatable")
    compare.add_argument("--rounds", type=_int_at_least(1), default=100,
                         help="round budget T per fit (default 100)")
    compare.add_argument("--max-rows", type=_int_at_least(2), metavar="N",
                         help="compare on a random sample of N rows (seeded by --seed) when the "
                              "data have more (default: all rows)")
    compare.add_argument("--folds", type=_int_at_least(2), default=5,
                         help="stratified cross-validation folds (default 5)")
    compare.add_argument("--seed", type=int, default=0,
                         help="seed of the folds and fits (default 0)")
    compare.add_argument("--max-bins", type=_int_at_least(2, 255), default=255,
                         help="quantile bins per feature, 2..255 (default 255)")
    compare.add_argument("--n-jobs", type=_n_jobs, default=1,
                         help="threads per fit, -1 for all cores (default 1)")
    compare.add_argument("--output", metavar="DIR", default="compare-output",
                         help="where to write results.csv, results.md, roc.json and the "
                              "figures (default ./compare-output)")
    compare.add_argument("--positive", metavar="LABEL",
                         help="the positive label, compared against the rest (default for "
                              "two classes: the dataset's suggested one, else the larger label); "
                              "without it, three or more classes are compared as multiclass")
    compare.add_argument("--no-progress", action="store_true", help="do not show progress")
    compare.add_argument("--no-plots", action="store_true",
                         help="write the tables only, no figures (drawing takes a second or two)")
    compare.set_defaults(run=_cmd_compare)

    study = commands.add_parser(
        "study", help="compare algorithms across many datasets: ranks, tests, a report",
        description="Fit every algorithm on every dataset over the same seeded stratified "
                    "folds, write each fit (a cell) to an SQLite results database as it "
                    "finishes (a rerun skips finished cells, so a stopped study resumes), then "
                    "export cells.csv and curves.csv and write the statistics (average ranks, "
                    "Friedman, Nemenyi, Wilcoxon-Holm against --baseline) and the report into "
                    "--output. Flags override the values of a --config study file (TOML).",
    )
    study.add_argument("--config", metavar="STUDY.toml",
                       help="a study file (TOML); its keys are the long flags' names")
    study.add_argument("--suite", action="append", metavar="NAME",
                       help="a suite of datasets (e.g. bundled, keel, keel-binary); repeatable")
    study.add_argument("--datasets", action="append", metavar="A,B,...",
                       help="datasets, CSV files or directories of CSV files; repeatable")
    study.add_argument("--data-dir", metavar="DIR",
                       help="where data not bundled are read from (default: BOOSTKIT_DATA)")
    study.add_argument("--target", metavar="COLUMN",
                       help="the label column of CSV files (default: the last column)")
    study.add_argument("--algorithms", metavar="A,B,...",
                       help="comma-separated algorithm names or recipe strings")
    study.add_argument("--resampling", choices=("k-fold", "repeated k-fold", "5x2cv"),
                       help="k-fold (default), repeated k-fold (with --repeats) or 5x2cv")
    study.add_argument("--folds", type=_int_at_least(2), help="folds per repeat (default 10)")
    study.add_argument("--repeats", type=_int_at_least(1),
                       help="repeats of the folds, each split anew (default 1)")
    study.add_argument("--seeds", metavar="S,T,...",
                       help="seeds, each repeating the whole resampling (default 0)")
    study.add_argument("--rounds", type=_int_at_least(1), help="round budget per fit (default 100)")
    study.add_argument("--max-bins", type=_int_at_least(2, 255),
                       help="quantile bins per feature, 2..255 (default 255)")
    study.add_argument("--baseline", metavar="NAME",
                       help="the algorithm the others are tested against")
    study.add_argument("--metric", choices=("accuracy", "balanced_accuracy", "roc_auc",
                                            "log_loss"),
                       help="the score the statistics rank (default accuracy)")
    study.add_argument("--n-jobs", type=_int_at_least(1), default=1,
                       help="local worker processes, one cell each (default 1)")
    study.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the cells on the Dask cluster of this scheduler")
    study.add_argument("--db", metavar="PATH",
                       help="the results database (default OUTPUT/study.sqlite)")
    study.add_argument("--output", metavar="DIR",
                       help="where the exports and the report go (default ./study)")
    study.add_argument("--no-progress", action="store_true", help="do not show progress")
    study.set_defaults(run=_cmd_study)

    export = commands.add_parser(
        "export", help="write a saved model in another format (ONNX) for serving",
        description="Convert a model saved by boostkit (Model.save) to another format, today "
                    "ONNX (the onnx extra), and print the path written.")
    export.add_argument("model", metavar="MODEL", help="a model file written by Model.save")
    export.add_argument("--format", choices=("onnx",), default="onnx",
                        help="the format to write (default onnx)")
    export.add_argument("-o", "--output", metavar="FILE", required=True,
                        help="the file to write")
    export.set_defaults(run=_cmd_export)
    return parser


_NEEDS_PLUGINS = ("recipes", "components", "compare", "study")


def _check_plugin_selection(args) -> None:
    """Refuse a command that needs plugins when the selection cannot give it any: an unknown
    name in ``BOOSTKIT_PLUGINS``, or (compare) no algorithm registered and no --recipe."""
    from .plugins import allow_list_problem, no_algorithms_message

    if args.command not in _NEEDS_PLUGINS:
        return
    problem = allow_list_problem()
    if problem is not None:
        raise UsageError(problem)
    if (args.command == "compare" and not getattr(args, "algorithms", None)
            and not getattr(args, "recipe", None) and not get_registry().algorithms()):
        raise UsageError(f"nothing to compare: {no_algorithms_message()}")


def _show_plugin_warnings(command: str):
    """Print a :class:`PluginWarning` as one ``boostkit COMMAND: warning: ...`` line (none for
    ``plugins``, which lists broken plugins itself, nor for an unknown name in BOOSTKIT_PLUGINS,
    which :func:`_check_plugin_selection` reports); other warnings as Python prints them."""
    import warnings

    from .errors import PluginWarning
    from .plugins import AllowListWarning

    original = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if not issubclass(category, PluginWarning):
            return original(message, category, filename, lineno, file, line)
        if command != "plugins" and not issubclass(category, AllowListWarning):
            print(f"boostkit {command}: warning: {message}", file=sys.stderr)

    return original, show


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    import warnings

    from .errors import PluginWarning

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error (status 2) or --help (0)
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:  # bare `boostkit`
        parser.print_help()
        return 0
    prefix = f"boostkit {args.command}: error:"
    original, show = _show_plugin_warnings(args.command)
    warnings.showwarning = show
    try:
        _check_plugin_selection(args)
        return args.run(args)
    except UsageError as exc:
        print(f"{prefix} {exc}", file=sys.stderr)
        return 2
    except (DataError, RecipeError) as exc:  # the data or the named recipe cannot be used
        print(f"{prefix} {exc}", file=sys.stderr)
        return 2
    except BoostkitError as exc:  # a plugin failed to load (strict mode) or raised inside a hook
        print(f"{prefix} {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except PluginWarning as exc:  # -W error::boostkit.errors.PluginWarning
        print(f"{prefix} PluginWarning: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:  # Ctrl-C: 130; SIGTERM (study): Terminated, 143
        what = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"boostkit {args.command}: {what}", file=sys.stderr)
        return getattr(exc, "status", 130)
    except BrokenPipeError:  # stdout closed early (`boostkit plugins | head`): not an error
        # Point stdout at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if warnings.showwarning is show:
            warnings.showwarning = original


if __name__ == "__main__":
    sys.exit(main())

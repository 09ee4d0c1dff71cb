"""``boostkit compare``: the one-dataset study.

A comparison is a :class:`boostkit.study.StudySpec` of one dataset run by
:func:`boostkit.study.run_study`, the same cells as any study: the study's folds
(:meth:`boostkit.study.Resampling.split`), each fit written to the results database
(``results.sqlite`` in the output directory) as it finishes, so that a stopped comparison
resumes. Its spec asks the runner to keep what compare's table and figures need beyond a
study's cell (``keep_scores``: the out-of-fold scores and predictions, staged errors and AUCs,
margins, final weights, warnings, per cell); :func:`cross_validate` reads them back into one
:class:`AlgorithmResult` per algorithm. :mod:`boostkit.study.compare_output` writes the table,
``results.*``, ``roc.json`` and the figures.

The data are read as they come (:func:`load_data`): text columns are categorical, empty fields
missing values, and no row is dropped. Every algorithm is fitted on the same rows; those whose
proposal cannot take categories or missing values get a fallback fitted on each training fold
(:class:`InputForm`). A ranker (:func:`is_ranker`) is scored at a threshold chosen on the
training fold (:func:`training_threshold`).
"""

from __future__ import annotations

import contextlib
import re
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path
from typing import Sequence

import attrs
import numpy as np

from .. import datasets
from ..capabilities import CATEGORICAL_FEATURES, MISSING_VALUES, capabilities_of
from ..capabilities import is_ranker as recipe_ranks
from ..data import encode_labels
from ..engine import Booster
from ..errors import DataError, RecipeError
from ..features import FeatureSchema
from ..hookspecs import hookimpl
from ..plot import StagedEvaluation, staged_evaluation
from ..plugins import get_registry
from ..progress import WarningLog
from ..registry import Recipe
from .sources import DataSource, StudyData, parse_float, read_csv
from .spec import Cell, Resampling, SpecError, StudySpec
from .runner import run_study
from .store import KEY_COLUMNS, ResultStore, StoreError

__all__ = ["AlgorithmResult", "BinaryData", "DATABASE", "FoldResult", "InputForm",
           "MulticlassData", "citation", "cross_validate", "is_ranker", "load_data",
           "training_threshold"]

DEFAULT_DATASET = "spambase"
#: The results database of a comparison, in its output directory.
DATABASE = "results.sqlite"


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

    def study_data(self) -> StudyData:
        """The data as a study's cells see them: ``y`` +1/-1, as compared."""
        return StudyData.of(self.name, self.X, self.y, self.features, "compare")

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

    def study_data(self) -> StudyData:
        """The data as a study's cells see them."""
        return StudyData.of(self.name, self.X, self.y, self.features, "compare")

    def describe(self) -> str:
        shown = self.classes[:_CLASSES_SHOWN]
        counts = ", ".join(f"{label!r}: {int((self.y == label).sum())}" for label in shown)
        if len(self.classes) > len(shown):
            counts += f", and {len(self.classes) - len(shown)} more"
        return (
            f"{self.name}: {self.y.shape[0]} rows, {_features_text(self.X, self.features)}, "
            f"target {self.target!r}, {len(self.classes)} classes ({counts})"
        )



def note(message: str) -> None:
    """A note for the user, on standard error."""
    print(f"note: {message}", file=sys.stderr)


def _problem(name, X, labels, features, target, positive,
             suggested) -> BinaryData | MulticlassData:
    """Two classes, or one label against the rest (``positive``), as a :class:`BinaryData` (+1
    for the positive label, -1 for the rest); three or more classes without ``positive`` as a
    :class:`MulticlassData`; a single class is refused."""
    classes = np.unique(labels).tolist()
    _refuse_continuous(name, target, labels, classes)
    if positive is not None:
        if positive not in classes:
            raise SpecError(
                f"--positive {positive!r} is not a label of {name}; its labels are {classes}"
            )
    elif len(classes) > 2:
        return MulticlassData(name=name, X=X, y=labels, classes=tuple(classes),
                              features=features, target=target)
    else:
        # The engine's convention: the larger of two labels is the positive class.
        positive = suggested if suggested in classes else classes[-1]
    if len(classes) < 2:
        raise SpecError(f"{name} has a single class {classes}: a comparison needs two or more")
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
    numbers = {label: parse_float(label) for label in classes}
    if None in numbers.values():
        return
    try:
        encode_labels(np.array([numbers[label] for label in labels]), labels.shape[0])
    except DataError as exc:
        raise SpecError(
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
        raise SpecError("give either a CSV file or --dataset, not both")
    if csv_path is not None:
        X, labels, features, target, n_dropped = read_csv(csv_path, target)
        name = Path(csv_path).name
        suggested = None
        if features.categorical.any():
            note("read the non-numeric column(s) "
                 + ", ".join(f"{features.names[j]!r} ({features.n_categories[j]} values)"
                             for j in np.flatnonzero(features.categorical))
                 + " as categorical")
        if n_dropped:
            note(f"dropped {n_dropped} of {n_dropped + labels.shape[0]} rows with an empty "
                 f"label ({target!r})")
    else:
        if target is not None:
            raise SpecError("--target applies to a CSV file; bundled datasets have their own")
        name = dataset or DEFAULT_DATASET
        known = datasets.available()
        if name not in known:
            raise SpecError(f"unknown dataset {name!r}; available: {', '.join(known)}")
        try:
            loaded = datasets.load(name)
        except (ValueError, OSError) as exc:
            raise SpecError(f"cannot load dataset {name!r}: {exc}") from None
        X, labels, features = loaded.X, loaded.y, loaded.features
        target, suggested = "label", loaded.positive
    if max_rows is not None and max_rows < labels.shape[0]:
        rows = np.sort(np.random.default_rng(seed).choice(labels.shape[0], max_rows,
                                                          replace=False))
        note(f"a random sample of {max_rows} of the {labels.shape[0]} rows (--max-rows, "
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


class FinalWeights:
    """Observer keeping n D_{T+1}(i), the distribution after the last round times n."""

    weights: np.ndarray | None = None

    @hookimpl
    def boostkit_fit_end(self, state, model):
        self.weights = state.weights * state.data.n_samples


def rounds_run(model) -> int:
    """The boosting rounds a fit ran: its round records (a back-fitting round re-fits a term
    instead of adding one), else, for a one-vs-rest model, its longest class model's terms."""
    records = getattr(model, "records", None)
    return len(records) if records else model.n_rounds


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


def kept_values(model, X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray,
                scores: np.ndarray, predicted: np.ndarray, threshold: float,
                final_weights: np.ndarray | None, caught) -> dict[str, np.ndarray]:
    """What compare's table and figures need of one cell beyond its row, kept by the study
    runner in the results database when the spec asks (``keep_scores``).

    ``y_test`` (the test fold's labels), ``scores`` (F on it), ``predictions`` (the labels
    predicted at ``threshold``), ``threshold``, ``n_terms`` (the model's terms) and
    ``warnings`` (``caught``, the fit's warnings, as (category, message) rows); on two classes
    the staged evaluations on the training and test rows (``train_error``, ``train_auc``,
    ``train_margins`` and the same for ``test``; :func:`boostkit.plot.staged_evaluation`) and
    ``final_weights``, n D_{T+1}(i); on more, ``multiclass_strategy``."""
    classes = np.asarray(model.classes)
    kept = {
        "y_test": np.asarray(y[test]), "scores": np.asarray(scores),
        "predictions": classes[predicted], "threshold": np.array(float(threshold)),
        "n_terms": np.array(model.n_rounds),
        "warnings": np.array([[w.category.__name__, str(w.message)] for w in caught],
                             dtype=str).reshape(-1, 2),
    }
    if classes.shape[0] == 2:
        for name, rows in (("train", train), ("test", test)):
            curve = staged_evaluation(model, X[rows], y[rows])
            kept.update({f"{name}_error": curve.error, f"{name}_auc": curve.auc,
                         f"{name}_margins": curve.margins})
        if final_weights is not None:
            kept["final_weights"] = final_weights
    else:
        kept["multiclass_strategy"] = np.array(model.multiclass_strategy)
    return kept


@attrs.frozen
class LoadedSource(DataSource):
    """Data already in memory (a comparison's, read and sampled by :func:`load_data`) as a
    study's data source; it pickles with its arrays for worker processes."""

    data: StudyData = attrs.field(eq=False, repr=False)

    def load(self) -> StudyData:
        return self.data


def _spec_algorithm(recipe: Recipe) -> str:
    """A study's name for ``recipe``: its registered name, else its recipe string with its
    name (a recipe composed with ``--recipe``)."""
    registered = get_registry().algorithms().get(recipe.name)
    if registered is not None and registered.to_string() == recipe.to_string():
        return recipe.name
    return f"{recipe.to_string()} name={recipe.name}"


def _open_database(path: Path, identity: dict, cells: dict[str, str]) -> None:
    """Make the results database at ``path`` one of this comparison: a database of another
    (other data, rounds, bins, folds or seed, or a recipe of the same name changed) is
    emptied, with a note, rather than mixed with it; the cells of this one are kept, so that
    a rerun resumes, but for failed ones: a failure is an error to fix, and the rerun fits
    them again."""
    with ResultStore(path) as store:
        recorded = store.get_meta("comparison")
        changed = [key for key in identity if recorded is not None
                   and recorded.get(key) != identity[key]]
        changed += sorted({algorithm for (dataset, algorithm, *_), (recipe, _) in
                           store.finished().items() if cells.get(algorithm, recipe) != recipe})
        if changed:
            note(f"{path} held the cells of another comparison (other {', '.join(changed)}): "
                 "started anew")
            store.clear()
        store.clear(status="failed")
        store.set_meta("comparison", identity)


def _fold(k: int, row: dict, kept: dict, multiclass: bool) -> FoldResult:
    curves = {}
    if not multiclass:
        curves = {f"{name}_curve": StagedEvaluation(kept[f"{name}_error"], kept[f"{name}_auc"],
                                                    kept[f"{name}_margins"])
                  for name in ("train", "test")}
    return FoldResult(
        fold=k + 1, accuracy=row["accuracy"],
        roc_auc=np.nan if row["roc_auc"] is None else row["roc_auc"],
        fit_seconds=row["fit_seconds"], n_rounds=row["rounds"], stop_reason=row["stop_reason"],
        y_test=kept["y_test"], scores=kept["scores"], **curves,
        final_weights=kept.get("final_weights"),
        predictions=kept["predictions"] if multiclass else None,
        n_terms=int(kept["n_terms"]), threshold=float(kept["threshold"]),
    )


def cross_validate(data: BinaryData | MulticlassData, algorithms: Sequence[str | Recipe], *,
                   n_rounds: int, n_folds: int, seed: int, max_bins: int, n_jobs: int = 1,
                   progress: bool = False, database: str | Path | None = None,
                   wrap=lambda text: text) -> list[AlgorithmResult]:
    """Cross-validate every algorithm (a registered name, a recipe string or a
    :class:`Recipe`) on ``data``: a one-dataset study, run by
    :func:`boostkit.study.run_study` on ``n_folds`` stratified folds (seeded by ``seed``) in
    ``n_jobs`` processes, each cell written to the results ``database`` (default: a temporary
    one) with what the table and figures need (``keep_scores``); rerun on the same database,
    it computes only the cells missing.

    Multiclass data are fitted with ``Booster(..., multiclass="auto")``: natively when the
    recipe handles several classes, else one binary model per class (one-vs-rest), which
    ``AlgorithmResult.multiclass`` records. Every algorithm gets the same rows, in the form its
    proposal takes (:class:`InputForm`, ``AlgorithmResult.input``); on two classes a ranker
    (:func:`is_ranker`) is scored at a threshold chosen on each training fold. The fits'
    warnings are printed on standard error after the progress, once per distinct message
    with a count, and kept in ``AlgorithmResult.warnings``.

    No error of one algorithm loses the others' results (``AlgorithmResult.status``,
    :data:`STATUS_MEANINGS`). Before the fits start, each algorithm is fitted for one round on
    the first training fold: one that refuses the data there (a DataError or RecipeError,
    e.g. more preference pairs than its ``max_pairs``) is left out as ``"cannot run"``, with a
    line on standard output (through ``wrap``) saying why. A fit that raises later marks its
    algorithm ``"failed"`` with the error. Ctrl-C marks the algorithm being fitted
    ``"interrupted"`` and the rest ``"not run"``, and returns what finished.
    """
    multiclass = isinstance(data, MulticlassData)
    registry = get_registry()
    recipes = [registry.resolve(algorithm) for algorithm in algorithms]
    study_data = data.study_data()
    resampling = Resampling("k-fold", n_folds)
    try:
        folds = resampling.split(study_data.y, data.name, study_data.data_hash, 0, seed)
    except ValueError as exc:
        raise SpecError(f"{exc}; pass a smaller --folds") from None
    first = Cell(data.name, "", resampling.name, 0, 0, seed)
    settings = dict(n_rounds=n_rounds, max_bins=max_bins, multiclass="auto", n_jobs=1,
                    random_state=first.random_state(study_data.data_hash))
    forms = {j: InputForm.of(recipe, data) for j, recipe in enumerate(recipes)}

    def unfinished(j, status, error):
        recipe = recipes[j]
        return AlgorithmResult(recipe.name, recipe.paper, (), "-" if multiclass else None,
                               input=forms[j].describe() if status in ("failed", "interrupted")
                               else "as given", status=status, error=error)

    results: dict[int, AlgorithmResult] = {}  # by position: two recipes may share a name
    runnable = []
    try:
        for j, recipe in enumerate(recipes):
            refused = _trial(recipe, data, folds[0][0], settings)
            if refused is None:
                runnable.append(j)
                continue
            results[j] = unfinished(j, *refused)
            print(wrap(f"{recipe.name} {refused[0]} on these data and is left out: "
                       f"{refused[1]}"), flush=True)
    except KeyboardInterrupt:
        return [results.get(j) or unfinished(j, "not run", _NOT_STARTED)
                for j in range(len(recipes))]
    if not runnable:
        return [results[j] for j in range(len(recipes))]
    with contextlib.ExitStack() as stack:
        if database is None:
            database = Path(stack.enter_context(tempfile.TemporaryDirectory())) / DATABASE
        database = Path(database)
        spec = StudySpec(datasets=(data.name,),
                         algorithms=tuple(_spec_algorithm(recipes[j]) for j in runnable),
                         resampling=resampling, seeds=(seed,), n_rounds=n_rounds,
                         max_bins=max_bins, output=str(database.parent),
                         database=str(database), keep_scores=True)
        identity = {"data": data.name, "data hash": study_data.data_hash, "rounds": n_rounds,
                    "bins": max_bins, "folds": resampling.name, "seed": seed}
        _open_database(database, identity,
                       {recipes[j].name: recipes[j].to_string() for j in runnable})
        interrupted = False
        try:
            run_study(spec, sources=[LoadedSource(data.name, "compare", study_data)],
                      n_jobs=n_jobs, progress=progress, progress_label="compare")
        except KeyboardInterrupt:
            interrupted = True
        with ResultStore(database, readonly=True) as store:
            cells = {(row["algorithm"], row["fold"]): row for row in store.rows()
                     if (row["dataset"], row["resample"], row["repeat"], row["seed"])
                     == (data.name, resampling.name, 0, seed)}
            kept = store.kept()
    log = WarningLog()
    seen_unfinished = False
    for j in runnable:
        name = recipes[j].name
        rows = [cells.get((name, k)) for k in range(n_folds)]
        values = [kept.get(tuple(row[c] for c in KEY_COLUMNS)) if row else None for row in rows]
        own = WarningLog()
        for k, value in enumerate(values):
            for category, message in ([] if value is None else value["warnings"].tolist()):
                own.add(f"{name} fold {k + 1}/{n_folds}", category, message)
        log.extend(own)
        bad = next((row for row in rows if row and row["status"] != "done"), None)
        if bad is not None:
            results[j] = unfinished(j, bad["status"], f"{bad['error']} (in {name} fold "
                                                      f"{bad['fold'] + 1}/{n_folds})")
        elif all(rows):
            strategy = str(values[-1]["multiclass_strategy"]) if multiclass else None
            results[j] = AlgorithmResult(
                name, recipes[j].paper,
                tuple(_fold(k, row, value, multiclass)
                      for k, (row, value) in enumerate(zip(rows, values))),
                strategy, ranker=not multiclass and is_ranker(recipes[j]),
                warnings=tuple(own.lines()), input=forms[j].describe())
        elif not interrupted:  # a study that ran to its end recorded every cell
            raise StoreError(f"{database} lacks cells of {name} after the comparison ran")
        elif any(rows) or not seen_unfinished:  # Ctrl-C: the cells run algorithm by algorithm
            seen_unfinished = True
            results[j] = unfinished(j, "interrupted", f"Ctrl-C during {name}")
        else:
            results[j] = unfinished(j, "not run", _NOT_STARTED)
    for line in log.lines():  # after the progress
        print(wrap(line), file=sys.stderr)
    return [results[j] for j in range(len(recipes))]


def algorithm_names(text: str | None, recipes: Sequence[Recipe] = ()) -> list[str]:
    """The names of ``--algorithms`` (comma-separated), each registered; without it every
    registered algorithm, or none when ``--recipe`` composes some."""
    known = list(get_registry().algorithms())
    if text is None:
        return [] if recipes else known
    names = list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    if not names:
        raise SpecError("--algorithms is empty; give names separated by commas")
    unknown = [name for name in names if name not in known]
    if unknown and not known:  # an empty list would say nothing: why, and how to load some
        from ..plugins import no_algorithms_message

        raise SpecError(f"unknown algorithm(s) {', '.join(unknown)}: {no_algorithms_message()}")
    if unknown:
        raise SpecError(
            f"unknown algorithm(s) {', '.join(unknown)}; registered: {', '.join(known)} "
            "(see `boostkit plugins`)"
        )
    return names


def composed_recipes(texts: Sequence[str]) -> list[Recipe]:
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
        raise SpecError("two --recipe options have the same name; give each a distinct name=...")
    return recipes


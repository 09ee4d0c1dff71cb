"""Fitted models: evaluation in round order, and their file's structure.

A model is the sequence of (weak hypothesis, contribution) pairs of its rounds. Rounds are
evaluated in order and each contribution receives the running margin F_{t-1}(x), so contributions
that depend on it (input-dependent regularizers) predict exactly as they were fitted.

The file (:mod:`boostkit.model_file`: a versioned ``.npz`` archive, written atomically, read as
untrusted input, pickles only on request) holds the arrays of every component and, as JSON, the
structure made here: format name and version, the model kind (``"boost"``, or ``"one-vs-rest"``
with one such structure per class), class labels, whether they are multi-label columns, the
number of margin columns, recipe, the best round (``null`` for none), the feature schema (column
names and the keys of the categorical columns' category arrays, and whether it was learnt from a
table; ``null`` for unnamed numeric data), and for every round the registered component names,
their JSON parameters and the keys of their arrays. Version 4 files (before the schema's
``table`` flag, loaded as not from a table), version 3 files (before feature schemas), version 2
files (binary models, before multiclass) and version 1 files (before best rounds, which load
with ``best_round=None``) still load. Loading uses ``allow_pickle=False``: nothing in a model
file is ever executed. Components are rebuilt by registered name, so the plugins that fitted the
model must be installed to load it.

Loading checks that the structure holds what a fit gives (classes distinct, sorted and never
NaN, the column indices for multi-label data; flags JSON booleans; round records numbered in
order, typed, and adding the model's terms); every component must hold exactly the values the
file gives it, with floats that are numbers (finite in contributions); every
:func:`boostkit.feature_field` names a column in range; and the model is evaluated once on rows
of zeros. Whatever fails is a :class:`boostkit.ModelFormatError` naming the file.
"""

from __future__ import annotations

import functools
import math
import os
import reprlib
import warnings
from pathlib import Path
from typing import Any, Iterator, Mapping

import attrs
import numba
import numpy as np

from .splits import TIE_TOLERANCE
from .components import (
    FEATURE_INDEX,
    VALUE_ROLES,
    Candidate,
    Component,
    Contribution,
    RoundRecord,
    WeakHypothesis,
)
from .capabilities import handles_missing_values
from .data import check_features
from .errors import DataError, ModelFormatError, RecipeError
from .features import FeatureSchema, is_sparse
from .kernels.predict import (
    threshold_margin_columns,
    threshold_margins,
    threshold_margins_parallel,
)
from .model_file import (
    _MAX_DEPTH,
    FORMAT_NAME,
    FORMAT_VERSION,
    _Pickler,
    _with_pickled,
    read_model_file,
    write_model_file,
)
from .registry import Recipe

__all__ = ["BoostModel", "FORMAT_NAME", "FORMAT_VERSION"]


#: The types ``_jsonable`` returns as they are (checked first: most values are these).
_PLAIN = frozenset({type(None), bool, str, int, float})


def _jsonable(value: Any, where: str, pickler: _Pickler | None = None) -> Any:
    if type(value) in _PLAIN or value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, where, pickler) for v in value]
    if type(value) is dict or isinstance(value, Mapping):
        return {str(k): _jsonable(v, where, pickler) for k, v in value.items()}
    return (pickler or _Pickler({}))(value, where)


@functools.lru_cache(maxsize=None)
def _fields(cls: type, init_only: bool) -> tuple[tuple[str, str], ...]:
    """``(name, alias)`` of the attrs class' fields (only its ``__init__`` ones when
    ``init_only``), in order."""
    return tuple((field.name, field.alias) for field in attrs.fields(cls)
                 if field.init or not init_only)


def _recipe_state(recipe: Recipe, pickler: _Pickler | None = None) -> dict:
    """The recipe's JSON; a parameter that is no JSON value is refused (or pickled), by name."""
    state = recipe.to_json()
    for slot, value in state.items():
        for spec in value if isinstance(value, list) else [value]:
            if isinstance(spec, dict) and "params" in spec:
                spec["params"] = {
                    k: _jsonable(v, f"recipe {recipe.name!r}: {slot} {spec['name']!r}, parameter "
                                    f"{k!r}", pickler)
                    for k, v in spec["params"].items()
                }
    return state


def _component_state(obj: Component, arrays: dict[str, np.ndarray], prefix: str,
                     pickler: _Pickler | None = None) -> dict:
    params: dict[str, Any] = {}
    array_keys: dict[str, str] = {}
    children: dict[str, dict] = {}
    for name, alias in _fields(type(obj), True):
        value = getattr(obj, name)
        if type(value) in _PLAIN:
            params[alias] = value
        elif isinstance(value, np.ndarray) and value.dtype != object:
            key = f"{prefix}.{name}"
            arrays[key] = value
            array_keys[alias] = key
        elif isinstance(value, Component):
            children[alias] = _component_state(value, arrays, f"{prefix}.{name}", pickler)
        else:
            where = f"{obj.role} {obj.name!r}, field {name!r}"
            params[alias] = _jsonable(value, where, pickler)
    return {"component": obj.name, "params": params, "arrays": array_keys, "children": children}


def _record_state(record: RoundRecord, pickler: _Pickler | None = None) -> dict:
    """A round record's JSON: ``attrs.asdict``'s, field by field when ``extra`` is empty (no
    value then holds an attrs instance for ``asdict`` to expand)."""
    if record.extra:
        return _jsonable(attrs.asdict(record), "round record", pickler)
    return {name: _jsonable(getattr(record, name), "round record", pickler)
            for name, _ in _fields(type(record), False)}


def _component_from_state(state: Mapping, arrays, registry, role: str, depth: int = 0) -> Component:
    name = state.get("component")
    if depth > _MAX_DEPTH:
        raise ModelFormatError(f"{role} {name!r} nests value components more than {_MAX_DEPTH} deep")
    try:
        cls = registry.component(name, role)
    except RecipeError as exc:
        raise ModelFormatError(
            f"the model uses {role} {name!r}, which no installed plugin provides ({exc}); "
            "install the plugin that fitted the model"
        ) from None
    kwargs = dict(state.get("params", {}))
    for arg, key in state.get("arrays", {}).items():
        if key not in arrays:
            raise ModelFormatError(f"{role} {name!r}, field {arg!r}: its array {key!r} is missing")
        kwargs[arg] = arrays[key]
    for arg, child in state.get("children", {}).items():
        try:
            child_cls = registry.component(child["component"])
        except RecipeError as exc:
            raise ModelFormatError(
                f"the model's {role} {name!r} contains {child['component']!r}, which no installed "
                f"plugin provides ({exc}); install the plugin that fitted the model"
            ) from None
        if child_cls.role not in VALUE_ROLES:
            raise ModelFormatError(f"component {child['component']!r} is not a value component")
        kwargs[arg] = _component_from_state(child, arrays, registry, child_cls.role, depth + 1)
    try:
        built = cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ModelFormatError(f"cannot rebuild {role} {name!r} from the file: {exc}") from exc
    _check_rebuilt(built, kwargs, role)
    return built


def _check_rebuilt(component: Component, given: Mapping, role: str) -> None:
    """The rebuilt component must hold exactly what the file gave it: a converter that turned
    1.5 into 1, or "3" into 3, means the file was not written by ``save``. Floats must be
    numbers (NaN never), and a contribution's finite."""
    for field in attrs.fields(type(component)):
        if not field.init or field.alias not in given:
            continue
        where = f"{role} {component.name!r}, field {field.name!r}"
        value, original = getattr(component, field.name), given[field.alias]
        if isinstance(original, np.ndarray):
            same = (isinstance(value, np.ndarray) and value.dtype == original.dtype
                    and value.shape == original.shape and np.array_equal(value, original,
                                                                         equal_nan=True))
            numbers = value if isinstance(value, np.ndarray) and value.dtype.kind == "f" else None
        elif isinstance(original, Component):
            continue
        else:
            try:
                same = _jsonable(value, where) == original and type(_jsonable(value, where)) is type(original)
            except ModelFormatError:  # an unpickled object (allow_pickle): taken as it is
                continue
            numbers = np.asarray(value, dtype=float) if isinstance(value, float) else None
        if not same:
            raise ModelFormatError(f"{where}: the file's value {_describe(original)} is not one "
                                   f"the component keeps (it became {_describe(value)})")
        if numbers is not None and (np.isnan(numbers).any()
                                    or (role == "contribution" and not np.isfinite(numbers).all())):
            raise ModelFormatError(f"{where}: {'NaN' if np.isnan(numbers).any() else 'infinite'} "
                                   "values, which no fitted model has")


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"array of {value.dtype} {value.shape}"
    return repr(value)


def _check_features(component, n_features: int, where: str, depth: int = 0) -> None:
    """Every :func:`boostkit.feature_field` of ``component`` (and of the value components it
    holds) names a column in ``[0, n_features)``, or its declared sentinel."""
    if depth > _MAX_DEPTH:
        return
    for field in attrs.fields(type(component)):
        value = getattr(component, field.name)
        if isinstance(value, Component):
            _check_features(value, n_features, where, depth + 1)
        if FEATURE_INDEX not in field.metadata:
            continue
        columns = np.asarray(value)
        sentinel = field.metadata[FEATURE_INDEX]
        bad = (columns < 0) | (columns >= n_features)
        if sentinel is not None:
            bad &= columns != sentinel
        if bad.any():
            raise ModelFormatError(
                f"{where}: {component.name!r} field {field.name!r} names column "
                f"{columns[bad].ravel()[0]}, but the model has {n_features} features"
            )


def _feature_columns(component, depth: int = 0) -> np.ndarray:
    """The columns a component reads: its :func:`boostkit.feature_field` values (and those of
    the value components it holds), less their "no column" sentinels."""
    found = []
    for field in attrs.fields(type(component)):
        value = getattr(component, field.name)
        if isinstance(value, Component) and depth < _MAX_DEPTH:
            found.append(_feature_columns(value, depth + 1))
        if FEATURE_INDEX in field.metadata:
            columns = np.asarray(value, dtype=np.int64).ravel()
            sentinel = field.metadata[FEATURE_INDEX]
            found.append(columns if sentinel is None else columns[columns != sentinel])
    return np.unique(np.concatenate(found)) if found else np.empty(0, dtype=np.int64)


def term_importances(hypotheses, records, n_features: int) -> np.ndarray:
    """Feature importances of a model's terms (see :meth:`BoostModel.feature_importances`)."""
    latest: list[RoundRecord] = []  # the round that made each term, the last one for a re-fit
    for record in records:
        replaced = record.extra.get("replaces")
        if replaced is None:
            latest.append(record)
        else:
            latest[replaced] = record
    out = np.zeros(n_features)
    for hypothesis, record in zip(hypotheses, latest):
        columns = _feature_columns(hypothesis)
        alpha = float(np.linalg.norm(np.asarray(record.coefficients, dtype=np.float64)))
        weight = alpha * abs(record.edge)
        if columns.size and math.isfinite(weight):
            out[columns] += weight / columns.size
    total = out.sum()
    return out / total if total > 0 else out


@attrs.frozen
class ThresholdRun:
    """Consecutive terms of threshold hypotheses with per-cell contributions, as flat arrays
    (see :mod:`boostkit.kernels.predict`); ``terms`` keeps the ``(h, c)`` pairs."""

    terms: tuple = attrs.field(eq=False)
    features: np.ndarray = attrs.field(eq=False)
    thresholds: np.ndarray = attrs.field(eq=False)
    missing_left: np.ndarray = attrs.field(eq=False)
    values: np.ndarray = attrs.field(eq=False)

    def add_to(self, X: np.ndarray, margin: np.ndarray) -> None:
        """Add the run's terms to ``margin`` in place, row by row, in term order."""
        if margin.ndim == 2:
            threshold_margin_columns(X, self.features, self.thresholds, self.missing_left,
                                     self.values, margin)
            return
        n_threads = numba.get_num_threads()
        if n_threads > 1 and X.shape[0] * self.features.shape[0] >= PARALLEL_PREDICTION:
            threshold_margins_parallel(X, self.features, self.thresholds, self.missing_left,
                                       self.values, margin, n_threads)
        else:
            threshold_margins(X, self.features, self.thresholds, self.missing_left, self.values,
                              margin)


#: Rows x terms of a threshold run above which it is evaluated on numba's threads.
PARALLEL_PREDICTION = 1 << 22


def compile_terms(hypotheses, contributions, n_columns: int) -> list:
    """The terms as a list of :class:`ThresholdRun` (runs of at least two compilable terms) and
    single ``(h, c)`` pairs, in order."""
    out, pending = [], []

    def flush():
        if len(pending) >= 2:
            split = [h.threshold_split() for h, _, _ in pending]
            out.append(ThresholdRun(
                terms=tuple((h, c) for h, c, _ in pending),
                features=np.array([f for f, _, _ in split], dtype=np.int64),
                thresholds=np.array([t for _, t, _ in split], dtype=np.float64),
                missing_left=np.array([m for _, _, m in split], dtype=np.bool_),
                values=np.ascontiguousarray(np.stack([table for _, _, table in pending]),
                                            dtype=np.float64),
            ))
        else:
            out.extend((h, c) for h, c, _ in pending)
        pending.clear()

    shape = (2,) if n_columns == 1 else (2, n_columns)
    for h, c in zip(hypotheses, contributions):
        table = c.cell_table(h) if h.threshold_split() is not None else None
        if table is not None and np.shape(table) == shape and np.asarray(table).dtype == np.float64:
            pending.append((h, c, table))
        else:
            flush()
            out.append((h, c))
    flush()
    return out


def _logistic_2f(margin: np.ndarray) -> np.ndarray:
    # P(y=+1|x) = 1 / (1 + exp(-2F)) = (1 + tanh F) / 2: the exponential loss's population
    # minimiser is half the log-odds (Friedman, Hastie & Tibshirani 2000); tanh never overflows.
    return 0.5 * (1.0 + np.tanh(margin))


_TINY = np.finfo(np.float64).tiny


def margin_probabilities(margin: np.ndarray, multilabel: bool = False) -> np.ndarray:
    """Class probabilities from margins F, as every boostkit model predicts them.

    One column: ``(n, 2)``, p = 1 / (1 + e^{-2F}) for ``classes[1]``. Several columns, each
    F_l being half the log-odds of label l against the rest (the population minimiser of the
    exponential loss over pairs, Friedman, Hastie & Tibshirani 2000): multi-label data get the
    ``(n, C)`` marginals sigma(2 F_l) (kept strictly inside (0, 1)); single-label data get them normalised over the classes,
    so rows sum to 1 and the argmax is the argmax of F (computed in log space: no 0/0).
    """
    if margin.ndim == 1:
        p = _logistic_2f(margin)
        return np.column_stack((1.0 - p, p))
    log_p = -np.logaddexp(0.0, -2.0 * margin)  # log sigma(2F): positive down to F ~ -372
    if multilabel:
        # A finite margin never makes a label certain: marginals stay strictly inside (0, 1).
        return np.clip(np.exp(log_p), _TINY, 1.0 - np.finfo(np.float64).epsneg)
    log_p -= log_p.max(axis=1, keepdims=True)
    p = np.exp(log_p)
    return p / p.sum(axis=1, keepdims=True)


def margin_labels(margin: np.ndarray, classes: np.ndarray, multilabel: bool = False) -> np.ndarray:
    """Predicted labels from margins: ``classes[1]`` where F > 0 (one column), the 0/1 indicator
    matrix F > 0 (multi-label), or the class of the largest margin (ties, within
    :data:`boostkit.splits.TIE_TOLERANCE` of the row's largest magnitude: the first class)."""
    if margin.ndim == 1:
        return classes[(margin > 0).astype(np.intp)]
    if multilabel:
        return (margin > 0).astype(np.intp)
    # Margins equal but for rounding (relative to the row's largest magnitude) are tied: the
    # order of the sums must not pick the class.
    top = margin.max(axis=1, keepdims=True)
    scale = np.abs(margin).max(axis=1, keepdims=True)
    return classes[np.argmax(margin >= top - TIE_TOLERANCE * scale, axis=1)]


def _margin_columns(classes: np.ndarray, multilabel: bool) -> int:
    return 1 if classes.shape[0] == 2 and not multilabel else classes.shape[0]


@attrs.frozen
class BoostModel:
    """A fitted additive model F_T(x) = sum_t c_t(x).

    Attributes
    ----------
    classes:
        The original label values. With two classes the margin has one column and
        ``classes[1]`` is the positive class (F > 0); with C >= 3 classes, or C labels of a
        multi-label indicator matrix (``classes`` = 0..C-1), F has C columns, one per class.
    n_features:
        Number of features the model was fitted on.
    hypotheses, contributions:
        The weak hypothesis h_t and contribution c_t of every round.
    records:
        One :class:`boostkit.RoundRecord` per round. A round that back-fits an earlier term
        (``Calibrated.replaces``) has a record but replaces that term, so there can be more
        records than terms.
    recipe:
        The recipe (components and parameters) that produced the model.
    stop_reason:
        Why the run ended (``"max-rounds"``, ``"no-edge"``, ``"pool-exhausted"``, ...).
    best_round:
        The number of leading terms ``decision_function``, ``predict`` and ``predict_proba`` use,
        as named by a stopping rule (validation-based early stopping keeps the round of lowest
        validation loss), or ``None``: every term. ``staged_*`` always go over every term; to
        predict with all of them, use ``attrs.evolve(model, best_round=None)``.
    multilabel:
        Whether the model was fitted on a multi-label indicator matrix.
    features:
        The :class:`boostkit.FeatureSchema` of the training ``X`` (column names, categorical
        columns and their categories), applied to every ``X`` the model predicts on; ``None``
        for unnamed, all-numeric data.
    """

    classes: np.ndarray = attrs.field(eq=False)
    n_features: int
    hypotheses: tuple[WeakHypothesis, ...]
    contributions: tuple[Contribution, ...]
    records: tuple[RoundRecord, ...]
    recipe: Recipe
    stop_reason: str
    best_round: int | None = attrs.field(default=None)
    multilabel: bool = attrs.field(default=False, converter=bool)
    features: FeatureSchema | None = attrs.field(default=None, eq=False)
    # The terms flattened for compiled evaluation, by number of terms used (built on first use).
    _runs: dict = attrs.field(init=False, factory=dict, eq=False, repr=False)

    @best_round.validator
    def _check_best_round(self, attribute, value):
        if value is None:
            return
        if (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                or not 1 <= value <= len(self.hypotheses)):
            raise ValueError(
                f"best_round must be None or a round in 1..{len(self.hypotheses)}, got {value!r}"
            )

    @property
    def n_rounds(self) -> int:
        """The number of terms (h_t, c_t) of the model."""
        return len(self.hypotheses)

    @property
    def n_columns(self) -> int:
        """C, the number of margin columns: 1 for two classes."""
        return _margin_columns(self.classes, self.multilabel)

    @property
    def multiclass_strategy(self) -> str:
        """``"binary"`` (one margin column) or ``"native"`` (the recipe ran on C columns)."""
        return "binary" if self.n_columns == 1 else "native"

    @property
    def feature_names(self) -> tuple[str, ...] | None:
        """The training columns' names, or ``None`` when ``X`` came without names."""
        return None if self.features is None else self.features.names

    def feature_importances(self) -> np.ndarray:
        """``(n_features,)`` importances, non-negative and summing to 1 (all 0 when no term
        reads a column, e.g. a model of constant rounds).

        Round t adds |alpha_t| x |edge_t| to the columns its hypothesis reads (its
        :func:`boostkit.feature_field` fields), shared equally among them: alpha_t the norm of
        the round's recorded coefficients, edge_t = 1/2 - eps_t its weighted edge. This is
        Freund & Schapire's weight of a weak hypothesis times how much better than chance it
        was, so it applies to every recipe; for C > 1 columns eps_t is the error over
        (example, class) pairs. Back-fitted terms count with their latest round.
        """
        return term_importances(self.hypotheses, self.records, self.n_features)

    # -- prediction ---------------------------------------------------------------------------
    def _check(self, X):
        # Without a schema (fitted on an array) a table is still checked: its names are unread.
        X = (self.features or FeatureSchema(self.n_features)).transform(X)
        # Sparse X stays sparse: whether a hypothesis can read it is the hypothesis' business.
        try:
            return check_features(X, n_features=self.n_features, accept_sparse=True,
                                  features=self.features)
        except DataError:
            # NaN is a missing value for a model whose proposal declares it reads them; the
            # recipe is consulted only on this path, so clean input pays nothing for it.
            if not self._reads_missing_values():
                raise
            return check_features(X, n_features=self.n_features, accept_sparse=True,
                                  allow_missing=True, features=self.features)

    def _reads_missing_values(self) -> bool:
        from .plugins import get_registry

        return handles_missing_values(get_registry().instantiate(self.recipe))

    def _zeros(self, X) -> np.ndarray:
        n_columns = self.n_columns
        return np.zeros(X.shape[0] if n_columns == 1 else (X.shape[0], n_columns))

    def staged_decision_function(self, X) -> Iterator[np.ndarray]:
        """Yield F_t(x) after each round t = 1..T (a new array each time)."""
        X = self._check(X)
        margin = self._zeros(X)
        for h, c in zip(self.hypotheses, self.contributions):
            margin = margin + c.values(Candidate(h, X), margin)
            yield margin

    def decision_function(self, X) -> np.ndarray:
        """F(x) after ``best_round`` terms, or all T: ``(n,)``, positive meaning ``classes[1]``,
        or ``(n, C)``, one column per class.

        Runs of threshold terms (``WeakHypothesis.threshold_split`` with a
        ``Contribution.cell_table``, e.g. stumps under ``constant-alpha`` or
        ``domain-partition``) are evaluated in one compiled pass over the rows
        (:mod:`boostkit.kernels.predict`); every other term by its ``values``. Either way the
        terms are added in order, and the margins are the same bits.
        """
        X = self._check(X)
        margin = self._zeros(X)
        dense = not is_sparse(X)
        for run in self.compiled_terms(self.best_round):
            if isinstance(run, ThresholdRun) and dense:
                run.add_to(X, margin)
                continue
            for h, c in (run.terms if isinstance(run, ThresholdRun) else (run,)):
                margin += c.values(Candidate(h, X), margin)
        return margin

    def compiled_terms(self, n_terms: int | None = None) -> list:
        """The first ``n_terms`` terms (default: all) as :func:`compile_terms` groups them
        for compiled evaluation, built on first use and kept."""
        n_terms = len(self.hypotheses) if n_terms is None else n_terms
        runs = self._runs.get(n_terms)
        if runs is None:
            runs = self._runs.setdefault(n_terms, compile_terms(
                self.hypotheses[:n_terms], self.contributions[:n_terms], self.n_columns))
        return runs

    def predict(self, X) -> np.ndarray:
        """The labels of :func:`margin_labels`: ``classes[1]`` where F(x) > 0 (two classes), the
        class of the largest margin, or the 0/1 indicator matrix F > 0 (multi-label)."""
        return margin_labels(self.decision_function(X), self.classes, self.multilabel)

    def staged_predict(self, X) -> Iterator[np.ndarray]:
        for margin in self.staged_decision_function(X):
            yield margin_labels(margin, self.classes, self.multilabel)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (:func:`margin_probabilities`): ``(n, 2)`` with p = 1 / (1 +
        e^{-2F}) for ``classes[1]``; ``(n, C)`` rows summing to 1, or per-label marginals."""
        return margin_probabilities(self.decision_function(X), self.multilabel)

    def staged_predict_proba(self, X) -> Iterator[np.ndarray]:
        for margin in self.staged_decision_function(X):
            yield margin_probabilities(margin, self.multilabel)

    @property
    def error_bound(self) -> float | None:
        """prod_t Z_t after the last round (bounds the training error), if recorded."""
        return self.records[-1].error_bound if self.records else None

    # -- persistence --------------------------------------------------------------------------
    def _structure(self, arrays: dict[str, np.ndarray], prefix: str = "",
                   pickler: _Pickler | None = None) -> dict:
        """The JSON structure of this model; its arrays go into ``arrays`` under ``prefix``, and
        foreign objects to ``pickler`` (refused when ``None``)."""
        classes = np.asarray(self.classes)
        if classes.dtype == object:
            if not all(isinstance(c, str) for c in classes):
                raise ModelFormatError(
                    "cannot save a model whose class labels are not numbers or strings: "
                    f"{classes.tolist()!r}"
                )
            classes = classes.astype(str)
        arrays[f"{prefix}classes"] = classes
        rounds = [
            {
                "hypothesis": _component_state(h, arrays, f"{prefix}r{t}.h", pickler),
                "contribution": _component_state(c, arrays, f"{prefix}r{t}.c", pickler),
            }
            for t, (h, c) in enumerate(zip(self.hypotheses, self.contributions))
        ]
        return {
            "kind": "boost",
            "n_features": int(self.n_features),
            "multilabel": self.multilabel,
            "margin_columns": self.n_columns,
            "recipe": _recipe_state(self.recipe, pickler),
            "stop_reason": self.stop_reason,
            "best_round": self.best_round,
            "rounds": rounds,
            "records": [_record_state(r, pickler) for r in self.records],
            "features": (None if self.features is None
                         else self.features.to_state(arrays, f"{prefix}features.")),
        }

    def save(self, path: str | os.PathLike, allow_pickle: bool = False) -> Path:
        """Write the model to ``path`` (an ``.npz`` archive), atomically.

        The file is first written beside the target and renamed over it, so a failed save never
        leaves a corrupt or half-written model behind.

        A value that is neither JSON nor a numeric or string array (a fitted scikit-learn
        estimator, an estimator object among the recipe's parameters) raises a
        :class:`boostkit.ModelFormatError` naming the component and the field, unless
        ``allow_pickle=True``: it is then pickled into the file.

        .. warning:: A file saved with ``allow_pickle=True`` holds pickles, and unpickling runs
           arbitrary code: it loads only with ``boostkit.load_model(path, allow_pickle=True)``,
           which you should only do with files you trust.
        """
        return write_model_file(path, *self._file_contents(allow_pickle))

    def _file_contents(self, allow_pickle: bool = False) -> tuple[dict, dict[str, np.ndarray]]:
        """The JSON structure and the arrays :meth:`save` writes."""
        arrays: dict[str, np.ndarray] = {}
        pickler = _Pickler(arrays, allow_pickle)
        structure = self._structure(arrays, pickler=pickler)
        return _with_pickled(structure, pickler), arrays

    @classmethod
    def _from_structure(cls, structure: Mapping, arrays: Mapping, version: int, path,
                        prefix: str = "") -> BoostModel:
        from .plugins import get_registry

        registry = get_registry()
        try:
            _check_layout(structure)
            if structure.get("kind", "boost") != "boost":
                raise ModelFormatError(f"a model of kind {structure['kind']!r} where a boosted "
                                       "model ('boost') belongs")
            made = _check_records(structure["records"])
            hypotheses = tuple(
                _component_from_state(r["hypothesis"], arrays, registry, "hypothesis")
                for r in structure["rounds"]
            )
            contributions = tuple(
                _component_from_state(r["contribution"], arrays, registry, "contribution")
                for r in structure["rounds"]
            )
            records = tuple(
                RoundRecord(**{**r, "coefficients": tuple(r["coefficients"])})
                for r in structure["records"]
            )
            _check_terms(hypotheses, made, len(records))
            multilabel = _saved_flag(structure, "multilabel", version, since=3)
            classes = _saved_classes(arrays, f"{prefix}classes", multilabel)
            columns = structure.get("margin_columns", 1)  # absent before version 3
            if version >= 3 and "margin_columns" not in structure:
                raise ModelFormatError("'margin_columns' is missing")
            if isinstance(columns, bool) or not isinstance(columns, int):
                raise ModelFormatError(f"'margin_columns' must be an integer, got {columns!r}")
            if columns != _margin_columns(classes, multilabel):
                raise ModelFormatError(
                    f"{path}: {columns} margin columns do not match {classes.shape[0]} "
                    f"{'labels' if multilabel else 'classes'}"
                )
            n_features = structure["n_features"]
            if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 1:
                raise ModelFormatError(f"{path}: invalid n_features {n_features!r}")
            for t, (h, c) in enumerate(zip(hypotheses, contributions), 1):
                _check_features(h, n_features, f"{path}: round {t}")
                _check_features(c, n_features, f"{path}: round {t}")
            stop_reason = structure["stop_reason"]
            if not isinstance(stop_reason, str):
                raise ModelFormatError(f"'stop_reason' must be a string, got {stop_reason!r}")
            if version >= 4 and "features" not in structure:
                raise ModelFormatError("'features' is missing (null for unnamed numeric data)")
            model = cls(
                classes=classes,
                n_features=n_features,
                hypotheses=hypotheses,
                contributions=contributions,
                records=records,
                recipe=_saved_recipe(structure["recipe"], registry),
                stop_reason=stop_reason,
                best_round=_saved_best_round(structure, version, len(hypotheses), path),
                multilabel=multilabel,
                features=_saved_features(structure, arrays, n_features),
            )
        except ModelFormatError as exc:
            if str(path) in str(exc):
                raise
            raise ModelFormatError(f"{path}: {exc}") from exc
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError,
                OverflowError) as exc:
            raise ModelFormatError(f"{path}: the model structure is incomplete or corrupt: {exc!r}") from exc
        _probe(model, path)
        return model

    @classmethod
    def load(cls, path: str | os.PathLike, allow_pickle: bool = False) -> BoostModel:
        """Read a model written by :meth:`save`; fails clearly on bad files.

        A file written by ``OneVsRestModel.save`` loads as a
        :class:`boostkit.multiclass.OneVsRestModel`, so ``boostkit.load_model`` reads both.

        Never unpickles unless ``allow_pickle=True``: a file saved with ``allow_pickle=True``
        is refused (a :class:`boostkit.ModelFormatError`) before anything is unpickled.

        The file is untrusted input. A :class:`boostkit.ModelFormatError` naming the file and
        the field refuses whatever no fitted model has:

        * memory: the arrays read may unpack to no more bytes than the file's own size, each
          and all together (boostkit writes them uncompressed, so its files always fit), and an
          ``.npy`` header may not declare more data than its entry holds; only the arrays of
          the entries ``save`` writes are read, and an unknown entry naming one is refused
          before any is read. The arrays thus take at most the file's size (about three
          times that while one is read), and the parsed JSON at most about twenty times its
          own size (a file of nothing but empty JSON lists);
        * classes distinct, in increasing order (as a fit sorts them) and never NaN; for
          multi-label data (``multilabel: true``) the column indices 0..C-1; ``multilabel``
          a JSON boolean; ``margin_columns`` an integer matching the classes;
        * round records numbered 1, 2, ... in order, with numbers and strings where
          :class:`boostkit.RoundRecord` has them, each adding a term or back-fitting an earlier
          one; the terms are the ones they add (or a model derived from them: an offset term
          ahead of them, or one term folding them all);
        * components rebuilt with exactly the file's values, columns in range, the recipe's
          components installed, and the model evaluated once on rows of zeros;
        * the feature schema (:meth:`boostkit.FeatureSchema.from_state`), one shared by every
          class model of a one-vs-rest model.

        These checks refuse content no fit gives; they do not authenticate a file. A model
        whose labels were replaced by other valid labels, or whose classes are 0..C-1 and whose
        ``multilabel`` flag was flipped, is a model some fit could give, and loads as written.

        .. warning:: ``allow_pickle=True`` unpickles the file's objects, and unpickling runs
           arbitrary code: only pass it for files you trust.
        """
        structure, arrays, version = read_model_file(path, allow_pickle)
        kind = structure.get("kind", "boost")
        if kind == "one-vs-rest":
            from .multiclass import OneVsRestModel

            return OneVsRestModel._from_structure(structure, arrays, version, path)
        if kind != "boost":
            raise ModelFormatError(f"{path}: unknown model kind {kind!r}")
        return cls._from_structure(structure, arrays, version, path)


def _check_layout(structure: Mapping) -> None:
    """The JSON has the shape ``save`` writes: lists of rounds and records, a dict per component
    with dict params, arrays and children."""
    rounds, records = structure["rounds"], structure["records"]
    if not isinstance(rounds, list) or not isinstance(records, list):
        raise ModelFormatError("'rounds' and 'records' must be lists")
    for t, term in enumerate(rounds, 1):
        if not isinstance(term, dict):
            raise ModelFormatError(f"round {t} is not an object")
        for part in ("hypothesis", "contribution"):
            _check_component_layout(term.get(part), f"round {t} {part}")
    if not all(isinstance(r, dict) for r in records):
        raise ModelFormatError("every round record must be an object")


def _check_component_layout(state, where: str, depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        raise ModelFormatError(f"{where} nests value components more than {_MAX_DEPTH} deep")
    if not isinstance(state, dict) or not isinstance(state.get("component"), str):
        raise ModelFormatError(f"{where} is not a component")
    for key in ("params", "arrays", "children"):
        if not isinstance(state.get(key, {}), dict):
            raise ModelFormatError(f"{where}: {key!r} must be an object")
    for name, child in state.get("children", {}).items():
        _check_component_layout(child, f"{where}, field {name!r}", depth + 1)


def _probe(model: BoostModel, path) -> None:
    """Evaluate the loaded model once on two rows of zeros: a term whose parts do not fit
    together (a direction of the wrong length, a tree whose children point nowhere) fails here,
    named, instead of at the user's first prediction."""
    try:
        # Warnings would be about the zeros (read by position, unseen categories), not the file.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            margin = model.decision_function(np.zeros((2, model.n_features)))
    except Exception as exc:
        raise ModelFormatError(
            f"{path}: the model does not evaluate: {type(exc).__name__}: {exc}"
        ) from exc
    if not np.isfinite(margin).all():
        raise ModelFormatError(f"{path}: the model evaluates to NaN or infinite margins")


def _saved_flag(structure: Mapping, name: str, version: int, since: int) -> bool:
    """The JSON boolean ``structure[name]``, written by ``save`` from format version ``since``
    on (``False`` in older files): "yes" or 1 is no flag any model has."""
    if name not in structure and version < since:
        return False
    if name not in structure:
        raise ModelFormatError(f"{name!r} is missing")
    value = structure[name]
    if not isinstance(value, bool):
        raise ModelFormatError(f"{name!r} must be true or false, got {value!r}")
    return value


def _saved_classes(arrays: Mapping, key: str, multilabel: bool) -> np.ndarray:
    """The class labels ``arrays[key]`` as a fit leaves them: distinct, sorted (the labels of
    ``np.unique``; so ``classes[1]`` is the positive class of one margin column), never NaN,
    and for multi-label data the column indices 0..C-1."""
    classes = arrays[key]
    if classes.ndim != 1 or classes.shape[0] < 2:
        raise ModelFormatError(f"classes of shape {classes.shape}: expected at least two labels "
                               "in one dimension")
    if classes.dtype.kind not in "biufUS":
        raise ModelFormatError(f"classes of {classes.dtype}: expected numbers, booleans or text")
    shown = reprlib.repr(classes.tolist())
    if classes.dtype.kind == "f" and np.isnan(classes).any():
        raise ModelFormatError(f"classes {shown} hold NaN, which is no label")
    if np.unique(classes).shape[0] != classes.shape[0]:
        raise ModelFormatError(f"classes {shown} repeat a label")
    if not (classes[1:] > classes[:-1]).all():
        raise ModelFormatError(f"classes {shown} are not in increasing order, as a fit sorts them")
    if multilabel and not (classes.dtype.kind in "iu"
                           and np.array_equal(classes, np.arange(classes.shape[0]))):
        raise ModelFormatError(
            f"a multi-label model's classes must be the column indices "
            f"0..{classes.shape[0] - 1}, got {shown}"
        )
    return classes


#: The fields of a saved :class:`boostkit.RoundRecord`, and those every record has.
_RECORD_FIELDS = frozenset(a.name for a in attrs.fields(RoundRecord))
_RECORD_REQUIRED = frozenset(a.name for a in attrs.fields(RoundRecord)
                             if a.default is attrs.NOTHING)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_records(records: list) -> int:
    """The number of terms the round records add, checking that they are numbered 1, 2, ...
    in order, each adding a term or back-fitting one made before it (``extra["replaces"]``),
    with numbers where :class:`boostkit.RoundRecord` has them."""
    made = 0
    for t, record in enumerate(records, 1):
        if not _RECORD_REQUIRED <= set(record) <= _RECORD_FIELDS:
            raise ModelFormatError(f"record {t} has the fields {sorted(record)}, expected "
                                   f"{sorted(_RECORD_FIELDS)}")
        number = record["round"]
        if isinstance(number, bool) or not isinstance(number, int) or number != t:
            raise ModelFormatError(f"record {t} is numbered {record['round']!r}")
        for name, value in record.items():
            where = f"record {t}, field {name!r}: {reprlib.repr(value)}"
            if name in ("weighted_error", "edge", "training_error") and not _is_number(value):
                raise ModelFormatError(f"{where} is not a number")
            if name in ("z", "error_bound") and value is not None and not _is_number(value):
                raise ModelFormatError(f"{where} is not a number or null")
            if name == "coefficients" and not (isinstance(value, list)
                                               and all(_is_number(v) for v in value)):
                raise ModelFormatError(f"{where} is not a list of numbers")
            if (name == "hypothesis" and not isinstance(value, str)) or (
                    name == "stop_reason" and value is not None and not isinstance(value, str)):
                raise ModelFormatError(f"{where} is not a string")
            if name == "extra" and not isinstance(value, dict):
                raise ModelFormatError(f"{where} is not an object")
        extra = record.get("extra", {})
        replaced = extra.get("replaces")
        if "replaces" not in extra:
            made += 1
        elif (isinstance(replaced, bool) or not isinstance(replaced, int)
              or not 0 <= replaced < made):
            raise ModelFormatError(f"record {t} replaces term {replaced!r}, but the model has "
                                   f"{made} terms at that round")
    return made


def _check_terms(hypotheses, made: int, n_records: int) -> None:
    """The terms are those the records add (``made``), as a fit leaves them, or a model derived
    from one: the same after an offset term that reads no column
    (``boostkit_pnspace.to_adaboost_form``), or a single term folding them all
    (``boostkit_onepass.collapse``). Anything else (no term beside ten records, a round left
    out) is no model."""
    n_terms = len(hypotheses)
    if n_terms == made or n_terms == 1 or (
            n_terms == made + 1 and _feature_columns(hypotheses[0]).size == 0):
        return
    raise ModelFormatError(f"{n_terms} terms but {n_records} records (which add {made} terms): "
                           "the rounds and the records do not match")


def _saved_recipe(state, registry) -> Recipe:
    """The model's recipe, whose components must be installed for their roles as they were
    for the fit (prediction asks them whether the model reads missing values)."""
    for field in ("name", "paper", "description"):
        if not isinstance(state.get(field, ""), str):
            raise ModelFormatError(f"the recipe's {field} must be a string, got "
                                   f"{reprlib.repr(state[field])}")
    recipe = Recipe.from_json(state)
    try:
        registry.check_recipe(recipe)
    except RecipeError as exc:
        raise ModelFormatError(
            f"the model's {exc}; install the plugin that fitted the model") from None
    return recipe


def _check_shared_schema(models) -> None:
    """The class models of one-vs-rest were fitted on the same ``X``, so they share one feature
    schema; each reads ``X`` through its own, and one that differed would read another column,
    or another category, for its class alone."""
    def state(schema):
        arrays: dict[str, np.ndarray] = {}
        return (None if schema is None else schema.to_state(arrays, "")), arrays

    first, first_arrays = state(models[0].features)
    for l, model in enumerate(models[1:], 1):
        other, other_arrays = state(model.features)
        if other != first or other_arrays.keys() != first_arrays.keys() or not all(
                a.dtype == other_arrays[k].dtype and np.array_equal(a, other_arrays[k])
                for k, a in first_arrays.items()):
            raise ModelFormatError(f"the feature schema of class {l}'s model differs from class "
                                   "0's; one-vs-rest fits every class on the same X")


def _saved_features(structure: Mapping, arrays: Mapping, n_features: int) -> FeatureSchema | None:
    state = structure.get("features")  # absent before version 4
    return None if state is None else FeatureSchema.from_state(state, arrays, n_features)


def _saved_best_round(structure: Mapping, version: int, n_terms: int, path) -> int | None:
    if version < 2:  # version 1 files predate best rounds
        return None
    value = structure["best_round"]
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or not 1 <= value <= n_terms):
        raise ModelFormatError(
            f"{path}: invalid best round {value!r}, expected null or a round in 1..{n_terms}"
        )
    return value

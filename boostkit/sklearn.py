"""scikit-learn estimators (needs the ``sklearn`` extra: ``pip install boostkit[sklearn]``).

:class:`BoostClassifier` wraps :class:`boostkit.Booster`. It passes
``sklearn.utils.estimator_checks.check_estimator``, so pipelines, grid search and cross-validation
work. Component parameters are nested estimator parameters named ``<slot>__<param>``, where the
slot is ``proposal``, ``calibration``, ``reweighting``, or a wrapper/stopping rule's name with
``-`` replaced by ``_``::

    BoostClassifier("adaboost", n_rounds=200).set_params(calibration__smoothing=0.0)
    GridSearchCV(BoostClassifier(), {"calibration__smoothing": [0.0, 1e-3], "n_rounds": [50, 200]})

:class:`AdaBoostClassifier` and :class:`AdaBoostRegressor` are drop-in replacements for
scikit-learn's estimators of the same names (same signature, defaults, attributes and results),
fitted by boostkit's native learners (docs/dropin.md).
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from .capabilities import handles_missing_values
from .data import MAX_BINS
from .engine import Booster
from .errors import DataWarning
from .features import is_table
from .plugins import get_registry
from .sklearn_dropin import AdaBoostClassifier, AdaBoostRegressor

__all__ = ["AdaBoostClassifier", "AdaBoostRegressor", "BoostClassifier"]


class BoostClassifier(ClassifierMixin, BaseEstimator):
    """A boosting classifier, any registered algorithm: two classes, several, or multi-label.

    With three or more classes, or a multi-label 0/1 indicator matrix ``y``, a recipe that
    handles several margin columns (``adaboost-mh``, ``discrete-adaboost-mh``, ``samme``,
    ``real-adaboost``) runs natively on the (example, class) pairs, and any other recipe runs as
    one-vs-rest (one binary model per class); ``multiclass_strategy_`` records which.

    Parameters
    ----------
    algorithm:
        Registered algorithm name (``boostkit plugins`` lists them), e.g. ``"adaboost"``,
        ``"real-adaboost"``, or a :class:`boostkit.Recipe`.
    n_rounds:
        Round budget T.
    component_params:
        ``{slot: {param: value}}`` overrides of the recipe's component parameters; also settable
        one by one as ``slot__param`` through :meth:`set_params`.
    max_bins:
        Quantile bins per feature (2..255).
    n_jobs:
        Threads for the kernels (-1: all cores).
    random_state:
        Seed; the same seed and ``n_jobs`` give the same model, bit for bit (across thread
        counts, to rounding: see :class:`boostkit.Booster`).
    callbacks:
        Functions ``fn(state, record)`` called after every round (``boostkit.Booster``).
    verbose:
        0: silent; k > 0: one line every k rounds and on the last round, on standard output.

    Attributes
    ----------
    model_:
        The fitted :class:`boostkit.BoostModel`, or :class:`boostkit.multiclass.OneVsRestModel`
        (save either with ``model_.save(path)``).
    classes_:
        The class labels (two: ``classes_[1]`` is predicted where the decision function is > 0;
        the column indices 0..C-1 for multi-label ``y``).
    multiclass_strategy_:
        ``"binary"``, ``"native"`` (the recipe ran on the pairs) or ``"one-vs-rest"``.
    records_:
        One :class:`boostkit.RoundRecord` per round (weighted error, edge, Z_t, bound, ...); for
        one-vs-rest, a tuple of each class model's records.
    stop_reason_:
        Why boosting stopped.
    best_round_:
        The round ``predict`` uses, named by a stopping rule such as validation-based early
        stopping (``stopping``/recipe ``validation``), or ``None``: the last round.
    n_features_in_, feature_names_in_:
        As in scikit-learn. A DataFrame ``X`` keeps its column names in the model too
        (``model_.features``), for records, descriptions and plots.
    feature_importances_:
        ``(n_features,)`` normalised importances (:meth:`boostkit.BoostModel.feature_importances`:
        each round's |coefficient| x |edge| shared among the columns it reads; averaged over the
        class models of one-vs-rest).

    ``X`` may be a DataFrame with categorical (``category``, string) columns and missing values
    (NaN, None), read natively by recipes whose weak learner handles them (stumps and trees);
    ``categorical_features`` is as in :class:`boostkit.Booster`.
    """

    def __init__(
        self,
        algorithm="adaboost",
        n_rounds=100,
        *,
        component_params=None,
        max_bins=MAX_BINS,
        n_jobs=1,
        random_state=None,
        callbacks=None,
        verbose=0,
        categorical_features="from_dtype",
    ):
        self.algorithm = algorithm
        self.n_rounds = n_rounds
        self.component_params = component_params
        self.max_bins = max_bins
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.callbacks = callbacks
        self.verbose = verbose
        self.categorical_features = categorical_features

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.classifier_tags.multi_label = True
        tags.input_tags.allow_nan = self._reads_missing_values()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    def _reads_missing_values(self) -> bool:
        try:
            recipe = Booster(self.algorithm, params=self.component_params or {}).recipe()
            return handles_missing_values(get_registry().instantiate(recipe))
        except Exception:  # a bad algorithm is reported by fit, not by the tags
            return False

    def _check_input(self, X, y="no_validation", *, reset: bool, categorical: bool = False):
        """``X`` (and ``y``) checked the scikit-learn way (feature count and names); a table
        (DataFrame, pyarrow, polars: :func:`boostkit.features.is_table`) is passed on as it is,
        so that the model keeps its names and categorical columns. So is any ``X`` of a model
        with ``categorical`` columns: boostkit's feature layer matches its values as the
        :class:`boostkit.Booster` does, where scikit-learn's check would turn the text ``'1'``
        of an object array into 1.0, a category index there."""
        tabular = is_table(X) or categorical or self.categorical_features not in (
            None, "from_dtype")
        kwargs = {"skip_check_array": True} if tabular else {
            "ensure_all_finite": "allow-nan" if self._reads_missing_values() else True}
        no_y = isinstance(y, str) and y == "no_validation"
        checked = (validate_data(self, X, reset=reset, **kwargs) if no_y else
                   validate_data(self, X, y, reset=reset, multi_output=True, **kwargs))
        if tabular:
            # What check_array would have refused before anything reads the rows (an empty y's
            # classes, say).
            if _num_samples(X) == 0:
                raise ValueError(f"X is empty: got 0 samples ({type(self).__name__} needs at "
                                 "least one)")
            if not no_y:
                check_consistent_length(X, y)
        return checked

    @property
    def feature_importances_(self) -> np.ndarray:
        check_is_fitted(self)
        return self.model_.feature_importances()

    # -- nested component parameters ------------------------------------------------------------
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        params = super().get_params(deep=False)
        if deep and isinstance(self.component_params, dict):
            for slot, values in self.component_params.items():
                if isinstance(values, dict):
                    for key, value in values.items():
                        params[f"{slot}__{key}"] = value
        return params

    def set_params(self, **params):
        nested = {k: v for k, v in params.items() if "__" in k}
        top = {k: v for k, v in params.items() if "__" not in k}
        if top:
            super().set_params(**top)
        if nested:
            current = self.component_params if isinstance(self.component_params, dict) else {}
            updated = {slot: dict(values) for slot, values in current.items()}
            for key, value in nested.items():
                slot, param = key.split("__", 1)
                updated.setdefault(slot, {})[param] = value
            self.component_params = updated
        return self

    # -- fitting --------------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None, *, eval_set=None):
        """Fit on ``X`` (n_samples, n_features) and labels ``y``: 1-D with two or more classes,
        or an (n_samples, C) 0/1 indicator matrix of C labels.

        ``eval_set``, ``(X_val, y_val)`` or ``(X_val, y_val, sample_weight_val)``, is the
        validation data of validation-based early stopping (the ``validation`` stopping rule
        holds out part of ``X`` without it) and is scored every round (``records_[t].extra``).
        A failed fit leaves the estimator as it was: unfitted, or fitted as before.
        """
        # validate_data records n_features_in_ / feature_names_in_ before anything can fail.
        input_attrs = ("n_features_in_", "feature_names_in_")
        before = {k: self.__dict__[k] for k in input_attrs if k in self.__dict__}
        try:
            return self._fit(X, y, sample_weight, eval_set)
        except BaseException:
            for key in input_attrs:
                self.__dict__.pop(key, None)
            self.__dict__.update(before)
            raise

    def _fit(self, X, y, sample_weight, eval_set):
        X, y = self._check_input(X, y, reset=True)
        y = np.asarray(y)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type not in ("binary", "multiclass", "multilabel-indicator"):
            raise ValueError(
                "Only binary, multiclass and multilabel-indicator targets are supported. "
                f"The type of the target is {y_type}."
            )
        if y_type != "multilabel-indicator":
            y = column_or_1d(y, warn=True)  # a column vector: DataConversionWarning, as usual
            classes = np.unique(y)
            if classes.shape[0] < 2:
                raise ValueError(
                    f"{type(self).__name__} needs at least two classes, but y has only one "
                    f"class ({classes[0]!r})"
                )
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, copy=True, ensure_non_negative=True
        )
        booster = self._booster(Booster, multiclass="auto")
        if isinstance(eval_set, (tuple, list)) and len(eval_set) in (2, 3):
            # Validation features are checked like those of predict (count, names) and read as
            # the training X is.
            eval_set = (self._check_input(eval_set[0], reset=False, categorical=is_table(X)),
                        *eval_set[1:])
        return self._set_fitted(booster.fit(X, y, sample_weight, eval_set=eval_set))

    def _booster(self, booster_class, **kwargs):
        """The booster (``booster_class``: :class:`boostkit.Booster` or a subclass) of this
        estimator's parameters."""
        component_params = self.component_params
        if component_params is not None and not isinstance(component_params, dict):
            raise ValueError(
                "component_params must be a dict {slot: {param: value}} or None, got "
                f"{type(component_params).__name__}"
            )
        return booster_class(
            algorithm=self.algorithm,
            n_rounds=self.n_rounds,
            params=component_params or {},
            max_bins=self.max_bins,
            n_jobs=self.n_jobs,
            random_state=self.random_state,
            callbacks=self.callbacks or (),
            verbose=self.verbose,
            categorical_features=self.categorical_features,
            **kwargs,
        )

    def _set_fitted(self, model):
        """Set the fitted attributes from ``model``, once the fit has succeeded: never
        half-fitted."""
        self.model_ = model
        self.classes_ = model.classes
        self.multiclass_strategy_ = model.multiclass_strategy
        if model.multiclass_strategy == "one-vs-rest":
            self.records_ = tuple(m.records for m in model.models)
            self.best_round_ = tuple(m.best_round for m in model.models)
        else:
            self.records_ = model.records
            self.best_round_ = model.best_round
        self.stop_reason_ = model.stop_reason
        return self

    # -- prediction -----------------------------------------------------------------------------
    def _validated(self, X):
        check_is_fitted(self)
        models = getattr(self.model_, "models", (self.model_,))  # one-vs-rest: one per class
        return self._check_input(X, reset=False, categorical=any(
            m.features is not None and m.features.categorical.any() for m in models))

    def decision_function(self, X):
        """F_T(x): ``(n,)``, positive for ``classes_[1]``; ``(n, C)`` with several classes."""
        X = self._validated(X)
        with _names_said():
            return self.model_.decision_function(X)

    def predict(self, X):
        X = self._validated(X)
        with _names_said():
            return self.model_.predict(X)

    def predict_proba(self, X):
        """Class probabilities: ``(n, 2)`` with p(classes_[1] | x) = 1 / (1 + exp(-2 F_T(x)));
        ``(n, C)`` rows summing to 1 (several classes) or per-label marginals (multi-label)."""
        X = self._validated(X)
        with _names_said():
            return self.model_.predict_proba(X)

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def staged_decision_function(self, X):
        """Yield the decision function after each round."""
        X = self._validated(X)
        yield from _staged(self.model_.staged_decision_function(X))

    def staged_predict(self, X):
        """Yield the predicted labels after each round."""
        X = self._validated(X)
        yield from _staged(self.model_.staged_predict(X))

    def staged_predict_proba(self, X):
        """Yield the class probabilities after each round."""
        X = self._validated(X)
        yield from _staged(self.model_.staged_predict_proba(X))


@contextlib.contextmanager
def _names_said():
    """While the model reads an ``X`` that scikit-learn's check has already warned about (its
    feature names against the fit's), the model's own warning of the same is left out: one
    warning, scikit-learn's, which names the estimator."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X (does not have valid|has) feature names",
                                category=DataWarning)
        yield


def _staged(stages):
    """A model's staged outputs; its first step reads ``X`` (every class model's, for
    one-vs-rest), so only that step runs under :func:`_names_said` (a filter left on while the
    generator is suspended would silence the caller's warnings)."""
    with _names_said():
        first = next(stages, None)
    if first is not None:
        yield first
        yield from stages

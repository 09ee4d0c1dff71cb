"""A scikit-learn estimator as boostkit's weak learner.

Each round the proposal ``sklearn-estimator`` clones its ``estimator``, fits the clone on the
training data weighted by the current distribution, and proposes the fitted clone as the weak
hypothesis ``fitted-estimator``:

* weights: ``sample_weight`` = D_t over the examples; with C > 1 margin columns (three or more
  classes), the row sums of the ``(n, C)`` pair weights. Under SAMME's ``samme-weights`` all the
  mass of a row is on its true class, so the row sums are SAMME's example weights exactly.
* an estimator whose ``fit`` takes no ``sample_weight`` (or ``resample=True``) is fitted on a
  weighted resample of n rows drawn with replacement by the fit's generator, ``state.rng``:
  boosting by resampling (Freund & Schapire 1997, section 4.1 of "A decision-theoretic
  generalization of on-line learning").
* randomness: every clone's ``random_state`` parameters (its own and its sub-estimators') get a
  fresh seed, drawn as scikit-learn's ``AdaBoostClassifier`` draws them
  (``sklearn.ensemble._base._set_random_states``: ``RandomState.randint(2**31 - 1)`` per
  parameter, in sorted order). ``random_state=None`` seeds that ``RandomState`` from the fit's
  generator, so ``Booster(random_state=...)`` decides everything; an integer seeds it as
  ``AdaBoostClassifier(random_state=...)`` does, so both draw the same trees.

What the hypothesis outputs (``response``):

* ``"predict"`` (default): the predicted class as a cell, one cell per training class (cell l is
  ``classes[l]``), so per-cell calibrations apply: ``samme-alpha`` labels each cell by its
  heaviest class, which for a classifier fitted with these weights is the class it predicts
  there, so ``samme`` with this proposal is scikit-learn's ``AdaBoostClassifier``; and
  ``domain-partition`` gives real AdaBoost (AdaBoost.MH on several classes) on the classifier's
  partition. With two classes the scores are +-1 (+1 for ``classes[1]``), so ``constant-alpha``
  (discrete AdaBoost) applies too. Provides ``real-scores``, ``sign-scores``, ``cells`` and
  ``multiclass`` (not ``two-cells``: with three or more classes there are C cells).
* ``"predict_proba"``: the real score 2 P(classes[1] | x) - 1 in [-1, 1]; ``"decision_function"``:
  the estimator's decision function (positive for ``classes[1]``). Real scores only
  (``real-scores``), for calibrations of real-valued hypotheses (``newton-alpha``, ``pav``...),
  and two classes only: several classes run one-vs-rest (``Booster(multiclass="one-vs-rest")``).

A fitted estimator is a Python object, not JSON and arrays: a model made of them saves only with
``model.save(path, allow_pickle=True)`` and loads only with
``boostkit.load_model(path, allow_pickle=True)`` (only load files you trust).
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import SINGLE_LABEL

__all__ = ["EstimatorProposal", "FittedEstimator", "RESPONSES"]

RESPONSES = ("predict", "predict_proba", "decision_function")
_INT32_MAX = np.iinfo(np.int32).max
_SIGNS = np.array([-1.0, 1.0])


def _sklearn_base():
    try:
        import sklearn.base
    except ImportError as exc:  # pragma: no cover - the test extra installs scikit-learn
        raise ImportError(
            "the sklearn-estimator proposal needs scikit-learn: pip install 'boostkit[sklearn]'"
        ) from exc
    return sklearn.base


def default_estimator():
    """scikit-learn's ``AdaBoostClassifier`` default: ``DecisionTreeClassifier(max_depth=1)``."""
    _sklearn_base()
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(max_depth=1)


def _is_regressor(estimator) -> bool:
    try:
        return bool(_sklearn_base().is_regressor(estimator))
    except Exception:  # no scikit-learn, or an object without scikit-learn tags
        return getattr(estimator, "_estimator_type", None) == "regressor"


def _check_estimator(instance, attribute, value):
    if value is None:
        return
    if isinstance(value, type):
        raise ValueError(
            f"{attribute.name} must be an estimator instance, got the class {value.__name__}; "
            f"pass {value.__name__}(...) instead"
        )
    missing = [m for m in ("fit", "predict") if not callable(getattr(value, m, None))]
    if missing:
        raise ValueError(
            f"{attribute.name} must be an unfitted scikit-learn classifier (an object with fit "
            f"and predict), got {type(value).__name__} {value!r}, which has no "
            f"{' or '.join(missing)}"
        )
    if _is_regressor(value):
        raise ValueError(
            f"{attribute.name} must be a classifier, got the regressor {type(value).__name__}: "
            "the weak hypothesis is the class it predicts (use e.g. DecisionTreeClassifier, "
            "not DecisionTreeRegressor)"
        )


def _check_response(instance, attribute, value):
    if value not in RESPONSES:
        raise ValueError(f"{attribute.name} must be one of {', '.join(map(repr, RESPONSES))}, got {value!r}")
    estimator = instance.estimator
    if value != "predict" and estimator is not None and not callable(getattr(estimator, value, None)):
        raise ValueError(
            f"{attribute.name}={value!r}, but the estimator {type(estimator).__name__} has no "
            f"{value} method"
        )


def _check_random_state(instance, attribute, value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                              or not 0 <= value < 2**32):
        raise ValueError(f"{attribute.name} must be None or an integer seed in [0, 2**32), got {value!r}")


def _check_resample(instance, attribute, value):
    if value not in (None, True, False):
        raise ValueError(f"{attribute.name} must be None (automatic), True or False, got {value!r}")


def _classes(value) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == object and all(isinstance(c, str) for c in arr):
        arr = arr.astype(str)
    if arr.ndim != 1 or arr.shape[0] < 2:
        raise ValueError(f"classes must be a 1-D array of at least two labels, got shape {arr.shape}")
    return arr


def _check_hypothesis_response(instance, attribute, value):
    if value not in RESPONSES:
        raise ValueError(f"{attribute.name} must be one of {', '.join(map(repr, RESPONSES))}, got {value!r}")


@attrs.frozen
class FittedEstimator(boostkit.WeakHypothesis):
    """A fitted scikit-learn classifier as a weak hypothesis.

    ``classes`` are the training classes of the boosting fit (sorted, as boostkit encodes them).
    With ``response="predict"`` the cell of x is the index in ``classes`` of the class the
    estimator predicts (``n_cells`` = the number of classes) and, with two classes, the score is
    +1 for ``classes[1]`` and -1 for ``classes[0]``. With ``"predict_proba"`` the score is
    2 P(classes[1] | x) - 1, with ``"decision_function"`` the decision function; neither has
    cells.

    ``estimator`` is a Python object: a model holding one saves only with ``allow_pickle=True``.
    """

    name = "fitted-estimator"

    estimator: Any = attrs.field(eq=False)
    classes: np.ndarray = attrs.field(converter=_classes, eq=False)
    response: str = attrs.field(default="predict", validator=_check_hypothesis_response)

    @property
    def n_cells(self) -> int:
        return self.classes.shape[0] if self.response == "predict" else 0

    def cells(self, X) -> np.ndarray:
        if self.response != "predict":
            raise TypeError(f"weak hypothesis {self.name!r} with response={self.response!r} has no cells")
        predicted = np.asarray(self.estimator.predict(X))
        if predicted.ndim != 1:
            raise ValueError(
                f"{type(self.estimator).__name__}.predict returned shape {predicted.shape}; "
                "expected one class label per row"
            )
        order = np.argsort(self.classes, kind="stable")
        ordered = self.classes[order]
        position = np.minimum(np.searchsorted(ordered, predicted), ordered.shape[0] - 1)
        unknown = ordered[position] != predicted
        if unknown.any():
            raise ValueError(
                f"{type(self.estimator).__name__} predicted {predicted[unknown][0]!r}, which is "
                f"not one of the training classes {self.classes.tolist()!r}"
            )
        return order[position].astype(np.intp, copy=False)

    def scores(self, X) -> np.ndarray:
        if self.classes.shape[0] != 2:
            raise TypeError(
                f"weak hypothesis {self.name!r} over {self.classes.shape[0]} classes has cells "
                "(the predicted class), not real scores; use a per-cell calibration"
            )
        if self.response == "predict":
            return _SIGNS[self.cells(X)]
        fitted = list(getattr(self.estimator, "classes_", ()))
        positive = self.classes[1]
        if self.response == "predict_proba":
            proba = np.asarray(self.estimator.predict_proba(X), dtype=np.float64)
            if positive not in fitted:  # fitted on a resample without the positive class
                return np.full(proba.shape[0], -1.0)
            return 2.0 * proba[:, fitted.index(positive)] - 1.0
        if len(fitted) != 2 or fitted[1] != positive:
            raise ValueError(
                f"{type(self.estimator).__name__} was fitted on the classes {fitted!r}, not "
                f"{self.classes.tolist()!r}: its decision function is not a score for "
                f"{positive!r}"
            )
        return np.asarray(self.estimator.decision_function(X), dtype=np.float64).ravel()

    def describe(self) -> str:
        return f"{type(self.estimator).__name__} ({self.response})"


def _takes_sample_weight(estimator) -> bool:
    try:
        return "sample_weight" in inspect.signature(estimator.fit).parameters
    except (TypeError, ValueError):
        return False


@attrs.define
class EstimatorProposal(boostkit.Proposal):
    """Propose a clone of a scikit-learn classifier fitted on the current weights.

    Parameters
    ----------
    estimator:
        An unfitted scikit-learn classifier (anything with ``fit`` and ``predict``; cloned with
        ``sklearn.base.clone``, or copied when it has no ``get_params``). ``None`` (default):
        ``DecisionTreeClassifier(max_depth=1)``, scikit-learn's AdaBoost default.
    response:
        ``"predict"`` (default): the predicted class, as cells (and +-1 with two classes);
        ``"predict_proba"`` or ``"decision_function"``: real scores, two classes only (see the
        module docstring).
    resample:
        ``None`` (default): fit with ``sample_weight`` when the estimator's ``fit`` takes it,
        else on a weighted resample; ``True``: always resample; ``False``: always pass
        ``sample_weight``.
    random_state:
        Seed of the generator that seeds each clone's ``random_state`` parameters: ``None``
        (default) draws it from the fit's generator; an integer reproduces
        ``AdaBoostClassifier(random_state=...)``.

    Proposes nothing (ending the run as ``"pool-exhausted"``) when the weights sum to 0.
    Refuses multi-label data.
    """

    name = "sklearn-estimator"
    needs = frozenset({SINGLE_LABEL})

    estimator: Any = attrs.field(default=None, validator=_check_estimator)
    response: str = attrs.field(default="predict", validator=_check_response)
    resample: bool | None = attrs.field(default=None, validator=_check_resample)
    random_state: int | None = attrs.field(default=None, validator=_check_random_state)
    # Per fit (boostkit_fit_start): the seed generator, the labels, an unfitted clone of the
    # estimator to copy each round, its random_state parameters, and whether to resample.
    _seeds: Any = attrs.field(default=None, init=False, repr=False)
    _labels: Any = attrs.field(default=None, init=False, repr=False)
    _unfitted: Any = attrs.field(default=None, init=False, repr=False)
    _seeded: Any = attrs.field(default=(), init=False, repr=False)
    _resample: bool = attrs.field(default=False, init=False, repr=False)

    @property
    def provides(self) -> frozenset[str]:
        if self.response == "predict":
            return frozenset({"real-scores", "sign-scores", "cells", "multiclass"})
        return frozenset({"real-scores"})

    def _clone(self):
        # Copying the unfitted clone is what sklearn.base.clone does, without its checks every
        # round; the seeds are then drawn as scikit-learn's ensembles draw them.
        estimator = copy.deepcopy(self._unfitted)
        if self._seeded:
            estimator.set_params(**{k: self._seeds.randint(_INT32_MAX) for k in self._seeded})
        return estimator

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        data = state.data
        if data.labels is None:
            raise ValueError(
                f"{self.name} needs single-label classes, got a multi-label indicator matrix"
            )
        if self.response != "predict" and data.n_columns > 1:
            raise ValueError(
                f"{self.name} with response={self.response!r} gives real scores for two "
                f"classes, and y has {data.n_columns}; use response='predict' or "
                "Booster(multiclass='one-vs-rest')"
            )
        seed = self.random_state
        if seed is None:
            seed = int(state.rng.integers(2**32))
        self._seeds = np.random.RandomState(seed)
        self._labels = data.classes[data.labels]
        template = default_estimator() if self.estimator is None else self.estimator
        if hasattr(template, "get_params"):
            self._unfitted = _sklearn_base().clone(template)
            # As sklearn.ensemble._base._set_random_states: every random_state parameter, its
            # own and its sub-estimators', in sorted order.
            self._seeded = [k for k in sorted(self._unfitted.get_params(deep=True))
                            if k == "random_state" or k.endswith("__random_state")]
        else:
            self._unfitted, self._seeded = copy.deepcopy(template), []
        self._resample = (not _takes_sample_weight(self._unfitted) if self.resample is None
                          else self.resample)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        data = state.data
        weights = state.weights if state.weights.ndim == 1 else state.weights.sum(axis=1)
        total = float(weights.sum())
        if not total > 0.0:
            return None
        estimator = self._clone()
        if self._resample:
            rows = state.rng.choice(data.n_samples, size=data.n_samples, p=weights / total)
            estimator.fit(data.X[rows], self._labels[rows])
        else:
            estimator.fit(data.X, self._labels, sample_weight=weights)
        hypothesis = FittedEstimator(estimator, data.classes, self.response)
        if self.response != "predict":
            return boostkit.Candidate(hypothesis, scores=hypothesis.scores(data.X))
        cells = hypothesis.cells(data.X)
        scores = _SIGNS[cells] if data.classes.shape[0] == 2 else None
        return boostkit.Candidate(hypothesis, cells=cells, scores=scores)

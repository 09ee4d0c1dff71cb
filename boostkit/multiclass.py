"""One-vs-rest: any binary recipe on three or more classes, or on multi-label data.

``Booster(..., multiclass="one-vs-rest")`` (or ``"auto"`` for a recipe that does not handle
several margin columns natively) fits one binary model per class, class l against the rest
(per label column for a multi-label indicator matrix: binary relevance), with the same recipe,
parameters and seed, and combines them into one :class:`OneVsRestModel`. Its margin column l is
model l's F_l(x), half the log-odds of class l against the rest for the exponential loss, so the
columns are on one scale: ``predict`` takes the argmax, ``predict_proba`` normalises
sigma(2 F_l) over the classes, exactly as for a native multi-class model
(:func:`boostkit.model.margin_probabilities`).

A ranking recipe (:func:`boostkit.capabilities.is_ranker`: a component provides
``"pairwise-loss"``, as RankBoost's reweightings do) learns F_l only up to a constant: its loss
compares examples, so the argmax of raw margins would pick the class of the largest arbitrary
offset. Each class's margin then gets the offset b_l that minimises the exponential loss on the
training examples (:func:`exponential_offset`), stored in :attr:`OneVsRestModel.offsets`: F_l +
b_l is the margin AdaBoost would give the ranker's scores, and the per-class rankings, hence
their AUCs, are unchanged.

With ``n_jobs > 1`` the classes are fitted in parallel on threads (each fit single-threaded, so
the models are those of a serial run: the kernels release the GIL).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator, Mapping

import attrs
import numpy as np

from .capabilities import is_ranker
from .data import TrainingData
from .errors import DataError, ModelFormatError
from .model import (BoostModel, _check_shared_schema, _saved_classes, _saved_flag, margin_labels,
                    margin_probabilities)
from .model_file import _Pickler, _with_pickled, read_model_file, write_model_file
from .plugins import get_registry
from .registry import Recipe

__all__ = ["OneVsRestModel", "check_label_columns", "exponential_offset",
           "exponential_offset_terms", "fit_one_vs_rest"]


def _log_sum_exp(values: np.ndarray) -> float:
    if values.shape[0] == 0:
        return -np.inf
    top = values.max()
    return float(top + np.log(np.exp(values - top).sum()))


def exponential_offset(margin: np.ndarray, y: np.ndarray, weights: np.ndarray) -> float:
    """The offset b minimising sum_i w_i exp(-y_i (F(x_i) + b)) over the examples of positive
    weight: b = 1/2 ln(sum_{y=+1} w e^{-F} / sum_{y=-1} w e^{F}).

    At b, the loss is 2 sqrt(sum_{y=+1} w e^{-F} sum_{y=-1} w e^{F}), twice the square root of
    the bipartite RankBoost loss of F, which no offset changes (Rudin & Schapire 2009, "Margin-based
    ranking and an equivalence between AdaBoost and RankBoost", JMLR 10): F + b is a ranker's F
    read as an AdaBoost margin. Computed in log space, so that margins of any size give a
    finite b. ``y`` holds +-1; both signs need positive weight.
    """
    log_positive, log_negative = exponential_offset_terms(margin, y, weights)
    return 0.5 * (log_positive - log_negative)


def exponential_offset_terms(margin: np.ndarray, y: np.ndarray, weights: np.ndarray
                             ) -> tuple[float, float]:
    """``(log sum_{y=+1} w e^{-F}, log sum_{y=-1} w e^{F})`` over the examples of positive
    weight (``-inf`` for a sign without any), of which :func:`exponential_offset` is half the
    difference: over rows split into parts, the log-sum-exp of the parts' terms."""
    kept = weights > 0
    margin, y, log_w = margin[kept], y[kept], np.log(weights[kept])
    positive = y > 0
    return (_log_sum_exp(log_w[positive] - margin[positive]),
            _log_sum_exp(log_w[~positive] + margin[~positive]))


def check_label_columns(has_negative, has_positive) -> None:
    """Refuse a multi-label y with a column that has no positive (or no negative) example of
    positive weight (``has_negative[l]``, ``has_positive[l]``): one-vs-rest cannot fit a
    binary model for it."""
    constant = np.flatnonzero(~(np.asarray(has_negative) & np.asarray(has_positive)))
    if constant.size:
        l = int(constant[0])
        kind = "only" if has_positive[l] else "no"
        raise DataError(
            f"y column {l} has {kind} positive examples: one-vs-rest cannot fit a binary "
            f"model for it; drop the column, or use a native multi-label recipe "
            "(adaboost-mh), which learns such a label as never (always) present"
        )


def _class_targets(labels, data: TrainingData, column: int) -> np.ndarray:
    """Class ``column`` against the rest as labels 0/1, for the rows of ``labels`` (the ``y``
    given to ``fit``, or an ``eval_set``'s)."""
    if data.multilabel:
        return (np.asarray(labels) > 0)[:, column].astype(np.intp)
    labels = np.asarray(labels)
    if labels.ndim == 2:
        labels = labels.ravel()
    return (labels == data.classes[column]).astype(np.intp)


def fit_one_vs_rest(booster, sample_weight, eval_set, data: TrainingData) -> OneVsRestModel:
    """Fit ``booster``'s recipe once per class of ``data`` (already validated) and combine."""
    if data.multilabel:
        check_label_columns(data.y.min(axis=0) < 0, data.y.max(axis=0) > 0)
    # The validated examples are passed on (each binary fit then only re-reads them), those of
    # weight 0 already removed: the weights given, of the rows kept.
    weights = (sample_weight if data.rows is None or sample_weight is None
               else np.asarray(sample_weight)[data.rows])
    binary = attrs.evolve(booster, multiclass="native", n_jobs=1)
    columns = range(data.n_columns)

    def fit(column: int) -> BoostModel:
        val = None
        if eval_set is not None:
            val = (eval_set[0], _class_targets(eval_set[1], data, column), *eval_set[2:])
        return binary.fit(data.X, (data.y[:, column] > 0).astype(np.intp), weights, eval_set=val,
                          features=data.features)

    n_jobs = booster.n_jobs if booster.n_jobs > 0 else (os.cpu_count() or 1)
    if n_jobs > 1 and data.n_columns > 1:
        with ThreadPoolExecutor(max_workers=min(n_jobs, data.n_columns)) as pool:
            models = tuple(pool.map(fit, columns))
    else:
        models = tuple(fit(column) for column in columns)
    offsets = None
    if is_ranker(get_registry().instantiate(booster.recipe())):
        offsets = [exponential_offset(model.decision_function(data.X), data.y[:, l],
                                      data.sample_weight) for l, model in enumerate(models)]
    return OneVsRestModel(classes=data.classes, models=models, multilabel=data.multilabel,
                          offsets=offsets)


def _check_models(instance, attribute, value):
    if len(value) != _n_columns(instance.classes):
        raise ValueError(f"one-vs-rest needs one binary model per class: {len(instance.classes)} "
                         f"classes, {len(value)} models")
    for model in value:
        if model.n_columns != 1:
            raise ValueError("the models of one-vs-rest must be binary (one margin column)")
    if len({model.n_features for model in value}) > 1:
        raise ValueError("the models of one-vs-rest were fitted on different numbers of features")


def _n_columns(classes) -> int:
    return np.asarray(classes).shape[0]


def _offsets(value):
    return None if value is None else np.asarray(value, dtype=np.float64)


def _saved_offsets(structure: Mapping):
    """A file's ``offsets``: absent, or a list of numbers (no text read as numbers)."""
    offsets = structure.get("offsets")
    if offsets is not None and not (isinstance(offsets, list) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in offsets)):
        raise ValueError(f"offsets must be a list of numbers, one per class model, got "
                         f"{offsets!r}")
    return offsets


def _check_offsets(instance, attribute, value):
    if value is None:
        return
    if value.shape != (len(instance.models),) or not np.isfinite(value).all():
        raise ValueError(f"offsets must be {len(instance.models)} finite numbers, one per "
                         f"class model, got {value.tolist()}")


@attrs.frozen
class OneVsRestModel:
    """One binary :class:`boostkit.BoostModel` per class (per label), predicting together.

    Attributes
    ----------
    classes:
        The original label values (column indices 0..C-1 for multi-label data).
    models:
        ``models[l]`` separates class l (its label 1) from the rest (label 0).
    multilabel:
        Whether the model was fitted on a multi-label indicator matrix.
    offsets:
        ``(C,)`` float64, the offset b_l added to class l's margin, or ``None`` (no offsets).
        One-vs-rest over a ranking recipe sets them (:func:`exponential_offset` on the training
        examples), since a ranker's margins carry an arbitrary constant per class.

    ``decision_function`` is ``(n, C)``: column l is ``models[l].decision_function`` (plus
    ``offsets[l]``); the other methods are those of a native multi-class
    :class:`boostkit.BoostModel`.
    """

    classes: np.ndarray = attrs.field(eq=False)
    models: tuple[BoostModel, ...] = attrs.field(converter=tuple, validator=_check_models)
    multilabel: bool = attrs.field(default=False, converter=bool)
    offsets: np.ndarray | None = attrs.field(default=None, converter=_offsets,
                                             validator=_check_offsets, eq=False)

    multiclass_strategy = "one-vs-rest"

    @property
    def n_features(self) -> int:
        return self.models[0].n_features

    @property
    def feature_names(self) -> tuple[str, ...] | None:
        """The training columns' names, or ``None`` (:attr:`BoostModel.features`)."""
        return self.models[0].feature_names

    def feature_importances(self) -> np.ndarray:
        """The mean of the class models' :meth:`BoostModel.feature_importances`."""
        return np.mean([m.feature_importances() for m in self.models], axis=0)

    @property
    def n_columns(self) -> int:
        return len(self.models)

    @property
    def recipe(self) -> Recipe:
        """The recipe every class was fitted with."""
        return self.models[0].recipe

    @property
    def n_rounds(self) -> int:
        """The most terms of any class's model."""
        return max(model.n_rounds for model in self.models)

    @property
    def stop_reason(self) -> str:
        """The stop reasons of the class models, e.g. ``"max-rounds"`` or
        ``"max-rounds, no-edge"`` when they differ."""
        return ", ".join(dict.fromkeys(model.stop_reason for model in self.models))

    def _offset(self, margin: np.ndarray) -> np.ndarray:
        return margin if self.offsets is None else margin + self.offsets

    def decision_function(self, X) -> np.ndarray:
        """``(n, C)``: each class's model's margin F_l(x) (at its own best round, if any), plus
        its offset, if any."""
        return self._offset(np.column_stack([model.decision_function(X) for model in self.models]))

    def staged_decision_function(self, X) -> Iterator[np.ndarray]:
        """Yield the ``(n, C)`` margins after each round t = 1..max T; a class whose model has
        fewer terms keeps its final margin. The offsets, if any, are the final model's."""
        stages = [model.staged_decision_function(X) for model in self.models]
        current = [None] * len(stages)
        while True:
            advanced = False
            for l, stage in enumerate(stages):
                margin = next(stage, None)
                if margin is not None:
                    current[l], advanced = margin, True
            if not advanced:
                return
            yield self._offset(np.column_stack(current))

    def predict(self, X) -> np.ndarray:
        """The class of the largest margin, or the 0/1 indicator matrix F > 0 (multi-label)."""
        return margin_labels(self.decision_function(X), self.classes, self.multilabel)

    def staged_predict(self, X) -> Iterator[np.ndarray]:
        for margin in self.staged_decision_function(X):
            yield margin_labels(margin, self.classes, self.multilabel)

    def predict_proba(self, X) -> np.ndarray:
        """``(n, C)``: sigma(2 F_l) normalised over the classes (rows sum to 1), or the per-label
        marginals for multi-label data (:func:`boostkit.model.margin_probabilities`)."""
        return margin_probabilities(self.decision_function(X), self.multilabel)

    def staged_predict_proba(self, X) -> Iterator[np.ndarray]:
        for margin in self.staged_decision_function(X):
            yield margin_probabilities(margin, self.multilabel)

    # -- persistence --------------------------------------------------------------------------
    def save(self, path: str | os.PathLike, allow_pickle: bool = False) -> Path:
        """Write the model to ``path`` atomically; ``boostkit.load_model`` reads it back.

        ``allow_pickle`` as in :meth:`boostkit.BoostModel.save`: foreign objects are refused
        without it and pickled with it (unpickling runs code: only load files you trust).
        """
        return write_model_file(path, *self._file_contents(allow_pickle))

    def _file_contents(self, allow_pickle: bool = False) -> tuple[dict, dict[str, np.ndarray]]:
        """The JSON structure and the arrays :meth:`save` writes."""
        arrays: dict[str, np.ndarray] = {}
        pickler = _Pickler(arrays, allow_pickle)
        structure = {
            "kind": "one-vs-rest",
            "multilabel": self.multilabel,
            "models": [model._structure(arrays, f"m{l}.", pickler)
                       for l, model in enumerate(self.models)],
        }
        if self.offsets is not None:  # JSON floats read back exactly
            structure["offsets"] = self.offsets.tolist()
        classes = np.asarray(self.classes)
        arrays["classes"] = classes.astype(str) if classes.dtype == object else classes
        return _with_pickled(structure, pickler), arrays

    @classmethod
    def load(cls, path: str | os.PathLike, allow_pickle: bool = False) -> OneVsRestModel:
        """Read a one-vs-rest model written by :meth:`save` (``allow_pickle`` as in
        :meth:`boostkit.BoostModel.load`: only for files you trust)."""
        structure, arrays, version = read_model_file(path, allow_pickle)
        if structure.get("kind") != "one-vs-rest":
            raise ModelFormatError(f"{path} does not hold a one-vs-rest model")
        return cls._from_structure(structure, arrays, version, path)

    @classmethod
    def _from_structure(cls, structure: Mapping, arrays: Mapping, version: int,
                        path) -> OneVsRestModel:
        try:
            models = [BoostModel._from_structure(sub, arrays, version, path, f"m{l}.")
                      for l, sub in enumerate(structure["models"])]
            multilabel = _saved_flag(structure, "multilabel", version, since=3)
            model = cls(classes=_saved_classes(arrays, "classes", multilabel), models=models,
                        multilabel=multilabel, offsets=_saved_offsets(structure))
            _check_shared_schema(model.models)
            return model
        except (KeyError, TypeError) as exc:
            raise ModelFormatError(f"{path}: the one-vs-rest structure is incomplete or corrupt: {exc!r}") from exc
        except ValueError as exc:
            raise ModelFormatError(f"{path}: {exc}") from exc

"""Held-out data and validation-based early stopping.

The engine keeps a fit's validation data in ``state.validation`` (:class:`ValidationData`): the
``eval_set`` passed to ``Booster.fit``, or rows it holds out of the training data
(:func:`stratified_holdout`) when a component answers ``boostkit_validation_fraction``. Every
round it adds the round's contribution to the validation margins, records the weighted
validation error and the scores components report through ``boostkit_validation_score`` in
``record.extra`` (``"validation_<name>"``), and after the last round asks
``boostkit_best_round`` which round the model should predict with.

:class:`ValidationStopping` (registered by the engine as ``validation``) is the usual rule built
on them: it scores the validation margins with a metric of :mod:`boostkit.metrics`, ends the run
after ``patience`` rounds without improvement, and names the best round, so the model predicts
with it and never silently with the last one.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from .capabilities import RUNNING_MARGIN
from .components import Stopping
from .data import TrainingData, check_features, check_sample_weight, label_array
from .errors import DataError
from .hookspecs import hookimpl
from .metrics import get_metric

__all__ = ["ValidationData", "ValidationStopping", "stratified_holdout", "eval_set_data"]


@attrs.define(eq=False)
class ValidationData:
    """A fit's held-out examples and the model's running margins on them (``state.validation``).

    Attributes
    ----------
    X:
        Finite float64 features (dense, or CSR like the training data).
    y:
        Labels in {-1, +1}, mapped with the training data's classes.
    sample_weight:
        Weights normalised to sum to 1.
    margin:
        F_t on the validation examples, kept current by the engine after every round's
        contribution (before ``boostkit_reweight``).
    rows:
        The indices, in the ``X`` given to ``fit``, of the rows held out of training, or ``None``
        when the data came as ``eval_set``.
    """

    X: object
    y: np.ndarray
    sample_weight: np.ndarray
    margin: np.ndarray
    rows: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def error(self) -> float:
        """Weighted error sum_i w_i [y_i F(x_i) <= 0], counted like the training error."""
        return float(np.dot(self.sample_weight, self.y * self.margin <= 0.0))


def _normalised(weights: np.ndarray, what: str) -> np.ndarray:
    total = weights.sum()
    if total <= 0:
        raise DataError(f"{what} have weight 0 in all: they cannot score the model")
    return weights / total


def stratified_holdout(y: np.ndarray, fraction: float, rng: np.random.Generator):
    """Split example indices into ``(train, held_out)``, keeping the class proportions.

    round(fraction * n) examples are held out, shared between the classes in proportion to their
    sizes (the largest remainders get the rounding), each class keeping at least one training
    example. The examples of each class are drawn by ``rng`` (the fit's generator), so the same
    seed holds out the same rows. Both arrays are sorted.
    """
    n = y.shape[0]
    members = [np.flatnonzero(y < 0), np.flatnonzero(y > 0)]
    counts = np.array([m.shape[0] for m in members])
    quotas = fraction * counts
    most = counts - 1
    held = np.minimum(np.floor(quotas).astype(np.int64), most)
    for _ in range(math.floor(fraction * n + 0.5) - int(held.sum())):
        room = held < most
        if not room.any():
            break
        held[np.argmax(np.where(room, quotas - held, -np.inf))] += 1
    if held.sum() == 0:
        raise DataError(
            f"validation_fraction {fraction} of {n} training examples holds out none; pass a "
            "larger fraction or an explicit eval_set"
        )
    out = np.concatenate([rng.permutation(m)[:k] for m, k in zip(members, held)])
    mask = np.zeros(n, dtype=bool)
    mask[out] = True
    return np.flatnonzero(~mask), np.flatnonzero(mask)


def holdout_data(X, y, sample_weight, fraction: float, *, max_bins: int, rng,
                 allow_missing: bool = False):
    """``(TrainingData, ValidationData)``: the examples of ``fit`` less a stratified holdout.

    The whole set is validated once (errors name ``fit``'s arguments), then split, so the
    training data get the labels and classes of all examples.
    """
    everything = TrainingData(X, y, sample_weight, max_bins=max_bins, rng=rng,
                              allow_missing=allow_missing)
    X, signed, weights = everything.X, everything.y, everything.sample_weight
    train, held_out = stratified_holdout(signed, fraction, rng)
    data = everything.subset(train)
    validation = ValidationData(
        X=X[held_out], y=signed[held_out],
        sample_weight=_normalised(weights[held_out], "the held-out examples"),
        margin=np.zeros(held_out.shape[0]), rows=held_out,
    )
    return data, validation


def eval_set_data(eval_set, data: TrainingData, *, allow_missing: bool = False) -> ValidationData:
    """Validate ``eval_set`` = ``(X_val, y_val)`` or ``(X_val, y_val, sample_weight_val)``.

    Features must match the training data's (NaN only where the training data may have it);
    labels must be among the training classes and are mapped to -1/+1 the same way.
    """
    if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (2, 3):
        raise DataError(
            "eval_set must be a tuple (X_val, y_val) or (X_val, y_val, sample_weight_val), got "
            f"{type(eval_set).__name__}"
            + (f" of length {len(eval_set)}" if isinstance(eval_set, (tuple, list)) else "")
        )
    X = check_features(eval_set[0], name="eval_set X", n_features=data.n_features,
                       accept_sparse=True, allow_missing=allow_missing)
    n = X.shape[0]
    labels = label_array(eval_set[1], n, name="eval_set y", x_name="eval_set X")
    unknown = ~np.isin(labels, data.classes)
    if unknown.any():
        raise DataError(
            f"eval_set y has labels {np.unique(labels[unknown])[:10].tolist()} that are not "
            f"among the training classes {data.classes.tolist()}"
        )
    try:
        weights = check_sample_weight(eval_set[2] if len(eval_set) == 3 else None, n)
    except DataError as exc:
        raise DataError(f"eval_set sample weights: {exc}") from None
    return ValidationData(
        X=X, y=np.where(labels == data.classes[1], 1.0, -1.0), sample_weight=weights,
        margin=np.zeros(n),
    )


def _fraction(instance, attribute, value):
    if (isinstance(value, bool) or not isinstance(value, (int, float, np.floating))
            or not 0.0 < value < 1.0):
        raise ValueError(f"{attribute.name} must be a number in (0, 1), got {value!r}")


def _patience(instance, attribute, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"patience must be a positive integer (rounds), got {value!r}")


def _metric(instance, attribute, value):
    get_metric(value)


def _min_delta(instance, attribute, value):
    if (isinstance(value, bool) or not isinstance(value, (int, float, np.floating))
            or not 0.0 <= value < math.inf):
        raise ValueError(f"min_delta must be a finite number >= 0, got {value!r}")


@attrs.define
class ValidationStopping(Stopping):
    """Stop when the validation score has not improved for ``patience`` rounds; keep the best.

    The score of each round is recorded as ``record.extra["validation_<metric>"]``. The best
    round, the last one that improved, is what the model predicts with
    (``model.best_round``), whatever ends the run. The model after round t is then its first t
    terms, so the rule needs a calibration that adds terms in order and never re-fits one
    (``"running-margin"``; back-fitting calibrations do not provide it).

    Parameters
    ----------
    validation_fraction:
        Share of the training examples held out (stratified, drawn by the fit's seed) when
        ``fit`` gets no ``eval_set``; ignored when it does.
    patience:
        Rounds without improvement after which the run ends (stop reason
        ``"no-validation-improvement"``).
    metric:
        A name of :data:`boostkit.metrics.METRICS` scoring the validation margins; the default
        ``"log_loss"`` is the cross-entropy of ``predict_proba`` (p = 1 / (1 + e^{-2F})).
    min_delta:
        A round improves only if it beats the best score so far by more than this.
    """

    name = "validation"
    needs = frozenset({RUNNING_MARGIN})
    validation_fraction: float = attrs.field(default=0.1, validator=_fraction)
    patience: int = attrs.field(default=10, validator=_patience)
    metric: str = attrs.field(default="log_loss", validator=_metric)
    min_delta: float = attrs.field(default=0.0, validator=_min_delta)
    _best_round: int | None = attrs.field(init=False, default=None)
    _best_loss: float = attrs.field(init=False, default=math.inf)

    @hookimpl
    def boostkit_validation_fraction(self):
        return self.validation_fraction

    @hookimpl
    def boostkit_fit_start(self, state):
        # A refit must not inherit the previous fit's best round.
        self._best_round, self._best_loss = None, math.inf

    @hookimpl
    def boostkit_validation_score(self, state):
        validation = state.validation
        score = get_metric(self.metric)(validation.y, validation.margin, validation.sample_weight)
        return {self.metric: score}

    @hookimpl
    def boostkit_should_stop(self, state, record):
        score = record.extra[f"validation_{self.metric}"]
        loss = -score if get_metric(self.metric).greater_is_better else score
        if loss < self._best_loss - self.min_delta:
            self._best_round, self._best_loss = record.round, loss
            return None
        if record.round - (self._best_round or 0) >= self.patience:
            return "no-validation-improvement"
        return None

    @hookimpl
    def boostkit_best_round(self, state):
        return self._best_round

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

from .capabilities import DISTRIBUTED, MULTICLASS, RUNNING_MARGIN
from .components import Candidate, Stopping, describe_hypothesis
from .data import TrainingData, check_features, check_sample_weight, encode_like
from .errors import DataError, HookError
from .hookspecs import hookimpl
from .metrics import get_metric, log_loss, exponential_loss, multiclass_log_loss
from .plane import check_array

__all__ = ["MEAN_METRICS", "ValidationData", "ValidationStopping", "eval_set_data",
           "holdout_positions", "stratified_holdout"]

#: The metrics that are weighted means over the validation examples (of their margins, or of
#: the margins' signs and argmax): a sum over parts of the rows, each part's score times its
#: weight, gives them, so they score validation rows wherever they live (on shards too).
#: The others (AUC, average precision, F1, ranking loss) compare or count examples across all
#: the rows.
MEAN_METRICS = ("log_loss", "exponential_loss", "accuracy")


@attrs.define(eq=False)
class ValidationData:
    """A fit's held-out examples and the model's running margins on them (``state.validation``).

    Attributes
    ----------
    X:
        Finite float64 features (dense, or CSR like the training data).
    y:
        Labels in {-1, +1}, mapped with the training data's classes: ``(n,)``, or the ``(n, C)``
        sign matrix with several margin columns.
    sample_weight:
        Weights normalised to sum to 1.
    margin:
        F_t on the validation examples, kept current by the engine after every round's
        contribution (before ``boostkit_reweight``), of ``y``'s shape.
    rows:
        The indices, in the ``X`` given to ``fit``, of the rows held out of training, or ``None``
        when the data came as ``eval_set``.
    labels:
        The class index of each example (single-label data), or ``None`` (multi-label).
    """

    X: object
    y: np.ndarray
    sample_weight: np.ndarray
    margin: np.ndarray
    rows: np.ndarray | None = None
    labels: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    def add_term(self, state, candidate: Candidate, calibrated) -> None:
        """Add round t's change to the validation margins, as the model will predict it."""
        hypothesis = candidate.hypothesis
        try:
            change = calibrated.contribution.values(Candidate(hypothesis, self.X), self.margin)
            if calibrated.replaces is not None:
                j = calibrated.replaces
                old = Candidate(state.hypotheses[j], self.X)
                change = change - state.contributions[j].values(old, self.margin)
        except Exception as exc:
            raise HookError(
                f"round {state.round}: evaluating "
                f"{describe_hypothesis(hypothesis, state.data.features)} "
                f"({calibrated.contribution.name!r}) on "
                f"the validation data failed: {type(exc).__name__}: {exc}"
            ) from exc
        check_array(np.asarray(change), self.margin.shape, "validation values",
                    f"contribution {calibrated.contribution.name!r}")
        self.margin += change

    def score(self, metric: str) -> float:
        """``metric`` (a name of :data:`boostkit.metrics.METRICS`) of the validation margins;
        with several margin columns one of :data:`COLUMN_METRICS`."""
        if self.margin.ndim == 2:
            return _column_score(metric, self)
        return get_metric(metric)(self.y, self.margin, self.sample_weight)

    @property
    def error(self) -> float:
        """The weighted error of the model's predictions: sum_i w_i [y_i F(x_i) <= 0] with one
        margin column, the weight of the examples whose largest margin is not their class, or
        the Hamming loss (the mean over labels of [Y F <= 0]) for multi-label data."""
        if self.y.ndim == 1:
            return float(np.dot(self.sample_weight, self.y * self.margin <= 0.0))
        if self.labels is not None:
            return float(np.dot(self.sample_weight, np.argmax(self.margin, axis=1) != self.labels))
        return float(np.dot(self.sample_weight, (self.y * self.margin <= 0.0).mean(axis=1)))


def _normalised(weights: np.ndarray, what: str) -> np.ndarray:
    total = weights.sum()
    if total <= 0:
        raise DataError(f"{what} have weight 0 in all: they cannot score the model")
    return weights / total


def stratified_holdout(y: np.ndarray, fraction: float, rng: np.random.Generator,
                       labels: np.ndarray | None = None):
    """Split example indices into ``(train, held_out)``, keeping the class proportions.

    round(fraction * n) examples are held out, shared between the classes in proportion to their
    sizes (the largest remainders get the rounding), each class keeping at least one training
    example. The examples of each class are drawn by ``rng`` (the fit's generator), so the same
    seed holds out the same rows. Both arrays are sorted. ``y`` holds the binary signs; with
    several classes, ``labels`` their indices. Multi-label data (a 2-D ``y`` and no labels)
    are one stratum: an example may have any set of labels.
    """
    n = y.shape[0]
    if labels is not None and y.ndim == 2:
        members = [np.flatnonzero(labels == k) for k in range(y.shape[1])]
    elif y.ndim == 2:
        members = [np.arange(n)]
    else:
        members = [np.flatnonzero(y < 0), np.flatnonzero(y > 0)]
    counts = np.array([m.shape[0] for m in members])
    positions = holdout_positions(counts, fraction, rng)
    out = np.concatenate([m[p] for m, p in zip(members, positions)])
    mask = np.zeros(n, dtype=bool)
    mask[out] = True
    return np.flatnonzero(~mask), np.flatnonzero(mask)


def holdout_positions(counts: np.ndarray, fraction: float, rng: np.random.Generator
                      ) -> list[np.ndarray]:
    """Which examples of each stratum :func:`stratified_holdout` holds out, by their sorted
    positions among the stratum's ``counts[c]`` examples (in the order of the data).

    Only the strata's sizes are needed: the rows themselves may be anywhere (on shards, whose
    positions in each stratum follow from the shards' counts), and the same ``rng`` draws the
    same positions.
    """
    n = int(np.sum(counts))
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
    # rng.permutation(m) of a stratum's m rows is m[rng.permutation(len(m))]: the same draws.
    return [np.sort(rng.permutation(int(c))[:k]) for c, k in zip(counts, held)]


def holdout_data(X, y, sample_weight, fraction: float, *, max_bins: int, rng,
                 allow_missing: bool = False, features=None, missing_hint: str = ""):
    """``(TrainingData, ValidationData)``: the examples of ``fit`` less a stratified holdout.

    The whole set is validated once (errors name ``fit``'s arguments), its examples of weight 0
    removed, then split, so the training data get the labels and classes of all examples.
    """
    everything = TrainingData(X, y, sample_weight, max_bins=max_bins, rng=rng,
                              allow_missing=allow_missing, features=features,
                              missing_hint=missing_hint, remove_unweighted=True)
    X, signed, weights = everything.X, everything.y, everything.sample_weight
    train, held_out = stratified_holdout(signed, fraction, rng, everything.labels)
    data = everything.subset(train)
    validation = ValidationData(
        X=X[held_out], y=signed[held_out],
        sample_weight=_normalised(weights[held_out], "the held-out examples"),
        margin=np.zeros(signed[held_out].shape),
        rows=held_out if everything.rows is None else everything.rows[held_out],
        labels=None if everything.labels is None else everything.labels[held_out],
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
                       accept_sparse=True, allow_missing=allow_missing, features=data.features)
    n = X.shape[0]
    coding = encode_like(data.coding, eval_set[1], n, name="eval_set y", x_name="eval_set X")
    try:
        weights = check_sample_weight(eval_set[2] if len(eval_set) == 3 else None, n)
    except DataError as exc:
        raise DataError(f"eval_set sample weights: {exc}") from None
    return ValidationData(
        X=X, y=coding.y, sample_weight=weights, margin=np.zeros(coding.y.shape),
        labels=coding.labels,
    )


#: The metrics that score C > 1 margin columns (see :class:`ValidationStopping`).
COLUMN_METRICS = ("log_loss", "exponential_loss", "accuracy")


def _column_score(metric: str, validation: ValidationData) -> float:
    """``metric`` of ``(n, C)`` validation margins."""
    w = validation.sample_weight
    if metric == "accuracy":
        return 1.0 - validation.error
    if metric == "log_loss" and validation.labels is not None:
        return multiclass_log_loss(validation.labels, validation.margin, w)
    if metric in ("log_loss", "exponential_loss"):
        # Over the (example, class) pairs, each example's weight shared by its C labels.
        loss = log_loss if metric == "log_loss" else exponential_loss
        c = validation.margin.shape[1]
        return loss(validation.y.ravel(), validation.margin.ravel(), np.repeat(w / c, c))
    raise ValueError(
        f"metric {metric!r} does not score several classes; use one of {', '.join(COLUMN_METRICS)}"
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
        ``"log_loss"`` is the cross-entropy of ``predict_proba`` (p = 1 / (1 + e^{-2F})). With
        several margin columns: ``"log_loss"`` (of the class probabilities, or the mean over
        labels for multi-label data), ``"exponential_loss"`` (over the pairs) or
        ``"accuracy"`` (1 - the validation error: argmax, or 1 - Hamming loss).
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

    @property
    def provides(self) -> frozenset:
        """``"multiclass"``, and ``"distributed"`` for a metric of :data:`MEAN_METRICS`: the
        validation rows may then live on shards, scored by sums over them."""
        if self.distributed_refusal:
            return frozenset({MULTICLASS})
        return frozenset({MULTICLASS, DISTRIBUTED})

    @property
    def distributed_refusal(self) -> str | None:
        """Why the rule does not distribute with its metric, or ``None``."""
        if self.metric in MEAN_METRICS:
            return None
        return (f"scores the validation rows with {self.metric!r}, which compares or counts "
                "rows across all the shards; on shards the rule scores "
                f"{', '.join(MEAN_METRICS)} (weighted means over the rows, summed over the "
                "shards)")

    @hookimpl
    def boostkit_validation_fraction(self):
        return self.validation_fraction

    @hookimpl
    def boostkit_fit_start(self, state):
        # A refit must not inherit the previous fit's best round.
        self._best_round, self._best_loss = None, math.inf

    @hookimpl
    def boostkit_validation_score(self, state):
        return {self.metric: state.validation.score(self.metric)}

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

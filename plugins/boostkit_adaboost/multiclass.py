"""Multi-class AdaBoost: Kégl's discrete AdaBoost.MH and SAMME.

Both run on the engine's (example, class) pairs (Schapire & Singer 1999, sections 7-9): margins
F(x, l), signs Y(i, l) = +1 for the label(s) of example i, weights D(i, l).

* ``vote-alpha``: discrete AdaBoost.MH with factorised hypotheses h(x, l) = alpha v_l phi(x),
  phi a two-cell partition valued -1 / +1 and v in {-1, +1}^C a vote vector (Kégl 2013, "The
  return of AdaBoost.MH: multi-class Hamming trees", section 3).
* ``samme-alpha``, ``samme-weights``, ``samme-no-edge``: SAMME (Zhu, Zou, Rosset & Hastie 2009,
  "Multi-class AdaBoost", Algorithm 2), the algorithm of scikit-learn's ``AdaBoostClassifier``: a
  K-ary labelling of the cells, alpha = ln((1 - eps) / eps) + ln(K - 1), and example weights
  multiplied by e^alpha where the labelling is wrong.

SAMME in the pair form. Each term adds c(x, l) = alpha (1 - 1/K) where the cell's label is l and
-alpha/K elsewhere (Zhu et al.'s symmetric, sum-to-zero coding), so
F(x, l) = sum_t alpha_t ([h_t(x) = l] - 1/K): its argmax is SAMME's (scikit-learn's
``sum_t alpha_t [h_t(x) = l]`` less a constant per row). The weights live on the pairs (i, y_i)
of the true labels: D(i, y_i) proportional to D_1(i) exp(-F(x_i, y_i)), which is proportional
to D_1(i) exp(sum_t alpha_t [h_t(x_i) != y_i]), SAMME's weights exactly. The engine's weighted
error of a term is then eps_t, and its potential sum_i D_1(i) exp(-F(x_i, y_i)) is Zhu et al.'s
multi-class exponential loss exp(-y^T f / K) (section 2.1), with
Z_t = (1 - eps) e^{-alpha (K-1)/K} + eps e^{alpha/K} < 1 whenever eps < 1 - 1/K; it bounds
sum_i D_1(i) [F(x_i, y_i) <= 0]. With two classes SAMME is discrete AdaBoost.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED, SINGLE_LABEL
from boostkit.contributions import cell_values
from boostkit.criteria import MULTICLASS_CRITERIA, weighted_error
from boostkit.kernels.boosting import exponential_distribution
from boostkit.smoothing import check_smoothing, n_examples, resolve_smoothing
from boostkit.splits import TIE_TOLERANCE

from .multiclass_kernels import gather_true_pairs, scatter_true_pairs
from .reweighting import ExponentialReweighting

#: A plugin capability: the calibration records SAMME's weighted K-ary error eps_t.
CLASS_ERROR = boostkit.Capability(
    "class-error",
    "the round's weighted error of a K-ary labelling, recorded as record.extra['class_error']",
    "calibration",
)


def _per_class(wpos: np.ndarray, wneg: np.ndarray):
    """Cell sums as ``(..., K, C)``: binary ``(..., K)`` sums are one column."""
    if wpos.ndim == 1:
        return wpos[:, None], wneg[:, None]
    return wpos, wneg


@attrs.define
class VoteAlpha(boostkit.Calibration):
    """Discrete AdaBoost.MH: h(x, l) = alpha v_l phi(x) on a two-cell partition (Kégl 2013).

    phi is -1 on cell 0 and +1 on cell 1. Per class l the edge of phi is
    mu_l = sum_j phi_j (W+_jl - W-_jl); the best vote is v_l = sign(mu_l) (+1 when mu_l = 0),
    the edge of the whole hypothesis gamma = sum_l |mu_l|, and alpha = 1/2 ln((1 + gamma) /
    (1 - gamma)), written as 1/2 ln((1 - eps + s) / (eps + s)) with eps = (1 - gamma) / 2, the
    weighted Hamming error, so ``smoothing`` s (default 0, floored) keeps a perfect hypothesis
    finite. The partition loss offered to the weak learner is that eps. The contribution stores
    the per-cell, per-class values alpha phi_j v_l. With one margin column it is discrete
    AdaBoost on phi.
    """

    name = "vote-alpha"
    needs = frozenset({"cells", "two-cells"})
    provides = frozenset({"running-margin", "multiclass", DISTRIBUTED})
    smoothing: float | None = attrs.field(default=0.0, validator=check_smoothing)

    @staticmethod
    def _edges(wpos, wneg):
        """mu_l of every candidate: ``(..., C)``."""
        wpos, wneg = _per_class(wpos, wneg)
        net = wpos - wneg
        return net[..., 1, :] - net[..., 0, :]

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg, n_columns):
        if n_columns == 1:  # (..., 2): one class axis to add
            wpos, wneg = wpos[..., None], wneg[..., None]
        return 0.5 * (1.0 - np.abs(self._edges(wpos, wneg)).sum(axis=-1))

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        if candidate.hypothesis.n_cells != 2:
            raise ValueError(
                f"{self.name} needs a two-cell hypothesis, got {candidate.hypothesis.n_cells} cells"
            )
        wneg, wpos = state.cell_weights(candidate)
        mu = self._edges(wpos, wneg)
        votes = np.where(mu >= 0.0, 1.0, -1.0)
        gamma = min(float(np.abs(mu).sum()), 1.0)
        eps = 0.5 * (1.0 - gamma)
        s = resolve_smoothing(self.smoothing, n_examples(state.data) * state.data.n_columns)
        alpha = 0.5 * math.log((1.0 - eps + s) / (eps + s))
        values = alpha * np.outer([-1.0, 1.0], votes)  # (2 cells, C)
        if state.data.n_columns == 1:
            values = values[:, 0]
        return boostkit.Calibrated(
            boostkit.CellContribution(values), cell_values(values, candidate), (alpha, *votes),
            extra={"gamma": gamma},
        )


@attrs.define
class SammeAlpha(boostkit.Calibration):
    """SAMME's coefficient alpha = ln((1 - eps + s) / (eps + s)) + ln(K - 1) (Zhu et al. 2009,
    Algorithm 2, step 2(c)).

    Each cell j is labelled with its heaviest class k_j = argmax_l W+_jl (ties, within 1e-12
    relative: the first class, as a classification tree predicts), eps is the weight of the
    examples whose class is not their cell's label, over the total (the weights of the
    true-label pairs; with ``samme-weights`` all the weight is there). When eps >= 1 - 1/K the labelling is no better
    than chance: alpha is 0, the term changes nothing, and ``samme-no-edge`` ends the run, as
    scikit-learn drops such an estimator and stops. The contribution is alpha (1 - 1/K) on each
    cell's class and -alpha/K on the others (see the module docstring). The partition loss offered to
    the weak learner is the weighted K-ary error; ``smoothing`` (default 0, floored) keeps a
    perfect labelling's alpha finite. ``learning_rate`` nu (default 1) multiplies alpha, as
    scikit-learn's ``AdaBoostClassifier(learning_rate=nu)`` does: the term and the reweighting
    both use nu alpha. ``cell_labels="index"`` labels cell j with class j instead of its
    heaviest class, for hypotheses whose cells are the class they predict (the
    ``sklearn-estimator`` proposal's): eps is then the weighted error of those predictions, as
    scikit-learn computes it, also for an estimator that does not predict the weighted majority
    of its own partition. Needs single-label classes. eps is summed over the examples (over the
    cells' sums in a distributed fit), so that it is 0 exactly when the labelling is perfect.
    """

    name = "samme-alpha"
    needs = frozenset({"cells", SINGLE_LABEL})
    provides = frozenset({"running-margin", "multiclass", "class-error", DISTRIBUTED})
    smoothing: float | None = attrs.field(default=0.0, validator=check_smoothing)
    learning_rate: float = attrs.field(
        default=1.0, converter=float,
        validator=[attrs.validators.gt(0.0), attrs.validators.lt(math.inf)],
    )
    cell_labels: str = attrs.field(default="heaviest",
                                   validator=attrs.validators.in_(("heaviest", "index")))

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg, n_columns):
        if n_columns == 1:  # two classes: the majority labelling's error
            return weighted_error(wpos, wneg)
        return MULTICLASS_CRITERIA["error"](wpos, wneg)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        data = state.data
        if data.multilabel:
            raise ValueError(f"{self.name} needs single-label classes, got a multi-label matrix")
        wneg, wpos = state.cell_weights(candidate)
        if data.n_columns == 1:  # the two classes' weights per cell: (K, 2)
            class_weights = np.stack([wneg, wpos], axis=-1)
        else:
            class_weights = wpos
        n_classes = class_weights.shape[-1]
        if self.cell_labels == "index":
            if class_weights.shape[0] != n_classes:
                raise ValueError(
                    f"{self.name}(cell_labels='index') needs one cell per class, got "
                    f"{class_weights.shape[0]} cells for {n_classes} classes"
                )
            cell_labels = np.arange(n_classes)
        else:
            # Classes within TIE_TOLERANCE (relative) of the heaviest are tied: the order of
            # the histogram's sums must not pick among them, the first class wins.
            heaviest = class_weights.max(axis=-1, keepdims=True)
            cell_labels = np.argmax(class_weights >= heaviest - TIE_TOLERANCE * heaviest, axis=-1)
        if candidate.has_rows:
            eps = _row_error(state, candidate.cells, cell_labels)
        else:  # a distributed fit: from the cells' sums, 0 up to rounding when perfect
            total = class_weights.sum()
            right = np.take_along_axis(class_weights, cell_labels[:, None], axis=-1).sum()
            eps = max(0.0, float((total - right) / total)) if total > 0 else 0.0
        # The floor of a zero smoothing only keeps a perfect labelling's alpha finite: a tiny
        # eps > 0 keeps the textbook alpha (scikit-learn's, whose weights are floored at eps).
        s = (0.0 if self.smoothing == 0 and eps > 0
             else resolve_smoothing(self.smoothing, n_examples(data)))
        if eps >= 1.0 - 1.0 / n_classes:
            alpha = 0.0
        else:
            alpha = self.learning_rate * (
                math.log((1.0 - eps + s) / (eps + s)) + math.log(n_classes - 1.0))
        coded = np.full(class_weights.shape, -alpha / n_classes)
        coded[np.arange(coded.shape[0]), cell_labels] = alpha * (1.0 - 1.0 / n_classes)
        values = coded[:, 1] if data.n_columns == 1 else coded
        # take copies whole rows: several times faster than indexing by the n cells.
        return boostkit.Calibrated(
            boostkit.CellContribution(values),
            np.take(values, candidate.cells, axis=0) if candidate.has_rows else None, (alpha,),
            extra={"class_error": eps, "n_classes": n_classes},
        )


def _row_error(state, cells: np.ndarray, cell_labels: np.ndarray) -> float:
    """eps = sum_i D_t(i) [k_{cell(i)} != y_i] / sum_i D_t(i), over the true-label pairs'
    weights, as scikit-learn's ``np.average(incorrect, weights=sample_weight)``."""
    labels, weights = _true_pairs(state.data, state.weights)
    total = weights.sum()
    if not total > 0:
        return 0.0
    return float(np.average(cell_labels[cells] != labels, weights=weights))


def _true_pairs(data, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, values)``: each example's class index and the value of ``pairs`` (weights or
    margins: ``(n,)`` with two classes, ``(n, C)`` otherwise) on its true-label pair."""
    if data.n_columns == 1:
        return (data.y > 0).astype(np.intp), pairs
    values = np.empty(data.n_samples)
    gather_true_pairs(pairs, data.labels, values)
    return data.labels, values


@attrs.define
class SammeWeights(ExponentialReweighting):
    """SAMME's example weights as a distribution on the true-label pairs (i, y_i).

    D_1(i, y_i) = D_1(i) and 0 on every other pair (``boostkit_initial_weights``); then, as
    ``exponential``, D_{t+1}(i, l) proportional to D_1(i, l) exp(-Y(i, l) F_t(x_i, l)), which on
    the true-label pairs is D_1(i) exp(-F_t(x_i, y_i)), SAMME's weights (Zhu et al. 2009,
    Algorithm 2, step 2(d); module docstring). With two classes it is ``exponential``.

    Every data plane (``"distributed"``, with ``floor`` 0): the start is also given row by row
    (``boostkit_row_initial_weights``, each shard's true-label pairs when it is built), and the
    weights are ``exponential``'s row form, which is 0 off the true-label pairs since D_1 is.

    ``floor`` > 0 (scikit-learn's is float64 eps) gives scikit-learn's ``AdaBoostClassifier``
    weights instead: multiplied each round, D_{t+1}(i) = D_t(i) e^{alpha_t [h_t(x_i) != y_i]}
    normalised, then raised to at least ``floor`` (rows of initial weight 0 stay 0). Once
    floored, a weight remembers the floor, so these are no longer a function of the margins:
    at large learning rates they keep the examples that the margins' weights would round to 0
    (an error of 1e-14 is then no perfect fit). When the multiplied weights overflow, the run
    stops (``weights_overflow`` in the record's ``extra``; ``samme-no-edge`` says
    ``"weights-overflow"``). alpha_t and the mistakes are read off the round's change of the
    true-label margins. No potential is reported.
    """

    name = "samme-weights"
    needs = frozenset({SINGLE_LABEL})
    floor: float = attrs.field(default=0.0, converter=float,
                               validator=[attrs.validators.ge(0.0), attrs.validators.lt(1.0)])
    _margins: np.ndarray | None = attrs.field(default=None, init=False, repr=False, eq=False)

    @property
    def provides(self) -> frozenset[str]:
        # Floored weights remember the floor from round to round: no function of the margins,
        # so no row form.
        distributed = {DISTRIBUTED} if self.floor == 0 else set()
        return frozenset({"potential", "multiclass"} | distributed)

    @property
    def distributed_refusal(self) -> str | None:
        """Why this reweighting cannot run on shards, or ``None`` when it can."""
        if self.floor == 0:
            return None
        return (f"with floor={self.floor:g} multiplies each round's weights and raises them to "
                "the floor after normalising them over all rows, so its weights are no function "
                "of the margins (no row form); floor=0 (the default) distributes")

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        self._margins = None  # the true-label margins after the last round (floor > 0)

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        data = state.data
        if self.floor > 0:
            return self._floored(state)
        if data.n_columns == 1:
            return super().boostkit_reweight(state)
        # Only the true-label pairs carry weight: the exponential over those n margins, not nC.
        margins, d1 = np.empty(data.n_samples), np.empty(data.n_samples)
        gather_true_pairs(state.margin, data.labels, margins)
        gather_true_pairs(state.initial_weights, data.labels, d1)
        on_labels, log_potential = exponential_distribution(
            margins, np.ones(data.n_samples), d1, state.n_jobs)
        weights = np.empty(state.margin.shape)
        scatter_true_pairs(on_labels, data.labels, weights)
        return boostkit.Weights(weights, log_potential)

    def _floored(self, state):
        data = state.data
        labels, margins = _true_pairs(data, state.margin)
        weights = _true_pairs(data, state.weights)[1]
        initial = _true_pairs(data, state.initial_weights)[1]
        if data.n_columns == 1:
            margins = data.y * margins
        change = margins if self._margins is None else margins - self._margins
        self._margins = margins
        if state.round == state.n_rounds:  # no later round to weigh (scikit-learn skips it)
            return boostkit.Weights(state.weights, None)
        # A term adds alpha (K-1)/K to a right example's true-label margin and -alpha/K to a
        # wrong one's (alpha/2 and -alpha/2 with two classes).
        n_classes = 2 if data.n_columns == 1 else data.n_columns
        alpha = max(float(change.max()), 0.0) * n_classes / (n_classes - 1)
        incorrect = change < 0
        # log 0 for rows of weight 0; an overflow of exp is the stop below, not a warning.
        with np.errstate(divide="ignore", over="ignore"):
            updated = np.exp(np.log(weights) + alpha * incorrect * (weights > 0))
        total = updated.sum()
        if not np.isfinite(total):
            return boostkit.Weights(state.weights, None, extra={"weights_overflow": True})
        updated = np.where(initial > 0, np.maximum(updated / total, self.floor), 0.0)
        if data.n_columns == 1:
            return boostkit.Weights(updated, None)
        out = np.empty(state.margin.shape)
        scatter_true_pairs(updated, labels, out)
        return boostkit.Weights(out, None)

    @boostkit.hookimpl
    def boostkit_initial_weights(self, data):
        return self.boostkit_row_initial_weights(data.y, data.labels, data.sample_weight)

    @boostkit.hookimpl
    def boostkit_row_initial_weights(self, y, labels, sample_weight):
        if y.ndim == 1:
            return None
        if labels is None:
            raise ValueError(
                f"{self.name} needs single-label classes (one true class per example), got a "
                "multi-label indicator matrix; use adaboost-mh for multi-label data"
            )
        d1 = np.zeros(y.shape)
        d1[np.arange(y.shape[0]), labels] = sample_weight
        return d1


@attrs.define
class SammeNoEdge(boostkit.Stopping):
    """Stop when SAMME's labelling is no better than chance, or perfect.

    ``"no-edge"`` when eps_t >= 1 - 1/K (Zhu et al. 2009: the weak learner must beat random
    guessing among K classes, not 1/2), ``"perfect-fit"`` when eps_t = 0,
    ``"weights-overflow"`` when ``samme-weights(floor > 0)`` could not weigh the next round.
    Reads the error the calibration records (``record.extra["class_error"]``).
    """

    name = "samme-no-edge"
    needs = frozenset({"class-error"})
    provides = frozenset({"multiclass", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        eps, n_classes = record.extra["class_error"], record.extra["n_classes"]
        if record.extra.get("weights_overflow"):
            return "weights-overflow"
        if eps <= 0.0:
            return "perfect-fit"
        if eps >= 1.0 - 1.0 / n_classes:
            return "no-edge"
        return None

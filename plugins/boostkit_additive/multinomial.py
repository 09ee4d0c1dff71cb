"""Multinomial LogitBoost (FHT Algorithm 6): Newton steps on the multinomial log-likelihood.

FHT Algorithm 6, for J classes, with y*_ij = 1 when example i is of class j and 0 otherwise:
start with w_ij = 1/N, F_j(x) = 0 and p_j(x) = 1/J; for m = 1..M,

(a) for j = 1..J: (i) the working response and weights of class j,
    z_ij = (y*_ij - p_j(x_i)) / (p_j(x_i)(1 - p_j(x_i))),  w_ij = p_j(x_i)(1 - p_j(x_i));
    (ii) fit f_mj by weighted least squares of z_ij on x_i with weights w_ij;
(b) f_mj <- (J - 1)/J (f_mj - 1/J sum_k f_mk),  F_j <- F_j + f_mj;
(c) p_j(x) = e^{F_j(x)} / sum_k e^{F_k(x)} (the symmetric multinomial, sum_j F_j = 0);

and classify by argmax_j F_j(x). How this maps onto boostkit:

**Margins.** boostkit reads C margin columns as the half log-odds of each class against the
rest: every model's ``predict_proba`` is sigma(2 G_l) normalised over the classes
(``boostkit.model.margin_probabilities``). The margins this algorithm keeps are therefore not
F_j but G_j = 1/2 log(p_j / (1 - p_j)) of its softmax probabilities p_j
(:func:`boostkit_additive.kernels.class_half_log_odds`). Their sigma(2 G_j) are the p_j and
already sum to 1, so ``predict_proba`` is exactly softmax(F), ``predict`` (argmax G = argmax
p = argmax F) is Algorithm 6's classifier, and neither the engine, the model nor its file format
needed to learn about softmax logits. F is recovered from G up to a constant per example, which
the softmax ignores (the paper fixes it by sum_j F_j = 0): F_j = log sigma(2 G_j). A round's term
is the change G(F + f_m) - G(F) that step (b) makes, a function of the running margin (as
WeightBoost's input-dependent terms are), computed in log space (``softmax-step``);
``decision_function`` returns G, not F.

On these margins the quantities of step (a)(i) are the binomial ones of each column: with
p_j = sigma(2 G_j), z_ij = y_ij (1 + e^{-2 y_ij G_ij}) and w_ij = p_ij (1 - p_ij), the kernels of
Algorithm 3 (:mod:`boostkit_additive.kernels`) over the (example, class) pairs, on margins
normalised first (:func:`softmax_margins`), so that p is the model's ``predict_proba`` whatever
calibration made them.

**The per-class regressions.** FHT fit J regression functions f_m1..f_mJ per round; the engine
adds one hypothesis per round. Here that hypothesis is J stumps, one per class
(``class-stumps``): ``multinomial-stumps`` picks each class's cut by the weighted least-squares
fit of that class's z_ij alone (the criterion of ``logit-stump``, on one column), and
``multinomial-step`` gives the two sides of class j's stump the weighted means of z_ij, the
least-squares values of f_mj. The contribution then applies step (b) on every example: each
f_mj(x) evaluated on its own stump, centred over the classes and scaled by (J - 1)/J. So every
class has its own regression function, exactly as in the paper with stumps as the regression
method; the classes share only the round. What differs from the paper as printed:

* z is clipped to |z| <= ``z_max`` (default 4), as ``logit-stump``/``logit-step`` clip it (FHT's
  stabilisation of the response where p(1 - p) is near 0, with z_max in [2, 4]); Algorithm 6
  states no clipping;
* the weights are D_1(i) p_ij (1 - p_ij) normalised over all pairs (sample weights D_1), the
  paper's 1/N start being D_1 uniform: the common scale changes no per-class fit;
* there is no weight trimming (FHT's speed-up that drops the examples of smallest weight).

**Two classes.** With J = 2, z_i2 = -z_i1 and the weights are equal, so both classes pick the same
stump, f_m2 = -f_m1, the centred step is f_m1/2 and p_1 = sigma(2 F_1): Algorithm 3. On one
margin column the components compute exactly that, with ``logitboost``'s kernels and in its order,
so ``multinomial-logitboost`` on two classes fits ``logitboost``'s model.

**Round batches.** On two classes the components have compiled forms (``logitboost``'s
histogram, search and weights, :mod:`boostkit.compiled`), so a binary fit runs its rounds in one
compiled call, giving the model of the rounds one by one; with several margin columns the rounds
run one by one (a batch fits one column).

**Potential.** ``multinomial-weights`` reports sum_i D_1(i) (-log2 p_{y_i}(x_i)), the negative
multinomial log-likelihood in bits. An example whose class is not the argmax has p_y <= 1/2, so
its term is >= 1 and the potential bounds the D_1-weighted error of ``predict`` (not the pair
error the engine records as ``training_error``, which counts the pairs where p_il > 1/2 disagrees
with the label); it starts at log2 J. A Newton step need not lower it every round. With the
``learning-rate`` wrapper each round's change of G is multiplied by nu, which agrees with
F + nu f_m to first order in nu, not exactly.
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import SINGLE_LABEL
from boostkit.compiled import (CALIBRATION, HISTOGRAM, SEARCH, CompiledCalibration,
                               CompiledProposal, compile_form)
from boostkit.kernels.blocks import histogram_threads
from boostkit.kernels.boosting import take_cells
from boostkit.losses import get_loss, margin_loss_distribution
from boostkit.splits import TIE_TOLERANCE

from .kernels import (class_log_sigmoids, least_squares_cut, least_squares_search,
                      moved_half_log_odds, response_histogram, response_weights,
                      working_response)
from .logit import LogitWeights, _cell_means, _z_max, class_histograms, stacked_histograms

#: A plugin capability: the weak learner fitted one regression stump per class to Algorithm 6's
#: working responses, which ``multinomial-step`` gives its per-class values.
MULTINOMIAL_RESPONSE = boostkit.Capability(
    "multinomial-response",
    "weak learners that fit one regression stump per class to the working responses z_ij of "
    "multinomial LogitBoost (FHT Algorithm 6, step 2(a)(ii))",
    "proposal",
)


def _check_single_label(data, component: str) -> None:
    if data.multilabel:
        raise ValueError(
            f"{component} needs single-label classes (FHT Algorithm 6's softmax over J classes), "
            "got a multi-label indicator matrix; use logitboost for one logistic model per label"
        )


def class_logits(margin: np.ndarray) -> np.ndarray:
    """s_j = log sigma(2 G_j): the logits of the class probabilities the margins G stand for,
    F_j up to a constant per example (FHT Algorithm 6's F)
    (:func:`boostkit_additive.kernels.class_log_sigmoids`)."""
    margin = np.ascontiguousarray(margin, dtype=np.float64)
    out = np.empty(margin.shape)
    class_log_sigmoids(margin.ravel(), out.ravel())
    return out


def softmax_margins(margin: np.ndarray) -> np.ndarray:
    """The half log-odds of ``margin_probabilities(margin)``: G itself when its sigma(2 G) sum to 1.

    One column (two classes) is already its own half log-odds, p = sigma(2F), and is returned as
    it is. Several: :func:`boostkit_additive.kernels.moved_half_log_odds` of the class logits
    unmoved.
    """
    if margin.ndim == 1:
        return margin
    margin = np.ascontiguousarray(margin, dtype=np.float64)
    out = np.empty_like(margin)
    moved_half_log_odds(margin, margin, 0.0, out)
    return out


def working_responses(margin: np.ndarray, y: np.ndarray, z_max: float) -> np.ndarray:
    """z_ij = (y*_ij - p_ij) / (p_ij (1 - p_ij)) (Algorithm 6, step 2(a)(i)), clipped to
    |z| <= z_max, shaped like the margins: ``working_response`` on :func:`softmax_margins`."""
    g = softmax_margins(margin)
    z = np.empty(g.size)
    working_response(g.ravel(), y.ravel(), z_max, z)
    return z.reshape(g.shape)


def centred_step(cell_values: np.ndarray, sides: np.ndarray) -> np.ndarray:
    """Algorithm 6, step 2(b): (J - 1)/J (f_mj(x) - 1/J sum_k f_mk(x)) per example and class.

    ``cell_values`` is ``(2, C)``, f_mj on the two sides of class j's stump, and ``sides``
    ``(n, C)`` the side of every example on each class's stump. With one column (J = 2,
    f_m2 = -f_m1) the step is f_m1 / 2, ``(n,)``.

    A row's step depends on its sides alone: with fewer patterns of sides (2^C) than rows,
    the step of every pattern is computed once (row by row the same operations) and each row
    takes its pattern's, where the mean over a handful of classes per row cost ~13 ns a pair
    (numpy's reductions over a short last axis). Only for C-ordered ``sides``: numpy adds the
    classes of an array in another memory order in another order (other bits from 8 on).
    """
    n, n_classes = sides.shape
    if n_classes > 1 and 1 << n_classes < n and sides.flags.c_contiguous:
        patterns = (np.arange(1 << n_classes)[:, None] >> np.arange(n_classes)) & 1
        pattern = sides[:, 0].astype(np.intp)  # sum_j sides_ij 2^j
        for j in range(1, n_classes):
            pattern |= sides[:, j].astype(np.intp) << j
        return np.take(centred_step(cell_values, patterns), pattern, axis=0)
    # A gather from the two sides' values (a select: sides are 0 or 1).
    f = np.where(sides.astype(bool), cell_values[1], cell_values[0])
    if n_classes == 1:
        return 0.5 * f[:, 0]
    f -= f.mean(axis=1, keepdims=True)  # in place: no new (n, C) array to fault in
    f *= (n_classes - 1) / n_classes
    return f


def margin_change(margin: np.ndarray, step: np.ndarray) -> np.ndarray:
    """G(F + f) - G(F): the change of the margins when the logits F move by ``step``
    (:func:`boostkit_additive.kernels.moved_half_log_odds`, F = log sigma(2 G)).

    One column: the margin is F itself, so the change is the step.
    """
    if margin.ndim == 1:
        return step
    margin = np.ascontiguousarray(margin, dtype=np.float64)
    moved = np.empty_like(margin)
    moved_half_log_odds(margin, np.ascontiguousarray(step, dtype=np.float64), 1.0, moved)
    moved -= margin
    return moved


def _int_vector(value) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.int64)
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError(f"features must be a non-empty 1-D array, got shape {arr.shape}")
    return arr


@attrs.frozen
class ClassStumps(boostkit.WeakHypothesis):
    """One stump per class: class j's side is 1 where x[features[j]] > thresholds[j], else 0.

    The partition of FHT Algorithm 6's f_mj for each class j (with one column, two classes, the
    one stump of Algorithm 3). A threshold of inf puts every example on side 0: the constant
    regression function, for a class whose response no feature can split. It gives per-class
    sides, not one real score or one partition: only calibrations that need
    ``"multinomial-response"`` use it.
    """

    name = "class-stumps"

    features: np.ndarray = boostkit.feature_field(converter=_int_vector, eq=False)
    thresholds: np.ndarray = attrs.field(converter=boostkit.float_vector, eq=False)

    def __attrs_post_init__(self):
        if self.thresholds.shape != self.features.shape:
            raise ValueError(
                f"thresholds must have one entry per class, like features {self.features.shape}, "
                f"got shape {self.thresholds.shape}"
            )

    def sides(self, X: np.ndarray) -> np.ndarray:
        """``(n, C)``: the side (0 or 1) of every row of ``X`` on each class's stump."""
        return (X[:, self.features] > self.thresholds).astype(np.intp)

    def scores(self, X: np.ndarray) -> np.ndarray:
        raise TypeError(f"weak hypothesis {self.name!r} gives one stump per class, not one score")

    def describe(self) -> str:
        return "; ".join("constant" if np.isinf(t) else f"x[{f}] <= {t:.6g}"
                         for f, t in zip(self.features, self.thresholds))


@attrs.define
class MultinomialStumps(boostkit.Proposal):
    """One regression stump per class, each fitted by weighted least squares to its z_ij.

    FHT Algorithm 6, step 2(a)(ii), with stumps: for every class j, among every feature and bin
    edge, the cut whose two-side fit of z_ij (weights ``state.weights``, the w_ij = p_ij (1 - p_ij)
    of ``multinomial-weights``) leaves the smallest weighted squared error, from the histograms of
    w and w|z| over the (example, class) pairs, as ``logit-stump`` searches one column. With one
    margin column this is ``logit-stump``'s cut. Proposes a ``class-stumps``; ``z_max`` must
    equal ``multinomial-step``'s.
    """

    name = "multinomial-stumps"
    needs = frozenset({SINGLE_LABEL})
    provides = frozenset({"multiclass", "multinomial-response"})
    shared_params = ("z_max",)
    z_max: float = attrs.field(default=4.0, converter=float, validator=_z_max)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        data, binned = state.data, state.data.binned
        _check_single_label(data, self.name)
        n_columns = data.n_columns
        hists = class_response_histograms(state, self.z_max)  # (C, d, B, 2, 2)
        valid = binned.split_mask
        features = np.zeros(n_columns, dtype=np.int64)
        thresholds = np.full(n_columns, np.inf)
        sides = np.zeros((data.n_samples, n_columns), dtype=np.uint8)
        # Each class's sides' sums of w and of w|z|, (C, side, [w, w|z|]), over its negative
        # and its positive pairs.
        wneg, wpos = np.zeros((n_columns, 2, 2)), np.zeros((n_columns, 2, 2))
        scores = np.empty(valid.shape)
        for j in range(n_columns):
            # Class j's own fit, searched as logit-stump searches one column: the cut of least
            # weighted squared error of z_ij (the split least_squares_split finds).
            k = (least_squares_cut(hists[j], valid, TIE_TOLERANCE, scores, wneg[j], wpos[j])
                 if valid.size else -1)
            if k < 0:  # every feature is constant: the constant function
                wneg[j, 0], wpos[j, 0] = hists[j, 0].sum(axis=0)
            else:
                feature, cut = divmod(k, valid.shape[1])
                features[j] = feature
                thresholds[j] = binned.thresholds[feature][cut]
                np.greater(binned.codes[feature], cut, out=sides[:, j].view(bool))
        # Each side's sum of w (row 0) and of w z (row 1), per class: (2, 2, C).
        sums = np.stack([wneg[:, :, 0] + wpos[:, :, 0],
                         wpos[:, :, 1] - wneg[:, :, 1]]).transpose(0, 2, 1)
        return boostkit.Candidate(ClassStumps(features, thresholds), data.X,
                                  info={"sides": sides, "response_sums": sums})

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        # One margin column on ordered data: logit-stump's least-squares search of its
        # histogram of w and w |z|, the cut least_squares_split finds.
        data, binned = state.data, state.data.binned
        _check_single_label(data, self.name)
        if not binned.ordered or data.n_columns != 1:
            return None
        return CompiledProposal(_compiled_search, _OneClassStump(binned.thresholds).hypothesis,
                                criterion=MULTINOMIAL_RESPONSE.name,
                                params=[self.z_max, TIE_TOLERANCE],
                                histogram=compile_form(response_histogram, HISTOGRAM),
                                histogram_width=4)


def _compiled_search(criterion: str):
    """``multinomial-stumps``' compiled search on one margin column: ``logit-stump``'s."""
    return (compile_form(least_squares_search, SEARCH) if criterion == MULTINOMIAL_RESPONSE.name
            else None)


class _OneClassStump:
    """Builds a batch's ``class-stumps`` of one class from their cuts, as
    :meth:`MultinomialStumps.boostkit_propose` makes them from the same split (bin -1: the
    constant stump, feature 0 and threshold inf). A cut chosen again gives the same object, which
    the engine describes once."""

    def __init__(self, thresholds):
        self.thresholds = thresholds
        self.made = {}

    def hypothesis(self, feature: int, bin: int, wneg, wpos, cell_scores) -> ClassStumps:
        stump = self.made.get((feature, bin))
        if stump is None:
            threshold = np.inf if bin < 0 else self.thresholds[feature][bin]
            stump = self.made[feature, bin] = ClassStumps(np.array([feature if bin >= 0 else 0]),
                                                          np.array([threshold]))
        return stump


def class_response_histograms(state, z_max: float) -> np.ndarray:
    """``(C, d, B, 2, 2)``: class by class, the class histograms of w and of w |z| of its pairs,
    z Algorithm 6's working response from the normalised margins (:func:`softmax_margins`).

    ``[l, f, b, s, channel]``: in bin b of feature f, the weight w (channel 0) and the w |z|
    (channel 1) of class l's negative (s = 0) and positive (s = 1) pairs, the layout
    :func:`boostkit_additive.kernels.least_squares_cut` reads, one class at a time, with no
    copy. The sums of ``logit-stump``'s histograms (:func:`boostkit_additive.logit.
    stacked_histograms`, bit for bit), with one margin column its one histogram: on one thread,
    :func:`boostkit_additive.logit.class_histograms`; on threads, ``stacked_histograms``'
    columns taken class by class.
    """
    data, binned = state.data, state.data.binned
    codes, n_columns = binned.codes, data.n_columns
    g = softmax_margins(state.margin)
    values = np.empty(g.shape)
    response_weights(g.ravel(), data.y.ravel(), state.weights.ravel(), z_max, values.ravel())
    if histogram_threads(codes, state.n_jobs) > 1:
        stacked = stacked_histograms(codes, state.weights, values, data.is_pos, binned.max_bins,
                                     state.n_jobs)  # (d, B, [w, w|z|] x C, s)
        d, n_bins = stacked.shape[:2]
        return np.ascontiguousarray(
            stacked.reshape(d, n_bins, 2, n_columns, 2).transpose(3, 0, 1, 4, 2))
    return class_histograms(codes, state.weights, values, data.is_pos, binned.max_bins)


def _check_cell_values(value) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != 2:
        raise ValueError(f"cell_values must have shape (2, C), got {arr.shape}")
    return arr


@attrs.frozen
class SoftmaxStep(boostkit.Contribution):
    """The change of the margins by Algorithm 6's centred step 2(b), then 2(c).

    ``cell_values`` ``(2, C)`` holds f_mj on the two sides of class j's stump (the hypothesis is a
    ``class-stumps``). Given the running margins G_{t-1}: f_mj(x) from each class's stump, centred
    and scaled (:func:`centred_step`), added to the logits F = log sigma(2 G_{t-1}), and returned
    as G(F + f_m) - G_{t-1} (:func:`margin_change`); with one column, f_m1(x) / 2.
    """

    name = "softmax-step"
    cell_values: np.ndarray = attrs.field(converter=_check_cell_values, eq=False)

    def values(self, output, margin: np.ndarray) -> np.ndarray:
        sides = output.hypothesis.sides(output.X)
        return margin_change(margin, centred_step(self.cell_values, sides))


@attrs.define
class MultinomialStep(boostkit.Calibration):
    """Algorithm 6's per-class Newton values: f_mj = sum w_ij z_ij / sum w_ij on each side.

    FHT Algorithm 6, step 2(a)(ii) on the stump of each class (the weighted least-squares fit of
    z_ij, clipped to |z| <= ``z_max``, with weights ``state.weights``), then steps 2(b)-(c) by the
    contribution ``softmax-step``. z is computed from ``state.margin`` and the labels, as
    ``logit-step`` does, so every |f_mj| <= z_max. Needs the ``class-stumps`` of a proposal that
    fitted them to z (``"multinomial-response"``, from ``multinomial-stumps``); ``z_max`` must
    equal the proposal's. Coefficients recorded: f_mj per side and class, before centring.
    """

    name = "multinomial-step"
    needs = frozenset({"multinomial-response", SINGLE_LABEL})
    provides = frozenset({"running-margin", "multiclass"})
    shared_params = ("z_max",)
    z_max: float = attrs.field(default=4.0, converter=float, validator=_z_max)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        data = state.data
        _check_single_label(data, self.name)
        sides = candidate.info.get("sides")
        if sides is None:
            sides = candidate.hypothesis.sides(candidate.X)
        sums = candidate.info.get("response_sums")
        if sums is None:  # from the rows: z and w per class and side
            z = working_responses(state.margin, data.y, self.z_max).reshape(data.n_samples, -1)
            weights = state.weights.reshape(data.n_samples, -1)
            cell_values = np.stack([_cell_means(sides[:, j], weights[:, j], z[:, j], 2)
                                    for j in range(sides.shape[1])], axis=1)
        else:  # the proposal's sums of w and w z per side and class
            cell_values = np.divide(sums[1], sums[0], out=np.zeros_like(sums[0]),
                                    where=sums[0] > 0)
        contribution = SoftmaxStep(cell_values)
        if data.n_columns == 1:  # the step f_m1 / 2 of Algorithm 3, one gather
            change = take_cells(0.5 * cell_values[:, 0], np.ascontiguousarray(sides[:, 0]))
        else:
            change = margin_change(state.margin, centred_step(cell_values, sides))
        return boostkit.Calibrated(contribution, change, cell_values.ravel())

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        # One margin column: the step f_m1 / 2 from the cells' means of z, which the proposal's
        # compiled search gives as its cell scores.
        if state.data.n_columns != 1:
            return None
        return CompiledCalibration(MULTINOMIAL_RESPONSE.name,
                                   compile_form(one_class_step_values, CALIBRATION), 2,
                                   _one_class_step)


def one_class_step_values(wneg, wpos, cell_scores, params, values, coefficients):
    """``multinomial-step``'s compiled form on one margin column (signature
    :data:`boostkit.compiled.CALIBRATION`): each side's f_m1, the weighted mean of z that
    ``multinomial-stumps``' compiled search gives as its cell score, recorded as the coefficient;
    the margin moves by f_m1 / 2 (Algorithm 6, step 2(b) with J = 2)."""
    for j in range(2):
        values[j] = 0.5 * cell_scores[j]
        coefficients[j] = cell_scores[j]


def _one_class_step(values, coefficients) -> SoftmaxStep:
    # The batch's contribution: the f_m1 per side of one class, as boostkit_calibrate records them.
    return SoftmaxStep(np.array(coefficients).reshape(2, 1))


@attrs.define
class MultinomialWeights(boostkit.Reweighting):
    """Algorithm 6's weights w_ij proportional to D_1(i) p_ij (1 - p_ij), p the softmax.

    FHT Algorithm 6, step 2(a)(i), over the (example, class) pairs: the engine's margin loss
    ``logitboost`` (:func:`boostkit.losses.margin_loss_distribution`, as ``logit-weights``) on
    the normalised margins (:func:`softmax_margins`, so p is the model's ``predict_proba``), in
    log space where they could underflow. The potential is sum_i D_1(i) (-log2 p_{y_i}(x_i)), the
    negative multinomial log-likelihood in bits, the same loss's on the true classes' columns,
    since -log p = log(1 + e^{-2 G}) there. It bounds
    the D_1-weighted error of the argmax and starts at log2 J. With one margin column it is
    ``logit-weights`` (Algorithm 3). Needs single-label classes.
    """

    name = "multinomial-weights"
    needs = frozenset({SINGLE_LABEL})
    provides = frozenset({"potential", "multiclass"})

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        data = state.data
        if data.n_columns == 1:
            return LogitWeights().boostkit_reweight(state)
        _check_single_label(data, self.name)
        loss = get_loss("logitboost")
        g = softmax_margins(state.margin)
        weights, _ = margin_loss_distribution(loss, g.ravel(), data.y.ravel(),
                                              state.initial_weights.ravel(), state.n_jobs)
        rows = np.arange(data.n_samples)
        _, log_potential = margin_loss_distribution(
            loss, np.ascontiguousarray(g[rows, data.labels]), np.ones(data.n_samples),
            state.initial_weights.sum(axis=1), state.n_jobs)
        return boostkit.Weights(weights.reshape(g.shape), log_potential)

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        # One margin column: logit-weights' (Algorithm 3's weights), as boostkit_reweight is.
        return LogitWeights().boostkit_compiled_form(state) if state.data.n_columns == 1 else None

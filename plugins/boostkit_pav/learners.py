"""Weak learners of Wilbur et al. 2005 and the hypotheses they produce.

* ``score-columns``: each column of X is one given scoring function (sections 4 and 6); the
  proposal cycles through them, for PAV-AdaBoost.finite (3.3).
* ``cmass``: the difference of the D_t-weighted class centroids (7.1).
* ``nscore``: the similarity to the heaviest example of one class, alternating classes (7.2),
  with the KNN similarity of eq. 49 and IDF weights on term counts, and the ``xlap`` window.
* ``binary-naive-bayes``: multivariate Bernoulli naive Bayes under D_t (4.3, 7, 8).

All hypotheses give real scores; PAV or the sigmoid then calibrates them. ``cmass``, ``nscore``
and ``binary-naive-bayes`` and their hypotheses read dense arrays and scipy.sparse CSR matrices
alike (term counts, as in section 7, are mostly zeros), and never densify the latter: they work
on its stored entries, with sparse matrix-vector products.
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.data import is_sparse
from boostkit.smoothing import n_examples

from .kernels import split_weights

__all__ = [
    "ClassColumnSums",
    "PresenceSums",
    "ScoreColumn",
    "ScoreColumns",
    "Projection",
    "Cmass",
    "NaiveBayesScore",
    "BinaryNaiveBayes",
    "NeighborSimilarity",
    "Nscore",
    "local_weights",
]


def _csr(X):
    """A sparse X as CSR in canonical form, one stored entry per (row, term) in increasing term
    order, as the engine hands it over; another format, or duplicate entries (whose sum is the
    value), are converted to a sparse copy."""
    X = X if X.format == "csr" else X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _with_data(X, data: np.ndarray):
    """The CSR matrix of X's sparsity pattern holding ``data`` (one value per stored entry)."""
    return type(X)((data, X.indices, X.indptr), shape=X.shape)


def _entry_rows(X) -> np.ndarray:
    """The row of each stored entry of the CSR matrix X."""
    return np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))


def _class_weights(state) -> tuple[np.ndarray, np.ndarray]:
    """``(pos, neg)``: the weights D_t of the positive examples and of the negative ones (the
    other class's entries 0)."""
    pos, neg = np.empty(state.data.n_samples), np.empty(state.data.n_samples)
    split_weights(state.weights, state.data.is_pos, pos, neg)
    return pos, neg


def _sign(instance, attribute, value):
    if value not in (-1.0, 1.0):
        raise ValueError(f"sign must be +1 or -1, got {value!r}")


def _non_negative(instance, attribute, value):
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{attribute.name} must be a finite number >= 0, got {value!r}")


def _smoothing(instance, attribute, value):
    if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{attribute.name} must be None (1/m) or a number > 0, got {value!r}")


# -- score columns ---------------------------------------------------------------------------


@attrs.frozen
class ScoreColumn(boostkit.WeakHypothesis):
    """h(x) = sign * x[feature]: one given score (Wilbur et al. 2005, section 4, 6).

    Its cells are the bins of the column (bin b holds t_{b-1} < x <= t_b for the ``thresholds``
    the engine binned the column with), numbered in increasing order of h, so PAV can run on the
    bins (Wilbur et al. 2005, section 5) and predictions use the same bins as training.
    ``ordered_cells`` tells a calibration that cell order is score order.
    """

    name = "score-column"
    ordered_cells: ClassVar[bool] = True

    feature: int = boostkit.feature_field(converter=int)
    sign: float = attrs.field(converter=float, validator=_sign)
    thresholds: np.ndarray = attrs.field(converter=boostkit.float_vector, eq=False)

    @property
    def n_cells(self) -> int:
        return self.thresholds.shape[0] + 1

    def scores(self, X: np.ndarray) -> np.ndarray:
        return self.sign * X[:, self.feature]

    def cells(self, X: np.ndarray) -> np.ndarray:
        bins = np.searchsorted(self.thresholds, X[:, self.feature], side="left")
        return bins if self.sign > 0 else self.n_cells - 1 - bins

    def describe(self) -> str:
        return f"{'-' if self.sign < 0 else ''}x[{self.feature}]"


@attrs.frozen
class ClassColumnSums:
    """A reduction over rows (``state.reduce``): ``(pos @ X, pos total, neg @ X, neg total)``
    for the initial weights D_1 of the positive and of the negative examples, the sums behind
    the D_1-weighted class means of every column. It reads the raw values (``rows.X``)."""

    def __call__(self, rows):
        pos = rows.initial_weights * rows.is_pos
        neg = rows.initial_weights - pos
        return pos @ rows.X, np.array(pos.sum()), neg @ rows.X, np.array(neg.sum())


@attrs.define
class ScoreColumns(boostkit.Proposal):
    """Propose the columns of X in turn, round after round: a fixed set of scoring functions.

    PAV is monotone non-decreasing, so each score should rise with the +1 label (Wilbur et al. 2005,
    section 4: "each scoring function tends to associate higher scores with the +1 label"; section 6
    flips signs by hand). With ``orient=True`` (default) a column whose D_1-weighted mean is lower
    on the positives than on the negatives is used negated. Each candidate names its column in
    ``info["scoring_function"]`` so back-fitting calibrations re-fit its term.

    It runs on every data plane: the class means come from a reduction over the rows
    (:class:`ClassColumnSums`, which reads their raw values: a distributed fit keeps them on the
    shards, ``reads_values``), and where the rows are not in this process the candidate is the
    column's bins as cells (``bin_cells``, reversed for a negated column) with their class sums
    from ``state.class_histogram()``.
    """

    name = "score-columns"
    provides = frozenset({"real-scores", "cells", "scoring-functions", DISTRIBUTED})
    orient: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    _signs: np.ndarray | None = attrs.field(init=False, default=None)

    @property
    def reads_values(self) -> bool:
        """Whether the shards of a distributed fit must keep the raw values (for the means)."""
        return self.orient

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        data = state.data
        self._signs = np.ones(data.n_features)
        if self.orient:
            pos_sums, pos_total, neg_sums, neg_total = state.reduce(ClassColumnSums())
            if pos_total > 0 and neg_total > 0:
                difference = pos_sums / pos_total - neg_sums / neg_total
                self._signs[difference < 0] = -1.0

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        feature = (state.round - 1) % state.data.n_features
        binned = state.data.binned
        hypothesis = ScoreColumn(feature, self._signs[feature], binned.thresholds[feature])
        info = {"scoring_function": feature}
        if not state.plane.has_rows:
            n_cells, negated = hypothesis.n_cells, hypothesis.sign < 0
            table = np.arange(n_cells, dtype=np.uint8)
            sums = state.class_histogram()[feature, :n_cells]
            if negated:
                table, sums = table[::-1], sums[::-1]
            return boostkit.Candidate(
                hypothesis, bin_cells=boostkit.BinCells(feature, table), codes=binned.codes,
                cell_wneg=np.ascontiguousarray(sums[:, 0]),
                cell_wpos=np.ascontiguousarray(sums[:, 1]), info=info)
        codes = binned.codes[feature]
        cells = codes if hypothesis.sign > 0 else hypothesis.n_cells - 1 - codes.astype(np.intp)
        return boostkit.Candidate(hypothesis, cells=cells, scores=hypothesis.scores(state.data.X),
                                  info=info)


# -- Cmass -----------------------------------------------------------------------------------


@attrs.frozen
class Projection(boostkit.WeakHypothesis):
    """h(x) = w . x for a fixed direction w (``direction``); X dense or sparse."""

    name = "projection"
    direction: np.ndarray = attrs.field(converter=boostkit.float_vector, eq=False)

    def scores(self, X) -> np.ndarray:
        # on a sparse X, a sparse matrix-vector product
        return X @ self.direction

    def describe(self) -> str:
        top = int(np.argmax(np.abs(self.direction)))
        return f"w.x (|w| = {np.linalg.norm(self.direction):.3g}, largest |w_j| at j = {top})"


def _weighted_std(X, d1: np.ndarray, mean: np.ndarray, sparse: bool) -> np.ndarray:
    """The D_1-weighted standard deviation of every column of X about ``mean``."""
    if sparse:
        X = _csr(X)
        # The stored entries' squared deviations, plus mean_j^2 for each example whose x_j = 0
        # is not stored, weighted by the rest of D_1: X - mean would be dense.
        squared = d1 @ _with_data(X, (X.data - mean[X.indices]) ** 2)
        stored_weight = d1 @ _with_data(X, np.ones_like(X.data))
        return np.sqrt(squared + np.maximum(d1.sum() - stored_weight, 0.0) * mean ** 2)
    return np.sqrt(d1 @ (X - mean) ** 2)


@attrs.define
class Cmass(boostkit.Proposal):
    """The Cmass weak learner (Wilbur et al. 2005, section 7.1).

    Weight the positive examples by D_t and take their centroid c_p, likewise c_n for the
    negatives, and propose h(x) = w . x with w = c_p - c_n (the default). With ``standardize=True`` the
    features are first divided by their D_1-weighted standard deviation (folded into w, so h
    still takes raw features): on features of very different scales (spambase's run lengths
    against its word frequencies) the raw centroid difference is one feature's. Proposes nothing
    (ending the run) when a class has no weight or the centroids coincide.
    """

    name = "cmass"
    provides = frozenset({"real-scores", "sparse-input"})
    distributed_refusal = (
        "projects the raw values on the difference of the class centroids, a sum over the rows "
        "that a reduction could give, but the PAV of pav-adaboost then cuts the projected scores "
        "at quantiles of all the rows, an order statistic and not a sum: it would take an exact "
        "distributed selection of up to 254 quantiles of the scores every round (several passes "
        "over the shards)")
    standardize: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    _scale: np.ndarray | None = attrs.field(init=False, default=None)

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        X, d1 = state.data.X, state.data.sample_weight
        if self.standardize:
            mean = d1 @ X
            with np.errstate(over="ignore", invalid="ignore"):
                std = _weighted_std(X, d1, mean, state.data.is_sparse)
            if not np.isfinite(std).all():
                # |x| beyond ~1e154 overflows the squares: the same spread, computed on the
                # columns divided by their largest |x| and scaled back.
                if state.data.is_sparse:
                    top = abs(X).max(axis=0).toarray().ravel()
                    top = np.where(top > 0, top, 1.0)
                    unit = _csr(X.multiply(1.0 / top))
                else:
                    top = np.abs(X).max(axis=0)
                    top = np.where(top > 0, top, 1.0)
                    unit = X / top
                std = top * _weighted_std(unit, d1, mean / top, state.data.is_sparse)
            # A constant column's spread is rounding (~1e-16 of its mean), not signal.
            std = np.where(std > 1e-12 * np.abs(mean), std, 0.0)
            self._scale = np.where(std > 0, 1.0 / np.where(std > 0, std, 1.0), 0.0)
        else:
            self._scale = np.ones(X.shape[1])

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        X = state.data.X
        pos, neg = _class_weights(state)
        pos_total, neg_total = pos.sum(), neg.sum()
        if pos_total <= 0 or neg_total <= 0:
            return None
        # centroids of the standardised features z = x * scale; w.z = (w * scale).x
        difference = (pos @ X / pos_total - neg @ X / neg_total) * self._scale
        direction = difference * self._scale
        if not direction.any():
            return None
        hypothesis = Projection(direction)
        return boostkit.Candidate(hypothesis, scores=hypothesis.scores(X))


# -- binary naive Bayes ----------------------------------------------------------------------


@attrs.frozen
class _SparsePresence:
    """The indicators [x_ij > threshold] of a CSR matrix X, kept in X's sparsity pattern.

    With threshold >= 0 an entry that is not stored (x = 0) is absent, so ``marks`` holds 1 on
    the stored entries present. With threshold < 0 every such entry is present: ``marks`` then
    holds 1 on the stored entries absent (``complement``), and the sums are taken from it.
    """

    marks: object
    complement: bool

    @classmethod
    def of(cls, X, threshold: float) -> _SparsePresence:
        X = _csr(X)
        complement = threshold < 0
        marked = X.data <= threshold if complement else X.data > threshold
        return cls(_with_data(X, marked.astype(np.float64)), complement)

    def weighted_counts(self, example_weights: np.ndarray) -> np.ndarray:
        """sum_i example_weights[i] [x_ij present], for every term j."""
        counts = example_weights @ self.marks
        return example_weights.sum() - counts if self.complement else counts

    def sums(self, term_weights: np.ndarray) -> np.ndarray:
        """sum_j term_weights[j] [x_ij present], for every example i."""
        sums = self.marks @ term_weights
        return term_weights.sum() - sums if self.complement else sums


@attrs.frozen
class NaiveBayesScore(boostkit.WeakHypothesis):
    """h(x) = offset + sum_j term_weights[j] [x_j > threshold]: a binary naive Bayes score."""

    name = "naive-bayes-score"
    threshold: float = attrs.field(converter=float)
    term_weights: np.ndarray = attrs.field(converter=boostkit.float_vector, eq=False)
    offset: float = attrs.field(converter=float)

    def scores(self, X) -> np.ndarray:
        if is_sparse(X):
            return self.offset + _SparsePresence.of(X, self.threshold).sums(self.term_weights)
        return self.offset + (X > self.threshold) @ self.term_weights

    def describe(self) -> str:
        return f"naive Bayes ({np.count_nonzero(self.term_weights)} terms)"


@attrs.frozen
class PresenceSums:
    """A reduction over rows (``state.reduce``): ``(pos @ present, pos total, neg @ present, neg
    total)`` for the current weights D_t of the positive and of the negative examples, present
    the indicators [x_ij > ``threshold``] of the rows' raw values (``rows.X``)."""

    threshold: float

    def __call__(self, rows):
        present = (rows.X > self.threshold).astype(np.float64)
        pos = rows.weights * rows.is_pos
        neg = rows.weights - pos
        return pos @ present, np.array(pos.sum()), neg @ present, np.array(neg.sum())


@attrs.define
class BinaryNaiveBayes(boostkit.Proposal):
    """Binary (multivariate Bernoulli) naive Bayes trained under D_t (Wilbur et al. 2005,
    sections 4.3, 7, 8).

    A feature is present when x_j > ``threshold`` (for term counts or frequencies: the word
    occurs). Under D_t, p_j = (W+(x_j present) + s) / (W+ + 2s) and q_j likewise for the
    negatives, with pseudo-weight s = ``smoothing`` (``None``: 1/m, one example's weight under
    D_1, i.e. Laplace's rule). The score is the posterior log-odds

        h(x) = ln(W+ / W-) + sum_j [ln((1-p_j)/(1-q_j)) + [x_j present] ln(p_j (1-q_j) / (q_j (1-p_j)))],

    a log-odds score in the sense of Wilbur et al. 2005, section 8. Terms whose weight
    ln(p_j (1-q_j) / (q_j (1-p_j))) is below ``min_weight`` in absolute value are dropped
    (Wilbur et al. 2005, section 7 uses 1.0 "as a form of feature selection"); ``prior=False``
    leaves out ln(W+/W-).

    Where the rows are not in this process (a distributed fit, whose shards then keep their raw
    values: ``reads_values``), the weighted counts come from one reduction (:class:`PresenceSums`)
    and the shards score their rows themselves.
    """

    name = "binary-naive-bayes"
    provides = frozenset({"real-scores", "sparse-input", DISTRIBUTED})
    reads_values = True
    threshold: float = attrs.field(default=0.0, converter=float)
    smoothing: float | None = attrs.field(default=None, validator=_smoothing)
    min_weight: float = attrs.field(default=0.0, converter=float, validator=_non_negative)
    prior: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    _present: np.ndarray | _SparsePresence | None = attrs.field(init=False, default=None)

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        X = state.data.X
        if X is None:  # the rows are elsewhere: each round's counts come from a reduction
            self._present = None
            return
        self._present = (_SparsePresence.of(X, self.threshold) if state.data.is_sparse
                         else (X > self.threshold).astype(np.float64))

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        present = self._present
        if present is None:
            n_pos, w_pos, n_neg, w_neg = state.reduce(PresenceSums(self.threshold))
        else:
            pos, neg = _class_weights(state)
            w_pos, w_neg = pos.sum(), neg.sum()
        if w_pos <= 0 or w_neg <= 0:
            return None
        s = 1.0 / n_examples(state.data) if self.smoothing is None else self.smoothing
        if isinstance(present, _SparsePresence):
            n_pos, n_neg = present.weighted_counts(pos), present.weighted_counts(neg)
        elif present is not None:
            n_pos, n_neg = pos @ present, neg @ present
        p = (n_pos + s) / (w_pos + 2 * s)
        q = (n_neg + s) / (w_neg + 2 * s)
        absent = np.log((1 - p) / (1 - q))
        term_weights = np.log(p / q) - absent
        kept = np.abs(term_weights) >= self.min_weight
        offset = (math.log(w_pos / w_neg) if self.prior else 0.0) + absent[kept].sum()
        hypothesis = NaiveBayesScore(self.threshold, np.where(kept, term_weights, 0.0), offset)
        if present is None:  # the shards score their rows
            return boostkit.Candidate(hypothesis, rows_elsewhere=True)
        if isinstance(present, _SparsePresence):
            scores = offset + present.sums(hypothesis.term_weights)
        else:
            scores = offset + present @ hypothesis.term_weights
        return boostkit.Candidate(hypothesis, scores=scores)


# -- Nscore ----------------------------------------------------------------------------------


def local_weights(tf: np.ndarray, dlen: np.ndarray, alpha: float, decay: float) -> np.ndarray:
    """The local weight of eq. 49 (Wilbur et al. 2005, section 7): lw = 1 / (1 + decay^(tf - 1)
    e^(alpha dlen)).

    ``tf`` is a term's count in a document (one row per document) and ``dlen`` the document's
    length, the sum of its counts; lw = 0 where tf = 0. The paper uses alpha = 0.0044 and
    decay (its lambda) = 0.7, from the Poisson model of term frequencies.
    """
    return _local_weight(tf, _length_factor(dlen, alpha)[:, None], decay)


def _length_factor(dlen: np.ndarray, alpha: float) -> np.ndarray:
    """e^(alpha dlen) of eq. 49 (inf for a very long document, whose weights are then 0)."""
    with np.errstate(over="ignore"):
        return np.exp(alpha * dlen)


def _local_weight(tf: np.ndarray, length_factor: np.ndarray, decay: float) -> np.ndarray:
    """lw of eq. 49 elementwise, ``length_factor`` = e^(alpha dlen) matching ``tf``'s entries:
    one function for a dense matrix of counts and for the stored counts of a sparse one."""
    with np.errstate(over="ignore", divide="ignore"):
        lw = 1.0 / (1.0 + decay ** (tf - 1.0) * length_factor)
    return np.where(tf > 0, lw, 0.0)


def _sparse_length_factor(X, alpha: float) -> np.ndarray:
    """e^(alpha dlen) for each row (document) of a CSR matrix of counts X."""
    return _length_factor(X @ np.ones(X.shape[1]), alpha)


@attrs.frozen
class NeighborSimilarity(boostkit.WeakHypothesis):
    """h(x) = sign * sim(x_i, x) for a stored training document x_i (Wilbur et al. 2005,
    section 7.2).

    sim is the KNN similarity of Wilbur et al. 2005, section 7: the dot product of the documents'
    vectors, whose components are the local weight (eq. 49) times the term's IDF, ln(N / n_t) on the
    training set. Only the terms of x_i matter, so the hypothesis keeps them (``terms``) with
    ``weights`` = lw(x_i, t) idf_t^2, and h(x) = sign * sum_t weights_t lw(x, t). X may be dense or
    sparse (only its stored counts of those terms are read).
    """

    name = "neighbor-similarity"
    terms: np.ndarray = attrs.field(converter=lambda v: np.ascontiguousarray(v, dtype=np.int64), eq=False)
    weights: np.ndarray = attrs.field(converter=boostkit.float_vector, eq=False)
    sign: float = attrs.field(converter=float, validator=_sign)
    alpha: float = attrs.field(converter=float)
    decay: float = attrs.field(converter=float)

    def scores(self, X) -> np.ndarray:
        if is_sparse(X):
            X = _csr(X)
            # dlen is over the whole vocabulary, so the lengths come from X, not its columns
            length_factor = _sparse_length_factor(X, self.alpha)
            columns = X[:, self.terms]
            lw = _local_weight(columns.data, length_factor[_entry_rows(columns)], self.decay)
            return self.sign * (_with_data(columns, lw) @ self.weights)
        lw = local_weights(X[:, self.terms], X.sum(axis=1), self.alpha, self.decay)
        return self.sign * (lw @ self.weights)

    def describe(self) -> str:
        return f"{'-' if self.sign < 0 else '+'}sim(x_i, x) ({self.terms.shape[0]} terms)"


@attrs.define
class Nscore(boostkit.Proposal):
    """The Nscore (neighbour score) weak learner (Wilbur et al. 2005, section 7.2), for term-count
    features.

    X holds term counts, dense or CSR (one column per term; :mod:`boostkit_pav.text` makes
    them). With t - 1 the number of earlier applications: for even t take the positive example
    x_i of greatest D_t(i) (the lowest index among ties) and propose h(x) = sim(x_i, x); for odd
    t the heaviest negative and h(x) = -sim(x_i, x). ``xlap`` (Wilbur et al. 2005, section 7.2, for
    linear AdaBoost) forbids choosing an example again until ``xlap`` other applications have passed
    (0: no restriction). ``alpha`` and ``decay`` are the alpha and lambda of eq. 49. Proposes
    nothing when the class to choose from has no available example.
    """

    name = "nscore"
    distributed_refusal = (
        "chooses the heaviest example of a class under D_t every round (an arg-max over all the "
        "rows) and scores every row by its similarity to that one row's term vector: it would "
        "take a reduction for the arg-max and shipping the chosen row to every shard")
    # Term counts: eq. 49's local weight and the IDF read x_ij as how often term j occurs.
    needs = frozenset({"non-negative-features"})
    provides = frozenset({"real-scores", "sparse-input"})
    alpha: float = attrs.field(default=0.0044, converter=float, validator=_non_negative)
    decay: float = attrs.field(default=0.7, converter=float)
    xlap: int = attrs.field(default=0, converter=int)
    _vectors: object = attrs.field(init=False, default=None)  # dense, or CSR like X
    _idf: np.ndarray | None = attrs.field(init=False, default=None)
    _last_used: np.ndarray | None = attrs.field(init=False, default=None)
    _applications: int = attrs.field(init=False, default=0)

    @decay.validator
    def _check_decay(self, attribute, value):
        if not 0.0 < value <= 1.0:
            raise ValueError(f"decay (lambda of eq. 49) must be in (0, 1], got {value!r}")

    @xlap.validator
    def _check_xlap(self, attribute, value):
        if value < 0:
            raise ValueError(f"xlap must be >= 0, got {value!r}")

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        sparse = state.data.is_sparse
        X = _csr(state.data.X) if sparse else state.data.X
        if sparse:
            document_frequency = np.bincount(X.indices[X.data != 0], minlength=X.shape[1])
        else:
            document_frequency = np.count_nonzero(X, axis=0)
        with np.errstate(divide="ignore"):
            self._idf = np.where(document_frequency > 0,
                                 np.log(X.shape[0] / np.maximum(document_frequency, 1)), 0.0)
        if sparse:
            length_factor = _sparse_length_factor(X, self.alpha)
            lw = _local_weight(X.data, length_factor[_entry_rows(X)], self.decay)
            self._vectors = _with_data(X, lw * self._idf[X.indices])
        else:
            self._vectors = local_weights(X, X.sum(axis=1), self.alpha, self.decay) * self._idf
        self._last_used = np.full(X.shape[0], -np.inf)
        self._applications = 0

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        t = self._applications + 1
        from_positive = t % 2 == 0
        eligible = (state.data.is_pos == from_positive) & (
            self._applications - self._last_used >= self.xlap
        )
        if not eligible.any():
            return None
        i = int(np.argmax(np.where(eligible, state.weights, -1.0)))
        self._applications = t
        self._last_used[i] = t
        vectors = self._vectors
        if state.data.is_sparse:
            start, stop = vectors.indptr[i], vectors.indptr[i + 1]
            kept = vectors.data[start:stop] != 0
            terms, values = vectors.indices[start:stop][kept], vectors.data[start:stop][kept]
            # x_i's vector over the vocabulary, for one sparse product with every document's
            vector = np.zeros(vectors.shape[1])
            vector[terms] = values
            similarity = vectors @ vector
        else:
            terms = np.flatnonzero(vectors[i])
            values = vectors[i, terms]
            similarity = vectors[:, terms] @ values
        sign = 1.0 if from_positive else -1.0
        hypothesis = NeighborSimilarity(terms, values * self._idf[terms], sign, self.alpha,
                                        self.decay)
        scores = sign * similarity
        return boostkit.Candidate(hypothesis, scores=scores, info={"example": i})

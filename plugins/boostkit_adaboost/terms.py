"""Term-presence stumps: BoosTexter's weak learner (Schapire & Singer 2000).

"BoosTexter: a boosting-based system for text categorization" (real AdaBoost.MH with
term-presence hypotheses): every term f splits the documents into two cells, "f is absent"
(cell 0: x_f == 0, or not stored in a sparse X) and "f is present" (cell 1: x_f > 0). The learner
proposes the term whose partition has the smallest partition loss (the calibration's, as
:class:`boostkit_adaboost.StumpLearner`: Z = 2 sum_j sqrt(W+_j W-_j) under ``domain-partition``,
summed over the classes in a multiclass fit).

X is read as a scipy CSR matrix (term counts) without densifying it: once per fit the rows where
each term is present are grouped by term (a CSC-like structure of the present entries only), and
each round one numba pass over them sums the weights of the present cells of every term at once
(:mod:`boostkit_adaboost.term_kernels`); the absent cell is the class total minus the present
cell. A dense X works too (present: x > 0), so the learner fits in any recipe.

Binary fits (weights ``(n,)``): the cell sums are ``(d, 2)`` and each cell is labelled by its
weighted majority, like a stump's. Multiclass fits (weights ``(n, C)`` over (example, class)
pairs): the sums are ``(d, 2, C)`` and the hypothesis is phi(x) = -1 (absent) / +1 (present); the
calibration gives each (cell, class) its own value.
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.criteria import check_criterion, partition_loss
from boostkit.data import is_sparse
from boostkit.splits import TIE_TOLERANCE
from boostkit.tree_form import TreeForm

from .term_kernels import (
    column_hits,
    present_pair_sums,
    present_pair_sums_parallel,
    present_rows,
)

__all__ = ["TermStump", "TermStumpLearner", "TermPresence"]



def _scores_array(value) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.float64)
    if arr.shape != (2,):
        raise ValueError(f"cell_scores must have shape (2,), got {arr.shape}")
    return arr


def _present_rows_of_column(X, feature: int) -> np.ndarray:
    """The rows of a sparse X whose entry in column ``feature`` is > 0 (duplicates summed),
    read from the stored entries only."""
    if X.format == "csc":
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        start, stop = X.indptr[feature], X.indptr[feature + 1]
        return X.indices[start:stop][X.data[start:stop] > 0]
    if X.format != "csr":
        X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    entries = np.flatnonzero((X.indices == feature) & (X.data > 0))
    return np.searchsorted(X.indptr, entries, side="right") - 1


@attrs.frozen
class TermStump(boostkit.WeakHypothesis):
    """h(x) = cell_scores[1] if x[feature] > 0 (term present) else cell_scores[0].

    Two cells: 0 (absent: x_f == 0, or not stored) and 1 (present: x_f > 0). X may be dense or
    a scipy.sparse matrix, which is never densified. ``feature = -1`` is the constant hypothesis
    (every example in cell 0), proposed when no term splits the training set.
    """

    name = "term-presence-stump"
    n_cells = 2

    feature: int = boostkit.feature_field(constant=-1, converter=int)
    cell_scores: np.ndarray = attrs.field(converter=_scores_array, eq=False)

    def cells(self, X) -> np.ndarray:
        n = X.shape[0]
        if self.feature < 0:
            return np.zeros(n, dtype=np.intp)
        if is_sparse(X):
            cells = np.zeros(n, dtype=np.intp)
            cells[_present_rows_of_column(X, self.feature)] = 1
            return cells
        return (np.asarray(X)[:, self.feature] > 0).astype(np.intp)

    def scores(self, X) -> np.ndarray:
        return self.cell_scores[self.cells(X)]

    def tree_form(self) -> TreeForm:
        # Absent (x <= 0, or missing: NaN > 0 is False) is cell 0; the constant hypothesis
        # sends every row there.
        if self.feature < 0:
            return TreeForm.threshold_stump(0, np.inf, True)
        return TreeForm.threshold_stump(self.feature, 0.0, True)

    def describe(self) -> str:
        if self.feature < 0:
            return f"constant {self.cell_scores[0]:+g}"
        absent, present = self.cell_scores
        return f"x[{self.feature}] > 0 ? {present:+g} : {absent:+g}"


@attrs.frozen
class TermPresence:
    """Where each term is present in the training set: ``rows[indptr[f]:indptr[f + 1]]`` are the
    (increasing) rows with x_f > 0. Built once per fit from a dense or sparse X."""

    indptr: np.ndarray
    rows: np.ndarray
    n_samples: int

    @classmethod
    def of(cls, X) -> TermPresence:
        n, d = X.shape
        if is_sparse(X):
            if X.format != "csr":
                X = X.tocsr()
            if not X.has_canonical_format:
                X = X.copy()
                X.sum_duplicates()
            indptr = np.zeros(d + 1, dtype=np.int64)
            np.cumsum(column_hits(X.indices, X.data, d), out=indptr[1:])
            rows = np.empty(indptr[-1], dtype=np.int64)
            present_rows(X.indptr, X.indices, X.data, indptr, rows)
        else:
            # nonzero of the transpose: grouped by column, rows increasing within a column
            columns, rows = np.nonzero(np.asarray(X).T > 0)
            indptr = np.zeros(d + 1, dtype=np.int64)
            np.cumsum(np.bincount(columns, minlength=d), out=indptr[1:])
            rows = rows.astype(np.int64)
        return cls(indptr, rows, n)

    @property
    def counts(self) -> np.ndarray:
        """The number of training examples in which each term is present."""
        return np.diff(self.indptr)

    def cells(self, feature: int) -> np.ndarray:
        """The training cells (uint8, 1 where present) of one term."""
        cells = np.zeros(self.n_samples, dtype=np.uint8)
        cells[self.rows[self.indptr[feature]:self.indptr[feature + 1]]] = 1
        return cells

    def cell_sums(self, weights: np.ndarray, is_pos: np.ndarray, n_jobs: int = 1):
        """``(wneg, wpos)`` of every term's two cells: ``(d, 2)`` for ``(n,)`` weights (binary),
        ``(d, 2, C)`` for ``(n, C)`` pair weights; cell 0 is absent, cell 1 present."""
        n = self.n_samples
        binary = weights.ndim == 1
        w = np.ascontiguousarray(weights, dtype=np.float64).reshape(n, -1)
        p = np.ascontiguousarray(is_pos, dtype=np.uint8).reshape(n, -1)
        d, c = self.indptr.shape[0] - 1, w.shape[1]
        present_neg, present_pos = np.empty((d, c)), np.empty((d, c))
        kernel = present_pair_sums_parallel if n_jobs > 1 else present_pair_sums
        kernel(self.indptr, self.rows, w, p, present_neg, present_pos)
        positive = w * p
        total_pos = positive.sum(axis=0)
        total_neg = (w - positive).sum(axis=0)
        wneg, wpos = np.empty((d, 2, c)), np.empty((d, 2, c))
        wneg[:, 1], wpos[:, 1] = present_neg, present_pos
        # the absent cell is the total minus the present cell (clipped: never below 0 by rounding)
        np.maximum(total_neg - present_neg, 0.0, out=wneg[:, 0])
        np.maximum(total_pos - present_pos, 0.0, out=wpos[:, 0])
        if binary:
            return wneg[..., 0], wpos[..., 0]
        return wneg, wpos


@attrs.define
class TermStumpLearner(boostkit.Proposal):
    """Propose the term-presence stump minimising the partition loss over all terms (BoosTexter).

    Parameters
    ----------
    criterion:
        ``None`` (default) asks the calibration (``boostkit_partition_loss``): Z under
        ``domain-partition`` (real AdaBoost.MH, BoosTexter's choice), the weighted error under
        ``constant-alpha``. Or one of ``"error"``, ``"z"``, ``"gini"``, ``"entropy"``.

    Terms present in no training example, or in all of them, do not split the training set and
    are never proposed; when no term splits it, the constant hypothesis is. In a binary fit each
    cell is labelled by its weighted majority (ties: -1), as :class:`StumpLearner` does; in a
    multiclass fit the scores are phi(x) = -1 (absent) / +1 (present) and the candidate carries
    the ``(2, C)`` per-class cell sums.
    """

    name = "term-stump"
    provides = frozenset({"real-scores", "sign-scores", "cells", "two-cells", "sparse-input",
                          "multiclass"})
    criterion: str | None = attrs.field(default=None, validator=check_criterion)
    _presence: TermPresence | None = attrs.field(init=False, default=None)

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        self._presence = TermPresence.of(state.data.X)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        if self._presence is None:  # driven without boostkit_fit_start
            self._presence = TermPresence.of(state.data.X)
        presence = self._presence
        wneg, wpos = presence.cell_sums(state.weights, state.data.is_pos, state.n_jobs)
        counts = presence.counts
        valid = (counts > 0) & (counts < presence.n_samples)
        if valid.any():
            loss = np.asarray(partition_loss(state, self.criterion)(wpos, wneg), dtype=np.float64)
            if loss.shape != valid.shape:
                raise ValueError(
                    f"the partition loss returned shape {loss.shape} for cell sums of shape "
                    f"{wpos.shape}, expected one loss per term {valid.shape}"
                )
            scores = np.where(valid, loss, np.inf)
            lowest = scores.min()
            tied = scores <= lowest + TIE_TOLERANCE * abs(lowest)
            feature = int(np.argmax(tied))
            cell_wneg, cell_wpos = wneg[feature].copy(), wpos[feature].copy()
            cells = presence.cells(feature)
        else:  # no term splits the training set: the constant hypothesis, all in cell 0
            feature = -1
            cell_wneg, cell_wpos = wneg[0].copy(), wpos[0].copy()
            cell_wneg[0] += cell_wneg[1]
            cell_wpos[0] += cell_wpos[1]
            cell_wneg[1] = cell_wpos[1] = 0.0
            cells = np.zeros(presence.n_samples, dtype=np.uint8)
        if state.weights.ndim == 1:
            cell_scores = np.where(cell_wpos > cell_wneg, 1.0, -1.0)
        else:
            cell_scores = np.array([-1.0, 1.0])
        return boostkit.Candidate(
            TermStump(feature, cell_scores),
            cells=cells,
            scores=cell_scores[cells],
            cell_wneg=cell_wneg,
            cell_wpos=cell_wpos,
        )

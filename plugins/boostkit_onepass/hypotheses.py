"""The base classifiers of one-pass boosting, and the linear vote they add up to.

Barutcuoglu et al. 2007 uses one base classifier per feature: the feature itself when it is +-1
(section 3.1, b_i(x) = x_i; the synthetic data of section 4), and for text a confidence-rated
classifier whose confidence is the number of times its term occurs (section 4). Every hypothesis
here reads dense arrays and CSR matrices alike, without densifying the latter.
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.data import is_sparse

from .kernels import csr_column, csr_linear, dense_linear


def feature_column(X, j: int) -> np.ndarray:
    """Column ``j`` of a dense array or a CSR/CSC matrix, as a new float64 array."""
    if not is_sparse(X):
        return np.array(X[:, j], dtype=np.float64)
    if X.format == "csc":
        out = np.zeros(X.shape[0])
        start, stop = X.indptr[j], X.indptr[j + 1]
        out[X.indices[start:stop]] = X.data[start:stop]
        return out
    if X.format != "csr" or not X.has_sorted_indices:
        X = X.tocsr()
        X.sort_indices()
    out = np.empty(X.shape[0])
    csr_column(X.indptr, X.indices, np.asarray(X.data, dtype=np.float64), j, out)
    return out


def _polarity(instance, attribute, value):
    if value not in (-1, 1):
        raise ValueError(f"polarity must be +1 or -1, got {value!r}")


@attrs.frozen
class FeatureSign(boostkit.WeakHypothesis):
    """h(x) = polarity * (+1 if x[feature] > 0 else -1).

    For a +-1 feature this is the feature itself (Barutcuoglu et al. 2007, section 3.1:
    b_i(x) = x_i); for a term count it says whether the term occurs. Two cells: 0 (x <= 0) and 1 (x
    > 0), so per-cell calibrations apply too. ``polarity = -1`` is the negated classifier.
    """

    name = "feature-sign"
    n_cells = 2

    feature: int = boostkit.feature_field(converter=int)
    polarity: int = attrs.field(default=1, converter=int, validator=_polarity)

    def cells(self, X) -> np.ndarray:
        return (feature_column(X, self.feature) > 0.0).astype(np.intp)

    def scores(self, X) -> np.ndarray:
        present = feature_column(X, self.feature) > 0.0
        return np.where(present, float(self.polarity), -float(self.polarity))

    def cell_score_table(self) -> np.ndarray:
        return np.array([-float(self.polarity), float(self.polarity)])

    def describe(self) -> str:
        return f"{'' if self.polarity > 0 else '-'}sign x[{self.feature}]"


@attrs.frozen
class FeatureCount(boostkit.WeakHypothesis):
    """h(x) = x[feature]: the confidence-rated classifier of a term, confidence = its count.

    Barutcuoglu et al. 2007, section 4 (after Schapire & Singer's confidence-rated predictions): it
    abstains (h = 0) on documents without the term; the sign of the voting weight alpha says which
    class the term speaks for.
    """

    name = "feature-count"

    feature: int = boostkit.feature_field(converter=int)

    def scores(self, X) -> np.ndarray:
        return feature_column(X, self.feature)

    def describe(self) -> str:
        return f"count x[{self.feature}]"


@attrs.frozen
class ConstantVote(boostkit.WeakHypothesis):
    """h(x) = +1 everywhere: the constant hypothesis of POPBM step 2.b.ii (Barutcuoglu et al. 2007,
    section 2)."""

    name = "constant-vote"
    n_cells = 1

    def cells(self, X) -> np.ndarray:
        return np.zeros(X.shape[0], dtype=np.intp)

    def scores(self, X) -> np.ndarray:
        return np.ones(X.shape[0])

    def describe(self) -> str:
        return "constant +1"


@attrs.frozen
class LinearVotes(boostkit.WeakHypothesis):
    """h(x) = intercept + sum_j value_weights_j x_j + sum_j indicator_weights_j [x_j > 0].

    The sum of many single-feature votes in one term: a naive Bayes log-odds (multinomial: value
    weights; Bernoulli: indicator weights and intercept), or a one-pass model collapsed into one
    term (:func:`boostkit_onepass.collapse`). On CSR input it costs O(nnz).
    """

    name = "linear-votes"

    value_weights: np.ndarray = attrs.field(converter=boostkit.float_vector, eq=False)
    indicator_weights: np.ndarray = attrs.field(converter=boostkit.float_vector, eq=False)
    intercept: float = attrs.field(default=0.0, converter=float)

    @indicator_weights.validator
    def _same_length(self, attribute, value):
        if value.shape != self.value_weights.shape:
            raise ValueError(
                f"value_weights and indicator_weights need the same length, got "
                f"{self.value_weights.shape[0]} and {value.shape[0]}"
            )

    @property
    def n_features_used(self) -> int:
        """Features with a non-zero weight."""
        return int(np.count_nonzero((self.value_weights != 0) | (self.indicator_weights != 0)))

    def scores(self, X) -> np.ndarray:
        if X.shape[1] != self.value_weights.shape[0]:
            raise ValueError(
                f"X has {X.shape[1]} features, the linear vote {self.value_weights.shape[0]}"
            )
        out = np.empty(X.shape[0])
        if is_sparse(X):
            if X.format != "csr" or not X.has_sorted_indices:
                X = X.tocsr()
            csr_linear(X.indptr, X.indices, np.asarray(X.data, dtype=np.float64),
                       self.value_weights, self.indicator_weights, self.intercept, out)
        else:
            dense_linear(np.ascontiguousarray(X, dtype=np.float64), self.value_weights,
                         self.indicator_weights, self.intercept, out)
        return out

    def describe(self) -> str:
        return f"linear vote of {self.n_features_used} features"

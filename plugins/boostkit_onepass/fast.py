"""One pass in one kernel, and one-pass models folded into a single linear term.

The engine's rounds each cost O(m): the margins and the distribution are dense vectors, updated
and renormalised in full. One-pass boosting over d term counts through :class:`boostkit.Booster`
therefore costs O(m d), while a base classifier that abstains outside its nnz_j documents only
changes the weights of those documents: the whole pass can cost O(nnz + d), like naive Bayes
(Barutcuoglu et al. 2007, section 1: "essentially the same computational resources as Naive
Bayes"). :class:`OnePass` and :func:`one_pass` run the ``opab`` / ``picky-adaboost`` recipes
that way, with the calibration's own kernel, and give the same decision function as ``Booster``
(checked by the tests), folded into one :class:`LinearVotes` term (per-round records would cost
O(m) each).

:func:`collapse` folds a fitted model of single-feature votes (``opab``, ``picky-adaboost``,
``popbm``, ``naive-bayes``) into that one term, so predicting on sparse input costs O(nnz).
"""

from __future__ import annotations

import math

import numpy as np

import boostkit
from boostkit.data import check_features, check_labels, check_sample_weight, is_sparse
from boostkit.smoothing import n_examples, resolve_smoothing

from .hypotheses import ConstantVote, FeatureCount, FeatureSign, LinearVotes
from .kernels import CODE_BITS, csr_margin_columns, one_pass_counts, one_pass_signs
from .pool import resolve_base


def collapse(model: boostkit.BoostModel) -> boostkit.BoostModel:
    """The same F_T(x) as one :class:`LinearVotes` term (records and recipe kept).

    Terms must be ``alpha h`` (:class:`boostkit.LinearContribution`) over ``feature-count``,
    ``feature-sign``, ``constant-vote`` or ``linear-votes`` hypotheses. sign x_j = 2 [x_j > 0] - 1,
    so a sign vote becomes an indicator weight and an intercept.
    """
    d = model.n_features
    value = np.zeros(d)
    indicator = np.zeros(d)
    intercept = 0.0
    for h, c in zip(model.hypotheses, model.contributions):
        if not isinstance(c, boostkit.LinearContribution):
            raise TypeError(f"collapse needs alpha * h terms, got contribution {c.name!r}")
        if isinstance(h, FeatureCount):
            value[h.feature] += c.alpha
        elif isinstance(h, FeatureSign):
            indicator[h.feature] += 2.0 * c.alpha * h.polarity
            intercept -= c.alpha * h.polarity
        elif isinstance(h, ConstantVote):
            intercept += c.alpha
        elif isinstance(h, LinearVotes):
            value += c.alpha * h.value_weights
            indicator += c.alpha * h.indicator_weights
            intercept += c.alpha * h.intercept
        else:
            raise TypeError(f"collapse cannot fold weak hypothesis {h.name!r} into a linear vote")
    return boostkit.BoostModel(
        classes=model.classes, n_features=d,
        hypotheses=(LinearVotes(value, indicator, intercept),),
        contributions=(boostkit.LinearContribution(1.0),),
        records=model.records, recipe=model.recipe, stop_reason=model.stop_reason,
    )


class OnePass:
    """Training data prepared once for fused passes (:meth:`fit`), e.g. over many orders.

    The same algorithm, order and voting weights as ``Booster("opab")`` /
    ``Booster("picky-adaboost", params={"picky": {"gamma_bar": gamma_bar}})`` with ``n_rounds``
    at least the number of features, the same ``random_state``, the ``ordered-pool`` ``base``
    and the ``onepass-alpha`` ``smoothing``. Sparse input is turned into columns of margins
    y_i x_ij once (:func:`boostkit_onepass.kernels.csr_margin_columns`, term counts coded in
    one integer with their row) and never densified; ``base="sign"`` input is kept as a (d, m)
    int8 array of the classifiers' votes.
    """

    def __init__(self, X, y, *, base: str = "auto", sample_weight=None):
        self.X = check_features(X, accept_sparse=True)
        self.classes, self.y = check_labels(y, self.X.shape[0])
        self.sample_weight = check_sample_weight(sample_weight, self.X.shape[0])
        # What boostkit.TrainingData records for the smoothing's 1/m, which counts examples by
        # weight (boostkit.smoothing.n_examples): the weights' total (summed without the zeros,
        # as a fit removes those rows) and the examples of positive weight.
        given = np.broadcast_to(np.asarray(1.0 if sample_weight is None else sample_weight,
                                           dtype=np.float64), self.sample_weight.shape)
        with np.errstate(over="ignore"):  # an overflowing total counts rows (n_examples)
            self.weight_total = float(given[given > 0].sum())
        self.n_weighted = int(np.count_nonzero(self.sample_weight))
        self.base = resolve_base(self.X, base)
        if self.base == "count":
            self._columns = _margin_columns(self.X if is_sparse(self.X) else _dense_csr(self.X),
                                            self.y)
        else:
            self._signs = _signs(self.X)

    def unnormalised_votes(self, *, gamma_bar: float = 0.0, smoothing: float | None = None,
                           random_state=None) -> LinearVotes:
        """The vote of a pass whose weights are never renormalised (+-1 base classifiers only).

        Not the paper's algorithm (Fig. 1 normalises D'_{t+1} by Z_{t+1}), and so not a model of
        ``opab``: eps and Picky's |gamma| are the raw mass of D_1(i) prod_s exp(-alpha_s y_i h_s)
        on the mistakes. Table 2's published errors are what this reading gives; the Table 2
        study offers it (``--unnormalised``) to show so.
        """
        if not 0.0 <= gamma_bar <= 0.5:
            raise ValueError(f"gamma_bar must be in [0, 1/2], got {gamma_bar!r}")
        if self.base == "count":
            raise ValueError("unnormalised votes are defined for +-1 base classifiers only, "
                             "not for base='count'")
        d = self.X.shape[1]
        order = np.random.default_rng(random_state).permutation(d)
        alpha = np.zeros(d)
        one_pass_signs(self._signs, self.y, self.sample_weight, order, gamma_bar,
                       resolve_smoothing(smoothing, n_examples(self)), alpha,
                       False)
        return LinearVotes(np.zeros(d), 2.0 * alpha, -alpha.sum())

    def fit(self, *, gamma_bar: float = 0.0, smoothing: float | None = None, random_state=None,
            tol: float = 1e-12, max_iter: int = 100) -> boostkit.BoostModel:
        """One pass of one-pass AdaBoost (``gamma_bar = 0``) or PickyAdaBoost(gamma_bar).

        Returns a model with one :class:`LinearVotes` term and one record summarising the pass
        (``record.extra``: ``features_used``, ``pool_size``).
        """
        if not 0.0 <= gamma_bar <= 0.5:
            raise ValueError(f"gamma_bar must be in [0, 1/2], got {gamma_bar!r}")
        m, d = self.X.shape
        y, d1 = self.y, self.sample_weight
        order = np.random.default_rng(random_state).permutation(d)
        s = resolve_smoothing(smoothing, n_examples(self))
        alpha = np.zeros(d)
        if self.base == "count":
            column_ptr, entries, raw = self._columns
            n_used, log_potential = one_pass_counts(column_ptr, entries, raw, d1, order,
                                                    gamma_bar, s, tol, max_iter, alpha)
            hypothesis = LinearVotes(alpha, np.zeros(d), 0.0)
            # = hypothesis.scores(X): on CSR input scipy's faster product sums in the same order
            margin = self.X @ alpha
        else:
            n_used, log_potential = one_pass_signs(self._signs, y, d1, order, gamma_bar, s, alpha)
            hypothesis = LinearVotes(np.zeros(d), 2.0 * alpha, -alpha.sum())
            margin = hypothesis.scores(self.X)
        yf = y * margin
        weighted_error = float(d1 @ ((yf < 0) + 0.5 * (margin == 0)))
        bound = math.exp(log_potential)
        algorithm = "picky-adaboost" if gamma_bar else "opab"
        params = {"proposal": {"base": self.base}, "calibration": {"smoothing": smoothing}}
        if gamma_bar:
            params["picky"] = {"gamma_bar": gamma_bar}
        record = boostkit.RoundRecord(
            round=1, hypothesis=f"one pass: {int(n_used)} of {d} base classifiers used",
            weighted_error=weighted_error, edge=0.5 - weighted_error, z=bound,
            error_bound=bound, training_error=float(d1 @ (yf <= 0)), coefficients=(1.0,),
            stop_reason="pool-exhausted", extra={"features_used": int(n_used), "pool_size": d},
        )
        return boostkit.BoostModel(
            classes=self.classes, n_features=d, hypotheses=(hypothesis,),
            contributions=(boostkit.LinearContribution(1.0),), records=(record,),
            recipe=boostkit.get_registry().algorithm(algorithm).with_params(params),
            stop_reason="pool-exhausted",
        )


def one_pass(X, y, *, gamma_bar: float = 0.0, base: str = "auto", smoothing: float | None = None,
             sample_weight=None, random_state=None, tol: float = 1e-12,
             max_iter: int = 100) -> boostkit.BoostModel:
    """One fused pass: ``OnePass(X, y, base=..., sample_weight=...).fit(gamma_bar=..., ...)``."""
    return OnePass(X, y, base=base, sample_weight=sample_weight).fit(
        gamma_bar=gamma_bar, smoothing=smoothing, random_state=random_state, tol=tol,
        max_iter=max_iter)


def _margin_columns(csr, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(column_ptr, entries, raw)`` of :func:`~boostkit_onepass.kernels.csr_margin_columns`,
    with 4-byte entries when every row index fits beside its code."""
    fits = csr.shape[0] <= np.iinfo(np.uint32).max >> CODE_BITS
    entries = np.empty(csr.nnz, dtype=np.uint32 if fits else np.uint64)
    column_ptr, raw = csr_margin_columns(csr.indptr, csr.indices, csr.data, y, csr.shape[1],
                                         entries)
    return column_ptr, entries, raw


def _dense_csr(X: np.ndarray):
    from scipy import sparse

    return sparse.csr_matrix(X)


def _signs(X) -> np.ndarray:
    """(d, m) int8 array of x_ij > 0 ? +1 : -1, feature-major (one byte per example and feature:
    a sign classifier votes on every example, so the pass is O(m d) whatever the input)."""
    m, d = X.shape
    if is_sparse(X):
        csc = X.tocsc()
        signs = np.full((d, m), -1, dtype=np.int8)
        columns = np.repeat(np.arange(d), np.diff(csc.indptr))
        positive = csc.data > 0
        signs[columns[positive], csc.indices[positive]] = 1
        return signs
    signs = np.empty((d, m), dtype=np.int8)
    for start in range(0, m, 4096):  # row blocks bound the temporaries
        signs[:, start:start + 4096] = np.where(X[start:start + 4096] > 0, 1, -1).T
    return signs

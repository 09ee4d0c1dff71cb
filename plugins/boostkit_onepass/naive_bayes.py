"""Naive Bayes, the reference point of Barutcuoglu et al. 2007, as a one-term booster.

Section 4 compares one-pass boosting with multinomial naive Bayes (McCallum & Nigam 1998) on
Reuters, and naive Bayes on the synthetic +-1 data of Table 2. Naive Bayes is itself an additive
model over the same single-feature votes: its log-odds is log pi_+ / pi_- plus one term per
feature. So it is registered as an algorithm whose proposal fits naive Bayes once, on the
initial distribution, and proposes that log-odds as a single :class:`LinearVotes` hypothesis;
the ``unit-coefficient`` calibration adds it as it is, the ``initial-weights`` reweighting keeps
D_1 (naive Bayes reweights nothing), and the next proposal is ``None``. It thus
takes the same inputs (CSR term counts included), saves, loads and cross-validates like every
booster, and ``boostkit compare`` lists it beside them.

The hypothesis is *half* the log-odds, F(x) = 1/2 log P(+|x) / P(-|x), so the engine's
probability 1 / (1 + e^{-2F}) is exactly naive Bayes' posterior.
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.data import is_sparse
from boostkit.smoothing import n_examples

from .hypotheses import LinearVotes
from .validators import one_of, positive

EVENT_MODELS = ("auto", "multinomial", "bernoulli")


def _class_sums(X, weights: np.ndarray, indicator: bool) -> np.ndarray:
    """sum_i weights_i x_ij (or [x_ij > 0]) for every feature j, without an (n, d) temporary."""
    if is_sparse(X):
        M = X.tocsr()
        if indicator:
            M = M.copy()
            M.data = (M.data > 0).astype(np.float64)
        return np.asarray(M.T @ weights).ravel()
    out = np.zeros(X.shape[1])
    for start in range(0, X.shape[0], 1024):  # row blocks bound the indicator's temporary
        block = X[start:start + 1024]
        out += weights[start:start + 1024] @ ((block > 0) if indicator else block)
    return out


def resolve_event_model(X, event_model: str) -> str:
    """``"auto"``: multinomial for non-negative values (counts), Bernoulli on x > 0 otherwise."""
    if event_model != "auto":
        return event_model
    values = X.data if is_sparse(X) else X
    return "multinomial" if values.size == 0 or values.min() >= 0.0 else "bernoulli"


def fit_naive_bayes(X, y: np.ndarray, sample_weight: np.ndarray, *, event_model: str = "auto",
                    smoothing: float = 1.0) -> LinearVotes:
    """Half the naive Bayes log-odds as a :class:`LinearVotes` hypothesis.

    ``sample_weight`` counts as example multiplicities (as scikit-learn's); ``smoothing`` is
    Laplace's lambda. Multinomial (McCallum & Nigam): theta_cj = (N_cj + lambda) /
    (sum_j N_cj + lambda d) with N_cj = sum_{i in c} x_ij. Bernoulli on [x > 0]:
    p_cj = (N_cj + lambda) / (N_c + 2 lambda) with N_cj the weight of class-c examples with
    x_ij > 0. Class priors are the weighted class frequencies.
    """
    model = resolve_event_model(X, event_model)
    pos = np.where(y > 0, sample_weight, 0.0)
    neg = np.where(y > 0, 0.0, sample_weight)
    log_prior = np.log(pos.sum()) - np.log(neg.sum())
    n_features = X.shape[1]
    if model == "multinomial":
        values = X.data if is_sparse(X) else X
        if values.size and values.min() < 0.0:
            raise ValueError(
                "multinomial naive Bayes needs non-negative feature values (counts); X has "
                "negative values: use event_model='bernoulli' (or 'auto')"
            )
        counts_pos = _class_sums(X, pos, indicator=False) + smoothing
        counts_neg = _class_sums(X, neg, indicator=False) + smoothing
        log_ratio = np.log(counts_pos / counts_pos.sum()) - np.log(counts_neg / counts_neg.sum())
        return LinearVotes(0.5 * log_ratio, np.zeros(n_features), 0.5 * log_prior)
    p = (_class_sums(X, pos, indicator=True) + smoothing) / (pos.sum() + 2.0 * smoothing)
    q = (_class_sums(X, neg, indicator=True) + smoothing) / (neg.sum() + 2.0 * smoothing)
    absent = np.log1p(-p) - np.log1p(-q)
    present = np.log(p) - np.log(q)
    return LinearVotes(np.zeros(n_features), 0.5 * (present - absent),
                       0.5 * (log_prior + absent.sum()))


@attrs.define
class NaiveBayes(boostkit.Proposal):
    """Propose naive Bayes' (half) log-odds once, fitted on D_1; then ``None``.

    The engine hands components the normalised D_1, so example weights count as multiplicities
    m D_1(i), summing to m, the examples counted by weight (:func:`boostkit.smoothing.n_examples`):
    scikit-learn's naive Bayes with the same sample weights, so that weight 2 is a repeated
    example (weights summing to less than the examples of positive weight are rescaled to them).

    Parameters
    ----------
    event_model:
        ``"multinomial"`` (term counts, Barutcuoglu et al. 2007, section 4), ``"bernoulli"`` (x > 0
        or not, for +-1 features such as Table 2's), or ``"auto"``: multinomial when every value is
        non-negative, else Bernoulli.
    smoothing:
        Laplace's lambda (1: add-one).
    """

    name = "naive-bayes"
    provides = frozenset({"real-scores", "sparse-input"})
    event_model: str = attrs.field(default="auto", validator=one_of(EVENT_MODELS))
    smoothing: float = attrs.field(default=1.0, converter=float, validator=positive)
    _proposed: bool = attrs.field(init=False, default=False)

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        self._proposed = False

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        if self._proposed:
            return None
        self._proposed = True
        data = state.data
        hypothesis = fit_naive_bayes(
            data.X, data.y, data.sample_weight * n_examples(data),
            event_model=self.event_model, smoothing=self.smoothing,
        )
        return boostkit.Candidate(hypothesis, scores=hypothesis.scores(data.X))


@attrs.define
class InitialWeights(boostkit.Reweighting):
    """D_{t+1} = D_1: no reweighting, and no potential (``log_potential`` is ``None``).

    For one-term "boosters" such as naive Bayes: its log-odds over thousands of features can
    reach |F| in the thousands, where an exponential potential exp(-yF) is meaningless (and
    overflows a float).
    """

    name = "initial-weights"

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        return boostkit.Weights(state.data.sample_weight.copy(), None)

"""Ordered pools of base classifiers, consumed in a single pass (Barutcuoglu et al. 2007).

One-pass boosting (section 1: "(a) fixing an order b_1, ..., b_n of the base classifiers without
looking at the data, (b) committing to use base classifier b_t in round t") and POPBM (section 2,
step 1: "Choose a random ordering b_1, ..., b_n of the base classifiers") both walk once through a
fixed random order of base classifiers, one per feature. :class:`FeaturePool` is that order;
``ordered-pool`` proposes its classifiers in turn and ``popbm-pool`` adds POPBM's selection rule.
"""

from __future__ import annotations

import warnings

import attrs
import numpy as np

import boostkit
from boostkit.data import is_sparse

from .hypotheses import ConstantVote, FeatureCount, FeatureSign, feature_column
from .kernels import all_plus_minus_one
from .majority import bbm_normaliser
from .validators import below_half, one_of, positive

BASES = ("auto", "sign", "count")
ORDERS = ("random", "given")


def plus_minus_one(X) -> bool:
    """Whether every entry of ``X`` (implicit zeros of a sparse matrix included) is -1 or +1."""
    if is_sparse(X):
        return X.nnz == X.shape[0] * X.shape[1] and all_plus_minus_one(X.data)
    return all_plus_minus_one(np.ascontiguousarray(X))


def resolve_base(X, base: str) -> str:
    """``"sign"`` or ``"count"``: ``"auto"`` is ``"sign"`` when every feature is +-1."""
    if base != "auto":
        return base
    return "sign" if plus_minus_one(X) else "count"


class FeaturePool:
    """A fixed order over the base classifiers of the features of ``X``, walked once.

    ``base="sign"``: h(x) = +-(x_j > 0 ? +1 : -1) (:class:`FeatureSign`); ``base="count"``:
    h(x) = x_j (:class:`FeatureCount`). With ``negations`` each sign classifier also appears
    negated, at its own place in the order. ``order="random"`` draws the order from ``rng``
    (the fit's generator, so the same seed gives the same pass); ``"given"`` keeps the feature
    order (with negations: b_1, -b_1, b_2, -b_2, ...).

    Columns are read from a copy made once: CSC for sparse input (column j is a slice), Fortran
    order for dense input, so each classifier's training output costs O(n), never O(n d).
    """

    def __init__(self, X, *, base: str, negations: bool, order: str, rng: np.random.Generator):
        self.base = resolve_base(X, base)
        if self.base == "count" and negations:
            raise ValueError(
                "negations apply to sign classifiers only: a count classifier's voting weight "
                "already takes either sign"
            )
        n_features = X.shape[1]
        self._columns = X.tocsc() if is_sparse(X) else np.asfortranarray(X)
        features = np.arange(n_features)
        if negations:
            self._features = np.repeat(features, 2)
            self._polarities = np.tile([1, -1], n_features)
        else:
            self._features = features
            self._polarities = np.ones(n_features, dtype=np.int64)
        size = self._features.shape[0]
        self.order = rng.permutation(size) if order == "random" else np.arange(size)
        self.position = 0

    def __len__(self) -> int:
        return self.order.shape[0]

    def next(self) -> boostkit.Candidate | None:
        """The next base classifier with its training output, or ``None`` when the pool is spent."""
        if self.position >= len(self):
            return None
        entry = self.order[self.position]
        self.position += 1
        feature = int(self._features[entry])
        column = feature_column(self._columns, feature)
        if self.base == "count":
            return boostkit.Candidate(FeatureCount(feature), scores=column)
        polarity = int(self._polarities[entry])
        cells = (column > 0.0).view(np.uint8)
        scores = np.where(cells, float(polarity), -float(polarity))
        return boostkit.Candidate(FeatureSign(feature, polarity), cells=cells, scores=scores)


@attrs.define
class OrderedPool(boostkit.Proposal):
    """Propose the base classifiers of a fixed random order, each once; ``None`` when spent.

    One-pass AdaBoost (Barutcuoglu et al. 2007, section 1, (a)-(c); section 4) uses b_t in round t;
    wrap it with ``picky`` for PickyAdaBoost (section 3). A full pass needs ``n_rounds`` at least
    the pool size (the number of features, twice that with ``negations``); with more, the run ends
    with stop reason ``"pool-exhausted"``.

    Parameters
    ----------
    base:
        ``"sign"`` (x_j > 0 ? +1 : -1, the feature itself when it is +-1), ``"count"``
        (h = x_j, confidence-rated, for term counts), or ``"auto"``: sign when every feature is
        +-1, else count.
    negations:
        Also propose -b_j for every sign classifier.
    order:
        ``"random"`` (drawn from the fit's seeded generator) or ``"given"`` (feature order, as
        in the construction of section 3.2).
    """

    name = "ordered-pool"
    base: str = attrs.field(default="auto", validator=one_of(BASES))
    negations: bool = attrs.field(default=False, converter=bool)
    order: str = attrs.field(default="random", validator=one_of(ORDERS))
    _pool: FeaturePool | None = attrs.field(init=False, default=None)

    @property
    def provides(self) -> frozenset[str]:
        # "auto" picks sign or count from the data, so only what both give is promised.
        if self.base == "sign":
            return frozenset({"real-scores", "sign-scores", "cells", "two-cells", "sparse-input"})
        return frozenset({"real-scores", "sparse-input"})

    def __attrs_post_init__(self):
        if self.base == "count" and self.negations:
            raise ValueError("negations apply to sign classifiers only, not to base='count'")

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        self._pool = FeaturePool(state.data.X, base=self.base, negations=self.negations,
                                 order=self.order, rng=state.rng)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        return self._pool.next()


class PopbmAbortWarning(UserWarning):
    """POPBM ran out of base classifiers before choosing T of them (its step 3 abort)."""


class PopbmAborted(boostkit.BoostkitError, RuntimeError):
    """Raised by ``popbm-pool`` with ``on_abort="raise"`` when the pool runs out before T."""


@attrs.define
class PopbmPool(boostkit.Proposal):
    """POPBM's weak learner (Barutcuoglu et al. 2007, section 2, steps 1-3) over +-1 base
    classifiers of the features.

    In round t, with T = ``n_rounds`` and Z_t = E_D[w_t(x, y)] the boost-by-majority normaliser
    (:func:`boostkit_onepass.majority.bbm_normaliser`):

    * if Z_t >= epsilon / T, walk on through the fixed random order b_{i_t}, b_{i_t + 1}, ... and
      return the first b_j whose advantage under D_t (``state.weights``) is at least ``alpha``:
      1/2 sum_i D_t(i) y_i b_j(x_i) >= alpha (step 2.b.i);
    * if Z_t < epsilon / T, return the constant hypothesis +1 without moving in the order
      (step 2.b.ii);
    * if the order runs out before T classifiers are chosen, POPBM aborts (step 3): with
      ``on_abort="raise"`` the fit raises :class:`PopbmAborted`; with ``"warn"`` (the default)
      the run stops (``"pool-exhausted"``, the model a majority of fewer than T votes) and a
      :class:`PopbmAbortWarning` says so.

    The loop condition printed in step 2 ("i_t <= min{T, n}") is read as: rounds continue while
    the order is not spent (i_t <= n) and fewer than T classifiers are chosen, which is what
    step 3 checks. ``alpha`` must equal the ``boost-by-majority`` reweighting's alpha (a shared
    parameter: a mismatch is refused before fitting).
    The pool holds sign classifiers (a count is read as present / absent), with their negations
    by default, since POPBM only accepts positive advantages.
    """

    name = "popbm-pool"
    shared_params = ("alpha",)
    needs = frozenset({"unit-coefficients"})
    provides = frozenset({"real-scores", "sign-scores", "cells", "sparse-input"})
    alpha: float = attrs.field(default=0.05, converter=float, validator=below_half)
    epsilon: float = attrs.field(default=0.01, converter=float, validator=positive)
    negations: bool = attrs.field(default=True, converter=bool)
    order: str = attrs.field(default="random", validator=one_of(ORDERS))
    on_abort: str = attrs.field(default="warn", validator=one_of(("warn", "raise")))
    _pool: FeaturePool | None = attrs.field(init=False, default=None)
    _aborted: str | None = attrs.field(init=False, default=None)

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        self._pool = FeaturePool(state.data.X, base="sign", negations=self.negations,
                                 order=self.order, rng=state.rng)
        self._aborted = None

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        t, T = state.round, state.n_rounds
        data = state.data
        z = bbm_normaliser(state.margin, data.y, data.sample_weight, t, T, self.alpha)
        if z < self.epsilon / T:
            cells = np.zeros(data.n_samples, dtype=np.uint8)
            return boostkit.Candidate(ConstantVote(), cells=cells, scores=np.ones(data.n_samples))
        weighted_labels = state.weights * data.y
        while (candidate := self._pool.next()) is not None:
            if 0.5 * float(weighted_labels @ candidate.scores) >= self.alpha:
                return candidate
        message = (
            f"POPBM aborted (Barutcuoglu et al. 2007, section 2, step 3): the {len(self._pool)} base classifiers ran "
            f"out after {t - 1} of T={T} were chosen (round {t} found none with advantage >= "
            f"alpha={self.alpha}); lower alpha or T, or add base classifiers"
        )
        if self.on_abort == "raise":
            raise PopbmAborted(message)
        self._aborted = message
        return None

    @boostkit.hookimpl
    def boostkit_fit_end(self, state, model):
        if self._aborted is not None:
            warnings.warn(
                f"{self._aborted}. The model is a majority over the {model.n_rounds} chosen.",
                PopbmAbortWarning,
            )

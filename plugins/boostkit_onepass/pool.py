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
from boostkit.capabilities import DISTRIBUTED
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


def pool_order(n_features: int, negations: bool, order: str, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(features, polarities, order)`` of a pool: its entries (each feature, then with
    ``negations`` its negation beside it) and the order they are walked in, drawn from ``rng``
    for ``order="random"``."""
    features = np.arange(n_features)
    if negations:
        features, polarities = np.repeat(features, 2), np.tile([1, -1], n_features)
    else:
        polarities = np.ones(n_features, dtype=np.int64)
    size = features.shape[0]
    return features, polarities, rng.permutation(size) if order == "random" else np.arange(size)


@attrs.frozen
class ColumnBins:
    """A reduction over the rows (``state.reduce``): the least and the greatest raw value of
    every feature in every bin, ``(d, n_bins)`` each (inf and -inf where a bin is empty), and
    how many values are neither -1 nor +1; combined over the parts of the rows by
    :meth:`combine` (least, greatest, sum)."""

    n_bins: int

    def __call__(self, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        codes, X = rows.codes, rows.X
        least = np.full((codes.shape[0], self.n_bins), np.inf)
        greatest = np.full((codes.shape[0], self.n_bins), -np.inf)
        for j in range(codes.shape[0]):
            np.minimum.at(least[j], codes[j], X[:, j])
            np.maximum.at(greatest[j], codes[j], X[:, j])
        return least, greatest, np.array([np.count_nonzero((X != 1.0) & (X != -1.0))])

    @staticmethod
    def combine(answers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (np.minimum.reduce([a[0] for a in answers]),
                np.maximum.reduce([a[1] for a in answers]), sum(a[2] for a in answers))


def sign_tables(least: np.ndarray, greatest: np.ndarray, features) -> np.ndarray:
    """``(d, n_bins)`` uint8: the cell (1 for x > 0) of every bin of every feature, from the
    :class:`ColumnBins` ranges; a bin holding values on both sides of 0 is refused, naming
    it."""
    straddling = (least <= 0.0) & (greatest > 0.0)
    if straddling.any():
        j, b = (int(i) for i in np.argwhere(straddling)[0])
        raise boostkit.DataError(
            f"column {boostkit.feature_label(features, j)} has training values on both sides "
            f"of 0 in its bin {b}, so where the rows live only as bin codes x > 0 cannot be "
            "read from them: bin the data so that 0 is a bin edge (more max_bins, or fewer "
            "distinct values), or fit in memory"
        )
    return (least > 0.0).astype(np.uint8)


def bin_values(least: np.ndarray, greatest: np.ndarray, features) -> np.ndarray:
    """``(d, n_bins)``: the one value of every bin of every feature (0 where a bin is empty),
    from the :class:`ColumnBins` ranges; a bin holding several values is refused, naming it."""
    several = greatest > least
    if several.any():
        j, b = (int(i) for i in np.argwhere(several)[0])
        raise boostkit.DataError(
            f"column {boostkit.feature_label(features, j)} has several training values in its "
            f"bin {b} ({least[j, b]:g} to {greatest[j, b]:g}), so where the rows live only as "
            "bin codes a count classifier's Newton alpha cannot be found from the bins' sums: "
            "term counts need at most max_bins distinct values per column, or fit in memory"
        )
    return np.where(np.isfinite(least), least, 0.0)


class _PoolWalk:
    """A fixed order over base classifiers (``order``: entries of ``_features`` and
    ``_polarities``), walked once from ``position``; shared by the pools below."""

    def _check_negations(self, negations: bool) -> None:
        if self.base == "count" and negations:
            raise ValueError(
                "negations apply to sign classifiers only: a count classifier's voting weight "
                "already takes either sign"
            )

    def __len__(self) -> int:
        return self.order.shape[0]

    def _next_entry(self) -> tuple[int, int] | None:
        """``(entry, feature)`` of the next classifier in the order, or ``None`` when spent."""
        if self.position >= len(self):
            return None
        entry = self.order[self.position]
        self.position += 1
        return entry, int(self._features[entry])


class BinnedPool(_PoolWalk):
    """:class:`FeaturePool`'s classifiers, in the same order, for a fit whose rows live
    elsewhere (shards), from the bins: a sign classifier's cells (x > 0) are read from its
    feature's bin codes (``bin_cells``, :func:`sign_tables`), a count classifier's cells are
    its feature's bins, each holding one value (``info["cell_scores"]``, :func:`bin_values`);
    their cell sums come from ``state.class_histogram()``, and the shards evaluate the terms
    on their raw values. ``base="auto"`` is resolved as :func:`resolve_base` does, from the
    count of values that are not +-1."""

    def __init__(self, state, *, base: str, negations: bool, order: str,
                 rng: np.random.Generator):
        data = state.data
        least, greatest, not_sign = state.reduce(ColumnBins(data.binned.max_bins))
        self.base = base if base != "auto" else ("count" if int(not_sign[0]) else "sign")
        self._check_negations(negations)
        self._state = state
        self._features, self._polarities, self.order = pool_order(data.n_features, negations,
                                                                  order, rng)
        self._tables = (sign_tables(least, greatest, data.features) if self.base == "sign"
                        else bin_values(least, greatest, data.features))
        self.position = 0

    def next(self) -> boostkit.Candidate | None:
        """The next classifier with its cells and cell sums, or ``None`` when spent."""
        walked = self._next_entry()
        if walked is None:
            return None
        entry, feature = walked
        hist = self._state.class_histogram()[feature]  # (bins, 2): negatives, positives
        if self.base == "count":
            values = self._tables[feature, :hist.shape[0]]
            return boostkit.Candidate(
                FeatureCount(feature),
                bin_cells=boostkit.BinCells(feature, np.arange(hist.shape[0], dtype=np.uint8)),
                cell_wneg=hist[:, 0].copy(), cell_wpos=hist[:, 1].copy(),
                info={"cell_scores": values})
        table = self._tables[feature]
        present = table[:hist.shape[0]].astype(bool)
        wneg = np.array([hist[~present, 0].sum(), hist[present, 0].sum()])
        wpos = np.array([hist[~present, 1].sum(), hist[present, 1].sum()])
        return boostkit.Candidate(FeatureSign(feature, int(self._polarities[entry])),
                                  bin_cells=boostkit.BinCells(feature, table),
                                  cell_wneg=wneg, cell_wpos=wpos)


class FeaturePool(_PoolWalk):
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
        self._check_negations(negations)
        self._columns = X.tocsc() if is_sparse(X) else np.asfortranarray(X)
        self._features, self._polarities, self.order = pool_order(X.shape[1], negations, order,
                                                                  rng)
        self.position = 0

    def next(self) -> boostkit.Candidate | None:
        """The next base classifier with its training output, or ``None`` when the pool is spent."""
        walked = self._next_entry()
        if walked is None:
            return None
        entry, feature = walked
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

    Every data plane (``"distributed"``): where the rows live elsewhere (shards) the same
    order's classifiers come from the bins (:class:`BinnedPool`): a sign classifier's cells are
    the bins of x > 0, a count classifier's the bins of its feature, each holding one value
    (so at most ``max_bins`` distinct values per column), from one reduction over the raw
    values, which the shards keep (``reads_values``) and evaluate the terms on.
    """

    name = "ordered-pool"
    base: str = attrs.field(default="auto", validator=one_of(BASES))
    negations: bool = attrs.field(default=False, converter=bool)
    order: str = attrs.field(default="random", validator=one_of(ORDERS))
    _pool: FeaturePool | BinnedPool | None = attrs.field(init=False, default=None)

    #: The shards of a distributed fit keep the raw values: the terms are evaluated on them.
    reads_values = True

    @property
    def provides(self) -> frozenset[str]:
        # "auto" picks sign or count from the data, so only what both give is promised.
        if self.base == "sign":
            return frozenset({"real-scores", "sign-scores", "cells", "two-cells", "sparse-input",
                              DISTRIBUTED})
        return frozenset({"real-scores", "sparse-input", DISTRIBUTED})

    def __attrs_post_init__(self):
        if self.base == "count" and self.negations:
            raise ValueError("negations apply to sign classifiers only, not to base='count'")

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        if state.data.X is None:  # the rows live elsewhere: the classifiers over the bins
            self._pool = BinnedPool(state, base=self.base, negations=self.negations,
                                    order=self.order, rng=state.rng)
        else:
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

"""Component roles and the values that pass between them.

A *component* is a class with a unique registered ``name`` and a *role*. Round components
(proposal, calibration, reweighting, stopping, observer and the two wrapper roles) are
instantiated once per fit from a recipe's parameters and registered on that fit's plugin manager,
so they implement round hooks (:mod:`boostkit.hookspecs`) as methods decorated with
:data:`boostkit.hookimpl`. *Value* components (weak hypotheses and contributions) are what a fitted
model is made of; they are saved by name, parameters and arrays and rebuilt on load, so they must
be attrs classes whose fields are JSON scalars, numpy arrays, or other value components.

Parameters of round components are their attrs fields: ``StumpLearner(criterion="gini")``. Field
validators run when the recipe is instantiated, before any data is touched.
"""

from __future__ import annotations

import functools
import inspect
import math
from typing import Any, ClassVar, Mapping

import attrs
import numpy as np

from .kernels.boosting import take_cells

__all__ = [
    "Capabilities",
    "Component",
    "Proposal",
    "ProposalWrapper",
    "Calibration",
    "CalibrationWrapper",
    "Reweighting",
    "Stopping",
    "Observer",
    "WeakHypothesis",
    "Contribution",
    "Candidate",
    "BinCells",
    "CodeCells",
    "Calibrated",
    "Weights",
    "RowWeights",
    "ShardWeights",
    "RoundRecord",
    "ROUND_ROLES",
    "VALUE_ROLES",
    "FEATURE_INDEX",
    "feature_field",
    "float_vector",
    "describe_hypothesis",
]


#: attrs metadata key of the fields made by :func:`feature_field`.
FEATURE_INDEX = "boostkit.feature_index"


def feature_field(*, constant: int | None = None, **kwargs):
    """An attrs field of a weak hypothesis that holds a column of X (an int, or an int array).

    Loading a model checks such fields as untrusted input: integers in ``[0, n_features)`` of
    the model, or ``constant``, a sentinel the hypothesis reads as "no column" (e.g. -1 for a
    constant hypothesis). Other arguments go to :func:`attrs.field`::

        feature: int = boostkit.feature_field(converter=int)
    """
    metadata = {**kwargs.pop("metadata", {}), FEATURE_INDEX: constant}
    return attrs.field(metadata=metadata, **kwargs)


def float_vector(value) -> np.ndarray:
    """attrs converter of a value component's vector field (thresholds, weights, a direction):
    a C-contiguous float64 1-D array, or a ``ValueError`` giving the shape it got (loading a
    model runs it on the stored arrays)::

        thresholds: np.ndarray = attrs.field(converter=boostkit.float_vector, eq=False)
    """
    arr = np.ascontiguousarray(value, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"expected a 1-D array of numbers, got shape {arr.shape}")
    return arr


@attrs.frozen
class Capabilities:
    """A component class's capabilities (:mod:`boostkit.capabilities`), from
    :meth:`Component.capabilities`: ``parametric`` is True when its parameters can change them."""

    needs: frozenset[str]
    provides: frozenset[str]
    withdraws: frozenset[str]
    parametric: bool


class Component:
    """Base of every component. Subclasses set ``name`` and are attrs classes."""

    name: ClassVar[str]
    role: ClassVar[str]
    #: Capabilities (:mod:`boostkit.capabilities`) this component relies on from the rest of the
    #: recipe or from the data. A property when they depend on the parameters; read them from
    #: the class with :meth:`capabilities`.
    needs: ClassVar[frozenset[str]] = frozenset()
    #: Capabilities this component guarantees to the others.
    provides: ClassVar[frozenset[str]] = frozenset()
    #: Parameters that must have the same value in every component of a recipe that shares them
    #: (a regularizer and the reweighting derived for it): a mismatch is refused before fitting.
    shared_params: ClassVar[tuple[str, ...]] = ()

    def get_params(self) -> dict[str, Any]:
        """The component's parameters (its attrs fields set by ``__init__``) as a plain dict."""
        return attrs.asdict(self, recurse=False, filter=lambda attribute, _: attribute.init)

    @classmethod
    def capabilities(cls, **params) -> Capabilities:
        """What the class needs, provides and withdraws, read without fitting anything.

        Class-level declarations are read as they are. When one is a property (it depends on
        the parameters), the class is instantiated with ``params`` (its defaults for the others;
        a parameter without a default must be given) and ``parametric`` is True: other
        parameters may give other capabilities.
        ``registry.component("stump").capabilities()``,
        ``registry.component("pav").capabilities(backfit=True)``.
        """
        declared = {name: inspect.getattr_static(cls, name, frozenset())
                    for name in ("needs", "provides", "withdraws")}
        parametric = any(isinstance(value, property) for value in declared.values())
        if parametric or params:
            instance = cls(**params)
            declared = {name: getattr(instance, name, frozenset()) for name in declared}
        return Capabilities(parametric=parametric, **{k: frozenset(v) for k, v in declared.items()})


class Proposal(Component):
    """Proposes the next weak hypothesis (hook ``boostkit_propose``)."""

    role = "proposal"


class ProposalWrapper(Component):
    """Wraps the proposal (``boostkit_propose`` with ``wrapper=True``), e.g. picky selection.

    What the wrapped proposal provides passes through, less the capabilities in ``withdraws``.
    """

    role = "proposal-wrapper"
    #: Capabilities of the wrapped component that the wrapped result no longer has.
    withdraws: ClassVar[frozenset[str]] = frozenset()


class Calibration(Component):
    """Turns a hypothesis' training output into a contribution (hook ``boostkit_calibrate``).

    A calibration that only appends terms provides the running margin (``"running-margin"``);
    one that back-fits earlier terms (``Calibrated.replaces``) must not declare it.
    """

    role = "calibration"
    provides: ClassVar[frozenset[str]] = frozenset({"running-margin"})


class CalibrationWrapper(Component):
    """Wraps the calibration (``boostkit_calibrate`` with ``wrapper=True``): smoothing,
    truncation, input-dependent regularizers.

    What the wrapped calibration provides passes through, less the capabilities in
    ``withdraws``.
    """

    role = "calibration-wrapper"
    #: Capabilities of the wrapped component that the wrapped result no longer has.
    withdraws: ClassVar[frozenset[str]] = frozenset()


class Reweighting(Component):
    """Computes the next example weights from the margins (hook ``boostkit_reweight``)."""

    role = "reweighting"


class Stopping(Component):
    """May end the run after a round (hook ``boostkit_should_stop``)."""

    role = "stopping"


class Observer(Component):
    """Sees every finished round (hook ``boostkit_round_end``)."""

    role = "observer"


class WeakHypothesis(Component):
    """A fitted weak hypothesis h: X -> R, stored in models.

    ``n_cells`` is the number of cells of the input partition the hypothesis induces (the two
    sides of a stump, a tree's leaves), or 0 when it only gives real scores. Calibrations that
    assign one value per cell use :meth:`cells`; the others use :meth:`scores`.
    """

    role = "hypothesis"
    n_cells: ClassVar[int] = 0

    def scores(self, X: np.ndarray) -> np.ndarray:
        """Real scores h(x) for the rows of ``X`` (float64, shape ``(n,)``)."""
        raise NotImplementedError

    def cells(self, X: np.ndarray) -> np.ndarray:
        """The cell index (``0 <= cell < n_cells``, an integer array) of each row of ``X``.

        On the training rows it must give, bit for bit, the cells the proposal put in the
        training :class:`Candidate` (and :meth:`scores` its scores): the fit trains on those and
        the model predicts with these, so a hypothesis that places a row elsewhere (the other
        edge of a bin, ``>=`` for ``>``) predicts with another model than the one fitted.
        ``boostkit.testing.check_component`` checks it."""
        raise TypeError(f"weak hypothesis {self.name!r} does not partition its input")

    def threshold_split(self) -> tuple[int, float, bool] | None:
        """``(feature, threshold, missing_left)`` when the hypothesis' two cells are
        ``x[feature] <= threshold`` (cell 0) and ``> threshold`` (cell 1), a missing value going
        to cell 0 when ``missing_left``; else ``None`` (the default). Models evaluate runs of
        such terms in one compiled pass over the rows (:mod:`boostkit.kernels.predict`)."""
        return None

    def cell_score_table(self) -> np.ndarray | None:
        """h(x) of each cell, ``(n_cells,)``, when the scores are constant on every cell (a
        stump's ``cell_scores``), else ``None`` (the default)."""
        return None

    def describe(self, features=None) -> str:
        """A short human-readable description for round records and logs.

        ``features`` is the fit's :class:`boostkit.features.FeatureSchema` (or ``None``): a
        hypothesis that reads columns names them with ``boostkit.feature_label(features, j)``
        (the column's name, or ``x[j]``) and categories with ``features.category(j, code)``.
        Hypotheses whose ``describe`` takes no argument are described without it.
        """
        return self.name


def describe_hypothesis(hypothesis, features=None) -> str:
    """``hypothesis.describe(features)``, or ``describe()`` for a hypothesis written before
    descriptions took the feature schema."""
    if features is None or features.is_default:
        return hypothesis.describe()
    if _describe_takes_features(type(hypothesis)):
        return hypothesis.describe(features)
    return hypothesis.describe()


@functools.lru_cache(maxsize=None)
def _describe_takes_features(cls) -> bool:
    try:
        return len(inspect.signature(cls.describe).parameters) > 1
    except (TypeError, ValueError):
        return False


class Contribution(Component):
    """This round's term c_t(x) of the additive model F_T(x) = sum_t c_t(x).

    The model evaluates rounds in order and passes the running margin F_{t-1}(x) along, so a
    contribution may depend on it (input-dependent regularizers).
    """

    role = "contribution"

    def values(self, output: Candidate, margin: np.ndarray) -> np.ndarray:
        """c_t(x) for the examples of ``output``, given the margin F_{t-1} on them."""
        raise NotImplementedError

    def cell_table(self, hypothesis: WeakHypothesis) -> np.ndarray | None:
        """c_t in each cell of ``hypothesis``, ``(n_cells,)`` or ``(n_cells, C)``, when it depends
        on nothing but the cell (not on the running margin), else ``None`` (the default).
        ``table[cells]`` must be exactly what :meth:`values` gives, bit for bit: the model then
        evaluates it in its compiled pass."""
        return None


ROUND_ROLES = (
    "proposal",
    "proposal-wrapper",
    "calibration",
    "calibration-wrapper",
    "reweighting",
    "stopping",
    "observer",
)
VALUE_ROLES = ("hypothesis", "contribution")


class Candidate:
    """A weak hypothesis together with its output on a set of examples.

    During fitting the proposal returns one for the training examples, usually with ``cells``
    and/or ``scores`` already computed (a stump learner knows the side of every example from the
    binned data) and, optionally, the per-cell class weights ``cell_wpos``/``cell_wneg`` it found
    on the way. At prediction time the model builds one per round for the new examples and the
    outputs are computed lazily from ``X``.

    A proposal that chooses from ``state.class_histogram()`` works on every data plane
    (:mod:`boostkit.plane`): its candidate carries ``bin_cells`` (the cells found from the bin
    codes, a :class:`CodeCells`: the cell of every bin of one feature, :class:`BinCells`, or a
    tree's route of the codes down its nodes) and the cell sums, and
    ``codes=state.data.binned.codes``: the rows' bin codes where the rows are in this process,
    from which the cells are found on first use; ``None`` in a distributed fit, where each
    shard applies ``bin_cells`` to its own codes and ``has_rows`` is False. A hypothesis of the
    raw values whose rows live elsewhere (shards that keep their values) comes with none of
    these: ``Candidate(hypothesis, rows_elsewhere=True)``; the rows compute its output.

    ``info`` carries what the proposal wants to tell the calibration (for example the loss it
    minimised).
    """

    __slots__ = ("hypothesis", "X", "_cells", "_scores", "cell_wpos", "cell_wneg", "bin_cells",
                 "_codes", "info")

    def __init__(
        self,
        hypothesis: WeakHypothesis,
        X: np.ndarray | None = None,
        *,
        cells: np.ndarray | None = None,
        scores: np.ndarray | None = None,
        cell_wpos: np.ndarray | None = None,
        cell_wneg: np.ndarray | None = None,
        bin_cells: CodeCells | None = None,
        codes: np.ndarray | None = None,
        info: Mapping[str, Any] | None = None,
        rows_elsewhere: bool = False,
    ):
        if (X is None and cells is None and scores is None and bin_cells is None
                and not rows_elsewhere):
            raise TypeError("Candidate needs X, cells, scores or bin_cells (or rows_elsewhere="
                            "True: its output is computed where the rows live)")
        if bin_cells is not None and not isinstance(bin_cells, CodeCells):
            raise TypeError("bin_cells must be a boostkit.components.CodeCells (such as "
                            f"boostkit.BinCells), got {type(bin_cells).__name__}")
        if codes is not None and bin_cells is None:
            raise TypeError("Candidate: codes are the rows' bin codes that bin_cells apply to; "
                            "give bin_cells with them")
        self.hypothesis = hypothesis
        self.X = X
        self._cells = cells
        self._scores = scores
        self.cell_wpos = cell_wpos
        self.cell_wneg = cell_wneg
        self.bin_cells = bin_cells
        self._codes = codes
        self.info = dict(info or {})

    @property
    def has_rows(self) -> bool:
        """Whether the candidate can give its output example by example (``X``, ``cells``,
        ``scores``, or ``bin_cells`` with the rows' ``codes``); False for a distributed fit's
        candidate, which has cell sums only."""
        return self.has_cells or self._scores is not None

    def bind_codes(self, codes: np.ndarray) -> None:
        """Give a candidate of ``bin_cells`` alone the ``(d, n)`` bin codes of the fit's rows
        (what the in-process plane does for a proposal that did not pass ``codes``)."""
        if self.bin_cells is None or self.has_rows:
            raise TypeError(f"candidate {self.hypothesis.describe()} has no bin_cells to apply, "
                            "or has its rows already")
        self._codes = codes

    def release_codes(self) -> None:
        """Drop the rows' bin codes of a candidate whose output is ``bin_cells`` applied to them
        alone (no ``X``, and no cells or scores computed yet): it then has no rows, as on a
        shard, and is calibrated from its cell sums, until :meth:`bind_codes` gives them back
        (what the in-process plane does for a round that needs no value per row). A candidate
        with its output otherwise keeps it."""
        if self.X is None and self._cells is None and self._scores is None:
            self._codes = None

    @property
    def has_cells(self) -> bool:
        """Whether the candidate gives a cell per example (``cells``, ``X`` or ``bin_cells``
        with ``codes`` to compute them from); a candidate with ``scores`` only has none."""
        return (self._cells is not None or self.X is not None
                or (self.bin_cells is not None and self._codes is not None))

    @property
    def cells(self) -> np.ndarray:
        """Cell index of each example (computed from ``X``, or ``bin_cells`` and ``codes``, on
        first use)."""
        if self._cells is None:
            if self.X is not None:
                self._cells = self.hypothesis.cells(self.X)
            elif self.bin_cells is not None and self._codes is not None:
                self._cells = self.bin_cells.cells(self._codes)
            else:
                raise TypeError(f"candidate {self.hypothesis.describe()} carries no cells")
        return self._cells

    @property
    def scores(self) -> np.ndarray:
        """Real score of each example, computed on first use: from the cells when the
        hypothesis has a score per cell (``cell_score_table``), else from ``X``."""
        if self._scores is None:
            table = (self.hypothesis.cell_score_table()
                     if self._cells is not None or (self.X is None and self.has_cells) else None)
            if table is not None:
                self._scores = take_cells(np.ascontiguousarray(table, dtype=np.float64),
                                          self.cells)
                return self._scores
            if self.X is None:
                raise TypeError(f"candidate {self.hypothesis.describe()} carries no scores")
            self._scores = self.hypothesis.scores(self.X)
        return self._scores


def _bin_table(value) -> np.ndarray:
    if (isinstance(value, np.ndarray) and value.dtype == np.uint8 and value.ndim == 1
            and value.shape[0] and value.flags.c_contiguous):
        return value  # a byte per bin: in range by its type (the per-round case, kept cheap)
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.shape[0] == 0 or arr.dtype.kind not in "iub":
        raise ValueError(f"table must be a non-empty 1-D integer array (a cell per bin), got "
                         f"{arr.dtype} of shape {arr.shape}")
    if arr.min() < 0 or arr.max() > 255:
        raise ValueError(f"table must hold cells in [0, 255], got [{arr.min()}, {arr.max()}]")
    return np.ascontiguousarray(arr, dtype=np.uint8)


class CodeCells:
    """The cells of a hypothesis found from the rows' bin codes alone: how a candidate chosen
    from sums over the rows tells the rows where they go, wherever they live.

    A subclass gives :meth:`cells` (the cell of every row from the ``(n_features, n)`` uint8
    bin codes, the missing-value bin included) and :attr:`nbytes` (its size on the wire). It
    must be picklable: in a distributed fit every shard applies it to its own codes.
    :class:`BinCells` reads one feature (a stump's split); a plugin's tree gives one that
    routes the codes down its nodes.
    """

    def cells(self, codes: np.ndarray) -> np.ndarray:
        """The cell of every example, from the ``(n_features, n)`` bin codes."""
        raise NotImplementedError

    @property
    def nbytes(self) -> int:
        """The bytes of its arrays (what sending it to a shard moves, besides framing)."""
        raise NotImplementedError


@attrs.frozen
class BinCells(CodeCells):
    """The cells of a hypothesis that reads one binned feature: ``table[code]`` is the cell of
    an example whose ``feature`` has bin code ``code``.

    It is how a candidate chosen from a histogram tells the rows where they go, wherever they
    live (:meth:`boostkit.splits.Split.bin_cells` builds it for a split); ``table`` has one
    entry per bin of the histogram, the missing-value bin included. A table that is a cut
    (cell 0 up to some bin, cell 1 above) is applied as a comparison of the codes, the same
    cells without a lookup.
    """

    feature: int = attrs.field(converter=int)
    table: np.ndarray = attrs.field(converter=_bin_table, eq=False)
    # The last bin of cell 0 when the table is 0...0 1...1, else -1; found on first use.
    _cut: int | None = attrs.field(init=False, default=None, repr=False, eq=False)

    @classmethod
    def cut_after(cls, feature: int, bin: int, n_bins: int) -> BinCells:
        """The cells of a cut of ``feature`` after bin ``bin``: cell 0 for codes ``<= bin``,
        cell 1 above, over ``n_bins`` bins."""
        cells = cls(feature, np.greater(np.arange(n_bins), bin).view(np.uint8))
        object.__setattr__(cells, "_cut", int(bin))
        return cells

    def cells(self, codes: np.ndarray) -> np.ndarray:
        """The cell of every example, from the ``(n_features, n)`` bin codes."""
        cut = self._cut
        if cut is None:
            table = self.table
            k = int(table.argmax())  # the first bin of the highest cell
            is_cut = k > 0 and table[k] == 1 and table[k:].all() and not table[:k].any()
            cut = k - 1 if is_cut else -1
            object.__setattr__(self, "_cut", cut)
        if cut >= 0:
            return np.greater(codes[self.feature], cut).view(np.uint8)
        return self.table[codes[self.feature]]

    @property
    def nbytes(self) -> int:
        return self.table.nbytes


def _float_tuple(values) -> tuple[float, ...]:
    return tuple(map(float, values))


def _finite_float_array(instance, attribute, value):
    # (n,), or (n, C) over (example, class) pairs; the engine checks the shape against the fit's.
    # Say only what is wrong: a float64 array of a wrong shape is not told to be float64.
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{attribute.name} must be a numpy array, got {type(value).__name__}; "
                        "pass np.asarray(values, dtype=np.float64)")
    if value.dtype != np.float64:
        raise TypeError(f"{attribute.name} must be a float64 array, got dtype {value.dtype}; "
                        "compute it in float64 (float32 rounds small weights to 0)")
    if value.ndim not in (1, 2):
        raise TypeError(f"{attribute.name} has shape {value.shape}, expected (n,) or (n, C): "
                        "one weight per example, or per (example, class) pair")


@attrs.frozen
class Calibrated:
    """What a calibration returns: the contribution and its values on the training examples.

    ``train_values`` is ``None`` only for a candidate without rows (``candidate.has_rows`` is
    False: a distributed fit, where each shard applies ``contribution.cell_table``).

    ``coefficients`` summarises the contribution for the round record (``(alpha,)`` for a
    constant coefficient, the per-cell values for a partition). ``extra`` holds any further
    quantities the calibration wants recorded.

    Back-fitting (Wilbur et al. 2005, section 3.3, PAV-AdaBoost.finite): a calibration that re-fits
    the term of an earlier round sets ``replaces`` to that term's index in ``state.contributions``
    and ``removed_values`` to the old term's values on the training examples. The engine then moves
    the margins by ``train_values - removed_values`` and the model keeps the new contribution (and
    the candidate's hypothesis) in place of the old one instead of adding a term. Without rows
    (``train_values`` ``None``) there are no values to give: the data plane removes the old term
    where the rows live.
    """

    contribution: Contribution
    train_values: np.ndarray | None = attrs.field(
        eq=False, validator=attrs.validators.optional(_finite_float_array))
    coefficients: tuple[float, ...] = attrs.field(converter=_float_tuple)
    extra: Mapping[str, Any] = attrs.field(factory=dict)
    replaces: int | None = None
    removed_values: np.ndarray | None = attrs.field(default=None, eq=False)

    @removed_values.validator
    def _check_removed(self, attribute, value):
        if value is not None and self.replaces is None:
            raise ValueError("removed_values are the values of the term that replaces names: "
                             "give replaces with them")
        if value is None and self.replaces is not None and self.train_values is not None:
            raise ValueError("replaces needs removed_values, the replaced term's values on the "
                             "training examples, beside train_values")
        if value is not None:
            _finite_float_array(self, attribute, value)


@attrs.frozen
class Weights:
    """A distribution over training examples, as returned by a reweighting rule.

    ``log_potential`` is log sum_i D_1(i) L(y_i, F(x_i)) for the surrogate loss L that bounds the
    0/1 loss (exp(-yF) for AdaBoost), or ``None`` if the rule has none; the engine records
    Z_t = exp(log_potential_t - log_potential_{t-1}) and the bound prod Z_t = exp(log_potential_t).
    """

    weights: np.ndarray = attrs.field(eq=False, validator=_finite_float_array)
    log_potential: float | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


def _log_scale(value):
    """A log scale: a float, or a pair (negative rows', positive rows') as a float64 array."""
    if np.ndim(value) == 0:
        return float(value)
    pair = np.array(value, dtype=np.float64)
    if pair.shape != (2,):
        raise ValueError(f"log_scale must be a number or a pair (negative, positive), got "
                         f"{value!r}")
    return pair


def _finite_or_minus_inf_scale(instance, attribute, value):
    for v in np.atleast_1d(value):
        _finite_or_minus_inf(instance, attribute, float(v))


def _finite_or_minus_inf(instance, attribute, value):
    if math.isnan(value) or value == math.inf:
        raise ValueError(f"{attribute.name} must be a number or -inf, got {value!r}")


@attrs.frozen
class RowWeights:
    """The next distribution over some rows, unnormalised: a reweighting's row form
    (``boostkit_row_weights``).

    The weights of the rows are ``weights * exp(log_scale)``; the engine normalises them over
    every row of the fit (over all shards, by the log-sum-exp of their totals, when the rows
    are split), so the rule never needs the other rows. ``log_potential`` is the log of these
    rows' share of the potential, log sum_{i in rows} D_1(i) L(y_i, F(x_i)) (``-inf`` when they
    have no weight), or ``None`` when the rule has no potential.

    ``by_sign``: the rows of each sign (y = -1 and y = +1) are normalised apart, each sign to
    total 1/2, by the totals of that sign over all rows: a distribution over (negative,
    positive) pairs that factorises, D(x0, x1) = v(x0) v(x1), given per row as v / 2
    (bipartite RankBoost, Freund et al. 2003). The potential is then the pairs',
    log(W_- / D1_-) + log(W_+ / D1_+) from each sign's total weight W (``weights *
    exp(log_scale)`` summed over all rows) and total D_1, which the engine computes:
    ``log_potential`` is ``None``. ``log_scale`` may then be a pair, the scales of the negative
    and of the positive rows' weights, so that neither sign underflows when the two signs'
    largest exponents lie far apart.
    """

    weights: np.ndarray = attrs.field(eq=False, validator=_finite_float_array)
    log_scale: float | np.ndarray = attrs.field(converter=_log_scale,
                                                validator=_finite_or_minus_inf_scale)
    log_potential: float | None = attrs.field(
        default=None, converter=lambda v: None if v is None else float(v),
        validator=attrs.validators.optional(_finite_or_minus_inf))
    by_sign: bool = attrs.field(default=False, kw_only=True,
                                validator=attrs.validators.instance_of(bool))

    def __attrs_post_init__(self):
        if self.by_sign and self.log_potential is not None:
            raise ValueError("RowWeights(by_sign=True) takes no log_potential: the engine "
                             "computes the pairs' potential from each sign's totals")
        if not self.by_sign and np.ndim(self.log_scale):
            raise ValueError("RowWeights: a pair of log scales (one per sign) needs "
                             f"by_sign=True, got log_scale={self.log_scale!r}")


#: The name of :class:`RowWeights` before one reweighting contract served every data plane;
#: kept for one release.
ShardWeights = RowWeights


def _optional_float(value):
    return None if value is None else float(value)


@attrs.frozen
class RoundRecord:
    """What happened in one round.

    Attributes
    ----------
    round:
        1-based round number t.
    hypothesis:
        Description of h_t.
    weighted_error:
        eps_t = sum_i D_t(i) [y_i c_t(x_i) < 0] + 1/2 sum_i D_t(i) [c_t(x_i) = 0]: the weighted
        error of the round's change to the margins (its contribution, or the new minus the old
        term when it back-fits an earlier one), abstentions counting half.
    edge:
        gamma_t = 1/2 - eps_t.
    z:
        Z_t, the factor by which this round multiplied the reweighting's potential
        (``exp(log_potential_t - log_potential_{t-1})``); for AdaBoost
        Z_t = sum_i D_t(i) exp(-y_i c_t(x_i)) (Wilbur et al. 2005, eq. 6). ``None`` when the rule
        has no potential.
    error_bound:
        prod_{s<=t} Z_s, which bounds the (sample-weighted) training error (Wilbur et al. 2005,
        Theorem 1).
    training_error:
        sum_i D_1(i) [y_i F_t(x_i) <= 0].
    coefficients:
        The calibration's summary of c_t (alpha, or the per-cell values).
    stop_reason:
        Why the run ended after this round, on the last record only.
    extra:
        Further quantities recorded by components.
    """

    round: int
    hypothesis: str
    weighted_error: float = attrs.field(converter=float)
    edge: float = attrs.field(converter=float)
    z: float | None = attrs.field(converter=_optional_float)
    error_bound: float | None = attrs.field(converter=_optional_float)
    training_error: float = attrs.field(converter=float)
    coefficients: tuple[float, ...] = attrs.field(converter=_float_tuple)
    stop_reason: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def unchecked(cls, round: int, hypothesis: str, weighted_error: float, edge: float,
                  z: float | None, error_bound: float | None, training_error: float,
                  coefficients: tuple[float, ...]) -> RoundRecord:
        """The record ``RoundRecord(...)`` makes of these, built without the converters, for
        numbers that are Python floats already (``z`` and ``error_bound`` floats or ``None``,
        ``coefficients`` a tuple of floats): a compiled batch's records, made from its arrays'
        ``tolist()``, at half the cost. Nothing is checked: other values make a record the
        constructor would not."""
        record = object.__new__(cls)
        # The slots' own setters: the class is frozen, and object.__setattr__ takes twice as long.
        (set_round, set_hypothesis, set_weighted_error, set_edge, set_z, set_error_bound,
         set_training_error, set_coefficients, set_stop_reason, set_extra) = _RECORD_SLOTS
        set_round(record, round)
        set_hypothesis(record, hypothesis)
        set_weighted_error(record, weighted_error)
        set_edge(record, edge)
        set_z(record, z)
        set_error_bound(record, error_bound)
        set_training_error(record, training_error)
        set_coefficients(record, coefficients)
        set_stop_reason(record, None)
        set_extra(record, {})
        return record


#: The setters of RoundRecord's slots, in the order of its fields (RoundRecord.unchecked).
_RECORD_SLOTS = tuple(vars(RoundRecord)[field.name].__set__ for field in attrs.fields(RoundRecord))

"""Distributed fits: the data plane of rows split into shards that live elsewhere.

The examples are split into *shards* that live where their data are (Dask workers, in
:mod:`boostkit.dask`); the driver never holds a row. A shard keeps its examples binned
(:class:`Shard`: bin codes, signs, D_1, running margins F and weights), built once from its
source partition with bin edges the driver computed from a row sample of every partition.

The fit is the engine's one boosting loop (:func:`boostkit.engine.run_rounds`) over a
:class:`ShardPlane` (:mod:`boostkit.plane`). Each round:

1. the proposal chooses from ``state.class_histogram()``, the class histograms of the shards
   summed on the driver in shard order, in float64, the shards' weights normalised by the
   log-sum-exp of their totals (:func:`reduce_reports`); the calibration works on cell sums
   alone (a candidate without rows);
2. the chosen term (:class:`ShardTerm`: a feature's bin-to-cell table and per-cell values, a
   few hundred bytes) goes to the shards; every shard applies it to its margins, measures it,
   computes its part of the next distribution (the reweighting's row form,
   ``boostkit_row_weights``, the one hook that runs on the shard) and returns its class
   histogram under those weights (:class:`ShardReport`);
3. records, stopping rules, observers and callbacks run on the driver, as in any fit.

The model is the checkpoint. A shard knows how many terms it has applied; a shard rebuilt from
its source partition after its worker was lost (or any copy that fell behind) answers
:class:`ShardBehind`, and the driver replays the model's terms on it from where it is. The
transport (how shards are built, reached and rebuilt) is the caller's: :mod:`boostkit.dask`
runs it on Dask, and :class:`LocalShards` in this process (tests, and the reference the
distributed fit is compared with).

Which recipes distribute: every component must provide ``"distributed"``
(:func:`boostkit.capabilities.check_distributed`); anything that needs all rows at once is
refused, never gathered.
"""

from __future__ import annotations

import math
import pickle
import weakref
from typing import Any, Sequence

import attrs
import numba
import numpy as np
import pluggy

from . import hookspecs
from .capabilities import (binary_only_components, check_categorical_input, check_distributed,
                           handles_missing_values)
from .components import Candidate, CodeCells, RowWeights
from .data import (BIN_SAMPLE, MAX_BINS, BinnedData, LabelCoding, bin_thresholds,
                   check_features, count_bins, encode_bins, encode_like)
from .errors import DataError, HookError, RecipeError
from .features import FeatureSchema, is_sparse
from .engine import _component, _missing_hint, _owner, _round_manager, run_rounds
from .kernels.boosting import add_contribution
from .model import BoostModel
from .observers import RoundLog
from .plane import Advance, DataPlane, Rows, combine_reductions, row_weights
from .plugins import get_registry
from .splits import histogram, valid_splits

__all__ = [
    "PartitionSummary",
    "Shard",
    "ShardBehind",
    "ShardPlan",
    "ShardReport",
    "ShardTerm",
    "ShardedData",
    "build_shard",
    "FitStats",
    "LocalShards",
    "ShardPlane",
    "ShardReduce",
    "ShardReduced",
    "Shards",
    "fit_on_shards",
    "initial_report",
    "partition_sample",
    "partition_summary",
    "reduce_reports",
    "sample_sizes",
    "step_shard",
    "step_shards",
]


# -- what a partition holds ---------------------------------------------------------------------
def _as_matrix(X, features: FeatureSchema, name: str) -> np.ndarray:
    """A partition's ``X`` as the float64 matrix components see (categories as indices)."""
    X = features.transform(X, name=f"X ({name})")
    if is_sparse(X):
        raise DataError(f"X ({name}) is sparse; a distributed fit needs dense partitions")
    return np.asarray(X, dtype=np.float64)


def _partition_weights(sample_weight, n: int, name: str) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64).ravel()
    if w.shape[0] != n:
        raise DataError(f"{name}: X has {n} rows but sample_weight has {w.shape[0]}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise DataError(f"{name}: sample_weight must be finite and non-negative, got values in "
                        f"[{np.nanmin(w) if w.size else 0:g}, {np.nanmax(w) if w.size else 0:g}]"
                        + (" and NaN" if np.isnan(w).any() else ""))
    return w


def _labels(y, n: int, name: str) -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise DataError(f"{name}: y must be 1-D (one label per example) in a distributed fit, "
                        f"got shape {arr.shape}")
    if arr.shape[0] != n:
        raise DataError(f"{name}: X has {n} rows but y has {arr.shape[0]}: X and y must be "
                        "chunked alike (the same rows in every partition)")
    return arr


@attrs.frozen
class PartitionSummary:
    """What the driver learns of one partition before binning: its size, labels and holes,
    and its columns (:class:`boostkit.FeatureSchema`: names, categories seen)."""

    n_rows: int
    n_weighted: int
    weight_total: float
    classes: np.ndarray = attrs.field(eq=False)
    class_weights: np.ndarray = attrs.field(eq=False)  # the initial weight of each class
    missing: np.ndarray = attrs.field(eq=False)  # (d,) bool: columns with a missing value
    features: FeatureSchema


def partition_summary(index: int, X, y, sample_weight, *, categorical_features,
                      allow_missing: bool, missing_hint: str = "") -> PartitionSummary:
    """Check partition ``index`` and summarise it (:class:`PartitionSummary`)."""
    name = f"partition {index}"
    features, matrix = FeatureSchema.learn(X, categorical_features, name=f"X ({name})")
    if is_sparse(matrix):
        raise DataError(f"X ({name}) is sparse; a distributed fit needs dense partitions")
    matrix = check_features(matrix, name=f"X ({name})", allow_missing=allow_missing,
                            missing_hint=missing_hint, features=features, allow_empty=True)
    n = matrix.shape[0]
    labels = _labels(y, n, name)
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise DataError(f"y ({name}) contains NaN or infinite labels")
    w = _partition_weights(sample_weight, n, name)
    classes, codes = np.unique(labels, return_inverse=True)
    return PartitionSummary(n_rows=n, n_weighted=int(np.count_nonzero(w)),
                            weight_total=float(w.sum()), classes=classes,
                            class_weights=np.bincount(codes.ravel(), weights=w,
                                                      minlength=classes.shape[0]),
                            missing=np.isnan(matrix).any(axis=0), features=features)


def sample_sizes(n_weighted: Sequence[int], total: int = BIN_SAMPLE) -> np.ndarray:
    """Rows to draw from each partition for the bin edges: all of them when the partitions
    hold at most ``total`` rows of positive weight (the edges are then exactly those of one
    machine), else ``total`` split in proportion to their sizes (largest remainders)."""
    counts = np.asarray(n_weighted, dtype=np.int64)
    if counts.sum() <= total:
        return counts
    share = counts * (total / counts.sum())
    sizes = np.floor(share).astype(np.int64)
    rest = total - int(sizes.sum())
    sizes[np.argsort(sizes - share, kind="stable")[:rest]] += 1
    return np.minimum(sizes, counts)


def partition_sample(index: int, X, sample_weight, size: int, seed: int,
                     features: FeatureSchema, weight_total: float) -> np.ndarray:
    """``size`` rows of positive weight of partition ``index``, drawn without replacement by a
    generator seeded from the fit's seed and the partition (all of them, in order, when
    ``size`` is their number). A row's weight is its share of ``weight_total``, as one machine
    normalises it (a weight that vanishes there is no weight here either)."""
    matrix = _as_matrix(X, features, f"partition {index}")
    rows = np.flatnonzero(_partition_weights(sample_weight, matrix.shape[0],
                                             f"partition {index}") / weight_total > 0)
    if size < rows.shape[0]:
        rng = np.random.default_rng([seed, index])
        rows = np.sort(rng.choice(rows, size, replace=False))
    return np.ascontiguousarray(matrix[rows], dtype=np.float64)


# -- shards ---------------------------------------------------------------------------------------
@attrs.frozen(eq=False)
class ShardPlan:
    """What every shard of one fit is built with: the bin edges, the label coding, the total
    initial weight, the schema of DataFrame partitions and the reweighting component (whose
    row form, ``boostkit_row_weights``, runs on the shard).

    ``keep_values``: the shards keep their rows' raw float64 values beside the bin codes
    (``Shard.values``, ``Rows.X`` of reductions), because a component reads them there (it
    says so with ``reads_values = True``).
    """

    thresholds: tuple = attrs.field(eq=False)
    missing_bin: int | None
    max_bins: int
    classes: np.ndarray = attrs.field(eq=False)
    weight_total: float
    features: FeatureSchema
    allow_missing: bool
    reweighting: Any = attrs.field(eq=False)
    n_jobs: int = 1
    keep_values: bool = False

    @property
    def n_bins(self) -> int:
        """B, the bins of the histograms (the missing-value bin included)."""
        return self.max_bins + (self.missing_bin is not None)

    @property
    def sent_bins(self) -> np.ndarray:
        """The bins a shard's report carries: those of values of the widest feature, and the
        missing-value bin; the others are empty in every shard (few distinct values, e.g.
        pixels or categories, then ship a fraction of the histogram)."""
        widest = max((t.shape[0] + 1 for t in self.thresholds), default=1)
        bins = np.arange(min(widest, self.max_bins))
        return bins if self.missing_bin is None else np.append(bins, self.missing_bin)


@attrs.define(eq=False)
class Shard:
    """One shard of a distributed fit, where it lives: the examples binned, their signs and D_1,
    the running margins F and the current weights (unnormalised: ``weights * exp(log_scale)``),
    and ``n_applied``, the number of the model's terms already in ``margin``."""

    index: int
    codes: np.ndarray
    y: np.ndarray
    is_pos: np.ndarray
    labels: np.ndarray
    initial_weights: np.ndarray
    bin_counts: np.ndarray
    margin: np.ndarray
    weights: np.ndarray
    plan: ShardPlan
    log_scale: float = 0.0
    log_potential: float | None = None
    n_applied: int = 0
    n_weighted: int = 0  # examples of positive initial weight
    #: (training_error, weighted_error, previous_scale) of the last term applied.
    last_errors: tuple = (0.0, 0.0, 0.0)
    #: The raw values ``(n, d)`` when the plan keeps them (``ShardPlan.keep_values``), else None.
    values: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return self.codes.shape[1]

    def __sizeof__(self) -> int:
        # Dask places a task near its heaviest inputs, weighed by sizeof: a shard's bytes are
        # its arrays, so its rounds stay where it lives.
        return object.__sizeof__(self) + sum(
            a.nbytes for a in (self.codes, self.y, self.is_pos, self.initial_weights,
                               self.margin, self.weights, self.values) if a is not None)


def build_shard(index: int, plan: ShardPlan, X, y, sample_weight=None) -> Shard:
    """Shard ``index`` from its source partition: checked, binned with the plan's edges, at
    round 0 (no term applied, weights D_1)."""
    name = f"partition {index}"
    matrix = check_features(_as_matrix(X, plan.features, name), name=f"X ({name})",
                            allow_missing=plan.allow_missing, features=plan.features,
                            allow_empty=True)
    n = matrix.shape[0]
    coding = LabelCoding(plan.classes, np.empty((0,) if plan.classes.shape[0] == 2 else
                                                (0, plan.classes.shape[0])), None, False)
    target = encode_like(coding, _labels(y, n, name), n, name=f"y ({name})")
    w = _partition_weights(sample_weight, n, name) / plan.weight_total
    d1 = w if target.y.ndim == 1 else np.repeat(w[:, None] / target.y.shape[1],
                                                target.y.shape[1], axis=1)
    d1 = np.ascontiguousarray(d1)
    codes = encode_bins(matrix, plan.thresholds, plan.missing_bin, plan.max_bins)
    return Shard(index=index, codes=codes, y=target.y, is_pos=(target.y > 0).astype(np.uint8),
                 labels=target.labels, initial_weights=d1,
                 bin_counts=count_bins(codes, w, plan.n_bins), margin=np.zeros(target.y.shape),
                 weights=d1.copy(), plan=plan, n_weighted=int(np.count_nonzero(w)),
                 values=matrix if plan.keep_values else None)


@attrs.frozen
class ShardTerm:
    """One term of the model as a shard applies it: the cells of its examples
    (``bin_cells``, a :class:`boostkit.components.CodeCells`: a split's bin table, a tree's
    nodes over the codes) and the contribution's value in each cell (``values``, ``(n_cells,)`` or
    ``(n_cells, C)``), or, for a contribution that depends on more than the cell (on the running
    margin: an input-dependent regularizer), ``values=None`` and the ``hypothesis`` and
    ``contribution`` themselves, which the shard evaluates on its rows
    (``contribution.values(candidate, margin)`` on a candidate of ``bin_cells`` over its codes,
    and its raw values where the shard keeps them).

    ``removed``: the term of the model this one replaces (a back-fitting calibration's
    ``Calibrated.replaces``), as the shards applied it; they subtract its values.
    ``bin_cells`` is ``None`` for a hypothesis of the raw values (shards that keep them).
    """

    bin_cells: CodeCells | None
    values: np.ndarray | None = attrs.field(eq=False)
    hypothesis: Any = attrs.field(default=None, eq=False)
    contribution: Any = attrs.field(default=None, eq=False)
    removed: ShardTerm | None = attrs.field(default=None, eq=False)


@attrs.frozen
class ShardReduce:
    """A reduction to run on a shard after its terms (:meth:`boostkit.BoostState.reduce`), with
    the log of the total weight over all shards, which normalises the shard's weights."""

    reduction: Any = attrs.field(eq=False)
    log_total: float


@attrs.frozen
class ShardReduced:
    """A shard's answer to a :class:`ShardReduce`: the reduction over its rows."""

    index: int
    n_applied: int
    value: Any = attrs.field(eq=False)


@attrs.frozen
class ShardReport:
    """What a shard sends the driver after a round (a few kB: the histogram dominates).

    ``training_error`` is sum D_1(i) [y_i F(x_i) <= 0] over the shard's examples, and
    ``weighted_error`` the last term's error under the shard's weights before it (unnormalised:
    in units of ``exp(previous_scale)``). ``weight_total`` and ``log_scale``: the shard's new
    weights sum to ``weight_total * exp(log_scale)``; ``histogram`` is their class histogram
    (in units of ``exp(log_scale)``) over the plan's ``sent_bins`` only. ``bin_counts`` comes
    with the first report only; ``n_weighted`` counts the examples of positive initial weight.
    """

    index: int
    n_applied: int
    n_rows: int
    training_error: float
    weighted_error: float
    previous_scale: float
    weight_total: float
    log_scale: float
    log_potential: float | None
    histogram: np.ndarray = attrs.field(eq=False)
    bin_counts: np.ndarray | None = attrs.field(default=None, eq=False)
    n_weighted: int = 0


@attrs.frozen
class ShardBehind:
    """A shard's answer when it holds fewer terms than the round expects (it was rebuilt from
    its partition, or is a stale copy): the driver replays the model's terms from
    ``n_applied`` on. An answer, not an error: nothing failed."""

    index: int
    n_applied: int
    expected: int


_SHARD_HOOKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _shard_hook(plan: ShardPlan):
    """The relay of the shard-local hooks (the plan's reweighting), one per plan per process."""
    hook = _SHARD_HOOKS.get(plan)
    if hook is None:
        pm = pluggy.PluginManager(hookspecs.PROJECT)
        pm.add_hookspecs(hookspecs.RoundSpecs)
        pm.register(plan.reweighting)
        hook = _SHARD_HOOKS[plan] = pm.hook
    return hook


def _shard_weights(shard: Shard) -> RowWeights:
    """The reweighting's row form on the shard's rows."""
    return row_weights(_shard_hook(shard.plan), shard.margin.ravel(), shard.y.ravel(),
                       shard.initial_weights.ravel(), shard.plan.n_jobs,
                       f"boostkit_row_weights of reweighting {shard.plan.reweighting.name!r} on "
                       f"shard {shard.index}")


def _term_values(shard: Shard, term: ShardTerm) -> np.ndarray:
    """The values of ``term`` on the shard's rows."""
    if term.values is not None:
        change = np.ascontiguousarray(term.values[term.bin_cells.cells(shard.codes)])
    else:
        candidate = Candidate(term.hypothesis, shard.values, bin_cells=term.bin_cells,
                              codes=None if term.bin_cells is None else shard.codes)
        try:
            change = np.ascontiguousarray(term.contribution.values(candidate, shard.margin),
                                          dtype=np.float64)
        except Exception as exc:
            raise HookError(f"shard {shard.index}: contribution {term.contribution.name!r} "
                            f"failed on the shard's rows: {type(exc).__name__}: {exc}") from exc
        if change.shape == shard.margin.shape and not np.isfinite(change).all():
            raise HookError(f"shard {shard.index}: contribution {term.contribution.name!r} "
                            "gave NaN or infinite values on the shard's rows")
    return change


def _apply(shard: Shard, term: ShardTerm) -> tuple[float, float, float]:
    """Add ``term`` to the shard's margins (less the term it replaces, if any) and reweight:
    ``(training_error, weighted_error, previous_scale)``."""
    change = _term_values(shard, term)
    if term.removed is not None:
        change = change - _term_values(shard, term.removed)
    if change.shape != shard.margin.shape:
        raise HookError(f"shard {shard.index}: the term's values give shape {change.shape}, "
                        f"expected {shard.margin.shape}")
    previous_scale = shard.log_scale
    training_error, weighted_error, _, _ = add_contribution(
        shard.margin.ravel(), change.ravel(), shard.y.ravel(), shard.initial_weights.ravel(),
        shard.weights.ravel())
    answer = _shard_weights(shard)
    shard.weights = answer.weights.reshape(shard.margin.shape)
    shard.log_scale, shard.log_potential = answer.log_scale, answer.log_potential
    shard.n_applied += 1
    return training_error, weighted_error, previous_scale


def _report(shard: Shard, errors: tuple[float, float, float], counts: bool) -> ShardReport:
    hist = histogram(shard.codes, shard.weights, shard.is_pos, shard.plan.n_bins,
                     shard.plan.n_jobs, labels=shard.labels)[:, shard.plan.sent_bins]
    return ShardReport(
        index=shard.index, n_applied=shard.n_applied, n_rows=shard.n_rows,
        training_error=errors[0], weighted_error=errors[1], previous_scale=errors[2],
        # Every example is in one bin of feature 0: its histogram adds up the weights, and a
        # pass over the examples is saved.
        weight_total=float(hist[0].sum()), log_scale=shard.log_scale,
        log_potential=shard.log_potential, histogram=hist,
        bin_counts=shard.bin_counts if counts else None, n_weighted=shard.n_weighted)


def initial_report(shard: Shard) -> ShardReport:
    """The shard's report before the first round: the histogram of D_1 and its bin counts."""
    return _report(shard, (0.0, 0.0, 0.0), counts=True)


def _reduced(shard: Shard, reduce: ShardReduce) -> ShardReduced:
    rows = Rows(codes=shard.codes, y=shard.y, is_pos=shard.is_pos, labels=shard.labels,
                initial_weights=shard.initial_weights,
                weights=shard.weights * math.exp(shard.log_scale - reduce.log_total),
                margin=shard.margin, n_jobs=shard.plan.n_jobs, X=shard.values)
    try:
        value = reduce.reduction(rows)
    except Exception as exc:
        raise HookError(f"the reduction {reduce.reduction!r} failed on shard {shard.index}: "
                        f"{type(exc).__name__}: {exc}") from exc
    return ShardReduced(shard.index, shard.n_applied, value)


def step_shard(shard: Shard, first: int, terms: Sequence[ShardTerm],
               reduce: ShardReduce | None = None) -> ShardReport | ShardReduced | ShardBehind:
    """Apply the model's terms ``first, first + 1, ...`` (``terms``) to the shard, and report
    (or, given ``reduce``, answer the reduction over its rows).

    Answers :class:`ShardBehind` when the shard does not hold exactly ``first`` terms; a shard
    that already holds them all only reports again (a retried task changes nothing).
    """
    if terms and shard.n_applied == first + len(terms):
        pass
    elif shard.n_applied != first:
        return ShardBehind(shard.index, shard.n_applied, first)
    else:
        for term in terms:
            shard.last_errors = _apply(shard, term)
    if reduce is not None:
        return _reduced(shard, reduce)
    return _report(shard, shard.last_errors, counts=False)


def step_shards(shards: Sequence[Shard], calls: Sequence[tuple]
                ) -> list[ShardReport | ShardReduced | ShardBehind]:
    """:func:`step_shard` on several shards of one worker, in one task: a round then costs a
    task per worker, not per shard (the reports stay per shard, reduced in shard order).
    A call is ``(first, terms)``, or ``(first, terms, reduce)``."""
    return [step_shard(shard, *call) for shard, call in zip(shards, calls)]


# -- the driver -----------------------------------------------------------------------------------
@attrs.frozen
class RoundSums:
    """The shards' reports of one round, reduced on the driver in shard order."""

    histogram: np.ndarray = attrs.field(eq=False)
    log_total: float  # log of the sum of every shard's unnormalised weights
    training_error: float
    weighted_error: float
    log_potential: float | None


def _logsumexp(values: Sequence[float]) -> float:
    finite = [v for v in values if v > -math.inf]
    if not finite:
        return -math.inf
    top = max(finite)
    return top + math.log(math.fsum(math.exp(v - top) for v in finite))


def reduce_reports(reports: Sequence[ShardReport], previous_log_total: float,
                   plan: ShardPlan) -> RoundSums:
    """Sum the shards' reports in shard order, in float64: the histogram of the normalised
    weights D_{t+1} (all ``plan.n_bins`` bins), the training error, the round's weighted error
    under D_t (whose normaliser was ``previous_log_total``) and the potential."""
    reports = sorted(reports, key=lambda r: r.index)
    log_total = _logsumexp([r.log_scale + math.log(r.weight_total) if r.weight_total > 0
                            else -math.inf for r in reports])
    if not math.isfinite(log_total):
        raise HookError("the reweighting left no example of any shard with positive weight")
    sent = np.zeros_like(reports[0].histogram)
    weighted_error = training_error = 0.0
    for r in reports:
        if r.weight_total > 0:
            sent += r.histogram * math.exp(r.log_scale - log_total)
        training_error += r.training_error
        if r.weighted_error > 0:
            weighted_error += r.weighted_error * math.exp(r.previous_scale - previous_log_total)
    potentials = [r.log_potential for r in reports]
    log_potential = None if any(p is None for p in potentials) else _logsumexp(potentials)
    hist = np.zeros((sent.shape[0], plan.n_bins) + sent.shape[2:])
    hist[:, plan.sent_bins] = sent
    return RoundSums(hist, log_total, training_error, weighted_error, log_potential)


@attrs.define(eq=False)
class ShardedData:
    """The training data of a distributed fit as the driver's hooks see them (``state.data``):
    their shape, classes, columns and bins, and no row (``X``, ``y`` and the weights stay on
    the shards, so reading them is an error).

    ``binned`` is a :class:`boostkit.data.BinnedData` without ``codes``: the thresholds, and
    ``bin_counts``/``split_mask`` over all shards.
    """

    n_samples: int
    n_features: int
    n_columns: int
    n_weighted: int
    classes: np.ndarray
    features: FeatureSchema
    binned: BinnedData
    multilabel: bool = False
    weight_total: float | None = None  # the sample weights' total (boostkit.smoothing)
    X = y = is_pos = labels = sample_weight = initial_weights = None


class Shards:
    """How a distributed fit reaches its shards; :mod:`boostkit.dask` and :class:`LocalShards`
    implement it. Every method takes and returns small values; rows never come back."""

    n_shards: int

    def summaries(self, *, categorical_features, allow_missing: bool,
                  missing_hint: str) -> list[PartitionSummary]:
        """:func:`partition_summary` of every partition, in order."""
        raise NotImplementedError

    def samples(self, sizes: np.ndarray, seed: int, features: FeatureSchema,
                weight_total: float) -> np.ndarray:
        """The rows :func:`partition_sample` draws from every partition, stacked in order."""
        raise NotImplementedError

    def build(self, plan: ShardPlan) -> list[ShardReport]:
        """Build every shard (:func:`build_shard`) and return its :func:`initial_report`."""
        raise NotImplementedError

    def step(self, calls: dict[int, tuple]) -> dict[int, ShardReport | ShardReduced | ShardBehind]:
        """Run :func:`step_shard` on the shards named, with the call's arguments ``(first,
        terms)`` or ``(first, terms, reduce)``; a shard that is behind answers its
        :class:`ShardBehind` instead of a report."""
        raise NotImplementedError


class LocalShards(Shards):
    """Shards in this process, one per partition ``(X, y[, sample_weight])``: the transport of
    the tests, and of any single-machine check of the distributed round. ``lose(k)`` drops
    shard ``k``'s state as a lost worker would; it is rebuilt from its partition on next use.
    """

    def __init__(self, partitions: Sequence[tuple]):
        self.partitions = [tuple(p) + (None,) * (3 - len(p)) for p in partitions]
        self.n_shards = len(self.partitions)
        self.shards: list[Shard | None] = []
        self.plan: ShardPlan | None = None

    def summaries(self, *, categorical_features, allow_missing, missing_hint):
        return [partition_summary(k, X, y, w, categorical_features=categorical_features,
                                  allow_missing=allow_missing, missing_hint=missing_hint)
                for k, (X, y, w) in enumerate(self.partitions)]

    def samples(self, sizes, seed, features, weight_total):
        return np.concatenate([partition_sample(k, X, w, int(sizes[k]), seed, features,
                                                weight_total)
                               for k, (X, _, w) in enumerate(self.partitions)])

    def _shard(self, k: int) -> Shard:
        if self.shards[k] is None:
            self.shards[k] = build_shard(k, self.plan, *self.partitions[k])
        return self.shards[k]

    def build(self, plan):
        self.plan = plan
        self.shards = [None] * self.n_shards
        return [initial_report(self._shard(k)) for k in range(self.n_shards)]

    def step(self, calls):
        return {k: step_shard(self._shard(k), *call) for k, call in calls.items()}

    def lose(self, k: int) -> None:
        """Forget shard ``k``'s state, as if its worker had died."""
        self.shards[k] = None


#: A shard replayed this many times in one round means something rebuilds it again and again.
MAX_REPLAYS = 5


@attrs.define
class FitStats:
    """What a distributed fit moved: per-round bytes each way (terms out, reports back), and
    the replays of lost shards."""

    rounds: int = 0
    bytes_out: int = 0
    bytes_in: int = 0
    replays: int = 0
    replayed_terms: int = 0

    @property
    def bytes_per_round(self) -> float:
        return (self.bytes_out + self.bytes_in) / max(self.rounds, 1)


def _array_bytes(value) -> int:
    if isinstance(value, tuple):
        return sum(_array_bytes(v) for v in value)
    return int(getattr(value, "nbytes", 0))


def _nbytes(value) -> int:
    """The bytes a term, a reduction or a report takes on the wire (its arrays, plus a little
    framing; a term's contribution and hypothesis by their pickled size)."""
    if isinstance(value, ShardReport):
        return value.histogram.nbytes + 128
    if isinstance(value, ShardReduced):
        return _array_bytes(value.value) + 96
    if isinstance(value, ShardReduce):
        return len(pickle.dumps(value.reduction)) + 32
    removed = 0 if value.removed is None else _nbytes(value.removed)
    if value.values is None:
        cells = 0 if value.bin_cells is None else value.bin_cells.nbytes
        return (cells + len(pickle.dumps(value.hypothesis))
                + len(pickle.dumps(value.contribution)) + 96 + removed)
    return value.bin_cells.nbytes + value.values.nbytes + 96 + removed


def _step_all(shards: Shards, first: int, new_terms: list[ShardTerm], terms: list[ShardTerm],
              stats: FitStats, reduce: ShardReduce | None = None) -> list:
    """``new_terms`` (the model's terms ``first, ...``), then a report or ``reduce``, on every
    shard, replaying the model's earlier ``terms`` on any shard that fell behind."""
    extra = () if reduce is None else (reduce,)
    calls = {k: (first, new_terms, *extra) for k in range(shards.n_shards)}
    answered: dict[int, Any] = {}
    for _ in range(MAX_REPLAYS + 1):
        stats.bytes_out += sum(_nbytes(t) for call in calls.values() for t in (*call[1], *extra))
        answers = shards.step(calls)
        calls = {}
        for k, answer in answers.items():
            if isinstance(answer, ShardBehind):
                calls[k] = (answer.n_applied, terms[answer.n_applied:], *extra)
                stats.replays += 1
                stats.replayed_terms += len(terms) - answer.n_applied
            else:
                answered[k] = answer
                stats.bytes_in += _nbytes(answer)
        if not calls:
            return [answered[k] for k in range(shards.n_shards)]
    raise HookError(f"shards {sorted(calls)} fell behind {MAX_REPLAYS} times in round "
                    f"{len(terms)}: they are being lost faster than they can be rebuilt")


def _class_weights(summaries: Sequence[PartitionSummary]) -> tuple[np.ndarray, np.ndarray]:
    """The classes of all partitions (sorted) and the total initial weight of each."""
    classes = np.unique(np.concatenate([s.classes for s in summaries]))
    weight = np.zeros(classes.shape[0])
    for s in summaries:
        weight[np.searchsorted(classes, s.classes)] += s.class_weights
    return classes, weight


def _check_table(table, hypothesis, n_columns: int, owner: str) -> np.ndarray:
    """The per-cell values a shard applies, checked where the calibration hands them back."""
    table = np.asarray(table, dtype=np.float64)
    shape = (hypothesis.n_cells,) if n_columns == 1 else (hypothesis.n_cells, n_columns)
    if table.shape != shape or not np.isfinite(table).all():
        raise HookError(f"{owner} gave per-cell values of shape {table.shape} "
                        f"(finite: {bool(np.isfinite(table).all())}), expected finite {shape}")
    return np.ascontiguousarray(table)


#: Hooks about rows that a distributed fit never calls; a recipe that answers one is refused.
_ROW_HOOKS = ("boostkit_initial_weights", "boostkit_validation_fraction",
              "boostkit_validation_score")


class ShardPlane(DataPlane):
    """The data plane of a distributed fit (:mod:`boostkit.plane`): the rows live in shards
    reached through ``shards`` (a :class:`Shards` transport), and a round is a map over the
    shards and a reduce on the driver (see the module notes). :meth:`open` sets it up."""

    has_rows = False

    def __init__(self, shards: Shards, plan: ShardPlan, data: ShardedData, sums: RoundSums,
                 stats: FitStats, components):
        self.shards, self.plan, self.data = shards, plan, data
        self.sums, self.stats, self.components = sums, stats, components
        self.terms: list[ShardTerm] = []  # every round's, as the shards applied (and replay) it
        self.model_terms: list[ShardTerm] = []  # the model's terms as they now stand

    @classmethod
    def open(cls, booster, recipe, components, shards: Shards, rng, n_jobs: int) -> ShardPlane:
        """Check the shards' partitions against ``booster``'s recipe, bin them with edges from
        a row sample of every partition (its seed drawn from the fit's generator ``rng``), and
        build the shards (round 0)."""
        allow_missing = handles_missing_values(components)
        summaries = shards.summaries(categorical_features=booster.categorical_features,
                                     allow_missing=allow_missing,
                                     missing_hint=_missing_hint(recipe.name, components))
        features = FeatureSchema.union([s.features for s in summaries])
        check_categorical_input(recipe.name, components, features)
        if (features.n_categories > booster.max_bins).any():
            j = int(np.argmax(features.n_categories > booster.max_bins))
            raise DataError(f"categorical column {features.column(j)} has "
                            f"{features.n_categories[j]} categories, more than max_bins = "
                            f"{booster.max_bins}: group rare categories, or treat it as numeric")
        classes, class_weight = _class_weights(summaries)
        if classes.shape[0] < 2:
            raise DataError(f"y has only one class ({classes.tolist()}) over all partitions; a "
                            "classifier needs at least two classes")
        if (class_weight <= 0).any():
            raise DataError(f"class(es) {classes[class_weight <= 0].tolist()} have total "
                            "sample_weight 0: give them positive weight, or remove their examples")
        n_columns = 1 if classes.shape[0] == 2 else classes.shape[0]
        blockers = binary_only_components(components) if n_columns > 1 else []
        if blockers:
            role, component = blockers[0]
            raise RecipeError(f"y has {n_columns} classes, and recipe {recipe.name!r} is "
                              f"binary-only: {role} {component.name!r} does not provide "
                              "'multiclass' (one-vs-rest is not distributed)")
        n_weighted = [s.n_weighted for s in summaries]
        weight_total = math.fsum(s.weight_total for s in summaries)
        sizes = sample_sizes(n_weighted, BIN_SAMPLE)
        # The fit's generator draws the sample's seed only when rows are left out, as one
        # machine draws its bin sample only then: small data get the single-machine fit exactly.
        seed = int(rng.integers(2**63)) if (sizes < n_weighted).any() else 0
        missing = np.logical_or.reduce([s.missing for s in summaries])
        thresholds = bin_thresholds(shards.samples(sizes, seed, features, weight_total),
                                    booster.max_bins, features.n_categories, missing)
        missing_bin = int(booster.max_bins) if missing.any() else None
        plan = ShardPlan(thresholds=thresholds, missing_bin=missing_bin,
                         max_bins=booster.max_bins, classes=classes, weight_total=weight_total,
                         features=features, allow_missing=allow_missing,
                         reweighting=next(c for r, c in components if r == "reweighting"),
                         n_jobs=n_jobs,
                         keep_values=any(getattr(c, "reads_values", False)
                                         for _, c in components))
        reports = shards.build(plan)
        bin_counts = np.sum([r.bin_counts for r in sorted(reports, key=lambda r: r.index)],
                            axis=0)
        data = ShardedData(
            n_samples=sum(s.n_rows for s in summaries), n_features=features.n_features,
            n_columns=n_columns, n_weighted=sum(r.n_weighted for r in reports), classes=classes,
            features=features, weight_total=weight_total,
            binned=BinnedData(codes=None, thresholds=thresholds,
                              n_bins=np.array([t.shape[0] + 1 for t in thresholds],
                                              dtype=np.int64),
                              bin_counts=bin_counts, split_mask=valid_splits(bin_counts),
                              missing_bin=missing_bin, categorical=features.categorical))
        stats = FitStats()
        stats.bytes_in += sum(_nbytes(r) for r in reports)
        return cls(shards, plan, data, reduce_reports(reports, 0.0, plan), stats, components)

    def start(self, state) -> None:
        """Nothing to do on the driver: the shards were built at round 0."""

    def reduce(self, state, reduction):
        answers = _step_all(self.shards, len(self.terms), [], self.terms, self.stats,
                            ShardReduce(reduction, self.sums.log_total))
        return combine_reductions(reduction, [a.value for a in answers])

    def class_histogram(self, state) -> np.ndarray:
        return self.sums.histogram

    def bind(self, state, candidate: Candidate) -> None:
        # Shards that keep the raw values evaluate any hypothesis on them.
        if candidate.bin_cells is None and not self.plan.keep_values:
            raise HookError(f"the proposal returned a candidate without bin_cells in round "
                            f"{state.round}, which shards cannot apply: a proposal that works "
                            "on every data plane chooses from state.class_histogram() and "
                            f"returns boostkit.Candidate(..., bin_cells=...) "
                            f"({_component(self.components, 'proposal')})")

    def advance(self, state, candidate: Candidate, calibrated) -> Advance:
        calibration = _owner(self.components, "calibration", "boostkit_calibrate")
        table = (None if candidate.bin_cells is None
                 else calibrated.contribution.cell_table(candidate.hypothesis))
        if table is None:  # c_t(x) depends on more than the cell: the shards evaluate it
            term = ShardTerm(candidate.bin_cells, None, candidate.hypothesis,
                             calibrated.contribution)
        else:
            term = ShardTerm(candidate.bin_cells, _check_table(
                table, candidate.hypothesis, self.data.n_columns, calibration))
        if calibrated.replaces is None:
            self.model_terms.append(term)
            self.terms.append(term)
        else:  # back-fitting: the shards subtract the replaced term's values
            if not 0 <= calibrated.replaces < len(self.model_terms):
                raise HookError(f"{calibration} asked to replace term {calibrated.replaces}, but "
                                f"the model has {len(self.model_terms)} terms (round "
                                f"{state.round})")
            self.terms.append(attrs.evolve(term, removed=self.model_terms[calibrated.replaces]))
            self.model_terms[calibrated.replaces] = term
        previous = self.sums
        self.sums = reduce_reports(
            _step_all(self.shards, state.round - 1, [self.terms[-1]], self.terms, self.stats),
            previous.log_total, self.plan)
        self.stats.rounds = state.round
        return Advance(self.sums.training_error, self.sums.weighted_error,
                       self.sums.log_potential)


def fit_on_shards(booster, shards: Shards) -> tuple[BoostModel, FitStats]:
    """Fit ``booster`` (a :class:`boostkit.Booster`: its recipe, rounds, bins, seed, observers
    and callbacks) on the data behind ``shards``; returns the model and what the fit moved.

    The fit is the engine's one loop (:func:`boostkit.engine.run_rounds`) over a
    :class:`ShardPlane`: the same hooks as :meth:`boostkit.Booster.fit` answer on the driver,
    from sums over the shards; the model is an ordinary :class:`boostkit.BoostModel`.
    """
    recipe = booster.recipe()
    components = get_registry().instantiate(recipe)
    check_distributed(recipe.name, components)
    if booster.multiclass == "one-vs-rest":
        raise RecipeError("multiclass='one-vs-rest' is not distributed: fit the recipe natively "
                          "on the (example, class) pairs (multiclass='native')")
    if not (isinstance(booster.max_bins, (int, np.integer)) and 2 <= booster.max_bins <= MAX_BINS):
        raise DataError(f"max_bins must be an integer in [2, {MAX_BINS}], got {booster.max_bins!r}")
    observers = [*booster.observers, *([RoundLog(booster.verbose)] if booster.verbose else [])]
    pm = _round_manager(recipe, components, observers)
    owners = [*components, *(("observer", o) for o in observers)]
    for name in _ROW_HOOKS:
        impls = getattr(pm.hook, name).get_hookimpls()
        if impls:
            raise RecipeError(
                f"recipe {recipe.name!r} cannot run distributed: {impls[0].plugin_name} "
                f"implements {name}, which needs the rows on the driver (a distributed fit "
                "never calls it)")
    n_jobs = booster.n_jobs if booster.n_jobs > 0 else numba.config.NUMBA_NUM_THREADS
    rng = np.random.default_rng(booster.random_state)
    plane = ShardPlane.open(booster, recipe, owners, shards, rng, n_jobs)
    model = run_rounds(pm, recipe, owners, plane, None, booster.n_rounds, rng, n_jobs,
                       booster.callbacks)
    return model, plane.stats

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

import copy
import math
import pickle
import time
import weakref
from typing import Any, Sequence

import attrs
import numba
import numpy as np
import pluggy

from . import hookspecs
from .capabilities import (check_categorical_input, check_distributed, handles_missing_values,
                           is_ranker)
from .components import Candidate, CodeCells, RowWeights
from .data import (BIN_SAMPLE, MAX_BINS, BinnedData, LabelCoding, bin_thresholds,
                   check_features, count_bins, encode_bins, encode_labels, encode_like)
from .errors import DataError, HookError, RecipeError
from .features import FeatureSchema, is_sparse
from .engine import (_component, _implementers, _missing_hint, _owner, _round_manager,
                     run_rounds, validation_fraction)
from .kernels.boosting import add_contribution
from .model import BoostModel
from .multiclass import OneVsRestModel, check_label_columns, exponential_offset_terms
from .observers import RoundLog
from .plane import (WEIGHT_SUM_TOLERANCE, Advance, DataPlane, Rows, add_reductions,
                    check_sign_totals, combine_reductions, row_weights, sign_potential)
from .plugins import get_registry
from .splits import histogram, valid_splits
from .validation import MEAN_METRICS, ValidationData, holdout_positions

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
    "HeldOut",
    "LocalShards",
    "OffsetTerms",
    "ShardPlane",
    "ShardReduce",
    "ShardReduced",
    "ShardValidation",
    "Shards",
    "ValidationSums",
    "fit_on_shards",
    "initial_report",
    "partition_sample",
    "partition_summary",
    "plan_shards",
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
    """A partition's labels: 1-D (one label per example), or a 2-D (n, L) multi-label
    indicator matrix of L >= 2 columns."""
    arr = np.asarray(y.toarray() if is_sparse(y) else y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim not in (1, 2):
        raise DataError(f"{name}: y must be 1-D (one label per example) or an (n, L) "
                        f"multi-label indicator matrix, got shape {arr.shape}")
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
    #: Whether ``y`` is an (n, L) indicator matrix: ``classes`` are then its columns 0..L-1 and
    #: ``class_weights`` the initial weight of the examples having each label.
    multilabel: bool = False
    #: The examples of positive weight of each class (having each label), or None.
    class_counts: np.ndarray | None = attrs.field(default=None, eq=False)


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
    w = _partition_weights(sample_weight, n, name)
    if labels.ndim == 2:
        has_label = encode_labels(labels, n).y > 0  # checks the 0/1 values
        return PartitionSummary(n_rows=n, n_weighted=int(np.count_nonzero(w)),
                                weight_total=float(w.sum()), classes=np.arange(has_label.shape[1]),
                                class_weights=w @ has_label,
                                missing=np.isnan(matrix).any(axis=0), features=features,
                                multilabel=True,
                                class_counts=(w > 0).astype(np.int64) @ has_label)
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise DataError(f"y ({name}) contains NaN or infinite labels")
    classes, codes = np.unique(labels, return_inverse=True)
    return PartitionSummary(n_rows=n, n_weighted=int(np.count_nonzero(w)),
                            weight_total=float(w.sum()), classes=classes,
                            class_weights=np.bincount(codes.ravel(), weights=w,
                                                      minlength=classes.shape[0]),
                            missing=np.isnan(matrix).any(axis=0), features=features,
                            class_counts=np.bincount(codes.ravel()[w > 0],
                                                     minlength=classes.shape[0]))


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
                     features: FeatureSchema, weight_total: float, y=None,
                     held_out: HeldOut | None = None) -> np.ndarray:
    """``size`` rows of positive weight of partition ``index``, drawn without replacement by a
    generator seeded from the fit's seed and the partition (all of them, in order, when
    ``size`` is their number). A row's weight is its share of ``weight_total``, as one machine
    normalises it (a weight that vanishes there is no weight here either). Rows held out for
    validation (``held_out``, found from the partition's labels ``y``) are not training rows,
    and are never drawn."""
    matrix = _as_matrix(X, features, f"partition {index}")
    w = _partition_weights(sample_weight, matrix.shape[0], f"partition {index}")
    if held_out is not None:
        w = w.copy()
        w[held_out.dropped(_labels(y, matrix.shape[0], f"partition {index}"), w)] = 0.0
    rows = np.flatnonzero(w / weight_total > 0)
    if size < rows.shape[0]:
        rng = np.random.default_rng([seed, index])
        rows = np.sort(rng.choice(rows, size, replace=False))
    return np.ascontiguousarray(matrix[rows], dtype=np.float64)


@attrs.frozen(eq=False)
class HeldOut:
    """The rows of one partition held out of training for validation, as one machine chooses
    them (:func:`boostkit.validation.stratified_holdout` over all partitions in order): for
    every stratum (every class of ``classes``; all rows when ``classes`` is ``None``, for
    multi-label y), the sorted ranks of the held-out rows among the partition's rows of
    positive weight in that stratum.

    A one-vs-rest class's binary fit holds rows out again, of the rows left by a first
    holdout (``within``), in two strata: the rows not of class ``target``, then its rows.
    """

    classes: np.ndarray | None
    ranks: tuple
    target: int | None = None
    within: HeldOut | None = None

    @property
    def n_dropped(self) -> int:
        """The partition's rows that are not training rows (held out here, or before)."""
        before = 0 if self.within is None else self.within.n_dropped
        return before + sum(r.shape[0] for r in self.ranks)

    def rows(self, labels: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The held-out rows (sorted indices) of a partition of ``labels`` and ``weights``."""
        weighted = weights > 0
        if self.within is not None:
            weighted[self.within.rows(labels, weights)] = False
        if self.classes is None:  # multi-label y: one stratum, or a label against the rest
            has = None if self.target is None else np.asarray(labels)[:, self.target] > 0
            strata = [weighted] if has is None else [weighted & ~has, weighted & has]
        else:
            codes = np.searchsorted(self.classes, labels)
            strata = ([weighted & (codes == c) for c in range(len(self.ranks))]
                      if self.target is None else
                      [weighted & (codes != self.target), weighted & (codes == self.target)])
        return np.sort(np.concatenate([np.flatnonzero(m)[r] for m, r in zip(strata, self.ranks)]))

    def dropped(self, labels: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The rows that are not training rows: these, and those held out before them."""
        rows = self.rows(labels, weights)
        return rows if self.within is None else np.union1d(rows, self.within.dropped(labels,
                                                                                     weights))


# -- shards ---------------------------------------------------------------------------------------
@attrs.frozen(eq=False)
class ShardPlan:
    """What every shard of one fit is built with: the bin edges, the label coding, the total
    initial weight, the schema of DataFrame partitions and the reweighting component (whose
    row forms, ``boostkit_row_weights`` and a start ``boostkit_row_initial_weights``, run on
    the shard).

    ``multilabel``: the labels are (n, L) indicator matrices of ``classes`` = 0..L-1.
    ``target``: the shards fit margin column ``target`` against the rest (one binary model of
    a one-vs-rest fit: the signs are that column's). ``validation``: the shards hold
    validation rows (an ``eval_set``): they add every term to their margins, never reweight,
    and keep their weights normalised over all validation rows (``weight_total``).
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
    multilabel: bool = False
    target: int | None = None
    validation: bool = False
    #: The examples of positive weight of every class (having every label), and in all.
    class_counts: np.ndarray | None = attrs.field(default=None, eq=False)
    n_weighted: int = 0
    #: The rows of every partition held out for validation (:class:`HeldOut`), or None, and
    #: which rows the shards hold: ``None`` (all), ``"train"`` (the others), ``"held"``.
    held_out: tuple | None = attrs.field(default=None, eq=False)
    rows: str | None = None
    #: What the partitions' summaries said, to find other plans' bins and held-out rows:
    #: every partition's rows of positive weight in each stratum (:func:`_strata_counts`) and
    #: in all, and the columns with a missing value.
    strata_counts: np.ndarray | None = attrs.field(default=None, eq=False)
    partition_weighted: tuple = ()
    missing: np.ndarray | None = attrs.field(default=None, eq=False)
    #: ``(P, C)``: every partition's rows of positive weight of each class (having each label).
    partition_class_counts: np.ndarray | None = attrs.field(default=None, eq=False)
    keep_values: bool = False

    @property
    def n_columns(self) -> int:
        """C, the margin columns the shards fit: 1 for two classes or one target column."""
        if self.target is not None or (self.classes.shape[0] == 2 and not self.multilabel):
            return 1
        return self.classes.shape[0]

    @property
    def fit_classes(self) -> np.ndarray:
        """The classes of the model the shards fit: a target column's are 0 (the rest) and
        1 (the column's class or label), as one machine codes a one-vs-rest target."""
        return self.classes if self.target is None else np.arange(2)

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
    #: Whether ``weights`` are normalised apart over each sign (``RowWeights(by_sign=True)``),
    #: and then the last term's weighted error on the negative and the positive rows.
    by_sign: bool = False
    last_sign_errors: np.ndarray | None = None
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
    y, w = _labels(y, n, name), _partition_weights(sample_weight, n, name)
    if plan.rows is not None:  # the training rows, or the held-out rows, of the partition
        held_out = plan.held_out[index]
        keep = (held_out.rows(y, w) if plan.rows == "held"
                else np.setdiff1d(np.arange(n), held_out.dropped(y, w), assume_unique=True))
        matrix, y, w, n = matrix[keep], y[keep], w[keep], keep.shape[0]
    n_classes = plan.classes.shape[0]
    coding = LabelCoding(plan.classes, np.empty((0,) if n_classes == 2 and not plan.multilabel
                                                else (0, n_classes)), None, plan.multilabel)
    signs, labels = _shard_targets(encode_like(coding, y, n, name=f"y ({name})"), plan.target)
    w = w / plan.weight_total
    # A validation shard keeps one weight per example, the weight it scores the model with.
    d1 = w if signs.ndim == 1 or plan.validation else np.repeat(w[:, None] / signs.shape[1],
                                                                 signs.shape[1], axis=1)
    if not plan.validation:
        d1 = _row_start(plan, index, signs, labels, w, d1)
    d1 = np.ascontiguousarray(d1)
    codes = encode_bins(matrix, plan.thresholds, plan.missing_bin, plan.max_bins)
    return Shard(index=index, codes=codes, y=signs, is_pos=(signs > 0).astype(np.uint8),
                 labels=labels, initial_weights=d1,
                 bin_counts=count_bins(codes, w, plan.n_bins), margin=np.zeros(signs.shape),
                 weights=d1.copy(), plan=plan, n_weighted=int(np.count_nonzero(w)),
                 values=matrix if plan.keep_values else None)


def _row_start(plan: ShardPlan, index: int, signs: np.ndarray, labels, w: np.ndarray,
               default: np.ndarray) -> np.ndarray:
    """D_1 of a shard's rows: the reweighting's row form of it (``boostkit_row_initial_weights``,
    checked), or ``default``."""
    owner = (f"boostkit_row_initial_weights of reweighting {plan.reweighting.name!r} on "
             f"shard {index}")
    try:
        answer = _shard_hook(plan).boostkit_row_initial_weights(y=signs, labels=labels,
                                                                sample_weight=w)
    except Exception as exc:
        raise HookError(f"{owner} failed: {type(exc).__name__}: {exc}") from exc
    if answer is None:
        return default
    if (not isinstance(answer, np.ndarray) or answer.dtype != np.float64
            or answer.shape != signs.shape or not np.isfinite(answer).all()
            or (answer < 0).any()):
        raise HookError(f"{owner} returned {type(answer).__name__} "
                        f"{getattr(answer, 'dtype', '')} of shape "
                        f"{getattr(answer, 'shape', None)}, expected {signs.shape[0]} rows' "
                        f"finite non-negative float64 weights of shape {signs.shape}")
    return answer


def _shard_targets(coding: LabelCoding, target: int | None) -> tuple[np.ndarray, Any]:
    """``(signs, labels)`` a shard fits: the coding's, or column ``target``'s against the
    rest as binary signs, with labels 0/1 (as one machine codes the one-vs-rest target)."""
    if target is None:
        return coding.y, coding.labels
    signs = np.ascontiguousarray(coding.y[:, target])
    return signs, (signs > 0).astype(np.intp)


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
    #: The logs of each sign's total weight when the weights are normalised by sign.
    log_sign_totals: np.ndarray | None = attrs.field(default=None, eq=False)


@attrs.frozen
class ShardReduced:
    """A shard's answer to a :class:`ShardReduce`: the reduction over its rows."""

    index: int
    n_applied: int
    value: Any = attrs.field(eq=False)
    seconds: float = 0.0  # the shard's CPU time on the call, terms included


@attrs.frozen
class ShardReport:
    """What a shard sends the driver after a round (a few kB: the histogram dominates).

    ``training_error`` is sum D_1(i) [y_i F(x_i) <= 0] over the shard's examples, and
    ``weighted_error`` the last term's error under the shard's weights before it (unnormalised:
    in units of ``exp(previous_scale)``). ``weight_total`` and ``log_scale``: the shard's new
    weights sum to ``weight_total * exp(log_scale)``; ``histogram`` is their class histogram
    (in units of ``exp(log_scale)``) over the plan's ``sent_bins`` only. ``bin_counts`` comes
    with the first report only; ``n_weighted`` counts the examples of positive initial weight.
    Weights normalised by sign (``RowWeights(by_sign=True)``) add ``sign_totals``, the new
    weights of the negative and the positive rows, and, when the weights the last term was
    measured under were so normalised, ``sign_errors``: its weighted error on each sign.
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
    seconds: float = 0.0  # the shard's CPU time on the call: terms, weights, histogram
    sign_totals: np.ndarray | None = attrs.field(default=None, eq=False)
    sign_errors: np.ndarray | None = attrs.field(default=None, eq=False)


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
    if shard.plan.validation:  # the model's margins on validation rows: no weights to update
        shard.margin += change
        shard.n_applied += 1
        return 0.0, 0.0, 0.0
    previous_scale = shard.log_scale
    shard.last_sign_errors = _sign_errors(shard, change) if shard.by_sign else None
    training_error, weighted_error, _, _ = add_contribution(
        shard.margin.ravel(), change.ravel(), shard.y.ravel(), shard.initial_weights.ravel(),
        shard.weights.ravel())
    answer = _shard_weights(shard)
    shard.weights = answer.weights.reshape(shard.margin.shape)
    shard.log_scale, shard.log_potential = answer.log_scale, answer.log_potential
    shard.by_sign = answer.by_sign
    shard.n_applied += 1
    return training_error, weighted_error, previous_scale


def _sign_errors(shard: Shard, change: np.ndarray) -> np.ndarray:
    """The weighted error of a term's values ``change`` on the shard's negative and positive
    rows (as :func:`boostkit.kernels.boosting.add_contribution` counts it: y c < 0, and half
    of c = 0), under the shard's current weights."""
    yc = shard.y * change
    wrong = shard.weights * ((yc < 0.0) + 0.5 * (change == 0.0))
    positive = shard.is_pos.astype(bool)
    return np.array([wrong[~positive].sum(), wrong[positive].sum()])


def _report(shard: Shard, errors: tuple[float, float, float], counts: bool) -> ShardReport:
    if shard.plan.validation:  # validation rows are scored, never proposed from: no histogram
        hist = shard.weights.sum(keepdims=True)[None, :]
    else:
        hist = histogram(shard.codes, shard.weights, shard.is_pos, shard.plan.n_bins,
                         shard.plan.n_jobs, labels=shard.labels)[:, shard.plan.sent_bins]
    return ShardReport(
        index=shard.index, n_applied=shard.n_applied, n_rows=shard.n_rows,
        training_error=errors[0], weighted_error=errors[1], previous_scale=errors[2],
        # Every example is in one bin of feature 0: its histogram adds up the weights, and a
        # pass over the examples is saved.
        weight_total=float(hist[0].sum()), log_scale=shard.log_scale,
        log_potential=shard.log_potential, histogram=hist,
        bin_counts=shard.bin_counts if counts else None, n_weighted=shard.n_weighted,
        # Feature 0's histogram again: each sign's weight, in its last axis.
        sign_totals=hist[0].reshape(-1, 2).sum(axis=0) if shard.by_sign else None,
        sign_errors=shard.last_sign_errors)


def initial_report(shard: Shard) -> ShardReport:
    """The shard's report before the first round: the histogram of D_1 and its bin counts."""
    return _report(shard, (0.0, 0.0, 0.0), counts=True)


def _reduced(shard: Shard, reduce: ShardReduce) -> ShardReduced:
    if shard.by_sign:  # each sign normalised to 1/2 by its total over all shards
        weights = shard.weights * (0.5 * np.exp(shard.log_scale - reduce.log_sign_totals))[
            shard.is_pos]
    else:
        weights = shard.weights * math.exp(shard.log_scale - reduce.log_total)
    rows = Rows(codes=shard.codes, y=shard.y, is_pos=shard.is_pos, labels=shard.labels,
                initial_weights=shard.initial_weights, weights=weights,
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
    # CPU time of this thread: what the shard costs, whatever else shares the core.
    started = time.thread_time()
    if terms and shard.n_applied == first + len(terms):
        pass
    elif shard.n_applied != first:
        return ShardBehind(shard.index, shard.n_applied, first)
    else:
        for term in terms:
            shard.last_errors = _apply(shard, term)
    answer = (_reduced(shard, reduce) if reduce is not None
              else _report(shard, shard.last_errors, counts=False))
    return attrs.evolve(answer, seconds=time.thread_time() - started)


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
    #: The logs of the negative and the positive rows' total weights, when the weights are
    #: normalised by sign (``RowWeights(by_sign=True)``: each sign to 1/2), else None.
    log_sign_totals: np.ndarray | None = attrs.field(default=None, eq=False)


def _logsumexp(values: Sequence[float]) -> float:
    finite = [v for v in values if v > -math.inf]
    if not finite:
        return -math.inf
    top = max(finite)
    return top + math.log(math.fsum(math.exp(v - top) for v in finite))


def reduce_reports(reports: Sequence[ShardReport], previous_log_total: float,
                   plan: ShardPlan, *, previous_log_sign_totals: np.ndarray | None = None,
                   initial_sign_totals: np.ndarray | None = None) -> RoundSums:
    """Sum the shards' reports in shard order, in float64: the histogram of the normalised
    weights D_{t+1} (all ``plan.n_bins`` bins), the training error, the round's weighted error
    under D_t (whose normaliser was ``previous_log_total``, or ``previous_log_sign_totals``
    for weights normalised by sign) and the potential.

    Weights normalised by sign (reports with ``sign_totals``) are normalised apart over the
    negative and the positive rows, each to 1/2, and their potential is the pairs'
    (:func:`boostkit.plane.sign_potential`, from ``initial_sign_totals``, D_1's weight of each
    sign)."""
    reports = sorted(reports, key=lambda r: r.index)
    log_signs = None
    if reports[0].sign_totals is not None:  # a shard's log scale may be one per sign
        log_signs = np.array([_logsumexp([
            float(np.broadcast_to(r.log_scale, 2)[s]) + math.log(r.sign_totals[s])
            if r.sign_totals[s] > 0 else -math.inf for r in reports]) for s in (0, 1)])
        check_sign_totals(np.isfinite(log_signs).astype(float),
                          f"the reweighting {plan.reweighting.name!r}")
        log_total = _logsumexp(list(log_signs))
    else:
        log_total = _logsumexp([r.log_scale + math.log(r.weight_total) if r.weight_total > 0
                                else -math.inf for r in reports])
    if not math.isfinite(log_total):
        raise HookError("the reweighting left no example of any shard with positive weight")
    sent = np.zeros_like(reports[0].histogram)
    weighted_error = training_error = 0.0
    for r in reports:
        if r.weight_total > 0:
            # The last axis is the sign: each sign's weights over that sign's total, halved.
            sent += r.histogram * (math.exp(r.log_scale - log_total) if log_signs is None
                                   else 0.5 * np.exp(r.log_scale - log_signs))
        training_error += r.training_error
        if r.sign_errors is not None:
            weighted_error += float(r.sign_errors @ (
                0.5 * np.exp(r.previous_scale - previous_log_sign_totals)))
        elif r.weighted_error > 0:
            weighted_error += r.weighted_error * math.exp(r.previous_scale - previous_log_total)
    potentials = [r.log_potential for r in reports]
    if log_signs is not None:
        log_potential = sign_potential(log_signs, initial_sign_totals)
    else:
        log_potential = None if any(p is None for p in potentials) else _logsumexp(potentials)
    hist = np.zeros((sent.shape[0], plan.n_bins) + sent.shape[2:])
    hist[:, plan.sent_bins] = sent
    return RoundSums(hist, log_total, training_error, weighted_error, log_potential,
                     log_sign_totals=log_signs)


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
    #: Whether the transport can hold rows out of training for validation: ``samples`` takes
    #: ``held_out`` and ``twin`` is implemented.
    holds_out: bool = False

    def summaries(self, *, categorical_features, allow_missing: bool,
                  missing_hint: str) -> list[PartitionSummary]:
        """:func:`partition_summary` of every partition, in order."""
        raise NotImplementedError

    def samples(self, sizes: np.ndarray, seed: int, features: FeatureSchema,
                weight_total: float, held_out: Sequence[HeldOut] | None = None) -> np.ndarray:
        """The rows :func:`partition_sample` draws from every partition, stacked in order
        (given ``held_out``, partition k's labels and ``held_out[k]`` too)."""
        raise NotImplementedError

    def twin(self) -> Shards:
        """A transport over the same partitions with shards of its own (the held-out
        validation rows' shards are built from the training partitions)."""
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

    holds_out = True

    def samples(self, sizes, seed, features, weight_total, held_out=None):
        return np.concatenate([partition_sample(k, X, w, int(sizes[k]), seed, features,
                                                weight_total, y,
                                                None if held_out is None else held_out[k])
                               for k, (X, y, w) in enumerate(self.partitions)])

    def twin(self) -> LocalShards:
        return LocalShards(self.partitions)

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
    the replays of lost shards; and where its time went: ``step_seconds``, the driver's wall
    time waiting for the shards' answers (steps and reductions), and ``shard_seconds``, the
    shards' own work in CPU seconds, summed over the shards (their workers run it in parallel;
    the rest of the wait is the transport's round trips and any wait for a free core)."""

    rounds: int = 0
    bytes_out: int = 0
    bytes_in: int = 0
    replays: int = 0
    replayed_terms: int = 0
    step_seconds: float = 0.0
    shard_seconds: float = 0.0

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
        started = time.perf_counter()
        answers = shards.step(calls)
        stats.step_seconds += time.perf_counter() - started
        stats.shard_seconds += sum(getattr(a, "seconds", 0.0) for a in answers.values())
        calls = {}
        for k, answer in answers.items():
            if isinstance(answer, ShardBehind) and answer.n_applied > len(terms):
                raise HookError(
                    f"shard {k} holds {answer.n_applied} terms, more than the fit's "
                    f"{len(terms)}: it is not this fit's shard (a transport that builds shards "
                    "again, for another class's model, must give every build keys of its own)")
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


def _class_weights(summaries: Sequence[PartitionSummary]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The classes of all partitions (sorted), the total initial weight of each and its
    number of examples of positive weight."""
    classes = np.unique(np.concatenate([s.classes for s in summaries]))
    weight = np.zeros(classes.shape[0])
    counts = np.zeros(classes.shape[0], dtype=np.int64)
    for s in summaries:
        at = np.searchsorted(classes, s.classes)
        weight[at] += s.class_weights
        counts[at] += s.class_counts
    return classes, weight, counts


def _check_table(table, hypothesis, n_columns: int, owner: str) -> np.ndarray:
    """The per-cell values a shard applies, checked where the calibration hands them back."""
    table = np.asarray(table, dtype=np.float64)
    shape = (hypothesis.n_cells,) if n_columns == 1 else (hypothesis.n_cells, n_columns)
    if table.shape != shape or not np.isfinite(table).all():
        raise HookError(f"{owner} gave per-cell values of shape {table.shape} "
                        f"(finite: {bool(np.isfinite(table).all())}), expected finite {shape}")
    return np.ascontiguousarray(table)


#: Hooks about rows that a distributed fit never calls; a recipe that answers one is refused.
_ROW_HOOKS = ("boostkit_initial_weights",)


def plan_shards(booster, recipe, components, shards: Shards, rng, n_jobs: int,
                fraction: float | None = None) -> ShardPlan:
    """Check the shards' partitions against ``booster``'s recipe and find the plan every shard
    is built with: the bin edges from a row sample of every partition (its seed drawn from the
    fit's generator ``rng``), the classes (or labels) of all partitions, the total weight.

    Given a validation ``fraction``, the plan also holds the rows held out for validation
    (:class:`HeldOut`, drawn by ``rng`` first, as one machine draws them), and the bin edges
    are those of the other rows.
    """
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
    multilabel = _multilabel(summaries)
    classes, class_weight, class_counts = _class_weights(summaries)
    if not multilabel:
        if classes.shape[0] < 2:
            raise DataError(f"y has only one class ({classes.tolist()}) over all partitions; a "
                            "classifier needs at least two classes")
        if (class_weight <= 0).any():
            raise DataError(f"class(es) {classes[class_weight <= 0].tolist()} have total "
                            "sample_weight 0: give them positive weight, or remove their "
                            "examples")
    partition_weighted = tuple(s.n_weighted for s in summaries)
    strata = _strata_counts(summaries, classes, multilabel)
    held_out = (None if fraction is None
                else _split_positions(holdout_positions(strata.sum(axis=0), fraction, rng),
                                      strata, None if multilabel else classes))
    missing = np.logical_or.reduce([s.missing for s in summaries])
    plan = ShardPlan(thresholds=(), missing_bin=int(booster.max_bins) if missing.any() else None,
                     max_bins=booster.max_bins, classes=classes,
                     weight_total=math.fsum(s.weight_total for s in summaries),
                     features=features, allow_missing=allow_missing,
                     reweighting=next(c for r, c in components if r == "reweighting"),
                     n_jobs=n_jobs, multilabel=multilabel, class_counts=class_counts,
                     n_weighted=sum(partition_weighted), held_out=held_out,
                     keep_values=any(getattr(c, "reads_values", False) for _, c in components),
                     strata_counts=strata, partition_weighted=partition_weighted,
                     missing=missing, partition_class_counts=_class_counts(summaries, classes))
    return attrs.evolve(plan, thresholds=_bin_edges(plan, shards, rng))


def _bin_edges(plan: ShardPlan, shards: Shards, rng) -> tuple:
    """The bin edges of the plan's training rows (those not held out), from a row sample of
    every partition (all of them when they are few)."""
    n_weighted = np.array(plan.partition_weighted, dtype=np.int64)
    if plan.held_out is not None:
        n_weighted -= [h.n_dropped for h in plan.held_out]
    sizes = sample_sizes(n_weighted, BIN_SAMPLE)
    # The fit's generator draws the sample's seed only when rows are left out, as one
    # machine draws its bin sample only then: small data get the single-machine fit exactly.
    seed = int(rng.integers(2**63)) if (sizes < n_weighted).any() else 0
    args = (sizes, seed, plan.features, plan.weight_total)
    sample = (shards.samples(*args) if plan.held_out is None
              else shards.samples(*args, plan.held_out))
    return bin_thresholds(sample, plan.max_bins, plan.features.n_categories, plan.missing)


def _class_counts(summaries: Sequence[PartitionSummary], classes: np.ndarray) -> np.ndarray:
    """``(P, C)``: every partition's rows of positive weight of each class (having each
    label)."""
    counts = np.zeros((len(summaries), classes.shape[0]), dtype=np.int64)
    for p, s in enumerate(summaries):
        counts[p, np.searchsorted(classes, s.classes)] = s.class_counts
    return counts


def _strata_counts(summaries: Sequence[PartitionSummary], classes: np.ndarray,
                   multilabel: bool) -> np.ndarray:
    """``(P, S)``: every partition's rows of positive weight in each of one machine's holdout
    strata (the classes; one stratum of all rows for multi-label y)."""
    if multilabel:
        return np.array([[s.n_weighted] for s in summaries], dtype=np.int64)
    return _class_counts(summaries, classes)


def _split_positions(positions: Sequence[np.ndarray], strata: np.ndarray, classes, *,
                     target: int | None = None, within: tuple | None = None
                     ) -> tuple[HeldOut, ...]:
    """The held-out positions of every stratum, over the rows of all partitions in order
    (:func:`boostkit.validation.holdout_positions`), given to each partition as the ranks that
    fall among its ``strata[p]`` rows (:class:`HeldOut`)."""
    ends = np.cumsum(strata, axis=0)
    starts = ends - strata
    return tuple(
        HeldOut(classes, tuple((pos[(pos >= a) & (pos < b)] - a).astype(np.int64)
                               for pos, a, b in zip(positions, starts[p], ends[p])),
                target, None if within is None else within[p])
        for p in range(strata.shape[0]))


def _class_holdout(plan: ShardPlan, left: np.ndarray, column: int, fraction: float, rng
                   ) -> tuple[HeldOut, ...]:
    """The rows class ``column``'s binary fit holds out, as one machine's one-vs-rest does:
    of the rows the first holdout left (``left``: every partition's rows of each class, or
    having each label), stratified by the class against the rest."""
    rest = np.array([n - h.n_dropped for n, h in zip(plan.partition_weighted, plan.held_out)])
    strata = np.column_stack([rest - left[:, column], left[:, column]])
    return _split_positions(holdout_positions(strata.sum(axis=0), fraction, rng), strata,
                            None if plan.multilabel else plan.classes, target=column,
                            within=plan.held_out)


@attrs.frozen
class LabelCounts:
    """The reduction of a shard's rows of positive weight having each label (the driver keeps
    every shard's answer: the counts per partition)."""

    def __call__(self, rows: Rows) -> np.ndarray:
        return (rows.initial_weights > 0).astype(np.int64) @ (rows.y > 0)


def _multilabel(summaries: Sequence[PartitionSummary]) -> bool:
    """Whether the partitions' ``y`` are indicator matrices (all of them, of one width)."""
    kinds = {(s.multilabel, s.classes.shape[0] if s.multilabel else 0) for s in summaries}
    if len(kinds) > 1:
        raise DataError("the partitions' y differ in kind: "
                        + ", ".join(f"partition {k}: " + (f"an indicator matrix of "
                                                          f"{s.classes.shape[0]} labels"
                                                          if s.multilabel else "1-D labels")
                                    for k, s in enumerate(summaries))
                        + "; every partition's y must be 1-D labels, or indicator matrices of "
                        "the same columns")
    return summaries[0].multilabel


class ShardPlane(DataPlane):
    """The data plane of a distributed fit (:mod:`boostkit.plane`): the rows live in shards
    reached through ``shards`` (a :class:`Shards` transport), and a round is a map over the
    shards and a reduce on the driver (see the module notes). :meth:`build` sets it up from
    a plan (:func:`plan_shards`)."""

    has_rows = False

    def __init__(self, shards: Shards, plan: ShardPlan, data: ShardedData, sums: RoundSums,
                 stats: FitStats, components):
        self.shards, self.plan, self.data = shards, plan, data
        self.sums, self.stats, self.components = sums, stats, components
        self.terms: list[ShardTerm] = []  # every round's, as the shards applied (and replay) it
        self.model_terms: list[ShardTerm] = []  # the model's terms as they now stand
        # D_1's weight of the negative and the positive rows (sums' histogram at round 0).
        self.initial_sign_totals = sums.histogram[0].reshape(-1, 2).sum(axis=0)

    @classmethod
    def build(cls, shards: Shards, plan: ShardPlan, components, stats: FitStats) -> ShardPlane:
        """Build the shards of ``plan`` (round 0): every shard from its partition."""
        reports = shards.build(plan)
        bin_counts = np.sum([r.bin_counts for r in sorted(reports, key=lambda r: r.index)],
                            axis=0)
        thresholds = plan.thresholds
        data = ShardedData(
            n_samples=sum(r.n_rows for r in reports), n_features=plan.features.n_features,
            n_columns=plan.n_columns, n_weighted=sum(r.n_weighted for r in reports),
            classes=plan.fit_classes, features=plan.features, weight_total=plan.weight_total,
            multilabel=plan.multilabel and plan.target is None,
            binned=BinnedData(codes=None, thresholds=thresholds,
                              n_bins=np.array([t.shape[0] + 1 for t in thresholds],
                                              dtype=np.int64),
                              bin_counts=bin_counts, split_mask=valid_splits(bin_counts),
                              missing_bin=plan.missing_bin, categorical=plan.features.categorical))
        stats.bytes_in += sum(_nbytes(r) for r in reports)
        sums = reduce_reports(reports, 0.0, plan)
        if _shard_hook(plan).boostkit_row_initial_weights.get_hookimpls():
            total = math.exp(sums.log_total)
            if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
                raise HookError(
                    f"boostkit_row_initial_weights of reweighting {plan.reweighting.name!r} "
                    f"gave the rows of all shards initial weights that sum to {total!r}, "
                    f"expected a distribution (summing to 1 within {WEIGHT_SUM_TOLERANCE:g})")
        return cls(shards, plan, data, sums, stats, components)

    def start(self, state) -> None:
        """Nothing to do on the driver: the shards were built at round 0."""

    def reduce(self, state, reduction):
        answers = _step_all(self.shards, len(self.terms), [], self.terms, self.stats,
                            ShardReduce(reduction, self.sums.log_total,
                                        self.sums.log_sign_totals))
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
            previous.log_total, self.plan, previous_log_sign_totals=previous.log_sign_totals,
            initial_sign_totals=self.initial_sign_totals)
        self.stats.rounds += 1
        return Advance(self.sums.training_error, self.sums.weighted_error,
                       self.sums.log_potential)


@attrs.frozen
class ValidationSums:
    """The reduction a validation shard answers after every round: the weighted sums of its
    rows' validation error and of every :data:`boostkit.validation.MEAN_METRICS` score (each a
    weighted mean: the part's score times its weight), which the driver adds over the shards.
    """

    def __call__(self, rows: Rows) -> np.ndarray:
        total = float(rows.weights.sum())
        if not total > 0:
            return np.zeros(1 + len(MEAN_METRICS))
        part = ValidationData(X=None, y=rows.y, sample_weight=rows.weights / total,
                              margin=rows.margin, labels=rows.labels)
        return total * np.array([part.error, *(part.score(m) for m in MEAN_METRICS)])


@attrs.frozen
class OffsetTerms:
    """The reduction of a ranker's one-vs-rest offset
    (:func:`boostkit.multiclass.exponential_offset`) over the training rows: each shard's
    :func:`boostkit.multiclass.exponential_offset_terms` of its final margins and D_1, combined
    by log-sum-exp."""

    def __call__(self, rows: Rows) -> np.ndarray:
        return np.array(exponential_offset_terms(rows.margin, rows.y, rows.initial_weights))

    def combine(self, answers: list) -> np.ndarray:
        return np.array([_logsumexp([a[0] for a in answers]), _logsumexp([a[1] for a in answers])])


class ShardValidation:
    """The validation rows of a distributed fit (``state.validation``), on shards of their
    own: built from the ``eval_set``'s partitions, or from the training partitions' held-out
    rows. Each shard keeps the model's margins on its rows and adds every term the training
    shards get; the validation error and the scores of
    :data:`boostkit.validation.MEAN_METRICS` are sums over the shards (:class:`ValidationSums`),
    computed in the step that adds the term. Nothing but those sums comes back.

    ``weight`` is the validation rows' total weight in units of the plan's ``weight_total``,
    which normalises their weights over all the validation shards.
    """

    rows = None  # their indices in the training data stay on the shards

    def __init__(self, shards: Shards, weight: float):
        self.shards, self.weight = shards, weight
        self._reduce = ShardReduce(ValidationSums(), math.log(weight))
        self._sums: np.ndarray | None = None

    @classmethod
    def build(cls, shards: Shards, plan: ShardPlan, stats: FitStats) -> ShardValidation:
        """The validation shards of ``plan`` (with ``validation=True``), at round 0."""
        reports = sorted(shards.build(plan), key=lambda r: r.index)
        stats.bytes_in += sum(_nbytes(r) for r in reports)
        return cls(shards, math.fsum(r.weight_total for r in reports))

    def add_term(self, state, candidate, calibrated) -> None:
        """Add the term the training shards just got (the plane's last) to the validation
        margins, and sum the round's validation error and scores."""
        terms = state.plane.terms
        answers = _step_all(self.shards, len(terms) - 1, [terms[-1]], terms, state.plane.stats,
                            self._reduce)
        self._sums = add_reductions(a.value for a in answers)

    @property
    def error(self) -> float:
        """As :attr:`boostkit.validation.ValidationData.error`, summed over the shards."""
        return float(self._sums[0])

    def score(self, metric: str) -> float:
        """``metric`` of the validation margins, one of
        :data:`boostkit.validation.MEAN_METRICS`, summed over the shards."""
        if metric not in MEAN_METRICS:
            raise HookError(f"metric {metric!r} cannot score validation rows on shards: it "
                            "compares or counts examples across all of them; a distributed "
                            f"fit scores {', '.join(MEAN_METRICS)} (weighted means over the "
                            "examples)")
        return float(self._sums[1 + MEAN_METRICS.index(metric)])


def _fit_manager(booster):
    """``(recipe, components and observers, plugin manager)`` of one fit of ``booster``,
    checked for a distributed fit before any data is read."""
    recipe = booster.recipe()
    components = get_registry().instantiate(recipe)
    check_distributed(recipe.name, components)
    observers = [*booster.observers, *([RoundLog(booster.verbose)] if booster.verbose else [])]
    pm = _round_manager(recipe, components, observers)
    owners = [*components, *(("observer", o) for o in observers)]
    # The reweighting's start given row by row runs on the shards, in place of its D_1.
    reweighting = next(c for r, c in owners if r == "reweighting")
    row_start = any(impl.plugin is reweighting
                    for impl in pm.hook.boostkit_row_initial_weights.get_hookimpls())
    for name in _ROW_HOOKS:
        impls = [impl for impl in getattr(pm.hook, name).get_hookimpls()
                 if not (row_start and name == "boostkit_initial_weights"
                         and impl.plugin is reweighting)]
        if impls:
            raise RecipeError(
                f"recipe {recipe.name!r} cannot run distributed: {impls[0].plugin_name} "
                f"implements {name}, which needs the rows on the driver (a distributed fit "
                "never calls it; only the reweighting's row form of D_1, "
                "boostkit_row_initial_weights, runs on the shards)")
    # A component scoring the validation rows provides "distributed" (it asks
    # state.validation.score); an observer is not checked so, and would read the rows.
    observers_scoring = [impl.plugin for impl in pm.hook.boostkit_validation_score.get_hookimpls()
                         if any(impl.plugin is o for o in observers)]
    if observers_scoring:
        raise RecipeError(
            f"observer {type(observers_scoring[0]).__qualname__} implements "
            "boostkit_validation_score, which a distributed fit cannot call: the validation "
            "rows stay on their shards, where state.validation gives only the validation error "
            f"and score(metric) for {', '.join(MEAN_METRICS)}; score the model afterwards, or "
            "use the validation stopping rule")
    return recipe, owners, pm


def _eval_total(eval_shards: Shards, booster, plan: ShardPlan) -> float:
    """The total sample weight of the ``eval_set``'s partitions, checked (its rows are
    checked again, against the training classes and columns, as its shards are built)."""
    summaries = eval_shards.summaries(categorical_features=booster.categorical_features,
                                      allow_missing=plan.allow_missing, missing_hint="")
    if any(s.multilabel != plan.multilabel for s in summaries):
        raise DataError("eval_set y must be of the training y's kind: "
                        + ("a multi-label indicator matrix" if plan.multilabel
                           else "1-D labels"))
    total = math.fsum(s.weight_total for s in summaries)
    if not total > 0:
        raise DataError("eval_set sample weights sum to 0: the validation examples cannot "
                        "score the model")
    return total


def fit_on_shards(booster, shards: Shards, eval_shards: Shards | None = None
                  ) -> tuple[BoostModel | OneVsRestModel, FitStats]:
    """Fit ``booster`` (a :class:`boostkit.Booster`: its recipe, rounds, bins, seed, observers
    and callbacks) on the data behind ``shards``; returns the model and what the fit moved.

    The fit is the engine's one loop (:func:`boostkit.engine.run_rounds`) over a
    :class:`ShardPlane`: the same hooks as :meth:`boostkit.Booster.fit` answer on the driver,
    from sums over the shards; the model is an ordinary :class:`boostkit.BoostModel`.

    ``eval_shards``, a transport over the ``eval_set``'s partitions (``(X_val, y_val[,
    sample_weight_val])``, as ``shards`` over the training data), gives the fit validation rows
    that stay on their own shards (:class:`ShardValidation`): the validation error and scores
    are recorded every round, and the ``validation`` stopping rule stops early and names the
    best round, as on one machine. Without it, a component answering
    ``boostkit_validation_fraction`` makes the shards hold out the rows one machine holds out
    (:class:`HeldOut`), on validation shards built from the same partitions (``shards.twin()``).

    With C > 1 margin columns and ``booster.multiclass`` ``"one-vs-rest"`` (or ``"auto"`` for a
    binary-only recipe) the classes are fitted one after the other over the same partitions,
    the shards (and validation shards) rebuilt for each class with its column as the target,
    and combined into a :class:`boostkit.multiclass.OneVsRestModel`, as one machine does.
    """
    recipe, owners, pm = _fit_manager(booster)
    if not (isinstance(booster.max_bins, (int, np.integer)) and 2 <= booster.max_bins <= MAX_BINS):
        raise DataError(f"max_bins must be an integer in [2, {MAX_BINS}], got {booster.max_bins!r}")
    fraction = None if eval_shards is not None else validation_fraction(pm.hook, owners)
    if fraction is not None and not shards.holds_out:
        raise RecipeError(
            f"recipe {recipe.name!r} holds out a share of the training rows for validation "
            f"(boostkit_validation_fraction, from "
            f"{_implementers(owners, 'boostkit_validation_fraction')}), and the transport "
            f"{type(shards).__name__} cannot hold rows out (it does not take held_out in "
            "samples, or build twin shards): pass the validation rows as an eval_set")
    n_jobs = booster.n_jobs if booster.n_jobs > 0 else numba.config.NUMBA_NUM_THREADS
    rng = np.random.default_rng(booster.random_state)
    plan = plan_shards(booster, recipe, owners, shards, rng, n_jobs, fraction)
    eval_total = None if eval_shards is None else _eval_total(eval_shards, booster, plan)
    stats = FitStats()
    if plan.n_columns > 1 and booster._one_vs_rest(recipe, owners, plan):
        return _fit_one_vs_rest(booster, recipe, owners, pm, plan, shards, eval_shards,
                                eval_total, fraction, rng, n_jobs, stats), stats
    if fraction is not None:  # the held-out rows' shards, from the training partitions
        eval_shards = shards.twin()
    return _run(pm, recipe, owners, booster, plan, shards, eval_shards, eval_total, rng, n_jobs,
                stats)[0], stats


def _fit_one_vs_rest(booster, recipe, owners, pm, plan: ShardPlan, shards: Shards,
                     eval_shards: Shards | None, eval_total: float | None,
                     fraction: float | None, rng, n_jobs: int,
                     stats: FitStats) -> OneVsRestModel:
    """One binary model per class (per label) of ``plan``, fitted one after the other over
    the same partitions, as :func:`boostkit.multiclass.fit_one_vs_rest` fits them on one
    machine: the same components afresh, generator, held-out rows and offsets."""
    ranker = is_ranker(owners)
    if ranker and pm.hook.boostkit_best_round.get_hookimpls():
        raise RecipeError(
            f"multiclass='one-vs-rest' over the ranking recipe {recipe.name!r} with "
            f"{_implementers(owners, 'boostkit_best_round')} (it names a best round) is "
            "not distributed: each class's offset b_l is computed from the model's margins "
            "on the training rows, and the shards hold the margins of every round, not of "
            "the best one")
    if fraction is not None:
        # One machine holds rows out of all classes first (and then leaves them unused),
        # then every class's binary fit holds rows out of the others (_class_holdout).
        eval_shards = shards.twin()
        first = ShardValidation.build(eval_shards, attrs.evolve(
            plan, validation=True, rows="held"), stats).weight
        left = plan.partition_class_counts - (
            np.array([a.value for a in _step_all(eval_shards, 0, [], [], stats,
                                                 ShardReduce(LabelCounts(), 0.0))])
            if plan.multilabel else  # the first holdout's rows of each label
            np.array([[r.shape[0] for r in h.ranks] for h in plan.held_out]))
    if plan.multilabel:  # of the rows the fits are given (left by a first holdout)
        counts = (plan.class_counts if fraction is None else left.sum(axis=0))
        check_label_columns(counts < plan.n_weighted - (
            0 if fraction is None else sum(h.n_dropped for h in plan.held_out)), counts > 0)
    binary = attrs.evolve(booster, multiclass="native")
    models, offsets = [], []
    for column in range(plan.n_columns):
        if column:  # every class's fit gets its own components, as on one machine
            recipe, owners, pm = _fit_manager(binary)
        class_plan = attrs.evolve(plan, target=column, reweighting=next(
            c for r, c in owners if r == "reweighting"))
        class_rng = copy.deepcopy(rng)
        if fraction is not None:  # the class's own generator, as its binary fit's
            class_rng = np.random.default_rng(booster.random_state)
            class_plan = attrs.evolve(
                class_plan, held_out=_class_holdout(plan, left, column, fraction,
                                                    class_rng),
                weight_total=plan.weight_total * (1.0 - first))
            class_plan = attrs.evolve(class_plan,
                                      thresholds=_bin_edges(class_plan, shards, class_rng))
        model, plane = _run(pm, recipe, owners, binary, class_plan, shards, eval_shards,
                            eval_total, class_rng, n_jobs, stats)
        models.append(model)
        if ranker:  # F_l + b_l, the ranker's margins read as AdaBoost's (multiclass.py)
            log_positive, log_negative = plane.reduce(None, OffsetTerms())
            offsets.append(0.5 * (log_positive - log_negative))
    return OneVsRestModel(classes=plan.classes, models=models, multilabel=plan.multilabel,
                          offsets=offsets or None)


def _run(pm, recipe, owners, booster, plan: ShardPlan, shards: Shards,
         eval_shards: Shards | None, eval_total: float | None, rng, n_jobs: int,
         stats: FitStats) -> tuple[BoostModel, ShardPlane]:
    """One model's fit: its validation shards (the ``eval_set``'s, weighing ``eval_total``, or
    the held-out rows of the plan's partitions) and training shards built from ``plan``, then
    the engine's loop over them; the model, and the plane (its shards hold the final margins)."""
    validation = None
    if eval_shards is not None:
        held = plan.held_out is not None
        validation = ShardValidation.build(eval_shards, attrs.evolve(
            plan, validation=True, rows="held" if held else None,
            weight_total=plan.weight_total if held else eval_total), stats)
        if held:  # the training rows' D_1: their weights normalised over them alone
            plan = attrs.evolve(plan, rows="train",
                                weight_total=plan.weight_total * (1.0 - validation.weight))
    plane = ShardPlane.build(shards, plan, owners, stats)
    return run_rounds(pm, recipe, owners, plane, validation, booster.n_rounds, rng, n_jobs,
                      booster.callbacks), plane

"""The shard side of a distributed fit: what a partition holds, and what a shard does there.

A *shard* is one row partition of a distributed fit, binned once where it lives (a Dask worker,
or this process for :class:`boostkit.distributed.LocalShards`): :func:`partition_summary` and
:func:`partition_sample` describe a partition before binning, :func:`build_shard` bins it with
the driver's :class:`ShardPlan`, and :func:`step_shard` applies the model's terms to it,
computes its part of the next distribution (the reweighting's row form) and answers with its
class histogram (:class:`ShardReport`) or a reduction over its rows (:class:`ShardReduced`), or
says it fell behind (:class:`ShardBehind`). Everything here runs on the workers; the driver's
side (reducing the reports, the :class:`boostkit.distributed.ShardPlane`, the fit) is
:mod:`boostkit.distributed`.
"""

from __future__ import annotations

import math
import time
import weakref
from typing import Any, Sequence

import attrs
import numpy as np

from .components import Candidate, CodeCells, RowWeights
from .data import (BIN_SAMPLE, LabelCoding, check_features, count_bins, encode_bins,
                   encode_labels, encode_like)
from .errors import DataError, HookError
from .features import FeatureSchema, is_sparse
from .kernels.boosting import add_contribution
from .plane import Rows, row_weights
from .round_plugins import RoundPluginManager
from .splits import histogram

__all__ = [
    "HeldOut",
    "PartitionSummary",
    "Shard",
    "ShardBehind",
    "ShardPlan",
    "ShardReduce",
    "ShardReduced",
    "ShardReport",
    "ShardTerm",
    "build_shard",
    "initial_report",
    "partition_sample",
    "partition_summary",
    "sample_sizes",
    "shard_hook",
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
        answer = shard_hook(plan).boostkit_row_initial_weights(y=signs, labels=labels,
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


def shard_hook(plan: ShardPlan):
    """The relay of the shard-local hooks (the plan's reweighting), one per plan per process."""
    hook = _SHARD_HOOKS.get(plan)
    if hook is None:
        pm = RoundPluginManager()
        pm.register(plan.reweighting)
        hook = _SHARD_HOOKS[plan] = pm.hook
    return hook


def _shard_weights(shard: Shard) -> RowWeights:
    """The reweighting's row form on the shard's rows."""
    return row_weights(shard_hook(shard.plan), shard.margin.ravel(), shard.y.ravel(),
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

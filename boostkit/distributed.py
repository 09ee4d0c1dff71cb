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
from typing import Any, Sequence

import attrs
import numba
import numpy as np

from .capabilities import (check_categorical_input, check_distributed, handles_missing_values,
                           is_ranker)
from .components import Candidate
from .data import BIN_SAMPLE, MAX_BINS, BinnedData, bin_thresholds
from .errors import DataError, HookError, RecipeError
from .features import FeatureSchema
from .engine import (_component, _implementers, _missing_hint, _owner, _round_manager,
                     run_rounds, validation_fraction)
from .model import BoostModel
from .multiclass import OneVsRestModel, check_label_columns, exponential_offset_terms
from .observers import RoundLog
from .plane import (WEIGHT_SUM_TOLERANCE, Advance, DataPlane, Rows, add_reductions,
                    check_sign_totals, combine_reductions, sign_potential)
from .plugins import get_registry
from .shards import (HeldOut, PartitionSummary, Shard, ShardBehind, ShardPlan, ShardReduce,
                     ShardReduced, ShardReport, ShardTerm, build_shard, initial_report,
                     partition_sample, partition_summary, sample_sizes, shard_hook, step_shard,
                     step_shards)
from .splits import valid_splits
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
        if shard_hook(plan).boostkit_row_initial_weights.get_hookimpls():
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

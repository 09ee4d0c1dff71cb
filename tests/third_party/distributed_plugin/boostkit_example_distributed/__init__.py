"""boostkit_example_distributed: a third-party plugin whose components run on shards.

Margin loss ``huber-exp`` (registered with :func:`boostkit.losses.register_loss` when this
module is imported): AdaBoost's L(v) = e^{-v} for margins v >= -1, continued by its tangent
below, so that w = -L' = min(e^{-v}, e) caps the weight of badly misclassified examples
(Domingo & Watanabe 2000 cap it at the initial weight). The ``margin-loss`` reweighting runs it
by name, on every shard of a distributed fit (Mason et al. 2000, section 3).

Proposal ``subspace-stump``: each round, the best stump over a random subset of the features,
chosen from the fit's class histogram (``state.class_histogram()``), so it runs unchanged in
one process and on a Dask cluster (capability ``"distributed"``).

Algorithm ``huber-subspace-boost``: the two with the first-party ``constant-alpha`` calibration
and ``no-edge`` stopping.
"""

from __future__ import annotations

import math

import attrs
import numba
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.criteria import check_criterion, partition_loss
from boostkit.losses import MarginLoss, register_loss
from boostkit.splits import best_split
from boostkit_adaboost.stumps import Stump, majority_scores

__all__ = ["HUBER_EXP", "SubspaceStump"]

_E = math.e


@numba.njit(cache=True, nogil=True)
def _huber_exp_log_loss(v):
    # log L: -v on AdaBoost's part, log(e (-v)) = 1 + log(-v) on the tangent (v < -1).
    return -v if v >= -1.0 else 1.0 + math.log(-v)


@numba.njit(cache=True, nogil=True)
def _huber_exp_log_weight(v):
    return min(-v, 1.0)


HUBER_EXP = register_loss(MarginLoss(
    "huber-exp", _huber_exp_log_loss, _huber_exp_log_weight,
    description=f"L(v) = e^(-v) for v >= -1, e (-v) below; w = min(e^(-v), e) (e = {_E:.6f})",
    paper="Mason et al. 2000, section 3 (AnyBoost); Domingo & Watanabe 2000 (capped weights)",
))


def _check_subset(instance, attribute, value) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                              or value < 1):
        raise ValueError(f"subspace-stump: {attribute.name} must be a positive integer or None, "
                         f"got {value!r}")


@attrs.define
class SubspaceStump(boostkit.Proposal):
    """The best stump over ``n_features`` features drawn at random each round.

    The draw (without replacement, from the features that can be cut) uses the fit's generator
    (``state.rng``), so a seed gives the same model in one process and on a cluster. ``None``
    draws ceil(sqrt(d)) of the d features. ``criterion``: as the ``stump`` learner's (``None``
    asks the calibration). Numeric features without missing values only.
    """

    name = "subspace-stump"
    provides = frozenset({"real-scores", "sign-scores", "cells", "two-cells", DISTRIBUTED})
    n_features: int | None = attrs.field(default=None, validator=_check_subset)
    criterion: str | None = attrs.field(default=None, validator=check_criterion)

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        binned = state.data.binned
        cuttable = np.flatnonzero(binned.split_mask.any(axis=1))
        if cuttable.size == 0:
            return None
        size = self.n_features or math.ceil(math.sqrt(binned.split_mask.shape[0]))
        drawn = state.rng.choice(cuttable, size=min(size, cuttable.size), replace=False)
        mask = np.zeros_like(binned.split_mask)
        mask[drawn] = binned.split_mask[drawn]
        split = best_split(state.class_histogram(), mask, partition_loss(state, self.criterion))
        if split is None:
            return None
        stump = Stump(split.feature, split.threshold(binned.thresholds),
                      majority_scores(split.wneg, split.wpos), split.missing_left)
        return boostkit.Candidate(stump, bin_cells=split.bin_cells(binned.max_bins,
                                                                   binned.missing_bin),
                                  cell_wneg=split.wneg, cell_wpos=split.wpos)


@boostkit.hookimpl
def boostkit_register_components(registry):
    registry.add_component(SubspaceStump)


@boostkit.hookimpl
def boostkit_register_algorithms(registry):
    registry.add_algorithm(boostkit.Recipe(
        name="huber-subspace-boost",
        proposal="subspace-stump",
        calibration="constant-alpha",
        reweighting=("margin-loss", {"loss": "huber-exp"}),
        stopping=("no-edge",),
        paper="Mason et al. 2000, section 3 (AnyBoost) with the huber-exp margin loss",
        description="Discrete AdaBoost's alpha over stumps of random feature subsets, weights "
                    "from the huber-exp margin loss.",
    ))

"""Stratification (Scholz 2006, Prop. 1-2) and Ada2Boost's reweighting by stratification
(Fig. 3)."""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.kernels.boosting import exponential_distribution
from boostkit.losses import get_loss, shard_weights

from .pnspace import pn_space_quantities

__all__ = ["Stratification", "stratify"]


def stratify(weights, y, c: float | None = None) -> np.ndarray:
    """Skew a weighted example set by the factor ``c`` with P N preserved (Scholz 2006, Prop. 1).

    Positives are multiplied by sqrt(c), negatives divided by it, so P'/N' = c P/N and
    P' N' = P N: the AOC* of any ranking is unchanged (Definition 3). This is the only such rule
    (Prop. 1). ``c=None`` stratifies, c = N/P, giving P' = N' = sqrt(P N) and the smallest total
    weight 2 sqrt(P N) among all P N-preserving skews (Prop. 2).

    Parameters
    ----------
    weights:
        Non-negative example weights.
    y:
        Labels in {-1, +1}, {0, 1} or booleans; 1 (True) is the positive class.
    c:
        The factor by which P/N changes (> 0), or ``None`` to stratify.

    Example: ``Booster("adaboost").fit(X, y, sample_weight=stratify(np.ones(len(y)), y))``
    trains on the stratified set (the ROC-space view of the PN space, section 2).
    """
    w = np.asarray(weights, dtype=np.float64)
    labels = np.asarray(y)
    if w.ndim != 1 or labels.shape != w.shape:
        raise ValueError(
            f"weights and y must be 1-D of the same length, got shapes {w.shape} and {labels.shape}"
        )
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("weights must be finite and non-negative")
    values = np.unique(labels)
    if not (labels.dtype == bool or np.isin(values, (0, 1)).all() or np.isin(values, (-1, 1)).all()):
        raise ValueError(f"y must hold labels in {{-1, +1}} or {{0, 1}}, got {values[:10].tolist()}")
    positive = labels == 1
    if c is None:
        pos, neg = w[positive].sum(), w[~positive].sum()
        if pos <= 0 or neg <= 0:
            raise ValueError("cannot stratify: one class has no weight (P or N is 0)")
        c = neg / pos
    elif not (math.isfinite(c) and c > 0):
        raise ValueError(f"c must be a finite number > 0, got {c!r}")
    root = math.sqrt(c)
    return np.where(positive, w * root, w / root)


@attrs.define
class Stratification(boostkit.Reweighting):
    """Ada2Boost's reweighting, computed from the margins, with the PN-space records.

    Fig. 3 updates w_{t+1}(x, y) = w_t(x, y) / sqrt(beta'_t(h_t(x))^y). With the contribution
    c_t(x) = 1/2 ln beta'_t(h_t(x)) of :class:`~boostkit_pnspace.AsymmetricBeta` the divisor is
    exp(y c_t(x)), so unrolling from w_1 gives

        w_{t+1}(x, y) = w_1(x, y) exp(-y F_t(x)),   F_t = sum_{s<=t} c_s,

    which is what this component computes, from the margins (in log space, with the engine's
    kernel), returning D_{t+1} = w_{t+1} / W_{t+1} and the potential ln(W_{t+1} / |E|) (so
    record ``z`` is W_{t+1} / W_t and ``error_bound`` W_{t+1} / |E|). Per round it is the
    stratification of each side of h_t: on a side with p positives and n negatives, positives
    are multiplied by beta'^{-1/2} = sqrt(n/p) and negatives by sqrt(p/n), Prop. 1 with c = n/p,
    so both sides end with equal class weights sqrt(p n) (Prop. 4), their P N preserved and
    their weight the smallest such (Prop. 2). Tests replay Fig. 3 round by round against it.

    With another calibration (AdaBoost's constant alpha) the weights are AdaBoost's
    (exp(-y F), eq. 1), only no longer a stratification; the records still hold, and Theorem 2
    applies to any such F.

    Records (``record.extra``, see :func:`~boostkit_pnspace.pnspace.pn_space_quantities`):
    ``total_weight``, ``positive_weight``, ``negative_weight``, ``pn_area`` (P'N'),
    ``aoc_weighted``, ``weighted_auc``, ``aoc_train``, ``train_auc``, ``auc_bound_theorem2`` and
    ``auc_bound`` (Corollary 1), in the paper's units (w_1 sums to |E|); none with
    ``pn_records=False``.

    The records rank every training margin (AOC*), which needs all the rows in one place: with
    them the rule runs where the rows are in this process. ``pn_records=False`` keeps the same
    weights and potential, computed row by row (``boostkit_row_weights``, the exponential rule's
    kernel on D_1 = the normalised sample weights), and runs on every data plane
    (``"distributed"``).
    """

    name = "stratification"
    pn_records: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))

    @property
    def provides(self) -> frozenset[str]:
        return frozenset({"potential"} | (set() if self.pn_records else {DISTRIBUTED}))

    @property
    def distributed_refusal(self) -> str | None:
        """Why this reweighting cannot run on shards, or ``None`` when it can."""
        if not self.pn_records:
            return None
        return ("records the PN-space quantities of every round, whose AOC* and AUCs rank all "
                "the training margins at once (a global sort of the rows); "
                "stratification(pn_records=False) gives the same weights without those records "
                "and distributes")

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        data = state.data
        out, log_potential = exponential_distribution(
            state.margin, data.y, data.sample_weight, state.n_jobs
        )
        if not self.pn_records:
            return boostkit.Weights(out, log_potential)
        extra = pn_space_quantities(
            state.margin, data.is_pos, data.sample_weight, out, log_potential, data.n_samples
        )
        return boostkit.Weights(out, log_potential, extra)

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        # w_1 exp(-y F_t): D_1 is the normalised sample weights of the (binary) fit.
        return shard_weights(get_loss("exponential"), margin, y, initial_weights, n_jobs)

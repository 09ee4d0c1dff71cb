"""PN-space quantities (Scholz 2006, sections 2 and 3.3).

Units are the paper's: the initial weights w_1 sum to |E| (w_1 = 1 per example for uniform
sample weights, Fig. 3), and w_{t+1}(x, y) = w_1(x, y) exp(-y F_t(x)) is never normalised, so
the total weight W shrinks as boosting proceeds. The engine's distribution is D_{t+1} = w_{t+1} /
W_{t+1}, and the reweighting's log potential is ln(W_{t+1} / |E|).
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

import boostkit

from .kernels import aoc_star

__all__ = ["PNSpace", "auc_lower_bound", "pn_space_quantities", "pn_spaces"]


def auc_lower_bound(total_weight: float, n_pos: float, n_neg: float) -> float:
    """Corollary 1: AUC >= 1 - W^2 / (8 |E+| |E-|).

    Valid when the ensemble ranks the reweighted set at least as well as random guessing: then
    AOC*(original) <= AOC*(reweighted) <= P'N'/2 (Theorem 2) <= (W/2)^2 / 2, because
    P' + N' = W bounds P'N' by (W/2)^2.
    """
    return 1.0 - total_weight ** 2 / (8.0 * n_pos * n_neg)


def _auc(misranked: float, pos: float, neg: float) -> float | None:
    area = pos * neg
    return 1.0 - misranked / area if area > 0 else None


def pn_space_quantities(margin: np.ndarray, is_pos: np.ndarray, d1: np.ndarray,
                        weights: np.ndarray, log_potential: float, n_examples: int) -> dict[str, Any]:
    """The PN-space record of a round, from the margins F_t and the new distribution D_{t+1}.

    ``d1`` is the initial distribution, ``weights`` D_{t+1} (both sum to 1) and
    ``log_potential`` ln sum_i D_1(i) exp(-y_i F_t(x_i)) = ln(W_{t+1} / |E|). Returns, in the
    paper's units (w_1 sums to ``n_examples`` = |E|):

    * ``total_weight`` W = P' + N', ``positive_weight`` P', ``negative_weight`` N' and
      ``pn_area`` P'N', the size of the nested PN space (section 3.3);
    * ``aoc_weighted``: AOC* of F_t on the reweighted set (Definition 3), and ``weighted_auc``
      = 1 - AOC*/(P'N'), which Corollary 1 assumes to be >= 1/2;
    * ``aoc_train`` and ``train_auc``: the same on the original training set (weights w_1);
    * ``auc_bound_theorem2`` = 1 - AOC*(reweighted) / (P N), a lower bound on ``train_auc`` by
      Theorem 2 (unconditional: a misranked pair has w+ w- > w_1+ w_1-);
    * ``auc_bound`` = 1 - W^2 / (8 P N), Corollary 1.

    An AUC whose class weight is 0 (every positive discarded by pure cells) is ``None``.
    Everything is computed from normalised weights and log_potential, in log space: W overflows
    a float when some margins are very negative (the potential passes e^709), and the records
    then hold inf (the bounds -inf, vacuous), never an OverflowError or a NaN.
    """
    log_total = math.log(n_examples) + log_potential  # ln W_{t+1}
    order = np.argsort(margin)  # the order within ties is irrelevant: aoc_star groups them
    pos_mask = is_pos.astype(bool)
    out_pos, out_neg = float(weights[pos_mask].sum()), float(weights[~pos_mask].sum())
    d1_pos, d1_neg = float(d1[pos_mask].sum()), float(d1[~pos_mask].sum())
    misranked_out = aoc_star(margin, is_pos, weights, order)
    misranked_d1 = aoc_star(margin, is_pos, d1, order)
    train_auc = _auc(misranked_d1, d1_pos, d1_neg)
    area = d1_pos * d1_neg
    return {
        "total_weight": _scaled(1.0, log_total),
        "positive_weight": _scaled(out_pos, log_total),
        "negative_weight": _scaled(out_neg, log_total),
        "pn_area": _scaled(out_pos * out_neg, 2.0 * log_total),
        "aoc_weighted": _scaled(misranked_out, 2.0 * log_total),
        "weighted_auc": _auc(misranked_out, out_pos, out_neg),
        "aoc_train": n_examples * n_examples * misranked_d1,
        "train_auc": train_auc,
        "auc_bound_theorem2": (1.0 - _scaled(misranked_out / area, 2.0 * log_potential)
                               if area > 0 else None),
        # Corollary 1, 1 - W'^2 / (8 P N) with W' = W / |E| = e^log_potential
        "auc_bound": 1.0 - _scaled(1.0 / (8.0 * area), 2.0 * log_potential) if area > 0 else None,
    }


def _scaled(value: float, log_factor: float) -> float:
    """value * e^log_factor for value >= 0, in log space: inf past the float range."""
    if value == 0.0:
        return 0.0
    exponent = math.log(value) + log_factor
    return math.exp(exponent) if exponent < 709.0 else math.inf


@attrs.frozen
class PNSpace:
    """The PN space a round starts from, how its base classifier splits it, and the next space.

    ``positives``/``negatives`` are P_t and N_t (weights w_t in the paper's units); ``p``, ``n``
    the covered side's and ``p_bar``, ``n_bar`` the uncovered side's weights (Definition 1);
    ``positives_after``/``negatives_after`` are P_{t+1} and N_{t+1} under w_{t+1}. For Ada2Boost,
    stratifying both sides (Prop. 1) turns them into squares of sides sqrt(p n) and
    sqrt(p_bar n_bar) (Fig. 5, left) which, moved to the upper right, make the next, nested PN
    space: P_{t+1} = N_{t+1} = sqrt(p n) + sqrt(p_bar n_bar) (Fig. 5, right).
    """

    round: int
    positives: float
    negatives: float
    p: float
    n: float
    p_bar: float
    n_bar: float
    positives_after: float
    negatives_after: float

    @property
    def covered_side(self) -> float:
        """Side of the stratified covered box: sqrt(p n)."""
        return math.sqrt(self.p * self.n)

    @property
    def uncovered_side(self) -> float:
        """Side of the stratified uncovered box: sqrt(p_bar n_bar)."""
        return math.sqrt(self.p_bar * self.n_bar)


def pn_spaces(model: boostkit.BoostModel, X, y, sample_weight=None,
              max_rounds: int | None = None) -> list[PNSpace]:
    """Replay a fitted model on its training data and return the PN space of every round.

    Follows Fig. 3: w_1 = |E| D_1 (1 per example for uniform weights), w_t = w_1 exp(-y F_{t-1}),
    and each round's base classifier h_t splits the weighted set into the side where its
    contribution c_t is larger (covered, h_t = +1) and the other side (uncovered), the rule
    :class:`~boostkit_pnspace.AsymmetricBeta` uses. Works for any model whose hypotheses have
    two cells, AdaBoost's too. ``y`` holds the training labels (the model's ``classes[1]`` is
    positive); ``max_rounds`` limits the replay to the first rounds.
    """
    y = np.asarray(y)
    positive = y == model.classes[1]
    if not (positive | (y == model.classes[0])).all():
        raise ValueError(f"y must hold the model's classes {list(model.classes)}")
    X = np.asarray(X, dtype=np.float64)
    if sample_weight is None:
        d1 = np.full(X.shape[0], 1.0 / X.shape[0])
    else:
        d1 = np.asarray(sample_weight, dtype=np.float64) / np.sum(sample_weight)
    w1 = X.shape[0] * d1
    signs = np.where(positive, 1.0, -1.0)
    spaces = []
    previous = np.zeros(X.shape[0])
    weights = w1
    for t, (hypothesis, margin) in enumerate(zip(model.hypotheses, model.staged_decision_function(X))):
        if max_rounds is not None and t >= max_rounds:
            break
        if hypothesis.n_cells != 2:
            raise ValueError(f"round {t + 1}: {hypothesis.name!r} does not have two cells")
        after = w1 * np.exp(-signs * margin)
        cells = hypothesis.cells(X)
        change = margin - previous
        # A side without weight is never covered, as in AsymmetricBeta.
        value = [change[(cells == j) & (w1 > 0)].max(initial=-np.inf) for j in (0, 1)]
        covered = cells == (1 if value[1] >= value[0] else 0)
        spaces.append(PNSpace(
            round=t + 1,
            positives=float(weights[positive].sum()),
            negatives=float(weights[~positive].sum()),
            p=float(weights[covered & positive].sum()),
            n=float(weights[covered & ~positive].sum()),
            p_bar=float(weights[~covered & positive].sum()),
            n_bar=float(weights[~covered & ~positive].sum()),
            positives_after=float(after[positive].sum()),
            negatives_after=float(after[~positive].sum()),
        ))
        previous, weights = margin, after
    return spaces

"""The plugin's hot loops (Scholz 2006).

* :func:`aoc_star`: weighted misranked pairs (Definition 3) in one pass over sorted scores, run
  twice per round for the PN-space records;
* :func:`cell_odds_rows` and :func:`weight_after_rows`: Ada2Boost's odds beta' (eq. 2, Fig. 3)
  and the total weight after its reweighting (Theorem 1), over every candidate split of every
  feature at once, the partition loss the stump learner minimises each round.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def aoc_star(scores, is_pos, weights, order):
    """AOC* = sum over (positive i, negative j) of w_i w_j ([s_j > s_i] + 1/2 [s_j = s_i]).

    ``order`` sorts ``scores`` ascending (``np.argsort(scores)``). Walking it from the highest
    score down, every run of tied scores is one group: its positives are misranked against all
    negative weight already passed (higher scores) and against half of the group's own negative
    weight. Only sums, never a subtraction, so a tiny AOC* keeps its relative precision.

    ``scores`` and ``weights`` are float64 ``(n,)``, ``is_pos`` uint8 ``(n,)`` (1 for a positive),
    ``order`` an integer ``(n,)`` permutation. O(n) after the sort.
    """
    n = order.shape[0]
    misranked = 0.0
    negative_above = 0.0
    end = n
    while end > 0:
        start = end - 1
        score = scores[order[start]]
        while start > 0 and scores[order[start - 1]] == score:
            start -= 1
        group_pos = 0.0
        group_neg = 0.0
        for k in range(start, end):
            i = order[k]
            if is_pos[i]:
                group_pos += weights[i]
            else:
                group_neg += weights[i]
        misranked += group_pos * (negative_above + 0.5 * group_neg)
        negative_above += group_neg
        end = start
    return misranked


# Smoothing of the odds (Scholz 2006, after Prop. 3), as the kernels take it.
NO_SMOOTHING, LAPLACE, M_ESTIMATE = 0, 1, 2
# Numerator and denominator of the odds are floored at this fraction of the total weight.
ODDS_FLOOR = 1e-15


@numba.njit(cache=True, nogil=True, inline="always")
def _pseudo_counts(wpos, wneg, smoothing, m, n_examples):
    """``(scale, prior_pos, prior_neg)`` of one partition (a row of K cells)."""
    total_pos = 0.0
    total = 0.0
    for k in range(wpos.shape[0]):
        total_pos += wpos[k]
        total += wpos[k] + wneg[k]
    scale = n_examples / total
    if smoothing == LAPLACE:
        return scale, 1.0, 1.0
    if smoothing == M_ESTIMATE:
        share_pos = total_pos / total
        return scale, m * share_pos, m * (1.0 - share_pos)
    return scale, 0.0, 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def _odds(pos, neg, scale, prior_pos, prior_neg, floor):
    return max(pos * scale + prior_pos, floor) / max(neg * scale + prior_neg, floor)


@numba.njit(cache=True, nogil=True)
def cell_odds_rows(wpos, wneg, smoothing, m, n_examples, out):
    """The odds beta'_j of every cell of every partition: ``out[r, j]``.

    ``wpos``/``wneg``/``out`` are ``(R, K)`` float64: R partitions of K cells. The current
    weights are rescaled to total ``n_examples``, pseudo-counts added (``smoothing``: 0 none,
    1 Laplace, 2 m-estimate with prior the weighted positive share), and numerator and
    denominator floored at ``ODDS_FLOOR * n_examples``.
    """
    floor = ODDS_FLOOR * n_examples
    for r in range(wpos.shape[0]):
        scale, prior_pos, prior_neg = _pseudo_counts(wpos[r], wneg[r], smoothing, m, n_examples)
        for k in range(wpos.shape[1]):
            out[r, k] = _odds(wpos[r, k], wneg[r, k], scale, prior_pos, prior_neg, floor)


@numba.njit(cache=True, nogil=True)
def weight_after_rows(wpos, wneg, smoothing, m, n_examples, out):
    """Total weight of each partition once every cell j is reweighted with its odds beta'_j.

    Positives of a cell are divided by sqrt(beta'_j), negatives multiplied by it (Scholz 2006,
    Fig. 3), with the odds of :func:`cell_odds_rows`; ``out[r]`` gets sum_j W+_j / sqrt(beta'_j) +
    W-_j sqrt(beta'_j). ``wpos``/``wneg`` are ``(R, K)``, ``out`` ``(R,)``.
    """
    floor = ODDS_FLOOR * n_examples
    for r in range(wpos.shape[0]):
        scale, prior_pos, prior_neg = _pseudo_counts(wpos[r], wneg[r], smoothing, m, n_examples)
        total = 0.0
        for k in range(wpos.shape[1]):
            root = np.sqrt(_odds(wpos[r, k], wneg[r, k], scale, prior_pos, prior_neg, floor))
            total += wpos[r, k] / root + wneg[r, k] * root
        out[r] = total

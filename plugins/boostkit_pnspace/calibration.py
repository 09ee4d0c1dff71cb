"""Ada2Boost's asymmetric coefficients beta(+1) = p/n, beta(-1) = n_bar/p_bar (Scholz 2006,
eq. 2-3).

Notation of Scholz 2006, Definition 1: a boolean base classifier h covers C = {h = +1}
holding p positives and n negatives (weights under w_t) and leaves C_bar = {h = -1} holding p_bar
positives and n_bar negatives.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.kernels.histogram import cell_class_sums

from .kernels import LAPLACE, M_ESTIMATE, NO_SMOOTHING, cell_odds_rows, weight_after_rows

__all__ = ["AsymmetricBeta", "SMOOTHINGS", "cell_odds", "total_weight_after"]

SMOOTHINGS = {"none": NO_SMOOTHING, "laplace": LAPLACE, "m-estimate": M_ESTIMATE}


def _rows(wpos, wneg) -> tuple[np.ndarray, np.ndarray]:
    wpos = np.asarray(wpos, dtype=np.float64)
    wneg = np.asarray(wneg, dtype=np.float64)
    if wpos.shape != wneg.shape or wpos.ndim == 0:
        raise ValueError(
            f"wpos and wneg must have the same shape (..., K), got {wpos.shape} and {wneg.shape}"
        )
    k = wpos.shape[-1]
    return np.ascontiguousarray(wpos.reshape(-1, k)), np.ascontiguousarray(wneg.reshape(-1, k))


def _smoothing_code(smoothing: str) -> int:
    try:
        return SMOOTHINGS[smoothing]
    except KeyError:
        raise ValueError(f"smoothing must be one of {sorted(SMOOTHINGS)}, got {smoothing!r}") from None


def cell_odds(wpos, wneg, smoothing: str = "none", m: float = 2.0,
              n_examples: float = 1.0) -> np.ndarray:
    """The odds ratio beta'_j of every cell j of every candidate partition (Scholz 2006, Fig. 3).

    ``wpos``/``wneg`` have shape ``(..., K)``: the current weight of positives and negatives per
    cell. Unsmoothed, beta'_j = W+_j / W-_j: p/n on the covered cell and p_bar/n_bar on the
    uncovered one, i.e. beta(+1) and 1/beta(-1) of eq. 2.

    Smoothing (Scholz 2006, after Prop. 3: "Laplace or m-estimates for pure subsets") counts weight
    in examples: the current weights are rescaled to total ``n_examples`` (= |E|, so one
    pseudo-count is one average example of the weighted set, the paper's implicit normalisation of
    section 2), and

    * ``"laplace"``: beta'_j = (W+_j + 1) / (W-_j + 1);
    * ``"m-estimate"``: beta'_j = (W+_j + m pi) / (W-_j + m (1 - pi)), pi = P_t / (P_t + N_t) the
      current weighted class proportion (1/2 after the first Ada2Boost round, Prop. 4).

    Numerator and denominator are floored at 1e-15 of the total weight, so the odds of a pure or
    empty cell stay finite (an empty cell gets beta' = 1 unsmoothed; a cell value is then at
    most 1/2 ln(1e15) ~ 17.3, the cap of constant-alpha). Computed by
    :func:`boostkit_pnspace.kernels.cell_odds_rows`.
    """
    rows_pos, rows_neg = _rows(wpos, wneg)
    out = np.empty_like(rows_pos)
    cell_odds_rows(rows_pos, rows_neg, _smoothing_code(smoothing), float(m), float(n_examples), out)
    return out.reshape(np.shape(wpos))


def total_weight_after(wpos, wneg, smoothing: str = "none", m: float = 2.0,
                       n_examples: float = 1.0) -> np.ndarray:
    """The total weight once every cell j is reweighted with its odds beta'_j (Scholz 2006, Fig. 3).

    Positives of cell j are divided by sqrt(beta'_j), negatives multiplied by it, so the cell's
    weight becomes W+_j / sqrt(beta'_j) + W-_j sqrt(beta'_j); with beta'_j = W+_j / W-_j that is
    2 sqrt(W+_j W-_j), the proof of Theorem 1 (2 W_t (sqrt(p n) + sqrt(p_bar n_bar)) for a
    boolean h). Shapes ``(..., K)`` in, ``(...)`` out, in the units of ``wpos``; odds as in
    :func:`cell_odds`. Computed by :func:`boostkit_pnspace.kernels.weight_after_rows`.
    """
    rows_pos, rows_neg = _rows(wpos, wneg)
    out = np.empty(rows_pos.shape[0])
    weight_after_rows(rows_pos, rows_neg, _smoothing_code(smoothing), float(m), float(n_examples), out)
    return out.reshape(np.shape(wpos)[:-1])


def _positive_finite(instance, attribute, value):
    if not (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0):
        raise ValueError(f"{attribute.name} must be a finite number > 0, got {value!r}")


@attrs.define
class AsymmetricBeta(boostkit.Calibration):
    """Ada2Boost's per-side coefficients alpha(h) = 1/2 ln beta(h) (Scholz 2006, eq. 2-3, Fig. 3).

    For a base classifier with two cells (the two sides of a stump), each cell j gets
    c_j = 1/2 ln beta'_j with beta'_j its odds ratio (:func:`cell_odds`). This is eq. 3's
    alpha(h(x)) h(x): on the covered side alpha(+1) = 1/2 ln(p/n), on the uncovered side
    -alpha(-1) = -1/2 ln(n_bar/p_bar) = 1/2 ln(p_bar/n_bar); the model's margin is
    F(x) = 1/2 ln beta_hat(x) with beta_hat(x) = prod_t beta'_t(h_t(x)) (eq. 5, Fig. 3 output).

    Which side is called covered does not change c (the value of a cell is 1/2 ln of its odds
    either way); the records call the non-empty side with the higher odds covered, i.e. h = +1
    where the rule h = +1 -> y = +1 is more accurate, which is the stump's majority labelling
    whenever its two sides disagree.

    Partition loss: the total weight after the reweighting this calibration implies
    (:func:`total_weight_after`), 2 sum_j sqrt(W+_j W-_j) unsmoothed, so the stump learner picks
    the stump that reduces the weight most, as Theorem 1 and Prop. 2 motivate.

    Parameters
    ----------
    smoothing:
        ``"none"`` (the paper's experiments, default), ``"laplace"`` or ``"m-estimate"``.
    m:
        The m of the m-estimate (ignored otherwise).

    Records (``record.extra``): ``covered_cell``; ``p``, ``n``, ``p_bar``, ``n_bar`` as fractions
    of the current total weight W_t; the local error rates ``eps_covered`` = n/(p+n) and
    ``eps_uncovered`` = p_bar/(p_bar+n_bar) (``None`` for an empty side); ``beta_covered`` =
    beta(+1) and ``beta_uncovered`` = beta(-1) of eq. 2 (smoothed as used). ``coefficients`` are
    the cell values c_j in cell order.

    Every data plane (``"distributed"``): p, n, p_bar and n_bar are the candidate's cell sums
    (summed over the shards in a distributed fit; over the rows, in one exact pass, where they
    are in this process), and each shard applies the two cell values.
    """

    name = "asymmetric-beta"
    needs = frozenset({"two-cells"})
    provides = frozenset({DISTRIBUTED})
    smoothing: str = attrs.field(default="none", validator=attrs.validators.in_(tuple(SMOOTHINGS)))
    m: float = attrs.field(default=2.0, validator=_positive_finite)
    _n_examples: int = attrs.field(init=False, default=1)

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        self._n_examples = state.data.n_samples

    @boostkit.hookimpl
    def boostkit_partition_loss(self, wpos, wneg):
        return total_weight_after(wpos, wneg, self.smoothing, self.m, self._n_examples)

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        if candidate.hypothesis.n_cells != 2:
            raise ValueError(
                f"{self.name} needs a boolean base classifier with two cells (covered and "
                f"uncovered), and {candidate.hypothesis.name!r} has {candidate.hypothesis.n_cells}"
            )
        # One exact pass rather than the learner's sums where there are rows: a split's right
        # side comes from total - left, which loses the relative precision of a tiny side, and
        # the odds of that side set how exactly Fig. 3 stratifies it (Prop. 4).
        if candidate.has_rows:
            wneg, wpos = cell_class_sums(candidate.cells, state.weights, state.data.is_pos, 2)
        else:
            wneg, wpos = state.cell_weights(candidate)
        odds = cell_odds(wpos, wneg, self.smoothing, self.m, self._n_examples)
        values = 0.5 * np.log(odds)
        # An empty side (the constant stump's) is never the covered one.
        ranked = np.where(wpos + wneg > 0, values, -np.inf)
        covered = 1 if ranked[1] >= ranked[0] else 0
        uncovered = 1 - covered
        total = wpos.sum() + wneg.sum()
        p, n = wpos[covered] / total, wneg[covered] / total
        p_bar, n_bar = wpos[uncovered] / total, wneg[uncovered] / total
        extra = {
            "covered_cell": covered,
            "p": float(p), "n": float(n), "p_bar": float(p_bar), "n_bar": float(n_bar),
            "eps_covered": float(n / (p + n)) if p + n > 0 else None,
            "eps_uncovered": float(p_bar / (p_bar + n_bar)) if p_bar + n_bar > 0 else None,
            "beta_covered": float(odds[covered]),
            "beta_uncovered": float(1.0 / odds[uncovered]),
        }
        return boostkit.Calibrated(
            boostkit.CellContribution(values),
            values[candidate.cells] if candidate.has_rows else None, tuple(values), extra
        )

"""Prop. 3 of Scholz 2006: an Ada2Boost model in AdaBoost's form, with an offset.

An Ada2Boost model (eq. 3) adds c_t(cov) on the covered side of each base classifier h_t and
c_t(unc) on the uncovered side. With h_t = +1 on the covered side and -1 elsewhere,

    c_t(h_t(x)) = avg_t + alpha'_t h_t(x),  avg_t = (c_t(cov) + c_t(unc)) / 2,
                                            alpha'_t = (c_t(cov) - c_t(unc)) / 2,

so the model equals sign(alpha'_0 + sum_t alpha'_t h_t(x)) with alpha'_0 = sum_t avg_t (eq. 4).

The paper writes avg_{0,t} = (alpha_t(+1) + alpha_t(-1)) / 2 and alpha'_t = alpha_t(+1) - avg_{0,t}.
With eq. 2-3's alpha(-1) = 1/2 ln(n_bar/p_bar), the uncovered side's value is c_t(unc) =
-alpha_t(-1), so the offset must be (alpha_t(+1) - alpha_t(-1)) / 2: the printed "+" is a sign
slip (taken literally, the uncovered side's term changes sign; a test shows the literal reading
predicts differently). The slope alpha'_t = alpha_t(+1) - avg_{0,t} = (alpha_t(+1) + alpha_t(-1)) / 2
is as printed once avg_{0,t} is corrected.
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit

__all__ = ["ConstantHypothesis", "CoverIndicator", "to_adaboost_form"]


@attrs.frozen
class CoverIndicator(boostkit.WeakHypothesis):
    """h(x) = +1 if x falls in the ``covered`` cell of ``base``'s partition, else -1.

    The boolean base classifier of Scholz 2006 (C = {h = +1}), built on any two-cell hypothesis; it
    keeps the base's two cells.
    """

    name = "cover-indicator"
    n_cells = 2

    base: boostkit.WeakHypothesis
    covered: int = attrs.field(converter=int, validator=attrs.validators.in_((0, 1)))

    def cells(self, X: np.ndarray) -> np.ndarray:
        return self.base.cells(X)

    def scores(self, X: np.ndarray) -> np.ndarray:
        return np.where(self.cells(X) == self.covered, 1.0, -1.0)

    def describe(self) -> str:
        return f"[{self.base.describe()}] covers cell {self.covered}"


@attrs.frozen
class ConstantHypothesis(boostkit.WeakHypothesis):
    """h(x) = 1 for every x: with a linear coefficient alpha'_0 it is eq. 4's offset."""

    name = "constant-one"
    n_cells = 1

    def cells(self, X: np.ndarray) -> np.ndarray:
        return np.zeros(X.shape[0], dtype=np.intp)

    def scores(self, X: np.ndarray) -> np.ndarray:
        return np.ones(X.shape[0])

    def describe(self) -> str:
        return "constant +1 (offset)"


def to_adaboost_form(model: boostkit.BoostModel) -> boostkit.BoostModel:
    """The AdaBoost-form model alpha'_0 + sum_t alpha'_t h_t(x) equal to ``model`` (Prop. 3).

    ``model`` must be made of two-cell hypotheses with per-cell contributions (``cell-values``),
    as ``ada2boost`` fits. The result's first term is the offset alpha'_0 (a ``constant-one``
    hypothesis), then one ``cover-indicator`` hypothesis h_t in {-1, +1} per round with a linear
    coefficient alpha'_t >= 0 (the covered side is the one with the larger value). Its decision function equals the original's up
    to rounding (the terms are summed in another order), so predictions are the same. The
    records (one per original round, so one fewer than the terms) and the stop reason are kept;
    the recipe's description says the model was converted.
    """
    hypotheses: list[boostkit.WeakHypothesis] = []
    contributions: list[boostkit.Contribution] = []
    offset = 0.0
    for t, (hypothesis, contribution) in enumerate(zip(model.hypotheses, model.contributions), 1):
        if not isinstance(contribution, boostkit.CellContribution) or hypothesis.n_cells != 2:
            raise ValueError(
                f"round {t}: Prop. 3 needs a two-cell hypothesis with per-cell values, got "
                f"{hypothesis.name!r} with contribution {contribution.name!r}"
            )
        values = contribution.cell_values
        covered = 1 if values[1] >= values[0] else 0
        value_covered, value_uncovered = values[covered], values[1 - covered]
        offset += 0.5 * (value_covered + value_uncovered)
        hypotheses.append(CoverIndicator(hypothesis, covered))
        contributions.append(boostkit.LinearContribution(0.5 * (value_covered - value_uncovered)))
    recipe = attrs.evolve(
        model.recipe,
        description=f"{model.recipe.description} Converted to AdaBoost form with an offset "
                    "(Scholz 2006, Prop. 3).".strip(),
    )
    return attrs.evolve(
        model,
        hypotheses=(ConstantHypothesis(), *hypotheses),
        contributions=(boostkit.LinearContribution(offset), *contributions),
        recipe=recipe,
    )

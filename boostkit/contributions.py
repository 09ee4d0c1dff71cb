"""The two generic forms of a round's contribution c_t(x), shared by every paper plugin.

* :class:`LinearContribution`: c_t(x) = alpha_t h_t(x), a constant coefficient on the
  hypothesis' real score (AdaBoost, CR-AdaBoost's linear form, Wilbur et al. 2005, eq. 9).
* :class:`CellContribution`: c_t(x) = c_j for x in cell X_j of the hypothesis' partition
  (Schapire-Singer's domain partition, Wilbur et al. 2005, eq. 10-11; Ada2Boost's beta(+-1),
  Scholz 2006, eq. 2-3).
"""

from __future__ import annotations

import attrs
import numpy as np

from .components import Candidate, Contribution

__all__ = ["LinearContribution", "CellContribution", "cell_values"]


def cell_values(values: np.ndarray, candidate: Candidate) -> np.ndarray | None:
    """A per-cell calibration's ``train_values``: ``values`` (``(n_cells,)`` or
    ``(n_cells, C)``) on the training examples' cells, or ``None`` for a candidate without
    rows (a distributed fit, where each shard applies the values itself)."""
    return values[candidate.cells] if candidate.has_rows else None


def _float_array(value) -> np.ndarray:
    return np.ascontiguousarray(value, dtype=np.float64)


@attrs.frozen
class LinearContribution(Contribution):
    """c_t(x) = alpha * h_t(x)."""

    name = "linear"
    alpha: float = attrs.field(converter=float)

    @classmethod
    def unchecked(cls, alpha: float) -> LinearContribution:
        """``LinearContribution(alpha)`` built without the converter, for a Python float
        ``alpha`` (a compiled batch's coefficient, from ``tolist()``)."""
        contribution = object.__new__(cls)
        object.__setattr__(contribution, "alpha", alpha)  # the class is frozen
        return contribution

    def values(self, output: Candidate, margin: np.ndarray) -> np.ndarray:
        return self.alpha * output.scores

    def cell_table(self, hypothesis) -> np.ndarray | None:
        scores = hypothesis.cell_score_table()
        return None if scores is None else self.alpha * scores


@attrs.frozen
class CellContribution(Contribution):
    """c_t(x) = cell_values[cell of x]."""

    name = "cell-values"
    cell_values: np.ndarray = attrs.field(converter=_float_array, eq=False)

    @classmethod
    def unchecked(cls, cell_values: np.ndarray) -> CellContribution:
        """``CellContribution(cell_values)`` built without the converter, for a C-contiguous
        float64 array of its own (a compiled batch's row of cell values, copied)."""
        contribution = object.__new__(cls)
        object.__setattr__(contribution, "cell_values", cell_values)  # the class is frozen
        return contribution

    def values(self, output: Candidate, margin: np.ndarray) -> np.ndarray:
        return self.cell_values[output.cells]

    def cell_table(self, hypothesis) -> np.ndarray | None:
        return self.cell_values

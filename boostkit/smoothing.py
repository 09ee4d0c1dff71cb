"""Smoothing of coefficient estimates, shared by calibrations of every paper.

A coefficient like 1/2 ln((1 - eps + s) / (eps + s)) is infinite for a perfect hypothesis unless
s > 0. Schapire & Singer (1999) recommend s of the order 1/m, m the number of examples; a zero
smoothing keeps the textbook formula, and the floor below only stops a perfect hypothesis from
getting an infinite coefficient (alpha <= 1/2 ln(1e15) ~ 17.3).

m is counted in weight (:func:`n_examples`): with sample weights that count examples, as
scikit-learn's do (weight 2 is a repeated row, weight 0 a removed one), a weighted fit is the fit
on the repeated rows; with unit weights m is the number of examples, as before.
"""

from __future__ import annotations

import math

__all__ = ["SMOOTHING_FLOOR", "check_smoothing", "n_examples", "resolve_smoothing"]

SMOOTHING_FLOOR = 1e-15


def check_smoothing(instance, attribute, value) -> None:
    """attrs validator: ``None`` (meaning 1/m) or a finite number >= 0."""
    if value is not None and not (
        isinstance(value, (int, float)) and not isinstance(value, bool)
        and math.isfinite(value) and value >= 0
    ):
        raise ValueError(
            f"{attribute.name} must be None (1/m) or a finite number >= 0, got {value!r}"
        )


def n_examples(data) -> float:
    """m, the size of the training ``data`` in examples: the total of the sample weights as
    given (``data.weight_total``; n for none), but never fewer than the examples of positive
    weight (``data.n_weighted``), so that weights given as a distribution (summing to 1) count
    their rows. Weights of 0 count nothing."""
    total = data.weight_total
    if total is None or not math.isfinite(total):
        return float(data.n_weighted)
    return max(total, float(data.n_weighted))


def resolve_smoothing(smoothing: float | None, n_samples: float) -> float:
    """The smoothing actually used: 1/m for ``None`` (``n_samples`` = m, in examples:
    :func:`n_examples`), floored at :data:`SMOOTHING_FLOOR`."""
    value = 1.0 / n_samples if smoothing is None else float(smoothing)
    return max(value, SMOOTHING_FLOOR)

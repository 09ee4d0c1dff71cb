"""Smoothing of coefficient estimates, shared by calibrations of every paper.

A coefficient like 1/2 ln((1 - eps + s) / (eps + s)) is infinite for a perfect hypothesis unless
s > 0. Schapire & Singer (1999) recommend s of the order 1/m; a zero smoothing keeps the textbook
formula, and the floor below only stops a perfect hypothesis from getting an infinite coefficient
(alpha <= 1/2 ln(1e15) ~ 17.3).
"""

from __future__ import annotations

import math

__all__ = ["SMOOTHING_FLOOR", "check_smoothing", "resolve_smoothing"]

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


def resolve_smoothing(smoothing: float | None, n_samples: int) -> float:
    """The smoothing actually used: 1/m for ``None``, floored at :data:`SMOOTHING_FLOOR`.

    1/m depends on the number of examples, so a smoothed fit with integer sample weights is not
    the same as a fit on repeated examples; ``smoothing=0`` keeps that equivalence.
    """
    value = 1.0 / n_samples if smoothing is None else float(smoothing)
    return max(value, SMOOTHING_FLOOR)

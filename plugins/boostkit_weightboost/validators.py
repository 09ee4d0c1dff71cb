"""attrs validators for the plugin's numeric parameters (errors name the parameter)."""

from __future__ import annotations

import math


def finite_non_negative(instance, attribute, value):
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"{attribute.name} must be a finite number >= 0, got {value!r}")


def finite_positive(instance, attribute, value):
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{attribute.name} must be a finite number > 0, got {value!r}")


def optional_finite_positive(instance, attribute, value):
    if value is not None:
        finite_positive(instance, attribute, value)


def positive_int(instance, attribute, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{attribute.name} must be an integer >= 1, got {value!r}")

"""attrs validators shared by the components' parameters."""

from __future__ import annotations


def one_of(choices):
    """A validator accepting only the values in ``choices``."""

    def check(instance, attribute, value):
        if value not in choices:
            raise ValueError(f"{attribute.name} must be one of {list(choices)}, got {value!r}")

    return check


def positive(instance, attribute, value):
    if not value > 0.0:
        raise ValueError(f"{attribute.name} must be positive, got {value!r}")


def below_half(instance, attribute, value):
    """alpha of boost by majority: an advantage in (0, 1/2)."""
    if not 0.0 < value < 0.5:
        raise ValueError(f"{attribute.name} must be in (0, 1/2), got {value!r}")

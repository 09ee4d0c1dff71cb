"""Observers anyone can pass to ``Booster(observers=[...])`` without writing a plugin."""

from __future__ import annotations

import numpy as np

from .hookspecs import hookimpl

__all__ = ["WeightHistory"]


class WeightHistory:
    """Keep a copy of the distribution over training examples: D_1, then D_{t+1} after round t.

    ``weights[0]`` is D_1 (the normalised sample weights) and ``weights[t]`` the distribution the
    round-t reweighting produced. Memory grows as rounds x examples: meant for small data,
    studies and tests.
    """

    def __init__(self) -> None:
        self.weights: list[np.ndarray] = []

    @hookimpl
    def boostkit_fit_start(self, state):
        self.weights = [state.weights.copy()]

    @hookimpl
    def boostkit_round_end(self, state, record):
        self.weights.append(state.weights.copy())

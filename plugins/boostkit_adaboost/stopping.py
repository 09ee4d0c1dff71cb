"""Stopping when a round brings nothing more."""

from __future__ import annotations

import attrs

import boostkit
from boostkit.compiled import STOPPING, CompiledStopping, compile_form

#: The smallest decrease of the potential a round must bring: Z_t >= 1 - this is no progress.
Z_SLACK = 1e-12


def _min_edge(instance, attribute, value):
    if not 0.0 <= value < 0.5:
        raise ValueError(f"min_edge must be in [0, 0.5), got {value!r}")


@attrs.define
class NoEdge(boostkit.Stopping):
    """Stop when the weak hypothesis is no better than a coin flip, or perfect.

    ``"no-edge"`` when the round's edge gamma_t = 1/2 - eps_t is at most ``min_edge`` (its
    coefficient is then 0, or it would flip the hypothesis), or when Z_t >= 1 - 1e-12: the round
    did not lower the potential prod Z_t, so neither will the next (the weights are unchanged).
    ``"perfect-fit"`` when eps_t = 0: the hypothesis separates the weighted training set and
    further rounds would repeat it.
    """

    name = "no-edge"
    provides = frozenset({"multiclass", "distributed"})  # it reads the round record only
    min_edge: float = attrs.field(default=0.0, converter=float, validator=_min_edge)

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        if record.weighted_error <= 0.0:
            return "perfect-fit"
        if record.edge <= self.min_edge or (record.z is not None and record.z >= 1.0 - Z_SLACK):
            return "no-edge"
        return None

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        return CompiledStopping(compile_form(no_edge_code, STOPPING), ("perfect-fit", "no-edge"),
                                params=self.min_edge)


def no_edge_code(round, weighted_error, z, training_error, params):
    """``no-edge``'s compiled form (signature :data:`boostkit.compiled.STOPPING`): 1
    (``"perfect-fit"``) when eps_t = 0, 2 (``"no-edge"``) when gamma_t <= ``params[0]`` or
    Z_t >= 1 - 1e-12 (a NaN Z_t, no potential, never), else 0."""
    if weighted_error <= 0.0:
        return 1
    if 0.5 - weighted_error <= params[0] or z >= 1.0 - Z_SLACK:
        return 2
    return 0

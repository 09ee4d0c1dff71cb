"""Stopping PAV-AdaBoost.finite when the sum (20) no longer decreases (Wilbur et al. 2005,
section 3.3)."""

from __future__ import annotations

import math

import attrs

import boostkit
from boostkit.capabilities import DISTRIBUTED


def _tol(instance, attribute, value):
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"tol must be a finite number >= 0, got {value!r}")


@attrs.define
class SumConverged(boostkit.Stopping):
    """Stop (``"converged"``) when a whole cycle of back-fitting lowered the sum (20) by at most
    ``tol`` times its value.

    PAV-AdaBoost.finite (Wilbur et al. 2005, section 3.3) and its linear counterpart re-fit the
    terms of a fixed set of n scoring functions in turn; every update leaves the sum (20), sum_i
    exp(-y_i F(x_i)), unchanged or lower, and the iteration converges to its minimum (Theorem 3). A
    cycle is as many rounds as the model has terms; the sum is read from the reweighting's potential
    (``record.error_bound`` = sum_i D_1(i) exp(-y_i F(x_i)), the sum (20) over m), one cycle ago and
    now. The rule waits until an earlier round has replaced a term (fewer terms than finished
    rounds), so runs that add a term every round never stop by it. It reads the round records
    alone, so it runs in distributed fits too.
    """

    name = "sum-converged"
    needs = frozenset({"potential"})
    provides = frozenset({DISTRIBUTED})
    tol: float = attrs.field(default=1e-6, converter=float, validator=_tol)

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        cycle = len(state.hypotheses)
        replaced_before = cycle < record.round - 1
        if not replaced_before or record.round < 2 * cycle or record.error_bound is None:
            return None
        before = state.records[record.round - cycle - 1].error_bound
        if before is not None and before - record.error_bound <= self.tol * before:
            return "converged"
        return None

"""Stopping RankBoost when the weak ranker orders no more pairs than it misorders, or all."""

from __future__ import annotations

import attrs

import boostkit
from boostkit.capabilities import DISTRIBUTED

# r and Z within this of 1 count as 1 (sums of normalised weights round).
_TOLERANCE = 1e-12


def _min_r(instance, attribute, value):
    if not 0.0 <= value < 1.0:
        raise ValueError(f"min_r must be in [0, 1), got {value!r}")


@attrs.define
class NoRankEdge(boostkit.Stopping):
    """Stop on r_t <= ``min_r`` or Z_t >= 1 (``"no-edge"``), or r_t = 1 (``"perfect-ranking"``).

    r_t is the weighted advantage of the round's weak ranker (``record.extra["r"]``, set by
    ``rankboost-alpha``): the D_t-weight of the pairs it orders minus that of the pairs it
    misorders (Yoder 2011, "r = W_- - W_+"). With r_t = 0 the coefficient is 0 and D does not
    change, so no later round can do better; with r_t = 1 the ranker orders every weighted pair and
    the training ranking loss is 0. The engine's ``weighted_error`` is a per-example error, which
    for RankBoost's unbalanced D_1 says nothing about r; hence this rule instead of ``no-edge``.
    """

    name = "no-rank-edge"
    needs = frozenset({"rank-advantage"})
    provides = frozenset({DISTRIBUTED})
    min_r: float = attrs.field(default=0.0, converter=float, validator=_min_r)

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        r = record.extra.get("r")
        if r is None:
            raise ValueError(f"{self.name} needs the round's r, recorded by rankboost-alpha")
        if r >= 1.0 - _TOLERANCE:
            return "perfect-ranking"
        if r <= self.min_r or (record.z is not None and record.z >= 1.0 - _TOLERANCE):
            return "no-edge"
        return None

"""RankBoost's pair distribution, computed from the margins: bipartite (factorised) and explicit.

Yoder 2011, "Basic RankBoost algorithm": D_{t+1}(x0, x1) =
D_t(x0, x1) exp[alpha_t (h_t(x0) - h_t(x1))] / Z_t, i.e. D_{t+1} = D_1 exp(F_t(x0) - F_t(x1)) /
prod_s Z_s. Both rules return, per example (row), the total weight of the pairs it takes part
in, halved, so the x0 hold 1/2 and the x1 hold 1/2 and every r is a difference of per-class
weighted sums. Their potential log sum D_1 exp(F(x0) - F(x1)) makes the engine record Z_t and
prod_s Z_s, which bounds the ranking loss sum D_1 [F(x1) <= F(x0)] (slides: "as before,
err_train <= prod Z_t"; :func:`boostkit.metrics.ranking_loss`).
"""

from __future__ import annotations

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED
from boostkit.losses import get_loss, shard_weights

from .kernels import bipartite_weights, pair_weights
from .preferences import (
    DEFAULT_MAX_PAIRS,
    PreferenceSet,
    active_preferences,
    preference_pairs,
)


def _check_both_classes(state, name: str) -> None:
    data = state.data
    if data.is_pos is not None:  # the rows are here (sparse ones have no bins)
        positive = data.is_pos.astype(bool)
        neg, pos = data.sample_weight[~positive].sum(), data.sample_weight[positive].sum()
    else:  # D_1's weight of each class over the shards: every row is in a bin of feature 0
        neg, pos = state.class_histogram()[0].sum(axis=0)
    if pos <= 0 or neg <= 0:
        raise ValueError(
            f"{name}: RankBoost ranks positives above negatives and needs positive sample "
            "weight on both classes"
        )


@attrs.define
class BipartiteReweighting(boostkit.Reweighting):
    """Bipartite RankBoost in O(n) per round: D(x0, x1) = v(x0) v(x1), never materialised.

    With the x1 the positive and the x0 the negative examples and D_1(x0, x1) = v_1(x0) v_1(x1)
    (v_1: the sample weights normalised within each class; uniform over all n+ n- pairs by
    default), D_t(x0, x1) ~ D_1(x0, x1) exp(F(x0) - F(x1)) factorises into
    v(x0) ~ v_1(x0) e^{F(x0)} and v(x1) ~ v_1(x1) e^{-F(x1)}, each normalised within its class
    (Yoder 2011, "Bounds and alpha": r = sum_x h(x) s(x) v(x) sum_{x'} v(x')). The weights are v / 2
    and the potential log(sum v_1(x0) e^{F(x0)}) + log(sum v_1(x1) e^{-F(x1)})
    (:func:`boostkit_rankboost.kernels.bipartite_weights`).

    Every data plane (``"distributed"``): the row form gives d1(i) exp(-y_i F(x_i)) for some
    rows, normalised within each class by the engine over all rows (``RowWeights(by_sign=True)``:
    each class's total, summed over the shards), which also computes the pairs' potential from
    the classes' totals. In this process the whole-rows kernel answers.
    """

    name = "bipartite"
    provides = frozenset({"potential", "pairwise-loss", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        _check_both_classes(state, self.name)

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        data = state.data
        out = np.empty(data.n_samples)
        log_potential = bipartite_weights(state.margin, data.is_pos, data.sample_weight, out)
        return boostkit.Weights(out, float(log_potential))

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        # v(x0) ~ v_1(x0) e^{F(x0)} and v(x1) ~ v_1(x1) e^{-F(x1)}: d1 e^{-yF} in log scale,
        # each class with its own scale (the classes' exponents may lie far apart: F has no
        # offset to hold them together) and normalised apart over all rows.
        weights = np.empty_like(margin)
        log_scales = np.empty(2)
        for side, rows in enumerate((y < 0, y > 0)):
            answer = shard_weights(get_loss("exponential"), margin[rows], y[rows],
                                   initial_weights[rows], n_jobs)
            weights[rows], log_scales[side] = answer.weights, answer.log_scale
        return boostkit.RowWeights(weights, log_scales, by_sign=True)


@attrs.define
class PreferencePairs(boostkit.Reweighting):
    """General RankBoost over an explicit preference set, O(number of pairs) per round.

    D_{t+1}(p) = D_1(p) exp(F(x0) - F(x1)) / prod_s Z_s for every pair p of the preference set
    made active by :func:`boostkit_rankboost.preferences.using_preferences` (as
    :func:`boostkit_rankboost.fit_preferences` does); each row gets half the weight of its pairs
    (:func:`boostkit_rankboost.kernels.pair_weights`). Outside such a block, the set is all
    (negative, positive) pairs of the training data with D_1(x0, x1) ~ w(x0) w(x1): the bipartite
    preference set, explicitly, as in the slides' algorithm (slower than ``bipartite``, which
    gives the same fit without pairs).

    ``max_pairs`` bounds that implicit set: beyond it the fit stops with an error pointing to the
    ``bipartite`` form.
    """

    name = "preference-pairs"
    provides = frozenset({"potential", "pairwise-loss"})
    max_pairs: int = attrs.field(default=DEFAULT_MAX_PAIRS, converter=int)
    _preferences: PreferenceSet | None = attrs.field(default=None, init=False)

    @max_pairs.validator
    def _check_max_pairs(self, attribute, value):
        if value < 1:
            raise ValueError(f"max_pairs must be a positive integer, got {value!r}")

    @boostkit.hookimpl
    def boostkit_fit_start(self, state):
        data = state.data
        preferences = active_preferences()
        if preferences is None:
            _check_both_classes(state, self.name)
            lower, upper, weight = preference_pairs(
                data.is_pos, sample_weight=data.sample_weight, max_pairs=self.max_pairs
            )
            preferences = PreferenceSet(lower, upper, weight, data.n_samples)
        elif preferences.n_rows != data.n_samples:
            raise ValueError(
                f"{self.name}: the active preference set indexes {preferences.n_rows} rows but "
                f"the training data has {data.n_samples}"
            )
        elif data.is_pos[preferences.lower].any() or not data.is_pos[preferences.upper].all():
            raise ValueError(
                f"{self.name}: the active preference set's lower rows must be labelled -1 and its "
                "upper rows +1 (see boostkit_rankboost.preferences.role_preferences)"
            )
        self._preferences = preferences

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        pairs = self._preferences
        out = np.empty(state.data.n_samples)
        log_potential = pair_weights(state.margin, state.data.is_pos, pairs.lower, pairs.upper,
                                     pairs.weight, out)
        return boostkit.Weights(out, float(log_potential))

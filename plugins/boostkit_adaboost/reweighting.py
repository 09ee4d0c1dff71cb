"""AdaBoost's exponential reweighting and any registered margin loss's, from the margins."""

from __future__ import annotations

import functools

import attrs
import numpy as np

import boostkit
from boostkit.kernels.boosting import exponential_distribution
from boostkit.capabilities import DISTRIBUTED
from boostkit.compiled import REWEIGHTING, CompiledReweighting, compile_form
from boostkit.losses import (compiled_weights, get_loss, loss_names, margin_loss_distribution,
                             shard_weights)


@attrs.define
class ExponentialReweighting(boostkit.Reweighting):
    """D_{t+1}(i) = D_1(i) exp(-y_i F_t(x_i)) / prod_{s<=t} Z_s (Wilbur et al. 2005, eq. 6;
    Yoder 2011).

    Equivalent to the multiplicative update D_{t+1}(i) = D_t(i) exp(-y_i c_t(x_i)) / Z_t, but
    computed from the margins in log space, so it never overflows and a round can be replaced by
    removing its contribution. The potential log sum_i D_1(i) exp(-y_i F_t(x_i)) gives
    prod_s Z_s, which bounds the training error (Wilbur et al. 2005, Theorem 1).

    With C > 1 margin columns the same rule runs over the (example, class) pairs:
    D_{t+1}(i, l) proportional to D_1(i, l) exp(-Y(i, l) F_t(x_i, l)), AdaBoost.MH's update
    (Schapire & Singer 1999, Fig. 5), whose potential prod_s Z_s bounds the Hamming loss.
    """

    name = "exponential"
    provides = frozenset({"potential", "multiclass", DISTRIBUTED})

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        # Pairs are examples of one binary problem: the kernel sees the flattened arrays. The
        # engine's least margin gives the largest exponent without a pass to find it.
        weights, log_potential = exponential_distribution(
            state.margin.ravel(), state.data.y.ravel(), state.initial_weights.ravel(),
            state.n_jobs, state.least_margin
        )
        return boostkit.Weights(weights.reshape(state.margin.shape), log_potential)

    def cell_log_factors(self, cell_values):
        """log g[cell, sign]: the multiplicative update D_{t+1}(i) = D_t(i) e^{-y_i c_t(x_i)} / Z_t
        (Wilbur et al. 2005, eq. 6) for a term of value ``cell_values`` (``(n_cells,)``, or
        ``(n_cells, C)`` per class) in each cell: ``[..., 0]`` for the negative rows (pairs),
        ``[..., 1]`` for the positive. It declares the rule multiplicative per (cell, sign), so
        a row plane may carry the class histogram across rounds
        (:class:`boostkit.plane.CarriedHistogram`)."""
        return np.stack([cell_values, -cell_values], axis=-1)

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        return CompiledReweighting(compile_form(exponential_log_factors, REWEIGHTING))

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        # The margin-loss kernel with AdaBoost's loss: bit for bit this rule's weights.
        return shard_weights(get_loss("exponential"), margin, y, initial_weights, n_jobs)


def exponential_log_factors(values, params, out):
    """``exponential``'s compiled form (signature :data:`boostkit.compiled.REWEIGHTING`):
    log g[j, -] = c_j, log g[j, +] = -c_j, as :meth:`ExponentialReweighting.cell_log_factors`."""
    for j in range(values.shape[0]):
        out[j, 0] = values[j]
        out[j, 1] = -values[j]


def _registered_loss(instance, attribute, value) -> None:
    if not isinstance(value, str) or value not in loss_names():
        raise ValueError(
            f"margin-loss: {attribute.name} must name a registered margin loss "
            f"({', '.join(loss_names())}), got {value!r}"
        )


@attrs.define
class MarginLossReweighting(boostkit.Reweighting):
    """D_{t+1}(i) proportional to D_1(i) w(y_i F_t(x_i)) for a registered margin loss (L, w).

    The functional-gradient reweighting of Mason, Baxter, Bartlett & Frean (2000, AnyBoost,
    section 3): for a margin loss L the next distribution weighs example i by -L'(y_i F_t(x_i)),
    and with L = e^{-v} it is AdaBoost's (Wilbur et al. 2005, eq. 6). ``loss`` names a
    :class:`boostkit.losses.MarginLoss` (``boostkit.losses.loss_names()``): ``logistic``
    (w = 1/(1 + e^{yF}), Collins, Schapire & Singer 2002), ``madaboost`` (w = min(1, e^{-yF}),
    Domingo & Watanabe 2000), ``logitboost`` (FHT's p (1 - p)), ``exponential``, or one a plugin
    registered. Weights and potential log sum_i D_1(i) L(y_i F_t(x_i)) come from the engine's
    fused kernel (:func:`boostkit.losses.margin_loss_distribution`), in log space where they
    could overflow. With C > 1 margin columns the same rule runs over the (example, class) pairs.

    ``loss="exponential"`` gives the ``exponential`` component's weights and potential bit for
    bit; that component keeps the engine's dedicated kernel, which skips the margin-loss
    kernel's separate pass over the log-weights.
    """

    name = "margin-loss"
    provides = frozenset({"potential", "multiclass", DISTRIBUTED})
    loss: str = attrs.field(default="logistic", validator=_registered_loss)

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        # Pairs are examples of one binary problem: the kernel sees the flattened arrays.
        weights, log_potential = margin_loss_distribution(
            get_loss(self.loss), state.margin.ravel(), state.data.y.ravel(),
            state.initial_weights.ravel(), state.n_jobs
        )
        return boostkit.Weights(weights.reshape(state.margin.shape), log_potential)

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        # The loss's weights from the margins, one pass over the rows a round (compiled per
        # loss; the log-space rounds by the kernel's entry point): every row's weight changes,
        # so the batch sums each histogram anew.
        loss = get_loss(self.loss)
        return CompiledReweighting(from_margins=compiled_weights(loss),
                                   exact=functools.partial(margin_loss_distribution, loss))

    @boostkit.hookimpl
    def boostkit_row_weights(self, margin, y, initial_weights, n_jobs):
        return shard_weights(get_loss(self.loss), margin, y, initial_weights, n_jobs)

"""The reference pooling of tied scores, along a given sort: the definition the PAV plugin's
kernels (``sort_pool_ties``, ``pool_ties_hashed``) reproduce bit for bit."""

from __future__ import annotations


def pool_ties(scores, weights, targets, order, out_scores, out_weights, out_means):
    """Pool the examples that share a parameter value (Wilbur et al. 2005, section 2, before eq. 1).

    ``order`` sorts ``scores`` increasingly. Every run of equal scores becomes one point whose
    weight is the run's total weight and whose target is the run's weighted mean target, summed
    in the order ``order`` lists them (the examples' order when the sort is stable).
    Examples of weight 0 are left out (they carry no information, and a run of them would have
    no mean). Writes the distinct values, in increasing order, into ``out_scores``,
    ``out_weights`` and ``out_means`` (each at least ``len(order)`` long) and returns their
    number N.
    """
    n_out = 0
    current = 0.0
    total_w = 0.0
    total_wp = 0.0
    for idx in range(order.shape[0]):
        i = order[idx]
        w = weights[i]
        if w <= 0.0:
            continue
        s = scores[i]
        if n_out > 0 and s == current:
            total_w += w
            total_wp += w * targets[i]
        else:
            if n_out > 0:
                out_weights[n_out - 1] = total_w
                out_means[n_out - 1] = total_wp / total_w
            out_scores[n_out] = s
            current = s
            total_w = w
            total_wp = w * targets[i]
            n_out += 1
    if n_out > 0:
        out_weights[n_out - 1] = total_w
        out_means[n_out - 1] = total_wp / total_w
    return n_out

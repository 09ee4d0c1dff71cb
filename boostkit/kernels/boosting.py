"""Margin and weight updates, fused into single passes over the examples.

Each kernel works on a range of examples, so :func:`exponential_weights_parallel` splits the
examples into blocks on threads (:mod:`boostkit.kernels.blocks`) and combines the blocks' results
in block order. The blocks slice their range first and loop from 0, which lets numba drop its
negative-index checks. On threads, the margin update writes the new margins to a new array
(:func:`add_contribution_blocks`): a block run again for a thread that is not running then writes
the same numbers, where adding in place would add twice.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .blocks import (MIN_THREADED_ROWS, SpareArrays, block_bounds, row_threads, run_blocks,
                     run_blocks_settled)
from .exponential import CONTRACT, exp_nonpositive


@numba.njit(cache=True, nogil=True, inline="always")
def interleaved_sum(a):
    """sum(a) in four interleaved partial sums, in a fixed order (so a fixed result).

    One chain of additions is bound by their latency; four independent ones are not, which makes
    this several times faster than a serial loop over long arrays inside other kernels.
    """
    s0, s1, s2, s3 = interleaved_partial_sums(a, 0.0, 0.0, 0.0, 0.0)
    return (s0 + s1) + (s2 + s3)


@numba.njit(cache=True, nogil=True, inline="always")
def interleaved_partial_sums(a, s0, s1, s2, s3):
    """:func:`interleaved_sum`'s four partial sums, carried on from ``s0 .. s3`` over ``a``: over
    consecutive pieces whose lengths are multiples of 4 but the last's (whose remainder goes to
    ``s0``), the partial sums :func:`interleaved_sum` makes of the whole, so a sum can be taken
    piece by piece while each piece is in the cache."""
    n4 = a.shape[0] - a.shape[0] % 4
    for i in range(0, n4, 4):
        s0 += a[i]
        s1 += a[i + 1]
        s2 += a[i + 2]
        s3 += a[i + 3]
    for i in range(n4, a.shape[0]):
        s0 += a[i]
    return s0, s1, s2, s3


@numba.njit(cache=True, nogil=True, inline="always")
def _add_block(margin, contribution, y, d1, weights, out, start, stop):
    # out[i] = margin[i] + contribution[i] over [start, stop) (``out`` may be ``margin``: the
    # update in place), and the block's (training error, weighted error, least margin, whether
    # every contribution is finite).
    margin = margin[start:stop]
    contribution = contribution[start:stop]
    y = y[start:stop]
    d1 = d1[start:stop]
    weights = weights[start:stop]
    out = out[start:stop]
    train_err = 0.0
    werr = 0.0
    least = np.inf
    finite = 0.0
    # Branch-free: whether an example is misclassified is data-dependent and unpredictable, so
    # the comparisons are turned into 0/1 factors and selects (2-5x faster on real data than
    # if/else). The least margin and the finiteness check ride along on values already loaded:
    # each would otherwise be a pass of its own over the examples.
    for i in range(stop - start):
        c = contribution[i]
        finite += c - c  # 0 for a finite c, NaN for inf and NaN (a sum, not a count: cheaper)
        m = margin[i] + c
        out[i] = m
        ym = y[i] * m
        train_err += d1[i] * (ym <= 0.0)
        counted = ym if d1[i] > 0.0 else np.inf
        least = counted if counted < least else least
        yc = y[i] * c
        werr += weights[i] * ((yc < 0.0) + 0.5 * (yc == 0.0))
    return train_err, werr, least, finite == 0.0


@numba.njit(cache=True, nogil=True)
def add_contribution(margin, contribution, y, d1, weights):
    """Add this round's contribution to the margins and measure the round, in one pass.

    ``margin`` (F_{t-1} -> F_t) is updated in place. Returns ``(training_error, weighted_error,
    least_margin, finite)``: sum_i D_1(i) [y_i F_t(x_i) <= 0]; sum_i D_t(i) [y_i c_t(x_i) <
    0] plus half the D_t-weight of the examples where c_t(x_i) = 0 (an abstention is a coin
    flip); min_i y_i F_t(x_i) over the examples of positive D_1 (inf if none), the first such
    minimum (so its negation is, bit for bit, the largest exponent -y_i F_t(x_i) that
    :func:`exponential_weights` subtracts); and whether every contribution is finite (if not,
    the margins are not to be used).
    """
    return _add_block(margin, contribution, y, d1, weights, margin, 0, margin.shape[0])


def add_contribution_blocks(margin, contribution, y, d1, weights, n_jobs):
    """:func:`add_contribution` over the blocks of :func:`boostkit.kernels.blocks.block_bounds`,
    the blocks' errors added in block order (the same for every ``n_jobs > 1``; equal to the
    serial sums up to rounding; the least margin and the check are exact). Returns
    ``(new_margin, training_error, weighted_error, least_margin, finite)``.

    Blocks of at least :data:`~boostkit.kernels.blocks.MIN_THREADED_ROWS` examples run on
    ``n_jobs`` threads, and then write F_t into a new array: a block may be run twice
    (:func:`~boostkit.kernels.blocks.run_blocks`), and adding the contribution twice in place
    would be wrong, while writing F_{t-1} + c_t twice writes the same numbers. Smaller blocks run
    on the caller's thread, in place (``new_margin`` is then ``margin``).
    """
    bounds = block_bounds(margin.shape[0])
    if len(bounds) == 1:  # the serial pass itself
        return (margin, *add_contribution(margin, contribution, y, d1, weights))
    threads = row_threads(margin.shape[0], n_jobs)
    out = np.empty_like(margin) if threads > 1 else margin
    parts = run_blocks(
        lambda k: _add_block(margin, contribution, y, d1, weights, out, *bounds[k]),
        len(bounds), threads, margin.shape[0])
    train_err = werr = 0.0
    least = np.inf
    finite = True
    for part_train, part_werr, part_least, part_finite in parts:
        train_err += part_train
        werr += part_werr
        least = part_least if part_least < least else least  # the first least, as serially
        finite = finite and part_finite
    return out, train_err, werr, least, finite


@numba.njit(cache=True, nogil=True)
def _max_exponent(margin, y, d1, start, stop):
    margin = margin[start:stop]
    y = y[start:stop]
    d1 = d1[start:stop]
    top = -np.inf
    # Selects rather than branches (the first largest exponent, as an if would keep): 1.7x
    # faster at 10^6 examples, at the memory's pace.
    for i in range(stop - start):
        e = -y[i] * margin[i] if d1[i] > 0.0 else -np.inf
        top = e if e > top else top
    return top


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT)
def _exp_block(margin, y, d1, top, out, start, stop):
    margin = margin[start:stop]
    y = y[start:stop]
    d1 = d1[start:stop]
    out = out[start:stop]
    # Branch-free, no reduction, a vectorisable exp: one SIMD loop. Examples of positive initial
    # weight have exponents <= 0 (top is their largest); the others get D_1(i) = 0 times e^0.
    for i in range(stop - start):
        out[i] = d1[i] * exp_nonpositive(-y[i] * margin[i] - top)
    return interleaved_sum(out)


@numba.njit(cache=True, nogil=True)
def exponential_weights(margin, y, d1, out):
    """AdaBoost's distribution D_{t+1}(i) proportional to D_1(i) exp(-y_i F_t(x_i)).

    Computed in log space (the largest exponent among examples of positive initial weight is
    subtracted before exponentiating), so thousands of rounds never overflow. ``out`` receives
    the normalised weights; returns log sum_i D_1(i) exp(-y_i F_t(x_i)), the log of prod_s Z_s.
    """
    # np.intp(0), not the literal 0, for which numba would compile another specialisation
    # than the blocks' (exponential_weights_parallel): the cold start, docs/performance.md.
    top = _max_exponent(margin, y, d1, np.intp(0), margin.shape[0])
    return shifted_exponential_weights(margin, y, d1, top, out)


@numba.njit(cache=True, nogil=True)
def shifted_exponential_weights(margin, y, d1, top, out):
    """:func:`exponential_weights` given its largest exponent ``top`` = max_i -y_i F_t(x_i) over
    the examples of positive initial weight (the negated least margin that
    :func:`add_contribution` measures as it updates the margins): one pass fewer."""
    total = _exp_block(margin, y, d1, top, out, np.intp(0), margin.shape[0])  # as above
    out /= total
    return top + np.log(total)


@numba.njit(cache=True, nogil=True)
def _exp_block_into(margin, y, d1, top, block, start, stop):
    # The weights of examples [start, stop) into ``block`` (a spare array of the block's
    # length), and their sum: a block that may be run twice writes nothing it does not own.
    total = _exp_block(margin[start:stop], y[start:stop], d1[start:stop], top, block,
                       np.intp(0), stop - start)
    return block, total


#: Spare arrays for the blocks' weights (see :class:`boostkit.kernels.blocks.SpareArrays`).
_SPARE = SpareArrays()


def exponential_weights_parallel(margin, y, d1, out, n_jobs, top=None):
    """:func:`exponential_weights` in ``n_jobs`` blocks of examples on ``n_jobs`` threads
    (:func:`boostkit.kernels.blocks.run_blocks`): the largest exponent of all blocks, then each
    block's weights (the serial kernel's, bit for bit) and sum, the sums added in block order.

    The blocks are the ``n_jobs`` equal ranges the margin-loss kernels use
    (:mod:`boostkit.kernels.margin_loss`), so ``margin-loss(loss="exponential")`` keeps giving
    these weights bit for bit on any number of threads. Each block's weights go to an array of
    its own, then divided by the total into ``out``, block by block on the threads (the pass
    the serial kernel makes in place): a block run again for a thread that is not running
    writes the same quotients into ``out``, and never overwrites the weights before the
    division. A block's array goes back to the spares only when no division may still read it.
    Given ``top`` (as for :func:`shifted_exponential_weights`), the pass that finds it is skipped.
    """
    n = margin.shape[0]
    bounds = [(k * n // n_jobs, (k + 1) * n // n_jobs) for k in range(n_jobs)]
    # Small blocks are run on the caller's thread (the same blocks, so the same numbers): waking
    # another thread costs more than their work.
    threads = n_jobs if n // n_jobs >= MIN_THREADED_ROWS else 1
    if top is None:
        top = max(run_blocks(lambda k: _max_exponent(margin, y, d1, *bounds[k]), n_jobs,
                             threads, n))
    parts = run_blocks(
        lambda k: _exp_block_into(margin, y, d1, top,
                                  _SPARE.take((bounds[k][1] - bounds[k][0],)), *bounds[k]),
        n_jobs, threads, n)
    total = 0.0
    for _, part_total in parts:
        total += part_total
    blocks = [block for block, _ in parts]
    _, settled = run_blocks_settled(lambda k: _divide_into(blocks[k], total, out, bounds[k][0]),
                                    n_jobs, threads, n)
    if settled:
        _SPARE.give(blocks)
    return top + np.log(total)


@numba.njit(cache=True, nogil=True)
def _divide_into(block, total, out, start):
    # out[start:start + len(block)] = block / total: numpy's quotients, on the block's thread.
    # Through a slice: indexing ``out`` at start + i kept LLVM from vectorising the divisions
    # (4x slower, at the divider's scalar pace).
    quotients = out[start:start + block.shape[0]]
    for i in range(block.shape[0]):
        quotients[i] = block[i] / total


@numba.njit(cache=True, nogil=True)
def sum_and_min(a):
    """``(sum, min)`` of a 1-D float64 array in one pass (``(0.0, inf)`` when empty): what the
    engine checks of every distribution a hook returns. The sum is added as in
    :func:`interleaved_sum`, which may differ from numpy's in the last bits (the check allows
    for rounding); a NaN makes the sum NaN."""
    s0 = s1 = s2 = s3 = 0.0
    m0 = m1 = m2 = m3 = np.inf
    n4 = a.shape[0] - a.shape[0] % 4
    for i in range(0, n4, 4):
        v0, v1, v2, v3 = a[i], a[i + 1], a[i + 2], a[i + 3]
        s0 += v0
        s1 += v1
        s2 += v2
        s3 += v3
        m0 = v0 if v0 < m0 else m0
        m1 = v1 if v1 < m1 else m1
        m2 = v2 if v2 < m2 else m2
        m3 = v3 if v3 < m3 else m3
    for i in range(n4, a.shape[0]):
        s0 += a[i]
        m0 = a[i] if a[i] < m0 else m0
    return (s0 + s1) + (s2 + s3), min(min(m0, m1), min(m2, m3))


@numba.njit(cache=True, nogil=True)
def all_finite(a):
    """Whether every value of the 1-D float64 ``a`` is finite: ``np.isfinite(a).all()`` in one
    pass without a temporary (x - x is 0 for a finite x, NaN for inf and NaN)."""
    s0 = s1 = s2 = s3 = 0.0
    n4 = a.shape[0] - a.shape[0] % 4
    for i in range(0, n4, 4):
        s0 += a[i] - a[i]
        s1 += a[i + 1] - a[i + 1]
        s2 += a[i + 2] - a[i + 2]
        s3 += a[i + 3] - a[i + 3]
    for i in range(n4, a.shape[0]):
        s0 += a[i] - a[i]
    return (s0 + s1) + (s2 + s3) == 0.0


def sum_and_min_parallel(a, n_jobs):
    """:func:`sum_and_min` over the blocks of :func:`boostkit.kernels.blocks.block_bounds` on
    ``n_jobs`` threads: the blocks' sums added in block order (the serial sum up to rounding,
    which the engine's check allows for) and the least of their minima."""
    threads = row_threads(a.shape[0], n_jobs)
    if threads == 1:
        return sum_and_min(a)
    bounds = block_bounds(a.shape[0])
    parts = run_blocks(lambda k: sum_and_min(a[bounds[k][0]:bounds[k][1]]), len(bounds), threads,
                       a.shape[0])
    total, smallest = 0.0, np.inf
    for part_total, part_min in parts:
        total += part_total
        smallest = min(smallest, part_min)
    return total, smallest


def all_finite_parallel(a, n_jobs):
    """:func:`all_finite` over the blocks of :func:`boostkit.kernels.blocks.block_bounds` on
    ``n_jobs`` threads."""
    threads = row_threads(a.shape[0], n_jobs)
    if threads == 1:
        return all_finite(a)
    bounds = block_bounds(a.shape[0])
    return all(run_blocks(lambda k: all_finite(a[bounds[k][0]:bounds[k][1]]), len(bounds),
                          threads, a.shape[0]))


@numba.njit(cache=True, nogil=True)
def sign_error(scores, y, weights):
    """Weighted error of a +-1 hypothesis in one pass: ``(eps, n_not_pm1)``.

    eps = sum_i D(i) [h(x_i) != y_i]; ``n_not_pm1`` counts scores outside {-1, +1}, so a caller
    can refuse a real-valued hypothesis without a second pass.
    """
    eps = 0.0
    bad = 0
    for i in range(scores.shape[0]):  # branch-free, as in _add_block
        h = scores[i]
        bad += abs(h) != 1.0
        eps += weights[i] * (h != y[i])
    return eps, bad


@numba.njit(cache=True, nogil=True, inline="always")
def _cell_sign_error_block(cells, table, y, weights, start, stop):
    cells = cells[start:stop]
    y = y[start:stop]
    weights = weights[start:stop]
    eps = 0.0
    bad = 0
    outside = 0
    last = table.shape[0] - 1
    for i in range(stop - start):
        c = cells[i]
        outside += (c < 0) + (c > last)
        h = table[min(max(c, 0), last)]
        bad += abs(h) != 1.0
        eps += weights[i] * (h != y[i])
    return eps, bad, outside


@numba.njit(cache=True, nogil=True)
def cell_sign_error(cells, table, y, weights):
    """:func:`sign_error` of a hypothesis constant on its cells, from the cells: ``(eps,
    n_not_pm1, n_outside)`` with h(x_i) = ``table[cells[i]]``, the same sum in the same order.

    Reads a byte per example (uint8 ``cells``) where :func:`sign_error` reads the eight of a
    score. ``n_outside`` counts cells outside ``table`` (read as its nearest cell, so nothing
    is read out of bounds); a caller refuses the result when it is not 0.
    """
    return _cell_sign_error_block(cells, table, y, weights, 0, cells.shape[0])


def cell_sign_error_parallel(cells, table, y, weights, n_jobs):
    """:func:`cell_sign_error` summed over the blocks of :func:`boostkit.kernels.blocks.
    block_bounds` on ``n_jobs`` threads, the blocks' sums added in block order: the same for
    every ``n_jobs > 1`` (the blocks depend on the number of examples only), and equal to the
    serial sum up to rounding."""
    bounds = block_bounds(cells.shape[0])
    if len(bounds) == 1:  # the serial sum itself
        return cell_sign_error(cells, table, y, weights)
    threads = row_threads(cells.shape[0], n_jobs)
    parts = run_blocks(lambda k: _cell_sign_error_block(cells, table, y, weights, *bounds[k]),
                       len(bounds), threads, cells.shape[0])
    eps, bad, outside = 0.0, 0, 0
    for part_eps, part_bad, part_outside in parts:
        eps += part_eps
        bad += part_bad
        outside += part_outside
    return eps, bad, outside


@numba.njit(cache=True, nogil=True)
def _gather(table, cells, out):
    # The cells' range first (nothing is written unless every cell indexes the table), then
    # the values: (lowest cell, highest cell, whether they were written).
    lo = hi = cells[0]
    for i in range(cells.shape[0]):
        c = cells[i]
        lo = c if c < lo else lo
        hi = c if c > hi else hi
    if lo < 0 or hi >= table.shape[0]:
        return lo, hi, False
    for i in range(cells.shape[0]):
        out[i] = table[cells[i]]
    return lo, hi, True


def take_cells(table, cells):
    """``table[cells]`` for a 1-D float64 ``table`` and integer ``cells``: the values of a
    hypothesis or contribution constant on its cells, example by example.

    numpy's fancy indexing first converts uint8 indices to ``intp``, an array eight times the
    cells' size; this reads the cells twice (their range, then the values) and nothing else.
    Raises ``IndexError`` for a cell outside ``table``. One thread: its blocks would write one
    array that the caller owns (see :func:`boostkit.kernels.blocks.run_blocks`).
    """
    out = np.empty(cells.shape[0])
    if cells.shape[0]:
        lo, hi, written = _gather(table, cells, out)
        if not written:
            raise IndexError(f"cells hold values in [{lo}, {hi}], outside a table of "
                             f"{table.shape[0]} cells")
    return out


def exponential_distribution(margin, y, d1, n_jobs: int = 1, least_margin: float | None = None):
    """``(weights, log_potential)``: :func:`exponential_weights` into a new array, on ``n_jobs``
    threads when ``n_jobs > 1``. The entry point for reweightings built on exp(-y F).

    ``least_margin``, when given, must be min_i y_i F(x_i) over the examples of positive
    initial weight (``BoostState.least_margin``, which the engine measures as it updates the
    margins): the pass that finds the largest exponent is then skipped, with the same weights.
    """
    out = np.empty(margin.shape[0])
    top = None if least_margin is None else -least_margin
    # Below MIN_THREADED_ROWS examples per thread the serial kernel (one block): waking other
    # threads costs more than the work. margin_loss_terms follows the same rule.
    if n_jobs > 1 and margin.shape[0] // n_jobs >= MIN_THREADED_ROWS:
        log_potential = exponential_weights_parallel(margin, y, d1, out, n_jobs, top)
    elif top is None:
        log_potential = exponential_weights(margin, y, d1, out)
    else:
        log_potential = shifted_exponential_weights(margin, y, d1, top, out)
    return out, float(log_potential)


@numba.njit(cache=True, nogil=True)
def exp_loss_alpha(u, w, smoothing, tol, max_iter):
    """alpha minimising Z(alpha) = sum_k w_k exp(-alpha u_k) + s (e^{alpha M} + e^{-alpha M}).

    The voting weight of linear/confidence-rated AdaBoost (Schapire & Singer 1999, section 3.2;
    Wilbur et al. 2005, eq. 6, 9; Barutcuoglu et al. 2007, section 4). ``u`` are the margins y_i
    h(x_i) (examples where h abstains, u = 0, only add a constant to Z and may be left out), ``w``
    their weights under D_t, M = max |u_k|. The s-terms are two phantom examples of weight s at
    u = +-M, which keep alpha finite when every u_k has one sign (M over the examples of positive
    weight); for h in {-1, +1} they give exactly alpha = 1/2 ln((1 - eps + s)/(eps + s)). Z is
    strictly convex: Newton's method in beta = alpha M, safeguarded by bisection inside a bracket of
    the root, converges.
    """
    # M and the smallest |u| over the examples of positive weight only: an example of weight 0
    # is no example (it must not move the phantom examples at +-M).
    scale = 0.0
    smallest = np.inf
    for k in range(u.shape[0]):
        if w[k] > 0.0:
            scale = max(scale, abs(u[k]))
            smallest = min(smallest, abs(u[k]))
    if scale == 0.0:
        return 0.0
    if smallest == scale:
        # Every |u_k| = M (a +-1 classifier, or a term that never occurs twice in a text):
        # Z = W+ e^{-beta} + W- e^{beta} + s (e^beta + e^-beta), minimised in closed form.
        agree = smoothing
        disagree = smoothing
        for k in range(u.shape[0]):
            if u[k] > 0.0:
                agree += w[k]
            else:
                disagree += w[k]
        return 0.5 * math.log(agree / disagree) / scale
    g0 = 0.0
    for k in range(u.shape[0]):
        g0 -= w[k] * u[k] / scale
    if g0 == 0.0:
        return 0.0
    # g'(beta) >= -1 + s (e^beta - e^-beta) > 0 beyond ln(2/s) + 1: the root lies in the bracket.
    bound = math.log(2.0 / smoothing) + 1.0
    lo, hi = (0.0, bound) if g0 < 0.0 else (-bound, 0.0)
    # First step: Newton's from beta = 0 (the root is usually near 0), kept inside the bracket.
    curvature = 2.0 * smoothing
    for k in range(u.shape[0]):
        curvature += w[k] * (u[k] / scale) ** 2
    beta = -g0 / curvature
    if not lo < beta < hi:
        beta = 0.5 * (lo + hi)
    for _ in range(max_iter):
        up = math.exp(beta)
        g1 = smoothing * (up - 1.0 / up)
        g2 = smoothing * (up + 1.0 / up)
        for k in range(u.shape[0]):
            v = u[k] / scale
            e = w[k] * math.exp(-beta * v)
            g1 -= v * e
            g2 += v * v * e
        if abs(g1) <= tol * g2:  # the Newton step is below tol
            break
        if g1 > 0.0:
            hi = beta
        else:
            lo = beta
        step = beta - g1 / g2
        beta = step if lo < step < hi else 0.5 * (lo + hi)
    return beta / scale

"""Compiled round batches: many boosting rounds in one numba call.

:func:`run_batch` runs the rounds of a recipe whose every component has a compiled form
(:mod:`boostkit.compiled`): each round, the class histogram of D_t (summed over the rows, or
carried from last round's: :class:`boostkit.plane.CarriedHistogram`, the same rule as the row
plane), the proposal's search, the calibration's cell values, the reweighting's factors per
(cell, sign), one fused pass over the rows (:func:`boostkit.kernels.fused.cell_term_pass`:
margins, errors, weights, the rows off the kept cell), the weights normalised, and the stopping
rules. A reweighting given by its weights from the margins (a margin loss's, not multiplicative
per cell) takes the fused pass for F_t and the errors, then its own pass over the rows for
D_{t+1}; its histograms are summed over the rows every round. The kernel writes what the
engine needs to build the rounds' Python values afterwards (cuts, sides, cell scores, values,
coefficients, errors, log Z_t or the log potential) and returns how many rounds ran.

How the components are called: first-class functions. Each compiled form is a numba function
compiled for its role's signature, passed to the kernel as a ``numba.types.FunctionType``
argument (a :class:`FirstClass`: its code's address and signature) and called once per round.
Measured with ``benchmarks/bench_batch.py`` (``adaboost``'s components, 200 rounds at
1 000 x 10, one thread, CPU time, medians of 9, on a shared 2-core machine):

============== ========= ================== ====================================
composition    a round   a one-round call   compiling
============== ========= ================== ====================================
first-class    13.4 us   109 us             once, for every recipe
dispatchers    12.5 us   59 us              3.4 s for each recipe
hand-inlined   12.8 us   91 us              3.1 s for each recipe
============== ========= ================== ====================================

(dispatchers: the components passed as numba dispatchers, the kernel compiled for them, LLVM
free to inline them; hand-inlined: the kernel's source with the components' calls replaced by
``inline="always"`` functions; an earlier run, with a slower search, gave 15.9, 15.5 and
15.9 us.) A first-class call is ~11 ns against ~0.6 ns inlined and a round makes six; the
rest of the gap (up to ~0.9 us, 7 %, within this machine's noise) is what inlining lets LLVM
do around the calls. So the kernel takes first-class functions, with an explicit signature
(:data:`BATCH`): it is compiled once, on the first batched fit (~1.6 s, with its kernels
already cached), and cached on disk (:func:`batch_kernel`); a new recipe, or a plugin's
compiled form, compiles only its own small functions, where a kernel compiled per recipe
costs ~2-3 s of compiling for each combination of components, in every fresh environment.
What must not be a first-class call is work per bin or per row: a search called per cut would
make 2 550 calls a round at 10 x 255 (30 us); the search scores every cut in its own loop, and
the per-row work is the fused pass, driven by the factors per (cell, sign).

Where ``adaboost``'s round goes at 1 000 x 10, 255 bins a feature (200 rounds, each part
timed inside the kernel with the cycle counter, ``benchmarks/bench_round_parts.py``; medians of
three runs interleaved with the kernel before these figures' changes, one thread): the carried
histogram (:func:`~boostkit.kernels.carried.carry_class_histogram`) 3.1 us, against 3.7
before; the stump's error search 3.1 us (3.5: its left sums 1.1 us, each feature's lowest
error on approximate sides 1.1 us, a feature scored exactly ~0.5 us); the fused pass 2.3 us
(2.55); the rest (the cut's cells and rows per cell, the values, factors, normalisation and
stopping rules) 0.55 us (1.0). The kernel: 10.2 us a round of CPU time, against 11.7. The
three large parts wait on the cache and on chains of additions whose order fixes the bits:
the (10, 255, 2) histogram (40 KB) is read and written from the second-level cache every
round, Z_t and the search's prefix sums add bin after bin, the fused pass's three sums row
after row. At 100 000 x 100 and 1 000 000 x 20 (50 rounds): 1.8 against 2.0 ms and 6.2
against 6.5 ms a round. The Python values of a round, built afterwards, ~4-5 us more
(:func:`boostkit.compiled.run_batch_rounds`); a whole batched ``Booster("adaboost")`` round
14.6 us alone (an earlier run: 18.6 us, against 87.5 us one by one). From the margins
(another run, ``bench_batch.py --recipes``, adaboost 22.1 us batched): ``madaboost`` 24.4 us
against 133.2 one by one (the loss's weights 3.3 us, the histogram summed every round);
``logitboost`` 45.9 against 168.0 then; since, 33-38 us (``benchmarks/bench_logitboost.py``:
its two-channel histogram with the response 9-10 us, the least-squares search ~9.4 us, the
weights 4.5 us; the Python values ~7 us).
"""

from __future__ import annotations

import functools
import math
import warnings

import numba
import numpy as np
from numba import types

from ..compiled import CALIBRATION, HISTOGRAM, MARGIN_WEIGHTS, REWEIGHTING, SEARCH, STOPPING
from .carried import carry_class_histogram
from .fused import carry_factors, cell_term_pass, factor_scale
from .histogram import class_histogram

__all__ = ["BATCH", "MAX_STOPPING", "NEEDS_EXACT", "NON_FINITE", "NO_WEIGHT", "FirstClass",
           "batch_kernel",
           "first_class", "never_stop", "no_factors", "no_histogram", "no_margin_weights",
           "run_batch"]

#: Stopping rules a batch runs (slots of :func:`run_batch`); a recipe with more takes the
#: per-round path.
MAX_STOPPING = 3
#: ``stop[0]`` of a batch that ended because a cell value was not finite (round ``stop[1]``).
NON_FINITE = -1
#: ``stop[0]`` of a batch that ended because the weights summed to 0 or overflowed.
NO_WEIGHT = -2
#: ``stop[0]`` of a batch whose weights from the margins asked for the reweighting's exact
#: (Python) form in round ``stop[1]`` (their sum NaN): the round is done but for D_{t+1}, its
#: potential and the stopping rules.
NEEDS_EXACT = -3

_search = types.FunctionType(SEARCH)
_histogram = types.FunctionType(HISTOGRAM)
_calibration = types.FunctionType(CALIBRATION)
_reweighting = types.FunctionType(REWEIGHTING)
_margin_weights = types.FunctionType(MARGIN_WEIGHTS)
_stopping = types.FunctionType(STOPPING)
_vector = types.float64[::1]

#: :func:`run_batch`'s signature: the one compiled specialisation.
BATCH = types.int64(
    types.uint8[:, ::1], types.uint8[::1],  # codes, is_pos
    _vector, _vector, _vector, _vector,  # y, d1, w, F
    types.boolean[:, ::1], types.int64[:, ::1],  # valid cuts, rows per bin
    _search, _histogram, _vector, _calibration, _vector, _reweighting, _margin_weights, _vector,
    _stopping, _vector, _stopping, _vector, _stopping, _vector,
    types.float64, types.int64, types.boolean,  # max_growth, refresh_every, potential
    types.boolean, types.int64, types.float64,  # from_margins, own_width, log potential
    types.int64[:, ::1], types.float64[:, :, ::1], types.float64[:, ::1],  # cuts, sides, scores
    types.float64[:, ::1], types.float64[:, ::1], types.float64[:, ::1],  # values, coefs, numbers
    types.int64[::1],  # stop
)


class FirstClass(types.WrapperAddressProtocol):
    """A compiled form as :func:`run_batch` takes it: the address of its compiled code and its
    signature. Passing a dispatcher costs ~40 us a function on every call of the kernel (numba
    types it and finds its address again), this ~15 us; the calls in the kernel are the same."""

    def __init__(self, function, signature):
        from numba.experimental.function_type import _get_wrapper_address

        self.function = function  # kept alive with its code
        self._signature = signature
        self._address = _get_wrapper_address(function, signature)

    def __wrapper_address__(self) -> int:
        return self._address

    def signature(self):
        return self._signature


@functools.cache
def first_class(function, signature) -> FirstClass:
    """``function`` (a numba dispatcher compiled for ``signature``) as :func:`run_batch`'s
    argument, made once."""
    return FirstClass(function, signature)


def _never_stop(round, weighted_error, z, training_error, params):
    return 0


@functools.cache
def never_stop():
    """The stopping rule of an unused slot: never stops."""
    return numba.njit(STOPPING, cache=True, nogil=True)(_never_stop)


def _no_histogram(codes, is_pos, margin, y, weights, params, scratch, out):
    out[:] = np.nan


@functools.cache
def no_histogram():
    """The histogram slot of a proposal searching the class histogram (never called)."""
    return numba.njit(HISTOGRAM, cache=True, nogil=True)(_no_histogram)


def _no_factors(values, params, out):
    out[:] = np.nan


@functools.cache
def no_factors():
    """The factors' slot of a reweighting from the margins (never called)."""
    return numba.njit(REWEIGHTING, cache=True, nogil=True)(_no_factors)


def _no_margin_weights(margin, y, d1, out, scratch, params, sums):
    sums[:] = np.nan


@functools.cache
def no_margin_weights():
    """The margin weights' slot of a reweighting by factors (never called)."""
    return numba.njit(MARGIN_WEIGHTS, cache=True, nogil=True)(_no_margin_weights)


@functools.cache
def batch_kernel():
    """:func:`run_batch` compiled for :data:`BATCH` (on first use; loaded from numba's cache
    afterwards)."""
    with warnings.catch_warnings():  # first-class function types are "experimental" in numba
        warnings.simplefilter("ignore", numba.NumbaExperimentalFeatureWarning)
        return numba.njit(BATCH, cache=True, nogil=True)(run_batch)


def run_batch(codes, is_pos, y, d1, weights, margin, valid, bin_counts,
              search, histogram_of, search_params, calibrate, calibration_params, log_factors_of,
              margin_weights, reweighting_params, stop0, params0, stop1, params1, stop2, params2,
              max_growth, refresh_every, potential, from_margins, own_width, log_potential,
              cuts, sides, cell_scores, values, coefficients, numbers, stop):
    """Run up to ``cuts.shape[0]`` rounds; return how many ran.

    ``codes`` ``(d, n)`` uint8, ``is_pos`` ``(n,)`` uint8, ``y`` the signs (+-1.0), ``d1``
    D_1, ``weights`` D_1 on entry and D_{t+1} (normalised) on return, ``margin`` F_0 = 0 on
    entry and F_t on return; ``valid`` the ``(d, B - 1)`` cuts leaving rows on both sides,
    ``bin_counts`` ``(d, B)`` rows per bin. The components' functions and params
    (:mod:`boostkit.compiled`): with ``own_width`` > 0 the proposal's ``histogram_of`` (else
    :func:`no_histogram`), which fills the ``(d, B, own_width)`` histogram its search reads,
    every round; the reweighting's ``log_factors_of``, or with ``from_margins``
    its ``margin_weights`` (the other slot :func:`no_factors` or :func:`no_margin_weights`);
    three stopping slots (:func:`never_stop` for unused ones). ``max_growth`` and
    ``refresh_every`` (0: none) are the carried histogram's limits
    (:class:`boostkit.plane.CarriedHistogram`; max_growth 0 sums every histogram over the rows;
    never carried from the margins); ``potential`` whether the reweighting has a potential,
    ``log_potential`` its log before the first round.

    Per round t (row t - 1): ``cuts`` (feature, bin; bin -1 for the constant hypothesis),
    ``sides`` ``(2, 2)`` (negatives' and positives' weight left and right), ``cell_scores``,
    ``values``, ``coefficients``, ``numbers`` (weighted error, training error, and log Z_t, or
    from the margins the log potential after the round: NaN without a potential). ``stop`` gets
    (slot, code) of the rule that stopped the run, (0, 0) if none did, (:data:`NON_FINITE` or
    :data:`NO_WEIGHT`, round) on an error, or (:data:`NEEDS_EXACT`, round) when the weights
    from the margins asked for their exact form (the round counted among those that ran).
    """
    d, n = codes.shape
    n_bins = bin_counts.shape[1]
    hist = np.empty((d, n_bins, 2))
    searched = np.empty((d, n_bins, own_width)) if own_width > 0 else hist
    scores = np.empty((d, n_bins - 1))
    rows = np.empty(n, dtype=np.uintp)
    row_change = np.empty(n)
    row_pos = np.empty(n, dtype=np.uint8)
    table = np.empty(n_bins, dtype=np.uint8)
    log_factors = np.empty((2, 2))
    rows_per_cell = np.empty(2)
    wneg = np.empty(2)
    wpos = np.empty(2)
    kept_factors = np.empty(2)
    # From the margins the fused pass leaves D_t as it is (unit factors) and compacts no row,
    # typed as the factors' pass is (an int64, not the literal -1), so cell_term_pass compiles
    # once.
    unit_factors = np.ones((2, 2))
    no_cell = np.int64(-1)
    scratch = np.empty(n if from_margins or own_width > 0 else 0)
    sums = np.empty(2)
    growth = 1.0  # prod rho_t since the last histogram summed over the rows
    carried = 0  # rounds carried since then
    step = np.inf  # rho_t of last round's term
    carry = False  # whether this round's histogram is carried from last round's
    n_off = 0
    stop[0] = 0
    stop[1] = 0
    for t in range(cuts.shape[0]):
        if own_width > 0:
            histogram_of(codes, is_pos, margin, y, weights, search_params, scratch, searched)
        elif carry:
            # H_{t+1} = (g_O H_t + sum_{j != O} (g_j - g_O) H_j) / Z_t, as the row plane
            carry_class_histogram(codes, rows[:n_off], row_change[:n_off], row_pos[:n_off],
                                  kept_factors, hist)
            growth *= step
            carried += 1
        else:
            class_histogram(codes, weights, is_pos, hist)
            growth = 1.0
            carried = 0
        k = search(searched, valid, scores, sides[t], cell_scores[t], search_params)
        feature, cut = (k // (n_bins - 1), k % (n_bins - 1)) if k >= 0 else (0, -1)
        cuts[t, 0] = feature
        cuts[t, 1] = cut
        for j in range(2):
            wneg[j] = sides[t, 0, j]
            wpos[j] = sides[t, 1, j]
        calibrate(wneg, wpos, cell_scores[t], calibration_params, values[t], coefficients[t])
        if not (np.isfinite(values[t, 0]) and np.isfinite(values[t, 1])):
            stop[0] = NON_FINITE
            stop[1] = t + 1
            return t
        # The cells of the cut, and the rows in each (the constant hypothesis: all in cell 0).
        # Counts summed as integers (exact, in any order), not a float sum through
        # rows_per_cell's memory per bin (0.5 us a round at 255 bins).
        split = cut + 1 if cut >= 0 else n_bins  # bins below it are cell 0
        left_rows = all_rows = 0
        for b in range(n_bins):
            table[b] = b >= split
            count = bin_counts[feature, b]
            all_rows += count
            left_rows += count if b < split else 0
        rows_per_cell[0] = left_rows
        rows_per_cell[1] = all_rows - left_rows
        if from_margins:
            # F_t and the errors in the fused pass (D_t kept), then the rule's own pass over
            # the rows; D_{t+1} divided by its sum, as the per-round path does.
            _, _, training_error, weighted_error = cell_term_pass(
                codes[feature], table, values[t], unit_factors, no_cell, is_pos, d1, weights,
                margin, rows, row_change, row_pos)
            margin_weights(margin, y, d1, weights, scratch, reweighting_params, sums)
            total = sums[0]
            if np.isnan(total):
                numbers[t, 0] = weighted_error
                numbers[t, 1] = training_error
                stop[0] = NEEDS_EXACT
                stop[1] = t + 1
                return t + 1
            if not (total > 0.0 and np.isfinite(total)
                    and (np.isfinite(sums[1]) or not potential)):
                stop[0] = NO_WEIGHT
                stop[1] = t + 1
                return t
            for i in range(n):
                weights[i] /= total
            log_z = sums[1] - log_potential if potential else np.nan
            log_potential = sums[1]
            numbers[t, 2] = log_potential if potential else np.nan
        else:
            log_factors_of(values[t], reweighting_params, log_factors)
            factors, kept, step = carry_factors(log_factors, rows_per_cell)
            # The row plane's rule (RowPlane._may_carry): carry next round's histogram while
            # the drift bound stays within its limits; else no row is compacted (a faster pass).
            carry = (own_width == 0 and np.isfinite(step) and growth * step <= max_growth
                     and (refresh_every == 0 or carried + 1 < refresh_every))
            n_off, total, training_error, weighted_error = cell_term_pass(
                codes[feature], table, values[t], factors, kept if carry else -1, is_pos, d1,
                weights, margin, rows, row_change, row_pos)
            if not (total > 0.0 and np.isfinite(total)):
                stop[0] = NO_WEIGHT
                stop[1] = t + 1
                return t
            scale = 1.0 / total
            for i in range(n):
                weights[i] *= scale
            kept_factors[0] = factors[kept, 0]
            kept_factors[1] = factors[kept, 1]
            # log Z_t = log sum_i D_t(i) g[cell_i, y_i], the factors' common scale put back.
            log_z = (math.log(total) + factor_scale(log_factors, rows_per_cell) if potential
                     else np.nan)
            numbers[t, 2] = log_z
        numbers[t, 0] = weighted_error
        numbers[t, 1] = training_error
        z = math.exp(log_z) if potential else np.nan
        slot = 1
        code = stop0(t + 1, weighted_error, z, training_error, params0)
        if code == 0:
            slot = 2
            code = stop1(t + 1, weighted_error, z, training_error, params1)
        if code == 0:
            slot = 3
            code = stop2(t + 1, weighted_error, z, training_error, params2)
        if code != 0:
            stop[0] = slot
            stop[1] = code
            return t + 1
    return cuts.shape[0]

"""One fused kernel for every margin loss: D_{t+1}(i) proportional to D_1(i) w(y_i F_t(x_i)) and
log sum_i D_1(i) L(y_i F_t(x_i)), from the margins F_t, the labels and D_1.

A margin loss (:class:`boostkit.losses.MarginLoss`) hands the kernels scalar numba functions of the
margin v = y F, which are compiled into their loops:

* ``log_weight(v)`` = log w(v) and ``log_loss(v)`` = log L(v), always. :func:`margin_loss_logs`
  writes them for every example, then :func:`shifted_sums` subtracts the largest of each over the
  examples of positive initial weight before exponentiating (log-sum-exp), so margins of any size
  (+-1e4 and beyond) give a distribution and a finite potential;
* ``weight(v)`` = w(v) and ``loss(v)`` = L(v), optionally: :func:`margin_loss_sums` computes the
  weights and the potential directly, in one pass and without a logarithm or exponential per
  example for the shift. :func:`margin_loss_distribution` takes that result whenever both sums
  lie in [1e-150, 1e150] (every term finite, none that matters subnormal) and falls back to the
  log-space pass otherwise;
* a loss whose weight is its loss (``log_loss is log_weight``, AdaBoost's e^{-v}) needs one
  log-sum-exp only, the weights' normaliser being the potential: :func:`margin_loss_log_weights`
  and :func:`shifted_weights`, which for the exponential loss give the engine's exponential
  weights (:func:`~boostkit.kernels.boosting.exponential_distribution`) bit for bit.

:func:`margin_weights_function` gives a loss's weights as one function of plain arrays, compiled
per loss, which a compiled round batch (:mod:`boostkit.kernels.rounds`) calls once a round.

The loss reaches the kernels as an argument of its own numba type, :class:`MarginLossType`, whose
identity is the loss's ``cache_key`` (its name and a digest of its functions' code and of the
constants they read): numba compiles each kernel once per loss, and ``cache=True`` keeps that
machine code on disk, so a later process loads it (a few microseconds per call to dispatch on the
loss). Editing a loss's functions changes the key, hence a new compilation rather than stale code;
a change to a helper they call is not seen (numba's own caveat for functions calling other files'
functions).

:func:`log1p_unit`, :func:`log_positive` and :func:`softplus` are plain-arithmetic logarithms in
the manner of :func:`~boostkit.kernels.exponential.exp_nonpositive` (the C library's cannot be
vectorised), for writing a loss's functions without giving up the SIMD loop.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
from numba.core import types
from numba.extending import NativeValue, intrinsic, models, overload, register_model, unbox

from .blocks import MIN_THREADED_ROWS
from .boosting import interleaved_partial_sums, interleaved_sum
from .exponential import CONTRACT, exp_nonpositive

__all__ = [
    "MarginLossType",
    "live_max",
    "log1p_unit",
    "log_positive",
    "margin_loss_distribution",
    "margin_loss_log_weights",
    "margin_loss_logs",
    "margin_loss_sums",
    "margin_loss_type",
    "margin_weights_function",
    "shifted_sums",
    "shifted_weights",
    "softplus",
]

# -- vectorisable logarithms ---------------------------------------------------------------------

_LN2_HI = 6.93147180369123816490e-01  # ln 2 in two parts (fdlibm's): k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_SQRT2 = 1.4142135623730951
_EXPONENT_MASK = 0x7FF0000000000000
_ONE_BITS = 0x3FF0000000000000  # the bits of 1.0: biased exponent 1023
# 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...): odd-power coefficients 1/(2j + 1), j = 1..18.
(_A1, _A2, _A3, _A4, _A5, _A6, _A7, _A8, _A9, _A10, _A11, _A12, _A13, _A14, _A15, _A16, _A17,
 _A18) = (1.0 / (2 * j + 1) for j in range(1, 19))


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, inline="always")
def _atanh_series_18(s):
    """2 atanh(s) for |s| <= 1/3 to within an ulp: the remainder s^39/39 is below 1e-19 s."""
    z = s * s
    z2 = z * z
    z4 = z2 * z2
    z8 = z4 * z4
    z16 = z8 * z8
    p = (((_A1 + _A2 * z) + z2 * (_A3 + _A4 * z))
         + z4 * ((_A5 + _A6 * z) + z2 * (_A7 + _A8 * z))
         + z8 * (((_A9 + _A10 * z) + z2 * (_A11 + _A12 * z))
                 + z4 * ((_A13 + _A14 * z) + z2 * (_A15 + _A16 * z)))
         + z16 * (_A17 + _A18 * z))
    return 2.0 * (s + s * (z * p))


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, inline="always")
def log1p_unit(x):
    """log(1 + x) for 0 <= x <= 1, within 2 ulp of ``np.log1p``, in plain arithmetic.

    log(1 + x) = 2 atanh(s) with s = x / (2 + x) in [0, 1/3], summed as a series (Estrin's
    scheme), exact at x = 0 and accurate for the tiniest x (no 1 + x is formed).
    """
    return _atanh_series_18(x / (2.0 + x))


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, inline="always")
def log_positive(x):
    """log(x) for a positive normal x, within 2 ulp of ``np.log``, in plain arithmetic.

    x = 2^k m with m in [sqrt(1/2), sqrt(2)) read from x's bits; log x = k ln 2 + 2 atanh(s),
    s = (m - 1)/(m + 1) in [-0.172, 0.172]. Outside its domain (0, subnormals, inf, NaN) the
    result is meaningless but finite-time (no branch, no exception), so a loop of them vectorises.
    """
    bits = np.float64(x).view(np.int64)
    k = ((bits & _EXPONENT_MASK) >> 52) - 1023
    m = np.int64((bits & ~_EXPONENT_MASK) | _ONE_BITS).view(np.float64)  # in [1, 2)
    high = m > _SQRT2
    m = m * 0.5 if high else m
    kf = np.float64(k) + (1.0 if high else 0.0)
    return (kf * _LN2_HI + _atanh_series_18((m - 1.0) / (m + 1.0))) + kf * _LN2_LO


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, inline="always")
def softplus(x):
    """log(1 + e^x) for any real x without overflow: max(x, 0) + log(1 + e^{-|x|})."""
    return max(x, 0.0) + log1p_unit(exp_nonpositive(-abs(x)))


# -- the loss as a numba type ---------------------------------------------------------------------

#: cache_key -> the MarginLoss of that key, for typing the kernels (filled by margin_loss_type).
_LOSSES: dict = {}


class MarginLossType(types.Type):
    """The numba type of one :class:`~boostkit.losses.MarginLoss`: one type, one compiled kernel.

    Identified by the loss's ``cache_key`` (a string), so it is equal in every process and the
    kernels compiled for it are found in numba's on-disk cache.
    """

    def __init__(self, cache_key: str):
        self.cache_key = cache_key
        super().__init__(name=f"MarginLoss({cache_key})")


register_model(MarginLossType)(models.OpaqueModel)


@unbox(MarginLossType)
def _unbox_margin_loss(typ, obj, c):
    # The loss carries no run-time data: its functions are compiled into the kernel.
    return NativeValue(c.context.get_dummy_value())


def margin_loss_type(loss) -> MarginLossType:
    """The numba type of ``loss`` (a MarginLoss); remembers the loss for typing the kernels."""
    _LOSSES[loss.cache_key] = loss
    return MarginLossType(loss.cache_key)


def _inlined(function):
    """``function`` recompiled to be inlined into the kernel's IR: its body then takes the
    kernel's flags (no ZeroDivisionError branch, FMA contraction), which leaves the loop free to
    vectorise whatever flags the loss's author compiled it with."""
    return numba.njit(inline="always")(getattr(function, "py_func", function))


def _loss_function_of(attribute):
    """A function ``f(loss, v)`` = ``loss.<attribute>(v)``, inlined per loss inside kernels."""

    def call(loss, v):
        return getattr(loss, attribute)(v)

    call.__name__ = call.__qualname__ = f"{attribute}_of"

    @overload(call, inline="always")
    def _call(loss, v):
        if isinstance(loss, MarginLossType):
            function = _inlined(getattr(_LOSSES[loss.cache_key], attribute))
            return lambda loss, v: function(v)
        return None

    return call


log_weight_of = _loss_function_of("log_weight")
log_loss_of = _loss_function_of("log_loss")
weight_of = _loss_function_of("weight")
loss_of = _loss_function_of("loss")


# -- the kernels -----------------------------------------------------------------------------------


#: Examples per chunk of :func:`margin_loss_sums` (a multiple of 4): a chunk's weights and loss
#: terms (32 KB) are summed while they are in the first-level cache.
_CHUNK = 2048


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, error_model="numpy")
def margin_loss_sums(loss, margin, y, d1, out, scratch, start, stop):
    """``(sum_i D_1(i) w(v_i), sum_i D_1(i) L(v_i))`` over examples ``start:stop``, v = y F.

    The fast pass: ``out`` receives D_1(i) w(v_i) (unnormalised), ``scratch`` D_1(i) L(v_i); one
    SIMD loop per chunk of examples when the loss's ``weight`` and ``loss`` are plain
    arithmetic, each chunk summed while it is in the first-level cache: the sums of
    :func:`~boostkit.kernels.boosting.interleaved_sum` over the whole arrays, bit for bit,
    without reading them back from memory (4.7-5.6 -> 4.1-4.7 ms at 1 000 000 examples).
    """
    w0 = w1 = w2 = w3 = 0.0
    l0 = l1 = l2 = l3 = 0.0
    for lo in range(start, stop, _CHUNK):
        hi = min(lo + _CHUNK, stop)
        chunk_margin, chunk_y, chunk_d1 = margin[lo:hi], y[lo:hi], d1[lo:hi]
        chunk_out, chunk_terms = out[lo:hi], scratch[lo:hi]
        for i in range(hi - lo):
            v = chunk_y[i] * chunk_margin[i]
            chunk_out[i] = chunk_d1[i] * weight_of(loss, v)
            chunk_terms[i] = chunk_d1[i] * loss_of(loss, v)
        w0, w1, w2, w3 = interleaved_partial_sums(chunk_out, w0, w1, w2, w3)
        l0, l1, l2, l3 = interleaved_partial_sums(chunk_terms, l0, l1, l2, l3)
    return (w0 + w1) + (w2 + w3), (l0 + l1) + (l2 + l3)


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, error_model="numpy", inline="always")
def live_max(a, d1):
    """max_i a_i over the i with d1_i > 0 (-inf if none), in four interleaved maxima."""
    t0 = t1 = t2 = t3 = -np.inf
    n4 = a.shape[0] - a.shape[0] % 4
    for i in range(0, n4, 4):
        x = a[i] if d1[i] > 0.0 else -np.inf
        t0 = x if x > t0 else t0
        x = a[i + 1] if d1[i + 1] > 0.0 else -np.inf
        t1 = x if x > t1 else t1
        x = a[i + 2] if d1[i + 2] > 0.0 else -np.inf
        t2 = x if x > t2 else t2
        x = a[i + 3] if d1[i + 3] > 0.0 else -np.inf
        t3 = x if x > t3 else t3
    for i in range(n4, a.shape[0]):
        x = a[i] if d1[i] > 0.0 else -np.inf
        t0 = x if x > t0 else t0
    return max(max(t0, t1), max(t2, t3))


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, error_model="numpy")
def margin_loss_logs(loss, margin, y, d1, out, scratch, start, stop):
    """``(max log w, max log L)`` over the examples of ``start:stop`` with positive D_1.

    The first log-space pass: ``out`` receives log w(v_i), ``scratch`` log L(v_i), v = y F.
    """
    margin = margin[start:stop]
    y = y[start:stop]
    out = out[start:stop]
    scratch = scratch[start:stop]
    for i in range(stop - start):
        v = y[i] * margin[i]
        out[i] = log_weight_of(loss, v)
        scratch[i] = log_loss_of(loss, v)
    d1 = d1[start:stop]
    return live_max(out, d1), live_max(scratch, d1)


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT)
def shifted_sums(d1, out, scratch, top_w, top_l, start, stop):
    """The second log-space pass: ``out`` <- D_1 e^{out - top_w}, ``scratch`` <- D_1 e^{scratch
    - top_l}; returns their sums.

    Exponents of examples of positive D_1 are <= 0 after the shift; the others get D_1(i) = 0
    times e^0 (``exp_nonpositive`` takes x > 0, and NaN, as 0 and e^-746), as in the exponential
    weights of :mod:`boostkit.kernels.boosting`.
    """
    d1 = d1[start:stop]
    out = out[start:stop]
    scratch = scratch[start:stop]
    for i in range(stop - start):
        out[i] = d1[i] * exp_nonpositive(out[i] - top_w)
        scratch[i] = d1[i] * exp_nonpositive(scratch[i] - top_l)
    return interleaved_sum(out), interleaved_sum(scratch)


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, error_model="numpy")
def margin_loss_log_weights(loss, margin, y, d1, out, start, stop):
    """max log w over the examples of ``start:stop`` with positive D_1; ``out`` <- log w(y F).

    The first log-space pass of a loss whose weight is its loss (``log_loss is log_weight``, as
    AdaBoost's): the weights' normaliser is then the potential, and nothing else is computed.
    """
    margin = margin[start:stop]
    y = y[start:stop]
    out = out[start:stop]
    for i in range(stop - start):
        out[i] = log_weight_of(loss, y[i] * margin[i])
    return live_max(out, d1[start:stop])


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT)
def shifted_weights(d1, out, top_w, start, stop):
    """``out`` <- D_1 e^{out - top_w} over ``start:stop`` (as :func:`shifted_sums`); its sum."""
    d1 = d1[start:stop]
    out = out[start:stop]
    for i in range(stop - start):
        out[i] = d1[i] * exp_nonpositive(out[i] - top_w)
    return interleaved_sum(out)


@numba.njit(cache=True, nogil=True, parallel=True)
def _sums_parallel(loss, margin, y, d1, out, scratch, n_chunks):
    n = margin.shape[0]
    totals = np.empty((n_chunks, 2))
    for chunk in numba.prange(n_chunks):
        chunk_weight, chunk_loss = margin_loss_sums(
            loss, margin, y, d1, out, scratch, chunk * n // n_chunks, (chunk + 1) * n // n_chunks)
        totals[chunk, 0] = chunk_weight
        totals[chunk, 1] = chunk_loss
    return totals[:, 0].sum(), totals[:, 1].sum()


@numba.njit(cache=True, nogil=True, parallel=True)
def _logs_parallel(loss, margin, y, d1, out, scratch, n_chunks):
    n = margin.shape[0]
    tops = np.empty((n_chunks, 2))
    for chunk in numba.prange(n_chunks):
        chunk_top_w, chunk_top_l = margin_loss_logs(
            loss, margin, y, d1, out, scratch, chunk * n // n_chunks, (chunk + 1) * n // n_chunks)
        tops[chunk, 0] = chunk_top_w
        tops[chunk, 1] = chunk_top_l
    top_w = tops[:, 0].max()
    top_l = tops[:, 1].max()
    if top_w == -np.inf:  # no weight anywhere: nothing to shift (the caller refuses it)
        return top_w, top_l, 0.0, 0.0
    totals = np.empty((n_chunks, 2))
    for chunk in numba.prange(n_chunks):
        chunk_weight, chunk_loss = shifted_sums(
            d1, out, scratch, top_w, top_l, chunk * n // n_chunks, (chunk + 1) * n // n_chunks)
        totals[chunk, 0] = chunk_weight
        totals[chunk, 1] = chunk_loss
    return top_w, top_l, totals[:, 0].sum(), totals[:, 1].sum()


@numba.njit(cache=True, nogil=True)
def _logs_serial(loss, margin, y, d1, out, scratch):
    n = margin.shape[0]
    top_w, top_l = margin_loss_logs(loss, margin, y, d1, out, scratch, 0, n)
    if top_w == -np.inf:  # no weight anywhere: nothing to shift (the caller refuses it)
        return top_w, top_l, 0.0, 0.0
    weight_total, loss_total = shifted_sums(d1, out, scratch, top_w, top_l, 0, n)
    return top_w, top_l, weight_total, loss_total


@numba.njit(cache=True, nogil=True, parallel=True)
def _self_normalising_parallel(loss, margin, y, d1, out, n_chunks):
    n = margin.shape[0]
    tops = np.empty(n_chunks)
    for chunk in numba.prange(n_chunks):
        tops[chunk] = margin_loss_log_weights(loss, margin, y, d1, out, chunk * n // n_chunks,
                                              (chunk + 1) * n // n_chunks)
    top_w = tops.max()
    if top_w == -np.inf:  # no weight anywhere: nothing to shift (the caller refuses it)
        return top_w, 0.0
    totals = np.empty(n_chunks)
    for chunk in numba.prange(n_chunks):
        totals[chunk] = shifted_weights(d1, out, top_w, chunk * n // n_chunks,
                                        (chunk + 1) * n // n_chunks)
    return top_w, totals.sum()


@numba.njit(cache=True, nogil=True)
def _self_normalising_serial(loss, margin, y, d1, out):
    n = margin.shape[0]
    top_w = margin_loss_log_weights(loss, margin, y, d1, out, 0, n)
    if top_w == -np.inf:  # no weight anywhere: nothing to shift (the caller refuses it)
        return top_w, 0.0
    return top_w, shifted_weights(d1, out, top_w, 0, n)


#: The fast pass's result is kept when both of its sums lie in this range (see the module notes).
_SAFE_SUMS = (1e-150, 1e150)


def _check_weights(loss, top_w, weight_total):
    if not (math.isfinite(top_w) and weight_total > 0.0):
        raise ValueError(f"margin loss {loss.name!r}: expected some example of positive initial "
                         f"weight to keep a positive weight w(yF), got none (max log w = {top_w})")


def margin_loss_terms(loss, margin, y, d1, n_jobs: int = 1):
    """``(out, log_scale, weight_total, log_potential)``: a margin loss's unnormalised weights.

    ``out * exp(log_scale)`` are the weights D_1(i) w(y_i F_i), ``weight_total`` the sum of
    ``out`` and ``log_potential`` log sum_i D_1(i) L(y_i F_i) (``-inf`` when no example has
    weight). Nothing is checked: a shard of a distributed fit may hold no weight at all. The
    arguments are those of :func:`margin_loss_distribution`.
    """
    n = margin.shape[0]
    out = np.empty(n)
    # Threads only for blocks worth waking them for; below, the serial kernels (one block). The
    # exponential weights follow the same rule, so the exponential loss stays bit for bit theirs.
    if n // max(n_jobs, 1) < MIN_THREADED_ROWS:
        n_jobs = 1
    if loss.log_loss is loss.log_weight:
        # w = L (AdaBoost's e^{-v}): the weights' log-sum-exp is the potential. Bit for bit the
        # engine's exponential kernel for the exponential loss: the same terms, in the same order.
        if n_jobs > 1:
            top_w, weight_total = _self_normalising_parallel(loss, margin, y, d1, out, n_jobs)
        else:
            top_w, weight_total = _self_normalising_serial(loss, margin, y, d1, out)
        log_potential = top_w + math.log(weight_total) if weight_total > 0.0 else -math.inf
        return out, top_w, weight_total, log_potential
    scratch = np.empty(n)
    low, high = _SAFE_SUMS
    if loss.weight is not None:
        if n_jobs > 1:
            weight_total, loss_total = _sums_parallel(loss, margin, y, d1, out, scratch, n_jobs)
        else:
            weight_total, loss_total = margin_loss_sums(loss, margin, y, d1, out, scratch, 0, n)
        if low <= weight_total <= high and low <= loss_total <= high:
            return out, 0.0, weight_total, math.log(loss_total)
    if n_jobs > 1:
        top_w, top_l, weight_total, loss_total = _logs_parallel(
            loss, margin, y, d1, out, scratch, n_jobs)
    else:
        top_w, top_l, weight_total, loss_total = _logs_serial(loss, margin, y, d1, out, scratch)
    log_potential = top_l + math.log(loss_total) if loss_total > 0.0 else -math.inf
    return out, top_w, weight_total, log_potential


def margin_loss_distribution(loss, margin, y, d1, n_jobs: int = 1):
    """``(weights, log_potential)`` of a margin loss, from the margins: the entry point.

    ``loss`` is a :class:`boostkit.losses.MarginLoss`; ``margin`` (F), ``y`` (+-1) and ``d1``
    (D_1) are float64 arrays of one length (flattened (example, class) pairs included). The
    weights are D_1(i) w(y_i F_i) normalised to sum to 1; ``log_potential`` is
    log sum_i D_1(i) L(y_i F_i). Runs on ``n_jobs`` threads when ``n_jobs > 1``. Raises
    ``ValueError`` naming the loss when no example keeps a positive weight or the potential is not
    a positive finite number.
    """
    out, top_w, weight_total, log_potential = margin_loss_terms(loss, margin, y, d1, n_jobs)
    _check_weights(loss, top_w, weight_total)
    if not math.isfinite(log_potential):
        raise ValueError(f"margin loss {loss.name!r}: expected a positive finite potential "
                         f"sum_i D_1(i) L(y_i F_i), got log potential {log_potential}")
    out /= weight_total
    return out, log_potential


# -- a loss's weights as one function of plain arrays, for compiled round batches ------------------


@intrinsic
def _loss_of_key(typingctx, key):
    """The loss whose ``cache_key`` is the string constant ``key``, as a value of its
    :class:`MarginLossType` (it carries no data): how a function of plain arrays calls the
    kernels compiled for a loss."""
    if not isinstance(key, types.StringLiteral) or key.literal_value not in _LOSSES:
        return None

    def codegen(context, builder, signature, args):
        return context.get_dummy_value()

    return MarginLossType(key.literal_value)(key), codegen


# Each builds ``weights(margin, y, d1, out, scratch, params, sums)`` for the loss of ``key``, as
# :func:`margin_loss_terms` computes it on one thread: ``out`` the unnormalised weights, ``sums``
# (their sum, log potential). ``key`` is a closure constant, so numba compiles one function per
# loss and its disk cache keeps one entry per key (a closure's cells are part of its cache key).

def _direct_weights(key):
    # The fast pass only: where its sums leave their range the sum is NaN, and the round's
    # weights come from margin_loss_distribution, whose log-space pass (~6 s of a cold compile
    # for logitboost's loss) compiles only if a fit ever needs it.
    def weights(margin, y, d1, out, scratch, params, sums):
        loss = _loss_of_key(key)
        n = margin.shape[0]
        weight_total, loss_total = margin_loss_sums(loss, margin, y, d1, out, scratch, 0, n)
        low, high = _SAFE_SUMS
        if low <= weight_total <= high and low <= loss_total <= high:
            sums[0] = weight_total
            sums[1] = math.log(loss_total)
        else:
            sums[0] = sums[1] = np.nan

    return weights


def _log_space_weights(key):
    def weights(margin, y, d1, out, scratch, params, sums):
        _log_space_sums(_loss_of_key(key), margin, y, d1, out, scratch, sums)

    return weights


def _self_normalising_weights(key):
    def weights(margin, y, d1, out, scratch, params, sums):
        top_w, weight_total = _self_normalising_serial(_loss_of_key(key), margin, y, d1, out)
        sums[0] = weight_total
        sums[1] = top_w + math.log(weight_total) if weight_total > 0.0 else -math.inf

    return weights


@numba.njit(cache=True, nogil=True, inline="always")
def _log_space_sums(loss, margin, y, d1, out, scratch, sums):
    top_w, top_l, weight_total, loss_total = _logs_serial(loss, margin, y, d1, out, scratch)
    sums[0] = weight_total
    sums[1] = top_l + math.log(loss_total) if loss_total > 0.0 else -math.inf


_WEIGHT_FORMS = {"direct": _direct_weights, "log-space": _log_space_weights,
                 "self-normalising": _self_normalising_weights}


def margin_weights_function(loss):
    """``loss``'s weights from the margins as a plain Python function of arrays, for numba to
    compile (``boostkit.compiled.compile_form(f, boostkit.compiled.MARGIN_WEIGHTS)``):
    ``weights(margin, y, d1, out, scratch, params, sums)`` writes D_1(i) w(y_i F_i) up to a
    common factor into ``out`` and ``sums`` = (their sum, log sum_i D_1(i) L(y_i F_i)), the pass
    :func:`margin_loss_terms` takes on one thread, so the same numbers (``scratch`` is an array
    of ``out``'s length, ``params`` unused). For a loss with the fast pair (``weight``,
    ``loss``), only the fast pass: where :func:`margin_loss_terms` would take the log-space
    pass, ``sums`` is NaN (call :func:`margin_loss_distribution` for that round). The same
    function for the same loss (compiled once).
    """
    margin_loss_type(loss)  # the kernels are typed from the loss of its key
    if loss.log_loss is loss.log_weight:
        kind = "self-normalising"
    else:
        kind = "log-space" if loss.weight is None else "direct"
    return _weights_function(loss.cache_key, kind)


@functools.cache
def _weights_function(key, kind):
    return _WEIGHT_FORMS[kind](key)

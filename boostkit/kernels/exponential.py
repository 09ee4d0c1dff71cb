"""A vectorisable exponential for the kernels that weight examples by e^{-y F}.

:func:`exp_nonpositive` is e^x for x <= 0, within 1 ulp of ``np.exp``, written in plain
arithmetic that LLVM vectorises across examples (a call to the C library's ``exp`` cannot be), at
about a third of the C library's cost. Every weight of the form D_1(i) e^{e_i - max_j e_j} has a
non-positive exponent, which is what the engine's exponential weights and the plugins' penalised
weights compute.

Kernels that use it may allow LLVM to fuse a multiplication and an addition into one rounding
(:data:`CONTRACT`, ``fastmath={"contract"}`` and nothing else), which takes a fifth off its time.
Their results may then differ in the last bit between a CPU with FMA instructions and one
without (or with ``NUMBA_DISABLE_JIT=1``); on one machine they are the same in every run.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["CONTRACT", "exp_nonpositive"]

#: numba ``fastmath`` flags of the kernels that exponentiate: contraction into FMA only.
CONTRACT = {"contract"}

# exp_nonpositive: e^x = 2^k e^r with k = round(x / ln 2) and |r| <= ln(2) / 2 (Cody & Waite).
_LOG2E = 1.4426950408889634  # 1 / ln 2
_SHIFT = 6755399441055744.0  # 1.5 * 2^52: (z + _SHIFT) - _SHIFT rounds z to an integer, and
_SHIFT_BITS = int(np.float64(_SHIFT).view(np.int64))  # the bits of z + _SHIFT are these + round(z)
_LN2_HI = 6.93147180369123816490e-01  # ln 2 in two parts (fdlibm's): k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_EXP_MIN = -746.0  # e^-746 rounds to 0; clamping there keeps 2^(k + 64) a normal number
_TWO_M64 = 2.0 ** -64
# Taylor coefficients 1/j!, j = 2..13: for |r| <= ln(2)/2 the remainder r^14/14! is below 5e-18
# relative, a twentieth of an ulp.
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = (
    1.0 / math.factorial(j) for j in range(2, 14)
)


@numba.njit(cache=True, nogil=True, fastmath=CONTRACT, inline="always")
def exp_nonpositive(x):
    """e^x for x <= 0 (x > 0 is taken as 0), within 1 ulp of ``np.exp``, subnormals included.

    Plain arithmetic only, so a loop of them vectorises: x = k ln 2 + r with k = round(x / ln 2)
    (``_SHIFT`` does the rounding), e^r by its Taylor polynomial of degree 13 evaluated in
    Estrin's scheme (short dependency chains), and 2^k from the bits of the rounding sum. The
    scaling is by 2^(k + 64), exact, then by 2^-64, which rounds once even where e^x is
    subnormal. e^0 is exactly 1.
    """
    x = 0.0 if x > 0.0 else (x if x > _EXP_MIN else _EXP_MIN)
    t = x * _LOG2E + _SHIFT
    k = t - _SHIFT
    r = (x - k * _LN2_HI) - k * _LN2_LO
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    u = (((_C2 + _C3 * r) + r2 * (_C4 + _C5 * r))
         + r4 * ((_C6 + _C7 * r) + r2 * (_C8 + _C9 * r))
         + r8 * ((_C10 + _C11 * r) + r2 * (_C12 + _C13 * r)))
    # t's bits are _SHIFT_BITS + k; 2^(k + 64) is the double of biased exponent k + 1087.
    scale = np.int64((np.float64(t).view(np.int64) - _SHIFT_BITS + 1087) << 52).view(np.float64)
    return ((1.0 + (r + r2 * u)) * scale) * _TWO_M64

"""Margin losses: a reweighting given by a loss L of the margin v = y F and a weight function w.

A boosting algorithm that minimises sum_i D_1(i) L(y_i F(x_i)) by functional gradient descent
weights example i in proportion to D_1(i) w(y_i F_t(x_i)) with w = -L' (Mason, Baxter, Bartlett &
Frean 2000, AnyBoost, section 3; Friedman 2001, section 4): AdaBoost for L(v) = e^{-v}, and a
reweighting for each other loss. A :class:`MarginLoss` names the pair, written in log space, and
the engine's fused kernel (:mod:`boostkit.kernels.margin_loss`) turns it into the next
distribution and the log of the potential sum_i D_1(i) L(y_i F_t(x_i)), compiled once per loss
with the loss's functions inlined, about as fast as the exponential reweighting. The
``margin-loss`` reweighting (plugin ``boostkit_adaboost``) runs any registered loss by name.

Registered losses (:func:`loss_names`): ``exponential``, ``logistic``, ``madaboost`` and
``logitboost``.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Callable
from types import CellType, FunctionType

import attrs
import numba
import numpy as np
from numba.core.dispatcher import Dispatcher
from numba.extending import typeof_impl

from .components import ShardWeights
from .errors import RegistryError
from .kernels.exponential import exp_nonpositive
from .kernels.margin_loss import (
    log1p_unit,
    log_positive,
    margin_loss_distribution,
    margin_loss_terms,
    margin_loss_type,
    margin_weights_function,
    softplus,
)

__all__ = [
    "MarginLoss",
    "compiled_weights",
    "exp_nonpositive",
    "get_loss",
    "log1p_unit",
    "log_positive",
    "loss_names",
    "margin_loss_distribution",
    "register_loss",
    "shard_weights",
    "softplus",
]


def _numba_function(loss, attribute, function):
    if function is None and attribute.name in ("loss", "weight"):
        return  # the fast pair is optional
    if numba.config.DISABLE_JIT and callable(function):
        return  # without the JIT, @njit returns the plain function
    if not isinstance(function, Dispatcher):
        raise TypeError(
            f"margin loss {loss.name!r}: {attribute.name} must be a numba @njit function of the "
            f"margin (a float), got {function!r}"
        )


def _code_text(code, global_values) -> str:
    consts = tuple(_code_text(c, global_values) if hasattr(c, "co_code") else repr(c)
                   for c in code.co_consts)
    # Numbers and strings a function reads from its module are compiled in as constants.
    names = tuple((name, repr(global_values[name])) if isinstance(
        global_values.get(name), (int, float, str)) else name for name in code.co_names)
    return repr((code.co_code, consts, names))


def _code_digest(function) -> str:
    """A digest of a function's code and of the constants it reads, so that an edited loss gets a
    new kernel rather than a stale one."""
    if function is None:
        return "-"
    python_function = getattr(function, "py_func", function)
    text = _code_text(python_function.__code__, python_function.__globals__)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _python_form(function, forms: dict):
    """``function`` as plain Python, so that calling it compiles nothing: a numba dispatcher's
    Python function (``py_func``), run with the numba functions it reads from its globals and
    its closure replaced by their own plain forms. ``forms`` maps the dispatchers already
    converted to their forms (a function calling itself is converted once)."""
    if not isinstance(function, Dispatcher):
        return function
    known = forms.get(id(function))
    if known is not None:
        return known
    source = function.py_func
    global_values = dict(source.__globals__)
    closure = source.__closure__
    if closure is not None:
        closure = tuple(_python_cell(cell, forms) for cell in closure)
    form = FunctionType(source.__code__, global_values, source.__name__, source.__defaults__,
                        closure)
    form.__kwdefaults__ = source.__kwdefaults__
    forms[id(function)] = form
    for name in source.__code__.co_names:
        if isinstance(global_values.get(name), Dispatcher):
            global_values[name] = _python_form(global_values[name], forms)
    return form


def _python_cell(cell, forms: dict):
    """A closure cell holding the plain form of the numba function in ``cell``, else ``cell``."""
    try:
        value = cell.cell_contents
    except ValueError:  # an empty cell
        return cell
    return CellType(_python_form(value, forms)) if isinstance(value, Dispatcher) else cell


def _value_at(function, v: float, forms: dict):
    """``function(v)`` computed in plain Python (:func:`_python_form`), which compiles nothing.

    Where Python's arithmetic raises and numba's gives a value (``math.log(0.0)`` is -inf in
    numba, a float overflow inf), or the function uses what only numba runs, the compiled
    function gives the value (or its error), as the kernel would.
    """
    try:
        with np.errstate(all="ignore"):
            return _python_form(function, forms)(v)
    except Exception:
        return function(v)


@attrs.frozen
class MarginLoss:
    """A margin loss L(v) and its weight function w(v), v = y F, as numba functions of v.

    Attributes
    ----------
    name:
        The name the ``margin-loss`` reweighting's ``loss`` parameter uses.
    log_loss:
        ``@numba.njit`` function of a float v returning log L(v), L > 0. The potential
        sum_i D_1(i) L(y_i F(x_i)) gives the round records' ``error_bound`` (and ``z``, its factor
        per round), so take L >= 1 where v <= 0 and L(0) = 1 for it to bound the training error
        and start at 1, as prod Z_t does.
    log_weight:
        ``@numba.njit`` function of v returning log w(v), w >= 0 the example's unnormalised
        weight (-inf for 0); usually w = -L' up to a constant factor, which makes the reweighting
        a gradient step on L (AnyBoost).
    loss, weight:
        Optional: L(v) and w(v) themselves, both or neither. When given they make the fast pass
        (no logarithm or exponential per example for the shift), used in every round whose sums
        sum_i D_1(i) w(v_i) and sum_i D_1(i) L(v_i) lie in [1e-150, 1e150]; otherwise that
        round takes the log-space pass, which never overflows. They need not be bounded (an
        overflow to inf only sends the round to the log-space pass), but they must be
        exp(log_loss) and exp(log_weight) up to rounding, which is checked here at a few margins
        in [-30, 30] (``ValueError`` naming the loss otherwise), in plain Python as below. Worth
        giving when the sums usually stay in that range: losses whose weights are bounded
        (logistic, MadaBoost, SavageBoost) run about as fast as the exponential reweighting with
        them, and several times slower in log space only; not e^{-v}, whose weights leave the
        range as the margins grow.
    description, paper:
        What the loss is and where it comes from.

    Every function is inlined into the kernel's loop, so write them in plain arithmetic with
    :func:`exp_nonpositive`, :func:`softplus`, :func:`log1p_unit` and :func:`log_positive` where
    possible: ``math.log`` and ``math.exp`` work, but a loop that calls the C library cannot use
    SIMD instructions. Each function is called once at construction (at v = 0), so a mistake
    shows here rather than inside a fit. These checks run the functions' Python code (numba's
    ``py_func``, with the numba functions they call in Python too), so making a loss compiles
    nothing: its functions are compiled into the kernel at its first fit. A function whose
    Python form raises (``math.log(0.0)``, which numba gives as -inf) is checked compiled
    instead. Where w = L (AdaBoost's e^{-v}), pass the same function as ``log_loss`` and
    ``log_weight``: the weights' normaliser is then the potential, and the kernel does one
    log-sum-exp instead of two.
    """

    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    log_loss: Callable[[float], float] = attrs.field(validator=_numba_function)
    log_weight: Callable[[float], float] = attrs.field(validator=_numba_function)
    loss: Callable[[float], float] | None = attrs.field(
        default=None, kw_only=True, validator=_numba_function)
    weight: Callable[[float], float] | None = attrs.field(
        default=None, kw_only=True, validator=_numba_function)
    description: str = attrs.field(default="", kw_only=True)
    paper: str = attrs.field(default="", kw_only=True)
    cache_key: str = attrs.field(init=False, eq=False, repr=False)

    @cache_key.default
    def _cache_key(self) -> str:
        digests = ":".join(_code_digest(getattr(self, attribute))
                           for attribute in ("log_loss", "log_weight", "loss", "weight"))
        return f"{self.name}:{digests}"

    def __attrs_post_init__(self):
        if (self.loss is None) != (self.weight is None):
            raise TypeError(f"margin loss {self.name!r}: give both loss and weight (the fast "
                            f"pair) or neither")
        forms: dict = {}
        for attribute in ("log_loss", "log_weight", "loss", "weight"):
            function = getattr(self, attribute)
            if function is None:
                continue
            value = _value_at(function, 0.0, forms)
            # numba returns the float a function's branches unify to; its Python form may give
            # an int (``return 0 if v > 0.0 else 1.0``) or a numpy float.
            if (not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_))
                    or math.isnan(value)):
                raise TypeError(f"margin loss {self.name!r}: {attribute}(0.0) must return a "
                                f"float, got {value!r}")
        if self.loss is not None:
            self._check_direct_forms(forms)

    def _check_direct_forms(self, forms: dict) -> None:
        """Refuse direct forms that are not the log-space pair: the weights would then depend on
        which pass the kernel takes in a round. ``forms``: as :func:`_value_at`'s."""
        for direct, logarithm in (("loss", "log_loss"), ("weight", "log_weight")):
            for v in _CHECKED_MARGINS:
                log_value = float(_value_at(getattr(self, logarithm), v, forms))
                if log_value > _LOG_CHECKED_RANGE or log_value < -_LOG_CHECKED_RANGE:
                    continue  # exp(log_value) over- or underflows: nothing to compare
                value = float(_value_at(getattr(self, direct), v, forms))
                expected = math.exp(log_value)
                if not math.isclose(value, expected, rel_tol=_DIRECT_TOLERANCE):
                    raise ValueError(
                        f"margin loss {self.name!r}: {direct}(v) must be exp({logarithm}(v)), the "
                        f"same function without the logarithm, but at v = {v!r} {direct} gives "
                        f"{value!r} and exp({logarithm}) {expected!r}"
                    )


#: Margins at which the direct forms are compared with the log-space pair.
_CHECKED_MARGINS = (-30.0, -5.0, -1.0, -0.25, 0.0, 0.25, 1.0, 5.0, 30.0)
#: exp of a log form beyond this is compared with nothing (it over- or underflows).
_LOG_CHECKED_RANGE = 700.0
#: The two forms are written separately and may round differently; a wrong form is off by more.
_DIRECT_TOLERANCE = 1e-9


@typeof_impl.register(MarginLoss)
def _typeof_margin_loss(loss, context):
    return margin_loss_type(loss)


_REGISTRY: dict[str, MarginLoss] = {}


def shard_weights(loss: MarginLoss, margin, y, initial_weights, n_jobs: int = 1) -> ShardWeights:
    """One shard's part of the distribution D_1(i) w(y_i F_i) of a margin loss, unnormalised.

    The shard-local form of :func:`margin_loss_distribution` for ``boostkit_shard_weights``:
    a :class:`boostkit.ShardWeights` whose weights, once the engine normalises them over every
    shard, are the distribution the whole data would give (up to rounding). A shard without
    weight gets zeros and ``log_potential = -inf``.
    """
    out, log_scale, total, log_potential = margin_loss_terms(loss, margin, y, initial_weights,
                                                             n_jobs)
    if not (total > 0.0 and math.isfinite(log_scale)):  # no example of the shard keeps weight
        out[:] = 0.0
        log_scale = 0.0
    return ShardWeights(out, log_scale, log_potential)


def compiled_weights(loss: MarginLoss):
    """``loss``'s weights from the margins, compiled for a round batch
    (:data:`boostkit.compiled.MARGIN_WEIGHTS`, the ``from_margins`` of a
    :class:`boostkit.compiled.CompiledReweighting`, whose ``exact`` is then
    :func:`margin_loss_distribution`): the numbers of :func:`margin_loss_distribution` on one
    thread, the weights up to their sum, or NaN as their sum where that takes the log-space
    pass (a loss with the fast pair leaves it out of the compiled function). Compiled per loss
    on first use (~2-3 s with the loss's kernels) and cached on disk, as those are."""
    from .compiled import MARGIN_WEIGHTS, compile_form

    return compile_form(margin_weights_function(loss), MARGIN_WEIGHTS)


def register_loss(loss: MarginLoss) -> MarginLoss:
    """Make ``loss`` available by name (to the ``margin-loss`` reweighting); returns it.

    Registering the same loss again is a no-op; another loss under a taken name is refused.
    """
    if not isinstance(loss, MarginLoss):
        raise TypeError(f"register_loss: expected a boostkit.losses.MarginLoss, got {loss!r}")
    known = _REGISTRY.get(loss.name)
    if known is not None and known.cache_key != loss.cache_key:
        raise RegistryError(f"a different margin loss is already registered as {loss.name!r}")
    _REGISTRY[loss.name] = loss
    return loss


def get_loss(name: str) -> MarginLoss:
    """The registered margin loss called ``name``.

    A name not registered yet first makes this process load its plugins: a plugin registers
    its losses when its module is imported, and a fresh process (a Dask worker) looks a loss up
    by name before anything has loaded the plugins.
    """
    if isinstance(name, str) and name not in _REGISTRY:
        from .plugins import get_registry

        get_registry()
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise RegistryError(
            f"unknown margin loss {name!r}; expected one of {', '.join(loss_names())}"
        ) from None


def loss_names() -> list[str]:
    """The names of the registered margin losses, sorted."""
    return sorted(_REGISTRY)


# -- the registered losses ------------------------------------------------------------------------

_LOG_LN2 = math.log(math.log(2.0))
_INV_LN2 = 1.0 / math.log(2.0)


@numba.njit(cache=True, nogil=True, inline="always")
def _log_softplus(x):
    # log(log(1 + e^x)); below x = -36, log softplus(x) = x - e^x/2 + ... rounds to x.
    return x if x < -36.0 else log_positive(softplus(x))


@numba.njit(cache=True, nogil=True)
def _exponential_log(v):
    return -v


register_loss(MarginLoss(
    "exponential", _exponential_log, _exponential_log,
    description="AdaBoost's L(v) = e^{-v}, w = -L' = e^{-v}",
    paper="Freund & Schapire (1997); Mason, Baxter, Bartlett & Frean (2000), AnyBoost",
))


@numba.njit(cache=True, nogil=True)
def _logistic_log_loss(v):
    return _log_softplus(-v) - _LOG_LN2


@numba.njit(cache=True, nogil=True)
def _logistic_log_weight(v):
    return -softplus(v)


@numba.njit(cache=True, nogil=True)
def _logistic_loss(v):
    return (max(-v, 0.0) + log1p_unit(exp_nonpositive(-abs(v)))) * _INV_LN2


@numba.njit(cache=True, nogil=True)
def _logistic_weight(v):
    e = exp_nonpositive(-abs(v))  # 1 / (1 + e^v) = e^{-v} / (1 + e^{-v}) for v > 0
    return (e if v > 0.0 else 1.0) / (1.0 + e)


register_loss(MarginLoss(
    "logistic", _logistic_log_loss, _logistic_log_weight,
    loss=_logistic_loss, weight=_logistic_weight,
    description="L(v) = log2(1 + e^{-v}), w = -L' ln 2 = 1 / (1 + e^{v})",
    paper="Collins, Schapire & Singer (2002), sequential LogLoss update; Friedman, Hastie & "
          "Tibshirani (2000) section 4",
))


@numba.njit(cache=True, nogil=True)
def _madaboost_log_loss(v):
    return -v if v >= 0.0 else log_positive(1.0 - v)


@numba.njit(cache=True, nogil=True)
def _madaboost_log_weight(v):
    return min(-v, 0.0)


@numba.njit(cache=True, nogil=True)
def _madaboost_loss(v):
    return exp_nonpositive(-v) if v >= 0.0 else 1.0 - v


@numba.njit(cache=True, nogil=True)
def _madaboost_weight(v):
    return exp_nonpositive(min(-v, 0.0))


register_loss(MarginLoss(
    "madaboost", _madaboost_log_loss, _madaboost_log_weight,
    loss=_madaboost_loss, weight=_madaboost_weight,
    description="w = min(1, e^{-v}), AdaBoost's weight capped at the initial one; -L' for "
                "L(v) = e^{-v} (v >= 0), 1 - v (v < 0)",
    paper="Domingo & Watanabe (2000), MadaBoost: D_1 min(1, prod_s beta_s^{cons_s}) with "
          "AdaBoost's beta_s, i.e. D_1 min(1, e^{-yF})",
))


@numba.njit(cache=True, nogil=True)
def _logitboost_log_loss(v):
    return _log_softplus(-2.0 * v) - _LOG_LN2


@numba.njit(cache=True, nogil=True)
def _logitboost_log_weight(v):
    a = 2.0 * abs(v)
    return -a - 2.0 * log1p_unit(exp_nonpositive(-a))


@numba.njit(cache=True, nogil=True)
def _logitboost_loss(v):
    return (max(-2.0 * v, 0.0) + log1p_unit(exp_nonpositive(-2.0 * abs(v)))) * _INV_LN2


@numba.njit(cache=True, nogil=True)
def _logitboost_weight(v):
    e = exp_nonpositive(-2.0 * abs(v))
    return e / ((1.0 + e) * (1.0 + e))


register_loss(MarginLoss(
    "logitboost", _logitboost_log_loss, _logitboost_log_weight,
    loss=_logitboost_loss, weight=_logitboost_weight,
    description="LogitBoost's Newton weights p (1 - p), p = 1 / (1 + e^{-2v}), with its "
                "potential log2(1 + e^{-2v}) (the ``logit-weights`` reweighting's)",
    paper="Friedman, Hastie & Tibshirani (2000), Algorithm 3 and eq. 19-20",
))

"""WeightBoost's input-dependent regularizer, as a calibration wrapper (Jin et al. 2003).

The combination of eq. 4 is H_T(x) = H_{T-1}(x) + alpha_T e^{-|beta H_{T-1}(x)|} h_T(x): the
round's term is scaled, example by example, by a factor that shrinks where the ensemble built so
far is already confident. Any coefficient rule can supply the inner term alpha_T h_T(x) (eq. 8's
discrete alpha, per-leaf values, PAV steps, ...); the wrapper multiplies it by the factor and
stores both in a value component, :class:`InputDependentTerm`, that the model evaluates with the
running margin F_{t-1}(x) it is given at fit and at predict time.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

import boostkit
from boostkit.capabilities import DISTRIBUTED

from .kernels import (ABSOLUTE, LOG1P, eq6_log_bound, regularized_term, regularized_values,
                      weighted_factor_sum)
from .validators import finite_non_negative, finite_positive, optional_finite_positive

#: Regularizers g(F) in [0, 1] by name -> kernel kind: ``exponential`` e^{-|beta F|} (eq. 4),
#: ``inverse-polynomial`` (1 + |beta F|)^{-power} (section 5's "inverse of polynomials").
REGULARIZERS = {"exponential": ABSOLUTE, "inverse-polynomial": LOG1P}


def check_regularizer(instance, attribute, value):
    """attrs validator: ``value`` names one of :data:`REGULARIZERS`."""
    if value not in REGULARIZERS:
        raise ValueError(f"{attribute.name} must be one of {sorted(REGULARIZERS)}, got {value!r}")


def _contribution(instance, attribute, value):
    if not isinstance(value, boostkit.Contribution):
        raise TypeError(f"{attribute.name} must be a boostkit.Contribution, got {type(value).__name__}")


def regularizer_kind(regularizer: str) -> int:
    """The kernel ``kind`` of a regularizer name of :data:`REGULARIZERS`."""
    return REGULARIZERS[regularizer]


@attrs.frozen
class InputDependentTerm(boostkit.Contribution):
    """c_t(x) = inner_t(x) * g(F_{t-1}(x)) * scale: one round of eq. 4 (or eq. 10).

    ``inner`` is the contribution the wrapped coefficient rule produced (alpha_t h_t(x) for
    ``constant-alpha``); g is the regularizer (``exponential``: e^{-|beta F|}, eq. 4;
    ``inverse-polynomial``: (1 + |beta F|)^{-power}); ``scale`` is 1/C_T under the section 3.3
    normalisation, else 1.
    """

    name = "input-dependent-term"
    inner: boostkit.Contribution = attrs.field(validator=_contribution)
    beta: float = attrs.field(converter=float, validator=finite_non_negative)
    regularizer: str = attrs.field(default="exponential", validator=check_regularizer)
    power: float = attrs.field(default=1.0, converter=float, validator=finite_positive)
    scale: float = attrs.field(default=1.0, converter=float, validator=finite_positive)

    def values(self, output: boostkit.Candidate, margin: np.ndarray) -> np.ndarray:
        inner = np.ascontiguousarray(self.inner.values(output, margin), dtype=np.float64)
        out = np.empty_like(inner)
        regularized_values(inner, margin, self.beta, regularizer_kind(self.regularizer), self.power,
                           self.scale, out)
        return out


@attrs.frozen
class FactorSum:
    """A reduction (:meth:`boostkit.BoostState.reduce`): sum_i D_1(i) g(F(x_i)) over the rows
    it is given, g the regularizer of ``kind`` (``(1,)`` float64; over all rows, the
    D_1-weighted mean of the factor, D_1 being normalised)."""

    beta: float
    kind: int
    power: float

    def __call__(self, rows) -> np.ndarray:
        return np.array([weighted_factor_sum(rows.margin, rows.initial_weights, self.beta,
                                             self.kind, self.power)])


@attrs.define
class InputDependentRegularizer(boostkit.CalibrationWrapper):
    """Scale the wrapped calibration's term by g(F_{t-1}(x)) (Jin et al. 2003, eq. 4, general form
    eq. 9-12).

    Parameters
    ----------
    beta:
        beta of e^{-|beta H_{T-1}(x)|}; 0.5 in all of the paper's experiments (section 4.1).
        beta = 0 gives g = 1: with ``weightboost-weights`` at beta = 0 as well, the fit is
        AdaBoost's, bit for bit.
    regularizer:
        ``"exponential"`` (eq. 4) or ``"inverse-polynomial"``: g = (1 + |beta F|)^{-power}, one
        of the "slower" regularizers section 5 proposes. Both are bounded in [0, 1]: the general
        form (eq. 9-12) with f_max = 1.
    power:
        The exponent of ``inverse-polynomial`` (ignored by ``exponential``).
    normalization:
        ``None`` (default: eq. 4 as derived) or the target mean m of the factor, the C_T option
        at the end of section 3.3 (the paper's experiments: m = 0.1, see below).
    record_bound:
        Record eq. 6's bound every round (``extra["eq6_bound"]``). Off by default: it costs one
        more pass over the examples with two exponentials each (the C library's), more than the
        factor and the weights together.

    The general form. For a regularizer f(x) in [0, f_max], eq. 10 rewrites
    H_T = sum_t alpha'_t g(x) h_t(x) with g = f / f_max in [0, 1] and alpha'_t = alpha_t f_max,
    and everything derived for e^{-|beta H|} holds for g: the weights of eq. 11 (denominator
    f(x_j), the slip the papers' README notes) and alpha'_T = 1/2 ln((1 - eps_T)/eps_T). This
    component works with g directly, so the coefficient in the round records is alpha'_T; the
    coefficient on f is alpha'_T / f_max. (Eq. 12 prints f_max/2 ln(...); from alpha'_t =
    alpha_t f_max it should read 1/(2 f_max) ln(...); the two agree for f_max = 1, the case of
    both regularizers here, and the fitted terms alpha'_T g(x) h_T(x) are the same either way.)

    The C_T normalisation (section 3.3, stated loosely). The text replaces e^{-|beta H_{T-1}(x)|}
    by e^{-|beta H_{T-1}(x)|} / C_T with C_T = sum_i e^{-|beta H_{T-1}(x_i)|} / (0.1 N). We read
    the sum as running over the N training examples, so C_T = mean_i g(F_{t-1}(x_i)) / 0.1: the
    factor g / C_T has mean 0.1 on the training set in every round (with sample weights, the
    D_1-weighted mean). This is the only reading in which "/0.1N" parses, and it matches the
    stated purpose: however small e^{-|beta H|} becomes as |H| grows, the average factor is
    restored to a fixed level. ``normalization=m`` implements it with m in place of 0.1. Two
    consequences, which is why it is an option and not the default: the first round's term is
    m alpha_1 h_1 (C_1 = 1/m), so beta = 0 no longer gives AdaBoost but AdaBoost shrunk by m;
    and the factor can exceed 1, so eq. 6 no longer bounds the round (its bound is not recorded).

    Records: ``extra["mean_factor"]`` is the D_1-weighted mean of the factor on the training set;
    with ``record_bound``, ``extra["eq6_bound"]`` is eq. 6's bound on sum_i D_1(i)
    e^{-y_i F_t(x_i)} (itself a bound on the training error, eq. 5) computed from F_{t-1} before
    the round is added, when the factor lies in [0, 1] (no normalisation). The coefficients are
    the inner rule's.

    Back-fitting calibrations are refused: the factor of an earlier term depends on the margin
    before that term, which a re-fit would change for every later term too.

    Every data plane (``"distributed"``, without ``record_bound``): where the rows are not in
    this process (a distributed fit, a candidate without rows), the inner rule answers from
    the cells' sums, the mean factor is one reduction over the rows (:class:`FactorSum`), and
    each shard evaluates the term on its own rows and margins
    (:class:`InputDependentTerm` has no per-cell table: its value depends on F_{t-1}(x)).
    """

    name = "input-dependent"
    needs = frozenset({"running-margin"})
    # Each term is scaled by e^{-|beta F_{t-1}(x)|}: its coefficient is no longer 1.
    withdraws = frozenset({"unit-coefficients"})
    shared_params = ("beta", "regularizer", "power")
    beta: float = attrs.field(default=0.5, converter=float, validator=finite_non_negative)
    regularizer: str = attrs.field(default="exponential", validator=check_regularizer)
    power: float = attrs.field(default=1.0, converter=float, validator=finite_positive)
    normalization: float | None = attrs.field(default=None, validator=optional_finite_positive)
    record_bound: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    @property
    def provides(self) -> frozenset[str]:
        return frozenset() if self.distributed_refusal else frozenset({DISTRIBUTED})

    @property
    def distributed_refusal(self) -> str | None:
        """Why this wrapper cannot run on shards, or ``None`` when it can."""
        if self.record_bound:
            return ("with record_bound=True computes eq. 6's bound relative to the largest "
                    "exponent over all rows in one pass over them; record_bound=False (the "
                    "default) distributes")
        return None

    @boostkit.hookimpl(wrapper=True)
    def boostkit_calibrate(self, state, candidate):
        inner = yield
        if inner.replaces is not None:
            raise ValueError(
                f"{self.name} cannot wrap a back-fitting calibration (it re-fits term "
                f"{inner.replaces}): the factor of a term depends on the margin before it"
            )
        term = InputDependentTerm(inner.contribution, self.beta, self.regularizer, self.power)
        if inner.train_values is None:  # a candidate without rows: they are on the shards
            return self._on_shards(state, inner, term)
        d1 = state.data.sample_weight
        # One pass: the factor g(F_{t-1}), the term values * g and the D_1-weighted mean of g.
        factor = np.empty_like(state.margin)
        train_values = np.empty_like(state.margin)
        mean_factor = float(regularized_term(inner.train_values, state.margin, d1, self.beta,
                                             regularizer_kind(self.regularizer), self.power,
                                             factor, train_values))
        extra = {**inner.extra, "mean_factor": mean_factor}
        if self.normalization is None:
            if self.record_bound:
                extra["eq6_bound"] = math.exp(
                    eq6_log_bound(state.margin, state.data.y, d1, factor, inner.train_values)
                )
        else:
            # 1/C_T = m / mean factor (section 3.3); the floor keeps it finite if g underflowed.
            term = attrs.evolve(term, scale=self.normalization / max(mean_factor, 1e-300))
            # values * (factor * scale) is, bit for bit, what term.values gives at predict time.
            train_values = inner.train_values * (factor * term.scale)
        return boostkit.Calibrated(term, train_values, inner.coefficients, extra)

    def _on_shards(self, state, inner, term):
        """The term of a candidate without rows: the mean factor summed over the rows where
        they live; each of them evaluates the term on its rows (``train_values=None``)."""
        mean_factor = float(state.reduce(FactorSum(self.beta, regularizer_kind(self.regularizer),
                                                   self.power))[0])
        if self.normalization is not None:
            term = attrs.evolve(term, scale=self.normalization / max(mean_factor, 1e-300))
        return boostkit.Calibrated(term, None, inner.coefficients,
                                   {**inner.extra, "mean_factor": mean_factor})

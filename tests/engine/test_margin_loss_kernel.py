"""The margin-loss kernels (boostkit.kernels.margin_loss) against a naive numpy reference.

Both passes are checked (the fast pass on L and w, the log-space pass on log L and log w), for
every registered loss, on ordinary margins, margins of +-1e4, non-uniform D_1 with zeros and
flattened (n, C) pairs. Runs with ``NUMBA_DISABLE_JIT=1`` too (small arrays then).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from boostkit.errors import RegistryError
from boostkit.kernels.margin_loss import (
    _logs_serial,
    log1p_unit,
    log_positive,
    margin_loss_distribution,
    margin_loss_logs,
    margin_loss_sums,
    shifted_sums,
    softplus,
)
from boostkit.losses import MarginLoss, compiled_weights, get_loss, loss_names, register_loss

N = 500 if numba.config.DISABLE_JIT else 20_000
LN2 = math.log(2.0)


def _log_softplus(x):
    """log log(1 + e^x) in numpy; below -700 log1p(e^x) underflows, where it is x to the ulp."""
    with np.errstate(divide="ignore"):
        return np.where(x < -700.0, x, np.log(np.logaddexp(0.0, np.maximum(x, -700.0))))


# The naive reference: (log L(v), log w(v)) of each registered loss, written from its definition.
REFERENCE = {
    "exponential": lambda v: (-v, -v),
    "logistic": lambda v: (_log_softplus(-v) - math.log(LN2), -np.logaddexp(0.0, v)),
    "madaboost": lambda v: (np.where(v >= 0.0, -v, np.log1p(np.abs(v))), np.minimum(-v, 0.0)),
    "logitboost": lambda v: (_log_softplus(-2.0 * v) - math.log(LN2),
                             -2.0 * np.abs(v) - 2.0 * np.log1p(np.exp(-2.0 * np.abs(v)))),
}


def reference_distribution(name, margin, y, d1):
    """``(weights, log_potential)`` by log-sum-exp over the examples of positive D_1."""
    log_loss, log_weight = REFERENCE[name](y * margin)
    live = d1 > 0.0
    top_w, top_l = log_weight[live].max(), log_loss[live].max()
    terms = np.where(live, d1 * np.exp(np.where(live, log_weight - top_w, 0.0)), 0.0)
    loss_total = np.sum(d1[live] * np.exp(log_loss[live] - top_l))
    return terms / terms.sum(), float(top_l + np.log(loss_total))


def problem(rng, n, scale):
    margin = scale * rng.standard_normal(n)
    y = rng.choice([-1.0, 1.0], n)
    d1 = rng.exponential(size=n) * (rng.random(n) > 0.1)  # non-uniform, some zeros
    return margin, y, d1 / d1.sum()


def fast_pass(loss, margin, y, d1):
    n = margin.shape[0]
    out, scratch = np.empty(n), np.empty(n)
    weight_total, loss_total = margin_loss_sums(loss, margin, y, d1, out, scratch, 0, n)
    return out / weight_total, math.log(loss_total)


def log_pass(loss, margin, y, d1):
    n = margin.shape[0]
    out, scratch = np.empty(n), np.empty(n)
    top_w, top_l = margin_loss_logs(loss, margin, y, d1, out, scratch, 0, n)
    weight_total, loss_total = shifted_sums(d1, out, scratch, top_w, top_l, 0, n)
    return out / weight_total, top_l + math.log(loss_total)


def assert_matches_reference(name, result, margin, y, d1):
    weights, log_potential = result
    expected, expected_log_potential = reference_distribution(name, margin, y, d1)
    np.testing.assert_allclose(weights, expected, rtol=1e-12, atol=1e-300)
    assert weights[d1 == 0.0].max(initial=0.0) == 0.0
    assert log_potential == pytest.approx(expected_log_potential, rel=1e-12, abs=1e-12)


def test_every_registered_loss_has_a_reference_here():
    assert set(loss_names()) >= set(REFERENCE)


@pytest.mark.parametrize("name", sorted(REFERENCE))
@pytest.mark.parametrize("scale", [0.1, 3.0, 30.0])
def test_both_passes_match_the_reference(name, scale):
    margin, y, d1 = problem(np.random.default_rng(int(scale * 10)), N, scale)
    loss = get_loss(name)
    assert_matches_reference(name, log_pass(loss, margin, y, d1), margin, y, d1)
    if loss.weight is not None:
        assert_matches_reference(name, fast_pass(loss, margin, y, d1), margin, y, d1)
    assert_matches_reference(name, margin_loss_distribution(loss, margin, y, d1), margin, y, d1)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_margins_of_ten_thousand_neither_overflow_nor_vanish(name):
    rng = np.random.default_rng(1)
    margin, y, d1 = problem(rng, N, 1.0)
    margin[: N // 3] = 1e4 * rng.choice([-1.0, 1.0], N // 3)
    weights, log_potential = margin_loss_distribution(get_loss(name), margin, y, d1)
    assert np.isfinite(weights).all() and weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert math.isfinite(log_potential)
    assert_matches_reference(name, (weights, log_potential), margin, y, d1)


@pytest.mark.parametrize("name", sorted(REFERENCE))
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_every_margin_at_plus_or_minus_ten_thousand(name, sign):
    # Every weight e^{-1e4}-small (or e^{1e4}-large): the fast pass's sums leave their range,
    # and the log-space pass still gives D_1 back (equal margins, equal w) and a finite potential.
    rng = np.random.default_rng(2)
    _, y, d1 = problem(rng, N, 1.0)
    margin = sign * 1e4 * y
    weights, log_potential = margin_loss_distribution(get_loss(name), margin, y, d1)
    np.testing.assert_allclose(weights, d1, rtol=1e-12)
    assert_matches_reference(name, (weights, log_potential), margin, y, d1)


def test_pairs_of_an_n_by_c_problem_are_examples_of_one_flat_problem():
    rng = np.random.default_rng(3)
    margin, y, d1 = (a.reshape(-1, 4) for a in problem(rng, 4 * (N // 4), 2.0))
    weights, log_potential = margin_loss_distribution(
        get_loss("logistic"), margin.ravel(), y.ravel(), d1.ravel())
    assert_matches_reference("logistic", (weights, log_potential), margin.ravel(), y.ravel(),
                             d1.ravel())
    # Column by column the weights are the flat problem's, not C separate normalisations.
    per_column = weights.reshape(margin.shape).sum(axis=0)
    assert per_column.sum() == pytest.approx(1.0) and np.ptp(per_column) > 0.0


@pytest.mark.parametrize("name", ["logistic", "exponential"])
def test_threads_give_the_serial_result(name):
    margin, y, d1 = problem(np.random.default_rng(4), N, 3.0)
    loss = get_loss(name)
    serial = margin_loss_distribution(loss, margin, y, d1)
    threaded = margin_loss_distribution(loss, margin, y, d1, n_jobs=3)
    np.testing.assert_allclose(threaded[0], serial[0], rtol=1e-13)
    assert threaded[1] == pytest.approx(serial[1], rel=1e-13, abs=1e-15)


def test_vectorisable_logarithms_are_within_two_ulp_of_numpy():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(0.0, 1.0, 2000), 10.0 ** rng.uniform(-300, 0, 500),
                        [0.0, 5e-324, 1e-17, 0.5, 1.0]])
    ours = np.array([log1p_unit(v) for v in x])
    assert (np.abs(ours - np.log1p(x)) <= 2 * np.spacing(np.log1p(x))).all()
    x = np.concatenate([10.0 ** rng.uniform(-300, 300, 2000), rng.uniform(0.5, 2.0, 500),
                        [1.0, math.sqrt(2.0), 2.2250738585072014e-308, 1.7976931348623157e308]])
    ours = np.array([log_positive(v) for v in x])
    assert (np.abs(ours - np.log(x)) <= 2 * np.spacing(np.abs(np.log(x)))).all()
    x = np.concatenate([rng.uniform(-800, 800, 2000), [-1e4, 0.0, 1e4]])
    ours = np.array([softplus(v) for v in x])
    np.testing.assert_allclose(ours, np.logaddexp(0.0, x), rtol=4e-16, atol=1e-320)


@numba.njit
def _never_weighted(v):
    return -math.inf


@numba.njit
def _unit_log_loss(v):
    return 0.0


@pytest.mark.parametrize("log_loss", [_unit_log_loss, _never_weighted])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_loss_that_weighs_no_example_is_refused_by_name(log_loss, n_jobs):
    loss = MarginLoss("test-nothing", log_loss, _never_weighted)
    margin, y, d1 = problem(np.random.default_rng(6), 50, 1.0)
    with pytest.raises(ValueError, match="margin loss 'test-nothing'.*positive weight"):
        margin_loss_distribution(loss, margin, y, d1, n_jobs=n_jobs)


@numba.njit
def _half_log_weight(v):
    return -0.5 * v


def test_a_loss_is_keyed_by_its_code_and_a_taken_name_is_refused():
    first = MarginLoss("test-half", _half_log_weight, _half_log_weight)
    other = MarginLoss("test-half", _unit_log_loss, _half_log_weight)
    assert first.cache_key != other.cache_key
    register_loss(first)
    register_loss(first)  # the same loss again: no-op
    with pytest.raises(RegistryError, match="already registered as 'test-half'"):
        register_loss(other)
    with pytest.raises(RegistryError, match="unknown margin loss 'nope'; expected one of"):
        get_loss("nope")


def test_functions_that_are_not_numba_or_not_floats_are_refused_at_construction():
    if not numba.config.DISABLE_JIT:
        with pytest.raises(TypeError, match="'test-bad': log_loss must be a numba @njit"):
            MarginLoss("test-bad", lambda v: -v, _half_log_weight)
    with pytest.raises(TypeError, match="give both loss and weight"):
        MarginLoss("test-bad", _half_log_weight, _half_log_weight, loss=_half_log_weight)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compilation only exists with the JIT")
def test_the_kernel_is_compiled_once_per_loss():
    margin, y, d1 = problem(np.random.default_rng(7), 100, 1.0)
    loss = MarginLoss("test-compiled-once", _unit_log_loss, _half_log_weight)
    before = len(_logs_serial.signatures)  # the log-space pass's entry point (compiled or loaded)
    for _ in range(3):
        margin_loss_distribution(loss, margin, y, d1)
    assert len(_logs_serial.signatures) == before + 1


@numba.njit
def _capped_log_weight(v):
    return -2.0 * v if v < 0.0 else -v


@numba.njit
def _capped_log_loss(v):
    return _capped_log_weight(v)  # calls another numba function, which stays uncompiled too


@numba.njit
def _capped_weight(v):
    return math.exp(_capped_log_weight(v))


@numba.njit
def _capped_loss(v):
    return math.exp(_capped_log_loss(v))


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compilation only exists with the JIT")
def test_making_a_loss_checks_its_functions_without_compiling_them():
    loss = MarginLoss("test-uncompiled", _capped_log_loss, _capped_log_weight,
                      loss=_capped_loss, weight=_capped_weight)
    functions = (_capped_log_loss, _capped_log_weight, _capped_loss, _capped_weight)
    assert [function.signatures for function in functions] == [[]] * 4
    margin, y, d1 = problem(np.random.default_rng(8), 100, 1.0)
    weights, log_potential = margin_loss_distribution(loss, margin, y, d1)
    log_weight = np.where(y * margin < 0.0, -2.0 * y * margin, -y * margin)
    np.testing.assert_allclose(weights, d1 * np.exp(log_weight) / np.sum(d1 * np.exp(log_weight)),
                               rtol=1e-12)


@numba.njit
def _hinge_log_weight(v):
    return math.log(max(1.0 - v, 0.0))  # -inf from v = 1 on in numba; Python's math.log raises


@numba.njit
def _hinge_weight(v):
    return max(1.0 - v, 0.0)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="without the JIT, math.log(0.0) raises")
def test_a_function_whose_python_form_raises_is_checked_compiled():
    """math.log(0.0) raises in Python and is -inf in numba (and in the kernel): the check takes
    the compiled value, so the loss is made, and a wrong direct form is still refused."""
    MarginLoss("test-hinge", _hinge_log_weight, _hinge_log_weight,
               loss=_hinge_weight, weight=_hinge_weight)
    with pytest.raises(ValueError, match=r"'test-hinge-wrong': weight\(v\) must be "
                                         r"exp\(log_weight\(v\)\)"):
        MarginLoss("test-hinge-wrong", _hinge_log_weight, _hinge_log_weight,
                   loss=_hinge_weight, weight=_capped_weight)


# -- A loss's weights as one compiled function (compiled round batches) ------------------------

needs_jit = pytest.mark.skipif(numba.config.DISABLE_JIT,
                               reason="compiled forms are compiled numba functions")


def compiled_distribution(loss, margin, y, d1):
    """``(weights, log_potential)`` from :func:`boostkit.losses.compiled_weights`."""
    n = margin.shape[0]
    out, scratch, sums = np.empty(n), np.empty(n), np.empty(2)
    compiled_weights(loss)(margin, y, d1, out, scratch, np.zeros(0), sums)
    if math.isnan(sums[0]):  # the log-space pass, left to margin_loss_distribution
        return None, sums[1]
    assert sums[0] == pytest.approx(out.sum(), rel=1e-12)
    return out / sums[0], sums[1]


@needs_jit
def test_madaboosts_compiled_weights_by_hand():
    # v = -1, 0, 2: w = min(1, e^{-v}) = 1, 1, e^-2; L = 1 - v (v < 0), e^{-v}: 2, 1, e^-2.
    margin, y, d1 = np.array([-1.0, 0.0, 2.0]), np.ones(3), np.full(3, 1 / 3)
    weights, log_potential = compiled_distribution(get_loss("madaboost"), margin, y, d1)
    e2 = math.exp(-2.0)
    np.testing.assert_allclose(weights, np.array([1.0, 1.0, e2]) / (2.0 + e2), rtol=1e-15)
    assert log_potential == pytest.approx(math.log((3.0 + e2) / 3.0), rel=1e-15)


@needs_jit
@pytest.mark.parametrize("name", sorted(REFERENCE))
@pytest.mark.parametrize("scale", [0.1, 3.0, 1e4])
def test_compiled_weights_are_the_distributions_bit_for_bit(name, scale):
    # At scale 1e4 the fast pass's sums may leave their range: a loss with the fast pair then
    # gives NaN (its log-space pass is not compiled in), the exponential loss its one pass.
    margin, y, d1 = problem(np.random.default_rng(5), 2_000, scale)
    loss = get_loss(name)
    weights, log_potential = compiled_distribution(loss, margin, y, d1)
    if weights is None:
        n = margin.shape[0]
        sums = margin_loss_sums(loss, margin, y, d1, np.empty(n), np.empty(n), 0, n)
        assert loss.weight is not None and not all(1e-150 <= s <= 1e150 for s in sums)
        assert math.isnan(log_potential)
        return
    expected, expected_log_potential = margin_loss_distribution(loss, margin, y, d1)
    np.testing.assert_array_equal(weights, expected)
    assert log_potential == expected_log_potential
    assert compiled_weights(loss) is compiled_weights(get_loss(name))  # compiled once


@needs_jit
def test_compiled_weights_of_no_weight_ask_for_the_log_space_pass():
    # margin_loss_distribution takes it (and refuses the weights, naming the loss).
    margin, y, d1 = np.array([1.0, 2.0]), np.ones(2), np.zeros(2)
    out, sums = np.empty(2), np.empty(2)
    compiled_weights(get_loss("logistic"))(margin, y, d1, out, np.empty(2), np.zeros(0), sums)
    assert math.isnan(sums[0]) and math.isnan(sums[1])


@needs_jit
@pytest.mark.parametrize("name", ["madaboost", "logitboost", "logistic"])
def test_compiled_weights_beyond_the_fast_pass_are_nan(name):
    # Every margin 1e4 on the right side: w(v) ~ e^{-1e4} underflows, the fast sums leave their
    # range, and the compiled function leaves the round to margin_loss_distribution.
    _, y, d1 = problem(np.random.default_rng(6), 100, 1.0)
    weights, log_potential = compiled_distribution(get_loss(name), 1e4 * y, y, d1)
    assert weights is None and math.isnan(log_potential)

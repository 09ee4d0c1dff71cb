"""The ``margin-loss`` reweighting and the ``madaboost`` recipe (boostkit.losses through a plugin).

Hand-computed weights and potentials on three examples, AdaBoost's weights back from the
exponential loss, (n, C) pairs, non-uniform D_1, a property test over margins up to +-1e4, and
fits of the recipes on a real dataset.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import boostkit
from boostkit.data import TrainingData
from boostkit.datasets import load
from boostkit.errors import RecipeError
from boostkit.losses import loss_names
from boostkit_adaboost import ExponentialReweighting, MarginLossReweighting

REGISTERED = ("exponential", "logistic", "madaboost", "logitboost")


def _state(margin, y, initial_weights=None) -> boostkit.BoostState:
    """What the engine hands a reweighting after a round: F_t in ``margin``."""
    margin = np.asarray(margin, dtype=np.float64)
    data = TrainingData(np.zeros((margin.shape[0], 1)), np.asarray(y))
    return boostkit.BoostState(
        data=data, weights=data.sample_weight.copy(), margin=margin, n_rounds=1,
        rng=np.random.default_rng(0), hook=None, n_jobs=1,
        initial_weights=None if initial_weights is None else np.asarray(initial_weights, float),
    )


def _reweight(loss, state):
    return MarginLossReweighting(loss=loss).boostkit_reweight(state)


# Three examples, F = (1, -2, 0) and labels (+1, +1, -1): margins v = yF = (1, -2, 0), D_1 = 1/3.
THREE = dict(margin=[1.0, -2.0, 0.0], y=[1, 1, 0])


def test_logistic_weights_and_potential_by_hand():
    # w = 1/(1 + e^v): 1/(1 + e), 1/(1 + e^-2), 1/2;
    # L = log2(1 + e^-v): log2(1 + 1/e), log2(1 + e^2), log2(2) = 1.
    result = _reweight("logistic", _state(**THREE))
    w = np.array([1 / (1 + math.e), 1 / (1 + math.exp(-2.0)), 0.5])
    np.testing.assert_allclose(result.weights, w / w.sum(), rtol=1e-14)
    potential = (math.log2(1 + 1 / math.e) + math.log2(1 + math.e ** 2) + 1.0) / 3
    assert result.log_potential == pytest.approx(math.log(potential), rel=1e-14)


def test_madaboost_weights_are_adaboosts_capped_at_the_initial_weight_by_hand():
    # w = min(1, e^-v): e^-1, 1 (not e^2), 1; L = e^-v for v >= 0, 1 - v below: e^-1, 3, 1.
    result = _reweight("madaboost", _state(**THREE))
    w = np.array([math.exp(-1.0), 1.0, 1.0])
    np.testing.assert_allclose(result.weights, w / w.sum(), rtol=1e-14)
    assert result.log_potential == pytest.approx(math.log((math.exp(-1.0) + 3.0 + 1.0) / 3),
                                                 rel=1e-14)


def test_non_uniform_initial_weights_multiply_the_loss_weights():
    d1 = np.array([0.5, 0.25, 0.25])
    result = _reweight("madaboost", _state(**THREE, initial_weights=d1))
    w = d1 * np.array([math.exp(-1.0), 1.0, 1.0])
    np.testing.assert_allclose(result.weights, w / w.sum(), rtol=1e-14)
    assert result.log_potential == pytest.approx(
        math.log(0.5 * math.exp(-1.0) + 0.25 * 3.0 + 0.25 * 1.0), rel=1e-14)


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_exponential_loss_gives_adaboosts_weights_and_potential_bit_for_bit(n_jobs):
    rng = np.random.default_rng(0)
    d1 = rng.exponential(size=500) * (rng.random(500) > 0.1)
    state = _state(3.0 * rng.standard_normal(500), rng.integers(0, 2, 500), d1 / d1.sum())
    state.n_jobs = n_jobs
    ours = _reweight("exponential", state)
    adaboost = ExponentialReweighting().boostkit_reweight(state)
    np.testing.assert_array_equal(ours.weights, adaboost.weights)
    assert ours.log_potential == adaboost.log_potential


def test_logitboost_loss_gives_the_logit_weights_reweighting():
    from boostkit_additive import LogitWeights

    rng = np.random.default_rng(1)
    state = _state(3.0 * rng.standard_normal(500), rng.integers(0, 2, 500))
    ours = _reweight("logitboost", state)
    logit = LogitWeights().boostkit_reweight(state)
    np.testing.assert_allclose(ours.weights, logit.weights, rtol=1e-13)
    assert ours.log_potential == pytest.approx(logit.log_potential, rel=1e-13)


def test_pairs_of_several_classes_get_weights_of_the_margins_shape():
    # Three classes: y is (n, 3) in {-1, +1}; the weights run over the 12 pairs as one problem.
    margin = np.arange(12.0).reshape(4, 3) / 4 - 1.0
    state = _state(margin, [0, 1, 2, 1])
    result = _reweight("logistic", state)
    assert result.weights.shape == (4, 3)
    v = state.data.y * margin
    w = 1 / (1 + np.exp(v))
    np.testing.assert_allclose(result.weights, w / w.sum(), rtol=1e-13)


def test_an_unknown_loss_is_refused_naming_the_component_and_the_losses():
    with pytest.raises(ValueError, match=r"margin-loss: loss must name a registered margin loss "
                                         r"\(.*logistic.*madaboost.*\), got 'hinge'"):
        MarginLossReweighting(loss="hinge")
    recipe = boostkit.Recipe(name="test-bad-loss", proposal="stump",
                             calibration="constant-alpha",
                             reweighting=("margin-loss", {"loss": "hinge"}))
    with pytest.raises(RecipeError, match="margin-loss"):
        boostkit.Booster(recipe, n_rounds=2).fit(np.eye(4), [0, 1, 0, 1])


def test_the_registered_losses_are_offered():
    assert set(REGISTERED) <= set(loss_names())


@settings(max_examples=60 if not numba.config.DISABLE_JIT else 10, deadline=None)
@given(
    loss=st.sampled_from(REGISTERED),
    margin=arrays(np.float64, st.integers(2, 40),
                  elements=st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)),
    data=st.data(),
)
def test_weights_are_a_finite_distribution_whatever_the_margins(loss, margin, data):
    n = margin.shape[0]
    labels = data.draw(arrays(np.int64, n, elements=st.integers(0, 1)))
    labels[:2] = (0, 1)  # a classification problem has both classes
    d1 = data.draw(arrays(np.float64, n, elements=st.floats(1e-3, 1.0)))
    result = _reweight(loss, _state(margin, labels, d1 / d1.sum()))
    assert np.isfinite(result.weights).all() and (result.weights >= 0).all()
    assert result.weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert math.isfinite(result.log_potential)


@pytest.fixture(scope="module")
def ionosphere():
    data = load("ionosphere")
    return data.X, data.binary_target()


@pytest.mark.parametrize("loss", ["logistic", "madaboost"])
def test_recipes_fit_a_real_dataset_better_than_one_stump(loss, ionosphere):
    X, y = ionosphere
    recipe = "madaboost" if loss == "madaboost" else boostkit.Recipe(
        name="test-logistic-adaboost", proposal="stump", calibration="constant-alpha",
        reweighting=("margin-loss", {"loss": loss}), stopping=("no-edge",))
    model = boostkit.Booster(recipe, n_rounds=40).fit(X, y)
    assert len(model.records) == 40
    assert all(math.isfinite(r.z) and math.isfinite(r.error_bound) for r in model.records)
    assert model.records[-1].training_error < model.records[0].training_error
    # The potential bounds the training error (L >= 1 where yF <= 0).
    assert all(r.training_error <= r.error_bound for r in model.records)


def test_madaboost_never_weighs_an_example_above_its_initial_weight(ionosphere):
    # MadaBoost's cap: unnormalised weights D_1(i) min(1, e^{-yF}) <= D_1(i), so after
    # normalisation D_{t+1}(i) / D_1(i) is at most 1 / sum_j D_1(j) min(1, e^{-y_j F_j}).
    X, y = ionosphere
    model = boostkit.Booster("madaboost", n_rounds=30).fit(X, y)
    state = _state(model.decision_function(X), y)
    weights = _reweight("madaboost", state).weights
    ratio = weights / state.initial_weights
    capped = np.minimum(1.0, np.exp(-state.data.y * state.margin))
    np.testing.assert_allclose(ratio, capped / np.sum(state.initial_weights * capped),
                               rtol=1e-12)
    assert np.ptp(ratio[state.data.y * state.margin <= 0]) < 1e-12  # all at the cap


# -- the direct forms L and w: what they must be ---------------------------------------------------


@numba.njit(cache=True)
def _huber_log_loss(v):
    # L(v) = sqrt(1 + v^2) - v = e^{-asinh v}: 1 at v = 0, about 2|v| as v -> -inf (unbounded).
    return -math.asinh(v)


@numba.njit(cache=True)
def _huber_log_weight(v):
    # w = -L' = L / sqrt(1 + v^2), in (0, 2).
    return -math.asinh(v) - math.log(math.hypot(1.0, v))


@numba.njit(cache=True)
def _huber_loss(v):
    root = math.hypot(1.0, v)
    return 1.0 / (root + v) if v > 0.0 else root - v


@numba.njit(cache=True)
def _huber_weight(v):
    return _huber_loss(v) / math.hypot(1.0, v)


@numba.njit(cache=True)
def _twice_huber_weight(v):
    return 2.0 * _huber_weight(v)


def test_an_unbounded_direct_loss_gives_the_log_space_weights_and_potential():
    """Boundedness is not what the fast pass needs: a loss growing like 2|v| gives, through its
    direct forms, the log-space pair's distribution and potential to rounding, whichever pass
    the kernel takes (the sums in range, or margins of 1e200 whose L overflows)."""
    from boostkit.losses import MarginLoss, margin_loss_distribution

    log_only = MarginLoss("test-huber-log", _huber_log_loss, _huber_log_weight)
    direct = MarginLoss("test-huber-direct", _huber_log_loss, _huber_log_weight,
                        loss=_huber_loss, weight=_huber_weight)
    rng = np.random.default_rng(0)
    y = np.where(rng.random(500) < 0.5, -1.0, 1.0)
    d1 = np.full(500, 1 / 500)
    for scale in (1.0, 1e3, 1e200):
        margin = rng.normal(scale=scale, size=500)
        weights, log_potential = margin_loss_distribution(direct, margin, y, d1)
        expected, expected_log_potential = margin_loss_distribution(log_only, margin, y, d1)
        np.testing.assert_allclose(weights, expected, rtol=1e-13, atol=1e-300)
        assert log_potential == pytest.approx(expected_log_potential, rel=1e-13)


def test_direct_forms_that_are_not_the_log_space_pair_are_refused_naming_the_loss():
    """Direct forms that differ from exp(log form) would make the weights depend on which pass
    the kernel takes: refused when the loss is made, at the first margin where they differ."""
    from boostkit.losses import MarginLoss

    with pytest.raises(ValueError, match=r"margin loss 'test-twice': weight\(v\) must be "
                                         r"exp\(log_weight\(v\)\).* at v = -30\.0"):
        MarginLoss("test-twice", _huber_log_loss, _huber_log_weight,
                   loss=_huber_loss, weight=_twice_huber_weight)
    with pytest.raises(ValueError, match=r"'test-swapped': loss\(v\) must be exp\(log_loss\(v\)\)"):
        MarginLoss("test-swapped", _huber_log_loss, _huber_log_weight,
                   loss=_huber_weight, weight=_huber_loss)

"""Every HookError names the recipe component at fault and says what went wrong: the error it
raised (as ``__cause__`` and in the message), or what it returned and why that is refused."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import boostkit
from boostkit_adaboost.coefficients import ConstantAlpha


@attrs.define
class InfiniteValues(ConstantAlpha):
    """constant-alpha, but one training value overflows in round 2 (as an unguarded exp would)."""

    name = "infinite-values-for-test"

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        answer = super().boostkit_calibrate(state=state, candidate=candidate)
        if state.round != 2:
            return answer
        values = answer.train_values.copy()
        values[3] = np.inf
        return attrs.evolve(answer, train_values=values)


@attrs.define
class WrongProposal(boostkit.Proposal):
    name = "wrong-type-proposal-for-test"
    provides = frozenset({"sign-scores"})

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        return "a stump"


@attrs.define
class WrongWeights(boostkit.Reweighting):
    name = "wrong-type-weights-for-test"

    @boostkit.hookimpl
    def boostkit_reweight(self, state):
        return state.weights  # a bare array, not boostkit.Weights


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    return X, np.where(X[:, 0] + 0.5 * rng.normal(size=80) > 0, 1, -1)


def _fit(recipe, data):
    X, y = data
    return boostkit.Booster(recipe, n_rounds=4).fit(X, y)


def test_non_finite_training_values_name_the_calibration_and_the_values(data, in_process_plugin):
    in_process_plugin("infinite-values-for-test", components=[InfiniteValues])
    with pytest.raises(boostkit.HookError) as caught:
        _fit("adaboost calibration=infinite-values-for-test", data)
    message = str(caught.value)
    assert "'infinite-values-for-test'" in message and "test_hook_error_names" in message
    assert "round 2" in message
    assert "1 of 80" in message and "inf" in message


def test_a_value_of_the_wrong_type_names_the_component_that_returned_it(data,
                                                                        in_process_plugin):
    in_process_plugin("wrong-types-for-test", components=[WrongProposal, WrongWeights])
    with pytest.raises(boostkit.HookError, match=r"returned str.*proposal 'wrong-type-proposal-for-test'"):
        _fit("adaboost proposal=wrong-type-proposal-for-test", data)
    with pytest.raises(boostkit.HookError,
                       match=r"returned ndarray.*reweighting 'wrong-type-weights-for-test'"):
        _fit("adaboost reweighting=wrong-type-weights-for-test", data)


@pytest.mark.parametrize("weights, says, never", [
    # float64 of a wrong shape: the shape is at fault, not the dtype
    (np.full((2, 2, 2), 1 / 8), r"shape \(2, 2, 2\), expected \(n,\) or \(n, C\)", "float"),
    (np.full(8, 1 / 8, dtype=np.float32), r"got dtype float32; compute it in float64", "shape"),
    ([0.5, 0.5], r"must be a numpy array, got list", "shape"),
])
def test_a_weights_message_says_what_is_wrong_and_nothing_else(weights, says, never):
    with pytest.raises(TypeError, match=says) as caught:
        boostkit.Weights(weights)
    assert never not in str(caught.value)


@attrs.define
class WrongCalibrated(ConstantAlpha):
    """constant-alpha (distributed) whose answer is not a boostkit.Calibrated."""

    name = "wrong-type-calibration-for-test"

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        return (0.5,)


def test_a_distributed_fit_names_the_component_that_returned_a_wrong_type(data,
                                                                          in_process_plugin):
    from boostkit import distributed

    in_process_plugin("wrong-calibrated-for-test", components=[WrongCalibrated])
    X, y = data
    booster = boostkit.Booster("adaboost calibration=wrong-type-calibration-for-test",
                               n_rounds=3)
    shards = distributed.LocalShards([(X[:40], y[:40]), (X[40:], y[40:])])
    with pytest.raises(boostkit.HookError,
                       match=r"returned tuple.*calibration 'wrong-type-calibration-for-test'"):
        distributed.fit_on_shards(booster, shards)

"""Per-round user callbacks (``Booster(callbacks=[fn])``) and the ``verbose=k`` round log."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest

import boostkit
from boostkit import ComponentSpec, get_registry
from boostkit.errors import HookError

# Five points on a line: hand-checkable AdaBoost. Round 1 picks x <= 1.5 (one error of five):
# eps = 0.2, Z = 2 sqrt(0.2 * 0.8) = 0.8, alpha = ln 2. Round 2 gives the misclassified x = 3
# weight 1/2 and the others 1/8; x <= 3.5 errs on x = 2 alone: eps = 0.125,
# Z = 2 sqrt(0.125 * 0.875) = 0.661438, prod Z = 0.52915.
X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
Y = np.array([0, 0, 1, 0, 1])
# Validation points on the right side of round 1's stump: log loss log(1 + e^{-2 ln 2}) = 0.223144.
X_VAL, Y_VAL = np.array([[0.5], [2.5], [3.5]]), np.array([0, 1, 1])


def with_validation(**params):
    recipe = get_registry().algorithm("adaboost")
    return attrs.evolve(recipe, stopping=(*recipe.stopping, ComponentSpec("validation", params)))


# -- callbacks ---------------------------------------------------------------------------------


class Order:
    """Observer and stopping-rule stand-in noting when it is called, beside the callbacks."""

    def __init__(self, log):
        self.log = log

    @boostkit.hookimpl
    def boostkit_should_stop(self, state, record):
        self.log.append(("stop", record.round))

    @boostkit.hookimpl
    def boostkit_round_end(self, state, record):
        self.log.append(("observer", record.round))


def test_callbacks_run_after_every_round_in_order_after_stopping_rules_and_observers():
    log = []

    def first(state, record):
        assert state.records[-1] is record and state.round == record.round
        log.append(("first", record.round, record.stop_reason))

    def second(state, record):
        log.append(("second", record.round, record.stop_reason))

    model = boostkit.Booster("adaboost", n_rounds=3, observers=[Order(log)],
                             callbacks=[first, second]).fit(X, Y)
    assert model.n_rounds == 3
    assert log == [
        ("stop", 1), ("observer", 1), ("first", 1, None), ("second", 1, None),
        ("stop", 2), ("observer", 2), ("first", 2, None), ("second", 2, None),
        ("stop", 3), ("observer", 3), ("first", 3, "max-rounds"), ("second", 3, "max-rounds"),
    ]


def test_a_callback_sees_the_validation_data():
    seen = []
    boostkit.Booster("adaboost", n_rounds=2, callbacks=[
        lambda state, record: seen.append(state.validation.margin.copy())]).fit(
        X, Y, eval_set=(X_VAL, Y_VAL))
    np.testing.assert_allclose(seen[0], [-math.log(2), math.log(2), math.log(2)])


def test_a_failing_callback_is_named_in_the_error():
    def stop_at_two(state, record):
        if record.round == 2:
            raise KeyError("no more")

    with pytest.raises(HookError, match=r"callback '.*stop_at_two' \(test_callbacks_and_verbose\) "
                                        r"failed in round 2: KeyError: 'no more'") as info:
        boostkit.Booster("adaboost", n_rounds=5, callbacks=[stop_at_two]).fit(X, Y)
    assert isinstance(info.value.__cause__, KeyError)


@pytest.mark.parametrize("callbacks, message", [
    (print, "callbacks must be a list of functions fn.state, record., got <built-in function"),
    ("print", "callbacks must be a list of functions"),
    ([print, 3], "callbacks must be functions fn.state, record., got 3"),
])
def test_callbacks_must_be_a_list_of_functions(callbacks, message):
    with pytest.raises(ValueError, match=message):
        boostkit.Booster(callbacks=callbacks)


def test_estimator_takes_callbacks_and_stays_clonable():
    from sklearn.base import clone

    from boostkit.sklearn import BoostClassifier

    rounds = []
    estimator = BoostClassifier(n_rounds=3, callbacks=[lambda state, record: rounds.append(
        record.round)])
    clone(estimator).fit(X, Y)
    assert rounds == [1, 2, 3]


# -- verbose -----------------------------------------------------------------------------------

#: verbose's first line: the fit runs its rounds one by one (boostkit.compiled), and why.
ONE_BY_ONE = ("boostkit: rounds run one by one, not in a compiled batch: observer 'RoundLog' "
              "(boostkit.observers) observes every round (verbose)")


def test_verbose_prints_one_line_every_k_rounds_and_the_last(capsys):
    boostkit.Booster("adaboost", n_rounds=5, verbose=2).fit(X, Y)
    out, err = capsys.readouterr()
    assert err == ""
    why, *lines = out.splitlines()
    assert why == ONE_BY_ONE
    assert lines[0] == "[2/5] eps_t=0.125 Z_t=0.661438 prod_Z_t=0.52915 training_error=0.2"
    assert [line.split()[0] for line in lines] == ["[2/5]", "[4/5]", "[5/5]"]
    assert lines[-1].endswith(" stop=max-rounds")


def test_verbose_one_prints_every_round(capsys):
    boostkit.Booster("adaboost", n_rounds=2, verbose=1).fit(X, Y)
    assert capsys.readouterr().out.splitlines() == [
        ONE_BY_ONE,
        "[1/2] eps_t=0.2 Z_t=0.8 prod_Z_t=0.8 training_error=0.2",
        "[2/2] eps_t=0.125 Z_t=0.661438 prod_Z_t=0.52915 training_error=0.2 stop=max-rounds",
    ]


def test_verbose_prints_the_validation_scores(capsys):
    model = boostkit.Booster(with_validation(patience=2), n_rounds=12, verbose=1).fit(
        X, Y, eval_set=(X_VAL, Y_VAL))
    why, *lines = capsys.readouterr().out.splitlines()
    assert why.startswith("boostkit: rounds run one by one, not in a compiled batch: ")
    assert lines[0] == ("[ 1/12] eps_t=0.2 Z_t=0.8 prod_Z_t=0.8 training_error=0.2 "
                        "validation_error=0 validation_log_loss=0.223144")
    assert len(lines) == model.n_rounds == 3 and model.best_round == 1
    assert lines[-1].endswith(" stop=no-validation-improvement")


def test_verbose_zero_is_silent(capsys):
    boostkit.Booster("adaboost", n_rounds=3).fit(X, Y)
    assert capsys.readouterr() == ("", "")


def test_verbose_prints_the_last_round_of_an_exhausted_pool(capsys, in_process_plugin):
    @attrs.define
    class TwoRounds(boostkit.ProposalWrapper):
        """Propose nothing from round 3 on."""

        name = "two-rounds"

        @boostkit.hookimpl(wrapper=True)
        def boostkit_propose(self, state):
            candidate = yield
            return candidate if state.round <= 2 else None

    in_process_plugin("two-rounds-plugin", components=[TwoRounds])
    recipe = attrs.evolve(get_registry().algorithm("adaboost"), proposal_wrappers=("two-rounds",))
    boostkit.Booster(recipe, n_rounds=10, verbose=5).fit(X, Y)
    assert capsys.readouterr().out.splitlines() == [
        "boostkit: rounds run one by one, not in a compiled batch: proposal-wrapper "
        "'two-rounds' has no compiled form (no proposal-wrapper in a batch)",
        "[ 2/10] eps_t=0.125 Z_t=0.661438 prod_Z_t=0.52915 training_error=0.2 stop=pool-exhausted",
    ]


@pytest.mark.parametrize("verbose", [-1, 1.5, True, "2"])
def test_verbose_must_be_a_non_negative_integer(verbose):
    with pytest.raises(ValueError, match="verbose must be 0 .silent. or a positive integer k"):
        boostkit.Booster(verbose=verbose)


def test_estimator_verbose_prints(capsys):
    from boostkit.sklearn import BoostClassifier

    BoostClassifier(n_rounds=2, verbose=2).fit(X, Y)
    assert capsys.readouterr().out.splitlines() == [
        ONE_BY_ONE,
        "[2/2] eps_t=0.125 Z_t=0.661438 prod_Z_t=0.52915 training_error=0.2 stop=max-rounds",
    ]

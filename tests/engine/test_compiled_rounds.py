"""Compiled round batches (boostkit.compiled, boostkit.kernels.rounds): the rounds of a recipe
whose every component has a compiled form run in one call, to the model the round hooks give;
anything that needs Python every round takes the per-round path, and verbose and tracing say
why; a plugin's own compiled form joins the batch; the batch keeps the weights a distribution
and the training error under prod Z_t."""

from __future__ import annotations

import math
from unittest import mock

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boostkit
from boostkit import compiled
from boostkit.compiled import (CALIBRATION, MARGIN_WEIGHTS, CompiledCalibration,
                               CompiledReweighting, compile_form)
from boostkit.datasets import load
from boostkit.errors import HookError
from boostkit.smoothing import n_examples, resolve_smoothing
from boostkit.testing import check_compiled_forms
from boostkit_adaboost import ConstantAlpha, MarginLossReweighting, NoEdge

RECIPES = ("adaboost", "real-adaboost", "gentle-adaboost", "madaboost", "logitboost",
           "multinomial-logitboost")


@pytest.fixture(scope="module")
def real_data():
    out = {}
    for name in ("spambase", "ionosphere", "mushroom"):
        data = load(name, encode="onehot", dropna=True)
        out[name] = (data.X, data.y)
    return out


@pytest.mark.parametrize("histogram", ["exact", "carried"])
@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("dataset", ["spambase", "ionosphere", "mushroom"])
def test_a_batch_gives_the_model_of_the_round_hooks_on_real_data(dataset, recipe, histogram,
                                                                  real_data):
    # mushroom is separable: alpha grows, and the carried histogram is summed anew often.
    X, y = real_data[dataset]
    report = check_compiled_forms(recipe, X, y, n_rounds=60, histogram=histogram)
    assert report.passed, str(report)


def _small_data(seed=0, n=80, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _why(capsys, **options):
    X, y = _small_data()
    boostkit.Booster("adaboost", n_rounds=3, verbose=1, **options).fit(X, y)
    return capsys.readouterr().out.splitlines()[0]


def test_verbose_says_the_rounds_run_one_by_one_and_why(capsys):
    assert _why(capsys) == ("boostkit: rounds run one by one, not in a compiled batch: observer "
                            "'RoundLog' (boostkit.observers) observes every round (verbose)")


def test_verbose_names_the_component_without_a_compiled_form(capsys):
    line = _why(capsys, learning_rate=0.5)
    assert line.endswith("calibration-wrapper 'learning-rate' has no compiled form (no "
                         "calibration-wrapper in a batch)"), line
    line = _why(capsys, calibration="newton-alpha")
    assert line.endswith("calibration 'newton-alpha' has no compiled form "
                         "(boostkit_compiled_form)"), line


def test_tracing_says_why_on_stderr(capsys, monkeypatch):
    monkeypatch.setenv("BOOSTKIT_TRACE", "1")
    X, y = _small_data()
    boostkit.Booster("adaboost", n_rounds=2).fit(X, y)
    err = capsys.readouterr().err
    assert ("boostkit: rounds run one by one, not in a compiled batch: tracing (BOOSTKIT_TRACE) "
            "reports every hook call") in err


@pytest.mark.parametrize("options, why", [
    ({"compiled_rounds": False}, "compiled_rounds=False"),
    ({"callbacks": [lambda state, record: None]}, "1 callback(s) run after every round"),
    ({"n_jobs": 2, "rows": 600_000}, "n_jobs=2: the rounds' kernels run on threads"),
    ({"eval_set": True}, "the fit scores validation data every round"),
    ({"missing": True}, "stump' has no compiled form for this fit"),
    ({"classes": 3, "recipe": "real-adaboost"}, "3 margin columns (a batch fits one)"),
])
def test_what_takes_the_per_round_path(options, why, monkeypatch):
    import numba

    if options.get("n_jobs", 1) > numba.config.NUMBA_NUM_THREADS:
        pytest.skip("needs two numba threads")
    options = dict(options)
    X, y = _small_data(n=options.pop("rows", 80))
    fit_options = {}
    if options.pop("eval_set", False):
        fit_options["eval_set"] = (X, y)
    if options.pop("missing", False):
        X = X.copy()
        X[0, 0] = np.nan
    if options.pop("classes", None):
        y = np.arange(X.shape[0]) % 3
    heard = []
    from boostkit import engine

    say = engine._say_per_round
    monkeypatch.setattr(engine, "_say_per_round",
                        lambda why, components: heard.append(why) or say(why, components))
    recipe = options.pop("recipe", "adaboost")
    boostkit.Booster(recipe, n_rounds=3, **options).fit(X, y, **fit_options)
    assert len(heard) == 1 and why in heard[0], heard


def test_a_batch_calls_the_once_per_fit_hooks(in_process_plugin):
    calls = []

    @attrs.define
    class Watching(NoEdge):
        name = "watching-no-edge"

        @boostkit.hookimpl
        def boostkit_fit_start(self, state):
            calls.append("fit_start")

        @boostkit.hookimpl
        def boostkit_best_round(self, state):
            calls.append(f"best_round {len(state.records)}")
            return 2

        @boostkit.hookimpl
        def boostkit_fit_end(self, state, model):
            calls.append(f"fit_end {model.n_rounds} {float(state.weights.sum()):.12f}")

    in_process_plugin("watching-plugin", components=[Watching])
    X, y = _small_data()
    model = boostkit.Booster(proposal="stump", calibration="constant-alpha",
                             reweighting="exponential", stopping=["watching-no-edge"],
                             n_rounds=5).fit(X, y)
    assert calls == ["fit_start", "best_round 5", "fit_end 5 1.000000000000"]
    assert model.best_round == 2


def test_a_component_answering_every_round_takes_the_per_round_path(in_process_plugin,
                                                                     monkeypatch):
    @attrs.define
    class Observing(NoEdge):
        name = "observing-no-edge"

        @boostkit.hookimpl
        def boostkit_round_end(self, state, record):
            pass

    in_process_plugin("observing-plugin", components=[Observing])
    report = check_compiled_forms(proposal="stump", calibration="constant-alpha",
                                  reweighting="exponential", stopping=["observing-no-edge"],
                                  X=_small_data()[0], y=_small_data()[1], n_rounds=3)
    assert not report.batched
    assert report.why == "stopping 'observing-no-edge' implements boostkit_round_end"


def test_a_subclass_overriding_a_round_hook_does_not_inherit_the_compiled_form(
        in_process_plugin):
    @attrs.define
    class HalfAlpha(ConstantAlpha):
        name = "half-alpha"

        @boostkit.hookimpl
        def boostkit_calibrate(self, state, candidate):
            calibrated = super().boostkit_calibrate(state=state, candidate=candidate)
            return boostkit.Calibrated(boostkit.LinearContribution(
                calibrated.contribution.alpha / 2), calibrated.train_values / 2,
                (calibrated.contribution.alpha / 2,))

    in_process_plugin("half-plugin", components=[HalfAlpha])
    X, y = _small_data()
    report = check_compiled_forms("adaboost", X, y, calibration="half-alpha", n_rounds=3)
    assert report.why == ("calibration 'half-alpha' overrides boostkit_calibrate of the class "
                          "whose compiled form it inherits")


# -- A plugin's own compiled form: docs/hooks.md's clipped alpha -------------------------------

def clipped_alpha_values(wneg, wpos, cell_scores, params, values, coefficients):
    # alpha = 1/2 ln((1 - eps + s) / (eps + s)), clipped to [-clip, clip]; params = (s, clip)
    smoothing, clip = params[0], params[1]
    eps = ((wneg[0] if cell_scores[0] > 0 else wpos[0])
           + (wneg[1] if cell_scores[1] > 0 else wpos[1]))
    alpha = 0.5 * math.log((1.0 - eps + smoothing) / (eps + smoothing))
    alpha = min(max(alpha, -clip), clip)
    values[0] = alpha * cell_scores[0]
    values[1] = alpha * cell_scores[1]
    coefficients[0] = alpha


@attrs.define
class ClippedAlpha(ConstantAlpha):
    """constant-alpha with alpha clipped to [-clip, clip], on both paths."""

    name = "clipped-alpha"
    clip: float = 0.4

    def _alpha(self, state, eps):
        return min(max(super()._alpha(state, eps), -self.clip), self.clip)

    @boostkit.hookimpl
    def boostkit_compiled_form(self, state):
        return CompiledCalibration(
            "error", compile_form(clipped_alpha_values, CALIBRATION), 1,
            lambda values, coefficients: boostkit.LinearContribution(coefficients[0]),
            params=[resolve_smoothing(self.smoothing, n_examples(state.data)), self.clip])


def test_a_plugins_compiled_calibration_joins_the_batch(in_process_plugin, real_data):
    in_process_plugin("clipped-plugin", components=[ClippedAlpha])
    X, y = real_data["ionosphere"]
    report = check_compiled_forms(proposal="stump", calibration="clipped-alpha",
                                  reweighting="exponential", stopping=["no-edge"], X=X, y=y,
                                  n_rounds=40, raise_on_failure=True)
    assert report.batched and report.rounds == (40, 40)
    model = boostkit.Booster(proposal="stump", calibration="clipped-alpha",
                             reweighting="exponential", n_rounds=40).fit(X, y)
    assert max(abs(r.coefficients[0]) for r in model.records) == pytest.approx(0.4)


def test_a_compiled_form_of_the_wrong_kind_or_signature_is_refused(in_process_plugin):
    @attrs.define
    class WrongKind(ConstantAlpha):
        name = "wrong-kind-alpha"

        @boostkit.hookimpl
        def boostkit_compiled_form(self, state):
            return {"criterion": "error"}

    @attrs.define
    class NotCompiled(ConstantAlpha):
        name = "not-compiled-alpha"

        @boostkit.hookimpl
        def boostkit_compiled_form(self, state):
            return CompiledCalibration("error", clipped_alpha_values, 1, None)

    in_process_plugin("wrong-plugin", components=[WrongKind, NotCompiled])
    X, y = _small_data()
    with pytest.raises(HookError, match="calibration 'wrong-kind-alpha' returned dict, "
                                        "expected boostkit.compiled.CompiledCalibration"):
        boostkit.Booster("adaboost", calibration="wrong-kind-alpha", n_rounds=2).fit(X, y)
    with pytest.raises(HookError, match="expected a numba function compiled for"):
        boostkit.Booster("adaboost", calibration="not-compiled-alpha", n_rounds=2).fit(X, y)


# -- Properties, on random small data ----------------------------------------------------------

@st.composite
def problems(draw):
    n = draw(st.integers(8, 60))
    d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), draw(st.integers(0, 2)))  # ties between values
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    weights = rng.random(n) + 0.01 if draw(st.booleans()) else None
    return X, y, weights


def test_constant_features_give_the_constant_stump_on_both_paths():
    X = np.ones((50, 3))
    y = np.random.default_rng(0).integers(0, 2, 50)
    for recipe in RECIPES:
        report = check_compiled_forms(recipe, X, y, n_rounds=5)
        assert report.passed, str(report)


@settings(max_examples=25)
@given(problems(), st.sampled_from(RECIPES), st.sampled_from(["exact", "carried"]))
def test_both_paths_give_the_same_model_on_random_data(problem, recipe, histogram):
    X, y, weights = problem
    batched = boostkit.Booster(recipe, n_rounds=15, histogram=histogram).fit(X, y, weights)
    one_by_one = boostkit.Booster(recipe, n_rounds=15, histogram=histogram,
                                  compiled_rounds=False).fit(X, y, weights)
    assert [r.hypothesis for r in batched.records] == [r.hypothesis for r in one_by_one.records]
    assert batched.stop_reason == one_by_one.stop_reason
    scale = max(abs(c) for r in one_by_one.records for c in r.coefficients) or 1.0
    for a, b in zip(batched.records, one_by_one.records):
        assert np.allclose(a.coefficients, b.coefficients, rtol=0, atol=1e-10 * scale)
    f, g = batched.decision_function(X), one_by_one.decision_function(X)
    assert np.abs(f - g).max() <= 1e-9 * max(np.abs(g).max(), 1e-300)


@settings(max_examples=25)
@given(problems(), st.sampled_from(RECIPES))
def test_the_batch_keeps_a_distribution_and_the_error_under_the_bound(problem, recipe):
    X, y, weights = problem
    states = []
    run = compiled.run_batch_rounds

    def keep(plan, state, *args):
        reason = run(plan, state, *args)
        states.append(state)
        return reason

    with mock.patch.object(boostkit.engine, "run_batch_rounds", keep):
        model = boostkit.Booster(recipe, n_rounds=15, histogram="carried").fit(X, y, weights)
    (state,) = states
    assert state.weights.min() >= 0.0 and abs(state.weights.sum() - 1.0) <= 1e-12
    for record in model.records:
        assert record.training_error <= record.error_bound * (1 + 1e-9)


def infinite_alpha_values(wneg, wpos, cell_scores, params, values, coefficients):
    values[0] = values[1] = coefficients[0] = math.inf


def test_a_compiled_form_giving_infinite_values_stops_the_fit_naming_it(in_process_plugin):
    @attrs.define
    class InfiniteAlpha(ConstantAlpha):
        name = "infinite-alpha"

        @boostkit.hookimpl
        def boostkit_compiled_form(self, state):
            return CompiledCalibration("error", compile_form(infinite_alpha_values, CALIBRATION),
                                       1, lambda values, coefficients: None)

    in_process_plugin("infinite-plugin", components=[InfiniteAlpha])
    X, y = _small_data()
    with pytest.raises(HookError, match=r"round 1 of a compiled batch: cell values that are not "
                                        r"finite from the compiled form of calibration "
                                        r"'infinite-alpha' \(test_compiled_rounds\)"):
        boostkit.Booster("adaboost", calibration="infinite-alpha", n_rounds=3).fit(X, y)


class _FinalWeights:
    """An observer of the fit's end only: the weights after the last round."""

    weights = None

    @boostkit.hookimpl
    def boostkit_fit_end(self, state, model):
        self.weights = state.weights.copy()


class _EveryRound(_FinalWeights):
    @boostkit.hookimpl
    def boostkit_round_end(self, state, record):
        pass


def test_an_observer_of_the_fit_end_only_keeps_the_batch_and_sees_its_final_weights():
    X, y = _small_data()
    batched, one_by_one = _FinalWeights(), _EveryRound()
    with mock.patch("boostkit.engine.run_batch_rounds", wraps=compiled.run_batch_rounds) as run:
        boostkit.Booster("adaboost", n_rounds=5, observers=[batched]).fit(X, y)
        assert run.call_count == 1
        boostkit.Booster("adaboost", n_rounds=5, observers=[one_by_one]).fit(X, y)
        assert run.call_count == 1  # boostkit_round_end: the rounds one by one
    np.testing.assert_allclose(batched.weights, one_by_one.weights, rtol=1e-12)
    assert math.isclose(batched.weights.sum(), 1.0, rel_tol=1e-12)


def test_without_numbas_compiler_the_rounds_run_one_by_one(monkeypatch):
    """NUMBA_DISABLE_JIT (how CI runs the kernels' Python code) leaves the compiled forms plain
    Python functions, with no code to call from a batch: the fit runs its rounds one by one."""
    import numba

    from boostkit import engine

    heard = []
    monkeypatch.setattr(numba.config, "DISABLE_JIT", True)
    monkeypatch.setattr(engine, "_say_per_round", lambda why, components: heard.append(why))
    X, y = _small_data()
    boostkit.Booster("adaboost", n_rounds=3).fit(X, y)
    assert heard == ["numba's compiler is off (NUMBA_DISABLE_JIT)"]


# -- A reweighting from the margins: a margin loss's ------------------------------------------

@pytest.mark.parametrize("recipe", [
    *({"proposal": "stump", "calibration": "constant-alpha",
       "reweighting": ("margin-loss", {"loss": loss})}
      for loss in ("madaboost", "logistic", "logitboost", "exponential")),
    {"algorithm": "logitboost"}])
def test_a_batch_from_the_margins_records_the_rounds_of_the_round_hooks_bit_for_bit(recipe,
                                                                                    real_data):
    # Its weights are the per-round kernel's on one thread, divided by their sum as there, and
    # Z_t, prod Z_t from the same potentials (LogitBoost's stump from the same two-channel
    # histogram and search): every record equal, not only within the tolerance.
    X, y = real_data["ionosphere"]
    options = {**recipe, "n_rounds": 30}
    with mock.patch("boostkit.engine.run_batch_rounds", wraps=compiled.run_batch_rounds) as run:
        batched = boostkit.Booster(**options).fit(X, y)
    assert run.call_count == 1
    one_by_one = boostkit.Booster(compiled_rounds=False, **options).fit(X, y)
    assert batched.records == one_by_one.records
    assert batched.stop_reason == one_by_one.stop_reason
    np.testing.assert_array_equal(batched.decision_function(X), one_by_one.decision_function(X))


def test_rounds_beyond_the_fast_pass_take_the_exact_weights_and_the_batch_goes_on():
    # Separable data, no stopping rule: MadaBoost's weights e^{-yF} fall below 1e-150 by round
    # ~25, and from there every round's weights come from margin_loss_distribution's log-space
    # pass (the batch resumed after each), bit for bit the per-round path's.
    X, y = _small_data(n=60)
    y = np.where(X[:, 0] > 0, 1, -1)
    options = {"proposal": "stump", "calibration": "constant-alpha",
               "reweighting": ("margin-loss", {"loss": "madaboost"}), "n_rounds": 40}
    with mock.patch("boostkit.compiled._exact_round", wraps=compiled._exact_round) as exact:
        batched = boostkit.Booster(**options).fit(X, y)
    assert 0 < exact.call_count < 40
    one_by_one = boostkit.Booster(compiled_rounds=False, **options).fit(X, y)
    assert batched.records == one_by_one.records
    assert batched.n_rounds == 40
    np.testing.assert_array_equal(batched.decision_function(X), one_by_one.decision_function(X))


def test_a_compiled_reweighting_is_factors_or_weights_from_the_margins():
    with pytest.raises(TypeError, match="expected one of log_factors and from_margins, got "
                                        "neither"):
        CompiledReweighting()
    with pytest.raises(TypeError, match="got both"):
        CompiledReweighting(len, from_margins=len)


def no_weights(margin, y, d1, out, scratch, params, sums):
    out[:] = 0.0
    sums[0] = 0.0
    sums[1] = 0.0


def test_weights_from_the_margins_summing_to_zero_stop_the_fit_naming_them(in_process_plugin):
    @attrs.define
    class NoWeights(MarginLossReweighting):
        name = "no-weights"

        @boostkit.hookimpl
        def boostkit_compiled_form(self, state):
            return CompiledReweighting(from_margins=compile_form(no_weights, MARGIN_WEIGHTS))

    in_process_plugin("no-weights-plugin", components=[NoWeights])
    X, y = _small_data()
    with pytest.raises(HookError, match=r"round 1 of a compiled batch: weights summing to 0 or "
                                        r"overflowing under the compiled form of reweighting "
                                        r"'no-weights' \(test_compiled_rounds\)"):
        boostkit.Booster("madaboost", reweighting="no-weights", n_rounds=3).fit(X, y)

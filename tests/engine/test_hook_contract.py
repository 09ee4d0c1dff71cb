"""Mistakes in a component are caught where they are made, naming the component and the fix.

* weights from ``boostkit_reweight`` that are not a distribution (unnormalised, float32, NaN,
  negative, of the wrong shape), checked by the engine as they are handed back;
* a hook-named method without ``@boostkit.hookimpl``, refused at registration;
* data a component cannot take (``nscore`` on negative features), refused before fitting by a
  data requirement; and the stratification reweighting's potential past the float range.
"""

from __future__ import annotations

import warnings

import attrs
import numpy as np
import pytest
import scipy.sparse as sp

import boostkit
from boostkit import Capability, HookError, PluginWarning, RecipeError
from boostkit.capabilities import (
    BINARY_FEATURES,
    COUNT_FEATURES,
    ENGINE_CAPABILITIES,
    NON_NEGATIVE_FEATURES,
    check_data_requirements,
)
from boostkit.datasets import load
from boostkit.errors import PluginLoadError, RegistryError
from boostkit.testing import strict_plugins  # noqa: F401  (a fixture)


def _reweighting(name, make_weights):
    """A reweighting that hands back ``make_weights(state)`` as its weights."""

    @attrs.define
    class Faulty(boostkit.Reweighting):
        @boostkit.hookimpl
        def boostkit_reweight(self, state):
            return boostkit.Weights(make_weights(state))

    Faulty.name = name
    return Faulty


def _fit_with(in_process_plugin, noisy_data, name, make_weights):
    in_process_plugin(name, components=[_reweighting(name, make_weights)])
    X, y = noisy_data
    return boostkit.Booster(proposal="stump", calibration="constant-alpha", reweighting=name,
                            n_rounds=3).fit(X, y)


def _exponential(state):
    w = np.exp(-state.data.y * state.margin) * state.initial_weights
    return w / w.sum()


def test_a_correct_reweighting_passes(in_process_plugin, noisy_data):
    model = _fit_with(in_process_plugin, noisy_data, "plain-weights", _exponential)
    assert model.n_rounds == 3


def test_unnormalised_weights_are_refused_naming_the_reweighting_and_the_fix(
        in_process_plugin, noisy_data):
    with pytest.raises(HookError) as excinfo:
        _fit_with(in_process_plugin, noisy_data, "unnormalised",
                  lambda state: np.exp(-state.data.y * state.margin))
    message = str(excinfo.value)
    assert "boostkit_reweight of reweighting 'unnormalised'" in message
    assert "returned weights summing to" in message and "not a distribution" in message
    assert "Divide them by their sum" in message


def test_weights_off_by_more_than_the_tolerance_are_refused(in_process_plugin, noisy_data):
    with pytest.raises(HookError, match="'nearly' .* summing to 1.00000001"):
        _fit_with(in_process_plugin, noisy_data, "nearly",
                  lambda state: _exponential(state) * (1 + 1e-8))


def test_float32_weights_are_refused_naming_the_component_and_the_dtype(
        in_process_plugin, noisy_data):
    with pytest.raises(HookError) as excinfo:
        _fit_with(in_process_plugin, noisy_data, "single-precision",
                  lambda state: _exponential(state).astype(np.float32))
    message = str(excinfo.value)
    assert "component 'single-precision'" in message
    assert "must be a float64 array" in message and "dtype float32" in message
    assert "compute it in float64" in message


def test_nan_weights_are_refused_with_the_log_space_advice(in_process_plugin, noisy_data):
    def overflowing(state):
        w = _exponential(state)
        w[7] = np.nan
        return w

    with pytest.raises(HookError, match=r"reweighting 'nan-weights' .* returned 1 NaN or "
                       r"infinite weight\(s\) \(the first at flat index 7: nan\).*log space"):
        _fit_with(in_process_plugin, noisy_data, "nan-weights", overflowing)


def test_negative_weights_are_refused(in_process_plugin, noisy_data):
    def negative(state):
        w = _exponential(state)
        w[3] += w[4] + 0.25
        w[4] = -0.25
        return w

    with pytest.raises(HookError, match=r"'negative' .* 1 negative weight\(s\) \(the smallest "
                       r"at flat index 4: -0\.25\)"):
        _fit_with(in_process_plugin, noisy_data, "negative", negative)


def test_weights_of_the_wrong_shape_are_refused(in_process_plugin, noisy_data):
    with pytest.raises(HookError, match=r"'short' .* returned weights of shape \(199,\), "
                       r"expected \(200,\)"):
        _fit_with(in_process_plugin, noisy_data, "short", lambda state: np.full(199, 1 / 199))


def test_a_nan_potential_is_refused(in_process_plugin, noisy_data):
    @attrs.define
    class NanPotential(boostkit.Reweighting):
        name = "nan-potential"

        @boostkit.hookimpl
        def boostkit_reweight(self, state):
            return boostkit.Weights(_exponential(state), float("nan"))

    in_process_plugin("nan-potential", components=[NanPotential])
    X, y = noisy_data
    with pytest.raises(HookError, match="reweighting 'nan-potential' .* log_potential NaN"):
        boostkit.Booster(proposal="stump", calibration="constant-alpha",
                         reweighting="nan-potential", n_rounds=2).fit(X, y)


# -- hook-named methods without the marker --------------------------------------------------------

@attrs.define
class _UnmarkedStopping(boostkit.Stopping):
    name = "unmarked-stopping"

    def boostkit_should_stop(self, state, record):  # the marker is missing
        return "never called"


@attrs.define
class _MisspelledStopping(boostkit.Stopping):
    name = "misspelled-stopping"

    def boostkit_should_stopp(self, state, record):
        return "never called"


@pytest.mark.usefixtures("strict_plugins")
def test_a_component_with_an_unmarked_hook_method_is_refused_at_registration(in_process_plugin):
    in_process_plugin("unmarked", components=[_UnmarkedStopping])
    with pytest.raises(RegistryError) as excinfo:
        boostkit.get_registry()
    message = str(excinfo.value)
    assert "component 'unmarked-stopping'" in message and "_UnmarkedStopping" in message
    assert "boostkit_should_stop() without the @boostkit.hookimpl marker" in message
    assert "decorate it with @boostkit.hookimpl" in message


@pytest.mark.usefixtures("strict_plugins")
def test_a_misspelled_unmarked_hook_is_refused_with_both_fixes(in_process_plugin):
    in_process_plugin("misspelled", components=[_MisspelledStopping])
    with pytest.raises(RegistryError, match="'boostkit_should_stopp' is not a hook: rename or "
                       "mark"):
        boostkit.get_registry()


def test_outside_strict_mode_the_plugin_is_left_out_with_a_warning(in_process_plugin):
    in_process_plugin("unmarked-warn", components=[_UnmarkedStopping])
    with pytest.warns(PluginWarning, match="(?s)left out plugin 'unmarked-warn'.*"
                      "boostkit_should_stop\\(\\) without the @boostkit.hookimpl marker"):
        registry = boostkit.get_registry()
    assert "unmarked-stopping" not in registry.components()
    assert "stump" in registry.components()  # every other plugin works


@pytest.mark.usefixtures("strict_plugins")
def test_a_plugin_with_an_unmarked_discovery_function_is_refused(in_process_plugin):
    def boostkit_register_components(registry):  # the marker is missing
        pass

    in_process_plugin("unmarked-discovery",
                      boostkit_register_components=boostkit_register_components)
    with pytest.raises(PluginLoadError, match="in-process plugin 'unmarked-discovery' defines "
                       r"boostkit_register_components\(\) without the @boostkit.hookimpl marker"):
        boostkit.get_registry()


def test_an_observer_with_an_unmarked_hook_method_is_refused(noisy_data):
    class Progress:
        def boostkit_round_end(self, state, record):
            pass

    X, y = noisy_data
    with pytest.raises(RecipeError, match=r"observer .*Progress.* boostkit_round_end\(\) "
                       "without the @boostkit.hookimpl marker.*decorate it"):
        boostkit.Booster("adaboost", n_rounds=2, observers=[Progress()]).fit(X, y)


# -- data requirements ----------------------------------------------------------------------------

def test_nscore_on_negative_features_is_refused_naming_the_component_and_the_column():
    data = load("ionosphere")
    with pytest.raises(RecipeError) as excinfo:
        boostkit.Booster("proposal=nscore calibration=pav reweighting=exponential").fit(
            data.X, data.y)
    message = str(excinfo.value)
    row, column = np.argwhere(data.X < 0)[0]  # the first negative value, row by row
    assert "proposal 'nscore' needs non-negative features" in message
    assert f"column {column} holds {float(data.X[row, column])!r} (row {row})" in message
    assert "transform that column, or use a proposal that does not need" in message


def test_nscore_fits_the_same_data_made_non_negative():
    data = load("ionosphere")
    model = boostkit.Booster("proposal=nscore calibration=pav reweighting=exponential",
                             n_rounds=5).fit(data.X - data.X.min(axis=0), data.y)
    assert np.isfinite(model.decision_function(data.X - data.X.min(axis=0))).all()


KNOWN = {c.name: c for c in ENGINE_CAPABILITIES}


@attrs.define
class _Needs:
    name: str
    needs: frozenset


@pytest.mark.parametrize("requirement, X, where", [
    (NON_NEGATIVE_FEATURES, np.array([[0.0, 1.0], [2.0, -3.0]]), "column 1 holds -3.0 (row 1)"),
    (COUNT_FEATURES, np.array([[0.0, 1.0], [2.5, 3.0]]), "column 0 holds 2.5 (row 1)"),
    (COUNT_FEATURES, np.array([[0.0, -1.0]]), "column 1 holds -1.0 (row 0)"),
    (BINARY_FEATURES, np.array([[0.0, 1.0], [1.0, 2.0]]), "column 1 holds 2.0 (row 1)"),
    (BINARY_FEATURES, sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 2.0]])),
     "column 1 holds 2.0 (row 1)"),
    (NON_NEGATIVE_FEATURES, sp.csr_matrix(np.array([[0.0, 1.0], [-2.0, 0.0]])),
     "column 0 holds -2.0 (row 1)"),
])
def test_each_data_requirement_names_the_first_value_that_fails_it(requirement, X, where):
    components = [("proposal", _Needs("picky-reader", frozenset({requirement})))]
    with pytest.raises(RecipeError, match=f"proposal 'picky-reader' needs .*{requirement!r}"):
        check_data_requirements("r", components, X, KNOWN)
    with pytest.raises(RecipeError) as excinfo:
        check_data_requirements("r", components, X, KNOWN)
    assert where in str(excinfo.value)


@pytest.mark.parametrize("requirement, X", [
    (NON_NEGATIVE_FEATURES, np.array([[0.0, 1.5], [np.nan, 3.0]])),  # NaN is missing, not < 0
    (COUNT_FEATURES, np.array([[0.0, 1.0], [7.0, 3.0]])),
    (BINARY_FEATURES, sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))),
])
def test_data_that_meet_the_requirement_pass(requirement, X):
    check_data_requirements("r", [("proposal", _Needs("p", frozenset({requirement})))], X, KNOWN)


def test_a_requirement_failed_by_implicit_zeros_names_one():
    positive = Capability("positive-features", "positive features", "data",
                          accepts=lambda values: values > 0)
    X = sp.csr_matrix(np.array([[1.0, 2.0], [3.0, 0.0]]))
    with pytest.raises(RecipeError, match=r"column 1 holds 0\.0 \(row 1\)"):
        check_data_requirements("r", [("proposal", _Needs("p", frozenset({"positive-features"})))],
                                X, {**KNOWN, "positive-features": positive})


def test_a_data_requirement_needs_its_test_and_only_it_has_one():
    with pytest.raises(ValueError, match="a data requirement .* needs accepts"):
        Capability("odd-features", "odd features", "data")
    with pytest.raises(ValueError, match="needs accepts"):
        Capability("odd-scores", "odd scores", "proposal", accepts=lambda values: values > 0)


def test_a_data_requirement_is_not_asked_of_the_other_components():
    # The recipe check leaves data requirements to the data: nscore's recipe is accepted.
    boostkit.get_registry().instantiate(
        boostkit.get_registry().resolve("proposal=nscore calibration=pav reweighting=exponential"))


# -- potentials past the float range ----------------------------------------------------------------

def test_stratification_records_a_potential_beyond_float_range_without_overflow():
    data = load("spambase")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = boostkit.Booster(
            "proposal=cmass calibration=unit-coefficient reweighting=stratification",
            n_rounds=100, random_state=0).fit(data.X, data.binary_target())
    record = model.records[0]
    assert record.error_bound == np.inf and record.extra["total_weight"] == np.inf
    assert record.extra["auc_bound"] == -np.inf
    assert not any(isinstance(v, float) and np.isnan(v) for v in record.extra.values())
    assert np.isfinite(model.decision_function(data.X)).all()


# -- capabilities read from the class -------------------------------------------------------------

def test_capabilities_are_readable_from_the_class():
    registry = boostkit.get_registry()
    stump = registry.component("stump").capabilities()
    assert not stump.parametric and {"sign-scores", "two-cells"} <= stump.provides
    nscore = registry.component("nscore").capabilities()
    assert nscore.needs == {NON_NEGATIVE_FEATURES} and not nscore.parametric
    pav = registry.component("pav")
    assert pav.capabilities().parametric
    assert "running-margin" in pav.capabilities().provides
    assert "running-margin" not in pav.capabilities(backfit=True).provides
    assert "scoring-functions" in pav.capabilities(backfit=True).needs
    for name, cls in registry.components().items():
        if cls.role in ("hypothesis", "contribution"):
            continue
        try:
            instance = cls()
        except (TypeError, ValueError):
            continue
        caps = cls.capabilities()
        assert (caps.needs, caps.provides) == (frozenset(instance.needs),
                                               frozenset(instance.provides)), name


# -- the partition loss adds up over cells ---------------------------------------------------------

def _accepted_with_trees(registry, calibration: str) -> bool:
    for reweighting in registry.components("reweighting"):
        try:
            registry.instantiate(boostkit.Recipe(name="t", proposal="tree", calibration=calibration,
                                                 reweighting=reweighting))
            return True
        except RecipeError:
            continue
    return False


def _partition_losses():
    """The calibrations that score partitions and that the checks let trees use."""
    registry = boostkit.get_registry()
    out = []
    for name, cls in registry.components("calibration").items():
        if hasattr(cls, "boostkit_partition_loss") and _accepted_with_trees(registry, name):
            out.append(pytest.param(cls(), id=name))
    return out


@pytest.mark.parametrize("calibration", _partition_losses())
@pytest.mark.parametrize("n_columns", [1, 3])
def test_every_partition_loss_adds_up_over_cells(calibration, n_columns):
    import inspect

    rng = np.random.default_rng(0)
    shape = (6, 4) if n_columns == 1 else (6, 4, n_columns)
    wpos, wneg = rng.random(shape) / 10, rng.random(shape) / 10
    wpos[0, 1] = 0.0  # a pure cell
    takes_columns = "n_columns" in inspect.signature(calibration.boostkit_partition_loss).parameters
    if n_columns > 1 and not takes_columns:
        pytest.skip("a binary-only calibration")

    def loss(p, n):
        kwargs = {"n_columns": n_columns} if takes_columns else {}
        return calibration.boostkit_partition_loss(wpos=p, wneg=n, **kwargs)

    whole = loss(wpos, wneg)
    cell_by_cell = sum(loss(wpos[:, [j]], wneg[:, [j]]) for j in range(4))
    np.testing.assert_allclose(whole, cell_by_cell, rtol=1e-12, atol=1e-15)


# -- a named partition criterion is the partition loss ---------------------------------------------

def _named_criteria():
    """The registered calibrations that name their partition loss."""
    registry = boostkit.get_registry()
    return [pytest.param(cls(), id=name)
            for name, cls in registry.components("calibration").items()
            if hasattr(cls, "boostkit_partition_criterion")]


@pytest.mark.parametrize("calibration", _named_criteria())
def test_a_named_criterion_gives_the_partition_loss_bit_for_bit(calibration):
    import inspect

    from boostkit.criteria import CRITERIA

    rng = np.random.default_rng(1)
    wpos, wneg = rng.random((5, 7, 2)), rng.random((5, 7, 2))
    wpos[0, 0, 0] = wneg[1, 2, 1] = 0.0
    named = calibration.boostkit_partition_criterion(
        **({"n_columns": 1} if "n_columns" in inspect.signature(
            calibration.boostkit_partition_criterion).parameters else {}))
    takes_columns = "n_columns" in inspect.signature(calibration.boostkit_partition_loss).parameters
    answered = calibration.boostkit_partition_loss(
        wpos=wpos, wneg=wneg, **({"n_columns": 1} if takes_columns else {}))
    np.testing.assert_array_equal(CRITERIA[named](wpos, wneg), answered)


def _partition_components(names_criterion, computes_loss):
    """A calibration wrapper answering the partition hooks as asked (constant-alpha inside)."""

    class Partitions(boostkit.CalibrationWrapper):
        name = "test-partitions"

        @boostkit.hookimpl(wrapper=True)
        def boostkit_calibrate(self, state, candidate):
            return (yield)

    if names_criterion:
        Partitions.boostkit_partition_criterion = boostkit.hookimpl(lambda self: "z")
    if computes_loss:
        Partitions.boostkit_partition_loss = boostkit.hookimpl(
            lambda self, wpos, wneg: boostkit.criteria.z_loss(wpos, wneg))
    return attrs.define(Partitions)


@pytest.mark.parametrize("names_criterion, computes_loss", [(True, False), (False, True)])
def test_a_recipe_where_two_components_answer_the_partition_hooks_is_refused(
        in_process_plugin, noisy_data, names_criterion, computes_loss):
    in_process_plugin("test-partitions",
                      components=[_partition_components(names_criterion, computes_loss)])
    X, y = noisy_data
    with pytest.raises(RecipeError, match="boostkit_partition_criterion is answered by"):
        boostkit.Booster(boostkit.Recipe(
            name="two-partition-answers", proposal="stump", calibration="constant-alpha",
            calibration_wrappers=("test-partitions",), reweighting="exponential"),
            n_rounds=2).fit(X, y)


def test_a_criterion_that_is_not_one_of_the_criteria_is_refused(in_process_plugin, noisy_data):
    @attrs.define
    class Misnamed(boostkit.Calibration):
        name = "test-misnamed-criterion"
        needs = frozenset({"sign-scores"})

        @boostkit.hookimpl
        def boostkit_partition_criterion(self):
            return "accuracy"

        @boostkit.hookimpl
        def boostkit_partition_loss(self, wpos, wneg):
            return boostkit.criteria.weighted_error(wpos, wneg)

        @boostkit.hookimpl
        def boostkit_calibrate(self, state, candidate):
            return boostkit.Calibrated(boostkit.LinearContribution(0.1), 0.1 * candidate.scores,
                                       (0.1,))

    in_process_plugin("test-misnamed-criterion", components=[Misnamed])
    X, y = noisy_data
    with pytest.raises(HookError, match="boostkit_partition_criterion returned 'accuracy'"):
        boostkit.Booster(proposal="stump", calibration="test-misnamed-criterion",
                         reweighting="exponential", n_rounds=2).fit(X, y)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_contributions_that_are_not_finite_stop_the_fit_naming_the_calibration(
        in_process_plugin, noisy_data, bad):
    # Counted in the pass that adds them to the margins, not in a pass of their own.
    @attrs.define
    class NotFinite(boostkit.Calibration):
        name = "not-finite"

        @boostkit.hookimpl
        def boostkit_calibrate(self, state, candidate):
            values = np.where(candidate.scores > 0, bad, -0.5)
            return boostkit.Calibrated(boostkit.LinearContribution(0.5), values, (0.5,))

    in_process_plugin("not-finite", components=[NotFinite])
    X, y = noisy_data
    with pytest.raises(HookError, match="boostkit_calibrate returned training contributions "
                                        "containing NaN or infinite values"):
        boostkit.Booster(proposal=("stump", {"criterion": "error"}), calibration="not-finite",
                         reweighting="exponential", n_rounds=3).fit(X, y)

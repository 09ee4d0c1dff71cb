"""The registry (names -> component classes, refusing clashes) and recipes: checked before any
data is touched, applied through one round-level plugin manager per fit, wrappers in recipe order
(DESIGN.md, "Two levels of hooks")."""

from __future__ import annotations

import json
import math

import attrs
import numpy as np
import pytest

import boostkit
from boostkit.errors import HookError, RecipeError, RegistryError
from boostkit.registry import Registry
from boostkit.testing import strict_plugins  # noqa: F401  (a fixture)


def with_nan(X):
    """A copy of ``X`` that data validation refuses."""
    X = X.copy()
    X[0, 0] = np.nan
    return X


def recipe(**slots):
    """Discrete AdaBoost's recipe, without stopping rules, with some slots replaced."""
    base = dict(name="test-recipe", proposal="stump", calibration="constant-alpha",
                reweighting="exponential")
    return boostkit.Recipe(**{**base, **slots})


# -- test components ----------------------------------------------------------------------------


@attrs.define
class TaggedProposalWrapper(boostkit.ProposalWrapper):
    """Appends ``(tag, "before")`` and ``(tag, "after")`` around the proposal to ``log``."""

    name = "test-tagged-proposal-wrapper"
    tag: str = ""
    log: list = attrs.field(factory=list, eq=False)

    @boostkit.hookimpl(wrapper=True)
    def boostkit_propose(self, state):
        self.log.append((self.tag, "before"))
        candidate = yield
        self.log.append((self.tag, "after"))
        return candidate


@attrs.frozen
class ScaledContribution(boostkit.Contribution):
    """c(x) = scale * inner(x): a value component holding another one."""

    name = "test-scaled"
    scale: float
    inner: boostkit.Contribution

    def values(self, output, margin):
        return self.scale * self.inner.values(output, margin)


@attrs.define
class HalvingCalibrationWrapper(boostkit.CalibrationWrapper):
    """Halves whatever contribution the calibration returns."""

    name = "test-halving"

    @boostkit.hookimpl(wrapper=True)
    def boostkit_calibrate(self, state, candidate):
        calibrated = yield
        return boostkit.Calibrated(
            ScaledContribution(0.5, calibrated.contribution),
            0.5 * calibrated.train_values,
            tuple(0.5 * c for c in calibrated.coefficients),
        )


@attrs.define
class DividingCalibration(boostkit.Calibration):
    """A calibration with a bug: it divides by the weight of an empty set."""

    name = "test-dividing"

    @boostkit.hookimpl
    def boostkit_calibrate(self, state, candidate):
        return 1.0 / float(state.weights[state.weights > 1.0].sum())


@attrs.define
class EmptyPool(boostkit.Proposal):
    """A proposal whose pool is empty from the start."""

    name = "test-empty-pool"
    provides = frozenset({"real-scores", "sign-scores"})

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        return None


@attrs.define
class ProposingObserver(boostkit.Observer):
    """An observer that also (wrongly) implements the proposal hook."""

    name = "test-proposing-observer"

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        return None


@attrs.define
class MisspelledStopping(boostkit.Stopping):
    """A stopping rule whose hook name has a typo, so the engine would never call it."""

    name = "test-misspelled-stopping"

    @boostkit.hookimpl
    def boostkit_should_stopp(self, state, record):
        return "never asked"


TEST_COMPONENTS = [TaggedProposalWrapper, ScaledContribution, HalvingCalibrationWrapper,
                   DividingCalibration, EmptyPool, ProposingObserver, MisspelledStopping]


@pytest.fixture
def test_components(in_process_plugin):
    in_process_plugin("test-components", components=TEST_COMPONENTS)


# -- registry -----------------------------------------------------------------------------------


@attrs.define
class Clash(boostkit.Observer):
    name = "test-clash"


@attrs.define
class OtherClash(boostkit.Observer):
    name = "test-clash"


@pytest.mark.usefixtures("strict_plugins")
def test_duplicate_component_from_two_plugins_names_both(in_process_plugin):
    in_process_plugin("test-first", components=[Clash])
    in_process_plugin("test-second", components=[OtherClash])
    with pytest.raises(RegistryError) as excinfo:
        boostkit.get_registry()
    message = str(excinfo.value)
    assert "'test-clash' registered twice" in message
    assert "plugin 'test-first'" in message and "Clash" in message
    assert "plugin 'test-second'" in message and "OtherClash" in message


@pytest.mark.usefixtures("strict_plugins")
def test_component_clashing_with_first_party_names_its_distribution(in_process_plugin):
    @attrs.define
    class Impostor(boostkit.Proposal):
        name = "stump"

    in_process_plugin("test-impostor", components=[Impostor])
    with pytest.raises(RegistryError) as excinfo:
        boostkit.get_registry()
    message = str(excinfo.value)
    assert "plugin 'adaboost' (distribution boostkit)" in message
    assert "boostkit_adaboost.stumps.StumpLearner" in message
    assert "plugin 'test-impostor' (distribution <in-process>)" in message


@pytest.mark.usefixtures("strict_plugins")
def test_clash_is_blamed_on_the_later_plugin(in_process_plugin):
    in_process_plugin("test-first", components=[Clash])
    in_process_plugin("test-second", components=[OtherClash])
    message = "registered twice: by plugin 'test-first'.* and by plugin 'test-second'"
    with pytest.raises(RegistryError, match=message):
        boostkit.get_registry()


def test_same_class_registered_twice_is_not_a_clash():
    registry = Registry()
    registry.add_component(Clash)
    registry.add_component(Clash)
    assert registry.components() == {"test-clash": Clash}


def test_component_clash_with_a_callback_leaves_out_the_component_and_its_sources_recipes():
    known = boostkit.get_registry()
    registry = Registry()
    registry.source = "first"
    for name in ("stump", "constant-alpha", "exponential"):
        registry.add_component(known.component(name))
    for capability in known.capabilities().values():
        registry.add_capability(capability)
    registry.add_component(Clash)
    told = []
    registry.on_component_clash = lambda name, message: told.append((name, message))
    registry.on_recipe_left_out = lambda name, components: told.append((name, components))
    registry.source = "later"
    registry.add_component(OtherClash)
    registry.add_algorithm(recipe(name="test-uses-clash", observers=("test-clash",)))
    registry.add_algorithm(recipe(name="test-without-clash"))
    assert told[0][0] == "test-clash" and "by first" in told[0][1] and "by later" in told[0][1]
    assert told[1:] == [("test-uses-clash", ["test-clash"])]
    assert registry.component("test-clash") is Clash
    assert set(registry.algorithms()) == {"test-without-clash"}
    # Only the later source's own recipes go: another source's recipe naming it is the first's.
    registry.source = "third"
    registry.add_algorithm(recipe(name="test-third", observers=("test-clash",)))
    assert "test-third" in registry.algorithms()


@pytest.mark.parametrize("name", ["Bad_Name", "", "x-", "-x", "two--dashes", "1st", None])
def test_invalid_component_names_are_refused(name):
    component = attrs.define(type("Named", (boostkit.Observer,), {"name": name}))
    with pytest.raises(RegistryError, match="invalid name"):
        Registry().add_component(component)


def test_non_attrs_component_is_refused():
    class Plain(boostkit.Observer):
        name = "test-plain"

    with pytest.raises(RegistryError, match="'test-plain' must be an attrs class"):
        Registry().add_component(Plain)


def test_component_without_role_is_refused():
    @attrs.define
    class Roleless(boostkit.Component):
        name = "test-roleless"

    with pytest.raises(RegistryError, match="'test-roleless' has no role"):
        Registry().add_component(Roleless)


@pytest.mark.parametrize("thing", [int, "stump", ScaledContribution(1.0, None)])
def test_non_component_is_refused(thing):
    with pytest.raises(RegistryError, match="expects a subclass of boostkit.Component"):
        Registry().add_component(thing)


def test_invalid_algorithm_name_is_refused():
    with pytest.raises(RegistryError, match="algorithm name 'Ada_Boost' is invalid"):
        boostkit.get_registry().add_algorithm(recipe(name="Ada_Boost"))


# -- recipes are checked before the data --------------------------------------------------------


def test_unknown_component_is_a_recipe_error_before_data_validation(noisy_data):
    X, y = noisy_data
    with pytest.raises(RecipeError, match="slot 'proposal': unknown proposal 'no-such-learner'.*stump"):
        boostkit.Booster(recipe(proposal="no-such-learner")).fit(with_nan(X), y)


def test_component_in_wrong_role_is_a_recipe_error_before_data_validation(noisy_data):
    X, y = noisy_data
    with pytest.raises(RecipeError, match="'exponential' is a reweighting, not a proposal"):
        boostkit.Booster(recipe(proposal="exponential")).fit(with_nan(X), y)


def test_unknown_algorithm_name_is_a_recipe_error(noisy_data):
    X, y = noisy_data
    with pytest.raises(RecipeError, match="unknown algorithm 'adaboots'.*adaboost"):
        boostkit.Booster("adaboots").fit(with_nan(X), y)


def test_unknown_parameter_names_component_and_parameter(noisy_data):
    X, y = noisy_data
    message = r"'constant-alpha' has no parameter \['nope'\].*smoothing"
    with pytest.raises(RecipeError, match=message):
        boostkit.Booster("adaboost", params={"calibration": {"nope": 1}}).fit(with_nan(X), y)


@pytest.mark.parametrize(
    "params, component, parameter",
    [
        ({"calibration": {"smoothing": -1}}, "constant-alpha", "smoothing"),
        ({"calibration": {"smoothing": float("nan")}}, "constant-alpha", "smoothing"),
        ({"proposal": {"criterion": "foo"}}, "stump", "criterion"),
        ({"no_edge": {"min_edge": 0.7}}, "no-edge", "min_edge"),
    ],
)
def test_bad_parameter_value_names_component_and_parameter(
    params, component, parameter, noisy_data
):
    X, y = noisy_data
    with pytest.raises(RecipeError) as excinfo:
        boostkit.Booster("adaboost", params=params).fit(with_nan(X), y)
    message = str(excinfo.value)
    assert f"bad parameters for {component!r}" in message
    assert parameter in message


def test_unknown_slot_key_is_refused():
    with pytest.raises(RecipeError, match=r"no component slot \['calibraton'\].*'calibration'"):
        boostkit.Booster("adaboost", params={"calibraton": {"smoothing": 0.0}}).recipe()


def test_recipe_json_round_trip():
    original = boostkit.Recipe(
        name="test-everything",
        proposal=("stump", {"criterion": "gini"}),
        calibration=("domain-partition", {"smoothing": 0.001}),
        reweighting="exponential",
        stopping=(("no-edge", {"min_edge": 0.01}),),
        proposal_wrappers=("test-tagged-proposal-wrapper",),
        calibration_wrappers=("test-halving",),
        observers=("test-proposing-observer",),
        paper="Wilbur et al. 2005, eq. 10-12",
        description="every slot filled",
    )
    restored = boostkit.Recipe.from_json(json.loads(json.dumps(original.to_json())))
    assert restored == original
    assert restored.stopping[0].params == {"min_edge": 0.01}
    assert restored.calibration.params == {"smoothing": 0.001}


def test_with_params_addresses_list_slots_by_component_name():
    adaboost = boostkit.get_registry().algorithm("adaboost")
    tuned = adaboost.with_params({"no_edge": {"min_edge": 0.1}})
    assert tuned.stopping[0].params == {"min_edge": 0.1}
    assert tuned.calibration.params == {}


# -- the round-level plugin manager -------------------------------------------------------------


def test_two_proposals_are_refused(test_components, noisy_data):
    X, y = noisy_data
    with pytest.raises(RecipeError, match="exactly one component must implement boostkit_propose"):
        boostkit.Booster(recipe(observers=("test-proposing-observer",))).fit(X, y)


def test_two_proposals_are_refused_before_data_validation(test_components, noisy_data):
    X, y = noisy_data
    with pytest.raises(RecipeError, match="exactly one component must implement boostkit_propose"):
        boostkit.Booster(recipe(observers=("test-proposing-observer",))).fit(with_nan(X), y)


def test_misspelled_round_hook_is_a_recipe_error(test_components, noisy_data):
    X, y = noisy_data
    with pytest.raises(RecipeError, match="unknown hook 'boostkit_should_stopp'"):
        boostkit.Booster(recipe(stopping=("test-misspelled-stopping",))).fit(X, y)


def test_component_raising_in_a_round_hook_is_named(test_components, noisy_data):
    X, y = noisy_data
    broken = recipe(proposal=("stump", {"criterion": "error"}), calibration="test-dividing")
    with pytest.raises(HookError) as excinfo:
        boostkit.Booster(broken, n_rounds=3).fit(X, y)
    message = str(excinfo.value)
    assert "boostkit_calibrate" in message
    assert "'test-dividing'" in message
    assert "ZeroDivisionError" in message
    assert isinstance(excinfo.value.__cause__, ZeroDivisionError)


def test_exhausted_pool_in_round_one_gives_an_empty_model(test_components, noisy_data):
    X, y = noisy_data
    model = boostkit.Booster(recipe(proposal="test-empty-pool"), n_rounds=10).fit(X, y)
    assert model.n_rounds == 0
    assert model.records == ()
    assert model.stop_reason == "pool-exhausted"
    np.testing.assert_array_equal(model.decision_function(X), np.zeros(len(X)))


@pytest.mark.parametrize("order", [("outer", "inner"), ("inner", "outer")])
def test_proposal_wrappers_run_in_recipe_order(test_components, order, noisy_data):
    X, y = noisy_data
    log: list = []
    wrappers = tuple(("test-tagged-proposal-wrapper", {"tag": tag, "log": log}) for tag in order)
    model = boostkit.Booster(recipe(proposal_wrappers=wrappers), n_rounds=2).fit(X, y)
    first, second = order
    one_round = [(first, "before"), (second, "before"), (second, "after"), (first, "after")]
    assert model.n_rounds == 2
    assert log == one_round * 2


def test_calibration_wrapper_halves_the_decision_function(test_components, noisy_data):
    X, y = noisy_data
    plain = boostkit.Booster(recipe(), n_rounds=1).fit(X, y)
    halved = boostkit.Booster(recipe(calibration_wrappers=("test-halving",)), n_rounds=1).fit(X, y)
    assert isinstance(halved.contributions[0], ScaledContribution)
    np.testing.assert_array_equal(halved.decision_function(X), 0.5 * plain.decision_function(X))
    assert halved.records[0].coefficients == (0.5 * plain.records[0].coefficients[0],)


def test_calibration_wrapper_applies_every_round(test_components, noisy_data):
    X, y = noisy_data
    model = boostkit.Booster(recipe(calibration_wrappers=("test-halving",)), n_rounds=5).fit(X, y)
    assert model.n_rounds == 5
    for record in model.records:
        eps = record.weighted_error  # alpha_t = 1/2 ln((1 - eps_t) / eps_t), Scholz 2006, Fig. 2
        assert record.coefficients[0] == pytest.approx(0.25 * math.log((1 - eps) / eps), rel=1e-12)


def test_nested_value_components_survive_save_and_load(test_components, tmp_path, noisy_data):
    X, y = noisy_data
    model = boostkit.Booster(recipe(calibration_wrappers=("test-halving",)), n_rounds=3).fit(X, y)
    loaded = boostkit.load_model(model.save(tmp_path / "halved.npz"))
    assert loaded.contributions == model.contributions
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def test_unknown_nested_value_component_is_a_model_format_error(
    test_components, tmp_path, noisy_data
):
    X, y = noisy_data
    model = boostkit.Booster(recipe(calibration_wrappers=("test-halving",)), n_rounds=1).fit(X, y)
    path = model.save(tmp_path / "halved.npz")
    with np.load(path, allow_pickle=False) as npz:
        arrays = {key: npz[key] for key in npz.files}
    structure = json.loads(arrays.pop("__model__").tobytes())
    structure["rounds"][0]["contribution"]["children"]["inner"]["component"] = "no-such-value"
    blob = np.frombuffer(json.dumps(structure).encode("utf-8"), dtype=np.uint8)
    np.savez(path, __model__=blob, **arrays)
    with pytest.raises(boostkit.ModelFormatError, match="'no-such-value'"):
        boostkit.load_model(path)

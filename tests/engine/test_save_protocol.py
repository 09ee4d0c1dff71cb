"""What a third-party component may hold and still save (docs/plugins.md, "Saving models: what a
component may hold"): JSON values, numeric and string numpy arrays and nested value components
save without pickle; anything else is refused by ``save`` naming the component, the field or
parameter and the two ways out, unless ``allow_pickle=True`` on both sides."""

from __future__ import annotations

import json

import attrs
import numpy as np
import pytest

import boostkit
from boostkit.errors import ModelFormatError


class Rule:
    """A plain Python object: not a JSON value, not an array."""

    def __init__(self, offset):
        self.offset = offset


def _side(X, direction, offset):
    return (X @ direction > offset).astype(np.intp)


@attrs.frozen
class Halfspace(boostkit.WeakHypothesis):
    """+1 above the hyperplane direction.x = offset, -1 below: arrays, a float and strings."""

    name = "protocol-halfspace"
    n_cells = 2
    direction: np.ndarray = attrs.field(converter=lambda v: np.asarray(v, np.float64), eq=False)
    offset: float = attrs.field(converter=float)
    sides: np.ndarray = attrs.field(factory=lambda: np.array(["below", "above"]), eq=False)

    def cells(self, X):
        return _side(X, self.direction, self.offset)

    def scores(self, X):
        return np.where(self.cells(X) == 1, 1.0, -1.0)


@attrs.frozen
class Flipped(boostkit.WeakHypothesis):
    """-inner(x): a hypothesis holding another one, saved nested."""

    name = "protocol-flipped"
    inner: boostkit.WeakHypothesis

    @property
    def n_cells(self):
        return self.inner.n_cells

    def cells(self, X):
        return self.inner.cells(X)

    def scores(self, X):
        return -self.inner.scores(X)


@attrs.frozen
class RuleHypothesis(boostkit.WeakHypothesis):
    """Holds a foreign object: saves only with allow_pickle=True."""

    name = "protocol-rule"
    n_cells = 2
    direction: np.ndarray = attrs.field(converter=lambda v: np.asarray(v, np.float64), eq=False)
    rule: Rule = attrs.field(eq=False)

    def cells(self, X):
        return _side(X, self.direction, self.rule.offset)

    def scores(self, X):
        return np.where(self.cells(X) == 1, 1.0, -1.0)


@attrs.frozen
class PiecesHypothesis(boostkit.WeakHypothesis):
    """Holds arrays inside a list, which the format does not save."""

    name = "protocol-pieces"
    n_cells = 2
    pieces: list = attrs.field(eq=False)

    def cells(self, X):
        return _side(X, self.pieces[0], float(self.pieces[1][0]))

    def scores(self, X):
        return np.where(self.cells(X) == 1, 1.0, -1.0)


@attrs.define
class HalfspaceProposal(boostkit.Proposal):
    """A random feature's weighted-median cut, as the hypothesis kind ``make`` says; every other
    round flipped (nested)."""

    name = "protocol-halfspaces"
    provides = frozenset({"real-scores", "sign-scores", "cells", "two-cells"})
    make: str = attrs.field(default="protocol",
                            validator=attrs.validators.in_(("protocol", "rule", "pieces")))
    payload: object = None  # a parameter any value may be given to

    @boostkit.hookimpl
    def boostkit_propose(self, state):
        X = state.data.X
        direction = np.zeros(X.shape[1])
        direction[state.rng.integers(X.shape[1])] = 1.0
        offset = float(np.median(X @ direction))
        if self.make == "rule":
            hypothesis = RuleHypothesis(direction, Rule(offset))
        elif self.make == "pieces":
            hypothesis = PiecesHypothesis([direction, np.array([offset])])
        else:
            hypothesis = Halfspace(direction, offset)
            if state.round % 2 == 0:
                hypothesis = Flipped(hypothesis)
        return boostkit.Candidate(hypothesis, cells=hypothesis.cells(X), scores=hypothesis.scores(X))


COMPONENTS = (Halfspace, Flipped, RuleHypothesis, PiecesHypothesis, HalfspaceProposal)


@pytest.fixture
def fit(in_process_plugin):
    in_process_plugin("save-protocol", components=COMPONENTS)
    X = np.random.default_rng(0).normal(size=(120, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1, -1)

    def fit(**proposal):
        booster = boostkit.Booster(proposal=("protocol-halfspaces", proposal),
                                   calibration="constant-alpha", reweighting="exponential",
                                   n_rounds=6, random_state=0)
        return booster.fit(X, y), X

    return fit


def _structure(path):
    with np.load(path, allow_pickle=False) as archive:
        return json.loads(archive["__model__"].tobytes().decode("utf-8")), set(archive.files)


def test_arrays_strings_and_nested_hypotheses_save_and_load_without_pickle(fit, tmp_path):
    model, X = fit()
    path = model.save(tmp_path / "m.npz")
    structure, files = _structure(path)
    assert "pickled" not in structure
    flipped = structure["rounds"][1]["hypothesis"]
    assert flipped["component"] == "protocol-flipped"
    inner = flipped["children"]["inner"]
    assert inner["component"] == "protocol-halfspace" and inner["params"] == {
        "offset": model.hypotheses[1].inner.offset}
    assert set(inner["arrays"]) == {"direction", "sides"} and set(inner["arrays"].values()) <= files
    loaded = boostkit.load_model(path)
    assert isinstance(loaded.hypotheses[1], Flipped)
    assert loaded.hypotheses[1].inner.sides.tolist() == ["below", "above"]
    assert np.array_equal(loaded.decision_function(X), model.decision_function(X))


def test_a_hypothesis_field_holding_an_object_is_refused_naming_it_and_both_ways_out(fit, tmp_path):
    model, X = fit(make="rule")
    with pytest.raises(ModelFormatError) as refused:
        model.save(tmp_path / "m.npz")
    message = str(refused.value)
    assert "cannot save hypothesis 'protocol-rule', field 'rule': Rule is not a JSON value" in message
    assert "numpy array of numbers or strings" in message  # way out 1: make it a value
    assert "Saving models: what a component may hold" in message
    assert "save with allow_pickle=True" in message  # way out 2, with the warning
    assert "only load files you trust" in message
    assert not (tmp_path / "m.npz").exists()
    path = model.save(tmp_path / "m.npz", allow_pickle=True)
    with pytest.raises(ModelFormatError, match="holds pickled Python objects"):
        boostkit.load_model(path)
    loaded = boostkit.load_model(path, allow_pickle=True)
    assert np.array_equal(loaded.decision_function(X), model.decision_function(X))


def test_a_recipe_parameter_that_is_no_json_value_is_refused_naming_the_component(fit, tmp_path):
    model, X = fit(payload=Rule(0.0))
    with pytest.raises(ModelFormatError) as refused:
        model.save(tmp_path / "m.npz")
    message = str(refused.value)
    assert "proposal 'protocol-halfspaces', parameter 'payload': Rule is not a JSON value" in message
    assert "None, a bool, int, float or str" in message and "allow_pickle=True" in message
    loaded = boostkit.load_model(model.save(tmp_path / "m.npz", allow_pickle=True),
                                 allow_pickle=True)
    assert isinstance(loaded.recipe.proposal.params["payload"], Rule)
    # A JSON parameter saves as it is.
    plain, _ = fit(payload={"note": [1, 2.5, "x"]})
    reloaded = boostkit.load_model(plain.save(tmp_path / "p.npz"))
    assert reloaded.recipe.proposal.params == {"payload": {"note": [1, 2.5, "x"]}}


def test_an_array_inside_a_list_is_refused_saying_where_arrays_may_be(fit, tmp_path):
    model, _ = fit(make="pieces")
    with pytest.raises(ModelFormatError, match=r"hypothesis 'protocol-pieces', field 'pieces': "
                                               r"a numpy array inside a list or dict \(an array "
                                               r"is saved only as a field's whole value"):
        model.save(tmp_path / "m.npz")

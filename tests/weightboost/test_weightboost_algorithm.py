"""The ``weightboost`` algorithm and its baselines as a whole (Jin et al. 2003).

beta = 0 is AdaBoost bit for bit (section 3.2: "AdaBoost can be treated as a special case of
eq4"); the Appendix bound on |H_T(x)| and eq. 6's bound on the exponential cost hold every round
(hypothesis property tests); prediction evaluates the rounds in order, for one example as for a
batch; the regularizer composes with other coefficient rules; models save and load.
"""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import boostkit
from boostkit_weightboost import InputDependentTerm

REGISTRY = boostkit.get_registry()
WEIGHTBOOST = REGISTRY.algorithm("weightboost")


def with_beta(recipe, beta, **wrapper):
    """``recipe`` with ``beta`` (and the regularizer) in both the wrapper and the weights."""
    shared = {k: v for k, v in wrapper.items() if k in ("regularizer", "power")}
    return recipe.with_params({"input_dependent": {"beta": beta, **wrapper},
                               "reweighting": {"beta": beta, **shared}})


@pytest.fixture(scope="module")
def german_credit():
    data = boostkit.datasets.load("german_credit", encode="onehot")
    return data.X, data.y


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_beta_zero_is_adaboost_bit_for_bit(german_credit, n_jobs):
    X, y = german_credit
    # Round by round, the weights from the margins: as WeightBoost computes them.
    adaboost = boostkit.Booster("adaboost", n_rounds=40, n_jobs=n_jobs, histogram="exact",
                                compiled_rounds=False).fit(X, y)
    recipe = with_beta(attrs.evolve(WEIGHTBOOST, proposal="stump"), 0.0, record_bound=True)
    weightboost = boostkit.Booster(recipe, n_rounds=40, n_jobs=n_jobs).fit(X, y)
    assert weightboost.decision_function(X).tobytes() == adaboost.decision_function(X).tobytes()
    for ours, theirs in zip(weightboost.records, adaboost.records):
        assert (ours.hypothesis, ours.coefficients, ours.z, ours.error_bound, ours.weighted_error) == \
            (theirs.hypothesis, theirs.coefficients, theirs.z, theirs.error_bound, theirs.weighted_error)
        assert ours.extra["eq6_bound"] == pytest.approx(ours.error_bound, rel=1e-12)  # g = 1: tight


def test_beta_zero_is_adaboost_with_trees_too(german_credit):
    X, y = german_credit
    adaboost = attrs.evolve(REGISTRY.algorithm("adaboost"), proposal=WEIGHTBOOST.proposal)
    reference = boostkit.Booster(adaboost, n_rounds=40).fit(X, y)
    model = boostkit.Booster(with_beta(WEIGHTBOOST, 0.0), n_rounds=40).fit(X, y)
    assert model.decision_function(X).tobytes() == reference.decision_function(X).tobytes()


def test_a_positive_beta_changes_the_model(german_credit):
    X, y = german_credit
    recipe = attrs.evolve(WEIGHTBOOST, proposal="stump")
    adaboost = boostkit.Booster("adaboost", n_rounds=20).fit(X, y)
    weightboost = boostkit.Booster(recipe, n_rounds=20).fit(X, y)
    assert not np.allclose(weightboost.decision_function(X), adaboost.decision_function(X))
    # The terms carry the inner alpha and the factor e^{-|beta F_{t-1}|}: round 1 has F_0 = 0.
    assert isinstance(weightboost.contributions[0], InputDependentTerm)
    assert weightboost.records[0].extra["mean_factor"] == pytest.approx(1.0, rel=1e-12)


def test_prediction_runs_the_rounds_in_order_for_one_example_or_many():
    data = boostkit.datasets.load("ionosphere")
    model = boostkit.Booster("weightboost", n_rounds=30).fit(data.X, data.y)
    batch = model.decision_function(data.X)
    one_by_one = np.array([model.decision_function(data.X[i:i + 1])[0] for i in range(40)])
    assert np.array_equal(one_by_one, batch[:40])
    stages = list(model.staged_decision_function(data.X))
    assert len(stages) == model.n_rounds and np.array_equal(stages[-1], batch)
    # Stage t is F_t by eq. 4's recursion: F_{t-1} + alpha_t e^{-|beta F_{t-1}|} h_t.
    margin = np.zeros(len(batch))
    for stage, h, term in zip(stages, model.hypotheses, model.contributions):
        margin = margin + term.inner.alpha * np.exp(-abs(0.5 * margin)) * h.scores(data.X)
        np.testing.assert_allclose(stage, margin, rtol=1e-12, atol=1e-12)
    # The training margins the engine accumulated are what the model predicts on the data.
    y = np.where(data.y == model.classes[1], 1.0, -1.0)
    assert model.records[-1].training_error == np.mean(y * batch <= 0)
    probabilities = list(model.staged_predict_proba(data.X))[-1]
    np.testing.assert_allclose(probabilities, model.predict_proba(data.X))


@pytest.mark.parametrize("wrapper", [{}, {"regularizer": "inverse-polynomial", "power": 2.0},
                                     {"normalization": 0.1}])
def test_models_with_input_dependent_terms_save_and_load(tmp_path, wrapper):
    data = boostkit.datasets.load("german_credit", encode="onehot")
    model = boostkit.Booster(with_beta(WEIGHTBOOST, 0.7, **wrapper), n_rounds=12).fit(data.X, data.y)
    reloaded = boostkit.load_model(model.save(tmp_path / "model.npz"))
    assert reloaded.contributions == model.contributions  # nested inner term, beta, scale
    assert reloaded.decision_function(data.X).tobytes() == model.decision_function(data.X).tobytes()


@pytest.mark.parametrize("calibration", ["domain-partition", "newton-alpha"])
def test_the_regularizer_composes_with_other_coefficient_rules(calibration):
    data = boostkit.datasets.load("breast_cancer_wisconsin", dropna=True)
    recipe = with_beta(attrs.evolve(WEIGHTBOOST, calibration=calibration), 0.5, record_bound=True)
    model = boostkit.Booster(recipe, n_rounds=30).fit(data.X, data.y)
    assert all(isinstance(t, InputDependentTerm) for t in model.contributions)
    for record in model.records:
        assert record.training_error <= record.error_bound <= record.extra["eq6_bound"] * (1 + 1e-12)
    accuracy = np.mean(model.predict(data.X) == data.y)
    assert accuracy > 0.97


@st.composite
def binary_problems(draw):
    n = draw(st.integers(6, 50))
    X = draw(arrays(np.float64, (n, 2), elements=st.integers(-4, 4).map(float)))
    y = draw(arrays(np.float64, n, elements=st.sampled_from([-1.0, 1.0])))
    y[:2] = (-1.0, 1.0)
    return X, y


@given(binary_problems(), st.floats(0.05, 3.0), st.integers(1, 40),
       st.sampled_from(["constant-alpha", "domain-partition"]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_appendix_bound_on_the_margins(problem, beta, n_rounds, calibration):
    """|H_T(x)| <= 1/beta ln(beta a e^{beta a} (T - 1) + e^{beta |H_1(x)|}) (Jin et al. 2003,
    Appendix).

    a = alpha_max bounds |alpha_t h_t(x)| (the largest inner term); checked on the training
    points and on new ones, since the bound holds for every x.
    """
    X, y = problem
    recipe = with_beta(attrs.evolve(WEIGHTBOOST, proposal="stump", calibration=calibration), beta)
    model = boostkit.Booster(recipe, n_rounds=n_rounds).fit(X, y)
    X_all = np.vstack([X, np.random.default_rng(0).uniform(-5, 5, size=(50, 2))])
    inner = [np.abs(t.inner.values(boostkit.Candidate(h, X_all), None))
             for h, t in zip(model.hypotheses, model.contributions)]
    a = max(v.max() for v in inner)
    T = model.n_rounds
    h1 = np.abs(next(model.staged_decision_function(X_all)))
    bound = np.log(beta * a * math.exp(beta * a) * (T - 1) + np.exp(beta * h1)) / beta
    assert (np.abs(model.decision_function(X_all)) <= bound * (1 + 1e-12) + 1e-12).all()


@given(binary_problems(), st.floats(0.0, 3.0), st.integers(1, 30),
       st.sampled_from(["exponential", "inverse-polynomial"]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_eq6_bounds_the_training_error_every_round(problem, beta, n_rounds, regularizer):
    """err_T <= sum_i D_1 e^{-y H_T} <= eq. 6's bound <= the cost before the round (Z_t <= 1)."""
    X, y = problem
    recipe = with_beta(attrs.evolve(WEIGHTBOOST, proposal="stump"), beta, regularizer=regularizer,
                       record_bound=True)
    model = boostkit.Booster(recipe, n_rounds=n_rounds).fit(X, y)
    before = 1.0
    for record, stage in zip(model.records, model.staged_decision_function(X)):
        cost = np.mean(np.exp(-y * stage))
        assert record.training_error == pytest.approx(np.mean(y * stage <= 0), abs=1e-12)
        assert record.error_bound == pytest.approx(cost, rel=1e-9)
        assert record.training_error <= record.error_bound * (1 + 1e-12)
        assert record.error_bound <= record.extra["eq6_bound"] * (1 + 1e-9)
        assert record.extra["eq6_bound"] <= before * (1 + 1e-9)
        assert record.z <= 1 + 1e-9
        before = record.error_bound


def test_with_flipped_labels_the_margins_stay_far_smaller_than_adaboosts():
    """Section 3.2: AdaBoost's H_T(x) accumulates the errors on noisy patterns linearly, eq. 4's
    grows at most logarithmically in T (Appendix), so it stays well below AdaBoost's."""
    data = boostkit.datasets.load("ionosphere")
    rng = np.random.default_rng(0)
    y = np.where(data.y == data.positive, 1.0, -1.0)
    flipped = rng.choice(len(y), size=len(y) // 5, replace=False)
    y[flipped] = -y[flipped]
    adaboost = attrs.evolve(REGISTRY.algorithm("adaboost"), proposal=WEIGHTBOOST.proposal)
    largest = {
        name: np.abs(boostkit.Booster(recipe, n_rounds=100).fit(data.X, y).decision_function(data.X)).max()
        for name, recipe in (("adaboost", adaboost), ("weightboost", WEIGHTBOOST))
    }
    assert largest["weightboost"] < 0.6 * largest["adaboost"]


@pytest.mark.parametrize("algorithm", ["weightboost", "epsilon-boost", "weight-decay"])
def test_the_algorithms_fit_real_data_with_their_defaults(algorithm):
    data = boostkit.datasets.load("breast_cancer_wisconsin", dropna=True)
    order = np.random.default_rng(1).permutation(len(data.y))
    train, test = order[:500], order[500:]
    model = boostkit.Booster(algorithm, n_rounds=100).fit(data.X[train], data.y[train])
    assert model.n_rounds == 100 and model.stop_reason == "max-rounds"
    assert np.mean(model.predict(data.X[test]) == data.y[test]) > 0.9  # majority class: 0.65
    assert all(math.isfinite(r.error_bound) and r.training_error <= r.error_bound for r in model.records)


def test_the_scikit_learn_estimator_sets_beta_in_both_slots():
    from boostkit.sklearn import BoostClassifier
    from sklearn.base import clone

    data = boostkit.datasets.load("ionosphere")
    estimator = BoostClassifier("weightboost", n_rounds=10).set_params(
        input_dependent__beta=1.0, reweighting__beta=1.0)
    fitted = clone(estimator).fit(data.X, data.y)
    assert {t.beta for t in fitted.model_.contributions} == {1.0}

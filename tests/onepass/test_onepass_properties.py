"""Invariants of boostkit_onepass's algorithms on random data (Barutcuoglu et al. 2007).

* Boost-by-majority weights are probabilities in [0, 1], and are Freund's (exact binomials).
* POPBM outputs a majority vote over exactly T classifiers, or aborts (warning or error).
* One pass uses each base classifier at most once; PickyAdaBoost only uses classifiers whose
  advantage under the current distribution is at least gamma_bar; every D_t is a distribution;
  the potential never grows (Z_t <= 1).
* The fused pass gives the engine's model.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse

import boostkit
from boostkit.observers import WeightHistory
from boostkit_onepass import PopbmAbortWarning, advantage, bbm_weight_table, collapse, one_pass
from boostkit_onepass.majority import bbm_weights

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(T=st.integers(1, 60), data=st.data())
def test_bbm_weights_are_probabilities_and_freunds(T, data):
    alpha = data.draw(st.floats(0.001, 0.499))
    t = data.draw(st.integers(1, T + 1))
    table = bbm_weight_table(t, T, alpha)
    assert table.shape == (max(t, 1),)
    assert np.all((0.0 <= table) & (table <= 1.0))
    p = Fraction(alpha).limit_denominator(10**9) + Fraction(1, 2)
    for r, weight in enumerate(table):
        # Freund's alpha_r^i with i = t - 1 votes cast:
        # C(T - i - 1, floor(T/2) - r) p^k q^(ceil(T/2) - i - 1 + r)
        i, k = t - 1, T // 2 - r
        exact = Fraction(0)
        if 0 <= k <= T - i - 1:
            exact = math.comb(T - i - 1, k) * p**k * (1 - p) ** (math.ceil(T / 2) - i - 1 + r)
        assert abs(weight - float(exact)) <= 1e-12 * max(1.0, float(exact))


@SETTINGS
@given(T=st.integers(1, 15), seed=st.integers(0, 2**31 - 1), n=st.integers(4, 30))
def test_bbm_weights_from_margins_are_probabilities(T, seed, n):
    rng = np.random.default_rng(seed)
    t = int(rng.integers(1, T + 2))
    votes = rng.choice([-1.0, 1.0], size=(n, t - 1))
    y = rng.choice([-1.0, 1.0], n)
    w = bbm_weights(votes.sum(axis=1), y, t, T, 0.1)
    assert np.all((0.0 <= w) & (w <= 1.0))


@st.composite
def pm1_data(draw):
    n = draw(st.integers(6, 40))
    d = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (-1.0, 1.0)
    agree = rng.random((n, d)) < rng.uniform(0.3, 0.9, d)
    X = np.where(agree, y[:, None], -y[:, None])
    return X, y, seed


@SETTINGS
@given(pm1_data(), st.integers(1, 9), st.floats(0.01, 0.3))
def test_popbm_is_a_majority_of_exactly_T_or_aborts(data, T, alpha):
    X, y, seed = data
    params = {"proposal": {"alpha": alpha}, "reweighting": {"alpha": alpha}}
    history = WeightHistory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = boostkit.Booster("popbm", n_rounds=T, params=params, random_state=seed,
                                 observers=[history]).fit(X, y)
    aborted = [w for w in caught if issubclass(w.category, PopbmAbortWarning)]
    if aborted:
        assert model.n_rounds < T and model.stop_reason == "pool-exhausted"
    else:
        assert model.n_rounds == T and model.stop_reason == "max-rounds"
    votes = np.column_stack([h.scores(X) for h in model.hypotheses] or [np.zeros(len(y))])
    assert set(np.unique(votes)) <= {-1.0, 1.0} or model.n_rounds == 0
    assert np.array_equal(model.decision_function(X), votes.sum(axis=1))
    for D in history.weights:
        assert np.all(D >= 0) and abs(D.sum() - 1.0) < 1e-12


@SETTINGS
@given(pm1_data(), st.floats(0.0, 0.4))
def test_picky_uses_each_classifier_once_and_only_with_enough_advantage(data, gamma_bar):
    X, y, seed = data
    history = WeightHistory()
    model = boostkit.Booster("picky-adaboost", n_rounds=X.shape[1], random_state=seed,
                             params={"picky": {"gamma_bar": gamma_bar}},
                             observers=[history]).fit(X, y)
    features = [h.feature for h in model.hypotheses]
    assert len(set(features)) == len(features)
    for D, h, record in zip(history.weights, model.hypotheses, model.records):
        assert advantage(h.scores(X), y, D) >= gamma_bar
        assert np.all(D >= 0) and abs(D.sum() - 1.0) < 1e-12
        assert record.z <= 1.0 + 1e-12  # the voting weight never raises the potential


@st.composite
def count_data(draw):
    n = draw(st.integers(6, 40))
    d = draw(st.integers(1, 15))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    X = sparse.random(n, d, density=draw(st.floats(0.05, 0.6)), format="csr", random_state=rng,
                      data_rvs=lambda k: rng.integers(1, 6, k).astype(float))
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    y[:2] = (-1.0, 1.0)
    return X, y, seed


@SETTINGS
@given(st.one_of(count_data(), pm1_data()), st.sampled_from([0.0, 0.0213, 0.1047]))
def test_the_fused_pass_is_the_engines(data, gamma_bar):
    # gamma_bar values no advantage on small data hits exactly: at a tie, rounding (different
    # summation orders) would decide
    X, y, seed = data
    algorithm = "picky-adaboost" if gamma_bar else "opab"
    params = {"picky": {"gamma_bar": gamma_bar}} if gamma_bar else {}
    engine = boostkit.Booster(algorithm, n_rounds=X.shape[1], random_state=seed,
                              params=params).fit(X, y)
    fused = one_pass(X, y, gamma_bar=gamma_bar, random_state=seed)
    assert np.allclose(fused.decision_function(X), collapse(engine).decision_function(X),
                       rtol=1e-9, atol=1e-9)
    if engine.records:
        assert fused.records[0].error_bound == np.float64(engine.records[-1].error_bound) or abs(
            fused.records[0].error_bound - engine.records[-1].error_bound) <= 1e-9

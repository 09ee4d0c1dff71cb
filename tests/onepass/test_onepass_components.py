"""Hand-computed tests of every boostkit_onepass component (Barutcuoglu et al. 2007).

Components run through :class:`boostkit.Booster` on tiny data whose rounds are worked out by hand
in the comments, or directly against scikit-learn (naive Bayes) and Freund's formula (boost by
majority).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

import boostkit
from boostkit.observers import WeightHistory
from boostkit_adaboost.coefficients import newton_alpha
from boostkit_onepass import (
    ConstantVote,
    FeatureCount,
    FeatureSign,
    LinearVotes,
    PopbmAborted,
    PopbmAbortWarning,
    TermCounts,
    advantage,
    bbm_weight_table,
    collapse,
    fit_naive_bayes,
    one_pass,
)
from boostkit_onepass.coefficients import potential_alpha
from boostkit_onepass.text import tokenize


# -- hypotheses ---------------------------------------------------------------------------------


def test_feature_hypotheses_read_dense_csr_and_csc_alike():
    dense = np.array([[0.0, 2.0], [3.0, 0.0], [-1.0, 1.0]])
    for X in (dense, sparse.csr_matrix(dense), sparse.csc_matrix(dense)):
        assert np.array_equal(FeatureCount(0).scores(X), [0.0, 3.0, -1.0])
        assert np.array_equal(FeatureSign(0).scores(X), [-1.0, 1.0, -1.0])
        assert np.array_equal(FeatureSign(1, polarity=-1).scores(X), [-1.0, 1.0, -1.0])
        assert np.array_equal(FeatureSign(1).cells(X), [1, 0, 1])
        assert np.array_equal(ConstantVote().scores(X), [1.0, 1.0, 1.0])
    votes = LinearVotes([0.5, -1.0], [2.0, 0.0], intercept=0.25)
    # row 0: 0.25 + 0.5*0 - 1*2 + 2*[0>0] = -1.75; row 1: 0.25 + 1.5 + 2 = 3.75;
    # row 2: 0.25 - 0.5 - 1 = -1.25
    for X in (dense, sparse.csr_matrix(dense)):
        assert np.allclose(votes.scores(X), [-1.75, 3.75, -1.25])
    assert votes.n_features_used == 2
    with pytest.raises(ValueError, match="polarity"):
        FeatureSign(0, polarity=0)


# -- the ordered pool ---------------------------------------------------------------------------


def _xy():
    # four +-1 features; x0 agrees with y on 5 of 6 examples, x3 on 3
    X = np.array([[1, 1, -1, 1], [1, -1, -1, -1], [1, 1, 1, 1],
                  [-1, -1, 1, 1], [-1, 1, -1, -1], [1, -1, 1, -1]], dtype=float)
    y = np.array([1, 1, 1, -1, -1, -1])
    return X, y


def test_ordered_pool_walks_a_seeded_random_order_once():
    X, y = _xy()
    model = boostkit.Booster("opab", n_rounds=10, random_state=7).fit(X, y)
    features = [h.feature for h in model.hypotheses]
    assert sorted(features) == [0, 1, 2, 3]  # every base classifier, once
    assert features == list(np.random.default_rng(7).permutation(4))
    assert model.stop_reason == "pool-exhausted" and model.n_rounds == 4
    again = boostkit.Booster("opab", n_rounds=10, random_state=7).fit(X, y)
    assert [h.feature for h in again.hypotheses] == features
    given = boostkit.Booster("opab", n_rounds=10, params={"proposal": {"order": "given"}}).fit(X, y)
    assert [h.feature for h in given.hypotheses] == [0, 1, 2, 3]
    assert all(isinstance(h, FeatureSign) for h in given.hypotheses)  # auto: +-1 data -> sign


def test_ordered_pool_with_negations_and_count_base():
    X, y = _xy()
    model = boostkit.Booster("opab", n_rounds=20, random_state=0,
                             params={"proposal": {"negations": True}}).fit(X, y)
    assert sorted((h.feature, h.polarity) for h in model.hypotheses) == [
        (f, p) for f in range(4) for p in (-1, 1)]
    counts = boostkit.Booster("opab", n_rounds=20,
                              params={"proposal": {"base": "count"}}).fit(np.abs(X) + X, y)
    assert all(isinstance(h, FeatureCount) for h in counts.hypotheses)
    with pytest.raises(boostkit.RecipeError, match="negations apply to sign classifiers"):
        boostkit.Booster("opab", params={"proposal": {"base": "count", "negations": True}}).fit(
            X, y)
    with pytest.raises(boostkit.HookError, match="negations apply to sign classifiers"):
        boostkit.Booster("opab", params={"proposal": {"negations": True}}).fit(np.abs(X) + X, y)
    with pytest.raises(boostkit.RecipeError, match="base"):
        boostkit.Booster("opab", params={"proposal": {"base": "words"}}).fit(X, y)


# -- voting weights -----------------------------------------------------------------------------


def test_opab_alpha_by_hand():
    X, y = _xy()
    # round 1 (order given, smoothing 0): x0 wrong only on example 5 (weight 1/6):
    # alpha_1 = 1/2 ln(5) = 0.8047; then D_2 = 1/10 on the five right, 1/2 on example 5.
    # round 2: x1 = (1,-1,1,-1,1,-1) is wrong on examples 1 and 4: eps_2 = 0.2, alpha_2 = 1/2 ln 4
    model = boostkit.Booster("opab", n_rounds=2, params={
        "proposal": {"order": "given"}, "calibration": {"smoothing": 0.0}}).fit(X, y)
    assert model.records[0].coefficients[0] == pytest.approx(0.5 * math.log(5), rel=1e-12)
    assert model.records[1].coefficients[0] == pytest.approx(0.5 * math.log(4), rel=1e-12)
    assert model.records[1].weighted_error == pytest.approx(0.2, rel=1e-12)


def test_onepass_alpha_on_counts_is_newton_alpha():
    rng = np.random.default_rng(1)
    h = rng.integers(0, 5, 50).astype(float)
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    D = rng.random(50)
    D /= D.sum()
    assert potential_alpha(h, y, D, 0.02) == pytest.approx(newton_alpha(y * h, D, 0.02), rel=1e-9)
    # and for +-1 scores the closed form 1/2 ln((1 - eps + s) / (eps + s))
    signs = np.where(h > 1, 1.0, -1.0)
    eps = D[signs != y].sum()
    assert potential_alpha(signs, y, D, 0.02) == pytest.approx(
        0.5 * math.log((1 - eps + 0.02) / (eps + 0.02)), rel=1e-14)


def test_unit_coefficient_adds_the_hypothesis_as_it_is():
    X, y = _xy()
    recipe = boostkit.Recipe(name="votes", proposal=("ordered-pool", {"order": "given"}),
                             calibration="unit-coefficient", reweighting="exponential")
    model = boostkit.Booster(recipe, n_rounds=3).fit(X, y)
    assert [r.coefficients for r in model.records] == [(1.0,)] * 3
    assert np.array_equal(model.decision_function(X), X[:, :3].sum(axis=1))


# -- picky --------------------------------------------------------------------------------------


def test_advantage_of_sign_and_count_classifiers():
    y = np.array([1.0, 1.0, -1.0, -1.0])
    D = np.array([0.4, 0.1, 0.3, 0.2])
    # h = (1, -1, -1, 1): wrong on examples 1 and 3: eps = 0.3, |gamma| = 0.2
    assert advantage(np.array([1.0, -1.0, -1.0, 1.0]), y, D) == pytest.approx(0.2)
    assert advantage(np.zeros(4), y, D) == 0.0
    # a count seen only in the first (positive) example: Z* = 0.6,
    # |gamma| = 1/2 sqrt(1 - 0.36) = 0.4
    assert advantage(np.array([3.0, 0.0, 0.0, 0.0]), y, D) == pytest.approx(0.4, rel=1e-12)


def test_picky_skips_weak_classifiers_and_leaves_the_distribution_unchanged():
    X, y = _xy()
    gammas = [advantage(X[:, j], y.astype(float), np.full(6, 1 / 6)) for j in range(4)]
    assert gammas == pytest.approx([1 / 3, 1 / 6, 1 / 6, 1 / 6])
    # gamma_bar = 0.25, order x0..x3: x0 (1/3) is used, alpha = 1/2 ln 5, D_2 = (.1 .1 .1 .1 .1 .5);
    # x1 is wrong on examples 1, 4: eps = 0.2, gamma = 0.3, used, alpha = ln 2,
    # D_3 = (1/16, 1/4, 1/16, 1/16, 1/4, 5/16); x2 is wrong on 0, 1, 3, 5: eps = 11/16 and
    # x3 on 1, 3: eps = 5/16, both |gamma| = 3/16 < 0.25: skipped.
    history = WeightHistory()
    picky = boostkit.Booster("picky-adaboost", n_rounds=10, observers=[history], params={
        "proposal": {"order": "given"}, "picky": {"gamma_bar": 0.25},
        "calibration": {"smoothing": 0.0}}).fit(X, y)
    assert [h.feature for h in picky.hypotheses] == [0, 1]
    assert picky.stop_reason == "pool-exhausted"
    assert [r.coefficients[0] for r in picky.records] == pytest.approx(
        [0.5 * math.log(5), math.log(2)])
    assert len(history.weights) == 3  # D_1, D_2, D_3: the skipped classifiers added no round
    assert history.weights[2] == pytest.approx([1 / 16, 1 / 4, 1 / 16, 1 / 16, 1 / 4, 5 / 16])


def test_picky_composes_with_a_deterministic_learner():
    data = boostkit.datasets.load("ionosphere")
    X, y = data.X, data.binary_target()
    recipe = boostkit.Recipe(name="picky-stumps", proposal="stump", calibration="constant-alpha",
                             reweighting="exponential",
                             proposal_wrappers=(("picky", {"gamma_bar": 0.15}),))
    model = boostkit.Booster(recipe, n_rounds=200).fit(X, y)
    # the best stump's edge falls below 0.15 after some rounds: the stump learner repeats it and
    # the wrapper ends the run instead of looping
    assert 1 < model.n_rounds < 200 and model.stop_reason == "pool-exhausted"
    assert min(abs(r.edge) for r in model.records) >= 0.15


# -- naive Bayes --------------------------------------------------------------------------------


def test_naive_bayes_is_scikit_learns_multinomial_and_bernoulli():
    from sklearn.naive_bayes import BernoulliNB, MultinomialNB

    rng = np.random.default_rng(2)
    counts = rng.poisson(0.7, size=(80, 12)).astype(float)
    y = np.where(counts[:, 0] + rng.random(80) > 1.0, 1, -1)
    weights = rng.random(80)
    weights *= 80 / weights.sum()  # the engine keeps D_1; naive Bayes counts it times m
    for X in (counts, sparse.csr_matrix(counts)):
        model = boostkit.Booster("naive-bayes").fit(X, y, sample_weight=weights)
        reference = MultinomialNB(alpha=1.0).fit(counts, y, sample_weight=weights)
        assert model.n_rounds == 1 and model.stop_reason == "pool-exhausted"
        assert np.allclose(model.predict_proba(X), reference.predict_proba(counts), atol=1e-12)
    signs = np.where(counts > 0, 1.0, -1.0)
    model = boostkit.Booster("naive-bayes").fit(signs, y)  # auto: negative values -> Bernoulli
    reference = BernoulliNB(alpha=1.0, binarize=0.0).fit(signs, y)
    assert np.allclose(model.predict_proba(signs), reference.predict_proba(signs), atol=1e-12)
    with pytest.raises(ValueError, match="non-negative"):
        fit_naive_bayes(signs, y.astype(float), np.ones(80), event_model="multinomial")


# -- boost by majority --------------------------------------------------------------------------


def test_bbm_weights_are_freunds():
    # T = 5, alpha = 0.1, round t = 2 (one vote so far): w = C(3, 2 - r) 0.6^(2 - r) 0.4^(1 + r)
    table = bbm_weight_table(2, 5, 0.1)
    assert table == pytest.approx([3 * 0.36 * 0.4, 3 * 0.6 * 0.16])
    # round 5 = T: the last vote decides only examples with exactly 2 of 4 correct
    assert np.array_equal(bbm_weight_table(5, 5, 0.1) > 0, [False, False, True, False, False])
    assert bbm_weight_table(5, 5, 0.1)[2] == 1.0
    assert not bbm_weight_table(6, 5, 0.1).any()  # past T nothing is left to decide


def test_popbm_outputs_a_majority_of_exactly_T_votes():
    X, y = _xy()
    X = np.hstack([X] * 10)  # 40 base classifiers, 80 with negations
    model = boostkit.Booster("popbm", n_rounds=5, random_state=0).fit(X, y)
    assert model.n_rounds == 5 and model.stop_reason == "max-rounds"
    assert [r.coefficients for r in model.records] == [(1.0,)] * 5
    votes = np.column_stack([h.scores(X) for h in model.hypotheses])
    assert np.array_equal(model.decision_function(X), votes.sum(axis=1))
    assert np.array_equal(model.predict(X), np.where(votes.sum(axis=1) > 0, 1, -1))
    for record, h in zip(model.records, model.hypotheses):
        assert record.extra["bbm_alpha"] == 0.05
    # every chosen classifier had advantage >= alpha under its D_t
    history = WeightHistory()
    boostkit.Booster("popbm", n_rounds=5, random_state=0, observers=[history]).fit(X, y)
    for D, h in zip(history.weights, model.hypotheses):
        assert 0.5 * D @ (y * h.scores(X)) >= 0.05 - 1e-12


def test_popbm_uses_the_constant_hypothesis_when_z_is_small():
    X, y = _xy()
    # epsilon / T = 10: Z_t <= 1 < 10 in every round, so step 2.b.ii always applies
    model = boostkit.Booster("popbm", n_rounds=3, params={"proposal": {"epsilon": 30.0}}).fit(X, y)
    assert all(isinstance(h, ConstantVote) for h in model.hypotheses) and model.n_rounds == 3


def test_popbm_aborts_clearly_when_the_pool_runs_out():
    X, y = _xy()
    with pytest.warns(PopbmAbortWarning, match=r"POPBM aborted .* after \d+ of T=51"):
        model = boostkit.Booster("popbm", n_rounds=51).fit(X, y)
    assert model.stop_reason == "pool-exhausted" and model.n_rounds < 51
    with pytest.raises(boostkit.HookError, match="PopbmAborted: POPBM aborted") as info:
        boostkit.Booster("popbm", n_rounds=51, params={"proposal": {"on_abort": "raise"}}).fit(X, y)
    assert isinstance(info.value.__cause__, PopbmAborted)


def test_popbm_refuses_mismatched_alphas():
    X, y = _xy()
    X = np.hstack([X] * 10)
    with pytest.raises(boostkit.RecipeError, match="reweighting 'boost-by-majority' has "
                       "alpha=0.2 but proposal 'popbm-pool' has alpha=0.05; the two share"):
        boostkit.Booster("popbm", n_rounds=5, params={"reweighting": {"alpha": 0.2}}).fit(X, y)


# -- collapse, fused pass, persistence ----------------------------------------------------------


def test_collapse_and_the_fused_pass_give_the_engines_margins(tmp_path):
    rng = np.random.default_rng(5)
    X = sparse.random(60, 30, density=0.2, format="csr", random_state=rng,
                      data_rvs=lambda k: rng.integers(1, 4, k).astype(float))
    y = np.where(rng.random(60) < 0.5, 1, -1)
    for gamma_bar in (0.0, 0.05):
        algorithm = "picky-adaboost" if gamma_bar else "opab"
        params = {"picky": {"gamma_bar": gamma_bar}} if gamma_bar else {}
        engine = boostkit.Booster(algorithm, n_rounds=30, random_state=3, params=params).fit(X, y)
        fused = one_pass(X, y, gamma_bar=gamma_bar, random_state=3)
        folded = collapse(engine)
        assert folded.n_rounds == 1 and folded.records == engine.records
        assert np.allclose(folded.decision_function(X), engine.decision_function(X), atol=1e-12)
        assert np.allclose(fused.decision_function(X), engine.decision_function(X), atol=1e-9)
        assert fused.records[0].extra["features_used"] == sum(
            1 for r in engine.records if r.coefficients[0] != 0)
        assert fused.records[0].training_error == pytest.approx(engine.records[-1].training_error)
        for model in (engine, fused):
            path = model.save(tmp_path / f"{algorithm}.npz")
            loaded = boostkit.load_model(path)
            assert np.array_equal(loaded.decision_function(X), model.decision_function(X))
    with pytest.raises(TypeError, match="cannot fold"):
        collapse(boostkit.Booster("adaboost", n_rounds=2).fit(X.toarray(), y))


def test_term_counts():
    assert tokenize("Corn, CORNERED corners; the U.S. wheat!") == [
        "corn", "corne", "corne", "the", "u", "s", "wheat"]
    vectoriser = TermCounts(prefix_length=None).fit(["a b b", "b c"])
    assert vectoriser.terms_ == ["a", "b", "c"]
    X = vectoriser.transform(["b b b d", "c a"])
    assert sparse.isspmatrix_csr(X) and X.has_sorted_indices
    assert np.array_equal(X.toarray(), [[0, 3, 0], [1, 0, 1]])


# -- sample weights count examples ----------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["opab", "picky-adaboost", "naive-bayes"])
def test_a_weight_of_two_is_a_repeated_example(algorithm):
    # The smoothing's 1/m (and naive Bayes' counts) count examples by weight
    # (boostkit.smoothing.n_examples), so weight 2 is the example twice.
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(60, 5)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(size=60) > 2, 1, -1)
    weights, repeated = np.ones(60), [3, 10, 41]
    weights[repeated] = 2.0
    rows = np.r_[np.arange(60), repeated]
    params = {"picky": {"gamma_bar": 0.05}} if algorithm == "picky-adaboost" else {}
    booster = boostkit.Booster(algorithm, n_rounds=5, random_state=0, params=params)
    np.testing.assert_allclose(booster.fit(X, y, sample_weight=weights).decision_function(X),
                               booster.fit(X[rows], y[rows]).decision_function(X),
                               rtol=1e-12, atol=1e-12)
    if algorithm != "naive-bayes":  # the fused pass counts them alike
        gamma_bar = params.get("picky", {}).get("gamma_bar", 0.0)
        fused = one_pass(X, y, gamma_bar=gamma_bar, sample_weight=weights, random_state=0)
        np.testing.assert_allclose(
            fused.decision_function(X),
            one_pass(X[rows], y[rows], gamma_bar=gamma_bar, random_state=0).decision_function(X),
            rtol=1e-12, atol=1e-12)

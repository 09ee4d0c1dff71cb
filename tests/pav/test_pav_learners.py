"""Weak learners of Wilbur et al. 2005: score columns (4, 6), Cmass (7.1), Nscore (7.2,
eq. 49) and binary naive Bayes, each against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import boostkit
from boostkit_pav.learners import (
    BinaryNaiveBayes,
    Cmass,
    NeighborSimilarity,
    Nscore,
    ScoreColumn,
    ScoreColumns,
    local_weights,
)


def start(component, state):
    component.boostkit_fit_start(state=state)
    return component


# -- score columns ---------------------------------------------------------------------------


def test_score_columns_cycle_and_orient_each_column_with_the_labels(make_state):
    X = np.array([[1.0, 5.0], [2.0, 4.0], [3.0, 1.0], [4.0, 2.0]])
    y = np.array([-1, -1, 1, 1])  # column 0 rises with +1, column 1 falls
    state = make_state(X, y)
    proposal = start(ScoreColumns(), state)
    seen = []
    for t in (1, 2, 3):
        state.round = t
        c = proposal.boostkit_propose(state=state)
        seen.append((c.hypothesis.feature, c.hypothesis.sign, c.info["scoring_function"]))
    assert seen == [(0, 1.0, 0), (1, -1.0, 1), (0, 1.0, 0)]
    state.round = 2
    c = proposal.boostkit_propose(state=state)
    np.testing.assert_array_equal(c.scores, -X[:, 1])
    as_given = start(ScoreColumns(orient=False), state).boostkit_propose(state=state)
    assert as_given.hypothesis.sign == 1.0


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_score_column_cells_follow_the_score_and_match_the_engine_bins(make_state, sign):
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(300, 1)), 1)
    y = np.where(X[:, 0] * sign + rng.normal(size=300) > 0, 1, -1)
    state = make_state(X, y)
    state.round = 1
    c = start(ScoreColumns(), state).boostkit_propose(state=state)
    h = c.hypothesis
    assert h.sign == sign
    np.testing.assert_array_equal(h.cells(X), c.cells)  # prediction uses the training bins
    order = np.argsort(c.scores, kind="stable")
    assert (np.diff(c.cells[order].astype(int)) >= 0).all()  # cell order is score order
    assert c.cells.max() < h.n_cells == state.data.binned.n_bins[0]


def test_score_column_refuses_a_sign_other_than_plus_or_minus_one():
    with pytest.raises(ValueError, match="sign"):
        ScoreColumn(0, 0.5, np.array([0.0]))


# -- Cmass -----------------------------------------------------------------------------------


def test_cmass_projects_on_the_difference_of_the_weighted_centroids(make_state):
    X = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 3.0], [3.0, 1.0]])
    y = np.array([-1, -1, 1, 1])
    weights = np.array([0.1, 0.3, 0.2, 0.4])
    state = make_state(X, y, weights)
    c = start(Cmass(), state).boostkit_propose(state=state)
    c_pos = (0.2 * X[2] + 0.4 * X[3]) / 0.6
    c_neg = (0.1 * X[0] + 0.3 * X[1]) / 0.4
    np.testing.assert_allclose(c.hypothesis.direction, c_pos - c_neg)
    np.testing.assert_allclose(c.scores, X @ (c_pos - c_neg))


def test_standardized_cmass_works_on_scaled_features_and_predicts_on_raw_ones(make_state):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2)) * np.array([1.0, 1000.0])
    y = np.where(X[:, 0] + rng.normal(scale=0.3, size=200) > 0, 1, -1)
    state = make_state(X, y)
    raw = start(Cmass(), state).boostkit_propose(state=state)
    scaled = start(Cmass(standardize=True), state).boostkit_propose(state=state)
    std = X.std(axis=0)
    np.testing.assert_allclose(scaled.hypothesis.direction * std, raw.hypothesis.direction / std)
    np.testing.assert_allclose(scaled.hypothesis.scores(X), scaled.scores)
    # the informative feature leads once the scales are equalised
    assert abs(scaled.hypothesis.direction[0] * std[0]) > abs(scaled.hypothesis.direction[1] * std[1])


def test_standardized_cmass_gives_a_constant_column_no_weight(make_state):
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(size=300), np.full(300, 0.1)])  # 0.1: inexact in binary
    y = np.where(X[:, 0] > 0, 1, -1)
    state = make_state(X, y)
    candidate = start(Cmass(standardize=True), state).boostkit_propose(state=state)
    # Its rounding-level spread (~1e-17) must not become a ~1e16 scale.
    assert candidate.hypothesis.direction[1] == 0.0
    assert candidate.hypothesis.direction[0] > 0


def test_cmass_proposes_nothing_when_a_class_has_no_weight(make_state):
    state = make_state(np.eye(3), [1, -1, 1], [0.5, 0.0, 0.5])
    assert start(Cmass(), state).boostkit_propose(state=state) is None


# -- binary naive Bayes ------------------------------------------------------------------------


def test_binary_naive_bayes_weights_by_hand(make_state):
    X = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]])
    y = np.array([1, 1, -1, -1])
    state = make_state(X, y)
    c = start(BinaryNaiveBayes(), state).boostkit_propose(state=state)
    s = 1 / 4
    # positives: word 0 in both (weight 1/2), word 1 in one (1/4); negatives: word 1 in one
    p = np.array([(0.5 + s) / (0.5 + 2 * s), (0.25 + s) / (0.5 + 2 * s)])
    q = np.array([(0.0 + s) / (0.5 + 2 * s), (0.25 + s) / (0.5 + 2 * s)])
    weights = np.log(p * (1 - q) / (q * (1 - p)))
    offset = math.log(1.0) + np.log((1 - p) / (1 - q)).sum()
    np.testing.assert_allclose(c.hypothesis.term_weights, weights)
    assert c.hypothesis.offset == pytest.approx(offset)
    np.testing.assert_allclose(c.scores, offset + X @ weights)
    np.testing.assert_allclose(c.hypothesis.scores(X), c.scores)
    assert weights[1] == pytest.approx(0.0)  # word 1 is as frequent in both classes


def test_naive_bayes_drops_light_terms_and_the_prior_on_request(make_state):
    X = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    y = np.array([1, 1, -1, -1, -1])
    state = make_state(X, y)
    full = start(BinaryNaiveBayes(), state).boostkit_propose(state=state).hypothesis
    cut = start(BinaryNaiveBayes(min_weight=1.0, prior=False), state).boostkit_propose(state=state).hypothesis
    # s = 1/5; word 0: p = (2/5 + s)/(2/5 + 2s) = 3/4, q = s/(3/5 + 2s) = 1/5: weight ln 12
    assert full.term_weights[0] == pytest.approx(math.log(12.0))
    assert abs(full.term_weights[1]) < 1.0
    assert cut.term_weights.tolist() == [full.term_weights[0], 0.0]
    # without the prior and word 1, the offset is word 0's absent part ln((1-p)/(1-q))
    assert cut.offset == pytest.approx(math.log(0.25 / 0.8))
    absent_1 = full.offset - math.log(2 / 3) - math.log(0.25 / 0.8)
    p1, q1 = (0.2 + 0.2) / 0.8, (0.2 + 0.2) / 1.0
    assert absent_1 == pytest.approx(math.log((1 - p1) / (1 - q1)))


# -- Nscore ------------------------------------------------------------------------------------


def test_local_weight_of_eq_49():
    tf = np.array([[0.0, 1.0, 3.0]])
    lw = local_weights(tf, np.array([10.0]), 0.0044, 0.7)
    e = math.exp(0.044)
    np.testing.assert_allclose(lw, [[0.0, 1 / (1 + e), 1 / (1 + 0.49 * e)]])


def term_counts():
    return np.array([
        [2.0, 1.0, 0.0, 0.0],
        [1.0, 0.0, 1.0, 0.0],
        [0.0, 3.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 2.0],
        [1.0, 1.0, 1.0, 1.0],
    ])


def brute_similarity(X, i, alpha=0.0044, decay=0.7):
    idf = np.log(X.shape[0] / np.count_nonzero(X, axis=0))
    vectors = local_weights(X, X.sum(axis=1), alpha, decay) * idf
    return vectors @ vectors[i]


def test_nscore_alternates_classes_starting_with_the_heaviest_negative(make_state):
    X = term_counts()
    y = np.array([1, 1, -1, -1, 1])
    state = make_state(X, y, [0.1, 0.3, 0.15, 0.25, 0.2])
    proposal = start(Nscore(), state)
    first = proposal.boostkit_propose(state=state)  # t = 1 (odd): the negatives, h = -sim
    assert first.info["example"] == 3 and first.hypothesis.sign == -1.0
    np.testing.assert_allclose(first.scores, -brute_similarity(X, 3))
    np.testing.assert_allclose(first.hypothesis.scores(X), first.scores)
    second = proposal.boostkit_propose(state=state)  # t = 2 (even): the positives, h = +sim
    assert second.info["example"] == 1 and second.hypothesis.sign == 1.0
    np.testing.assert_allclose(second.hypothesis.scores(X), brute_similarity(X, 1))


def test_xlap_keeps_an_example_from_being_chosen_again_too_soon(make_state):
    X = term_counts()
    y = np.array([1, 1, -1, -1, 1])
    state = make_state(X, y, [0.1, 0.3, 0.15, 0.25, 0.2])

    def chosen(proposal):
        return [proposal.boostkit_propose(state=state).info["example"] for _ in range(6)]

    assert chosen(start(Nscore(), state)) == [3, 1, 3, 1, 3, 1]
    # xlap = 2: two other applications must pass before an example is chosen again; each class
    # is asked every other application, so its heaviest example alternates with the next one
    assert chosen(start(Nscore(xlap=2), state)) == [3, 1, 2, 4, 3, 1]
    limited = start(Nscore(xlap=10), state)
    exhausted = [limited.boostkit_propose(state=state) is None for _ in range(5)]
    assert exhausted == [False, False, False, False, True]


def test_nscore_needs_non_negative_features_and_is_refused_on_others_before_fitting():
    assert Nscore.capabilities().needs == {"non-negative-features"}
    X = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, -0.25]])
    with pytest.raises(boostkit.RecipeError, match=r"proposal 'nscore' needs non-negative "
                       r"features .* column 1 holds -0\.25 \(row 2\); transform that column"):
        boostkit.Booster(proposal="nscore", calibration="pav", reweighting="exponential").fit(
            X, [1, -1, 1])


def test_neighbor_similarity_keeps_only_the_terms_of_its_document():
    h = NeighborSimilarity(np.array([1, 3]), np.array([0.5, 2.0]), -1.0, 0.0044, 0.7)
    X = term_counts()
    lw = local_weights(X, X.sum(axis=1), 0.0044, 0.7)
    np.testing.assert_allclose(h.scores(X), -(0.5 * lw[:, 1] + 2.0 * lw[:, 3]))

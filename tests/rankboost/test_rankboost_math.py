"""RankBoost's formulas against hand-computed values (Yoder 2011), the preference
set builder, and the components' errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import boostkit
from boostkit_rankboost import (
    NoRankEdge,
    PairBudgetError,
    PreferenceSet,
    count_pairs,
    fit_preferences,
    preference_pairs,
    rank_advantage,
    rankboost_alpha,
    using_preferences,
)
from boostkit_rankboost.preferences import role_preferences
from boostkit_rankboost.reproduce import slide_pair_distributions

# -- r, alpha and Z by hand --------------------------------------------------------------------


def test_rank_advantage_is_half_the_l1_gap_of_the_class_shares():
    # V+ = (3/4, 1/4), V- = (1/6, 5/6): the left cell gets the high value, r = 3/4 - 1/6.
    wpos = np.array([[0.3, 0.1]])
    wneg = np.array([[0.1, 0.5]])
    assert rank_advantage(wpos, wneg)[0] == pytest.approx(7 / 12)
    # Scaling a class does not change its shares, hence not r.
    assert rank_advantage(5 * wpos, wneg)[0] == pytest.approx(7 / 12)
    # A class without weight orders nothing.
    assert rank_advantage(np.zeros((1, 2)), wneg)[0] == 0.0
    # Three cells: 1/2 (|0.5 - 0.2| + |0.5 - 0.2| + |0 - 0.6|).
    assert rank_advantage(np.array([0.5, 0.5, 0.0]), np.array([0.2, 0.2, 0.6])) == pytest.approx(0.6)


def test_alpha_is_half_log_of_one_plus_r_over_one_minus_r():
    assert rankboost_alpha(0.5) == pytest.approx(0.5 * math.log(3.0))
    assert rankboost_alpha(0.0) == 0.0
    assert rankboost_alpha(-0.5) == pytest.approx(-0.5 * math.log(3.0))
    assert rankboost_alpha(1.0) == pytest.approx(0.5 * math.log(2.0 / 1e-15))  # floored, finite
    assert rankboost_alpha(0.5, smoothing=0.5) == pytest.approx(0.5 * math.log(2.0))


FOUR_X = np.array([[1.0], [2.0], [3.0], [4.0]])
FOUR_Y = np.array([-1.0, 1.0, -1.0, 1.0])


@pytest.mark.parametrize("output, scale", [("sign", 0.5), ("binary", 1.0)])
def test_first_round_on_four_examples_by_hand(output, scale):
    # Pairs (x0, x1): (1, 2), (1, 4), (3, 2), (3, 4), each D = 1/4. Cuts: x > 1.5 orders (1, 2)
    # and (1, 4): r = W_- - W_+ = 1/2; x > 2.5 orders (1, 4), misorders (3, 2): r = 0;
    # x > 3.5 orders (1, 4) and (3, 4): r = 1/2. The lower cut wins the tie.
    model = boostkit.Booster("rankboost", n_rounds=1, params={"proposal": {"output": output}}).fit(
        FOUR_X, FOUR_Y)
    record, stump = model.records[0], model.hypotheses[0]
    assert stump.threshold == 1.5
    assert record.extra["r"] == pytest.approx(0.5)
    alpha = 0.5 * math.log(3.0)
    assert record.extra["alpha"] == pytest.approx(alpha)
    # The contribution is alpha h~ up to a constant: alpha h / 2 for +-1 stumps.
    assert record.coefficients == pytest.approx((scale * alpha,))
    # Z = sum D exp(alpha (h~(x0) - h~(x1))) = 1/4 (e^-a + e^-a + 1 + 1) <= sqrt(1 - r^2).
    assert record.z == pytest.approx(0.5 * (1.0 / math.sqrt(3.0) + 1.0))
    assert record.z <= math.sqrt(1 - 0.25)
    assert record.error_bound == pytest.approx(record.z)


def test_separable_data_stops_with_a_perfect_ranking_and_finite_coefficients():
    X = np.arange(10.0)[:, None]
    y = np.where(X[:, 0] > 4.5, 1.0, -1.0)
    model = boostkit.Booster("rankboost", n_rounds=20).fit(X, y)
    assert model.stop_reason == "perfect-ranking" and model.n_rounds == 1
    assert model.records[0].extra["r"] == pytest.approx(1.0)
    assert np.isfinite(model.records[0].coefficients).all()
    F = model.decision_function(X)
    assert F[y > 0].min() > F[y < 0].max()


def test_constant_features_end_the_run_as_pool_exhausted():
    model = boostkit.Booster("rankboost", n_rounds=5).fit(np.ones((6, 2)), [0, 1, 0, 1, 1, 0])
    assert model.n_rounds == 0 and model.stop_reason == "pool-exhausted"
    assert boostkit.Booster("rankboost-features", n_rounds=5).fit(
        np.ones((6, 2)), [0, 1, 0, 1, 1, 0]).stop_reason == "pool-exhausted"


def test_a_class_without_weight_is_refused_by_name():
    with pytest.raises(boostkit.DataError, match=r"class\(es\) \[.*\] have total sample_weight 0"):
        boostkit.Booster("rankboost", n_rounds=2).fit(FOUR_X, FOUR_Y, [1, 0, 1, 0])


def test_the_calibration_needs_the_score_range():
    # AdaBoost's stumps (another plugin, by name) declare no range.
    recipe = boostkit.Recipe(name="stumps-ranked", proposal="stump", calibration="rankboost-alpha",
                             reweighting="bipartite", stopping=("no-rank-edge",))
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    # Refused before fitting (capability "score-range"), and at run time for a proposal that
    # promises the range but leaves it out of a candidate.
    with pytest.raises(boostkit.RecipeError, match=r"calibration 'rankboost-alpha' needs weak "
                       r"rankers that declare the range .* proposal 'stump' does not provide"):
        boostkit.Booster(recipe, n_rounds=2).fit(X, y)
    model = boostkit.Booster(recipe, n_rounds=2,
                             params={"calibration": {"score_range": (-1, 1)}}).fit(X, y)
    assert model.records[0].extra["r"] == pytest.approx(1.0)
    # A declared range the scores leave is refused.
    with pytest.raises(boostkit.HookError, match=r"outside its score_range \[0, 1\]"):
        boostkit.Booster("rankboost", n_rounds=1,
                         params={"calibration": {"score_range": (0, 1)}}).fit(X, y)


@pytest.mark.parametrize(
    "slot, params, message",
    [
        ("calibration", {"score_range": (1, 0)}, "low < high"),
        ("calibration", {"score_range": 3}, "pair"),
        ("calibration", {"smoothing": -1.0}, "smoothing"),
        ("proposal", {"output": "ternary"}, "output must be one of"),
        ("no_rank_edge", {"min_r": 1.0}, "min_r"),
    ],
)
def test_bad_parameters_are_recipe_errors(slot, params, message):
    with pytest.raises(boostkit.RecipeError, match=message):
        boostkit.Booster("rankboost", params={slot: params}).fit(FOUR_X, FOUR_Y)


def _record(r=None, z=0.9):
    extra = {} if r is None else {"r": r}
    return boostkit.RoundRecord(round=1, hypothesis="h", weighted_error=0.3, edge=0.2, z=z,
                                error_bound=z, training_error=0.2, coefficients=(0.1,), extra=extra)


def test_stopping_reasons():
    rule = NoRankEdge()
    assert rule.boostkit_should_stop(None, _record(r=0.3)) is None
    assert rule.boostkit_should_stop(None, _record(r=0.0)) == "no-edge"
    assert rule.boostkit_should_stop(None, _record(r=0.3, z=1.0)) == "no-edge"
    assert rule.boostkit_should_stop(None, _record(r=1.0 - 1e-14)) == "perfect-ranking"
    assert NoRankEdge(min_r=0.4).boostkit_should_stop(None, _record(r=0.3)) == "no-edge"
    with pytest.raises(ValueError, match="rankboost-alpha"):
        rule.boostkit_should_stop(None, _record())


# -- the preference set -------------------------------------------------------------------------


def test_the_slides_pair_distributions():
    (first, second) = slide_pair_distributions().values()
    # e.g. 1: rank(x1) < rank(x2) < rank(x3): three pairs of 1/3, above the diagonal.
    np.testing.assert_allclose(first, [[0, 1 / 3, 1 / 3], [0, 0, 1 / 3], [0, 0, 0]])
    # e.g. 2: rank(x1) < rank(x2) = rank(x3): two pairs, so 1/2 each (the slide's 1/3 is a slip:
    # sum D must be 1).
    np.testing.assert_allclose(second, [[0, 1 / 2, 1 / 2], [0, 0, 0], [0, 0, 0]])


def test_pairs_of_graded_relevance_within_groups():
    relevance = np.array([2, 0, 1, 1, 0, 3, 3])
    group = np.array(["a", "a", "a", "b", "b", "b", "c"])
    lower, upper, weight = preference_pairs(relevance, group)
    # Group a: 0 < 1 < 2 -> 3 pairs; group b: 0 < 1 < 3 -> 3 pairs; group c: one example.
    assert set(zip(lower.tolist(), upper.tolist())) == {(1, 2), (1, 0), (2, 0), (4, 3), (4, 5), (3, 5)}
    np.testing.assert_allclose(weight, 1 / 6)
    assert count_pairs(relevance, group) == 6
    # Each group weighs the same, however many pairs it has.
    relevance[:3] = (1, 0, 1)  # group a: 0 < 1 = 1 -> 2 pairs
    lower, _, weight = preference_pairs(relevance, group, normalize="groups")
    in_a = np.isin(lower, [0, 1, 2])
    assert in_a.sum() == 2
    assert weight[in_a].sum() == pytest.approx(0.5) and weight[~in_a].sum() == pytest.approx(0.5)
    # Sample weights: D_1(x0, x1) ~ w(x0) w(x1); a pair of weight 0 is dropped.
    lower, upper, weight = preference_pairs([0, 1, 2], sample_weight=[1.0, 2.0, 0.0])
    assert (lower.tolist(), upper.tolist()) == ([0], [1]) and weight.tolist() == [1.0]


def test_count_pairs_is_quadratic_in_the_group_size():
    relevance = np.tile([0, 1, 2, 3], 250)
    assert count_pairs(relevance) == (1000 ** 2 - 4 * 250 ** 2) // 2
    assert count_pairs(relevance, np.repeat(np.arange(10), 100)) == 10 * (100 ** 2 - 4 * 25 ** 2) // 2


def test_the_memory_budget_points_to_the_bipartite_form():
    relevance = np.tile([0, 1, 2], 200)
    with pytest.raises(PairBudgetError, match=r"120,000 pairs .*'rankboost'.*O\(n\) per round"):
        preference_pairs(relevance, max_pairs=100_000)
    X = np.random.default_rng(0).normal(size=(600, 2))
    with pytest.raises(PairBudgetError, match="more than max_pairs=1,000"):
        fit_preferences(X, relevance, max_pairs=1000)
    # The implicit bipartite set of rankboost-pairs has the same budget.
    with pytest.raises(boostkit.DataError, match="preference-pairs.*use the bipartite form"):
        boostkit.Booster("rankboost-pairs", params={"reweighting": {"max_pairs": 100}}).fit(
            X, relevance > 0)


@pytest.mark.parametrize(
    "relevance, group, message",
    [
        ([1, 1, 1], None, "no preference pairs"),
        ([0, 1, 2], [0, 1, 2], "no preference pairs"),
        ([0, 1, np.nan], None, "NaN"),
        ([0, 1, 2, 3], [2, 2], r"np\.repeat\(np\.arange\(len\(sizes\)\), sizes\)"),
    ],
)
def test_preference_errors(relevance, group, message):
    with pytest.raises(boostkit.DataError, match=message):
        preference_pairs(relevance, group)


def test_an_example_in_both_roles_gets_two_rows():
    lower, upper, weight = preference_pairs([0, 1, 2])  # pairs (0,1), (0,2), (1,2)
    lower_examples, upper_examples, preferences = role_preferences(3, lower, upper, weight)
    assert lower_examples.tolist() == [0, 1] and upper_examples.tolist() == [1, 2]
    assert preferences.n_rows == 4
    assert sorted(zip(preferences.lower.tolist(), preferences.upper.tolist())) == [
        (0, 2), (0, 3), (1, 3)]
    # Rows: x0-role of 0 (two pairs), x0-role of 1, x1-role of 1, x1-role of 2 (two pairs).
    np.testing.assert_allclose(preferences.row_weights(), [1 / 3, 1 / 6, 1 / 6, 1 / 3])


def test_an_active_preference_set_must_match_the_data():
    X = np.arange(4.0)[:, None]
    wrong_rows = PreferenceSet(np.array([0]), np.array([1]), np.array([1.0]), n_rows=3)
    with using_preferences(wrong_rows), pytest.raises(boostkit.HookError, match="indexes 3 rows"):
        boostkit.Booster("rankboost-pairs").fit(X, [0, 1, 0, 1])
    wrong_roles = PreferenceSet(np.array([1]), np.array([0]), np.array([1.0]), n_rows=4)
    with using_preferences(wrong_roles), pytest.raises(boostkit.HookError, match="labelled -1"):
        boostkit.Booster("rankboost-pairs").fit(X, [0, 1, 0, 1])
